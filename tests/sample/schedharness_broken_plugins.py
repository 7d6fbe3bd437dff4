"""Plugins that each break one rule of the conformance kit (tests/conformance): the kit must
flag each of them under that rule."""

from __future__ import annotations

import itertools

from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, Code, EventResource,
                               Placement, Plugin, QueueingHint, Status, hookimpl)


class LeakyReserve(Plugin):
    """Reserve claims a slot on the node; Unreserve forgets to give it back."""

    name = "LeakyReserve"

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.used = {}

    @hookimpl
    def filter(self, state, pod, node_info):
        if self.used.get(node_info.name, 0) > 0:
            return Status.unschedulable("node slot taken")
        return None

    @hookimpl
    def reserve(self, state, pod, node_name):
        self.used[node_name] = self.used.get(node_name, 0) + 1

    @hookimpl
    def unreserve(self, state, pod, node_name):
        pass


class DoubleUnreserve(LeakyReserve):
    """Unreserve gives a slot back every time it is called, reserved or not."""

    name = "DoubleUnreserve"

    @hookimpl
    def unreserve(self, state, pod, node_name):
        self.used[node_name] = self.used.get(node_name, 0) - 1


class Overscore(Plugin):
    """NormalizeScore doubles the scores: up to 200."""

    name = "Overscore"

    @hookimpl
    def score(self, state, pod, node_info):
        return 100, None

    @hookimpl
    def normalize_score(self, state, pod, scores):
        for s in scores:
            s.score *= 2


class Drifting(Plugin):
    """Score counts its own calls."""

    name = "Drifting"
    _calls = itertools.count()

    @hookimpl
    def score(self, state, pod, node_info):
        return next(self._calls) % 100, None


def _cpu_below_6(node_info):
    return node_info.allocatable.milli_cpu < 6000


class DeafToNodes(Plugin):
    """Filter needs 6 cpu of allocatable, but only Pod Add events are registered."""

    name = "DeafToNodes"

    @hookimpl
    def filter(self, state, pod, node_info):
        return Status.unschedulable("needs a 6-cpu node") if _cpu_below_6(node_info) else None

    @hookimpl
    def events_to_register(self):
        return [ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Add))]


class SkippingHint(DeafToNodes):
    """Registers node allocatable changes, but its hint always says QueueSkip."""

    name = "SkippingHint"

    @hookimpl
    def events_to_register(self):
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
                                     lambda pod, old, new: QueueingHint.QueueSkip)]


class _Counts:
    def __init__(self, counts):
        self.counts = counts

    def clone(self):
        return _Counts(dict(self.counts))


class ForgetfulAddPod(Plugin):
    """PreFilter counts the pods per node, Filter wants an empty node; AddPod forgets to count
    the added pod."""

    name = "ForgetfulAddPod"

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        state.write("ForgetfulAddPod", _Counts({ni.name: len(ni.pods) for ni in nodes}))
        return None, None

    @hookimpl
    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info):
        return None

    @hookimpl
    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info):
        state.read("ForgetfulAddPod").counts[node_info.name] -= 1

    @hookimpl
    def filter(self, state, pod, node_info):
        if state.read("ForgetfulAddPod").counts.get(node_info.name, 0) >= 1:
            return Status.unschedulable("node not empty")
        return None


class WrongNameAllow(Plugin):
    """Permit: the first pod waits, the second allows it, under another plugin's name."""

    name = "WrongNameAllow"

    @hookimpl
    def permit(self, state, pod, node_name):
        waiting = []
        self.handle.iterate_over_waiting_pods(waiting.append)
        if not waiting:
            return Status(Code.Wait), 5.0
        for wp in waiting:
            wp.allow("SomeOtherPlugin")
        return None, 0


class ZeroWait(Plugin):
    """Permit: Wait with no timeout."""

    name = "ZeroWait"

    @hookimpl
    def permit(self, state, pod, node_name):
        return Status(Code.Wait), 0


