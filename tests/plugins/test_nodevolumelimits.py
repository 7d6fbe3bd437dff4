"""NodeVolumeLimits (CSILimits): ports of csi_test.go (TestCSILimits and the queueing hint tests)
plus csi-translation-lib handle checks."""

from __future__ import annotations

import pytest

from builtin_plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, CSILimits
from builtin_plugins import csitranslation as csitrans
from builtin_plugins.nodevolumelimits.csi import is_csi_migration_on
from harness.api.objects import KubeObject
from harness.framework import ActionType, Code, EventResource, NodeInfo, QueueingHint, Status
from harness.testing import FakeHandle, make_node, make_pod, new_state
from harness.versions import resolve

EBS = csitrans.AWS_EBS_DRIVER_NAME
GCE = csitrans.GCE_PD_DRIVER_NAME
EBS_IN_TREE = csitrans.AWS_EBS_IN_TREE_PLUGIN_NAME
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE = "node-for-max-pd-test-1"
MAX_COUNT = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


def pod(*volumes, name="", namespace="", uid="", node_name=""):
    vols = [dict(v, name=v.get("name", f"v{i}")) for i, v in enumerate(volumes)]
    return make_pod(name or "p", namespace, uid=uid, node_name=node_name, spec={"volumes": vols})


def pvc_vol(claim):
    return {"persistentVolumeClaim": {"claimName": claim}}


def pvc_pod(*claims, **kw):
    return pod(*[pvc_vol(c) for c in claims], **kw)


def fake_pvs(driver_names):
    out = []
    for driver in driver_names:
        for j in range(4):
            handle = f"csi-{driver}-{j}"
            if driver == EBS_IN_TREE:
                spec = {"awsElasticBlockStore": {"volumeID": handle}}
            elif driver == HOSTPATH_IN_TREE:
                spec = {"hostPath": {"path": "/tmp"}}
            else:
                spec = {"csi": {"driver": driver, "volumeHandle": handle}}
            out.append({"apiVersion": "v1", "kind": "PersistentVolume",
                        "metadata": {"name": handle}, "spec": spec})
    return out


def claim(name, namespace="", **spec):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def fake_pvcs(driver_names):
    out = []
    for driver in driver_names:
        for j in range(4):
            v = f"csi-{driver}-{j}"
            out.append(claim(v, volumeName=v))
    out.append(claim("csi-4", storageClassName=SC_NAME))
    out.append(claim("csi-5"))
    # a claim whose PV is missing, with a class that exists
    out.append(claim("csi-6", storageClassName=SC_NAME, volumeName="missing-in-action"))
    return out


def fake_sc(provisioner):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": SC_NAME}, "provisioner": provisioner}


def fake_vas(count, driver_names):
    out = []
    for driver in driver_names:
        for j in range(count):
            out.append({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                        "metadata": {"name": f"va-{driver}-{j}"},
                        "spec": {"nodeName": NODE, "attacher": driver,
                                 "source": {"persistentVolumeName": f"csi-{driver}-{j}"}}})
    return out


def csi_node(limit_source, limit, driver_names, migrated=EBS_IN_TREE):
    if limit_source not in ("csinode", "csinode-with-no-limit", "no-csi-driver"):
        return None
    drivers = []
    if limit_source != "no-csi-driver":
        for d in driver_names:
            entry = {"name": d, "nodeID": NODE}
            if limit_source == "csinode":
                entry["allocatable"] = {"count": limit}
            drivers.append(entry)
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": NODE,
                         "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": migrated}},
            "spec": {"drivers": drivers}}


def ephemeral_vol(name):
    return {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}


def owned_claim(p, vol_name, owned=True):
    c = claim(f"{p.name}-{vol_name}", namespace=p.namespace, storageClassName=SC_NAME)
    if owned:
        c["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": p.name, "uid": p.uid,
                                             "controller": True}]
    return c


