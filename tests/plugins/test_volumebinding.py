"""VolumeBinding: ports of volume_binding_test.go (TestVolumeBinding) and binder_test.go
(FindPodVolumes with and without provisioning, CSI migration, Assume/Revert, Bind and
checkBindings), plus args, scorer and queueing hints, at v1.34 semantics."""

from __future__ import annotations

import copy

import pytest

from builtin_plugins.volumebinding import VolumeBinding
from builtin_plugins.volumebinding import binder as binder_mod
from builtin_plugins.volumebinding import volume_binding as vb
from builtin_plugins.volumebinding.binder import (ERR_REASON_BIND_CONFLICT,
                                                  ERR_REASON_NODE_CONFLICT,
                                                  ERR_REASON_NOT_ENOUGH_SPACE,
                                                  ERR_REASON_PV_NOT_EXIST, BindingInfo,
                                                  DynamicProvision, PodVolumes)
from builtin_plugins.volumebinding.pv_helpers import (ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER,
                                                      ANN_SELECTED_NODE, VolumeError,
                                                      find_matching_volume)
from builtin_plugins.volumebinding.scorer import (StorageResource, build_broken_linear_function,
                                                  build_scorer_function)
from harness.api.objects import KubeObject
from harness.framework import Code, QueueingHint
from harness.framework.blocking import drive
from harness.testing import FakeHandle, make_node, make_pod, new_state

HOSTNAME = "kubernetes.io/hostname"
NODE_KEY = "nodeKey"
PROVISIONER = "test-provisioner"


# ---- object makers ----------------------------------------------------------------------------
def sc(name, mode="WaitForFirstConsumer", provisioner=None, allowed=None, **extra):
    raw = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
           "volumeBindingMode": mode}
    if provisioner is not None:
        raw["provisioner"] = provisioner
    if allowed is not None:
        raw["allowedTopologies"] = allowed
    raw.update(extra)
    return raw


IMMEDIATE_SC = sc("immediate-sc", "Immediate")
WAIT_SC = sc("wait-sc")
WAIT_HDD_SC = sc("wait-hdd-sc")
# binder_test.go's classes
WAIT_CLASS = sc("waitClass", provisioner="kubernetes.io/no-provisioner")
IMMEDIATE_CLASS = sc("immediateClass", "Immediate")
WAIT_CLASS_WITH_PROVISIONER = sc("waitClassWithProvisioner", provisioner=PROVISIONER, allowed=[
    {"matchLabelExpressions": [{"key": NODE_KEY, "values": ["node1", "reference-value"]}]}])
TOPO_MISMATCH_CLASS = sc("topoMismatchClass", provisioner=PROVISIONER, allowed=[
    {"matchLabelExpressions": [{"key": NODE_KEY, "values": ["reference-value"]}]}])
BINDER_CLASSES = [WAIT_CLASS, IMMEDIATE_CLASS, WAIT_CLASS_WITH_PROVISIONER, TOPO_MISMATCH_CLASS]


def pvc(name, class_name=None, *, ns="default", size=None, volume_name="", bound=False,
        selected_node=None, phase=None, uid=None, access_modes=None, selector=None,
        volume_mode=None, owner_uid=None, vac=None):
    md = {"name": name, "namespace": ns, "uid": uid or f"uid-{ns}-{name}"}
    ann = {}
    if bound:
        ann[ANN_BIND_COMPLETED] = "yes"
    if selected_node is not None:
        ann[ANN_SELECTED_NODE] = selected_node
    if ann:
        md["annotations"] = ann
    if owner_uid:
        md["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "x", "uid": owner_uid,
                                  "controller": True}]
    spec = {"accessModes": list(access_modes or [])}
    if class_name is not None:
        spec["storageClassName"] = class_name
    if size is not None:
        spec["resources"] = {"requests": {"storage": size}}
    if volume_name:
        spec["volumeName"] = volume_name
    if selector is not None:
        spec["selector"] = selector
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    if vac is not None:
        spec["volumeAttributesClassName"] = vac
    raw = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec}
    if phase:
        raw["status"] = {"phase": phase}
    return raw


def pv(name, class_name="", *, capacity=None, phase="Available", affinity=None, claim=None,
       labels=None, access_modes=None, volume_mode=None, source=None, vac=None, ann=None):
    md = {"name": name}
    if labels:
        md["labels"] = dict(labels)
    if ann:
        md["annotations"] = dict(ann)
    spec = {"storageClassName": class_name}
    if capacity is not None:
        spec["capacity"] = {"storage": capacity}
    if access_modes is not None:
        spec["accessModes"] = list(access_modes)
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    if vac is not None:
        spec["volumeAttributesClassName"] = vac
    if affinity is not None:
        exprs = [{"key": k, "operator": "In", "values": list(v)} for k, v in sorted(affinity.items())]
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}
    if claim is not None:
        cmd = claim["metadata"]
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                            "name": cmd["name"], "namespace": cmd["namespace"], "uid": cmd["uid"]}
        md.setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
    if source:
        spec.update(source)
    raw = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": md, "spec": spec}
    if phase is not None:
        raw["status"] = {"phase": phase}
    return raw


def pod_with(name="pod-a", claims=(), ns="default", uid=None, ephemeral=(), node_name=""):
    vols = [{"name": f"v-{c}", "persistentVolumeClaim": {"claimName": c}} for c in claims]
    vols += [{"name": e, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}} for e in ephemeral]
    return make_pod(name, ns, spec={"volumes": vols}, uid=uid or "", node_name=node_name)


def node(name, **labels):
    lab = {HOSTNAME: name}
    lab.update(labels)
    return make_node(name, labels=lab)


def plugin_for(nodes, objects, pods=(), args=None, features=None):
    h = FakeHandle(nodes=nodes, pods=pods, objects=[copy.deepcopy(o) for o in objects])
    if features is not None:
        h.features = features
    h.node_order = [n.name for n in nodes]  # the order the upstream tests list them in
    return VolumeBinding(VolumeBinding.set_defaults(args or {}) if args is None else args, h), h


def node_infos(h):
    return [h.snapshot.get(n) for n in h.node_order]


def filter_all(p, state, pod, h):
    return [p.filter(state, pod, ni) for ni in node_infos(h)]


def assert_status(got, code=None, *reasons):
    if code is None:
        assert got is None or got.code == Code.Success, got
        return
    assert got is not None and got.code == code, got
    assert got.get_reasons() == list(reasons), got


# ---- TestVolumeBinding ------------------------------------------------------------------------
def test_pod_without_pvcs_skips():
    p, h = plugin_for([node("node-a")], [IMMEDIATE_SC, WAIT_SC])
    st = new_state()
    res, s = p.pre_filter(st, make_pod("pod-a"), h.snapshot.list())
    assert res is None and s.code == Code.Skip
    assert p.pre_score(st, make_pod("pod-a"), []).code == Code.Skip
    # Reserve / PreBindPreFlight of a pod without claims.
    assert p.reserve(st, make_pod("pod-a"), "node-a") is None
    assert p.pre_bind_pre_flight(st, make_pod("pod-a"), "node-a")[1].code == Code.Skip
    assert p.pre_bind(st, make_pod("pod-a"), "node-a") is None


