"""Pod resource arithmetic: component-helpers/resource PodRequests and the scheduler's
scalar-resource rules (pkg/scheduler/util, pkg/apis/core/v1/helper)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Dict, Mapping, Optional

from .quantity import parse_quantity
from .validation import is_extended_resource_name, is_native_resource  # noqa: F401 (re-exported)

DEFAULT_MILLI_CPU_REQUEST = 100  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest

ResourceList = Dict[str, Fraction]

_SUPPORTED_POD_LEVEL = ("cpu", "memory")


def is_hugepage_resource_name(name: str) -> bool:
    return name.startswith("hugepages-")


def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName."""
    return (is_extended_resource_name(name) or is_hugepage_resource_name(name)
            or "kubernetes.io/" in name or name.startswith("attachable-volumes-"))


def is_supported_pod_level_resource(name: str) -> bool:
    return name in _SUPPORTED_POD_LEVEL or name.startswith("hugepages-")


def is_overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources other than hugepages."""
    return is_native_resource(name) and not is_hugepage_resource_name(name)


def parse_list(rl: Optional[Mapping]) -> ResourceList:
    return {k: parse_quantity(v) for k, v in (rl or {}).items()}


def _add(into: ResourceList, other: Mapping[str, Fraction]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max(into: ResourceList, other: Mapping[str, Fraction]) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def _requests(container: Mapping) -> ResourceList:
    return parse_list((container.get("resources") or {}).get("requests"))


def is_pod_level_requests_set(spec: Mapping) -> bool:
    """resourcehelper.IsPodLevelRequestsSet."""
    reqs = (spec.get("resources") or {}).get("requests") or {}
    return any(is_supported_pod_level_resource(k) for k in reqs)


def is_pod_level_resources_set(spec: Mapping) -> bool:
    res = spec.get("resources") or {}
    names = list((res.get("requests") or {})) + list((res.get("limits") or {}))
    return any(is_supported_pod_level_resource(k) for k in names)


def _apply_non_missing(reqs: ResourceList, non_missing: Mapping[str, Fraction]) -> ResourceList:
    cp = dict(reqs)
    for k, v in non_missing.items():
        if k not in reqs:
            cp[k] = cp.get(k, 0) + v
    return cp


def aggregate_container_requests(spec: Mapping, non_missing: Optional[Mapping[str, Fraction]] = None,
                                 container_fn=None) -> ResourceList:
    """resourcehelper.AggregateContainerRequests: containers summed, restartable init containers
    (sidecars) added, then the max with each regular init container plus the sidecars before it."""
    reqs: ResourceList = {}
    for c in spec.get("containers") or []:
        creqs = _requests(c)
        if non_missing:
            creqs = _apply_non_missing(creqs, non_missing)
        if container_fn:
            container_fn(creqs, "Containers")
        _add(reqs, creqs)
    restartable: ResourceList = {}
    init_reqs: ResourceList = {}
    for c in spec.get("initContainers") or []:
        creqs = _requests(c)
        if non_missing:
            creqs = _apply_non_missing(creqs, non_missing)
        if c.get("restartPolicy") == "Always":
            _add(reqs, creqs)
            _add(restartable, creqs)
            creqs = dict(restartable)
        else:
            tmp: ResourceList = {}
            _add(tmp, creqs)
            _add(tmp, restartable)
            creqs = tmp
        if container_fn:
            container_fn(creqs, "InitContainers")
        _max(init_reqs, creqs)
    _max(reqs, init_reqs)
    return reqs


def pod_requests(spec: Mapping, non_missing: Optional[Mapping[str, Fraction]] = None,
                 skip_pod_level: bool = False, exclude_overhead: bool = False,
                 container_fn=None) -> ResourceList:
    """resourcehelper.PodRequests with PodLevelResources enabled (beta, on in v1.34)."""
    reqs = aggregate_container_requests(spec, non_missing, container_fn)
    if not skip_pod_level and is_pod_level_requests_set(spec):
        for k, v in ((spec.get("resources") or {}).get("requests") or {}).items():
            if is_supported_pod_level_resource(k):
                reqs[k] = parse_quantity(v)
    if not exclude_overhead and spec.get("overhead"):
        _add(reqs, parse_list(spec.get("overhead")))
    return reqs


# ---------------------------------------------------------------------------------------------
# PodRequests with UseStatusResources (InPlacePodVerticalScaling, beta and on in v1.34)
# ---------------------------------------------------------------------------------------------
def _max_list(*lists: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """resourcehelper's max(a, b...): per resource the greatest quantity (kept as written)."""
    out: Dict[str, Any] = {}
    best: Dict[str, Fraction] = {}
    for rl in lists:
        for name, q in (rl or {}).items():
            v = parse_quantity(q)
            if name not in best or v > best[name]:
                best[name] = v
                out[name] = q
    return out