RUNNING_POD = pvc_pod("csi-ebs.csi.aws.com-3", name="running")
PENDING_VOLUME_POD = pvc_pod("csi-4", name="pending")
UNBOUND_PVC_POD2 = pvc_pod("csi-4", name="unbound2")
MISSING_PV_POD = pvc_pod("csi-6", name="missing-pv")
NO_SC_PVC_POD = pvc_pod("csi-5", name="no-sc")
GCE_TWO_VOL_POD = pvc_pod("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2", name="gce2")
IN_TREE_ONE_VOL_POD = pvc_pod("csi-kubernetes.io/aws-ebs-0", name="intree1")
IN_TREE_TWO_VOL_POD = pvc_pod("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2", name="intree2")
CSI_EBS_ONE_VOL_POD = pvc_pod("csi-ebs.csi.aws.com-0", name="ebs1")
CSI_EBS_TWO_VOL_POD = pvc_pod("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2", name="ebs2")
IN_TREE_NON_MIGRATABLE_ONE_VOL_POD = pvc_pod("csi-kubernetes.io/hostpath-0", name="hostpath1")

EPHEMERAL_VOLUME_POD = pod(ephemeral_vol("xyz"), name="abc", namespace="test", uid="12345")
EPHEMERAL_CLAIM = owned_claim(EPHEMERAL_VOLUME_POD, "xyz")
CONFLICTING_CLAIM = owned_claim(EPHEMERAL_VOLUME_POD, "xyz", owned=False)
EPHEMERAL_TWO_VOLUME_POD = pod(ephemeral_vol("x"), ephemeral_vol("y"), name="abc", namespace="test",
                               uid="12345II")
EPHEMERAL_CLAIM_X = owned_claim(EPHEMERAL_TWO_VOLUME_POD, "x")
EPHEMERAL_CLAIM_Y = owned_claim(EPHEMERAL_TWO_VOLUME_POD, "y")
IN_TREE_INLINE_VOL_POD = pod({"awsElasticBlockStore": {"volumeID": "aws-inline1"}}, name="inline1")
IN_TREE_INLINE_VOL_POD_SAME_ID = pod({"awsElasticBlockStore": {"volumeID": "csi-ebs.csi.aws.com-1"}},
                                     name="inline-same")
CM_SECRET = [{"configMap": {"name": "cm"}}, {"secret": {"secretName": "s"}}]
ONLY_CM_SECRET_POD = pod(*CM_SECRET, name="cm-secret")
PVC_POD_WITH_CM_SECRET = pod(*CM_SECRET, pvc_vol("csi-ebs.csi.aws.com-0"), name="pvc-cm-secret")
EPHEMERAL_POD_WITH_CM_SECRET = pod(*CM_SECRET, ephemeral_vol("xyz"), name="abc", namespace="test")
INLINE_POD_WITH_CM_SECRET = pod(*CM_SECRET, {"awsElasticBlockStore": {"volumeID": "aws-inline1"}},
                                name="inline-cm-secret")

MIGRATION = [EBS_IN_TREE, EBS]

