"""GangScheduling (framework/plugins/gangscheduling/gangscheduling.go, new in v1.35: alpha, in the
default plugins with its gate on), "all-or-nothing" scheduling of a pod group with a gang policy.

- v1.35.6: pods name their group in ``spec.workloadRef``; the policy is the Workload's
  ``spec.podGroups[].policy``; PreEnqueue, Reserve/Unreserve (the workload manager's assumed
  pods), Permit (Wait until minCount pods are assumed or assigned; the wait's timeout is
  ``podGroupInfo.SchedulingTimeout()``, one 5-minute deadline per pod group).
- v1.36.3: pods name a PodGroup in ``spec.schedulingGroup.podGroupName``; the policy is the
  PodGroup's ``spec.schedulingPolicy``; Permit waits at most ``permitTimeoutDuration`` (5
  minutes) per pod.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from harness.api.workload import gang_min_count, policy_of
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               Plugin, QueueingHint, Status, hookimpl)
from harness.framework.status import Code

from . import names
from .helper import features_of

NAME = names.GangScheduling
PERMIT_TIMEOUT = 300.0  # v1.36's permitTimeoutDuration


class GangScheduling(Plugin):
    name = NAME

    def __new__(cls, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        # v1.36's plugin has no Reserve: the same name, the class without those hooks
        if cls is GangScheduling and features_of(handle).version.minor >= 36:
            cls = GangSchedulingV136
        return super().__new__(cls)

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        fts = features_of(handle)
        if "GangScheduling" not in fts:
            raise ValueError(f"plugin {NAME} does not exist in kube-scheduler {fts.version} (added in v1.35)")
        super().__init__(args, handle)
        self.features = fts
        self.v135 = fts.version.minor == 35

    # -- helpers -------------------------------------------------------------------------------
    def _manager(self):
        return getattr(self.handle, "workload_manager", None)

    def _key(self, pod):
        m = self._manager()
        return m.key(pod) if m is not None else None

    def _policy(self, key):
        return policy_of(self.handle.cluster, key, self.features)

    # -- EnqueueExtensions ---------------------------------------------------------------------
    @hookimpl
    def events_to_register(self):
        group = EventResource.Workload if self.v135 else EventResource.PodGroup
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Add), self.is_schedulable_after_pod_added),
            ClusterEventWithHint(ClusterEvent(group, ActionType.Add), self.is_schedulable_after_group_added),
        ]

    def is_schedulable_after_pod_added(self, pod, old_obj, new_obj):
        """isSchedulableAfterPodAdded: a pod of the same group (matchingWorkloadReference /
        MatchingSchedulingGroup)."""
        k = self._key(pod)
        if k is None or new_obj is None or self._key(new_obj) != k:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_group_added(self, pod, old_obj, new_obj):
        """isSchedulableAfterWorkloadAdded (v1.35) / isSchedulableAfterPodGroupAdded (v1.36)."""
        k = self._key(pod)
        if k is None or new_obj is None or new_obj.namespace != k[0] or new_obj.name != k[1]:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    # -- PreEnqueue ----------------------------------------------------------------------------
    @hookimpl
    def pre_enqueue(self, pod):
        k = self._key(pod)
        if k is None:
            return None
        err, policy = self._policy(k)
        if err is not None:
            return Status.unresolvable(err)
        min_count = gang_min_count(policy)
        if min_count is None:
            return None  # only pods with a gang policy
        info = self._manager().infos.get(k)
        if info is None:
            return Status.error(RuntimeError("internal pod group state doesn't exist for a pod's workload"))
        if len(info.all_pods) < min_count:
            return Status.unresolvable("waiting for minCount pods from a gang to appear in scheduling queue")
        return None

    # -- Reserve -------------------------------------------------------------------------------
    @hookimpl
    def reserve(self, state, pod, node_name):
        """Reserve (v1.35): the pod counts as assumed in the workload manager."""
        info = self._info(pod)
        if info is not None:
            info.assume_pod(pod.uid)
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        info = self._info(pod)
        if info is not None:
            info.forget_pod(pod.uid)

    def _info(self, pod):
        m = self._manager()
        return m.pod_group_info(pod) if m is not None else None

    # -- Permit --------------------------------------------------------------------------------
    @hookimpl
    def permit(self, state, pod, node_name):
        k = self._key(pod)
        if k is None:
            return None, 0
        err, policy = self._policy(k)
        if err is not None:
            if self.v135:
                return Status.error(RuntimeError(f"failed to get workload {k[0]}/{k[1]}: {err}")), 0
            return Status.error(RuntimeError(f"failed to get podGroup {k[0]}/{k[1]}: {err}")), 0
        min_count = gang_min_count(policy)
        if min_count is None:
            return None, 0
        info = self._info(pod)
        if info is None:
            return Status.error(RuntimeError("internal pod group state doesn't exist for a pod's workload")), 0
        scheduled = len(set(info.assumed) | set(info.assigned))
        if scheduled < min_count:
            # activate the group's unscheduled pods in case they waited for this one
            self.handle.activate(info.unscheduled_pods())
            if self.v135:
                now = self.handle.clock.now() if self.handle.clock is not None else 0.0
                return (Status(Code.Wait, "waiting for minCount pods from a gang to be waiting on permit"),
                        info.scheduling_timeout(now))
            return Status(Code.Wait, "waiting for minCount pods from a gang to be scheduled"), PERMIT_TIMEOUT
        for uid in list(info.assumed):
            wp = self.handle.get_waiting_pod(uid)
            if wp is not None:
                wp.allow(NAME)
        return None, 0


class GangSchedulingV136(GangScheduling):
    """v1.36's GangScheduling: no Reserve/Unreserve (the cache counts a pod of the group when it
    assumes it, Cache.assume_pod)."""

    reserve = None
    unreserve = None


PLUGINS = [GangScheduling]
