"""PersistentVolume / PersistentVolumeClaim helpers of k8s.io/component-helpers/storage/volume
(helpers.go, pv_helpers.go) that volume binding uses: storage classes, binding modes, node
affinity of a PV, FindMatchingVolume and GetBindVolumeToClaim.

PVs and PVCs are KubeObjects whose `raw` manifests are never mutated in place: a changed
object is a deep copy (see `copy_object`).
"""

from __future__ import annotations

import copy
import weakref
from fractions import Fraction
from typing import Any, Dict, List, Mapping, Optional, Tuple

from harness.api.labels import SelectorError, from_label_selector
from harness.api.nodeaffinity import LazyErrorNodeSelector, match_node_selector_terms
from harness.api.objects import KubeObject, Node
from harness.api.quantity import parse_quantity

# Annotations (pv_helpers.go) -----------------------------------------------------------------
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"

VOLUME_BINDING_WAIT = "WaitForFirstConsumer"
VOLUME_BINDING_IMMEDIATE = "Immediate"

CLAIM_LOST = "Lost"
VOLUME_AVAILABLE = "Available"
VOLUME_BOUND = "Bound"
CLAIM_BOUND = "Bound"
PERSISTENT_VOLUME_FILESYSTEM = "Filesystem"

_ZERO = Fraction(0)


class VolumeError(Exception):
    """A Go error of the volume binding code; str() is its message."""


# ---------------------------------------------------------------------------------------------
# Objects
# ---------------------------------------------------------------------------------------------
def copy_object(obj: KubeObject) -> KubeObject:
    """obj.DeepCopy(): a new object with the same resourceVersion."""
    new = type(obj)(copy.deepcopy(obj.raw))
    new.resource_version = obj.resource_version
    return new


def set_annotation(obj: KubeObject, key: str, value: str) -> None:
    """metav1.SetMetaDataAnnotation on an object that is a private copy."""
    md = obj.raw.setdefault("metadata", {})
    ann = md.get("annotations")
    if ann is None:
        ann = md["annotations"] = {}
    ann[key] = value
    obj.annotations[key] = value


def spec_of(obj: KubeObject) -> Dict[str, Any]:
    return obj.raw.get("spec") or {}


def claim_key(obj: KubeObject) -> str:
    """getPVCName / claimToClaimKey: namespace/name."""
    return f"{obj.namespace}/{obj.name}"


def storage_request(claim: KubeObject) -> Fraction:
    """claim.Spec.Resources.Requests[storage] (the zero Quantity when absent)."""
    req = ((spec_of(claim).get("resources") or {}).get("requests") or {}).get("storage")
    return parse_quantity(req) if req is not None else _ZERO


def has_storage_request(claim: KubeObject) -> bool:
    return ((spec_of(claim).get("resources") or {}).get("requests") or {}).get("storage") is not None


def pv_capacity(pv: KubeObject) -> Fraction:
    cap = (spec_of(pv).get("capacity") or {}).get("storage")
    return parse_quantity(cap) if cap is not None else _ZERO


# ---------------------------------------------------------------------------------------------
# helpers.go
# ---------------------------------------------------------------------------------------------
def get_persistent_volume_claim_class(claim: KubeObject) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
    if BETA_STORAGE_CLASS_ANNOTATION in claim.annotations:
        return claim.annotations[BETA_STORAGE_CLASS_ANNOTATION]
    name = spec_of(claim).get("storageClassName")
    return name if name is not None else ""


def get_persistent_volume_class(pv: KubeObject) -> str:
    """GetPersistentVolumeClass."""
    if BETA_STORAGE_CLASS_ANNOTATION in pv.annotations:
        return pv.annotations[BETA_STORAGE_CLASS_ANNOTATION]
    return spec_of(pv).get("storageClassName") or ""


_LABEL_NODES: "weakref.WeakKeyDictionary[Any, Node]" = weakref.WeakKeyDictionary()


def labels_only_node(node) -> Node:
    """`&v1.Node{ObjectMeta: {Labels: nodeLabels}}` as CheckNodeAffinity builds it: no name, so a
    matchFields requirement is not evaluated (extractNodeFields is empty)."""
    try:
        return _LABEL_NODES[node]
    except (KeyError, TypeError):
        pass
    n = Node({"metadata": {"labels": dict(node.labels or {})}})
    try:
        _LABEL_NODES[node] = n
    except TypeError:  # pragma: no cover - not weak-referenceable
        pass
    return n


def _required_node_selector(pv: KubeObject) -> Tuple[bool, Optional[Mapping[str, Any]]]:
    na = spec_of(pv).get("nodeAffinity")
    if na is None:
        return False, None
    req = na.get("required")
    if req is None:
        return False, None
    return True, req


