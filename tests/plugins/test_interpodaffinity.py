"""InterPodAffinity: ports of the upstream table tests
(pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go, scoring_test.go,
plugin_test.go) plus args defaulting/validation."""

from __future__ import annotations

import itertools

import pytest

from builtin_plugins.interpodaffinity import InterPodAffinity
from builtin_plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH as AFF, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH as ANTI,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH as EXISTING, PRE_FILTER_STATE_KEY, PreFilterState,
    get_incoming_affinity_anti_affinity_counts)
from builtin_plugins.interpodaffinity.scoring import normalize_scores
from harness.api.objects import Node, Pod
from harness.framework import (ActionType, ClusterEvent, Code, EventResource, NodeScore, PodInfo,
                               QueueingHint, Status)
from harness.testing import FakeHandle, new_state
from harness.versions import resolve

MAX = 100
_n = itertools.count()

# ---------------------------------------------------------------------------------------------
# builders (st.MakePod / st.MakeNode equivalents)
# ---------------------------------------------------------------------------------------------
_ABSENT = object()


def term(key=None, op=None, values=None, topo="", namespaces=None, ns_selector=_ABSENT, match_labels=None):
    """A v1.PodAffinityTerm: one match expression (key, op, values) or matchLabels."""
    sel = {}
    if key is not None:
        expr = {"key": key, "operator": op}
        if values is not None:
            expr["values"] = list(values)
        sel["matchExpressions"] = [expr]
    if match_labels is not None:
        sel["matchLabels"] = dict(match_labels)
    t = {"labelSelector": sel, "topologyKey": topo}
    if namespaces is not None:
        t["namespaces"] = list(namespaces)
    if ns_selector is not _ABSENT:
        t["namespaceSelector"] = ns_selector
    return t


def exprs_term(exprs, topo="", namespaces=None, ns_selector=_ABSENT):
    t = {"labelSelector": {"matchExpressions": exprs}, "topologyKey": topo}
    if namespaces is not None:
        t["namespaces"] = list(namespaces)
    if ns_selector is not _ABSENT:
        t["namespaceSelector"] = ns_selector
    return t


def In(key, topo, values, **kw):
    return term(key, "In", values, topo, **kw)


def NotIn(key, topo, values, **kw):
    return term(key, "NotIn", values, topo, **kw)


def Exists(key, topo, **kw):
    return term(key, "Exists", None, topo, **kw)


def weighted(w, t):
    return {"weight": w, "podAffinityTerm": t}


def pod(name=None, ns="", labels=None, node="", aff=None, anti=None, pref_aff=None, pref_anti=None, uid=None):
    affinity = {}
    if aff is not None or pref_aff is not None:
        pa = affinity["podAffinity"] = {}
        if aff is not None:
            pa["requiredDuringSchedulingIgnoredDuringExecution"] = aff
        if pref_aff is not None:
            pa["preferredDuringSchedulingIgnoredDuringExecution"] = pref_aff
    if anti is not None or pref_anti is not None:
        paa = affinity["podAntiAffinity"] = {}
        if anti is not None:
            paa["requiredDuringSchedulingIgnoredDuringExecution"] = anti
        if pref_anti is not None:
            paa["preferredDuringSchedulingIgnoredDuringExecution"] = pref_anti
    name = name or f"pod-{next(_n)}"
    spec = {"containers": [{"name": "c", "image": "pause"}]}
    if node:
        spec["nodeName"] = node
    if affinity:
        spec["affinity"] = affinity
    return Pod({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "labels": dict(labels or {}),
                             "uid": uid or f"uid-{name}"},
                "spec": spec})


def node(name, labels=None):
    return Node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(labels or {})},
                 "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


def namespace(name, labels=None):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels or {})}}


NS_T1 = {"team": "team1"}
NS_T2 = {"team": "team2"}
NAMESPACES = [namespace("subteam1.team1", NS_T1), namespace("subteam2.team1", NS_T1),
              namespace("subteam1.team2", NS_T2), namespace("subteam2.team2", NS_T2)]


def status(code, *reasons):
    return Status(code, *reasons)


UNRES = Code.UnschedulableAndUnresolvable
UNSCH = Code.Unschedulable
SKIP = Status.skip()


def setup(pods, nodes, objects=(), args=None):
    h = FakeHandle(nodes, pods, objects)
    return h, InterPodAffinity(args, h)


# ---------------------------------------------------------------------------------------------
# filtering_test.go: TestRequiredAffinitySingleNode
# ---------------------------------------------------------------------------------------------
POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = lambda: node("node1", {"region": "r1", "zone": "z11"})  # noqa: E731


def _existing():
    return pod(labels=POD_LABEL, node="node1")


