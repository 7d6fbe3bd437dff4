"""nodeaffinity/node_affinity_test.go: TestNodeAffinity, TestNodeAffinityPriority,
Test_isSchedulableAfterNodeChange, plus NodeAffinityArgs validation."""

from __future__ import annotations

import pytest

from builtin_plugins.node_affinity import (ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD,
                                           NodeAffinity)
from harness.api.objects import Node, Pod
from harness.framework import Code, NodeInfo, NodeScore, QueueingHint, Status
from harness.testing import FakeHandle, new_state


def node(name="", labels=None):
    return Node({"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": name, "labels": dict(labels or {})}})


def pod(spec=None):
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
                "spec": dict(spec or {})})


def expr(key, op, *values):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def required(*terms):
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                          {"nodeSelectorTerms": list(terms)}}}}


def added_required(*terms):
    return {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


UNRES = Code.UnschedulableAndUnresolvable
F = lambda *v: {"matchFields": [expr("metadata.name", "In", *v)]}  # noqa: E731

# (name, pod spec, node labels, node name, want filter status, want prefilter status,
#  want prefilter node names, args, run prefilter)
CASES = [
    ("missing labels", {"nodeSelector": {"foo": "bar"}}, None, "", ERR_REASON_POD, None, None, None, True),
    ("same labels", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, "", None, None, None, None, True),
    ("node labels are superset", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar", "baz": "blah"}, "",
     None, None, None, None, True),
    ("node labels are subset", {"nodeSelector": {"foo": "bar", "baz": "blah"}}, {"foo": "bar"}, "",
     ERR_REASON_POD, None, None, None, True),
    ("In matches", required({"matchExpressions": [expr("foo", "In", "bar", "value2")]}), {"foo": "bar"}, "",
     None, None, None, None, True),
    ("Gt matches", required({"matchExpressions": [expr("kernel-version", "Gt", "0204")]}),
     {"kernel-version": "0206"}, "", None, None, None, None, True),
    ("NotIn matches", required({"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]}),
     {"mem-type": "DDR3"}, "", None, None, None, None, True),
    ("Exists matches", required({"matchExpressions": [expr("GPU", "Exists")]}), {"GPU": "NVIDIA-GRID-K1"}, "",
     None, None, None, None, True),
    ("affinity does not match", required({"matchExpressions": [expr("foo", "In", "value1", "value2")]}),
     {"foo": "bar"}, "", ERR_REASON_POD, None, None, None, True),
    ("empty MatchExpressions matches nothing", required({"matchExpressions": []}), {"foo": "bar"}, "",
     ERR_REASON_POD, None, None, None, True),
    ("no affinity", {}, {"foo": "bar"}, "", None, "skip", None, None, True),
    ("affinity but nil NodeSelector", {"affinity": {"nodeAffinity": {}}}, {"foo": "bar"}, "",
     None, "skip", None, None, True),
    ("ANDed expressions match",
     required({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, None, True),
    ("ANDed expressions do not match",
     required({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "", ERR_REASON_POD, None, None, None, True),
    ("ORed terms match",
     required({"matchExpressions": [expr("foo", "In", "bar", "value2")]},
              {"matchExpressions": [expr("diffkey", "In", "wrong", "value2")]}),
     {"foo": "bar"}, "", None, None, None, None, True),
    ("affinity and nodeSelector satisfied",
     dict(required({"matchExpressions": [expr("foo", "Exists")]}), nodeSelector={"foo": "bar"}),
     {"foo": "bar"}, "", None, None, None, None, True),
    ("affinity matches but nodeSelector not",
     dict(required({"matchExpressions": [expr("foo", "Exists")]}), nodeSelector={"foo": "bar"}),
     {"foo": "barrrrrr"}, "", ERR_REASON_POD, None, None, None, True),
    ("invalid value in term",
     required({"matchExpressions": [expr("foo", "NotIn", "invalid value: ___@#$%^")]}),
     {"foo": "bar"}, "", ERR_REASON_POD, None, None, None, True),
    ("matchFields In matches", required(F("node1")), None, "node1", None, None, {"node1"}, None, True),
    ("matchFields In does not match", required(F("node1")), None, "node2", ERR_REASON_POD, None, {"node1"},
     None, True),
    ("two terms: fields do not match, expressions match",
     required({"matchFields": [expr("metadata.name", "In", "node1"), expr("metadata.name", "In", "node2")]},
              {"matchExpressions": [expr("foo", "In", "bar")]}),
     {"foo": "bar"}, "node2", None, None, None, None, True),
    ("one term: fields do not match, expressions match",
     required({"matchFields": [expr("metadata.name", "In", "node1")],
               "matchExpressions": [expr("foo", "In", "bar")]}),
     {"foo": "bar"}, "node2", ERR_REASON_POD, None, {"node1"}, None, True),
    ("one term: both match",
     required({"matchFields": [expr("metadata.name", "In", "node1")],
               "matchExpressions": [expr("foo", "In", "bar")]}),
     {"foo": "bar"}, "node1", None, None, {"node1"}, None, True),
    ("two terms: neither matches",
     required(F("node1"), {"matchExpressions": [expr("foo", "In", "not-match-to-bar")]}),
     {"foo": "bar"}, "node2", ERR_REASON_POD, None, None, None, True),
    ("two terms of node.Name affinity", required(F("node1"), F("node2")), None, "node2",
     None, None, {"node1", "node2"}, None, True),
    ("two conflicting matchFields requirements",
     required({"matchFields": [expr("metadata.name", "In", "node1"), expr("metadata.name", "In", "node2")]}),
     {"foo": "bar"}, "node2", ERR_REASON_POD, ERR_REASON_CONFLICT, None, None, True),
    ("matches added affinity and pod's affinity",
     required({"matchExpressions": [expr("zone", "In", "foo")]}), {"zone": "foo"}, "node2",
     None, None, None, added_required(F("node2")), True),
    ("matches added affinity but not pod's affinity",
     required({"matchExpressions": [expr("zone", "In", "bar")]}), {"zone": "foo"}, "node2",
     ERR_REASON_POD, None, None, added_required(F("node2")), True),
    ("does not match added affinity", {}, {"zone": "foo"}, "node2", ERR_REASON_ENFORCED, None, None,
     added_required({"matchExpressions": [expr("zone", "In", "bar")]}), True),
    ("nodeSelector without PreFilter", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar", "baz": "blah"}, "",
     None, None, None, None, False),
    ("affinity without PreFilter",
     required({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, None, False),
]


@pytest.mark.parametrize("name,spec,labels,node_name,want,want_pf,want_names,args,run_pf", CASES,
                         ids=[c[0] for c in CASES])
def test_node_affinity_filter(name, spec, labels, node_name, want, want_pf, want_names, args, run_pf):
    p = pod(spec)
    ni = NodeInfo()
    ni.set_node(node(node_name, labels))
    pl = NodeAffinity(args or {}, None)
    state = new_state()
    if run_pf:
        result, st = pl.pre_filter(state, p, [ni])
        if want_pf is None:
            assert st is None
        elif want_pf == "skip":
            assert st.code == Code.Skip
        else:
            assert st == Status.unresolvable(want_pf)
        if want_names is None:
            assert result is None
        else:
            assert result.node_names == want_names
    got = pl.filter(state, p, ni)
    if want is None:
        assert got is None
    else:
        assert got == Status.unresolvable(want)


# --- scoring ---------------------------------------------------------------------------------
L1 = {"foo": "bar"}
L2 = {"key": "value"}
L3 = {"az": "az1"}
L4 = {"abc": "az11", "def": "az22"}
L5 = {"foo": "bar", "key": "value", "az": "az1"}

A1 = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 2, "preference": {"matchExpressions": [expr("foo", "In", "bar")]}}]}}
A2 = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 2, "preference": {"matchExpressions": [expr("foo", "In", "bar")]}},
    {"weight": 4, "preference": {"matchExpressions": [expr("key", "In", "value")]}},
    {"weight": 5, "preference": {"matchExpressions": [expr("foo", "In", "bar"), expr("key", "In", "value"),
                                                      expr("az", "In", "az1")]}},
]}}

SCORE_CASES = [
    ("all nodes same priority as NodeAffinity is nil", {}, [("node1", L1), ("node2", L2), ("node3", L3)],
     [0, 0, 0], None, True),
    ("no node matches", {"affinity": A1}, [("node1", L4), ("node2", L2), ("node3", L3)], [0, 0, 0], None, True),
    ("only node1 matches", {"affinity": A1}, [("node1", L1), ("node2", L2), ("node3", L3)], [100, 0, 0], None, True),
    ("different priorities", {"affinity": A2}, [("node1", L1), ("node5", L5), ("node2", L2)],
     [18, 100, 36], None, True),
    ("added affinity", {}, [("node1", L1), ("node2", L2)], [100, 0], {"addedAffinity": A1["nodeAffinity"]}, True),
    ("added affinity and pod's affinity", {"affinity": A1}, [("node1", L1), ("node2", L2), ("node3", L5)],
     [40, 60, 100],
     {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
         {"weight": 3, "preference": {"matchExpressions": [expr("key", "In", "value")]}}]}}, True),
    ("without PreScore", {"affinity": A2}, [("node1", L1), ("node5", L5), ("node2", L2)],
     [18, 100, 36], None, False),
]