def check_node_affinity(pv: KubeObject, label_node: Node) -> Optional[str]:
    """CheckNodeAffinity(pv, node.Labels): None when the PV's required node affinity (if any)
    matches the node's labels, else the error message. `label_node` is labels_only_node(node)."""
    has, req = _required_node_selector(pv)
    if not has:
        return None
    ok, err = match_node_selector_terms(label_node, req)
    if err is not None and not ok:
        return err
    if not ok:
        return "no matching NodeSelectorTerms"
    return None


def pv_node_selector(pv: KubeObject) -> Optional[LazyErrorNodeSelector]:
    """The PV's parsed required node affinity, or None when it has none (matches every node)."""
    has, req = _required_node_selector(pv)
    return LazyErrorNodeSelector(req) if has else None


def is_delay_binding_mode(claim: KubeObject, get_class) -> bool:
    """IsDelayBindingMode. `get_class(name)` returns the StorageClass or None.

    A StorageClass read from a case without volumeBindingMode is taken as Immediate, the value
    the API server defaults it to (upstream errors on nil, which a real cluster never shows)."""
    class_name = get_persistent_volume_claim_class(claim)
    if class_name == "":
        return False
    cls = get_class(class_name)
    if cls is None:
        return False
    mode = cls.raw.get("volumeBindingMode")
    if mode is None:
        mode = VOLUME_BINDING_IMMEDIATE
    return mode == VOLUME_BINDING_WAIT


def is_volume_bound_to_claim(pv: KubeObject, claim: KubeObject) -> bool:
    """IsVolumeBoundToClaim: the PV's claimRef names the claim (and its UID, when set)."""
    ref = spec_of(pv).get("claimRef")
    if ref is None:
        return False
    if claim.name != (ref.get("name") or "") or claim.namespace != (ref.get("namespace") or ""):
        return False
    uid = ref.get("uid") or ""
    if uid != "" and claim.uid != uid:
        return False
    return True


def claim_reference(claim: KubeObject) -> Dict[str, Any]:
    """reference.GetReference(scheme, claim)."""
    ref: Dict[str, Any] = {"kind": "PersistentVolumeClaim", "namespace": claim.namespace,
                           "name": claim.name, "uid": claim.uid, "apiVersion": "v1"}
    rv = str(claim.resource_version) if claim.resource_version else \
        (claim.raw.get("metadata") or {}).get("resourceVersion")
    if rv:
        ref["resourceVersion"] = str(rv)
    return ref


def get_bind_volume_to_claim(pv: KubeObject, claim: KubeObject) -> Tuple[KubeObject, bool]:
    """GetBindVolumeToClaim: (a copy of the PV bound to the claim, dirty)."""
    dirty = False
    should_set_bound_by_controller = not is_volume_bound_to_claim(pv, claim)
    clone = copy_object(pv)
    ref = spec_of(pv).get("claimRef")
    if (ref is None or (ref.get("name") or "") != claim.name
            or (ref.get("namespace") or "") != claim.namespace
            or (ref.get("uid") or "") != claim.uid):
        clone.raw.setdefault("spec", {})["claimRef"] = claim_reference(claim)
        dirty = True
    if should_set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in clone.annotations:
        set_annotation(clone, ANN_BOUND_BY_CONTROLLER, "yes")
        dirty = True
    return clone, dirty


def check_volume_mode_mismatches(claim_spec: Mapping[str, Any], pv_spec: Mapping[str, Any]) -> bool:
    """CheckVolumeModeMismatches: a nil volumeMode is Filesystem on both sides."""
    requested = claim_spec.get("volumeMode") or PERSISTENT_VOLUME_FILESYSTEM
    pv_mode = pv_spec.get("volumeMode") or PERSISTENT_VOLUME_FILESYSTEM
    return requested != pv_mode


def check_access_modes(claim: KubeObject, pv: KubeObject) -> bool:
    """CheckAccessModes: the PV offers every access mode the claim asks for."""
    pv_modes = set(spec_of(pv).get("accessModes") or [])
    for mode in spec_of(claim).get("accessModes") or []:
        if mode not in pv_modes:
            return False
    return True


def _phase(pv: KubeObject) -> str:
    """The PV's status.phase. A PV without one (a case that omits status) is taken as
    Available: the PV controller makes every new PV Available at once."""
    return (pv.raw.get("status") or {}).get("phase") or VOLUME_AVAILABLE


class PreparedClaim:
    """A claim and the volumes that pass FindMatchingVolume's node-independent checks, in the
    volumes' order, computed once per scheduling cycle (Filter runs for every node)."""

    __slots__ = ("claim", "candidates")

    def __init__(self, claim: KubeObject, candidates: List[Tuple[KubeObject, Fraction, bool, Any]]):
        self.claim = claim
        # (volume, capacity, pre-bound to the claim, parsed node affinity)
        self.candidates = candidates


