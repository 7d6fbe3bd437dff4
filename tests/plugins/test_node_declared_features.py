"""nodedeclaredfeatures_test.go (v1.35, v1.36): TestPreFilter, TestFilter, the queueing hints,
with the inference of the component-helpers library per version; the default plugins, the node
event and the API server's handling of status.declaredFeatures."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from builtin_plugins.node_declared_features import (ERR_REASON_UNSATISFIED_REQUIREMENTS, NodeDeclaredFeatures,
                                                    infer_for_pod_scheduling)
from harness.api.object_validation import validate_object
from harness.api.objects import Node, Pod
from harness.config.defaults import default_plugins
from harness.framework import ActionType, Code, NodeInfo, QueueingHint, Status
from harness.scheduler.events import node_scheduling_properties_change
from harness.testing import new_state
from harness.versions import resolve

V135 = resolve("v1.35", {"NodeDeclaredFeatures": True})
V135_OFF = resolve("v1.35")
V136 = resolve("v1.36")
RESTART = "RestartAllContainersOnContainerExits"
HOSTNET = "UserNamespacesHostNetworkSupport"


def plugin(features):
    return NodeDeclaredFeatures(None, SimpleNamespace(feature_gates=features))


def pod(uid="u1", **spec):
    spec.setdefault("containers", [{"name": "c"}])
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": uid},
                "spec": spec})


def node(declared=None, name="node-1"):
    status = {"allocatable": {"cpu": "1"}}
    if declared is not None:
        status["declaredFeatures"] = declared
    return Node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status})


RESTART_ALL = {"containers": [{"name": "c", "restartPolicyRules": [
    {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]}]}
RESTART_ALL_INIT = {"containers": [{"name": "c"}], "initContainers": [{"name": "i", "restartPolicyRules": [
    {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}]}]}
RESTART_ONLY = {"containers": [{"name": "c", "restartPolicyRules": [
    {"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}]}]}
HOST_NETWORK_USERNS = {"hostNetwork": True, "hostUsers": False}


@pytest.mark.parametrize("spec,features,want", [
    (RESTART_ALL, V135, {RESTART}),
    (RESTART_ALL_INIT, V136, {RESTART}),
    (RESTART_ONLY, V136, set()),
    (HOST_NETWORK_USERNS, V136, {HOSTNET}),
    (HOST_NETWORK_USERNS, V135, set()),  # v1.35's library does not register it
    ({"hostNetwork": True}, V136, set()),  # hostUsers unset: the host's user namespace
    (dict(RESTART_ALL, **HOST_NETWORK_USERNS), V136, {RESTART, HOSTNET}),
    ({}, V136, set()),
])
def test_infer_for_pod_scheduling(spec, features, want):
    assert infer_for_pod_scheduling(dict({"containers": [{"name": "c"}]}, **spec), features) == want


@pytest.mark.parametrize("features,spec,status,reqs", [
    (V135_OFF, RESTART_ALL, Status.skip(), None),  # plugin disabled
    (V135, RESTART_ALL, None, {RESTART}),
    (V136, dict(RESTART_ALL, **HOST_NETWORK_USERNS), None, {RESTART, HOSTNET}),
    (V136, {}, Status.skip(), None),  # no requirements
])
def test_pre_filter(features, spec, status, reqs):
    state = new_state()
    _, got = plugin(features).pre_filter(state, pod(**spec), [])
    assert got == status
    if reqs is not None:
        assert state.read("PreFilterNodeDeclaredFeatures").reqs == reqs


@pytest.mark.parametrize("declared,spec,fits", [
    ([RESTART, "Other"], RESTART_ALL, True),
    (["Other"], RESTART_ALL, False),
    ([HOSTNET, RESTART, "Z"], dict(RESTART_ALL, **HOST_NETWORK_USERNS), True),
    (None, RESTART_ALL, False),
    ([RESTART], dict(RESTART_ALL, **HOST_NETWORK_USERNS), False),
])
def test_filter(declared, spec, fits):
    for features, reason in ((V136, ERR_REASON_UNSATISFIED_REQUIREMENTS), (V135, None)):
        pl = plugin(features)
        p = pod(**spec)
        state = new_state()
        pl.pre_filter(state, p, [])
        if features is V135 and HOSTNET in infer_for_pod_scheduling(p.spec, V136):
            continue  # v1.35 infers RestartAll only
        ni = NodeInfo()
        ni.set_node(node(declared))
        got = pl.filter(state, p, ni)
        if fits:
            assert got is None
        elif reason:
            assert got == Status.unresolvable(reason)
        else:  # v1.35 names what is missing
            assert got == Status.unresolvable(
                f"node declared features check failed - unsatisfied requirements: {RESTART}")


def test_filter_disabled_and_without_state():
    ni = NodeInfo()
    ni.set_node(node([]))
    assert plugin(V135_OFF).filter(new_state(), pod(**RESTART_ALL), ni) is None
    got = plugin(V136).filter(new_state(), pod(**RESTART_ALL), ni)
    assert got.code == Code.Error


def test_not_in_v134():
    with pytest.raises(ValueError):
        plugin(resolve("v1.34"))


def test_events_and_hints():
    assert plugin(V135_OFF).events_to_register() == []
    pl = plugin(V136)
    evs = pl.events_to_register()
    assert [e.event.action_type for e in evs] == [ActionType.Add | ActionType.UpdateNodeDeclaredFeature,
                                                  ActionType.Update]
    p = pod(**RESTART_ALL)
    assert pl.is_schedulable_after_node_change(p, None, node([])) == QueueingHint.Queue
    assert pl.is_schedulable_after_node_change(p, node(["A"]), node(["A"])) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_node_change(p, node(["A"]), node(["A", RESTART])) == QueueingHint.Queue
    assert pl.is_schedulable_after_pod_update(p, pod(uid="other"), pod(uid="other", **RESTART_ONLY)) == \
        QueueingHint.QueueSkip
    assert pl.is_schedulable_after_pod_update(p, p, pod(**RESTART_ONLY)) == QueueingHint.Queue
    assert pl.is_schedulable_after_pod_update(p, p, pod(**RESTART_ALL_INIT)) == QueueingHint.QueueSkip


def test_node_declared_features_event_only_with_the_gate():
    old, new = node(["A"]), node(["A", "B"])
    assert [e.action_type for e in node_scheduling_properties_change(new, old, V136)] == \
        [ActionType.UpdateNodeDeclaredFeature]
    assert node_scheduling_properties_change(new, old, V135_OFF) == []


@pytest.mark.parametrize("features,present", [(resolve("v1.34"), False), (V135_OFF, False), (V135, True),
                                              (V136, True)])
def test_default_plugins(features, present):
    names = [p["name"] for p in default_plugins(features)["multiPoint"]["enabled"]]
    assert ("NodeDeclaredFeatures" in names) is present
    if present:
        assert names[-1] == "NodeDeclaredFeatures"  # appended after DefaultBinder


def _node_obj(declared):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"declaredFeatures": declared}}


@pytest.mark.parametrize("declared,want", [
    (["FeatureA", "FeatureB/sub"], None),
    (["featureA"], ("status.declaredFeatures[0]", 'Invalid value: "featureA": invalid feature name "featureA": must '
                    "start with an UpperCamelCase segment, with subsequent segments separated by '/' (e.g., MyFeature "
                    "or MyFeature/mySubFeature), and contain only alphanumeric characters and slashes")),
    (["B", "A"], ("status.declaredFeatures[1]", 'Invalid value: "A": list must be sorted alphabetically')),
    (["A", "A"], ("status.declaredFeatures[1]", 'Duplicate value: "A"')),
])
def test_validate_node_declared_features(declared, want):
    assert validate_object(_node_obj(declared), V136) == want
    assert validate_object(_node_obj(declared), V135_OFF) is None  # dropped before validation