@pytest.mark.parametrize("name,spec,nodes,want,args,run_ps", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_node_affinity_priority(name, spec, nodes, want, args, run_ps):
    p = pod(spec)
    ns = [node(n, l) for n, l in nodes]
    h = FakeHandle(ns)
    pl = NodeAffinity(args or {}, h)
    state = new_state()
    if run_ps:
        st = pl.pre_score(state, p, h.snapshot.list())
        assert st is None or st.code == Code.Skip
    scores = []
    for n in ns:
        ni = h.snapshot.get(n.name)
        s, st = pl.score(state, p, ni)
        assert st is None
        scores.append(NodeScore(n.name, s))
    assert pl.normalize_score(state, p, scores) is None
    assert [s.score for s in scores] == want


def test_pre_score_skip_without_preferred_terms():
    pl = NodeAffinity({}, None)
    assert pl.pre_score(new_state(), pod({}), []).code == Code.Skip


def test_pre_score_error_on_invalid_preferred_term():
    pl = NodeAffinity({}, None)
    p = pod({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [expr("foo", "Bogus", "x")]}}]}}})
    st = pl.pre_score(new_state(), p, [])
    assert st.code == Code.Error
    assert st.message() == ('[0].matchExpressions[0].operator: Unsupported value: "Bogus": supported values: '
                            '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"')


