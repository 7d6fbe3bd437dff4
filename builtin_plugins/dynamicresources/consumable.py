"""Consumable device capacity (KEP-5075, the DRAConsumableCapacity gate) in the structured
allocator and the scheduler's claim tracker.

Ports, per modelled version:

- structured/internal/{experimental,incubating}/consumable_capacity.go: ``CmpRequestOverCapacity``,
  ``calculateConsumedCapacity`` (``fillEmptyRequest``, ``roundUpRange``, ``roundUpValidValues``),
  ``violatesPolicy``, ``GetConsumedCapacityFromRequest``;
- structured/schedulerapi/types.go: ``ConsumedCapacity`` / ``ConsumedCapacityCollection``
  (Insert, Remove), ``AllocatedState``; internal/allocatedstate.go ``IsDeviceAllocated`` (v1.36);
- the allocator's ``allocateDevice`` for a run with the gate on (multiple allocations of a
  device, capacity tracked across the claims being allocated, the shareID and consumedCapacity
  of a result) with each version's rollback: v1.34.9 and v1.35.6 run "experimental", v1.36.3
  "incubating" (``rollbackDevice``);
- constraint.go ``distinctAttributeConstraint``;
- pkg/scheduler/framework/plugins/dynamicresources: ``foreachAllocatedDevice`` with
  ``enabledConsumableCapacity`` and ``claimTracker.GatherAllocatedState``.

Share IDs: upstream's GenerateShareID is ``uuid.NewUUID()`` (random, version 4), drawn in every
successful allocateDevice of every node's search. The harness draws one version-4 UUID per shared
device of the allocation Reserve keeps, from the scheduler's own seeded stream
(``share_id_rng``): the same case and seed give the same IDs, which cannot be those of a real
run.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from harness.api.quantity import Q, QuantityError, parse_q, parse_quantity

from .allocation import AllocationError, DeviceResult, kobj, lookup_attribute

DeviceID = Tuple[str, str, str]
SharedDeviceID = Tuple[str, str, str, str]  # (driver, pool, device, shareID)
Capacity = Dict[str, Fraction]  # ConsumedCapacity: capacity name -> quantity


class CapacityError(Exception):
    """An error of CmpRequestOverCapacity ("some requested capacity has not been defined"): the
    allocator skips the device."""


def _value(q: Q) -> int:
    """Quantity.Value(): rounded up to an integer."""
    return -((-q.value.numerator) // q.value.denominator)


# ---- consumable_capacity.go -----------------------------------------------------------------------

def _requests(capacity_requirements: Optional[Mapping[str, Any]]) -> Optional[Mapping[str, Any]]:
    if not capacity_requirements:
        return None
    return capacity_requirements.get("requests")


def calculate_consumed_capacity(requested: Optional[Q], cap: Mapping[str, Any]) -> Q:
    """calculateConsumedCapacity: the default (fillEmptyRequest) or the device's whole value when
    nothing is requested; otherwise the request rounded up by the policy's validRange (min and
    step, roundUpRange) or validValues (roundUpValidValues)."""
    policy = cap.get("requestPolicy")
    if requested is None:
        if policy and policy.get("default") is not None:
            return parse_q(policy["default"])
        return parse_q(cap.get("value", 0))
    if not policy:
        return requested
    rng = policy.get("validRange")
    if rng is not None and rng.get("min") is not None:
        return round_up_range(requested, rng)
    if policy.get("validValues") is not None:
        return round_up_valid_values(requested, policy["validValues"])
    return requested


def round_up_range(requested: Q, valid_range: Mapping[str, Any]) -> Q:
    """roundUpRange: below min -> min; with a step, min + step * ceil((requested - min) / step)
    on Value()s (a BinarySI quantity); without one, the request."""
    lo = parse_q(valid_range["min"])
    if requested.value < lo.value:
        return lo
    if valid_range.get("step") is None:
        return requested
    step = _value(parse_q(valid_range["step"]))
    added = _value(requested) - _value(lo)
    n, mod = _go_divmod(added, step)
    if mod != 0:
        n += 1
    return Q(Fraction(_value(lo) + step * n), "BinarySI")


def _go_divmod(a: int, b: int) -> Tuple[int, int]:
    """Go's truncated integer division and remainder."""
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return q, a - b * q


