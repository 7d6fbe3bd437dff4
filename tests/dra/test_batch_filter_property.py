"""DynamicResources' batch Filter (builtin_plugins/dynamicresources/batch_filter.py) against Filter
on each node: whole scheduler runs of random DRA clusters, over the node table however small,
give the same cycles (every node's status), bindings and claim statuses with the batch form and
without, while claims come and go (their devices followed through the claim tracker's log)."""

from __future__ import annotations

import copy
from typing import Any, List

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from builtin_plugins.dynamicresources import batch_filter, claims as dra_claims  # noqa: E402
from harness.api.objects import KubeObject  # noqa: E402
from harness.cluster import Cluster  # noqa: E402
from harness.config.defaults import set_defaults  # noqa: E402
from harness.framework import node_table  # noqa: E402
from harness.scheduler import schedule_one  # noqa: E402
from harness.scheduler.scheduler import Scheduler  # noqa: E402
from harness.testing import make_pod  # noqa: E402
from harness.versions import resolve  # noqa: E402

from .test_fastpath_property import (NODES, REGISTRY, ZONES, _cluster_objects,  # noqa: E402
                                     _without_binding_conditions, make_claims, observed, slice_st)

# mostly the benchmark's shape: one request for one device of a class that matches many
simple_request_st = st.fixed_dictionaries({
    "kind": st.sampled_from(["exactly"] * 12 + ["all", "admin"]),
    "class": st.sampled_from([0] * 6 + [2] * 3 + [1, 3, 4]),
    "count": st.sampled_from([0, 1, 1, 1, 1, 2, 3]),
    "selectors": st.sampled_from([[]] * 8 + [[0], [1], [2], [4]]),
    "tolerations": st.lists(st.sampled_from(range(2)), max_size=1, unique=True),
})
simple_claim_st = st.fixed_dictionaries({
    "requests": st.lists(simple_request_st, min_size=1, max_size=2),
    "constraint": st.sampled_from([False] * 9 + [True]),
})
pod_st = st.fixed_dictionaries({
    "claims": st.lists(simple_claim_st, min_size=0, max_size=2),
    "cpu": st.sampled_from(["100m", "1", "3"]),
    "share": st.sampled_from([False] * 5 + [True]),  # also use the first pod's first claim
    "delete": st.booleans(),  # deleted (with its claims) before the second wave
})


def _create_pod(cluster, pi: int, spec, first_claims: bool, wave: int) -> None:
    refs = []
    for ci, c in enumerate(make_claims(spec["claims"])):
        c = copy.deepcopy(c)
        c["apiVersion"] = "resource.k8s.io/v1"
        c["metadata"] = {"name": f"w{wave}p{pi}-claim-{ci}", "namespace": "default",
                         "uid": f"uid-w{wave}p{pi}-c{ci}"}
        cluster.create(c)
        refs.append({"name": f"c{ci}", "resourceClaimName": f"w{wave}p{pi}-claim-{ci}"})
    if spec["share"] and pi > 0 and first_claims:
        refs.append({"name": "shared", "resourceClaimName": f"w{wave}p0-claim-0"})
    pod = make_pod(f"w{wave}p{pi}", uid=f"uid-w{wave}p{pi}", spec={
        "resourceClaims": refs,
        "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": spec["cpu"]}}}]})
    cluster.create(pod)


def _run(objs, waves: List[List[Any]], version: str, batch: bool):
    batch_filter.ENABLED = batch
    features = resolve(version)
    cluster = Cluster(features)
    for o in copy.deepcopy(objs):
        cluster.create(o, notify=False)
    cfg = set_defaults({"percentageOfNodesToScore": 100}, REGISTRY, features)
    sched = Scheduler(cfg, REGISTRY, cluster, seed=7, features=features)
    sched.compact_records = False  # every record whole: compared node by node below
    sched.start()
    for wave, pod_specs in enumerate(waves):
        if wave:
            # the pods marked to go leave, and their claims with them
            for pi, spec in enumerate(waves[wave - 1]):
                if spec["delete"]:
                    for kind, name in ([("Pod", f"w{wave - 1}p{pi}")]
                                       + [("ResourceClaim", f"w{wave - 1}p{pi}-claim-{ci}")
                                          for ci in range(len(spec["claims"]))]):
                        obj = cluster.get(kind, "default", name)
                        if obj is not None:
                            cluster.delete(obj)
        for pi, spec in enumerate(pod_specs):
            _create_pod(cluster, pi, spec, bool(pod_specs[0]["claims"]), wave)
        sched.run_until_quiet()
    return observed(sched, cluster)


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(slice_specs=st.lists(slice_st.map(_without_binding_conditions), min_size=1, max_size=5),
       pods=st.lists(st.tuples(pod_st, st.integers(1, 4)), min_size=1, max_size=3), rounds=st.integers(1, 3),
       zones=st.lists(st.sampled_from(ZONES), min_size=len(NODES), max_size=len(NODES)),
       version=st.sampled_from(["v1.34", "v1.35", "v1.36"]), min_nodes=st.sampled_from([1, 2, 100]),
       short_log=st.booleans())
