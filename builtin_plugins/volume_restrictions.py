"""VolumeRestrictions (framework/plugins/volumerestrictions/volume_restrictions.go).

Filter rejects a node where a pod already mounts the same GCE PD (unless both read-only), AWS EBS
volume, ISCSI IQN (unless both read-only) or RBD image (overlapping monitors, same pool and image,
unless both read-only). PreFilter also counts the scheduled pods that use one of the pod's
ReadWriteOncePod claims; any such use rejects every node (Unschedulable, so preemption may help;
AddPod/RemovePod keep the count right during preemption).
"""

from __future__ import annotations

from typing import Any, FrozenSet, Iterable, Mapping, Optional

from harness.framework import signers
from harness.framework.status import SKIP
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               NotFoundError, Plugin, QueueingHint, Status, hookimpl)

from . import names

PRE_FILTER_STATE_KEY = "PreFilter" + names.VolumeRestrictions

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
    "in-use by another pod")

READ_WRITE_ONCE_POD = "ReadWriteOncePod"
# The API server defaults an RBD volume's pool to "rbd" (SetObjectDefaults_Pod).
DEFAULT_RBD_POOL = "rbd"


def _src(volume: Mapping[str, Any], key: str) -> Optional[Mapping[str, Any]]:
    v = volume.get(key)
    if v is None:
        return None
    return v if isinstance(v, Mapping) else {}


def have_overlap(a1: Iterable[str], a2: Iterable[str]) -> bool:
    """haveOverlap: at least one common element."""
    s = set(a1 or ())
    return any(v in s for v in (a2 or ()))


def _rbd_pool(rbd: Mapping[str, Any]) -> str:
    return rbd.get("pool") or DEFAULT_RBD_POOL


def is_volume_conflict(volume: Mapping[str, Any], pod) -> bool:
    """isVolumeConflict: does `volume` conflict with one of the volumes of `pod`?"""
    gce = _src(volume, "gcePersistentDisk")
    aws = _src(volume, "awsElasticBlockStore")
    iscsi = _src(volume, "iscsi")
    rbd = _src(volume, "rbd")
    for existing in pod.volumes:
        if gce is not None:
            egce = _src(existing, "gcePersistentDisk")
            if egce is not None:
                if (gce.get("pdName") or "") == (egce.get("pdName") or "") and not (
                        bool(gce.get("readOnly")) and bool(egce.get("readOnly"))):
                    return True
        if aws is not None:
            eaws = _src(existing, "awsElasticBlockStore")
            if eaws is not None:
                if (aws.get("volumeID") or "") == (eaws.get("volumeID") or ""):
                    return True
        if iscsi is not None:
            eiscsi = _src(existing, "iscsi")
            if eiscsi is not None:
                # same IQN: only read-only mounts may share it
                if (iscsi.get("iqn") or "") == (eiscsi.get("iqn") or "") and not (
                        bool(iscsi.get("readOnly")) and bool(eiscsi.get("readOnly"))):
                    return True
        if rbd is not None:
            erbd = _src(existing, "rbd")
            if erbd is not None:
                # same image: a shared monitor, same pool and image name
                if (have_overlap(rbd.get("monitors"), erbd.get("monitors"))
                        and _rbd_pool(rbd) == _rbd_pool(erbd)
                        and (rbd.get("image") or "") == (erbd.get("image") or "")
                        and not (bool(rbd.get("readOnly")) and bool(erbd.get("readOnly")))):
                    return True
    return False


