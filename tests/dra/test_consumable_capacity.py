"""Consumable device capacity (DRAConsumableCapacity): the consumable-capacity, allow-multiple-
allocations and distinct-constraint entries of TestAllocator's table
(structured/internal/allocatortesting/allocator_testing.go at v1.36.3; v1.35.6 has the same
entries but the v1.36 rollback ones), ported; consumable_capacity_test.go's unit tests; and the
claim tracker's GatherAllocatedState. Upstream's table fixes the share IDs
(fixedShareID); here results are compared without them."""

from __future__ import annotations

import random
from typing import Any, Dict, List, Optional

import pytest

from builtin_plugins.dynamicresources import consumable as cc
from builtin_plugins.dynamicresources.allocator import AllocationError, Allocator, Features
from harness.api.dra_cel import CELCache
from harness.api.objects import KubeObject, Node
from harness.api.quantity import Q, parse_q
from harness.versions import resolve

NODE1 = "node-1"
CLASS_A, DRIVER_A, POOL1 = "class-a", "driver-a", "pool-1"
REQ0, REQ1, SUB0, SUB1 = "req-0", "req-1", "subReq-0", "subReq-1"
DEV1, DEV2 = "device-1", "device-2"
CAP0, CAP1 = "capacity-0", "capacity-1"

V136 = resolve("v1.36")
V135 = resolve("v1.35", {"DRAConsumableCapacity": True})
V134 = resolve("v1.34", {"DRAConsumableCapacity": True})
# with partitionable devices too (off by default before v1.36)
P136 = V136
P135 = resolve("v1.35", {"DRAConsumableCapacity": True, "DRAPartitionableDevices": True})
P134 = resolve("v1.34", {"DRAConsumableCapacity": True, "DRAPartitionableDevices": True})


def features(v=V136, **kw) -> Features:
    f = Features.from_gates(v)
    for k, val in kw.items():
        setattr(f, k, val)
    return f


def node() -> Node:
    return Node({"kind": "Node", "metadata": {"name": NODE1, "labels": {"region": "region-1"}}})


def klass(multi: Optional[bool] = True) -> Dict[str, Any]:
    """class / classWithAllowMultipleAllocations."""
    expr = f'device.driver == "{DRIVER_A}"'
    if multi is not None:
        expr += f" && device.allowMultipleAllocations == {str(multi).lower()}"
    return {"kind": "DeviceClass", "metadata": {"name": CLASS_A}, "spec": {"selectors": [{"cel": {"expression": expr}}]}}


def req(name: str, capacity: Optional[str] = None, mode: str = "ExactCount", selectors=()) -> Dict[str, Any]:
    ex: Dict[str, Any] = {"deviceClassName": CLASS_A, "allocationMode": mode}
    if mode == "ExactCount":
        ex["count"] = 1
    if capacity is not None:
        ex["capacity"] = {"requests": {CAP0: capacity}}
    if selectors:
        ex["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": ex}


def claim(name: str, *requests, constraints=None) -> Dict[str, Any]:
    devices: Dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"kind": "ResourceClaim", "metadata": {"name": name}, "spec": {"devices": devices}}


