"""DynamicResources' Filter without the allocator's search for plain claims (a harness
speed-up; the same outcomes).

Filter runs the structured allocator (allocator.Allocator.allocate, upstream's
Allocator.Allocate) for the pod on every node it visits. When every request of the claims to
allocate is plain -- `exactly`, ExactCount, no adminAccess, no capacity, no constraints, no
firstAvailable -- and the node's devices have nothing the search decides on the way (no
consumed counters with partitionable devices, no invalid pools, no CEL error, only the device
fields listed in DEVICE_KEYS), allocateOne's depth-first search is plain: each request takes,
one after the other, the first devices in the order it walks the node's pools, slices and
devices that are not allocated (nor taken by an earlier request of the pod) and that pass
isSelectable and allocateDevice's checks (the binding-conditions gate, the class's selectors,
the request's, per-device node selection, counters without the gate, device taints). Those
checks do not depend on the other claims, so a node's eligible devices per request shape
(class and request selectors, tolerations) are computed once and kept while the slices, the
node and the class are the same. Then:

- when every request finds its devices that way, the search's first leaf is that pick: the
  claims fit (the AllocationResults are built by the allocator itself, for the node Reserve
  gets, :class:`Deferred`);
- when a request has fewer eligible free devices than its count, no search can satisfy it: the
  claims do not fit;
- otherwise (an earlier request took devices a later one needed: the search backtracks), and
  for anything else, :meth:`FastFilter.fits` answers None and the allocator runs as before.

tests/dra/test_fastpath_property.py compares it with the allocator on random slices and claims,
and whole scheduler runs with it and without (ENABLED)."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from .allocator import ALLOCATION_RESULTS_MAX_SIZE, AllocationError, Allocator, node_matches, tolerates_taint
from harness.api.dra_cel import CELRuntimeError, device_variable

ENABLED = True  # False: always the allocator (the property tests' reference)

# The device fields this module knows the allocator's use of; a device with another one (a
# feature added later) sends the node to the allocator.
DEVICE_KEYS = frozenset({"name", "attributes", "capacity", "taints", "bindingConditions",
                         "bindingFailureConditions", "bindsToNode", "nodeName", "nodeSelector",
                         "allNodes", "consumesCounters"})
REQUEST_KEYS = frozenset({"deviceClassName", "selectors", "allocationMode", "count", "tolerations"})

_DECLINE = "decline"  # a node's devices need the allocator for this request shape


def _freeze(obj: Any) -> Any:
    """A hashable copy of a JSON value (tolerations in a cache key)."""
    if isinstance(obj, Mapping):
        return ("{",) + tuple(sorted((k, _freeze(v)) for k, v in obj.items()))
    if isinstance(obj, list):
        return ("[",) + tuple(_freeze(v) for v in obj)
    return obj


class _Shape:
    """A plain request: its count and what decides a device's eligibility."""

    __slots__ = ("count", "class_exprs", "exprs", "tolerations", "key")

    def __init__(self, count: int, class_name: str, class_exprs: Tuple[str, ...], exprs: Tuple[str, ...],
                 tolerations: List[Mapping[str, Any]], taints_matter: bool):
        self.count = count
        self.class_exprs = class_exprs
        self.exprs = exprs
        self.tolerations = tolerations
        self.key = (class_name, class_exprs, exprs, _freeze(tolerations) if taints_matter else None)


def _expressions(selectors: Any) -> Optional[Tuple[str, ...]]:
    """The CEL expressions of a selector list; None when one is not a plain CEL selector."""
    out = []
    for sel in selectors or []:
        if not isinstance(sel, Mapping) or set(sel) != {"cel"}:
            return None
        expr = (sel.get("cel") or {}).get("expression")
        if not isinstance(expr, str) or not expr:
            return None
        out.append(expr)
    return tuple(out)


