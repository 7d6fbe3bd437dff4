"""A stand-in registry for the configuration tests: the in-tree plugin names with the extension
points they implement upstream, v1 args defaulting, and a small part of the args validation
(enough to port the upstream table cases), so the config tests do not depend on the real plugins."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Tuple

from harness.framework import Plugin, hookimpl


def _resources(res: Any) -> List[Dict[str, Any]]:
    out = []
    for r in res or []:
        r = dict(r)
        if not r.get("weight"):
            r["weight"] = 1
        out.append(r)
    return out


_DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


class SchedulingGates(Plugin):
    name = "SchedulingGates"

    @hookimpl
    def pre_enqueue(self, pod):
        return None


class PrioritySort(Plugin):
    name = "PrioritySort"

    @hookimpl
    def less(self, pod_info1, pod_info2):
        return False


class NodeUnschedulable(Plugin):
    name = "NodeUnschedulable"

    @hookimpl
    def filter(self, state, pod, node_info):
        return None


class NodeName(NodeUnschedulable):
    name = "NodeName"


class _FilterScore(Plugin):
    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return None, None

    @hookimpl
    def filter(self, state, pod, node_info):
        return None

    @hookimpl
    def pre_score(self, state, pod, nodes):
        return None

    @hookimpl
    def score(self, state, pod, node_info):
        return 0, None


class TaintToleration(Plugin):
    name = "TaintToleration"

    @hookimpl
    def filter(self, state, pod, node_info):
        return None

    @hookimpl
    def pre_score(self, state, pod, nodes):
        return None

    @hookimpl
    def score(self, state, pod, node_info):
        return 0, None


class NodeAffinity(_FilterScore):
    name = "NodeAffinity"
    args_kind = "NodeAffinityArgs"


class NodePorts(Plugin):
    name = "NodePorts"

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return None, None

    @hookimpl
    def filter(self, state, pod, node_info):
        return None


class NodeDeclaredFeatures(NodePorts):
    name = "NodeDeclaredFeatures"  # v1.35 on: PreFilter, Filter


class NodeResourcesFit(_FilterScore):
    name = "NodeResourcesFit"
    args_kind = "NodeResourcesFitArgs"

    @classmethod
    def set_defaults(cls, args):
        args = copy.deepcopy(args)
        ss = args.get("scoringStrategy")
        if ss is None:
            ss = {"type": "LeastAllocated", "resources": copy.deepcopy(_DEFAULT_RESOURCES)}
        ss = dict(ss)
        ss["resources"] = _resources(ss.get("resources") or copy.deepcopy(_DEFAULT_RESOURCES))
        args["scoringStrategy"] = ss
        return args

    @classmethod
    def validate_args(cls, args) -> List[Tuple[str, str]]:
        ss = args.get("scoringStrategy") or {}
        t = ss.get("type", "")
        if ss and t not in ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"):
            return [("scoringStrategy.type", f'Unsupported value: "{t}": supported values: '
                     '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"')]
        return []


class VolumeRestrictions(NodePorts):
    name = "VolumeRestrictions"


class NodeVolumeLimits(NodePorts):
    name = "NodeVolumeLimits"


class VolumeZone(NodePorts):
    name = "VolumeZone"


class VolumeBinding(_FilterScore):
    name = "VolumeBinding"
    args_kind = "VolumeBindingArgs"

    @hookimpl
    def reserve(self, state, pod, node_name):
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        return None

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        return None

    @classmethod
    def set_defaults(cls, args):
        args = dict(args)
        if args.get("bindTimeoutSeconds") is None:
            args["bindTimeoutSeconds"] = 600
        return args


class PodTopologySpread(_FilterScore):
    name = "PodTopologySpread"
    args_kind = "PodTopologySpreadArgs"

    @classmethod
    def set_defaults(cls, args):
        args = dict(args)
        if not args.get("defaultingType"):
            args["defaultingType"] = "System"
        return args


class InterPodAffinity(_FilterScore):
    name = "InterPodAffinity"
    args_kind = "InterPodAffinityArgs"

    @classmethod
    def set_defaults(cls, args):
        args = dict(args)
        if args.get("hardPodAffinityWeight") is None:
            args["hardPodAffinityWeight"] = 1
        args.setdefault("ignorePreferredTermsOfExistingPods", False)
        return args

    @classmethod
    def validate_args(cls, args):
        w = args.get("hardPodAffinityWeight")
        if w is not None and (w < 0 or w > 100):
            return [("hardPodAffinityWeight", f"Invalid value: {w}: not in valid range [0, 100]")]
        return []


class DynamicResources(Plugin):
    name = "DynamicResources"
    args_kind = "DynamicResourcesArgs"

    @hookimpl
    def pre_enqueue(self, pod):
        return None

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return None, None

    @hookimpl
    def filter(self, state, pod, node_info):
        return None

    @hookimpl
    def post_filter(self, state, pod, filtered_node_status_map):
        return None, None

    @hookimpl
    def reserve(self, state, pod, node_name):
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        return None

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        return None

    @classmethod
    def set_defaults(cls, args):
        args = dict(args)
        if args.get("filterTimeout") is None:
            args["filterTimeout"] = "10s"
        return args


class DefaultPreemption(Plugin):
    name = "DefaultPreemption"
    args_kind = "DefaultPreemptionArgs"

    @hookimpl
    def pre_enqueue(self, pod):
        return None

    @hookimpl
    def post_filter(self, state, pod, filtered_node_status_map):
        return None, None

    @classmethod
    def set_defaults(cls, args):
        args = dict(args)
        if args.get("minCandidateNodesPercentage") is None:
            args["minCandidateNodesPercentage"] = 10
        if args.get("minCandidateNodesAbsolute") is None:
            args["minCandidateNodesAbsolute"] = 100
        return args

    @classmethod
    def validate_args(cls, args):
        errs = []
        pct = args.get("minCandidateNodesPercentage") or 0
        absolute = args.get("minCandidateNodesAbsolute") or 0
        if pct < 0 or pct > 100:
            errs.append(("minCandidateNodesPercentage", f"Invalid value: {pct}: not in valid range [0, 100]"))
        if absolute < 0:
            errs.append(("minCandidateNodesAbsolute", f"Invalid value: {absolute}: not in valid range [0, inf)"))
        if pct == 0 and absolute == 0:
            errs.append(("minCandidateNodesPercentage",
                         "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute"))
            errs.append(("minCandidateNodesAbsolute",
                         "Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage"))
        return errs


class NodeResourcesBalancedAllocation(Plugin):
    name = "NodeResourcesBalancedAllocation"
    args_kind = "NodeResourcesBalancedAllocationArgs"

    @hookimpl
    def pre_score(self, state, pod, nodes):
        return None

    @hookimpl
    def score(self, state, pod, node_info):
        return 0, None

    @classmethod
    def set_defaults(cls, args):
        args = dict(args)
        if not args.get("resources"):
            args["resources"] = copy.deepcopy(_DEFAULT_RESOURCES)
        else:
            args["resources"] = _resources(args["resources"])
        return args


class ImageLocality(Plugin):
    name = "ImageLocality"

    @hookimpl
    def score(self, state, pod, node_info):
        return 0, None


class DefaultBinder(Plugin):
    name = "DefaultBinder"

    @hookimpl
    def bind(self, state, pod, node_name):
        return None


# ---- test-only plugins (framework_test.go's registry) ----------------------------------------

class CustomSort(PrioritySort):
    name = "CustomSort"


class AnotherSort(PrioritySort):
    name = "AnotherSort"


class CustomBind(DefaultBinder):
    name = "CustomBind"


class ScorePlugin1(ImageLocality):
    """framework_test.go's TestScorePlugin: PreScore and Score."""

    name = "score-plugin-1"

    @hookimpl
    def pre_score(self, state, pod, nodes):
        return None


