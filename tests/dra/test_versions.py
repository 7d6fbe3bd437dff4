"""DynamicResources across versions: Test_computesScore and TestNormalizeScore
(dynamicresources_test.go, v1.35), the Score hooks per version, and the allocator each version's
gates pick (structured.NewAllocator)."""

from __future__ import annotations

import copy

import pytest

from builtin_plugins.dynamicresources import DynamicResources
from builtin_plugins.dynamicresources.allocator import Features
from builtin_plugins.dynamicresources.plugin import compute_score
from harness.api.objects import KubeObject
from harness.framework.runtime import implements
from harness.testing import FakeHandle
from harness.versions import resolve


def _claim(*requests, allocation=None):
    raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": "c", "namespace": "default"},
           "spec": {"devices": {"requests": [
               {"name": name, "firstAvailable": [{"name": f"subreq-{i + 1}", "deviceClassName": "cls"}
                                                 for i in range(subs)]} for name, subs in requests]}}}
    if allocation is not None:
        raw["status"] = {"allocation": allocation}
    return KubeObject(raw)


def _alloc(*requests):
    return {"devices": {"results": [{"request": r} for r in requests]}}


SCORE_CASES = {
    "mix-of-allocated-and-unallocated-claims": (
        [KubeObject({"metadata": {"name": "a"}, "spec": {"devices": {"requests": [
            {"name": "req-1", "exactly": {"deviceClassName": "cls"}}]}},
            "status": {"allocation": _alloc("req-1")}}),
         KubeObject({"metadata": {"name": "b"}, "spec": {"devices": {"requests": [
             {"name": "req-1", "exactly": {"deviceClassName": "cls"}}]}}})],
        [_alloc("req-1")], 0),
    "single-request-only-subrequest-allocated": ([_claim(("req-1", 1))], [_alloc("req-1/subreq-1")], 8),
    "single-request-last-subrequest-allocated": ([_claim(("req-1", 8))], [_alloc("req-1/subreq-8")], 1),
    "multiple-requests-with-middle-subrequests-allocated": (
        [_claim(("req-1", 4), ("req-2", 5))], [_alloc("req-1/subreq-4", "req-2/subreq-5")], 9),
    "multiple-requests-with-top-subrequests-allocated": (
        [_claim(("req-1", 8), ("req-2", 1))], [_alloc("req-1/subreq-8", "req-2/subreq-1")], 9),
    "multiple-claims-with-last-subrequests-allocated": (
        [_claim(("req-1", 8)), _claim(("req-2", 8))], [_alloc("req-1/subreq-8"), _alloc("req-2/subreq-8")], 2),
    "multiple-claims-with-top-subrequests-allocated": (
        [_claim(("req-1", 1)), _claim(("req-2", 1))], [_alloc("req-1/subreq-1"), _alloc("req-2/subreq-1")], 16),
    "allocated-claim-scores-by-its-own-allocation": (
        [_claim(("req-1", 2), allocation=_alloc("req-1/subreq-2"))], [], 7),
}


@pytest.mark.parametrize("name", sorted(SCORE_CASES))
def test_compute_score(name):
    claims, allocations, want = SCORE_CASES[name]
    assert compute_score(claims, allocations) == want


def test_compute_score_more_claims_than_allocations():
    from builtin_plugins.dynamicresources.claims import ClaimError
    with pytest.raises(ClaimError):
        compute_score([_claim(("req-1", 1)), _claim(("req-2", 1))], [])


def _plugin(version):
    handle = FakeHandle()
    handle.feature_gates = resolve(version)
    return DynamicResources(DynamicResources.set_defaults({}, features=handle.feature_gates), handle)


def test_score_extension_point_from_v1_35():
    assert not implements(_plugin("v1.34"), "score")
    assert not implements(_plugin("v1.34"), "normalize_score")
    for v in ("v1.35", "v1.36"):
        assert implements(_plugin(v), "score") and implements(_plugin(v), "normalize_score")


