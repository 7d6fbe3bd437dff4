"""The API server's handling of the DRA objects' gated fields (resource.k8s.io/v1), per version:
``dropDisabledFields`` of the ResourceSlice, ResourceClaim(Template) and DeviceClass strategies
(pkg/registry/resource/*/strategy.go, pkg/api/resourceclaimspec) and ``SetDefaults_DeviceToleration``
(operator Equal). A field whose gate is off is dropped on create, as the API server does; a field
whose gate is on is kept and modelled. DRAConsumableCapacity's fields
(allowMultipleAllocations, capacity requestPolicy, request capacity, distinctAttribute, the
results' shareID and consumedCapacity) are kept when it is on
(dropDisabledDRAConsumableCapacityFields, dropDisabledDRAResourceClaimConsumableCapacityFields,
dropDisabledDRAResourceClaimConsumableCapacityStatusFields). A pod's
``status.extendedResourceClaimStatus`` (DRAExtendedResource) is dropped with the gate off
(dropDisabledPodStatusFields) and validated with it on (validatePodExtendedResourceClaimStatus).

Kept apart from harness.api's object validation on purpose (the DRA version differences only).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Mapping

from ..api.extended_claim_status import extended_resource_claim_status
from ..errors import CaseError


def _requests(spec: Mapping[str, Any]) -> Iterator[Dict[str, Any]]:
    """The exact requests and subrequests of a claim spec."""
    for req in ((spec.get("devices") or {}).get("requests") or []):
        if isinstance(req.get("exactly"), dict):
            yield req["exactly"]
        for sub in req.get("firstAvailable") or []:
            if isinstance(sub, dict):
                yield sub


def apply(obj: Dict[str, Any], features, path: str, key: str) -> None:
    """Drop the disabled fields of a DRA object as it is created."""
    kind = obj.get("kind")
    if kind == "ResourceSlice":
        _slice(obj, features, path, key)
    elif kind == "ResourceClaim":
        _claim_spec(obj.get("spec") or {}, features, path, f"{key}.spec")
        _claim_status(obj.get("status") or {}, features)
    elif kind == "ResourceClaimTemplate":
        _claim_spec((obj.get("spec") or {}).get("spec") or {}, features, path, f"{key}.spec.spec")
    elif kind == "DeviceClass":
        spec = obj.get("spec") or {}
        if spec.get("extendedResourceName") is not None and not features.enabled("DRAExtendedResource"):
            spec.pop("extendedResourceName")  # dropDisabledDRAExtendedResourceFields
    elif kind == "Pod":
        _pod_status(obj, features, path, key)


def _pod_status(obj: Dict[str, Any], features, path: str, key: str) -> None:
    """dropDisabledPodStatusFields, then validatePodExtendedResourceClaimStatus (from
    ValidatePodStatusUpdate: the harness takes a pod's status as written to the API server)."""
    status = obj.get("status")
    if not isinstance(status, dict) or status.get("extendedResourceClaimStatus") is None:
        return
    if not features.enabled("DRAExtendedResource"):
        status.pop("extendedResourceClaimStatus")
        return
    from ..api.object_validation import ObjectInvalid
    try:
        extended_resource_claim_status(status["extendedResourceClaimStatus"], obj.get("spec") or {}, features)
    except ObjectInvalid as e:
        raise CaseError(e.message, file=path, key=f"{key}.{e.path}") from None


def _slice(obj: Dict[str, Any], features, path: str, key: str) -> None:
    """resourceslice dropDisabledFields."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    devices: List[Dict[str, Any]] = [d for d in spec.get("devices") or [] if isinstance(d, dict)]
    if not features.enabled("DRADeviceTaints"):
        for d in devices:
            d.pop("taints", None)
    if not features.enabled("DRAPartitionableDevices"):
        spec.pop("sharedCounters", None)
        if spec.pop("perDeviceNodeSelection", None) is not None and not (
                spec.get("nodeName") or spec.get("nodeSelector") is not None or spec.get("allNodes")):
            raise CaseError("Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                            "`perDeviceNodeSelection` is required", file=path, key=f"{key}.spec")
        for d in devices:
            for k in ("consumesCounters", "nodeName", "nodeSelector", "allNodes"):
                d.pop(k, None)
    if not (features.enabled("DRADeviceBindingConditions") and features.enabled("DRAResourceClaimDeviceStatus")):
        for d in devices:
            for k in ("bindingConditions", "bindingFailureConditions", "bindsToNode"):
                d.pop(k, None)
    if not features.enabled("DRAConsumableCapacity"):
        for d in devices:
            d.pop("allowMultipleAllocations", None)
            for c in (d.get("capacity") or {}).values():
                if isinstance(c, dict):
                    c.pop("requestPolicy", None)


def _claim_status(status: Mapping[str, Any], features) -> None:
    """resourceclaim dropDeviceBindingConditionsFields and dropDisabledDRAConsumableCapacityFields
    (status: shareID and consumedCapacity of the allocation results, shareID of device statuses)."""
    if not isinstance(status, dict):
        return
    if not features.enabled("DRAConsumableCapacity"):
        for d in status.get("devices") or []:
            if isinstance(d, dict):
                d.pop("shareID", None)
    alloc = status.get("allocation")
    if not isinstance(alloc, dict):
        return
    for r in ((alloc.get("devices") or {}).get("results") or []):
        if not isinstance(r, dict):
            continue
        if not features.enabled("DRADeviceBindingConditions"):
            r.pop("bindingConditions", None)
            r.pop("bindingFailureConditions", None)
        if not features.enabled("DRAConsumableCapacity"):
            r.pop("shareID", None)
            r.pop("consumedCapacity", None)


def _claim_spec(spec: Mapping[str, Any], features, path: str, key: str) -> None:
    """resourceclaimspec.DropDisabledFields, then SetDefaults for the tolerations left."""
    if not isinstance(spec, dict):
        return
    reqs = [r for r in ((spec.get("devices") or {}).get("requests") or []) if isinstance(r, dict)]
    if not features.enabled("DRAPrioritizedList"):
        for i, r in enumerate(reqs):
            if r.pop("firstAvailable", None) is not None and r.get("exactly") is None:
                # what validation then says of the request left empty
                raise CaseError("Required value: exactly one of `exactly` or `firstAvailable` is required",
                                file=path, key=f"{key}.devices.requests[{i}]")
    if not features.enabled("DRADeviceTaints"):
        for e in _requests(spec):
            e.pop("tolerations", None)
    if not features.enabled("DRAAdminAccess"):
        for r in reqs:
            if isinstance(r.get("exactly"), dict):
                r["exactly"].pop("adminAccess", None)
    constraints = [c for c in ((spec.get("devices") or {}).get("constraints") or []) if isinstance(c, dict)]
    if not features.enabled("DRAConsumableCapacity"):
        for c in constraints:
            c.pop("distinctAttribute", None)
        for e in _requests(spec):
            e.pop("capacity", None)
    for e in _requests(spec):
        for t in e.get("tolerations") or []:
            if isinstance(t, dict) and not t.get("operator"):
                t["operator"] = "Equal"  # +default="Equal"
