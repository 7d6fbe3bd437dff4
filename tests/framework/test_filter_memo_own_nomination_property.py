"""Property test (hypothesis, derandomized): every answer the remembered-filter memo hands out
by row of the node table (Framework.nominated_filter_rows, filter_memo.NominationColumns.valid)
is the answer RunFilterPluginsWithNominatedPods gives now, for pods of one shape nominated to
nodes and un-nominated in the queue's Nominator in any order between their filter calls.

In particular a pod never reuses, for the node it is itself nominated to, an answer another pod
of its shape remembered there: that answer counted the pod among the node's nominated pods,
which the pod's own call leaves out (addGENominatedPods skips the pod itself); nor does another
pod reuse the answer a pod remembered on its own node (filter_memo.nomination_version). Removing
either rule fails this test (the explicit example, and the random search on its own). The dry
run's row memo (DefaultPreemption.victims_on_node_checker) reads the same NominationColumns.valid.

The scheduler's own walk meets this rarely (evaluateNominatedNode filters the nominated node
first and overwrites its row), so the memo is driven here directly, as the walk drives it:
look the rows up, then filter the others node by node and remember them."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness.cluster import Cluster  # noqa: E402
from harness.config.defaults import set_defaults  # noqa: E402
from harness.framework import node_table  # noqa: E402
from harness.framework.cycle_state import CycleState  # noqa: E402
from harness.framework.registry import default_registry  # noqa: E402
from harness.framework.types import PodInfo  # noqa: E402
from harness.scheduler.scheduler import Scheduler  # noqa: E402
from harness.testing import make_node, make_pod  # noqa: E402

REGISTRY = default_registry()
N_PODS = 4

op_st = st.one_of(
    st.tuples(st.just("nominate"), st.integers(0, N_PODS - 1), st.integers(0, 2)),
    st.tuples(st.just("forget"), st.integers(0, N_PODS - 1), st.just(0)),
    st.tuples(st.just("filter"), st.integers(0, N_PODS - 1), st.just(0)),
)


def _kind(status):
    """A Filter answer as the row memo keeps it: None (passes) or (code, reasons, plugin)."""
    if status is None or status.is_success():
        return None
    return (status.code, tuple(status.get_reasons()), status.plugin)


def _scheduler(used):
    cluster = Cluster()
    for i, cpu in enumerate(used):
        cluster.create(make_node(f"n{i}", allocatable={"cpu": "4", "memory": "32Gi", "pods": "110"}), notify=False)
        if cpu:
            cluster.create(make_pod(f"used-{i}", node_name=f"n{i}", requests={"cpu": cpu}, uid=f"uid-used-{i}"),
                           notify=False)
    sched = Scheduler(set_defaults({}, REGISTRY), REGISTRY, cluster, seed=1)
    sched.start()
    sched.cache.update_snapshot(sched.snapshot)
    return sched


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(used=st.lists(st.sampled_from(["", "", "1", "2"]), min_size=1, max_size=3),
       ops=st.lists(op_st, min_size=1, max_size=10))
# b remembers n0 with a (nominated there) counted: no room; a's own answer on n0 is a pass
@example(used=[""], ops=[("nominate", 0, 0), ("filter", 1, 0), ("filter", 0, 0)])
def test_a_remembered_row_answer_is_the_answer_now(used, ops):
    saved = node_table.MIN_NODES
    node_table.MIN_NODES = 0
    try:
        sched = _scheduler(used)
        fw = sched.profiles["default-scheduler"]
        nominator = sched.queue.nominator
        snap = sched.snapshot
        pods = [make_pod(f"p{k}", requests={"cpu": "3"}, priority=10, uid=f"uid-p{k}") for k in range(N_PODS)]
        n = len(used)
        for what, k, node in ops:
            pod = pods[k]
            if what == "nominate":
                nominator.add(PodInfo.of(pod), f"n{node % n}")
                continue
            if what == "forget":
                nominator.delete(pod)
                continue
            table = node_table.table_of(snap)
            assert table is not None
            state = CycleState()
            fw.run_pre_filter_plugins(state, pod)
            infos = snap.node_info_list
            now = [_kind(fw.run_filter_plugins_with_nominated_pods_uncached(state, pod, ni)) for ni in infos]
            rows = node_table.row_index(slice(0, len(infos)))
            known = fw.nominated_filter_rows(state, pod, table, rows)
            assert known is not None
            hit, kind, kinds = known
            for j, row in enumerate(rows[hit].tolist()):
                got = None if kind[j] < 0 else kinds[kind[j]]
                got = None if got is None else (got[0], tuple(got[1]), got[2])
                assert got == now[row], (pod.name, table.names[row], got, now[row])
            # then, as the walk does, the rows with nominated pods not answered go node by node
            # (and are remembered), every other row through the plain filters
            rest = [infos[r] for r in rows[~hit].tolist() if nominator.nominated.get(table.names[r])]
            for ni, status in zip(rest, fw.run_filter_plugins_with_nominated_pods_many(state, pod, rest)):
                assert _kind(status) == now[table.row_of[ni.node.name]]
    finally:
        node_table.MIN_NODES = saved
