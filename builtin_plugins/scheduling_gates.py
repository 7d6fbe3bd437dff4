"""SchedulingGates (framework/plugins/schedulinggates/scheduling_gates.go)."""

from __future__ import annotations

from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               Plugin, QueueingHint, Status, hookimpl)

from . import names


def _gate_names(pod):
    return [str((g or {}).get("name", "")) for g in (pod.spec.get("schedulingGates") or [])]


class SchedulingGates(Plugin):
    name = names.SchedulingGates

    @hookimpl
    def pre_enqueue(self, pod):
        gates = _gate_names(pod)
        if not gates:
            return None
        # fmt.Sprintf("%v", []string{...}) prints "[a b]".
        return Status.unresolvable(f"waiting for scheduling gates: [{' '.join(gates)}]")

    @hookimpl
    def events_to_register(self):
        # SchedulerQueueingHints is on in v1.34.
        return [ClusterEventWithHint(
            ClusterEvent(EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated),
            self.is_schedulable_after_update_pod_scheduling_gates_eliminated)]

    def is_schedulable_after_update_pod_scheduling_gates_eliminated(self, pod, old_obj, new_obj):
        if new_obj is None or new_obj.uid != pod.uid:
            # An update of another pod cannot make this one schedulable.
            return QueueingHint.QueueSkip
        return QueueingHint.Queue


PLUGINS = [SchedulingGates]
