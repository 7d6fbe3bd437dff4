"""The scheduler's own pieces: the node tree order, numFeasibleNodesToFind, selectHost, the cache
after binding and the queue's backoff."""

from __future__ import annotations

import random

import pytest

from harness.case.loader import case_from_data
from harness.case.runner import run_case
from harness.framework.types import NodePluginScores
from harness.scheduler.node_tree import NodeTree
from harness.scheduler.schedule_one import num_feasible_nodes_to_find, select_host
from harness.testing import make_node


def test_node_tree_lists_zones_round_robin():
    """node_tree_test.go: nodes of each zone in insertion order, one zone after the other."""
    tree = NodeTree()
    zones = {"a1": "z1", "a2": "z1", "a3": "z1", "b1": "z2", "c1": "z3", "c2": "z3", "n0": ""}
    for name, zone in zones.items():
        labels = {"topology.kubernetes.io/zone": zone} if zone else {}
        tree.add_node(make_node(name, labels=labels))
    assert tree.list() == ["a1", "b1", "c1", "n0", "a2", "c2", "a3"]
    tree.remove_node(make_node("b1", labels={"topology.kubernetes.io/zone": "z2"}))
    assert tree.list() == ["a1", "c1", "n0", "a2", "c2", "a3"]


@pytest.mark.parametrize("percentage,nodes,want", [
    (None, 10, 10),          # fewer than 100 nodes: all
    (None, 1000, 420),       # adaptive: 50 - 1000/125 = 42%
    (40, 1000, 400),
    (None, 6000, 300),       # 50 - 48 = 2% -> at least 5%
    (None, 5000, 500),       # 50 - 40 = 10%
    (1, 1000, 100),          # never below 100
])
def test_num_feasible_nodes_to_find(percentage, nodes, want):
    """TestNumFeasibleNodesToFind (schedule_one_test.go)."""
    assert num_feasible_nodes_to_find(percentage, 0, nodes) == want


def test_select_host_picks_only_top_scores_and_all_of_them():
    scores = [NodePluginScores("a", [], 10), NodePluginScores("b", [], 30),
              NodePluginScores("c", [], 30), NodePluginScores("d", [], 29)]
    rng = random.Random(1)
    picks = {select_host(scores, rng) for _ in range(200)}
    assert picks == {"b", "c"}


CASE = {
    "apiVersion": "schedharness/v1alpha1", "kind": "Case",
    "cluster": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
                 "status": {"allocatable": {"cpu": "2", "memory": "4Gi"}}}],
    "pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
              "spec": {"containers": [{"name": "c", "image": "x",
                                       "resources": {"requests": {"cpu": "1"}}}]}} for i in range(3)],
}


def test_cache_holds_the_bound_pods_after_binding():
    res = run_case(case_from_data(CASE, "inline.yaml"))
    sched = res.scheduler
    ni = sched.cache.nodes["node-a"]
    assert sorted(pi.pod.name for pi in ni.pods) == ["p0", "p1"]
    assert all(pi.pod.node_name == "node-a" for pi in ni.pods)
    assert not sched.cache.assumed_pods
    assert ni.requested.milli_cpu == 2000
    assert res.bindings == {"default/p0": "node-a", "default/p1": "node-a", "default/p2": None}


def test_unschedulable_pod_is_parked_not_retried_without_events():
    res = run_case(case_from_data(CASE, "inline.yaml"))
    recs = res.scheduler.records["default/p2"]
    # p2 is tried once; no event can help it afterwards (its rejector, NodeResourcesFit,
    # only wakes on node changes and pod deletions), so it stays in the unschedulable pool.
    assert len(recs) == 1
    assert "default/p2" in {pi.pod.key for pi in res.scheduler.queue.unschedulable.values()}