def dev(name: str, capacity: Optional[Dict[str, str]] = None, multi: bool = True, policy: Optional[str] = None,
        cap_value: Optional[str] = None, valid_values=None, default: str = "2", **extra) -> Dict[str, Any]:
    """device(...).withAllowMultipleAllocations().withCapacityRequestPolicyRange/ValidValues."""
    d: Dict[str, Any] = {"name": name}
    if capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if multi:
        d["allowMultipleAllocations"] = True
    if policy == "range":  # Default 2, ValidRange{Min 2, Step 2, Max 4}
        d.setdefault("capacity", {})[CAP0] = {"value": cap_value, "requestPolicy": {
            "default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}}
    elif policy == "values":
        d.setdefault("capacity", {})[CAP0] = {"value": cap_value, "requestPolicy": {
            "default": default, "validValues": [default] + list(valid_values or [])}}
    d.update(extra)
    return d


_rv = [0]


def slice_(*devices, name="slice-1", **spec_extra) -> KubeObject:
    _rv[0] += 1
    spec = {"driver": DRIVER_A, "pool": {"name": POOL1, "generation": 1, "resourceSliceCount": 1},
            "nodeName": NODE1, "devices": list(devices)}
    spec.update(spec_extra)
    obj = KubeObject({"kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec})
    obj.resource_version = _rv[0]
    return obj


def run(claims: List[Dict[str, Any]], slices, f: Optional[Features] = None, cls=None,
        allocated_capacity: Optional[Dict[tuple, Dict[str, str]]] = None, allocated=()):
    f = f or features()
    state = cc.AllocatedState(set(allocated))
    for did, caps in (allocated_capacity or {}).items():
        cc.collection_insert(state.aggregated_capacity, did, caps)
    classes = {CLASS_A: cls if cls is not None else klass()}
    a = Allocator(f, state.allocated_devices, classes.get, slices, CELCache(), allocated_state=state)
    found = a.allocate_lazy(node(), claims)
    if found is None:
        return None
    ids = iter(range(1, 1000))
    return found.results(lambda: f"share-{next(ids)}")


def devices_of(results) -> List[List[tuple]]:
    """(request, device, consumed capacity or None, shared) per result, per claim."""
    return [[(r["request"], r["device"], r.get("consumedCapacity"), "shareID" in r)
             for r in res["devices"]["results"]] for res in results]


ALL = [V134, V135, V136]


# ---- consumable_capacity_test.go -----------------------------------------------------------------

def test_calculate_consumed_capacity():
    """TestCalculateConsumedCapacity: no policy -> the request; none requested -> the default (or
    the whole value); validRange rounds up to min then by step; validValues to the next one."""
    rng = {"value": "10", "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}}
    assert cc.calculate_consumed_capacity(None, {"value": "10"}).value == 10
    assert cc.calculate_consumed_capacity(None, rng).value == 2
    assert cc.calculate_consumed_capacity(parse_q("1"), rng).value == 2
    assert cc.calculate_consumed_capacity(parse_q("3"), rng).value == 4
    assert cc.calculate_consumed_capacity(parse_q("5"), {"value": "10"}).value == 5
    vals = {"value": "10", "requestPolicy": {"default": "1", "validValues": ["1", "3", "5"]}}
    assert cc.calculate_consumed_capacity(parse_q("2"), vals).value == 3
    assert cc.calculate_consumed_capacity(parse_q("6"), vals).value == 6  # none large enough: as is
    # roundUpRange's result is a BinarySI quantity: 3Gi rounded up by 2Gi steps from 2Gi -> 4Gi
    gi = {"value": "8Gi", "requestPolicy": {"default": "2Gi", "validRange": {"min": "2Gi", "step": "2Gi"}}}
    assert str(cc.calculate_consumed_capacity(parse_q("3Gi"), gi)) == "4Gi"


def test_violates_policy_and_cmp_request_over_capacity():
    """violatesPolicy / CmpRequestOverCapacity."""
    policy = {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}
    assert not cc.violates_policy(parse_q("2"), policy)
    assert cc.violates_policy(parse_q("6"), policy)  # over max
    assert cc.violates_policy(parse_q("3"), policy)  # not a step from min
    assert cc.violates_policy(parse_q("1"), {"default": "0", "validValues": ["0"]})
    cap = {CAP0: {"value": "4", "requestPolicy": policy}}
    assert cc.cmp_request_over_capacity({}, {"requests": {CAP0: "2"}}, cap, None)
    assert cc.cmp_request_over_capacity({CAP0: 2}, {"requests": {CAP0: "2"}}, cap, None)
    assert not cc.cmp_request_over_capacity({CAP0: 2}, {"requests": {CAP0: "2"}}, cap, {CAP0: 2})
    with pytest.raises(cc.CapacityError, match="some requested capacity has not been defined"):
        cc.cmp_request_over_capacity({}, {"requests": {CAP1: "1"}}, cap, None)


def test_quantity_strings():
    """Quantity.String of the consumed capacity written to the claim."""
    assert str(parse_q("1Gi")) == "1Gi" and str(parse_q("1000")) == "1k" and str(parse_q("1.5")) == "1500m"
    assert str(Q(parse_q("2").value, "BinarySI")) == "2" and str(Q(parse_q("2Gi").value, "BinarySI")) == "2Gi"


# ---- allocator_testing.go entries ----------------------------------------------------------------

@pytest.mark.parametrize("v", ALL)
def test_without_capacity_without_capacity_request(v):
    """consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request:
    both claims share device-1; nothing consumed (no capacity defined), a share each."""
    got = run([claim("claim-0", req(REQ0)), claim("claim-1", req(REQ0))], [slice_(dev(DEV1))], features(v))
    assert devices_of(got) == [[(REQ0, DEV1, None, True)], [(REQ0, DEV1, None, True)]]
    assert got[0]["devices"]["results"][0]["shareID"] != got[1]["devices"]["results"][0]["shareID"]


@pytest.mark.parametrize("v", ALL)
def test_without_policy_without_capacity_request(v):
    """...-without-policy-without-capacity-request: no request consumes the whole capacity, so
    the second claim takes device-2; with one device of capacity 2 (-block) nothing fits.
    v1.34.9's allocateDevice checks device-1 (slice.Spec.Devices[r.deviceIndex], index 0) for
    claim-1's candidate device-2: device-1 is full, so the search backtracks: claim-0 takes
    device-2 (device-1 checked, free), claim-1 device-1."""
    got = run([claim("claim-0", req(REQ0)), claim("claim-1", req(REQ0))],
              [slice_(dev(DEV1, {CAP0: "1"}), dev(DEV2, {CAP0: "1"}))], features(v))
    if v is V134:
        assert devices_of(got) == [[(REQ0, DEV2, {CAP0: "1"}, True)], [(REQ0, DEV1, {CAP0: "1"}, True)]]
    else:
        assert devices_of(got) == [[(REQ0, DEV1, {CAP0: "1"}, True)], [(REQ0, DEV2, {CAP0: "1"}, True)]]
    assert run([claim("claim-0", req(REQ0)), claim("claim-1", req(REQ0))],
               [slice_(dev(DEV1, {CAP0: "2"}))], features(v)) is None


@pytest.mark.parametrize("v", ALL)
def test_without_policy_with_capacity_request(v):
    """...-without-policy-with-capacity-request: 1 + 1 of 2 on the same device."""
    got = run([claim("claim-0", req(REQ0, "1")), claim("claim-1", req(REQ0, "1"))],
              [slice_(dev(DEV1, {CAP0: "2"}))], features(v))
    assert devices_of(got) == [[(REQ0, DEV1, {CAP0: "1"}, True)], [(REQ0, DEV1, {CAP0: "1"}, True)]]


@pytest.mark.parametrize("v", ALL)
def test_range_policy(v):
    """...-with-policy-without-capacity-request (the default, 2, each), -with-range-policy-with-
    capacity-request (1 rounded up to min 2), -with-range-policy-step (3 -> 2 + 2 = 4),
    -with-request-over-max-sharing-policy (6 > max 4 although capacity is 10)."""
    s = slice_(dev(DEV1, policy="range", cap_value="4"))
    want = [[(REQ0, DEV1, {CAP0: "2"}, True)], [(REQ0, DEV1, {CAP0: "2"}, True)]]
    assert devices_of(run([claim("claim-0", req(REQ0)), claim("claim-1", req(REQ0))], [s], features(v))) == want
    assert devices_of(run([claim("claim-0", req(REQ0, "1")), claim("claim-1", req(REQ0, "1"))], [s], features(v))) == want
    assert devices_of(run([claim("claim-0", req(REQ0, "3"))], [s], features(v))) == [[(REQ0, DEV1, {CAP0: "4"}, True)]]
    s10 = slice_(dev(DEV1, policy="range", cap_value="10"))
    assert run([claim("claim-0", req(REQ0, "6"))], [s10], features(v)) is None


@pytest.mark.parametrize("v", ALL)
def test_valid_values_policy(v):
    """...-with-zero-request-policy (default 0: both share at 0), -violates-zero-request-policy
    (1 is no valid value), -with-valid-values-policy (2 valid), -round-up (2 -> 3)."""
    s0 = slice_(dev(DEV1, policy="values", cap_value="1", default="0"))
    assert devices_of(run([claim("claim-0", req(REQ0)), claim("claim-1", req(REQ0))], [s0], features(v))) == \
        [[(REQ0, DEV1, {CAP0: "0"}, True)], [(REQ0, DEV1, {CAP0: "0"}, True)]]
    assert run([claim("claim-0", req(REQ0, "1"))], [s0], features(v)) is None
    s = slice_(dev(DEV1, policy="values", cap_value="4", default="1", valid_values=["2"]))
    assert devices_of(run([claim("claim-0", req(REQ0, "2"))], [s], features(v))) == [[(REQ0, DEV1, {CAP0: "2"}, True)]]
    s3 = slice_(dev(DEV1, policy="values", cap_value="3", default="1", valid_values=["3"]))
    assert devices_of(run([claim("claim-0", req(REQ0, "2"))], [s3], features(v))) == [[(REQ0, DEV1, {CAP0: "3"}, True)]]


@pytest.mark.parametrize("v", ALL)
def test_missing_and_exceeded_capacity_requests(v):
    """...-with-missing-capacity-request (capacity-0 requested, the device has capacity-1 only,
    also for allocationMode All), -with-exceeded-consumable-capacity-request (1 then 2 of max 2
    after rounding: 2 + 2 > 2)."""
    s = slice_(dev(DEV1, {CAP1: "1"}))
    assert run([claim("claim-0", req(REQ0, "1"))], [s], features(v), cls=klass(None)) is None
    assert run([claim("claim-0", req(REQ0, "1", mode="All"))], [s], features(v)) is None
    s2 = slice_(dev(DEV1, policy="range", cap_value="2"))
    assert run([claim("claim-0", req(REQ0, "1")), claim("claim-1", req(REQ0, "2"))], [s2], features(v)) is None


@pytest.mark.parametrize("v", ALL)
def test_allocated_capacity(v):
    """...-with-allocated-capacity-use-remaining (2 of 4 allocated: 2 more fit) and
    -with-no-available-consumable-capacity (2 of 2 allocated)."""
    s = slice_(dev(DEV1, policy="range", cap_value="4"))
    used = {(DRIVER_A, POOL1, DEV1): {CAP0: "2"}}
    assert devices_of(run([claim("claim-0", req(REQ0, "2"))], [s], features(v), allocated_capacity=used)) == \
        [[(REQ0, DEV1, {CAP0: "2"}, True)]]
    s2 = slice_(dev(DEV1, policy="range", cap_value="2"))
    assert run([claim("claim-0", req(REQ0, "2"))], [s2], features(v), allocated_capacity=used) is None


@pytest.mark.parametrize("v,want", [(V136, DEV2), (V135, DEV2), (V134, None)])
def test_allocated_capacity_next_device(v, want):
    """...-with-allocated-capacity-next-device: device-1 is full (2 of 2), device-2 is taken.
    v1.34.9's allocateDevice checks slice.Spec.Devices[r.deviceIndex] (device-1, full) instead of
    device-2 and refuses it (CHANGES["DRACapacityCheckOwnDevice"])."""
    s = slice_(dev(DEV1, policy="range", cap_value="2"), dev(DEV2, policy="range", cap_value="2"))
    got = run([claim("claim-0", req(REQ0, "2"))], [s], features(v),
              allocated_capacity={(DRIVER_A, POOL1, DEV1): {CAP0: "2"}})
    assert (devices_of(got) if got else None) == ([[(REQ0, want, {CAP0: "2"}, True)]] if want else None)


@pytest.mark.parametrize("v", [V135, V136])
def test_backtrack(v):
    """consumable-capacity-with-multi-allocatable-device-backtrack: claim-0's two requests
    (matchAttribute) first take device-2 (capacity 2) and device-1 fails the attribute; they end
    on device-1 (2 + 2 of 4); claim-1 takes device-2."""
    attr = "driver-a/stringAttribute"
    s = slice_(dev(DEV2, policy="range", cap_value="2", attributes={"stringAttribute": {"string": "v1"}}),
               dev(DEV1, policy="range", cap_value="4", attributes={"stringAttribute": {"string": "v2"}}))
    got = run([claim("claim-0", req(REQ0, "2"), req(REQ1, "2"), constraints=[{"matchAttribute": attr}]),
               claim("claim-1", req(REQ0, "2"))], [s], features(v), cls=klass(None))
    assert devices_of(got) == [[(REQ0, DEV1, {CAP0: "2"}, True), (REQ1, DEV1, {CAP0: "2"}, True)],
                               [(REQ0, DEV2, {CAP0: "2"}, True)]]


@pytest.mark.parametrize("v", ALL)
def test_subrequest(v):
    """...-with-subrequest: 4 > max 4? no: 4 of capacity 2 fails; 2 fits (req-0/subReq-1)."""
    request = {"name": REQ0, "firstAvailable": [
        {"name": SUB0, "deviceClassName": CLASS_A, "allocationMode": "ExactCount", "count": 1,
         "capacity": {"requests": {CAP0: "4"}}},
        {"name": SUB1, "deviceClassName": CLASS_A, "allocationMode": "ExactCount", "count": 1,
         "capacity": {"requests": {CAP0: "2"}}}]}
    got = run([claim("claim-0", request)], [slice_(dev(DEV1, policy="range", cap_value="2"))], features(v))
    assert devices_of(got) == [[(f"{REQ0}/{SUB1}", DEV1, {CAP0: "2"}, True)]]


@pytest.mark.parametrize("v", ALL)
def test_allocation_mode_all(v):
    """...-allocation-mode-all-filter-out-no-capacity / -insufficient-capacity: only device-1
    (capacity 2) can take 2; -allocating-insufficient: a first request's share leaves too little
    for the All request."""
    s = slice_(dev(DEV1, {CAP0: "2"}), dev(DEV2))
    assert devices_of(run([claim("claim-0", req(REQ0, "2", mode="All"))], [s], features(v))) == \
        [[(REQ0, DEV1, {CAP0: "2"}, True)]]
    s = slice_(dev(DEV1, {CAP0: "2"}), dev(DEV2, {CAP0: "1"}))
    assert devices_of(run([claim("claim-0", req(REQ0, "2", mode="All"))], [s], features(v))) == \
        [[(REQ0, DEV1, {CAP0: "2"}, True)]]
    s = slice_(dev(DEV1, {CAP0: "2"}))
    assert run([claim("claim-0", req(REQ0, "1"), req(REQ1, "2", mode="All"))], [s], features(v)) is None


@pytest.mark.parametrize("v", ALL)
def test_dedicated_device_with_capacity_request(v):
    """consumable-capacity-dedicated-device-with-consumable-capacity-request: a device without
    allowMultipleAllocations serves a capacity request within its capacity, no share, no
    consumedCapacity, and is then in use."""
    s = slice_(dev(DEV1, {CAP0: "2"}, multi=False))
    got = run([claim("claim-0", req(REQ0, "1"))], [s], features(v), cls=klass(None))
    assert devices_of(got) == [[(REQ0, DEV1, None, False)]]
    assert run([claim("claim-0", req(REQ0, "1")), claim("claim-1", req(REQ0, "1"))], [s], features(v),
               cls=klass(None)) is None
    assert run([claim("claim-0", req(REQ0, "3"))], [s], features(v), cls=klass(None)) is None


@pytest.mark.parametrize("v", ALL)
def test_multi_allocatable_device_already_dedicated(v):
    """allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated:
    a device allocated whole (AllocatedDevices) is in use even if it allows multiple allocations."""
    s = slice_(dev(DEV1, {CAP0: "2"}))
    assert run([claim("claim-0", req(REQ0, "1"))], [s], features(v), allocated=[(DRIVER_A, POOL1, DEV1)]) is None


def test_disabled_feature_refuses_capacity_requests():
    """consumable-capacity-disabled-feature(-with-prioritized-list)."""
    f = features(V136, consumable_capacity=False)
    with pytest.raises(AllocationError, match="claim claim-0, request req-0: has capacity requests, but the "
                                              "DRAConsumableCapacity feature is disabled"):
        run([claim("claim-0", req(REQ0, "1"))], [slice_(dev(DEV1, multi=False))], f, cls=klass(None))
    request = {"name": REQ0, "firstAvailable": [
        {"name": SUB0, "deviceClassName": CLASS_A, "capacity": {"requests": {CAP0: "1"}}}]}
    with pytest.raises(AllocationError, match="claim claim-0, subrequest subReq-0: has capacity requests"):
        run([claim("claim-0", request)], [slice_(dev(DEV1, multi=False))], f, cls=klass(None))


# ---- distinctAttribute -------------------------------------------------------------------------

def _distinct_slices():
    return [slice_(dev(DEV1, multi=False, attributes={"a": {"string": "x"}}),
                   dev(DEV2, multi=False, attributes={"a": {"string": "x"}}),
                   dev("device-3", multi=False, attributes={"a": {"string": "y"}}))]


@pytest.mark.parametrize("v,want", [(V136, "device-3"), (V135, "device-3"), (V134, DEV2)])
def test_distinct_constraint(v, want):
    """with-distinct-constraints: the two requests need different values of the attribute: req-0
    takes device-1 (x), req-1 skips device-2 (x) for device-3 (y). v1.34.9 compares the values'
    pointers (CHANGES["DRADistinctAttributeByValue"]): two devices never collide, device-2 is
    taken."""
    got = run([claim("claim-0", req(REQ0), req(REQ1), constraints=[{"distinctAttribute": "driver-a/a"}])],
              _distinct_slices(), features(v), cls=klass(None))
    assert [d[1] for d in devices_of(got)[0]] == [DEV1, want]


def test_distinct_constraint_attribute_not_set():
    """with-distinct-constraints-attribute-not-set: no device has the attribute -> no allocation."""
    got = run([claim("claim-0", req(REQ0), req(REQ1), constraints=[{"distinctAttribute": "driver-a/b"}])],
              _distinct_slices(), features(), cls=klass(None))
    assert got is None


@pytest.mark.parametrize("v", ALL)
def test_distinct_constraint_same_shared_device(v):
    """A shared device allocated twice in a claim is a duplicate under distinctAttribute in every
    version (v1.34.9: the same pointers)."""
    s = slice_(dev(DEV1, attributes={"a": {"string": "x"}}))
    got = run([claim("claim-0", req(REQ0), req(REQ1), constraints=[{"distinctAttribute": "driver-a/a"}])],
              [s], features(v))
    assert got is None
    assert devices_of(run([claim("claim-0", req(REQ0), req(REQ1))], [s], features(v))) == \
        [[(REQ0, DEV1, None, True), (REQ1, DEV1, None, True)]]


# ---- partitionable devices with shares ----------------------------------------------------------

def _counter_slices(*devices, v=None):
    if v is P134:  # v1.34: a slice's devices consume the counter sets of their own slice
        return [slice_(*devices, sharedCounters=[{"name": "cs", "counters": {"mem": {"value": "4"}}}])]
    return [slice_(*devices, name="slice-1", pool={"name": POOL1, "generation": 1, "resourceSliceCount": 2}),
            KubeObject({"kind": "ResourceSlice", "metadata": {"name": "slice-2"}, "spec": {
                "driver": DRIVER_A, "nodeName": NODE1,
                "pool": {"name": POOL1, "generation": 1, "resourceSliceCount": 2},
                "sharedCounters": [{"name": "cs", "counters": {"mem": {"value": "4"}}}]}})]


def _consumer(name, mem="4", **kw):
    return dev(name, consumesCounters=[{"counterSet": "cs", "counters": {"mem": {"value": mem}}}], **kw)


@pytest.mark.parametrize("v,want", [(P136, [DEV1, DEV1]), (P135, [DEV1, DEV1]), (P134, None)])
def test_shared_device_counters_once(v, want):
    """allow-multiple-allocations-with-partitionable-device: a shared device consumes its
    counters once; its second share skips the check (skipCounterCheck, v1.35 on). v1.34.9 checks
    them for every share: 4 + 4 > 4."""
    got = run([claim("claim-0", req(REQ0)), claim("claim-1", req(REQ0))], _counter_slices(_consumer(DEV1), v=v), features(v))
    assert ([d[0][1] for d in devices_of(got)] if got else None) == want


@pytest.mark.parametrize("v,want", [(P136, None), (P135, DEV2)])
def test_shared_device_counter_cross_cycle(v, want):
    """allow-multiple-allocations-with-shared-device-counter-cross-cycle: device-1 (shared, in
    an allocated claim) consumes the counter set; v1.36 counts it (IsDeviceAllocated), so
    device-2 (which needs the same counters) does not fit; v1.35 counts AllocatedDevices only."""
    slices = _counter_slices(_consumer(DEV1), _consumer(DEV2, multi=False))
    f = features(v)
    state = cc.gather_allocated_state([{"devices": {"results": [
        {"request": REQ0, "driver": DRIVER_A, "pool": POOL1, "device": DEV1, "shareID": "s-1"}]}}], [],
        f.shared_devices_consume_counters)
    a = Allocator(f, state.allocated_devices, {CLASS_A: klass(False)}.get, slices, CELCache(), allocated_state=state)
    got = a.allocate(node(), [claim("claim-0", req(REQ0))])
    assert (got[0]["devices"]["results"][0]["device"] if got else None) == want


# ---- the claim tracker (GatherAllocatedState) and share IDs ---------------------------------------

def test_gather_allocated_state_splits_shares():
    """foreachAllocatedDevice with enabledConsumableCapacity: shared results go to the shared IDs
    and their consumed capacity to AggregatedCapacity; admin access results are skipped."""
    alloc = {"devices": {"results": [
        {"driver": "d", "pool": "p", "device": "x", "shareID": "s1", "consumedCapacity": {"m": "1"}},
        {"driver": "d", "pool": "p", "device": "x", "shareID": "s2", "consumedCapacity": {"m": "2Gi"}},
        {"driver": "d", "pool": "p", "device": "y"},
        {"driver": "d", "pool": "p", "device": "z", "adminAccess": True}]}}
    st = cc.gather_allocated_state([alloc], [], True)
    assert st.allocated_devices == {("d", "p", "y")}
    assert st.shared_device_ids == {("d", "p", "x", "s1"), ("d", "p", "x", "s2")}
    assert st.aggregated_capacity == {("d", "p", "x"): {"m": 1 + 2 ** 31}}
    assert cc.gather_allocated_state([alloc], [], False).shared_device_ids == set()  # v1.34/v1.35 cache
    d, s, caps = cc.split_allocation(alloc, False)
    assert d == {("d", "p", "x"), ("d", "p", "y")} and not s and not caps


def test_share_ids_are_version_4_uuids_from_the_seeded_stream():
    a, b = random.Random(7), random.Random(7)
    ids = [cc.new_share_id(a) for _ in range(3)]
    assert ids == [cc.new_share_id(b) for _ in range(3)]
    assert len(set(ids)) == 3 and all(len(i) == 36 and i[14] == "4" for i in ids)


# ---- the API server's validation (validateRequestPolicy, validateDeviceConstraint) ---------------

def _policy_slice(policy, value="8Gi", multi=True):
    d = {"name": "d", "capacity": {"mem": {"value": value, "requestPolicy": policy}}}
    if multi:
        d["allowMultipleAllocations"] = True
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "example.com", "nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 1},
                     "devices": [d]}}


@pytest.mark.parametrize("policy,value,multi,want", [
    ({"default": "1Gi"}, "8Gi", False, ("spec.devices[0].capacity[mem].requestPolicy",
                                        "Forbidden: allowMultipleAllocations must be true")),
    ({"default": "1Gi", "validValues": ["1Gi"], "validRange": {"min": "1Gi"}}, "8Gi", True,
     ("spec.devices[0].capacity[mem].requestPolicy", 'Forbidden: exactly one policy can be specified, cannot '
                                                     'specify "validValues" and "validRange" at the same time')),
    ({"validValues": ["1Gi"]}, "8Gi", True, ("spec.devices[0].capacity[mem].requestPolicy.default",
                                             "Required value: required when validValues is defined")),
    ({"default": "1Gi", "validValues": ["2Gi", "1Gi"]}, "8Gi", True,
     ("spec.devices[0].capacity[mem].requestPolicy.validValues[1]",
      'Invalid value: "1Gi": values must be sorted in ascending order')),
    ({"default": "1Gi", "validValues": ["1Gi", "16Gi"]}, "8Gi", True,
     ("spec.devices[0].capacity[mem].requestPolicy.validValues[1]",
      'Invalid value: "16Gi": option is larger than capacity value: 8Gi')),
    ({"default": "3Gi", "validValues": ["1Gi", "2Gi"]}, "8Gi", True,
     ("spec.devices[0].capacity[mem].requestPolicy.validValues",
      'Invalid value: "3Gi": default value is not valid according to the requestPolicy')),
    ({"default": "1Gi", "validRange": {"min": "2Gi"}}, "8Gi", True,
     ("spec.devices[0].capacity[mem].requestPolicy.validRange.min", 'Invalid value: "1Gi": default is less than min: 2Gi')),
    ({"default": "3Gi", "validRange": {"min": "2Gi", "step": "2Gi"}}, "8Gi", True,
     ("spec.devices[0].capacity[mem].requestPolicy.validRange.step",
      'Invalid value: "3Gi": value is not a multiple of a given step (2Gi) from (2Gi)')),
    ({"default": "2Gi", "validRange": {"min": "2Gi", "step": "8Gi"}}, "8Gi", True,
     ("spec.devices[0].capacity[mem].requestPolicy.validRange.step",
      'Invalid value: "8Gi": one step 10Gi is larger than capacity value: 8Gi')),
    ({"default": "2Gi", "validRange": {"min": "2Gi", "step": "2Gi", "max": "6Gi"}}, "8Gi", True, None),
])
def test_request_policy_validation(policy, value, multi, want):
    from harness.api.object_validation import validate_object
    assert validate_object(_policy_slice(policy, value, multi), V136) == want


def test_empty_constraint_message_with_the_gate_on():
    from harness.api.object_validation import validate_object
    c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "x"}}], "constraints": [{}]}}}
    assert validate_object(c, V136) == ("spec.devices.constraints[0]", 'Required value: exactly one of '
                                        '"matchAttribute" or "distinctAttribute" is required, but multiple fields are set')
    assert validate_object(c, resolve("v1.35")) == ("spec.devices.constraints[0].matchAttribute", "Required value")


