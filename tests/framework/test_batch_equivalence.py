"""The batch forms of Filter, Score and NormalizeScore (filter_nodes, score_nodes,
normalize_scores) and PodTopologySpread's per-node counts cache against the per-node hooks
recounting every cycle: on random clusters, a scheduler with the fast paths and one without give
identical statuses, scores, picks and bindings."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from builtin_plugins import node_sums  # noqa: E402
from builtin_plugins.podtopologyspread import filtering as pts_filtering  # noqa: E402
from harness.cluster import Cluster  # noqa: E402
from harness.config.defaults import set_defaults  # noqa: E402
from harness.framework.registry import default_registry  # noqa: E402
from harness.framework.runtime import Framework  # noqa: E402
from harness.scheduler.scheduler import Scheduler  # noqa: E402
from harness.testing import make_node, make_pod  # noqa: E402

from fast_path_runs import fast_and_reference, run_observed  # noqa: E402

REGISTRY = default_registry()
ZONES = ["z1", "z2", "z3"]
TAINTS = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"},
          {"key": "soft", "value": "y", "effect": "PreferNoSchedule"},
          {"key": "soft2", "effect": "PreferNoSchedule"}]
IMAGES = ["img-a", "img-b"]

node_st = st.fixed_dictionaries({
    "cpu": st.sampled_from(["0", "500m", "1", "2", "4"]),
    "memory": st.sampled_from(["0", "512Mi", "1Gi", "4Gi"]),
    "pods": st.sampled_from(["0", "1", "3", "110"]),
    "zone": st.sampled_from(ZONES + [None]),
    "taints": st.lists(st.sampled_from(range(len(TAINTS))), max_size=2, unique=True),
    "unschedulable": st.booleans(),
    "images": st.lists(st.sampled_from(IMAGES), max_size=2, unique=True),
    "gpu": st.sampled_from([None, "1", "2"]),
})

pod_st = st.fixed_dictionaries({
    "cpu": st.sampled_from([None, "0", "100m", "500m", "1", "3"]),
    "memory": st.sampled_from([None, "100Mi", "1Gi", "3Gi"]),
    "gpu": st.sampled_from([None, None, "1"]),
    "image": st.sampled_from(IMAGES + ["other"]),
    "app": st.sampled_from(["a", "b"]),
    "priority": st.sampled_from([0, 0, 10]),
    "tolerate": st.booleans(),
    "node_name": st.sampled_from([None, None, None, 0, 1]),
    "zone_affinity": st.sampled_from([None, "required", "preferred"]),
    "spread": st.sampled_from([None, "DoNotSchedule", "ScheduleAnyway"]),
    "pod_affinity": st.sampled_from([None, "anti", "affinity", "preferred"]),
    "bound_to": st.sampled_from([None, None, 0, 1, 2]),
})


def _node(i, d):
    labels = {"kubernetes.io/hostname": f"n{i}"}
    if d["zone"]:
        labels["topology.kubernetes.io/zone"] = d["zone"]
    alloc = {"cpu": d["cpu"], "memory": d["memory"], "pods": d["pods"]}
    if d["gpu"]:
        alloc["example.com/gpu"] = d["gpu"]
    spec = {"unschedulable": True} if d["unschedulable"] else {}
    return make_node(f"n{i}", labels=labels, allocatable=alloc, taints=[TAINTS[t] for t in d["taints"]],
                     spec=spec, images=[{"names": [img], "sizeBytes": 300 * 1024 * 1024} for img in d["images"]])


def _pod(i, d, n_nodes, bound):
    req = {}
    if d["cpu"]:
        req["cpu"] = d["cpu"]
    if d["memory"]:
        req["memory"] = d["memory"]
    if d["gpu"]:
        req["example.com/gpu"] = d["gpu"]
    spec = {"containers": [{"name": "c", "image": d["image"], "resources": {"requests": req}}]}
    if d["tolerate"]:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}, {"key": "soft", "operator": "Exists"}]
    if d["node_name"] is not None and not bound:
        spec["nodeName"] = f"n{d['node_name'] % n_nodes}"
    sel = {"matchLabels": {"app": d["app"]}}
    aff = {}
    if d["zone_affinity"] == "required":
        aff["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1", "z2"]}]}]}}
    elif d["zone_affinity"] == "preferred":
        aff["nodeAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}]}}]}
    if d["pod_affinity"] == "anti":
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": sel, "topologyKey": "kubernetes.io/hostname"}]}
    elif d["pod_affinity"] == "affinity":
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": sel, "topologyKey": "topology.kubernetes.io/zone"}]}
    elif d["pod_affinity"] == "preferred":
        aff["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": {"labelSelector": sel, "topologyKey": "topology.kubernetes.io/zone"}}]}
    if aff:
        spec["affinity"] = aff
    if d["spread"]:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": d["spread"], "labelSelector": sel}]
    return make_pod(f"p{i}", labels={"app": d["app"]}, node_name=bound or "", spec=spec,
                    priority=d["priority"], uid=f"uid-p{i}")


def _run(nodes, pods, percentage, batch: bool):
    """batch: the fast paths (batch forms, per-node caches); else the per-node reference."""
    pts_filtering.USE_NODE_COUNTS_CACHE = batch
    node_sums.ENABLED = batch
    cluster = Cluster()
    for o in nodes + [p for p in pods if p.node_name and p.raw["metadata"]["name"].startswith("b")]:
        cluster.create(o, notify=False)
    cfg = set_defaults({"percentageOfNodesToScore": percentage}, REGISTRY)
    sched = Scheduler(cfg, REGISTRY, cluster, seed=7)
    sched.compact_records = False  # every record whole: observed() compares them node by node
    pending = [p for p in pods if not (p.node_name and p.raw["metadata"]["name"].startswith("b"))]
    return run_observed(sched, cluster, pending, batch)


@settings(max_examples=1000, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nodes=st.lists(node_st, min_size=1, max_size=7), bound=st.lists(pod_st, max_size=4),
       pending=st.lists(st.tuples(pod_st, st.integers(1, 3)), min_size=1, max_size=3), percentage=st.sampled_from([0, 10, 50, 100]),
       min_nodes=st.sampled_from([1, 2, 3, 100]))
def test_batch_and_per_node_paths_agree(nodes, bound, pending, percentage, min_nodes):
    node_objs = [_node(i, d) for i, d in enumerate(nodes)]
    pods = []
    for i, d in enumerate(bound):
        if d["bound_to"] is not None:
            p = _pod(i, d, len(nodes), f"n{d['bound_to'] % len(nodes)}")
            p.raw["metadata"]["name"] = f"b{i}"
            pods.append(type(p)(p.raw))
    # replicas: pods of the same shape one after the other, as a Deployment's
    shapes = [d for d, n in pending for _ in range(n)]
    pods += [_pod(100 + i, d, len(nodes), None) for i, d in enumerate(shapes)]
    batch, per_node = fast_and_reference(lambda batch, mp: _run(node_objs, pods, percentage, batch), min_nodes)
    assert batch == per_node


def test_the_switch_defaults_to_batch():
    assert Framework.use_batch is True


BASE_SHAPE = {"cpu": "100m", "memory": None, "gpu": None, "image": "img-a", "app": "a", "priority": 0,
              "tolerate": False, "node_name": None, "zone_affinity": None, "spread": None,
              "pod_affinity": None, "bound_to": None}


@pytest.mark.parametrize("change", [
    {"spread": "ScheduleAnyway"}, {"spread": "DoNotSchedule"}, {"pod_affinity": "anti"},
    {"pod_affinity": "affinity"}, {"pod_affinity": "preferred"}, {"zone_affinity": "preferred"},
    {"zone_affinity": "required", "spread": "ScheduleAnyway"},
])
def test_replicas_on_a_fixed_cluster(change):
    try:
        _replicas(change)
    finally:
        pts_filtering.USE_NODE_COUNTS_CACHE = True
        node_sums.ENABLED = True


def _replicas(change):
    """Six replicas of one shape on four nodes in three zones (one node tainted), with a pod of
    the same labels already bound: every replica sees the nodes its predecessors changed."""
    shapes = [{"cpu": "4", "memory": "4Gi", "pods": "110", "zone": z, "taints": t, "unschedulable": False,
               "images": [], "gpu": None} for z, t in (("z1", []), ("z2", [1]), ("z3", []), ("z1", []))]
    nodes = [_node(i, d) for i, d in enumerate(shapes)]
    shape = dict(BASE_SHAPE, **change)
    bound = _pod(0, dict(shape, pod_affinity=None, spread=None, zone_affinity=None), 4, "n2")
    bound.raw["metadata"]["name"] = "b0"
    pods = [type(bound)(bound.raw)] + [_pod(100 + i, shape, 4, None) for i in range(6)]
    assert _run(nodes, pods, 0, True) == _run(nodes, pods, 0, False)


# Nodes with room in cpu and memory and pods without affinity or spread: the shape of most
# workloads, where every Score plugin that runs gives a column of the node table.
table_node_st = st.fixed_dictionaries({
    "cpu": st.sampled_from(["500m", "1", "2", "4"]),
    "memory": st.sampled_from(["512Mi", "1Gi", "4Gi"]),
    "pods": st.sampled_from(["1", "3", "110", "110"]),
    "zone": st.sampled_from(ZONES + [None]),
    "taints": st.lists(st.sampled_from(range(len(TAINTS))), max_size=2, unique=True),
    "unschedulable": st.sampled_from([False, False, False, True]),
    "images": st.lists(st.sampled_from(IMAGES), max_size=2, unique=True),
    "gpu": st.sampled_from([None, "1", "2"]),
})
table_pod_st = pod_st.map(lambda d: dict(d, zone_affinity=None, spread=None, pod_affinity=None))


# ---------------------------------------------------------------------------------------------
# InterPodAffinity and PodTopologySpread in depth: every kind of term (required and preferred,
# affinity and anti-affinity, several at once), term namespaces (own, listed, namespaceSelector),
# spread constraints on the zone and the hostname (DoNotSchedule and ScheduleAnyway, several at
# once, node inclusion policies), nodes without the topology keys, pods of two namespaces and the
# plugin's args, so that the batch forms' memos and the counts kept across cycles (node_sums,
# the spread totals) meet what they must give identically.
# ---------------------------------------------------------------------------------------------
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
SELECTORS = [{"matchLabels": {"app": "a"}}, {"matchLabels": {"app": "b"}},
             {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}]
TERM_NAMESPACES = [None, {"namespaces": ["default", "other"]}, {"namespaceSelector": {}},
                   {"namespaceSelector": {"matchLabels": {"team": "t1"}}}]

term_st = st.tuples(st.sampled_from([ZONE, HOST, REGION]), st.sampled_from(range(len(SELECTORS))),
                    st.sampled_from(range(len(TERM_NAMESPACES))))
spread_st = st.fixed_dictionaries({
    "key": st.sampled_from([ZONE, HOST, REGION]),
    "when": st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]),
    "max_skew": st.sampled_from([1, 2]),
    "selector": st.sampled_from(range(len(SELECTORS))),
    "min_domains": st.sampled_from([None, None, 3]),
    "honor": st.sampled_from([None, "affinity", "taints"]),
})

def _spread(key, when, max_skew=1, selector=0):
    return {"key": key, "when": when, "max_skew": max_skew, "selector": selector, "min_domains": None,
            "honor": None}


# several constraints at once (the batch forms decide per tuple of topology values)
SPREAD_COMBOS = [
    [_spread(ZONE, "ScheduleAnyway"), _spread(REGION, "ScheduleAnyway", 2)],
    [_spread(ZONE, "DoNotSchedule"), _spread(REGION, "DoNotSchedule", 1, 2)],
    [_spread(REGION, "DoNotSchedule"), _spread(ZONE, "DoNotSchedule", 2)],
    [_spread(ZONE, "ScheduleAnyway"), _spread(HOST, "ScheduleAnyway")],
    [_spread(REGION, "ScheduleAnyway", 1, 2), _spread(ZONE, "ScheduleAnyway", 2, 1), _spread(HOST, "DoNotSchedule")],
]

node2_st = st.fixed_dictionaries({
    "zone": st.sampled_from(ZONES + [None]),
    "hostname": st.sampled_from([True, True, True, False]),
    "region": st.sampled_from([True, True, False]),
    "pods": st.sampled_from(["2", "110"]),
    "taint": st.booleans(),
})

pod2_st = st.fixed_dictionaries({
    "app": st.sampled_from(["a", "b"]),
    "tier": st.booleans(),
    "namespace": st.sampled_from(["default", "default", "other"]),
    "priority": st.sampled_from([0, 0, 10]),
    "cpu": st.sampled_from(["100m", "100m", "2"]),
    "affinity": st.lists(term_st, max_size=2),
    "anti_affinity": st.lists(term_st, max_size=2),
    "preferred_affinity": st.lists(term_st, max_size=2),
    "preferred_anti_affinity": st.lists(term_st, max_size=1),
    "spread": st.one_of(st.lists(spread_st, max_size=2, unique_by=lambda c: (c["key"], c["when"])),
                        st.sampled_from(SPREAD_COMBOS)),
    "zone_affinity": st.booleans(),
    "tolerate": st.booleans(),
    "bound_to": st.sampled_from([0, 1, 2, 3]),
})


def _node2(i, d):
    labels = {"kind": "perf"}
    if d["hostname"]:
        labels[HOST] = f"n{i}"
    if d["zone"]:
        labels[ZONE] = d["zone"]
    if d["region"]:
        labels[REGION] = "r2" if d["zone"] == "z3" else "r1"
    taints = [TAINTS[0]] if d["taint"] else []
    return make_node(f"n{i}", labels=labels, allocatable={"cpu": "4", "memory": "8Gi", "pods": d["pods"]},
                     taints=taints)


def _term(t):
    key, sel, ns = t
    term = {"labelSelector": SELECTORS[sel], "topologyKey": key}
    if TERM_NAMESPACES[ns]:
        term.update(TERM_NAMESPACES[ns])
    return term


def _pod2(name, d, bound):
    labels = {"app": d["app"]}
    if d["tier"]:
        labels["tier"] = "web"
    spec = {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": d["cpu"]}}}]}
    aff = {}
    if d["affinity"] or d["preferred_affinity"]:
        pa = aff["podAffinity"] = {}
        if d["affinity"]:
            pa["requiredDuringSchedulingIgnoredDuringExecution"] = [_term(t) for t in d["affinity"]]
        if d["preferred_affinity"]:
            pa["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": 10 + k, "podAffinityTerm": _term(t)} for k, t in enumerate(d["preferred_affinity"])]
    if d["anti_affinity"] or d["preferred_anti_affinity"]:
        paa = aff["podAntiAffinity"] = {}
        if d["anti_affinity"]:
            paa["requiredDuringSchedulingIgnoredDuringExecution"] = [_term(t) for t in d["anti_affinity"]]
        if d["preferred_anti_affinity"]:
            paa["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": 7, "podAffinityTerm": _term(t)} for t in d["preferred_anti_affinity"]]
    if d["zone_affinity"]:
        aff["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1", "z2"]}]}]}}
    if aff:
        spec["affinity"] = aff
    if d["tolerate"]:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    tscs = []
    for c in d["spread"]:
        tsc = {"maxSkew": c["max_skew"], "topologyKey": c["key"], "whenUnsatisfiable": c["when"],
               "labelSelector": SELECTORS[c["selector"]]}
        if c["min_domains"] is not None and c["when"] == "DoNotSchedule":
            tsc["minDomains"] = c["min_domains"]
        if c["honor"] == "affinity":
            tsc["nodeAffinityPolicy"] = "Ignore"
        elif c["honor"] == "taints":
            tsc["nodeTaintsPolicy"] = "Honor"
        tscs.append(tsc)
    if tscs:
        spec["topologySpreadConstraints"] = tscs
    return make_pod(name, namespace=d["namespace"], labels=labels, node_name=bound or "", spec=spec,
                    priority=d["priority"], uid=f"uid-{name}")


def _run2(nodes, bound, pending, percentage, args, batch: bool):
    """_run with bound pods created before the scheduler starts, a labelled namespace and the
    InterPodAffinity args."""
    pts_filtering.USE_NODE_COUNTS_CACHE = batch
    node_sums.ENABLED = batch
    from harness.api.objects import make_object
    cluster = Cluster()
    cluster.create(make_object({"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": "other", "labels": {"team": "t1"}}}), notify=False)
    for o in nodes + bound:
        cluster.create(o, notify=False)
    cfg = set_defaults({"percentageOfNodesToScore": percentage,
                        "profiles": [{"schedulerName": "default-scheduler",
                                      "pluginConfig": [{"name": "InterPodAffinity", "args": args}]}]},
                       REGISTRY)
    sched = Scheduler(cfg, REGISTRY, cluster, seed=7)
    sched.compact_records = False  # every record whole: observed() compares them node by node
    return run_observed(sched, cluster, pending, batch)


@settings(max_examples=1000, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nodes=st.lists(table_node_st, min_size=2, max_size=9), bound=st.lists(table_pod_st, max_size=5),
       pending=st.lists(st.tuples(table_pod_st, st.integers(1, 4)), min_size=1, max_size=3),
       percentage=st.sampled_from([0, 100]), min_nodes=st.sampled_from([3, 100]))
def test_node_table_path_agrees_with_per_node_hooks(nodes, bound, pending, percentage, min_nodes):
    test_batch_and_per_node_paths_agree.hypothesis.inner_test(nodes, bound, pending, percentage, min_nodes)


@settings(max_examples=1000, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nodes=st.lists(node2_st, min_size=1, max_size=8), bound=st.lists(pod2_st, max_size=5),
       pending=st.lists(st.tuples(pod2_st, st.integers(1, 4)), min_size=1, max_size=3),
       percentage=st.sampled_from([0, 50, 100]), min_nodes=st.sampled_from([1, 2, 3, 100]),
       hard_weight=st.sampled_from([0, 1, 5]), ignore_preferred=st.booleans())
def test_batch_and_per_node_paths_agree_on_affinity_and_spread(nodes, bound, pending, percentage, min_nodes,
                                                               hard_weight, ignore_preferred):
    node_objs = [_node2(i, d) for i, d in enumerate(nodes)]
    bound_pods = [_pod2(f"b{i}", d, f"n{d['bound_to'] % len(nodes)}") for i, d in enumerate(bound)]
    shapes = [d for d, n in pending for _ in range(n)]
    pending_pods = [_pod2(f"p{100 + i}", d, None) for i, d in enumerate(shapes)]
    args = {"hardPodAffinityWeight": hard_weight, "ignorePreferredTermsOfExistingPods": ignore_preferred}
    batch, per_node = fast_and_reference(
        lambda batch, mp: _run2(node_objs, bound_pods, pending_pods, percentage, args, batch), min_nodes)
    assert batch == per_node


# Every node carries every topology key, so PodTopologySpread ignores none and its Score and
# NormalizeScore give node table columns (the codes of each key's values, one term per value).
labelled_node_st = node2_st.map(lambda d: dict(d, zone=d["zone"] or "z1", hostname=True, region=True))
soft_spread_st = spread_st.map(lambda d: dict(d, when="ScheduleAnyway"))
soft_pod_st = pod2_st.map(lambda d: dict(d, affinity=[], anti_affinity=[])).flatmap(
    lambda d: st.lists(soft_spread_st, min_size=1, max_size=3, unique_by=lambda c: c["key"]).map(
        lambda sp: dict(d, spread=sp)))


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nodes=st.lists(labelled_node_st, min_size=1, max_size=8), bound=st.lists(pod2_st, max_size=5),
       pending=st.lists(st.tuples(soft_pod_st, st.integers(1, 4)), min_size=1, max_size=3),
       percentage=st.sampled_from([0, 50, 100]), min_nodes=st.sampled_from([1, 3, 100]))
def test_soft_spreading_on_labelled_nodes_agrees_with_per_node_hooks(nodes, bound, pending, percentage, min_nodes):
    test_batch_and_per_node_paths_agree_on_affinity_and_spread.hypothesis.inner_test(
        nodes, bound, pending, percentage, min_nodes, 1, False)
