"""Property test (hypothesis): 2,000 random valid clusters and pods. Whatever the input, the
harness never raises, never over-commits a node (cpu, memory, pod count), never binds a pod to a
node whose NoSchedule/NoExecute taints it does not tolerate or whose labels fail its
nodeSelector, and gives the same outcome twice for the same seed (checked on one example in
five: 400 repeats, keeping the run near 20 s)."""

from __future__ import annotations

import copy

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness.api.quantity import milli_value, value  # noqa: E402
from harness.api.taints import tolerations_tolerate_taint  # noqa: E402
from harness.case.loader import case_from_data  # noqa: E402
from harness.case.runner import run_case  # noqa: E402

TAINTS = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
          {"key": "spot", "effect": "NoExecute"},
          {"key": "soft", "effect": "PreferNoSchedule"}]
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
TOLERATIONS = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
               {"key": "spot", "operator": "Exists"},
               {"operator": "Exists"}]


@st.composite
def clusters(draw):
    n_nodes = draw(st.integers(1, 4))
    nodes, free = [], {}
    for i in range(n_nodes):
        name = f"n{i}"
        cpu = draw(st.sampled_from([1000, 2000, 4000]))
        mem = draw(st.integers(1, 8))
        pods_cap = draw(st.integers(1, 6))
        taints = draw(st.lists(st.sampled_from(range(len(TAINTS))), max_size=2, unique=True))
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                      "zone": draw(st.sampled_from(["a", "b"]))}},
                "spec": {"taints": [TAINTS[t] for t in taints], "unschedulable": draw(st.booleans()) and i > 0},
                "status": {"allocatable": {"cpu": f"{cpu}m", "memory": f"{mem}Gi", "pods": str(pods_cap)}}}
        nodes.append(node)
        free[name] = [cpu, mem * 1024, pods_cap]
    objs = list(nodes)
    for j in range(draw(st.integers(0, 4))):
        name = f"n{draw(st.integers(0, n_nodes - 1))}"
        cpu, mem = draw(st.sampled_from([100, 500, 1000])), draw(st.sampled_from([128, 512]))
        if cpu > free[name][0] or mem > free[name][1] or free[name][2] < 1:
            continue
        free[name] = [free[name][0] - cpu, free[name][1] - mem, free[name][2] - 1]
        objs.append(_pod(f"run-{j}", cpu, mem, draw(st.sampled_from([0, 10])), node=name,
                         phase=draw(st.sampled_from(["Running", "Running", "Succeeded"]))))
    pending = []
    for k in range(draw(st.integers(1, 5))):
        p = _pod(f"p-{k}", draw(st.sampled_from([100, 500, 1000, 1500, 3000])), draw(st.sampled_from([128, 1024, 4096])),
                 draw(st.sampled_from([0, 0, 5, 100])))
        if draw(st.booleans()):
            p["spec"]["nodeSelector"] = {"zone": draw(st.sampled_from(["a", "b"]))}
        p["spec"]["tolerations"] = [TOLERATIONS[t] for t in draw(st.lists(st.sampled_from(range(3)), max_size=2, unique=True))]
        if draw(st.integers(0, 4)) == 0:
            p["spec"]["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                                        "labelSelector": {"matchLabels": {"app": "x"}}}]
        pending.append(p)
    case = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "seed": draw(st.integers(0, 3)),
            "cluster": objs, "pods": pending, "expect": {}}
    return case, draw(st.integers(0, 4)) == 0


def _pod(name, cpu, mem, priority, node=None, phase=None):
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "x"}},
         "spec": {"priority": priority,
                  "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}}}]}}
    if node:
        p["spec"]["nodeName"] = node
    if phase:
        p["status"] = {"phase": phase}
    return p


def _outcome(data):
    res = run_case(case_from_data(copy.deepcopy(data), "random.yaml"))
    return res, (res.bindings, res.preempted, res.nominated, res.messages)


@settings(max_examples=2000, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(clusters())
def test_random_clusters(example):
    data, check_repeat = example
    res, outcome = _outcome(data)
    if check_repeat:  # one example in five
        assert _outcome(data)[1] == outcome  # the same seed, the same result
    nodes = {n.name: n for n in res.scheduler.cluster.list("Node")}
    used = {name: [0, 0, 0] for name in nodes}
    for p in res.scheduler.cluster.list("Pod"):
        if not p.node_name or (p.raw.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        req = p.spec["containers"][0]["resources"]["requests"]
        u = used[p.node_name]
        u[0] += milli_value(req["cpu"])
        u[1] += value(req["memory"])
        u[2] += 1
        if p.key in res.bindings:  # placed by the scheduler
            node = nodes[p.node_name]
            for taint in node.taints:
                if taint["effect"] in ("NoSchedule", "NoExecute"):
                    assert tolerations_tolerate_taint(p.tolerations, taint), (p.key, node.name)
            for k, v in (p.spec.get("nodeSelector") or {}).items():
                assert node.labels.get(k) == v, (p.key, node.name)
            if node.unschedulable:  # NodeUnschedulable lets a pod through that tolerates its taint
                assert tolerations_tolerate_taint(p.tolerations, UNSCHEDULABLE_TAINT), (p.key, node.name)
    for name, (cpu, mem, count) in used.items():
        alloc = nodes[name].allocatable
        assert cpu <= milli_value(alloc["cpu"]) and mem <= value(alloc["memory"]) and count <= value(alloc["pods"]), name