def test_all_bound():
    objs = [WAIT_SC, pvc("pvc-a", "wait-sc", volume_name="pv-a", bound=True),
            pv("pv-a", "wait-sc")]
    p, h = plugin_for([node("node-a")], objs)
    st = new_state()
    pod = pod_with(claims=["pvc-a"])
    res, s = p.pre_filter(st, pod, h.snapshot.list())
    assert res is None and s is None
    data = st.read(vb.STATE_KEY)
    assert [c.name for c in data.pod_volume_claims.bound_claims] == ["pvc-a"]
    assert data.pod_volume_claims.unbound_claims_delay_binding == []
    assert data.pod_volume_claims.unbound_volumes_delay_binding == {}
    assert filter_all(p, st, pod, h) == [None]
    assert p.pre_score(st, pod, []).code == Code.Skip  # scorer off in v1.34
    assert p.reserve(st, pod, "node-a") is None
    assert data.all_bound is True
    assert p.pre_bind_pre_flight(st, pod, "node-a")[1].code == Code.Skip


def test_all_bound_with_local_volumes():
    objs = [WAIT_SC, pvc("pvc-a", "wait-sc", volume_name="pv-a", bound=True),
            pvc("pvc-b", "wait-sc", volume_name="pv-b", bound=True),
            pv("pv-a", "wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]}),
            pv("pv-b", "wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]})]
    p, h = plugin_for([node("node-a"), node("node-b")], objs)
    st = new_state()
    pod = pod_with(claims=["pvc-a", "pvc-b"])
    res, s = p.pre_filter(st, pod, h.snapshot.list())
    assert res is None and s is None  # v1.34 returns no PreFilterResult
    out = filter_all(p, st, pod, h)
    assert out[0] is None
    assert_status(out[1], Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_CONFLICT)


@pytest.mark.parametrize("claims,objs,want", [
    (["pvc-a"], [], 'persistentvolumeclaim "pvc-a" not found'),
    (["pvc-a", "pvc-b"], [pvc("pvc-a", "wait-sc", volume_name="pv-a", bound=True)],
     'persistentvolumeclaim "pvc-b" not found'),
    (["pvc-a"], [pvc("pvc-a", "wait-sc", volume_name="pv-a", bound=True, phase="Lost")],
     'persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'),
    (["pvc-a"], [pvc("pvc-a", "immediate-sc")], "pod has unbound immediate PersistentVolumeClaims"),
])
def test_prefilter_unresolvable(claims, objs, want):
    p, h = plugin_for([node("node-a")], [IMMEDIATE_SC, WAIT_SC] + objs)
    res, s = p.pre_filter(new_state(), pod_with(claims=claims), h.snapshot.list())
    assert res is None
    assert_status(s, Code.UnschedulableAndUnresolvable, want)


def test_prefilter_pvc_being_deleted():
    claim = pvc("pvc-a", "wait-sc")
    claim["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    p, h = plugin_for([node("node-a")], [WAIT_SC, claim])
    _, s = p.pre_filter(new_state(), pod_with(claims=["pvc-a"]), [])
    assert_status(s, Code.UnschedulableAndUnresolvable, 'persistentvolumeclaim "pvc-a" is being deleted')


def test_prefilter_class_missing_or_unset_is_immediate():
    # A class that does not exist makes the claim immediate (IsDelayBindingMode false).
    p, h = plugin_for([node("node-a")], [pvc("pvc-a", "no-such-class")])
    _, s = p.pre_filter(new_state(), pod_with(claims=["pvc-a"]), [])
    assert_status(s, Code.UnschedulableAndUnresolvable, vb.ERR_REASON_UNBOUND_IMMEDIATE)
    # A prebound claim (volumeName set, not bind-completed) is treated as immediate too.
    p, h = plugin_for([node("node-a")], [WAIT_SC, pvc("pvc-a", "wait-sc", volume_name="pv-a")])
    _, s = p.pre_filter(new_state(), pod_with(claims=["pvc-a"]), [])
    assert_status(s, Code.UnschedulableAndUnresolvable, vb.ERR_REASON_UNBOUND_IMMEDIATE)
    # No class at all: immediate.
    p, h = plugin_for([node("node-a")], [pvc("pvc-a")])
    _, s = p.pre_filter(new_state(), pod_with(claims=["pvc-a"]), [])
    assert_status(s, Code.UnschedulableAndUnresolvable, vb.ERR_REASON_UNBOUND_IMMEDIATE)


def test_unbound_claims_no_matches():
    p, h = plugin_for([node("node-a")], [WAIT_SC, pvc("pvc-a", "wait-sc")])
    st = new_state()
    pod = pod_with(claims=["pvc-a"])
    _, s = p.pre_filter(st, pod, [])
    assert s is None
    data = st.read(vb.STATE_KEY)
    assert data.pod_volume_claims.unbound_volumes_delay_binding == {"wait-sc": []}
    assert_status(filter_all(p, st, pod, h)[0], Code.UnschedulableAndUnresolvable,
                  ERR_REASON_BIND_CONFLICT)


def test_bound_and_unbound_unsatisfied():
    objs = [WAIT_SC, pvc("pvc-a", "wait-sc", volume_name="pv-a", bound=True),
            pvc("pvc-b", "wait-sc"), pv("pv-a", "wait-sc", affinity={"foo": ["bar"]})]
    p, h = plugin_for([make_node("node-a", labels={"foo": "barbar"})], objs)
    st = new_state()
    pod = pod_with(claims=["pvc-a", "pvc-b"])
    assert p.pre_filter(st, pod, [])[1] is None
    assert [v.name for v in st.read(vb.STATE_KEY).pod_volume_claims.unbound_volumes_delay_binding["wait-sc"]] == ["pv-a"]
    assert_status(filter_all(p, st, pod, h)[0], Code.UnschedulableAndUnresolvable,
                  ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)


def test_pv_not_found():
    p, h = plugin_for([node("node-a")], [WAIT_SC, pvc("pvc-a", "wait-sc", volume_name="pv-a", bound=True)])
    st = new_state()
    pod = pod_with(claims=["pvc-a"])
    assert p.pre_filter(st, pod, [])[1] is None
    assert_status(filter_all(p, st, pod, h)[0], Code.UnschedulableAndUnresolvable,
                  "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)")


def _local(name, cls, cap, host):
    return pv(name, cls, capacity=cap, affinity={HOSTNAME: [host]})


CAPACITY_SCORING = vb.Features(enable_storage_capacity_scoring=True)
OLD_DEFAULT_SHAPE = {"bindTimeoutSeconds": 300,
                     "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}


def _score_all(p, st, pod, h):
    assert p.pre_score(st, pod, []) is None
    return [p.score(st, pod, ni)[0] for ni in node_infos(h)]


def test_local_volumes_with_close_capacity_are_preferred():
    objs = [WAIT_SC, pvc("pvc-a", "wait-sc", size="50Gi"),
            _local("pv-a-0", "wait-sc", "200Gi", "node-a"), _local("pv-a-1", "wait-sc", "200Gi", "node-a"),
            _local("pv-b-0", "wait-sc", "100Gi", "node-b"), _local("pv-b-1", "wait-sc", "100Gi", "node-b")]
    p, h = plugin_for([node("node-a"), node("node-b"), node("node-c")], objs,
                      args=OLD_DEFAULT_SHAPE, features=CAPACITY_SCORING)
    st = new_state()
    pod = pod_with(claims=["pvc-a"])
    assert p.pre_filter(st, pod, [])[1] is None
    out = filter_all(p, st, pod, h)
    assert out[:2] == [None, None]
    assert_status(out[2], Code.UnschedulableAndUnresolvable, ERR_REASON_BIND_CONFLICT)
    # 50Gi of 200Gi = 25% -> 25; of 100Gi = 50% -> 50; node-c has no volumes -> 0.
    assert _score_all(p, st, pod, h) == [25, 50, 0]


def test_local_volumes_with_close_capacity_are_preferred_multiple_pvcs():
    objs = [WAIT_SC, WAIT_HDD_SC, pvc("pvc-0", "wait-sc", size="50Gi"),
            pvc("pvc-1", "wait-hdd-sc", size="100Gi")]
    for i, cls in enumerate(["wait-sc", "wait-sc", "wait-hdd-sc", "wait-hdd-sc"]):
        objs.append(_local(f"pv-a-{i}", cls, "200Gi", "node-a"))
        objs.append(_local(f"pv-b-{i}", cls, "100Gi", "node-b"))
    p, h = plugin_for([node("node-a"), node("node-b"), node("node-c")], objs,
                      args=OLD_DEFAULT_SHAPE, features=CAPACITY_SCORING)
    st = new_state()
    pod = pod_with(claims=["pvc-0", "pvc-1"])
    assert p.pre_filter(st, pod, [])[1] is None
    out = filter_all(p, st, pod, h)
    assert out[:2] == [None, None]
    assert_status(out[2], Code.UnschedulableAndUnresolvable, ERR_REASON_BIND_CONFLICT)
    # node-a: (25 + 50) / 2 = 37.5 -> 38; node-b: (50 + 100) / 2 = 75.
    assert _score_all(p, st, pod, h) == [38, 75, 0]


def _zonal_setup(args):
    nodes = []
    for z in "abc":
        for n in "ab":
            nodes.append(make_node(f"zone-{z}-node-{n}", labels={
                "topology.kubernetes.io/region": f"region-{z}", "topology.kubernetes.io/zone": f"zone-{z}"}))
    objs = [WAIT_SC, pvc("pvc-a", "wait-sc", size="50Gi")]
    for z, cap in (("a", "200Gi"), ("b", "100Gi")):
        for i in range(2):
            objs.append(pv(f"pv-{z}-{i}", "wait-sc", capacity=cap, affinity={
                "topology.kubernetes.io/region": [f"region-{z}"], "topology.kubernetes.io/zone": [f"zone-{z}"]}))
    return plugin_for(nodes, objs, args=args, features=CAPACITY_SCORING)


@pytest.mark.parametrize("args,want", [
    (OLD_DEFAULT_SHAPE, [25, 25, 50, 50, 0, 0]),
    ({"bindTimeoutSeconds": 300, "shape": [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 3},
                                           {"utilization": 100, "score": 5}]}, [15, 15, 30, 30, 0, 0]),
])
def test_zonal_volumes_with_close_capacity_are_preferred(args, want):
    p, h = _zonal_setup(args)
    st = new_state()
    pod = pod_with(claims=["pvc-a"])
    assert p.pre_filter(st, pod, [])[1] is None
    out = filter_all(p, st, pod, h)
    assert out[:4] == [None] * 4
    for s in out[4:]:
        assert_status(s, Code.UnschedulableAndUnresolvable, ERR_REASON_BIND_CONFLICT)
    assert _score_all(p, st, pod, h) == want


def test_dynamic_provisioning_scored_by_storage_capacity():
    # StorageCapacityScoring on, default shape (0 -> 10, 100 -> 0): a node with more free
    # storage scores higher. 10Gi on 100Gi: 10% -> 100 - 100*10/100 = 90; on 20Gi: 50% -> 50.
    prov = sc("csi-sc", provisioner="csi.example.com")
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "csi.example.com"},
              "spec": {"storageCapacity": True}}

    def cap(name, host, size):
        return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                "metadata": {"name": name, "namespace": "kube-system"}, "storageClassName": "csi-sc",
                "nodeTopology": {"matchLabels": {HOSTNAME: host}}, "capacity": size}
    objs = [prov, driver, pvc("pvc-a", "csi-sc", size="10Gi"), cap("c-a", "node-a", "100Gi"),
            cap("c-b", "node-b", "20Gi"), cap("c-c", "node-c", "5Gi")]
    p, h = plugin_for([node("node-a"), node("node-b"), node("node-c")], objs,
                      args=vb.set_defaults({}, CAPACITY_SCORING), features=CAPACITY_SCORING)
    st = new_state()
    pod = pod_with(claims=["pvc-a"])
    assert p.pre_filter(st, pod, [])[1] is None
    out = filter_all(p, st, pod, h)
    assert out[:2] == [None, None]
    assert_status(out[2], Code.UnschedulableAndUnresolvable, ERR_REASON_NOT_ENOUGH_SPACE)
    assert _score_all(p, st, pod, h) == [90, 50, 0]


# ---- binder_test.go: FindPodVolumes ----------------------------------------------------------
def T(name, size, cls, **kw):
    """makeTestPVC in namespace testns."""
    kw.setdefault("uid", "pvc-uid")
    return pvc(name, cls, ns="testns", size=size, **kw)


unboundPVC = T("unbound-pvc", "1G", "waitClass")
unboundPVC2 = T("unbound-pvc2", "5G", "waitClass")
preboundPVC = T("prebound-pvc", "1G", "waitClass", volume_name="pv-node1a")
boundPVC = T("bound-pvc", "1G", "waitClass", volume_name="pv-bound", bound=True)
immediateUnboundPVC = T("immediate-unbound-pvc", "1G", "immediateClass")
immediateBoundPVC = T("immediate-bound-pvc", "1G", "immediateClass", volume_name="pv-bound-immediate", bound=True)
provisionedPVC = T("provisioned-pvc", "1Gi", "waitClassWithProvisioner")
provisionedPVC2 = T("provisioned-pvc2", "1Gi", "waitClassWithProvisioner")
noProvisionerPVC = T("no-provisioner-pvc", "1Gi", "waitClass")
topoMismatchPVC = T("topo-mismatch-pvc", "1Gi", "topoMismatchClass")
selectedNodePVC = T("provisioned-pvc", "1Gi", "waitClassWithProvisioner", selected_node="node1")


def TPV(name, node_value, capacity, claim=None, cls="waitClass"):
    return pv(name, cls, capacity=capacity, claim=claim,
              affinity={NODE_KEY: [node_value]} if node_value else None)


pvNode1a = TPV("pv-node1a", "node1", "5G")
pvNode1b = TPV("pv-node1b", "node1", "10G")
pvNode2 = TPV("pv-node2", "node2", "1G")
pvBound = TPV("pv-bound", "node1", "1G", boundPVC)
pvNode1aBound = TPV("pv-node1a", "node1", "5G", unboundPVC)
pvBoundImmediate = TPV("pv-bound-immediate", "node1", "1G", immediateBoundPVC, "immediateClass")
pvBoundImmediateNode2 = TPV("pv-bound-immediate", "node2", "1G", immediateBoundPVC, "immediateClass")

NODE1 = make_node("node1", labels={NODE_KEY: "node1"})


def find(pvcs, pvs, pod=None, node=NODE1, extra=(), cache_pvcs=None):
    h = FakeHandle(nodes=[node], objects=[copy.deepcopy(o) for o in
                                          BINDER_CLASSES + list(pvs) + list(extra) +
                                          list(pvcs if cache_pvcs is None else cache_pvcs)])
    b = binder_mod.VolumeBinder(h.cluster)
    if pod is None:
        pod = pod_with("test-pod", ns="testns", claims=[c["metadata"]["name"] for c in pvcs])
    claims = b.get_pod_volume_claims(pod)
    if claims.unbound_claims_immediate:
        raise VolumeError("pod has unbound immediate PersistentVolumeClaims")
    pvols, reasons = b.find_pod_volumes(pod, claims, node)
    return b, h, pvols, reasons


def names_of(pod_volumes):
    sb = None if pod_volumes.static_bindings is None else [
        (x.pvc.name, x.pv.name) for x in pod_volumes.static_bindings]
    dp = None if pod_volumes.dynamic_provisions is None else [
        x.pvc.name for x in pod_volumes.dynamic_provisions]
    return sb, dp


@pytest.mark.parametrize("pvcs,pvs,bindings,reasons", [
    ([boundPVC], [pvBound], None, []),
    ([boundPVC], [], None, [ERR_REASON_PV_NOT_EXIST]),
    ([unboundPVC], [pvNode2, pvNode1a, pvNode1b], [("unbound-pvc", "pv-node1a")], []),
    ([unboundPVC], [pvNode2], None, [ERR_REASON_BIND_CONFLICT]),
    ([unboundPVC, unboundPVC2], [pvNode1a, pvNode1b],
     [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], []),
    ([unboundPVC2, unboundPVC], [pvNode1a, pvNode1b],  # order-by-size
     [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], []),
    ([unboundPVC, unboundPVC2], [pvNode1a], [("unbound-pvc", "pv-node1a")], [ERR_REASON_BIND_CONFLICT]),
    ([unboundPVC, boundPVC], [pvBound, pvNode1a], [("unbound-pvc", "pv-node1a")], []),
    ([unboundPVC, boundPVC], [pvBound, pvNode2], None, [ERR_REASON_BIND_CONFLICT]),
    ([immediateBoundPVC], [pvBoundImmediate], None, []),
    ([immediateBoundPVC], [pvBoundImmediateNode2], None, [ERR_REASON_NODE_CONFLICT]),
], ids=["bound-pvc", "bound-pvc,pv-not-exists", "unbound-pvc,pv-same-node",
        "unbound-pvc,pv-different-node", "two-unbound-pvcs", "two-unbound-pvcs,order-by-size",
        "two-unbound-pvcs,partial-match", "one-bound,one-unbound", "one-bound,one-unbound,no-match",
        "immediate-bound-pvc", "immediate-bound-pvc-wrong-node"])
def test_find_pod_volumes_without_provisioning(pvcs, pvs, bindings, reasons):
    _, _, pvols, got = find(pvcs, pvs)
    assert got == reasons
    assert names_of(pvols) == (bindings, None)


@pytest.mark.parametrize("pvcs,pvs", [
    ([preboundPVC], [pvNode1aBound]),
    ([unboundPVC, preboundPVC], [pvNode1a, pvNode1b]),
    ([immediateUnboundPVC], []),
    ([immediateUnboundPVC, boundPVC], [pvBound]),
    ([immediateUnboundPVC, unboundPVC], []),
], ids=["prebound-pvc", "one-prebound,one-unbound", "immediate-unbound-pvc",
        "immediate-unbound-pvc,delayed-mode-bound", "immediate-unbound-pvc,delayed-mode-unbound"])
def test_find_pod_volumes_should_fail(pvcs, pvs):
    with pytest.raises(VolumeError):
        find(pvcs, pvs)


def test_find_pod_volumes_pvc_not_found():
    with pytest.raises(VolumeError, match=r'error getting PVC "testns/bound-pvc": could not find '
                                          r'v1.PersistentVolumeClaim "testns/bound-pvc"'):
        find([boundPVC], [pvBound], cache_pvcs=[])


def test_find_pod_volumes_no_volumes_and_no_pvcs():
    for pod in (make_pod("test-pod", "testns"),
                make_pod("test-pod", "testns", spec={"volumes": [{"name": "e", "emptyDir": {}}]})):
        _, _, pvols, reasons = find([], [], pod=pod)
        assert reasons == [] and names_of(pvols) == (None, None)


def test_find_pod_volumes_generic_ephemeral():
    pod = pod_with("test-pod", ns="testns", uid="pod-uid", ephemeral=["test-volume"])
    owned = T("test-pod-test-volume", "1G", "immediateClass", volume_name="pv-bound", bound=True,
              owner_uid="pod-uid")
    pv_bound = TPV("pv-bound", "node1", "1G", owned)
    _, _, pvols, reasons = find([owned], [pv_bound], pod=pod)
    assert reasons == []
    not_owned = T("test-pod-test-volume", "1G", "immediateClass", volume_name="pv-bound", bound=True)
    with pytest.raises(VolumeError, match=r"was not created for pod testns/test-pod \(pod is not owner\)"):
        find([not_owned], [pv_bound], pod=pod)
    with pytest.raises(VolumeError):
        find([], [pv_bound], pod=pod)


CSI_DRIVER_WITH_CAPACITY = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                            "metadata": {"name": PROVISIONER}, "spec": {"storageCapacity": True}}
CSI_DRIVER_WITHOUT_CAPACITY = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                               "metadata": {"name": PROVISIONER}, "spec": {"storageCapacity": False}}


