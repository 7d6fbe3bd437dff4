"""component-helpers nodeaffinity_test.go and helpers_test.go (TestMatchNodeSelectorTerms)."""

from __future__ import annotations

import pytest

from harness.api.nodeaffinity import (LazyErrorNodeSelector, NodeSelector, NodeSelectorError,
                                      PreferredSchedulingTerms, RequiredNodeAffinity,
                                      match_node_selector_terms, node_selector_matches,
                                      preferred_scheduling_terms_score)
from harness.api.objects import Node
from harness.testing import make_pod


def node(name="", labels=None):
    return Node({"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": name, "labels": dict(labels or {})}})


def expr(key, op, *values):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


KEY_ERR = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
           "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
           "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


# --- TestNodeSelectorMatch -------------------------------------------------------------------
def test_node_selector_invalid_terms_error():
    ns = {"nodeSelectorTerms": [
        {"matchFields": [expr("metadata.name", "In", "host_1", "host_2")]},
        {"matchExpressions": [expr("label_1", "In", "label_1_val")],
         "matchFields": [expr("metadata.name", "In", "host_1")]},
        {"matchExpressions": [expr("invalid key", "In", "label_value")]},
    ]}
    with pytest.raises(NodeSelectorError) as ei:
        NodeSelector(ns)
    assert ei.value.errors == [
        'nodeSelectorTerms[0].matchFields[0].values: Invalid value: ["host_1","host_2"]: must have one element',
        'nodeSelectorTerms[2].matchExpressions[0].key: Invalid value: "invalid key": ' + KEY_ERR,
    ]
    assert str(ei.value).startswith("[nodeSelectorTerms[0].matchFields[0].values")
    # the lazy selector reports them only when nothing matches
    lazy = LazyErrorNodeSelector(ns)
    ok, err = lazy.match_err(node("host_1", {"label_1": "label_1_val"}))
    assert ok and err is None
    ok, err = lazy.match_err(node("host_2"))
    assert not ok and err == str(ei.value)


@pytest.mark.parametrize("ns,n,want", [
    ({"nodeSelectorTerms": [{"matchExpressions": [expr("label_1", "In", "label_1_val")],
                             "matchFields": [expr("metadata.name", "In", "host_1")]}]},
     node("host_1"), False),
    ({"nodeSelectorTerms": [{"matchExpressions": [expr("label_1", "In", "label_1_val")],
                             "matchFields": [expr("metadata.name", "In", "host_1")]}]},
     node("host_1", {"label_1": "label_1_val"}), True),
    ({"nodeSelectorTerms": [{"matchExpressions": [expr("label_1", "In", "label_1_val")]},
                            {"matchFields": [expr("metadata.name", "In", "host_1")]}]},
     node("host_1"), True),
])
def test_node_selector_match(ns, n, want):
    assert NodeSelector(ns).match(n) is want
    assert node_selector_matches(ns, n) is want


def test_nil_node_matches_nothing():
    assert NodeSelector({"nodeSelectorTerms": []}).match(None) is False
    assert match_node_selector_terms(None, None) == (False, None)


# --- TestPreferredSchedulingTermsScore -------------------------------------------------------
def test_preferred_terms_errors():
    terms = [
        {"weight": 1, "preference": {"matchFields": [expr("metadata.name", "In", "host_1", "host_2")]}},
        {"weight": 1, "preference": {"matchExpressions": [expr("label_1", "In", "label_1_val")],
                                     "matchFields": [expr("metadata.name", "In", "host_1")]}},
        {"weight": 1, "preference": {"matchExpressions": [expr("invalid key", "In", "label_value")]}},
    ]
    with pytest.raises(NodeSelectorError) as ei:
        PreferredSchedulingTerms(terms)
    assert [e.split(":")[0] for e in ei.value.errors] == [
        "[0].matchFields[0].values", "[2].matchExpressions[0].key"]


def test_preferred_terms_zero_weight_not_parsed():
    terms = [{"weight": 0, "preference": {"matchFields": [expr("metadata.name", "In", "host_1", "host_2")]}}]
    assert PreferredSchedulingTerms(terms).score(node("host_1")) == 0


def test_preferred_terms_first_and_third_match():
    terms = [
        {"weight": 5, "preference": {"matchFields": [expr("metadata.name", "In", "host_1")]}},
        {"weight": 7, "preference": {"matchExpressions": [expr("unknown_label", "In", "unknown_label_val")]}},
        {"weight": 11, "preference": {"matchExpressions": [expr("label_1", "In", "label_1_val")]}},
    ]
    assert preferred_scheduling_terms_score(terms, node("host_1", {"label_1": "label_1_val"})) == 16


