"""VolumeZone (framework/plugins/volumezone/volume_zone.go).

PreFilter collects the zone/region labels of the PersistentVolumes bound to the pod's claims
(unbound WaitForFirstConsumer claims are skipped); Filter rejects a node that has any topology
label but whose value for one of those PV labels is missing or not among the PV's zones.
"""

from __future__ import annotations

from typing import FrozenSet, List, Optional, Tuple

from harness.framework import signers
from harness.framework.status import SKIP
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               NotFoundError, Plugin, QueueingHint, Status, hookimpl)

from . import names

PRE_FILTER_STATE_KEY = "PreFilter" + names.VolumeZone

ERR_REASON_CONFLICT = "node(s) had no available volume zone"

LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"

# The order upstream checks them in.
TOPOLOGY_LABELS = (
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_TOPOLOGY_ZONE,
    LABEL_TOPOLOGY_REGION,
)

# cloud-provider volume.LabelMultiZoneDelimiter
LABEL_MULTI_ZONE_DELIMITER = "__"

BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
VOLUME_BINDING_WAIT = "WaitForFirstConsumer"
VOLUME_BINDING_IMMEDIATE = "Immediate"


def translate_to_ga_label(label: str) -> str:
    if label == LABEL_FAILURE_DOMAIN_BETA_REGION:
        return LABEL_TOPOLOGY_REGION
    if label == LABEL_FAILURE_DOMAIN_BETA_ZONE:
        return LABEL_TOPOLOGY_ZONE
    return label


def label_zones_to_set(value: str) -> Optional[FrozenSet[str]]:
    """volumehelpers.LabelZonesToSet; None stands for its parse error (an empty element)."""
    out = set()
    for zone in value.split(LABEL_MULTI_ZONE_DELIMITER):
        z = zone.strip()
        if z == "":
            return None
        out.add(z)
    return frozenset(out)


class PVTopology:
    """pvTopology: one zone/region label of a PV."""

    __slots__ = ("pv_name", "key", "values")

    def __init__(self, pv_name: str, key: str, values: FrozenSet[str]):
        self.pv_name = pv_name
        self.key = key
        self.values = values

    def __eq__(self, other) -> bool:
        return (isinstance(other, PVTopology) and self.pv_name == other.pv_name
                and self.key == other.key and self.values == other.values)

    def __repr__(self) -> str:
        return f"PVTopology({self.pv_name}, {self.key}, {sorted(self.values)})"


def get_pv_topologies(pv) -> List[PVTopology]:
    """getPVTopologies: the PV's topology labels that parse (others are ignored)."""
    out: List[PVTopology] = []
    for key in TOPOLOGY_LABELS:
        if key in pv.labels:
            values = label_zones_to_set(pv.labels[key])
            if values is None:
                continue
            out.append(PVTopology(pv.name, key, values))
    return out


def pvc_names_of_pod(pod) -> List[str]:
    """getPersistentVolumeClaimNameFromPod."""
    out = []
    for v in pod.volumes:
        pvc = v.get("persistentVolumeClaim")
        if pvc is None:
            continue
        out.append(pvc.get("claimName") or "")
    return out


def claim_class(pvc) -> str:
    """storagehelpers.GetPersistentVolumeClaimClass: the beta annotation first."""
    if BETA_STORAGE_CLASS_ANNOTATION in pvc.annotations:
        return pvc.annotations[BETA_STORAGE_CLASS_ANNOTATION] or ""
    name = pvc.spec.get("storageClassName")
    return name if name is not None else ""


def binding_mode(sc) -> Optional[str]:
    """StorageClass.volumeBindingMode as the API server stores it: it defaults an absent mode to
    Immediate (SetDefaults_StorageClass), so only an explicit null stays unset."""
    raw = sc.raw
    if "volumeBindingMode" not in raw:
        return VOLUME_BINDING_IMMEDIATE
    return raw.get("volumeBindingMode")


class _State:
    """stateData; never changed after PreFilter, so Clone returns itself."""

    __slots__ = ("pod_pv_topologies",)

    def __init__(self, topologies: List[PVTopology]):
        self.pod_pv_topologies = topologies

    def clone(self) -> "_State":
        return self