# (test, new pod, existing pods, extra claims, max vols, va count, drivers, limit source,
#  want filter status, want prefilter status)
CSI_LIMITS_CASES = [
    ("should count VolumeAttachments towards volume limit when no pods exist", CSI_EBS_ONE_VOL_POD,
     [], [], 2, 2, [EBS], "csinode", MAX_COUNT, None),
    ("should schedule pod when VolumeAttachments count does not exceed limit", CSI_EBS_ONE_VOL_POD,
     [], [], 2, 1, [EBS], "csinode", None, None),
    ("fits when node volume limit >= new pods CSI volume", CSI_EBS_ONE_VOL_POD,
     [RUNNING_POD, CSI_EBS_TWO_VOL_POD], [], 4, 0, [EBS], "csinode", None, None),
    ("doesn't when node volume limit <= pods CSI volume", CSI_EBS_ONE_VOL_POD,
     [RUNNING_POD, CSI_EBS_TWO_VOL_POD], [], 2, 0, [EBS], "csinode", MAX_COUNT, None),
    ("should when driver does not support volume limits", CSI_EBS_ONE_VOL_POD,
     [RUNNING_POD, CSI_EBS_TWO_VOL_POD], [], 2, 0, [EBS], "csinode-with-no-limit", None, None),
    ("count pending PVCs towards volume limit <= pods CSI volume", CSI_EBS_ONE_VOL_POD,
     [PENDING_VOLUME_POD, CSI_EBS_TWO_VOL_POD], [], 2, 0, [EBS], "csinode", MAX_COUNT, None),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume", CSI_EBS_ONE_VOL_POD,
     [PENDING_VOLUME_POD, UNBOUND_PVC_POD2, CSI_EBS_TWO_VOL_POD], [], 4, 0, [EBS], "csinode",
     None, None),
    ("should count PVCs with invalid PV name but valid SC", CSI_EBS_ONE_VOL_POD,
     [MISSING_PV_POD, CSI_EBS_TWO_VOL_POD], [], 2, 0, [EBS], "csinode", MAX_COUNT, None),
    ("don't count pvcs with missing SC towards volume limit", CSI_EBS_ONE_VOL_POD,
     [RUNNING_POD, NO_SC_PVC_POD], [], 2, 0, [EBS], "csinode", None, None),
    ("count pvcs with the same type towards volume limit", CSI_EBS_ONE_VOL_POD,
     [GCE_TWO_VOL_POD, CSI_EBS_TWO_VOL_POD], [], 2, 0, [EBS, GCE], "csinode", MAX_COUNT, None),
    ("don't count pvcs with different type towards volume limit", GCE_TWO_VOL_POD,
     [CSI_EBS_TWO_VOL_POD, RUNNING_POD], [], 2, 0, [EBS, GCE], "csinode", None, None),
    ("should count in-tree volumes if migration is enabled", IN_TREE_ONE_VOL_POD,
     [IN_TREE_TWO_VOL_POD], [], 2, 0, MIGRATION, "csinode", MAX_COUNT, None),
    ("nil csi node", IN_TREE_INLINE_VOL_POD, [IN_TREE_TWO_VOL_POD], [], 0, 0, MIGRATION, "",
     None, None),
    ("should count unbound in-tree volumes if migration is enabled", PENDING_VOLUME_POD,
     [IN_TREE_TWO_VOL_POD], [], 2, 0, MIGRATION, "csinode", MAX_COUNT, None),
    ("should not limit pod if volume used does not report limits", IN_TREE_ONE_VOL_POD,
     [IN_TREE_TWO_VOL_POD], [], 2, 0, MIGRATION, "csinode-with-no-limit", None, None),
    ("should not count non-migratable in-tree volumes", IN_TREE_NON_MIGRATABLE_ONE_VOL_POD,
     [CSI_EBS_TWO_VOL_POD], [], 2, 0, [HOSTPATH_IN_TREE, EBS], "csinode", None, None),
    ("should count in-tree inline volumes if migration is enabled", IN_TREE_INLINE_VOL_POD,
     [IN_TREE_TWO_VOL_POD], [], 2, 0, MIGRATION, "csinode", MAX_COUNT, None),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     IN_TREE_ONE_VOL_POD, [CSI_EBS_TWO_VOL_POD], [], 2, 0, MIGRATION, "csinode", MAX_COUNT, None),
    ("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     IN_TREE_INLINE_VOL_POD, [CSI_EBS_TWO_VOL_POD, IN_TREE_ONE_VOL_POD], [], 3, 0, MIGRATION,
     "csinode", MAX_COUNT, None),
    ("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     IN_TREE_INLINE_VOL_POD_SAME_ID, [CSI_EBS_TWO_VOL_POD, IN_TREE_ONE_VOL_POD], [], 3, 0, MIGRATION,
     "csinode", None, None),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
     CSI_EBS_ONE_VOL_POD, [IN_TREE_TWO_VOL_POD], [], 2, 0, MIGRATION, "csinode", MAX_COUNT, None),
    # ephemeral volumes; upstream's fake lister says "persistentvolumeclaims", the scheduler's
    # informer lister "persistentvolumeclaim"
    ("ephemeral volume missing", EPHEMERAL_VOLUME_POD, [], [], 0, 0, [EBS], "csinode-with-no-limit",
     Status.unresolvable('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'),
     None),
    ("ephemeral volume not owned", EPHEMERAL_VOLUME_POD, [], [CONFLICTING_CLAIM], 0, 0, [EBS],
     "csinode-with-no-limit",
     Status.error("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"), None),
    ("ephemeral volume unbound", EPHEMERAL_VOLUME_POD, [], [EPHEMERAL_CLAIM], 0, 0, [EBS],
     "csinode-with-no-limit", None, None),
    ("ephemeral doesn't when node volume limit <= pods CSI volume", EPHEMERAL_VOLUME_POD,
     [RUNNING_POD, CSI_EBS_TWO_VOL_POD], [EPHEMERAL_CLAIM], 2, 0, [EBS], "csinode", MAX_COUNT, None),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", CSI_EBS_ONE_VOL_POD,
     [RUNNING_POD, EPHEMERAL_TWO_VOLUME_POD], [EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y], 2, 0, [EBS],
     "csinode", MAX_COUNT, None),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume, ephemeral disabled",
     CSI_EBS_ONE_VOL_POD, [RUNNING_POD, EPHEMERAL_VOLUME_POD, CSI_EBS_TWO_VOL_POD], [EPHEMERAL_CLAIM],
     3, 0, [EBS], "csinode", MAX_COUNT, None),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
     CSI_EBS_ONE_VOL_POD, [RUNNING_POD, EPHEMERAL_VOLUME_POD, CSI_EBS_TWO_VOL_POD], [EPHEMERAL_CLAIM],
     3, 0, [EBS], "csinode", MAX_COUNT, None),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
     CSI_EBS_ONE_VOL_POD, [RUNNING_POD, EPHEMERAL_VOLUME_POD, CSI_EBS_TWO_VOL_POD], [EPHEMERAL_CLAIM],
     5, 0, [EBS], "csinode", None, None),
    ("skip Filter when the pod only uses secrets and configmaps", ONLY_CM_SECRET_POD, [], [], 2, 0,
     [EBS], "csinode", None, Status.skip()),
    ("don't skip Filter when the pod has pvcs", PVC_POD_WITH_CM_SECRET, [], [], 2, 0, [EBS], "csinode",
     None, None),
    ("don't skip Filter when the pod has ephemeral volumes", EPHEMERAL_POD_WITH_CM_SECRET, [], [], 0, 0,
     [EBS], "csinode-with-no-limit",
     Status.unresolvable('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'),
     None),
    ("don't skip Filter when the pod has inline migratable volumes", INLINE_POD_WITH_CM_SECRET,
     [IN_TREE_TWO_VOL_POD], [], 2, 0, MIGRATION, "csinode", MAX_COUNT, None),
]


