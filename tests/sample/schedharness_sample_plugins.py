"""Out-of-tree plugins used by the tests, registered the way a third-party package registers
(a module implementing `schedharness_plugins`)."""

from __future__ import annotations

from harness.framework import Code, Plugin, Status, hookimpl


class GpuFirst(Plugin):
    """Filters out nodes without a gpu label; scores a100 nodes 100."""

    name = "GpuFirst"

    @hookimpl
    def filter(self, pod, node_info):  # a subset of the hook's parameters
        if "gpu" not in node_info.node.labels:
            return Status.unschedulable("node(s) have no gpu")
        return None

    @hookimpl
    def score(self, state, pod, node_info):
        return (100 if node_info.node.labels.get("gpu") == "a100" else 0), None


class Raiser(Plugin):
    name = "Raiser"

    @hookimpl
    def filter(self, state, pod, node_info):
        raise RuntimeError("boom")


class Waiter(Plugin):
    """Permit: every pod waits 5s and nobody allows it."""

    name = "Waiter"

    @hookimpl
    def permit(self, state, pod, node_name):
        return Status(Code.Wait), 5.0


class Gang(Plugin):
    """Permit: pods labelled gang=<name> wait until `size` of them reached Permit (co-scheduling)."""

    name = "Gang"
    size = 2

    @hookimpl
    def permit(self, state, pod, node_name):
        gang = pod.labels.get("gang")
        if not gang:
            return None, 0
        waiting = []
        self.handle.iterate_over_waiting_pods(
            lambda wp: waiting.append(wp) if wp.pod.labels.get("gang") == gang else None)
        if len(waiting) + 1 >= self.size:
            for wp in waiting:
                wp.allow(self.name)
            return None, 0
        return Status(Code.Wait), 30.0


class NoReserve(Plugin):
    name = "NoReserve"
    unreserved = []

    @hookimpl
    def reserve(self, state, pod, node_name):
        return Status.unschedulable("reserve says no")

    @hookimpl
    def unreserve(self, state, pod, node_name):
        NoReserve.unreserved.append((pod.name, node_name))


class SkipBinder(Plugin):
    name = "SkipBinder"
    seen = []

    @hookimpl
    def bind(self, state, pod, node_name):
        SkipBinder.seen.append(pod.name)
        return Status.skip()


@hookimpl
def schedharness_plugins():
    return [GpuFirst, Raiser, Waiter, Gang, NoReserve, SkipBinder]
