"""ResourceClaim helpers (dynamic-resource-allocation/resourceclaim) and the scheduler's claim
tracker (dynamicresources/dra_manager.go, allocateddevices.go) over the simulated API server."""

from __future__ import annotations

import copy
import weakref
from typing import Any, Dict, Iterator, List, Mapping, Optional, Set, Tuple

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


SCHEDULING_GROUP = "scheduling.k8s.io"  # schedulingapi.GroupName


def pod_group_name(pod) -> Optional[str]:
    """pod.Spec.SchedulingGroup.PodGroupName (v1.36), or None."""
    ref = pod.spec.get("schedulingGroup")
    return ref.get("podGroupName") if isinstance(ref, Mapping) else None


def is_for_pod(pod, claim: KubeObject, accept_pod_group_owner: bool = False, minor: int = 34) -> None:
    """resourceclaim.IsForPod: raises ClaimError when the pod does not own the claim; with
    DRAWorkloadResourceClaims (accept_pod_group_owner) a claim controlled by the pod's PodGroup
    is the pod's too (isForPodGroupByPod). v1.36 words the errors anew."""
    if minor < 36:
        if claim.namespace != pod.namespace or not is_controlled_by(claim, pod.uid):
            raise ClaimError(f"ResourceClaim {claim.namespace}/{claim.name} was not created for pod "
                             f"{pod.namespace}/{pod.name} (pod is not owner)")
        return
    if claim.namespace != pod.namespace:
        raise ClaimError(f"ResourceClaim {claim.namespace}/{claim.name} is not in the same namespace as Pod "
                         f"{pod.namespace}/{pod.name}")
    if is_controlled_by(claim, pod.uid):
        return
    if accept_pod_group_owner:
        if not _is_for_pod_group_by_pod(pod, claim):
            raise ClaimError(f"ResourceClaim {claim.namespace}/{claim.name} was not created for Pod "
                             f"{pod.namespace}/{pod.name} (neither Pod nor PodGroup {pod_group_name(pod)} "
                             f"is the owner)")
        return
    raise ClaimError(f"ResourceClaim {claim.namespace}/{claim.name} was not created for Pod "
                     f"{pod.namespace}/{pod.name} (Pod is not owner)")