def is_pod_resize_infeasible(pod) -> bool:
    """resourcehelper.IsPodResizeInfeasible."""
    for cond in (pod.status.get("conditions") or []):
        if cond.get("type") == "PodResizePending":
            return cond.get("reason") == "Infeasible"
    return False


def _determine_container_reqs(pod, container: Mapping, cs: Mapping) -> Dict[str, Any]:
    """resourcehelper.determineContainerReqs."""
    cs_res = cs.get("resources") or {}
    if is_pod_resize_infeasible(pod):
        return _max_list(cs_res.get("requests"), cs.get("allocatedResources"))
    return _max_list((container.get("resources") or {}).get("requests"), cs_res.get("requests"),
                     cs.get("allocatedResources"))


def _determine_pod_level_reqs(pod) -> Dict[str, Any]:
    """resourcehelper.determineEffectiveRequests for the pod-level requests (PodRequests with
    InPlacePodLevelResourcesVerticalScalingEnabled and UseStatusResources, when
    ``status.resources`` is set): max(spec, actuated, allocated), or max(actuated, allocated)
    while the resize is infeasible. A supported resource of the spec's requests missing from
    that is 0 (Go's zero Quantity read from the map)."""
    st = pod.status
    actuated = (st.get("resources") or {}).get("requests")
    allocated = st.get("allocatedResources")
    spec_reqs = (pod.spec.get("resources") or {}).get("requests") or {}
    if is_pod_resize_infeasible(pod):
        effective = _max_list(actuated, allocated)
    else:
        effective = _max_list(spec_reqs, actuated, allocated)
    out = dict(spec_reqs)
    for name in spec_reqs:
        if is_supported_pod_level_resource(name):
            out[name] = effective.get(name, 0)
    return out


def status_resources_spec(pod, pod_level_resize: bool = True) -> Mapping[str, Any]:
    """The pod's spec with each container's requests replaced as AggregateContainerRequests does
    when UseStatusResources is set (containers and restartable init containers whose status
    reports resources), and, with `pod_level_resize` (PodResourcesOptions'
    InPlacePodLevelResourcesVerticalScalingEnabled: the gate of that name, beta and on from
    v1.36), the pod-level requests replaced as PodRequests does when ``status.resources`` is
    set. The spec itself when no status reports resources."""

    def compute(p) -> Mapping[str, Any]:
        st = p.status
        statuses: Dict[str, Mapping] = {}
        for cs in st.get("containerStatuses") or []:
            statuses[cs.get("name", "")] = cs
        for cs in st.get("initContainerStatuses") or []:
            statuses[cs.get("name", "")] = cs
        pod_level = (pod_level_resize and st.get("resources") is not None
                     and is_pod_level_requests_set(p.spec))
        if not pod_level and not any(cs.get("resources") is not None for cs in statuses.values()):
            return p.spec
        spec = dict(p.spec)

        def replace(c: Mapping) -> Mapping:
            cs = statuses.get(c.get("name", ""))
            if cs is None or cs.get("resources") is None:
                return c
            c2 = dict(c)
            res = dict(c.get("resources") or {})
            res["requests"] = _determine_container_reqs(p, c, cs)
            c2["resources"] = res
            return c2

        spec["containers"] = [replace(c) for c in p.spec.get("containers") or []]
        spec["initContainers"] = [replace(c) if c.get("restartPolicy") == "Always" else c
                                  for c in p.spec.get("initContainers") or []]
        if pod_level:
            res = dict(p.spec.get("resources") or {})
            res["requests"] = _determine_pod_level_reqs(p)
            spec["resources"] = res
        return spec

    return pod.memo("status_resources_spec:%d" % pod_level_resize, compute)
