"""VolumeBinding (framework/plugins/volumebinding/volume_binding.go).

PreFilter sorts the pod's claims (an unbound claim of an Immediate class rejects the pod for the
whole cluster); Filter checks bound claims' PV node affinity and finds PVs, or provisioning, for
unbound WaitForFirstConsumer claims on each node; Reserve assumes the choice; PreBind writes it
to the API server and waits for the PV controller; Unreserve reverts the assumption. Score
(StorageCapacityScoring, alpha and off by default in v1.34) scores by storage utilization.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from harness.api.quantity import value as quantity_value
from harness.framework import signers
from harness.framework.status import SKIP
from harness.framework import (PreBindPreFlightResult, ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               NotFoundError, Plugin, QueueingHint, Status, hookimpl)

from .. import names
from ..csitranslation import MIGRATED_PLUGINS_ANNOTATION_KEY
from .binder import (PodVolumeClaims, PodVolumes, VolumeBinder, pod_claim_name, volume_is_for_pod,
                     volume_limit)
from .pv_helpers import CLAIM_LOST, VolumeError, spec_of
from .scorer import StorageResource, build_scorer_function

STATE_KEY = names.VolumeBinding
MAX_NODE_SCORE = 100
MAX_CUSTOM_PRIORITY_SCORE = 10
DEFAULT_BIND_TIMEOUT_SECONDS = 600

ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ERR_STATE_NOT_FOUND = "not found"  # fwk.ErrNotFound, as CycleState.Read returns it


@dataclass
class Features:
    """The feature gates VolumeBinding reads (feature.Features), at their v1.34 defaults."""

    enable_storage_capacity_scoring: bool = False  # StorageCapacityScoring: alpha, off
    enable_volume_attributes_class: bool = True  # VolumeAttributesClass: GA in v1.34
    enable_csi_migration_portworx: bool = True  # CSIMigrationPortworx: beta, on
    enable_scheduling_queue_hint: bool = True  # SchedulerQueueingHints: beta, on

    @classmethod
    def from_gates(cls, gates: Optional[Dict[str, bool]]) -> "Features":
        f = cls()
        if gates:
            f.enable_storage_capacity_scoring = bool(gates.get("StorageCapacityScoring",
                                                               f.enable_storage_capacity_scoring))
            f.enable_volume_attributes_class = bool(gates.get("VolumeAttributesClass",
                                                              f.enable_volume_attributes_class))
            f.enable_csi_migration_portworx = bool(gates.get("CSIMigrationPortworx",
                                                             f.enable_csi_migration_portworx))
            f.enable_scheduling_queue_hint = bool(gates.get("SchedulerQueueingHints",
                                                            f.enable_scheduling_queue_hint))
        return f


DEFAULT_FEATURES = Features()


def _features_of(handle) -> Features:
    fts = getattr(handle, "features", None)
    if isinstance(fts, Features):
        return fts
    gates = getattr(handle, "feature_gates", None)
    if isinstance(gates, Mapping):
        return Features.from_gates(gates)
    return DEFAULT_FEATURES


class StateData:
    """stateData; shared (not copied) by CycleState.Clone, as upstream's Clone returns itself."""

    __slots__ = ("all_bound", "pod_volumes_by_node", "pod_volume_claims", "has_static_bindings")

    def __init__(self, pod_volume_claims: Optional[PodVolumeClaims] = None,
                 pod_volumes_by_node: Optional[Dict[str, PodVolumes]] = None):
        self.all_bound = False
        self.pod_volumes_by_node: Dict[str, PodVolumes] = pod_volumes_by_node or {}
        self.pod_volume_claims = pod_volume_claims
        self.has_static_bindings = False

    def clone(self) -> "StateData":
        return self


# ---- args -------------------------------------------------------------------------------------
def _shape_json(shape) -> str:
    """json.Marshal of the internal []UtilizationShapePoint (no json tags)."""
    pts = [{"Utilization": int((p or {}).get("utilization") or 0),
            "Score": int((p or {}).get("score") or 0)} for p in shape or []]
    return json.dumps(pts, separators=(",", ":"))


