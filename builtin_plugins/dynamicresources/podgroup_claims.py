"""DynamicResources in v1.36's pod group cycle (dynamicresources.go): the pod group cycle's own
state (podGroupStateData: the claims whose allocation a pod of this cycle reserved, so that the
group's other pods reuse it), and DRAWorkloadResourceClaims' PodGroup claims (getPodGroup,
unreservePodGroupClaims)."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Set

from harness.api.objects import KubeObject
from harness.apierrors import API_ERRORS
from harness.framework.cycle_state import POD_GROUP_MEMBERS_KEY

from .claims import ClaimError, copy_with, is_for_pod_group, is_reserved_for_pod, name_from_pod_group, pod_group_name

STATE_KEY = "DynamicResources"


class PodGroupStateData:
    """podGroupStateData: the uids of the claims with an allocation pending in *this* pod group
    scheduling cycle (the DRA manager counts the pods sharing each). Clone returns itself."""

    __slots__ = ("pending_allocations",)

    def __init__(self) -> None:
        self.pending_allocations: Set[str] = set()

    def clone(self) -> "PodGroupStateData":
        return self


def pod_group_state(state) -> Optional[PodGroupStateData]:
    """getPodGroupStateData: None outside a pod group cycle; else the cycle's, created by its
    first reader."""
    pg_cycle = getattr(state, "pod_group_state", None)
    if pg_cycle is None:
        return None
    data = pg_cycle.get(STATE_KEY)
    if data is None:
        data = PodGroupStateData()
        pg_cycle.write(STATE_KEY, data)
    return data


class _NoAllocations:
    """The allocator's answer for no claims to allocate: no results."""

    __slots__ = ()

    def results(self, *args) -> List[Dict[str, Any]]:
        return []


NO_ALLOCATIONS = _NoAllocations()


class WithPending:
    """A node's allocation results followed by the pending allocations the pod reuses
    (Filter's `append(allocationResult, pendingResult...)`)."""

    __slots__ = ("found", "pending")

    def __init__(self, found, pending: List[Mapping[str, Any]]):
        self.found, self.pending = found, pending

    def results(self, *args) -> List[Dict[str, Any]]:
        return list(self.found.results(*args)) + [dict(p) for p in self.pending]


def get_pod_group(pl, pod) -> Optional[KubeObject]:
    """getPodGroup: the pod's PodGroup from the lister (DRAWorkloadResourceClaims on), or None
    without the gate or a schedulingGroup; a PodGroup that does not exist is the lister's
    NotFound error."""
    name = pod_group_name(pod)
    if not pl.workload_claims or name is None:
        return None
    pg = pl.cluster.get("PodGroup", pod.namespace, name)
    if pg is None:
        raise ClaimError(f'podgroup.scheduling.k8s.io "{name}" not found')
    return pg




def scheduled_pods_count(info, state) -> int:
    """ScheduledPodsCount of the live pod group state: assigned and assumed pods, leaving out
    those assumed within the running pod group cycle (the lister does not see them)."""
    pg_cycle = getattr(state, "pod_group_state", None)
    members = pg_cycle.get(POD_GROUP_MEMBERS_KEY) if pg_cycle is not None else None
    assumed = [u for u in info.assumed if members is None or u not in members]
    return len(info.assigned) + len(assumed)


def unreserve_pod_group_claims(pl, state, pod):
    """unreservePodGroupClaims (PostFilter, DRAWorkloadResourceClaims): when none of the
    group's pods is assumed or bound, the PodGroup is removed from the reservedFor of the
    first allocated claim of the PodGroup reserved for it, so a new allocation may be found:
    Unschedulable "ResourceClaim unreserved for PodGroup"; None when there is nothing to do.
    Errors are an Error status."""
    from harness.framework import Status

    name = pod_group_name(pod)
    if name is None:
        return None
    manager = getattr(pl.handle, "workload_manager", None)
    info = manager.pod_group_info(pod) if manager is not None else None
    if info is None:
        return Status.error(RuntimeError(f'podgroup state "{pod.namespace}/{name}" not found'))
    if scheduled_pods_count(info, state) > 0:
        return None
    try:
        pg = get_pod_group(pl, pod)
    except ClaimError as e:
        return Status.error(e)
    if pg is None:
        return None
    for pgc in (pg.raw.get("spec") or {}).get("resourceClaims") or []:
        try:
            claim_name, must_check_owner = name_from_pod_group(pg, pgc)
        except ClaimError as e:
            return Status.error(e)
        if claim_name is None:
            continue
        try:
            claim = pl.claim_tracker().get(pg.namespace, claim_name)
        except ClaimError as e:
            return Status.error(e)
        if must_check_owner:
            try:
                is_for_pod_group(pg, claim)
            except ClaimError:
                continue
        if claim.status.get("allocation") is not None and is_reserved_for_pod(pod, claim, True):
            # the strategic-merge patch of the status subresource deleting the PodGroup's entry
            # by uid, applied to the API server's claim (its metadata.uid a precondition)

            def drop(raw, status, uid=pg.uid):
                status["reservedFor"] = [r for r in status.get("reservedFor") or [] if r.get("uid") != uid]
                if not status["reservedFor"]:
                    del status["reservedFor"]
            latest = pl.cluster.get("ResourceClaim", claim.namespace, claim.name)
            if latest is None or latest.uid != claim.uid:
                continue  # the patch fails (NotFound, or its uid precondition): logged, next claim
            try:
                pl.cluster.update_status(copy_with(latest, drop))
            except API_ERRORS:
                continue  # "postfilter unreserving claim" logged: retried with the pod
            return Status.unresolvable("ResourceClaim unreserved for PodGroup")
    return None
