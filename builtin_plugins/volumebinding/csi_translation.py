"""The part of k8s.io/csi-translation-lib that volume binding uses (tryTranslatePVToCSI): an
in-tree PV of a plugin migrated to CSI on the node is checked with the node affinity of its
translation. Only what decides a node-affinity check is translated: the topology keys
(translateTopologyFromInTreeToCSI) and the errors a translation can return.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlparse

from harness.api.objects import KubeObject

from .pv_helpers import MIGRATED_PLUGINS_ANNOTATION_KEY, VolumeError, copy_object, spec_of

LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_MULTI_ZONE_DELIMITER = "__"

AWS_EBS_IN_TREE_PLUGIN_NAME = "kubernetes.io/aws-ebs"
GCE_PD_IN_TREE_PLUGIN_NAME = "kubernetes.io/gce-pd"
AZURE_DISK_IN_TREE_PLUGIN_NAME = "kubernetes.io/azure-disk"
AZURE_FILE_IN_TREE_PLUGIN_NAME = "kubernetes.io/azure-file"
CINDER_IN_TREE_PLUGIN_NAME = "kubernetes.io/cinder"
PORTWORX_VOLUME_PLUGIN_NAME = "kubernetes.io/portworx-volume"
VSPHERE_IN_TREE_PLUGIN_NAME = "kubernetes.io/vsphere-volume"

AWS_EBS_TOPOLOGY_KEY = "topology.ebs.csi.aws.com/zone"
GCE_PD_TOPOLOGY_KEY = "topology.gke.io/zone"
CINDER_TOPOLOGY_KEY = "topology.cinder.csi.openstack.org/zone"

# PV source field -> in-tree plugin name (inTreePlugins' CanSupport).
_SOURCES: List[Tuple[str, str]] = [
    ("gcePersistentDisk", GCE_PD_IN_TREE_PLUGIN_NAME),
    ("awsElasticBlockStore", AWS_EBS_IN_TREE_PLUGIN_NAME),
    ("cinder", CINDER_IN_TREE_PLUGIN_NAME),
    ("azureDisk", AZURE_DISK_IN_TREE_PLUGIN_NAME),
    ("azureFile", AZURE_FILE_IN_TREE_PLUGIN_NAME),
    ("vsphereVolume", VSPHERE_IN_TREE_PLUGIN_NAME),
    ("portworxVolume", PORTWORX_VOLUME_PLUGIN_NAME),
]

_AWS_VOLUME_RE = re.compile(r"^vol-[^/]*$")


def in_tree_plugin_name(pv: KubeObject) -> Optional[str]:
    """GetInTreePluginNameFromSpec(pv, nil); None when no in-tree plugin supports the PV
    (IsPVMigratable false)."""
    spec = spec_of(pv)
    for field, name in _SOURCES:
        if spec.get(field) is not None:
            return name
    return None


def is_csi_migration_on_for_plugin(plugin_name: str, enable_csi_migration_portworx: bool) -> bool:
    """isCSIMigrationOnForPlugin."""
    if plugin_name in (AWS_EBS_IN_TREE_PLUGIN_NAME, GCE_PD_IN_TREE_PLUGIN_NAME,
                       AZURE_DISK_IN_TREE_PLUGIN_NAME, CINDER_IN_TREE_PLUGIN_NAME):
        return True
    if plugin_name == PORTWORX_VOLUME_PLUGIN_NAME:
        return enable_csi_migration_portworx
    return False


def is_plugin_migrated_to_csi_on_node(plugin_name: str, csi_node: Optional[KubeObject]) -> bool:
    """isPluginMigratedToCSIOnNode: the CSINode's migrated-plugins annotation lists it."""
    if csi_node is None:
        return False
    mpa = csi_node.annotations.get(MIGRATED_PLUGINS_ANNOTATION_KEY, "")
    if not mpa:
        return False
    return plugin_name in mpa.split(",")


# ---- topology (plugins/in_tree_volume.go) ---------------------------------------------------
def _terms(spec: Dict[str, Any]) -> Optional[List[Dict[str, Any]]]:
    na = spec.get("nodeAffinity")
    if not na or not na.get("required"):
        return None
    terms = na["required"].get("nodeSelectorTerms")
    return terms if terms else None


def _topology_key_exist(key: str, spec: Dict[str, Any]) -> bool:
    for term in _terms(spec) or []:
        for r in (term or {}).get("matchExpressions") or []:
            if r.get("key") == key:
                return True
    return False


def _get_topology_label(pv: KubeObject, spec: Dict[str, Any]) -> Tuple[str, str]:
    if _topology_key_exist(LABEL_TOPOLOGY_ZONE, spec):
        return LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION
    if _topology_key_exist(LABEL_FAILURE_DOMAIN_BETA_ZONE, spec):
        return LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_FAILURE_DOMAIN_BETA_REGION
    if LABEL_TOPOLOGY_ZONE in pv.labels:
        return LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION
    if LABEL_FAILURE_DOMAIN_BETA_ZONE in pv.labels:
        return LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_FAILURE_DOMAIN_BETA_REGION
    return LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION


def _get_topology_values(spec: Dict[str, Any], key: str) -> List[str]:
    values = set()
    for term in _terms(spec) or []:
        for r in (term or {}).get("matchExpressions") or []:
            if r.get("key") == key:
                values.update(str(v) for v in r.get("values") or [])
    return sorted(values)


