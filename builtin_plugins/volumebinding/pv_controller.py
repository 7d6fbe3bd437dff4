"""The simulated PV controller and external provisioner (not part of kube-scheduler).

In a cluster, after VolumeBinding's PreBind writes a PV's claimRef (static binding) or a PVC's
`volume.kubernetes.io/selected-node` annotation (provisioning), kube-controller-manager's PV
controller, and for provisioning the CSI external-provisioner, finish the job while PreBind
polls. The harness has no controllers, so the simulated API server finishes it here,
synchronously, and PreBind's check then finds every claim bound:

- static binding: the PV becomes phase Bound; the PVC gets spec.volumeName, the
  `pv.kubernetes.io/bind-completed` and `pv.kubernetes.io/bound-by-controller` annotations and
  status Bound (capacity and access modes of the PV).
- provisioning: a PV `pvc-<claim uid>` is created, bound to the claim: the claim's requested
  size, access modes and volume mode, the class's reclaim policy and mount options, a `csi`
  source of the provisioner, and node affinity on the selected node's topology: the
  topologyKeys the node's CSINode lists for the driver, else the keys of the class's
  allowedTopologies, else `kubernetes.io/hostname` (each with the node's value). Then the claim
  is bound to it as above, with the storage-provisioner annotations.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

from harness.api.objects import KubeObject

from .pv_helpers import (ANN_BETA_STORAGE_PROVISIONER, ANN_BIND_COMPLETED,
                         ANN_BOUND_BY_CONTROLLER, ANN_DYNAMICALLY_PROVISIONED, ANN_SELECTED_NODE,
                         ANN_STORAGE_PROVISIONER, CLAIM_BOUND, NOT_SUPPORTED_PROVISIONER,
                         PERSISTENT_VOLUME_FILESYSTEM, VOLUME_BOUND, claim_reference, copy_object,
                         get_persistent_volume_claim_class, is_volume_bound_to_claim,
                         set_annotation, spec_of)

LABEL_HOSTNAME = "kubernetes.io/hostname"


def _store(cluster, obj: KubeObject, create: bool = False) -> KubeObject:
    obj = cluster.create(obj) if create else cluster.update(obj)
    obj.raw.setdefault("metadata", {})["resourceVersion"] = str(obj.resource_version)
    return obj


def _bind_claim(cluster, pvc: KubeObject, pv: KubeObject, provisioner: str = "") -> None:
    """bindClaimToVolume + updateClaimStatus."""
    if spec_of(pvc).get("volumeName") == pv.name and ANN_BIND_COMPLETED in pvc.annotations \
            and (pvc.raw.get("status") or {}).get("phase") == CLAIM_BOUND:
        return
    new = copy_object(pvc)
    new.raw.setdefault("spec", {})["volumeName"] = pv.name
    if provisioner:
        set_annotation(new, ANN_BETA_STORAGE_PROVISIONER, provisioner)
        set_annotation(new, ANN_STORAGE_PROVISIONER, provisioner)
    set_annotation(new, ANN_BOUND_BY_CONTROLLER, "yes")
    set_annotation(new, ANN_BIND_COMPLETED, "yes")
    pv_spec = spec_of(pv)
    status: Dict[str, Any] = dict(new.raw.get("status") or {})
    status["phase"] = CLAIM_BOUND
    if pv_spec.get("accessModes") is not None:
        status["accessModes"] = list(pv_spec["accessModes"])
    if pv_spec.get("capacity") is not None:
        status["capacity"] = dict(pv_spec["capacity"])
    new.raw["status"] = status
    _store(cluster, new)


def _set_volume_bound(cluster, pv: KubeObject) -> KubeObject:
    if (pv.raw.get("status") or {}).get("phase") == VOLUME_BOUND:
        return pv
    new = copy_object(pv)
    status = dict(new.raw.get("status") or {})
    status["phase"] = VOLUME_BOUND
    new.raw["status"] = status
    return _store(cluster, new)


def complete_static_binding(cluster, pv_name: str, namespace: str, claim_name: str) -> None:
    """The PV controller binds a claim to the PV the scheduler pre-bound to it."""
    pv = cluster.get("PersistentVolume", "", pv_name)
    pvc = cluster.get("PersistentVolumeClaim", namespace, claim_name)
    if pv is None or pvc is None or not is_volume_bound_to_claim(pv, pvc):
        return
    if spec_of(pvc).get("volumeName") not in (None, "", pv_name):
        return
    pv = _set_volume_bound(cluster, pv)
    _bind_claim(cluster, pvc, pv)


def _topology_keys(cluster, node: KubeObject, provisioner: str, cls: KubeObject) -> List[str]:
    csi_node = cluster.get("CSINode", "", node.name)
    if csi_node is not None:
        for d in (csi_node.raw.get("spec") or {}).get("drivers") or []:
            if d.get("name") == provisioner and d.get("topologyKeys"):
                return [str(k) for k in d["topologyKeys"]]
    keys: List[str] = []
    for term in cls.raw.get("allowedTopologies") or []:
        for e in (term or {}).get("matchLabelExpressions") or []:
            k = e.get("key")
            if k and k not in keys:
                keys.append(k)
    if keys:
        return keys
    return [LABEL_HOSTNAME]


def provisioned_volume(cluster, pvc: KubeObject, cls: KubeObject, node: Optional[KubeObject]
                       ) -> KubeObject:
    """The PV the provisioner creates for the claim on the selected node."""
    provisioner = cls.raw.get("provisioner") or ""
    cspec = spec_of(pvc)
    name = f"pvc-{pvc.uid}" if pvc.uid else f"pvc-{pvc.namespace}-{pvc.name}"
    spec: Dict[str, Any] = {
        "accessModes": list(cspec.get("accessModes") or []),
        "claimRef": claim_reference(pvc),
        "persistentVolumeReclaimPolicy": cls.raw.get("reclaimPolicy") or "Delete",
        "storageClassName": cls.name,
        "volumeMode": cspec.get("volumeMode") or PERSISTENT_VOLUME_FILESYSTEM,
        "csi": {"driver": provisioner, "volumeHandle": name},
    }
    request = ((cspec.get("resources") or {}).get("requests") or {}).get("storage")
    if request is not None:
        spec["capacity"] = {"storage": request}
    if cls.raw.get("mountOptions"):
        spec["mountOptions"] = list(cls.raw["mountOptions"])
    if cspec.get("volumeAttributesClassName"):
        spec["volumeAttributesClassName"] = cspec["volumeAttributesClassName"]
    if node is not None:
        exprs = []
        for key in _topology_keys(cluster, node, provisioner, cls):
            if key in node.labels:
                exprs.append({"key": key, "operator": "In", "values": [node.labels[key]]})
        if exprs:
            spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}
    raw = {"apiVersion": "v1", "kind": "PersistentVolume",
           "metadata": {"name": name, "annotations": {ANN_DYNAMICALLY_PROVISIONED: provisioner},
                        "finalizers": ["kubernetes.io/pv-protection"]},
           "spec": spec, "status": {"phase": VOLUME_BOUND}}
    return KubeObject(copy.deepcopy(raw))


def complete_provisioning(cluster, namespace: str, claim_name: str, node_name: str) -> None:
    """The external provisioner creates a volume for a claim whose selected node is set, and the
    PV controller binds the claim to it."""
    pvc = cluster.get("PersistentVolumeClaim", namespace, claim_name)
    if pvc is None or pvc.annotations.get(ANN_SELECTED_NODE) != node_name:
        return
    if spec_of(pvc).get("volumeName"):
        return
    cls = cluster.get("StorageClass", "", get_persistent_volume_claim_class(pvc))
    if cls is None:
        return
    provisioner = cls.raw.get("provisioner") or ""
    if provisioner in ("", NOT_SUPPORTED_PROVISIONER):
        return
    node = cluster.get("Node", "", node_name)
    pv = provisioned_volume(cluster, pvc, cls, node)
    existing = cluster.get("PersistentVolume", "", pv.name)
    pv = existing if existing is not None else _store(cluster, pv, create=True)
    _bind_claim(cluster, pvc, pv, provisioner)


def complete(cluster, bindings, claims: List[KubeObject], node_name: str) -> None:
    """Run the controllers on what BindPodVolumes wrote."""
    for b in bindings:
        complete_static_binding(cluster, b.pv.name, b.pvc.namespace, b.pvc.name)
    for claim in claims:
        complete_provisioning(cluster, claim.namespace, claim.name, node_name)
