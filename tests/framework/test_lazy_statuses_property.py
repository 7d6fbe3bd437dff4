"""Property test (hypothesis, derandomized): the walk over the node table that hands its
rejections to the Diagnosis as columns (harness.framework.lazy_status, Framework.lazy_statuses),
with the preemption memos and the dry run's answers looked up by row of the node table
(DefaultPreemption's row memo, the pick criteria it remembers), against the per-node reference
(one Status per rejected node as the walk meets it, every dry run node by node, no memo), on
random clusters with priorities
(so that pods preempt), nominated pods, taints, unschedulable and full nodes, node selectors
and host ports, with numFeasibleNodesToFind small enough for several chunks.

What must be identical: every pod's binding, nomination and PodScheduled message (FitError's
counts of reasons, preemption's), the pods preempted, the dry runs (candidates, victims,
statuses), and what a PostFilter plugin sees in the NodeToStatus it is given, read before
DefaultPreemption (node by node, as a third-party plugin might), after it (every entry, in
order, and each node's) or not at all (FitError's message then counts the columns' reasons)."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness.cluster import Cluster  # noqa: E402
from harness.config.defaults import set_defaults  # noqa: E402
from harness.framework.registry import default_registry  # noqa: E402
from harness.scheduler.scheduler import Scheduler  # noqa: E402
from harness.testing import make_node, make_pod  # noqa: E402

from fast_path_runs import fast_and_reference, pod_outcomes, preemption_fast_paths, run_until_quiet  # noqa: E402

REGISTRY = default_registry()
TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}

node_st = st.fixed_dictionaries({
    "cpu": st.sampled_from(["1", "2", "4"]),
    "pods": st.sampled_from(["2", "4", "110"]),
    "zone": st.sampled_from(["a", "b"]),
    "taint": st.sampled_from([False, False, False, True]),
    "unschedulable": st.sampled_from([False, False, False, False, True]),
    "running": st.lists(st.tuples(st.sampled_from(["300m", "500m", "900m"]), st.sampled_from([0, 0, 5, 20]),
                                  st.sampled_from([False, False, False, True])), max_size=4),
})

pod_st = st.fixed_dictionaries({
    "cpu": st.sampled_from(["500m", "1", "1500m", "3", "5"]),
    "priority": st.sampled_from([1, 10, 10, 30]),
    "selector": st.sampled_from([None, None, "a", "b"]),
    "tolerate": st.sampled_from([False, False, True]),
    "ports": st.sampled_from([False, False, False, True]),
    "nominated": st.sampled_from([None, None, None, 0, 1]),
    "never": st.sampled_from([False] * 7 + [True]),
})


def _spec(cpu, ports, selector=None, tolerate=False):
    c = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}}}
    if ports:
        c["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    spec = {"containers": [c]}
    if selector:
        spec["nodeSelector"] = {"zone": selector}
    if tolerate:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    return spec


def _objects(nodes, pending):
    objs, pods = [], []
    for i, d in enumerate(nodes):
        objs.append(make_node(f"n{i}", labels={"kubernetes.io/hostname": f"n{i}", "zone": d["zone"]},
                              allocatable={"cpu": d["cpu"], "memory": "8Gi", "pods": d["pods"]},
                              taints=[TAINT] if d["taint"] else None,
                              spec={"unschedulable": True} if d["unschedulable"] else None))
        for j, (cpu, prio, ports) in enumerate(d["running"]):
            objs.append(make_pod(f"run-{i}-{j}", node_name=f"n{i}", spec=_spec(cpu, ports), priority=prio,
                                 uid=f"uid-run-{i}-{j}"))
    for k, (d, copies) in enumerate(pending):
        for c in range(copies):
            spec = _spec(d["cpu"], d["ports"], d["selector"], d["tolerate"])
            if d["never"]:
                spec["preemptionPolicy"] = "Never"
            p = make_pod(f"p-{k}-{c}", spec=spec, priority=d["priority"], uid=f"uid-p-{k}-{c}")
            if d["nominated"] is not None:
                p.raw.setdefault("status", {})["nominatedNodeName"] = f"n{d['nominated'] % len(nodes)}"
                p = type(p)(p.raw)
            pods.append(p)
    return objs, pods


def _run(nodes, pending, percentage, lazy: bool, read: str, mp):
    seen = []
    # the reference: no memos either (the dry run's answers by row of the node table among them)
    preemption_fast_paths(mp, seen, lazy, read)
    objs, pods = _objects(nodes, pending)
    cluster = Cluster()
    for o in objs:
        cluster.create(o, notify=False)
    sched = Scheduler(set_defaults({"percentageOfNodesToScore": percentage}, REGISTRY), REGISTRY, cluster, seed=7)
    sched.keep_records = False  # as in bench: the walk hands its rejections over as columns
    run_until_quiet(sched, cluster, pods)
    return seen, pod_outcomes(cluster)


@settings(max_examples=500, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(nodes=st.lists(node_st, min_size=2, max_size=9),
       pending=st.lists(st.tuples(pod_st, st.integers(1, 3)), min_size=1, max_size=3),
       percentage=st.sampled_from([0, 50, 100]), min_nodes=st.sampled_from([1, 2, 3, 100]),
       read=st.sampled_from(["before", "after", "none"]))
def test_lazy_statuses_match_per_node_statuses(nodes, pending, percentage, min_nodes, read):
    fast, slow = fast_and_reference(lambda lazy, mp: _run(nodes, pending, percentage, lazy, read, mp), min_nodes)
    assert fast == slow
