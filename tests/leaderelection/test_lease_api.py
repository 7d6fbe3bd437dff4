"""The Lease on the simulated API server: optimistic concurrency as kube-apiserver answers it,
a replica's client failing while it is partitioned, and the LeaseLock over them."""

from __future__ import annotations

import pytest

from harness.apierrors import AlreadyExists, Conflict, NotFound, Unreachable
from harness.cluster import Cluster
from harness.leaderelection.client import LeaseClient
from harness.leaderelection.resourcelock import LeaderElectionRecord, LeaseLock, new_lease


def test_create_of_an_existing_lease_is_already_exists():
    c = Cluster()
    c.create_exclusive(new_lease("kube-system", "kube-scheduler", {}))
    with pytest.raises(AlreadyExists) as e:
        c.create_exclusive(new_lease("kube-system", "kube-scheduler", {}))
    assert str(e.value) == 'leases.coordination.k8s.io "kube-scheduler" already exists'
    assert e.value.code == 409


def test_update_with_a_stale_resource_version_is_a_conflict():
    c = Cluster()
    first = c.create_exclusive(new_lease("kube-system", "kube-scheduler", {}))
    rv = first.resource_version
    c.update_if_version(new_lease("kube-system", "kube-scheduler", {"holderIdentity": "a"}), rv)
    with pytest.raises(Conflict) as e:
        c.update_if_version(new_lease("kube-system", "kube-scheduler", {"holderIdentity": "b"}), rv)
    assert str(e.value) == ('Operation cannot be fulfilled on leases.coordination.k8s.io "kube-scheduler": '
                            'the object has been modified; please apply your changes to the latest version '
                            'and try again')
    assert c.get("Lease", "kube-system", "kube-scheduler").raw["spec"] == {"holderIdentity": "a"}
    with pytest.raises(NotFound) as e:
        c.update_if_version(new_lease("kube-system", "other", {}), 1)
    assert str(e.value) == 'leases.coordination.k8s.io "other" not found'


def test_client_copies_and_partition():
    c = Cluster()
    up = {"v": True}
    client = LeaseClient(c, reachable=lambda: up["v"])
    with pytest.raises(NotFound):
        client.get("kube-system", "kube-scheduler")
    created = client.create(new_lease("kube-system", "kube-scheduler", {"holderIdentity": "a"}))
    created.raw["spec"]["holderIdentity"] = "mutated locally"
    stored = c.get("Lease", "kube-system", "kube-scheduler")
    assert stored.raw["spec"]["holderIdentity"] == "a"
    assert created.resource_version == stored.resource_version
    up["v"] = False
    with pytest.raises(Unreachable) as e:
        client.get("kube-system", "kube-scheduler")
    assert str(e.value) == ('Get "https://kube-apiserver/apis/coordination.k8s.io/v1/namespaces/kube-system/'
                            'leases/kube-scheduler": dial tcp: i/o timeout')
    with pytest.raises(Unreachable):
        client.update(created)
    assert c.get("Lease", "kube-system", "kube-scheduler").raw["spec"]["holderIdentity"] == "a"
    assert [o for _, _, o in client.calls] == ["NotFound", "ok", "Unreachable", "Unreachable"]


def test_lease_lock_update_over_someone_elses_write_conflicts():
    c = Cluster()
    a = LeaseLock("kube-system", "kube-scheduler", LeaseClient(c), "a")
    b = LeaseLock("kube-system", "kube-scheduler", LeaseClient(c), "b")
    a.create(LeaderElectionRecord(holder_identity="a", lease_duration_seconds=15, acquire_time=0.0, renew_time=0.0))
    rec, raw = b.get()
    assert rec.holder_identity == "a" and rec.renew_time == 0.0
    b.update(LeaderElectionRecord(holder_identity="b", lease_duration_seconds=15, acquire_time=1.0,
                                  renew_time=1.0, leader_transitions=1))
    with pytest.raises(Conflict):   # a's cached Lease is one version behind
        a.update(LeaderElectionRecord(holder_identity="a", lease_duration_seconds=15, acquire_time=0.0,
                                      renew_time=2.0))
    stored = c.get("Lease", "kube-system", "kube-scheduler")
    assert stored.raw["spec"] == {"holderIdentity": "b", "leaseDurationSeconds": 15,
                                  "acquireTime": "2026-01-01T00:00:01.000000Z",
                                  "renewTime": "2026-01-01T00:00:01.000000Z", "leaseTransitions": 1}
    assert stored.raw["apiVersion"] == "coordination.k8s.io/v1" and stored.kind == "Lease"


def test_lease_writes_notify_subscribers():
    c = Cluster()
    seen = []
    c.subscribe(lambda kind, old, new: seen.append((kind, old is None, new.raw["spec"].get("holderIdentity"))))
    lock = LeaseLock("kube-system", "kube-scheduler", LeaseClient(c), "a")
    lock.create(LeaderElectionRecord(holder_identity="a"))
    lock.update(LeaderElectionRecord(holder_identity=""))
    assert seen == [("Lease", True, "a"), ("Lease", False, "")]
