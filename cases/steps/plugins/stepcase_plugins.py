"""Out-of-tree test plugins used by the step cases in cases/steps/ (named in a case's
`plugins:`). They stand for plugins whose answer depends on something outside the cluster:

- ``BackendDown`` (PreFilter): answers an Error status while its backend is down, i.e. while
  virtual time is before the pod's annotation ``stepcases.example.com/backend-down-until`` (a Go
  duration from the scheduler's start). A pod without the annotation passes. An Error (not a
  rejection) sends the pod to the error backoffQ with backoff 1s, 2s, 4s, 8s, 10s.
- ``SlowPermit`` (Permit): holds every pod carrying the annotation
  ``stepcases.example.com/permit-wait`` (a Go duration) at Permit with that timeout, and never
  allows it, so the wait ends in a timeout rejection. Neither plugin implements
  EnqueueExtensions, so (as kube-scheduler does for such plugins) a pod they rejected is
  requeued by every cluster event.
- ``PatientPermit`` (Permit): SlowPermit with EnqueueExtensions: a pod it rejected is requeued
  only by an update of its own ``permit-wait`` annotation (Pod/Update, hint Queue when the
  annotation changed, else QueueSkip), not by the scheduler's own status patches.
"""

from __future__ import annotations

from harness.case.steps import parse_duration
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, Code, EventResource, Plugin,
                               QueueingHint, Status, hookimpl)

BACKEND_DOWN_UNTIL = "stepcases.example.com/backend-down-until"
PERMIT_WAIT = "stepcases.example.com/permit-wait"


def _annotation(pod, key):
    return ((pod.raw.get("metadata") or {}).get("annotations") or {}).get(key)


class BackendDown(Plugin):
    """PreFilter Error while virtual time < the pod's backend-down-until annotation."""

    name = "BackendDown"

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        until = _annotation(pod, BACKEND_DOWN_UNTIL)
        if until is None:
            return None, None
        now = self.handle.clock.now()
        if now < parse_duration(until):
            return None, Status(Code.Error, "quota backend unavailable")
        return None, None


class SlowPermit(Plugin):
    """Permit Wait with the pod's permit-wait annotation as the timeout; never allows."""

    name = "SlowPermit"

    @hookimpl
    def permit(self, state, pod, node_name):
        wait = _annotation(pod, PERMIT_WAIT)
        if wait is None:
            return None, 0.0
        return Status(Code.Wait), parse_duration(wait)


class PatientPermit(SlowPermit):
    """SlowPermit whose rejected pods wait for their own permit-wait annotation to change."""

    name = "PatientPermit"

    @hookimpl
    def events_to_register(self):
        def hint(pod, old, new):
            if new is None or old is None or new.uid != pod.uid:
                return QueueingHint.QueueSkip
            changed = _annotation(old, PERMIT_WAIT) != _annotation(new, PERMIT_WAIT)
            return QueueingHint.Queue if changed else QueueingHint.QueueSkip
        return [ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Update), hint)]


@hookimpl
def schedharness_plugins():
    return [BackendDown, SlowPermit, PatientPermit]