def plain_shapes(a: Allocator, claims: List[Mapping[str, Any]]) -> Optional[List[_Shape]]:
    """The requests of `claims` in allocateOne's order, when all are plain; else None."""
    out: List[_Shape] = []
    taints_matter = a.features.device_taints
    for claim in claims:
        spec = claim.get("spec") or {}
        if set(spec) - {"devices"}:
            return None
        devices = spec.get("devices") or {}
        if set(devices) - {"requests", "config", "constraints"} or devices.get("constraints"):
            return None
        total = 0
        for req in devices.get("requests") or []:
            ex = req.get("exactly")
            if set(req) - {"name", "exactly"} or not isinstance(ex, Mapping) or set(ex) - REQUEST_KEYS:
                return None
            if (ex.get("allocationMode") or "ExactCount") != "ExactCount":
                return None
            class_name = ex.get("deviceClassName") or ""
            cls = a.get_class(class_name) if class_name else None
            if cls is None:
                return None
            class_exprs = _expressions((cls.get("spec") or {}).get("selectors"))
            exprs = _expressions(ex.get("selectors"))
            count = ex.get("count") or 0
            if class_exprs is None or exprs is None or not isinstance(count, int) or count < 0:
                return None
            total += count
            out.append(_Shape(count, class_name, class_exprs, exprs, ex.get("tolerations") or [], taints_matter))
        if total > ALLOCATION_RESULTS_MAX_SIZE:
            return None
    return out


class Deferred:
    """What Filter keeps for a node the fast path found the claims fit on: the allocator's own
    allocation, run when Reserve (or Score) asks for the results."""

    __slots__ = ("allocator", "node", "claims")

    def __init__(self, allocator: Allocator, node, claims: List[Mapping[str, Any]]):
        self.allocator, self.node, self.claims = allocator, node, claims

    def results(self, *args) -> List[Dict[str, Any]]:
        """The allocator's results(*args) for the node."""
        found = self.allocator.allocate_lazy(self.node, self.claims)
        if found is None:
            raise AllocationError(f"internal error: the claims no longer fit on node {self.node.name}")
        return found.results(*args)


