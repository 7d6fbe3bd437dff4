"""The parts of k8s.io/csi-translation-lib (v1.34) that CSILimits uses: which in-tree volume
sources migrate to which CSI driver, and the CSI volume handle a translated volume gets.

Only the CSI source's driver and volume handle matter to volume counting; topology and
attributes that translation also rewrites are left out. A translation error is raised as
TranslationError with upstream's wording.
"""

from __future__ import annotations

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

LABEL_FAILURE_DOMAIN_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
LABEL_MULTI_ZONE_DELIMITER = "__"
UNSPECIFIED_VALUE = "UNSPECIFIED"


class TranslationError(Exception):
    pass


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
        return kubernetes_volume_id_to_ebs_volume_id(src.get("volumeID") or "")
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
        raise TranslationError(f"multiple or no regions gotten from zones, got: {sorted(regions)}")
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
def _azure_disk_handle(src) -> str:
    # The API server defaults an Azure disk's kind to "Shared", which migration rejects.
    kind = src.get("kind")
    if kind is None:
        kind = "Shared"
    if kind.lower() != "managed":
        raise TranslationError(f"kind({kind}) is not supported in csi migration")
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