# --- queueing hints --------------------------------------------------------------------------
POD_WITH_AFFINITY = required({"matchExpressions": [expr("foo", "In", "bar")]})
ENFORCED = added_required({"matchExpressions": [expr("foo", "In", "bar")]})

HINT_CASES = [
    ("skip-queue-on-add", {}, None, node("n"), QueueingHint.QueueSkip),
    ("queue-on-add", {}, None, node("n", {"foo": "bar"}), QueueingHint.Queue),
    ("skip-unrelated-changes", {}, node("n"), node("n"), QueueingHint.QueueSkip),
    ("skip-unrelated-changes-on-labels", {}, node("n"), node("n", {"k": "v"}), QueueingHint.QueueSkip),
    ("skip-labels-changes-on-suitable-node", {}, node("n", {"foo": "bar"}), node("n", {"foo": "bar", "k": "v"}),
     QueueingHint.QueueSkip),
    ("skip-labels-changes-from-suitable-to-unsuitable", {}, node("n", {"foo": "bar"}), node("n", {"k": "v"}),
     QueueingHint.QueueSkip),
    ("queue-on-labels-change-makes-pod-schedulable", {}, node("n"), node("n", {"foo": "bar"}), QueueingHint.Queue),
    ("skip-queue-on-add-scheduler-enforced", ENFORCED, None, node("n"), QueueingHint.QueueSkip),
    ("queue-on-add-scheduler-enforced", ENFORCED, None, node("n", {"foo": "bar"}), QueueingHint.Queue),
]


@pytest.mark.parametrize("name,args,old,new,want", HINT_CASES, ids=[c[0] for c in HINT_CASES])
def test_is_schedulable_after_node_change(name, args, old, new, want):
    pl = NodeAffinity(args, None)
    assert pl.is_schedulable_after_node_change(pod(POD_WITH_AFFINITY), old, new) == want


def test_events_to_register():
    from harness.framework import ActionType, EventResource
    evs = NodeAffinity({}, None).events_to_register()
    assert len(evs) == 1
    assert evs[0].event.resource == EventResource.Node
    assert evs[0].event.action_type == ActionType.Add | ActionType.UpdateNodeLabel


# --- args ------------------------------------------------------------------------------------
def test_validate_args():
    assert NodeAffinity.validate_args({}) == []
    assert NodeAffinity.validate_args({"addedAffinity": {}}) == []
    errs = NodeAffinity.validate_args({"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [expr("foo", "Bogus")]}, {"matchFields": [expr("metadata.name", "In", "a", "b")]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [expr("invalid key", "In", "v")]}}],
    }})
    assert [p for p, _ in errs] == [
        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator",
        "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchFields[0].values",
        "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].key",
    ]
    assert errs[1][1] == 'Invalid value: ["a","b"]: must have one element'
    with pytest.raises(ValueError):
        NodeAffinity({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expr("foo", "Bogus")]}]}}}, None)
    # an empty nodeSelectorTerms list is valid and matches nothing
    pl = NodeAffinity({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}, None)
    ni = NodeInfo()
    ni.set_node(node("n"))
    assert pl.filter(new_state(), pod({}), ni) == Status.unresolvable(ERR_REASON_ENFORCED)
