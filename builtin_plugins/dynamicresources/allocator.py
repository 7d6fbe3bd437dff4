"""The structured allocator (dynamic-resource-allocation/structured) as each modelled
kube-scheduler version runs it.

allocator.go's NewAllocator picks the first implementation (stable, incubating, experimental)
whose supported features cover the enabled ones (:meth:`Features.implementation`): v1.34's
default gates run "experimental", v1.35's and v1.36's "incubating". The implementations share
their search; this module ports it once, with the version differences (pool gathering, invalid
pools, taint effects, counter rollback) switched by :class:`Features`, which the plugin builds
from the run's gates and ``versions.CHANGES``. Partitionable devices, device taints and binding
conditions follow their gates; consumable capacity (DRAConsumableCapacity) lives in
consumable.py (allocateDevice, capacity checks, distinctAttribute), called from here.
It mirrors one upstream file, allocator_experimental.go (about 2000 lines), and is kept whole
like it.

Objects are the raw manifests (dicts) of the simulated API server.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple

from harness.api.nodeaffinity import NodeSelector, NodeSelectorError

from . import consumable
from .allocation import AllocationError, DeviceID, DeviceResult, kobj, lookup_attribute
from harness.api.dra_cel import CELCache, CELRuntimeError, device_variable

ALLOCATION_RESULTS_MAX_SIZE = 32  # resourceapi.AllocationResultsMaxSize

class FailedOnNode(Exception):
    """An error wrapping ErrFailedAllocationOnNode (v1.35 on): the node is Unschedulable with
    this message, other nodes may still fit."""


class _Stop(Exception):
    """errStop."""


class _MaxSizeExceeded(Exception):
    """errAllocationResultMaxSizeExceeded."""


@dataclass
class Features:
    """structured.Features (AllocatorFeatures in dynamicresources.go); the defaults are v1.34's
    default gates. Build one for a run with :meth:`from_gates`."""

    admin_access: bool = True       # DRAAdminAccess
    prioritized_list: bool = True   # DRAPrioritizedList
    device_status: bool = True      # DRAResourceClaimDeviceStatus
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding: bool = False
    consumable_capacity: bool = False
    # ungated v1.35 changes (versions.CHANGES["DRAAllocatorSkipsInvalidPools"]): incomplete and
    # invalid pools skipped, results carry the request's tolerations
    skip_invalid_pools: bool = False
    # v1.35: GatherPools counts a pool's slices for all nodes, counters live in their own
    # slices and are per pool (CHANGES["DRAPoolsAcrossNodes"]); only NoSchedule/NoExecute
    # device taints prevent allocation (CHANGES["DRATaintEffectsKnownOnly"])
    pools_across_nodes: bool = False
    known_taint_effects_only: bool = False
    # v1.36: a pool's slices by name, pools with binding conditions last
    # (CHANGES["DRAPoolsSortedByName"]); a rejected device gives its counters back
    # (CHANGES["DRARollbackCountersOnReject"])
    pools_sorted_by_name: bool = False
    rollback_counters: bool = False
    # consumable capacity (consumable.py): v1.35 skips the counter check of a shared device
    # already in use (CHANGES["DRASharedDeviceSkipsCounterCheck"]), allocateDevice checks the
    # candidate's own capacity (CHANGES["DRACapacityCheckOwnDevice"]), distinctAttribute compares
    # values (CHANGES["DRADistinctAttributeByValue"]); v1.36 counts shared devices' counters as
    # consumed (CHANGES["DRASharedDevicesConsumeCounters"])
    shared_device_skips_counter_check: bool = False
    capacity_check_own_device: bool = False
    distinct_by_value: bool = False
    shared_devices_consume_counters: bool = False
    # v1.36's incubating and experimental allocators resume a request's search after its
    # previous device (startLocation, CHANGES["DRAAllocatorCombinations"]); stable does not
    allocator_combinations: bool = False

    @classmethod
    def from_gates(cls, gates) -> "Features":
        """AllocatorFeatures(fts) for a run's :class:`harness.versions.Features`."""
        f = cls(admin_access=gates.enabled("DRAAdminAccess"),
                prioritized_list=gates.enabled("DRAPrioritizedList"),
                device_status=gates.enabled("DRAResourceClaimDeviceStatus"),
                partitionable_devices=gates.enabled("DRAPartitionableDevices"),
                device_taints=gates.enabled("DRADeviceTaints"),
                device_binding=gates.enabled("DRADeviceBindingConditions"),
                consumable_capacity=gates.enabled("DRAConsumableCapacity"),
                skip_invalid_pools=gates.has("DRAAllocatorSkipsInvalidPools"),
                pools_across_nodes=gates.has("DRAPoolsAcrossNodes"),
                known_taint_effects_only=gates.has("DRATaintEffectsKnownOnly"),
                pools_sorted_by_name=gates.has("DRAPoolsSortedByName"),
                rollback_counters=gates.has("DRARollbackCountersOnReject"),
                shared_device_skips_counter_check=gates.has("DRASharedDeviceSkipsCounterCheck"),
                capacity_check_own_device=gates.has("DRACapacityCheckOwnDevice"),
                distinct_by_value=gates.has("DRADistinctAttributeByValue"),
                shared_devices_consume_counters=gates.has("DRASharedDevicesConsumeCounters"))
        f.allocator_combinations = (gates.has("DRAAllocatorCombinations")
                                    and f.implementation(gates.version.minor) != "stable")
        return f

    @property
    def binding_and_status(self) -> bool:
        """DeviceBindingAndStatus (v1.35): both gates; v1.34 counts them apart."""
        return self.device_binding and self.device_status

    def implementation(self, minor: int) -> str:
        """structured.NewAllocator: the first of stable, incubating, experimental whose
        SupportedFeatures cover the enabled ones (allocator.go's availableAllocators).

        v1.34: stable supports none, incubating AdminAccess, PrioritizedList,
        PartitionableDevices, DeviceTaints; DeviceStatus (on by default) needs experimental.
        v1.35 folds DeviceBinding and DeviceStatus into DeviceBindingAndStatus, so the default
        gates pick incubating. v1.36: stable gains incubating's set, incubating experimental's
        (all but ListTypeAttributes, which the harness does not model)."""
        on = {"admin": self.admin_access, "list": self.prioritized_list,
              "partition": self.partitionable_devices, "taints": self.device_taints,
              "capacity": self.consumable_capacity}
        if minor <= 34:
            on["binding"], on["status"] = self.device_binding, self.device_status
        else:
            on["binding"] = self.binding_and_status
        enabled = {k for k, v in on.items() if v}
        basic = {"admin", "list", "partition", "taints"}
        if minor >= 36:
            impls = [("stable", basic), ("incubating", basic | {"binding", "capacity"})]
        else:
            impls = [("stable", set()), ("incubating", basic)]
        for name, supported in impls:
            if enabled <= supported:
                return name
        return "experimental"


