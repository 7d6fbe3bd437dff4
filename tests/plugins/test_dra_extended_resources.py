"""Extended resources backed by DRA (DRAExtendedResource): the extended-resource scenarios of
TestPlugin (dynamicresources_test.go), Test_createRequestsAndMappings_* (extendeddynamicresources
_test.go), TestEnoughRequests / Test_isSchedulableAfterDeviceClassChange /
TestHaveAnyRequestedResourcesIncreased (fit_test.go) and extendedresourcecache_test.go, at
release-4.23 (v1.36.3; v1.35.6 is the same) and, where it differs, release-4.21 (v1.34.9 with the
alpha gate turned on)."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

import pytest

from builtin_plugins.dynamicresources import DynamicResources, extended
from builtin_plugins.noderesources.fit import (Fit, have_any_requested_resources_increased,
                                               compute_pod_resource_request)
from harness.api.objects import KubeObject, make_object
from harness.cluster import Cluster
from harness.errors import CaseError
from harness.framework import Code, QueueingHint, Status
from harness.testing import FakeHandle, make_node, make_pod, new_state
from harness.versions import resolve

V136 = resolve("v1.36")
V135_ON = resolve("v1.35", {"DRAExtendedResource": True})
V134_ON = resolve("v1.34", {"DRAExtendedResource": True})
V136_OFF = resolve("v1.36", {"DRAExtendedResource": False})

DRIVER = "some-driver"
CLASS = "my-resource-class"
ERN = "example.com/gpu"
IMPLICIT = extended.RESOURCE_DEVICE_CLASS_PREFIX + CLASS
POD_UID = "pod-uid-1"


def klass(name: str = CLASS, ern: Optional[str] = ERN, created: str = "2026-01-01T00:00:00Z") -> Dict[str, Any]:
    spec: Dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}
    if ern is not None:
        spec["extendedResourceName"] = ern
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name, "creationTimestamp": created}, "spec": spec}


def slice_(node: str, n: int) -> Dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-slice"},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"instance-{i}"} for i in range(n)]}}


def ext_pod(reqs: Dict[str, str], name: str = "my-pod", init: Optional[List[Dict[str, str]]] = None):
    spec: Dict[str, Any] = {"containers": [{"name": "c", "image": "pause", "resources": {"requests": dict(reqs)}}]}
    if init:
        spec["initContainers"] = [{"name": f"i{k}", "image": "pause", "resources": {"requests": dict(r)}}
                                  for k, r in enumerate(init)]
    return make_pod(name, uid=POD_UID, spec=spec)


def ext_claim(name: str = "my-pod-extended-resources-abcde", *, requests: bool = True) -> Dict[str, Any]:
    """A claim a prior cycle created for the pod."""
    raw: Dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                     "annotations": {extended.EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
                     "finalizers": ["resource.kubernetes.io/delete-protection"],
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": POD_UID,
                                          "controller": True}]},
        "spec": {}}
    if requests:
        raw["spec"] = {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
            "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1}}]}}
    return raw


class Ctx:
    def __init__(self, objects, pod, nodes=None, features=V136):
        self.nodes = nodes or [make_node("worker")]
        self.handle = FakeHandle(self.nodes, pods=[pod], objects=[copy.deepcopy(o) for o in objects])
        self.handle.feature_gates = features
        self.pl = DynamicResources(DynamicResources.set_defaults({}, features=features), self.handle)
        self.state = new_state()
        self.pod = pod

    def cycle(self):
        """PreFilter, then Filter on each node: (prefilter status, {node: filter status})."""
        _, st = self.pl.pre_filter(self.state, self.pod, self.handle.snapshot.list())
        if st is not None:
            return st, {}
        return None, {n.name: self.pl.filter(self.state, self.pod, self.handle.snapshot.get(n.name)) for n in self.nodes}

    def claims(self) -> List[KubeObject]:
        return self.handle.cluster.list("ResourceClaim")

    def pod_status(self) -> Dict[str, Any]:
        return self.handle.cluster.get("Pod", "default", self.pod.name).status


# ---- DynamicResources: TestPlugin's extended-resource scenarios ------------------------------------
def test_empty_with_extended_resources_enabled():
    c = Ctx([klass()], make_pod("my-pod", uid=POD_UID))
    st, _ = c.cycle()
    assert st.is_skip()
    _, st = c.pl.post_filter(c.state, c.pod, None)
    assert st == Status(Code.Unschedulable, "no new claims to deallocate")
    assert c.pl.pre_bind_pre_flight(c.state, c.pod, "worker")[1].is_skip()  # (PreBindPreFlightResult, status)


def test_extended_resource_name_with_node_resource():
    """The node's device plugin provides the resource: Filter passes, nothing is allocated,
    Reserve and PreBind do nothing, no claim is created."""
    c = Ctx([klass(), slice_("worker", 1)], ext_pod({ERN: "1"}),
            nodes=[make_node("worker", allocatable={ERN: "2"})])
    st, filters = c.cycle()
    assert st is None and filters == {"worker": None}
    assert c.pl.reserve(c.state, c.pod, "worker") is None
    assert c.pl.pre_bind(c.state, c.pod, "worker") is None
    assert c.claims() == []
    assert "extendedResourceClaimStatus" not in c.pod_status()


@pytest.mark.parametrize("features", [V136, V135_ON], ids=["v1.36", "v1.35-gate-on"])
def test_extended_resource_name_with_resources(features):
    """No device plugin: the special claim's requests are allocated in Filter, in flight after
    Reserve, created (generateName <pod>-extended-resources-) allocated and reserved at PreBind,
    and the pod's status names it."""
    c = Ctx([klass(), slice_("worker", 1)], ext_pod({ERN: "1"}), features=features)
    st, filters = c.cycle()
    assert st is None and filters == {"worker": None}
    assert c.pl.reserve(c.state, c.pod, "worker") is None
    tracker = c.pl.claim_tracker()
    assert len(tracker.in_flight) == 1
    inflight = next(iter(tracker.in_flight.values()))
    assert inflight.name == extended.SPECIAL_CLAIM_IN_MEM_NAME
    assert inflight.status["allocation"]["devices"]["results"][0]["device"] == "instance-0"
    assert c.pl.pre_bind(c.state, c.pod, "worker") is None
    assert tracker.in_flight == {}
    [claim] = c.claims()
    md = claim.raw["metadata"]
    assert claim.name.startswith("my-pod-extended-resources-") and len(claim.name) == len("my-pod-extended-resources-") + 5
    assert md["generateName"] == "my-pod-extended-resources-"
    assert md["annotations"] == {extended.EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    assert md["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": POD_UID,
                                      "controller": True}]
    assert md["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert claim.spec["devices"]["requests"] == [{"name": "container-0-request-0", "exactly": {
        "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1}}]
    assert claim.status["reservedFor"] == [{"resource": "pods", "name": "my-pod", "uid": POD_UID}]
    assert c.pod_status()["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "c", "resourceName": ERN, "requestName": "container-0-request-0"}],
        "resourceClaimName": claim.name}


def test_implicit_extended_resource_name_with_resources():
    c = Ctx([klass(), slice_("worker", 4)], ext_pod({IMPLICIT: "2"}))
    st, filters = c.cycle()
    assert filters == {"worker": None}
    c.pl.reserve(c.state, c.pod, "worker")
    assert c.pl.pre_bind(c.state, c.pod, "worker") is None
    [claim] = c.claims()
    assert claim.spec["devices"]["requests"][0]["exactly"]["count"] == 2
    assert len(claim.status["allocation"]["devices"]["results"]) == 2


def test_implicit_name_is_not_extended_in_v1_34():
    """v1.34: IsExtendedResourceName refuses deviceclass.resource.kubernetes.io/ names, so the
    plugin does not see the request (and NodeResourcesFit leaves it to DRA): no claim."""
    c = Ctx([klass(), slice_("worker", 4)], ext_pod({IMPLICIT: "2"}), features=V134_ON)
    st, _ = c.cycle()
    assert st.is_skip()


def test_extended_resource_one_device_plugin_one_dra():
    """One resource from the node's device plugin, one through DRA: the claim asks for the DRA
    one only (v1.35 on); v1.34 asks for both (createDeviceRequests takes every mapped resource)."""
    other = "example.com/other"
    objs = [klass(), klass("other-class", other), slice_("worker", 4)]
    nodes = [make_node("worker", allocatable={other: "1"})]
    pod = ext_pod({ERN: "1", other: "1"})
    c = Ctx(objs, pod, nodes=nodes)
    c.cycle()
    c.pl.reserve(c.state, c.pod, "worker")
    assert c.pl.pre_bind(c.state, c.pod, "worker") is None
    [claim] = c.claims()
    assert [r["name"] for r in claim.spec["devices"]["requests"]] == ["container-0-request-0"]
    c = Ctx(objs, ext_pod({ERN: "1", other: "1"}), nodes=[make_node("worker", allocatable={other: "1"})],
            features=V134_ON)
    c.cycle()
    c.pl.reserve(c.state, c.pod, "worker")
    assert c.pl.pre_bind(c.state, c.pod, "worker") is None
    [claim] = c.claims()
    assert sorted(r["name"] for r in claim.spec["devices"]["requests"]) == ["container-0-request-0",
                                                                             "container-0-request-1"]
    assert c.pod_status()["extendedResourceClaimStatus"]["requestMappings"] == [
        {"containerName": "c", "resourceName": ERN, "requestName": "container-0-request-0"},
        {"containerName": "c", "resourceName": other, "requestName": "container-0-request-1"}]


def test_extended_resource_name_with_zero_allocatable():
    """An allocatable of 0 counts as absent from v1.35 (DRA allocates); v1.34 takes the device
    plugin path (the key is there): nothing for DRA to do."""
    nodes = [make_node("worker", allocatable={ERN: "0"})]
    c = Ctx([klass(), slice_("worker", 1)], ext_pod({ERN: "1"}), nodes=nodes)
    c.cycle()
    c.pl.reserve(c.state, c.pod, "worker")
    assert c.pl.pre_bind(c.state, c.pod, "worker") is None
    assert len(c.claims()) == 1
    c = Ctx([klass(), slice_("worker", 1)], ext_pod({ERN: "1"}), nodes=[make_node("worker", allocatable={ERN: "0"})],
            features=V134_ON)
    c.cycle()
    assert c.pl.reserve(c.state, c.pod, "worker") is None
    assert c.pl.pre_bind(c.state, c.pod, "worker") is None
    assert c.claims() == []


def test_non_dra_extended_resource_name_with_zero_allocatable():
    c = Ctx([klass(ern=None), slice_("worker", 1)], ext_pod({ERN: "1"}),
            nodes=[make_node("worker", allocatable={ERN: "0"})])
    st, _ = c.cycle()
    assert st.is_skip()
    assert c.pl.pre_bind_pre_flight(c.state, c.pod, "worker")[1].is_skip()  # (PreBindPreFlightResult, status)


def test_extended_resource_name_no_resource():
    c = Ctx([klass()], ext_pod({ERN: "1"}))
    st, filters = c.cycle()
    assert filters == {"worker": Status(Code.UnschedulableAndUnresolvable, "cannot allocate all claims")}
    _, st = c.pl.post_filter(c.state, c.pod, None)
    assert st == Status(Code.Unschedulable, "still not schedulable")


def test_cannot_fit_resource_neither_device_plugin_nor_dra():
    """A second extended resource no class maps and the node lacks: DynamicResources' own
    "cannot fit resource" (NodeResourcesFit normally rejects the node first)."""
    c = Ctx([klass(), slice_("worker", 1)], ext_pod({ERN: "1", "example.com/unknown": "1"}))
    _, filters = c.cycle()
    assert filters == {"worker": Status(Code.UnschedulableAndUnresolvable, "cannot fit resource")}


@pytest.mark.parametrize("requests", [True, False])
def test_extended_resource_name_with_resources_has_claim(requests):
    """A claim of a prior cycle: with requests Filter rejects every node and PostFilter deletes
    it (finalizer first)."""
    c = Ctx([klass(), slice_("worker", 1), ext_claim(requests=requests)], ext_pod({ERN: "1"}))
    st, filters = c.cycle()
    if not requests:
        assert filters == {"worker": None}
        return
    assert filters == {"worker": Status(Code.UnschedulableAndUnresolvable, "cannot schedule extended resource claim")}
    _, st = c.pl.post_filter(c.state, c.pod, None)
    assert st == Status(Code.Unschedulable, "deletion of ResourceClaim completed")
    assert c.claims() == []


def test_extended_resource_name_skip_bind():
    """Unreserve before PreBind: the in-flight allocation is dropped, nothing was created."""
    c = Ctx([klass(), slice_("worker", 1)], ext_pod({ERN: "1"}))
    c.cycle()
    c.pl.reserve(c.state, c.pod, "worker")
    c.pl.unreserve(c.state, c.pod, "worker")
    assert c.pl.claim_tracker().in_flight == {}
    assert c.claims() == []


def test_extended_resource_name_bind_failure():
    """Unreserve after PreBind (the binding failed): the created claim is deleted."""
    c = Ctx([klass(), slice_("worker", 1)], ext_pod({ERN: "1"}))
    c.cycle()
    c.pl.reserve(c.state, c.pod, "worker")
    assert c.pl.pre_bind(c.state, c.pod, "worker") is None
    assert len(c.claims()) == 1
    c.pl.unreserve(c.state, c.pod, "worker")
    assert c.claims() == []


def test_extended_resource_claim_with_user_claim_allocated_together():
    """A user claim and the extended resource claim: one Allocate call per node for both; the
    devices they get are distinct."""
    user = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "user", "namespace": "default", "uid": "uid-user"},
            "spec": {"devices": {"requests": [{"name": "req-1", "exactly": {
                "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1}}]}}}
    pod = ext_pod({ERN: "1"})
    pod.raw["spec"]["resourceClaims"] = [{"name": "u", "resourceClaimName": "user"}]
    c = Ctx([klass(), slice_("worker", 2), user], pod)
    _, filters = c.cycle()
    assert filters == {"worker": None}
    assert c.pl.reserve(c.state, c.pod, "worker") is None
    assert c.pl.pre_bind(c.state, c.pod, "worker") is None
    devices = sorted(r["device"] for cl in c.claims() for r in cl.status["allocation"]["devices"]["results"])
    assert devices == ["instance-0", "instance-1"]
    c2 = Ctx([klass(), slice_("worker", 1), user], copy.deepcopy(pod))
    _, filters = c2.cycle()
    assert filters == {"worker": Status(Code.UnschedulableAndUnresolvable, "cannot allocate all claims")}


# ---- createRequestsAndMappings -------------------------------------------------------------------
class _Resolver:
    def __init__(self, mapping: Dict[str, str]):
        self.mapping = {k: {"metadata": {"name": v}} for k, v in mapping.items()}

    def get_device_class(self, name):
        return self.mapping.get(name)


def _pod(containers, init=()):
    """Containers as lists of (requests, sidecar)."""
    spec = {"containers": [{"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(containers)],
            "initContainers": [dict({"name": f"i{i}", "resources": {"requests": r}},
                                    **({"restartPolicy": "Always"} if side else {}))
                               for i, (r, side) in enumerate(init)]}
    return make_pod("p", spec=spec)


GPU, GPU1, GPUI = "example.com/gpu", "example.com/gpu1", "example.com/gpuinit"


@pytest.mark.parametrize("pod, resources, mapping, want", [
    (_pod([{GPU: "1", GPU1: "2"}]), {}, {}, []),
    (_pod([{GPU: "1", GPU1: "2"}]), {GPU: 1}, {GPU: "class"}, [("container-0-request-0", "class", 1)]),
    (_pod([{GPU: "1", GPU1: "2"}]), {GPU: 1, GPU1: 2}, {GPU: "class"}, [("container-0-request-0", "class", 1)]),
    (_pod([{GPU: "1", GPU1: "2"}]), {GPU: 1, GPU1: 2}, {GPU: "class", GPU1: "class1"},
     [("container-0-request-0", "class", 1), ("container-0-request-1", "class1", 2)]),
    (_pod([{GPU: "1"}, {GPU1: "2"}]), {GPU: 1, GPU1: 2}, {GPU: "class", GPU1: "class1"},
     [("container-0-request-0", "class", 1), ("container-1-request-0", "class1", 2)]),
    # one init container, one regular container
    (_pod([{GPU: "1"}], [({GPUI: "2"}, False)]), {GPU: 1, GPUI: 2}, {GPU: "class", GPUI: "classInit"},
     [("container-0-request-0", "classInit", 2), ("container-1-request-0", "class", 1)]),
    # two init containers: the larger request serves both
    (_pod([{GPU: "1"}], [({GPUI: "1"}, False), ({GPUI: "2"}, False)]), {GPU: 1, GPUI: 2},
     {GPU: "class", GPUI: "classInit"}, [("container-1-request-0", "classInit", 2), ("container-2-request-0", "class", 1)]),
    # an init container reuses the sidecar after it
    (_pod([{GPU: "1"}], [({GPUI: "1"}, False), ({GPUI: "1"}, True), ({GPUI: "2"}, False)]), {GPU: 1, GPUI: 2},
     {GPU: "class", GPUI: "classInit"},
     [("container-1-request-0", "classInit", 1), ("container-2-request-0", "classInit", 2),
      ("container-3-request-0", "class", 1)]),
])
def test_create_requests_and_mappings_requests(pod, resources, mapping, want):
    reqs, _ = extended.create_requests_and_mappings(pod, resources, _Resolver(mapping))
    assert [(r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"]) for r in reqs] == want


def test_create_requests_and_mappings_short_lived_share_the_largest_request():
    pod = _pod([{GPU: "1"}], [({GPU: "1"}, False), ({GPU: "3"}, False)])
    reqs, mappings = extended.create_requests_and_mappings(pod, {GPU: 3}, _Resolver({GPU: "class"}))
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [("container-1-request-0", 2),
                                                                   ("container-2-request-0", 1)]
    # i0 (1) is covered by c0's request; i1 (3) reuses c0's and asks for 2 more
    assert mappings == [
        {"containerName": "c0", "resourceName": GPU, "requestName": "container-2-request-0"},
        {"containerName": "i0", "resourceName": GPU, "requestName": "container-2-request-0"},
        {"containerName": "i1", "resourceName": GPU, "requestName": "container-2-request-0"},
        {"containerName": "i1", "resourceName": GPU, "requestName": "container-1-request-0"}]


def test_v1_34_requests_and_mappings():
    """createDeviceRequests / createRequestMappings (v1.34): one request per container for its
    whole quantity, init containers included."""
    pod = _pod([{GPU: "1"}], [({GPU: "2"}, False)])
    mapping = extended.DeviceClassMapping(Cluster())
    mapping.mapping[GPU] = {"metadata": {"name": "class"}}
    reqs = extended.create_device_requests(pod, {GPU: 2}, mapping)
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [("container-0-request-0", 2),
                                                                   ("container-1-request-0", 1)]
    claim = make_object({"kind": "ResourceClaim", "metadata": {"name": "x"}, "spec": {"devices": {"requests": reqs}}})
    assert extended.create_request_mappings(claim, pod) == [
        {"containerName": "i0", "resourceName": GPU, "requestName": "container-0-request-0"},
        {"containerName": "c0", "resourceName": GPU, "requestName": "container-1-request-0"}]


# ---- the class cache (extendedresourcecache_test.go) ---------------------------------------------
def test_class_cache_prefers_the_newer_class_then_the_lower_name():
    cl = Cluster()
    cache = extended.ExtendedResourceCache(cl)
    cl.create(make_object(klass("b", created="2026-01-01T00:00:00Z")))
    assert extended.class_name(cache.get_device_class(ERN)) == "b"
    cl.create(make_object(klass("c", created="2026-01-01T00:00:00Z")))
    assert extended.class_name(cache.get_device_class(ERN)) == "b"  # same time: lower name
    cl.create(make_object(klass("a", created="2026-01-01T00:00:00Z")))
    assert extended.class_name(cache.get_device_class(ERN)) == "a"
    cl.create(make_object(klass("z", created="2026-01-02T00:00:00Z")))
    assert extended.class_name(cache.get_device_class(ERN)) == "z"  # newer
    # a class that loses the clash is left out altogether, its implicit name too (the early
    # return in updateResourceName2class)
    assert cache.get_device_class(extended.RESOURCE_DEVICE_CLASS_PREFIX + "c") is None
    assert extended.class_name(cache.get_device_class(extended.RESOURCE_DEVICE_CLASS_PREFIX + "b")) == "b"
    cl.delete(cl.get("DeviceClass", "", "z"))
    assert cache.get_device_class(ERN) is None  # the others are not put back
    cl.update(make_object(klass("a", ern="example.com/other")))
    assert extended.class_name(cache.get_device_class("example.com/other")) == "a"


# ---- NodeResourcesFit ---------------------------------------------------------------------------
DRA_NAME = "extended.resource.dra.io/something"


def _fit(features, objects=()):
    h = FakeHandle([], objects=[make_object(copy.deepcopy(o)) for o in objects])
    h.feature_gates = features
    return Fit(None, h)


def _filter(p, pod, node):
    state = new_state()
    p.pre_filter(state, pod, [])
    from harness.framework import NodeInfo
    ni = NodeInfo()
    ni.set_node(node)
    return p.filter(state, pod, ni)


NODE = make_node("n", allocatable={"cpu": "10m", "memory": "20", "pods": "32", "example.com/aaa": "5"})


@pytest.mark.parametrize("features, reqs, want", [
    (V136, {"example.com/aaa": "1"}, None),  # backed by device plugin
    (V136, {"cpu": "1m", "memory": "1", DRA_NAME: "1"}, None),  # backed by DRA: left to DynamicResources
    (V136_OFF, {"cpu": "1m", "memory": "1", DRA_NAME: "1"},
     Status(Code.UnschedulableAndUnresolvable, f"Insufficient {DRA_NAME}")),
    (V136, {"cpu": "1m", "memory": "1", "example.com/bbb": "1"},
     Status(Code.UnschedulableAndUnresolvable, "Insufficient example.com/bbb")),  # not backed by DRA
    (V134_ON, {"cpu": "1m", "memory": "1", DRA_NAME: "1"}, None),
    (V134_ON, {"cpu": "1m", "memory": "1", "example.com/bbb": "1"},
     Status(Code.UnschedulableAndUnresolvable, "Insufficient example.com/bbb")),
])
def test_fit_filter_extended_resources(features, reqs, want):
    p = _fit(features, [klass("device-class-name", DRA_NAME)])
    assert _filter(p, make_pod("p", requests=reqs), NODE) == want


def test_fit_zero_allocatable():
    """The node lists the resource with 0: delegated from v1.35; v1.34 checks it (Insufficient)."""
    node = make_node("n", allocatable={DRA_NAME: "0"})
    pod = make_pod("p", requests={DRA_NAME: "1"})
    assert _filter(_fit(V136, [klass("c", DRA_NAME)]), pod, node) is None
    assert _filter(_fit(V134_ON, [klass("c", DRA_NAME)]), pod, node) == \
        Status(Code.UnschedulableAndUnresolvable, f"Insufficient {DRA_NAME}")


def test_fit_v1_34_unmapped_scalars_are_left_to_dra_without_extended_requests():
    """v1.34's withDeviceClass takes no mapping when the pod requests no extended resource, and
    fitsRequest then skips every scalar resource the node lacks (hugepages included)."""
    pod = make_pod("p", requests={"hugepages-2Mi": "2Mi"})
    node = make_node("n")
    assert _filter(_fit(V134_ON), pod, node) is None
    assert _filter(_fit(V136), pod, node) == Status(Code.UnschedulableAndUnresolvable, "Insufficient hugepages-2Mi")


def _dc(name="", ern=None):
    raw = {"kind": "DeviceClass", "metadata": {"name": name}, "spec": {}}
    if ern is not None:
        raw["spec"]["extendedResourceName"] = ern
    return make_object(raw)


@pytest.mark.parametrize("reqs, old, new, want", [
    ({}, None, "not-a-class", QueueingHint.Queue),
    ({}, "not-a-class", _dc(), QueueingHint.Queue),
    ({"memory": "2"}, _dc(), _dc(), QueueingHint.QueueSkip),
    ({"memory": "2"}, _dc(ern=ERN), _dc(ern=ERN), QueueingHint.QueueSkip),
    ({"deviceclass.resource.kubernetes.io/gpuclass": "1"}, None, _dc("gpuclass", ERN), QueueingHint.Queue),
    ({"deviceclass.resource.kubernetes.io/gpuclass": "1"}, None, _dc("myclass", ERN), QueueingHint.QueueSkip),
    ({"example.com/othergpu": "1"}, None, _dc("myclass", ERN), QueueingHint.QueueSkip),
    ({"deviceclass.resource.kubernetes.io/gpuclass": "1"}, _dc("gpuclass"), _dc("gpuclass", ERN), QueueingHint.QueueSkip),
    ({ERN: "1"}, None, _dc(ern=ERN), QueueingHint.Queue),
    ({ERN: "1"}, _dc(ern="example.com/gpu1"), _dc(ern=ERN), QueueingHint.Queue),
])
def test_is_schedulable_after_device_class_change(reqs, old, new, want):
    p = _fit(V136)
    assert p.is_schedulable_after_device_class_event(make_pod("p", requests=reqs), old, new) == want


def test_device_class_event_registered_from_v1_35_only():
    from harness.framework import EventResource
    assert any(e.event.resource == EventResource.DeviceClass for e in _fit(V135_ON).events_to_register())
    assert not any(e.event.resource == EventResource.DeviceClass for e in _fit(V134_ON).events_to_register())
    assert not any(e.event.resource == EventResource.DeviceClass for e in _fit(V136_OFF).events_to_register())


@pytest.mark.parametrize("pod_reqs, orig, mod, want", [
    ({"cpu": "2m", "memory": "2", "ephemeral-storage": "2", DRA_NAME: "2"},
     {"cpu": "1", "memory": "2", "ephemeral-storage": "3", DRA_NAME: "4"},
     {"cpu": "1", "memory": "2", "ephemeral-storage": "1", DRA_NAME: "1"}, False),
    ({"cpu": "2m", "memory": "2", "ephemeral-storage": "2", DRA_NAME: "2"},
     {"cpu": "1", "memory": "2", "ephemeral-storage": "3"},
     {"cpu": "1", "memory": "2", "ephemeral-storage": "1"}, True),
    ({DRA_NAME: "1"}, {DRA_NAME: "0"}, {DRA_NAME: "0"}, True),
])
def test_have_any_requested_resources_increased_dra(pod_reqs, orig, mod, want):
    from harness.api.objects import Node
    p = _fit(V136, [klass("device-class-name", DRA_NAME)])

    def node(a):
        return Node({"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": dict(a)}})
    pod = make_pod("p", requests=pod_reqs)
    assert have_any_requested_resources_increased(pod, node(orig), node(mod), True, p._delegate(hint=True)) == want
    assert compute_pod_resource_request(pod) is not None


# ---- the API server ------------------------------------------------------------------------------
def _apply(obj, features):
    from harness.case import dra_fields
    dra_fields.apply(obj, features, "case.yaml", "cluster[0]")
    return obj


def test_api_server_drops_the_fields_with_the_gate_off():
    c = _apply(klass(), resolve("v1.35"))
    assert "extendedResourceName" not in c["spec"]
    assert _apply(klass(), V136)["spec"]["extendedResourceName"] == ERN
    status = {"extendedResourceClaimStatus": {"requestMappings": [], "resourceClaimName": ""}}
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}, "status": dict(status)}
    assert "extendedResourceClaimStatus" not in _apply(pod, resolve("v1.35"))["status"]


def _status_pod(mappings, claim="my-claim"):
    return {"kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {ERN: "1"}}}]},
            "status": {"extendedResourceClaimStatus": {"requestMappings": mappings, "resourceClaimName": claim}}}


M = {"containerName": "c", "resourceName": ERN, "requestName": "container-0-request-0"}


@pytest.mark.parametrize("mappings, claim, key, message", [
    ([], "my-claim", "status.extendedResourceClaimStatus.requestMappings", "at least one request mapping is required"),
    ([dict(M, containerName="x")], "my-claim", "requestMappings[0].containerName", "must match the name of an entry"),
    ([dict(M, resourceName="example.com/x")], "my-claim", "requestMappings[0].resourceName", "must match the extended"),
    ([dict(M, requestName="Bad_Name")], "my-claim", "extendedResourceClaimStatus.requestName", "RFC 1123 label"),
    ([M, M], "my-claim", "requestMappings[1].containerName", "Duplicate value"),
    ([M], "", "resourceClaimName", "Required value"),
    ([M], "Bad_Name", "resourceClaimName", "RFC 1123 subdomain"),
])
def test_api_server_validates_the_pod_status(mappings, claim, key, message):
    with pytest.raises(CaseError) as e:
        _apply(_status_pod(mappings, claim), V136)
    assert key in e.value.key and message in str(e.value)
    _apply(_status_pod([M]), V136)


def test_duplicate_mappings_by_request_from_v1_35():
    two = [M, dict(M, requestName="container-0-request-1")]
    _apply(_status_pod(copy.deepcopy(two)), V136)
    with pytest.raises(CaseError, match="Duplicate value"):
        _apply(_status_pod(copy.deepcopy(two)), V134_ON)


# ---- scoring DRA-backed extended resources (resource_allocation.go, v1.35 on) ---------------------
def _score_ctx(features, plugin_cls, args, allocated_on_a=2):
    from builtin_plugins.dynamicresources.claims import tracker_for
    from harness.framework import NodeInfo
    objs = [klass(), slice_("node-a", 4), slice_("node-b", 4)]
    if allocated_on_a:
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"name": "used", "namespace": "default", "uid": "uid-used"},
                     "spec": {}, "status": {"allocation": {"devices": {"results": [
                         {"request": "r", "driver": DRIVER, "pool": "node-a", "device": f"instance-{i}"}
                         for i in range(allocated_on_a)]}}}})
    nodes = [make_node("node-a"), make_node("node-b")]
    h = FakeHandle(nodes, objects=[make_object(copy.deepcopy(o)) for o in objs])
    h.feature_gates = features
    p = plugin_cls(plugin_cls.set_defaults(args), h)
    assert tracker_for(h.cluster, h.snapshot) is not None
    infos = []
    for n in nodes:
        ni = NodeInfo()
        ni.set_node(n)
        infos.append(ni)
    return p, infos


GPU_FIT_ARGS = {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": ERN, "weight": 1}]}}


@pytest.mark.parametrize("features, want", [
    (V136, [25, 75]),  # node-a: (4 - (2 + 1)) * 100 / 4; node-b: (4 - (0 + 1)) * 100 / 4
    (V135_ON, [25, 75]),
    (V134_ON, [0, 0]),  # v1.34 does not score them: the resource is left out
    (V136_OFF, [0, 0]),
])
def test_fit_scores_dra_extended_resources(features, want):
    p, infos = _score_ctx(features, Fit, GPU_FIT_ARGS)
    state = new_state()
    pod = ext_pod({ERN: "1"})
    assert p.pre_score(state, pod, infos) is None
    assert [p.score(state, pod, ni)[0] for ni in infos] == want
    assert p.score_nodes(state, pod, infos) in (None, want)


def test_balanced_allocation_dra_extended_resources_per_version():
    from builtin_plugins.noderesources.balanced_allocation import BalancedAllocation
    args = {"resources": [{"name": "cpu", "weight": 1}, {"name": ERN, "weight": 1}]}
    pod = ext_pod({"cpu": "1", ERN: "1"})
    p, infos = _score_ctx(V135_ON, BalancedAllocation, args)
    st = p.pre_score(new_state(), pod, infos)
    assert st is not None and st.code == Code.Error  # v1.35: no DRA manager in the scorer
    p, infos = _score_ctx(V136, BalancedAllocation, args)
    state = new_state()
    assert p.pre_score(state, pod, infos) is None
    sc, st = p.score(state, pod, infos[0])
    assert st is not None and st.code == Code.Error  # the class has selectors and no CEL cache
    p, infos = _score_ctx(V136, BalancedAllocation, {"resources": [{"name": "cpu", "weight": 1}]})
    state = new_state()
    assert p.pre_score(state, pod, infos) is None
    assert p.score(state, pod, infos[0])[1] is None
