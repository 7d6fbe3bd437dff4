"""Property test (hypothesis, derandomized): the answers remembered by row for nodes with
nominated pods (filter_memo.NominationColumns: the filter walk's FilterRowMemo and the dry
run's row memo, its failed nodes handed to the NodeToStatus as columns) against the per-node
reference (no memo, one Status per node as the walk meets it), on PreemptionBasic-shaped
clusters: nodes full of low-priority pods, waves of preemptors of a few priorities and sizes
(some already nominated, to a node or to one that does not exist), so that nominations pile up,
change and go while the memos are read, on a node table of a few rows.

What must be identical: every pod's binding, nomination and PodScheduled message, the dry
runs (potential nodes, candidates, victims, every status in order) and the NodeToStatus each
PostFilter is given, read whole after DefaultPreemption."""

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

from fast_path_runs import fast_and_reference, pod_outcomes, preemption_fast_paths  # noqa: E402

REGISTRY = default_registry()

wave_st = st.tuples(st.sampled_from(["1", "2500m", "3"]),  # cpu
                    st.sampled_from([5, 10, 10, 20]),  # priority
                    st.integers(1, 6),  # copies
                    st.sampled_from([None, None, None, 0, 1, 2, "gone"]))  # nominated to


def _run(n_nodes, fill, waves, percentage, fast: bool, mp, extra=None):
    seen = []
    preemption_fast_paths(mp, seen, fast)
    cluster = Cluster()
    for i in range(n_nodes):
        cluster.create(make_node(f"n{i}", labels={"kubernetes.io/hostname": f"n{i}"},
                                 allocatable={"cpu": "4", "memory": "32Gi", "pods": "110"}), notify=False)
        for j, (cpu, prio) in enumerate(fill[i % len(fill)]):
            cluster.create(make_pod(f"low-{i}-{j}", node_name=f"n{i}", requests={"cpu": cpu, "memory": "500Mi"},
                                    priority=prio, uid=f"uid-low-{i}-{j}"), notify=False)
    sched = Scheduler(set_defaults({"percentageOfNodesToScore": percentage}, REGISTRY), REGISTRY, cluster, seed=3)
    sched.keep_records = False  # as in bench: rejections as columns
    sched.start()
    if extra is not None:  # explicit steps instead of the waves
        for batch in extra():
            for p in batch:
                cluster.create(p)
            sched.run_until_quiet()
        waves = []
    for w, (cpu, prio, copies, nominated) in enumerate(waves):
        for c in range(copies):
            p = make_pod(f"high-{w}-{c}", requests={"cpu": cpu, "memory": "500Mi"}, priority=prio,
                         uid=f"uid-high-{w}-{c}")
            if nominated is not None:
                target = "gone" if nominated == "gone" else f"n{nominated % n_nodes}"
                p.raw.setdefault("status", {})["nominatedNodeName"] = target
                p = type(p)(p.raw)
            cluster.create(p)
        if w % 2:
            sched.run_until_quiet()  # some waves meet the nominations of the earlier ones
    sched.run_until_quiet()
    return seen, pod_outcomes(cluster)


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(n_nodes=st.integers(2, 12),
       fill=st.lists(st.lists(st.tuples(st.sampled_from(["900m", "900m", "500m", "1500m"]),
                                        st.sampled_from([0, 0, 1, 10])), min_size=1, max_size=4),
                     min_size=1, max_size=3),
       waves=st.lists(wave_st, min_size=1, max_size=4),
       percentage=st.sampled_from([0, 100]), min_nodes=st.sampled_from([1, 3, 100]))
def test_nominated_rows_match_per_node_path(n_nodes, fill, waves, percentage, min_nodes):
    _both(None, n_nodes, fill, percentage, waves, min_nodes)


def _stuck(name, prio, node, cpu="3"):
    """A pod nominated to `node` that stays pending and nominated: it never preempts and its
    node selector matches no node."""
    p = make_pod(name, requests={"cpu": cpu, "memory": "500Mi"}, priority=prio, uid=f"uid-{name}",
                 spec={"preemptionPolicy": "Never", "nodeSelector": {"zone": "nowhere"}})
    p.raw.setdefault("status", {})["nominatedNodeName"] = node
    return type(p)(p.raw)


