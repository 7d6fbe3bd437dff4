"""The PodTopologySpread plugin (framework/plugins/podtopologyspread/plugin.go): its args
(PodTopologySpreadArgs defaults and validation), constraints, events and queueing hints."""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

from harness.api.nodeaffinity import is_qualified_name
from harness.framework import Status, signers
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               Plugin, QueueingHint, hookimpl)

from .. import names
from ..helper import features_of
from . import filtering, scoring
from .common import (DO_NOT_SCHEDULE, LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, NODE_INCLUSION_POLICY_HONOR,
                     SCHEDULE_ANYWAY, TopologySpreadConstraint, default_selector,
                     filter_topology_spread_constraints, node_labels_match_spread_constraints,
                     pod_labels_match_spread_constraints)
from .filtering import ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

SYSTEM_DEFAULT_CONSTRAINTS: List[Dict[str, Any]] = [
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_TOPOLOGY_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
]

__all__ = ["PodTopologySpread", "ERR_REASON_CONSTRAINTS_NOT_MATCH", "ERR_REASON_NODE_LABEL_NOT_MATCH",
           "SYSTEM_DEFAULT_CONSTRAINTS"]


class PodTopologySpread(Plugin):
    """Spreads pods over topology domains: DoNotSchedule constraints filter (PreFilter/Filter,
    with AddPod/RemovePod), ScheduleAnyway constraints score (PreScore/Score/NormalizeScore).
    Pods without constraints get the default constraints (System: hostname maxSkew 3, zone
    maxSkew 5, ScheduleAnyway) with the selector of the Services/RCs/RSs/StatefulSets
    selecting them."""

    name = names.PodTopologySpread
    args_kind = "PodTopologySpreadArgs"

    # Feature gates, all on in v1.34 (NodeInclusionPolicyInPodTopologySpread is GA,
    # MatchLabelKeysInPodTopologySpread beta, SchedulerQueueingHints beta); tests flip them.
    enable_node_inclusion_policy = True
    enable_match_label_keys = True
    enable_scheduling_queue_hint = True

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        args = self.set_defaults(copy.deepcopy(args) if args else {})
        errs = self.validate_args(args)
        if errs:
            msgs = [f"{p}: {m}" for p, m in errs]
            raise ValueError(msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]")
        super().__init__(args, handle)
        # TaintTolerationComparisonOperators (v1.35 on, alpha): nodeTaintsPolicy Honor's matching
        self.enable_comparison_operators = features_of(handle).get("TaintTolerationComparisonOperators", False)
        self.hint_counts_nominated = features_of(handle).has("PodHintsCountNominatedPods")
        self.default_constraints: List[Dict[str, Any]] = list(args.get("defaultConstraints") or [])
        self.system_defaulted = False
        if args.get("defaultingType") == SYSTEM_DEFAULTING:
            self.default_constraints = SYSTEM_DEFAULT_CONSTRAINTS
            self.system_defaulted = True

    # ---- args ---------------------------------------------------------------------------------
    @classmethod
    def set_defaults(cls, args: Dict[str, Any]) -> Dict[str, Any]:
        """SetDefaults_PodTopologySpreadArgs: defaultingType System."""
        if not args.get("defaultingType"):
            args["defaultingType"] = SYSTEM_DEFAULTING
        return args

    @classmethod
    def validate_args(cls, args: Dict[str, Any]) -> List[Tuple[str, str]]:
        """ValidatePodTopologySpreadArgs."""
        return validate_pod_topology_spread_args(args)

    # ---- constraints --------------------------------------------------------------------------
    def filter_topology_spread_constraints(self, constraints, pod_labels, action):
        return filter_topology_spread_constraints(
            constraints, pod_labels, action, enable_match_label_keys=self.enable_match_label_keys,
            enable_node_inclusion_policy=self.enable_node_inclusion_policy,
            enable_comparison_operators=self.enable_comparison_operators)

    def build_default_constraints(self, pod, action: str) -> List[TopologySpreadConstraint]:
        """buildDefaultConstraints: the default constraints of `action` with the selector of the
        Services, ReplicationControllers, ReplicaSets and StatefulSets selecting the pod. The
        selector is looked up before the constraints are parsed (upstream parses them first):
        either being empty gives none, and default constraints cannot fail to parse (their
        args forbid a labelSelector), so the order shows nothing; most pods have no selector."""
        if not any((c.get("whenUnsatisfiable") or "") == action for c in self.default_constraints):
            return []
        selector = default_selector(pod, getattr(self.handle, "cluster", None))
        if selector.empty():
            return []
        constraints = self.filter_topology_spread_constraints(self.default_constraints, pod.labels, action)
        for c in constraints:
            c.selector = selector
        return constraints

    def get_constraints(self, pod) -> List[TopologySpreadConstraint]:
        """getConstraints: the pod's DoNotSchedule constraints, or the default ones."""
        tscs = pod.spec.get("topologySpreadConstraints")
        if tscs:
            try:
                return self.filter_topology_spread_constraints(tscs, pod.labels, DO_NOT_SCHEDULE)
            except Exception as e:
                raise RuntimeError(f"obtaining pod's hard topology spread constraints: {e}") from None
        try:
            return self.build_default_constraints(pod, DO_NOT_SCHEDULE)
        except Exception as e:
            raise RuntimeError(f"setting default hard topology spread constraints: {e}") from None

    # ---- extension points ---------------------------------------------------------------------
    @hookimpl
    def sign_pod(self, pod):
        """SignPod: spreading depends on where other pods are, so a pod with constraints of its
        own, or any pod when the plugin has default constraints (the System defaulting of the
        default profile included), cannot be signed."""
        if pod.spec.get("topologySpreadConstraints"):
            return None, Status.unschedulable("pods with topology constraints are not signable")
        if self.default_constraints:
            return None, Status.unschedulable("pods with default topology constraints are not signable")
        return None, None

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return filtering.pre_filter(self, state, pod, nodes)

    @hookimpl
    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info):
        return filtering.add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info)

    @hookimpl
    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info):
        return filtering.remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info)

    @hookimpl
    def filter(self, state, pod, node_info):
        return filtering.filter_node(state, pod, node_info)

    def filter_nodes(self, state, pod, nodes):
        """filter on each node (the batch form the framework calls)."""
        return filtering.filter_nodes(state, pod, nodes, self)

    @hookimpl
    def pre_score(self, state, pod, nodes):
        return scoring.pre_score(self, state, pod, nodes)

    @hookimpl
    def score(self, state, pod, node_info):
        return scoring.score(state, pod, node_info)

    @hookimpl
    def normalize_score(self, state, pod, scores):
        return scoring.normalize_score(state, pod, scores)

    def score_nodes(self, state, pod, nodes):
        """score on each node (the batch form the framework calls)."""
        return scoring.score_nodes(state, pod, nodes, self)

    def normalize_scores(self, state, pod, scores):
        """normalize_score on plain scores (the batch form the framework calls)."""
        return scoring.normalize_scores(state, pod, scores)

    # ---- queueing -----------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self):
        """EventsToRegister: assigned pods added / relabelled / deleted (and, with queueing hints,
        the pod's own toleration updates); nodes added / deleted / relabelled / retainted."""
        pod_action = ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete
        if self.enable_scheduling_queue_hint:
            pod_action = (ActionType.Add | ActionType.UpdatePodLabel | ActionType.UpdatePodToleration
                          | ActionType.Delete)
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, pod_action),
                                 self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.Node,
                                              ActionType.Add | ActionType.Delete
                                              | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint),
                                 self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_pod_change(self, pod, old_obj, new_obj) -> QueueingHint:
        """isSchedulableAfterPodChange."""
        original, modified = old_obj, new_obj
        nominated = self.hint_counts_nominated
        if ((modified is not None and not involved_in_topology_spreading(modified, pod, nominated))
                or (original is not None and not involved_in_topology_spreading(original, pod, nominated))):
            return QueueingHint.QueueSkip
        try:
            constraints = self.get_constraints(pod)
        except Exception:
            return QueueingHint.Queue

        if modified is not None and original is not None:
            if (pod.uid == modified.uid
                    and _semantic(modified.spec.get("tolerations"), []) != _semantic(original.spec.get("tolerations"), [])
                    and has_constraint_with_node_taints_policy_honor(constraints)):
                return QueueingHint.Queue
            if (modified.labels or {}) == (original.labels or {}):
                return QueueingHint.QueueSkip
            for c in constraints:
                if c.selector.matches(original.labels) != c.selector.matches(modified.labels):
                    return QueueingHint.Queue
            return QueueingHint.QueueSkip

        if modified is not None:
            if pod_labels_match_spread_constraints(constraints, modified.labels):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip

        if pod_labels_match_spread_constraints(constraints, original.labels):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod, old_obj, new_obj) -> QueueingHint:
        """isSchedulableAfterNodeChange: Queue when a node carrying every topology key appears,
        disappears, or changes a topology value or its taints."""
        original, modified = old_obj, new_obj
        try:
            constraints = self.get_constraints(pod)
        except Exception:
            return QueueingHint.Queue
        original_matching = modified_matching = False
        if original is not None:
            original_matching = node_labels_match_spread_constraints(original.labels, constraints)
        if modified is not None:
            modified_matching = node_labels_match_spread_constraints(modified.labels, constraints)

        if original is not None and modified is not None:
            if original_matching != modified_matching:
                return QueueingHint.Queue
            if modified_matching and (
                    check_topology_key_labels_changed(original.labels, modified.labels, constraints)
                    or _semantic(original.taints, []) != _semantic(modified.taints, [])):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip

        if modified is not None:
            return QueueingHint.Queue if modified_matching else QueueingHint.QueueSkip

        return QueueingHint.Queue if original_matching else QueueingHint.QueueSkip