def _controller_of(obj: KubeObject) -> Optional[Mapping[str, Any]]:
    """metav1.GetControllerOfNoCopy."""
    for ref in (obj.raw.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def _is_for_pod_group_by_pod(pod, claim: KubeObject) -> bool:
    """isForPodGroupByPod: the claim's controller is a PodGroup (any version of the scheduling
    group) of the pod's PodGroup name."""
    name = pod_group_name(pod)
    ref = _controller_of(claim)
    return (name is not None and ref is not None and ref.get("name") == name and ref.get("kind") == "PodGroup"
            and str(ref.get("apiVersion") or "").startswith(SCHEDULING_GROUP + "/"))


def is_for_pod_group(pod_group: KubeObject, claim: KubeObject) -> None:
    """resourceclaim.IsForPodGroup."""
    if claim.namespace != pod_group.namespace:
        raise ClaimError(f"ResourceClaim {claim.namespace}/{claim.name} is not in the same namespace as PodGroup "
                         f"{pod_group.namespace}/{pod_group.name}")
    if not is_controlled_by(claim, pod_group.uid):
        raise ClaimError(f"ResourceClaim {claim.namespace}/{claim.name} was not created for PodGroup "
                         f"{pod_group.namespace}/{pod_group.name} (PodGroup is not owner)")


def is_reserved_for_pod(pod, claim: KubeObject, accept_pod_group_reservation: bool = False) -> bool:
    """resourceclaim.IsReservedForPod: the pod's uid in reservedFor; with
    DRAWorkloadResourceClaims also its PodGroup (by group, resource and name: a pod does not
    know its PodGroup's uid)."""
    name = pod_group_name(pod) if accept_pod_group_reservation else None
    for r in claim.status.get("reservedFor") or []:
        if r.get("uid") == pod.uid:
            return True
        if (name is not None and r.get("apiGroup") == SCHEDULING_GROUP and r.get("resource") == "podgroups"
                and r.get("name") == name):
            return True
    return False


def name_from_pod_group(pod_group: KubeObject, pg_claim: Mapping[str, Any]) -> Tuple[Optional[str], bool]:
    """resourceclaim.NameFromPodGroup: (claim name or None, mustCheckOwner)."""
    if pg_claim.get("resourceClaimName") is not None:
        return pg_claim["resourceClaimName"], False
    if pg_claim.get("resourceClaimTemplateName") is not None:
        for st in ((pod_group.raw.get("status") or {}).get("resourceClaimStatuses") or []):
            if st.get("name") == pg_claim.get("name"):
                return st.get("resourceClaimName"), True
        raise ClaimError(f"PodGroup {pod_group.namespace}/{pod_group.name}: ResourceClaim not created yet")
    raise ClaimError(f"PodGroup {pod_group.namespace}/{pod_group.name}, spec.resourceClaim "
                     f"{pg_claim.get('name', '')}: none of the supported fields are set")


def pod_ref(pod) -> Dict[str, Any]:
    """A ResourceClaimConsumerReference to the pod."""
    return {"resource": "pods", "name": pod.name, "uid": pod.uid}


def bind_to(pod, pod_group: Optional[KubeObject], pod_claim: Mapping[str, Any]) -> Dict[str, Any]:
    """resourceclaim.BindTo: the PodGroup when one of its resourceClaims equals the pod's entry
    (name, resourceClaimName and resourceClaimTemplateName), else the pod."""
    if pod_claim.get("resourceClaimName") is None and pod_claim.get("resourceClaimTemplateName") is None:
        raise ClaimError(f"Pod {pod.namespace}/{pod.name} claim {pod_claim.get('name', '')}: "
                         f"none of the supported fields are set")
    if pod_group is not None:
        name = pod_group_name(pod)
        if name is None:
            raise ClaimError(f"Pod {pod.namespace}/{pod.name} does not belong to a PodGroup")
        if pod.namespace != pod_group.namespace or name != pod_group.name:
            raise ClaimError(f"Pod {pod.namespace}/{pod.name} belongs to PodGroup {pod.namespace}/{name}, "
                             f"not PodGroup {pod_group.namespace}/{pod_group.name}")
        for pgc in (pod_group.raw.get("spec") or {}).get("resourceClaims") or []:
            if pgc.get("resourceClaimName") is None and pgc.get("resourceClaimTemplateName") is None:
                raise ClaimError(f"PodGroup {pod_group.namespace}/{pod_group.name} claim {pgc.get('name', '')}: "
                                 f"none of the supported fields are set")
            if all(pgc.get(k) == pod_claim.get(k) for k in ("name", "resourceClaimName",
                                                            "resourceClaimTemplateName")):
                return {"apiGroup": SCHEDULING_GROUP, "resource": "podgroups", "name": pod_group.name,
                        "uid": pod_group.uid}
    return pod_ref(pod)


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


LOG_SLACK = 4096  # ClaimTracker.device_log starts anew past 4 entries a device plus this many


class ClaimTracker:
    """claimTracker: claims from the API server (the assume cache's objects), the devices
    allocated to them (allocatedDevices, kept up to date from claim events), and the in-flight
    allocations between Reserve and PreBind."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.in_flight: Dict[str, KubeObject] = {}  # claim uid -> claim with its allocation
        self._sharers: Dict[str, int] = {}  # claim uid -> pods sharing its in-flight allocation
        self._allocated: Dict[str, Set[DeviceID]] = {}
        # device -> how many claims in _allocated have it: their union, kept as claims change
        # (list_all_allocated_devices copies it instead of uniting every claim's set)
        self._counts: Dict[DeviceID, int] = {}
        # claims with shared results (consumable capacity): key -> their allocation
        self._shared: Dict[str, Mapping[str, Any]] = {}
        # _counts' keys as they come (+1) and go (-1), for readers that follow the allocated
        # devices without copying them (batch_filter); a new epoch starts an empty log
        self.device_log: List[Tuple[DeviceID, int]] = []
        self.device_log_epoch = 0
        # the last allocated-devices set built here, as (set, epoch, log position, the devices
        # beyond _counts' keys at that position): None when it is not that union
        self.last_parts: Optional[Tuple[Set[DeviceID], int, int, Set[DeviceID]]] = None
        for c in cluster.list("ResourceClaim"):
            self._on_claim(None, c)
        cluster.subscribe(self._on_event)

    def _on_event(self, kind, old, new) -> None:
        if kind == "ResourceClaim":
            self._on_claim(old, new)

    def _on_claim(self, old, new) -> None:
        counts = self._counts
        log = self.device_log
        if len(log) > 4 * len(counts) + LOG_SLACK:
            self.device_log = log = []
            self.device_log_epoch += 1
        if old is not None:
            for d in self._allocated.pop(old.key, ()):
                counts[d] -= 1
                if not counts[d]:
                    del counts[d]
                    log.append((d, -1))
            self._shared.pop(old.key, None)
        if new is not None:
            alloc = allocation_of(new)
            devs = set(foreach_allocated_device(alloc))
            if devs:
                self._allocated[new.key] = devs
                for d in devs:
                    c = counts.get(d, 0)
                    counts[d] = c + 1
                    if not c:
                        log.append((d, 1))
            if alloc and any(r.get("shareID") is not None
                             for r in ((alloc.get("devices") or {}).get("results") or [])):
                self._shared[new.key] = alloc

    def allocated_keys(self) -> Mapping[DeviceID, int]:
        """The devices of the allocated claims (as keys; read only)."""
        return self._counts

    def get(self, namespace: str, name: str) -> KubeObject:
        c = self.cluster.get("ResourceClaim", namespace, name)
        if c is None:
            raise ClaimError(f'could not find ResourceClaim "{namespace}/{name}"')
        return c

    def claim_has_pending_allocation(self, uid: str) -> bool:
        return uid in self.in_flight

    def get_pending_allocation(self, uid: str) -> Optional[Mapping[str, Any]]:
        """GetPendingAllocation: the in-flight allocation of the claim, or None."""
        claim = self.in_flight.get(uid)
        return None if claim is None else allocation_of(claim)

    def signal_claim_pending_allocation(self, uid: str, claim: KubeObject) -> None:
        """SignalClaimPendingAllocation: a claim already in flight gains a sharer (a pod of
        the same pod group cycle reusing the allocation) and keeps its first allocation."""
        if uid in self.in_flight:
            self._sharers[uid] = self._sharers.get(uid, 1) + 1
            return
        self.in_flight[uid] = claim
        self._sharers[uid] = 1

    def maybe_remove_claim_pending_allocation(self, uid: str, force: bool) -> bool:
        """MaybeRemoveClaimPendingAllocation: drop one sharer; the allocation leaves the
        in-flight set with its last sharer, or at once when forced (it is in the API server)."""
        if uid not in self.in_flight:
            return False
        sharers = self._sharers.get(uid, 1)
        if force or sharers <= 1:
            del self.in_flight[uid]
            self._sharers.pop(uid, None)
            return True
        self._sharers[uid] = sharers - 1
        return False

    def remove_claim_pending_allocation(self, uid: str) -> bool:
        """RemoveClaimPendingAllocation (the special claim for extended resources): forced."""
        return self.maybe_remove_claim_pending_allocation(uid, True)

    def list_all_allocated_devices(self) -> Set[DeviceID]:
        """ListAllAllocatedDevices: allocated in the API server, plus in flight."""
        extra: Set[DeviceID] = set()
        for claim in self.in_flight.values():
            extra.update(foreach_allocated_device(allocation_of(claim)))
        out: Set[DeviceID] = set(self._counts)
        out |= extra
        self.last_parts = (out, self.device_log_epoch, len(self.device_log), extra)
        return out

    def gather_allocated_state(self, shared_ids_of_cache: bool):
        """GatherAllocatedState (DRAConsumableCapacity on): whole devices, shares and their
        consumed capacity, of the allocated claims and the in-flight allocations."""
        from .consumable import AllocatedState, gather_allocated_state
        state = gather_allocated_state(self._shared.values(),
                                       (allocation_of(c) for c in self.in_flight.values()), shared_ids_of_cache)
        if not self._shared:
            extra = set(state.allocated_devices)
            state.allocated_devices.update(self._counts)  # every claim's devices: _counts' keys
            self.last_parts = (state.allocated_devices, self.device_log_epoch, len(self.device_log), extra)
            return state
        self.last_parts = None
        whole: Set[DeviceID] = set()
        for key, devs in self._allocated.items():
            if key not in self._shared:
                whole |= devs
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


def copy_with(claim: KubeObject, mutate) -> KubeObject:
    """A claim copied with `mutate(raw, status)` applied (an empty status dropped): the object a
    status update sends (the plugin's and its pod group claims' updates)."""
    raw = copy.deepcopy(claim.raw)
    raw.setdefault("metadata", {})
    status = raw.setdefault("status", {})
    mutate(raw, status)
    if not raw["status"]:
        del raw["status"]
    return KubeObject(raw)
