"""What the API server lets an update change in kinds other than Pod (pod_update.py has Pod):
the immutable fields of PriorityClass, StorageClass, PersistentVolume and PersistentVolumeClaim,
and of the Workload API's Workload and PodGroup (pkg/apis/scheduling: v1.35's
ValidateWorkloadUpdate, v1.36's declarative +k8s:immutable).

Mirrors ValidatePriorityClassUpdate (pkg/apis/scheduling/validation), ValidateStorageClassUpdate
(pkg/apis/storage/validation), ValidatePersistentVolumeUpdate and
ValidatePersistentVolumeClaimUpdate (pkg/apis/core/validation), worded as field.Error words them.
Both objects are the stored forms after defaulting.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Optional, Tuple

from . import quantity

Error = Tuple[str, str]  # (field path, message)
IMMUTABLE = "field is immutable"  # apimachinery validation.FieldImmutableErrorMsg

# PersistentVolumeSpec fields outside its inlined PersistentVolumeSource (core/v1 types.go)
_PV_SPEC_NOT_SOURCE = {"capacity", "accessModes", "claimRef", "persistentVolumeReclaimPolicy",
                       "storageClassName", "mountOptions", "volumeMode", "nodeAffinity",
                       "volumeAttributesClassName"}


def _show(v: Any) -> str:
    s = json.dumps(v, default=str)
    return s if len(s) <= 60 else s[:60] + "..."


def _immutable(path: str, new: Any, old: Any) -> Optional[Error]:
    """ValidateImmutableField: Invalid(path, new, "field is immutable") when they differ."""
    if new != old:
        return path, f"Invalid value: {_show(new)}: {IMMUTABLE}"
    return None


def _priority_class(new: Dict[str, Any], old: Dict[str, Any]) -> Optional[Error]:
    if new.get("value", 0) != old.get("value", 0):
        return "value", "Forbidden: may not be changed in an update."
    return _immutable("preemptionPolicy", new.get("preemptionPolicy") or "PreemptLowerPriority",
                      old.get("preemptionPolicy") or "PreemptLowerPriority")


def _storage_class(new: Dict[str, Any], old: Dict[str, Any]) -> Optional[Error]:
    if (new.get("parameters") or {}) != (old.get("parameters") or {}):
        return "parameters", "Forbidden: updates to parameters are forbidden."
    if new.get("provisioner") != old.get("provisioner"):
        return "provisioner", "Forbidden: updates to provisioner are forbidden."
    if (new.get("reclaimPolicy") or "Delete") != (old.get("reclaimPolicy") or "Delete"):
        return "reclaimPolicy", "Forbidden: updates to reclaimPolicy are forbidden."
    return _immutable("volumeBindingMode", new.get("volumeBindingMode") or "Immediate",
                      old.get("volumeBindingMode") or "Immediate")


def _pv(new: Dict[str, Any], old: Dict[str, Any]) -> Optional[Error]:
    ns, os_ = new.get("spec") or {}, old.get("spec") or {}
    src_new = {k: v for k, v in ns.items() if k not in _PV_SPEC_NOT_SOURCE}
    src_old = {k: v for k, v in os_.items() if k not in _PV_SPEC_NOT_SOURCE}
    if src_new != src_old:
        return ("spec.persistentvolumesource",
                "Forbidden: spec.persistentvolumesource is immutable after creation")
    # upstream's path is "volumeMode" (field.NewPath("volumeMode")), not spec.volumeMode
    err = _immutable("volumeMode", ns.get("volumeMode") or "Filesystem", os_.get("volumeMode") or "Filesystem")
    if err:
        return err
    if os_.get("nodeAffinity") is not None:
        return _immutable("nodeAffinity", ns.get("nodeAffinity"), os_.get("nodeAffinity"))
    return None


def _storage_request(spec: Dict[str, Any]):
    q = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    try:
        return quantity.parse_quantity(q) if q is not None else 0
    except quantity.QuantityError:
        return 0


def _pvc(new: Dict[str, Any], old: Dict[str, Any]) -> Optional[Error]:
    ns, os_ = dict(new.get("spec") or {}), dict(old.get("spec") or {})
    if not os_.get("volumeName"):  # volumeName may be set once (the PV controller binds)
        os_["volumeName"] = ns.get("volumeName")
    ns.setdefault("volumeName", os_.get("volumeName"))
    if (new.get("status") or {}).get("phase") == "Bound":
        # a bound claim may change its storage request and volumeAttributesClassName
        for spec in (ns, os_):
            res = dict(spec.get("resources") or {})
            req = dict(res.get("requests") or {})
            req.pop("storage", None)
            res["requests"] = req
            spec["resources"] = res
            spec.pop("volumeAttributesClassName", None)
    if ns != os_:
        return "spec", ("Forbidden: spec is immutable after creation except resources.requests and "
                        "volumeAttributesClassName for bound claims")
    # RecoverVolumeExpansionFailure (GA in v1.34): a smaller request is refused only when it is
    # not above the capacity the status records
    new_size = _storage_request(new.get("spec") or {})
    if new_size < _storage_request(old.get("spec") or {}):
        cap = ((old.get("status") or {}).get("capacity") or {}).get("storage")
        try:
            status_size = quantity.parse_quantity(cap) if cap is not None else 0
        except quantity.QuantityError:
            status_size = 0
        if new_size <= status_size:
            return "spec.resources.requests.storage", "Forbidden: field can not be less than status.capacity"
    return None


def _workload(new: Dict[str, Any], old: Dict[str, Any]) -> Optional[Error]:
    """ValidateWorkloadUpdate: v1alpha1 (v1.35, validateWorkloadSpecUpdate: its paths lack the
    `spec.` prefix, as upstream's field.NewPath("podGroups")); v1alpha2 (v1.36, declarative
    +k8s:immutable: Invalid(path, nil, "field is immutable"))."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    if str(new.get("apiVersion", "")).endswith("/v1alpha1"):
        if old_spec.get("controllerRef") is not None:
            err = _immutable("controllerRef", spec.get("controllerRef"), old_spec.get("controllerRef"))
            if err:
                return err
        return _immutable("podGroups", spec.get("podGroups"), old_spec.get("podGroups"))
    for key in ("controllerRef", "podGroupTemplates"):
        if spec.get(key) != old_spec.get(key):
            return f"spec.{key}", f"Invalid value: null: {IMMUTABLE}"
    return None


