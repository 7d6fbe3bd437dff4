"""TaintToleration (framework/plugins/tainttoleration/taint_toleration.go).

Since v1.34.9 (every version modelled) the Filter reason no longer names the taint (it is only
logged): "node(s) had untolerated taint(s)". From v1.35, with TaintTolerationComparisonOperators
on, tolerations with the Lt/Gt operators compare values (harness.api.taints)."""

from __future__ import annotations

from harness.api.taints import (TAINT_EFFECT_PREFER_NO_SCHEDULE, do_not_schedule_taints_filter,
                                find_matching_untolerated_taint, tolerations_tolerate_taint)
from harness.framework import signers
from harness.framework import (MAX_NODE_SCORE, ActionType, ClusterEvent, ClusterEventWithHint,
                               EventResource, Plugin, QueueingHint, Status, hookimpl)

from harness.framework.node_table import NodeRows, numpy

from . import names
from .helper import default_normalize_ints, default_normalize_score, features_of

PRE_SCORE_STATE_KEY = "PreScore" + names.TaintToleration
ERR_REASON_NOT_MATCH = "node(s) had taints that the pod didn't tolerate"
# Filter's reason since v1.34.9 (v1.34.1 printed "{key: value}" of the first untolerated taint)
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"


def get_all_toleration_prefer_no_schedule(tolerations):
    """Tolerations with effect PreferNoSchedule or no effect (which means all effects)."""
    return [t for t in tolerations or [] if not t.get("effect") or t.get("effect") == TAINT_EFFECT_PREFER_NO_SCHEDULE]


def count_intolerable_taints_prefer_no_schedule(taints, tolerations, enable_comparison_operators=False) -> int:
    """countIntolerableTaintsPreferNoSchedule."""
    n = 0
    for taint in taints or []:
        if taint.get("effect") != TAINT_EFFECT_PREFER_NO_SCHEDULE:
            continue
        if not tolerations_tolerate_taint(tolerations, taint, enable_comparison_operators):
            n += 1
    return n


class _PreScoreState:
    __slots__ = ("tolerations_prefer_no_schedule",)

    def __init__(self, tolerations):
        self.tolerations_prefer_no_schedule = tolerations

    def clone(self):
        return self


class TaintToleration(Plugin):
    name = names.TaintToleration

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        fts = features_of(handle)
        # TaintTolerationComparisonOperators: known from v1.35 (alpha, off)
        self.enable_comparison_operators = fts.get("TaintTolerationComparisonOperators", False)

    @hookimpl
    def sign_pod(self, pod):
        """SignPod: feasibility and scoring depend on the pod's tolerations."""
        return [(signers.TOLERATIONS_SIGNER_NAME, signers.tolerations_signer(pod))], None

    @hookimpl
    def events_to_register(self):
        # SchedulerQueueingHints is on in v1.34.
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
                                 self.is_schedulable_after_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
                                 self.is_schedulable_after_pod_toleration_change),
        ]

    def is_schedulable_after_node_change(self, pod, old_obj, new_obj):
        was_untolerated = True
        if old_obj is not None:
            was_untolerated = find_matching_untolerated_taint(
                old_obj.taints, pod.tolerations, do_not_schedule_taints_filter,
                self.enable_comparison_operators) is not None
        is_untolerated = find_matching_untolerated_taint(
            new_obj.taints, pod.tolerations, do_not_schedule_taints_filter,
            self.enable_comparison_operators) is not None
        if was_untolerated and not is_untolerated:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_toleration_change(self, pod, old_obj, new_obj):
        if new_obj is not None and pod.uid == new_obj.uid:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @hookimpl
    def filter(self, state, pod, node_info):
        taints = node_info.node.taints
        if not taints:
            # Fast path: nothing to tolerate.
            return None
        taint = find_matching_untolerated_taint(taints, pod.tolerations, do_not_schedule_taints_filter,
                                                self.enable_comparison_operators)
        if taint is None:
            return None
        return Status.unresolvable(ERR_REASON_UNTOLERATED)

    def filter_nodes(self, state, pod, nodes):
        """filter on each node (the batch form the framework calls)."""
        flt = self.filter
        if nodes.__class__ is NodeRows:
            out = [None] * len(nodes)
            for k in nodes.flagged("tainted"):
                out[k] = flt(state, pod, nodes[k])
            return out
        return [None if not ni.node.taints else flt(state, pod, ni) for ni in nodes]

    @hookimpl
    def pre_score(self, state, pod, nodes):
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(get_all_toleration_prefer_no_schedule(pod.tolerations)))
        return None

    @hookimpl
    def score(self, state, pod, node_info):
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return 0, Status.error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        taints = node_info.node.taints
        if not taints:
            # Fast path: no taint to count.
            return 0, None
        return count_intolerable_taints_prefer_no_schedule(taints, s.tolerations_prefer_no_schedule,
                                                           self.enable_comparison_operators), None

    def score_nodes(self, state, pod, nodes):
        """score on each node (the batch form the framework calls)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return None
        tol = s.tolerations_prefer_no_schedule
        cmp_ops = self.enable_comparison_operators
        if nodes.__class__ is NodeRows:
            np = numpy()
            out = np.zeros(len(nodes), dtype=np.int64)
            for k in nodes.flagged("tainted"):
                out[k] = count_intolerable_taints_prefer_no_schedule(nodes[k].node.taints, tol, cmp_ops)
            return out
        return [0 if not ni.node.taints else count_intolerable_taints_prefer_no_schedule(ni.node.taints, tol, cmp_ops)
                for ni in nodes]

    @hookimpl
    def normalize_score(self, state, pod, scores):
        return default_normalize_score(MAX_NODE_SCORE, True, scores)

    def normalize_scores(self, state, pod, scores):
        """normalize_score on plain scores (the batch form the framework calls)."""
        return default_normalize_ints(MAX_NODE_SCORE, True, scores)


PLUGINS = [TaintToleration]