def test_batch_and_per_node_filter_agree(slice_specs, pods, rounds, zones, version, min_nodes, short_log):
    objs = _cluster_objects(slice_specs, zones)
    # replicas: pods of one shape one after the other, as a Deployment's; rounds of them, as
    # the steady-state benchmark's, the marked ones deleted before the next round
    waves = [[spec for spec, n in pods for _ in range(n)]] * rounds
    saved = schedule_one.MIN_FEASIBLE_NODES_TO_FIND, node_table.MIN_NODES, node_table.CHECK
    schedule_one.MIN_FEASIBLE_NODES_TO_FIND = min_nodes  # several chunks a cycle
    node_table.MIN_NODES, node_table.CHECK = 0, True  # the table however small the cluster
    calls = {"column": 0}
    real = batch_filter.filter_nodes

    def counting(*args):
        out = real(*args)
        calls["column"] += out is not None
        return out

    batch_filter.filter_nodes = counting
    saved_limit = dra_claims.LOG_SLACK
    if short_log:
        dra_claims.LOG_SLACK = 0  # a new log epoch at almost every claim event
    try:
        with_batch = _run(objs, waves, version, True)
        per_node = _run(objs, waves, version, False)
    finally:
        batch_filter.ENABLED = True
        batch_filter.filter_nodes = real
        dra_claims.LOG_SLACK = saved_limit
        schedule_one.MIN_FEASIBLE_NODES_TO_FIND, node_table.MIN_NODES, node_table.CHECK = saved
    assert with_batch == per_node
    event("the batch form answered" if calls["column"] else "Filter on each node only")


# ---------------------------------------------------------------------------------------------
# the free counts followed through the claim tracker's log against counting the set
# ---------------------------------------------------------------------------------------------
DEVICES = [("d1", f"pool-{p}", f"dev-{i}") for p in range(2) for i in range(3)]


class _Shape:
    key = ("c0", (), (), None)


class _Fast:
    """FastFilter's entry: each node's eligible devices as the example gives them."""

    def __init__(self, eligible):
        self.eligible = eligible
        self.cache: dict = {}

    def entry(self, node, shape):
        devs = tuple(DEVICES[i] for i in self.eligible[node.name])
        return devs, frozenset(devs)


class _Node:
    def __init__(self, name):
        self.name = name


class _NodeInfo:
    def __init__(self, name):
        self.node = _Node(name)


class _Table:
    def __init__(self, n):
        self.nodes = [_NodeInfo(f"n{i}") for i in range(n)]
        self.node_version = node_table.numpy().zeros(n, dtype=node_table.numpy().int64)


def _claim(i, devices):
    results = [{"driver": DEVICES[d][0], "pool": DEVICES[d][1], "device": DEVICES[d][2], "request": "r"}
               for d in devices]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"c{i}", "namespace": "default", "uid": f"u{i}"},
            "spec": {"devices": {"requests": []}},
            "status": {"allocation": {"devices": {"results": results}}} if devices else {}}


op_st = st.tuples(st.sampled_from(["create", "create", "delete", "delete", "in_flight", "cycle", "cycle"]),
                  st.integers(0, 3), st.lists(st.integers(0, len(DEVICES) - 1), max_size=3))


@settings(max_examples=500, deadline=None, derandomize=True)
@example(eligible=[[0, 1]], ops=[("create", 0, [0]), ("cycle", 0, []), ("delete", 0, [])], gather=False,
         short_log=False)
@given(eligible=st.lists(st.lists(st.integers(0, len(DEVICES) - 1), unique=True, max_size=5), min_size=1, max_size=4),
       ops=st.lists(op_st, max_size=30), gather=st.booleans(), short_log=st.booleans())
def test_free_counts_follow_the_claims(eligible, ops, gather, short_log):
    fast = _Fast({f"n{i}": e for i, e in enumerate(eligible)})
    table = _Table(len(eligible))
    cluster = Cluster()
    saved = dra_claims.LOG_SLACK
    if short_log:
        dra_claims.LOG_SLACK = 0
    try:
        tracker = dra_claims.ClaimTracker(cluster)
        rd = batch_filter.RowDevices(fast, _Shape(), table)
        for op, i, devs in ops + [("cycle", 0, [])]:
            if op == "create":
                old = cluster.get("ResourceClaim", "default", f"c{i}")
                obj = type(old)(_claim(i, devs)) if old is not None else None
                if old is not None:
                    cluster.update(obj)
                else:
                    cluster.create(_claim(i, devs))
            elif op == "delete":
                old = cluster.get("ResourceClaim", "default", f"c{i}")
                if old is not None:
                    cluster.delete(old)
            elif op == "in_flight":
                tracker.signal_claim_pending_allocation(f"in-flight-{i}", KubeObject(_claim(100 + i, devs)))
            else:
                allocated = (tracker.gather_allocated_state(True).allocated_devices if gather
                             else tracker.list_all_allocated_devices())
                got = rd.free_counts(allocated, tracker).tolist()
                want = [sum(1 for d in e if DEVICES[d] not in allocated) for e in eligible]
                assert got == want
    finally:
        dra_claims.LOG_SLACK = saved