def _replace_topology(spec: Dict[str, Any], old_key: str, new_key: str) -> None:
    for term in _terms(spec) or []:
        for r in (term or {}).get("matchExpressions") or []:
            if r.get("key") == old_key:
                r["key"] = new_key


def _add_topology(spec: Dict[str, Any], key: str, zones: List[str]) -> None:
    filtered = sorted({z.strip() for z in zones if z.strip()})
    if not filtered:
        return  # upstream returns an error that its caller ignores
    na = spec.get("nodeAffinity")
    if na is None:
        na = spec["nodeAffinity"] = {}
    req = na.get("required")
    if req is None:
        req = na["required"] = {}
    if not req.get("nodeSelectorTerms"):
        req["nodeSelectorTerms"] = [{}]
    for term in req["nodeSelectorTerms"]:
        term.setdefault("matchExpressions", [])
        if term["matchExpressions"] is None:
            term["matchExpressions"] = []
        term["matchExpressions"].append({"key": key, "operator": "In", "values": list(filtered)})


def _translate_topology_from_in_tree_to_csi(pv: KubeObject, spec: Dict[str, Any], key: str) -> None:
    zone_label, region_label = _get_topology_label(pv, spec)
    zones = _get_topology_values(spec, zone_label)
    if zones:
        _replace_topology(spec, zone_label, key)
    elif zone_label in pv.labels:
        _add_topology(spec, key, pv.labels[zone_label].split(LABEL_MULTI_ZONE_DELIMITER))
    if region_label == LABEL_FAILURE_DOMAIN_BETA_REGION:
        if _get_topology_values(spec, region_label):
            _replace_topology(spec, region_label, LABEL_TOPOLOGY_REGION)


def _gce_region_from_zones(zones: List[str]) -> str:
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise VolumeError(f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, "
                              f"got: {zone}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        got = "map[" + " ".join(f"{r}:{{}}" for r in sorted(regions)) + "]"  # a Go sets.String
        raise VolumeError(f"multiple or no regions gotten from zones, got: {got}")
    return regions.pop()


def _aws_volume_id(kubernetes_id: str) -> str:
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    url = urlparse(kubernetes_id)
    aws_id = url.path.strip("/")
    if not _AWS_VOLUME_RE.match(aws_id):
        raise VolumeError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def translate_in_tree_pv_to_csi(pv: KubeObject) -> KubeObject:
    """TranslateInTreePVToCSI (a copy; the topology keys and the errors)."""
    out = copy_object(pv)
    spec = out.raw.setdefault("spec", {})
    if spec.get("gcePersistentDisk") is not None:
        zones_label = out.labels.get(LABEL_FAILURE_DOMAIN_BETA_ZONE) or out.labels.get(LABEL_TOPOLOGY_ZONE, "")
        zones = zones_label.split(LABEL_MULTI_ZONE_DELIMITER)
        if len(zones) > 1:
            try:
                _gce_region_from_zones(zones)
            except VolumeError as e:
                raise VolumeError(f"failed to get region from zones: {e}") from None
        _translate_topology_from_in_tree_to_csi(out, spec, GCE_PD_TOPOLOGY_KEY)
        spec.pop("gcePersistentDisk", None)
        spec["csi"] = {"driver": "pd.csi.storage.gke.io"}
    elif spec.get("awsElasticBlockStore") is not None:
        try:
            _aws_volume_id(str(spec["awsElasticBlockStore"].get("volumeID") or ""))
        except VolumeError as e:
            raise VolumeError(f"failed to translate Kubernetes ID to EBS Volume ID {e}") from None
        _translate_topology_from_in_tree_to_csi(out, spec, AWS_EBS_TOPOLOGY_KEY)
        spec.pop("awsElasticBlockStore", None)
        spec["csi"] = {"driver": "ebs.csi.aws.com"}
    elif spec.get("cinder") is not None:
        _translate_topology_from_in_tree_to_csi(out, spec, CINDER_TOPOLOGY_KEY)
        spec.pop("cinder", None)
        spec["csi"] = {"driver": "cinder.csi.openstack.org"}
    elif spec.get("azureDisk") is not None:
        kind = spec["azureDisk"].get("kind")
        if kind is not None and str(kind).lower() != "managed":
            raise VolumeError(f"kind({kind}) is not supported in csi migration")
        spec.pop("azureDisk", None)
        spec["csi"] = {"driver": "disk.csi.azure.com"}
    elif spec.get("portworxVolume") is not None:
        spec.pop("portworxVolume", None)
        spec["csi"] = {"driver": "pxd.portworx.com"}
    else:  # pragma: no cover - callers check the plugin first
        raise VolumeError(f"could not find in-tree plugin translation logic for {pv.name!r}")
    return out


def try_translate_pv_to_csi(pv: KubeObject, csi_node: Optional[KubeObject],
                            enable_csi_migration_portworx: bool) -> KubeObject:
    """volumeBinder.tryTranslatePVToCSI: the PV itself unless it is an in-tree PV whose plugin
    is migrated to CSI on the node."""
    plugin = in_tree_plugin_name(pv)
    if plugin is None:
        return pv
    if not is_csi_migration_on_for_plugin(plugin, enable_csi_migration_portworx):
        return pv
    if not is_plugin_migrated_to_csi_on_node(plugin, csi_node):
        return pv
    try:
        return translate_in_tree_pv_to_csi(pv)
    except VolumeError as e:
        raise VolumeError(f"could not translate pv: {e}") from None