class FastFilter:
    """Per pod (PreFilter): the plain request shapes of its claims to allocate; per node, whether
    they fit (:meth:`fits`). `cache` maps (node name, node version, shape key) to the node's
    eligible device IDs; its owner empties it when the slices change."""

    def __init__(self, allocator: Allocator, claims: List[Mapping[str, Any]], cache: Dict[Any, Any],
                 outcomes: Optional[Dict[Any, Any]] = None):
        self.a = allocator
        self.claims = claims
        self.shapes = plain_shapes(allocator, claims) if ENABLED else None
        self.cache = cache
        # (expression, driver, the device but its name) -> (matches, error): a selector reads
        # the device's driver and fields, never its name, so devices alike share one evaluation
        self.outcomes = outcomes if outcomes is not None else {}

    def fits(self, node) -> Optional[bool]:
        """True: the claims can be allocated on node; False: they cannot; None: ask the
        allocator."""
        shapes = self.shapes
        if shapes is None:
            return None
        cache = self.cache
        allocated = self.a.allocated_devices
        taken: Optional[set] = None
        for shape in shapes:
            found = cache.get((node.name, node.resource_version, shape.key))
            if found is None:
                found = self.entry(node, shape)
            eligible, distinct = found
            if eligible is _DECLINE:
                return None
            need = shape.count
            if not need:
                continue
            if taken is None and len(shapes) == 1:
                # the common case: one request: are `need` of its eligible devices free?
                if distinct is not None:
                    if need == 1:
                        return not distinct.issubset(allocated)
                    return len(distinct) - len(distinct.intersection(allocated)) >= need
                for did in eligible:
                    if did not in allocated:
                        need -= 1
                        if not need:
                            return True
                return False
            if taken is None:
                taken = set()
            free = 0
            picked = []
            for did in eligible:
                if did in allocated:
                    continue
                free += 1
                if did not in taken and len(picked) < need:
                    picked.append(did)
            if len(picked) < need:
                # fewer free devices than the count: no choice of the earlier requests helps;
                # else the search backtracks into them (the allocator decides)
                return False if free < need else None
            taken.update(picked)
        return True

    def entry(self, node, shape: _Shape) -> Tuple[Any, Optional[frozenset]]:
        """(node's eligible device IDs for shape or _DECLINE, the same as a set when they are
        distinct, else None), from the cache or computed and kept there."""
        ck = (node.name, node.resource_version, shape.key)
        found = self.cache.get(ck)
        if found is None:
            eligible = self._eligible(node, shape)
            # with the IDs as a set when they are distinct (counting the free ones in C)
            found = self.cache[ck] = (eligible, None if eligible is _DECLINE or len(set(eligible)) != len(eligible)
                                      else frozenset(eligible))
        return found

    def _eligible(self, node, shape: _Shape):
        """The IDs of node's devices that shape's request may take, in allocateOne's order, or
        _DECLINE."""
        a = self.a
        features = a.features
        try:
            pools = a.pools_for(node)
        except AllocationError:
            return _DECLINE
        binding = features.device_binding and features.device_status
        out = []
        for pool in pools:
            if pool.is_invalid:
                return _DECLINE
            if pool.is_incomplete and features.skip_invalid_pools:
                continue
            for s in pool.slices:
                spec = s.raw["spec"]
                per_device = spec.get("perDeviceNodeSelection")
                for di, dev in enumerate(spec.get("devices") or []):
                    if not DEVICE_KEYS.issuperset(dev):
                        return _DECLINE
                    if dev.get("bindingConditions") and not binding:
                        continue
                    ok = self._selectors_match(shape.class_exprs, s, di)
                    if ok:
                        ok = self._selectors_match(shape.exprs, s, di)
                    if ok is None:
                        return _DECLINE
                    if not ok:
                        continue
                    if per_device:
                        try:
                            if not node_matches(node, dev.get("nodeName") or "", bool(dev.get("allNodes")),
                                                dev.get("nodeSelector")):
                                continue
                        except AllocationError:
                            return _DECLINE
                    if dev.get("consumesCounters"):
                        if features.partitionable_devices:
                            return _DECLINE
                        continue
                    if features.device_taints and _taint_prevents(dev, shape.tolerations, features):
                        continue
                    out.append((pool.driver, pool.pool, dev.get("name", "")))
        return tuple(out)

    def _selectors_match(self, exprs: Tuple[str, ...], s, dev_index: int) -> Optional[bool]:
        """selectorsMatch through the allocator's caches; None for a compile or runtime error
        (the allocator reports it)."""
        a = self.a
        for expr in exprs:
            compiled = a.cel_cache.get_or_compile(expr)
            if compiled.error is not None:
                return None
            ck = (expr, s.key, s.resource_version, dev_index)
            outcome = a.match_cache.get(ck)
            if outcome is None:
                spec = s.raw["spec"]
                driver, dev = spec.get("driver", ""), spec["devices"][dev_index]
                content = (expr, driver, _freeze({k: v for k, v in dev.items() if k != "name"}))
                outcome = self.outcomes.get(content)
                if outcome is None:
                    try:
                        outcome = (compiled.device_matches(device_variable(driver, dev)), None)
                    except CELRuntimeError as e:
                        outcome = (False, str(e))
                    self.outcomes[content] = outcome
                a.match_cache[ck] = outcome
            matches, err = outcome
            if err is not None:
                return None
            if not matches:
                return False
        return True


def _taint_prevents(dev: Mapping[str, Any], tolerations: List[Mapping[str, Any]], features) -> bool:
    """_Allocation.taint_prevents_allocation for a request's tolerations."""
    for taint in dev.get("taints") or []:
        if features.known_taint_effects_only and taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates_taint(t, taint) for t in tolerations):
            return True
    return False