# ---- pools (pools_experimental.go) ------------------------------------------------------------

def node_matches(node, node_name: str, all_nodes: bool, node_selector) -> bool:
    """nodeMatches."""
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        try:
            sel = NodeSelector(node_selector)
        except NodeSelectorError as e:
            raise AllocationError(f"failed to parse node selector: {e}")
        return sel.match(node)
    return False


@dataclass
class Pool:
    driver: str
    pool: str
    slices: List[Any] = field(default_factory=list)  # device slices targeting the node (KubeObjects)
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""
    # v1.35 on: the pool's other device slices (their devices consume the pool's counters) and
    # its counter sets (name -> counter -> available quantity) from the sharedCounters slices
    not_targeting: List[Any] = field(default_factory=list)
    counter_sets: Optional[Dict[str, Dict[str, Fraction]]] = None

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.pool}"


def _spec(s) -> Mapping[str, Any]:
    return s.raw.get("spec") or {}


def _has_binding_conditions(s) -> bool:
    return any(d.get("bindingConditions") for d in _spec(s).get("devices") or [])


def _device_matches_node(node, s) -> bool:
    """A perDeviceNodeSelection slice is relevant when one of its devices is."""
    for d in _spec(s).get("devices") or []:
        try:
            if node_matches(node, d.get("nodeName") or "", bool(d.get("allNodes")), d.get("nodeSelector")):
                return True
        except AllocationError as e:
            raise AllocationError(f"gather pool information: failed to perform node selection for device "
                                  f"{d.get('name', '')} in slice {s.name}: {e}")
    return False


def gather_pools(slices, node, features: Features, candidates: Optional[List[Any]] = None) -> List[Pool]:
    """GatherPools: the pools with devices available on node, newest generation only.
    `candidates` (optional) is the subset of slices that can match the node, in slice order."""
    if features.pools_across_nodes:
        return _gather_pools_v135(slices, node, features, candidates)
    pools: Dict[Tuple[str, str], Pool] = {}
    with_binding: List[Any] = []
    for s in (slices if candidates is None else candidates):
        spec = _spec(s)
        if not features.partitionable_devices and spec.get("perDeviceNodeSelection") is not None:
            continue
        node_name, all_nodes, sel = spec.get("nodeName") or "", bool(spec.get("allNodes")), spec.get("nodeSelector")
        if node_name or all_nodes or sel is not None:
            try:
                match = node_matches(node, node_name, all_nodes, sel)
            except AllocationError as e:
                raise AllocationError(f"gather pool information: failed to perform node selection for slice {s.name}: {e}")
        elif spec.get("perDeviceNodeSelection"):
            match = _device_matches_node(node, s)
        else:
            continue
        if match:
            # slices with binding conditions go after the others (preferring simpler devices)
            if _has_binding_conditions(s):
                with_binding.append(s)
            else:
                _add_slice(pools, s)
    for s in with_binding:
        _add_slice(pools, s)
    result = []
    # Go ranges over a map here (random order); the harness takes the pools in (driver, pool)
    # order so that a run repeats.
    for _, pool in sorted(pools.items()):
        first = pool.slices[0].raw["spec"].get("pool") or {}
        pool.is_incomplete = len(pool.slices) != int(first.get("resourceSliceCount") or 0)
        pool.is_invalid, pool.invalid_reason = _pool_is_invalid(pool)
        result.append(pool)
    return result


def _gather_pools_v135(slices, node, features: Features, candidates) -> List[Pool]:
    """GatherPools from v1.35 (pools_incubating.go): slices with sharedCounters always belong,
    a pool's completeness counts the slices for other nodes too (checkSlicesInPool), a newer
    generation elsewhere makes the pool obsolete; v1.36 sorts a pool's slices by name and puts
    pools with binding conditions last."""
    groups: Dict[Tuple[str, str], List[Any]] = {}
    for s in (slices if candidates is None else candidates):
        spec = _spec(s)
        counters = bool(spec.get("sharedCounters"))
        if not features.partitionable_devices and (spec.get("perDeviceNodeSelection") is not None or counters):
            continue
        node_name, all_nodes, sel = spec.get("nodeName") or "", bool(spec.get("allNodes")), spec.get("nodeSelector")
        if counters:
            relevant = True
        elif node_name or all_nodes or sel is not None:
            try:
                relevant = node_matches(node, node_name, all_nodes, sel)
            except AllocationError as e:
                raise AllocationError(f"gather pool information: failed to perform node selection for slice {s.name}: {e}")
        elif spec.get("perDeviceNodeSelection"):
            relevant = _device_matches_node(node, s)
        else:
            continue  # some future extension
        if relevant:
            _add_slice_to(groups, s)
    result: List[Pool] = []
    with_binding: List[Pool] = []
    for key in sorted(groups):  # v1.35 ranges over a map; v1.36 sorts by pool ID
        group = groups[key]
        p = _spec(group[0]).get("pool") or {}
        count, gen = int(p.get("resourceSliceCount") or 0), int(p.get("generation") or 0)
        all_for_pool = None
        if len(group) != count:
            obsolete, all_for_pool = _check_slices_in_pool(slices, key, gen)
            if obsolete:
                continue
            if len(all_for_pool) != count:
                result.append(Pool(key[0], key[1], is_incomplete=True))
                continue
        pool = _build_pool(key, group, features, all_for_pool)
        if features.pools_sorted_by_name and any(_has_binding_conditions(x) for x in pool.slices):
            with_binding.append(pool)
        else:
            result.append(pool)
    return result + with_binding


