"""DynamicResources' fast Filter (builtin_plugins/dynamicresources/fastpath.py) against the
allocator it stands for: on random slices, classes, claims and allocated devices, wherever the
fast path answers, the allocator gives the same answer (the claims fit, with the same
AllocationResults, or they do not, without an error); and whole scheduler runs of random DRA
clusters give the same cycles, bindings and claim statuses with the fast path and without."""

from __future__ import annotations

import copy
from typing import Any, Dict, List

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from builtin_plugins.dynamicresources import fastpath  # noqa: E402
from builtin_plugins.dynamicresources.allocator import (AllocationError, Allocator, FailedOnNode,  # noqa: E402
                                                        Features)
from harness.api.dra_cel import CELCache  # noqa: E402
from harness.api.objects import KubeObject, Node  # noqa: E402
from harness.cluster import Cluster  # noqa: E402
from harness.config.defaults import set_defaults  # noqa: E402
from harness.framework.registry import default_registry  # noqa: E402
from harness.scheduler.scheduler import Scheduler  # noqa: E402
from harness.testing import make_node, make_pod  # noqa: E402
from harness.versions import resolve  # noqa: E402

D1, D2 = "d1.example.com", "d2.example.com"
NODES = ["n0", "n1", "n2"]
ZONES = ["z1", "z2"]
CLASS_EXPRS = [f'device.driver == "{D1}"', f'device.driver == "{D2}"', "true",
               f'device.attributes["{D1}"].model == "a"',
               'device.attributes["x.example.com"].model == "a"',  # runtime error: no such key
               "device.driver ==",  # compile error
               'device.capacity["d1.example.com"].memory.compareTo(quantity("8Gi")) >= 0']
REQUEST_EXPRS = [f'device.attributes["{D1}"].model == "a"', f'device.attributes["{D1}"].model == "b"',
                 f'device.attributes["{D1}"].index > 1', 'device.attributes["d1.example.com"].nope == 1',
                 "1 == 1"]
TAINTS = [{"key": "k", "value": "v", "effect": "NoSchedule"}, {"key": "k2", "effect": "NoExecute"},
          {"key": "soft", "effect": "None"}]
TOLERATIONS = [{"key": "k", "operator": "Exists"}, {"operator": "Exists", "effect": "NoExecute"}]

device_st = st.fixed_dictionaries({
    "model": st.sampled_from([None, "a", "b"]),
    "index": st.sampled_from([None, 0, 1, 2, 3]),
    "memory": st.sampled_from([None, "4Gi", "16Gi"]),
    "taints": st.sampled_from([[]] * 6 + [[0], [1], [2], [0, 2]]),
    "extra": st.sampled_from([None] * 24 + ["bindingConditions"] * 4 + ["perDevice"] * 2 + ["bindsToNode"] * 2
                             + ["consumesCounters", "allowMultipleAllocations"]),
})

slice_st = st.fixed_dictionaries({
    "driver": st.sampled_from([D1, D1, D2]),
    "where": st.sampled_from(["node"] * 5 + ["zone", "all", "perDevice"]),
    "node": st.sampled_from(range(len(NODES))),
    "zone": st.sampled_from(ZONES),
    "pool": st.sampled_from(["p0", "p1", "p2"]),
    "generation": st.sampled_from([1] * 5 + [2]),
    "count": st.sampled_from([1] * 7 + [2]),
    "devices": st.lists(device_st, min_size=1, max_size=5),
    "dup": st.sampled_from([False] * 8 + [True]),
})

request_st = st.fixed_dictionaries({
    "kind": st.sampled_from(["exactly"] * 20 + ["all", "admin", "firstAvailable", "capacity"]),
    # mostly classes that match many devices; len(CLASS_EXPRS): a class that does not exist
    "class": st.sampled_from([0] * 6 + [2] * 3 + list(range(len(CLASS_EXPRS) + 1))),
    "count": st.sampled_from([0, 1, 1, 1, 1, 2, 2, 3]),
    "selectors": st.sampled_from([[]] * 8 + [[0], [1], [2], [3], [4], [0, 2]]),
    "tolerations": st.lists(st.sampled_from(range(len(TOLERATIONS))), max_size=2, unique=True),
})

claim_st = st.fixed_dictionaries({
    "requests": st.lists(request_st, min_size=1, max_size=3),
    "constraint": st.sampled_from([False] * 6 + [True]),
})


