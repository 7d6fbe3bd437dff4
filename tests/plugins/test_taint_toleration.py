"""tainttoleration/taint_toleration_test.go (v1.34): TestTaintTolerationScore,
TestTaintTolerationFilter, TestIsSchedulableAfterNodeChange, Test_isSchedulableAfterPodChange."""

from __future__ import annotations

import pytest

from builtin_plugins.taint_toleration import TaintToleration
from harness.api.objects import Node, Pod
from harness.framework import ActionType, Code, EventResource, NodeInfo, NodeScore, QueueingHint, Status
from harness.testing import FakeHandle, new_state


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
     "node(s) had untolerated taint {dedicated: user1}"),
    ("toleration matches (empty operator)", pod([{"key": "dedicated", "value": "user1", "effect": NS}]),
     node("nodeA", [t("dedicated", "user1", NS)]), None),
    ("toleration value differs", pod([tol("dedicated", "Equal", "user2", NS)]),
     node("nodeA", [t("dedicated", "user1", NS)]), "node(s) had untolerated taint {dedicated: user1}"),
    ("Exists tolerates", pod([{"key": "foo", "operator": "Exists", "effect": NS}]),
     node("nodeA", [t("foo", "bar", NS)]), None),
    ("all taints tolerated", pod([tol("dedicated", "Equal", "user2", NS), {"key": "foo", "operator": "Exists",
                                                                          "effect": NS}]),
     node("nodeA", [t("dedicated", "user2", NS), t("foo", "bar", NS)]), None),
    ("effect differs", pod([tol("foo", "Equal", "bar", PNS)]), node("nodeA", [t("foo", "bar", NS)]),
     "node(s) had untolerated taint {foo: bar}"),
    ("toleration with empty effect", pod([tol("foo", "Equal", "bar")]), node("nodeA", [t("foo", "bar", NS)]), None),
    ("PreferNoSchedule taint does not filter", pod([tol("dedicated", "Equal", "user2", NS)]),
     node("nodeA", [t("dedicated", "user1", PNS)]), None),
    ("no toleration, PreferNoSchedule taint", pod([]), node("nodeA", [t("dedicated", "user1", PNS)]), None),
    ("NoExecute taint filters", pod([]), node("nodeA", [t("k", "", "NoExecute")]),
     "node(s) had untolerated taint {k: }"),
    ("first untolerated taint is reported", pod([tol("a", "Exists", "")]),
     node("nodeA", [t("a", "1", NS), t("b", "2", NS), t("c", "3", NS)]), "node(s) had untolerated taint {b: 2}"),
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
