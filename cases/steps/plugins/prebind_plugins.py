"""Out-of-tree PreBind plugins for the v1.36 PreBind cases in cases/versions/framework/ (named in
a case's `plugins:`). They stand for PreBind work that takes time outside the scheduler (attaching
a device, warming a cache), as VolumeBinding's wait for the PV controller does:

- ``WarmCache`` and ``AttachDevice`` (PreBindPreFlight, PreBind): a pod carrying the annotation
  ``prebindcases.example.com/<plugin>-wait`` (a Go duration) makes the plugin's PreBind wait
  that long in virtual time; without it PreBindPreFlight says Skip. Both answer
  ``PreBindPreFlightResult(allow_parallel=True)``, so v1.36 runs them side by side when both work
  (v1.35 and v1.34 one after the other, in the order the profile lists them). With the annotation
  ``prebindcases.example.com/<plugin>-fail-first: "true"`` the plugin's first PreBind of a pod
  fails with an Error after its wait ("<plugin> failed"); later ones succeed.
  A cancelled context (PreBindCanceled thrown at its wait) is not caught: the framework reports
  ``running PreBind plugin "<plugin>": <cause>``.
"""

from __future__ import annotations

from harness.case.steps import parse_duration
from harness.framework import Code, Plugin, PreBindPreFlightResult, Status, hookimpl

PREFIX = "prebindcases.example.com/"


def _annotation(pod, key):
    return ((pod.raw.get("metadata") or {}).get("annotations") or {}).get(key)


class _SlowPreBind(Plugin):
    """PreBind that waits for the pod's <name>-wait annotation, failing once on request."""

    name = ""

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.failed = set()  # pods whose first PreBind already failed

    def _wait(self, pod):
        value = _annotation(pod, f"{PREFIX}{self.name.lower()}-wait")
        return None if value is None else parse_duration(value)

    @hookimpl
    def pre_bind_pre_flight(self, state, pod, node_name):
        result = PreBindPreFlightResult(allow_parallel=True)
        if self._wait(pod) is None:
            return result, Status(Code.Skip)
        return result, None

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        wait = self._wait(pod)
        if wait is None:
            return None
        return self._work(pod, wait)

    def _work(self, pod, wait):
        yield wait
        fail_first = _annotation(pod, f"{PREFIX}{self.name.lower()}-fail-first") == "true"
        if fail_first and pod.uid not in self.failed:
            self.failed.add(pod.uid)
            return Status(Code.Error, f"{self.name} failed")
        return None


class WarmCache(_SlowPreBind):
    name = "WarmCache"


class AttachDevice(_SlowPreBind):
    name = "AttachDevice"


@hookimpl
def schedharness_plugins():
    return [WarmCache, AttachDevice]