def round_up_valid_values(requested: Q, valid_values: List[Any]) -> Q:
    """roundUpValidValues: the first valid value at least the request, else the request."""
    for raw in valid_values:
        v = parse_q(raw)
        if requested.value <= v.value:
            return v
    return requested


def violates_policy(val: Q, policy: Optional[Mapping[str, Any]]) -> bool:
    """violatesPolicy: the default never violates; a validRange's max and step; validValues."""
    if not policy:
        return False
    if policy.get("default") is not None and val.value == parse_q(policy["default"]).value:
        return False
    rng = policy.get("validRange")
    if rng is not None:
        if rng.get("max") is not None and val.value > parse_q(rng["max"]).value:
            return True
        if rng.get("step") is not None:
            step = _value(parse_q(rng["step"]))
            lo = _value(parse_q(rng.get("min", 0)))
            if _go_divmod(_value(val) - lo, step)[1] != 0:
                return True
        return False
    values = policy.get("validValues") or []
    if values:
        return not any(val.value == parse_q(v).value for v in values)
    return False


def cmp_request_over_capacity(current: Mapping[str, Fraction], capacity_requirements: Optional[Mapping[str, Any]],
                              capacity: Mapping[str, Any], allocating: Optional[Mapping[str, Fraction]]) -> bool:
    """CmpRequestOverCapacity: whether the request fits in each capacity of the device next to
    what is allocated (current) and being allocated in this Allocate (allocating), its consumed
    value within the requestPolicy. CapacityError when it names a capacity the device lacks."""
    reqs = _requests(capacity_requirements)
    if reqs:
        for name in reqs:
            if name not in capacity:
                raise CapacityError("some requested capacity has not been defined")
    for name, cap in capacity.items():
        cap = cap or {}
        requested = parse_q(reqs[name]) if reqs and name in reqs else None
        consumed = calculate_consumed_capacity(requested, cap)
        if violates_policy(consumed, cap.get("requestPolicy")):
            return False
        total = current.get(name, Fraction(0)) + consumed.value
        if allocating and name in allocating:
            total += allocating[name]
        if total > parse_quantity(cap.get("value", 0)):
            return False
    return True


def consumed_capacity_from_request(capacity_requirements: Optional[Mapping[str, Any]],
                                   capacity: Mapping[str, Any]) -> Dict[str, Q]:
    """GetConsumedCapacityFromRequest: per capacity of the device, what the request consumes."""
    reqs = _requests(capacity_requirements)
    out: Dict[str, Q] = {}
    for name, cap in capacity.items():
        requested = parse_q(reqs[name]) if reqs and name in reqs else None
        out[name] = calculate_consumed_capacity(requested, cap or {})
    return out


# ---- schedulerapi: ConsumedCapacityCollection, AllocatedState -----------------------------------

def collection_insert(coll: Dict[DeviceID, Capacity], did: DeviceID, consumed: Mapping[str, Any]) -> None:
    """ConsumedCapacityCollection.Insert."""
    cur = coll.get(did)
    if cur is None:
        coll[did] = {n: _fraction(q) for n, q in consumed.items()}
        return
    for n, q in consumed.items():
        cur[n] = cur.get(n, Fraction(0)) + _fraction(q)


def collection_remove(coll: Dict[DeviceID, Capacity], did: DeviceID, consumed: Mapping[str, Any]) -> None:
    """ConsumedCapacityCollection.Remove: subtract; drop the entry once every value is zero."""
    cur = coll.get(did)
    if cur is None:
        return
    for n, q in consumed.items():
        if n in cur:
            cur[n] -= _fraction(q)
    if all(v == 0 for v in cur.values()):
        del coll[did]


def _fraction(q: Any) -> Fraction:
    if isinstance(q, Q):
        return q.value
    if isinstance(q, Fraction):
        return q
    return parse_quantity(q)


