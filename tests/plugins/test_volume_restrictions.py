"""VolumeRestrictions: ports of volume_restrictions_test.go (disk conflicts per volume type,
ReadWriteOncePod access mode conflicts, queueing hints) plus AddPod/RemovePod and clone."""

from __future__ import annotations

import pytest

from builtin_plugins.volume_restrictions import (ERR_REASON_DISK_CONFLICT,
                                                 ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
                                                 PRE_FILTER_STATE_KEY, VolumeRestrictions)
from harness.api.objects import KubeObject
from harness.framework import ActionType, Code, EventResource, NodeInfo, PodInfo, QueueingHint, Status
from harness.testing import FakeHandle, make_node, make_pod, new_state


def vol_pod(*volumes, name="p", namespace="default", node_name=""):
    vols = [dict(v, name=v.get("name", f"v{i}")) for i, v in enumerate(volumes)]
    return make_pod(name, namespace, node_name=node_name, spec={"volumes": vols})


def pvc_pod(name, *claims, node_name="", namespace="default"):
    return vol_pod(*[{"persistentVolumeClaim": {"claimName": c}} for c in claims], name=name,
                   node_name=node_name, namespace=namespace)


def pvc(name, *modes, namespace="default"):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"accessModes": list(modes)}}


def node_info(*pods):
    ni = NodeInfo(*pods)
    ni.set_node(make_node("node-1"))
    return ni


def assert_status(got, want):
    if want is None:
        assert got is None or got.is_success(), got
    else:
        assert got is not None and got.code == want.code and got.get_reasons() == want.get_reasons(), got


def run(pod, ni, existing_pods=(), objects=()):
    nodes = [make_node("node-1")]
    pl = VolumeRestrictions(None, FakeHandle(nodes=nodes, pods=existing_pods, objects=objects))
    state = new_state()
    _, pre = pl.pre_filter(state, pod, [])
    got = None
    if pre is None or pre.is_success():
        got = pl.filter(state, pod, ni)
    return pre, got


GCE = {"gcePersistentDisk": {"pdName": "foo"}}
GCE2 = {"gcePersistentDisk": {"pdName": "bar"}}
AWS = {"awsElasticBlockStore": {"volumeID": "foo"}}
AWS2 = {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                   "fsType": "ext4", "lun": 0}}
ISCSI2 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                    "fsType": "ext4", "lun": 0}}
ERR = Status.unschedulable(ERR_REASON_DISK_CONFLICT)
SKIP = Status.skip()


def conflict_table(v1, v2):
    return [
        ("nothing", make_pod("p"), node_info(), SKIP, None),
        ("one state", make_pod("p"), node_info(vol_pod(v1, name="e")), SKIP, None),
        ("same state", vol_pod(v1), node_info(vol_pod(v1, name="e")), None, ERR),
        ("different state", vol_pod(v2), node_info(vol_pod(v1, name="e")), None, None),
    ]


CONFLICT_CASES = []
for kind, (a, b) in {"gce": (GCE, GCE2), "aws": (AWS, AWS2), "rbd": (RBD, RBD2),
                     "iscsi": (ISCSI, ISCSI2)}.items():
    for row in conflict_table(a, b):
        CONFLICT_CASES.append((f"{kind}: {row[0]}",) + row[1:])
CONFLICT_CASES.append(("gce: pod with a volume that doesn't have restrictions",
                       vol_pod({"name": "volume with no restriction", "emptyDir": {}}),
                       node_info(), SKIP, None))


@pytest.mark.parametrize("name,pod,ni,want_pre,want", CONFLICT_CASES, ids=[c[0] for c in CONFLICT_CASES])
def test_disk_conflicts(name, pod, ni, want_pre, want):
    pre, got = run(pod, ni)
    assert_status(pre, want_pre)
    assert_status(got, want)


@pytest.mark.parametrize("name,v_new,v_old,conflict", [
    ("gce both read-only", {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}},
     {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}}, False),
    ("gce one read-only", {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}},
     {"gcePersistentDisk": {"pdName": "foo"}}, True),
    ("aws both read-only still conflict", {"awsElasticBlockStore": {"volumeID": "x", "readOnly": True}},
     {"awsElasticBlockStore": {"volumeID": "x", "readOnly": True}}, True),
    ("iscsi both read-only", {"iscsi": {"iqn": "q", "readOnly": True}},
     {"iscsi": {"iqn": "q", "readOnly": True}}, False),
    ("iscsi different portal same iqn", {"iscsi": {"iqn": "q", "targetPortal": "a"}},
     {"iscsi": {"iqn": "q", "targetPortal": "b"}}, True),
    ("rbd one shared monitor", {"rbd": {"monitors": ["a", "x"], "pool": "p", "image": "i"}},
     {"rbd": {"monitors": ["y", "a"], "pool": "p", "image": "i"}}, True),
    ("rbd defaulted pool equals rbd", {"rbd": {"monitors": ["a"], "image": "i"}},
     {"rbd": {"monitors": ["a"], "pool": "rbd", "image": "i"}}, True),
    ("rbd different image", {"rbd": {"monitors": ["a"], "image": "i"}},
     {"rbd": {"monitors": ["a"], "image": "j"}}, False),
    ("rbd both read-only", {"rbd": {"monitors": ["a"], "image": "i", "readOnly": True}},
     {"rbd": {"monitors": ["a"], "image": "i", "readOnly": True}}, False),
    ("gce vs aws same id", {"gcePersistentDisk": {"pdName": "foo"}},
     {"awsElasticBlockStore": {"volumeID": "foo"}}, False),
])
def test_conflict_rules(name, v_new, v_old, conflict):
    _, got = run(vol_pod(v_new), node_info(vol_pod(v_old, name="e")))
    assert_status(got, ERR if conflict else None)