@pytest.mark.parametrize("scores,want", [([], []), ([42], [100]), ([8, 8], [100, 100]),
                                         ([2**31 - 1, 2**31 - 1], [100, 100]), ([8, 7], [100, 87]),
                                         ([0, 0], [0, 0])])
def test_normalize_score(scores, want):
    from harness.framework import NodeScore
    lst = [NodeScore(f"node-{i}", s) for i, s in enumerate(scores)]
    _plugin("v1.35").normalize_score(None, None, lst)
    assert [s.score for s in lst] == want


@pytest.mark.parametrize("version,gates,want", [
    ("v1.34", {}, "experimental"),  # DRAResourceClaimDeviceStatus needs experimental in v1.34
    ("v1.35", {}, "incubating"),
    ("v1.35", {"DRADeviceBindingConditions": True}, "experimental"),
    ("v1.35", {"DRADeviceTaints": True}, "incubating"),
    ("v1.36", {}, "incubating"),
    ("v1.36", {"DRAConsumableCapacity": False, "DRADeviceBindingConditions": False}, "stable"),
])
def test_allocator_implementation(version, gates, want):
    f = resolve(version, gates)
    assert Features.from_gates(f).implementation(f.version.minor) == want


# ---- the allocator per version (allocator_testing.go scenarios for the gated features) ----------

from builtin_plugins.dynamicresources.allocator import AllocationError, Allocator, FailedOnNode  # noqa: E402
from harness.api.dra_cel import CELCache  # noqa: E402
from harness.api.objects import Node  # noqa: E402

DRIVER = "driver-a"
CLASS = {"kind": "DeviceClass", "metadata": {"name": "class-a"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
                  "config": [{"opaque": {"driver": DRIVER, "parameters": {"a": "b"}}}]}}
NODE = Node({"kind": "Node", "metadata": {"name": "node-1", "labels": {}}})


def _slice(name, *devices, pool="pool-1", count=1, node="node-1", **spec):
    body = {"driver": DRIVER, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count}, **spec}
    if node and "perDeviceNodeSelection" not in spec:
        body["nodeName"] = node
    if devices:
        body["devices"] = list(devices)
    return KubeObject({"kind": "ResourceSlice", "metadata": {"name": name}, "spec": body})


def _req_claim(name="claim-0", *requests):
    reqs = list(requests) or [{"name": "req-0", "exactly": {"deviceClassName": "class-a", "allocationMode": "ExactCount",
                                                           "count": 1}}]
    return {"kind": "ResourceClaim", "metadata": {"name": name}, "spec": {"devices": {"requests": reqs}}}


def _allocate(version, slices, claims, allocated=(), gates=None):
    f = resolve(version, gates or {})
    a = Allocator(Features.from_gates(f), set(allocated), {"class-a": CLASS}.get, slices, CELCache())
    return a.allocate(NODE, claims)