# ---- v1.36's rollbackDevice entries ----------------------------------------------------------------

def _kind(k, **more):
    a = {"kind": {"string": k}}
    a.update({n: {"string": v} for n, v in more.items()})
    return a


def _sel(expr):
    return [f'device.attributes["{DRIVER_A}"].{expr}']


@pytest.mark.parametrize("v,want", [(P136, [DEV2, "device-3"]), (P135, None)])
def test_partitionable_consumable_capacity_backtrack_releases_counter(v, want):
    """partitionable-consumable-capacity-backtrack-releases-counter (v1.36): req-0 first takes
    device-1 (shared, consumes the single counter), req-1 can only use device-3 (same counter):
    backtracking device-1 must give the counter back, so req-0 takes device-2. v1.35's undo never
    gives a shared device's counters back: device-3 never fits."""
    slices = _counter_slices(
        dev(DEV1, attributes=_kind("shared"), consumesCounters=[{"counterSet": "cs", "counters": {"mem": {"value": "4"}}}]),
        dev(DEV2, multi=False, attributes=_kind("shared")),
        dev("device-3", multi=False, attributes=_kind("counteronly"),
            consumesCounters=[{"counterSet": "cs", "counters": {"mem": {"value": "4"}}}]))
    got = run([claim("claim-0", req(REQ0, selectors=_sel('kind == "shared"')),
                     req(REQ1, selectors=_sel('kind == "counteronly"')))], slices, features(v), cls=klass(None))
    assert ([d[1] for d in devices_of(got)[0]] if got else None) == want