# ---- ReadWriteOncePod ------------------------------------------------------------------------
POD_WITH_ONE_PVC = pvc_pod("pod-with-one-pvc", "claim-with-rwop-1", node_name="node-1")
POD_WITH_TWO_PVCS = pvc_pod("pod-with-two-pvcs", "claim-with-rwop-1", "claim-with-rwop-2",
                            node_name="node-1")
POD_WITH_ONE_CONFLICT = pvc_pod("pod-with-one-conflict", "claim-with-rwop-1", node_name="node-1")
POD_WITH_TWO_CONFLICTS = pvc_pod("pod-with-two-conflicts", "claim-with-rwop-1", "claim-with-rwop-2",
                                 node_name="node-1")
POD_WITH_RWX = pvc_pod("pod-with-rwx", "claim-with-rwx", node_name="node-1")
RWOP1 = pvc("claim-with-rwop-1", "ReadWriteOncePod")
RWOP2 = pvc("claim-with-rwop-2", "ReadWriteOncePod")
RWX = pvc("claim-with-rwx", "ReadWriteMany")
RWOP_CONFLICT = Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)

ACCESS_MODE_CASES = [
    ("nothing", make_pod("p"), node_info(), [], [], SKIP, None),
    ("failed to get PVC", POD_WITH_ONE_PVC, node_info(), [], [],
     Status.unresolvable('persistentvolumeclaim "claim-with-rwop-1" not found'), None),
    ("no access mode conflict", POD_WITH_ONE_PVC, node_info(POD_WITH_RWX), [POD_WITH_RWX],
     [RWOP1, RWX], SKIP, None),
    ("access mode conflict, unschedulable", POD_WITH_ONE_CONFLICT,
     node_info(POD_WITH_ONE_PVC, POD_WITH_RWX), [POD_WITH_ONE_PVC, POD_WITH_RWX], [RWOP1, RWX],
     None, RWOP_CONFLICT),
    ("two conflicts, unschedulable", POD_WITH_TWO_CONFLICTS,
     node_info(POD_WITH_TWO_PVCS, POD_WITH_RWX), [POD_WITH_TWO_PVCS, POD_WITH_RWX],
     [RWOP1, RWOP2, RWX], None, RWOP_CONFLICT),
    # the conflict is cluster-wide: a node without the other user is rejected as well
    ("access mode conflict on another node", POD_WITH_ONE_CONFLICT, node_info(),
     [POD_WITH_ONE_PVC], [RWOP1], None, RWOP_CONFLICT),
]


@pytest.mark.parametrize("name,pod,ni,existing,pvcs,want_pre,want", ACCESS_MODE_CASES,
                         ids=[c[0] for c in ACCESS_MODE_CASES])
def test_access_mode_conflicts(name, pod, ni, existing, pvcs, want_pre, want):
    pre, got = run(pod, ni, existing, pvcs)
    assert_status(pre, want_pre)
    if pre is None or pre.is_success():
        assert_status(got, want)


def test_add_remove_pod_and_clone():
    existing = [POD_WITH_ONE_PVC]
    pl = VolumeRestrictions(None, FakeHandle(nodes=[make_node("node-1")], pods=existing,
                                             objects=[RWOP1, RWX]))
    state = new_state()
    _, pre = pl.pre_filter(state, POD_WITH_ONE_CONFLICT, [])
    assert pre is None
    ni = node_info(*existing)
    assert_status(pl.filter(state, POD_WITH_ONE_CONFLICT, ni), RWOP_CONFLICT)

    cloned = state.clone()
    assert pl.remove_pod(cloned, POD_WITH_ONE_CONFLICT, PodInfo(POD_WITH_ONE_PVC), ni) is None
    assert cloned.read(PRE_FILTER_STATE_KEY).conflicting_pvc_ref_count == 0
    assert_status(pl.filter(cloned, POD_WITH_ONE_CONFLICT, node_info()), None)
    # the original state is untouched
    assert state.read(PRE_FILTER_STATE_KEY).conflicting_pvc_ref_count == 1

    # adding a pod that does not use the claim changes nothing; adding one that does counts
    assert pl.add_pod(cloned, POD_WITH_ONE_CONFLICT, PodInfo(POD_WITH_RWX), ni) is None
    assert cloned.read(PRE_FILTER_STATE_KEY).conflicting_pvc_ref_count == 0
    assert pl.add_pod(cloned, POD_WITH_ONE_CONFLICT, PodInfo(POD_WITH_TWO_PVCS), ni) is None
    assert cloned.read(PRE_FILTER_STATE_KEY).conflicting_pvc_ref_count == 1