TAINTED = {"name": "device-0", "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}
NONE_TAINT = {"name": "device-0", "taints": [{"key": "k", "value": "v", "effect": "None"}]}


def test_device_taints_gate():
    # off (v1.35): taints ignored; on (v1.36): an untolerated NoSchedule taint refuses the device
    assert _allocate("v1.35", [_slice("s", TAINTED)], [_req_claim()]) is not None
    assert _allocate("v1.36", [_slice("s", TAINTED)], [_req_claim()]) is None
    tolerating = {"name": "req-0", "exactly": {"deviceClassName": "class-a", "allocationMode": "ExactCount", "count": 1,
                                               "tolerations": [{"key": "k", "operator": "Equal", "value": "v"}]}}
    got = _allocate("v1.36", [_slice("s", TAINTED)], [_req_claim("c", tolerating)])
    # v1.35 on: the result carries the request's tolerations
    assert got[0]["devices"]["results"][0]["tolerations"] == [{"key": "k", "operator": "Equal", "value": "v"}]


def test_unknown_taint_effects_count_only_in_v1_34():
    # allTaintsTolerated (v1.34) vs taintPreventsAllocation (v1.35 on: NoSchedule/NoExecute only)
    gates = {"DRADeviceTaints": True}
    assert _allocate("v1.34", [_slice("s", NONE_TAINT)], [_req_claim()], gates=gates) is None
    assert _allocate("v1.35", [_slice("s", NONE_TAINT)], [_req_claim()], gates=gates) is not None


def _partitions():
    counters = _slice("a-counters", count=2, sharedCounters=[{"name": "gpu", "counters": {"mem": {"value": "4Gi"}}}])
    devices = _slice("b-devices",
                     {"name": "part-0", "consumesCounters": [{"counterSet": "gpu", "counters": {"mem": {"value": "3Gi"}}}]},
                     {"name": "part-1", "consumesCounters": [{"counterSet": "gpu", "counters": {"mem": {"value": "3Gi"}}}]},
                     count=2)
    return [counters, devices]


def test_partitionable_counters_per_pool():
    two = [_req_claim("c0"), _req_claim("c1")]
    assert _allocate("v1.36", _partitions(), [_req_claim()]) is not None
    # 3Gi + 3Gi > 4Gi: the second partition cannot be allocated in the same Allocate ...
    assert _allocate("v1.36", _partitions(), two) is None
    # ... nor after the first was allocated (availableCounters counts allocated devices)
    assert _allocate("v1.36", _partitions(), [_req_claim()], allocated=[(DRIVER, "pool-1", "part-0")]) is None
    # with the gate off the devices that consume counters are never allocated
    assert _allocate("v1.36", _partitions(), [_req_claim()], gates={"DRAPartitionableDevices": False}) is None


def test_counter_set_missing_makes_the_pool_invalid():
    devices = _slice("devices", {"name": "part-0", "consumesCounters": [{"counterSet": "nope", "counters": {
        "mem": {"value": "1"}}}]})
    with pytest.raises(FailedOnNode, match="invalid resource pools were encountered"):
        _allocate("v1.36", [devices], [_req_claim()])


def test_invalid_pool_error_v1_34_unschedulable_v1_35():
    dup = _slice("s", {"name": "device-0"}, {"name": "device-0"})
    with pytest.raises(AllocationError, match="pool pool-1 is invalid: duplicate device name device-0"):
        _allocate("v1.34", [dup], [_req_claim()])
    with pytest.raises(FailedOnNode, match="invalid resource pools were encountered"):
        _allocate("v1.35", [dup], [_req_claim()])
    # another valid pool still serves the claim from v1.35 on
    ok = _slice("t", {"name": "device-1"}, pool="pool-2")
    assert _allocate("v1.35", [dup, ok], [_req_claim()])[0]["devices"]["results"][0]["device"] == "device-1"


def test_incomplete_pool_counts_slices_for_other_nodes_from_v1_35():
    # a pool of two slices, one per node: v1.34 sees it as incomplete from node-1 (All mode
    # refuses it), v1.35 counts both (checkSlicesInPool)
    here = _slice("here", {"name": "device-0"}, count=2)
    there = _slice("there", {"name": "device-1"}, count=2, node="node-2")
    all_mode = {"name": "req-0", "exactly": {"deviceClassName": "class-a", "allocationMode": "All"}}
    with pytest.raises(AllocationError, match="currently being updated"):
        _allocate("v1.34", [here, there], [_req_claim("c", all_mode)])
    got = _allocate("v1.35", [here, there], [_req_claim("c", all_mode)])
    assert [r["device"] for r in got[0]["devices"]["results"]] == ["device-0"]


def test_class_config_once_per_class():
    """v1.34.9: a class's configs are added once, naming every request that used the class."""
    reqs = [{"name": n, "exactly": {"deviceClassName": "class-a", "allocationMode": "ExactCount", "count": 1}}
            for n in ("req-0", "req-1")]
    got = _allocate("v1.34", [_slice("s", {"name": "device-0"}, {"name": "device-1"})], [_req_claim("c", *reqs)])
    assert got[0]["devices"]["config"] == [{"source": "FromClass", "requests": ["req-0", "req-1"],
                                           "opaque": {"driver": DRIVER, "parameters": {"a": "b"}}}]


def test_binding_conditions_devices_need_the_gates():
    dev = {"name": "device-0", "bindingConditions": ["ready"], "bindingFailureConditions": ["failed"]}
    assert _allocate("v1.35", [_slice("s", dev)], [_req_claim()]) is None
    got = _allocate("v1.36", [_slice("s", dev)], [_req_claim()])
    r = got[0]["devices"]["results"][0]
    assert r["bindingConditions"] == ["ready"] and r["bindingFailureConditions"] == ["failed"]


# ---- the API server's gated fields (harness/case/dra_fields.py) -------------------------------

from harness.case import dra_fields  # noqa: E402
from harness.errors import CaseError  # noqa: E402


def test_disabled_fields_are_dropped_on_create():
    s = _slice("s", dict(TAINTED, consumesCounters=[{"counterSet": "x", "counters": {}}],
                         bindingConditions=["a"])).raw
    dra_fields.apply(s, resolve("v1.35"), "case.yaml", "cluster[0]")
    assert s["spec"]["devices"][0] == {"name": "device-0"}
    s = _slice("s", dict(TAINTED)).raw
    dra_fields.apply(s, resolve("v1.36"), "case.yaml", "cluster[0]")
    assert s["spec"]["devices"][0]["taints"]


def test_toleration_operator_defaults_to_equal():
    c = _req_claim("c", {"name": "r", "exactly": {"deviceClassName": "class-a", "tolerations": [{"key": "k"}]}})
    dra_fields.apply(c, resolve("v1.36"), "case.yaml", "cluster[0]")
    assert c["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] == [{"key": "k", "operator": "Equal"}]


def test_consumable_capacity_fields_are_kept_when_on_and_dropped_when_off():
    """dropDisabledDRAConsumableCapacityFields / dropDisabledDRAResourceClaimConsumableCapacity*:
    on (v1.36 default, or v1.35 with the gate) the fields stay; off they go."""
    dev = {"name": "d", "allowMultipleAllocations": True,
           "capacity": {"mem": {"value": "8Gi", "requestPolicy": {"default": "1Gi"}}}}
    req = {"name": "r", "exactly": {"deviceClassName": "class-a", "capacity": {"requests": {"mem": "2Gi"}}}}
    for features, kept in ((resolve("v1.36"), True), (resolve("v1.35", {"DRAConsumableCapacity": True}), True),
                           (resolve("v1.35"), False), (resolve("v1.36", {"DRAConsumableCapacity": False}), False)):
        s = _slice("s", copy.deepcopy(dev)).raw
        dra_fields.apply(s, features, "case.yaml", "cluster[0]")
        d = s["spec"]["devices"][0]
        assert ("allowMultipleAllocations" in d) is kept
        assert ("requestPolicy" in d["capacity"]["mem"]) is kept
        c = _req_claim("c", copy.deepcopy(req))
        c["spec"]["devices"]["constraints"] = [{"distinctAttribute": "example.com/a"}]
        c["status"] = {"allocation": {"devices": {"results": [
            {"request": "r", "driver": "d", "pool": "p", "device": "x",
             "shareID": "00000000-0000-4000-8000-000000000001", "consumedCapacity": {"mem": "2Gi"}}]}}}
        dra_fields.apply(c, features, "case.yaml", "cluster[0]")
        assert ("capacity" in c["spec"]["devices"]["requests"][0]["exactly"]) is kept
        assert ("distinctAttribute" in c["spec"]["devices"]["constraints"][0]) is kept
        r = c["status"]["allocation"]["devices"]["results"][0]
        assert ("shareID" in r and "consumedCapacity" in r) is kept


def test_binding_timeout_is_an_unknown_field_before_v1_35():
    from harness.config.loader import load_config_data
    from harness.errors import ConfigError
    from harness.framework.registry import build_registry
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"pluginConfig": [{"name": "DynamicResources", "args": {"bindingTimeout": "30s"}}]}]}
    with pytest.raises(ConfigError, match='unknown field "bindingTimeout"'):
        load_config_data(doc, build_registry(), features=resolve("v1.34"))
    with pytest.raises(ConfigError, match="feature gate is disabled"):
        load_config_data(doc, build_registry(), features=resolve("v1.35"))
    cfg = load_config_data(doc, build_registry(), features=resolve("v1.36"))
    args = [pc for pc in cfg["profiles"][0]["pluginConfig"] if pc["name"] == "DynamicResources"][0]["args"]
    assert args["bindingTimeout"] == "30s"