def assert_status(got, want):
    if want is None:
        assert got is None or got.is_success(), got
    else:
        assert got is not None and got.code == want.code and got.get_reasons() == want.get_reasons(), got


def build(existing, extra_claims, max_vols, va_count, drivers, limit_source, migrated=EBS_IN_TREE):
    objects = fake_pvs(drivers) + fake_pvcs(drivers) + list(extra_claims) + [fake_sc(drivers[0])]
    objects += fake_vas(va_count, drivers)
    cn = csi_node(limit_source, max_vols, drivers, migrated)
    if cn is not None:
        objects.append(cn)
    node = make_node(NODE)
    pl = CSILimits(None, FakeHandle(nodes=[node], objects=objects))
    ni = NodeInfo(*existing)
    ni.set_node(node)
    return pl, ni


@pytest.mark.parametrize("case", CSI_LIMITS_CASES, ids=[c[0] for c in CSI_LIMITS_CASES])
def test_csi_limits(case):
    _, new_pod, existing, extra, max_vols, va_count, drivers, limit_source, want, want_pre = case
    pl, ni = build(existing, extra, max_vols, va_count, drivers, limit_source)
    state = new_state()
    _, pre = pl.pre_filter(state, new_pod, [])
    assert_status(pre, want_pre)
    if pre is None or pre.code != Code.Skip:
        assert_status(pl.filter(state, new_pod, ni), want)


