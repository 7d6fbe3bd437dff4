"""Property test (hypothesis): explain's table of every Filter plugin's status on every node
(harness/framework/verbose_filters.py, the batch forms asked once for all the nodes) is the
table the per-node calls make (Framework.run_filter_plugins_verbose on each node), on random
clusters with extended resources, taints, affinity and spreading, over the node table however
small the cluster; and recording it changes no outcome."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from builtin_plugins import node_sums  # noqa: E402
from builtin_plugins.podtopologyspread import filtering as pts_filtering  # noqa: E402
from harness.cluster import Cluster  # noqa: E402
from harness.config.defaults import set_defaults  # noqa: E402
from harness.framework.verbose_filters import FilterTable  # noqa: E402
from harness.scheduler.scheduler import Scheduler  # noqa: E402

from fast_path_runs import fast_and_reference, observed, run_until_quiet  # noqa: E402
from test_batch_equivalence import REGISTRY, _node, _pod, node_st, pod_st  # noqa: E402


def _rows(table):
    return {n: [(p, None if s is None else (int(s.code), tuple(s.get_reasons()))) for p, s in rows]
            for n, rows in table.items()}


def _run(nodes, pods, percentage, batch: bool, explain: bool = True):
    pts_filtering.USE_NODE_COUNTS_CACHE = batch
    node_sums.ENABLED = batch
    cluster = Cluster()
    for o in nodes + [p for p in pods if p.node_name]:
        cluster.create(o, notify=False)
    sched = Scheduler(set_defaults({"percentageOfNodesToScore": percentage}, REGISTRY), REGISTRY, cluster, seed=7)
    sched.explain = explain
    run_until_quiet(sched, cluster, [p for p in pods if not p.node_name], batch)
    tables = {key: [(r.attempt, _rows(r.filter_table), isinstance(r.filter_table, FilterTable) or not r.filter_table)
                    for r in recs] for key, recs in sched.records.items()}
    return tables, observed(sched, cluster)[1]


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nodes=st.lists(node_st, min_size=1, max_size=7), bound=st.lists(pod_st, max_size=4),
       pending=st.lists(pod_st, min_size=1, max_size=4), percentage=st.sampled_from([0, 50, 100]))
def test_the_columns_are_the_per_node_rows(nodes, bound, pending, percentage):
    node_objs = [_node(i, d) for i, d in enumerate(nodes)]
    pods = []
    for i, d in enumerate(bound):
        if d["bound_to"] is not None:
            pods.append(_pod(i, d, len(nodes), f"n{d['bound_to'] % len(nodes)}"))
    pods += [_pod(100 + i, d, len(nodes), None) for i, d in enumerate(pending)]
    batch, per_node = fast_and_reference(lambda batch, mp: _run(node_objs, pods, percentage, batch))
    assert batch == per_node
    assert all(kept for recs in batch[0].values() for _, _, kept in recs)  # columns, not dicts
    # explain only looks: the same bindings without it
    assert _run(node_objs, pods, percentage, True, explain=False)[1] == batch[1]


def test_a_table_reads_as_the_dict_of_rows():
    from harness.framework.status import Code, Status

    st_ = Status(Code.Unschedulable, "too small")
    t = FilterTable(["a", "b"], [("Skipped", "skip"), ("Passes", "pass"), ("Fit", [None, st_])])
    assert list(t) == ["a", "b"] and len(t) == 2 and "b" in t and "c" not in t
    assert [(p, s.code if s else None) for p, s in t["a"]] == [("Skipped", Code.Skip), ("Passes", None), ("Fit", None)]
    assert t["b"][2] == ("Fit", st_)
    assert dict(t.items()).keys() == {"a", "b"} and len(list(t.values())) == 2
    with pytest.raises(KeyError):
        t["c"]
