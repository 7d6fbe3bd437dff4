"""The node table's fast paths for extended resources against the per-node hooks (property test,
hypothesis): NodeResourcesFit's Filter on scalar requests (ignored resources and groups, DRA
delegation of a resource a DeviceClass maps), every scoring strategy (LeastAllocated,
MostAllocated, RequestedToCapacityRatio) over any list of resources, BalancedAllocation over any
list, and required node affinity on label values. On random clusters whose nodes have, lack or
fill extended resources, a scheduler with the batch forms and one calling each plugin per node
give identical statuses, scores, picks and bindings, in v1.34, v1.35 and v1.36."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from builtin_plugins import node_sums  # noqa: E402
from builtin_plugins.podtopologyspread import filtering as pts_filtering  # noqa: E402
from harness.api.objects import make_object  # noqa: E402
from harness.cluster import Cluster  # noqa: E402
from harness.config.defaults import set_defaults  # noqa: E402
from harness.framework.registry import default_registry  # noqa: E402
from harness.scheduler.scheduler import Scheduler  # noqa: E402
from harness.testing import make_node, make_pod  # noqa: E402

from fast_path_runs import (TableSnapshot, fast_and_reference, plugin_on_its_own, run_observed,  # noqa: E402
                            status_key as _status)
from harness.versions import case_features  # noqa: E402


REGISTRY = default_registry()
GPU, FPGA, NIC = "example.com/gpu", "example.com/fpga", "other.io/nic"
HUGE = "hugepages-2Mi"
MODEL = "example.com/gpu-model"
SCORED = ["cpu", "memory", "ephemeral-storage", GPU, FPGA, NIC, HUGE]

node_st = st.fixed_dictionaries({
    # 50m and 100Mi: below the non-zero defaults of a pod without requests (scores cap them)
    "cpu": st.sampled_from(["0", "50m", "4", "32", "32"]),
    "memory": st.sampled_from(["0", "100Mi", "4Gi", "64Gi", "64Gi"]),
    "eph": st.sampled_from([None, "10Gi", "100Gi"]),
    "pods": st.sampled_from(["1", "3", "110", "110"]),
    "gpu": st.sampled_from([None, "0", "2000", "8000", "8000"]),
    "fpga": st.sampled_from([None, "0", "2", "8"]),
    "nic": st.sampled_from([None, "4", "16"]),
    "huge": st.sampled_from([None, "1Gi", "8Gi"]),
    "model": st.sampled_from([None, "A10", "T4", "V100"]),
    "gen": st.sampled_from([None, "3", "5"]),
})

pod_st = st.fixed_dictionaries({
    "cpu": st.sampled_from([None, "0", "100m", "1", "6"]),
    "memory": st.sampled_from([None, "100Mi", "2Gi", "8Gi"]),
    "eph": st.sampled_from([None, None, None, "1Gi"]),
    "gpu": st.sampled_from([None, None, None, "0", "500", "1000", "4000"]),
    "fpga": st.sampled_from([None, None, None, None, "1"]),
    "nic": st.sampled_from([None, None, None, None, "1"]),
    "huge": st.sampled_from([None, None, None, None, "512Mi"]),
    "affinity": st.sampled_from([None, None, None, None, "in", "notin", "exists", "gt", "two-terms", "selector"]),
    "priority": st.sampled_from([0, 0, 10]),
})

resources_st = st.lists(st.tuples(st.sampled_from(SCORED), st.integers(1, 5)), min_size=1, max_size=4,
                        unique_by=lambda r: r[0])
shape_st = st.sampled_from([
    [(0, 0), (100, 10)], [(0, 10), (100, 0)], [(0, 3), (40, 9), (70, 2), (100, 6)],
    [(10, 1), (50, 8), (90, 5)],
])
strategy_st = st.one_of(
    st.tuples(st.sampled_from(["LeastAllocated", "MostAllocated"]), resources_st, st.none()),
    st.tuples(st.just("RequestedToCapacityRatio"), resources_st, shape_st),
)


def _node(i, d):
    labels = {"kubernetes.io/hostname": f"n{i}"}
    if d["model"]:
        labels[MODEL] = d["model"]
    if d["gen"]:
        labels["example.com/gen"] = d["gen"]
    alloc = {"cpu": d["cpu"], "memory": d["memory"], "pods": d["pods"]}
    for key, name in (("eph", "ephemeral-storage"), ("gpu", GPU), ("fpga", FPGA), ("nic", NIC), ("huge", HUGE)):
        if d[key] is not None:
            alloc[name] = d[key]
    return make_node(f"n{i}", labels=labels, allocatable=alloc)


def _affinity(kind):
    exprs = {
        "in": [{"key": MODEL, "operator": "In", "values": ["A10", "V100"]}],
        "notin": [{"key": MODEL, "operator": "NotIn", "values": ["T4"]}],
        "exists": [{"key": MODEL, "operator": "Exists"}],
        "gt": [{"key": "example.com/gen", "operator": "Gt", "values": ["4"]}],
    }
    if kind == "two-terms":
        terms = [{"matchExpressions": exprs["in"]}, {"matchExpressions": exprs["gt"]}]
    else:
        terms = [{"matchExpressions": exprs[kind]}]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def _pod(name, d, node=""):
    req = {}
    for key, res in (("cpu", "cpu"), ("memory", "memory"), ("eph", "ephemeral-storage"), ("gpu", GPU),
                     ("fpga", FPGA), ("nic", NIC), ("huge", HUGE)):
        if d[key] is not None:
            req[res] = d[key]
    if HUGE in req:  # hugepages need cpu or memory requests (validation)
        req.setdefault("memory", "100Mi")
    # an extended resource's limit must equal its request
    limits = {k: v for k, v in req.items() if k not in ("cpu", "memory", "ephemeral-storage")}
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": req, "limits": limits}}]}
    if d["affinity"] == "selector":
        spec["nodeSelector"] = {MODEL: "A10"}
    elif d["affinity"]:
        spec["affinity"] = _affinity(d["affinity"])
    return make_pod(name, node_name=node, spec=spec, priority=d["priority"], uid=f"uid-{name}")


def _config(strategy, balanced, ignored):
    kind, resources, shape = strategy
    scoring = {"type": kind, "resources": [{"name": n, "weight": w} for n, w in resources]}
    if shape is not None:
        scoring["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
    fit = {"scoringStrategy": scoring}
    if ignored == "resource":
        fit["ignoredResources"] = [NIC]
    elif ignored == "group":
        fit["ignoredResourceGroups"] = ["other.io"]
    plugin_config = [{"name": "NodeResourcesFit", "args": fit}]
    if balanced is not None:
        plugin_config.append({"name": "NodeResourcesBalancedAllocation",
                              "args": {"resources": [{"name": n, "weight": 1} for n, _ in balanced]}})
    return {"percentageOfNodesToScore": 100, "parallelism": 1,
            "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": plugin_config}]}


def _run(version, nodes, bound, pending, cfg, device_class, batch: bool):
    node_sums.ENABLED = batch
    pts_filtering.USE_NODE_COUNTS_CACHE = batch
    features = case_features(version, None)
    cluster = Cluster(features)
    if device_class:
        cluster.create(make_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                    "metadata": {"name": "fpga"},
                                    "spec": {"extendedResourceName": FPGA}}), notify=False)
    for o in nodes + bound:
        cluster.create(o, notify=False)
    sched = Scheduler(set_defaults(cfg, REGISTRY, features), REGISTRY, cluster, seed=7, features=features)
    return run_observed(sched, cluster, pending, batch)


@settings(max_examples=500, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(version=st.sampled_from(["v1.34", "v1.35", "v1.36"]),
       nodes=st.lists(node_st, min_size=2, max_size=8),
       bound=st.lists(st.tuples(pod_st, st.integers(0, 7)), max_size=4),
       pending=st.lists(st.tuples(pod_st, st.integers(1, 3)), min_size=1, max_size=3),
       strategy=strategy_st, balanced=st.one_of(st.none(), resources_st),
       ignored=st.sampled_from([None, None, "resource", "group"]), device_class=st.booleans(),
       min_nodes=st.sampled_from([2, 3, 100]))
def test_resource_fast_paths_agree_with_per_node_hooks(version, nodes, bound, pending, strategy, balanced,
                                                       ignored, device_class, min_nodes):
    node_objs = [_node(i, d) for i, d in enumerate(nodes)]
    bound_pods = [_pod(f"b{i}", d, f"n{k % len(nodes)}") for i, (d, k) in enumerate(bound)]
    shapes = [d for d, n in pending for _ in range(n)]
    pending_pods = [_pod(f"p{100 + i}", d) for i, d in enumerate(shapes)]
    cfg = _config(strategy, balanced, ignored)
    batch, per_node = fast_and_reference(
        lambda batch, mp: _run(version, node_objs, bound_pods, pending_pods, cfg, device_class, batch), min_nodes)
    assert batch == per_node


# ---------------------------------------------------------------------------------------------
# The scorers' and the Filter's column forms node by node: random nodes with random pods on
# them (over-committed ones too: the non-zero defaults of pods without requests exceed small
# nodes), every strategy, BalancedAllocation before and after v1.36's change, against the
# per-node hooks on the same NodeInfos. Faster than whole schedulers, so many more examples.
# ---------------------------------------------------------------------------------------------
small_node_st = node_st.map(lambda d: d)
placed_st = st.lists(pod_st, max_size=4)


def _node_infos(nodes, placed):
    from harness.framework import NodeInfo
    infos = []
    for i, (d, pods) in enumerate(zip(nodes, placed)):
        ni = NodeInfo()
        ni.set_node(_node(i, d))
        for k, pd in enumerate(pods):
            ni.add_pod(_pod(f"x{i}-{k}", pd, f"n{i}"))
        infos.append(ni)
    return infos


def _plugin(version, cls_name, args):
    return plugin_on_its_own(REGISTRY, version, cls_name, args)


@settings(max_examples=1500, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(version=st.sampled_from(["v1.34", "v1.35", "v1.36"]), nodes=st.lists(node_st, min_size=1, max_size=8),
       placed=st.lists(placed_st, min_size=8, max_size=8), pod=pod_st, strategy=strategy_st,
       balanced=resources_st, ignored=st.sampled_from([None, "resource", "group"]))
def test_column_forms_agree_node_by_node(version, nodes, placed, pod, strategy, balanced, ignored):
    from harness.framework.cycle_state import CycleState
    from harness.framework.node_table import NodeRows, NodeTable
    infos = _node_infos(nodes, placed)
    table = NodeTable(TableSnapshot(infos))
    if not table.safe:
        return
    rows = NodeRows(infos, table, slice(0, len(infos)))
    p = _pod("p", pod)
    cfg = _config(strategy, balanced, ignored)["profiles"][0]["pluginConfig"]
    fit = _plugin(version, "NodeResourcesFit", cfg[0]["args"])
    bal = _plugin(version, "NodeResourcesBalancedAllocation",
                  {"resources": [{"name": n, "weight": 1} for n, _ in balanced]})
    state = CycleState()
    fit.pre_filter(state, p, infos)
    got = fit.filter_nodes(state, p, rows)
    if got is not None:
        want = [fit.filter(state, p, ni) for ni in infos]
        assert [_status(s) for s in got] == [_status(s) for s in want]
    for plugin in (fit, bal):
        if plugin.pre_score(state, p, infos) is not None:
            continue  # skipped (a best-effort pod for BalancedAllocation)
        col = plugin.score_nodes(state, p, rows)
        want = [plugin.score(state, p, ni) for ni in infos]
        if col is None:
            continue
        assert list(col) == [sc for sc, _ in want], plugin.name
