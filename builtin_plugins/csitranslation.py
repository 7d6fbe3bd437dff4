"""The parts of k8s.io/csi-translation-lib (v1.34) the scheduler plugins use.

- CSILimits (nodevolumelimits) needs which in-tree volume sources migrate to which CSI driver and
  the CSI volume handle a translated volume gets (``translate_in_tree_pv_to_csi``,
  ``translate_in_tree_inline_volume_to_csi``: the (driver, volumeHandle) of the CSI source).
- VolumeBinding (volumebinding, tryTranslatePVToCSI) checks an in-tree PV of a plugin migrated to
  CSI on the node with the node affinity of its translation
  (``translate_in_tree_pv_topology_to_csi``: a translated copy of the PV whose topology keys are
  rewritten as translateTopologyFromInTreeToCSI does).

Only what those decide is translated; attributes that translation also rewrites are left out. A
translation error is raised as TranslationError with upstream's wording.

This is a shared helper module, not a plugin module (no PLUGINS).
"""

from __future__ import annotations

import copy
import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple
from urllib.parse import urlsplit

# in-tree plugin names and their CSI drivers (csi-translation-lib/plugins)
AWS_EBS_IN_TREE_PLUGIN_NAME = "kubernetes.io/aws-ebs"
AWS_EBS_DRIVER_NAME = "ebs.csi.aws.com"
GCE_PD_IN_TREE_PLUGIN_NAME = "kubernetes.io/gce-pd"
GCE_PD_DRIVER_NAME = "pd.csi.storage.gke.io"
CINDER_IN_TREE_PLUGIN_NAME = "kubernetes.io/cinder"
CINDER_DRIVER_NAME = "cinder.csi.openstack.org"
AZURE_DISK_IN_TREE_PLUGIN_NAME = "kubernetes.io/azure-disk"
AZURE_DISK_DRIVER_NAME = "disk.csi.azure.com"
AZURE_FILE_IN_TREE_PLUGIN_NAME = "kubernetes.io/azure-file"
AZURE_FILE_DRIVER_NAME = "file.csi.azure.com"
VSPHERE_IN_TREE_PLUGIN_NAME = "kubernetes.io/vsphere-volume"
VSPHERE_DRIVER_NAME = "csi.vsphere.vmware.com"
PORTWORX_VOLUME_PLUGIN_NAME = "kubernetes.io/portworx-volume"
PORTWORX_DRIVER_NAME = "pxd.portworx.com"

# topology keys of the CSI drivers
AWS_EBS_TOPOLOGY_KEY = "topology.ebs.csi.aws.com/zone"
GCE_PD_TOPOLOGY_KEY = "topology.gke.io/zone"
CINDER_TOPOLOGY_KEY = "topology.cinder.csi.openstack.org/zone"

LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION = "topology.kubernetes.io/region"
LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_MULTI_ZONE_DELIMITER = "__"
UNSPECIFIED_VALUE = "UNSPECIFIED"

# storagev1.MigratedPluginsAnnotationKey (on CSINode objects)
MIGRATED_PLUGINS_ANNOTATION_KEY = "storage.alpha.kubernetes.io/migrated-plugins"


class TranslationError(Exception):
    """An error csi-translation-lib returns; str() is its message."""


def _src(spec: Mapping[str, Any], key: str) -> Optional[Mapping[str, Any]]:
    v = spec.get(key)
    if v is None:
        return None
    return v if isinstance(v, dict) else {}


# ---- AWS EBS ---------------------------------------------------------------------------------
_AWS_VOLUME_RE = re.compile(r"^vol-[^/]*$")


def kubernetes_volume_id_to_ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<id>, aws:///<id> or a bare id."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    try:
        u = urlsplit(kubernetes_id)
    except ValueError as e:
        raise TranslationError(f"Invalid disk name ({kubernetes_id}): {e}") from None
    if u.scheme != "aws":
        raise TranslationError(f"Invalid scheme for AWS volume ({kubernetes_id})")
    aws_id = u.path.strip("/")
    if not _AWS_VOLUME_RE.match(aws_id):
        raise TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _aws_handle(src: Mapping[str, Any]) -> str:
    try:
        return kubernetes_volume_id_to_ebs_volume_id(str(src.get("volumeID") or ""))
    except TranslationError as e:
        raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID {e}") from None


def _aws_pv_handle(pv, src) -> str:
    return _aws_handle(src)


def _aws_inline_handle(volume, src, namespace) -> str:
    return _aws_handle(src)


