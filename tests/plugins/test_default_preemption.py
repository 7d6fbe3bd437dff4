"""DefaultPreemption and the preemption evaluator: the table tests of
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go (TestPostFilter,
TestDryRunPreemption, TestSelectBestCandidate, TestCustomSelection, TestCustomOrdering,
TestPodEligibleToPreemptOthers, TestPreempt, TestPreEnqueue), run on a real Framework with the
in-tree NodeResourcesFit / InterPodAffinity / PodTopologySpread plugins.

Upstream draws the dry-run offset with rand.Int31n (the tests seed it with 4: offsets 4, 1, 3);
these tests pass those offsets to dry_run_preemption directly. Extender cases are left out (the
harness has no extenders)."""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Optional, Sequence

import pytest

from builtin_plugins import plugin_classes
from builtin_plugins.default_preemption import (DefaultPreemption, filter_pods_with_pdb_violation,
                                                pod_terminating_by_preemption)
from harness.api.objects import KubeObject, Node, Pod
from harness.cluster import Cluster
from harness.versions import resolve
from harness.framework import Code, CycleState, NodeToStatus, PodInfo, Status, hookimpl, Plugin
from harness.framework.preemption import (MAX_INT32, Victims, get_pod_start_time,
                                          more_important_pod, pick_one_node_for_preemption)
from harness.framework.runtime import Framework
from harness.scheduler.snapshot import Snapshot

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
LABEL_KEYS = ["hostname", "zone", "region"]

_index = itertools.count(1)


def epoch(ns: int) -> str:
    """metav1.NewTime(time.Unix(0, ns))."""
    return f"1970-01-01T00:00:00.{ns:09d}Z"


def pod(name: str, *, node: str = "", priority: Optional[int] = None, req: Optional[Dict] = None,
        labels: Optional[Dict[str, str]] = None, ns: str = "default", uid: str = "",
        start: Optional[str] = None, spec: Optional[Dict] = None, nominated: str = "",
        terminating: bool = False, conditions: Optional[List[Dict]] = None) -> Pod:
    """st.MakePod(): one container with the requests."""
    sp: Dict[str, Any] = {"containers": [{"name": "c", "image": "pause",
                                          "resources": {"requests": dict(req or {})}}],
                          "schedulerName": "default-scheduler"}
    if priority is not None:
        sp["priority"] = priority
    if node:
        sp["nodeName"] = node
    sp.update(spec or {})
    md: Dict[str, Any] = {"name": name, "namespace": ns, "uid": uid or name,
                          "labels": dict(labels or {}), "x-creationIndex": next(_index)}
    if terminating:
        md["deletionTimestamp"] = epoch(0)
    status: Dict[str, Any] = {}
    if start is not None:
        status["startTime"] = start
    if nominated:
        status["nominatedNodeName"] = nominated
    if conditions:
        status["conditions"] = conditions
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": sp, "status": status})


def node(name: str, capacity: Optional[Dict] = None, labels: Optional[Dict[str, str]] = None) -> Node:
    """st.MakeNode().Capacity(res): pods defaults to 32."""
    alloc = {"pods": "32"}
    alloc.update(capacity or {})
    return Node({"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": name, "labels": dict(labels or {}), "uid": name},
                 "status": {"capacity": dict(alloc), "allocatable": alloc}})


def topo_node(spec: str, capacity: Optional[Dict] = None) -> Node:
    """A node named "name/zone/region" as the upstream tests split it into labels."""
    parts = spec.split("/")
    return node(parts[0], capacity, {LABEL_KEYS[i]: v for i, v in enumerate(parts)})


def pdb(name: str, match_labels: Dict[str, str], allowed: int = 0, ns: str = "default",
        disrupted: Optional[Sequence[str]] = None) -> KubeObject:
    st: Dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        st["disruptedPods"] = {p: "2026-01-01T00:00:00Z" for p in disrupted}
    return KubeObject({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                       "metadata": {"name": name, "namespace": ns},
                       "spec": {"selector": {"matchLabels": dict(match_labels)}}, "status": st})


# ---------------------------------------------------------------------------------------------
# test plugins (pkg/scheduler/testing/framework fake plugins)
# ---------------------------------------------------------------------------------------------
ERR_REASON_FAKE = "Nodes failed the fake plugin"


class TestPlugin(Plugin):
    """Errors in AddPod/RemovePod on nodes labelled error=true."""

    __test__ = False
    name = "test-plugin"

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return None, None

    @hookimpl
    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info):
        if node_info.node.labels.get("error") == "true":
            return Status.error(f"failed to add pod: {pod_to_schedule.name}")
        return None

    @hookimpl
    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info):
        if node_info.node.labels.get("error") == "true":
            return Status.error(f"failed to remove pod: {pod_to_schedule.name}")
        return None


class FakeFilter(Plugin):
    """FakeFilterPlugin: counts its calls, fails the nodes of a code map."""

    name = "FakeFilter"
    codes: Dict[str, Code] = {}

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.num_filter_called = 0

    @hookimpl
    def filter(self, state, pod, node_info):
        self.num_filter_called += 1
        code = self.codes.get(node_info.node.name)
        if code is not None:
            return Status(code, f"injecting failure for pod {pod.name}")
        return None


class FalseFilter(Plugin):
    name = "FalseFilter"

    @hookimpl
    def filter(self, state, pod, node_info):
        return Status.unschedulable(ERR_REASON_FAKE)


class TrueFilter(Plugin):
    name = "TrueFilter"

    @hookimpl
    def filter(self, state, pod, node_info):
        return None


class MatchFilter(Plugin):
    name = "MatchFilter"

    @hookimpl
    def filter(self, state, pod, node_info):
        if pod.name == node_info.node.name:
            return None
        return Status.unschedulable(ERR_REASON_FAKE)


class FakeNominator:
    def __init__(self):
        self.nominated: Dict[str, List[PodInfo]] = {}

    def add(self, p: Pod, node_name: str) -> None:
        self.nominated.setdefault(node_name, []).append(PodInfo.of(p))

    def nominated_pods_for_node(self, node_name: str) -> List[PodInfo]:
        return list(self.nominated.get(node_name, []))


REGISTRY = {cls.name: cls for cls in plugin_classes()}
for _cls in (TestPlugin, FakeFilter, FalseFilter, TrueFilter, MatchFilter):
    REGISTRY[_cls.name] = _cls

FIT = "NodeResourcesFit"
IPA = "InterPodAffinity"
PTS = "PodTopologySpread"


class Env:
    """A Framework over a snapshot of `pods` on `nodes`, with DefaultPreemption as PostFilter."""

    def __init__(self, nodes: Sequence[Node], pods: Sequence[Pod], *, filters: Sequence[str] = (FIT,),
                 pre_filters: Optional[Sequence[str]] = None, pdbs: Sequence[KubeObject] = (),
                 args: Optional[Dict[str, Any]] = None, extra_pods: Sequence[Pod] = (),
                 fake_codes: Optional[Dict[str, Code]] = None, features: Any = None):
        self.cluster = Cluster(features)
        for o in list(nodes) + list(pods) + list(extra_pods) + list(pdbs):
            self.cluster.create(o, notify=False)
        self.snapshot = Snapshot.from_objects(pods, nodes)
        self.nominator = FakeNominator()
        FakeFilter.codes = dict(fake_codes or {})
        filter_names = list(filters)
        if pre_filters is None:
            pre_filters = [f for f in filter_names if f in (FIT, IPA, PTS)]
        profile = {
            "schedulerName": "default-scheduler",
            "plugins": {
                "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                "preFilter": {"enabled": [{"name": n} for n in pre_filters]},
                "filter": {"enabled": [{"name": n} for n in filter_names]},
                "postFilter": {"enabled": [{"name": "DefaultPreemption"}]},
                "bind": {"enabled": [{"name": "DefaultBinder"}]},
            },
            "pluginConfig": [{"name": "DefaultPreemption", "args": dict(args or {})}],
        }
        self.fw = Framework(profile, REGISTRY, snapshot=self.snapshot, cluster=self.cluster,
                            nominator=self.nominator, features=features)
        self.pl: DefaultPreemption = self.fw.plugins_map["DefaultPreemption"]

    def prefilter(self, p: Pod) -> CycleState:
        state = CycleState()
        _, s, _ = self.fw.run_pre_filter_plugins(state, p)
        assert s is None or s.is_success(), s
        return state

    def deleted(self, names: Sequence[str]) -> List[str]:
        return sorted(n for n in names if self.cluster.get("Pod", "default", n) is None)