def _add_slice_to(groups: Dict[Tuple[str, str], List[Any]], s) -> None:
    """addSlice (v1.35): the newest generation's slices of each pool."""
    spec = _spec(s)
    p = spec.get("pool") or {}
    key = (spec.get("driver", ""), p.get("name", ""))
    cur = groups.get(key)
    gen = int(p.get("generation") or 0)
    if cur is None:
        groups[key] = [s]
        return
    cur_gen = int((_spec(cur[0]).get("pool") or {}).get("generation") or 0)
    if gen < cur_gen:
        return
    if gen > cur_gen:
        groups[key] = [s]
        return
    cur.append(s)


def _check_slices_in_pool(slices, key: Tuple[str, str], generation: int) -> Tuple[bool, List[Any]]:
    """checkSlicesInPool: (obsolete, all slices of the pool with that generation)."""
    out = []
    for s in slices:
        spec = _spec(s)
        p = spec.get("pool") or {}
        if spec.get("driver", "") != key[0] or p.get("name", "") != key[1]:
            continue
        g = int(p.get("generation") or 0)
        if g == generation:
            out.append(s)
        elif g > generation:
            return True, []
    return False, out


def _build_pool(key: Tuple[str, str], group: List[Any], features: Features, all_for_pool) -> Pool:
    """buildPool: device names unique, counter sets unique, consumed counters known."""
    if features.pools_sorted_by_name:
        group = sorted(group, key=lambda x: x.name)
    if features.partitionable_devices:
        counter_slices = [x for x in group if _spec(x).get("sharedCounters")]
        device_slices = [x for x in group if not _spec(x).get("sharedCounters")]
    else:
        counter_slices, device_slices = [], list(group)
    seen: Set[str] = set()
    for x in device_slices:
        for d in _spec(x).get("devices") or []:
            if d.get("name") in seen:
                return Pool(key[0], key[1], is_invalid=True, invalid_reason=f"duplicate device name {d.get('name')}")
            seen.add(d.get("name"))
    if not features.partitionable_devices:
        return Pool(key[0], key[1], device_slices)
    counter_sets: Dict[str, Dict[str, Fraction]] = {}
    for x in counter_slices:
        for cs in _spec(x).get("sharedCounters") or []:
            if cs.get("name") in counter_sets:
                return Pool(key[0], key[1], is_invalid=True,
                            invalid_reason=f"duplicate counter set name {cs.get('name')}")
            counter_sets[cs.get("name")] = {n: _quantity(c) for n, c in (cs.get("counters") or {}).items()}
    problem = _counter_consumption_problem(counter_sets, group)
    if problem:
        return Pool(key[0], key[1], is_invalid=True, invalid_reason=problem)
    if all_for_pool is None or len(group) == len(all_for_pool):
        return Pool(key[0], key[1], device_slices, counter_sets=counter_sets)
    names = {x.name for x in group}
    others = [x for x in all_for_pool if x.name not in names]
    problem = _counter_consumption_problem(counter_sets, others)
    if problem:
        return Pool(key[0], key[1], is_invalid=True, invalid_reason=problem)
    return Pool(key[0], key[1], device_slices, not_targeting=others, counter_sets=counter_sets)


def _quantity(c: Any) -> Fraction:
    from harness.api.quantity import parse_quantity
    return parse_quantity((c or {}).get("value", 0))


def _counter_consumption_problem(counter_sets: Mapping[str, Mapping[str, Any]], group: List[Any]) -> str:
    """validateDeviceCounterConsumption."""
    for x in group:
        for d in _spec(x).get("devices") or []:
            for use in d.get("consumesCounters") or []:
                cs = counter_sets.get(use.get("counterSet"))
                if cs is None:
                    return f"counter set {use.get('counterSet')} not found"
                for name in (use.get("counters") or {}):
                    if name not in cs:
                        return f"counter {name} not found in counter set {use.get('counterSet')}"
    return ""


def _add_slice(pools: Dict[Tuple[str, str], Pool], s) -> None:
    """addSlice."""
    spec = s.raw["spec"]
    p = spec.get("pool") or {}
    key = (spec.get("driver", ""), p.get("name", ""))
    pool = pools.get(key)
    if pool is None:
        pools[key] = Pool(key[0], key[1], [s])
        return
    gen = int(p.get("generation") or 0)
    cur = int((pool.slices[0].raw["spec"].get("pool") or {}).get("generation") or 0)
    if gen < cur:
        return
    if gen > cur:
        pool.slices = []
    pool.slices.append(s)


def _pool_is_invalid(pool: Pool) -> Tuple[bool, str]:
    """poolIsInvalid."""
    seen: Set[str] = set()
    for s in pool.slices:
        for d in s.raw["spec"].get("devices") or []:
            if d.get("name") in seen:
                return True, f"duplicate device name {d.get('name')}"
            seen.add(d.get("name"))
    return False, ""


# ---- requests ---------------------------------------------------------------------------------

class _Request:
    """requestAccessor over an exact request or a subrequest (fields read once)."""

    __slots__ = ("name", "spec", "is_sub", "device_class_name", "allocation_mode", "count",
                 "admin_access", "has_admin_access", "selectors")

    def __init__(self, name: str, spec: Mapping[str, Any], is_sub: bool):
        self.name = name
        self.spec = spec  # the ExactDeviceRequest or DeviceSubRequest
        self.is_sub = is_sub
        self.device_class_name: str = spec.get("deviceClassName") or ""
        self.allocation_mode: str = spec.get("allocationMode") or "ExactCount"
        self.count: int = int(spec.get("count") or 0)
        self.admin_access: bool = False if is_sub else bool(spec.get("adminAccess"))
        self.has_admin_access: bool = False if is_sub else spec.get("adminAccess") is not None
        self.selectors: List[Mapping[str, Any]] = spec.get("selectors") or []


