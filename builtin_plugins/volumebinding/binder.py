"""The scheduler's volume binder (volumebinding/binder.go): sorts a pod's claims into bound,
unbound-delayed and unbound-immediate ones (GetPodVolumeClaims), checks them against a node
(FindPodVolumes), assumes the chosen bindings and provisionings in the assume caches
(AssumePodVolumes / RevertAssumedPodVolumes) and writes them to the API server, waiting for the
PV controller to complete them (BindPodVolumes).

In the harness the PV controller and the external provisioner are simulated by
`pv_controller`, synchronously, right after the scheduler's API updates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from harness.api.labels import SelectorError, from_label_selector
from harness.api.objects import KubeObject
from harness.api.quantity import parse_quantity, value as quantity_value

from .. import csitranslation
from harness.framework.blocking import Task, drive

from . import pv_controller

POLL_INTERVAL_SECONDS = 1  # BindPodVolumes polls checkBindings every second
from .assume_cache import NotFoundError, PVAssumeCache, PVCAssumeCache
from .pv_helpers import (ANN_BIND_COMPLETED, ANN_SELECTED_NODE, NOT_SUPPORTED_PROVISIONER,
                         PreparedClaim, VolumeError, check_node_affinity, claim_key, copy_object,
                         get_bind_volume_to_claim, get_persistent_volume_claim_class,
                         has_storage_request, is_delay_binding_mode, labels_only_node,
                         match_prepared_claim, prepare_claim, set_annotation, spec_of,
                         storage_request)
from .scorer import StorageResource

# ConflictReasons -----------------------------------------------------------------------------
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


def try_translate_pv_to_csi(pv: KubeObject, csi_node: Optional[KubeObject],
                            enable_csi_migration_portworx: bool) -> KubeObject:
    """volumeBinder.tryTranslatePVToCSI: the PV itself unless it is an in-tree PV whose plugin
    is migrated to CSI on the node (then its translation, for the node-affinity check)."""
    plugin = csitranslation.in_tree_plugin_name(pv)
    if plugin is None:
        return pv
    if not csitranslation.is_csi_migration_on_for_plugin(plugin, enable_csi_migration_portworx):
        return pv
    if not csitranslation.is_plugin_migrated_to_csi_on_node(plugin, csi_node):
        return pv
    try:
        return csitranslation.translate_in_tree_pv_topology_to_csi(pv)
    except csitranslation.TranslationError as e:
        raise VolumeError(f"could not translate pv: {e}") from None


@dataclass
class BindingInfo:
    """A PVC and the PV proposed for it."""

    pvc: KubeObject
    pv: KubeObject

    def storage_class_name(self) -> str:
        return spec_of(self.pv).get("storageClassName") or ""

    def storage_resource(self) -> StorageResource:
        req = ((spec_of(self.pvc).get("resources") or {}).get("requests") or {}).get("storage")
        cap = (spec_of(self.pv).get("capacity") or {}).get("storage")
        return StorageResource(requested=quantity_value(req) if req is not None else 0,
                               capacity=quantity_value(cap) if cap is not None else 0)


@dataclass
class DynamicProvision:
    """A PVC to provision, and the CSIStorageCapacity that showed room for it (or None)."""

    pvc: KubeObject
    node_capacity: Optional[KubeObject] = None


@dataclass
class PodVolumes:
    """The volume decisions for one node. None and [] differ as nil and empty do upstream."""

    static_bindings: Optional[List[BindingInfo]] = None
    dynamic_provisions: Optional[List[DynamicProvision]] = None


@dataclass
class PodVolumeClaims:
    bound_claims: List[KubeObject] = field(default_factory=list)
    unbound_claims_delay_binding: List[KubeObject] = field(default_factory=list)
    unbound_claims_immediate: List[KubeObject] = field(default_factory=list)
    unbound_volumes_delay_binding: Dict[str, List[KubeObject]] = field(default_factory=dict)
    # FindMatchingVolume's node-independent part, per claim, filled by the first Filter call.
    prepared: Dict[str, PreparedClaim] = field(default_factory=dict)


def pod_claim_name(pod, vol) -> Tuple[Optional[str], bool]:
    """The PVC name a pod volume uses (ephemeral.VolumeClaimName for generic ephemeral volumes)
    and whether it is ephemeral; (None, False) for other volumes."""
    pvc = vol.get("persistentVolumeClaim")
    if pvc is not None:
        return str(pvc.get("claimName") or ""), False
    if vol.get("ephemeral") is not None:
        return f"{pod.name}-{vol.get('name', '')}", True
    return None, False


def volume_is_for_pod(pod, pvc: KubeObject) -> Optional[str]:
    """ephemeral.VolumeIsForPod: None, or the error message."""
    controlled = False
    for ref in (pvc.raw.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            controlled = (ref.get("uid") or "") == pod.uid
            break
    if pvc.namespace != pod.namespace or not controlled:
        return (f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                f"{pod.namespace}/{pod.name} (pod is not owner)")
    return None


def pod_name(pod) -> str:
    return f"{pod.namespace}/{pod.name}"


def _by_pvc_size_key(claim: KubeObject):
    return storage_request(claim)


def volume_limit(capacity: KubeObject):
    """volumeLimit: maximumVolumeSize when set, else capacity (None when neither)."""
    mvs = capacity.raw.get("maximumVolumeSize")
    if mvs is not None:
        return parse_quantity(mvs)
    cap = capacity.raw.get("capacity")
    if cap is not None:
        return parse_quantity(cap)
    return None


def capacity_sufficient(capacity: KubeObject, size_in_bytes: int) -> bool:
    """capacitySufficient: limit.Value() >= size."""
    limit = volume_limit(capacity)
    return limit is not None and -((-limit.numerator) // limit.denominator) >= size_in_bytes


def match_topology_selector_terms(terms, labels) -> bool:
    """v1helper.MatchTopologySelectorTerms: an empty list matches everything; an empty term or
    one that does not parse matches nothing; terms are ORed, expressions ANDed (key In values)."""
    if not terms:
        return True
    for term in terms:
        exprs = (term or {}).get("matchLabelExpressions") or []
        if not exprs:
            continue
        ok = True
        for e in exprs:
            values = [str(v) for v in e.get("values") or []]
            if not values:  # labels.NewRequirement: In needs values
                ok = False
                break
            v = labels.get(e.get("key", ""))
            if v is None or v not in values:
                ok = False
                break
        if ok:
            return True
    return False


class VolumeBinder:
    """volumeBinder (SchedulerVolumeBinder)."""

    def __init__(self, cluster, bind_timeout_seconds: int = 600,
                 enable_volume_attributes_class: bool = True,
                 enable_csi_migration_portworx: bool = True):
        self.cluster = cluster
        self.bind_timeout_seconds = bind_timeout_seconds
        self.enable_volume_attributes_class = enable_volume_attributes_class
        self.enable_csi_migration_portworx = enable_csi_migration_portworx
        self.pvc_cache = PVCAssumeCache(cluster)
        self.pv_cache = PVAssumeCache(cluster)

    # listers ----------------------------------------------------------------------------------
    def _class(self, name: str) -> Optional[KubeObject]:
        return self.cluster.get("StorageClass", "", name)

    def _csi_node(self, node_name: str) -> Optional[KubeObject]:
        return self.cluster.get("CSINode", "", node_name)

    # claims -----------------------------------------------------------------------------------
    def is_pvc_fully_bound(self, pvc: KubeObject) -> bool:
        return bool(spec_of(pvc).get("volumeName")) and ANN_BIND_COMPLETED in pvc.annotations

    def is_pvc_bound(self, namespace: str, pvc_name: str) -> Tuple[bool, KubeObject]:
        key = f"{namespace}/{pvc_name}"
        try:
            pvc = self.pvc_cache.get_pvc(key)
        except NotFoundError as e:
            raise VolumeError(f'error getting PVC "{key}": {e}') from None
        return self.is_pvc_fully_bound(pvc), pvc

    def is_volume_bound(self, pod, vol) -> Tuple[bool, Optional[KubeObject]]:
        name, ephemeral = pod_claim_name(pod, vol)
        if name is None:
            return True, None
        bound, pvc = self.is_pvc_bound(pod.namespace, name)
        if ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err is not None:
                raise VolumeError(err)
        return bound, pvc

    def are_pod_volumes_bound(self, pod) -> bool:
        for vol in pod.volumes:
            try:
                bound, _ = self.is_volume_bound(pod, vol)
            except VolumeError:
                bound = False
            if not bound:
                return False
        return True

    def get_pod_volume_claims(self, pod) -> PodVolumeClaims:
        """GetPodVolumeClaims (raises VolumeError)."""
        c = PodVolumeClaims()
        for vol in pod.volumes:
            bound, pvc = self.is_volume_bound(pod, vol)
            if pvc is None:
                continue
            if bound:
                c.bound_claims.append(pvc)
                continue
            delay = is_delay_binding_mode(pvc, self._class)
            if delay and not spec_of(pvc).get("volumeName"):
                c.unbound_claims_delay_binding.append(pvc)
            else:
                # Prebound claims, and immediate ones, should have been bound already.
                c.unbound_claims_immediate.append(pvc)
        for pvc in c.unbound_claims_delay_binding:
            cls = get_persistent_volume_claim_class(pvc)
            c.unbound_volumes_delay_binding[cls] = self.pv_cache.list_pvs(cls)
        return c

    # filter -----------------------------------------------------------------------------------
    def find_pod_volumes(self, pod, claims: PodVolumeClaims, node) -> Tuple[PodVolumes, List[str]]:
        """FindPodVolumes: the volume decisions for the node and the conflict reasons (raises
        VolumeError where upstream returns an error)."""
        r = _FindResult()
        self._find(pod, claims, node, r)
        # Empty is normalized to None (nil), as upstream does.
        pv = PodVolumes(static_bindings=r.static or None, dynamic_provisions=r.dynamic or None)
        reasons: List[str] = []
        if not r.bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not r.unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not r.sufficient_storage:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not r.pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return pv, reasons

    def _find(self, pod, claims: PodVolumeClaims, node, r: "_FindResult") -> None:
        if claims.bound_claims:
            r.bound_ok, r.pvs_found = self.check_bound_claims(claims.bound_claims, node)
        if claims.unbound_claims_delay_binding:
            to_match: List[KubeObject] = []
            to_provision: List[KubeObject] = []
            for claim in claims.unbound_claims_delay_binding:
                if ANN_SELECTED_NODE in claim.annotations:
                    if claim.annotations[ANN_SELECTED_NODE] != node.name:
                        r.unbound_ok = False  # fast path: provisioning started for another node
                        return
                    to_provision.append(claim)
                else:
                    to_match.append(claim)
            if to_match:
                r.unbound_ok, r.static, unbound = self.find_matching_volumes(
                    to_match, claims.unbound_volumes_delay_binding, node, claims.prepared)
                to_provision.extend(unbound)
            if to_provision:
                r.unbound_ok, r.sufficient_storage, r.dynamic = self.check_volume_provisions(
                    to_provision, node)

    def check_bound_claims(self, claims: List[KubeObject], node) -> Tuple[bool, bool]:
        """checkBoundClaims: (node affinity satisfied, all PVs found)."""
        csi_node = self._csi_node(node.name)
        label_node = labels_only_node(node)
        for pvc in claims:
            pv_name = spec_of(pvc).get("volumeName") or ""
            try:
                pv = self.pv_cache.get_pv(pv_name)
            except NotFoundError:
                return True, False
            pv = try_translate_pv_to_csi(pv, csi_node, self.enable_csi_migration_portworx)
            if check_node_affinity(pv, label_node) is not None:
                return False, True
        return True, True

    def find_matching_volumes(self, claims: List[KubeObject],
                              volumes_by_class: Dict[str, List[KubeObject]], node,
                              prepared: Optional[Dict[str, PreparedClaim]] = None
                              ) -> Tuple[bool, List[BindingInfo], List[KubeObject]]:
        """findMatchingVolumes: the smallest fitting PV for each claim, smallest claims first."""
        claims = sorted(claims, key=_by_pvc_size_key)
        chosen: Dict[str, KubeObject] = {}
        found = True
        bindings: List[BindingInfo] = []
        unbound: List[KubeObject] = []
        if prepared is None:
            prepared = {}
        for pvc in claims:
            key = claim_key(pvc)
            prep = prepared.get(key)
            if prep is None or prep.claim is not pvc:
                pvs = volumes_by_class.get(get_persistent_volume_claim_class(pvc), [])
                prep = prepared[key] = prepare_claim(pvc, pvs, self.enable_volume_attributes_class)
            pv = match_prepared_claim(prep, node, chosen)
            if pv is None:
                unbound.append(pvc)
                found = False
                continue
            chosen[pv.name] = pv
            bindings.append(BindingInfo(pvc=pvc, pv=pv))
        return found, bindings, unbound

    def check_volume_provisions(self, claims: List[KubeObject], node
                                ) -> Tuple[bool, bool, List[DynamicProvision]]:
        """checkVolumeProvisions: (provisioning possible, enough storage, provisions)."""
        provisions: List[DynamicProvision] = []
        for claim in claims:
            class_name = get_persistent_volume_claim_class(claim)
            if class_name == "":
                raise VolumeError(f'no class for claim "{claim_key(claim)}"')
            cls = self._class(class_name)
            if cls is None:
                raise VolumeError(f'failed to find storage class "{class_name}"')
            provisioner = cls.raw.get("provisioner") or ""
            if provisioner == "" or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(cls.raw.get("allowedTopologies"), node.labels):
                return False, True, []
            sufficient, capacity = self.has_enough_capacity(provisioner, claim, cls, node)
            if not sufficient:
                return True, False, []
            provisions.append(DynamicProvision(pvc=claim, node_capacity=capacity))
        return True, True, provisions

    def has_enough_capacity(self, provisioner: str, claim: KubeObject, cls: KubeObject, node
                            ) -> Tuple[bool, Optional[KubeObject]]:
        """hasEnoughCapacity: only for CSI drivers that opt into storage capacity tracking."""
        if not has_storage_request(claim):
            return True, None
        driver = self.cluster.get("CSIDriver", "", provisioner)
        if driver is None:
            return True, None
        if not (driver.raw.get("spec") or {}).get("storageCapacity"):
            return True, None
        size = quantity_value(((spec_of(claim).get("resources") or {}).get("requests") or {})["storage"])
        for capacity in self.cluster.list("CSIStorageCapacity"):
            if (capacity.raw.get("storageClassName") == cls.name
                    and capacity_sufficient(capacity, size)
                    and self.node_has_access(node, capacity)):
                return True, capacity
        return False, None

    @staticmethod
    def node_has_access(node, capacity: KubeObject) -> bool:
        topo = capacity.raw.get("nodeTopology")
        if topo is None:
            return False
        try:
            sel = from_label_selector(topo)
        except SelectorError:
            return False
        return sel.matches(node.labels)

    # reserve ----------------------------------------------------------------------------------
    def assume_pod_volumes(self, assumed_pod, node_name: str, pod_volumes: PodVolumes) -> bool:
        """AssumePodVolumes: True when all the pod's claims are already fully bound."""
        if self.are_pod_volumes_bound(assumed_pod):
            return True
        new_bindings: List[BindingInfo] = []
        for b in pod_volumes.static_bindings or []:
            new_pv, dirty = get_bind_volume_to_claim(b.pv, b.pvc)
            if dirty:
                try:
                    self.pv_cache.assume(new_pv)
                except VolumeError:
                    self.revert_assumed_pvs(new_bindings)
                    raise
            new_bindings.append(BindingInfo(pvc=b.pvc, pv=new_pv))
        new_provisions: List[DynamicProvision] = []
        for dp in pod_volumes.dynamic_provisions or []:
            clone = copy_object(dp.pvc)
            set_annotation(clone, ANN_SELECTED_NODE, node_name)
            try:
                self.pvc_cache.assume(clone)
            except VolumeError:
                self.revert_assumed_pvs(new_bindings)
                self.revert_assumed_pvcs([p.pvc for p in new_provisions])
                raise
            new_provisions.append(DynamicProvision(pvc=clone))
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = new_provisions
        return False

    def revert_assumed_pvs(self, bindings: List[BindingInfo]) -> None:
        for b in bindings:
            self.pv_cache.restore(b.pv.name)

    def revert_assumed_pvcs(self, claims: List[KubeObject]) -> None:
        for c in claims:
            self.pvc_cache.restore(claim_key(c))

    def revert_assumed_pod_volumes(self, pod_volumes: PodVolumes) -> None:
        """RevertAssumedPodVolumes."""
        self.revert_assumed_pvs(pod_volumes.static_bindings or [])
        self.revert_assumed_pvcs([dp.pvc for dp in pod_volumes.dynamic_provisions or []])

    # pre-bind ---------------------------------------------------------------------------------
    def bind_pod_volumes(self, assumed_pod, node_name: str, pod_volumes: PodVolumes) -> None:
        """BindPodVolumes with no time passing (see bind_pod_volumes_task). Raises VolumeError."""
        drive(self.bind_pod_volumes_task(assumed_pod, node_name, pod_volumes))

    def bind_pod_volumes_task(self, assumed_pod, node_name: str, pod_volumes: PodVolumes) -> Task:
        """BindPodVolumes, a task (framework/blocking.py): the API updates, which (the simulated)
        PV controller and provisioner complete at once, then wait.PollUntilContextTimeout(1s,
        bindTimeout, immediate false): the bindings are checked after each second of virtual
        time until they are complete or the timeout passes. Raises VolumeError."""
        bindings = pod_volumes.static_bindings
        claims = [dp.pvc for dp in pod_volumes.dynamic_provisions or []]
        self.bind_api_update(assumed_pod, bindings, claims)
        # The PV controller and the provisioner act on what the scheduler wrote.
        pv_controller.complete(self.cluster, bindings or [], claims, node_name)
        waited = 0
        while True:
            if waited + POLL_INTERVAL_SECONDS > self.bind_timeout_seconds:
                raise VolumeError("binding volumes: context deadline exceeded")
            yield POLL_INTERVAL_SECONDS
            waited += POLL_INTERVAL_SECONDS
            try:
                if self.check_bindings(assumed_pod, node_name, bindings, claims):
                    return None
            except VolumeError as e:
                raise VolumeError(f"binding volumes: {e}") from None

    def bind_api_update(self, pod, bindings: Optional[List[BindingInfo]],
                        claims: Optional[List[KubeObject]]) -> None:
        """bindAPIUpdate: write the prebound PVs and the claims to provision."""
        if bindings is None:
            raise VolumeError(f'failed to get cached bindings for pod "{pod_name(pod)}"')
        if claims is None:
            raise VolumeError(f'failed to get cached claims to provision for pod "{pod_name(pod)}"')
        done_bindings = 0
        done_claims = 0
        try:
            for b in bindings:
                b.pv = _api_update(self.cluster, b.pv, "persistentvolumes")
                done_bindings += 1
            for i, claim in enumerate(claims):
                claims[i] = _api_update(self.cluster, claim, "persistentvolumeclaims")
                done_claims += 1
        finally:
            if done_bindings < len(bindings):
                self.revert_assumed_pvs(bindings[done_bindings:])
            if done_claims < len(claims):
                self.revert_assumed_pvcs(claims[done_claims:])

    def check_bindings(self, pod, node_name: str, bindings: Optional[List[BindingInfo]],
                       claims: Optional[List[KubeObject]]) -> bool:
        """checkBindings: True when every PVC is fully bound; raises VolumeError when the
        binding must be retried."""
        if bindings is None:
            raise VolumeError(f'failed to get cached bindings for pod "{pod_name(pod)}"')
        if claims is None:
            raise VolumeError(f'failed to get cached claims to provision for pod "{pod_name(pod)}"')
        node = self.cluster.get("Node", "", node_name)
        if node is None:
            raise VolumeError(f'failed to get node "{node_name}": node "{node_name}" not found')
        csi_node = self._csi_node(node.name)
        label_node = labels_only_node(node)
        if self.cluster.get("Pod", pod.namespace, pod.name) is None:
            raise VolumeError(f'pod does not exist any more: pod "{pod.name}" not found')
        for b in bindings:
            try:
                pv = self.pv_cache.get_api_pv(b.pv.name)
                pvc = self.pvc_cache.get_api_pvc(claim_key(b.pvc))
            except NotFoundError as e:
                raise VolumeError(f"failed to check binding: {e}") from None
            if b.pv.resource_version > pv.resource_version:
                return False
            try:
                pv = try_translate_pv_to_csi(pv, csi_node, self.enable_csi_migration_portworx)
            except VolumeError as e:
                raise VolumeError(f"failed to translate pv to csi: {e}") from None
            err = check_node_affinity(pv, label_node)
            if err is not None:
                raise VolumeError(f'pv "{pv.name}" node affinity doesn\'t match node '
                                  f'"{node.name}": {err}')
            ref = spec_of(pv).get("claimRef")
            if ref is None or not ref.get("uid"):
                raise VolumeError(f'ClaimRef got reset for pv "{pv.name}"')
            if not self.is_pvc_fully_bound(pvc):
                return False
        for claim in claims:
            try:
                pvc = self.pvc_cache.get_api_pvc(claim_key(claim))
            except NotFoundError as e:
                raise VolumeError(f"failed to check provisioning pvc: {e}") from None
            if claim.resource_version > pvc.resource_version:
                return False
            if not (pvc.raw.get("metadata") or {}).get("annotations"):
                raise VolumeError(f'selectedNode annotation reset for PVC "{pvc.name}"')
            if pvc.annotations.get(ANN_SELECTED_NODE, "") != node_name:
                raise VolumeError(f'provisioning failed for PVC "{pvc.name}"')
            volume_name = spec_of(pvc).get("volumeName") or ""
            if volume_name:
                try:
                    pv = self.pv_cache.get_api_pv(volume_name)
                except NotFoundError:
                    return False
                pv = try_translate_pv_to_csi(pv, csi_node, self.enable_csi_migration_portworx)
                err = check_node_affinity(pv, label_node)
                if err is not None:
                    raise VolumeError(f'pv "{pv.name}" node affinity doesn\'t match node '
                                      f'"{node.name}": {err}')
            if not self.is_pvc_fully_bound(pvc):
                return False
        return True


