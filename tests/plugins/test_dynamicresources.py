"""DynamicResources at each extension point: the scenarios of TestPlugin in
dynamicresources_test.go (v1.34) and of its queueing-hint tests, on the simulated API server."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

import pytest

from builtin_plugins.dynamicresources import DynamicResources
from builtin_plugins.dynamicresources.plugin import STATE_KEY
from harness.api.objects import KubeObject, Pod
from harness.framework import Code, QueueingHint, Status
from harness.testing import FakeHandle, make_node, make_pod, new_state
from harness.versions import resolve

V134 = resolve("v1.34")

POD_UID = "pod-uid-1"
CLASS = "my-resource-class"
DRIVER = "some-driver"


def klass(name: str = CLASS, expression: Optional[str] = None) -> Dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression or f'device.driver == "{DRIVER}"'}}]}}


def slice_(node_name: str, *devices: str) -> Dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-slice"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": d} for d in devices]}}


def claim(name: str = "my-pod-my-resource", *, count: int = 1, class_name: str = CLASS, owner: Optional[str] = None,
          allocated_on: Optional[str] = None, reserved_for: Optional[List[str]] = None,
          deleting: bool = False) -> Dict[str, Any]:
    md: Dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if owner:
        md["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": owner, "controller": True}]
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    raw: Dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": md,
                           "spec": {"devices": {"requests": [
                               {"name": "req-1", "exactly": {"deviceClassName": class_name,
                                                             "allocationMode": "ExactCount", "count": count}}]}}}
    status: Dict[str, Any] = {}
    if allocated_on:
        status["allocation"] = {
            "devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": allocated_on, "device": "instance-1"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [allocated_on]}]}]}}
    if reserved_for:
        status["reservedFor"] = [{"resource": "pods", "name": n, "uid": u} for n, u in
                                 [(r.split(":")[0], r.split(":")[1]) for r in reserved_for]]
    if status:
        raw["status"] = status
    return raw


def pod_with_claim_name(claim_name: str = "my-pod-my-resource") -> Pod:
    return make_pod("my-pod", uid=POD_UID, spec={"resourceClaims": [{"name": "my-resource", "resourceClaimName": claim_name}]})


def pod_with_claim_template(status_name: Optional[str] = "my-pod-my-resource") -> Pod:
    p = make_pod("my-pod", uid=POD_UID, spec={"resourceClaims": [{"name": "my-resource",
                                                                  "resourceClaimTemplateName": "my-template"}]})
    if status_name:
        p.raw["status"] = {"resourceClaimStatuses": [{"name": "my-resource", "resourceClaimName": status_name}]}
    return p


class Ctx:
    def __init__(self, objects, nodes=("worker", "worker-2"), features=V134):
        self.nodes = [make_node(n) for n in nodes]
        self.handle = FakeHandle(self.nodes, objects=[copy.deepcopy(o) for o in objects])
        self.handle.feature_gates = features  # the table tests are v1.34's unless they say
        self.pl = DynamicResources(DynamicResources.set_defaults({}, features=features), self.handle)
        self.state = new_state()

    def node_info(self, name):
        return self.handle.snapshot.get(name)

    def claim(self, name="my-pod-my-resource") -> KubeObject:
        return self.handle.cluster.get("ResourceClaim", "default", name)

    def run_until_filter(self, pod):
        st = self.pl.pre_enqueue(pod)
        if st is not None:
            return "preenqueue", st
        _, st = self.pl.pre_filter(self.state, pod, self.handle.snapshot.list())
        if st is not None:
            return "prefilter", st
        return "filter", {n.name: self.pl.filter(self.state, pod, self.node_info(n.name)) for n in self.nodes}


def test_empty_pod_skips():
    c = Ctx([])
    pod = make_pod("my-pod", uid=POD_UID)
    assert c.pl.pre_enqueue(pod) is None
    _, st = c.pl.pre_filter(c.state, pod, [])
    assert st.is_skip()
    _, st = c.pl.post_filter(c.state, pod, None)
    assert st == Status(Code.Unschedulable, "no new claims to deallocate")
    assert c.pl.pre_bind_pre_flight(c.state, pod, "worker")[1].is_skip()


def test_missing_claim_preenqueue():
    c = Ctx([klass()])
    phase, st = c.run_until_filter(pod_with_claim_name())
    assert phase == "preenqueue"
    assert st == Status(Code.UnschedulableAndUnresolvable, 'could not find ResourceClaim "default/my-pod-my-resource"')


def test_claim_template_without_status_preenqueue():
    c = Ctx([klass()])
    st = c.pl.pre_enqueue(pod_with_claim_template(status_name=None))
    assert st == Status(Code.UnschedulableAndUnresolvable, 'pod "default/my-pod": ResourceClaim not created yet')


def test_claim_template_not_owned_by_pod():
    c = Ctx([klass(), claim(owner="someone-else")])
    st = c.pl.pre_enqueue(pod_with_claim_template())
    assert st == Status(Code.UnschedulableAndUnresolvable,
                        "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)")


def test_deleted_claim():
    c = Ctx([klass(), claim(deleting=True)])
    st = c.pl.pre_enqueue(pod_with_claim_name())
    assert st == Status(Code.UnschedulableAndUnresolvable, 'resourceclaim "my-pod-my-resource" is being deleted')


def test_missing_class():
    c = Ctx([claim()])
    phase, st = c.run_until_filter(pod_with_claim_name())
    assert phase == "prefilter"
    assert st == Status(Code.UnschedulableAndUnresolvable, f"request req-1: device class {CLASS} does not exist")
    _, st = c.pl.post_filter(c.state, pod_with_claim_name(), None)
    assert st == Status(Code.Unschedulable, "no new claims to deallocate")


def test_structured_no_resources():
    c = Ctx([klass(), claim()])
    pod = pod_with_claim_name()
    phase, res = c.run_until_filter(pod)
    assert phase == "filter"
    for n in ("worker", "worker-2"):
        assert res[n] == Status(Code.UnschedulableAndUnresolvable, "cannot allocate all claims")
    _, st = c.pl.post_filter(c.state, pod, None)
    assert st == Status(Code.Unschedulable, "still not schedulable")


def test_structured_with_resources_reserve_prebind():
    c = Ctx([klass(), claim(), slice_("worker", "instance-1")])
    pod = pod_with_claim_name()
    _, res = c.run_until_filter(pod)
    assert res["worker"] is None
    assert res["worker-2"] == Status(Code.UnschedulableAndUnresolvable, "cannot allocate all claims")
    assert c.pl.reserve(c.state, pod, "worker") is None
    uid = c.claim().uid
    assert c.pl.claim_tracker().claim_has_pending_allocation(uid)
    assert ("some-driver", "worker", "instance-1") in c.pl.claim_tracker().list_all_allocated_devices()
    assert c.pl.pre_bind(c.state, pod, "worker") is None
    got = c.claim()
    assert not c.pl.claim_tracker().claim_has_pending_allocation(uid)
    assert got.raw["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert got.status["allocation"] == {
        "devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": "worker", "device": "instance-1"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}}
    assert got.status["reservedFor"] == [{"resource": "pods", "name": "my-pod", "uid": POD_UID}]


def test_structured_unreserve_drops_in_flight():
    c = Ctx([klass(), claim(), slice_("worker", "instance-1")])
    pod = pod_with_claim_name()
    c.run_until_filter(pod)
    c.pl.reserve(c.state, pod, "worker")
    c.pl.unreserve(c.state, pod, "worker")
    assert not c.pl.claim_tracker().claim_has_pending_allocation(c.claim().uid)
    assert c.pl.claim_tracker().list_all_allocated_devices() == set()
    assert "allocation" not in c.claim().status


def test_claim_in_process_of_being_allocated():
    c = Ctx([klass(), claim(), slice_("worker", "instance-1")])
    pod = pod_with_claim_name()
    c.run_until_filter(pod)
    c.pl.reserve(c.state, pod, "worker")
    other = make_pod("other", uid="other-uid", spec={"resourceClaims": [{"name": "x", "resourceClaimName": "my-pod-my-resource"}]})
    _, st = c.pl.pre_filter(new_state(), other, [])
    assert st == Status(Code.UnschedulableAndUnresolvable,
                        "resource claim default/my-pod-my-resource is in the process of being allocated")


def test_wrong_topology_deallocates():
    c = Ctx([klass(), claim(allocated_on="worker-3")])
    pod = pod_with_claim_name()
    _, res = c.run_until_filter(pod)
    for n in ("worker", "worker-2"):
        assert res[n] == Status(Code.UnschedulableAndUnresolvable, "resourceclaim not available on the node")
    _, st = c.pl.post_filter(c.state, pod, None)
    assert st == Status(Code.Unschedulable, "deallocation of ResourceClaim completed")
    assert "allocation" not in c.claim().status


def test_wrong_topology_reserved_by_other_pod_stays():
    c = Ctx([klass(), claim(allocated_on="worker-3", reserved_for=["other:other-uid"])])
    pod = pod_with_claim_name()
    c.run_until_filter(pod)
    _, st = c.pl.post_filter(c.state, pod, None)
    assert st == Status(Code.Unschedulable, "still not schedulable")
    assert "allocation" in c.claim().status


def test_good_topology_reserves():
    c = Ctx([klass(), claim(allocated_on="worker")])
    pod = pod_with_claim_name()
    _, res = c.run_until_filter(pod)
    assert res["worker"] is None
    assert res["worker-2"] == Status(Code.UnschedulableAndUnresolvable, "resourceclaim not available on the node")
    assert c.pl.reserve(c.state, pod, "worker") is None
    assert c.pl.pre_bind(c.state, pod, "worker") is None
    assert c.claim().status["reservedFor"] == [{"resource": "pods", "name": "my-pod", "uid": POD_UID}]
    assert "finalizers" not in c.claim().raw["metadata"]


def test_reserved_okay_no_update():
    c = Ctx([klass(), claim(allocated_on="worker", reserved_for=[f"my-pod:{POD_UID}"])])
    pod = pod_with_claim_name()
    c.run_until_filter(pod)
    rv = c.claim().resource_version
    assert c.pl.pre_bind(c.state, pod, "worker") is None
    assert c.claim().resource_version == rv


def test_bind_failure_allocated_elsewhere():
    c = Ctx([klass(), claim(), slice_("worker", "instance-1")])
    pod = pod_with_claim_name()
    c.run_until_filter(pod)
    c.pl.reserve(c.state, pod, "worker")
    cur = c.claim()
    raw = copy.deepcopy(cur.raw)
    raw["status"] = {"allocation": {"devices": {"results": []}}}
    c.handle.cluster.update(KubeObject(raw))
    st = c.pl.pre_bind(c.state, pod, "worker")
    assert st.code == Code.Error
    assert "claim default/my-pod-my-resource got allocated elsewhere in the meantime" in st.message()


def test_invalid_cel_is_error():
    c = Ctx([klass(expression="noSuchVar"), claim(), slice_("worker", "instance-1")])
    _, res = c.run_until_filter(pod_with_claim_name())
    assert res["worker"].code == Code.Error
    assert "class my-resource-class: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:1: " \
           "undeclared reference to 'noSuchVar'" in res["worker"].message()


def test_claim_template_allocated():
    c = Ctx([klass(), claim(owner=POD_UID), slice_("worker", "instance-1")])
    pod = pod_with_claim_template()
    _, res = c.run_until_filter(pod)
    assert res["worker"] is None


# ---- queueing hints (Test_isSchedulableAfterClaimChange, Test_isSchedulableAfterPodChange) ----------

def _obj(raw) -> KubeObject:
    return KubeObject(copy.deepcopy(raw))


def test_hint_skip_unrelated_claim():
    c = Ctx([klass(), claim()])
    other = _obj(claim("other-claim"))
    assert c.pl.is_schedulable_after_claim_change(pod_with_claim_name(), None, other) == QueueingHint.QueueSkip


def test_hint_queue_on_add():
    c = Ctx([klass(), claim()])
    assert c.pl.is_schedulable_after_claim_change(pod_with_claim_name(), None, c.claim()) == QueueingHint.Queue


def test_hint_skip_when_pod_claims_missing():
    c = Ctx([klass()])
    assert c.pl.is_schedulable_after_claim_change(pod_with_claim_name(), None, _obj(claim())) == QueueingHint.QueueSkip


def test_hint_queue_on_deallocation_of_any_claim():
    c = Ctx([klass(), claim()])
    old = _obj(claim("other-claim", allocated_on="worker"))
    new = _obj(claim("other-claim"))
    assert c.pl.is_schedulable_after_claim_change(pod_with_claim_name(), old, new) == QueueingHint.Queue


def test_hint_skip_unchanged_status_and_queue_on_status_change():
    c = Ctx([klass(), claim()])
    cur = c.claim()
    assert c.pl.is_schedulable_after_claim_change(pod_with_claim_name(), cur, cur) == QueueingHint.QueueSkip
    changed = _obj(claim(allocated_on="worker"))
    changed.uid = cur.uid
    assert c.pl.is_schedulable_after_claim_change(pod_with_claim_name(), cur, changed) == QueueingHint.Queue


def test_hint_pod_change():
    c = Ctx([klass(), claim(owner=POD_UID)])
    assert c.pl.is_schedulable_after_pod_change(pod_with_claim_template(), None,
                                                make_pod("x", uid="other")) == QueueingHint.QueueSkip
    assert c.pl.is_schedulable_after_pod_change(pod_with_claim_template(), None,
                                                pod_with_claim_template(None)) == QueueingHint.QueueSkip
    assert c.pl.is_schedulable_after_pod_change(pod_with_claim_template(), None,
                                                pod_with_claim_template()) == QueueingHint.Queue


# ---- args (ValidateDynamicResourcesArgs, SetDefaults_DynamicResourcesArgs) --------------------------

@pytest.mark.parametrize("version", ["v1.34", "v1.35", "v1.36"])
def test_args_filter_timeout(version):
    f = resolve(version)
    assert DynamicResources.set_defaults({"filterTimeout": "0s"}, features=f)["filterTimeout"] == "0s"
    assert DynamicResources.validate_args({"filterTimeout": "10s"}, features=f) == []
    assert DynamicResources.validate_args({"filterTimeout": "0s"}, features=f) == []
    assert DynamicResources.validate_args({"filterTimeout": "-1s"}, features=f) == [
        ("filterTimeout", 'Invalid value: "-1s": must be zero or positive')]
    # field.Invalid prints the metav1.Duration as JSON: Duration.String(), not the text written.
    assert DynamicResources.validate_args({"filterTimeout": "-90s"}, features=f) == [
        ("filterTimeout", 'Invalid value: "-1m30s": must be zero or positive')]
    assert DynamicResources.validate_args({"filterTimeout": "-1000ms"}, features=f) == [
        ("filterTimeout", 'Invalid value: "-1s": must be zero or positive')]


def test_args_defaults_per_version():
    # SetDefaults_DynamicResourcesArgs: bindingTimeout (v1.35 on) defaults to 10 minutes only
    # with DRADeviceBindingConditions, on by default from v1.36
    assert DynamicResources.set_defaults({}, features=resolve("v1.34")) == {"filterTimeout": "10s"}
    assert DynamicResources.set_defaults({}, features=resolve("v1.35")) == {"filterTimeout": "10s"}
    assert DynamicResources.set_defaults({}, features=resolve("v1.36")) == {
        "filterTimeout": "10s", "bindingTimeout": "10m0s"}
    assert DynamicResources.set_defaults({}, features=resolve("v1.35", {"DRADeviceBindingConditions": True})) == {
        "filterTimeout": "10s", "bindingTimeout": "10m0s"}


def test_args_binding_timeout_validation():
    v136 = resolve("v1.36")
    assert DynamicResources.validate_args({"bindingTimeout": "1s"}, features=v136) == []
    assert DynamicResources.validate_args({"bindingTimeout": "999ms"}, features=v136) == [
        ("bindingTimeout", 'Invalid value: "999ms": must be at least 1 second')]
    assert DynamicResources.validate_args({"bindingTimeout": "0s"}, features=v136) == [
        ("bindingTimeout", 'Invalid value: "0s": must be at least 1 second')]
    assert DynamicResources.validate_args({"bindingTimeout": "5s"}, features=resolve("v1.35")) == [
        ("bindingTimeout", "Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
                           "feature gate is disabled")]


def _admin(raw):
    raw = copy.deepcopy(raw)
    raw["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    for r in ((raw.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", []):
        r["adminAccess"] = True
    return raw


def test_exhausted_resources():
    other = claim("other", allocated_on="worker")
    c = Ctx([klass(), claim(), other, slice_("worker", "instance-1")])
    pod = pod_with_claim_name()
    _, res = c.run_until_filter(pod)
    assert res["worker"] == Status(Code.UnschedulableAndUnresolvable, "cannot allocate all claims")
    _, st = c.pl.post_filter(c.state, pod, None)
    assert st == Status(Code.Unschedulable, "still not schedulable")


def test_request_admin_access_despite_exhausted_resources():
    c = Ctx([klass(), _admin(claim()), claim("other", allocated_on="worker"), slice_("worker", "instance-1")])
    pod = pod_with_claim_name()
    _, res = c.run_until_filter(pod)
    assert res["worker"] is None
    c.pl.reserve(c.state, pod, "worker")
    c.pl.pre_bind(c.state, pod, "worker")
    assert c.claim().status["allocation"]["devices"]["results"] == [
        {"request": "req-1", "driver": DRIVER, "pool": "worker", "device": "instance-1", "adminAccess": True}]


def test_structured_ignore_allocated_admin_access():
    c = Ctx([klass(), claim(), _admin(claim("other", allocated_on="worker")), slice_("worker", "instance-1")])
    _, res = c.run_until_filter(pod_with_claim_name())
    assert res["worker"] is None


# ---- claim writes through the status subresource -----------------------------------------------
# Upstream writes a claim's status through the status subresource, where the API server runs the
# status-update validation (harness/api/claim_status.py): PostFilter's deallocation with
# UpdateStatus, Unreserve's removal of the pod with a strategic-merge patch of "status"
# (dynamicresources.go, v1.34.9 to v1.36.3). Each test runs the path twice: with the API server
# accepting (the write lands) and refusing every ResourceClaim status write (as it refuses one
# that breaks validation: nothing is stored, and the plugin does what upstream does on an error).

def _status_writes(monkeypatch, refuse: bool) -> List[str]:
    """The names of the ResourceClaims whose status the API server was asked to update."""
    import harness.cluster as cluster_module
    from harness.apierrors import Invalid

    seen: List[str] = []

    def check(name, status):
        seen.append(name)
        if refuse:
            raise Invalid("ResourceClaim.resource.k8s.io", name, ["status: Invalid value: refused by the test"])

    monkeypatch.setattr(cluster_module, "check_resource_claim_status_update", check)
    return seen


@pytest.mark.parametrize("refuse", [False, True])
def test_postfilter_deallocation_is_a_status_update(monkeypatch, refuse):
    c = Ctx([klass(), claim(allocated_on="worker-3")])
    pod = pod_with_claim_name()
    c.run_until_filter(pod)
    writes = _status_writes(monkeypatch, refuse)
    _, st = c.pl.post_filter(c.state, pod, None)
    assert writes == ["my-pod-my-resource"]
    if refuse:  # statusError(err): the attempt ends with an Error, the claim stays allocated
        assert st.code == Code.Error and "refused by the test" in st.message()
        assert c.claim().status["allocation"]["devices"]["results"][0]["pool"] == "worker-3"
    else:
        assert st == Status(Code.Unschedulable, "deallocation of ResourceClaim completed")
        assert "allocation" not in c.claim().status


@pytest.mark.parametrize("refuse", [False, True])
def test_unreserve_drops_the_pod_through_the_status_subresource(monkeypatch, refuse):
    c = Ctx([klass(), claim(allocated_on="worker", reserved_for=["other:other-uid", f"my-pod:{POD_UID}"]),
             slice_("worker", "instance-1")])
    pod = pod_with_claim_name()
    c.run_until_filter(pod)
    c.pl.reserve(c.state, pod, "worker")
    writes = _status_writes(monkeypatch, refuse)
    assert c.pl.unreserve(c.state, pod, "worker") is None  # an error is logged, never returned
    assert writes == ["my-pod-my-resource"]
    kept = [r["uid"] for r in c.claim().status["reservedFor"]]
    assert kept == (["other-uid", POD_UID] if refuse else ["other-uid"])


def test_prebind_adds_the_finalizer_with_an_update_then_writes_the_status(monkeypatch):
    """bindClaim: the delete-protection finalizer in a plain Update (the status subresource
    leaves metadata alone), then the allocation and the reservation with UpdateStatus: a watcher
    sees two updates, the finalizer first."""
    c = Ctx([klass(), claim(), slice_("worker", "instance-1")])
    pod = pod_with_claim_name()
    c.run_until_filter(pod)
    c.pl.reserve(c.state, pod, "worker")
    seen = []
    c.handle.cluster.subscribe(lambda kind, old, new: seen.append(new) if kind == "ResourceClaim" else None)
    writes = _status_writes(monkeypatch, False)
    assert c.pl.pre_bind(c.state, pod, "worker") is None
    assert [(bool(o.raw["metadata"].get("finalizers")), "allocation" in o.status) for o in seen] == \
        [(True, False), (True, True)]
    assert writes == ["my-pod-my-resource"]  # the second write alone is a status update