def _semantic(v, empty):
    """equality.Semantic.DeepEqual treats nil and empty slices alike."""
    return v if v else empty


def involved_in_topology_spreading(incoming_pod, pod_with_spreading, count_nominated: bool = False) -> bool:
    """involvedInTopologySpreading: the pod itself, or an assigned pod (v1.36: or one with a
    nominated node) of the same namespace."""
    if incoming_pod.uid == pod_with_spreading.uid:
        return True
    if not incoming_pod.node_name and not (count_nominated and incoming_pod.nominated_node_name):
        return False
    return incoming_pod.namespace == pod_with_spreading.namespace


def has_constraint_with_node_taints_policy_honor(constraints: Sequence[TopologySpreadConstraint]) -> bool:
    for c in constraints:
        if c.node_taints_policy == NODE_INCLUSION_POLICY_HONOR:
            return True
    return False


def check_topology_key_labels_changed(original_labels, modified_labels,
                                      constraints: Sequence[TopologySpreadConstraint]) -> bool:
    """checkTopologyKeyLabelsChanged."""
    for c in constraints:
        if original_labels.get(c.topology_key, "") != modified_labels.get(c.topology_key, ""):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# ValidatePodTopologySpreadArgs (apis/config/validation/validation_pluginargs.go)
# ---------------------------------------------------------------------------------------------
def _quote(v: Any) -> str:
    """Go's %q / json.Marshal of a string value."""
    return json.dumps("" if v is None else str(v))


