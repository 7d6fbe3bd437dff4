"""tainttoleration/taint_toleration_test.go (v1.34.9, v1.35): TestTaintTolerationScore,
TestTaintTolerationFilter, TestIsSchedulableAfterNodeChange, Test_isSchedulableAfterPodChange."""

from __future__ import annotations

import pytest

from builtin_plugins.taint_toleration import TaintToleration
from harness.api.objects import Node, Pod
from harness.framework import ActionType, Code, EventResource, NodeInfo, NodeScore, QueueingHint, Status
from harness.testing import FakeHandle, new_state
from harness.versions import resolve


def node(name, taints):
    return Node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}},
                 "spec": {"taints": list(taints)}})


def pod(tolerations, uid="uid0", name="pod1"):
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": uid},
                "spec": {"tolerations": list(tolerations)}})


def t(key, value, effect):
    return {"key": key, "value": value, "effect": effect}


def tol(key, op, value, effect=""):
    d = {"key": key, "operator": op, "value": value}
    if effect:
        d["effect"] = effect
    return d


PNS = "PreferNoSchedule"
NS = "NoSchedule"

SCORE_CASES = [
    ("tolerated node gets a higher score", pod([tol("foo", "Equal", "bar", PNS)]),
     [node("nodeA", [t("foo", "bar", PNS)]), node("nodeB", [t("foo", "blah", PNS)])], [100, 0]),
    ("count of tolerated taints does not matter",
     pod([tol("cpu-type", "Equal", "arm64", PNS), tol("disk-type", "Equal", "ssd", PNS)]),
     [node("nodeA", []), node("nodeB", [t("cpu-type", "arm64", PNS)]),
      node("nodeC", [t("cpu-type", "arm64", PNS), t("disk-type", "ssd", PNS)])], [100, 100, 100]),
    ("the more intolerable taints, the lower the score", pod([tol("foo", "Equal", "bar", PNS)]),
     [node("nodeA", []), node("nodeB", [t("cpu-type", "arm64", PNS)]),
      node("nodeC", [t("cpu-type", "arm64", PNS), t("disk-type", "ssd", PNS)])], [100, 50, 0]),
    ("only PreferNoSchedule taints and tolerations count",
     pod([tol("cpu-type", "Equal", "arm64", NS), tol("disk-type", "Equal", "ssd", NS)]),
     [node("nodeA", []), node("nodeB", [t("cpu-type", "arm64", NS)]),
      node("nodeC", [t("cpu-type", "arm64", PNS), t("disk-type", "ssd", PNS)])], [100, 100, 0]),
    ("no taints and tolerations", pod([]),
     [node("nodeA", []), node("nodeB", [t("cpu-type", "arm64", PNS)])], [100, 0]),
    ("toleration without effect covers PreferNoSchedule", pod([tol("foo", "Exists", "")]),
     [node("nodeA", [t("foo", "x", PNS)]), node("nodeB", [t("bar", "x", PNS)])], [100, 0]),
]