@pytest.mark.parametrize("driver", [None, CSI_DRIVER_WITH_CAPACITY, CSI_DRIVER_WITHOUT_CAPACITY],
                         ids=["no CSIDriver", "with capacity tracking", "without capacity tracking"])
@pytest.mark.parametrize("pvcs,pvs,bindings,provisions,reasons,needs_capacity", [
    ([provisionedPVC], [], None, ["provisioned-pvc"], [], True),
    ([unboundPVC, provisionedPVC], [pvNode1a], [("unbound-pvc", "pv-node1a")], ["provisioned-pvc"], [], True),
    ([boundPVC, provisionedPVC], [pvBound], None, ["provisioned-pvc"], [], True),
    ([boundPVC, selectedNodePVC], [pvBound], None, ["provisioned-pvc"], [], True),
    ([immediateBoundPVC, provisionedPVC], [pvBoundImmediate], None, ["provisioned-pvc"], [], True),
    ([noProvisionerPVC], [], None, None, [ERR_REASON_BIND_CONFLICT], False),
    ([topoMismatchPVC], [], None, None, [ERR_REASON_BIND_CONFLICT], False),
], ids=["one-provisioned", "two-unbound-pvcs,one-matched,one-provisioned", "one-bound,one-provisioned",
        "one-binding,one-selected-node", "one-immediate-bound,one-provisioned", "invalid-provisioner",
        "volume-topology-unsatisfied"])