def _device(i: int, d: Dict[str, Any], node: str) -> Dict[str, Any]:
    dev: Dict[str, Any] = {"name": f"dev-{i}"}
    attrs = {}
    if d["model"]:
        attrs["model"] = {"string": d["model"]}
    if d["index"] is not None:
        attrs["index"] = {"int": d["index"]}
    if attrs:
        dev["attributes"] = attrs
    if d["memory"]:
        dev["capacity"] = {"memory": {"value": d["memory"]}}
    if d["taints"]:
        dev["taints"] = [TAINTS[t] for t in d["taints"]]
    extra = d["extra"]
    if extra == "bindingConditions":
        dev["bindingConditions"] = ["ready"]
        dev["bindingFailureConditions"] = ["failed"]
    elif extra == "consumesCounters":
        dev["consumesCounters"] = [{"counterSet": "set", "counters": {"mem": {"value": "4Gi"}}}]
    elif extra == "allowMultipleAllocations":
        dev["allowMultipleAllocations"] = True
    elif extra == "perDevice":
        dev["nodeName"] = node
    elif extra == "bindsToNode":
        dev["bindsToNode"] = True
        dev["bindingConditions"] = ["ready"]
    return dev


def make_slices(specs: List[Dict[str, Any]]) -> List[KubeObject]:
    out = []
    for i, sp in enumerate(specs):
        node = NODES[sp["node"]]
        devices = [_device(j, d, node) for j, d in enumerate(sp["devices"])]
        if sp["dup"] and devices:
            devices.append(dict(devices[0]))
        spec: Dict[str, Any] = {"driver": sp["driver"],
                                "pool": {"name": f"{sp['pool']}-{node}" if sp["where"] == "node" else sp["pool"],
                                         "generation": sp["generation"], "resourceSliceCount": sp["count"]},
                                "devices": devices}
        if sp["where"] == "node":
            spec["nodeName"] = node
        elif sp["where"] == "zone":
            spec["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "zone", "operator": "In", "values": [sp["zone"]]}]}]}
        elif sp["where"] == "all":
            spec["allNodes"] = True
        else:
            spec["perDeviceNodeSelection"] = True
            for d in devices:
                if "nodeName" not in d:
                    d["allNodes"] = True
        if any("consumesCounters" in d for d in devices):
            spec_counters = {"driver": sp["driver"], "pool": dict(spec["pool"]),
                             "sharedCounters": [{"name": "set", "counters": {"mem": {"value": "8Gi"}}}]}
            spec["pool"]["resourceSliceCount"] += 1
            spec_counters["pool"]["resourceSliceCount"] += 1
            c = KubeObject({"kind": "ResourceSlice", "metadata": {"name": f"s{i}-counters"}, "spec": spec_counters})
            c.resource_version = 1000 + i
            out.append(c)
        obj = KubeObject({"kind": "ResourceSlice", "metadata": {"name": f"s{i}"}, "spec": spec})
        obj.resource_version = i + 1
        out.append(obj)
    return out


def make_classes() -> Dict[str, Dict[str, Any]]:
    return {f"c{i}": {"kind": "DeviceClass", "metadata": {"name": f"c{i}"},
                      "spec": {"selectors": [{"cel": {"expression": e}}]}}
            for i, e in enumerate(CLASS_EXPRS)}


def make_claims(specs: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    claims = []
    for ci, c in enumerate(specs):
        requests = []
        for ri, r in enumerate(c["requests"]):
            ex: Dict[str, Any] = {"deviceClassName": f"c{r['class']}", "allocationMode": "ExactCount",
                                  "count": r["count"]}
            if r["selectors"]:
                ex["selectors"] = [{"cel": {"expression": REQUEST_EXPRS[s]}} for s in r["selectors"]]
            if r["tolerations"]:
                ex["tolerations"] = [TOLERATIONS[t] for t in r["tolerations"]]
            if r["kind"] == "all":
                ex["allocationMode"] = "All"
                del ex["count"]
            elif r["kind"] == "admin":
                ex["adminAccess"] = True
            elif r["kind"] == "capacity":
                ex["capacity"] = {"requests": {"memory": "1Gi"}}
            if r["kind"] == "firstAvailable":
                requests.append({"name": f"r{ri}", "firstAvailable": [dict(ex, name="s0")]})
            else:
                requests.append({"name": f"r{ri}", "exactly": ex})
        devices: Dict[str, Any] = {"requests": requests}
        if c["constraint"]:
            devices["constraints"] = [{"matchAttribute": f"{D1}/model"}]
        claims.append({"kind": "ResourceClaim", "metadata": {"name": f"claim-{ci}", "namespace": "default"},
                       "spec": {"devices": devices}})
    return claims


def features_st():
    return st.builds(lambda v, taints, part, binding, consumable: _features(v, taints, part, binding, consumable),
                     st.sampled_from(["v1.34", "v1.35", "v1.36"]), st.booleans(), st.booleans(), st.booleans(),
                     st.booleans())


def _features(version: str, taints: bool, partitionable: bool, binding: bool, consumable: bool) -> Features:
    f = Features.from_gates(resolve(version))
    f.device_taints, f.partitionable_devices = taints, partitionable
    f.device_binding = f.device_status = binding
    f.consumable_capacity = consumable
    return f


CEL = CELCache()  # compiled expressions only (deterministic): shared by all examples


def _allocator(features, allocated, slices, classes) -> Allocator:
    return Allocator(features, set(allocated), classes.get, slices, CEL)


def _reference(a: Allocator, node, claims):
    try:
        found = a.allocate_lazy(node, claims)
    except (AllocationError, FailedOnNode) as e:
        return ("error", str(e))
    return None if found is None else found.results()


@settings(max_examples=1000, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(slice_specs=st.lists(slice_st, max_size=6), claim_specs=st.lists(claim_st, min_size=1, max_size=2),
       allocated=st.lists(st.tuples(st.sampled_from(range(6)), st.sampled_from(range(5))), max_size=8),
       features=features_st(), zones=st.lists(st.sampled_from(ZONES), min_size=len(NODES), max_size=len(NODES)))
def test_fast_filter_agrees_with_the_allocator(slice_specs, claim_specs, allocated, features, zones):
    slices = make_slices(slice_specs)
    classes = make_classes()
    claims = make_claims(claim_specs)
    used = set()
    for si, di in allocated:
        # allocated devices name a slice's pool and device (some exist, some do not)
        if si < len(slice_specs):
            node = NODES[slice_specs[si]["node"]]
            pool = (f"{slice_specs[si]['pool']}-{node}" if slice_specs[si]["where"] == "node"
                    else slice_specs[si]["pool"])
            used.add((slice_specs[si]["driver"], pool, f"dev-{di}"))
    fast_alloc = _allocator(features, used, slices, classes)
    fast = fastpath.FastFilter(fast_alloc, claims, {})
    ref_alloc = _allocator(features, used, slices, classes)
    decided = 0
    for i, name in enumerate(NODES):
        node = Node({"kind": "Node", "metadata": {"name": name, "labels": {"zone": zones[i]}}})
        fits = fast.fits(node)
        if fits is None:
            continue
        decided += 1
        event(f"fast path: {'fits' if fits else 'does not fit'}, {sum(len(c['spec']['devices']['requests']) for c in claims)} request(s)")
        ref = _reference(ref_alloc, node, claims)
        if fits:
            assert isinstance(ref, list), (name, ref)
            assert fastpath.Deferred(fast_alloc, node, claims).results() == ref
        else:
            assert ref is None, (name, ref)
    event(f"decided on {decided} of {len(NODES)} nodes")


def test_the_benchmark_claims_are_decided_by_the_fast_path():
    """The shape of scheduler_perf's SchedulingWithResourceClaimTemplate: one request for one
    device of a class, one slice of eight devices per node."""
    devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": "a"}, "index": {"int": i}},
                "capacity": {"memory": {"value": "16Gi"}}} for i in range(8)]
    slices = []
    for n in NODES:
        s = KubeObject({"kind": "ResourceSlice", "metadata": {"name": f"{n}-gpus"},
                        "spec": {"driver": D1, "nodeName": n, "pool": {"name": n, "generation": 1,
                                                                      "resourceSliceCount": 1},
                                 "devices": copy.deepcopy(devices)}})
        s.resource_version = len(slices) + 1
        slices.append(s)
    claim = {"kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": "c0", "allocationMode": "ExactCount", "count": 1}}]}}}
    full = {(D1, "n1", f"gpu-{i}") for i in range(8)}
    for version in ("v1.34", "v1.35", "v1.36"):
        a = _allocator(Features.from_gates(resolve(version)), full, slices, make_classes())
        fast = fastpath.FastFilter(a, [claim], {})
        assert [fast.fits(Node({"kind": "Node", "metadata": {"name": n}})) for n in NODES] == [True, False, True]


