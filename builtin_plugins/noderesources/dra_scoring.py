"""Scoring extended resources backed by DRA (DRAExtendedResource, v1.35 on): NodeResourcesFit's and
NodeResourcesBalancedAllocation's resourceAllocationScorer counts, for a scoring resource that a
device class maps and that the node does not advertise (allocatable 0), the node's devices of
that class as its allocatable and those already allocated as its requested
(resource_allocation.go: getDRAPreScoredParams, calculateDRAExtendedResourceAllocatableRequest,
calculateDRAResourceTotals, deviceMatchesClass).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from harness.framework import Code, Status

from . import resource_allocation as ra


class DRAPreScoreState:
    """draPreScoreState: the devices allocated (or in flight) and the ResourceSlices, taken at
    PreScore; plus the class resolver and the CEL caches the scorer keeps."""

    __slots__ = ("allocated", "slices", "resolver", "cel_cache", "match_cache", "allow_selectors")

    def __init__(self, allocated: Set[Tuple[str, str, str]], slices: List[Any], resolver, cel_cache,
                 match_cache: Dict[Any, bool], allow_selectors: bool):
        self.allocated = allocated
        self.slices = slices
        self.resolver = resolver
        self.cel_cache = cel_cache
        self.match_cache = match_cache
        self.allow_selectors = allow_selectors


def get_dra_pre_scored_params(handle, gates, resources: Sequence[Tuple[str, int]], cel_cache, match_cache,
                              allow_selectors: bool = True) -> Optional[DRAPreScoreState]:
    """getDRAPreScoredParams: None unless some scoring resource is a DRA extended resource name
    that a device class maps (or the gate is off, or v1.34, which does not score them)."""
    if not any("/" in name for name, _ in resources):
        return None  # no extended resource name among them (IsDRAExtendedResourceName's first test)
    from builtin_plugins.dynamicresources import extended
    from builtin_plugins.dynamicresources.claims import tracker_for

    cluster = getattr(handle, "cluster", None)
    if cluster is None or not extended.enabled(gates) or not gates.has(extended.CHANGE):
        return None
    resolver = extended.class_resolver(cluster, gates)
    if not any(extended.is_dra_extended_resource_name(name, gates) and resolver.get_device_class(name) is not None
               for name, _ in resources):
        return None
    tracker = tracker_for(cluster, getattr(handle, "snapshot", None))
    # GatherAllocatedState, then IsDeviceAllocated's test: a device allocated whole, shared, or
    # with consumed capacity (v1.36 takes the informer's shared IDs, v1.35 the in-flight ones)
    state = tracker.gather_allocated_state(gates.has("DRASharedDevicesConsumeCounters"))
    allocated = state.counted_for_counters(True)
    return DRAPreScoreState(allocated, cluster.list("ResourceSlice"), resolver, cel_cache, match_cache,
                            allow_selectors)


class SelectorsWithoutCache(Exception):
    """BalancedAllocation's scorer has no CEL cache: a class with selectors makes upstream's
    deviceMatchesClass dereference a nil cache."""


def _device_matches_class(dra: DRAPreScoreState, device, cls, driver: str, pool: str, s) -> bool:
    """deviceMatchesClass: every CEL selector of the class matches (results cached per
    expression and device)."""
    from harness.api.dra_cel import CELRuntimeError, device_variable

    selectors = (cls.get("spec") or {}).get("selectors") or []
    for sel in selectors:
        expr = (sel.get("cel") or {}).get("expression")
        if expr is None:
            continue
        key = (expr, driver, pool, device.get("name", ""))
        known = dra.match_cache.get(key)
        if known is not None:
            if not known:
                return False
            continue
        if not dra.allow_selectors:
            raise SelectorsWithoutCache()
        compiled = dra.cel_cache.get_or_compile(expr)
        if compiled.error is not None:
            raise ValueError(str(compiled.error))
        try:
            matches = compiled.device_matches(device_variable(driver, device))
        except CELRuntimeError as e:
            raise ValueError(str(e))
        if not matches:
            return False  # upstream caches only matches
        dra.match_cache[key] = True
    return True


def calculate_dra_resource_totals(dra: DRAPreScoreState, node, cls) -> Tuple[int, int]:
    """calculateDRAResourceTotals: (devices of the class on the node, how many are allocated)."""
    from builtin_plugins.dynamicresources.allocator import node_matches

    total = allocated = 0
    name = node.name
    for s in dra.slices:
        spec = s.raw.get("spec") or {}
        if spec.get("perDeviceNodeSelection"):
            devices = []
            for d in spec.get("devices") or []:
                dn, da = d.get("nodeName") or "", bool(d.get("allNodes"))
                if da or (dn and dn == name):
                    devices.append(d)
                elif d.get("nodeSelector") is not None and node_matches(node, dn, da, d["nodeSelector"]):
                    devices.append(d)
        else:
            sn, sa = spec.get("nodeName") or "", bool(spec.get("allNodes"))
            if not sa and sn != name and spec.get("nodeSelector") is not None:
                if not node_matches(node, sn, sa, spec["nodeSelector"]):
                    continue
            elif not sa and sn and sn != name:
                continue
            devices = spec.get("devices") or []
        driver = spec.get("driver", "")
        pool = (spec.get("pool") or {}).get("name", "")
        for d in devices:
            if (cls.get("spec") or {}).get("selectors") and not _device_matches_class(dra, d, cls, driver, pool, s):
                continue
            total += 1
            if (driver, pool, d.get("name", "")) in dra.allocated:
                allocated += 1
    return total, allocated


def _allocatable_request(scorer: "ra.ResourceAllocationScorer", node_info, kind: int, name: str,
                         pod_request: int, dra: DRAPreScoreState) -> Tuple[int, int]:
    """calculateResourceAllocatableRequest's default case with DRA: an allocatable of 0 and a
    class mapping the resource count the class's devices on the node (when there are any)."""
    if kind == ra._SCALAR and pod_request != 0:
        scalars = node_info.allocatable.scalar_resources
        if scalars.get(name, 0) == 0:
            cls = dra.resolver.get_device_class(name)
            if cls is not None:
                try:
                    cap, used = calculate_dra_resource_totals(dra, node_info.node, cls)
                except SelectorsWithoutCache:
                    raise
                except Exception:  # logged upstream ("Failed to calculate DRA resource ..."), then (0, 0)
                    cap, used = 0, 0
                if cap > 0:
                    return cap, used + pod_request
    return ra._allocatable_request(node_info, kind, name, pod_request, scorer.use_requested)


def score(scorer: "ra.ResourceAllocationScorer", plugin: str, node_info, pod_request_list: Sequence[int],
          dra: DRAPreScoreState) -> Tuple[int, Optional[Status]]:
    """resourceAllocationScorer.score with draPreScoreState."""
    if not scorer.resources:
        return 0, Status(Code.Error, "resources not found")
    n = len(scorer.resources)
    requested = [0] * n
    allocatable = [0] * n
    try:
        for i in range(n):
            alloc, req = _allocatable_request(scorer, node_info, scorer._kinds[i], scorer._names[i],
                                              pod_request_list[i], dra)
            if alloc == 0:
                continue
            allocatable[i] = alloc
            requested[i] = req
    except SelectorsWithoutCache:
        return 0, Status.error(RuntimeError(f"{plugin}: invalid memory address or nil pointer dereference "
                                            f"(a device class with selectors scored without a CEL cache)"))
    if scorer.with_allocated:
        allocated = [requested[i] - pod_request_list[i] if allocatable[i] else 0 for i in range(n)]
        return scorer.scorer(requested, allocated, allocatable), None
    return scorer.scorer(requested, allocatable), None