def test_find_pod_volumes_with_provisioning(driver, pvcs, pvs, bindings, provisions, reasons,
                                            needs_capacity):
    extra = [driver] if driver else []
    _, _, pvols, got = find(pvcs, pvs, extra=extra)
    if needs_capacity and driver is CSI_DRIVER_WITH_CAPACITY:
        # Without CSIStorageCapacity objects, provisioning is blocked.
        reasons = reasons + [ERR_REASON_NOT_ENOUGH_SPACE]
        provisions = None
    assert got == reasons
    assert names_of(pvols) == (bindings, provisions)


def test_find_pod_volumes_selected_node_other_node_fast_path():
    other = T("provisioned-pvc", "1Gi", "waitClassWithProvisioner", selected_node="node2")
    _, _, pvols, got = find([other, unboundPVC], [pvNode1a])
    assert got == [ERR_REASON_BIND_CONFLICT]
    assert names_of(pvols) == (None, None)


def test_find_pod_volumes_with_capacity_objects():
    def cap(name, size, mvs=None, node_value="node1", cls="waitClassWithProvisioner"):
        raw = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
               "metadata": {"name": name, "namespace": "ns"}, "storageClassName": cls,
               "nodeTopology": {"matchLabels": {NODE_KEY: node_value}}}
        if size:
            raw["capacity"] = size
        if mvs:
            raw["maximumVolumeSize"] = mvs
        return raw
    for caps, ok in [([cap("c", "1Gi")], True), ([cap("c", "1Mi")], False),
                     ([cap("c", "100Gi", mvs="1Mi")], False), ([cap("c", "1Gi", node_value="node2")], False),
                     ([cap("c", "1Gi", cls="other")], False), ([cap("c", None, mvs="2Gi")], True)]:
        _, _, pvols, got = find([provisionedPVC], [], extra=[CSI_DRIVER_WITH_CAPACITY] + caps)
        assert got == ([] if ok else [ERR_REASON_NOT_ENOUGH_SPACE]), caps
        if ok:
            assert pvols.dynamic_provisions[0].node_capacity is not None