def _fill(prio=0):
    return [[("500m", prio)], [], [], []]  # n0 a little used: the pods prefer the empty nodes


def _both(extra, n_nodes=4, fill=None, percentage=100, waves=(), min_nodes=None):
    """The run with the fast paths (node table at any size, checked) and without: the same."""
    fast, slow = fast_and_reference(lambda on, mp: _run(n_nodes, fill or _fill(), waves, percentage, on, mp, extra),
                                    min_nodes)
    assert fast == slow
    return slow


def test_filter_answer_of_a_node_whose_nominations_changed_is_not_reused():
    """a's answer on n0 (room for it: the nominated pod there has a lower priority) is
    remembered; then a pod of a higher priority is nominated to n0 (its NodeInfo unchanged);
    b, of a's shape, must not fit there any more."""
    def steps():
        yield [_stuck("low-nominee", 1, "n0")]
        yield [make_pod("a", requests={"cpu": "3", "memory": "500Mi"}, priority=10, uid="uid-a")]
        yield [_stuck("high-nominee", 20, "n0")]
        yield [make_pod("b", requests={"cpu": "3", "memory": "500Mi"}, priority=10, uid="uid-b")]
        yield [make_pod("c", requests={"cpu": "3", "memory": "500Mi"}, priority=10, uid="uid-c")]
    seen, outcome = _both(steps)
    nodes = {key: node for key, node, _, _ in outcome}
    assert nodes["default/b"] != "n0" and nodes["default/c"] != "n0"


def test_dry_run_answer_of_a_node_whose_nominations_changed_is_not_reused():
    """Every node full of low-priority pods: a's dry run remembers n0 (its nominated pod of a
    lower priority left out); a pod of a higher priority is then nominated to n0; b's dry run,
    of a's shape, must see it there."""
    fill = [[("900m", 0)] * 4]
    def steps():
        yield [_stuck("low-nominee", 1, "n0", cpu="1")]
        yield [make_pod("a", requests={"cpu": "3", "memory": "500Mi"}, priority=10, uid="uid-a")]
        yield [_stuck("high-nominee", 20, "n1", cpu="1"), _stuck("higher-nominee", 20, "n2", cpu="1")]
        yield [make_pod(f"b{i}", requests={"cpu": "3", "memory": "500Mi"}, priority=10, uid=f"uid-b{i}")
               for i in range(3)]
    _both(steps, n_nodes=4, fill=fill)


def test_own_nomination_is_left_out_of_a_remembered_answer():
    """A pod nominated to a node sees that node without itself: an answer remembered for
    another pod of its shape (with the pod in the node's list) is not its answer, nor is its
    own answer another pod's."""
    def steps():
        yield [_stuck("low-nominee", 1, "n0")]
        a = make_pod("a", requests={"cpu": "3", "memory": "500Mi"}, priority=10, uid="uid-a")
        a.raw.setdefault("status", {})["nominatedNodeName"] = "n0"
        yield [type(a)(a.raw), make_pod("b", requests={"cpu": "3", "memory": "500Mi"}, priority=10, uid="uid-b")]
        yield [make_pod("c", requests={"cpu": "3", "memory": "500Mi"}, priority=10, uid="uid-c")]
    _both(steps)


def test_own_nomination_is_left_out_of_a_remembered_dry_run():
    """b's dry run remembers n0 with a (nominated there, of b's shape) counted: no room.
    a's own dry run must see n0 without itself (room once the low-priority pods go), not b's
    answer."""
    fill = [[("900m", 0)] * 4]

    def steps():
        a = make_pod("a", requests={"cpu": "3", "memory": "500Mi"}, priority=10, uid="uid-a")
        a.raw.setdefault("status", {})["nominatedNodeName"] = "n0"
        yield [make_pod("b", requests={"cpu": "3", "memory": "500Mi"}, priority=10, uid="uid-b"), type(a)(a.raw)]
    seen, outcome = _both(steps, n_nodes=4, fill=fill)
    dry = {s[1]: s for s in seen if s[0] == "dryrun"}
    assert "n0" in [c[0] for c in dry["default/a"][3]]  # n0 is one of a's candidates
    assert "n0" not in [c[0] for c in dry["default/b"][3]]
