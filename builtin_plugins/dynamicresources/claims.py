"""ResourceClaim helpers (dynamic-resource-allocation/resourceclaim) and the scheduler's claim
tracker (dynamicresources/dra_manager.go, allocateddevices.go) over the simulated API server."""

from __future__ import annotations

import weakref
from typing import Any, Dict, Iterator, Mapping, Optional, Set, Tuple

from harness.api.objects import KubeObject

from .allocator import DeviceID

FINALIZER = "resource.kubernetes.io/delete-protection"  # resourceapi.Finalizer


class ClaimError(Exception):
    """An error of resourceclaim.Name / IsForPod / the claim lister, worded as upstream."""


def claim_name(pod, pod_claim: Mapping[str, Any]) -> Tuple[Optional[str], bool]:
    """resourceclaim.Name: (claim name or None, mustCheckOwner)."""
    if pod_claim.get("resourceClaimName"):
        return pod_claim["resourceClaimName"], False
    if pod_claim.get("resourceClaimTemplateName"):
        for st in (pod.status.get("resourceClaimStatuses") or []):
            if st.get("name") == pod_claim.get("name"):
                return st.get("resourceClaimName"), True
        raise ClaimError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
    raise ClaimError(f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pod_claim.get("name", "")}": '
                     f'none of the supported fields are set')


def is_controlled_by(obj: KubeObject, owner_uid: str) -> bool:
    """metav1.IsControlledBy."""
    for ref in (obj.raw.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("uid") == owner_uid:
            return True
    return False


def is_for_pod(pod, claim: KubeObject) -> None:
    """resourceclaim.IsForPod: raises ClaimError when the pod does not own the claim."""
    if claim.namespace != pod.namespace or not is_controlled_by(claim, pod.uid):
        raise ClaimError(f"ResourceClaim {claim.namespace}/{claim.name} was not created for pod "
                         f"{pod.namespace}/{pod.name} (pod is not owner)")


def is_reserved_for_pod(pod, claim: KubeObject) -> bool:
    """resourceclaim.IsReservedForPod."""
    return any(r.get("uid") == pod.uid for r in claim.status.get("reservedFor") or [])


def allocation_of(claim: KubeObject) -> Optional[Mapping[str, Any]]:
    return claim.status.get("allocation")


def foreach_allocated_device(allocation: Optional[Mapping[str, Any]]) -> Iterator[DeviceID]:
    """foreachAllocatedDevice: the devices of an allocation, skipping admin access ones."""
    if not allocation:
        return
    for r in ((allocation.get("devices") or {}).get("results") or []):
        if r.get("adminAccess"):
            continue
        yield (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))


class ClaimTracker:
    """claimTracker: claims from the API server (the assume cache's objects), the devices
    allocated to them (allocatedDevices, kept up to date from claim events), and the in-flight
    allocations between Reserve and PreBind."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.in_flight: Dict[str, KubeObject] = {}  # claim uid -> claim with its allocation
        self._allocated: Dict[str, Set[DeviceID]] = {}
        # device -> how many claims in _allocated have it: their union, kept as claims change
        # (list_all_allocated_devices copies it instead of uniting every claim's set)
        self._counts: Dict[DeviceID, int] = {}
        # claims with shared results (consumable capacity): key -> their allocation
        self._shared: Dict[str, Mapping[str, Any]] = {}
        for c in cluster.list("ResourceClaim"):
            self._on_claim(None, c)
        cluster.subscribe(self._on_event)

    def _on_event(self, kind, old, new) -> None:
        if kind == "ResourceClaim":
            self._on_claim(old, new)

    def _on_claim(self, old, new) -> None:
        counts = self._counts
        if old is not None:
            for d in self._allocated.pop(old.key, ()):
                counts[d] -= 1
                if not counts[d]:
                    del counts[d]
            self._shared.pop(old.key, None)
        if new is not None:
            alloc = allocation_of(new)
            devs = set(foreach_allocated_device(alloc))
            if devs:
                self._allocated[new.key] = devs
                for d in devs:
                    counts[d] = counts.get(d, 0) + 1
            if alloc and any(r.get("shareID") is not None
                             for r in ((alloc.get("devices") or {}).get("results") or [])):
                self._shared[new.key] = alloc

    def get(self, namespace: str, name: str) -> KubeObject:
        c = self.cluster.get("ResourceClaim", namespace, name)
        if c is None:
            raise ClaimError(f'could not find ResourceClaim "{namespace}/{name}"')
        return c

    def claim_has_pending_allocation(self, uid: str) -> bool:
        return uid in self.in_flight

    def signal_claim_pending_allocation(self, uid: str, claim: KubeObject) -> None:
        self.in_flight[uid] = claim

    def remove_claim_pending_allocation(self, uid: str) -> bool:
        return self.in_flight.pop(uid, None) is not None

    def list_all_allocated_devices(self) -> Set[DeviceID]:
        """ListAllAllocatedDevices: allocated in the API server, plus in flight."""
        out: Set[DeviceID] = set(self._counts)
        for claim in self.in_flight.values():
            out.update(foreach_allocated_device(allocation_of(claim)))
        return out

    def gather_allocated_state(self, shared_ids_of_cache: bool):
        """GatherAllocatedState (DRAConsumableCapacity on): whole devices, shares and their
        consumed capacity, of the allocated claims and the in-flight allocations."""
        from .consumable import AllocatedState, gather_allocated_state
        whole: Set[DeviceID] = set()
        for key, devs in self._allocated.items():
            if key not in self._shared:
                whole |= devs
        state = gather_allocated_state(self._shared.values(),
                                       (allocation_of(c) for c in self.in_flight.values()), shared_ids_of_cache)
        state.allocated_devices |= whole
        return state


_TRACKERS: "weakref.WeakKeyDictionary[Any, ClaimTracker]" = weakref.WeakKeyDictionary()


def tracker_for(cluster, owner=None) -> ClaimTracker:
    """The scheduler's one DRA manager (shared by its profiles, as the scheduler builds one):
    keyed by `owner` (the scheduler's snapshot), else by the cluster."""
    key = owner if owner is not None else cluster
    t = _TRACKERS.get(key)
    if t is None or t.cluster is not cluster:
        t = _TRACKERS[key] = ClaimTracker(cluster)
    return t