# ---- CSI migration ---------------------------------------------------------------------------
boundMigrationPVC = T("pvc-migration-bound", "1G", "waitClass", volume_name="pv-migration-bound", bound=True)
migrationPVBound = pv("pv-migration-bound", "waitClass", capacity="1G", claim=boundMigrationPVC,
                      labels={"failure-domain.beta.kubernetes.io/zone": "us-east-1",
                              "failure-domain.beta.kubernetes.io/region": "us-east-1a"},
                      source={"gcePersistentDisk": {"pdName": "test-disk", "fsType": "ext4"}})


def csi_node(name, migrated):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": name, "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": migrated}},
            "spec": {"drivers": []}}


@pytest.mark.parametrize("zone,csinode,reasons", [
    ("us-east-1", csi_node("node1", "kubernetes.io/gce-pd"), []),
    ("us-east-1", csi_node("node1", ""), []),
    ("us-east-1", None, []),
    ("us-east-2", csi_node("node1", "kubernetes.io/gce-pd"), [ERR_REASON_NODE_CONFLICT]),
], ids=["pvc-bound", "pvc-bound,csinode-not-migrated", "pvc-bound,missing-csinode",
        "pvc-bound,node-different-zone"])
def test_find_pod_volumes_with_csi_migration(zone, csinode, reasons):
    n = make_node("node1", labels={"topology.gke.io/zone": zone})
    _, _, _, got = find([boundMigrationPVC], [migrationPVBound], node=n,
                        extra=[csinode] if csinode else [])
    assert got == reasons


# ---- AssumePodVolumes / Revert -----------------------------------------------------------------
def _binder_env(pvcs, pvs):
    h = FakeHandle(nodes=[NODE1], objects=[copy.deepcopy(o) for o in BINDER_CLASSES + pvcs + pvs])
    b = binder_mod.VolumeBinder(h.cluster)
    pod = pod_with("test-pod", ns="testns", claims=[c["metadata"]["name"] for c in pvcs], node_name="node1")
    return h, b, pod


def _pvc_obj(h, raw):
    return h.cluster.get("PersistentVolumeClaim", raw["metadata"]["namespace"], raw["metadata"]["name"])


def _pv_obj(h, raw):
    return h.cluster.get("PersistentVolume", "", raw["metadata"]["name"])


def test_assume_all_bound():
    h, b, pod = _binder_env([boundPVC], [pvBound])
    assert b.assume_pod_volumes(pod, "node1", PodVolumes()) is True


@pytest.mark.parametrize("pairs", [
    [(unboundPVC, pvNode1a)],
    [(unboundPVC, pvNode1a), (unboundPVC2, pvNode1b)],
    [(unboundPVC, pvNode1aBound)],
], ids=["one-binding", "two-bindings", "pv-already-bound"])
def test_assume_bindings(pairs):
    h, b, pod = _binder_env([c for c, _ in pairs], [v for _, v in pairs])
    pvols = PodVolumes(static_bindings=[BindingInfo(pvc=_pvc_obj(h, c), pv=_pv_obj(h, v)) for c, v in pairs])
    assert b.assume_pod_volumes(pod, "node1", pvols) is False
    assert pvols.dynamic_provisions == []
    for (c, v), bi in zip(pairs, pvols.static_bindings):
        cached = b.pv_cache.get_pv(v["metadata"]["name"])
        ref = cached.raw["spec"]["claimRef"]
        assert (ref["name"], ref["namespace"], ref["uid"]) == (c["metadata"]["name"], "testns", "pvc-uid")
        assert cached.annotations[ANN_BOUND_BY_CONTROLLER] == "yes"
        assert bi.pv is cached or bi.pv.raw == cached.raw
    b.revert_assumed_pod_volumes(pvols)
    for c, v in pairs:
        assert b.pv_cache.get_pv(v["metadata"]["name"]) is b.pv_cache.get_api_pv(v["metadata"]["name"])


def test_assume_binding_and_provisioning_and_revert():
    h, b, pod = _binder_env([unboundPVC, provisionedPVC], [pvNode1a])
    pvols = PodVolumes(static_bindings=[BindingInfo(pvc=_pvc_obj(h, unboundPVC), pv=_pv_obj(h, pvNode1a))],
                       dynamic_provisions=[DynamicProvision(pvc=_pvc_obj(h, provisionedPVC))])
    assert b.assume_pod_volumes(pod, "node1", pvols) is False
    assert b.pvc_cache.get_pvc("testns/provisioned-pvc").annotations[ANN_SELECTED_NODE] == "node1"
    # The API object is untouched.
    assert ANN_SELECTED_NODE not in _pvc_obj(h, provisionedPVC).annotations
    b.revert_assumed_pod_volumes(pvols)
    assert ANN_SELECTED_NODE not in b.pvc_cache.get_pvc("testns/provisioned-pvc").annotations
    assert b.pv_cache.get_pv("pv-node1a").raw["spec"].get("claimRef") is None


def test_assume_failure_reverts():
    # tmpupdate-failed: the second PV is not in the cache.
    h, b, pod = _binder_env([unboundPVC], [pvNode1a])
    missing = KubeObject(copy.deepcopy(pvNode1b))
    pvols = PodVolumes(static_bindings=[BindingInfo(pvc=_pvc_obj(h, unboundPVC), pv=_pv_obj(h, pvNode1a)),
                                        BindingInfo(pvc=KubeObject(copy.deepcopy(unboundPVC2)), pv=missing)])
    with pytest.raises(VolumeError):
        b.assume_pod_volumes(pod, "node1", pvols)
    assert b.pv_cache.get_pv("pv-node1a").raw["spec"].get("claimRef") is None