def test_filter_cache_is_per_cycle_and_per_csinode():
    # one state over two nodes, one with a CSINode (migration on) and one without
    objects = fake_pvs(MIGRATION) + fake_pvcs(MIGRATION) + [fake_sc(EBS)]
    objects.append(csi_node("csinode", 1, MIGRATION))
    n1, n2 = make_node(NODE), make_node("other")
    pl = CSILimits(None, FakeHandle(nodes=[n1, n2], objects=objects))
    ni1 = NodeInfo(IN_TREE_ONE_VOL_POD)
    ni1.set_node(n1)
    ni2 = NodeInfo(IN_TREE_ONE_VOL_POD)
    ni2.set_node(n2)
    state = new_state()
    assert_status(pl.filter(state, IN_TREE_INLINE_VOL_POD, ni2), None)
    assert_status(pl.filter(state, IN_TREE_INLINE_VOL_POD, ni1), MAX_COUNT)


def test_existing_pod_errors_are_errors():
    bad = pod({"azureDisk": {"diskName": "d", "diskURI": "uri"}}, name="bad")  # kind defaults to Shared
    pl, ni = build([bad], [], 2, 0, [EBS], "csinode")
    got = pl.filter(new_state(), CSI_EBS_ONE_VOL_POD, ni)
    assert got.code == Code.Error
    assert got.message() == "converting volume(v0) from inline to csi: kind(Shared) is not supported in csi migration"


def test_va_of_other_node_or_without_csi_pv_not_counted():
    objects = fake_pvs([EBS]) + fake_pvcs([EBS]) + [fake_sc(EBS), csi_node("csinode", 1, [EBS])]
    objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                    "metadata": {"name": "elsewhere"},
                    "spec": {"nodeName": "other", "attacher": EBS,
                             "source": {"persistentVolumeName": "csi-ebs.csi.aws.com-1"}}})
    objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                    "metadata": {"name": "no-pv"},
                    "spec": {"nodeName": NODE, "attacher": EBS,
                             "source": {"persistentVolumeName": "nope"}}})
    node = make_node(NODE)
    pl = CSILimits(None, FakeHandle(nodes=[node], objects=objects))
    ni = NodeInfo()
    ni.set_node(node)
    assert_status(pl.filter(new_state(), CSI_EBS_ONE_VOL_POD, ni), None)


def test_portworx_needs_migrated_annotation():
    assert not is_csi_migration_on(None, csitrans.AWS_EBS_IN_TREE_PLUGIN_NAME)
    cn = KubeObject(csi_node("csinode", 1, [EBS], migrated=EBS_IN_TREE))
    assert is_csi_migration_on(cn, csitrans.AWS_EBS_IN_TREE_PLUGIN_NAME)
    assert is_csi_migration_on(cn, csitrans.GCE_PD_IN_TREE_PLUGIN_NAME)
    assert not is_csi_migration_on(cn, csitrans.PORTWORX_VOLUME_PLUGIN_NAME)
    assert not is_csi_migration_on(cn, csitrans.AZURE_FILE_IN_TREE_PLUGIN_NAME)
    assert not is_csi_migration_on(cn, csitrans.VSPHERE_IN_TREE_PLUGIN_NAME)
    cn2 = KubeObject(csi_node("csinode", 1, [EBS],
                              migrated=f"{EBS_IN_TREE},{csitrans.PORTWORX_VOLUME_PLUGIN_NAME}"))
    assert is_csi_migration_on(cn2, csitrans.PORTWORX_VOLUME_PLUGIN_NAME)