@pytest.mark.parametrize("v,want", [(V136, DEV2), (V135, None)])
def test_consumable_capacity_rejection_rolls_back_constraints(v, want):
    """consumable-capacity-rejection-rolls-back-constraints (v1.36): claim-0 fills device-1; claim-1's
    All subrequest listed device-1 (it fitted when the list was built) but allocateDevice's capacity
    check rejects it after the matchAttribute constraint took its value; v1.36 rolls the constraint
    back, so the fallback subrequest gets device-2; v1.35 leaves "cap" in the constraint and device-2
    ("fb") does not match."""
    slices = [slice_(dev(DEV1, {CAP0: "2"}, attributes={"stringAttribute": {"string": "cap"}}),
                     dev(DEV2, multi=False, attributes={"stringAttribute": {"string": "fb"}}))]
    first = {"name": REQ0, "firstAvailable": [
        {"name": SUB0, "deviceClassName": CLASS_A, "allocationMode": "All",
         "selectors": [{"cel": {"expression": _sel('stringAttribute == "cap"')[0]}}],
         "capacity": {"requests": {CAP0: "2"}}},
        {"name": SUB1, "deviceClassName": CLASS_A, "allocationMode": "ExactCount", "count": 1,
         "selectors": [{"cel": {"expression": _sel('stringAttribute == "fb"')[0]}}]}]}
    got = run([claim("claim-0", req(REQ0, "2", selectors=_sel('stringAttribute == "cap"'))),
               claim("claim-1", first, constraints=[{"matchAttribute": f"{DRIVER_A}/stringAttribute"}])],
              slices, features(v), cls=klass(None))
    assert (devices_of(got)[1][0][1] if got else None) == want