def test_assume_out_of_sync_version_fails():
    h, b, pod = _binder_env([unboundPVC, provisionedPVC2], [pvNode1a])
    stale = _pvc_obj(h, provisionedPVC2)
    newer = copy.deepcopy(stale.raw)
    h.cluster.update(KubeObject(newer))  # the API object moved on
    old = KubeObject(copy.deepcopy(stale.raw))
    old.resource_version = stale.resource_version
    pvols = PodVolumes(static_bindings=[BindingInfo(pvc=_pvc_obj(h, unboundPVC), pv=_pv_obj(h, pvNode1a))],
                       dynamic_provisions=[DynamicProvision(pvc=old)])
    with pytest.raises(VolumeError, match="is out of sync"):
        b.assume_pod_volumes(pod, "node1", pvols)
    assert b.pv_cache.get_pv("pv-node1a").raw["spec"].get("claimRef") is None


def test_api_update_replaces_assumed_object():
    h, b, pod = _binder_env([unboundPVC], [pvNode1a])
    pvols = PodVolumes(static_bindings=[BindingInfo(pvc=_pvc_obj(h, unboundPVC), pv=_pv_obj(h, pvNode1a))])
    b.assume_pod_volumes(pod, "node1", pvols)
    assert b.pv_cache.get_pv("pv-node1a").raw["spec"].get("claimRef") is not None
    raw = copy.deepcopy(_pv_obj(h, pvNode1a).raw)
    raw["metadata"]["labels"] = {"x": "y"}
    h.cluster.update(KubeObject(raw))  # newer than the assumed version
    assert b.pv_cache.get_pv("pv-node1a").raw["spec"].get("claimRef") is None


# ---- BindPodVolumes / checkBindings ------------------------------------------------------------
def _full_cycle(pvcs, pvs, node=NODE1, extra=(), plugin_args=None):
    pod = pod_with("test-pod", ns="testns", claims=[c["metadata"]["name"] for c in pvcs])
    h = FakeHandle(nodes=[node], pods=[pod], objects=[copy.deepcopy(o) for o in
                                                      BINDER_CLASSES + list(pvcs) + list(pvs) + list(extra)])
    p = VolumeBinding(VolumeBinding.set_defaults(plugin_args or {}), h)
    st = new_state()
    return p, h, st, pod


def test_prebind_static_binding_completes():
    p, h, st, pod = _full_cycle([unboundPVC], [pvNode1a, pvNode2])
    assert p.pre_filter(st, pod, [])[1] is None
    assert p.filter(st, pod, h.snapshot.get("node1")) is None
    assert p.reserve(st, pod, "node1") is None
    assert p.pre_bind_pre_flight(st, pod, "node1")[1] is None
    assert drive(p.pre_bind(st, pod, "node1")) is None
    api_pv = h.cluster.get("PersistentVolume", "", "pv-node1a")
    api_pvc = h.cluster.get("PersistentVolumeClaim", "testns", "unbound-pvc")
    assert api_pv.raw["spec"]["claimRef"]["name"] == "unbound-pvc"
    assert api_pv.raw["status"]["phase"] == "Bound"
    assert api_pvc.raw["spec"]["volumeName"] == "pv-node1a"
    assert api_pvc.annotations[ANN_BIND_COMPLETED] == "yes"
    assert api_pvc.raw["status"]["phase"] == "Bound"
    # The next pod using the claim sees it bound.
    st2 = new_state()
    assert p.pre_filter(st2, pod, [])[1] is None
    assert [c.name for c in st2.read(vb.STATE_KEY).pod_volume_claims.bound_claims] == ["unbound-pvc"]


def test_prebind_provisioning_creates_pv_on_selected_node():
    cn = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node1"},
          "spec": {"drivers": [{"name": PROVISIONER, "nodeID": "node1", "topologyKeys": [NODE_KEY]}]}}
    p, h, st, pod = _full_cycle([provisionedPVC], [], extra=[cn])
    assert p.pre_filter(st, pod, [])[1] is None
    assert p.filter(st, pod, h.snapshot.get("node1")) is None
    assert p.reserve(st, pod, "node1") is None
    assert drive(p.pre_bind(st, pod, "node1")) is None
    api_pvc = h.cluster.get("PersistentVolumeClaim", "testns", "provisioned-pvc")
    assert api_pvc.annotations[ANN_SELECTED_NODE] == "node1"
    pv_name = api_pvc.raw["spec"]["volumeName"]
    assert pv_name == "pvc-pvc-uid"
    new_pv = h.cluster.get("PersistentVolume", "", pv_name)
    assert new_pv.raw["spec"]["capacity"] == {"storage": "1Gi"}
    assert new_pv.raw["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": NODE_KEY, "operator": "In", "values": ["node1"]}]}]
    assert new_pv.raw["spec"]["storageClassName"] == "waitClassWithProvisioner"


def test_prebind_zero_timeout_fails_after_api_updates():
    p, h, st, pod = _full_cycle([unboundPVC], [pvNode1a], plugin_args={"bindTimeoutSeconds": 0})
    p.pre_filter(st, pod, [])
    p.filter(st, pod, h.snapshot.get("node1"))
    p.reserve(st, pod, "node1")
    s = drive(p.pre_bind(st, pod, "node1"))
    assert s.code == Code.Error and "binding volumes: context deadline exceeded" in s.message()


def test_prebind_conflict_when_pv_changed():
    p, h, st, pod = _full_cycle([unboundPVC], [pvNode1a])
    p.pre_filter(st, pod, [])
    p.filter(st, pod, h.snapshot.get("node1"))
    p.reserve(st, pod, "node1")
    # Someone else binds the PV in between (newer version replaces the assumed one too).
    raw = copy.deepcopy(_pv_obj(h, pvNode1a).raw)
    raw["spec"]["claimRef"] = {"name": "other", "namespace": "testns", "uid": "other-uid"}
    h.cluster.update(KubeObject(raw))
    s = drive(p.pre_bind(st, pod, "node1"))
    assert s.code == Code.Error
    assert 'Operation cannot be fulfilled on persistentvolumes "pv-node1a"' in s.message()
    p.unreserve(st, pod, "node1")


def test_prebind_no_pod_volume_for_node():
    p, h, st, pod = _full_cycle([unboundPVC], [pvNode1a])
    p.pre_filter(st, pod, [])
    st.read(vb.STATE_KEY).all_bound = False
    s = p.pre_bind_pre_flight(st, pod, "node9")[1]
    assert s.code == Code.Error and s.message() == 'no pod volume found for node "node9"'


def test_check_bindings_errors():
    h, b, pod = _binder_env([unboundPVC], [pvNode1aBound])
    h.cluster.create(pod)
    bi = BindingInfo(pvc=_pvc_obj(h, unboundPVC), pv=_pv_obj(h, pvNode1aBound))
    # Not bound yet.
    assert b.check_bindings(pod, "node1", [bi], []) is False
    # Missing node.
    with pytest.raises(VolumeError, match='failed to get node "nodeX"'):
        b.check_bindings(pod, "nodeX", [bi], [])
    # ClaimRef reset.
    raw = copy.deepcopy(_pv_obj(h, pvNode1aBound).raw)
    raw["spec"]["claimRef"]["uid"] = ""
    h.cluster.update(KubeObject(raw))
    with pytest.raises(VolumeError, match='ClaimRef got reset for pv "pv-node1a"'):
        b.check_bindings(pod, "node1", [bi], [])
    with pytest.raises(VolumeError, match="failed to get cached bindings"):
        b.check_bindings(pod, "node1", None, [])
    # Provisioning failed: the selected node annotation was removed.
    c = _pvc_obj(h, unboundPVC)
    with pytest.raises(VolumeError, match='selectedNode annotation reset for PVC "unbound-pvc"'):
        b.check_bindings(pod, "node1", [], [c])


