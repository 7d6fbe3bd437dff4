"""NodeUnschedulable (framework/plugins/nodeunschedulable/node_unschedulable.go)."""

from __future__ import annotations

from harness.api.taints import (TAINT_EFFECT_NO_SCHEDULE, TAINT_NODE_UNSCHEDULABLE,
                                tolerations_tolerate_taint)
from harness.framework import signers
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               Plugin, QueueingHint, Status, hookimpl)

from harness.framework.node_table import NodeRows

from . import names
from .helper import features_of

ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"

_UNSCHEDULABLE_TAINT = {"key": TAINT_NODE_UNSCHEDULABLE, "effect": TAINT_EFFECT_NO_SCHEDULE}


def tolerates_unschedulable(pod, enable_comparison_operators: bool = False) -> bool:
    """Does the pod tolerate {node.kubernetes.io/unschedulable, NoSchedule}? (Lt/Gt compare
    values only with TaintTolerationComparisonOperators on.)"""
    if enable_comparison_operators:
        return pod.memo("tolerates_unschedulable_cmp",
                        lambda p: tolerations_tolerate_taint(p.tolerations, _UNSCHEDULABLE_TAINT, True))
    return pod.memo("tolerates_unschedulable",
                    lambda p: tolerations_tolerate_taint(p.tolerations, _UNSCHEDULABLE_TAINT))


class NodeUnschedulable(Plugin):
    name = names.NodeUnschedulable

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        # TaintTolerationComparisonOperators (v1.35 on, alpha): read from the global gate upstream
        self.enable_comparison_operators = features_of(handle).get("TaintTolerationComparisonOperators", False)

    @hookimpl
    def sign_pod(self, pod):
        """SignPod: feasibility depends on the pod's tolerations."""
        return [(signers.TOLERATIONS_SIGNER_NAME, signers.tolerations_signer(pod))], None

    @hookimpl
    def events_to_register(self):
        # SchedulerQueueingHints is on in v1.34: no UpdateNodeLabel, plus Pod/UpdatePodToleration.
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
                                 self.is_schedulable_after_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.UpdatePodToleration),
                                 self.is_schedulable_after_pod_toleration_change),
        ]

    def is_schedulable_after_pod_toleration_change(self, pod, old_obj, new_obj):
        if new_obj is not None and pod.uid == new_obj.uid:
            if tolerations_tolerate_taint(new_obj.tolerations, _UNSCHEDULABLE_TAINT,
                                          self.enable_comparison_operators):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod, old_obj, new_obj):
        # Queue when the node became schedulable, or was added schedulable.
        if (old_obj is not None and old_obj.unschedulable and not new_obj.unschedulable) or \
                (old_obj is None and not new_obj.unschedulable):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    @hookimpl
    def filter(self, state, pod, node_info):
        node = node_info.node
        if not node.unschedulable:
            return None
        # A pod tolerating the unschedulable taint also tolerates spec.unschedulable.
        if not tolerates_unschedulable(pod, self.enable_comparison_operators):
            return Status.unresolvable(ERR_REASON_UNSCHEDULABLE)
        return None

    def filter_nodes(self, state, pod, nodes):
        """filter on each node (the batch form the framework calls)."""
        flt = self.filter
        if nodes.__class__ is NodeRows:
            out = [None] * len(nodes)
            for k in nodes.flagged("unschedulable"):
                out[k] = flt(state, pod, nodes[k])
            return out
        return [None if not ni.node.unschedulable else flt(state, pod, ni) for ni in nodes]


PLUGINS = [NodeUnschedulable]