def test_a_request_taking_what_a_later_one_needs_is_left_to_the_allocator():
    """The first request (any device) takes dev-0, the only device the second (model "a") can
    have; the search backtracks to give the first dev-1: the claims fit."""
    s = KubeObject({"kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {
        "driver": D1, "nodeName": "n0", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "dev-0", "attributes": {"model": {"string": "a"}}},
                    {"name": "dev-1", "attributes": {"model": {"string": "b"}}}]}})
    s.resource_version = 1
    claim = {"kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
             "spec": {"devices": {"requests": [
                 {"name": "any", "exactly": {"deviceClassName": "c0", "allocationMode": "ExactCount", "count": 1}},
                 {"name": "a", "exactly": {"deviceClassName": "c0", "allocationMode": "ExactCount", "count": 1,
                                           "selectors": [{"cel": {"expression": REQUEST_EXPRS[0]}}]}}]}}}
    node = Node({"kind": "Node", "metadata": {"name": "n0"}})
    for version in ("v1.34", "v1.35", "v1.36"):
        features = Features.from_gates(resolve(version))
        assert fastpath.FastFilter(_allocator(features, set(), [s], make_classes()), [claim], {}).fits(node) is not False
        found = _reference(_allocator(features, set(), [s], make_classes()), node, [claim])
        assert [r["device"] for r in found[0]["devices"]["results"]] == ["dev-1", "dev-0"]