@dataclass
class _RequestData:
    request: _Request
    parent: Optional[_Request]
    device_class: Optional[Mapping[str, Any]] = None
    num_devices: int = 0
    selected_sub_request_index: int = 0
    all_devices: List[Tuple[DeviceID, Mapping[str, Any], Any]] = field(default_factory=list)


# ---- constraints ------------------------------------------------------------------------------

class MatchAttributeConstraint:
    """matchAttributeConstraint: all devices share the attribute's value."""

    def __init__(self, request_names: List[str], attribute_name: str):
        self.request_names = set(request_names)
        self.attribute_name = attribute_name
        self.attribute = None
        self.num_devices = 0

    def add(self, request: str, sub: str, device, device_id: DeviceID) -> bool:
        if not consumable.constraint_applies(self.request_names, request, sub):
            return True
        attr = lookup_attribute(device, device_id, self.attribute_name)
        if attr is None:
            return False
        if self.num_devices == 0:
            self.attribute = attr
            self.num_devices = 1
            return True
        for kind in ("string", "int", "bool", "version"):
            if attr.get(kind) is not None:
                if self.attribute.get(kind) is None or attr[kind] != self.attribute[kind]:
                    return False
                break
        else:
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, sub: str, device, device_id: DeviceID) -> None:
        if not consumable.constraint_applies(self.request_names, request, sub):
            return
        self.num_devices -= 1


# ---- the allocator ----------------------------------------------------------------------------

def index_slices(slices: List[Any]) -> Tuple[Dict[str, List[Tuple[int, Any]]], List[Tuple[int, Any]]]:
    """(slices by spec.nodeName, the other slices), each entry (position in slices, slice)."""
    by_node: Dict[str, List[Tuple[int, Any]]] = {}
    others: List[Tuple[int, Any]] = []
    for i, s in enumerate(slices):
        name = (s.raw.get("spec") or {}).get("nodeName")
        if name:
            by_node.setdefault(name, []).append((i, s))
        else:
            others.append((i, s))
    return by_node, others


class Allocator:
    """experimental.Allocator: set up once per pod (PreFilter), Allocate called per node."""

    def __init__(self, features: Features, allocated_devices: Set[DeviceID],
                 get_class: Callable[[str], Optional[Mapping[str, Any]]], slices: List[Any],
                 cel_cache: CELCache, match_cache: Optional[Dict[Any, Any]] = None,
                 pool_cache: Optional[Dict[Any, List[Pool]]] = None,
                 allocated_state: Optional[consumable.AllocatedState] = None, slice_index=None):
        self.features = features
        self.allocated_devices = allocated_devices
        # AllocatedState (consumable capacity: shares and their consumed capacity); the devices
        # whose counters count as consumed (IsDeviceAllocated from v1.36)
        self.allocated_state = (allocated_state if allocated_state is not None
                                else consumable.AllocatedState(allocated_devices))
        self.counted_devices = self.allocated_state.counted_for_counters(
            features.consumable_capacity and features.shared_devices_consume_counters)
        self.get_class = get_class
        self.slices = slices
        self.cel_cache = cel_cache
        # (expression, slice key, slice resourceVersion, device index) -> match: the CEL
        # outcome for an unchanged device (a harness speed-up; same results).
        self.match_cache = match_cache if match_cache is not None else {}
        self.num_allocate_one_invocations = 0
        # Slices by spec.nodeName, the others (selector, allNodes) apart: GatherPools only
        # ever matches a node's own slices and the others (a speed-up; same result). The
        # caller may pass index_slices(slices) kept from an earlier Allocator.
        self._by_node, self._others = slice_index if slice_index is not None else index_slices(slices)
        # (node name, node resourceVersion) -> its pools; may be shared by Allocators over the
        # same slices (the caller clears it when the slices change).
        self._pools: Dict[Any, List[Pool]] = pool_cache if pool_cache is not None else {}
        self._validated: Dict[Tuple[int, int, int], _RequestData] = {}
        self.available_counters: Dict[str, Dict[str, Dict[str, Fraction]]] = {}

    def pools_for(self, node) -> List[Pool]:
        """GatherPools for node: the slices are fixed for this Allocator's lifetime, so each
        node's pools are gathered once (a speed-up; same result)."""
        key = (node.name, node.resource_version) if node is not None else ("", 0)
        pools = self._pools.get(key)
        if pools is None:
            pools = self._pools[key] = gather_pools(self.slices, node, self.features, self.candidate_slices(node))
        return pools

    def candidate_slices(self, node) -> List[Any]:
        own = self._by_node.get(node.name if node is not None else "", [])
        if not self._others:
            return [s for _, s in own]
        return [s for _, s in sorted(own + self._others, key=lambda e: e[0])]

    def allocate(self, node, claims: List[Mapping[str, Any]]) -> Optional[List[Dict[str, Any]]]:
        """Allocate: one AllocationResult per claim, None when they cannot all be allocated
        on node; AllocationError for invalid input."""
        found = self.allocate_lazy(node, claims)
        return None if found is None else found.results()

    def allocate_lazy(self, node, claims: List[Mapping[str, Any]]) -> Optional["_Allocation"]:
        """Allocate, with the AllocationResults built only when asked for (`results()`): the
        scheduler needs them for the chosen node only."""
        alloc = _Allocation(self, node, claims)
        return alloc if alloc.run() else None


