"""NodePorts (framework/plugins/nodeports/node_ports.go)."""

from __future__ import annotations

from harness.framework import signers
from harness.framework.status import SKIP
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               HostPortInfo, NotFoundError, Plugin, QueueingHint, Status, hookimpl)
from harness.framework.types import get_host_ports

from . import names

PRE_FILTER_STATE_KEY = "PreFilter" + names.NodePorts
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


def _port_args(p):
    return (p.get("hostIP") or "", p.get("protocol") or "", int(p.get("hostPort") or 0))


def fits_ports(want_ports, used_ports) -> bool:
    """fitsPorts: no wanted host port conflicts with the node's used ports."""
    for cp in want_ports:
        if used_ports.check_conflict(*_port_args(cp)):
            return False
    return True


def fits(pod, node_info) -> bool:
    """nodeports.Fits."""
    return fits_ports(get_host_ports(pod), node_info.used_ports)


class _PreFilterState(list):
    """The pod's host ports; not affected by adding or removing other pods."""

    def clone(self):
        return self


class NodePorts(Plugin):
    name = names.NodePorts

    @hookimpl
    def sign_pod(self, pod):
        """SignPod: feasibility depends on the containers' host ports."""
        return [(signers.HOST_PORTS_SIGNER_NAME, signers.host_ports_signer(pod))], None

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        ports = get_host_ports(pod)
        if not ports:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(ports))
        return None, None

    @hookimpl
    def events_to_register(self):
        # SchedulerQueueingHints is on in v1.34: Node/Add only (no hint), Pod/Delete with a hint.
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete),
                                 self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
        ]

    def is_schedulable_after_pod_deleted(self, pod, old_obj, new_obj):
        deleted = old_obj
        if deleted is None:
            return QueueingHint.Queue
        if not deleted.node_name and not deleted.nominated_node_name:
            # An unscheduled pod's deletion frees no port.
            return QueueingHint.QueueSkip
        ports = get_host_ports(deleted)
        if not ports:
            return QueueingHint.QueueSkip
        used = HostPortInfo()
        for p in ports:
            used.add(*_port_args(p))
        if fits_ports(get_host_ports(pod), used):
            # No common port: deleting that pod cannot help.
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    @hookimpl
    def filter(self, state, pod, node_info):
        try:
            want = state.read(PRE_FILTER_STATE_KEY)
        except NotFoundError:
            return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if not fits_ports(want, node_info.used_ports):
            return Status.unschedulable(ERR_REASON)
        return None


PLUGINS = [NodePorts]