def test_empty_capacity_multiple_share_backtrack_keeps_counter_ownership():
    """partitionable-empty-capacity-multiple-share-backtrack-keeps-counter-ownership (v1.36):
    claim-0's share of device-1 reserves the counter; claim-1's req-1 tries device-1 as a second
    share (no counter check), backtracks to device-2 for the constraint with req-2; the rollback
    keeps device-1's (empty) allocatingCapacity entry, so req-3 shares device-1 again without
    charging the counter twice."""
    cons = [{"counterSet": "cs", "counters": {"mem": {"value": "4"}}}]
    slices = _counter_slices(
        dev(DEV1, attributes=_kind("shared", stringAttribute="red"), consumesCounters=cons),
        dev(DEV2, multi=False, attributes=_kind("fallback", stringAttribute="blue")),
        dev("device-3", multi=False, attributes=_kind("gate", stringAttribute="blue")))
    got = run([claim("claim-0", req(REQ0, selectors=_sel('kind == "shared"'))),
               claim("claim-1", req(REQ1, selectors=_sel('kind == "shared" || device.attributes["driver-a"].kind == "fallback"')),
                     req("req-2", selectors=_sel('kind == "gate"')), req("req-3", selectors=_sel('kind == "shared"')),
                     constraints=[{"matchAttribute": f"{DRIVER_A}/stringAttribute", "requests": [REQ1, "req-2"]}])],
              slices, features(P136), cls=klass(None))
    assert devices_of(got) == [[(REQ0, DEV1, None, True)],
                               [(REQ1, DEV2, None, False), ("req-2", "device-3", None, False), ("req-3", DEV1, None, True)]]