@pytest.mark.parametrize("name,p,nodes,want", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_taint_toleration_score(name, p, nodes, want):
    h = FakeHandle(nodes)
    pl = TaintToleration(None, h)
    state = new_state()
    assert pl.pre_score(state, p, h.snapshot.list()) is None
    scores = []
    for n in nodes:
        s, st = pl.score(state, p, h.snapshot.get(n.name))
        assert st is None
        scores.append(NodeScore(n.name, s))
    pl.normalize_score(state, p, scores)
    assert [s.score for s in scores] == want


def test_score_without_pre_score_is_an_error():
    pl = TaintToleration(None, None)
    ni = NodeInfo()
    ni.set_node(node("n", []))
    _, st = pl.score(new_state(), pod([]), ni)
    assert st.code == Code.Error


FILTER_CASES = [
    ("no tolerations, tainted node", pod([]), node("nodeA", [t("dedicated", "user1", NS)]),
     "node(s) had untolerated taint(s)"),
    ("toleration matches (empty operator)", pod([{"key": "dedicated", "value": "user1", "effect": NS}]),
     node("nodeA", [t("dedicated", "user1", NS)]), None),
    ("toleration value differs", pod([tol("dedicated", "Equal", "user2", NS)]),
     node("nodeA", [t("dedicated", "user1", NS)]), "node(s) had untolerated taint(s)"),
    ("Exists tolerates", pod([{"key": "foo", "operator": "Exists", "effect": NS}]),
     node("nodeA", [t("foo", "bar", NS)]), None),
    ("all taints tolerated", pod([tol("dedicated", "Equal", "user2", NS), {"key": "foo", "operator": "Exists",
                                                                          "effect": NS}]),
     node("nodeA", [t("dedicated", "user2", NS), t("foo", "bar", NS)]), None),
    ("effect differs", pod([tol("foo", "Equal", "bar", PNS)]), node("nodeA", [t("foo", "bar", NS)]),
     "node(s) had untolerated taint(s)"),
    ("toleration with empty effect", pod([tol("foo", "Equal", "bar")]), node("nodeA", [t("foo", "bar", NS)]), None),
    ("PreferNoSchedule taint does not filter", pod([tol("dedicated", "Equal", "user2", NS)]),
     node("nodeA", [t("dedicated", "user1", PNS)]), None),
    ("no toleration, PreferNoSchedule taint", pod([]), node("nodeA", [t("dedicated", "user1", PNS)]), None),
    ("NoExecute taint filters", pod([]), node("nodeA", [t("k", "", "NoExecute")]),
     "node(s) had untolerated taint(s)"),
    ("first untolerated taint is reported", pod([tol("a", "Exists", "")]),
     node("nodeA", [t("a", "1", NS), t("b", "2", NS), t("c", "3", NS)]), "node(s) had untolerated taint(s)"),
]


@pytest.mark.parametrize("name,p,n,want", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_taint_toleration_filter(name, p, n, want):
    ni = NodeInfo()
    ni.set_node(n)
    got = TaintToleration(None, None).filter(None, p, ni)
    if want is None:
        assert got is None
    else:
        assert got == Status.unresolvable(want)


HINT_CASES = [
    ("skip-queue-on-untoleratedtaint-node-added", pod([tol("dedicated", "Equal", "user2", NS)]), None,
     node("nodeA", [t("dedicated", "user1", NS)]), QueueingHint.QueueSkip),
    ("queue-on-toleratedtaint-node-added", pod([tol("dedicated", "Equal", "user2", NS)]), None,
     node("nodeA", [t("dedicated", "user2", NS)]), QueueingHint.Queue),
    ("skip-unrelated-change", pod([tol("dedicated", "Equal", "user2", NS)]),
     node("nodeA", [t("dedicated", "user1", NS)]),
     node("nodeA", [t("dedicated", "user1", NS), t("dedicated", "user3", NS)]), QueueingHint.QueueSkip),
    ("queue-on-taint-change", pod([tol("dedicated", "Equal", "user2", NS)]),
     node("nodeA", [t("dedicated", "user1", NS)]), node("nodeA", [t("dedicated", "user2", NS)]),
     QueueingHint.Queue),
]


@pytest.mark.parametrize("name,p,old,new,want", HINT_CASES, ids=[c[0] for c in HINT_CASES])
def test_is_schedulable_after_node_change(name, p, old, new, want):
    assert TaintToleration(None, None).is_schedulable_after_node_change(p, old, new) == want


def test_is_schedulable_after_pod_change():
    pl = TaintToleration(None, None)
    target = pod([], uid="uid0", name="pod-1")
    other_old, other_new = pod([], uid="uid1", name="pod-2"), pod([tol("k", "Exists", "")], uid="uid1", name="pod-2")
    assert pl.is_schedulable_after_pod_toleration_change(target, other_old, other_new) == QueueingHint.QueueSkip
    same_new = pod([tol("k", "Exists", "")], uid="uid0", name="pod-1")
    assert pl.is_schedulable_after_pod_toleration_change(target, target, same_new) == QueueingHint.Queue


def test_events_to_register():
    evs = TaintToleration(None, None).events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in evs] == [
        (EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
        (EventResource.Pod, ActionType.UpdatePodToleration)]


# taint_toleration_test.go (v1.35): TestTaintTolerationScore / TestTaintTolerationFilter /
# TestTaintTolerationFilterWithFeatureGate, the comparison operators with
# TaintTolerationComparisonOperators on (v1.35+, alpha) and off
def with_gate(enabled, nodes=()):
    h = FakeHandle(nodes)
    h.feature_gates = resolve("v1.35", {"TaintTolerationComparisonOperators": enabled})
    return h


SLA = "node.kubernetes.io/sla"
PRIO = "node.example.com/priority-level"

CMP_FILTER_CASES = [
    ("Gt, taint value lower than threshold", [tol(PRIO, "Gt", "950", NS)], [t(PRIO, "800", NS)], True, False),
    ("Gt, taint value higher than threshold", [tol(SLA, "Gt", "750", NS)], [t(SLA, "950", NS)], True, True),
    ("Lt, taint value higher than threshold", [tol(PRIO, "Lt", "800", NS)], [t(PRIO, "950", NS)], True, False),
    ("Lt, taint value lower than threshold", [tol(SLA, "Lt", "950", NS)], [t(SLA, "800", NS)], True, True),
    ("Gt, non-numeric taint value", [tol(SLA, "Gt", "950", NS)], [t(SLA, "high", NS)], True, False),
    ("Gt, gate off", [tol(SLA, "Gt", "750", NS)], [t(SLA, "950", NS)], False, False),
    ("Lt, gate off", [tol(SLA, "Lt", "950", NS)], [t(SLA, "800", NS)], False, False),
    ("Equal and Gt, gate off, only Equal needed", [tol("dedicated", "Equal", "user1", NS), tol(SLA, "Gt", "750", NS)],
     [t("dedicated", "user1", NS)], False, True),
    ("Equal and Gt, gate off, Gt needed", [tol("dedicated", "Equal", "user1", NS), tol(SLA, "Gt", "750", NS)],
     [t("dedicated", "user1", NS), t(SLA, "950", NS)], False, False),
]


@pytest.mark.parametrize("name,tols,taints,enabled,fits", CMP_FILTER_CASES, ids=[c[0] for c in CMP_FILTER_CASES])
def test_filter_comparison_operators(name, tols, taints, enabled, fits):
    ni = NodeInfo()
    ni.set_node(node("nodeA", taints))
    got = TaintToleration(None, with_gate(enabled)).filter(None, pod(tols), ni)
    assert got == (None if fits else Status.unresolvable("node(s) had untolerated taint(s)"))


@pytest.mark.parametrize("op,tol_value,values,enabled,want", [
    ("Gt", "950", ["800", "999"], True, [0, 100]),
    ("Lt", "800", ["950", "700"], True, [0, 100]),
    ("Gt", "950", ["800", "999"], False, [0, 0]),  # gate off: one intolerable taint on each node
])
def test_score_comparison_operators(op, tol_value, values, enabled, want):
    nodes = [node(f"node{i}", [t(SLA, v, PNS)]) for i, v in enumerate(values)]
    h = with_gate(enabled, nodes)
    pl = TaintToleration(None, h)
    p = pod([tol(SLA, op, tol_value, PNS)])
    state = new_state()
    assert pl.pre_score(state, p, h.snapshot.list()) is None
    scores = [NodeScore(n.name, pl.score(state, p, h.snapshot.get(n.name))[0]) for n in nodes]
    pl.normalize_score(state, p, scores)
    assert [s.score for s in scores] == want


def test_node_change_hint_uses_comparison_operators():
    p = pod([tol(SLA, "Gt", "750", NS)])
    old, new = node("nodeA", [t(SLA, "500", NS)]), node("nodeA", [t(SLA, "950", NS)])
    assert TaintToleration(None, with_gate(True)).is_schedulable_after_node_change(p, old, new) == QueueingHint.Queue
    assert TaintToleration(None, with_gate(False)).is_schedulable_after_node_change(p, old, new) == \
        QueueingHint.QueueSkip
