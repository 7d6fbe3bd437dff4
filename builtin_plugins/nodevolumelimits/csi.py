"""NodeVolumeLimits, upstream's CSILimits (framework/plugins/nodevolumelimits/csi.go, utils.go).

Filter counts, per CSI driver, the distinct volumes ("driver/volumeHandle") the pod would add to
a node and those already there (the node's pods' volumes and its VolumeAttachments), and rejects
the node when a driver's count would exceed the `allocatable.count` its CSINode reports for it.
Volumes counted: PVCs bound to a CSI PV, unbound PVCs through their StorageClass's provisioner,
generic ephemeral volumes (their PVC), and in-tree volumes (PV or inline) that migrate to a CSI
driver (csi-translation-lib). v1.34 reads limits from CSINode only, not from the node's
`attachable-volumes-*` allocatable.
"""

from __future__ import annotations

import random
from typing import Any, Dict, List, Mapping, Optional, Tuple

from harness.framework import signers
from harness.framework.status import SKIP
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               Plugin, QueueingHint, Status, hookimpl)

from .. import names
from .. import csitranslation as csitrans
from ..helper import features_of

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"

# Per-cycle lookups (not part of upstream's state; Filter alone reads them).
_CACHE_KEY = "NodeVolumeLimits/cycle-cache"

# CSIMigrationPortworx is GA and locked on in v1.34.
ENABLE_CSI_MIGRATION_PORTWORX = True

_RAND_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand


def _random_string(n: int) -> str:
    rng = random.Random()
    return "".join(rng.choice(_RAND_ALPHANUMS) for _ in range(n))


class _NotFoundError(Exception):
    """An error apierrors.IsNotFound recognises (a missing PVC of the pod being scheduled)."""


class _FilterError(Exception):
    pass


# ---- helpers ---------------------------------------------------------------------------------
def is_csi_migration_on(csi_node, plugin_name: str,
                        enable_portworx: bool = ENABLE_CSI_MIGRATION_PORTWORX,
                        portworx_without_annotation: bool = False) -> bool:
    """isCSIMigrationOn. v1.36 (CSIMigrationPortworx removed, `portworx_without_annotation`):
    Portworx is migrated like the other in-tree plugins, without the CSINode annotation."""
    if csi_node is None or not plugin_name:
        return False
    if plugin_name in (csitrans.AWS_EBS_IN_TREE_PLUGIN_NAME, csitrans.GCE_PD_IN_TREE_PLUGIN_NAME,
                       csitrans.AZURE_DISK_IN_TREE_PLUGIN_NAME,
                       csitrans.CINDER_IN_TREE_PLUGIN_NAME):
        return True
    if plugin_name != csitrans.PORTWORX_VOLUME_PLUGIN_NAME or not enable_portworx:
        return False
    if portworx_without_annotation:
        return True
    # the plugin must be listed as migrated in the CSINode's annotation
    return csitrans.is_plugin_migrated_to_csi_on_node(plugin_name, csi_node)


def get_volume_limits(csi_node) -> Dict[str, int]:
    """getVolumeLimits: driver -> allocatable count, for drivers that report one."""
    out: Dict[str, int] = {}
    if csi_node is None:
        return out
    for d in csi_node.spec.get("drivers") or []:
        alloc = d.get("allocatable")
        if alloc is not None and alloc.get("count") is not None:
            out[d.get("name") or ""] = int(alloc["count"])
    return out


def claim_class(pvc) -> str:
    """storagehelpers.GetPersistentVolumeClaimClass."""
    if BETA_STORAGE_CLASS_ANNOTATION in pvc.annotations:
        return pvc.annotations[BETA_STORAGE_CLASS_ANNOTATION] or ""
    name = pvc.spec.get("storageClassName")
    return name if name is not None else ""


def ephemeral_claim_name(pod, volume: Mapping[str, Any]) -> str:
    """ephemeral.VolumeClaimName."""
    return f"{pod.name}-{volume.get('name') or ''}"


def _controller_uid(obj) -> Optional[str]:
    for ref in obj.raw.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref.get("uid") or ""
    return None


def volume_is_for_pod(pod, pvc) -> None:
    """ephemeral.VolumeIsForPod: raises unless the PVC is controlled by the pod."""
    if pvc.namespace != pod.namespace or _controller_uid(pvc) != pod.uid:
        raise _FilterError(f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                           f"{pod.namespace}/{pod.name} (pod is not owner)")