def needs_restrictions_check(volume: Mapping[str, Any]) -> bool:
    return any(volume.get(k) is not None
               for k in ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi"))


def satisfy_volume_conflicts(pod, pods) -> bool:
    """satisfyVolumeConflicts over the pods of a node (an iterable of Pod)."""
    pods = list(pods)
    for v in pod.volumes:
        if not needs_restrictions_check(v):
            continue
        for ev in pods:
            if is_volume_conflict(v, ev):
                return False
    return True


def _claim_names(pod) -> list:
    out = []
    for v in pod.volumes:
        pvc = v.get("persistentVolumeClaim")
        if pvc is not None:
            out.append(pvc.get("claimName") or "")
    return out


class PreFilterState:
    """preFilterState: the pod's ReadWriteOncePod claim names and how many scheduled pods use
    them."""

    __slots__ = ("read_write_once_pod_pvcs", "conflicting_pvc_ref_count")

    def __init__(self, pvcs: FrozenSet[str], count: int):
        self.read_write_once_pod_pvcs = pvcs
        self.conflicting_pvc_ref_count = count

    def conflicting_pvc_ref_count_for_pod(self, pod) -> int:
        return sum(1 for name in _claim_names(pod) if name in self.read_write_once_pod_pvcs)

    def update_with_pod(self, pod, multiplier: int) -> None:
        self.conflicting_pvc_ref_count += multiplier * self.conflicting_pvc_ref_count_for_pod(pod)

    def clone(self) -> "PreFilterState":
        return PreFilterState(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count)


class VolumeRestrictions(Plugin):
    name = names.VolumeRestrictions

    @hookimpl
    def sign_pod(self, pod):
        """SignPod: the pod's volume sources but configMap and secret ones."""
        return [(signers.VOLUMES_SIGNER_NAME, signers.volumes_signer(pod))], None

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        needs_check = any(needs_restrictions_check(v) for v in pod.volumes)
        # readWriteOncePodPVCsForPod
        pvcs = set()
        cluster = self.handle.cluster
        for claim in _claim_names(pod):
            pvc = cluster.get("PersistentVolumeClaim", pod.namespace, claim)
            if pvc is None:
                return None, Status.unresolvable(f'persistentvolumeclaim "{claim}" not found')
            if READ_WRITE_ONCE_POD not in (pvc.spec.get("accessModes") or []):
                continue
            pvcs.add(pvc.name)
        # calPreFilterState: at most one pod can use a ReadWriteOncePod claim
        snapshot = self.handle.snapshot
        count = sum(1 for name in pvcs if snapshot.is_pvc_used_by_pods(f"{pod.namespace}/{name}"))
        if not needs_check and count == 0:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(frozenset(pvcs), count))
        return None, None

    def _state(self, state) -> PreFilterState:
        try:
            return state.read(PRE_FILTER_STATE_KEY)
        except NotFoundError:
            raise RuntimeError(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState') from None

    @hookimpl
    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info):
        try:
            s = self._state(state)
        except RuntimeError as e:
            return Status.error(e)
        s.update_with_pod(pod_info_to_add.pod, 1)
        return None

    @hookimpl
    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info):
        try:
            s = self._state(state)
        except RuntimeError as e:
            return Status.error(e)
        s.update_with_pod(pod_info_to_remove.pod, -1)
        return None

    @hookimpl
    def filter(self, state, pod, node_info):
        if not satisfy_volume_conflicts(pod, (pi.pod for pi in node_info.pods)):
            return Status.unschedulable(ERR_REASON_DISK_CONFLICT)
        try:
            s = self._state(state)
        except RuntimeError as e:
            return Status.error(e)
        if s.conflicting_pvc_ref_count > 0:
            return Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None

    # ---- queueing ----------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self):
        # SchedulerQueueingHints is on in v1.34: Node/Add only.
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete),
                                 self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add),
                                 self.is_schedulable_after_persistent_volume_claim_added),
        ]

    def is_schedulable_after_persistent_volume_claim_added(self, pod, old_obj, new_obj):
        if new_obj is None or not hasattr(new_obj, "raw"):
            return QueueingHint.Queue
        if new_obj.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        if new_obj.name in _claim_names(pod):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_deleted(self, pod, old_obj, new_obj):
        deleted = old_obj
        if deleted is None or not hasattr(deleted, "volumes"):
            return QueueingHint.Queue
        if deleted.namespace != pod.namespace:
            return QueueingHint.QueueSkip
        if not satisfy_volume_conflicts(pod, [deleted]):
            return QueueingHint.Queue
        # a deleted pod using the same claim (its ReadWriteOncePod mode is not checked)
        claims = set(_claim_names(pod))
        for name in _claim_names(deleted):
            if name in claims:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip


PLUGINS = [VolumeRestrictions]