def validate_function_shape(shape, path: str) -> List[Tuple[str, str]]:
    """validateFunctionShape."""
    errs: List[Tuple[str, str]] = []
    if not shape:
        errs.append((path, "Required value: at least one point must be specified"))
        return errs
    pts = [(int((p or {}).get("utilization") or 0), int((p or {}).get("score") or 0)) for p in shape]
    for i in range(1, len(pts)):
        if pts[i - 1][0] >= pts[i][0]:
            errs.append((f"{path}[{i}].utilization",
                         f"Invalid value: {pts[i][0]}: values must be sorted in increasing order"))
            break
    for i, (u, s) in enumerate(pts):
        if u < 0 or u > 100:
            errs.append((f"{path}[{i}].utilization", f"Invalid value: {u}: not in valid range [0, 100]"))
        if s < 0 or s > MAX_CUSTOM_PRIORITY_SCORE:
            errs.append((f"{path}[{i}].score",
                         f"Invalid value: {s}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return errs


def set_defaults(args: Dict[str, Any], features: Features = DEFAULT_FEATURES) -> Dict[str, Any]:
    """SetDefaults_VolumeBindingArgs."""
    out = dict(args or {})
    if out.get("bindTimeoutSeconds") is None:
        out["bindTimeoutSeconds"] = DEFAULT_BIND_TIMEOUT_SECONDS
    if not out.get("shape") and features.enable_storage_capacity_scoring:
        out["shape"] = [{"utilization": 0, "score": MAX_CUSTOM_PRIORITY_SCORE},
                        {"utilization": 100, "score": 0}]
    return out


def validate_args(args: Dict[str, Any], features: Features = DEFAULT_FEATURES) -> List[Tuple[str, str]]:
    """ValidateVolumeBindingArgsWithOptions (AllowStorageCapacityScoring from the gate)."""
    args = args or {}
    errs: List[Tuple[str, str]] = []
    timeout = int(args.get("bindTimeoutSeconds") or 0)
    if timeout < 0:
        errs.append(("bindTimeoutSeconds", f"Invalid value: {timeout}: invalid BindTimeoutSeconds, "
                                           f"should not be a negative value"))
    shape = args.get("shape")
    if features.enable_storage_capacity_scoring:
        errs.extend(validate_function_shape(shape, "shape"))
    elif shape is not None:
        errs.append(("shape", f"Invalid value: {_shape_json(shape)}: unexpected field `shape`, remove "
                              f"it or turn on the feature gate StorageCapacityScoring"))
    return errs


# ---- queueing hints ---------------------------------------------------------------------------
def _semantic(v):
    """apiequality.Semantic.DeepEqual treats nil and empty slices/maps alike."""
    if isinstance(v, dict):
        return {k: _semantic(x) for k, x in v.items() if _semantic(x) is not None}
    if isinstance(v, list):
        return [_semantic(x) for x in v] or None
    if v == {} or v == []:
        return None
    return v


def _pod_claim_names(pod) -> List[str]:
    out = []
    for vol in pod.volumes:
        name, _ = pod_claim_name(pod, vol)
        if name is not None:
            out.append(name)
    return out


def is_schedulable_after_csi_node_change(pod, old_obj, new_obj) -> QueueingHint:
    if old_obj is None:
        return QueueingHint.Queue
    if (old_obj.annotations.get(MIGRATED_PLUGINS_ANNOTATION_KEY, "")
            != new_obj.annotations.get(MIGRATED_PLUGINS_ANNOTATION_KEY, "")):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def is_schedulable_after_persistent_volume_claim_change(pod, old_obj, new_obj) -> QueueingHint:
    if pod.namespace != new_obj.namespace:
        return QueueingHint.QueueSkip
    if new_obj.name in _pod_claim_names(pod):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def is_schedulable_after_storage_class_change(pod, old_obj, new_obj) -> QueueingHint:
    if old_obj is None:
        return QueueingHint.Queue
    if _semantic(new_obj.raw.get("allowedTopologies")) != _semantic(old_obj.raw.get("allowedTopologies")):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def _limit_value(capacity) -> Optional[int]:
    lim = volume_limit(capacity)
    if lim is None:
        return None
    return -((-lim.numerator) // lim.denominator)


def is_schedulable_after_csi_storage_capacity_change(pod, old_obj, new_obj) -> QueueingHint:
    if old_obj is None:
        return QueueingHint.Queue
    old_limit = _limit_value(old_obj)
    new_limit = _limit_value(new_obj)
    if new_limit is not None and (old_limit is None or new_limit > old_limit):
        return QueueingHint.Queue
    return QueueingHint.QueueSkip


def is_schedulable_after_csi_driver_change(pod, old_obj, new_obj) -> QueueingHint:
    for vol in pod.volumes:
        csi = vol.get("csi")
        if csi is None or csi.get("driver") != new_obj.name:
            continue
        old_cap = (old_obj.raw.get("spec") or {}).get("storageCapacity") if old_obj is not None else None
        new_cap = (new_obj.raw.get("spec") or {}).get("storageCapacity")
        if old_cap is True and not new_cap:
            return QueueingHint.Queue
    return QueueingHint.QueueSkip


# ---- the plugin -------------------------------------------------------------------------------
class VolumeBinding(Plugin):
    """VolumeBinding: binds pod volumes in scheduling."""

    name = names.VolumeBinding
    args_kind = "VolumeBindingArgs"

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        super().__init__(args, handle)
        self.fts = _features_of(handle)
        args = set_defaults(args or {}, self.fts)
        self.args = args
        self.binder = VolumeBinder(
            handle.cluster if handle is not None else None,
            bind_timeout_seconds=int(args.get("bindTimeoutSeconds") or 0),
            enable_volume_attributes_class=self.fts.enable_volume_attributes_class,
            enable_csi_migration_portworx=self.fts.enable_csi_migration_portworx)
        self.scorer = None
        if self.fts.enable_storage_capacity_scoring:
            shape = [(int(p.get("utilization") or 0),
                      int(p.get("score") or 0) * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
                     for p in args.get("shape") or []]
            self.scorer = build_scorer_function(shape)

    @classmethod
    def set_defaults(cls, args: Dict[str, Any]) -> Dict[str, Any]:
        return set_defaults(args, DEFAULT_FEATURES)

    @classmethod
    def validate_args(cls, args: Dict[str, Any]) -> List[Tuple[str, str]]:
        return validate_args(args, DEFAULT_FEATURES)

    @property
    def cluster(self):
        return self.handle.cluster

    # ---- EnqueueExtensions ----------------------------------------------------------------------
    @hookimpl
    def sign_pod(self, pod):
        """SignPod: the pod's volume sources but configMap and secret ones."""
        return [(signers.VOLUMES_SIGNER_NAME, signers.volumes_signer(pod))], None

    @hookimpl
    def events_to_register(self):
        node_action = ActionType.Add | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint
        if self.fts.enable_scheduling_queue_hint:
            node_action = ActionType.Add | ActionType.UpdateNodeLabel
        add_update = ActionType.Add | ActionType.Update
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.StorageClass, add_update),
                                 is_schedulable_after_storage_class_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolumeClaim, add_update),
                                 is_schedulable_after_persistent_volume_claim_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolume, add_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, node_action)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSINode, add_update),
                                 is_schedulable_after_csi_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSIDriver, ActionType.Update),
                                 is_schedulable_after_csi_driver_change),
            ClusterEventWithHint(ClusterEvent(EventResource.CSIStorageCapacity, add_update),
                                 is_schedulable_after_csi_storage_capacity_change),
        ]

    # ---- PreFilter --------------------------------------------------------------------------------
    def pod_has_pvcs(self, pod) -> bool:
        """podHasPVCs: whether the pod uses claims; raises VolumeError for a claim that is
        missing, lost, being deleted or (ephemeral) not owned by the pod."""
        has_pvc = False
        for vol in pod.volumes:
            name, ephemeral = pod_claim_name(pod, vol)
            if name is None:
                continue
            has_pvc = True
            pvc = self.cluster.get("PersistentVolumeClaim", pod.namespace, name)
            if pvc is None:
                if ephemeral:
                    raise VolumeError(f'waiting for ephemeral volume controller to create the '
                                      f'persistentvolumeclaim "{name}"')
                raise VolumeError(f'persistentvolumeclaim "{name}" not found')
            if (pvc.raw.get("status") or {}).get("phase") == CLAIM_LOST:
                raise VolumeError(f'persistentvolumeclaim "{pvc.name}" bound to non-existent '
                                  f'persistentvolume "{spec_of(pvc).get("volumeName") or ""}"')
            if (pvc.raw.get("metadata") or {}).get("deletionTimestamp") is not None:
                raise VolumeError(f'persistentvolumeclaim "{pvc.name}" is being deleted')
            if ephemeral:
                err = volume_is_for_pod(pod, pvc)
                if err is not None:
                    raise VolumeError(err)
        return has_pvc

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        try:
            has_pvc = self.pod_has_pvcs(pod)
        except VolumeError as e:
            return None, Status.unresolvable(str(e))
        if not has_pvc:
            state.write(STATE_KEY, StateData())
            return None, SKIP
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except VolumeError as e:
            return None, Status.error(e)
        if claims.unbound_claims_immediate:
            # The PV controller binds these; the pod is retried on the claim's update.
            return None, Status.unresolvable(ERR_REASON_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, StateData(pod_volume_claims=PodVolumeClaims(
            bound_claims=claims.bound_claims,
            unbound_claims_delay_binding=claims.unbound_claims_delay_binding,
            unbound_claims_immediate=[],
            unbound_volumes_delay_binding=claims.unbound_volumes_delay_binding)))
        return None, None

    # ---- Filter -----------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state, pod, node_info):
        try:
            s = state.read(STATE_KEY)
        except NotFoundError:
            return Status.error(ERR_STATE_NOT_FOUND)
        node = node_info.node
        try:
            pod_volumes, reasons = self.binder.find_pod_volumes(pod, s.pod_volume_claims, node)
        except VolumeError as e:
            return Status.error(e)
        if reasons:
            return Status.unresolvable(*reasons)
        s.pod_volumes_by_node[node.name] = pod_volumes
        s.has_static_bindings = s.has_static_bindings or bool(pod_volumes.static_bindings)
        return None

    # ---- Score --------------------------------------------------------------------------------------
    @hookimpl
    def pre_score(self, state, pod, nodes):
        if self.scorer is None:
            return SKIP
        try:
            s = state.read(STATE_KEY)
        except NotFoundError:
            return Status.error(ERR_STATE_NOT_FOUND)
        if s.has_static_bindings or self.fts.enable_storage_capacity_scoring:
            return None
        return SKIP

    @hookimpl
    def score(self, state, pod, node_info):
        if self.scorer is None:
            return 0, None
        try:
            s = state.read(STATE_KEY)
        except NotFoundError:
            return 0, Status.error(ERR_STATE_NOT_FOUND)
        pod_volumes = s.pod_volumes_by_node.get(node_info.node.name)
        if pod_volumes is None:
            return 0, None
        class_resources: Dict[str, StorageResource] = {}
        if pod_volumes.static_bindings or not self.fts.enable_storage_capacity_scoring:
            for b in pod_volumes.static_bindings or []:
                cls = b.storage_class_name()
                res = b.storage_resource()
                cr = class_resources.setdefault(cls, StorageResource())
                cr.requested += res.requested
                cr.capacity += res.capacity
        else:
            for p in pod_volumes.dynamic_provisions or []:
                if p.node_capacity is None:
                    continue
                cls = spec_of(p.pvc).get("storageClassName") or ""
                cr = class_resources.setdefault(cls, StorageResource())
                cap = p.node_capacity.raw.get("capacity")
                # Not +=: two claims of one class see the same capacity.
                cr.capacity = quantity_value(cap) if cap is not None else 0
                req = ((spec_of(p.pvc).get("resources") or {}).get("requests") or {}).get("storage")
                cr.requested += quantity_value(req) if req is not None else 0
        return self.scorer(class_resources), None

    # ---- Reserve ------------------------------------------------------------------------------------
    @hookimpl
    def reserve(self, state, pod, node_name):
        try:
            s = state.read(STATE_KEY)
        except NotFoundError:
            return Status.error(ERR_STATE_NOT_FOUND)
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is not None:
            try:
                s.all_bound = self.binder.assume_pod_volumes(pod, node_name, pod_volumes)
            except VolumeError as e:
                return Status.error(e)
        else:
            # The pod uses no claim.
            s.all_bound = True
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        try:
            s = state.read(STATE_KEY)
        except NotFoundError:
            return None
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return None
        self.binder.revert_assumed_pod_volumes(pod_volumes)
        return None

    # ---- PreBind --------------------------------------------------------------------------------------
    @hookimpl
    def pre_bind_pre_flight(self, state, pod, node_name):
        """PreBindPreFlight: Skip when every claim is bound; PreBind may run in parallel with
        the adjacent plugins that allow it (v1.36's AllowParallel, on every path)."""
        result = PreBindPreFlightResult(allow_parallel=True)
        try:
            s = state.read(STATE_KEY)
        except NotFoundError:
            return result, Status.error(ERR_STATE_NOT_FOUND)
        if s.all_bound:
            return result, SKIP
        if node_name not in s.pod_volumes_by_node:
            return result, Status.error(f'no pod volume found for node "{node_name}"')
        return result, None

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        try:
            s = state.read(STATE_KEY)
        except NotFoundError:
            return Status.error(ERR_STATE_NOT_FOUND)
        if s.all_bound:
            return None
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return Status.error(f'no pod volume found for node "{node_name}"')
        return self._bind_volumes(pod, node_name, pod_volumes)

    def _bind_volumes(self, pod, node_name: str, pod_volumes):
        """PreBind's wait for the volumes (a task: BindPodVolumes polls in virtual time)."""
        try:
            yield from self.binder.bind_pod_volumes_task(pod, node_name, pod_volumes)
        except VolumeError as e:
            return Status.error(e)
        return None