@pytest.mark.parametrize("v,want", [(V136, None), (V135, [DEV1, DEV1]),
                                    (resolve("v1.36", {"DRAConsumableCapacity": False,
                                                       "DRADeviceBindingConditions": False}), "stable")])
def test_a_request_takes_a_shared_device_once_in_v1_36(v, want):
    """allocateOne's startLocation (v1.36 incubating/experimental, CHANGES["DRAAllocatorCombinations"]):
    a request for two devices resumes after its first device, so one shared device cannot serve it
    twice; v1.35's search starts over and takes device-1 twice. v1.36 with DRAConsumableCapacity and
    DRADeviceBindingConditions off runs the stable allocator, which has no startLocation (and no
    shares)."""
    if want == "stable":
        assert not Features.from_gates(v).allocator_combinations
        assert Features.from_gates(V136).allocator_combinations
        return
    two = req(REQ0)
    two["exactly"]["count"] = 2
    got = run([claim("claim-0", two)], [slice_(dev(DEV1))], features(v))
    assert ([d[1] for d in devices_of(got)[0]] if got else None) == want


def test_run_json_claims_show_the_capacity_each_share_consumes():
    """run --json's `claims`: a claim holding a share of a device lists what it consumes."""
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-m", "harness", "run", "--json",
                          os.path.join(root, "cases/versions/dra/consumable-capacity-v1.36.yaml")],
                         capture_output=True, text=True, cwd=root)
    claims = json.loads(out.stdout)[0]["claims"]
    shares = {k: c["consumedCapacity"] for k, c in claims.items() if c.get("consumedCapacity")}
    assert shares == {"default/a": {"nic.example.com/node-a/nic-0": {"bandwidth": "3Gi"}},
                      "default/b": {"nic.example.com/node-a/nic-0": {"bandwidth": "1Gi"}},
                      "default/c": {"nic.example.com/node-a/nic-0": {"bandwidth": "6Gi"}}}
    assert not any("consumedCapacity" in c for c in claims.values() if not c["allocated"])