def _pod_group(new: Dict[str, Any], old: Dict[str, Any]) -> Optional[Error]:
    """Validate_PodGroupSpec's +k8s:immutable fields (v1.36)."""
    if not str(new.get("apiVersion", "")).startswith("scheduling.k8s.io/"):
        return None  # a plugin's custom resource of that kind
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    for key in ("podGroupTemplateRef", "schedulingPolicy", "schedulingConstraints", "resourceClaims",
                "disruptionMode", "priorityClassName", "priority"):
        if spec.get(key) != old_spec.get(key):
            return f"spec.{key}", f"Invalid value: null: {IMMUTABLE}"
    return None


_BY_KIND: Dict[str, Callable[[Dict[str, Any], Dict[str, Any]], Optional[Error]]] = {
    "PriorityClass": _priority_class, "StorageClass": _storage_class,
    "PersistentVolume": _pv, "PersistentVolumeClaim": _pvc,
    "Workload": _workload, "PodGroup": _pod_group,
}


def validate_object_update(new: Dict[str, Any], old: Dict[str, Any]) -> Optional[Error]:
    """The first error the API server's update validation reports for `old` -> `new` (both
    defaulted), or None when the update is allowed (or the kind has no rule here)."""
    check = _BY_KIND.get(new.get("kind", ""))
    return check(new, old) if check is not None else None