def validate_pod_topology_spread_args(args: Dict[str, Any]) -> List[Tuple[str, str]]:
    """ValidatePodTopologySpreadArgs: (field path, message) pairs, in upstream's order and words."""
    errs: List[Tuple[str, str]] = []
    dtype = args.get("defaultingType") or ""
    constraints = list(args.get("defaultConstraints") or [])
    if dtype not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errs.append(("defaultingType", f'Unsupported value: {_quote(dtype)}: supported values: '
                                       f'"{SYSTEM_DEFAULTING}", "{LIST_DEFAULTING}"'))
    elif dtype == SYSTEM_DEFAULTING and constraints:
        errs.append(("defaultingType", f"Invalid value: {_quote(dtype)}: when .defaultConstraints are not empty"))

    for i, c in enumerate(constraints):
        p = f"defaultConstraints[{i}]"
        max_skew = int(c.get("maxSkew") or 0)
        if max_skew <= 0:
            errs.append((p + ".maxSkew", f"Invalid value: {max_skew}: not in valid range (0, inf)"))
        key = c.get("topologyKey") or ""
        if not key:
            errs.append((p + ".topologyKey", "Required value: can not be empty"))
        else:
            for msg in is_qualified_name(key):
                errs.append((p + ".topologyKey", f"Invalid value: {_quote(key)}: {msg}"))
        when = c.get("whenUnsatisfiable") or ""
        if not when:
            errs.append((p + ".whenUnsatisfiable", "Required value: can not be empty"))
        elif when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            errs.append((p + ".whenUnsatisfiable", f'Unsupported value: {_quote(when)}: supported values: '
                                                   f'"{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"'))
        if c.get("labelSelector") is not None:
            errs.append((p + ".labelSelector",
                         "Forbidden: constraint must not define a selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if (key == (other.get("topologyKey") or "")
                    and when == (other.get("whenUnsatisfiable") or "")):
                errs.append((p, f'Duplicate value: "{{{key}, {when}}}"'))
                break
    return errs