@dataclass
class AllocatedState:
    """structured.AllocatedState: devices allocated whole, shares of devices allocated several
    times, and the capacity those shares consume per device."""

    allocated_devices: Set[DeviceID] = field(default_factory=set)
    shared_device_ids: Set[SharedDeviceID] = field(default_factory=set)
    aggregated_capacity: Dict[DeviceID, Capacity] = field(default_factory=dict)

    def counted_for_counters(self, shared_count: bool) -> Set[DeviceID]:
        """The devices whose counters checkAvailableCounters takes as consumed: v1.36's
        IsDeviceAllocated (whole, shared, or with consumed capacity); before, AllocatedDevices."""
        if not shared_count or (not self.shared_device_ids and not self.aggregated_capacity):
            return self.allocated_devices  # (read only: the same set serves)
        return (self.allocated_devices | {s[:3] for s in self.shared_device_ids}
                | set(self.aggregated_capacity))


def split_allocation(allocation: Optional[Mapping[str, Any]], consumable: bool):
    """foreachAllocatedDevice: (dedicated device IDs, shared device IDs, (device, consumed
    capacity) pairs) of an allocation; admin-access results skipped; with the gate off every
    device is dedicated."""
    dedicated: Set[DeviceID] = set()
    shared: Set[SharedDeviceID] = set()
    caps: List[Tuple[DeviceID, Mapping[str, Any]]] = []
    if not allocation:
        return dedicated, shared, caps
    for r in ((allocation.get("devices") or {}).get("results") or []):
        if r.get("adminAccess"):
            continue
        did = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
        if consumable and r.get("shareID") is not None:
            shared.add(did + (str(r["shareID"]),))
            if r.get("consumedCapacity") is not None:
                caps.append((did, r["consumedCapacity"]))
            continue
        dedicated.add(did)
    return dedicated, shared, caps


def gather_allocated_state(allocations: Iterable[Optional[Mapping[str, Any]]],
                           in_flight: Iterable[Optional[Mapping[str, Any]]], shared_ids_of_cache: bool) -> AllocatedState:
    """claimTracker.GatherAllocatedState with DRAConsumableCapacity on: the allocated claims'
    devices (the informer's allocatedDevices) plus the in-flight allocations. v1.34/v1.35 take
    shared device IDs from the in-flight claims only (allocatedDevices has no GetSharedDeviceIDs
    before v1.36)."""
    state = AllocatedState()
    for alloc in allocations:
        d, s, caps = split_allocation(alloc, True)
        state.allocated_devices |= d
        if shared_ids_of_cache:
            state.shared_device_ids |= s
        for did, c in caps:
            collection_insert(state.aggregated_capacity, did, c)
    for alloc in in_flight:
        d, s, caps = split_allocation(alloc, True)
        state.allocated_devices |= d
        state.shared_device_ids |= s
        for did, c in caps:
            collection_insert(state.aggregated_capacity, did, c)
    return state


