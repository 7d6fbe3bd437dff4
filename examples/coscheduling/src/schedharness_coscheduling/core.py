"""The PodGroup manager (scheduler-plugins pkg/coscheduling/core/core.go, v0.34): PodGroups read
from the simulated API server, pods assumed per group, and the groups that recently failed.

Times are the scheduler's virtual seconds (``handle.clock.now()``): where upstream keeps go-cache
entries with a TTL on the wall clock, these keep an expiry in virtual time.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Set, Tuple

from harness.framework import Resource, virtual_seconds

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"  # v1alpha1.PodGroupLabel
POD_GROUP_KIND = "PodGroup.scheduling.x-k8s.io"  # the kind in its group: not the Workload API's PodGroup
DEFAULT_WAIT_TIME = 60.0  # util.DefaultWaitTime

# Manager.Permit results (core.Status)
POD_GROUP_NOT_SPECIFIED = "PodGroup not specified"
POD_GROUP_NOT_FOUND = "PodGroup not found"
SUCCESS = "Success"
WAIT = "Wait"

PERMIT_STATE_KEY = "PermitCoscheduling"


class PermitState:
    """core.PermitState: whether this pod's Permit should activate its siblings."""

    def __init__(self, activate: bool):
        self.activate = activate

    def clone(self) -> "PermitState":
        return PermitState(self.activate)


def pod_group_label(pod) -> str:
    """util.GetPodGroupLabel."""
    return pod.labels.get(POD_GROUP_LABEL, "")


def pod_group_full_name(pod) -> str:
    """util.GetPodGroupFullName: `namespace/name`, or "" for a pod in no group."""
    name = pod_group_label(pod)
    return f"{pod.namespace}/{name}" if name else ""


def min_member(pg) -> int:
    return int((pg.spec or {}).get("minMember") or 0)


def wait_time(pg, schedule_timeout: float) -> float:
    """util.GetWaitTimeDuration: the PodGroup's scheduleTimeoutSeconds, else the plugin's
    permitWaitingTimeSeconds when not zero, else 60s."""
    if pg is not None and (pg.spec or {}).get("scheduleTimeoutSeconds") is not None:
        return float(pg.spec["scheduleTimeoutSeconds"])
    if schedule_timeout:
        return schedule_timeout
    return DEFAULT_WAIT_TIME


def _is_terminal(pod) -> bool:
    # kube-scheduler's pod informer lists pods with phase!=Succeeded,phase!=Failed
    return (pod.status or {}).get("phase") in ("Succeeded", "Failed")


