"""NodeName (framework/plugins/nodename/node_name.go)."""

from __future__ import annotations

from harness.framework import signers
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               Plugin, Status, hookimpl)

from . import names

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod, node_info) -> bool:
    """nodename.Fits."""
    return not pod.node_name or pod.node_name == node_info.node.name


class NodeName(Plugin):
    name = names.NodeName

    @hookimpl
    def sign_pod(self, pod):
        """SignPod: feasibility depends on spec.nodeName."""
        return [(signers.NODE_NAME_SIGNER_NAME, pod.node_name)], None

    @hookimpl
    def events_to_register(self):
        # SchedulerQueueingHints is on in v1.34: only Node/Add.
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add))]

    @hookimpl
    def filter(self, state, pod, node_info):
        if not fits(pod, node_info):
            return Status.unresolvable(ERR_REASON)
        return None

    def filter_nodes(self, state, pod, nodes):
        """filter on each node (the batch form the framework calls)."""
        if not pod.node_name:
            return [None] * len(nodes)
        flt = self.filter
        return [flt(state, pod, ni) for ni in nodes]


PLUGINS = [NodeName]
