"""kube-scheduler's pkg/scheduler/extender_test.go TestSchedulerWithExtenders, ported: schedulePod
with filter plugins, score plugins and extenders (filter, prioritize with weights, errors,
ignorable and uninterested extenders, a binder-only extender), checking the suggested host and
the evaluated / feasible node counts, on every modelled version.

Upstream's tf.FakeExtender is an in-process Extender; here each one is an HTTPExtender of the
configuration answered by a Python callable (the case-level `extenders` mechanism), answering
as FakeExtender does: Filter runs its predicates per node (an Error predicate fails the call),
Prioritize sums score x prioritizer weight, and the extender's own weight comes from the
configuration. UnInterested is an extender whose managedResources the pod does not request
(HTTPExtender.IsInterested)."""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List, Optional

import pytest

from harness.cluster import Cluster
from harness.config import loader as config_loader
from harness.framework import FitError
from harness.framework.cycle_state import CycleState
from harness.framework.registry import default_registry
from harness.scheduler.schedule_one import CycleRecord, NoNodesAvailable, _CycleError
from harness.scheduler.scheduler import Scheduler
from harness.testing import make_node, make_pod
from harness.versions import resolve

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)

import schedule_one_fakes as fk  # noqa: E402

# FitPredicate: node name -> "Success" | "Unschedulable" | "UnschedulableAndUnresolvable" | "Error"
Predicate = Callable[[str], str]


def true_predicate(node: str) -> str:
    return "Success"


def false_predicate(node: str) -> str:
    return "Unschedulable"


def error_predicate(node: str) -> str:
    return "Error"


def node1_predicate(node: str) -> str:
    return "Success" if node == "node1" else "Unschedulable"


def node2_predicate(node: str) -> str:
    return "Success" if node == "node2" else "Unschedulable"


def error_prioritizer(nodes: List[str]) -> Optional[Dict[str, int]]:
    return None  # "some error"


def node1_prioritizer(nodes: List[str]) -> Optional[Dict[str, int]]:
    return {n: 10 if n == "node1" else 1 for n in nodes}


def node2_prioritizer(nodes: List[str]) -> Optional[Dict[str, int]]:
    return {n: 10 if n == "node2" else 1 for n in nodes}


class FakeExtender:
    """tf.FakeExtender's Filter and Prioritize, answering the harness's HTTPExtender."""

    def __init__(self, name: str, predicates=(), prioritizers=(), weight: int = 0,
                 uninterested: bool = False, ignorable: bool = False, binder: bool = False):
        self.name = name
        self.predicates = list(predicates)
        self.prioritizers = list(prioritizers)  # (function, weight)
        self.weight = weight
        self.uninterested = uninterested
        self.ignorable = ignorable
        self.binder = binder
        self.calls: List[str] = []

    def config(self) -> Dict[str, Any]:
        ext: Dict[str, Any] = {"urlPrefix": f"http://{self.name.lower()}.example/", "nodeCacheCapable": True,
                               "ignorable": self.ignorable}
        if self.predicates:
            ext["filterVerb"] = "filter"
        if self.prioritizers:
            ext["prioritizeVerb"] = "prioritize"
            ext["weight"] = self.weight
        if self.binder:
            ext["bindVerb"] = "bind"
        if self.uninterested:
            ext["managedResources"] = [{"name": "example.com/not-requested"}]
        return ext

    def _run_predicates(self, node: str) -> str:
        for predicate in self.predicates:
            code = predicate(node)
            if code != "Success":
                return code
        return "Success"

    def __call__(self, verb: str, args: Dict[str, Any]):
        self.calls.append(verb)
        nodes = list(args.get("nodenames") or [])
        if verb == "filter":
            passed, failed, unresolvable = [], {}, {}
            for n in nodes:
                code = self._run_predicates(n)
                if code == "Success":
                    passed.append(n)
                elif code == "Unschedulable":
                    failed[n] = f'FakeExtender: node "{n}" failed'
                elif code == "UnschedulableAndUnresolvable":
                    unresolvable[n] = f'FakeExtender: node "{n}" failed and unresolvable'
                else:
                    return {"error": "some error"}
            return {"nodenames": passed, "failedNodes": failed, "failedAndUnresolvableNodes": unresolvable}
        if verb == "prioritize":
            combined: Dict[str, int] = {}
            for function, weight in self.prioritizers:
                if weight == 0:
                    continue
                scores = function(nodes)
                if scores is None:
                    return (500, "some error")
                for n, s in scores.items():
                    combined[n] = combined.get(n, 0) + s * weight
            return [{"host": n, "score": s} for n, s in combined.items()]
        return {}


def new_scheduler(plugins: Dict[str, List[Any]], extenders: List[FakeExtender], nodes: List[str],
                  features) -> Scheduler:
    """makeScheduler with the test's plugins (tf.NewFramework) and extenders."""
    reg = dict(default_registry())
    for cls in fk.FIXED_PLUGINS:
        reg[cls.name] = cls
    points: Dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}]},
                              "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                              "bind": {"enabled": [{"name": "DefaultBinder"}]}}
    for ep, names in plugins.items():
        points[ep] = {"enabled": [n if isinstance(n, dict) else {"name": n} for n in names]}
    cfg = config_loader.load_config_data(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
         "profiles": [{"schedulerName": "default-scheduler", "plugins": points}],
         "extenders": [e.config() for e in extenders]}, reg, features=features)
    cluster = Cluster(features)
    for n in nodes:
        cluster.create(make_node(n, labels={"kubernetes.io/hostname": n}), notify=False)
    handlers = {e.config()["urlPrefix"]: e for e in extenders}
    s = Scheduler(cfg, reg, cluster, features=features, extender_handlers=handlers)
    s.start()
    return s