SINGLE_NODE_CASES = [
    ("no required affinity, no existing pods -> PreFilter Skip", pod(), [], SKIP, None),
    ("In operator matches the existing pod",
     pod(labels=POD_LABEL2, aff=[In("service", "region", ["securityscan", "value2"])]), [_existing()], None, None),
    ("NotIn operator matches the existing pod",
     pod(labels=POD_LABEL2, aff=[NotIn("service", "region", ["securityscan3", "value3"])]), [_existing()], None, None),
    ("diff namespace",
     pod(labels=POD_LABEL2, aff=[In("service", "", ["securityscan", "value2"], namespaces=["DiffNameSpace"])]),
     [pod(ns="ns", labels=POD_LABEL, node="node1")], None, status(UNRES, AFF)),
    ("unmatching labelSelector",
     pod(labels=POD_LABEL, aff=[In("service", "", ["antivirusscan", "value2"])]), [_existing()], None,
     status(UNRES, AFF)),
    ("different operators in multiple terms",
     pod(labels=POD_LABEL2, aff=[
         exprs_term([{"key": "service", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}],
                    "region"),
         exprs_term([{"key": "service", "operator": "In", "values": ["securityscan"]},
                     {"key": "service", "operator": "NotIn", "values": ["WrongValue"]}], "region")]),
     [_existing()], None, None),
    ("matchExpressions are ANDed",
     pod(labels=POD_LABEL2, aff=[
         exprs_term([{"key": "service", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}],
                    "region"),
         exprs_term([{"key": "service", "operator": "In", "values": ["securityscan2"]},
                     {"key": "service", "operator": "NotIn", "values": ["WrongValue"]}], "region")]),
     [_existing()], None, status(UNRES, AFF)),
    ("affinity and anti-affinity satisfied",
     pod(labels=POD_LABEL2, aff=[In("service", "region", ["securityscan", "value2"])],
         anti=[In("service", "node", ["antivirusscan", "value2"])]), [_existing()], None, None),
    ("affinity, anti-affinity and anti-affinity symmetry satisfied",
     pod(labels=POD_LABEL2, aff=[In("service", "region", ["securityscan", "value2"])],
         anti=[In("service", "node", ["antivirusscan", "value2"])]),
     [pod(labels=POD_LABEL, node="node1", anti=[In("service", "node", ["antivirusscan", "value2"])])], None, None),
    ("affinity satisfied, anti-affinity not",
     pod(labels=POD_LABEL2, aff=[In("service", "region", ["securityscan", "value2"])],
         anti=[In("service", "zone", ["securityscan", "value2"])]), [_existing()], None, status(UNSCH, ANTI)),
    ("anti-affinity symmetry not satisfied",
     pod(labels=POD_LABEL, aff=[In("service", "region", ["securityscan", "value2"])],
         anti=[In("service", "node", ["antivirusscan", "value2"])]),
     [pod(labels=POD_LABEL, node="node1", anti=[In("service", "zone", ["securityscan", "value2"])])], None,
     status(UNSCH, EXISTING)),
    ("pod matches its own label but the matching pod is on another node",
     pod(labels=POD_LABEL, aff=[NotIn("service", "region", ["securityscan", "value2"])]),
     [pod(labels={"service": "securityscan"}, node="node2")], None, status(UNRES, AFF)),
    ("existing pod's anti-affinity respected without own constraints: violated",
     pod(labels=POD_LABEL),
     [pod(labels=POD_LABEL, node="node1", anti=[In("service", "zone", ["securityscan", "value2"])])], None,
     status(UNSCH, EXISTING)),
    ("existing pod's anti-affinity respected without own constraints: satisfied",
     pod(labels=POD_LABEL),
     [pod(labels=POD_LABEL, node="node1", anti=[NotIn("service", "zone", ["securityscan", "value2"])])], SKIP, None),
    ("anti-affinity with existing pod satisfied, symmetry with incoming pod not",
     pod(labels=POD_LABEL, anti=[Exists("service", "region"), Exists("security", "region")]),
     [pod(labels=POD_LABEL2, node="node1", anti=[Exists("security", "zone")])], None, status(UNSCH, ANTI)),
    ("symmetry a1",
     pod(labels=POD_LABEL, anti=[Exists("service", "zone"), Exists("security", "zone")]),
     [pod(labels=POD_LABEL2, node="node1", anti=[Exists("security", "zone")])], None, status(UNSCH, ANTI)),
    ("symmetry a2",
     pod(labels=POD_LABEL2, anti=[Exists("security", "zone")]),
     [pod(labels=POD_LABEL, node="node1", anti=[Exists("service", "zone"), Exists("security", "zone")])], None,
     status(UNSCH, EXISTING)),
    ("symmetry b1",
     pod(labels={"abc": "", "xyz": ""}, anti=[Exists("abc", "zone"), Exists("def", "zone")]),
     [pod(labels={"def": "", "xyz": ""}, node="node1", anti=[Exists("abc", "zone"), Exists("def", "zone")])],
     None, status(UNSCH, ANTI)),
    ("symmetry b2",
     pod(labels={"def": "", "xyz": ""}, anti=[Exists("abc", "zone"), Exists("def", "zone")]),
     [pod(labels={"abc": "", "xyz": ""}, node="node1", anti=[Exists("abc", "zone"), Exists("def", "zone")])],
     None, status(UNSCH, ANTI)),
    ("affinity with NamespaceSelector",
     pod(labels=POD_LABEL2, aff=[In("service", "region", ["securityscan", "value2"],
                                    ns_selector={"matchExpressions": [{"key": "team", "operator": "In",
                                                                       "values": ["team1"]}]})]),
     [pod(ns="subteam1.team1", labels=POD_LABEL, node="node1")], None, None),
    ("affinity with non-matching NamespaceSelector",
     pod(labels=POD_LABEL2, aff=[In("service", "region", ["securityscan", "value2"],
                                    ns_selector={"matchExpressions": [{"key": "team", "operator": "In",
                                                                       "values": ["team1"]}]})]),
     [pod(ns="subteam1.team2", labels=POD_LABEL, node="node1")], None, status(UNRES, AFF)),
    ("anti-affinity with matching NamespaceSelector",
     pod(ns="subteam1.team1", labels=POD_LABEL2,
         anti=[In("service", "zone", ["securityscan", "value2"],
                  ns_selector={"matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]})]),
     [pod(ns="subteam2.team1", labels=POD_LABEL, node="node1")], None, status(UNSCH, ANTI)),
    ("anti-affinity with matching all NamespaceSelector",
     pod(ns="subteam1.team1", labels=POD_LABEL2,
         anti=[In("service", "zone", ["securityscan", "value2"], ns_selector={})]),
     [pod(ns="subteam2.team1", labels=POD_LABEL, node="node1")], None, status(UNSCH, ANTI)),
    ("anti-affinity with non-matching NamespaceSelector",
     pod(ns="subteam1.team1", labels=POD_LABEL2,
         anti=[In("service", "zone", ["securityscan", "value2"],
                  ns_selector={"matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]})]),
     [pod(ns="subteam1.team2", labels=POD_LABEL, node="node1")], None, None),
]


@pytest.mark.parametrize("name,p,pods,want_pre,want_filter", SINGLE_NODE_CASES,
                         ids=[c[0] for c in SINGLE_NODE_CASES])
def test_required_affinity_single_node(name, p, pods, want_pre, want_filter):
    h, pl = setup(pods, [NODE1()], NAMESPACES)
    state = new_state()
    _, pre = pl.pre_filter(state, p, h.snapshot.list())
    assert pre == want_pre
    if pre is not None:
        return
    assert pl.filter(state, p, h.snapshot.get("node1")) == want_filter


def test_pre_filter_parse_error_is_unresolvable():
    p = pod(labels=POD_LABEL, aff=[{"labelSelector": {"matchExpressions": [
        {"key": "service", "operator": "In", "values": []}]}, "topologyKey": "region"}])
    h, pl = setup([], [NODE1()])
    _, st = pl.pre_filter(new_state(), p, h.snapshot.list())
    assert st.code == UNRES
    assert st.message().startswith("parsing pod: requiredAffinityTerms: ")


# ---------------------------------------------------------------------------------------------
# filtering_test.go: TestRequiredAffinityMultipleNodes
# ---------------------------------------------------------------------------------------------
RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def _abc3():
    return [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
            node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})]


MULTI_NODE_CASES = [
    ("same topology value as a node with a matching pod",
     pod(aff=[In("foo", "region", ["bar"])]), [pod(name="p1", node="node1", labels={"foo": "bar"})],
     [node("node1", RG_CHINA), node("node2", RG_CHINA_AZ1), node("node3", RG_INDIA)], None,
     [None, None, status(UNRES, AFF)]),
    ("first pod of a collection is not blocked",
     pod(labels={"foo": "bar", "service": "securityscan"},
         aff=[In("foo", "zone", ["bar"]), In("service", "zone", ["securityscan"])]),
     [pod(name="p1", node="nodeA", labels={"foo": "bar"})],
     [node("nodeA", {"zone": "az1", "hostname": "h1"}), node("nodeB", {"zone": "az2", "hostname": "h2"})],
     None, [None, None]),
    ("first pod of a collection needs the topology keys",
     pod(labels={"foo": "bar", "service": "securityscan"},
         aff=[In("foo", "zone", ["bar"]), In("service", "zone", ["securityscan"])]),
     [pod(name="p1", node="nodeA", labels={"foo": "bar"})],
     [node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
     None, [status(UNRES, AFF), status(UNRES, AFF)]),
    ("anti-affinity on a shared topology value",
     pod(anti=[In("foo", "region", ["abc"])]), [pod(node="nodeA", labels={"foo": "abc"})],
     [node("nodeA", {"region": "r1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "hostname": "nodeB"})],
     None, [status(UNSCH, ANTI), status(UNSCH, ANTI)]),
    ("anti-affinity: any term matching counts",
     pod(anti=[In("foo", "region", ["abc"]), In("service", "zone", ["securityscan"])]),
     [pod(node="nodeA", labels={"foo": "abc", "service": "securityscan"})],
     [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
      node("nodeB", {"region": "r1", "zone": "z2", "hostname": "nodeB"})],
     None, [status(UNSCH, ANTI), status(UNSCH, ANTI)]),
    ("anti-affinity: nodeC in another region",
     pod(anti=[In("foo", "region", ["abc"])]), [pod(node="nodeA", labels={"foo": "abc"})],
     [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
     None, [status(UNSCH, ANTI), status(UNSCH, ANTI), None]),
    ("anti-affinity: matching pod on nodeC in another namespace",
     pod(ns="NS1", labels={"foo": "123"}, anti=[In("foo", "region", ["bar"])]),
     [pod(node="nodeA", ns="NS1", labels={"foo": "bar"}),
      pod(node="nodeC", ns="NS2", anti=[In("foo", "region", ["123"])])],
     [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)],
     None, [status(UNSCH, ANTI), status(UNSCH, ANTI), None]),
    ("existing pod's term with invalid topologyKey",
     pod(labels={"foo": ""}), [pod(node="nodeA", anti=[Exists("foo", "invalid-node-label")])],
     [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
      node("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"})],
     SKIP, [None, None]),
    ("incoming pod's term with invalid topologyKey",
     pod(node="nodeA", anti=[Exists("foo", "invalid-node-label")]), [pod(node="nodeA", labels={"foo": ""})],
     [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
      node("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"})],
     None, [None, None]),
    ("existing pods' anti-affinity violated on all nodes",
     pod(labels={"foo": "", "bar": ""}),
     [pod(node="nodeA", anti=[Exists("foo", "zone")]), pod(node="nodeA", anti=[Exists("bar", "region")])],
     _abc3(), None, [status(UNSCH, EXISTING), status(UNSCH, EXISTING)]),
    ("incoming pod's anti-affinity violated on all nodes",
     pod(anti=[Exists("foo", "zone"), Exists("bar", "region")]),
     [pod(node="nodeA", labels={"foo": ""}), pod(node="nodeB", labels={"bar": ""})],
     _abc3(), None, [status(UNSCH, ANTI), status(UNSCH, ANTI)]),
    ("existing pod: one term with invalid topologyKey",
     pod(labels={"foo": "", "bar": ""}),
     [pod(node="nodeA", anti=[Exists("foo", "invalid-node-label"), Exists("bar", "zone")])],
     _abc3(), None, [status(UNSCH, EXISTING), None]),
    ("incoming pod: one term with invalid topologyKey",
     pod(anti=[Exists("foo", "invalid-node-label"), Exists("bar", "zone")]),
     [pod(name="podA", node="nodeA", labels={"foo": "", "bar": ""})],
     _abc3(), None, [status(UNSCH, ANTI), None]),
    ("existing pod: all terms valid",
     pod(labels={"foo": "", "bar": ""}),
     [pod(node="nodeA", anti=[Exists("foo", "region"), Exists("bar", "zone")])],
     _abc3(), None, [status(UNSCH, EXISTING), status(UNSCH, EXISTING)]),
    ("incoming pod: all terms valid",
     pod(anti=[Exists("foo", "region"), Exists("bar", "zone")]),
     [pod(node="nodeA", labels={"foo": "", "bar": ""})],
     _abc3(), None, [status(UNSCH, ANTI), status(UNSCH, ANTI)]),
    ("existing pods on nodeA and nodeB each hate the pod -> only nodeC",
     pod(labels={"foo": "", "bar": ""}),
     [pod(node="nodeA", anti=[Exists("foo", "zone"), Exists("labelA", "zone")]),
      pod(node="nodeB", anti=[Exists("bar", "zone"), Exists("labelB", "zone")])],
     _abc3() + [node("nodeC", {"region": "r1", "zone": "z3", "hostname": "nodeC"})],
     None, [status(UNSCH, EXISTING), status(UNSCH, EXISTING), None]),
    ("all affinity terms matched by one pod",
     pod(aff=[Exists("foo", "region"), Exists("bar", "zone")]),
     [pod(name="pod1", labels={"foo": "", "bar": ""}, node="nodeA")],
     [node("nodeA", {"region": "r1", "zone": "z1", "hostname": "nodeA"}),
      node("nodeB", {"region": "r1", "zone": "z1", "hostname": "nodeB"})],
     None, [None, None]),
    ("affinity terms matched by different pods do not count",
     pod(aff=[Exists("foo", "region"), Exists("bar", "zone")]),
     [pod(name="pod1", node="nodeA", labels={"foo": ""}), pod(name="pod2", node="nodeB", labels={"bar": ""})],
     _abc3(), None, [status(UNRES, AFF), status(UNRES, AFF)]),
]


@pytest.mark.parametrize("name,p,pods,nodes,want_pre,want_filters", MULTI_NODE_CASES,
                         ids=[c[0] for c in MULTI_NODE_CASES])
def test_required_affinity_multiple_nodes(name, p, pods, nodes, want_pre, want_filters):
    h, pl = setup(pods, nodes, [namespace("NS1")])
    state = new_state()
    _, pre = pl.pre_filter(state, p, h.snapshot.list())
    assert pre == want_pre
    if pre is not None and pre.code == Code.Skip:
        return
    for n, want in zip(nodes, want_filters):
        assert pl.filter(state, p, h.snapshot.get(n.name)) == want, n.name


def test_pre_filter_disabled():
    h, pl = setup([], [node("n")])
    st = pl.filter(new_state(), pod(), h.snapshot.get("n"))
    assert st.code == Code.Error
    assert st.message() == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'


# ---------------------------------------------------------------------------------------------
# filtering_test.go: TestPreFilterStateAddRemovePod, TestPreFilterStateClone
# ---------------------------------------------------------------------------------------------
LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
SELECTOR1 = {"foo": "bar"}
ANTI_FOO_BAR = [In("foo", "region", ["bar"])]
COMPLEX = [In("foo", "region", ["bar", "buzz"]), NotIn("service", "zone", ["bar", "security", "test"])]


def _abc_nodes():
    return [node("nodeA", LABEL1), node("nodeB", LABEL2), node("nodeC", LABEL3)]


ADD_REMOVE_CASES = [
    ("anti-affinity terms updated",
     pod(name="pending", labels=SELECTOR1, anti=ANTI_FOO_BAR),
     [pod(name="p1", labels=SELECTOR1, node="nodeA"), pod(name="p2", node="nodeC", anti=ANTI_FOO_BAR)],
     pod(name="addedPod", labels=SELECTOR1, node="nodeB", anti=ANTI_FOO_BAR),
     {("region", "r1"): 2}, {}),
    ("complex anti-affinity terms updated",
     pod(name="pending", labels=SELECTOR1, anti=COMPLEX),
     [pod(name="p1", labels=SELECTOR1, node="nodeA"), pod(name="p2", node="nodeC", anti=ANTI_FOO_BAR)],
     pod(name="addedPod", labels=SELECTOR1, node="nodeA", anti=COMPLEX),
     {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1}, {}),
    ("affinity and anti-affinity updated",
     pod(name="pending", labels=SELECTOR1, aff=COMPLEX),
     [pod(name="p1", labels=SELECTOR1, node="nodeA"), pod(name="p2", node="nodeC", anti=ANTI_FOO_BAR, aff=COMPLEX)],
     pod(name="addedPod", labels=SELECTOR1, node="nodeA", anti=COMPLEX),
     {}, {("region", "r1"): 2, ("zone", "z11"): 2}),
]


def _counts(s: PreFilterState):
    return (s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts)


@pytest.mark.parametrize("name,pending,existing,added,want_anti,want_aff", ADD_REMOVE_CASES,
                         ids=[c[0] for c in ADD_REMOVE_CASES])
def test_pre_filter_state_add_remove_pod(name, pending, existing, added, want_anti, want_aff):
    def get_state(pods):
        h, pl = setup(pods, _abc_nodes())
        cs = new_state()
        _, st = pl.pre_filter(cs, pending, h.snapshot.list())
        assert st is None
        return h, pl, cs, cs.read(PRE_FILTER_STATE_KEY)

    _, _, _, all_pods_state = get_state(existing + [added])
    h, pl, cs, state = get_state(existing)
    original = state.clone()
    ni = h.snapshot.get(added.node_name)
    assert pl.add_pod(cs, pending, PodInfo.of(added), ni) is None
    assert state.anti_affinity_counts == want_anti
    assert state.affinity_counts == want_aff
    assert _counts(all_pods_state) == _counts(state)
    assert pl.remove_pod(cs, pending, PodInfo.of(added), ni) is None
    assert _counts(original) == _counts(state)


def test_pre_filter_state_clone():
    s = PreFilterState(pod(), [], [], None)
    s.existing_anti_affinity_counts = {("name", "node1"): 1, ("name", "node2"): 1}
    s.affinity_counts = {("name", "nodeA"): 1, ("name", "nodeC"): 2}
    s.anti_affinity_counts = {("name", "nodeN"): 3, ("name", "nodeM"): 1}
    c = s.clone()
    assert c is not s
    assert _counts(c) == _counts(s)
    c.affinity_counts[("name", "nodeA")] = 5
    assert s.affinity_counts[("name", "nodeA")] == 1


def test_cycle_state_clone_isolates_add_pod():
    """AddPod on a cloned CycleState (nominated pods) leaves the original state alone."""
    p = pod(name="pending", labels=SELECTOR1, anti=ANTI_FOO_BAR)
    h, pl = setup([], _abc_nodes())
    cs = new_state()
    pl.pre_filter(cs, p, h.snapshot.list())
    cs2 = cs.clone()
    pl.add_pod(cs2, p, PodInfo.of(pod(labels=SELECTOR1, node="nodeA")), h.snapshot.get("nodeA"))
    assert cs2.read(PRE_FILTER_STATE_KEY).anti_affinity_counts == {("region", "r1"): 1}
    assert cs.read(PRE_FILTER_STATE_KEY).anti_affinity_counts == {}
    assert pl.filter(cs, p, h.snapshot.get("nodeB")) is None
    assert pl.filter(cs2, p, h.snapshot.get("nodeB")) == status(UNSCH, ANTI)


# ---------------------------------------------------------------------------------------------
# filtering_test.go: TestGetTPMapMatchingIncomingAffinityAntiAffinity
# ---------------------------------------------------------------------------------------------
def _normal(*labels):
    return pod(name="normal-" + "".join(labels), node="nodeA", labels={l: "" for l in labels})


INCOMING_CASES = [
    ("nil test", [], pod(name="aaa-normal"), {}, {}),
    ("incoming pod without affinity", [_normal("aaa")], pod(name="aaa-normal"), {}, {}),
    ("no pod has label that violates", [_normal("bbb")],
     pod(aff=[Exists("aaa", "hostname")], anti=[Exists("aaa", "hostname")]), {}, {}),
    ("single term case", [_normal("aaa")],
     pod(aff=[Exists("aaa", "hostname")], anti=[Exists("aaa", "hostname")]),
     {("hostname", "nodeA"): 1}, {("hostname", "nodeA"): 1}),
    ("multiple terms case", [_normal("aaa", "bbb")],
     pod(aff=[Exists("aaa", "hostname"), Exists("bbb", "hostname")], anti=[Exists("aaa", "hostname")]),
     {("hostname", "nodeA"): 2}, {("hostname", "nodeA"): 1}),
    ("not match affinity but matches anti-affinity", [_normal("aaa")],
     pod(aff=[Exists("aaa", "hostname"), Exists("bbb", "hostname")],
         anti=[Exists("aaa", "hostname"), Exists("bbb", "hostname")]),
     {}, {("hostname", "nodeA"): 1}),
    ("anti-affinity partial term - case 1", [_normal("aaa", "bbb")],
     pod(aff=[Exists("aaa", "hostname"), Exists("ccc", "hostname")],
         anti=[Exists("aaa", "hostname"), Exists("ccc", "hostname")]),
     {}, {("hostname", "nodeA"): 1}),
    ("anti-affinity partial term - case 2", [_normal("bbb")],
     pod(aff=[Exists("aaa", "hostname"), Exists("bbb", "hostname")],
         anti=[Exists("aaa", "hostname"), Exists("bbb", "hostname")]),
     {}, {("hostname", "nodeA"): 1}),
]


@pytest.mark.parametrize("name,existing,p,want_aff,want_anti", INCOMING_CASES, ids=[c[0] for c in INCOMING_CASES])
def test_get_incoming_affinity_anti_affinity_counts(name, existing, p, want_aff, want_anti):
    h, _ = setup(existing, [node("nodeA", {"hostname": "nodeA"})])
    pi = PodInfo.of(p)
    aff, anti = get_incoming_affinity_anti_affinity_counts(pi.required_affinity_terms,
                                                           pi.required_anti_affinity_terms, h.snapshot.list())
    assert aff == want_aff
    assert anti == want_anti


# ---------------------------------------------------------------------------------------------
# scoring_test.go: TestPreferredAffinity
# ---------------------------------------------------------------------------------------------
RG_CHINA_AZ = {"region": "China", "az": "az1"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}
STAY_WITH_S1_IN_REGION = dict(pref_aff=[weighted(5, In("security", "region", ["S1"]))])
STAY_WITH_S2_IN_REGION = dict(pref_aff=[weighted(6, In("security", "region", ["S2"]))])
AFFINITY3 = dict(pref_aff=[
    weighted(8, exprs_term([{"key": "security", "operator": "NotIn", "values": ["S1"]},
                            {"key": "security", "operator": "In", "values": ["S2"]}], "region")),
    weighted(2, exprs_term([{"key": "security", "operator": "Exists"},
                            {"key": "wrongkey", "operator": "DoesNotExist"}], "region"))])
HARD_AFFINITY = dict(aff=[In("security", "region", ["S1", "value2"]),
                          exprs_term([{"key": "security", "operator": "Exists"},
                                      {"key": "wrongkey", "operator": "DoesNotExist"}], "region")])
AWAY_FROM_S1_IN_AZ = dict(pref_anti=[weighted(5, In("security", "az", ["S1"]))])
AWAY_FROM_S2_IN_AZ = dict(pref_anti=[weighted(5, In("security", "az", ["S2"]))])
STAY_S1_AWAY_S2 = dict(pref_aff=[weighted(8, In("security", "region", ["S1"]))],
                       pref_anti=[weighted(5, In("security", "az", ["S2"]))])
_TEAM1_SEL = {"matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]}
AFFINITY_NS_SELECTOR = dict(pref_aff=[weighted(5, In("security", "region", ["S1"], namespaces=["subteam2.team2"],
                                                     ns_selector=_TEAM1_SEL))])
ANTI_AFFINITY_NS_SELECTOR = dict(pref_anti=[weighted(5, In("security", "region", ["S1"],
                                                           namespaces=["subteam2.team2"], ns_selector=_TEAM1_SEL))])


def _n3(a=RG_CHINA, b=RG_INDIA, c=AZ1):
    return [node("node1", a), node("node2", b), node("node3", c)]


PREFERRED_CASES = [
    ("all nodes same priority as Affinity is nil", pod(labels=S1), [], _n3(), None, SKIP, False),
    ("Affinity: matching topology key & pods get high score",
     pod(labels=S1, **STAY_WITH_S1_IN_REGION),
     [pod(node="node1", labels=S1), pod(node="node2", labels=S2), pod(node="node3", labels=S1)],
     _n3(), [MAX, 0, 0], None, False),
    ("same topology key & value have the same score",
     pod(**STAY_WITH_S1_IN_REGION), [pod(node="node1", labels=S1)],
     _n3(RG_CHINA, RG_CHINA_AZ, RG_INDIA), [MAX, MAX, 0], None, False),
    ("region with more matches gets the high score",
     pod(labels=S1, **STAY_WITH_S2_IN_REGION),
     [pod(node="node1", labels=S2), pod(node="node1", labels=S2), pod(node="node2", labels=S2),
      pod(node="node3", labels=S2), pod(node="node4", labels=S2), pod(node="node5", labels=S2)],
     [node("node1", RG_CHINA), node("node2", RG_INDIA), node("node3", RG_CHINA), node("node4", RG_CHINA),
      node("node5", RG_INDIA)], [MAX, 0, MAX, MAX, 0], None, False),
    ("different label operators and values",
     pod(labels=S1, **AFFINITY3),
     [pod(node="node1", labels=S1), pod(node="node2", labels=S2), pod(node="node3", labels=S1)],
     _n3(), [20, MAX, 0], None, False),
    ("affinity symmetry: existing pods' preferred terms",
     pod(labels=S2),
     [pod(node="node1", labels=S1, **STAY_WITH_S1_IN_REGION), pod(node="node2", labels=S2, **STAY_WITH_S2_IN_REGION)],
     _n3(), [0, MAX, 0], None, False),
    ("affinity symmetry with namespace selector",
     pod(ns="subteam1.team1", labels=S1),
     [pod(node="node1", labels=S1, **AFFINITY_NS_SELECTOR), pod(node="node2", labels=S2, **STAY_WITH_S2_IN_REGION)],
     _n3(), [MAX, 0, 0], None, False),
    ("anti-affinity symmetry with namespace selector",
     pod(ns="subteam1.team1", labels=S1),
     [pod(node="node1", labels=S1, **ANTI_AFFINITY_NS_SELECTOR),
      pod(node="node2", labels=S2, **STAY_WITH_S2_IN_REGION)],
     _n3(), [0, MAX, MAX], None, False),
    ("affinity symmetry: existing pods' required terms",
     pod(labels=S1),
     [pod(node="node1", labels=S1, **HARD_AFFINITY), pod(node="node2", labels=S2, **HARD_AFFINITY)],
     _n3(), [MAX, MAX, 0], None, False),
    ("anti-affinity: non-matching node gets high score",
     pod(labels=S1, **AWAY_FROM_S1_IN_AZ), [pod(node="node1", labels=S1), pod(node="node2", labels=S2)],
     [node("node1", AZ1), node("node2", RG_CHINA)], [0, MAX], None, False),
    ("anti-affinity: node without the topology key gets high score",
     pod(labels=S1, **AWAY_FROM_S1_IN_AZ), [pod(node="node1", labels=S1), pod(node="node2", labels=S1)],
     [node("node1", AZ1), node("node2", RG_CHINA)], [0, MAX], None, False),
    ("anti-affinity: node with more matches gets low score",
     pod(labels=S1, **AWAY_FROM_S1_IN_AZ),
     [pod(node="node1", labels=S1), pod(node="node1", labels=S1), pod(node="node2", labels=S2)],
     [node("node1", AZ1), node("node2", RG_INDIA)], [0, MAX], None, False),
    ("anti-affinity symmetry",
     pod(labels=S2),
     [pod(node="node1", labels=S1, **AWAY_FROM_S2_IN_AZ), pod(node="node2", labels=S2, **AWAY_FROM_S1_IN_AZ)],
     [node("node1", AZ1), node("node2", AZ2)], [0, MAX], None, False),
    ("affinity and anti-affinity",
     pod(labels=S1, **STAY_S1_AWAY_S2), [pod(node="node1", labels=S1), pod(node="node2", labels=S1)],
     [node("node1", RG_CHINA), node("node2", AZ1)], [MAX, 0], None, False),
    ("affinity and anti-affinity, same labels",
     pod(labels=S1, **STAY_S1_AWAY_S2),
     [pod(node="node1", labels=S1), pod(node="node1", labels=S1), pod(node="node2", labels=S1),
      pod(node="node3", labels=S1), pod(node="node3", labels=S1), pod(node="node4", labels=S1),
      pod(node="node5", labels=S1)],
     [node("node1", RG_CHINA_AZ), node("node2", RG_INDIA), node("node3", RG_CHINA), node("node4", RG_CHINA),
      node("node5", RG_INDIA)], [MAX, 0, MAX, MAX, 0], None, False),
    ("affinity, anti-affinity and symmetry",
     pod(labels=S1, **STAY_S1_AWAY_S2),
     [pod(node="node1", labels=S1), pod(node="node2", labels=S2), pod(node="node3", **STAY_S1_AWAY_S2),
      pod(node="node4", **AWAY_FROM_S1_IN_AZ)],
     [node("node1", RG_CHINA), node("node2", AZ1), node("node3", RG_INDIA), node("node4", AZ2)],
     [MAX, 0, MAX, 0], None, False),
    ("no panic when partial nodes in a topology have pods with affinity",
     pod(labels=S1), [pod(node="node1", labels=S1), pod(node="node2", **STAY_S1_AWAY_S2)],
     [node("node1", RG_CHINA), node("node2", RG_CHINA)], [0, 0], None, False),
    ("affinity with pods matching NamespaceSelector",
     pod(ns="subteam1.team1", labels=S1, **AFFINITY_NS_SELECTOR),
     [pod(node="node1", ns="subteam1.team1", labels=S1), pod(node="node1", ns="subteam1.team1", labels=S1),
      pod(node="node1", ns="subteam1.team2", labels=S1), pod(node="node2", ns="subteam2.team1", labels=S1)],
     [node("node1", RG_CHINA), node("node2", RG_INDIA)], [MAX, 0], None, False),
    ("affinity with pods matching NamespaceSelector and Namespaces",
     pod(ns="subteam1.team1", labels=S1, **AFFINITY_NS_SELECTOR),
     [pod(node="node1", ns="subteam1.team1", labels=S1), pod(node="node1", ns="subteam1.team1", labels=S1),
      pod(node="node1", ns="subteam2.team2", labels=S1), pod(node="node2", ns="subteam2.team1", labels=S1)],
     [node("node1", RG_CHINA), node("node2", RG_INDIA)], [MAX, 0], None, False),
    ("anti-affinity with pods matching NamespaceSelector",
     pod(ns="subteam1.team1", labels=S1, **ANTI_AFFINITY_NS_SELECTOR),
     [pod(node="node1", ns="subteam1.team1", labels=S1), pod(node="node1", ns="subteam1.team1", labels=S1),
      pod(node="node1", ns="subteam1.team2", labels=S1), pod(node="node2", ns="subteam2.team1", labels=S1)],
     [node("node1", RG_CHINA), node("node2", RG_INDIA)], [0, MAX], None, False),
    ("anti-affinity with pods matching NamespaceSelector and Namespaces",
     pod(ns="subteam1.team1", labels=S1, **ANTI_AFFINITY_NS_SELECTOR),
     [pod(node="node1", ns="subteam1.team1", labels=S1), pod(node="node1", ns="subteam1.team1", labels=S1),
      pod(node="node1", ns="subteam2.team2", labels=S1), pod(node="node2", ns="subteam2.team1", labels=S1)],
     [node("node1", RG_CHINA), node("node2", RG_INDIA)], [0, MAX], None, False),
    ("ignore preferred terms of existing pods",
     pod(labels=S2),
     [pod(node="node1", labels=S1, **STAY_S1_AWAY_S2), pod(node="node2", labels=S2, **STAY_WITH_S2_IN_REGION)],
     [node("node1", RG_CHINA), node("node2", RG_INDIA)], None, SKIP, True),
    ("do not ignore preferred terms of existing pods",
     pod(labels=S2),
     [pod(node="node1", labels=S1, **STAY_S1_AWAY_S2), pod(node="node2", labels=S2, **STAY_WITH_S2_IN_REGION)],
     [node("node1", RG_CHINA), node("node2", RG_INDIA)], [0, MAX], None, False),
    ("no nodes to score", pod(labels=S2), [], [], None, SKIP, False),
]


def run_score(p, pods, nodes, args, objects=NAMESPACES):
    h, pl = setup(pods, nodes, objects, args)
    state = new_state()
    st = pl.pre_score(state, p, h.snapshot.list())
    if st is not None:
        return st, None, None
    raw = []
    for n in nodes:
        s, sst = pl.score(state, p, h.snapshot.get(n.name))
        assert sst is None
        raw.append(NodeScore(n.name, s))
    scores = [NodeScore(x.name, x.score) for x in raw]
    assert pl.normalize_score(state, p, scores) is None
    return None, [x.score for x in raw], [x.score for x in scores]


@pytest.mark.parametrize("name,p,pods,nodes,want,want_status,ignore", PREFERRED_CASES,
                         ids=[c[0] for c in PREFERRED_CASES])
def test_preferred_affinity(name, p, pods, nodes, want, want_status, ignore):
    st, _, got = run_score(p, pods, nodes, {"hardPodAffinityWeight": 1,
                                            "ignorePreferredTermsOfExistingPods": ignore})
    assert st == want_status
    if st is None:
        assert got == want


def test_raw_scores_affinity3():
    """node1 (China): S1 pod matches only the weight-2 term -> 2; node2 (India): S2 pod matches
    both -> 8+2 = 10; node3 has no region -> 0. Normalised: (2-0)/(10-0)*100 = 20."""
    _, raw, norm = run_score(pod(labels=S1, **AFFINITY3),
                             [pod(node="node1", labels=S1), pod(node="node2", labels=S2),
                              pod(node="node3", labels=S1)], _n3(), None)
    assert raw == [2, 10, 0]
    assert norm == [20, MAX, 0]


@pytest.mark.parametrize("kind", ["pref_aff", "pref_anti"])
def test_invalid_labels_fail_pre_score(kind):
    p = pod(**{kind: [weighted(8, In("security", "region", ["{{.bad-value.}}"]))]})
    st, _, _ = run_score(p, [], [node("node1", RG_CHINA), node("node2", RG_CHINA)], None)
    assert st is not None and st.code == Code.Error
    assert 'Invalid value: "{{.bad-value.}}"' in st.message()


def test_pre_score_parse_error():
    p = pod(pref_aff=[weighted(8, {"labelSelector": {"matchExpressions": [
        {"key": "security", "operator": "In", "values": []}]}, "topologyKey": "region"})])
    st, _, _ = run_score(p, [], [node("node1", RG_CHINA)], None)
    assert st.code == Code.Error
    assert st.message().startswith("failed to parse pod: preferredAffinityTerms: ")


# ---------------------------------------------------------------------------------------------
# scoring_test.go: TestPreferredAffinityWithHardPodAffinitySymmetricWeight
# ---------------------------------------------------------------------------------------------
SERVICE_S1 = {"service": "S1"}
HARD_POD_AFFINITY = dict(aff=[In("service", "region", ["S1"], namespaces=["", "subteam2.team2"],
                                 ns_selector=_TEAM1_SEL)])

HARD_WEIGHT_CASES = [
    ("with default weight", pod(labels=SERVICE_S1), 1, [MAX, MAX, 0], None),
    ("with zero weight", pod(labels=SERVICE_S1), 0, None, SKIP),
    ("with no matching namespace", pod(ns="subteam1.team2", labels=SERVICE_S1), 1, None, SKIP),
    ("with matching NamespaceSelector", pod(ns="subteam1.team1", labels=SERVICE_S1), 1, [MAX, MAX, 0], None),
    ("with matching Namespaces", pod(ns="subteam2.team2", labels=SERVICE_S1), 1, [MAX, MAX, 0], None),
]


@pytest.mark.parametrize("name,p,weight,want,want_status", HARD_WEIGHT_CASES, ids=[c[0] for c in HARD_WEIGHT_CASES])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(name, p, weight, want, want_status):
    pods = [pod(node="node1", **HARD_POD_AFFINITY), pod(node="node2", **HARD_POD_AFFINITY)]
    st, _, got = run_score(p, pods, _n3(), {"hardPodAffinityWeight": weight})
    assert st == want_status
    if st is None:
        assert got == want


def test_hard_pod_affinity_weight_scales_raw_score():
    pods = [pod(node="node1", **HARD_POD_AFFINITY)]
    _, raw, norm = run_score(pod(labels=SERVICE_S1), pods, _n3(), {"hardPodAffinityWeight": 7})
    assert raw == [7, 0, 0]
    assert norm == [MAX, 0, 0]


# ---------------------------------------------------------------------------------------------
# NormalizeScore arithmetic
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw,want", [
    ([0, 0, 0], [0, 0, 0]),
    ([-5, 0, 5], [0, 50, 100]),
    ([10, 30, 0], [33, 100, 0]),
    ([-3, -1, -2], [0, 100, 50]),
    ([1, 2, 3, 4, 5, 6, 7], [0, 16, 33, 50, 66, 83, 100]),
    ([0, 29, 100], [0, 28, 100]),  # float64 100*(29/100) = 28.999999999999996 -> 28
])
def test_normalize_scores(raw, want):
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    normalize_scores(scores)
    assert [s.score for s in scores] == want


# ---------------------------------------------------------------------------------------------
# namespaceSelector quirks and namespace labels
# ---------------------------------------------------------------------------------------------
def test_namespace_selector_on_metadata_name_label():
    """Every namespace carries kubernetes.io/metadata.name, even without a Namespace object."""
    p = pod(ns="default", aff=[In("app", "region", ["db"], ns_selector={
        "matchLabels": {"kubernetes.io/metadata.name": "data"}})])
    pods = [pod(ns="data", labels={"app": "db"}, node="node1")]
    h, pl = setup(pods, [node("node1", RG_CHINA), node("node2", RG_INDIA)])
    state = new_state()
    assert pl.pre_filter(state, p, h.snapshot.list())[1] is None
    assert pl.filter(state, p, h.snapshot.get("node1")) is None
    assert pl.filter(state, p, h.snapshot.get("node2")) == status(UNRES, AFF)


def test_merged_term_keeps_namespace_selector():
    """mergeAffinityTermNamespacesIfNotEmpty changes a copy of the term: the original
    namespaceSelector stays, and a selector matching empty labels (NotIn) then matches pods of
    every namespace (v1.34 behaviour)."""
    p = pod(ns="a", anti=[In("app", "region", ["web"], ns_selector={
        "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]})])
    pods = [pod(ns="prod-ns", labels={"app": "web"}, node="node1")]
    h, pl = setup(pods, [node("node1", RG_CHINA), node("node2", RG_INDIA)],
                  [namespace("a"), namespace("prod-ns", {"env": "prod"})])
    state = new_state()
    assert pl.pre_filter(state, p, h.snapshot.list())[1] is None
    assert pl.filter(state, p, h.snapshot.get("node1")) == status(UNSCH, ANTI)
    assert pl.filter(state, p, h.snapshot.get("node2")) is None


# ---------------------------------------------------------------------------------------------
# args
# ---------------------------------------------------------------------------------------------
def test_set_defaults():
    assert InterPodAffinity.set_defaults({}) == {"hardPodAffinityWeight": 1,
                                                 "ignorePreferredTermsOfExistingPods": False}
    assert InterPodAffinity.set_defaults({"hardPodAffinityWeight": 0})["hardPodAffinityWeight"] == 0


@pytest.mark.parametrize("w,ok", [(0, True), (1, True), (100, True), (-1, False), (101, False)])
def test_validate_args(w, ok):
    errs = InterPodAffinity.validate_args({"hardPodAffinityWeight": w})
    if ok:
        assert errs == []
    else:
        assert errs == [("hardPodAffinityWeight", f"Invalid value: {w}: not in valid range [0, 100]")]


def test_new_rejects_invalid_args():
    with pytest.raises(ValueError, match=r"hardPodAffinityWeight: Invalid value: 101"):
        InterPodAffinity({"hardPodAffinityWeight": 101}, FakeHandle())


# ---------------------------------------------------------------------------------------------
# plugin_test.go: EventsToRegister and the queueing hints (v1.34 semantics)
# ---------------------------------------------------------------------------------------------
def test_events_to_register():
    _, pl = setup([], [])
    events = [e.event for e in pl.events_to_register()]
    assert events == [
        ClusterEvent(EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
    ]


Q, SKIPQ = QueueingHint.Queue, QueueingHint.QueueSkip
P_AFF = lambda: pod(name="p", uid="p", aff=[In("service", "region", ["securityscan", "value2"])])  # noqa: E731
P_AFF2 = lambda: pod(name="p", uid="p", aff=[Exists("aaa", "hostname"), Exists("bbb", "hostname")])  # noqa: E731
P_ANTI = lambda: pod(name="p", uid="p", anti=[In("service", "region", ["securityscan", "value2"])])  # noqa: E731


def _other(labels, node="fake-node", **kw):
    return pod(name="other", uid="other", node=node, labels=labels, **kw)


def _nominated(p, node="fake-node"):
    raw = dict(p.raw)
    raw["status"] = {"nominatedNodeName": node}
    return Pod(raw)


POD_HINT_CASES = [
    ("add a pod which matches the pod affinity", P_AFF(), None, _other({"service": "securityscan"}), Q),
    ("add an un-scheduled pod", P_AFF(), None, _other({"service": "securityscan"}, node=""), SKIPQ),
    ("add a pod which doesn't match the pod affinity", P_AFF(), None, _other({"aaa": "a"}), SKIPQ),
    ("update a pod from non-match to match pod affinity", P_AFF(), _other({"aaa": "a"}),
     _other({"service": "securityscan"}), Q),
    ("matches both before and after", P_AFF(), _other({"service": "value2"}), _other({"service": "securityscan"}),
     SKIPQ),
    ("update an un-scheduled pod", P_AFF(), _other({"aaa": "a"}, node=""),
     _other({"service": "securityscan"}, node=""), SKIPQ),
    ("update a pod from match to non-match", P_AFF(), _other({"service": "securityscan"}), _other({"aaa": "a"}),
     SKIPQ),
    ("match to non-match - multiple terms", P_AFF2(), _other({"aaa": "a"}), _other({"service": "securityscan"}),
     SKIPQ),
    ("non-match to match - multiple terms", P_AFF2(), _other({"aaa": "a"}), _other({"aaa": "", "bbb": ""}), Q),
    # v1.34/v1.35 have no "the updated pod is the target pod" check: an unscheduled pod is
    # skipped; v1.36 queues it
    ("updated pod is the target pod", pod(name="p", uid="p", labels={"foo": "baz"}),
     pod(name="p", uid="p", labels={"foo": "bar"}), pod(name="p", uid="p", labels={"foo": "baz"}), (SKIPQ, Q)),
    # v1.36: a pod with a nominated node counts as placed
    ("add a nominated pod which matches the pod affinity", P_AFF(), None,
     _nominated(_other({"service": "securityscan"}, node="")), (SKIPQ, Q)),
    ("from satisfying anti-affinity to not", P_ANTI(), _other({"service": "securityscan"}),
     _other({"service": "aaaa"}), Q),
    ("from not satisfying anti-affinity to satisfying", P_ANTI(), _other({"service": "bbb"}),
     _other({"service": "securityscan"}), SKIPQ),
    ("delete a pod which doesn't match pod's anti-affinity", P_ANTI(), _other({"aaa": "a"}), None, SKIPQ),
    ("delete a pod which matches pod's anti-affinity", P_ANTI(), _other({"service": "securityscan"}), None, Q),
    # v1.34/v1.35 only look at the pending pod's own anti-affinity terms on delete; v1.36 also
    # at the deleted pod's
    ("delete a pod with anti-affinity that matches pending pod",
     pod(name="p", labels={"service": "securityscan"}),
     pod(node="fake-node", anti=[In("service", "region", ["securityscan", "value2"])]), None, (SKIPQ, Q)),
]


@pytest.mark.parametrize("name,p,old,new,want", POD_HINT_CASES, ids=[c[0] for c in POD_HINT_CASES])
def test_is_schedulable_after_pod_change(name, p, old, new, want):
    """plugin_test.go TestIsSchedulableAfterPodChange: (v1.34 and v1.35, v1.36) where they differ."""
    before, v136 = want if isinstance(want, tuple) else (want, want)
    for version, expected in (("v1.34", before), ("v1.35", before), ("v1.36", v136)):
        h = FakeHandle([], [])
        h.feature_gates = resolve(version)
        assert InterPodAffinity(None, h).is_schedulable_after_pod_change(p, old, new) == expected, version


P_ZONE_AFF = lambda: pod(name="p", aff=[In("service", "zone", ["securityscan", "value2"])])  # noqa: E731
P_REGION_AFF = lambda: pod(name="p", aff=[In("service", "region", ["securityscan", "value2"])])  # noqa: E731
P_ZONE_ANTI = lambda: pod(name="p", anti=[term(topo="zone", match_labels={"another": "label"})])  # noqa: E731

NODE_HINT_CASES = [
    ("add a new node with matched pod affinity topologyKey", P_ZONE_AFF(), None, node("node-a", {"zone": "zone1"}), Q),
    ("add a new node without matched topologyKey", P_REGION_AFF(), None, node("node-a", {"zone": "zone1"}), SKIPQ),
    ("update node label but not topologyKey", P_ZONE_AFF(), node("node-a", {"aaa": "a"}),
     node("node-a", {"aaa": "b"}), SKIPQ),
    ("update unrelated node label", P_ZONE_AFF(), node("node-a", {"zone": "zone1"}),
     node("node-a", {"zone": "zone1", "unrelated-label": "unrelated"}), SKIPQ),
    ("update node with different affinity topologyKey value", P_ZONE_AFF(), node("node-a", {"zone": "zone1"}),
     node("node-a", {"zone": "zone2"}), Q),
    ("update node to have the affinity topology label", P_ZONE_AFF(), node("node-a", {"aaa": "a"}),
     node("node-a", {"zone": "zone1"}), Q),
    ("add a new node with matched pod anti-affinity topologyKey", P_ZONE_ANTI(), None,
     node("node-a", {"zone": "zone1"}), Q),
    ("add a new node without matched pod anti-affinity topologyKey", P_ZONE_ANTI(), None, node("node-a"), Q),
    ("update unrelated node label (anti)", P_ZONE_ANTI(), node("node-a", {"zone": "zone1"}),
     node("node-a", {"zone": "zone1", "unrelated-label": "unrelated"}), SKIPQ),
    ("update node with different anti-affinity topologyKey value", P_ZONE_ANTI(), node("node-a", {"zone": "zone1"}),
     node("node-a", {"zone": "zone2"}), Q),
    ("update node to have the anti-affinity topology label", P_ZONE_ANTI(), node("node-a", {"aaa": "a"}),
     node("node-a", {"zone": "zone1"}), SKIPQ),
    ("update node label not to have anti-affinity topology label", P_ZONE_ANTI(), node("node-a", {"zone": "zone1"}),
     node("node-a", {"aaa": "a"}), Q),
]


@pytest.mark.parametrize("name,p,old,new,want", NODE_HINT_CASES, ids=[c[0] for c in NODE_HINT_CASES])
def test_is_schedulable_after_node_change(name, p, old, new, want):
    _, pl = setup([], [])
    assert pl.is_schedulable_after_node_change(p, old, new) == want
