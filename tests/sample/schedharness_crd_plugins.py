"""A plugin package that declares a custom resource (tests/test_custom_resources.py): Quota
objects (example.com/v1, namespaced) whose `spec.pods` caps the pods this plugin lets through;
events on them requeue through its queueing hint, which records what it saw."""

from __future__ import annotations

from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, CustomResource, Plugin,
                               QueueingHint, Status, hookimpl)

QUOTA = CustomResource("example.com", "v1", "Quota", namespaced=True, plural="quotas")
FENCE = CustomResource("example.com", "v1", "Fence", namespaced=False)  # plural "fences"

SEEN = []  # (action, old, new) the hint received


class QuotaGate(Plugin):
    """PreFilter: Unschedulable unless the pod's namespace has a Quota with spec.open true."""

    name = "QuotaGate"

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        quota = self.handle.dynamic_lister("Quota").get(pod.namespace, "quota")
        if quota is None or not (quota.raw.get("spec") or {}).get("open"):
            return None, Status.unschedulable("quota closed")
        return None, None

    @hookimpl
    def events_to_register(self):
        return [ClusterEventWithHint(ClusterEvent(QUOTA.event_resource, ActionType.Add | ActionType.Update),
                                     self.hint)]

    def hint(self, pod, old, new):
        SEEN.append((old is not None and new is not None, old, new))
        return QueueingHint.Queue if (new.raw.get("spec") or {}).get("open") else QueueingHint.QueueSkip


@hookimpl
def schedharness_plugins():
    return [QuotaGate]


@hookimpl
def schedharness_custom_resources():
    return [QUOTA, FENCE]