def test_dropping_leaves_an_invalid_object():
    c = _req_claim("c", {"name": "r", "firstAvailable": [{"name": "s", "deviceClassName": "class-a"}]})
    with pytest.raises(CaseError, match="exactly one of `exactly` or `firstAvailable` is required"):
        dra_fields.apply(c, resolve("v1.35", {"DRAPrioritizedList": False}), "case.yaml", "cluster[0]")
    s = _slice("s", {"name": "d", "allNodes": True}, node=None, perDeviceNodeSelection=True).raw
    with pytest.raises(CaseError, match="`perDeviceNodeSelection` is required"):
        dra_fields.apply(s, resolve("v1.35"), "case.yaml", "cluster[0]")


def _counter_slices(*devices, available="1"):
    return [_slice("slice-1", *devices, count=2),
            _slice("slice-2", count=2, sharedCounters=[{"name": "cs", "counters": {"c": {"value": available}}}])]


def _consumer(name, **extra):
    return dict({"name": name, "consumesCounters": [{"counterSet": "cs", "counters": {"c": {"value": "1"}}}]}, **extra)


@pytest.mark.parametrize("version,want", [("v1.35", None), ("v1.36", "device-2")])
def test_partitionable_devices_taint_releases_counter(version, want):
    """allocator_testing.go "partitionable-devices-taint-releases-counter" (v1.36): device-1 is
    refused by its taint after its counter was reserved; v1.36 gives the counter back, so
    device-2 fits; v1.35 keeps it reserved for the rest of the Allocate call."""
    slices = _counter_slices(_consumer("device-1", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
                             _consumer("device-2"))
    got = _allocate(version, slices, [_req_claim()],
                    gates={"DRADeviceTaints": True, "DRAPartitionableDevices": True} if version == "v1.35" else None)
    assert (got[0]["devices"]["results"][0]["device"] if got else None) == want


@pytest.mark.parametrize("version,want", [("v1.35", None), ("v1.36", ["device-2", "device-3"])])
def test_partitionable_devices_constraint_releases_counter(version, want):
    """allocator_testing.go "partitionable-devices-constraint-releases-counter" (v1.36)."""
    color = lambda c: {"stringAttribute": {"string": c}}  # noqa: E731
    slices = _counter_slices(_consumer("device-1", attributes=color("red")),
                             _consumer("device-2", attributes=color("blue")),
                             _consumer("device-3", attributes=color("blue")), available="2")
    claim = _req_claim("c", {"name": "req-0", "exactly": {"deviceClassName": "class-a", "allocationMode": "ExactCount",
                                                         "count": 2}})
    claim["spec"]["devices"]["constraints"] = [{"matchAttribute": f"{DRIVER}/stringAttribute"}]
    got = _allocate(version, slices, [claim], gates={"DRAPartitionableDevices": True} if version == "v1.35" else None)
    assert ([r["device"] for r in got[0]["devices"]["results"]] if got else None) == want