def _claim_checks(claim: KubeObject, vac_enabled: bool):
    cspec = spec_of(claim)
    claim_vac = cspec.get("volumeAttributesClassName") or ""
    if not vac_enabled and claim_vac != "":
        raise VolumeError(f"unsupported volumeAttributesClassName is set on claim {claim_key(claim)} "
                          f"when the feature-gate VolumeAttributesClass is disabled")
    selector = None
    if cspec.get("selector") is not None:
        try:
            selector = from_label_selector(cspec["selector"])
        except SelectorError as e:
            raise VolumeError(f"error creating internal label selector for claim: "
                              f"{claim_key(claim)}: {e}") from None
    return cspec, claim_vac, selector


def _static_skip(volume: KubeObject, claim: KubeObject, cspec, claim_vac: str, requested_qty,
                 vac_enabled: bool) -> Tuple[bool, Fraction]:
    """The checks FindMatchingVolume makes before the node affinity one: (skip?, capacity)."""
    vspec = spec_of(volume)
    if vspec.get("claimRef") is not None and not is_volume_bound_to_claim(volume, claim):
        return True, _ZERO
    volume_qty = pv_capacity(volume)
    if volume_qty < requested_qty:
        return True, volume_qty
    if check_volume_mode_mismatches(cspec, vspec):
        return True, volume_qty
    volume_vac = vspec.get("volumeAttributesClassName") or ""
    if vac_enabled and claim_vac != volume_vac:
        return True, volume_qty
    if not vac_enabled and volume_vac != "":
        return True, volume_qty
    if (volume.raw.get("metadata") or {}).get("deletionTimestamp") is not None:
        return True, volume_qty
    return False, volume_qty


def prepare_claim(claim: KubeObject, volumes: List[KubeObject], vac_enabled: bool) -> PreparedClaim:
    """FindMatchingVolume's scheduler path up to the node: drops the volumes it would skip on
    every node (keeping those pre-bound to the claim, which end the search). Raises VolumeError."""
    cspec, claim_vac, selector = _claim_checks(claim, vac_enabled)
    requested_qty = storage_request(claim)
    requested_class = get_persistent_volume_claim_class(claim)
    out: List[Tuple[KubeObject, Fraction, bool, Any]] = []
    for volume in volumes:
        skip, qty = _static_skip(volume, claim, cspec, claim_vac, requested_qty, vac_enabled)
        if skip:
            continue
        if is_volume_bound_to_claim(volume, claim):
            out.append((volume, qty, True, pv_node_selector(volume)))
            continue
        if _phase(volume) != VOLUME_AVAILABLE:
            continue
        if selector is not None and not selector.matches(volume.labels):
            continue
        if get_persistent_volume_class(volume) != requested_class:
            continue
        if not check_access_modes(claim, volume):
            continue
        out.append((volume, qty, False, pv_node_selector(volume)))
    return PreparedClaim(claim, out)


def match_prepared_claim(prepared: PreparedClaim, node, excluded_volumes: Mapping[str, Any]
                         ) -> Optional[KubeObject]:
    """FindMatchingVolume for one node on a prepared claim: the first volume pre-bound to the
    claim decides (None when its node affinity fails), else the smallest fitting volume."""
    label_node = labels_only_node(node)
    smallest = None
    smallest_qty = _ZERO
    for volume, qty, prebound, sel in prepared.candidates:
        if volume.name in excluded_volumes:
            continue
        valid = sel is None or sel.match_err(label_node)[0]
        if prebound:
            return volume if valid else None
        if not valid:
            continue
        if smallest is None or smallest_qty > qty:
            smallest = volume
            smallest_qty = qty
    return smallest


def find_matching_volume(claim: KubeObject, volumes: List[KubeObject], node,
                         excluded_volumes: Mapping[str, Any], delay_binding: bool,
                         vac_enabled: bool) -> Optional[KubeObject]:
    """FindMatchingVolume, scheduler path when `node` is set (node affinity and access modes
    are checked); raises VolumeError as upstream returns an error."""
    if node is not None:
        return match_prepared_claim(prepare_claim(claim, volumes, vac_enabled), node,
                                    excluded_volumes)
    cspec, claim_vac, selector = _claim_checks(claim, vac_enabled)
    requested_qty = storage_request(claim)
    requested_class = get_persistent_volume_claim_class(claim)
    smallest = None
    smallest_qty = _ZERO
    for volume in volumes:
        if volume.name in excluded_volumes:
            continue
        skip, volume_qty = _static_skip(volume, claim, cspec, claim_vac, requested_qty, vac_enabled)
        if skip:
            continue
        if is_volume_bound_to_claim(volume, claim):
            return volume
        if delay_binding:
            # PV controller does not bind this claim: the scheduler will.
            continue
        if _phase(volume) != VOLUME_AVAILABLE:
            continue
        if selector is not None and not selector.matches(volume.labels):
            continue
        if get_persistent_volume_class(volume) != requested_class:
            continue
        if smallest is None or smallest_qty > volume_qty:
            smallest = volume
            smallest_qty = volume_qty
    return smallest