# ---- GCE PD ----------------------------------------------------------------------------------
def _gce_region_from_zones(zones: List[str]) -> str:
    """gceGetRegionFromZones."""
    if not zones:
        raise TranslationError("no zones specified")
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(
                f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {zone}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        got = "map[" + " ".join(f"{r}:{{}}" for r in sorted(regions)) + "]"  # %v of a sets.String
        raise TranslationError(f"multiple or no regions gotten from zones, got: {got}")
    return next(iter(regions))


def _gce_pv_handle(pv, src) -> str:
    labels = pv.labels
    zones_label = labels.get(LABEL_FAILURE_DOMAIN_BETA_ZONE, "")
    if zones_label == "":
        zones_label = labels.get(LABEL_TOPOLOGY_ZONE, "")
    zones = zones_label.split(LABEL_MULTI_ZONE_DELIMITER)
    pd_name = src.get("pdName") or ""
    if len(zones) == 1 and zones[0] != "":
        return f"projects/{UNSPECIFIED_VALUE}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        try:
            region = _gce_region_from_zones(zones)
        except TranslationError as e:
            raise TranslationError(f"failed to get region from zones: {e}") from None
        return f"projects/{UNSPECIFIED_VALUE}/regions/{region}/disks/{pd_name}"
    return f"projects/{UNSPECIFIED_VALUE}/zones/{UNSPECIFIED_VALUE}/disks/{pd_name}"


def _gce_inline_handle(volume, src, namespace) -> str:
    return f"projects/{UNSPECIFIED_VALUE}/zones/{UNSPECIFIED_VALUE}/disks/{src.get('pdName') or ''}"


# ---- Azure Disk ------------------------------------------------------------------------------
def _check_azure_disk_kind(kind: Any) -> None:
    """Only managed disks migrate (a nil kind passes)."""
    if kind is not None and str(kind).lower() != "managed":
        raise TranslationError(f"kind({kind}) is not supported in csi migration")


def _azure_disk_handle(src) -> str:
    # The API server defaults an Azure disk's kind to "Shared", which migration rejects.
    kind = src.get("kind")
    if kind is None:
        kind = "Shared"
    _check_azure_disk_kind(kind)
    return src.get("diskURI") or ""


def _azure_disk_pv_handle(pv, src) -> str:
    return _azure_disk_handle(src)


def _azure_disk_inline_handle(volume, src, namespace) -> str:
    return _azure_disk_handle(src)


# ---- Azure File ------------------------------------------------------------------------------
_SECRET_NAME_FORMAT_RE = re.compile(r"azure-storage-account-(.+)-secret")
_AZURE_FILE_RESOURCE_GROUP_ANNOTATION = "kubernetes.io/azure-file-resource-group"


def _storage_account_name(secret_name: str) -> str:
    m = _SECRET_NAME_FORMAT_RE.search(secret_name)
    return m.group(1) if m else secret_name


def _azure_file_pv_handle(pv, src) -> str:
    account = _storage_account_name(src.get("secretName") or "")
    resource_group = pv.annotations.get(_AZURE_FILE_RESOURCE_GROUP_ANNOTATION, "")
    namespace = src.get("secretNamespace")
    if namespace is None:
        namespace = ((pv.spec.get("claimRef") or {}).get("namespace") or "")
    if not namespace:
        raise TranslationError(
            "could not find a secret namespace in PersistentVolumeSource or ClaimRef")
    return f"{resource_group}#{account}#{src.get('shareName') or ''}#{pv.name}#{namespace}"


def _azure_file_inline_handle(volume, src, namespace) -> str:
    account = _storage_account_name(src.get("secretName") or "")
    secret_namespace = namespace or "default"
    return f"#{account}#{src.get('shareName') or ''}#{volume.get('name') or ''}#{secret_namespace}"


# ---- the rest: the handle is one field -------------------------------------------------------
def _field_handle(field: str) -> Tuple[Callable, Callable]:
    def pv_handle(pv, src) -> str:
        return src.get(field) or ""

    def inline_handle(volume, src, namespace) -> str:
        return src.get(field) or ""

    return pv_handle, inline_handle


_cinder_pv, _cinder_inline = _field_handle("volumeID")
_vsphere_pv, _vsphere_inline = _field_handle("volumePath")
_portworx_pv, _portworx_inline = _field_handle("volumeID")


# ---- the in-tree plugins ---------------------------------------------------------------------
class InTreePlugin:
    __slots__ = ("source_key", "plugin_name", "driver_name", "pv_handle", "inline_handle")

    def __init__(self, source_key, plugin_name, driver_name, pv_handle, inline_handle):
        self.source_key = source_key
        self.plugin_name = plugin_name
        self.driver_name = driver_name
        self.pv_handle = pv_handle
        self.inline_handle = inline_handle


# The keys are distinct volume source fields, so at most one plugin supports a volume and the
# (random) order in which upstream walks its map does not matter.
IN_TREE_PLUGINS: List[InTreePlugin] = [
    InTreePlugin("gcePersistentDisk", GCE_PD_IN_TREE_PLUGIN_NAME, GCE_PD_DRIVER_NAME,
                 _gce_pv_handle, _gce_inline_handle),
    InTreePlugin("awsElasticBlockStore", AWS_EBS_IN_TREE_PLUGIN_NAME, AWS_EBS_DRIVER_NAME,
                 _aws_pv_handle, _aws_inline_handle),
    InTreePlugin("cinder", CINDER_IN_TREE_PLUGIN_NAME, CINDER_DRIVER_NAME,
                 _cinder_pv, _cinder_inline),
    InTreePlugin("azureDisk", AZURE_DISK_IN_TREE_PLUGIN_NAME, AZURE_DISK_DRIVER_NAME,
                 _azure_disk_pv_handle, _azure_disk_inline_handle),
    InTreePlugin("azureFile", AZURE_FILE_IN_TREE_PLUGIN_NAME, AZURE_FILE_DRIVER_NAME,
                 _azure_file_pv_handle, _azure_file_inline_handle),
    InTreePlugin("vsphereVolume", VSPHERE_IN_TREE_PLUGIN_NAME, VSPHERE_DRIVER_NAME,
                 _vsphere_pv, _vsphere_inline),
    InTreePlugin("portworxVolume", PORTWORX_VOLUME_PLUGIN_NAME, PORTWORX_DRIVER_NAME,
                 _portworx_pv, _portworx_inline),
]
_BY_PLUGIN_NAME: Dict[str, InTreePlugin] = {p.plugin_name: p for p in IN_TREE_PLUGINS}
_BY_SOURCE_KEY: Dict[str, InTreePlugin] = {p.source_key: p for p in IN_TREE_PLUGINS}
_SOURCE_KEYS = frozenset(_BY_SOURCE_KEY)


def _plugin_for_spec(spec: Mapping[str, Any]) -> Optional[InTreePlugin]:
    # a volume (or PV spec) sets one source: look at its few keys, not at the plugin table
    if _SOURCE_KEYS.isdisjoint(spec):
        return None
    for key in spec:
        p = _BY_SOURCE_KEY.get(key)
        if p is not None and spec[key] is not None:
            return p
    return None


def is_pv_migratable(pv) -> bool:
    """IsPVMigratable."""
    return pv is not None and _plugin_for_spec(pv.spec) is not None


def is_inline_migratable(volume: Mapping[str, Any]) -> bool:
    """IsInlineMigratable."""
    return volume is not None and _plugin_for_spec(volume) is not None


def is_migratable_intree_plugin_by_name(name: str) -> bool:
    """IsMigratableIntreePluginByName."""
    return name in _BY_PLUGIN_NAME


def in_tree_plugin_name(pv) -> Optional[str]:
    """GetInTreePluginNameFromSpec(pv, nil); None when no in-tree plugin supports the PV
    (IsPVMigratable false)."""
    p = _plugin_for_spec(pv.spec)
    return None if p is None else p.plugin_name


def get_in_tree_plugin_name_from_pv(pv) -> str:
    """GetInTreePluginNameFromSpec(pv, nil)."""
    p = _plugin_for_spec(pv.spec)
    if p is None:
        raise TranslationError(f"could not find in-tree plugin name from persistent volume {pv.name}")
    return p.plugin_name


def get_in_tree_plugin_name_from_volume(volume: Mapping[str, Any]) -> str:
    """GetInTreePluginNameFromSpec(nil, vol)."""
    p = _plugin_for_spec(volume)
    if p is None:
        raise TranslationError(
            f"could not find in-tree plugin name from volume {volume.get('name') or ''}")
    return p.plugin_name


def get_csi_name_from_in_tree_name(plugin_name: str) -> str:
    """GetCSINameFromInTreeName."""
    p = _BY_PLUGIN_NAME.get(plugin_name)
    if p is None:
        raise TranslationError(f"could not find CSI Driver name for plugin {plugin_name}")
    return p.driver_name


# ---- migration on a node (volumebinding binder.go) ---------------------------------------------
def is_csi_migration_on_for_plugin(plugin_name: str, enable_csi_migration_portworx: bool) -> bool:
    """isCSIMigrationOnForPlugin."""
    if plugin_name in (AWS_EBS_IN_TREE_PLUGIN_NAME, GCE_PD_IN_TREE_PLUGIN_NAME,
                       AZURE_DISK_IN_TREE_PLUGIN_NAME, CINDER_IN_TREE_PLUGIN_NAME):
        return True
    if plugin_name == PORTWORX_VOLUME_PLUGIN_NAME:
        return enable_csi_migration_portworx
    return False


def is_plugin_migrated_to_csi_on_node(plugin_name: str, csi_node) -> bool:
    """isPluginMigratedToCSIOnNode: the CSINode's migrated-plugins annotation lists it."""
    if csi_node is None:
        return False
    mpa = csi_node.annotations.get(MIGRATED_PLUGINS_ANNOTATION_KEY, "")
    if not mpa:
        return False
    return plugin_name in mpa.split(",")


# ---- TranslateInTreePVToCSI / TranslateInTreeInlineVolumeToCSI: driver and handle ---------------
def translate_in_tree_pv_to_csi(pv) -> Tuple[str, str]:
    """TranslateInTreePVToCSI, reduced to the (driver, volumeHandle) of the CSI source."""
    p = _plugin_for_spec(pv.spec)
    if p is None:
        raise TranslationError(f'could not find in-tree plugin translation logic for "{pv.name}"')
    src = _src(pv.spec, p.source_key)
    return p.driver_name, p.pv_handle(pv, src)


def translate_in_tree_inline_volume_to_csi(volume: Mapping[str, Any], namespace: str
                                           ) -> Tuple[str, str]:
    """TranslateInTreeInlineVolumeToCSI, reduced to the (driver, volumeHandle) of the CSI
    source."""
    p = _plugin_for_spec(volume)
    if p is None:
        raise TranslationError(
            f'could not find in-tree plugin translation logic for "{volume.get("name") or ""}"')
    src = _src(volume, p.source_key)
    return p.driver_name, p.inline_handle(volume, src, namespace)


# ---- TranslateInTreePVToCSI: topology (plugins/in_tree_volume.go) -------------------------------
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


def _get_topology_label(pv, spec: Dict[str, Any]) -> Tuple[str, str]:
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


def _translate_topology_from_in_tree_to_csi(pv, spec: Dict[str, Any], key: str) -> None:
    zone_label, region_label = _get_topology_label(pv, spec)
    zones = _get_topology_values(spec, zone_label)
    if zones:
        _replace_topology(spec, zone_label, key)
    elif zone_label in pv.labels:
        _add_topology(spec, key, pv.labels[zone_label].split(LABEL_MULTI_ZONE_DELIMITER))
    if region_label == LABEL_FAILURE_DOMAIN_BETA_REGION:
        if _get_topology_values(spec, region_label):
            _replace_topology(spec, region_label, LABEL_TOPOLOGY_REGION)


def translate_in_tree_pv_topology_to_csi(pv):
    """TranslateInTreePVToCSI for a node-affinity check: a translated copy of the PV (the CSI
    source's driver, the topology keys) for the plugins whose migration can be on
    (is_csi_migration_on_for_plugin); raises TranslationError as upstream returns an error."""
    out = type(pv)(copy.deepcopy(pv.raw))  # pv.DeepCopy()
    out.resource_version = pv.resource_version
    spec = out.raw.setdefault("spec", {})
    if spec.get("gcePersistentDisk") is not None:
        _gce_pv_handle(out, _src(spec, "gcePersistentDisk"))  # its errors
        _translate_topology_from_in_tree_to_csi(out, spec, GCE_PD_TOPOLOGY_KEY)
        spec.pop("gcePersistentDisk", None)
        spec["csi"] = {"driver": GCE_PD_DRIVER_NAME}
    elif spec.get("awsElasticBlockStore") is not None:
        _aws_handle(_src(spec, "awsElasticBlockStore"))  # its errors
        _translate_topology_from_in_tree_to_csi(out, spec, AWS_EBS_TOPOLOGY_KEY)
        spec.pop("awsElasticBlockStore", None)
        spec["csi"] = {"driver": AWS_EBS_DRIVER_NAME}
    elif spec.get("cinder") is not None:
        _translate_topology_from_in_tree_to_csi(out, spec, CINDER_TOPOLOGY_KEY)
        spec.pop("cinder", None)
        spec["csi"] = {"driver": CINDER_DRIVER_NAME}
    elif spec.get("azureDisk") is not None:
        # with the API server's default kind ("Shared"), which migration rejects
        _check_azure_disk_kind(_src(spec, "azureDisk").get("kind") or "Shared")
        spec.pop("azureDisk", None)
        spec["csi"] = {"driver": AZURE_DISK_DRIVER_NAME}
    elif spec.get("portworxVolume") is not None:
        spec.pop("portworxVolume", None)
        spec["csi"] = {"driver": PORTWORX_DRIVER_NAME}
    else:  # pragma: no cover - callers check the plugin first
        raise TranslationError(f'could not find in-tree plugin translation logic for "{pv.name}"')
    return out
