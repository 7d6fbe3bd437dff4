"""A status write keeps only the status it sends (harness/api/status_update.py): the kinds'
status strategies (podStatusStrategy, resourceclaimStatusStrategy, podGroupStatusStrategy) and
rest.BeforeUpdate take the rest from the stored object."""

from __future__ import annotations

import copy

import pytest

from harness.api.objects import make_object
from harness.apierrors import NotFound
from harness.cluster import Cluster


def _claim() -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default", "uid": "u-c", "labels": {"a": "1"},
                         "finalizers": ["resource.kubernetes.io/delete-protection"],
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"devices": {"requests": [{"name": "gpu"}]}},
            "status": {}}


def _pod() -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default", "uid": "u-p", "labels": {"app": "x"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                              "name": "rs", "uid": "u-rs", "controller": True}],
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "schedulerName": "default-scheduler"},
            "status": {"phase": "Pending", "qosClass": "BestEffort"}}


def _stored(raw: dict):
    cluster = Cluster()
    cluster.create(make_object(raw), notify=False)
    return cluster


def test_claim_status_write_keeps_only_the_status():
    cluster = _stored(_claim())
    sent = _claim()
    sent["spec"] = {"devices": {"requests": [{"name": "other"}]}}
    sent["metadata"].update(labels={"a": "2"}, finalizers=[], annotations={"n": "v"},
                            creationTimestamp="2030-01-01T00:00:00Z")
    sent["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u-p"}]}
    got = cluster.update_status(make_object(sent))
    stored = cluster.get("ResourceClaim", "default", "c")
    assert stored is got
    assert stored.raw["spec"] == _claim()["spec"]
    assert stored.labels == {"a": "1"} and "annotations" not in stored.raw["metadata"]
    assert stored.raw["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert stored.raw["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert stored.status["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "u-p"}]


def test_pod_status_write_keeps_spec_and_owners_but_takes_labels():
    cluster = _stored(_pod())
    sent = copy.deepcopy(_pod())
    sent["spec"]["nodeName"] = "n1"
    sent["metadata"]["labels"] = {"app": "y"}
    sent["metadata"]["ownerReferences"] = []
    sent["metadata"]["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    sent["status"] = {"phase": "Pending", "nominatedNodeName": "n2"}
    cluster.update_status(make_object(sent))
    stored = cluster.get("Pod", "default", "p")
    assert stored.node_name is None or stored.node_name == ""
    assert stored.labels == {"app": "y"}  # pods/status may change labels (no ResetObjectMetaForStatus)
    assert stored.raw["metadata"]["ownerReferences"] == _pod()["metadata"]["ownerReferences"]
    assert "deletionTimestamp" not in stored.raw["metadata"]
    assert stored.status["nominatedNodeName"] == "n2"
    assert stored.status["qosClass"] == "BestEffort"  # backfilled from the stored pod


def test_status_write_of_a_missing_object_is_not_found():
    with pytest.raises(NotFound):
        Cluster().update_status(make_object(_claim()))
