"""The node table's derived columns (NodeTable.derived) against the per-node hooks (property
test, hypothesis): NodeResourcesFit's Filter key and the cpu/memory scorers of every strategy
and of BalancedAllocation (v1.34's and v1.36's), kept across cycles, only the rows refreshed
since recomputed (in Python for a few rows, with numpy for more). Nodes and pods are sized so
that pods fill nodes exactly (requests equal to what is free, pod counts at the limit), nodes
gain and lose taints and unschedulable, and after every change each derived column and the
flag counts must equal what the columns give (the table's check) and each batch form the
plugin's per-node answers."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness.framework import NodeInfo  # noqa: E402
from harness.framework.cycle_state import CycleState  # noqa: E402
from harness.framework.node_table import NodeRows, NodeTable  # noqa: E402
from harness.framework.registry import default_registry  # noqa: E402
from harness.testing import make_node, make_pod  # noqa: E402

from fast_path_runs import TableSnapshot, plugin_on_its_own, status_key  # noqa: E402

REGISTRY = default_registry()

node_st = st.fixed_dictionaries({
    "cpu": st.sampled_from(["0", "1", "2"]),
    "memory": st.sampled_from(["0", "1Gi", "2Gi"]),
    "pods": st.sampled_from(["1", "2", "3", "110"]),
})
request_st = st.fixed_dictionaries({
    "cpu": st.sampled_from([None, "0", "500m", "1", "2"]),
    "memory": st.sampled_from([None, "512Mi", "1Gi", "2Gi"]),
})
strategy_st = st.sampled_from([
    {"type": "LeastAllocated"}, {"type": "MostAllocated"},
    {"type": "RequestedToCapacityRatio",
     "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}},
])


def _pod(name, d, node_name=""):
    req = {k: v for k, v in d.items() if v is not None}
    return make_pod(name, node_name=node_name,
                    spec={"containers": [{"name": "c", "image": "pause", "resources": {"requests": req}}]})


def _plugin(version, cls_name, args):
    return plugin_on_its_own(REGISTRY, version, cls_name, args)


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(version=st.sampled_from(["v1.34", "v1.36"]), nodes=st.lists(node_st, min_size=1, max_size=12),
       pods=st.lists(request_st, min_size=1, max_size=3), strategy=strategy_st,
       steps=st.lists(st.tuples(st.integers(0, 11), request_st, st.sampled_from([None, None, 0, 1, 2, 3])),
                      min_size=1, max_size=14),
       batch=st.sampled_from([1, 1, 3, 10]))
def test_derived_columns_follow_the_nodes(version, nodes, pods, strategy, steps, batch):
    infos = []
    for i, d in enumerate(nodes):
        ni = NodeInfo()
        ni.set_node(make_node(f"n{i}", allocatable=d))
        infos.append(ni)
    snap = TableSnapshot(infos)
    table = NodeTable(snap)
    rows = NodeRows(infos, table, slice(0, len(infos)))
    fit = _plugin(version, "NodeResourcesFit", {"scoringStrategy": dict(strategy, resources=[
        {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}])})
    bal = _plugin(version, "NodeResourcesBalancedAllocation",
                  {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]})
    pending = [_pod(f"p{k}", d) for k, d in enumerate(pods)]

    def compare():
        for p in pending:
            state = CycleState()
            fit.pre_filter(state, p, infos)
            got = fit.filter_nodes(state, p, rows)
            if got is not None:
                assert [status_key(s) for s in got] == [status_key(fit.filter(state, p, ni)) for ni in infos]
            for plugin in (fit, bal):
                if plugin.pre_score(state, p, infos) is not None:
                    continue
                col = plugin.score_nodes(state, p, rows)
                if col is not None:
                    assert list(col) == [plugin.score(state, p, ni)[0] for ni in infos], plugin.name
        table.check()

    compare()
    for k, (at, d, flags) in enumerate(steps):
        # `batch` placements between two reads: a few rows (Python) or many (numpy)
        for j in range(batch):
            ni = infos[(at + j) % len(infos)]
            ni.add_pod(_pod(f"x{k}-{j}", d, ni.node.name))
            if flags is not None:  # the node updated: tainted and/or unschedulable, or neither
                ni.set_node(make_node(ni.node.name, allocatable=nodes[(at + j) % len(infos)],
                                      taints=[{"key": "k", "effect": "PreferNoSchedule"}] if flags & 1 else [],
                                      spec={"unschedulable": True} if flags & 2 else {}))
            snap.journal.append(ni.node.name)
        table.catch_up(snap)
        compare()