class PodGroupManager:
    """core.PodGroupManager over the handle's simulated API server."""

    def __init__(self, handle, schedule_timeout: float):
        self.handle = handle
        self.schedule_timeout = schedule_timeout
        self.permitted_pg: Dict[str, float] = {}  # name -> expiry (virtual seconds)
        self.backed_off_pg: Dict[str, float] = {}
        self.last_failed_schedule_pg: Dict[str, float] = {}
        self.assigned_pods_by_pg: Dict[str, Set[str]] = {}
        self.lock = threading.RLock()  # pgMgr.RWMutex: plugins may be called from several threads
        cluster = getattr(handle, "cluster", None)
        if cluster is not None:
            for pod in cluster.list("Pod"):  # the informer's initial list: AddFunc per pod
                self._on_pod_add(pod)
            cluster.subscribe(self._on_event)

    # -- informer handlers (NewPodGroupManager's AddFunc / DeleteFunc) --------------------------
    def _on_event(self, kind: str, old, new) -> None:
        if kind != "Pod":
            return
        if old is None and new is not None:
            self._on_pod_add(new)
        elif new is None and old is not None and old.node_name:
            self.unreserve(old)

    def _on_pod_add(self, pod) -> None:
        """AddPodFactory: a pod created already bound counts as assigned to its group."""
        if not pod.node_name or _is_terminal(pod):
            return
        full = pod_group_full_name(pod)
        if not full:
            return
        with self.lock:
            self.assigned_pods_by_pg.setdefault(full, set()).add(pod.name)

    # -- helpers -------------------------------------------------------------------------------
    def now(self) -> float:
        clock = getattr(self.handle, "clock", None)
        return clock.now() if clock is not None else 0.0

    def get_pod_group(self, pod) -> Tuple[str, Optional[Any]]:
        """GetPodGroup: ("namespace/name", the PodGroup or None); ("", None) for no group."""
        name = pod_group_label(pod)
        if not name:
            return "", None
        full = f"{pod.namespace}/{name}"
        cluster = getattr(self.handle, "cluster", None)
        pg = cluster.get(POD_GROUP_KIND, pod.namespace, name) if cluster is not None else None
        if pg is None and cluster is not None and pod.namespace == "default":
            # the harness cannot know a custom kind is namespaced, so it does not default the
            # namespace of a PodGroup written without one: that PodGroup is in "default"
            pg = cluster.get(POD_GROUP_KIND, "", name)
        return full, pg

    def group_pods(self, namespace: str, name: str) -> List[Any]:
        """podLister.Pods(ns).List(pod-group=name)."""
        cluster = getattr(self.handle, "cluster", None)
        if cluster is None:
            return []
        return [p for p in cluster.list("Pod", namespace)
                if p.labels.get(POD_GROUP_LABEL) == name and not _is_terminal(p)]

    def get_assigned_pod_count(self, pg_name: str) -> int:
        with self.lock:
            return len(self.assigned_pods_by_pg.get(pg_name, ()))

    def backoff_pod_group(self, pg_name: str, backoff: float) -> None:
        if backoff:
            with self.lock:
                self.backed_off_pg[pg_name] = self.now() + backoff

    def mark_pod_group_schedule_failure(self, pg_name: str) -> None:
        with self.lock:
            self.last_failed_schedule_pg[pg_name] = self.now()

    def clear_pod_group_schedule_failure(self, pg_name: str) -> None:
        with self.lock:
            self.last_failed_schedule_pg.pop(pg_name, None)

    def delete_permitted_pod_group(self, pg_name: str) -> None:
        with self.lock:
            self.permitted_pg.pop(pg_name, None)

    def _live(self, cache: Dict[str, float], key: str) -> bool:
        """go-cache Get: an entry is found until its expiration has passed."""
        exp = cache.get(key)
        if exp is None:
            return False
        if self.now() > exp:
            cache.pop(key, None)
            return False
        return True

    # -- the extension points' logic -----------------------------------------------------------
    def get_creation_timestamp(self, pod, ts: float) -> float:
        """GetCreationTimestamp: the group's last failure time, else the PodGroup's
        creationTimestamp (virtual seconds), else `ts` (the pod's initial attempt)."""
        name = pod_group_label(pod)
        if not name:
            return ts
        full = f"{pod.namespace}/{name}"
        with self.lock:
            failed = self.last_failed_schedule_pg.get(full)
        if failed is not None:
            return failed
        _, pg = self.get_pod_group(pod)
        if pg is None:
            return ts
        created = virtual_seconds((pg.raw.get("metadata") or {}).get("creationTimestamp"))
        return ts if created is None else created

    def activate_siblings(self, pod, state) -> List[Any]:
        """ActivateSiblings: the other pods of the group, when this pod's Permit asked for it
        (the harness activates them through the handle, as ScheduleOne does with
        PodsToActivate at the end of the scheduling cycle)."""
        name = pod_group_label(pod)
        if not name:
            return []
        ps = state.get(PERMIT_STATE_KEY)
        if not isinstance(ps, PermitState) or not ps.activate:
            return []
        return [p for p in self.group_pods(pod.namespace, name) if p.uid != pod.uid]

    def pre_filter(self, pod, nodes) -> Optional[str]:
        """PreFilter: an error message, or None."""
        full, pg = self.get_pod_group(pod)
        if pg is None:
            return None
        with self.lock:
            if self._live(self.backed_off_pg, full):
                return f"podGroup {full} failed recently"
        pods = self.group_pods(pod.namespace, pod_group_label(pod))
        quorum_gap = min_member(pg) - len(pods)
        if quorum_gap > 0:
            return (f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods "
                    f"number: {len(pods)}, minMember of group: {min_member(pg)}")
        for p in pods:
            if p.spec.get("schedulingGates"):
                quorum_gap += 1
            if quorum_gap > 0:
                return f"pre-filter pod {pod.name} cannot proceed due to gated pods in the same PodGroup"
        min_resources = (pg.spec or {}).get("minResources")
        if min_resources is None:
            return None
        with self.lock:
            if self._live(self.permitted_pg, full):
                return None
        err = check_cluster_resource(nodes, min_resources, min_member(pg), full)
        if err:
            return err
        with self.lock:
            self.permitted_pg[full] = self.now() + self.schedule_timeout
        return None

    def permit(self, state, pod) -> str:
        """Permit: PodGroupNotSpecified, PodGroupNotFound, Success or Wait."""
        full, pg = self.get_pod_group(pod)
        if not full:
            return POD_GROUP_NOT_SPECIFIED
        if pg is None:
            return POD_GROUP_NOT_FOUND
        with self.lock:
            assigned = self.assigned_pods_by_pg.setdefault(full, set())
            assigned.add(pod.name)
            if len(assigned) >= min_member(pg):
                return SUCCESS
            if len(assigned) == 1:
                state.write(PERMIT_STATE_KEY, PermitState(True))
            return WAIT

    def unreserve(self, pod) -> None:
        """Manager.Unreserve: the pod no longer counts as assigned to its group."""
        full = pod_group_full_name(pod)
        if not full:
            return
        with self.lock:
            assigned = self.assigned_pods_by_pg.get(full)
            if assigned is not None:
                assigned.discard(pod.name)
                if not assigned:
                    del self.assigned_pods_by_pg[full]


