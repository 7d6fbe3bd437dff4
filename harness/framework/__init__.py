"""The scheduling framework (pkg/scheduler/framework and k8s.io/kube-scheduler/framework):
statuses, cycle state, node infos and the other types, the hookspecs plugins implement, the
runtime of a profile (plugin order, skips, weights), the registry, preemption's Evaluator.

Imports: api, versions and the base modules; never the scheduler, config, the case or anything
above (builtin_plugins and the scheduler build on this).
"""

from .custom_resources import CustomResource
from .cycle_state import CycleState, NotFoundError
from .extender_handler import extender
from .hookspecs import hookimpl, hookspec
from .placement import Placement, PlacementScore, PodGroupAssignments, PodGroupInfo
from .plugin import Plugin
from .prebind import PreBindCanceled, PreBindPreFlightResult
from .status import Code, Status
from .timestamps import CLUSTER_START, virtual_seconds
from .types import (ActionType, AffinityTerm, ClusterEvent, ClusterEventWithHint, Diagnosis,
                    EventResource, FitError, HostPortInfo, ImageStateSummary, NodeInfo,
                    NodeScore, NodeToStatus, PodInfo, PostFilterResult, PreFilterResult,
                    QueueingHint, Resource, WeightedAffinityTerm, calculate_resource)

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = (1 << 63) - 1

__all__ = [
    "ActionType", "AffinityTerm", "ClusterEvent", "ClusterEventWithHint", "Code", "CustomResource", "CycleState",
    "Diagnosis", "EventResource", "extender", "FitError", "HostPortInfo", "ImageStateSummary",
    "MAX_NODE_SCORE", "MIN_NODE_SCORE", "NodeInfo", "NodeScore", "NodeToStatus", "NotFoundError",
    "Plugin", "PodInfo", "PostFilterResult", "PreBindCanceled", "PreBindPreFlightResult", "PreFilterResult", "QueueingHint", "Resource",
    "Status", "WeightedAffinityTerm", "calculate_resource", "hookimpl", "hookspec",
    "CLUSTER_START", "virtual_seconds", "Placement", "PlacementScore", "PodGroupAssignments", "PodGroupInfo",
]