def explain_failure(a: Allocator, node, claims: List[Mapping[str, Any]]) -> List[str]:
    """For `explain` (no upstream counterpart): per request of the claims, how many devices on
    node match its class and selectors and are not allocated, against how many it needs."""
    out: List[str] = []
    try:
        pools = a.pools_for(node)
    except AllocationError as e:
        return [str(e)]
    short = False
    for ci, claim in enumerate(claims):
        alloc = _Allocation(a, node, claims)
        alloc.pools = pools
        for ri, req in enumerate(alloc.requests[ci]):
            subs = req.get("firstAvailable") or []
            entries = ([(f"{req.get('name', '')}/{sub.get('name', '')}", _Request(sub.get("name", ""), sub, True), si)
                        for si, sub in enumerate(subs)] if subs else
                       [(req.get("name", ""), _Request(req.get("name", ""), req.get("exactly") or {}, False), 0)])
            for label, request, si in entries:
                try:
                    rd = alloc._validate_uncached(request, None, (ci, ri, si))
                except AllocationError as e:
                    out.append(f"claim {kobj(claim)}, request {label}: {e}")
                    continue
                free = matching = 0
                for pool in pools:
                    for sl in pool.slices:
                        for di, dev in enumerate(sl.raw["spec"].get("devices") or []):
                            try:
                                ok = alloc.is_selectable((ci, ri, si), rd, sl, di)
                            except AllocationError as e:
                                out.append(f"claim {kobj(claim)}, request {label}: {e}")
                                ok = False
                            if ok:
                                matching += 1
                                if request.admin_access or (pool.driver, pool.pool, dev.get("name", "")) not in a.allocated_devices:
                                    free += 1
                exact = request.allocation_mode == "ExactCount"
                need = rd.num_devices if exact else max(matching, 1)
                if free < need:
                    short = True
                mode = f"{need} device(s)" if exact else "all matching devices (at least 1)"
                out.append(f"claim {kobj(claim)}, request {label}: needs {mode}; {matching} on this node "
                           f"match, {free} of them not allocated")
    if not short:
        out.append("every request has enough devices on its own: constraints (matchAttribute) or "
                   "requests competing for the same devices prevent a full allocation")
    return out


