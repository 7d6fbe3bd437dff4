"""What the API server lets an update change in a pod's spec: ValidatePodUpdate
(pkg/apis/core/validation/validation.go), for the fields a case can write."""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, List, Optional, Tuple

UPDATABLE_POD_SPEC_FIELDS = ",".join([
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
])

Error = Tuple[str, str]  # (field path, message)


def validate_pod_update(new: Dict[str, Any], old: Dict[str, Any], features: Any = None) -> Optional[Error]:
    """The first error ValidatePodUpdate reports for a change of pod spec `old` into `new`, or
    None when the update is allowed. `features`: the API server's version and gates (the
    tolerations' Lt/Gt operators, v1.35 on)."""
    for group in ("containers", "initContainers"):
        if len(new.get(group) or []) != len(old.get(group) or []):
            return f"spec.{group}", "Forbidden: pod updates may not add or remove containers"
    ads_new, ads_old = new.get("activeDeadlineSeconds"), old.get("activeDeadlineSeconds")
    if ads_new is not None:
        if not 0 <= ads_new <= 2 ** 31 - 1:
            return "spec.activeDeadlineSeconds", f"Invalid value: {ads_new}: must be between 0 and 2147483647, inclusive"
        if ads_old is not None and ads_old < ads_new:
            return "spec.activeDeadlineSeconds", f"Invalid value: {ads_new}: must be less than or equal to previous value"
    elif ads_old is not None:
        return "spec.activeDeadlineSeconds", "Invalid value: \"null\": must not update from a positive integer to nil value"
    err = _only_added_tolerations(new.get("tolerations") or [], old.get("tolerations") or [])
    if err:
        return err
    err = _validate_tolerations(new, old, features)
    if err:
        return err
    err = _only_deleted_scheduling_gates(new.get("schedulingGates") or [], old.get("schedulingGates") or [])
    if err:
        return err
    if new == old:
        return None
    munged = copy.deepcopy(new)
    for group in ("containers", "initContainers"):
        for c, o in zip(munged.get(group) or [], old.get(group) or []):
            if "image" in o:
                c["image"] = o["image"]
            else:
                c.pop("image", None)
    _set_like(munged, old, "activeDeadlineSeconds")
    _set_like(munged, old, "schedulingGates")
    _set_like(munged, old, "tolerations")
    tgps_old = old.get("terminationGracePeriodSeconds")
    if tgps_old is not None and tgps_old < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = tgps_old
    if old.get("schedulingGates"):
        # a gated pod may gain nodeSelector entries and narrower required node affinity
        if (munged.get("nodeSelector") or {}) != (old.get("nodeSelector") or {}):
            for k, v in (old.get("nodeSelector") or {}).items():
                if (munged.get("nodeSelector") or {}).get(k) != v:
                    shown = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}"
                                      for k, v in sorted((munged.get("nodeSelector") or {}).items()))
                    # field.Invalid renders the map with %#v
                    return ("spec.nodeSelector", f"Invalid value: map[string]string{{{shown}}}: only additions "
                            "to spec.nodeSelector are allowed (no mutations or deletions)")
            _set_like(munged, old, "nodeSelector")
        old_na = (old.get("affinity") or {}).get("nodeAffinity")
        new_na = (munged.get("affinity") or {}).get("nodeAffinity")
        if (old_na or None) != (new_na or None):
            err = _node_affinity_mutation(new_na, old_na)
            if err:
                return err
            aff = dict(munged.get("affinity") or {})
            if old_na is None:
                aff.pop("nodeAffinity", None)
            else:
                aff["nodeAffinity"] = old_na
            if aff or "affinity" in old:
                munged["affinity"] = aff
            else:
                munged.pop("affinity", None)
    if _normalized(munged) != _normalized(old):
        return "spec", f"Forbidden: pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS}"
    return None


def _set_like(munged: Dict[str, Any], old: Dict[str, Any], key: str) -> None:
    if key in old:
        munged[key] = copy.deepcopy(old[key])
    else:
        munged.pop(key, None)


def _normalized(spec: Dict[str, Any]) -> Dict[str, Any]:
    """Empty lists and mappings are absent, as Go's semantic equality sees them after decoding."""
    return {k: v for k, v in spec.items() if v not in (None, [], {})}


def _only_added_tolerations(new: List[Dict[str, Any]], old: List[Dict[str, Any]]) -> Optional[Error]:
    """validateOnlyAddedTolerations: each old toleration is still there (tolerationSeconds may
    change)."""
    for o in old:
        base = {k: v for k, v in o.items() if k != "tolerationSeconds"}
        if not any({k: v for k, v in n.items() if k != "tolerationSeconds"} == base for n in new):
            return "spec.tolerations", "Forbidden: existing toleration can not be modified except its tolerationSeconds"
    return None


def _validate_tolerations(new: Dict[str, Any], old: Dict[str, Any], features: Any) -> Optional[Error]:
    """validateOnlyAddedTolerations' ValidateTolerations of the new tolerations, with
    AllowTaintTolerationComparisonOperators when the gate is on or the old pod uses Lt/Gt."""
    from .object_validation import ObjectInvalid, _tolerations, toleration_operator_options
    try:
        _tolerations(new, "spec", toleration_operator_options(features, old))
    except ObjectInvalid as e:
        return e.path, e.message
    return None


def _only_deleted_scheduling_gates(new: List[Dict[str, Any]], old: List[Dict[str, Any]]) -> Optional[Error]:
    """validateOnlyDeletedSchedulingGates."""
    old_names = {g.get("name") for g in old}
    for i, g in enumerate(new):
        if g.get("name") not in old_names:
            return (f"spec.schedulingGates[{i}].name",
                    f"Forbidden: only deletion is allowed, but found new scheduling gate '{g.get('name')}'")
    return None


def _node_affinity_mutation(new: Optional[Dict[str, Any]], old: Optional[Dict[str, Any]]) -> Optional[Error]:
    """validateNodeAffinityMutation: required terms of a gated pod may only narrow."""
    old_req = (old or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if old_req is None:
        return None
    old_terms = old_req.get("nodeSelectorTerms") or []
    new_terms = ((new or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    if old_terms and len(old_terms) != len(new_terms):
        return path, "Invalid value: no additions/deletions to non-empty NodeSelectorTerms list are allowed"
    for i, (n, o) in enumerate(zip(new_terms, old_terms)):
        if not _term_has_only_additions(n, o):
            return f"{path}[{i}]", "Invalid value: only additions are allowed (no mutations or deletions)"
    return None


def _term_has_only_additions(new: Dict[str, Any], old: Dict[str, Any]) -> bool:
    """validateNodeSelectorTermHasOnlyAdditions."""
    oe, of = old.get("matchExpressions") or [], old.get("matchFields") or []
    ne, nf = new.get("matchExpressions") or [], new.get("matchFields") or []
    if not oe and not of and (ne or nf):
        return False
    if oe and (len(ne) < len(oe) or ne[:len(oe)] != oe):
        return False
    if of and (len(nf) < len(of) or nf[:len(of)] != of):
        return False
    return True