# ---- csi-translation-lib ---------------------------------------------------------------------
def pv_obj(name, labels=None, **spec):
    return KubeObject({"apiVersion": "v1", "kind": "PersistentVolume",
                       "metadata": {"name": name, "labels": dict(labels or {})}, "spec": spec})


@pytest.mark.parametrize("pv,want", [
    (pv_obj("a", awsElasticBlockStore={"volumeID": "aws://us-east-1a/vol-123"}), (EBS, "vol-123")),
    (pv_obj("a", awsElasticBlockStore={"volumeID": "aws:///vol-123"}), (EBS, "vol-123")),
    (pv_obj("a", awsElasticBlockStore={"volumeID": "vol-9"}), (EBS, "vol-9")),
    (pv_obj("g", gcePersistentDisk={"pdName": "d"}),
     (GCE, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d")),
    (pv_obj("g", {"topology.kubernetes.io/zone": "us-central1-a"}, gcePersistentDisk={"pdName": "d"}),
     (GCE, "projects/UNSPECIFIED/zones/us-central1-a/disks/d")),
    (pv_obj("g", {"failure-domain.beta.kubernetes.io/zone": "us-central1-a__us-central1-b"},
            gcePersistentDisk={"pdName": "d"}),
     (GCE, "projects/UNSPECIFIED/regions/us-central1/disks/d")),
    (pv_obj("c", cinder={"volumeID": "v"}), (csitrans.CINDER_DRIVER_NAME, "v")),
    (pv_obj("z", azureDisk={"diskName": "d", "diskURI": "u", "kind": "Managed"}),
     (csitrans.AZURE_DISK_DRIVER_NAME, "u")),
    (pv_obj("x", portworxVolume={"volumeID": "px"}), (csitrans.PORTWORX_DRIVER_NAME, "px")),
])
def test_translate_pv(pv, want):
    assert csitrans.translate_in_tree_pv_to_csi(pv) == want


@pytest.mark.parametrize("pv,msg", [
    (pv_obj("a", awsElasticBlockStore={"volumeID": "aws://zone/bad"}),
     "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://zone/bad)"),
    (pv_obj("z", azureDisk={"diskName": "d", "diskURI": "u"}),
     "kind(Shared) is not supported in csi migration"),
    (pv_obj("g", {"topology.kubernetes.io/zone": "a__b"}, gcePersistentDisk={"pdName": "d"}),
     "failed to get region from zones: zone in unexpected format, expected: {locale}-{region}-{zone}, got: a"),
])
def test_translate_pv_errors(pv, msg):
    with pytest.raises(csitrans.TranslationError) as e:
        csitrans.translate_in_tree_pv_to_csi(pv)
    assert str(e.value) == msg


def test_translate_inline():
    assert csitrans.translate_in_tree_inline_volume_to_csi(
        {"name": "v", "gcePersistentDisk": {"pdName": "d"}}, "ns") == (
        GCE, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d")
    assert csitrans.translate_in_tree_inline_volume_to_csi(
        {"name": "v", "azureFile": {"secretName": "azure-storage-account-acct-secret",
                                    "shareName": "sh"}}, "ns") == (
        csitrans.AZURE_FILE_DRIVER_NAME, "#acct#sh#v#ns")
    assert csitrans.is_inline_migratable({"vsphereVolume": {"volumePath": "p"}})
    assert not csitrans.is_inline_migratable({"hostPath": {"path": "/"}})


# ---- queueing hints --------------------------------------------------------------------------
def plugin():
    return CSILimits(None, FakeHandle())


POD_EBS = pvc_pod("csi-ebs.csi.aws.com-2", name="ebs")


@pytest.mark.parametrize("test,deleted,scheduled,want", [
    ("return a Queue when a deleted pod has a PVC", pvc_pod("placeholder", name="d"), True,
     QueueingHint.Queue),
    ("return a Queue when a deleted pod has a inline migratable volume",
     pod({"awsElasticBlockStore": {}}, name="d"), True, QueueingHint.Queue),
    ("return a QueueSkip when a deleted pod doesn't have any volume", make_pod("d", ""), True,
     QueueingHint.QueueSkip),
    ("return a QueueSkip when a deleted pod is not scheduled.", pvc_pod("csi-ebs.csi.aws.com-0", name="d"),
     False, QueueingHint.QueueSkip),
    ("return a QueueSkip when a deleted pod only has a configmap", pod(*CM_SECRET, name="d"), True,
     QueueingHint.QueueSkip),
])
def test_hint_pod_deleted(test, deleted, scheduled, want):
    raw = dict(deleted.raw)
    raw["spec"] = dict(deleted.spec, nodeName=NODE if scheduled else "")
    from harness.api.objects import Pod
    assert plugin().is_schedulable_after_pod_deleted(POD_EBS, Pod(raw), None) == want


def test_hint_pod_deleted_nominated():
    raw = dict(pvc_pod("x", name="d").raw)
    raw["status"] = {"nominatedNodeName": NODE}
    from harness.api.objects import Pod
    assert plugin().is_schedulable_after_pod_deleted(POD_EBS, Pod(raw), None) == QueueingHint.Queue


def pvc_obj(name="", namespace=""):
    return KubeObject(claim(name, namespace))


@pytest.mark.parametrize("test,new_pod,added,want", [
    ("a pod isn't in the same namespace as an added PVC", make_pod("p", "ns1"), pvc_obj("", "ns2"),
     QueueingHint.QueueSkip),
    ("a pod is in the same namespace as an added PVC", pvc_pod("pvc1", namespace="ns1"),
     pvc_obj("pvc1", "ns1"), QueueingHint.Queue),
    ("a pod has an ephemeral volume related to an added PVC",
     pod(ephemeral_vol("ephemeral"), name="pod1", namespace="ns1"), pvc_obj("pod1-ephemeral", "ns1"),
     QueueingHint.Queue),
    ("a pod doesn't have the same PVC as an added PVC", pvc_pod("pvc1", namespace="ns1"),
     pvc_obj("pvc2", "ns1"), QueueingHint.QueueSkip),
    ("a pod doesn't have any PVC attached", make_pod("p", "ns1"), pvc_obj("pvc2", "ns1"),
     QueueingHint.QueueSkip),
])
def test_hint_pvc_added(test, new_pod, added, want):
    assert plugin().is_schedulable_after_pvc_added(new_pod, None, added) == want


def va(attacher, pv_name=None, inline_driver=None):
    source = {}
    if pv_name:
        source["persistentVolumeName"] = pv_name
    if inline_driver:
        source["inlineVolumeSpec"] = {"csi": {"driver": inline_driver}}
    return KubeObject({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                       "metadata": {"name": "volumeattachment1"},
                       "spec": {"nodeName": "fake-node", "attacher": attacher, "source": source}})


AWS_INLINE = {"awsElasticBlockStore": {"volumeID": "test"}}
GCE_INLINE = {"gcePersistentDisk": {"pdName": "test"}}


@pytest.mark.parametrize("test,new_pod,deleted,want", [
    ("a pod has PVC when VolumeAttachment is deleting", pvc_pod("pvc1", namespace="ns1"),
     va("test.storage.gke.io", pv_name="pv1"), QueueingHint.Queue),
    ("a pod has an Inline Migratable volume (AWSEBSDriver) when VolumeAttachment (AWSEBSDriver) is deleting (match)",
     pod(AWS_INLINE, namespace="ns1"), va(EBS, inline_driver=EBS), QueueingHint.Queue),
    ("a pod has an Inline Migratable volume (GCEPDDriver) when VolumeAttachment (AWSEBSDriver) is deleting (no match)",
     pod(GCE_INLINE, namespace="ns1"), va(EBS, inline_driver=EBS), QueueingHint.QueueSkip),
    ("a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver) is deleting",
     pod(AWS_INLINE, pvc_vol("pvc1"), namespace="ns1"), va(EBS, inline_driver=EBS), QueueingHint.Queue),
    ("a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when VolumeAttachment (AWSEBSDriver)  is deleting",
     pod(AWS_INLINE, pvc_vol("pvc1"), namespace="ns1"), va("test.storage.gke.io", pv_name="pv1"),
     QueueingHint.Queue),
    ("a pod has no PVC when VolumeAttachment is deleting", make_pod("p", "ns1"),
     va("test.storage.gke.io", pv_name="pv1"), QueueingHint.QueueSkip),
])
def test_hint_volume_attachment_deleted(test, new_pod, deleted, want):
    assert plugin().is_schedulable_after_volume_attachment_deleted(new_pod, deleted, None) == want


def csinode_obj(*drivers):
    ds = []
    for name, count in drivers:
        d = {"name": name}
        if count is not None:
            d["allocatable"] = {"count": count}
        ds.append(d)
    return KubeObject({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                       "metadata": {"name": NODE}, "spec": {"drivers": ds}})


@pytest.mark.parametrize("old,new,want", [
    (csinode_obj((EBS, 1)), csinode_obj((EBS, 2)), QueueingHint.Queue),
    (csinode_obj((EBS, 2)), csinode_obj((EBS, 1)), QueueingHint.QueueSkip),
    (csinode_obj((EBS, 2)), csinode_obj((EBS, 2)), QueueingHint.QueueSkip),
    (csinode_obj(), csinode_obj((EBS, 1)), QueueingHint.Queue),
    (csinode_obj((EBS, None)), csinode_obj((EBS, None)), QueueingHint.QueueSkip),
    (csinode_obj((EBS, 3)), csinode_obj((EBS, 3), (GCE, 0)), QueueingHint.QueueSkip),
])
def test_hint_csinode_updated(old, new, want):
    assert plugin().is_schedulable_after_csi_node_updated(POD_EBS, old, new) == want


def test_events_to_register():
    got = [(e.event.resource, e.event.action_type, e.queueing_hint_fn is not None)
           for e in plugin().events_to_register()]
    assert got == [
        (EventResource.CSINode, ActionType.Add, False),
        (EventResource.CSINode, ActionType.Update, True),
        (EventResource.Pod, ActionType.Delete, True),
        (EventResource.PersistentVolumeClaim, ActionType.Add, True),
        (EventResource.VolumeAttachment, ActionType.Delete, True),
    ]


def test_portworx_migrated_without_annotation_from_v136():
    """utils.go isCSIMigrationOn (v1.36): CSIMigrationPortworx is gone and Portworx counts as
    migrated like the other in-tree plugins, without the CSINode annotation."""
    cn = KubeObject(csi_node("csinode", 1, [EBS], migrated=EBS_IN_TREE))
    assert not is_csi_migration_on(cn, csitrans.PORTWORX_VOLUME_PLUGIN_NAME)
    assert is_csi_migration_on(cn, csitrans.PORTWORX_VOLUME_PLUGIN_NAME, True, True)
    for version, want in (("v1.34", False), ("v1.35", False), ("v1.36", True)):
        h = FakeHandle()
        h.feature_gates = resolve(version)
        assert CSILimits(None, h)._migration_on(cn, csitrans.PORTWORX_VOLUME_PLUGIN_NAME) is want, version
