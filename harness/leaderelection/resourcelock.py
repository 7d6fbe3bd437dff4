"""The election record and the Lease lock: client-go v0.34.1
tools/leaderelection/resourcelock (interface.go, leaselock.go).

Times: a replica's clock reads seconds of virtual time (a float). On the wire they are
`MicroTime`s counted from VIRTUAL_EPOCH (harness/api/metatime.py) (the harness's time 0, the creationTimestamp the case
loader gives every object), truncated to the microsecond as the API server stores them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Optional, Protocol, Tuple

from ..api.metatime import format_micro_time, format_time, parse_time
from ..api.objects import KubeObject, make_object

LEASES_RESOURCE_LOCK = "leases"


# ---- the record -------------------------------------------------------------------------------

@dataclass
class LeaderElectionRecord:
    """resourcelock.LeaderElectionRecord. Times in seconds of virtual time; None is the zero time."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: Optional[float] = None
    renew_time: Optional[float] = None
    leader_transitions: int = 0
    strategy: str = ""
    preferred_holder: str = ""

    def raw(self) -> str:
        """json.Marshal(record): the bytes LeaseLock.Get returns beside the record and the elector
        compares (observedRawRecord). metav1.Time marshals to the second, so two records whose
        times differ by less than a second in the same second are the same bytes."""
        return json.dumps({
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": format_time(self.acquire_time),
            "renewTime": format_time(self.renew_time),
            "leaderTransitions": self.leader_transitions,
            "strategy": self.strategy,
            "preferredHolder": self.preferred_holder,
        }, separators=(",", ":"))


def lease_spec_to_record(spec: Dict[str, Any]) -> LeaderElectionRecord:
    """resourcelock.LeaseSpecToLeaderElectionRecord."""
    r = LeaderElectionRecord()
    if spec.get("holderIdentity") is not None:
        r.holder_identity = str(spec["holderIdentity"])
    if spec.get("leaseDurationSeconds") is not None:
        r.lease_duration_seconds = int(spec["leaseDurationSeconds"])
    if spec.get("leaseTransitions") is not None:
        r.leader_transitions = int(spec["leaseTransitions"])
    if spec.get("acquireTime") is not None:
        r.acquire_time = parse_time(spec["acquireTime"])
    if spec.get("renewTime") is not None:
        r.renew_time = parse_time(spec["renewTime"])
    if spec.get("preferredHolder") is not None:
        r.preferred_holder = str(spec["preferredHolder"])
    if spec.get("strategy") is not None:
        r.strategy = str(spec["strategy"])
    return r


def record_to_lease_spec(r: LeaderElectionRecord) -> Dict[str, Any]:
    """resourcelock.LeaderElectionRecordToLeaseSpec: holderIdentity is always set (an empty
    string for a released record), the times as MicroTime."""
    spec: Dict[str, Any] = {
        "holderIdentity": r.holder_identity,
        "leaseDurationSeconds": int(r.lease_duration_seconds),
        "acquireTime": format_micro_time(r.acquire_time),
        "renewTime": format_micro_time(r.renew_time),
        "leaseTransitions": int(r.leader_transitions),
    }
    if r.preferred_holder:
        spec["preferredHolder"] = r.preferred_holder
    if r.strategy:
        spec["strategy"] = r.strategy
    return spec


def new_lease(namespace: str, name: str, spec: Optional[Dict[str, Any]] = None) -> KubeObject:
    """A coordination.k8s.io/v1 Lease object."""
    raw: Dict[str, Any] = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                           "metadata": {"namespace": namespace, "name": name}}
    if spec is not None:
        raw["spec"] = spec
    return make_object(raw)


# ---- the lock ---------------------------------------------------------------------------------

class LeasesClient(Protocol):
    """coordinationv1client.LeaseInterface, the three calls the lock makes. Each raises
    harness.apierrors errors (NotFound, AlreadyExists, Conflict) or Unreachable."""

    def get(self, namespace: str, name: str) -> KubeObject: ...

    def create(self, lease: KubeObject) -> KubeObject: ...

    def update(self, lease: KubeObject) -> KubeObject: ...


class LeaseNotInitialized(Exception):
    pass


class LeaseLock:
    """resourcelock.LeaseLock: keeps the Lease it last read or wrote (with its resourceVersion)
    and writes the next record over it, so an update after someone else's write is a Conflict."""

    def __init__(self, namespace: str, name: str, client: LeasesClient, identity: str,
                 labels: Optional[Dict[str, str]] = None):
        self.namespace = namespace
        self.name = name
        self.client = client
        self._identity = identity
        self.labels = labels
        self.lease: Optional[KubeObject] = None
        self.events: list = []  # RecordEvent: "<identity> became leader", ...

    def get(self) -> Tuple[LeaderElectionRecord, str]:
        """LeaseLock.Get: the record and its raw JSON bytes."""
        lease = self.client.get(self.namespace, self.name)
        self.lease = lease
        record = lease_spec_to_record(lease.raw.get("spec") or {})
        return record, record.raw()

    def create(self, ler: LeaderElectionRecord) -> None:
        """LeaseLock.Create."""
        lease = new_lease(self.namespace, self.name, record_to_lease_spec(ler))
        if self.labels:
            lease.raw["metadata"]["labels"] = dict(self.labels)
        try:
            self.lease = self.client.create(lease)
        except Exception:
            # The typed client returns an empty Lease beside the error, and the lock keeps it.
            self.lease = new_lease("", "")
            raise

    def update(self, ler: LeaderElectionRecord) -> None:
        """LeaseLock.Update: the cached Lease with the new spec, at the cached resourceVersion."""
        if self.lease is None:
            raise LeaseNotInitialized("lease not initialized, call get or create first")
        self.lease.raw["spec"] = record_to_lease_spec(ler)
        if self.labels is not None:
            md = self.lease.raw.setdefault("metadata", {})
            md.setdefault("labels", {}).update(self.labels)
        if not self.lease.name:
            raise ValueError("resource name may not be empty")
        self.lease = self.client.update(self.lease)

    def record_event(self, s: str) -> None:
        """LeaseLock.RecordEvent (kept in `events`, "Normal LeaderElection <identity> <s>")."""
        self.events.append(f"Normal LeaderElection {self._identity} {s}")

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def identity(self) -> str:
        return self._identity
