"""The scheduler's runtime state of pod groups: v1.35's workload manager
(pkg/scheduler/backend/workloadmanager: podGroupInfo, workloadManager) and v1.36's pod group
states in the cache (backend/cache/podgroupstate.go), which count the same pods.

It exists only with the GenericWorkload gate on (scheduler.New builds it then); the pod event
handlers update it before the cache and the queue (eventhandlers.go addPod/updatePod/deletePod).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..api.workload import GroupKey, pod_group_key

# DefaultSchedulingTimeoutDuration: how long gang pods wait at Permit for a quorum
DEFAULT_SCHEDULING_TIMEOUT = 300.0


@dataclass
class PodGroupInfo:
    """podGroupInfo: the pods of one group known to the scheduler, by uid."""

    all_pods: Dict[str, object] = field(default_factory=dict)  # uid -> pod (insertion order)
    unscheduled: Dict[str, None] = field(default_factory=dict)  # ordered sets
    assumed: Dict[str, None] = field(default_factory=dict)
    assigned: Dict[str, None] = field(default_factory=dict)
    scheduling_deadline: Optional[float] = None

    def add_pod(self, pod) -> None:
        self.all_pods[pod.uid] = pod
        if pod.node_name:
            self.assigned[pod.uid] = None
        else:
            self.unscheduled[pod.uid] = None

    def update_pod(self, old, new) -> None:
        self.all_pods[new.uid] = new
        if not old.node_name and new.node_name:
            self.assigned[new.uid] = None
            self.unscheduled.pop(new.uid, None)
            self.assumed.pop(new.uid, None)

    def delete_pod(self, uid: str) -> None:
        for d in (self.all_pods, self.unscheduled, self.assumed, self.assigned):
            d.pop(uid, None)

    def unscheduled_pods(self) -> List[object]:
        """UnscheduledPods: neither assumed nor assigned."""
        return [self.all_pods[u] for u in self.unscheduled if u in self.all_pods]

    def assume_pod(self, uid: str) -> None:
        """AssumePod: the pod reached Reserve."""
        self.assumed[uid] = None
        self.unscheduled.pop(uid, None)

    def forget_pod(self, uid: str) -> None:
        """ForgetPod: the pod left the assumed state (Unreserve)."""
        self.unscheduled[uid] = None
        self.assumed.pop(uid, None)

    def scheduling_timeout(self, now: float) -> float:
        """SchedulingTimeout: the time left until the group's deadline, set by the first pod
        that waits and set anew once it has passed (Before(now): strictly earlier)."""
        if self.scheduling_deadline is None or self.scheduling_deadline < now:
            self.scheduling_deadline = now + DEFAULT_SCHEDULING_TIMEOUT
        return self.scheduling_deadline - now


class WorkloadManager:
    """workloadManager: pod group infos by pod group key, dropped when their last pod goes."""

    def __init__(self, features) -> None:
        self.features = features
        self.infos: Dict[GroupKey, PodGroupInfo] = {}

    def key(self, pod) -> Optional[GroupKey]:
        return pod_group_key(pod, self.features)

    def add_pod(self, pod) -> None:
        k = self.key(pod)
        if k is None:
            return
        self.infos.setdefault(k, PodGroupInfo()).add_pod(pod)

    def update_pod(self, old, new) -> None:
        k = self.key(new)
        if k is None:
            return
        info = self.infos.get(k)
        if info is None:  # "Shouldn't happen, but handling this case gracefully."
            self.infos[k] = info = PodGroupInfo()
            info.add_pod(new)
            return
        info.update_pod(old, new)

    def delete_pod(self, pod) -> None:
        k = self.key(pod)
        info = self.infos.get(k) if k is not None else None
        if info is None:
            return
        info.delete_pod(pod.uid)
        if not info.all_pods:
            del self.infos[k]

    def pod_group_info(self, pod) -> Optional[PodGroupInfo]:
        """PodGroupInfo of the pod's group (None: "internal pod group state doesn't exist")."""
        k = self.key(pod)
        return self.infos.get(k) if k is not None else None
