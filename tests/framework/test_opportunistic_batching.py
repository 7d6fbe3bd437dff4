"""OpportunisticBatching (framework/runtime/batch.go, v1.35 on): TestOpportunisticBatching's
situations with signable fake plugins: one pod per node, the hint taken without scoring,
and every reason the batch is not used."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from harness.cluster import Cluster
from harness.config import loader as config_loader
from harness.framework import Code, Plugin, Status, hookimpl
from harness.framework.registry import default_registry
from harness.scheduler.scheduler import Scheduler
from harness.testing import make_node, make_pod
from harness.versions import resolve

SCORES = {"n1": 90, "n2": 80, "n3": 70, "n4": 60}


class OnePodPerNode(Plugin):
    """Filter: a node with any pod is full."""
    name = "OnePodPerNode"

    @hookimpl
    def filter(self, state, pod, node_info):
        if node_info.pods:
            return Status(Code.Unschedulable, "node is full")
        return None

    @hookimpl
    def sign_pod(self, pod):
        return [("OnePodPerNode", 1)], None


class Fixed(Plugin):
    """Score: a fixed score per node; counts its calls."""
    name = "Fixed"
    calls: List[str] = []

    @hookimpl
    def score(self, state, pod, node_info):
        type(self).calls.append(pod.name)
        return SCORES.get(node_info.node.name, 0), None

    @hookimpl
    def sign_pod(self, pod):
        if pod.labels.get("unsignable"):
            return None, Status(Code.Unschedulable, "not signable")
        return [("Fixed", pod.labels.get("shape", ""))], None


class FixedUnsigned(Fixed):
    """The same Score plugin written for v1.34: no sign_pod."""
    name = "FixedUnsigned"
    sign_pod = None


def scheduler(features, pods, score="Fixed") -> Scheduler:
    reg = dict(default_registry())
    for cls in (OnePodPerNode, Fixed, FixedUnsigned):
        reg[cls.name] = cls
    prof: Dict[str, Any] = {"schedulerName": "default-scheduler", "plugins": {
        "multiPoint": {"disabled": [{"name": "*"}]},
        "queueSort": {"enabled": [{"name": "PrioritySort"}]},
        "filter": {"enabled": [{"name": "OnePodPerNode"}]},
        "score": {"enabled": [{"name": score, "weight": 1}]},
        "bind": {"enabled": [{"name": "DefaultBinder"}]}}}
    cfg = config_loader.load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                          "kind": "KubeSchedulerConfiguration", "profiles": [prof]},
                                         reg, features=features)
    cluster = Cluster(features)
    for n in SCORES:
        cluster.create(make_node(n), notify=False)
    for p in pods:
        cluster.create(p, notify=False)
    s = Scheduler(cfg, reg, cluster, features=features)
    s.start()
    return s


def pods(n, **labels):
    return [make_pod(f"p{i}", labels=dict(labels)) for i in range(1, n + 1)]


def bindings(s):
    return {p.name: p.node_name for p in s.cluster.list("Pod")}


@pytest.fixture(autouse=True)
def _reset():
    Fixed.calls = []
    yield


@pytest.mark.parametrize("version,batched,scored", [("v1.34", 0, ["p1", "p2", "p3"]),
                                                    ("v1.35", 2, ["p1"]), ("v1.36", 2, ["p1"])])
def test_one_pod_per_node_takes_the_next_best_node_without_scoring(version, batched, scored):
    """p1 scores n1 > n2 > n3 > n4 and takes n1; p2 (same signature, the very next cycle) finds
    n1 full for it, so the batch hands it n2, which passes Filter: chosen without scoring; p3
    likewise gets n3. v1.34 has no batching: every pod is scored, with the same placements."""
    s = scheduler(resolve(version), pods(3))
    s.run_until_quiet()
    assert bindings(s) == {"p1": "n1", "p2": "n2", "p3": "n3"}
    fw = s.profiles["default-scheduler"]
    assert (fw.batch.batched_pods if fw.batch is not None else 0) == batched
    assert sorted(set(Fixed.calls)) == scored


def test_the_gate_off_schedules_without_batching():
    s = scheduler(resolve("v1.35", {"OpportunisticBatching": False}), pods(3))
    s.run_until_quiet()
    assert bindings(s) == {"p1": "n1", "p2": "n2", "p3": "n3"}
    assert s.profiles["default-scheduler"].batch is None
    assert sorted(set(Fixed.calls)) == ["p1", "p2", "p3"]


def test_a_plugin_without_sign_pod_turns_signatures_off():
    """computeBatchablePlugins: a Score plugin that does not implement SignPod (one written for
    v1.34) disables signatures for the profile: no batch, every pod scored."""
    s = scheduler(resolve("v1.35"), pods(3), score="FixedUnsigned")
    fw = s.profiles["default-scheduler"]
    assert not fw.enable_signatures and fw.sign_pod(make_pod("x")) is None
    s.run_until_quiet()
    assert bindings(s) == {"p1": "n1", "p2": "n2", "p3": "n3"}
    assert fw.batch.batched_pods == 0


def test_different_signatures_and_unsignable_pods_are_not_batched():
    """batchStateCompatible: another signature (here another "shape") or no signature (a plugin
    refused to sign) throws the state away; every pod is scored."""
    ps = [make_pod("p1", labels={"shape": "a"}), make_pod("p2", labels={"shape": "b"}),
          make_pod("p3", labels={"unsignable": "yes"})]
    s = scheduler(resolve("v1.35"), ps)
    s.run_until_quiet()
    assert bindings(s) == {"p1": "n1", "p2": "n2", "p3": "n3"}
    assert s.profiles["default-scheduler"].batch.batched_pods == 0
    assert sorted(set(Fixed.calls)) == ["p1", "p2", "p3"]


def test_a_batch_older_than_500ms_of_virtual_time_is_stale():
    """maxBatchAge (500 ms, wall clock upstream) runs on the virtual clock: p2, created after
    600 ms, is scored afresh."""
    s = scheduler(resolve("v1.35"), [make_pod("p1")])
    s.run_until_quiet()
    s.advance(0.6)
    s.cluster.create(make_pod("p2"))
    s.run_until_quiet()
    assert bindings(s) == {"p1": "n1", "p2": "n2"}
    assert s.profiles["default-scheduler"].batch.batched_pods == 0
    assert Fixed.calls.count("p2") == 3  # n2, n3, n4 scored


def test_a_node_that_still_fits_is_no_batch():
    """"the node we chose last time can't host this pod" must hold: with room for two pods per
    node (no one-pod-per-node), p2 is scored again."""
    s = scheduler(resolve("v1.35"), pods(1))
    s.run_until_quiet()
    batch = s.profiles["default-scheduler"].batch
    # p1 took n1; a pod that still fits n1 (the filter passes on an empty node) cannot use it
    s.cluster.delete(s.cluster.get("Pod", "default", "p1"))
    s.cluster.create(make_pod("p2"))
    s.run_until_quiet()
    assert bindings(s) == {"p2": "n1"}
    assert batch.batched_pods == 0


# ---- batch_test.go TestBatchBasic: OpportunisticBatch on its own ------------------------------
class _Nodes:
    """A sortedNodeScores stand-in: pops in the given order."""

    def __init__(self, names):
        self.names = list(names)

    def pop(self):
        return self.names.pop(0)

    def __len__(self):
        return len(self.names)


class _Handle:
    """The batch's handle: a snapshot holding the last chosen node, with the first pod on it,
    and batchTest's Filter (a node holds one pod whose UID starts with "b")."""
    clock = None

    def __init__(self):
        self.nodes = {}
        self.snapshot = self

    def get(self, name):
        return self.nodes[name]

    def run_filter_plugins(self, state, pod, node_info):
        if pod.uid.startswith("b") and any(p.pod.uid.startswith("b") for p in node_info.pods):
            return Status(Code.Unschedulable, "unsched")
        return None


