"""VolumeZone: ports of volume_zone_test.go (TestSingleZone, TestMultiZone, TestWithBinding and
the queueing hint tests)."""

from __future__ import annotations

import pytest

from builtin_plugins.volume_zone import ERR_REASON_CONFLICT, VolumeZone
from harness.api.objects import KubeObject
from harness.framework import ActionType, Code, EventResource, NodeInfo, QueueingHint, Status
from harness.testing import FakeHandle, make_node, make_pod, new_state

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def pv(name, labels=None, **spec):
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "labels": dict(labels or {})}, "spec": dict(spec)}


def pvc(name, volume_name="", namespace="default", storage_class=None, **spec):
    sp = dict(spec)
    if volume_name:
        sp["volumeName"] = volume_name
    if storage_class is not None:
        sp["storageClassName"] = storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": sp}


def sc(name, mode="__absent__"):
    raw = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
           "provisioner": "example.com/p"}
    if mode != "__absent__":
        raw["volumeBindingMode"] = mode
    return raw


def pod_with_volume(name, claim):
    return make_pod(name, spec={"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]})


def node(labels):
    n = make_node("host1", labels=labels or {})
    ni = NodeInfo()
    ni.set_node(n)
    return ni


def run(objects, pod, n):
    pl = VolumeZone(None, FakeHandle(objects=objects))
    state = new_state()
    _, pre = pl.pre_filter(state, pod, [])
    return pre, pl.filter(state, pod, n)


def assert_status(got, want):
    if want is None:
        assert got is None or got.is_success(), got
    else:
        assert got is not None and got.code == want.code and got.get_reasons() == want.get_reasons(), got


SINGLE_ZONE_OBJECTS = [
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", {BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", {ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pvc("PVC_1", "Vol_1"), pvc("PVC_2", "Vol_2"), pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"), pvc("PVC_Stable_2", "Vol_Stable_2"),
    pvc("PVC_Stable_3", "Vol_Stable_3"),
]
CONFLICT = Status.unresolvable(ERR_REASON_CONFLICT)

SINGLE_ZONE_CASES = [
    ("pod without volume", make_pod("pod_1"), {BETA_ZONE: "us-west1-a"}, Status.skip(), None),
    ("node without labels", pod_with_volume("pod_1", "PVC_1"), {}, None, None),
    ("beta zone label matched", pod_with_volume("pod_1", "PVC_1"),
     {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, None, None),
    ("beta region label matched", pod_with_volume("pod_1", "PVC_2"),
     {BETA_REGION: "us-west1", "uselessLabel": "none"}, None, None),
    ("beta region label doesn't match", pod_with_volume("pod_1", "PVC_2"),
     {BETA_REGION: "no_us-west1", "uselessLabel": "none"}, None, CONFLICT),
    ("beta zone label doesn't match", pod_with_volume("pod_1", "PVC_1"),
     {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}, None, CONFLICT),
    ("zone label matched", pod_with_volume("pod_1", "PVC_Stable_1"),
     {ZONE: "us-west1-a", "uselessLabel": "none"}, None, None),
    ("region label matched", pod_with_volume("pod_1", "PVC_Stable_2"),
     {REGION: "us-west1", "uselessLabel": "none"}, None, None),
    ("region label doesn't match", pod_with_volume("pod_1", "PVC_Stable_2"),
     {REGION: "no_us-west1", "uselessLabel": "none"}, None, CONFLICT),
    ("zone label doesn't match", pod_with_volume("pod_1", "PVC_Stable_1"),
     {ZONE: "no_us-west1-a", "uselessLabel": "none"}, None, CONFLICT),
    ("pv with zone and region, node with only zone", pod_with_volume("pod_1", "PVC_Stable_3"),
     {ZONE: "us-west1-a"}, None, CONFLICT),
    ("pv with zone,node with beta zone", pod_with_volume("pod_1", "PVC_Stable_1"),
     {BETA_ZONE: "us-west1-a"}, None, CONFLICT),
    ("pv with beta label,node with ga label, matched", pod_with_volume("pod_1", "PVC_1"),
     {ZONE: "us-west1-a"}, None, None),
    ("pv with beta label,node with ga label, don't match", pod_with_volume("pod_1", "PVC_1"),
     {ZONE: "us-west1-b"}, None, CONFLICT),
    # not in the upstream table: a claim bound to a PV that does not exist
    ("pv not found", pod_with_volume("pod_1", "PVC_4"), {ZONE: "us-west1-a"},
     Status.unresolvable('persistentvolume "Vol_not_exist" not found'),
     Status.unresolvable('persistentvolume "Vol_not_exist" not found')),
    ("pvc not found", pod_with_volume("pod_1", "PVC_missing"), {ZONE: "us-west1-a"},
     Status.unresolvable('persistentvolumeclaim "PVC_missing" not found'),
     Status.unresolvable('persistentvolumeclaim "PVC_missing" not found')),
]


@pytest.mark.parametrize("name,pod,labels,want_pre,want_filter", SINGLE_ZONE_CASES,
                         ids=[c[0] for c in SINGLE_ZONE_CASES])
def test_single_zone(name, pod, labels, want_pre, want_filter):
    pre, got = run(SINGLE_ZONE_OBJECTS, pod, node(labels))
    assert_status(pre, want_pre)
    assert_status(got, want_filter)


MULTI_ZONE_OBJECTS = [
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", {BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {ZONE: "us-west1-c__us-west1-a"}),
    pvc("PVC_1", "Vol_1"), pvc("PVC_2", "Vol_2"), pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"), pvc("PVC_Stable_2", "Vol_Stable_2"),
]
MULTI_ZONE_CASES = [
    ("node without labels", pod_with_volume("pod_1", "PVC_3"), {}, None),
    ("beta zone label matched", pod_with_volume("pod_1", "PVC_3"),
     {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, None),
    ("beta zone label doesn't match", pod_with_volume("pod_1", "PVC_1"),
     {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}, CONFLICT),
    ("zone label matched", pod_with_volume("pod_1", "PVC_Stable_2"),
     {ZONE: "us-west1-a", "uselessLabel": "none"}, None),
    ("zone label doesn't match", pod_with_volume("pod_1", "PVC_Stable_1"),
     {ZONE: "us-west1-b", "uselessLabel": "none"}, CONFLICT),
]


@pytest.mark.parametrize("name,pod,labels,want_filter", MULTI_ZONE_CASES,
                         ids=[c[0] for c in MULTI_ZONE_CASES])
def test_multi_zone(name, pod, labels, want_filter):
    pre, got = run(MULTI_ZONE_OBJECTS, pod, node(labels))
    assert_status(pre, None)
    assert_status(got, want_filter)


BINDING_OBJECTS = [
    sc("Class_Immediate", mode=None),   # explicitly unset (the API server would default it)
    sc("Class_Immediate_Defaulted"),    # absent: defaulted to Immediate
    sc("Class_Wait", mode="WaitForFirstConsumer"),
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_NoSC", storage_class="Class_0"),
    pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", storage_class="Class_Wait"),
    pvc("PVC_ImmediateSC", storage_class="Class_Immediate"),
    pvc("PVC_ImmediateDefaultedSC", storage_class="Class_Immediate_Defaulted"),
]
BINDING_NODE = {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}
BINDING_CASES = [
    ("label zone failure domain matched", "PVC_1", None, None),
    ("unbound volume empty storage class", "PVC_EmptySC",
     Status.unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
     Status.unresolvable("PersistentVolumeClaim had no pv name and storageClass name")),
    # upstream's fake lister words it "storageclasses..."; the informer lister the scheduler
    # runs with says "storageclass.storage.k8s.io".
    ("unbound volume no storage class", "PVC_NoSC",
     Status.unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
     Status.unresolvable('storageclass.storage.k8s.io "Class_0" not found')),
    ("unbound volume immediate binding mode", "PVC_ImmediateSC",
     Status.unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"'),
     Status.unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"')),
    ("unbound volume defaulted immediate binding mode", "PVC_ImmediateDefaultedSC",
     Status.unresolvable("PersistentVolume had no name"),
     Status.unresolvable("PersistentVolume had no name")),
    ("unbound volume wait binding mode", "PVC_WaitSC", Status.skip(), None),
]


@pytest.mark.parametrize("name,claim,want_pre,want_filter", BINDING_CASES,
                         ids=[c[0] for c in BINDING_CASES])
def test_with_binding(name, claim, want_pre, want_filter):
    pre, got = run(BINDING_OBJECTS, pod_with_volume("pod_1", claim), node(BINDING_NODE))
    assert_status(pre, want_pre)
    assert_status(got, want_filter)


def test_beta_storage_class_annotation_wins():
    claim = pvc("PVC_Ann", storage_class="Class_Immediate_Defaulted")
    claim["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "Class_Wait"}
    pre, got = run(BINDING_OBJECTS + [claim], pod_with_volume("p", "PVC_Ann"), node(BINDING_NODE))
    assert_status(pre, Status.skip())


def test_unparsable_zone_label_is_ignored():
    objs = [pv("Vol_bad", {ZONE: "us-west1-a__"}), pvc("PVC_bad", "Vol_bad")]
    pre, got = run(objs, pod_with_volume("p", "PVC_bad"), node({ZONE: "elsewhere"}))
    assert_status(pre, Status.skip())


def test_multiple_claims_all_must_match():
    objs = [pv("a", {ZONE: "z1"}), pv("b", {ZONE: "z2"}), pvc("ca", "a"), pvc("cb", "b")]
    pod = make_pod("p", spec={"volumes": [
        {"name": "x", "persistentVolumeClaim": {"claimName": "ca"}},
        {"name": "y", "persistentVolumeClaim": {"claimName": "cb"}}]})
    _, got = run(objs, pod, node({ZONE: "z1"}))
    assert_status(got, CONFLICT)


def test_filter_returns_fresh_unresolvable():
    _, got = run(SINGLE_ZONE_OBJECTS, pod_with_volume("p", "PVC_1"), node({BETA_ZONE: "x"}))
    assert got.code == Code.UnschedulableAndUnresolvable


# ---- queueing hints --------------------------------------------------------------------------
def obj(raw):
    return KubeObject(raw)


def plugin():
    return VolumeZone(None, FakeHandle())


@pytest.mark.parametrize("name,pod,old,new,want", [
    ("pvc-was-added-but-pod-refers-no-pvc", make_pod("pod_1"), None, pvc("PVC_1", "Vol_1"),
     QueueingHint.QueueSkip),
    ("pvc-was-added-and-pod-was-bound-to-different-pvc", pod_with_volume("pod_1", "PVC_2"), None,
     pvc("PVC_1", "Vol_1"), QueueingHint.QueueSkip),
    ("pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns", pod_with_volume("pod_1", "PVC_1"),
     None, pvc("PVC_1", "Vol_1", namespace="ns1"), QueueingHint.QueueSkip),
    ("pvc-was-added-and-pod-was-bound-to-the-pvc", pod_with_volume("pod_1", "PVC_1"), None,
     pvc("PVC_1", "Vol_1"), QueueingHint.Queue),
    ("pvc-was-updated-and-pod-was-bound-to-the-pvc", pod_with_volume("pod_1", "PVC_1"),
     pvc("PVC_1"), pvc("PVC_1", "Vol_1"), QueueingHint.Queue),
    ("pvc-was-updated-but-pod-refers-no-pvc", make_pod("pod_1"), pvc("PVC_1"),
     pvc("PVC_1", "Vol_1"), QueueingHint.QueueSkip),
])
def test_hint_pvc_change(name, pod, old, new, want):
    got = plugin().is_schedulable_after_persistent_volume_claim_change(
        pod, obj(old) if old else None, obj(new))
    assert got == want


def test_hint_pvc_wrong_object():
    assert plugin().is_schedulable_after_persistent_volume_claim_change(
        pod_with_volume("pod_1", "PVC_1"), None, "not-a-pvc") == QueueingHint.Queue


@pytest.mark.parametrize("name,new,want", [
    ("sc-doesn't-have-volume-binding-mode", sc("SC_1"), QueueingHint.QueueSkip),
    ("sc-immediate", sc("SC_1", "Immediate"), QueueingHint.QueueSkip),
    ("new-sc-is-wait-for-first-consumer-mode", sc("SC_1", "WaitForFirstConsumer"),
     QueueingHint.Queue),
])
def test_hint_storage_class_added(name, new, want):
    assert plugin().is_schedulable_after_storage_class_added(
        pod_with_volume("pod_1", "PVC_1"), None, obj(new)) == want


@pytest.mark.parametrize("name,old,new,want", [
    ("new-pv-was-added", None, pv("Vol_1", {BETA_ZONE: "us-west1-b"}), QueueingHint.Queue),
    ("pv-was-updated-and-changed-topology", pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
     pv("Vol_1", {BETA_ZONE: "us-west1-b"}), QueueingHint.Queue),
    ("pv-was-updated-and-added-topology-label", pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
     pv("Vol_1", {BETA_ZONE: "us-west1-a", ZONE: "zone"}), QueueingHint.Queue),
    ("pv-was-updated-but-no-topology-is-changed", pv("Vol_1", {BETA_ZONE: "us-west1-a", ZONE: "zone"}),
     pv("Vol_1", {BETA_ZONE: "us-west1-a", ZONE: "zone"}), QueueingHint.QueueSkip),
    ("pv-was-updated-other-label", pv("Vol_1", {ZONE: "a__b"}),
     pv("Vol_1", {ZONE: "b__a", "x": "y"}), QueueingHint.QueueSkip),
])
def test_hint_pv_change(name, old, new, want):
    got = plugin().is_schedulable_after_persistent_volume_change(
        pod_with_volume("pod_1", "PVC_1"), obj(old) if old else None, obj(new))
    assert got == want


def test_hint_pv_wrong_objects():
    p = plugin()
    pod = pod_with_volume("pod_1", "PVC_1")
    assert p.is_schedulable_after_persistent_volume_change(pod, None, "not-a-pv") == QueueingHint.Queue
    assert p.is_schedulable_after_persistent_volume_change(
        pod, "not-a-pv", obj(pv("Vol_1"))) == QueueingHint.Queue


def test_events_to_register():
    events = plugin().events_to_register()
    got = [(e.event.resource, e.event.action_type, e.queueing_hint_fn is not None) for e in events]
    assert got == [
        (EventResource.StorageClass, ActionType.Add, True),
        (EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel, False),
        (EventResource.PersistentVolumeClaim, ActionType.Add | ActionType.Update, True),
        (EventResource.PersistentVolume, ActionType.Add | ActionType.Update, True),
    ]