TRUE_FILTER = {"filter": ["TrueFilter"]}

TESTS = [
    ("test 1", TRUE_FILTER,
     [FakeExtender("FakeExtender1", [true_predicate]), FakeExtender("FakeExtender2", [error_predicate])],
     ["node1", "node2"], None),
    ("test 2", TRUE_FILTER,
     [FakeExtender("FakeExtender1", [true_predicate]), FakeExtender("FakeExtender2", [false_predicate])],
     ["node1", "node2"], None),
    ("test 3", dict(TRUE_FILTER, score=[{"name": "EqualPrioritizerPlugin", "weight": 1}]),
     [FakeExtender("FakeExtender1", [true_predicate]), FakeExtender("FakeExtender2", [node1_predicate])],
     ["node1", "node2"], ("node1", 2, 1)),
    ("test 4", TRUE_FILTER,
     [FakeExtender("FakeExtender1", [node2_predicate]), FakeExtender("FakeExtender2", [node1_predicate])],
     ["node1", "node2"], None),
    ("test 5", TRUE_FILTER,
     [FakeExtender("FakeExtender1", [true_predicate], [(error_prioritizer, 10)], weight=1)],
     ["node1"], ("node1", 1, 1)),
    ("test 6", TRUE_FILTER,
     [FakeExtender("FakeExtender1", [true_predicate], [(node1_prioritizer, 10)], weight=1),
      FakeExtender("FakeExtender2", [true_predicate], [(node2_prioritizer, 10)], weight=5)],
     ["node1", "node2"], ("node2", 2, 2)),
    ("test 7", dict(TRUE_FILTER, score=[{"name": "Node2Prioritizer", "weight": 20}]),
     [FakeExtender("FakeExtender1", [true_predicate], [(node1_prioritizer, 10)], weight=1)],
     ["node1", "node2"], ("node2", 2, 2)),
    ("test 8", dict(TRUE_FILTER, score=[{"name": "Node2Prioritizer", "weight": 1}]),
     [FakeExtender("FakeExtender1", [error_predicate], [(error_prioritizer, 10)], weight=1, uninterested=True)],
     ["node1", "node2"], ("node2", 2, 2)),
    ("test 9", dict(TRUE_FILTER, score=[{"name": "EqualPrioritizerPlugin", "weight": 1}]),
     [FakeExtender("FakeExtender1", [error_predicate], ignorable=True),
      FakeExtender("FakeExtender2", [node1_predicate])],
     ["node1", "node2"], ("node1", 2, 1)),
    ("test 10 - no scoring, extender filters configured, multiple feasible nodes are evaluated", TRUE_FILTER,
     [FakeExtender("FakeExtender1", [true_predicate]), FakeExtender("FakeExtender2", [node1_predicate])],
     ["node1", "node2"], ("node1", 2, 1)),
    ("test 11 - no scoring, no prefilters or  extender filters configured, a single feasible node is evaluated",
     {}, [FakeExtender("FakeExtender1", binder=True)], ["node1", "node2"], ("node1", 1, 1)),
]


@pytest.mark.parametrize("version", ["v1.34", "v1.35", "v1.36"])
@pytest.mark.parametrize("name,plugins,extenders,nodes,expected", TESTS, ids=[t[0] for t in TESTS])
def test_scheduler_with_extenders(version, name, plugins, extenders, nodes, expected):
    s = new_scheduler(plugins, extenders, nodes, resolve(version))
    pod = make_pod("p", uid="p")  # queuedPodInfoForPod(&v1.Pod{}): requests nothing
    s.cache.update_snapshot(s.snapshot)
    try:
        result = s.cycles.schedule_pod(s.profiles["default-scheduler"], CycleState(), pod, CycleRecord(pod.key, 1))
    except (FitError, NoNodesAvailable, _CycleError) as e:
        assert expected is None, f"unexpected error {e}"
        return
    assert expected is not None, f"unexpected non-error, result {result}"
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == expected
    for e in extenders:
        if e.uninterested:  # never sent a pod it is not interested in (errors if it were)
            assert e.calls == []


def _container(requests=None, limits=None) -> Dict[str, Any]:
    res: Dict[str, Any] = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    return {"name": "app", "image": "pause", "resources": res}


@pytest.mark.parametrize("managed,spec,want", [
    ([], {"containers": [_container()]}, True),  # Empty managed resources
    (["memory"], {"containers": [_container()]}, False),  # Managed memory, empty resources
    (["memory"], {"containers": [_container(requests={"memory": "0"})]}, True),  # container memory with Requests
    (["memory"], {"containers": [_container(limits={"memory": "0"})]}, True),  # container memory with Limits
    (["memory"], {"containers": [_container()],  # init container memory
                  "initContainers": [_container(requests={"memory": "0"})]}, True),
], ids=["empty managed resources", "managed memory, empty resources", "container memory requests",
        "container memory limits", "init container memory"])
def test_is_interested(managed, spec, want):
    """TestIsInterested."""
    from harness.scheduler.extender import new_http_extender

    ext = new_http_extender({"urlPrefix": "http://x.example/",
                             "managedResources": [{"name": m} for m in managed]}, None, "config", "extenders[0]")
    assert ext.is_interested(make_pod("p", uid="p", spec=spec)) is want