@pytest.mark.parametrize(
    "first_uid,first_sig,first_ok,first_other,skip_pod,second_uid,second_sig,second_chosen,hint,state", [
        ("b-1", "sig", True, ["n1"], False, "b-2", "sig", "n1", "n1", None),
        ("a-1", "sig", True, ["n1"], False, "a-2", "sig2", "n1", "", None),
        ("a-1", "sig", True, ["n1"], False, "a-2", "sig", "n1", "", None),
        ("b-1", "sig", False, ["n1"], False, "b-2", "sig", "n1", "", None),
        ("b-1", "sig", True, [], False, "b-2", "sig", "n4", "", None),
        ("b-1", "sig", True, None, False, "b-2", "sig", "n4", "", None),
        ("b-1", "sig", True, ["n1"], True, "b-2", "sig", "n1", "", None),
        ("b-1", "sig", True, ["n1", "n2"], False, "b-2", "sig", "n1", "n1", ("sig", ["n2"])),
    ], ids=["same signature gets a hint", "different signature", "not one pod per node",
            "previous pod not scheduled", "empty list", "nil list", "a pod of another profile between",
            "the rest of the batch is left for the next pod"])
def test_batch_basic(first_uid, first_sig, first_ok, first_other, skip_pod, second_uid, second_sig,
                     second_chosen, hint, state):
    from harness.framework import NodeInfo
    from harness.framework.batch import OpportunisticBatch
    handle = _Handle()
    batch = OpportunisticBatch(handle)
    pod = make_pod("pod", uid=first_uid)
    assert batch.get_node_hint(None, pod, first_sig, 1) == ""
    if first_ok:
        batch.store_schedule_results(first_sig, "", "n3", _Nodes(first_other) if first_other is not None else None, 1)
    cycle = 3 if skip_pod else 2
    ni = NodeInfo(pod)
    ni.set_node(make_node("n3"))
    handle.nodes["n3"] = ni
    pod2 = make_pod("pod2", uid=second_uid)
    got = batch.get_node_hint(None, pod2, second_sig, cycle)
    assert got == hint
    batch.store_schedule_results(second_sig, got, second_chosen, None, cycle)
    if state is None:
        assert batch.state is None or len(batch.state.sorted_nodes) == 0
    else:
        assert (batch.state.signature, batch.state.sorted_nodes.names) == state