class Scribbler(Plugin):
    """Filter writes an annotation into the pod it is given."""

    name = "Scribbler"

    @hookimpl
    def filter(self, state, pod, node_info):
        pod.raw["metadata"].setdefault("annotations", {})["seen-by"] = node_info.name
        return None


PLUGINS = [LeakyReserve, DoubleUnreserve, Overscore, Drifting, DeafToNodes, SkippingHint,
           ForgetfulAddPod, WrongNameAllow, ZeroWait, Scribbler]


@hookimpl
def schedharness_plugins():
    return PLUGINS


class NodeListTrimmer(Plugin):
    """PreFilter empties the pod lists of the NodeInfos it is given."""

    name = "NodeListTrimmer"

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        for ni in nodes:
            ni.pods = []
        return None, None


PLUGINS.append(NodeListTrimmer)


class NodeLabeler(Plugin):
    """Filter writes a label into the node of the NodeInfo it is given (a later pod would be
    bound by a label no node has)."""

    name = "NodeLabeler"

    @hookimpl
    def filter(self, state, pod, node_info):
        node_info.node.labels["seen-by"] = pod.name
        return None


class PodLabeler(Plugin):
    """Filter writes a label into the pod's labels (not its manifest)."""

    name = "PodLabeler"

    @hookimpl
    def filter(self, state, pod, node_info):
        pod.labels["filtered"] = "yes"
        return None


class PodAnnotator(Plugin):
    """PreScore writes an annotation into the pod's annotations."""

    name = "PodAnnotator"

    @hookimpl
    def pre_score(self, state, pod, nodes):
        pod.annotations["scored"] = "yes"
        return None

    @hookimpl
    def score(self, state, pod, node_info):
        return 50, None


class PodStatusWriter(Plugin):
    """Reserve writes the pod's status."""

    name = "PodStatusWriter"

    @hookimpl
    def reserve(self, state, pod, node_name):
        pod.raw.setdefault("status", {})["message"] = f"reserved on {node_name}"
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        pass


class NeighbourRelabeler(Plugin):
    """Filter relabels the pods already on the node (in the NodeInfo it is given)."""

    name = "NeighbourRelabeler"

    @hookimpl
    def filter(self, state, pod, node_info):
        for pi in node_info.pods:
            pi.pod.labels["neighbour-of"] = pod.name
        return None


class Raiser(Plugin):
    """Filter raises."""

    name = "Raiser"

    @hookimpl
    def filter(self, state, pod, node_info):
        raise ValueError("cannot read the node")


class BareZeroScore(Plugin):
    """Score returns 0 instead of (0, None)."""

    name = "BareZeroScore"

    @hookimpl
    def score(self, state, pod, node_info):
        return 0


class Score500(Plugin):
    """Score returns 500 and has no NormalizeScore."""

    name = "Score500"

    @hookimpl
    def score(self, state, pod, node_info):
        return 500, None


class PreflightRejecter(Plugin):
    """PreBindPreFlight answers Unschedulable (only Success, Skip or Error are supported)."""

    name = "PreflightRejecter"

    @hookimpl
    def pre_bind_pre_flight(self, state, pod, node_name):
        return Status.unschedulable("not now")

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        return None


PLUGINS += [PreflightRejecter]
PLUGINS += [NodeLabeler, PodLabeler, PodAnnotator, PodStatusWriter, NeighbourRelabeler, Raiser,
            BareZeroScore, Score500]


class StrayPlacement(Plugin):
    """PlacementGenerate (v1.36) returns a placement holding every node, whatever its parent."""

    name = "StrayPlacement"

    @hookimpl
    def generate_placements(self, state, pod_group, parent_placement):
        return [Placement("everything", list(self.handle.snapshot.list()))], None


class PlacementScore500(Plugin):
    """PlacementScore (v1.36) returns 500 and has no NormalizePlacementScore."""

    name = "PlacementScore500"

    @hookimpl
    def score_placement(self, state, pod_group, placement):
        return 500, None


PLUGINS += [StrayPlacement, PlacementScore500]
