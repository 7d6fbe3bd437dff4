"""OpportunisticBatching with the in-tree plugins on random clusters (KEP-5598, batch.go).

What upstream guarantees, and so what these properties state:
- a hint is only a candidate: it is tried as a nominated node is (every Filter plugin runs on
  it), so every batched placement passes the filters, and batching never leaves a pod
  unscheduled that would otherwise be placed (one-pod-per-node pods: each node's fit does not
  depend on the others);
- with every GetNodeHint condition met (consecutive cycles, same signature, the previous node
  now rejects the pod, a young batch), pods 2..k of a run of k <= nodes identical one-pod-per-
  node pods are all placed on hints: batchedPods = k - 1;
- the batch reuses the first pod's scores: the placements equal those of unbatched scoring
  only when the scores of the other nodes do not change as nodes drop out. That holds when
  each score depends on the pod and its node alone (NodeResourcesFit, BalancedAllocation) and
  the greatest total is unique in each cycle (ties are broken by the heap's order, which a
  fresh heap over fewer nodes need not repeat). It does not hold when a plugin normalizes
  over the feasible nodes (TaintToleration, NodeAffinity): cases/versions/framework/
  batch-reuses-next-node-v135 is such a difference, so no equality is claimed there.
"""

from __future__ import annotations

from typing import Any, Dict

import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness.cluster import Cluster  # noqa: E402
from harness.config import loader as config_loader  # noqa: E402
from harness.framework.registry import default_registry  # noqa: E402
from harness.scheduler.scheduler import Scheduler  # noqa: E402
from harness.testing import make_node, make_pod  # noqa: E402
from harness.versions import resolve  # noqa: E402

PORT = 8080
PROFILE = {"schedulerName": "default-scheduler",
           "pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}


@st.composite
def clusters(draw, normalized: bool):
    """Nodes with random sizes and load; with `normalized`, also PreferNoSchedule taints and
    labels that the pods' preferred node affinity weighs (scores normalized over the nodes)."""
    n = draw(st.integers(2, 7))
    nodes = []
    for i in range(n):
        node: Dict[str, Any] = {"cpu": draw(st.sampled_from(["2", "3", "4", "6", "8"])),
                                "memory": draw(st.sampled_from(["4Gi", "6Gi", "8Gi", "16Gi"])),
                                "load_cpu": draw(st.sampled_from([0, 250, 500, 1000])),
                                "load_mem": draw(st.sampled_from([0, 256, 1024]))}
        if normalized:
            node["taints"] = draw(st.integers(0, 2))
            node["x"] = draw(st.booleans())
        nodes.append(node)
    return nodes, draw(st.integers(2, n + 1))


def run(nodes, k: int, normalized: bool, batching: bool) -> Scheduler:
    features = resolve("v1.35", {"OpportunisticBatching": batching})
    reg = default_registry()
    cfg = config_loader.load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                          "kind": "KubeSchedulerConfiguration", "profiles": [PROFILE]},
                                         reg, features=features)
    cluster = Cluster(features)
    for i, nd in enumerate(nodes):
        taints = [{"key": f"t{j}", "value": "x", "effect": "PreferNoSchedule"} for j in range(nd.get("taints", 0))]
        labels = {"kubernetes.io/hostname": f"n{i}", **({"x": "1"} if nd.get("x") else {})}
        cluster.create(make_node(f"n{i}", labels=labels, taints=taints,
                                 allocatable={"cpu": nd["cpu"], "memory": nd["memory"]}), notify=False)
        if nd["load_cpu"] or nd["load_mem"]:
            cluster.create(make_pod(f"load{i}", node_name=f"n{i}",
                                    requests={"cpu": f"{nd['load_cpu']}m", "memory": f"{nd['load_mem']}Mi"}),
                           notify=False)
    spec: Dict[str, Any] = {"containers": [{"name": "c", "image": "busybox",
                                            "ports": [{"containerPort": PORT, "hostPort": PORT}],
                                            "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]}
    if normalized:
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 3, "preference": {"matchExpressions": [{"key": "x", "operator": "In", "values": ["1"]}]}}]}}
    for j in range(k):
        cluster.create(make_pod(f"w{j}", labels={"app": "w"}, spec=spec), notify=False)
    s = Scheduler(cfg, reg, cluster, features=features)
    s.compact_records = False  # every record keeps its scores (unique_top_in_every_cycle reads them)
    s.start()
    s.run_until_quiet()
    return s


def placements(s: Scheduler) -> Dict[str, str]:
    return {p.name: p.node_name for p in s.cluster.list("Pod") if p.name.startswith("w")}


def unique_top_in_every_cycle(s: Scheduler) -> bool:
    for recs in s.records.values():
        for r in recs:
            if len(r.scores) > 1 or getattr(r.scores, "totals", None) is not None:
                totals = getattr(r.scores, "totals", None)
                vals = [int(t) for t in totals] if totals is not None else [sc.total_score for sc in r.scores]
                if len(vals) > 1 and vals.count(max(vals)) > 1:
                    return False
    return True


SETTINGS = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.booleans().flatmap(lambda norm: st.tuples(st.just(norm), clusters(norm))))
def test_batched_placements_pass_the_filters_and_every_pod_after_the_first_is_batched(arg):
    normalized, (nodes, k) = arg
    batched = run(nodes, k, normalized, batching=True)
    plain = run(nodes, k, normalized, batching=False)
    got = placements(batched)
    bound = [n for n in got.values() if n]
    # the filters held: one pod per node (NodePorts), and as many pods placed as without batching
    assert len(bound) == len(set(bound)) == min(k, len(nodes))
    assert sorted(p for p, n in got.items() if n) == sorted(p for p, n in placements(plain).items() if n)
    # the first pod scored every node; each later one took the next node of its batch
    assert batched.profiles["default-scheduler"].batch.batched_pods == min(k, len(nodes)) - 1


@SETTINGS
@given(clusters(normalized=False))
def test_per_node_scores_with_a_unique_best_give_the_unbatched_placements(arg):
    nodes, k = arg
    plain = run(nodes, k, False, batching=False)
    assume(unique_top_in_every_cycle(plain))
    batched = run(nodes, k, False, batching=True)
    assert placements(batched) == placements(plain)