# ---- FindMatchingVolume (pv_helpers) ----------------------------------------------------------
def _fm(claim, vols, node=NODE1, excluded=()):
    return find_matching_volume(KubeObject(copy.deepcopy(claim)), [KubeObject(copy.deepcopy(v)) for v in vols],
                                node, {n: None for n in excluded}, True, True)


def test_find_matching_volume_filters():
    c = pvc("c", "x", size="5Gi", access_modes=["ReadWriteOnce"])
    ok = pv("ok", "x", capacity="10Gi", access_modes=["ReadWriteOnce", "ReadOnlyMany"])
    assert _fm(c, [ok]).name == "ok"
    assert _fm(c, [pv("small", "x", capacity="4Gi", access_modes=["ReadWriteOnce"])]) is None
    assert _fm(c, [pv("rox", "x", capacity="10Gi", access_modes=["ReadOnlyMany"])]) is None
    assert _fm(c, [pv("other-class", "y", capacity="10Gi", access_modes=["ReadWriteOnce"])]) is None
    assert _fm(c, [pv("released", "x", capacity="10Gi", access_modes=["ReadWriteOnce"], phase="Released")]) is None
    assert _fm(c, [pv("block", "x", capacity="10Gi", access_modes=["ReadWriteOnce"], volume_mode="Block")]) is None
    assert _fm(c, [pv("vac", "x", capacity="10Gi", access_modes=["ReadWriteOnce"], vac="gold")]) is None
    assert _fm(c, [ok], excluded=["ok"]) is None
    # smallest fitting volume wins
    big = pv("big", "x", capacity="100Gi", access_modes=["ReadWriteOnce"])
    assert _fm(c, [big, ok]).name == "ok"
    # selector
    cs = pvc("c", "x", size="5Gi", selector={"matchLabels": {"tier": "gold"}})
    assert _fm(cs, [pv("p", "x", capacity="5Gi")]) is None
    assert _fm(cs, [pv("p", "x", capacity="5Gi", labels={"tier": "gold"})]).name == "p"
    # node affinity
    assert _fm(c, [pv("far", "x", capacity="10Gi", access_modes=["ReadWriteOnce"],
                      affinity={NODE_KEY: ["node2"]})]) is None
    # a PV pre-bound to the claim is returned whatever its phase or class
    pre = pv("pre", "other", capacity="10Gi", phase="Pending", claim=c)
    assert _fm(c, [big, pre]).name == "pre"
    # claimed by someone else
    other = pv("o", "x", capacity="10Gi", access_modes=["ReadWriteOnce"], claim=pvc("z", "x"))
    assert _fm(c, [other]) is None


def test_find_matching_volume_vac_disabled():
    c = pvc("c", "x", size="5Gi", vac="gold")
    with pytest.raises(VolumeError, match="unsupported volumeAttributesClassName"):
        find_matching_volume(KubeObject(copy.deepcopy(c)), [], NODE1, {}, True, False)


# ---- scorer ----------------------------------------------------------------------------------
def test_broken_linear_function():
    f = build_broken_linear_function([(0, 100), (100, 0)])
    assert [f(p) for p in (0, 10, 33, 50, 100, 120)] == [100, 90, 67, 50, 0, 0]
    g = build_broken_linear_function([(10, 20), (50, 30)])
    assert [g(0), g(10), g(30), g(50), g(90)] == [20, 20, 25, 30, 30]


def test_scorer_function():
    s = build_scorer_function([(0, 0), (100, 100)])
    assert s({}) == 0
    assert s({"a": StorageResource(50, 200)}) == 25
    assert s({"a": StorageResource(300, 200)}) == 100  # over capacity: utilization 100
    assert s({"a": StorageResource(5, 0)}) == 100
    assert s({"a": StorageResource(50, 200), "b": StorageResource(100, 200)}) == 38  # 37.5 rounds up


# ---- args ------------------------------------------------------------------------------------
def test_set_defaults_and_validate():
    assert VolumeBinding.set_defaults({}) == {"bindTimeoutSeconds": 600}
    assert VolumeBinding.set_defaults({"bindTimeoutSeconds": 30}) == {"bindTimeoutSeconds": 30}
    assert vb.set_defaults({}, CAPACITY_SCORING)["shape"] == [{"utilization": 0, "score": 10},
                                                             {"utilization": 100, "score": 0}]
    assert VolumeBinding.validate_args({"bindTimeoutSeconds": 600}) == []
    assert VolumeBinding.validate_args({"bindTimeoutSeconds": -1}) == [
        ("bindTimeoutSeconds", "Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value")]
    assert VolumeBinding.validate_args({"bindTimeoutSeconds": 600, "shape": [{"utilization": 0, "score": 10}]}) == [
        ("shape", 'Invalid value: [{"Utilization":0,"Score":10}]: unexpected field `shape`, remove it or '
                  'turn on the feature gate StorageCapacityScoring')]
    errs = vb.validate_args({"bindTimeoutSeconds": 1, "shape": [{"utilization": 50, "score": 11},
                                                                 {"utilization": 50, "score": -1}]},
                            CAPACITY_SCORING)
    assert errs == [("shape[1].utilization", "Invalid value: 50: values must be sorted in increasing order"),
                    ("shape[0].score", "Invalid value: 11: not in valid range [0, 10]"),
                    ("shape[1].score", "Invalid value: -1: not in valid range [0, 10]")]
    assert vb.validate_args({"bindTimeoutSeconds": 1, "shape": []}, CAPACITY_SCORING) == [
        ("shape", "Required value: at least one point must be specified")]


# ---- queueing hints ----------------------------------------------------------------------------
def K(raw):
    return KubeObject(copy.deepcopy(raw))


def test_hint_pvc_change():
    pod = pod_with(claims=["pvc-a"], ephemeral=["eph"])
    Q, S = QueueingHint.Queue, QueueingHint.QueueSkip
    f = vb.is_schedulable_after_persistent_volume_claim_change
    assert f(pod, None, K(pvc("pvc-a", "x"))) == Q
    assert f(pod, None, K(pvc("pod-a-eph", "x"))) == Q
    assert f(pod, None, K(pvc("pvc-b", "x"))) == S
    assert f(pod, None, K(pvc("pvc-a", "x", ns="other"))) == S


def test_hint_storage_class_change():
    Q, S = QueueingHint.Queue, QueueingHint.QueueSkip
    f = vb.is_schedulable_after_storage_class_change
    pod = pod_with(claims=["pvc-a"])
    a = sc("s", allowed=[{"matchLabelExpressions": [{"key": "z", "values": ["1"]}]}])
    b = sc("s", allowed=[{"matchLabelExpressions": [{"key": "z", "values": ["2"]}]}])
    assert f(pod, None, K(a)) == Q
    assert f(pod, K(a), K(b)) == Q
    assert f(pod, K(a), K(dict(a, reclaimPolicy="Retain"))) == S
    assert f(pod, K(sc("s")), K(sc("s", allowed=[]))) == S  # nil and empty are equal