@dataclass
class _FindResult:
    bound_ok: bool = True
    unbound_ok: bool = True
    sufficient_storage: bool = True
    pvs_found: bool = True
    static: List[BindingInfo] = field(default_factory=list)
    dynamic: List[DynamicProvision] = field(default_factory=list)


def _api_update(cluster, obj: KubeObject, resource: str) -> KubeObject:
    """An Update call of the API server: optimistic concurrency on resourceVersion; returns the
    stored object (a new resourceVersion)."""
    current = cluster.get(obj.kind, obj.namespace, obj.name)
    if current is None:
        raise VolumeError(f'{resource} "{obj.name}" not found')
    if current.resource_version != obj.resource_version:
        raise VolumeError(f'Operation cannot be fulfilled on {resource} "{obj.name}": the object '
                          f'has been modified; please apply your changes to the latest version '
                          f'and try again')
    new = copy_object(obj)
    if obj.kind == "PersistentVolume" or obj.kind == "PersistentVolumeClaim":
        # Update does not write status (it has its own subresource).
        if "status" in current.raw:
            new.raw["status"] = current.raw["status"]
        else:
            new.raw.pop("status", None)
    new = cluster.update(new)
    new.raw.setdefault("metadata", {})["resourceVersion"] = str(new.resource_version)
    return new