class VolumeZone(Plugin):
    name = names.VolumeZone

    # ---- lookups -----------------------------------------------------------------------------
    def _get_pv_by_pod(self, pod) -> Tuple[Optional[List[PVTopology]], Optional[Status]]:
        """getPVbyPod."""
        cluster = self.handle.cluster
        topologies: List[PVTopology] = []
        for pvc_name in pvc_names_of_pod(pod):
            if pvc_name == "":
                return None, Status.unresolvable("PersistentVolumeClaim had no name")
            pvc = cluster.get("PersistentVolumeClaim", pod.namespace, pvc_name)
            if pvc is None:
                return None, Status.unresolvable(f'persistentvolumeclaim "{pvc_name}" not found')
            pv_name = pvc.spec.get("volumeName") or ""
            if pv_name == "":
                sc_name = claim_class(pvc)
                if not sc_name:
                    return None, Status.unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name")
                sc = cluster.get("StorageClass", "", sc_name)
                if sc is None:
                    return None, Status.unresolvable(
                        f'storageclass.storage.k8s.io "{sc_name}" not found')
                mode = binding_mode(sc)
                if mode is None:
                    return None, Status.unresolvable(
                        f'VolumeBindingMode not set for StorageClass "{sc_name}"')
                if mode == VOLUME_BINDING_WAIT:
                    continue  # unbound volumes are skipped
                return None, Status.unresolvable("PersistentVolume had no name")
            pv = cluster.get("PersistentVolume", "", pv_name)
            if pv is None:
                return None, Status.unresolvable(f'persistentvolume "{pv_name}" not found')
            topologies.extend(get_pv_topologies(pv))
        return topologies, None

    # ---- extension points --------------------------------------------------------------------
    @hookimpl
    def sign_pod(self, pod):
        """SignPod: the pod's volume sources but configMap and secret ones."""
        return [(signers.VOLUMES_SIGNER_NAME, signers.volumes_signer(pod))], None

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        topologies, status = self._get_pv_by_pod(pod)
        if status is not None:
            return None, status
        if not topologies:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, _State(topologies))
        return None, None

    @hookimpl
    def filter(self, state, pod, node_info):
        if not pod.volumes:
            return None
        try:
            topologies = state.read(PRE_FILTER_STATE_KEY).pod_pv_topologies
        except NotFoundError:
            # fall back to computing the PV list here
            topologies, status = self._get_pv_by_pod(pod)
            if status is not None:
                return status
        node_labels = node_info.node.labels
        if not any(label in node_labels for label in TOPOLOGY_LABELS):
            # a node without zone constraints (single-zone cluster) is fine
            return None
        for t in topologies:
            v = node_labels.get(t.key)
            if v is None:
                # a PV's beta label may match the node's GA label
                v = node_labels.get(translate_to_ga_label(t.key))
            if v is None or v not in t.values:
                return Status.unresolvable(ERR_REASON_CONFLICT)
        return None

    # ---- queueing ----------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self):
        # SchedulerQueueingHints is on in v1.34: Node Add|UpdateNodeLabel (no UpdateNodeTaint).
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.StorageClass, ActionType.Add),
                                 self.is_schedulable_after_storage_class_added),
            ClusterEventWithHint(ClusterEvent(EventResource.Node,
                                              ActionType.Add | ActionType.UpdateNodeLabel)),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolumeClaim,
                                              ActionType.Add | ActionType.Update),
                                 self.is_schedulable_after_persistent_volume_claim_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PersistentVolume,
                                              ActionType.Add | ActionType.Update),
                                 self.is_schedulable_after_persistent_volume_change),
        ]

    def is_schedulable_after_persistent_volume_claim_change(self, pod, old_obj, new_obj):
        if new_obj is None or not hasattr(new_obj, "raw"):
            return QueueingHint.Queue  # unexpected objects
        if new_obj.namespace == pod.namespace and new_obj.name in pvc_names_of_pod(pod):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_storage_class_added(self, pod, old_obj, new_obj):
        if new_obj is None or not hasattr(new_obj, "raw"):
            return QueueingHint.Queue
        if binding_mode(new_obj) != VOLUME_BINDING_WAIT:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_persistent_volume_change(self, pod, old_obj, new_obj):
        if new_obj is None or not hasattr(new_obj, "raw"):
            return QueueingHint.Queue
        if old_obj is None:
            return QueueingHint.Queue  # a new PV
        if not hasattr(old_obj, "raw"):
            return QueueingHint.Queue
        if get_pv_topologies(old_obj) != get_pv_topologies(new_obj):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip


PLUGINS = [VolumeZone]