# ---------------------------------------------------------------------------------------------
# whole runs: the scheduler with the fast path and without
# ---------------------------------------------------------------------------------------------
REGISTRY = default_registry()

pod_st = st.fixed_dictionaries({
    "claims": st.lists(claim_st, min_size=0, max_size=2),
    "cpu": st.sampled_from(["100m", "1", "3"]),
    "share": st.sampled_from([False, False, True]),  # also use the first pod's first claim
})


def _cluster_objects(slice_specs, zones):
    objs: List[Any] = [make_node(n, labels={"zone": zones[i], "kubernetes.io/hostname": n},
                                 allocatable={"cpu": "4", "memory": "8Gi", "pods": "10"})
                       for i, n in enumerate(NODES)]
    objs += [dict(c, apiVersion="resource.k8s.io/v1") for c in make_classes().values()]
    for s in make_slices(slice_specs):
        objs.append(dict(s.raw, apiVersion="resource.k8s.io/v1"))
    return objs


def _run(objs, pod_specs, version: str, fast: bool):
    fastpath.ENABLED = fast
    features = resolve(version)
    cluster = Cluster(features)
    for o in copy.deepcopy(objs):
        cluster.create(o, notify=False)
    cfg = set_defaults({}, REGISTRY, features)
    sched = Scheduler(cfg, REGISTRY, cluster, seed=7, features=features)
    sched.compact_records = False  # every record whole: compared node by node below
    sched.start()
    for pi, spec in enumerate(pod_specs):
        claims = make_claims(spec["claims"])
        refs = []
        for ci, c in enumerate(claims):
            c = copy.deepcopy(c)
            c["apiVersion"] = "resource.k8s.io/v1"
            c["metadata"] = {"name": f"p{pi}-claim-{ci}", "namespace": "default", "uid": f"uid-p{pi}-c{ci}"}
            cluster.create(c)
            refs.append({"name": f"c{ci}", "resourceClaimName": f"p{pi}-claim-{ci}"})
        if spec["share"] and pi > 0 and pod_specs[0]["claims"]:
            refs.append({"name": "shared", "resourceClaimName": "p0-claim-0"})
        pod = make_pod(f"p{pi}", uid=f"uid-p{pi}", spec={
            "resourceClaims": refs,
            "containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": spec["cpu"]}}}]})
        cluster.create(pod)
    sched.run_until_quiet()
    return observed(sched, cluster)


def observed(sched, cluster):
    """Each pod's cycles (every node's status, feasible nodes, scores, pick, message), the
    bindings and the claims' statuses."""
    records = {}
    for key, recs in sched.records.items():
        records[key] = [(r.attempt, {n: None if s is None else (int(s.code), tuple(s.get_reasons()), s.plugin)
                                     for n, s in r.node_statuses.items()},
                         r.feasible, [(sc.name, sc.scores, sc.total_score) for sc in r.scores or []],
                         r.picked, r.message) for r in recs]
    bindings = {p.key: p.node_name for p in cluster.list("Pod")}
    claims = {c.key: c.raw.get("status") for c in cluster.list("ResourceClaim")}
    return records, bindings, claims


def _without_binding_conditions(sp):
    """Devices with binding conditions nobody satisfies keep a pod cycling through PreBind's
    timeout for ever (the allocator-level test has them)."""
    return dict(sp, devices=[dict(d, extra=None) if d["extra"] in ("bindingConditions", "bindsToNode") else d
                             for d in sp["devices"]])


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(slice_specs=st.lists(slice_st.map(_without_binding_conditions), max_size=5), pods=st.lists(pod_st, min_size=2, max_size=5),
       zones=st.lists(st.sampled_from(ZONES), min_size=len(NODES), max_size=len(NODES)),
       version=st.sampled_from(["v1.34", "v1.35", "v1.36"]))
def test_runs_with_and_without_the_fast_path_agree(slice_specs, pods, zones, version):
    objs = _cluster_objects(slice_specs, zones)
    try:
        with_fast = _run(objs, pods, version, True)
        without = _run(objs, pods, version, False)
    finally:
        fastpath.ENABLED = True
    assert with_fast == without
    event(f"{sum(1 for n in with_fast[1].values() if n)} of {len(pods)} pods bound")