class ScorePlugin2(ScorePlugin1):
    name = "score-plugin-2"


class ScoreWithNormalizePlugin1(ImageLocality):
    name = "score-with-normalize-plugin-1"

    @hookimpl
    def normalize_score(self, state, pod, scores):
        return None


class NotImplementingScore(Plugin):
    name = "plugin-not-implementing-score"

    @hookimpl
    def filter(self, state, pod, node_info):
        return None


class EverythingPlugin(Plugin):
    """framework_test.go's TestPlugin: implements every extension point."""

    name = "test-plugin"

    @hookimpl
    def pre_enqueue(self, pod):
        return None

    @hookimpl
    def less(self, pod_info1, pod_info2):
        return False

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return None, None

    @hookimpl
    def filter(self, state, pod, node_info):
        return None

    @hookimpl
    def post_filter(self, state, pod, filtered_node_status_map):
        return None, None

    @hookimpl
    def pre_score(self, state, pod, nodes):
        return None

    @hookimpl
    def score(self, state, pod, node_info):
        return 0, None

    @hookimpl
    def reserve(self, state, pod, node_name):
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        return None

    @hookimpl
    def permit(self, state, pod, node_name):
        return None, 0

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        return None

    @hookimpl
    def bind(self, state, pod, node_name):
        return None

    @hookimpl
    def post_bind(self, state, pod, node_name):
        return None


class Unmarked(Plugin):
    """Has a `filter` method, but not marked with @hookimpl: it does not extend Filter."""

    name = "Unmarked"

    def filter(self, state, pod, node_info):
        return None


IN_TREE = [SchedulingGates, PrioritySort, NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
           NodePorts, NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone,
           PodTopologySpread, InterPodAffinity, DynamicResources, DefaultPreemption,
           NodeResourcesBalancedAllocation, ImageLocality, DefaultBinder, NodeDeclaredFeatures]
EXTRA = [CustomSort, AnotherSort, CustomBind, ScorePlugin1, ScorePlugin2, ScoreWithNormalizePlugin1,
         NotImplementingScore, EverythingPlugin, Unmarked]


def stub_registry(extra: bool = True) -> Dict[str, type]:
    classes = IN_TREE + (EXTRA if extra else [])
    return {cls.name: cls for cls in classes}