def test_hint_csi_node_change():
    Q, S = QueueingHint.Queue, QueueingHint.QueueSkip
    f = vb.is_schedulable_after_csi_node_change
    pod = pod_with(claims=["pvc-a"])
    assert f(pod, None, K(csi_node("n", "a"))) == Q
    assert f(pod, K(csi_node("n", "a")), K(csi_node("n", "a,b"))) == Q
    assert f(pod, K(csi_node("n", "a")), K(csi_node("n", "a"))) == S


def test_hint_csi_storage_capacity_change():
    Q, S = QueueingHint.Queue, QueueingHint.QueueSkip
    f = vb.is_schedulable_after_csi_storage_capacity_change
    pod = pod_with(claims=["pvc-a"])

    def cap(c=None, m=None):
        raw = {"kind": "CSIStorageCapacity", "metadata": {"name": "c", "namespace": "n"}}
        if c:
            raw["capacity"] = c
        if m:
            raw["maximumVolumeSize"] = m
        return K(raw)
    assert f(pod, None, cap("1Gi")) == Q
    assert f(pod, cap("1Gi"), cap("2Gi")) == Q
    assert f(pod, cap("2Gi"), cap("1Gi")) == S
    assert f(pod, cap(), cap("1Gi")) == Q
    assert f(pod, cap("1Gi"), cap()) == S
    assert f(pod, cap("10Gi", "1Gi"), cap("10Gi", "2Gi")) == Q
    assert f(pod, cap("10Gi", "2Gi"), cap("20Gi", "2Gi")) == S


def test_hint_csi_driver_change():
    Q, S = QueueingHint.Queue, QueueingHint.QueueSkip
    f = vb.is_schedulable_after_csi_driver_change
    pod = make_pod("p", spec={"volumes": [{"name": "v", "csi": {"driver": "d"}}]})

    def drv(name, cap):
        return K({"kind": "CSIDriver", "metadata": {"name": name}, "spec": {"storageCapacity": cap}})
    assert f(pod, drv("d", True), drv("d", False)) == Q
    assert f(pod, drv("d", False), drv("d", True)) == S
    assert f(pod, drv("e", True), drv("e", False)) == S


def test_events_to_register():
    p, _ = plugin_for([node("n")], [])
    evs = p.events_to_register()
    assert [(e.event.resource.value, int(e.event.action_type)) for e in evs] == [
        ("storage.k8s.io/StorageClass", int(vb.ActionType.Add | vb.ActionType.Update)),
        ("PersistentVolumeClaim", int(vb.ActionType.Add | vb.ActionType.Update)),
        ("PersistentVolume", int(vb.ActionType.Add | vb.ActionType.Update)),
        ("Node", int(vb.ActionType.Add | vb.ActionType.UpdateNodeLabel)),
        ("storage.k8s.io/CSINode", int(vb.ActionType.Add | vb.ActionType.Update)),
        ("storage.k8s.io/CSIDriver", int(vb.ActionType.Update)),
        ("storage.k8s.io/CSIStorageCapacity", int(vb.ActionType.Add | vb.ActionType.Update)),
    ]
    assert evs[2].queueing_hint_fn is None and evs[3].queueing_hint_fn is None


# ---- the simulated provisioner's node affinity -------------------------------------------------
@pytest.mark.parametrize("cls,want", [
    (sc("c", provisioner="p.example.com",
        allowed=[{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["z1", "z2"]}]}]),
     [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}]),
    (sc("c", provisioner="p.example.com"),
     [{"key": HOSTNAME, "operator": "In", "values": ["n1"]}]),
], ids=["allowedTopologies keys", "hostname"])
def test_provisioned_volume_topology(cls, want):
    n = make_node("n1", labels={HOSTNAME: "n1", "topology.kubernetes.io/zone": "z1"})
    claim = pvc("c1", "c", size="3Gi", access_modes=["ReadWriteOnce"])
    pod = pod_with("p", claims=["c1"])
    h = FakeHandle(nodes=[n], pods=[pod], objects=[copy.deepcopy(cls), copy.deepcopy(claim)])
    p = VolumeBinding(VolumeBinding.set_defaults({}), h)
    st = new_state()
    assert p.pre_filter(st, pod, [])[1] is None
    assert p.filter(st, pod, h.snapshot.get("n1")) is None
    assert p.reserve(st, pod, "n1") is None
    assert p.pre_bind_pre_flight(st, pod, "n1")[1] is None
    assert drive(p.pre_bind(st, pod, "n1")) is None
    api_pvc = h.cluster.get("PersistentVolumeClaim", "default", "c1")
    assert api_pvc.raw["status"]["phase"] == "Bound"
    assert api_pvc.annotations["volume.kubernetes.io/storage-provisioner"] == "p.example.com"
    new_pv = h.cluster.get("PersistentVolume", "", api_pvc.raw["spec"]["volumeName"])
    assert new_pv.raw["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [{"matchExpressions": want}]
    assert new_pv.raw["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert new_pv.raw["spec"]["claimRef"]["uid"] == "uid-default-c1"
    # A second pod sharing the claim now sees it bound.
    st2 = new_state()
    assert p.pre_filter(st2, pod_with("p2", claims=["c1"]), [])[1] is None
    assert p.reserve(st2, pod_with("p2", claims=["c1"]), "n1") is None
    assert p.pre_bind_pre_flight(st2, pod_with("p2", claims=["c1"]), "n1")[1].code == Code.Skip


def test_selected_node_assumed_restricts_second_pod():
    # Between Reserve and PreBind of the first pod, a second pod sharing the claim sees the
    # assumed selected-node annotation and only that node passes (the fast path).
    n1 = make_node("n1", labels={HOSTNAME: "n1"})
    n2 = make_node("n2", labels={HOSTNAME: "n2"})
    cls = sc("c", provisioner="p.example.com")
    claim = pvc("c1", "c", size="3Gi")
    p1, p2 = pod_with("p1", claims=["c1"]), pod_with("p2", claims=["c1"])
    h = FakeHandle(nodes=[n1, n2], pods=[p1, p2], objects=[copy.deepcopy(cls), copy.deepcopy(claim)])
    p = VolumeBinding(VolumeBinding.set_defaults({}), h)
    st1 = new_state()
    p.pre_filter(st1, p1, [])
    assert p.filter(st1, p1, h.snapshot.get("n1")) is None
    assert p.reserve(st1, p1, "n1") is None
    st2 = new_state()
    assert p.pre_filter(st2, p2, [])[1] is None
    assert p.filter(st2, p2, h.snapshot.get("n1")) is None
    assert_status(p.filter(st2, p2, h.snapshot.get("n2")), Code.UnschedulableAndUnresolvable,
                  ERR_REASON_BIND_CONFLICT)
    # Unreserve of the first pod drops the assumption.
    p.unreserve(st1, p1, "n1")
    st3 = new_state()
    p.pre_filter(st3, p2, [])
    assert p.filter(st3, p2, h.snapshot.get("n2")) is None