def statuses(m: Dict[str, Code], absent: Code = Code.UnschedulableAndUnresolvable) -> NodeToStatus:
    return NodeToStatus({k: Status(v) for k, v in m.items()}, Status(absent))


# ---------------------------------------------------------------------------------------------
# TestPostFilter
# ---------------------------------------------------------------------------------------------
U, UU = Code.Unschedulable, Code.UnschedulableAndUnresolvable
POST_FILTER_CASES = [
    dict(name="pod with higher priority can be made schedulable",
         pod=lambda: pod("p", priority=HIGH),
         pods=lambda: [pod("p1", node="node1")],
         nodes=lambda: [node("node1", ONE_POD)],
         statuses={"node1": U}, want_node="node1", want=(Code.Success, [])),
    dict(name="pod with tied priority is still unschedulable",
         pod=lambda: pod("p"),
         pods=lambda: [pod("p1", node="node1")],
         nodes=lambda: [node("node1", ONE_POD)],
         statuses={"node1": U}, want_node="",
         want=(U, ["preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."])),
    dict(name="preemption should respect filteredNodesStatuses",
         pod=lambda: pod("p", priority=HIGH),
         pods=lambda: [pod("p1", node="node1")],
         nodes=lambda: [node("node1", ONE_POD)],
         statuses={"node1": UU}, want_node="",
         want=(U, ["preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."])),
    dict(name="preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
         pod=lambda: pod("p", priority=HIGH),
         pods=lambda: [pod("p1", node="node1")],
         nodes=lambda: [node("node1", ONE_POD)],
         statuses={}, want_node="",
         want=(U, ["preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."])),
    dict(name="pod can be made schedulable on one node",
         pod=lambda: pod("p", priority=MID),
         pods=lambda: [pod("p1", priority=HIGH, node="node1"), pod("p2", priority=LOW, node="node2")],
         nodes=lambda: [node("node1", ONE_POD), node("node2", ONE_POD)],
         statuses={"node1": U, "node2": U}, want_node="node2", want=(Code.Success, [])),
    dict(name="pod can be made schedulable on minHighestPriority node",
         pod=lambda: pod("p", priority=VERY_HIGH),
         pods=lambda: [
             pod("p1", labels={"test.kubernetes.io/is-violating-pdb": "non-violating"}, priority=HIGH, node="node1"),
             pod("p2", labels={"test.kubernetes.io/is-violating-pdb": "violating"}, priority=LOW, node="node1"),
             pod("p3", labels={"test.kubernetes.io/is-violating-pdb": "violating"}, priority=MID, node="node2")],
         pdbs=lambda: [pdb("violating-pdb", {"test.kubernetes.io/is-violating-pdb": "violating"}),
                       pdb("non-violating-pdb", {"test.kubernetes.io/is-violating-pdb": "non-violating"},
                           allowed=MAX_INT32)],
         nodes=lambda: [node("node1", ONE_POD), node("node2", ONE_POD)],
         statuses={"node1": U, "node2": U}, want_node="node2", want=(Code.Success, [])),
    dict(name="no candidate nodes found, no enough resource after removing low priority pods",
         pod=lambda: pod("p", priority=HIGH, req=LARGE),
         pods=lambda: [pod("p1", node="node1"), pod("p2", node="node2")],
         nodes=lambda: [node("node1", NODE_RES), node("node2", NODE_RES)],
         statuses={"node1": U, "node2": U}, want_node="",
         want=(U, ["preemption: 0/2 nodes are available: 2 Insufficient cpu."])),
    dict(name="no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
         pod=lambda: pod("p", priority=HIGH, req=LARGE),
         pods=lambda: [pod("p1", node="node1", priority=HIGH), pod("p2", node="node2"),
                       pod("p3", node="node3", priority=HIGH)],
         nodes=lambda: [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
         statuses={"node1": U, "node2": U, "node3": U}, want_node="",
         want=(U, ["preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                   "2 No preemption victims found for incoming pod."])),
    dict(name="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes "
              "don't have enough CPU resource",
         pod=lambda: pod("p", priority=HIGH, req=LARGE),
         pods=lambda: [pod("p1", node="node1"), pod("p2", node="node2")],
         nodes=lambda: [node(f"node{i}", NODE_RES) for i in range(1, 5)],
         statuses={"node1": U, "node2": U, "node4": UU}, want_node="",
         want=(U, ["preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                   "2 Preemption is not helpful for scheduling."])),
    dict(name="only one node but failed with TestPlugin",
         pod=lambda: pod("p", priority=HIGH, req=LARGE),
         pods=lambda: [pod("p1", node="node1")],
         nodes=lambda: [node("node1", LARGE, {"error": "true"})],
         statuses={"node1": U}, want_node=None,
         want=(Code.Error, ['preemption: running RemovePod on PreFilter plugin "test-plugin": '
                            'failed to remove pod: p'])),
    dict(name="one failed with TestPlugin and the other pass",
         pod=lambda: pod("p", priority=HIGH, req=LARGE),
         pods=lambda: [pod("p1", node="node1"), pod("p2", node="node2", req=MEDIUM)],
         nodes=lambda: [node("node1", LARGE, {"error": "true"}), node("node2", LARGE)],
         statuses={"node1": U, "node2": U}, want_node="node2", want=(Code.Success, [])),
]


@pytest.mark.parametrize("tc", POST_FILTER_CASES, ids=[c["name"] for c in POST_FILTER_CASES])
def test_post_filter(tc):
    p = tc["pod"]()
    env = Env(tc["nodes"](), tc["pods"](), filters=[FIT], pre_filters=[FIT, "test-plugin"],
              pdbs=tc.get("pdbs", lambda: [])(), extra_pods=[p])
    state = env.prefilter(p)
    result, status = env.pl.post_filter(state, p, statuses(tc["statuses"]))
    code, reasons = tc["want"]
    assert status.code == code
    assert status.get_reasons() == reasons
    if tc["want_node"] is None:
        assert result is None
    else:
        assert result is not None and result.nominated_node_name == tc["want_node"]
        assert result.nominating_mode == "ModeOverride"


def test_post_filter_through_framework_joins_the_message():
    """RunPostFilterPlugins keeps DefaultPreemption's rejection as the PostFilter message."""
    p = pod("p")
    env = Env([node("node1", ONE_POD)], [pod("p1", node="node1")], extra_pods=[p])
    state = env.prefilter(p)
    result, status = env.fw.run_post_filter_plugins(state, p, statuses({"node1": U}))
    assert status.code == Code.Unschedulable
    assert status.plugin == "DefaultPreemption"
    assert status.message() == "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    assert result.nominated_node_name == ""


def test_post_filter_preemption_policy_never():
    p = pod("p", priority=HIGH, spec={"preemptionPolicy": "Never"})
    env = Env([node("node1", ONE_POD)], [pod("p1", node="node1")], extra_pods=[p])
    result, status = env.pl.post_filter(env.prefilter(p), p, statuses({"node1": U}))
    assert result is None
    assert status.code == Code.Unschedulable
    assert status.get_reasons() == ["preemption: not eligible due to preemptionPolicy=Never."]


def test_post_filter_pod_not_in_lister():
    p = pod("p", priority=HIGH)
    env = Env([node("node1", ONE_POD)], [pod("p1", node="node1")])
    result, status = env.pl.post_filter(env.prefilter(p), p, statuses({"node1": U}))
    assert result is None and status.code == Code.Error
    assert status.get_reasons() == ['preemption: pod "p" not found']


# ---------------------------------------------------------------------------------------------
# TestDryRunPreemption
# ---------------------------------------------------------------------------------------------
def c(name: str, victims: Sequence[str], pdb_violations: int = 0):
    return (name, sorted(victims), pdb_violations)


DRY_RUN_CASES = [
    dict(name="a pod that does not fit on any node", plugins=["FalseFilter"],
         nodes=["node1", "node2"], test_pods=lambda: [pod("p", priority=HIGH)],
         init_pods=lambda: [pod("p1", node="node1", priority=MID), pod("p2", node="node2", priority=MID)],
         expected=[[]], calls=[2]),
    dict(name="a pod that fits with no preemption", plugins=["TrueFilter"],
         nodes=["node1", "node2"], test_pods=lambda: [pod("p", priority=HIGH)],
         init_pods=lambda: [pod("p1", node="node1", priority=MID), pod("p2", node="node2", priority=MID)],
         fake=U, expected=[[]], calls=[2]),
    dict(name="a pod that fits on one node with no preemption", plugins=["MatchFilter"],
         nodes=["node1", "node2"], test_pods=lambda: [pod("node1", priority=HIGH)],
         init_pods=lambda: [pod("p1", node="node1", priority=MID), pod("p2", node="node2", priority=MID)],
         fake=U, expected=[[]], calls=[2]),
    dict(name="a pod that fits on both nodes when lower priority pods are preempted", plugins=[FIT],
         nodes=["node1", "node2"], test_pods=lambda: [pod("p", priority=HIGH, req=LARGE)],
         init_pods=lambda: [pod("p1", node="node1", priority=MID, req=LARGE),
                            pod("p2", node="node2", priority=MID, req=LARGE)],
         expected=[[c("node1", ["p1"]), c("node2", ["p2"])]], calls=[4]),
    dict(name="a pod that would fit on the nodes, but other pods running are higher priority, "
              "no preemption would happen", plugins=[FIT],
         nodes=["node1", "node2"], test_pods=lambda: [pod("p", priority=LOW, req=LARGE)],
         init_pods=lambda: [pod("p1", node="node1", priority=MID, req=LARGE),
                            pod("p2", node="node2", priority=MID, req=LARGE)],
         expected=[[]], calls=[0]),
    dict(name="medium priority pod is preempted, but lower priority one stays as it is small", plugins=[FIT],
         nodes=["node1", "node2"], test_pods=lambda: [pod("p", priority=HIGH, req=LARGE)],
         init_pods=lambda: [pod("p1.1", node="node1", priority=LOW, req=SMALL),
                            pod("p1.2", node="node1", priority=MID, req=LARGE),
                            pod("p2", node="node2", priority=MID, req=LARGE)],
         expected=[[c("node1", ["p1.2"]), c("node2", ["p2"])]], calls=[5]),
    dict(name="mixed priority pods are preempted", plugins=[FIT],
         nodes=["node1", "node2"], test_pods=lambda: [pod("p", priority=HIGH, req=LARGE)],
         init_pods=lambda: [pod("p1.1", node="node1", priority=MID, req=SMALL),
                            pod("p1.2", node="node1", priority=LOW, req=SMALL),
                            pod("p1.3", node="node1", priority=MID, req=MEDIUM),
                            pod("p1.4", node="node1", priority=HIGH, req=SMALL),
                            pod("p2", node="node2", priority=HIGH, req=LARGE)],
         expected=[[c("node1", ["p1.2", "p1.3"])]], calls=[4]),
    dict(name="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
         plugins=[FIT],
         nodes=["node1", "node2"], test_pods=lambda: [pod("p", priority=HIGH, req=LARGE)],
         init_pods=lambda: [pod("p1.1", node="node1", priority=LOW, req=SMALL, start=epoch(5)),
                            pod("p1.2", node="node1", priority=LOW, req=SMALL, start=epoch(4)),
                            pod("p1.3", node="node1", priority=MID, req=MEDIUM, start=epoch(3)),
                            pod("p1.4", node="node1", priority=HIGH, req=SMALL, start=epoch(2)),
                            pod("p2", node="node2", priority=HIGH, req=LARGE, start=epoch(1))],
         expected=[[c("node1", ["p1.1", "p1.3"])]], calls=[4]),
    dict(name="pod with anti-affinity is preempted", plugins=[FIT, IPA],
         nodes=["node1", "node2"],
         test_pods=lambda: [pod("p", labels={"foo": ""}, priority=HIGH, req=SMALL)],
         init_pods=lambda: [
             pod("p1.1", node="node1", labels={"foo": ""}, priority=LOW, req=SMALL,
                 spec={"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                     {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
                      "topologyKey": "hostname"}]}}}),
             pod("p1.2", node="node1", priority=MID, req=SMALL),
             pod("p1.3", node="node1", priority=HIGH, req=SMALL),
             pod("p2", node="node2", priority=HIGH, req=SMALL)],
         expected=[[c("node1", ["p1.1"])]], calls=[3]),
    dict(name="preemption to resolve pod topology spread filter failure", plugins=[PTS],
         nodes=["node-a/zone1", "node-b/zone1", "node-x/zone2"],
         test_pods=lambda: [pod("p", labels={"foo": ""}, priority=HIGH, spec={"topologySpreadConstraints": [
             {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}},
             {"maxSkew": 1, "topologyKey": "hostname", "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}]})],
         init_pods=lambda: [pod("pod-a1", node="node-a", labels={"foo": ""}, priority=MID),
                            pod("pod-a2", node="node-a", labels={"foo": ""}, priority=LOW),
                            pod("pod-b1", node="node-b", labels={"foo": ""}, priority=LOW),
                            pod("pod-x1", node="node-x", labels={"foo": ""}, priority=HIGH),
                            pod("pod-x2", node="node-x", labels={"foo": ""}, priority=HIGH)],
         expected=[[c("node-a", ["pod-a2"]), c("node-b", ["pod-b1"])]], calls=[5]),
    dict(name="get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
         plugins=[FIT], nodes=["node1", "node2"], test_pods=lambda: [pod("p", priority=HIGH, req=LARGE)],
         init_pods=lambda: [pod("p1", node="node1", priority=MID, req=LARGE),
                            pod("p2", node="node2", priority=MID, req=LARGE)],
         fake=U, expected=[[]], calls=[2]),
    dict(name="preemption with violation of same pdb", plugins=[FIT],
         nodes=["node1"], test_pods=lambda: [pod("p", priority=HIGH, req=VERY_LARGE)],
         init_pods=lambda: [pod("p1.1", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
                            pod("p1.2", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM)],
         pdbs=lambda: [pdb("pdb", {"app": "foo"}, allowed=1)],
         expected=[[c("node1", ["p1.1", "p1.2"], 1)]], calls=[3]),
    dict(name="preemption with violation of the pdb with pod whose eviction was processed, "
              "the victim doesn't belong to DisruptedPods", plugins=[FIT],
         nodes=["node1"], test_pods=lambda: [pod("p", priority=HIGH, req=VERY_LARGE)],
         init_pods=lambda: [pod("p1.1", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
                            pod("p1.2", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM)],
         pdbs=lambda: [pdb("pdb", {"app": "foo"}, allowed=1, disrupted=["p2"])],
         expected=[[c("node1", ["p1.1", "p1.2"], 1)]], calls=[3]),
    dict(name="preemption with violation of the pdb with pod whose eviction was processed, "
              "the victim belongs to DisruptedPods", plugins=[FIT],
         nodes=["node1"], test_pods=lambda: [pod("p", priority=HIGH, req=VERY_LARGE)],
         init_pods=lambda: [pod("p1.1", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
                            pod("p1.2", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM)],
         pdbs=lambda: [pdb("pdb", {"app": "foo"}, allowed=1, disrupted=["p1.2"])],
         expected=[[c("node1", ["p1.1", "p1.2"], 0)]], calls=[3]),
    dict(name="preemption with violation of the pdb with pod whose eviction was processed, "
              "the victim which belongs to DisruptedPods is treated as 'nonViolating'", plugins=[FIT],
         nodes=["node1"], test_pods=lambda: [pod("p", priority=HIGH, req=VERY_LARGE)],
         init_pods=lambda: [pod("p1.1", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
                            pod("p1.2", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
                            pod("p1.3", node="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM)],
         pdbs=lambda: [pdb("pdb", {"app": "foo"}, allowed=1, disrupted=["p1.3"])],
         expected=[[c("node1", ["p1.1", "p1.2", "p1.3"], 1)]], calls=[4]),
    dict(name="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2", plugins=[FIT],
         args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
         nodes=[f"node{i}" for i in range(1, 6)], test_pods=lambda: [pod("p", priority=HIGH, req=LARGE)],
         init_pods=lambda: [pod(f"p{i}", node=f"node{i}", priority=MID, req=LARGE) for i in range(1, 6)],
         offsets=[4],  # cycle=0 => offset=4 => node5 (yes), node1 (yes)
         expected=[[c("node1", ["p1"]), c("node5", ["p5"])]], calls=[4]),
    dict(name="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2", plugins=[FIT],
         args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
         nodes=[f"node{i}" for i in range(1, 6)], test_pods=lambda: [pod("p", priority=HIGH, req=LARGE)],
         init_pods=lambda: [pod("p1", node="node1", priority=MID, req=LARGE),
                            pod("p2", node="node2", priority=VERY_HIGH, req=LARGE),
                            pod("p3", node="node3", priority=MID, req=LARGE),
                            pod("p4", node="node4", priority=MID, req=LARGE),
                            pod("p5", node="node5", priority=VERY_HIGH, req=LARGE)],
         offsets=[4],  # node5 (no), node1 (yes), node2 (no), node3 (yes)
         expected=[[c("node1", ["p1"]), c("node3", ["p3"])]], calls=[4]),
    dict(name="preemption offset across multiple scheduling cycles and wrap around", plugins=[FIT],
         args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
         nodes=[f"node{i}" for i in range(1, 6)],
         test_pods=lambda: [pod(f"tp{i}", priority=HIGH, req=LARGE) for i in range(1, 4)],
         init_pods=lambda: [pod(f"p{i}", node=f"node{i}", priority=MID, req=LARGE) for i in range(1, 6)],
         offsets=[4, 1, 3],
         expected=[[c("node1", ["p1"]), c("node5", ["p5"])],
                   [c("node2", ["p2"]), c("node3", ["p3"])],
                   [c("node4", ["p4"]), c("node5", ["p5"])]], calls=[4, 4, 4]),
    dict(name="preemption looks past numCandidates until a non-PDB violating node is found", plugins=[FIT],
         args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
         nodes=[f"node{i}" for i in range(1, 6)], test_pods=lambda: [pod("p", priority=HIGH, req=LARGE)],
         init_pods=lambda: [pod("p1", node="node1", labels={"app": "foo"}, priority=MID, req=LARGE),
                            pod("p2", node="node2", labels={"app": "foo"}, priority=MID, req=LARGE),
                            pod("p3", node="node3", priority=MID, req=LARGE),
                            pod("p4", node="node4", priority=MID, req=LARGE),
                            pod("p5", node="node5", labels={"app": "foo"}, priority=MID, req=LARGE)],
         pdbs=lambda: [pdb("pdb", {"app": "foo"}, allowed=0)],
         # node5 (yes, pdb), node1 (yes, pdb), node2 (no, pdb: the violating list is full), node3 (yes)
         offsets=[4],
         expected=[[c("node1", ["p1"], 1), c("node3", ["p3"]), c("node5", ["p5"], 1)]], calls=[8]),
]


@pytest.mark.parametrize("tc", DRY_RUN_CASES, ids=[c["name"] for c in DRY_RUN_CASES])
def test_dry_run_preemption(tc):
    nodes = [topo_node(n, VERY_LARGE) for n in tc["nodes"]]
    test_pods = tc["test_pods"]()
    fake = tc.get("fake")
    codes = {n: fake for n in tc["nodes"]} if fake is not None else {}
    env = Env(nodes, tc["init_pods"](), filters=["FakeFilter"] + tc["plugins"],
              pdbs=tc.get("pdbs", lambda: [])(), args=tc.get("args"), extra_pods=test_pods,
              fake_codes=codes)
    fake_plugin = env.fw.plugins_map["FakeFilter"]
    node_infos = sorted(env.snapshot.list(), key=lambda ni: ni.name)
    pdbs = env.pl.evaluator.pod_disruption_budgets()
    prev = 0
    for cycle, p in enumerate(test_pods):
        state = env.prefilter(p)
        offset, num = env.pl.get_offset_and_num_candidates(len(node_infos))
        assert offset == 0
        offset = tc.get("offsets", [0] * len(test_pods))[cycle]
        got, _, _ = env.pl.evaluator.dry_run_preemption(state, p, node_infos, pdbs, offset, num)
        got_rows = sorted((cand.name, sorted(v.name for v in cand.victims.pods), cand.victims.num_pdb_violations)
                          for cand in got)
        assert got_rows == sorted(tc["expected"][cycle]), f"cycle {cycle}"
        assert fake_plugin.num_filter_called - prev == tc["calls"][cycle], f"cycle {cycle}"
        prev = fake_plugin.num_filter_called


def test_dry_run_statuses_of_failed_nodes():
    """The statuses of the nodes without candidates feed the FitError message."""
    p = pod("p", priority=HIGH, req=LARGE)
    env = Env([node("node1", NODE_RES), node("node2", ONE_POD)],
              [pod("p1", node="node1"), pod("p2", node="node2", priority=HIGH)], extra_pods=[p])
    state = env.prefilter(p)
    got, m, err = env.pl.evaluator.dry_run_preemption(state, p, env.snapshot.list(), [], 0, 2)
    assert got == [] and err is None
    assert m.get("node1").get_reasons() == ["Insufficient cpu"]
    assert m.get("node2").code == Code.UnschedulableAndUnresolvable
    assert m.get("node2").get_reasons() == ["No preemption victims found for incoming pod"]


# ---------------------------------------------------------------------------------------------
# TestSelectBestCandidate
# ---------------------------------------------------------------------------------------------
SELECT_CASES = [
    dict(name="a pod that fits on both nodes when lower priority pods are preempted",
         nodes=["node1", "node2"], pod=lambda: pod("p", priority=HIGH, req=LARGE),
         pods=lambda: [pod("p1", node="node1", priority=MID, req=LARGE, start=epoch(0)),
                       pod("p2", node="node2", priority=MID, req=LARGE, start=epoch(0))],
         expected=["node1", "node2"]),
    dict(name="node with min highest priority pod is picked",
         nodes=["node1", "node2", "node3"], pod=lambda: pod("p", priority=HIGH, req=VERY_LARGE),
         pods=lambda: [pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=epoch(0)),
                       pod("p1.2", node="node1", priority=MID, req=LARGE, start=epoch(0)),
                       pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=epoch(0)),
                       pod("p2.2", node="node2", priority=LOW, req=MEDIUM, start=epoch(0)),
                       pod("p3.1", node="node3", priority=LOW, req=MEDIUM, start=epoch(0)),
                       pod("p3.2", node="node3", priority=LOW, req=MEDIUM, start=epoch(0))],
         expected=["node3"]),
    dict(name="when highest priorities are the same, minimum sum of priorities is picked",
         nodes=["node1", "node2", "node3"], pod=lambda: pod("p", priority=HIGH, req=VERY_LARGE),
         pods=lambda: [pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=epoch(0)),
                       pod("p1.2", node="node1", priority=MID, req=LARGE, start=epoch(0)),
                       pod("p2.1", node="node2", priority=MID, req=LARGE, start=epoch(0)),
                       pod("p2.2", node="node2", priority=LOW, req=MEDIUM, start=epoch(0)),
                       pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(0)),
                       pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=epoch(0))],
         expected=["node2"]),
    dict(name="when highest priority and sum are the same, minimum number of pods is picked",
         nodes=["node1", "node2", "node3"], pod=lambda: pod("p", priority=HIGH, req=VERY_LARGE),
         pods=lambda: [pod("p1.1", node="node1", priority=MID, req=SMALL, start=epoch(0)),
                       pod("p1.2", node="node1", priority=NEG, req=SMALL, start=epoch(0)),
                       pod("p1.3", node="node1", priority=MID, req=SMALL, start=epoch(0)),
                       pod("p1.4", node="node1", priority=NEG, req=SMALL, start=epoch(0)),
                       pod("p2.1", node="node2", priority=MID, req=LARGE, start=epoch(0)),
                       pod("p2.2", node="node2", priority=NEG, req=MEDIUM, start=epoch(0)),
                       pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(0)),
                       pod("p3.2", node="node3", priority=NEG, req=SMALL, start=epoch(0)),
                       pod("p3.3", node="node3", priority=LOW, req=SMALL, start=epoch(0))],
         expected=["node2"]),
    dict(name="sum of adjusted priorities is considered",
         nodes=["node1", "node2", "node3"], pod=lambda: pod("p", priority=HIGH, req=VERY_LARGE),
         pods=lambda: [pod("p1.1", node="node1", priority=MID, req=SMALL, start=epoch(0)),
                       pod("p1.2", node="node1", priority=NEG, req=SMALL, start=epoch(0)),
                       pod("p1.3", node="node1", priority=NEG, req=SMALL, start=epoch(0)),
                       pod("p2.1", node="node2", priority=MID, req=LARGE, start=epoch(0)),
                       pod("p2.2", node="node2", priority=NEG, req=MEDIUM, start=epoch(0)),
                       pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(0)),
                       pod("p3.2", node="node3", priority=NEG, req=SMALL, start=epoch(0)),
                       pod("p3.3", node="node3", priority=LOW, req=SMALL, start=epoch(0))],
         expected=["node2"]),
    dict(name="non-overlapping lowest high priority, sum priorities, and number of pods",
         nodes=["node1", "node2", "node3", "node4"], pod=lambda: pod("p", priority=VERY_HIGH, req=VERY_LARGE),
         pods=lambda: [pod("p1.1", node="node1", priority=MID, req=SMALL, start=epoch(0)),
                       pod("p1.2", node="node1", priority=LOW, req=SMALL, start=epoch(0)),
                       pod("p1.3", node="node1", priority=LOW, req=SMALL, start=epoch(0)),
                       pod("p2.1", node="node2", priority=HIGH, req=LARGE, start=epoch(0)),
                       pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(0)),
                       pod("p3.2", node="node3", priority=LOW, req=SMALL, start=epoch(0)),
                       pod("p3.3", node="node3", priority=LOW, req=SMALL, start=epoch(0)),
                       pod("p3.4", node="node3", priority=LOW, req=MEDIUM, start=epoch(0)),
                       pod("p4.1", node="node4", priority=MID, req=MEDIUM, start=epoch(0)),
                       pod("p4.2", node="node4", priority=MID, req=SMALL, start=epoch(0)),
                       pod("p4.3", node="node4", priority=MID, req=SMALL, start=epoch(0)),
                       pod("p4.4", node="node4", priority=NEG, req=SMALL, start=epoch(0))],
         expected=["node1"]),
    dict(name="same priority, same number of victims, different start time for each node's pod",
         nodes=["node1", "node2", "node3"], pod=lambda: pod("p", priority=HIGH, req=VERY_LARGE),
         pods=lambda: [pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
                       pod("p1.2", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
                       pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=epoch(3)),
                       pod("p2.2", node="node2", priority=MID, req=MEDIUM, start=epoch(3)),
                       pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(1)),
                       pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=epoch(1))],
         expected=["node2"]),
    dict(name="same priority, same number of victims, different start time for all pods",
         nodes=["node1", "node2", "node3"], pod=lambda: pod("p", priority=HIGH, req=VERY_LARGE),
         pods=lambda: [pod("p1.1", node="node1", priority=MID, req=MEDIUM, start=epoch(4)),
                       pod("p1.2", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
                       pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=epoch(5)),
                       pod("p2.2", node="node2", priority=MID, req=MEDIUM, start=epoch(1)),
                       pod("p3.1", node="node3", priority=MID, req=MEDIUM, start=epoch(3)),
                       pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=epoch(6))],
         expected=["node3"]),
    dict(name="different priority, same number of victims, different start time for all pods",
         nodes=["node1", "node2", "node3"], pod=lambda: pod("p", priority=HIGH, req=VERY_LARGE),
         pods=lambda: [pod("p1.1", node="node1", priority=LOW, req=MEDIUM, start=epoch(4)),
                       pod("p1.2", node="node1", priority=MID, req=MEDIUM, start=epoch(2)),
                       pod("p2.1", node="node2", priority=MID, req=MEDIUM, start=epoch(6)),
                       pod("p2.2", node="node2", priority=LOW, req=MEDIUM, start=epoch(1)),
                       pod("p3.1", node="node3", priority=LOW, req=MEDIUM, start=epoch(3)),
                       pod("p3.2", node="node3", priority=MID, req=MEDIUM, start=epoch(5))],
         expected=["node2"]),
]


@pytest.mark.parametrize("tc", SELECT_CASES, ids=[c["name"] for c in SELECT_CASES])
def test_select_best_candidate(tc):
    p = tc["pod"]()
    env = Env([node(n, VERY_LARGE) for n in tc["nodes"]], tc["pods"](), extra_pods=[p])
    state = env.prefilter(p)
    node_infos = env.snapshot.list()
    offset, num = env.pl.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = env.pl.evaluator.dry_run_preemption(state, p, node_infos, [], offset, num)
    s = env.pl.evaluator.select_candidate(candidates)
    assert s is not None and s.name in tc["expected"]


# ---------------------------------------------------------------------------------------------
# TestCustomSelection / TestCustomOrdering
# ---------------------------------------------------------------------------------------------
def pod_label_is_eligible(key, val):
    return lambda node_info, victim, preemptor: victim.pod.labels.get(key, None) == val


def node_name_is_eligible(name):
    return lambda node_info, victim, preemptor: node_info.node.name == name


def priority_below_threshold_cannot_preempt(min_preempting):
    return lambda node_info, victim, preemptor: preemptor.priority >= min_preempting


def priority_above_threshold_cannot_be_preempted(max_preemptible):
    return lambda node_info, victim, preemptor: victim.pod.priority <= max_preemptible


def _four(prio):
    return lambda: [
        pod("v1", labels={"preemptible": "no"}, node="node1", priority=MID, req=LARGE, start=epoch(0)),
        pod("v2", labels={"preemptible": "yes"}, node="node2", priority=MID, req=LARGE, start=epoch(0)),
        pod("v3", labels={"preemptible": "yes"}, node="node3", priority=LOW, req=LARGE, start=epoch(0)),
        pod("v4", node="node4", priority=LOW, req=LARGE, start=epoch(0))]


def _node1_five(v1_req):
    return lambda: [
        pod("v1", node="node1", priority=HIGH, req=v1_req, start=epoch(0)),
        pod("v2", node="node1", priority=MID, req=SMALL, start=epoch(0)),
        pod("v3", node="node1", priority=LOW, req=SMALL, start=epoch(0)),
        pod("v4", node="node2", priority=MID, req=LARGE, start=epoch(0)),
        pod("v5", node="node3", priority=LOW, req=LARGE, start=epoch(0))]


def _three():
    return [pod("v1", node="node1", priority=HIGH, req=LARGE, start=epoch(0)),
            pod("v2", node="node2", priority=MID, req=LARGE, start=epoch(0)),
            pod("v3", node="node3", priority=LOW, req=LARGE, start=epoch(0))]


CUSTOM_SELECTION_CASES = [
    dict(name="filter for matching pod label: high priority", eligible=pod_label_is_eligible("preemptible", "yes"),
         nodes=4, pod=lambda: pod("p1", priority=HIGH, req=LARGE), pods=_four(HIGH),
         expected={"node2": ["v2"], "node3": ["v3"]}),
    dict(name="filter for matching pod label: mid priority", eligible=pod_label_is_eligible("preemptible", "yes"),
         nodes=4, pod=lambda: pod("p2", priority=MID, req=LARGE), pods=_four(MID),
         expected={"node3": ["v3"]}),
    dict(name="filter for matching pod label: low priority", eligible=pod_label_is_eligible("preemptible", "yes"),
         nodes=4, pod=lambda: pod("p3", priority=LOW, req=LARGE), pods=_four(LOW), expected={}),
    dict(name="filter for matching victim node: high priority", eligible=node_name_is_eligible("node1"),
         nodes=3, pod=lambda: pod("p3", priority=HIGH, req=LARGE), pods=_node1_five(MEDIUM),
         expected={"node1": ["v2", "v3"]}),
    dict(name="filter for matching victim node: mid priority", eligible=node_name_is_eligible("node1"),
         nodes=3, pod=lambda: pod("p3", priority=MID, req=LARGE), pods=_node1_five(SMALL),
         expected={"node1": ["v3"]}),
    dict(name="filter for matching victim node: low priority", eligible=node_name_is_eligible("node1"),
         nodes=3, pod=lambda: pod("p3", priority=LOW, req=LARGE), pods=_node1_five(SMALL), expected={}),
    dict(name="only pods at or above specified priority can preempted: high priority",
         eligible=priority_below_threshold_cannot_preempt(HIGH),
         nodes=3, pod=lambda: pod("p1", priority=HIGH, req=LARGE), pods=_three,
         expected={"node2": ["v2"], "node3": ["v3"]}),
    dict(name="only pods at or above specified priority can preempted: mid priority",
         eligible=priority_below_threshold_cannot_preempt(HIGH),
         nodes=3, pod=lambda: pod("p2", priority=MID, req=LARGE), pods=_three, expected={}),
    dict(name="only pods at or below specified priority can be preempted: high priority",
         eligible=priority_above_threshold_cannot_be_preempted(MID),
         nodes=3, pod=lambda: pod("p1", priority=HIGH, req=LARGE), pods=_three,
         expected={"node2": ["v2"], "node3": ["v3"]}),
]


@pytest.mark.parametrize("tc", CUSTOM_SELECTION_CASES, ids=[c["name"] for c in CUSTOM_SELECTION_CASES])
def test_custom_selection(tc):
    p = tc["pod"]()
    env = Env([node(f"node{i}", VERY_LARGE) for i in range(1, tc["nodes"] + 1)], tc["pods"](), extra_pods=[p])
    state = env.prefilter(p)
    env.pl.is_eligible_pod = tc["eligible"]
    node_infos = env.snapshot.list()
    offset, num = env.pl.get_offset_and_num_candidates(len(node_infos))
    candidates, _, _ = env.pl.evaluator.dry_run_preemption(state, p, node_infos, [], offset, num)
    assert len(candidates) == len(tc["expected"])
    while candidates:
        selected = env.pl.evaluator.select_candidate(candidates)
        assert selected.name in tc["expected"]
        assert [v.name for v in selected.victims.pods] == tc["expected"][selected.name]
        candidates = [cand for cand in candidates if cand.name != selected.name]


def test_custom_ordering_select_newest_pods():
    p = pod("p2", priority=HIGH, req=LARGE)
    pods = [pod("v1", node="node1", priority=LOW, req=MEDIUM, start=epoch(2)),
            pod("v2", node="node1", priority=LOW, req=MEDIUM, start=epoch(0)),
            pod("v3", node="node1", priority=MID, req=MEDIUM, start=epoch(1))]
    env = Env([node("node1", VERY_LARGE)], pods, extra_pods=[p])
    state = env.prefilter(p)
    env.pl.more_important_pod = lambda a, b: get_pod_start_time(a) < get_pod_start_time(b)
    candidates, _, _ = env.pl.evaluator.dry_run_preemption(state, p, env.snapshot.list(), [], 0, 1)
    assert len(candidates) == 1
    assert [v.name for v in candidates[0].victims.pods] == ["v3", "v1"]


def test_custom_ordering_select_alphabetically_last_pods():
    p = pod("p2", priority=HIGH, req=LARGE)
    pods = [pod("foo", uid="v1", node="node1", priority=LOW, req=MEDIUM, start=epoch(0)),
            pod("bar", uid="v2", node="node1", priority=LOW, req=MEDIUM, start=epoch(0)),
            pod("baz", uid="v3", node="node1", priority=MID, req=MEDIUM, start=epoch(0))]
    env = Env([node("node1", VERY_LARGE)], pods, extra_pods=[p])
    state = env.prefilter(p)
    env.pl.more_important_pod = lambda a, b: a.name < b.name
    candidates, _, _ = env.pl.evaluator.dry_run_preemption(state, p, env.snapshot.list(), [], 0, 1)
    assert len(candidates) == 1
    assert [v.name for v in candidates[0].victims.pods] == ["baz", "foo"]


# ---------------------------------------------------------------------------------------------
# TestPodEligibleToPreemptOthers
# ---------------------------------------------------------------------------------------------
_DISRUPTION = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
ELIGIBLE_CASES = [
    dict(name="Pod with nominated node",
         pod=lambda: pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
         pods=lambda: [pod("p1", priority=LOW, node="node1", terminating=True)], nodes=["node1"],
         status=Status(UU, "node(s) had untolerated taint(s)"), expected=(True, "")),
    dict(name="Pod without nominated node",
         pod=lambda: pod("p_without_nominated_node", uid="p", priority=HIGH),
         pods=lambda: [], nodes=[], status=None, expected=(True, "")),
    dict(name="Pod with 'PreemptNever' preemption policy",
         pod=lambda: pod("p_with_preempt_never_policy", uid="p", priority=HIGH,
                         spec={"preemptionPolicy": "Never"}),
         pods=lambda: [], nodes=[], status=None,
         expected=(False, "not eligible due to preemptionPolicy=Never.")),
    dict(name="preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
         pod=lambda: pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
         pods=lambda: [pod("p1", priority=LOW, node="node1", terminating=True, conditions=_DISRUPTION)],
         nodes=["node1"], status=None,
         expected=(False, "not eligible due to a terminating pod on the nominated node.")),
    dict(name="non-victim Pods terminating",
         pod=lambda: pod("p_with_nominated_node", uid="p", priority=HIGH, nominated="node1"),
         pods=lambda: [pod("p1", priority=LOW, node="node1", terminating=True)], nodes=["node1"],
         status=None, expected=(True, "")),
]


@pytest.mark.parametrize("tc", ELIGIBLE_CASES, ids=[c["name"] for c in ELIGIBLE_CASES])
def test_pod_eligible_to_preempt_others(tc):
    p = tc["pod"]()
    env = Env([node(n) for n in tc["nodes"]], tc["pods"](), extra_pods=[p])
    status = tc["status"] if tc["status"] is not None else Status(Code.Success)
    assert env.pl.pod_eligible_to_preempt_others(p, status) == tc["expected"]


def test_pod_terminating_by_preemption():
    assert not pod_terminating_by_preemption(pod("a", conditions=_DISRUPTION))
    assert pod_terminating_by_preemption(pod("b", terminating=True, conditions=_DISRUPTION))
    other = [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}]
    assert not pod_terminating_by_preemption(pod("c", terminating=True, conditions=other))


# ---------------------------------------------------------------------------------------------
# TestPreempt
# ---------------------------------------------------------------------------------------------
PREEMPT_CASES = [
    dict(name="basic preemption logic",
         pod=lambda: pod("p", priority=HIGH, req=VERY_LARGE, spec={"preemptionPolicy": "PreemptLowerPriority"}),
         pods=lambda: [pod("p1.1", node="node1", priority=LOW, req=SMALL),
                       pod("p1.2", node="node1", priority=LOW, req=SMALL),
                       pod("p2.1", node="node2", priority=HIGH, req=LARGE),
                       pod("p3.1", node="node3", priority=MID, req=MEDIUM)],
         nodes=["node1", "node2", "node3"], plugins=[FIT], want="node1", expected=["p1.1", "p1.2"]),
    dict(name="preemption for topology spread constraints",
         pod=lambda: pod("p", labels={"foo": ""}, priority=HIGH, spec={"topologySpreadConstraints": [
             {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}},
             {"maxSkew": 1, "topologyKey": "hostname", "whenUnsatisfiable": "DoNotSchedule",
              "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}]}),
         pods=lambda: [pod("p-a1", node="node-a", labels={"foo": ""}, priority=HIGH),
                       pod("p-a2", node="node-a", labels={"foo": ""}, priority=HIGH),
                       pod("p-b1", node="node-b", labels={"foo": ""}, priority=LOW),
                       pod("p-x1", node="node-x", labels={"foo": ""}, priority=HIGH),
                       pod("p-x2", node="node-x", labels={"foo": ""}, priority=HIGH)],
         nodes=["node-a/zone1", "node-b/zone1", "node-x/zone2"], plugins=[PTS], want="node-b",
         expected=["p-b1"]),
    dict(name="no preempting in pod",
         pod=lambda: pod("p", priority=HIGH, req=VERY_LARGE, spec={"preemptionPolicy": "Never"}),
         pods=lambda: [pod("p1.1", node="node1", priority=LOW, req=SMALL),
                       pod("p1.2", node="node1", priority=LOW, req=SMALL),
                       pod("p2.1", node="node2", priority=HIGH, req=LARGE),
                       pod("p3.1", node="node3", priority=MID, req=MEDIUM)],
         nodes=["node1", "node2", "node3"], plugins=[FIT], want=None, expected=[]),
    dict(name="PreemptionPolicy is nil",
         pod=lambda: pod("p", priority=HIGH, req=VERY_LARGE),
         pods=lambda: [pod("p1.1", node="node1", priority=LOW, req=SMALL),
                       pod("p1.2", node="node1", priority=LOW, req=SMALL),
                       pod("p2.1", node="node2", priority=HIGH, req=LARGE),
                       pod("p3.1", node="node3", priority=MID, req=MEDIUM)],
         nodes=["node1", "node2", "node3"], plugins=[FIT], want="node1", expected=["p1.1", "p1.2"]),
]


@pytest.mark.parametrize("async_preemption", [True, False])
@pytest.mark.parametrize("tc", PREEMPT_CASES, ids=[c["name"] for c in PREEMPT_CASES])
def test_preempt(tc, async_preemption):
    p = tc["pod"]()
    pods = tc["pods"]()
    env = Env([topo_node(n, VERY_LARGE) for n in tc["nodes"]], pods, filters=tc["plugins"], extra_pods=[p])
    env.pl.evaluator.enable_async_preemption = async_preemption
    events: List[tuple] = []
    env.cluster.subscribe(lambda kind, old, new: events.append((kind, old, new)))
    state = env.prefilter(p)
    m = NodeToStatus({ni.name: Status(Code.Unschedulable) for ni in env.snapshot.list()})
    res, status = env.pl.evaluator.preempt(state, p, m)
    assert status.is_success() or status.is_rejected()
    if tc["want"] is None:
        assert res is None
    else:
        assert res is not None and res.nominated_node_name == tc["want"]
    names = [x.name for x in pods]
    assert env.deleted(names) == sorted(tc["expected"])
    # every victim got the DisruptionTarget condition before its deletion
    updated = [new for kind, old, new in events if new is not None]
    assert sorted(u.name for u in updated) == sorted(tc["expected"])
    for u in updated:
        cond = [c for c in u.status.get("conditions") or [] if c["type"] == "DisruptionTarget"]
        assert cond == [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                         "message": "default-scheduler: preempting to accommodate a higher priority pod"}]
    assert not env.pl.evaluator.preempting
    # calling Preempt again with every node absent (UnschedulableAndUnresolvable) preempts nothing
    before = len(events)
    res, status = env.pl.evaluator.preempt(state, p, NodeToStatus())
    assert len(events) == before


@pytest.mark.parametrize("version,want", [("v1.35", ("reject", "DefaultPreemption", "preempted")),
                                          ("v1.36", ("preempt", "DefaultPreemption", "preempted"))])
def test_preempt_stops_waiting_pod_instead_of_deleting(version, want):
    """PreemptPod: a victim waiting at Permit gets no API call; v1.35 rejects it, v1.36
    preempts it (waitingPod.Preempt, an Error for its binding cycle)."""
    class Waiting:
        def __init__(self):
            self.stopped = None

        def reject(self, plugin, msg):
            self.stopped = ("reject", plugin, msg)
            return True

        def preempt(self, plugin, msg):
            self.stopped = ("preempt", plugin, msg)
            return True

    p = pod("p", priority=HIGH, req=LARGE)
    victim = pod("v", node="node1", priority=LOW, req=LARGE)
    env = Env([node("node1", LARGE)], [victim], extra_pods=[p], features=resolve(version))
    w = Waiting()
    env.fw.waiting_pods[victim.uid] = w
    res, status = env.pl.post_filter(env.prefilter(p), p, statuses({"node1": U}))
    assert status.is_success() and res.nominated_node_name == "node1"
    assert w.stopped == want
    assert env.cluster.get("Pod", "default", "v") is not None


def test_prepare_candidate_clears_lower_priority_nominations():
    p = pod("p", priority=HIGH, req=LARGE)
    low_nominated = pod("n-low", priority=LOW, req=SMALL, nominated="node1")
    high_nominated = pod("n-high", priority=VERY_HIGH, req=SMALL, nominated="node1")
    env = Env([node("node1", VERY_LARGE)], [pod("v", node="node1", priority=LOW, req=VERY_LARGE)],
              extra_pods=[p, low_nominated, high_nominated])
    env.nominator.add(low_nominated, "node1")
    env.nominator.add(high_nominated, "node1")
    res, status = env.pl.post_filter(env.prefilter(p), p, statuses({"node1": U}))
    assert status.is_success() and res.nominated_node_name == "node1"
    assert env.cluster.get("Pod", "default", "v") is None
    assert env.cluster.get("Pod", "default", "n-low").nominated_node_name == ""
    assert env.cluster.get("Pod", "default", "n-high").nominated_node_name == "node1"


# ---------------------------------------------------------------------------------------------
# TestPreEnqueue and EventsToRegister
# ---------------------------------------------------------------------------------------------
def test_pre_enqueue_gates_the_pod_while_its_async_preemption_runs():
    p = pod("p", priority=HIGH)
    other = pod("p_other", priority=HIGH)
    env = Env([node("node1", ONE_POD)], [pod("p1", node="node1")], extra_pods=[p, other])
    deferred: List[Any] = []
    env.fw.run_async = deferred.append
    res, status = env.pl.post_filter(env.prefilter(p), p, statuses({"node1": U}))
    assert status.is_success() and res.nominated_node_name == "node1"
    assert env.pl.pre_enqueue(p) == Status(UU, "waiting for the preemption for this pod to be finished")
    assert env.pl.pre_enqueue(other) is None
    assert env.cluster.get("Pod", "default", "p1") is not None
    deferred.pop()()
    assert env.pl.pre_enqueue(p) is None
    assert env.cluster.get("Pod", "default", "p1") is None


def test_pre_enqueue_async_disabled():
    p = pod("p", priority=HIGH)
    env = Env([node("node1", ONE_POD)], [pod("p1", node="node1")], extra_pods=[p])
    env.pl.enable_async_preemption = False
    env.pl.evaluator.enable_async_preemption = False
    env.pl.post_filter(env.prefilter(p), p, statuses({"node1": U}))
    assert env.pl.pre_enqueue(p) is None
    assert env.pl.events_to_register() == []


def test_events_to_register():
    env = Env([node("node1")], [])
    events = env.pl.events_to_register()
    assert len(events) == 1
    ev = events[0]
    assert ev.event.resource.value == "Pod" and ev.event.action_type.name == "Delete"
    assert int(ev.queueing_hint_fn(pod("x"), pod("y"), None)) == 0  # QueueSkip


# ---------------------------------------------------------------------------------------------
# pieces: candidates count, PDB split, pickOneNodeForPreemption, importance, args
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pct,absolute,nodes,want", [
    (10, 100, 5, 5), (10, 100, 1000, 100), (10, 100, 5000, 500), (40, 1, 5, 2), (40, 2, 5, 2),
    (0, 3, 10, 3), (100, 0, 7, 7), (50, 0, 3, 1),
])
def test_calculate_num_candidates(pct, absolute, nodes, want):
    env = Env([node("node1")], [], args={"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute})
    assert env.pl.calculate_num_candidates(nodes) == want
    assert env.pl.get_offset_and_num_candidates(nodes) == (0, want)


def test_filter_pods_with_pdb_violation():
    pods = [PodInfo.of(pod(n, labels={"app": "foo"})) for n in ("a", "b", "c")]
    nolabel = PodInfo.of(pod("d"))
    other_ns = PodInfo.of(pod("e", ns="other", labels={"app": "foo"}))
    pdbs = [pdb("one", {"app": "foo"}, allowed=1),
            KubeObject({"kind": "PodDisruptionBudget", "metadata": {"name": "empty", "namespace": "default"},
                        "spec": {"selector": {}}, "status": {"disruptionsAllowed": 0}}),
            KubeObject({"kind": "PodDisruptionBudget", "metadata": {"name": "nil", "namespace": "default"},
                        "spec": {}, "status": {"disruptionsAllowed": 0}})]
    violating, non_violating = filter_pods_with_pdb_violation(pods + [nolabel, other_ns], pdbs)
    assert [pi.pod.name for pi in violating] == ["b", "c"]
    assert [pi.pod.name for pi in non_violating] == ["a", "d", "e"]


def _victims(*prios_starts, pdb_violations=0):
    return Victims([pod(f"x{next(_index)}", priority=pr, start=epoch(st)) for pr, st in prios_starts],
                   pdb_violations)


def test_pick_one_node_for_preemption_criteria_in_order():
    assert pick_one_node_for_preemption({}) == ""
    # 1. fewest PDB violations beats lower priorities
    m = {"a": _victims((0, 0), pdb_violations=1), "b": _victims((100, 0))}
    assert pick_one_node_for_preemption(m) == "b"
    # 2. lowest highest priority
    m = {"a": _victims((100, 0)), "b": _victims((50, 0), (50, 0), (50, 0))}
    assert pick_one_node_for_preemption(m) == "b"
    # 3. smallest sum of shifted priorities: 2 victims of -100 vs 1 victim of -100
    m = {"a": _victims((-100, 0), (-100, 0)), "b": _victims((-100, 0))}
    assert pick_one_node_for_preemption(m) == "b"
    # 4. fewest victims can only decide when the shifted sums tie, which with int32 priorities
    # means the same number of victims: a full tie goes to the first candidate
    same = _victims((100, 0), (-100, 0))
    assert pick_one_node_for_preemption({"a": same, "b": same}) == "a"
    assert pick_one_node_for_preemption({"b": same, "a": same}) == "b"
    # 5. latest earliest start among the highest-priority victims
    m = {"a": _victims((10, 5), (0, 9)), "b": _victims((10, 7), (0, 1))}
    assert pick_one_node_for_preemption(m) == "b"
    # custom score functions replace the defaults
    assert pick_one_node_for_preemption(m, [lambda n: 1 if n == "a" else 0]) == "a"


def test_more_important_pod():
    a = pod("a", priority=10, start=epoch(5))
    b = pod("b", priority=5, start=epoch(1))
    assert more_important_pod(a, b) and not more_important_pod(b, a)
    c = pod("c", priority=10, start=epoch(1))
    assert more_important_pod(c, a) and not more_important_pod(a, c)
    # without startTime: creationTimestamp, then creation order
    d = pod("d", priority=1)
    e = pod("e", priority=1)
    assert more_important_pod(d, e) and not more_important_pod(e, d)


@pytest.mark.parametrize("args,errs", [
    ({}, []),
    ({"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}, []),
    ({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
     [("minCandidateNodesPercentage", "Invalid value: -1: not in valid range [0, 100]")]),
    ({"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
     [("minCandidateNodesPercentage", "Invalid value: 900: not in valid range [0, 100]")]),
    ({"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
     [("minCandidateNodesAbsolute", "Invalid value: -1: not in valid range [0, inf)")]),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     [("minCandidateNodesPercentage", "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute"),
      ("minCandidateNodesAbsolute", "Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage")]),
    ({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
     [("minCandidateNodesPercentage", "Invalid value: -1: not in valid range [0, 100]"),
      ("minCandidateNodesAbsolute", "Invalid value: -1: not in valid range [0, inf)")]),
])
def test_args_defaults_and_validation(args, errs):
    defaulted = DefaultPreemption.set_defaults(dict(args))
    assert DefaultPreemption.validate_args(defaulted) == errs


def test_set_defaults():
    assert DefaultPreemption.set_defaults({}) == {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}
    assert DefaultPreemption.set_defaults({"minCandidateNodesAbsolute": 5}) == {
        "minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 5}


def test_invalid_args_fail_construction():
    with pytest.raises(ValueError, match="not in valid range"):
        DefaultPreemption({"minCandidateNodesPercentage": 101}, None)


# ---------------------------------------------------------------------------------------------
# Per version: victims already being deleted (prepareCandidate[Async]), the async gate
# ---------------------------------------------------------------------------------------------
def _disruption(env: Env, name: str) -> bool:
    p = env.cluster.get("Pod", "default", name)
    return any(c.get("type") == "DisruptionTarget" for c in p.status.get("conditions") or [])


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("version,patched", [("v1.34", True), ("v1.35", False), ("v1.36", False)])
def test_victim_already_being_deleted(version, patched, async_preemption):
    """"one victim, but victim is already being deleted" and its sibling: v1.35 on, a victim
    whose graceful deletion started gets no API call; v1.34.9 patches its DisruptionTarget
    condition and sends a DELETE, which the API server leaves pending (the pod stays until the
    kubelet is done). The other victim is evicted either way."""
    p = pod("p", priority=HIGH, req=VERY_LARGE)
    going = pod("going", node="node1", priority=LOW, req=LARGE, terminating=True)
    staying = pod("staying", node="node1", priority=LOW, req=LARGE)
    env = Env([node("node1", VERY_LARGE)], [going, staying], extra_pods=[p], features=resolve(version))
    env.pl.evaluator.enable_async_preemption = async_preemption
    res, status = env.pl.post_filter(env.prefilter(p), p, statuses({"node1": U}))
    assert status.is_success() and res.nominated_node_name == "node1"
    assert env.cluster.get("Pod", "default", "staying") is None
    assert env.cluster.get("Pod", "default", "going") is not None
    assert _disruption(env, "going") is patched
    assert not env.pl.evaluator.preempting


@pytest.mark.parametrize("version,starts", [("v1.34", True), ("v1.35", False), ("v1.36", False)])
def test_async_preemption_with_every_victim_already_being_deleted(version, starts):
    """prepareCandidateAsync: v1.35 on, with no victim left to delete nothing starts (no
    goroutine, the preemptor is not gated, lower-priority nominations stay); v1.34.9 runs the
    goroutine over every victim."""
    p = pod("p", priority=HIGH, req=LARGE)
    low_nominated = pod("n-low", priority=LOW, req=SMALL, nominated="node1")
    env = Env([node("node1", LARGE)], [pod("v", node="node1", priority=LOW, req=LARGE, terminating=True)],
              extra_pods=[p, low_nominated], features=resolve(version))
    env.nominator.add(low_nominated, "node1")
    deferred: List[Any] = []
    env.fw.run_async = deferred.append
    res, status = env.pl.post_filter(env.prefilter(p), p, statuses({"node1": U}))
    assert status.is_success() and res.nominated_node_name == "node1"
    assert len(deferred) == (1 if starts else 0)
    assert (env.pl.pre_enqueue(p) is not None) is starts
    for fn in deferred:
        fn()
    assert _disruption(env, "v") is starts
    assert env.cluster.get("Pod", "default", "n-low").nominated_node_name == ("" if starts else "node1")


@pytest.mark.parametrize("gate", [True, False])
def test_async_preemption_follows_its_feature_gate(gate):
    """DefaultPreemption reads SchedulerAsyncPreemption (beta, on) from the handle's gates."""
    env = Env([node("node1", ONE_POD)], [], features=resolve("v1.35", {"SchedulerAsyncPreemption": gate}))
    assert env.pl.enable_async_preemption is gate
    assert env.pl.evaluator.enable_async_preemption is gate


def test_preempt_deletes_a_waiting_pod_whose_wait_already_ended_v136():
    """v1.36 PreemptPod: waitingPod.Preempt says false (the wait is over): the victim gets the
    DisruptionTarget patch and the DELETE like any other."""
    class Ended:
        def preempt(self, plugin, msg):
            return False

    p = pod("p", priority=HIGH, req=LARGE)
    victim = pod("v", node="node1", priority=LOW, req=LARGE)
    env = Env([node("node1", LARGE)], [victim], extra_pods=[p], features=resolve("v1.36"))
    env.fw.waiting_pods[victim.uid] = Ended()
    res, status = env.pl.post_filter(env.prefilter(p), p, statuses({"node1": U}))
    assert status.is_success() and res.nominated_node_name == "node1"
    assert env.cluster.get("Pod", "default", "v") is None