def volume_unique_name(driver: str, handle: str) -> str:
    return f"{driver}/{handle}"


def _attachable_volumes(pod) -> List[Tuple[str, Mapping[str, Any], str]]:
    """The pod's volumes Filter looks at, as (kind, volume, claim name): PVC, ephemeral, or an
    in-tree inline volume that migrates to CSI. Others never count."""

    def compute(p):
        out = []
        for v in p.volumes:
            pvc = v.get("persistentVolumeClaim")
            if pvc is not None:
                out.append(("pvc", v, (pvc.get("claimName") or "") if isinstance(pvc, dict) else ""))
            elif v.get("ephemeral") is not None:
                out.append(("ephemeral", v, ephemeral_claim_name(p, v)))
            elif csitrans.is_inline_migratable(v):
                out.append(("inline", v, ""))
        return out

    return pod.memo("nodevolumelimits.attachable_volumes", compute)


class _CycleCache:
    __slots__ = ("new_volumes", "va_by_node")

    def __init__(self) -> None:
        # migration key -> (volumes dict or None, error status or None)
        self.new_volumes: Dict[Any, Tuple[Optional[Dict[str, str]], Optional[Status]]] = {}
        self.va_by_node: Optional[Dict[str, Dict[str, str]]] = None


class CSILimits(Plugin):
    name = names.NodeVolumeLimits

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.enable_csi_migration_portworx = ENABLE_CSI_MIGRATION_PORTWORX
        self.portworx_without_annotation = features_of(handle).has("PortworxMigratedWithoutAnnotation")
        self.random_volume_id_prefix = _random_string(32)

    # ---- volume discovery --------------------------------------------------------------------
    def _migration_on(self, csi_node, plugin_name: str) -> bool:
        return is_csi_migration_on(csi_node, plugin_name, self.enable_csi_migration_portworx,
                                   self.portworx_without_annotation)

    def filter_attachable_volumes(self, pod, csi_node, new_pod: bool, result: Dict[str, str]) -> None:
        """filterAttachableVolumes: adds "driver/handle" -> driver for the pod's counted
        volumes; raises _NotFoundError / _FilterError."""
        cluster = self.handle.cluster
        for kind, vol, pvc_name in _attachable_volumes(pod):
            if kind == "inline":
                self._check_attachable_inline_volume(vol, csi_node, pod, result)
                continue
            if pvc_name == "":
                raise _FilterError("PersistentVolumeClaim had no name")
            pvc = cluster.get("PersistentVolumeClaim", pod.namespace, pvc_name)
            if pvc is None:
                if new_pod:
                    # the pod cannot run without it
                    raise _NotFoundError(f"looking up PVC {pod.namespace}/{pvc_name}: "
                                         f'persistentvolumeclaim "{pvc_name}" not found')
                continue  # not counted
            if kind == "ephemeral":
                volume_is_for_pod(pod, pvc)
            driver, handle = self._get_csi_driver_info(csi_node, pvc)
            if driver == "" or handle == "":
                continue
            result[volume_unique_name(driver, handle)] = driver

    def _check_attachable_inline_volume(self, vol, csi_node, pod, result: Dict[str, str]) -> None:
        """checkAttachableInlineVolume."""
        if not csitrans.is_inline_migratable(vol):
            return
        try:
            plugin_name = csitrans.get_in_tree_plugin_name_from_volume(vol)
        except csitrans.TranslationError as e:
            raise _FilterError(
                f"looking up provisioner name for volume {vol.get('name') or ''}: {e}") from None
        if not self._migration_on(csi_node, plugin_name):
            return
        try:
            _, handle = csitrans.translate_in_tree_inline_volume_to_csi(vol, pod.namespace)
        except csitrans.TranslationError as e:
            raise _FilterError(
                f"converting volume({vol.get('name') or ''}) from inline to csi: {e}") from None
        try:
            driver = csitrans.get_csi_name_from_in_tree_name(plugin_name)
        except csitrans.TranslationError as e:
            raise _FilterError(
                f"looking up CSI driver name for provisioner {plugin_name}: {e}") from None
        result[volume_unique_name(driver, handle)] = driver

    def _get_csi_driver_info(self, csi_node, pvc) -> Tuple[str, str]:
        """getCSIDriverInfo: the CSI driver and volume handle of a claim (of the CSI driver an
        in-tree PV migrates to)."""
        pv_name = pvc.spec.get("volumeName") or ""
        if pv_name == "":
            return self._get_csi_driver_info_from_sc(csi_node, pvc)
        pv = self.handle.cluster.get("PersistentVolume", "", pv_name)
        if pv is None:
            # deleted, or the claim is pre-bound to a PV not created yet: count by class
            return self._get_csi_driver_info_from_sc(csi_node, pvc)
        csi = pv.spec.get("csi")
        if csi is None:
            if not csitrans.is_pv_migratable(pv):
                return "", ""
            try:
                plugin_name = csitrans.get_in_tree_plugin_name_from_pv(pv)
            except csitrans.TranslationError:
                return "", ""
            if not self._migration_on(csi_node, plugin_name):
                return "", ""
            try:
                return csitrans.translate_in_tree_pv_to_csi(pv)
            except csitrans.TranslationError:
                return "", ""
        return csi.get("driver") or "", csi.get("volumeHandle") or ""

    def _get_csi_driver_info_from_sc(self, csi_node, pvc) -> Tuple[str, str]:
        """getCSIDriverInfoFromSC: the class's provisioner and a handle unique to the claim."""
        sc_name = claim_class(pvc)
        if sc_name == "":
            return "", ""  # immediate binding: bound before scheduling
        sc = self.handle.cluster.get("StorageClass", "", sc_name)
        if sc is None:
            return "", ""
        handle = f"{self.random_volume_id_prefix}-{pvc.namespace}/{pvc.name}"
        provisioner = sc.raw.get("provisioner") or ""
        if csitrans.is_migratable_intree_plugin_by_name(provisioner):
            if not self._migration_on(csi_node, provisioner):
                return "", ""
            return csitrans.get_csi_name_from_in_tree_name(provisioner), handle
        return provisioner, handle

    def _node_volume_attachments(self, cache: _CycleCache, node_name: str) -> Dict[str, str]:
        """getNodeVolumeAttachmentInfo (all nodes at once, once per cycle)."""
        if cache.va_by_node is None:
            by_node: Dict[str, Dict[str, str]] = {}
            cluster = self.handle.cluster
            for va in cluster.list("VolumeAttachment"):
                spec = va.spec
                attacher = spec.get("attacher") or ""
                if attacher == "":
                    continue
                pv_name = (spec.get("source") or {}).get("persistentVolumeName")
                if pv_name is None:
                    continue
                pv = cluster.get("PersistentVolume", "", pv_name)
                if pv is None:
                    continue
                csi = pv.spec.get("csi")
                if csi is None:
                    continue
                by_node.setdefault(spec.get("nodeName") or "", {})[
                    volume_unique_name(attacher, csi.get("volumeHandle") or "")] = attacher
            cache.va_by_node = by_node
        return cache.va_by_node.get(node_name, {})

    def _cache(self, state) -> _CycleCache:
        c = state.get(_CACHE_KEY) if state is not None else None
        if c is None:
            c = _CycleCache()
            if state is not None:
                state.write(_CACHE_KEY, c)
        return c

    # ---- extension points --------------------------------------------------------------------
    @hookimpl
    def sign_pod(self, pod):
        """SignPod: the pod's volume sources but configMap and secret ones."""
        return [(signers.VOLUMES_SIGNER_NAME, signers.volumes_signer(pod))], None

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        for v in pod.volumes:
            if (v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None
                    or csitrans.is_inline_migratable(v)):
                return None, None
        return None, SKIP

    @hookimpl
    def filter(self, state, pod, node_info):
        if not pod.volumes:
            return None
        node = node_info.node
        cluster = self.handle.cluster
        csi_node = cluster.get("CSINode", "", node.name)
        cache = self._cache(state)

        # the pod's CSI volumes (they depend on the CSINode only through migration)
        mkey = None if csi_node is None else self._migration_on(
            csi_node, csitrans.PORTWORX_VOLUME_PLUGIN_NAME)
        hit = cache.new_volumes.get(mkey)
        if hit is None:
            vols: Dict[str, str] = {}
            try:
                self.filter_attachable_volumes(pod, csi_node, True, vols)
                hit = (vols, None)
            except _NotFoundError as e:
                hit = (None, str(e))  # will never be schedulable until the PVC exists
            except _FilterError as e:
                hit = (None, e)
            cache.new_volumes[mkey] = hit
        vols, err = hit
        if err is not None:
            if isinstance(err, str):
                return Status.unresolvable(err)
            return Status.error(RuntimeError(str(err)))
        if not vols:
            return None
        new_volumes = dict(vols)

        limits = get_volume_limits(csi_node)
        if not limits:
            return None

        # the volumes of the pods on the node
        attached: Dict[str, str] = {}
        for pi in node_info.pods:
            try:
                self.filter_attachable_volumes(pi.pod, csi_node, False, attached)
            except (_NotFoundError, _FilterError) as e:
                return Status.error(RuntimeError(str(e)))
        attached_count: Dict[str, int] = {}
        for unique, driver in attached.items():
            new_volumes.pop(unique, None)  # one volume in several pods counts once
            attached_count[driver] = attached_count.get(driver, 0) + 1

        # VolumeAttachments of volumes no pod there uses
        for unique, driver in self._node_volume_attachments(cache, node.name).items():
            if unique not in attached:
                attached_count[driver] = attached_count.get(driver, 0) + 1

        new_count: Dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None

    # ---- queueing ----------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self):
        return [
            # any new CSINode may make a pod schedulable: no hint
            ClusterEventWithHint(ClusterEvent(EventResource.CSINode, ActionType.Add)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSINode, ActionType.Update),
                                 self.is_schedulable_after_csi_node_updated),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete),
                                 self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
                                 self.is_schedulable_after_pvc_added),
            ClusterEventWithHint(ClusterEvent(EventResource.VolumeAttachment, ActionType.Delete),
                                 self.is_schedulable_after_volume_attachment_deleted),
        ]

    def is_schedulable_after_pod_deleted(self, pod, old_obj, new_obj):
        deleted = old_obj
        if deleted is None or not hasattr(deleted, "volumes"):
            return QueueingHint.Queue
        if not deleted.volumes:
            return QueueingHint.QueueSkip
        if not deleted.node_name and not deleted.nominated_node_name:
            return QueueingHint.QueueSkip
        for v in deleted.volumes:
            if (v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None
                    or csitrans.is_inline_migratable(v)):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pvc_added(self, pod, old_obj, new_obj):
        added = new_obj
        if added is None or not hasattr(added, "raw"):
            return QueueingHint.Queue
        if added.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        for v in pod.volumes:
            pvc = v.get("persistentVolumeClaim")
            if pvc is not None:
                name = pvc.get("claimName") or ""
            elif v.get("ephemeral") is not None:
                name = ephemeral_claim_name(pod, v)
            else:
                continue
            if name == added.name:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_volume_attachment_deleted(self, pod, old_obj, new_obj):
        va = old_obj
        if va is None or not hasattr(va, "raw"):
            return QueueingHint.Queue
        attacher = va.spec.get("attacher") or ""
        for v in pod.volumes:
            if v.get("persistentVolumeClaim") is not None:
                return QueueingHint.Queue
            if not csitrans.is_inline_migratable(v):
                continue
            try:
                driver, _ = csitrans.translate_in_tree_inline_volume_to_csi(v, pod.namespace)
            except csitrans.TranslationError:
                return QueueingHint.Queue
            if attacher == driver:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_csi_node_updated(self, pod, old_obj, new_obj):
        if old_obj is None or new_obj is None or not hasattr(old_obj, "raw") \
                or not hasattr(new_obj, "raw"):
            return QueueingHint.Queue

        def count(d) -> int:
            alloc = d.get("allocatable")
            if alloc is not None and alloc.get("count") is not None:
                return int(alloc["count"])
            return 0

        old_limits = {d.get("name") or "": count(d) for d in old_obj.spec.get("drivers") or []}
        for d in new_obj.spec.get("drivers") or []:
            if count(d) > old_limits.get(d.get("name") or "", 0):
                return QueueingHint.Queue  # a driver's limit went up
        return QueueingHint.QueueSkip


NodeVolumeLimits = CSILimits