# --- TestNodeSelectorRequirementsAsSelector --------------------------------------------------
def test_requirements_parse():
    # Exists with values is an error
    lazy = LazyErrorNodeSelector({"nodeSelectorTerms": [
        {"matchExpressions": [expr("foo", "Exists", "bar", "baz")]}]})
    ok, err = lazy.match_err(node("n", {"foo": "x"}))
    assert not ok
    assert err == ('nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: ["bar","baz"]: '
                   "values set must be empty for exists and does not exist")
    # Gt / Lt parse
    assert node_selector_matches({"nodeSelectorTerms": [{"matchExpressions": [expr("foo", "Gt", "1")]}]},
                                 node("n", {"foo": "2"}))
    assert node_selector_matches({"nodeSelectorTerms": [{"matchExpressions": [expr("bar", "Lt", "7")]}]},
                                 node("n", {"bar": "6"}))


@pytest.mark.parametrize("op,values,label,want", [
    ("Gt", ["4"], "5", True),
    ("Gt", ["4"], "4", False),
    ("Gt", ["4"], "12", True),        # integer, not string, comparison
    ("Lt", ["7"], "12", False),
    ("Lt", ["7"], "-3", True),
    ("Gt", ["4"], "abc", False),      # label value not an integer
    ("Gt", ["4"], None, False),       # label missing
    ("Gt", ["x"], "5", False),        # requirement value not an integer: parse error
    ("Gt", ["1", "2"], "5", False),   # more than one value: parse error
    ("Gt", [], "5", False),
    ("Gt", ["0204"], "0206", True),
    ("Lt", ["9223372036854775808"], "1", False),  # out of int64 range
    ("In", [], "a", False),           # In without values: parse error
    ("NotIn", ["a"], None, True),
    ("NotIn", ["a"], "a", False),
    ("DoesNotExist", [], None, True),
    ("DoesNotExist", [], "a", False),
    ("Exists", [], "", True),
    ("Foo", ["a"], "a", False),       # unsupported operator: parse error
    ("In", ["invalid value: ___@#$%^"], "invalid value: ___@#$%^", False),  # invalid label value
])
def test_label_operators(op, values, label, want):
    labels = {} if label is None else {"k": label}
    ns = {"nodeSelectorTerms": [{"matchExpressions": [expr("k", op, *values)]}]}
    assert node_selector_matches(ns, node("n", labels)) is want


def test_field_selector_operators():
    n = node("node-a")
    def t(op, *values):
        return {"nodeSelectorTerms": [{"matchFields": [expr("metadata.name", op, *values)]}]}
    assert node_selector_matches(t("In", "node-a"), n)
    assert not node_selector_matches(t("In", "node-b"), n)
    assert node_selector_matches(t("NotIn", "node-b"), n)
    assert not node_selector_matches(t("NotIn", "node-a"), n)
    assert not node_selector_matches(t("Exists"), n)  # unsupported for fields
    with pytest.raises(NodeSelectorError) as ei:
        NodeSelector(t("Exists"))
    assert ei.value.errors == ['nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: "Exists": '
                               'supported values: "In", "NotIn"']
    # unknown field key compares against ""
    assert not node_selector_matches(
        {"nodeSelectorTerms": [{"matchFields": [expr("metadata.namespace", "In", "x")]}]}, n)
    assert node_selector_matches(
        {"nodeSelectorTerms": [{"matchFields": [expr("metadata.namespace", "NotIn", "x")]}]}, n)


# --- TestMatchNodeSelectorTerms (helpers_test.go) --------------------------------------------
@pytest.mark.parametrize("ns,n,want", [
    (None, None, False),
    ({"nodeSelectorTerms": [{"matchExpressions": [expr("label_1", "In", "label_1_val")]}]},
     node("", {"label_1": "label_1_val"}), True),
    ({"nodeSelectorTerms": [{"matchFields": [expr("metadata.name", "In", "host_1")]}]},
     node("host_1"), True),
    ({"nodeSelectorTerms": [{"matchFields": [expr("metadata.name", "In", "host_1", "host_2")]}]},
     node("host_1"), False),
    ({"nodeSelectorTerms": [{"matchFields": [expr("metadata.name", "In", "host_1")]}]},
     node("not_host_1", {"metadata.name": "host_1"}), False),
    ({"nodeSelectorTerms": [{"matchExpressions": [expr("metadata.name", "In", "host_1")]}]},
     node("host_1"), False),
    ({"nodeSelectorTerms": [{"matchExpressions": [expr("label_1", "In", "label_1_val")],
                             "matchFields": [expr("metadata.name", "In", "host_1")]}]},
     node("host_1"), False),
    ({"nodeSelectorTerms": [{"matchExpressions": [expr("label_1", "In", "label_1_val")],
                             "matchFields": [expr("metadata.name", "In", "host_1")]}]},
     node("host_1", {"label_1": "label_1_val"}), True),
    ({"nodeSelectorTerms": [{"matchExpressions": [expr("label_1", "In", "label_1_val")],
                             "matchFields": [expr("metadata.name", "In", "host_1")]}]},
     node("host_1", {"label_1": "label_1_val-failed"}), False),
    ({"nodeSelectorTerms": [{"matchExpressions": [expr("label_1", "In", "label_1_val")]},
                            {"matchFields": [expr("metadata.name", "In", "host_1")]}]},
     node("host_1", {"label_1": "label_1_val-failed"}), True),
])
def test_match_node_selector_terms(ns, n, want):
    assert match_node_selector_terms(n, ns)[0] is want