def test_filter_without_prefilter_state_is_error():
    pl = VolumeRestrictions(None, FakeHandle())
    got = pl.filter(new_state(), vol_pod(GCE), node_info())
    assert got.code == Code.Error
    assert got.message() == 'cannot read "PreFilterVolumeRestrictions" from cycleState'
    assert pl.add_pod(new_state(), vol_pod(GCE), PodInfo(vol_pod(GCE)), node_info()).code == Code.Error


def test_disk_conflict_checked_before_rwop():
    existing = [vol_pod(GCE, {"persistentVolumeClaim": {"claimName": "claim-with-rwop-1"}},
                        name="e", node_name="node-1")]
    pod = vol_pod(GCE, {"persistentVolumeClaim": {"claimName": "claim-with-rwop-1"}})
    pre, got = run(pod, node_info(*existing), existing, [RWOP1])
    assert pre is None
    assert_status(got, ERR)


# ---- queueing hints --------------------------------------------------------------------------
def plugin():
    return VolumeRestrictions(None, FakeHandle())


POD_DELETED_CASES = []
for kind, (a, b) in {"gcedisk": (GCE, GCE2), "awsdisk": (AWS, AWS2), "rbddisk": (RBD, RBD2),
                     "iscsidisk": (ISCSI, ISCSI2)}.items():
    POD_DELETED_CASES.append((f"queue-new-object-{kind}-conflict", vol_pod(a), vol_pod(a, name="d"),
                              QueueingHint.Queue))
    POD_DELETED_CASES.append((f"skip-new-object-{kind}-no-conflict", vol_pod(a),
                              vol_pod(b, name="d"), QueueingHint.QueueSkip))
POD_DELETED_CASES += [
    ("queue-has-same-claim", pvc_pod("pod1", "claim-rwop"), pvc_pod("pod2", "claim-rwop"),
     QueueingHint.Queue),
    ("skip-no-same-claim", pvc_pod("pod1", "claim-1-rwop"), pvc_pod("pod2", "claim-2-rwop"),
     QueueingHint.QueueSkip),
    ("skip-other-namespace", pvc_pod("pod1", "claim-rwop"),
     pvc_pod("pod2", "claim-rwop", namespace="other"), QueueingHint.QueueSkip),
]


@pytest.mark.parametrize("name,pod,deleted,want", POD_DELETED_CASES, ids=[c[0] for c in POD_DELETED_CASES])
def test_hint_pod_deleted(name, pod, deleted, want):
    assert plugin().is_schedulable_after_pod_deleted(pod, deleted, None) == want


PVC1 = pvc("claim-with-rwx-1", "ReadWriteMany")
PVC2 = pvc("claim-with-rwx-2", "ReadWriteMany")
POD_ONE = pvc_pod("pod-with-one-pvc", "claim-with-rwx-1", node_name="node-1")
POD_TWO = pvc_pod("pod-with-two-pvcs", "claim-with-rwx-1", "claim-with-rwx-2", node_name="node-1")
POD_OTHER_NS = pvc_pod("pod-with-one-pvc", "claim-with-rwx-1", node_name="claim-with-rwx-2",
                       namespace="kube-system")


@pytest.mark.parametrize("name,pod,new,want", [
    ("queue-new-object-pvc-belong-pod", POD_TWO, PVC1, QueueingHint.Queue),
    ("skip-new-object-unused", POD_ONE, PVC2, QueueingHint.QueueSkip),
    ("skip-nil-old-object", POD_ONE, PVC2, QueueingHint.QueueSkip),
    ("skip-new-object-not-belong-pod", POD_ONE, PVC2, QueueingHint.QueueSkip),
    ("skip-new-object-namespace-not-equal-pod", POD_OTHER_NS, PVC1, QueueingHint.QueueSkip),
])
def test_hint_pvc_added(name, pod, new, want):
    assert plugin().is_schedulable_after_persistent_volume_claim_added(pod, None, KubeObject(new)) == want


def test_events_to_register():
    got = [(e.event.resource, e.event.action_type, e.queueing_hint_fn is not None)
           for e in plugin().events_to_register()]
    assert got == [
        (EventResource.Pod, ActionType.Delete, True),
        (EventResource.Node, ActionType.Add, False),
        (EventResource.PersistentVolumeClaim, ActionType.Add, True),
    ]
