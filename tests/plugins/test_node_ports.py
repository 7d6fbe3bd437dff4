"""nodeports/node_ports_test.go: TestNodePorts, TestPreFilterDisabled, TestGetContainerPorts,
Test_isSchedulableAfterPodDeleted."""

from __future__ import annotations

import pytest

from builtin_plugins.node_ports import ERR_REASON, NodePorts, fits
from harness.api.objects import Pod
from harness.framework import ActionType, Code, EventResource, NodeInfo, QueueingHint, Status
from harness.testing import make_node, new_state


def new_pod(*host_port_infos, node_name="", uid="u-new", name="p", sidecar=None):
    """host_port_infos like "UDP/127.0.0.1/8080"."""
    ports = []
    for s in host_port_infos:
        proto, ip, port = s.split("/")
        ports.append({"hostPort": int(port), "protocol": proto, "hostIP": ip, "containerPort": int(port)})
    spec = {"containers": [{"name": "c", "image": "pause", "ports": ports}]}
    if sidecar is not None:
        spec["initContainers"] = sidecar
    if node_name:
        spec["nodeName"] = node_name
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": uid},
                "spec": spec})


def node_info(*pods):
    ni = NodeInfo(*pods)
    ni.set_node(make_node("node-a"))
    return ni


CASES = [
    ("nothing running", new_pod(), node_info(), None),
    ("other port", new_pod("UDP/127.0.0.1/8080"), node_info(new_pod("UDP/127.0.0.1/9090", uid="e")), None),
    ("same udp port", new_pod("UDP/127.0.0.1/8080"), node_info(new_pod("UDP/127.0.0.1/8080", uid="e")), ERR_REASON),
    ("same tcp port", new_pod("TCP/127.0.0.1/8080"), node_info(new_pod("TCP/127.0.0.1/8080", uid="e")), ERR_REASON),
    ("different host ip", new_pod("TCP/127.0.0.1/8080"), node_info(new_pod("TCP/127.0.0.2/8080", uid="e")), None),
    ("different protocol", new_pod("UDP/127.0.0.1/8080"), node_info(new_pod("TCP/127.0.0.1/8080", uid="e")), None),
    ("second udp port conflict", new_pod("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
     node_info(new_pod("UDP/127.0.0.1/8080", uid="e")), ERR_REASON),
    ("first tcp port conflict", new_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
     node_info(new_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081", uid="e")), ERR_REASON),
    ("first tcp port conflict due to 0.0.0.0 hostIP", new_pod("TCP/0.0.0.0/8001"),
     node_info(new_pod("TCP/127.0.0.1/8001", uid="e")), ERR_REASON),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", new_pod("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
     node_info(new_pod("TCP/127.0.0.1/8001", uid="e")), ERR_REASON),
    ("second tcp port conflict to 0.0.0.0 hostIP", new_pod("TCP/127.0.0.1/8001"),
     node_info(new_pod("TCP/0.0.0.0/8001", uid="e")), ERR_REASON),
    ("second different protocol", new_pod("UDP/127.0.0.1/8001"),
     node_info(new_pod("TCP/0.0.0.0/8001", uid="e")), None),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", new_pod("UDP/127.0.0.1/8001"),
     node_info(new_pod("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001", uid="e")), ERR_REASON),
    ("empty hostIP and protocol default to 0.0.0.0/TCP",
     Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q", "namespace": "default", "uid": "q"},
          "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8001}]}]}}),
     node_info(new_pod("TCP/127.0.0.1/8001", uid="e")), ERR_REASON),
    ("sidecar ports count", new_pod(sidecar=[{"name": "s", "restartPolicy": "Always",
                                             "ports": [{"hostPort": 8001, "containerPort": 1}]}]),
     node_info(new_pod("TCP/0.0.0.0/8001", uid="e")), ERR_REASON),
    ("plain init container ports do not count", new_pod(sidecar=[{"name": "s",
                                                                  "ports": [{"hostPort": 8001, "containerPort": 1}]}]),
     node_info(new_pod("TCP/0.0.0.0/8001", uid="e")), None),
]


@pytest.mark.parametrize("name,pod,ni,want", CASES, ids=[c[0] for c in CASES])
def test_node_ports(name, pod, ni, want):
    pl = NodePorts(None, None)
    state = new_state()
    _, st = pl.pre_filter(state, pod, [ni])
    if st is not None and st.code == Code.Skip:
        assert want is None
        return
    got = pl.filter(state, pod, ni)
    if want is None:
        assert got is None
    else:
        assert got == Status.unschedulable(want)
    assert fits(pod, ni) is (want is None)


def test_pre_filter_skips_pod_without_host_ports():
    _, st = NodePorts(None, None).pre_filter(new_state(), new_pod(), [])
    assert st.code == Code.Skip


def test_pre_filter_disabled():
    pl = NodePorts(None, None)
    st = pl.filter(new_state(), new_pod("TCP/0.0.0.0/80"), node_info())
    assert st.code == Code.Error
    assert st.message() == 'reading "PreFilterNodePorts" from cycleState: not found'


def test_events_to_register():
    evs = NodePorts(None, None).events_to_register()
    assert [(e.event.resource, e.event.action_type, e.queueing_hint_fn is not None) for e in evs] == [
        (EventResource.Pod, ActionType.Delete, True), (EventResource.Node, ActionType.Add, False)]


@pytest.mark.parametrize("name,pod,deleted,want", [
    ("skip-queue-on-unscheduled", new_pod("TCP/0.0.0.0/8080"), new_pod("TCP/0.0.0.0/8080", uid="d"),
     QueueingHint.QueueSkip),
    ("skip-queue-on-non-hostport", new_pod("TCP/0.0.0.0/8080"), new_pod(node_name="node-a", uid="d"),
     QueueingHint.QueueSkip),
    ("skip-queue-on-unrelated-hostport", new_pod("TCP/0.0.0.0/8080"),
     new_pod("TCP/0.0.0.0/8081", node_name="node-a", uid="d"), QueueingHint.QueueSkip),
    ("queue-on-released-hostport", new_pod("TCP/0.0.0.0/8080"),
     new_pod("TCP/0.0.0.0/8080", node_name="node-a", uid="d"), QueueingHint.Queue),
])
def test_is_schedulable_after_pod_deleted(name, pod, deleted, want):
    assert NodePorts(None, None).is_schedulable_after_pod_deleted(pod, deleted, None) == want