class _Allocation:
    """allocator: the state of one Allocate call."""

    def __init__(self, a: Allocator, node, claims: List[Mapping[str, Any]]):
        self.a = a
        self.features = a.features
        self.node = node
        self.claims = claims
        self.device_matches_request: Dict[Any, bool] = {}
        self.constraints: List[List[MatchAttributeConstraint]] = [[] for _ in claims]
        self.request_data: Dict[Tuple[int, int, int], _RequestData] = {}
        self.result: List[List[DeviceResult]] = [[] for _ in claims]
        self.allocating_devices: Dict[DeviceID, Set[int]] = {}
        self.consumed_counters: Dict[str, Dict[str, Dict[str, Fraction]]] = {}
        self.allocating_capacity: Dict[DeviceID, Dict[str, Fraction]] = {}  # allocatingCapacity
        self.pools: List[Pool] = []
        self.requests = [self._requests(c) for c in claims]

    @staticmethod
    def _requests(claim) -> List[Mapping[str, Any]]:
        return ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []

    def run(self) -> bool:
        self.pools = self.a.pools_for(self.node)
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, req in enumerate(self._requests(claim)):
                subs = req.get("firstAvailable") or []
                if not self.features.prioritized_list and subs:
                    raise AllocationError(f"claim {kobj(claim)}, request {req.get('name')}: has subrequests, "
                                          f"but the DRAPrioritizedList feature is disabled")
                if not self.features.consumable_capacity:
                    refused = consumable.capacity_requests_refused(claim, req)
                    if refused:
                        raise AllocationError(refused)
                if subs:
                    min_req = sys.maxsize
                    parent = _Request(req.get("name", ""), req.get("exactly") or {}, False)
                    for si, sub in enumerate(subs):
                        rd = self._validate(_Request(sub.get("name", ""), sub, True), parent, (ci, ri, si))
                        self.request_data[(ci, ri, si)] = rd
                        min_req = min(min_req, rd.num_devices)
                    min_devices += min_req
                else:
                    rd = self._validate(_Request(req.get("name", ""), req.get("exactly") or {}, False), None, (ci, ri, 0))
                    self.request_data[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(f"claim {kobj(claim)}: number of requested devices {min_devices} "
                                      f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            cons = []
            for i, c in enumerate(((claim.get("spec") or {}).get("devices") or {}).get("constraints") or []):
                if c.get("matchAttribute") is not None:
                    cons.append(MatchAttributeConstraint(c.get("requests") or [], c["matchAttribute"]))
                elif c.get("distinctAttribute") is not None:
                    cons.append(consumable.DistinctAttributeConstraint(
                        c.get("requests") or [], c["distinctAttribute"], self.features.distinct_by_value))
                else:
                    raise AllocationError(f"claim {kobj(claim)}, constraint #{i}: empty constraint "
                                          f"(unsupported constraint type?)")
            self.constraints[ci] = cons
        try:
            done = self.allocate_one((0, 0, 0, 0), False)
        except _Stop:
            return False
        except _MaxSizeExceeded:
            done = False
        if not done and self.features.skip_invalid_pools and any(p.is_invalid for p in self.pools):
            # v1.35: not fatal, allocation on other nodes may proceed (ErrFailedAllocationOnNode)
            raise FailedOnNode("invalid resource pools were encountered")
        return bool(done)

    def results(self, share_ids: Optional[Callable[[], str]] = None) -> List[Dict[str, Any]]:
        """The AllocationResults of a successful run; `share_ids` draws the shareID of each
        shared device (consumable capacity; without it the results have none)."""
        return [self._result(ci, claim, share_ids) for ci, claim in enumerate(self.claims)]

    def _result(self, ci: int, claim, share_ids: Optional[Callable[[], str]] = None) -> Dict[str, Any]:
        results = []
        reqs = self._requests(claim)
        for d in self.result[ci]:
            r = {"request": d.request_name(), "driver": d.id[0], "pool": d.id[1], "device": d.id[2]}
            if d.admin_access is not None:
                r["adminAccess"] = d.admin_access
            if self.features.skip_invalid_pools:
                tolerations = _lookup_request(reqs, d).get("tolerations")
                if tolerations:
                    r["tolerations"] = tolerations
            if self.features.device_binding and self.features.device_status:
                for k in ("bindingConditions", "bindingFailureConditions"):
                    if d.device.get(k):
                        r[k] = list(d.device[k])
            if d.shared or d.consumed_capacity:
                r.update(consumable.result_fields(d, share_ids))
            results.append(r)
        config: List[Dict[str, Any]] = []
        # v1.34.9 on: each class's configs once, naming the requests that use the class
        class_configs: Dict[str, Tuple[int, int]] = {}
        for ri in range(len(reqs)):
            rd = self.request_data[(ci, ri, 0)]
            name = reqs[ri].get("name", "")
            if rd.parent is not None:
                rd = self.request_data[(ci, ri, rd.selected_sub_request_index)]
                name = f"{name}/{rd.request.name}"
            if rd.device_class is None:
                continue
            class_name = (rd.device_class.get("metadata") or {}).get("name", "")
            known = class_configs.get(class_name)
            if known is not None:
                for i in range(*known):
                    config[i]["requests"].append(name)
                continue
            start = len(config)
            for cfg in (rd.device_class.get("spec") or {}).get("config") or []:
                config.append({"source": "FromClass", "requests": [name], **{k: v for k, v in cfg.items()}})
            class_configs[class_name] = (start, len(config))
        for cfg in ((claim.get("spec") or {}).get("devices") or {}).get("config") or []:
            names = cfg.get("requests") or []
            body = {k: v for k, v in cfg.items() if k != "requests"}
            if not names:
                config.append({"source": "FromClaim", **body})
                continue
            for ri, req in enumerate(reqs):
                if req.get("name") in names:
                    config.append({"source": "FromClaim", "requests": names, **body})
                    continue
                rd = self.request_data[(ci, ri, 0)]
                if rd.parent is None:
                    continue
                sub = (req.get("firstAvailable") or [])[rd.selected_sub_request_index]
                if f"{req.get('name')}/{sub.get('name')}" in names:
                    config.append({"source": "FromClaim", "requests": names, **body})
        out: Dict[str, Any] = {"devices": {"results": results}}
        if config:
            out["devices"]["config"] = config
        ns = self._node_selector(self.result[ci])
        if ns is not None:
            out["nodeSelector"] = ns
        return out

    def _node_selector(self, results: List[DeviceResult]) -> Optional[Dict[str, Any]]:
        """createNodeSelector."""
        fields: List[Dict[str, Any]] = []
        exprs: List[Dict[str, Any]] = []
        for d in results:
            spec = d.slice.raw["spec"]
            src = d.device if spec.get("perDeviceNodeSelection") else spec
            if src.get("nodeName") or (d.device.get("bindsToNode") and self.features.device_binding
                                       and self.features.device_status):
                return {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [self.node.name]}]}]}
            sel = src.get("nodeSelector")
            if sel is not None:
                terms = sel.get("nodeSelectorTerms") or []
                if len(terms) == 1:
                    _add_requirements(terms[0].get("matchFields") or [], fields)
                    _add_requirements(terms[0].get("matchExpressions") or [], exprs)
                elif len(terms) > 1:
                    raise AllocationError(f"create NodeSelector for claim: unsupported "
                                          f"ResourceSlice.NodeSelector with {len(terms)} terms")
        if fields or exprs:
            term: Dict[str, Any] = {}
            if exprs:
                term["matchExpressions"] = exprs
            if fields:
                term["matchFields"] = fields
            return {"nodeSelectorTerms": [term]}
        return None

    def _validate(self, request: _Request, parent: Optional[_Request], key: Tuple[int, int, int]) -> _RequestData:
        """validateDeviceRequest. For ExactCount the outcome does not depend on the node: it is
        kept for the Allocator's next calls (a speed-up; same result)."""
        claim = self.claims[key[0]]
        ck = (id(claim), key[1], key[2])
        known = self.a._validated.get(ck)
        if known is not None:
            return _RequestData(request, parent, known.device_class, known.num_devices)
        rd = self._validate_uncached(request, parent, key)
        if request.allocation_mode == "ExactCount":
            self.a._validated[ck] = rd
        return rd

    def _validate_uncached(self, request: _Request, parent: Optional[_Request], key: Tuple[int, int, int]) -> _RequestData:
        claim = self.claims[key[0]]
        rd = _RequestData(request, parent)
        for i, sel in enumerate(request.selectors):
            if not (sel.get("cel") or {}).get("expression"):
                raise AllocationError(f"claim {kobj(claim)}, request {request.name}, selector #{i}: "
                                      f"CEL expression empty (unsupported selector type?)")
        if not self.features.admin_access and request.has_admin_access:
            raise AllocationError(f"claim {kobj(claim)}, request {request.name}: admin access is requested, "
                                  f"but the feature is disabled")
        if not request.device_class_name:
            raise AllocationError(f"claim {kobj(claim)}, request {request.name}: missing device class name "
                                  f"(unsupported request type?)")
        cls = self.a.get_class(request.device_class_name)
        if cls is None:
            raise AllocationError(f"claim {kobj(claim)}, request {request.name}: could not retrieve device class "
                                  f"{request.device_class_name}: deviceclass.resource.k8s.io "
                                  f"\"{request.device_class_name}\" not found")
        rd.device_class = cls
        mode = request.allocation_mode
        if mode == "ExactCount":
            rd.num_devices = request.count
        elif mode == "All":
            for pool in self.pools:
                if pool.is_incomplete:
                    raise AllocationError(f"claim {kobj(claim)}, request {request.name}: asks for all devices, "
                                          f"but resource pool {pool.pool_id} is currently being updated")
                if pool.is_invalid:
                    raise AllocationError(f"claim {kobj(claim)}, request {request.name}: asks for all devices, "
                                          f"but resource pool {pool.pool_id} is currently invalid")
                for s in pool.slices:
                    for di, dev in enumerate(s.raw["spec"].get("devices") or []):
                        if self.is_selectable(key, rd, s, di):
                            did = (s.raw["spec"].get("driver", ""), (s.raw["spec"].get("pool") or {}).get("name", ""), dev.get("name", ""))
                            if self.features.consumable_capacity and not consumable.capacity_fits(self, request, did, dev):
                                continue
                            rd.all_devices.append((did, dev, s, pool))
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {kobj(claim)}, request {request.name}: unsupported count mode {mode}")
        return rd

    # -- the search -----------------------------------------------------------------------------
    def allocate_one(self, r: Tuple[int, int, int, int], allocate_sub_request: bool,
                     start: Optional[Tuple[int, int, int]] = None) -> bool:
        """allocateOne: r is (claim, request, subrequest, device) indices; `start` (v1.36's
        startLocation: pool, slice, device index) is where the search for a request's next device
        resumes, so a request tries combinations of devices, not permutations."""
        self.a.num_allocate_one_invocations += 1
        ci, ri, si, di = r
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        reqs = self.requests[ci]
        if ri >= len(reqs):
            try:
                return self.allocate_one((ci + 1, 0, 0, 0), False)
            except _MaxSizeExceeded:
                return False
        key = (ci, ri, si)
        rd = self.request_data[key]
        if not allocate_sub_request and rd.parent is not None:
            all_exceeded = True
            sub = 0
            while True:
                if (ci, ri, sub) not in self.request_data:
                    if all_exceeded:
                        raise _MaxSizeExceeded()
                    return False
                try:
                    ok = self.allocate_one((ci, ri, sub, di), True)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    rd.selected_sub_request_index = sub
                    return True
                sub += 1
        request = rd.request
        do_all = request.allocation_mode == "All"
        if do_all and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self.allocate_one((ci, ri + 1, 0, 0), False)
        if len(self.result[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded()
        if do_all:
            did, dev, s, pool = rd.all_devices[di]
            ok, undo = self.allocate_device(r, did, dev, s, True, pool)
            if not ok:
                return False
            try:
                done = self.allocate_one((ci, ri, si, di + 1), allocate_sub_request)
            except Exception:
                undo()
                raise
            if not done:
                undo()
            return done
        combinations = self.features.allocator_combinations
        for pi, pool in enumerate(self.pools):
            if start is not None and pi < start[0]:
                continue
            if self.features.skip_invalid_pools:
                if pool.is_incomplete or pool.is_invalid:
                    continue
            elif pool.is_invalid:
                raise AllocationError(f"pool {pool.pool} is invalid: {pool.invalid_reason}")
            for sli, s in enumerate(pool.slices):
                if start is not None and (pi, sli) < start[:2]:
                    continue
                for dev_index, dev in enumerate(s.raw["spec"].get("devices") or []):
                    if start is not None and (pi, sli, dev_index) < start:
                        continue
                    did = (pool.driver, pool.pool, dev.get("name", ""))
                    if request.admin_access and ci in self.allocating_devices.get(did, ()):
                        continue
                    if not request.admin_access and self.device_in_use(did):
                        continue
                    if not self.is_selectable(key, rd, s, dev_index):
                        continue
                    if self.features.consumable_capacity and not consumable.capacity_fits(self, request, did, dev):
                        continue
                    ok, undo = self.allocate_device(r, did, dev, s, False, pool)
                    if not ok:
                        continue
                    try:
                        done = self.allocate_one((ci, ri, si, di + 1), allocate_sub_request,
                                                 (pi, sli, dev_index + 1) if combinations else None)
                    except Exception:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def device_in_use(self, did: DeviceID) -> bool:
        return did in self.a.allocated_devices or bool(self.allocating_devices.get(did))

    def is_selectable(self, key: Tuple[int, int, int], rd: _RequestData, s, dev_index: int) -> bool:
        """isSelectable: class selectors, then the request's."""
        spec = s.raw["spec"]
        dev = spec["devices"][dev_index]
        did = (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""), dev.get("name", ""))
        if dev.get("bindingConditions") and not (self.features.device_binding and self.features.device_status):
            return False  # devices with binding conditions are not supported, feature is off
        mk = (did, key)
        cached = self.device_matches_request.get(mk)
        if cached is not None:
            return cached
        if rd.device_class is not None:
            if not self.selectors_match(key, s, dev_index, rd.device_class,
                                        (rd.device_class.get("spec") or {}).get("selectors") or []):
                self.device_matches_request[mk] = False
                return False
        if not self.selectors_match(key, s, dev_index, None, rd.request.selectors):
            self.device_matches_request[mk] = False
            return False
        if spec.get("perDeviceNodeSelection"):
            if not node_matches(self.node, dev.get("nodeName") or "", bool(dev.get("allNodes")), dev.get("nodeSelector")):
                self.device_matches_request[mk] = False
                return False
        self.device_matches_request[mk] = True
        return True

    def selectors_match(self, key, s, dev_index: int, device_class, selectors) -> bool:
        """selectorsMatch."""
        for i, sel in enumerate(selectors):
            expr = sel["cel"]["expression"]
            compiled = self.a.cel_cache.get_or_compile(expr)
            if compiled.error is not None:
                if device_class is not None:
                    raise AllocationError(f"class {kobj(device_class)}: selector #{i}: CEL compile error: {compiled.error}")
                raise AllocationError(f"claim {kobj(self.claims[key[0]])}: selector #{i}: CEL compile error: {compiled.error}")
            ck = (expr, s.key, s.resource_version, dev_index)
            outcome = self.a.match_cache.get(ck)
            if outcome is None:
                spec = s.raw["spec"]
                try:
                    outcome = (compiled.device_matches(device_variable(spec.get("driver", ""), spec["devices"][dev_index])), None)
                except CELRuntimeError as e:
                    outcome = (False, str(e))
                self.a.match_cache[ck] = outcome
            matches, err = outcome
            if err is not None:
                if device_class is not None:
                    raise AllocationError(f"class {kobj(device_class)}: selector #{i}: CEL runtime error: {err}")
                raise AllocationError(f"claim {kobj(self.claims[key[0]])}: selector #{i}: CEL runtime error: {err}")
            if not matches:
                return False
        return True

    def allocate_device(self, r, did: DeviceID, dev, s, must: bool, pool: Optional[Pool] = None):
        """allocateDevice: (allocated, rollback)."""
        if self.features.consumable_capacity:
            return consumable.allocate_device(self, r, did, dev, s, must, pool)
        ci, ri, si, di = r
        claim = self.claims[ci]
        rd = self.request_data[(ci, ri, si)]
        request = rd.request
        if request.admin_access and ci in self.allocating_devices.get(did, ()):
            return False, None
        if not request.admin_access and self.device_in_use(did):
            return False, None
        consumes = dev.get("consumesCounters") or []
        if consumes and not self.features.partitionable_devices:
            return False, None
        reserved = False
        if consumes:
            if not self.check_available_counters(did, dev, s, pool):
                return False, None
            reserved = True

        def reject():
            # v1.34/v1.35 keep the counters of a device rejected after the check (upstream's
            # leak until the next Allocate); v1.36's rollbackDevice gives them back
            if reserved and self.features.rollback_counters:
                self.deallocate_counters(dev, s, pool)
        if self.features.device_taints and self.taint_prevents_allocation(dev, request):
            reject()
            return False, None
        if rd.parent is None:
            base, sub = request.name, ""
        else:
            base, sub = rd.parent.name, request.name
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, dev, did):
                for e in range(i):
                    cons[e].remove(base, sub, dev, did)
                reject()
                if must:
                    raise AllocationError(f"claim {kobj(claim)}, request {request.name}: cannot add device "
                                          f"{did[0]}/{did[1]}/{did[2]} because a claim constraint would not be satisfied")
                return False, None
        self.allocating_devices.setdefault(did, set()).add(ci)
        res = DeviceResult(request.name, rd.parent.name if rd.parent else "", did, dev, s,
                           True if request.admin_access else None)
        prev = len(self.result[ci])
        self.result[ci].append(res)

        def undo():
            for c in cons:
                c.remove(base, sub, dev, did)
            self.allocating_devices[did].discard(ci)
            if reserved:
                self.deallocate_counters(dev, s, pool)
            del self.result[ci][prev:]
        return True, undo

    def taint_prevents_allocation(self, dev, request: "_Request") -> bool:
        """taintPreventsAllocation (v1.35; only NoSchedule and NoExecute taints count) or
        !allTaintsTolerated (v1.34: every taint must be tolerated)."""
        tolerations = request.spec.get("tolerations") or []
        for taint in dev.get("taints") or []:
            if self.features.known_taint_effects_only and taint.get("effect") not in ("NoSchedule", "NoExecute"):
                continue
            if not any(tolerates_taint(t, taint) for t in tolerations):
                return True
        return False

    # -- counters (partitionable devices) -------------------------------------------------------
    def _counter_key(self, s, pool: Optional[Pool]) -> str:
        """v1.35 on: counters per pool (keyed by the pool name alone, as upstream); v1.34:
        per ResourceSlice."""
        if self.features.pools_across_nodes:
            return pool.pool if pool is not None else (_spec(s).get("pool") or {}).get("name", "")
        return s.name

    def _available_counters(self, s, pool: Optional[Pool]) -> Dict[str, Dict[str, Fraction]]:
        """The counters left after the devices allocated before this Allocate (computed once
        per Allocator, as upstream caches availableCounters)."""
        key = self._counter_key(s, pool)
        cache = self.a.available_counters
        if key in cache:
            return cache[key]
        if self.features.pools_across_nodes:
            sets_ = pool.counter_sets if pool is not None else None
            available = {n: dict(c) for n, c in (sets_ or {}).items()}
            groups = (pool.slices + pool.not_targeting) if pool is not None else [s]
        else:
            available = {cs.get("name"): {n: _quantity(c) for n, c in (cs.get("counters") or {}).items()}
                         for cs in _spec(s).get("sharedCounters") or []}
            groups = [s]
        for x in groups:
            spec = _spec(x)
            for d in spec.get("devices") or []:
                if (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""), d.get("name", "")) \
                        not in self.a.counted_devices:
                    continue
                for use in d.get("consumesCounters") or []:
                    cs = available.get(use.get("counterSet"))
                    if cs is None:
                        continue
                    for n, c in (use.get("counters") or {}).items():
                        if n in cs:
                            cs[n] -= _quantity(c)
        cache[key] = available
        return available

    def check_available_counters(self, did: DeviceID, dev, s, pool: Optional[Pool]) -> bool:
        """checkAvailableCounters: add the device's consumption; if some counter of the pool (or
        slice) would go below zero, take it back and refuse the device."""
        available = self._available_counters(s, pool)
        consumed = self.consumed_counters.setdefault(self._counter_key(s, pool), {})
        for use in dev.get("consumesCounters") or []:
            cs = consumed.setdefault(use.get("counterSet"), {})
            for n, c in (use.get("counters") or {}).items():
                cs[n] = cs.get(n, Fraction(0)) + _quantity(c)
        for set_name, counters in available.items():
            used = consumed.get(set_name) or {}
            for n, avail in counters.items():
                if avail < used.get(n, Fraction(0)):
                    self.deallocate_counters(dev, s, pool)
                    return False
        return True

    def deallocate_counters(self, dev, s, pool: Optional[Pool]) -> None:
        """deallocateCountersForDevice."""
        consumed = self.consumed_counters.get(self._counter_key(s, pool)) or {}
        for use in dev.get("consumesCounters") or []:
            cs = consumed.get(use.get("counterSet")) or {}
            for n, c in (use.get("counters") or {}).items():
                cs[n] = cs.get(n, Fraction(0)) - _quantity(c)


def tolerates_taint(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """resourceclaim.ToleratesTaint."""
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return op == "Exists"


def _lookup_request(reqs: List[Mapping[str, Any]], d: DeviceResult) -> Mapping[str, Any]:
    """internalDeviceResult.lookupRequest: the request (or subrequest) a device was allocated for."""
    base = d.parent_request or d.request
    for req in reqs:
        if req.get("name") != base:
            continue
        if not d.parent_request:
            return req.get("exactly") or {}
        for sub in req.get("firstAvailable") or []:
            if sub.get("name") == d.request:
                return sub
    return {}


def _add_requirements(src: List[Dict[str, Any]], dst: List[Dict[str, Any]]) -> None:
    """addNewNodeSelectorRequirements."""
    for req in src:
        if not any(e.get("key") == req.get("key") and e.get("operator") == req.get("operator")
                   and set(e.get("values") or []) == set(req.get("values") or []) for e in dst):
            dst.append(req)