def test_node_without_name_ignores_match_fields():
    # extractNodeFields is empty for a nameless node, so matchFields are not evaluated
    ns = {"nodeSelectorTerms": [{"matchFields": [expr("metadata.name", "In", "host_1")]}]}
    assert node_selector_matches(ns, node(""))


# --- TestPodMatchesNodeSelectorAndAffinityTerms ----------------------------------------------
def req(*terms):
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                          {"nodeSelectorTerms": list(terms)}}}}


@pytest.mark.parametrize("spec,labels,node_name,want", [
    ({}, None, "", True),
    ({"nodeSelector": {"foo": "bar"}}, None, "", False),
    ({"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, "", True),
    ({"nodeSelector": {"foo": "bar"}}, {"foo": "bar", "baz": "blah"}, "", True),
    ({"nodeSelector": {"foo": "bar", "baz": "blah"}}, {"foo": "bar"}, "", False),
    (req({"matchExpressions": [expr("foo", "In", "bar", "value2")]}), {"foo": "bar"}, "", True),
    (req({"matchExpressions": [expr("kernel-version", "Gt", "0204")]}), {"kernel-version": "0206"}, "", True),
    (req({"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]}), {"mem-type": "DDR3"}, "", True),
    (req({"matchExpressions": [expr("GPU", "Exists")]}), {"GPU": "NVIDIA-GRID-K1"}, "", True),
    (req({"matchExpressions": [expr("foo", "In", "value1", "value2")]}), {"foo": "bar"}, "", False),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}},
     {"foo": "bar"}, "", False),
    (req(), {"foo": "bar"}, "", False),
    (req({"matchExpressions": []}), {"foo": "bar"}, "", False),
    ({}, {"foo": "bar"}, "", True),
    ({"affinity": {"nodeAffinity": {}}}, {"foo": "bar"}, "", True),
    (req({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "", True),
    (req({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "", False),
    (req({"matchExpressions": [expr("foo", "In", "bar", "value2")]},
         {"matchExpressions": [expr("diffkey", "In", "wrong", "value2")]}), {"foo": "bar"}, "", True),
    (dict(req({"matchExpressions": [expr("foo", "Exists")]}), nodeSelector={"foo": "bar"}),
     {"foo": "bar"}, "", True),
    (dict(req({"matchExpressions": [expr("foo", "Exists")]}), nodeSelector={"foo": "bar"}),
     {"foo": "barrrrrr"}, "", False),
    (req({"matchExpressions": [expr("foo", "NotIn", "invalid value: ___@#$%^")]}), {"foo": "bar"}, "", False),
    (req({"matchFields": [expr("metadata.name", "In", "node_1")]}), None, "node_1", True),
    (req({"matchFields": [expr("metadata.name", "In", "node_1")]}), None, "node_2", False),
    (req({"matchFields": [expr("metadata.name", "In", "node_1")]},
         {"matchExpressions": [expr("foo", "In", "bar")]}), {"foo": "bar"}, "node_2", True),
    (req({"matchFields": [expr("metadata.name", "In", "node_1")],
          "matchExpressions": [expr("foo", "In", "bar")]}), {"foo": "bar"}, "node_2", False),
    (req({"matchFields": [expr("metadata.name", "In", "node_1")],
          "matchExpressions": [expr("foo", "In", "bar")]}), {"foo": "bar"}, "node_1", True),
    (req({"matchFields": [expr("metadata.name", "In", "node_1")]},
         {"matchExpressions": [expr("foo", "In", "not-match-to-bar")]}), {"foo": "bar"}, "node_2", False),
])
def test_required_node_affinity(spec, labels, node_name, want):
    pod = make_pod("p", spec=spec)
    assert RequiredNodeAffinity(pod).match(node(node_name, labels)) is want