_RESOURCE_FIELDS = (("cpu", "milli_cpu"), ("memory", "memory"),
                    ("ephemeral-storage", "ephemeral_storage"), ("pods", "allowed_pod_number"))


def _left(node_info, group: str) -> Dict[str, int]:
    """getNodeResource: what the node has left once the group's own pods are taken off."""
    clone = node_info.snapshot()
    for pi in list(node_info.pods):
        if pod_group_full_name(pi.pod) == group:
            clone.remove_pod(pi.pod)
    alloc, req = clone.allocatable, clone.requested
    left = {"cpu": alloc.milli_cpu - req.milli_cpu, "memory": alloc.memory - req.memory,
            "ephemeral-storage": alloc.ephemeral_storage - req.ephemeral_storage,
            "pods": alloc.allowed_pod_number - len(clone.pods)}
    for k, v in alloc.scalar_resources.items():
        left[k] = v - req.scalar_resources.get(k, 0)
    return left


def check_cluster_resource(nodes, min_resources: Dict[str, Any], members: int, group: str) -> Optional[str]:
    """CheckClusterResource: can the nodes together hold minResources (and minMember pods)? The
    gap is subtracted node by node; the first node that closes it ends the check. The message
    gives the remaining gap in base units (upstream prints its ResourceList map)."""
    want = Resource.from_list(min_resources)
    gap: Dict[str, int] = {name: getattr(want, attr) for name, attr in _RESOURCE_FIELDS
                           if name in min_resources}
    gap.update(want.scalar_resources)
    gap["pods"] = members
    for ni in nodes:
        if ni is None or ni.node is None:
            continue
        left = _left(ni, group)
        for name in list(gap):
            gap[name] -= left.get(name, 0)
            if gap[name] <= 0:
                del gap[name]
        if not gap:
            return None
    items = " ".join(f"{k}:{v}m" if k == "cpu" else f"{k}:{v}" for k, v in sorted(gap.items()))
    return f"resource gap: map[{items}]"