def new_share_id(rng: random.Random) -> str:
    """GenerateShareID (uuid.NewUUID, a random version-4 UUID) on a seeded stream."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


# ---- constraint.go: distinctAttribute ------------------------------------------------------------

def constraint_applies(request_names: Set[str], request: str, sub: str) -> bool:
    """Does a match/distinct attribute constraint cover this request (its subrequest `sub`, if
    any)? Every request when it names none; else the request's name, or `request/sub`. Shared by
    MatchAttributeConstraint (allocator.py) and DistinctAttributeConstraint."""
    if not request_names or request in request_names:
        return True
    return bool(sub) and f"{request}/{sub}" in request_names


class DistinctAttributeConstraint:
    """distinctAttributeConstraint: each device's attribute must differ from those recorded, one
    per request name (a request's later device replaces its earlier one, and removing a device
    forgets the request's entry, as upstream). v1.34.9 compares the values' pointers: only the
    same device (a device allocated twice) counts as a duplicate."""

    def __init__(self, request_names: List[str], attribute_name: str, by_value: bool = True):
        self.request_names = set(request_names)
        self.attribute_name = attribute_name
        self.attributes: Dict[str, Tuple[Mapping[str, Any], DeviceID]] = {}
        self.num_devices = 0
        self.by_value = by_value

    def add(self, request: str, sub: str, device, device_id: DeviceID) -> bool:
        if not constraint_applies(self.request_names, request, sub):
            return True
        attr = lookup_attribute(device, device_id, self.attribute_name)
        if attr is None:
            return False
        if self.num_devices == 0:
            self.attributes[request] = (attr, device_id)
            self.num_devices = 1
            return True
        if not self._distinct(attr, device_id):
            return False
        self.attributes[request] = (attr, device_id)
        self.num_devices += 1
        return True

    def _distinct(self, attr: Mapping[str, Any], device_id: DeviceID) -> bool:
        """matchesAttribute."""
        for other, other_id in self.attributes.values():
            for kind in ("string", "int", "bool", "version"):
                if attr.get(kind) is not None:
                    if other.get(kind) is not None and (
                            attr[kind] == other[kind] if self.by_value else device_id == other_id):
                        return False
                    break
            else:
                return False  # unknown value type
        return True

    def remove(self, request: str, sub: str, device, device_id: DeviceID) -> None:
        if not constraint_applies(self.request_names, request, sub):
            return
        self.attributes.pop(request, None)
        self.num_devices -= 1


# ---- the allocator with the gate on --------------------------------------------------------------

def capacity_fits(alloc, request, did: DeviceID, dev: Mapping[str, Any]) -> bool:
    """allocator.CmpRequestOverCapacity: the device's capacity left for this request next to the
    allocated claims (AggregatedCapacity) and this Allocate's earlier shares (allocatingCapacity);
    an error (a capacity the device lacks) skips the device."""
    state: AllocatedState = alloc.a.allocated_state
    try:
        return cmp_request_over_capacity(state.aggregated_capacity.get(did) or {}, request.spec.get("capacity"),
                                         dev.get("capacity") or {}, alloc.allocating_capacity.get(did))
    except (CapacityError, QuantityError):
        return False


def device_capacity_in_use(alloc, did: DeviceID) -> bool:
    """deviceCapacityInUse."""
    return did in alloc.a.allocated_state.aggregated_capacity or did in alloc.allocating_capacity


def allocate_device(alloc, r, did: DeviceID, dev, s, must: bool, pool=None):
    """allocateDevice with DRAConsumableCapacity on: (allocated, rollback).

    A device with allowMultipleAllocations is not marked in use; its counters are checked for the
    first share only (v1.35 on, skipCounterCheck); the request's capacity is checked again and
    its consumption added to allocatingCapacity; the result gets a share and consumedCapacity.
    v1.34.9 checks the capacity of ``slice.devices[r.deviceIndex]`` here (the request's device
    counter used as the slice index), not of the candidate. Rejections and backtracking undo what
    each version undoes: v1.36 everything (rollbackDevice, keeping an earlier share's empty
    allocatingCapacity entry); v1.34/v1.35 leave a rejected device's counters (and, after a
    failed capacity check, its constraints) in place, and never give back a shared device's
    counters or an empty consumed capacity."""
    f = alloc.features
    ci, ri, si, di = r
    claim = alloc.claims[ci]
    rd = alloc.request_data[(ci, ri, si)]
    request = rd.request
    multi = bool(dev.get("allowMultipleAllocations"))
    if not multi and request.admin_access and ci in alloc.allocating_devices.get(did, ()):
        return False, None
    if not request.admin_access and alloc.device_in_use(did):
        return False, None
    consumes = dev.get("consumesCounters") or []
    if consumes and not f.partitionable_devices:
        return False, None
    skip_counters = f.shared_device_skips_counter_check and multi and device_capacity_in_use(alloc, did)
    reserved = False
    if not skip_counters and consumes:
        if not alloc.check_available_counters(did, dev, s, pool):
            return False, None
        reserved = True
    if rd.parent is None:
        base, sub = request.name, ""
    else:
        base, sub = rd.parent.name, request.name
    cons = alloc.constraints[ci]
    v136 = f.rollback_counters
    st = {"added": 0, "marked": False, "cap": None, "existed": False, "result": False,
          "prev": len(alloc.result[ci])}

    def rollback():
        """rollbackDevice (v1.36)."""
        if st["result"]:
            del alloc.result[ci][st["prev"]:]
        if st["cap"] is not None:
            collection_remove(alloc.allocating_capacity, did, st["cap"])
            if st["existed"] and did not in alloc.allocating_capacity:
                alloc.allocating_capacity[did] = {}
        if st["marked"]:
            alloc.allocating_devices[did].discard(ci)
        for i in range(st["added"] - 1, -1, -1):
            cons[i].remove(base, sub, dev, did)
        if reserved:
            alloc.deallocate_counters(dev, s, pool)

    if f.device_taints and alloc.taint_prevents_allocation(dev, request):
        if v136:
            rollback()
        return False, None
    for i, c in enumerate(cons):
        if not c.add(base, sub, dev, did):
            if v136:
                rollback()
            if must:
                raise AllocationError(f"claim {kobj(claim)}, request {request.name}: cannot add device "
                                      f"{did[0]}/{did[1]}/{did[2]} because a claim constraint would not be satisfied")
            if not v136:
                for e in range(i):
                    cons[e].remove(base, sub, dev, did)
            return False, None
        st["added"] += 1
    if not multi:
        alloc.allocating_devices.setdefault(did, set()).add(ci)
        st["marked"] = True
    check_id, check_dev = did, dev
    if not f.capacity_check_own_device:
        devices = s.raw["spec"].get("devices") or []
        if di >= len(devices):
            raise AllocationError(f"runtime error: index out of range [{di}] with length {len(devices)} "
                                  f"(kube-scheduler v1.34 panics here: allocateDevice checks the capacity "
                                  f"of the slice's device at the request's device index)")
        check_dev = devices[di]
        check_id = (did[0], did[1], check_dev.get("name", ""))
    if not capacity_fits(alloc, request, check_id, check_dev):
        if v136:
            rollback()
        return False, None
    consumed: Dict[str, Q] = {}
    if multi:
        consumed = consumed_capacity_from_request(request.spec.get("capacity"), dev.get("capacity") or {})
        st["existed"] = did in alloc.allocating_capacity
        collection_insert(alloc.allocating_capacity, did, consumed)
        st["cap"] = consumed
    res = DeviceResult(request.name, rd.parent.name if rd.parent else "", did, dev, s,
                       True if request.admin_access else None)
    res.shared = multi
    res.consumed_capacity = consumed or None
    alloc.result[ci].append(res)
    st["result"] = True
    if v136:
        return True, rollback

    def undo():
        """The v1.34/v1.35 deallocate closure."""
        for c in cons:
            c.remove(base, sub, dev, did)
        alloc.allocating_devices.get(did, set()).discard(ci)
        if multi:
            if res.consumed_capacity is not None:
                collection_remove(alloc.allocating_capacity, did, res.consumed_capacity)
        elif f.partitionable_devices and consumes:
            alloc.deallocate_counters(dev, s, pool)
        del alloc.result[ci][st["prev"]:]
    return True, undo


def result_fields(d, share_ids: Optional[Callable[[], str]]) -> Dict[str, Any]:
    """The DeviceRequestAllocationResult fields of a share: shareID (when the caller draws them)
    and consumedCapacity (Quantity strings)."""
    out: Dict[str, Any] = {}
    if getattr(d, "shared", False) and share_ids is not None:
        out["shareID"] = share_ids()
    cc = getattr(d, "consumed_capacity", None)
    if cc:
        out["consumedCapacity"] = {n: str(q) for n, q in cc.items()}
    return out


def capacity_requests_refused(claim, req: Mapping[str, Any]) -> Optional[str]:
    """Allocate's check with the gate off: a request or subrequest with capacity requests."""
    if (req.get("exactly") or {}).get("capacity") is not None:
        return (f"claim {kobj(claim)}, request {req.get('name', '')}: has capacity requests, but the "
                f"DRAConsumableCapacity feature is disabled")
    for sub in req.get("firstAvailable") or []:
        if sub.get("capacity") is not None:
            return (f"claim {kobj(claim)}, subrequest {sub.get('name', '')}: has capacity requests, but the "
                    f"DRAConsumableCapacity feature is disabled")
    return None
