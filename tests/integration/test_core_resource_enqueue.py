"""TestCoreResourceEnqueue (kubernetes test/integration/scheduler/queueing: queue.go's
CoreResourceEnqueueTestCases run by RunTestCoreResourceEnqueue), ported to the harness.

Each entry creates nodes, scheduled pods, PVs, PVCs, ... and then pods that must all fail their
first scheduling attempt and wait in the unschedulable pool; a trigger then changes the cluster
(through Cluster.create / update / delete, which notify the scheduler's event handlers as the
informers would), and exactly the pods listed in `requeued` must be moved to activeQ (backoff is
0, as upstream's WithPodInitialBackoffSeconds(0) / WithPodMaxBackoffSeconds(0), so a requeued pod
goes straight to activeQ). As upstream, a profile with only `plugins` (plus PrioritySort and
DefaultBinder) runs when the entry names plugins, the default profile otherwise.

After the check the scheduler runs until quiet, and the pods in `bound` (when given) must be
bound, the others unbound.

Entries not ported (they need features off by default in v1.34 or absent from v1.34):
- the NodeDeclaredFeatures entries (the feature and plugin are newer than v1.34);
- the GangScheduling entries (GenericWorkload / GangScheduling are newer than v1.34).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import pytest

from harness.api.objects import make_object
from harness.case.apiserver import ApiServerDefaults
from harness.cluster import Cluster
from harness.config.defaults import set_defaults
from harness.framework.registry import default_registry
from harness.versions import resolve
from harness.scheduler.scheduler import Scheduler

NS = "default"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
NOT_READY = "node.kubernetes.io/not-ready"
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"


# =============================================================================================
# st.Make* wrappers (pkg/scheduler/testing/wrappers.go), building manifests
# =============================================================================================
class P:
    """st.MakePod()."""

    def __init__(self, name: str):
        self.d: Dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                                  "metadata": {"name": name, "namespace": NS}, "spec": {"containers": []}}

    @property
    def spec(self) -> Dict[str, Any]:
        return self.d["spec"]

    def label(self, k: str, v: str) -> "P":
        self.d["metadata"].setdefault("labels", {})[k] = v
        return self

    def container(self, image: str) -> "P":
        cs = self.spec["containers"]
        cs.append({"name": f"con{len(cs)}", "image": image})
        return self

    def req(self, reqs: Dict[str, str]) -> "P":
        cs = self.spec["containers"]
        cs.append({"name": f"con{len(cs)}", "image": "pause", "resources": {"requests": dict(reqs)}})
        return self

    def res(self, res: Dict[str, str]) -> "P":
        cs = self.spec["containers"]
        cs.append({"name": f"con{len(cs)}", "image": "pause",
                   "resources": {"requests": dict(res), "limits": dict(res)}})
        return self

    def container_port(self, ports: List[Dict[str, int]]) -> "P":
        self.spec["containers"].append({"name": "container", "image": "pause", "ports": list(ports)})
        return self

    def node(self, n: str) -> "P":
        self.spec["nodeName"] = n
        return self

    def toleration(self, key: str) -> "P":
        self.spec.setdefault("tolerations", []).append({"key": key, "operator": "Exists"})
        return self

    def node_affinity_in(self, key: str, vals: List[str], fields: bool = False) -> "P":
        req = {"key": key, "operator": "In", "values": list(vals)}
        term = {"matchFields": [req]} if fields else {"matchExpressions": [req]}
        aff = self.spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
        return self

    def _pod_affinity(self, kind: str, label_key: str, topology_key: str) -> "P":
        term = {"labelSelector": {"matchExpressions": [{"key": label_key, "operator": "Exists"}]},
                "topologyKey": topology_key}
        aff = self.spec.setdefault("affinity", {}).setdefault(kind, {})
        aff.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        return self

    def pod_affinity_exists(self, label_key: str, topology_key: str) -> "P":
        return self._pod_affinity("podAffinity", label_key, topology_key)

    def pod_anti_affinity_exists(self, label_key: str, topology_key: str) -> "P":
        return self._pod_affinity("podAntiAffinity", label_key, topology_key)

    def spread(self, max_skew: int, key: str, exists_key: str, min_domains: Optional[int] = None) -> "P":
        c: Dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                             "labelSelector": {"matchExpressions": [{"key": exists_key, "operator": "Exists"}]}}
        if min_domains is not None:
            c["minDomains"] = min_domains
        self.spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def pvc(self, name: str) -> "P":
        self.spec.setdefault("volumes", []).append({"name": name, "persistentVolumeClaim": {"claimName": name}})
        return self

    def volume(self, v: Dict[str, Any]) -> "P":
        self.spec.setdefault("volumes", []).append(v)
        return self

    def obj(self) -> Dict[str, Any]:
        return copy.deepcopy(self.d)


class N:
    """st.MakeNode(): capacity and allocatable {pods: 32} unless Capacity says more."""

    def __init__(self, name: str):
        self.d: Dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                                  "spec": {}, "status": {}}
        self.capacity({})

    def label(self, k: str, v: str) -> "N":
        self.d["metadata"].setdefault("labels", {})[k] = v
        return self

    def capacity(self, res: Dict[str, str]) -> "N":
        r = {"pods": "32"}
        r.update(res)
        self.d["status"]["capacity"] = dict(r)
        self.d["status"]["allocatable"] = dict(r)
        return self

    def taints(self, taints: List[Dict[str, str]]) -> "N":
        self.d["spec"]["taints"] = list(taints)
        return self

    def unschedulable(self, u: bool) -> "N":
        if u:
            self.d["spec"]["unschedulable"] = True
        else:
            self.d["spec"].pop("unschedulable", None)
        return self

    def obj(self) -> Dict[str, Any]:
        return copy.deepcopy(self.d)


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Dict[str, str]:
    t = {"key": key, "effect": effect}
    if value:
        t["value"] = value
    return t


def pv(name: str, *, labels: Optional[Dict[str, str]] = None, access: str = "ReadOnlyMany",
       host_path: bool = True, csi: Optional[Dict[str, str]] = None, node_affinity_in=None,
       storage_class: str = "") -> Dict[str, Any]:
    """st.MakePersistentVolume(), with the API server's defaults (reclaim policy Retain, volume
    mode Filesystem, phase Pending)."""
    spec: Dict[str, Any] = {"accessModes": [access], "capacity": {"storage": "1Mi"},
                            "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"}
    if host_path:
        spec["hostPath"] = {"path": "/tmp", "type": "DirectoryOrCreate"}
    if csi is not None:
        spec.pop("hostPath", None)
        spec["csi"] = dict(csi)
    if node_affinity_in is not None:
        key, vals = node_affinity_in
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": key, "operator": "In", "values": list(vals)}]}]}}
    if storage_class:
        spec["storageClassName"] = storage_class
    md: Dict[str, Any] = {"name": name}
    if labels:
        md["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": md, "spec": spec,
            "status": {"phase": "Pending"}}


def pvc(name: str, *, volume_name: str = "", bound: bool = False, access: str = "ReadWriteOncePod",
        storage_class: Optional[str] = None) -> Dict[str, Any]:
    """st.MakePersistentVolumeClaim(), with the API server's defaults (volume mode Filesystem,
    phase Pending). `bound` sets the pv.kubernetes.io/bind-completed annotation."""
    md: Dict[str, Any] = {"name": name, "namespace": NS}
    if bound:
        md["annotations"] = {ANN_BIND_COMPLETED: "true"}
    spec: Dict[str, Any] = {"accessModes": [access], "resources": {"requests": {"storage": "1Mi"}},
                            "volumeMode": "Filesystem"}
    if volume_name:
        spec["volumeName"] = volume_name
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec,
            "status": {"phase": "Pending"}}


def storage_class(name: str, mode: str, *, labels: Optional[Dict[str, str]] = None,
                  allowed_zones: Optional[List[str]] = None) -> Dict[str, Any]:
    md: Dict[str, Any] = {"name": name}
    if labels:
        md["labels"] = dict(labels)
    sc: Dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": md,
                          "provisioner": "p", "volumeBindingMode": mode, "reclaimPolicy": "Delete"}
    if allowed_zones is not None:
        sc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": list(allowed_zones)}]}]
    return sc


def csinode(name: str, drivers: Optional[List[Dict[str, Any]]] = None,
            annotations: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    md: Dict[str, Any] = {"name": name}
    if annotations:
        md["annotations"] = dict(annotations)
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": md,
            "spec": {"drivers": list(drivers or [])}}


def csi_driver_entry(name: str, count: int) -> Dict[str, Any]:
    return {"name": name, "nodeID": "fake-node", "allocatable": {"count": count}}


def csidriver(name: str, storage_capacity: bool) -> Dict[str, Any]:
    """st.MakeCSIDriver() with the API server's defaults."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name},
            "spec": {"storageCapacity": storage_capacity, "attachRequired": True, "podInfoOnMount": False,
                     "requiresRepublish": False, "fsGroupPolicy": "ReadWriteOnceWithFSType",
                     "volumeLifecycleModes": ["Persistent"], "seLinuxMount": False}}


def csi_storage_capacity(name: str, sc: str, capacity: str) -> Dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
            "metadata": {"name": name, "namespace": NS}, "storageClassName": sc, "capacity": capacity}


def volume_attachment(name: str, attacher: str, pv_name: str) -> Dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": name},
            "spec": {"attacher": attacher, "nodeName": "fake-node", "source": {"persistentVolumeName": pv_name}},
            "status": {"attached": True}}


# =============================================================================================
# the simulated API server: writes as the clientset's calls make them
# =============================================================================================
class Api:
    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.defaults = ApiServerDefaults([], "test_core_resource_enqueue")
        self.index = 0

    def prepare(self, obj: Dict[str, Any]) -> Dict[str, Any]:
        obj = copy.deepcopy(obj)
        self.defaults.default_object(obj, obj["kind"], self.index)
        self.index += 1
        return obj

    def create(self, obj: Dict[str, Any], notify: bool = True):
        return self.cluster.create(make_object(self.prepare(obj)), notify=notify)

    def _old(self, kind: str, name: str, namespace: str = ""):
        old = self.cluster.get(kind, namespace, name)
        assert old is not None, f"no {kind} {name}"
        return old

    def _with_identity(self, new: Dict[str, Any], old) -> Dict[str, Any]:
        new = copy.deepcopy(new)
        md = new.setdefault("metadata", {})
        for k in ("uid", "creationTimestamp"):
            if k in old.raw["metadata"]:
                md[k] = old.raw["metadata"][k]
        index = old.raw["metadata"].get("x-creationIndex", 0)
        self.defaults.default_object(new, new["kind"], index)
        return new

    def update(self, obj: Dict[str, Any]):
        """Update (of a kind without a status subresource, or of a Node or Pod: metadata and
        spec, the status kept, as nodeStrategy / podStrategy PrepareForUpdate)."""
        ns = (obj.get("metadata") or {}).get("namespace", "")
        old = self._old(obj["kind"], obj["metadata"]["name"], ns)
        new = self._with_identity(obj, old)
        if obj["kind"] in ("Node", "Pod", "PersistentVolume", "PersistentVolumeClaim"):
            new["status"] = copy.deepcopy(old.raw.get("status") or {})
        return self.cluster.update(make_object(new))

    def update_status(self, obj: Dict[str, Any]):
        """UpdateStatus of a Node: metadata and status, the spec kept (nodeStatusStrategy)."""
        old = self._old(obj["kind"], obj["metadata"]["name"])
        new = self._with_identity(obj, old)
        new["spec"] = copy.deepcopy(old.raw.get("spec") or {})
        return self.cluster.update(make_object(new))

    def update_resize(self, name: str, obj: Dict[str, Any]):
        """UpdateResize of a Pod: only the containers' resources change."""
        old = self._old("Pod", name, NS)
        raw = copy.deepcopy(old.raw)
        by_name = {c["name"]: c for c in obj["spec"]["containers"]}
        for c in raw["spec"]["containers"]:
            if c["name"] in by_name:
                c["resources"] = copy.deepcopy(by_name[c["name"]].get("resources") or {})
        return self.cluster.update(make_object(raw))

    def get_raw(self, kind: str, name: str, namespace: str = "") -> Dict[str, Any]:
        return copy.deepcopy(self._old(kind, name, namespace).raw)

    def delete(self, kind: str, name: str, namespace: str = ""):
        self.cluster.delete(self._old(kind, name, namespace))


# =============================================================================================
# the table
# =============================================================================================
@dataclass
class Entry:
    name: str
    pods: List[Dict[str, Any]]
    trigger: Callable[[Api], None]
    requeued: List[str]
    plugins: Optional[List[str]] = None
    nodes: List[Dict[str, Any]] = field(default_factory=list)
    initial_pods: List[Dict[str, Any]] = field(default_factory=list)
    pvs: List[Dict[str, Any]] = field(default_factory=list)
    pvcs: List[Dict[str, Any]] = field(default_factory=list)
    storage_classes: List[Dict[str, Any]] = field(default_factory=list)
    csinodes: List[Dict[str, Any]] = field(default_factory=list)
    csidrivers: List[Dict[str, Any]] = field(default_factory=list)
    capacities: List[Dict[str, Any]] = field(default_factory=list)
    attachments: List[Dict[str, Any]] = field(default_factory=list)
    bound: Optional[List[str]] = None  # pods bound once the scheduler is quiet again
    xfail: str = ""
    version: Optional[str] = None  # the kube-scheduler version (default: the newest modelled)
    gates: Dict[str, bool] = field(default_factory=dict)  # featureGates on top of the version's
    device_classes: List[Dict[str, Any]] = field(default_factory=list)


def _vz_pvs(pv2_zone: Optional[str] = "us-east1") -> List[Dict[str, Any]]:
    out = [pv("pv1", labels={ZONE: "us-west1-a"})]
    if pv2_zone is not None:
        out.append(pv("pv2", labels={ZONE: pv2_zone}))
    return out


ENTRIES: List[Entry] = [
    Entry(
        name="Pod without a required toleration to a node isn't requeued to activeQ",
        plugins=["TaintToleration", "NodeResourcesFit"],
        nodes=[N("fake-node").capacity({"cpu": "2"}).taints([taint(NOT_READY)]).obj()],
        pods=[P("pod1").req({"cpu": "4"}).container("image").obj(),
              P("pod2").toleration(NOT_READY).req({"cpu": "4"}).container("image").obj()],
        trigger=lambda api: api.update_status(
            N("fake-node").capacity({"cpu": "4"}).taints([taint(NOT_READY)]).obj()),
        requeued=["pod2"], bound=["pod2"],
    ),
    Entry(
        name="Pod rejected by the PodAffinity plugin is requeued when a new Node is created",
        plugins=["InterPodAffinity"],
        nodes=[N("fake-node").label("node", "fake-node").capacity({"cpu": "2"}).obj()],
        initial_pods=[P("pod1").label("anti", "anti").pod_anti_affinity_exists("anti", "node")
                      .container("image").node("fake-node").obj()],
        pods=[P("pod2").label("anti", "anti").pod_anti_affinity_exists("anti", "node").container("image").obj()],
        trigger=lambda api: api.create(N("fake-node2").label("node", "fake-node2").capacity({"cpu": "2"}).obj()),
        requeued=["pod2"], bound=["pod2"],
    ),
    Entry(
        # the v1.32-era form of the entry above: the node comes with the not-ready taint, which is
        # then removed
        name="Pod rejected by the PodAffinity plugin is requeued when a new Node is created and turned to ready",
        plugins=["InterPodAffinity"],
        nodes=[N("fake-node").label("node", "fake-node").capacity({"cpu": "2"}).obj()],
        initial_pods=[P("pod1").label("anti", "anti").pod_anti_affinity_exists("anti", "node")
                      .container("image").node("fake-node").obj()],
        pods=[P("pod2").label("anti", "anti").pod_anti_affinity_exists("anti", "node").container("image").obj()],
        trigger=lambda api: (
            api.create(N("fake-node2").label("node", "fake-node2").capacity({"cpu": "2"})
                       .taints([taint(NOT_READY)]).obj()),
            api.update(N("fake-node2").label("node", "fake-node2").capacity({"cpu": "2"}).obj())),
        requeued=["pod2"], bound=["pod2"],
    ),
    Entry(
        name="Pod rejected by the NodeAffinity plugin is requeued when a Node's label is updated",
        plugins=["NodeAffinity"],
        nodes=[N("fake-node1").label("group", "a").obj()],
        pods=[P("pod1").node_affinity_in("group", ["b"]).container("image").obj(),
              P("pod2").node_affinity_in("group", ["c"]).container("image").obj()],
        trigger=lambda api: api.update(N("fake-node1").label("group", "b").obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected by the NodeAffinity plugin is not requeued when an updated Node haven't changed the 'match' verdict",
        plugins=["NodeAffinity", "NodeResourcesFit"],
        nodes=[N("node1").label("group", "a").capacity({"cpu": "2"}).obj(),
               N("node2").label("group", "b").obj()],
        pods=[P("pod1").node_affinity_in("group", ["a"]).req({"cpu": "4"}).container("image").obj()],
        trigger=lambda api: api.update(N("node1").label("group", "a").label("node", "fake-node").obj()),
        requeued=[], bound=[],
    ),
    Entry(
        name="Pod rejected by the NodeAffinity plugin is requeued when a Node is added",
        plugins=["NodeAffinity"],
        nodes=[N("fake-node1").label("group", "a").obj()],
        pods=[P("pod1").node_affinity_in("group", ["b"]).container("image").obj(),
              P("pod2").node_affinity_in("group", ["c"]).container("image").obj()],
        trigger=lambda api: api.create(N("fake-node2").label("group", "b").obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod updated with toleration requeued to activeQ",
        plugins=["TaintToleration"],
        nodes=[N("fake-node").taints([taint("taint-key")]).obj()],
        pods=[P("pod1").container("image").obj(), P("pod2").container("image").obj()],
        trigger=lambda api: api.update(P("pod1").container("image").toleration("taint-key").obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected by the TaintToleration plugin is requeued when the Node's taint is updated",
        plugins=["TaintToleration"],
        nodes=[N("fake-node").taints([taint(NOT_READY)]).obj()],
        pods=[P("pod1").toleration("taint-key").container("image").obj(),
              P("pod2").toleration("taint-key2").container("image").obj(),
              P("pod3").container("image").obj()],
        trigger=lambda api: api.update(N("fake-node").taints([taint("taint-key")]).obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected by the TaintToleration plugin is requeued when a Node that has the correspoding taint is added",
        plugins=["TaintToleration"],
        nodes=[N("fake-node1").taints([taint(NOT_READY)]).obj()],
        pods=[P("pod1").toleration("taint-key").container("image").obj(),
              P("pod2").container("image").obj()],
        trigger=lambda api: api.create(N("fake-node2").taints([taint("taint-key")]).obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin is requeued when the Pod is updated to scale down",
        plugins=["NodeResourcesFit"],
        nodes=[N("fake-node").capacity({"cpu": "2"}).obj()],
        pods=[P("pod1").req({"cpu": "4"}).container("image").obj()],
        trigger=lambda api: api.update_resize("pod1", P("pod1").req({"cpu": "2"}).container("image").obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin is requeued when a Pod is deleted",
        plugins=["NodeResourcesFit"],
        nodes=[N("fake-node").capacity({"cpu": "2"}).obj()],
        initial_pods=[P("pod1").req({"cpu": "2"}).container("image").node("fake-node").obj()],
        pods=[P("pod2").req({"cpu": "2"}).container("image").obj()],
        trigger=lambda api: api.delete("Pod", "pod1", NS),
        requeued=["pod2"], bound=["pod2"],
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin is requeued when a Node is created",
        plugins=["NodeResourcesFit"],
        nodes=[N("fake-node1").capacity({"cpu": "2"}).obj()],
        pods=[P("pod1").req({"cpu": "4"}).container("image").obj(),
              P("pod2").req({"cpu": "5"}).container("image").obj()],
        trigger=lambda api: api.create(N("fake-node2").capacity({"cpu": "4"}).obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin is requeued when a Node is updated",
        plugins=["NodeResourcesFit"],
        nodes=[N("fake-node").capacity({"cpu": "2"}).obj()],
        pods=[P("pod1").req({"cpu": "4"}).container("image").obj(),
              P("pod2").req({"cpu": "5"}).container("image").obj()],
        trigger=lambda api: api.update_status(N("fake-node").capacity({"cpu": "4"}).obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin isn't requeued when a Node has the extended resource, and DRAExtendedResource is disabled",
        plugins=["NodeResourcesFit", "DynamicResources"],
        nodes=[N("fake-node1").capacity({"cpu": "4", "example.com/gpu": "1"}).obj()],
        pods=[P("pod1").res({"cpu": "5", "example.com/gpu": "1"}).container("image").obj()],
        trigger=lambda api: api.update_status(N("fake-node1").capacity({"cpu": "4", "memory": "4000"}).obj()),
        requeued=[], bound=[], gates={"DRAExtendedResource": False},
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin isn't requeued when a Node has the extended resource, and DRAExtendedResource is enabled",
        plugins=["NodeResourcesFit", "DynamicResources"],
        nodes=[N("fake-node1").capacity({"cpu": "4", "example.com/gpu": "1"}).obj()],
        pods=[P("pod1").res({"cpu": "5", "example.com/gpu": "1"}).container("image").obj()],
        trigger=lambda api: api.update_status(N("fake-node1").capacity({"cpu": "4", "memory": "4000"}).obj()),
        requeued=[], bound=[], gates={"DRAExtendedResource": True},
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin isn't requeued when a Node does not have the extended resource, and DRAExtendedResource is disabled",
        plugins=["NodeResourcesFit", "DynamicResources"],
        nodes=[N("fake-node1").capacity({"cpu": "4"}).obj()],
        pods=[P("pod1").res({"example.com/gpu": "1"}).container("image").obj()],
        trigger=lambda api: api.update_status(N("fake-node1").capacity({"cpu": "4", "memory": "4000"}).obj()),
        requeued=[], bound=[], gates={"DRAExtendedResource": False},
    ),
    Entry(
        # the memory update requeues pod1: the node's missing example.com/gpu is left to
        # DynamicResources (shouldDelegateResourceToDRA in haveAnyRequestedResourcesIncreased)
        name="Pod rejected by the NodeResourcesFit plugin is requeued when a Node does not have the extended resource, and DRAExtendedResource is enabled",
        plugins=["NodeResourcesFit", "NodeAffinity", "DynamicResources"],
        nodes=[N("fake-node1").capacity({"cpu": "4"}).obj(),
               N("fake-node2").capacity({"cpu": "2"}).label("group", "b").obj()],
        device_classes=[{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                         "metadata": {"name": "gpu-device-class"},
                         "spec": {"extendedResourceName": "example.com/gpu"}}],
        pods=[P("pod1").res({"cpu": "4", "example.com/gpu": "1"}).node_affinity_in("group", ["b"]).container("image").obj()],
        trigger=lambda api: api.update_status(N("fake-node1").capacity({"cpu": "4", "memory": "4000"}).obj()),
        requeued=["pod1"], gates={"DRAExtendedResource": True},
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin is requeued when created DeviceClass having the extended resource matching pod's requests, and DRAExtendedResource is enabled",
        plugins=["NodeResourcesFit"],
        nodes=[N("fake-node1").capacity({"cpu": "4"}).obj()],
        pods=[P("pod1").res({"cpu": "4", "example.com/gpu": "1"}).container("image").obj(),
              P("pod2").res({"cpu": "4", "example.com/othergpu": "1"}).container("image").obj()],
        trigger=lambda api: api.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                        "metadata": {"name": "fake-class"},
                                        "spec": {"extendedResourceName": "example.com/gpu"}}),
        requeued=["pod1"], gates={"DRAExtendedResource": True},
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin is requeued when updated DeviceClass has the extended resource, and DRAExtendedResource is enabled",
        plugins=["NodeResourcesFit"],
        device_classes=[{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                         "metadata": {"name": "fake-class"}, "spec": {}}],
        nodes=[N("fake-node1").capacity({"cpu": "4"}).obj()],
        pods=[P("pod1").res({"cpu": "4", "example.com/gpu": "1"}).container("image").obj(),
              P("pod2").res({"cpu": "4", "example.com/othergpu": "1"}).container("image").obj()],
        trigger=lambda api: api.update({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                        "metadata": {"name": "fake-class"},
                                        "spec": {"extendedResourceName": "example.com/gpu"}}),
        requeued=["pod1"], gates={"DRAExtendedResource": True},
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin isn't requeued when a Node is updated without increase in the requested resources",
        plugins=["NodeResourcesFit", "NodeAffinity"],
        nodes=[N("fake-node1").capacity({"cpu": "4"}).obj(),
               N("fake-node2").capacity({"cpu": "2"}).label("group", "b").obj()],
        pods=[P("pod1").req({"cpu": "4"}).node_affinity_in("group", ["b"]).container("image").obj()],
        trigger=lambda api: api.update_status(N("fake-node1").capacity({"cpu": "4", "memory": "4000"}).obj()),
        requeued=[], bound=[],
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin is requeued when a Node is updated with increase in the requested resources",
        plugins=["NodeResourcesFit", "NodeAffinity"],
        nodes=[N("fake-node1").capacity({"cpu": "4"}).obj(),
               N("fake-node2").capacity({"cpu": "2"}).label("group", "b").obj()],
        pods=[P("pod1").req({"cpu": "4"}).node_affinity_in("group", ["b"]).container("image").obj()],
        trigger=lambda api: api.update_status(N("fake-node1").capacity({"cpu": "5"}).obj()),
        requeued=["pod1"], bound=[],
    ),
    Entry(
        name="Pod rejected by the NodeResourcesFit plugin is requeued when a Node is updated with increase in the allowed pods number",
        plugins=["NodeResourcesFit", "NodeAffinity"],
        nodes=[N("fake-node1").capacity({"pods": "2"}).obj(),
               N("fake-node2").capacity({"pods": "1"}).label("group", "b").obj()],
        initial_pods=[P("pod1").node_affinity_in("group", ["b"]).container("image").node("fake-node2").obj()],
        pods=[P("pod2").node_affinity_in("group", ["b"]).container("image").obj()],
        trigger=lambda api: api.update_status(N("fake-node1").capacity({"pods": "3"}).obj()),
        requeued=["pod2"], bound=[],
    ),
    Entry(
        name="Updating pod label doesn't retry scheduling if the Pod was rejected by TaintToleration",
        plugins=["TaintToleration"],
        nodes=[N("fake-node").taints([taint(NOT_READY)]).obj()],
        pods=[P("pod1").container("image").obj()],
        trigger=lambda api: api.update(P("pod1").label("key", "val").container("image").obj()),
        requeued=[], bound=[],
    ),
    Entry(
        name="Pod rejected by the PreFilter of NodeAffinity plugin and Filter of NodeResourcesFit is requeued based on both plugins",
        plugins=["NodeAffinity", "NodeResourcesFit"],
        nodes=[N("fake-node").label("node", "fake-node").capacity({"cpu": "2"}).obj(),
               N("fake-node2").label("node", "fake-node2").label("zone", "zone1").capacity({"cpu": "2"}).obj()],
        pods=[P("pod1").label("unscheduled", "plugins").node_affinity_in("metadata.name", ["fake-node"], fields=True)
              .req({"cpu": "4"}).obj()],
        trigger=lambda api: api.update_status(
            N("fake-node").label("metadata.name", "fake-node").capacity({"cpu": "4"}).obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected by the InterPodAffinity plugin is requeued when deleting the existed pod's label that matches the podAntiAffinity",
        plugins=["InterPodAffinity"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        initial_pods=[P("pod1").label("anti1", "anti1").label("anti2", "anti2").container("image").node("fake-node").obj()],
        pods=[P("pod2").label("anti1", "anti1").pod_anti_affinity_exists("anti1", "node").container("image").obj(),
              P("pod3").label("anti2", "anti2").pod_anti_affinity_exists("anti2", "node").container("image").obj()],
        trigger=lambda api: api.update(P("pod1").label("anti2", "anti2").container("image").node("fake-node").obj()),
        requeued=["pod2"], bound=["pod2"],
    ),
    Entry(
        name="Pod rejected by the InterPodAffinity plugin is requeued when deleting the existing pod that matches the target podAntiAffinity",
        plugins=["InterPodAffinity"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        initial_pods=[P("pod1").label("anti1", "anti1").container("image").node("fake-node").obj(),
                      P("pod2").label("anti2", "anti2").container("image").node("fake-node").obj()],
        pods=[P("pod3").label("anti1", "anti1").pod_anti_affinity_exists("anti1", "node").container("image").obj(),
              P("pod4").label("anti2", "anti2").pod_anti_affinity_exists("anti2", "node").container("image").obj()],
        trigger=lambda api: api.delete("Pod", "pod1", NS),
        requeued=["pod3"], bound=["pod3"],
    ),
    Entry(
        name="Pod rejected by the InterPodAffinity plugin is requeued when deleting the existing pod with podAntiAffinity that matches the target pod",
        plugins=["InterPodAffinity"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        initial_pods=[P("pod1").pod_anti_affinity_exists("anti1", "node").container("image").node("fake-node").obj(),
                      P("pod2").pod_anti_affinity_exists("anti2", "node").container("image").node("fake-node").obj()],
        pods=[P("pod3").label("anti1", "anti1").container("image").obj(),
              P("pod4").label("anti2", "anti2").container("image").obj()],
        trigger=lambda api: api.delete("Pod", "pod1", NS),
        # v1.36 (queue.go at v1.36.3, kubernetes#135325): the deleted pod's anti-affinity matched
        # pod3, which is requeued and fits now
        requeued=["pod3"], bound=["pod3"],
    ),
    Entry(
        name="Pod rejected by the InterPodAffinity plugin is not requeued when deleting the existing pod with podAntiAffinity that matches the target pod (v1.35)",
        plugins=["InterPodAffinity"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        initial_pods=[P("pod1").pod_anti_affinity_exists("anti1", "node").container("image").node("fake-node").obj(),
                      P("pod2").pod_anti_affinity_exists("anti2", "node").container("image").node("fake-node").obj()],
        pods=[P("pod3").label("anti1", "anti1").container("image").obj(),
              P("pod4").label("anti2", "anti2").container("image").obj()],
        trigger=lambda api: api.delete("Pod", "pod1", NS),
        # v1.34/v1.35's isSchedulableAfterPodChange only checks whether the *pending* pod's
        # anti-affinity matched the deleted pod, so pod3 stays in the unschedulable pool
        requeued=[], bound=[], version="v1.35",
    ),
    Entry(
        name="Pod rejected by the PodAffinity plugin is requeued when updating the existed pod's label to make it match the pod's podAffinity",
        plugins=["InterPodAffinity"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        initial_pods=[P("pod1").container("image").node("fake-node").obj()],
        pods=[P("pod2").pod_affinity_exists("aaa", "node").container("image").obj(),
              P("pod3").pod_affinity_exists("bbb", "node").container("image").obj()],
        trigger=lambda api: api.update(P("pod1").label("aaa", "bbb").container("image").node("fake-node").obj()),
        requeued=["pod2"], bound=["pod2"],
    ),
    Entry(
        name="Pod rejected by the InterPodAffinity plugin is requeued when creating the node with the topologyKey label of the pod affinity",
        plugins=["InterPodAffinity"],
        nodes=[N("fake-node1").label("aaa", "fake-node").obj()],
        pods=[P("pod1").pod_affinity_exists("bbb", "zone").container("image").obj(),
              P("pod2").pod_affinity_exists("ccc", "region").container("image").obj()],
        trigger=lambda api: api.create(N("fake-node2").label("zone", "zone1").obj()),
        requeued=["pod1"],
    ),
    Entry(
        name="Pod rejected by the InterPodAffinity plugin is requeued when updating the node with the topologyKey label of the pod affinity",
        plugins=["InterPodAffinity", "NodeAffinity"],
        nodes=[N("fake-node").label("region", "region-1").obj(),
               N("fake-node2").label("region", "region-2").label("group", "b").obj()],
        initial_pods=[P("pod1").label("affinity1", "affinity1").container("image").node("fake-node").obj()],
        pods=[P("pod2").label("affinity1", "affinity1").pod_affinity_exists("affinity1", "node").container("image").obj(),
              P("pod3").label("affinity1", "affinity1").pod_affinity_exists("affinity1", "other").container("image").obj(),
              P("pod4").pod_affinity_exists("affinity1", "region").node_affinity_in("group", ["b"]).container("image").obj()],
        trigger=lambda api: api.update(N("fake-node").label("node", "fake-node").label("region", "region-2").obj()),
        requeued=["pod2", "pod4"],
    ),
    Entry(
        name="Pod rejected by the InterPodAffinity plugin is requeued when updating the node with the topologyKey label of the pod anti affinity",
        plugins=["InterPodAffinity"],
        nodes=[N("fake-node").label("node", "fake-node").label("service", "service-a").label("other", "fake-node").obj()],
        initial_pods=[P("pod1").label("anti1", "anti1").container("image").node("fake-node").obj()],
        pods=[P("pod2").label("anti1", "anti1").pod_anti_affinity_exists("anti1", "node").container("image").obj(),
              P("pod3").label("anti1", "anti1").pod_anti_affinity_exists("anti1", "service").container("image").obj(),
              P("pod4").label("anti1", "anti1").pod_anti_affinity_exists("anti1", "other").container("image").obj()],
        trigger=lambda api: api.update(N("fake-node").label("service", "service-b").label("region", "fake-node")
                                       .label("other", "fake-node").obj()),
        requeued=["pod2", "pod3"],
    ),
    Entry(
        name="Pod rejected by the InterPodAffinity plugin is requeued when creating the node with the topologyKey label of the pod anti affinity",
        plugins=["InterPodAffinity"],
        nodes=[N("fake-node1").label("zone", "fake-node").label("node", "fake-node").obj()],
        initial_pods=[P("pod1").label("anti1", "anti1").container("image").node("fake-node1").obj()],
        pods=[P("pod2").pod_anti_affinity_exists("anti1", "zone").container("image").obj(),
              P("pod3").pod_anti_affinity_exists("anti1", "node").container("image").obj()],
        trigger=lambda api: api.create(N("fake-node2").label("zone", "fake-node").obj()),
        requeued=["pod2", "pod3"],
    ),
    Entry(
        name="Pod rejected with hostport by the NodePorts plugin is requeued when pod with common hostport is deleted",
        plugins=["NodePorts"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        initial_pods=[P("pod1").container("image").container_port([{"containerPort": 8080, "hostPort": 8080}]).node("fake-node").obj(),
                      P("pod2").container("image").container_port([{"containerPort": 8080, "hostPort": 8081}]).node("fake-node").obj()],
        pods=[P("pod3").container("image").container_port([{"containerPort": 8080, "hostPort": 8080}]).obj(),
              P("pod4").container("image").container_port([{"containerPort": 8080, "hostPort": 8081}]).obj()],
        trigger=lambda api: api.delete("Pod", "pod1", NS),
        requeued=["pod3"], bound=["pod3"],
    ),
    Entry(
        name="Pod rejected with hostport by the NodePorts plugin is requeued when new node is created",
        plugins=["NodePorts"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        initial_pods=[P("pod1").container("image").container_port([{"containerPort": 8080, "hostPort": 8080}]).node("fake-node").obj()],
        pods=[P("pod2").container("image").container_port([{"containerPort": 8080, "hostPort": 8080}]).obj()],
        trigger=lambda api: api.create(N("fake-node2").label("node", "fake-node2").obj()),
        requeued=["pod2"], bound=["pod2"],
    ),
    Entry(
        name="Pod rejected by the NodeUnschedulable plugin is requeued when the node is turned to ready",
        plugins=["NodeUnschedulable"],
        nodes=[N("fake-node").unschedulable(True).obj()],
        pods=[P("pod1").container("image").obj()],
        trigger=lambda api: api.update(N("fake-node").unschedulable(False).obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected by the NodeUnschedulable plugin is requeued when a new node is created",
        plugins=["NodeUnschedulable"],
        nodes=[N("fake-node1").unschedulable(True).obj()],
        pods=[P("pod1").container("image").obj()],
        trigger=lambda api: api.create(N("fake-node2").obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected by the NodeUnschedulable plugin isn't requeued when another unschedulable node is created",
        plugins=["NodeUnschedulable"],
        nodes=[N("fake-node1").unschedulable(True).obj()],
        pods=[P("pod1").container("image").obj()],
        trigger=lambda api: api.create(N("fake-node2").unschedulable(True).obj()),
        requeued=[], bound=[],
    ),
    Entry(
        name="Pods with PodTopologySpread should be requeued when a Pod with matching label is scheduled",
        plugins=["PodTopologySpread"],
        nodes=[N("fake-node").label("node", "fake-node").capacity({"cpu": "2"}).obj()],
        initial_pods=[P("pod1").label("key1", "val").container("image").node("fake-node").obj(),
                      P("pod2").label("key2", "val").container("image").node("fake-node").obj()],
        pods=[P("pod3").label("key1", "val").spread(1, "node", "key1", 3).container("image").obj(),
              P("pod4").label("key2", "val").spread(1, "node", "key2", 3).container("image").obj()],
        trigger=lambda api: api.create(P("pod5").label("key1", "val").node("fake-node").container("image").obj()),
        requeued=["pod3"],
    ),
    Entry(
        name="Pods with PodTopologySpread should be requeued when a scheduled Pod label is updated to match the selector",
        plugins=["PodTopologySpread"],
        nodes=[N("fake-node").label("node", "fake-node").capacity({"cpu": "2"}).obj()],
        initial_pods=[P("pod1").label("key1", "val").container("image").node("fake-node").obj(),
                      P("pod2").label("key2", "val").container("image").node("fake-node").obj()],
        pods=[P("pod3").label("key1", "val").spread(1, "node", "key1", 3).container("image").obj(),
              P("pod4").label("key2", "val").spread(1, "node", "key2", 3).container("image").obj()],
        trigger=lambda api: api.update(P("pod1").label("key3", "val").container("image").node("fake-node").obj()),
        requeued=["pod3"],
    ),
    Entry(
        name="Pods with PodTopologySpread should be requeued when a scheduled Pod with matching label is deleted",
        plugins=["PodTopologySpread"],
        nodes=[N("fake-node").label("node", "fake-node").capacity({"cpu": "2"}).obj()],
        initial_pods=[P("pod1").label("key1", "val").container("image").node("fake-node").obj(),
                      P("pod2").label("key2", "val").container("image").node("fake-node").obj()],
        pods=[P("pod3").label("key1", "val").spread(1, "node", "key1", 2).container("image").obj(),
              P("pod4").label("key2", "val").spread(1, "node", "key2", 3).container("image").obj()],
        trigger=lambda api: api.delete("Pod", "pod1", NS),
        requeued=["pod3"],
    ),
    Entry(
        name="Pods with PodTopologySpread should be requeued when a Node with topology label is created",
        plugins=["PodTopologySpread"],
        nodes=[N("fake-node1").label("node", "fake-node").obj(),
               N("fake-node2").label("zone", "fake-zone").obj()],
        initial_pods=[P("pod1").label("key1", "val").container("image").node("fake-node1").obj(),
                      P("pod2").label("key1", "val").container("image").node("fake-node2").obj()],
        pods=[P("pod3").label("key1", "val").spread(1, "node", "key1", 2).container("image").obj(),
              P("pod4").label("key1", "val").spread(1, "zone", "key1", 2).container("image").obj()],
        trigger=lambda api: api.create(N("fake-node3").label("node", "fake-node").obj()),
        requeued=["pod3"],
    ),
    Entry(
        name="Pods with PodTopologySpread should be requeued when a Node is updated to have the topology label",
        plugins=["PodTopologySpread"],
        nodes=[N("fake-node1").label("node", "fake-node").label("region", "fake-node").label("service", "service-a").obj(),
               N("fake-node2").label("node", "fake-node").label("region", "fake-node").label("service", "service-a").obj()],
        initial_pods=[P("pod1").label("key1", "val").spread(1, "node", "key1").container("image").node("fake-node1").obj(),
                      P("pod2").label("key1", "val").spread(1, "zone", "key1").container("image").node("fake-node2").obj(),
                      P("pod3").label("key1", "val").spread(1, "region", "key1").container("image").node("fake-node2").obj(),
                      P("pod4").label("key1", "val").spread(1, "service", "key1").container("image").node("fake-node2").obj()],
        pods=[P("pod5").label("key1", "val").spread(1, "node", "key1", 3).container("image").obj(),
              P("pod6").label("key1", "val").spread(1, "zone", "key1", 3).container("image").obj(),
              P("pod7").label("key1", "val").spread(1, "region", "key1", 3).container("image").obj(),
              P("pod8").label("key1", "val").spread(1, "other", "key1", 3).container("image").obj(),
              P("pod9").label("key1", "val").spread(1, "service", "key1", 3).container("image").obj()],
        trigger=lambda api: api.update(N("fake-node2").label("zone", "fake-node").label("region", "fake-node")
                                       .label("service", "service-b").obj()),
        requeued=["pod5", "pod6", "pod9"],
    ),
    Entry(
        name="Pods with PodTopologySpread should be requeued when a Node with a topology label is deleted",
        plugins=["PodTopologySpread"],
        nodes=[N("fake-node1").label("node", "fake-node").obj(),
               N("fake-node2").label("zone", "fake-node").obj()],
        initial_pods=[P("pod1").label("key1", "val").spread(1, "node", "key1").container("image").node("fake-node1").obj(),
                      P("pod2").label("key1", "val").spread(1, "zone", "key1").container("image").node("fake-node2").obj()],
        pods=[P("pod3").label("key1", "val").spread(1, "node", "key1", 3).container("image").obj(),
              P("pod4").label("key1", "val").spread(1, "zone", "key1", 3).container("image").obj()],
        trigger=lambda api: api.delete("Node", "fake-node2"),
        requeued=["pod4"],
    ),
    Entry(
        name="Pods with PodTopologySpread should be requeued when a NodeTaint of a Node with a topology label has been updated",
        plugins=["PodTopologySpread"],
        nodes=[N("fake-node1").label("node", "fake-node").obj(),
               N("fake-node2").label("zone", "fake-node").obj(),
               N("fake-node3").label("zone", "fake-node").taints([taint(NOT_READY)]).obj()],
        initial_pods=[P("pod1").label("key1", "val").spread(1, "node", "key1").container("image").node("fake-node1").obj(),
                      P("pod2").label("key1", "val").spread(1, "node", "key1").container("image").node("fake-node2").obj()],
        pods=[P("pod3").label("key1", "val").spread(1, "node", "key1", 3).container("image").obj(),
              P("pod4").label("key1", "val").spread(1, "zone", "key1", 3).container("image").toleration("aaa").obj()],
        trigger=lambda api: api.update(N("fake-node3").label("zone", "fake-node")
                                       .taints([taint("aaa", "bbb")]).obj()),
        requeued=["pod4"],
    ),
    # ---- VolumeZone ----------------------------------------------------------------------------
    Entry(
        name="Pod rejected with node by the VolumeZone plugin is requeued when the PV is added",
        plugins=["VolumeZone"],
        nodes=[N("fake-node").label("node", "fake-node").label(ZONE, "us-west1-a").obj()],
        pvs=_vz_pvs(None),
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True), pvc("pvc2", volume_name="pv2", bound=True)],
        initial_pods=[P("pod1").container("image").pvc("pvc1").node("fake-node").obj()],
        pods=[P("pod2").container("image").pvc("pvc2").obj()],
        trigger=lambda api: api.create(pv("pv2", labels={ZONE: "us-west1-a"})),
        requeued=["pod2"], bound=["pod2"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeZone plugin is requeued when the PV is updated",
        plugins=["VolumeZone"],
        nodes=[N("fake-node").label("node", "fake-node").label(ZONE, "us-west1-a").obj()],
        pvs=_vz_pvs(),
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True), pvc("pvc2", volume_name="pv2", bound=True)],
        initial_pods=[P("pod1").container("image").pvc("pvc1").node("fake-node").obj()],
        pods=[P("pod2").container("image").pvc("pvc2").obj()],
        trigger=lambda api: api.update(pv("pv2", labels={ZONE: "us-west1-a"})),
        requeued=["pod2"], bound=["pod2"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeZone plugin is requeued when the PVC bound to the pod is added",
        plugins=["VolumeZone"],
        nodes=[N("fake-node").label("node", "fake-node").label(ZONE, "us-west1-a").obj()],
        pvs=_vz_pvs(),
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True)],
        initial_pods=[P("pod1").container("image").pvc("pvc1").node("fake-node").obj()],
        pods=[P("pod2").container("image").pvc("pvc2").obj(), P("pod3").container("image").pvc("pvc3").obj()],
        trigger=lambda api: api.create(pvc("pvc2", volume_name="pv2", bound=True)),
        requeued=["pod2"], bound=[],
    ),
    Entry(
        name="Pod rejected with node by the VolumeZone plugin is requeued when the PVC bound to the pod is updated",
        plugins=["VolumeZone"],
        nodes=[N("fake-node").label("node", "fake-node").label(ZONE, "us-west1-a").obj()],
        pvs=_vz_pvs(),
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True), pvc("pvc2", bound=True)],
        initial_pods=[P("pod1").container("image").pvc("pvc1").node("fake-node").obj()],
        pods=[P("pod2").container("image").pvc("pvc2").obj(), P("pod3").container("image").pvc("pvc3").obj()],
        trigger=lambda api: api.update(pvc("pvc2", volume_name="pv2", bound=True)),
        requeued=["pod2"], bound=[],
    ),
    Entry(
        name="Pod rejected with node by the VolumeZone plugin is requeued when the Storage class is added",
        plugins=["VolumeZone"],
        nodes=[N("fake-node").label("node", "fake-node").label(ZONE, "us-west1-a").obj()],
        pvs=_vz_pvs(None),
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True), pvc("pvc2", volume_name="pv2", bound=True)],
        initial_pods=[P("pod1").container("image").pvc("pvc1").node("fake-node").obj()],
        pods=[P("pod2").container("image").pvc("pvc2").obj()],
        trigger=lambda api: api.create(storage_class("sc1", "WaitForFirstConsumer")),
        requeued=["pod2"], bound=[],
    ),
    Entry(
        name="Pod rejected with node by the VolumeZone plugin is not requeued when the PV is updated but the topology is same",
        plugins=["VolumeZone"],
        nodes=[N("fake-node").label("node", "fake-node").label(ZONE, "us-west1-a").obj()],
        pvs=_vz_pvs(),
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True), pvc("pvc2", volume_name="pv2", bound=True)],
        initial_pods=[P("pod1").container("image").pvc("pvc1").node("fake-node").obj()],
        pods=[P("pod2").container("image").pvc("pvc2").obj()],
        trigger=lambda api: api.update(pv("pv2", labels={ZONE: "us-east1", "unrelated": "unrelated"})),
        requeued=[], bound=[],
    ),
    # ---- VolumeRestrictions --------------------------------------------------------------------
    Entry(
        name="Pod rejected by the VolumeRestriction plugin is requeued when the PVC bound to the pod is added",
        plugins=["VolumeRestrictions"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteOnce")],
        pods=[P("pod1").container("image").pvc("pvc1").obj(), P("pod2").container("image").pvc("pvc2").obj()],
        trigger=lambda api: api.create(pvc("pvc1", volume_name="pv1", bound=True)),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected by the VolumeRestriction plugin is requeued when the pod is deleted",
        plugins=["VolumeRestrictions"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteOnce")],
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True)],
        initial_pods=[P("pod1").container("image").pvc("pvc1").node("fake-node").obj()],
        pods=[P("pod2").container("image").pvc("pvc1").obj(), P("pod3").container("image").pvc("pvc2").obj()],
        trigger=lambda api: api.delete("Pod", "pod1", NS),
        requeued=["pod2"], bound=["pod2"],
    ),
    # ---- VolumeBinding -------------------------------------------------------------------------
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the Node is created",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").label(ZONE, "us-east-1b").obj()],
        pvs=[pv("pv1", node_affinity_in=(ZONE, ["us-east-1a"]))],
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True, access="ReadOnlyMany")],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.create(N("fake-node2").label(ZONE, "us-east-1a").obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the Node is updated",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").label("aaa", "bbb").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", node_affinity_in=("aaa", ["ccc"]))],
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True, access="ReadWriteMany")],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.update(N("fake-node").label("node", "fake-node").label("aaa", "ccc").obj()),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the PV is created",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").label("aaa", "bbb").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", node_affinity_in=("aaa", ["ccc"]))],
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True, access="ReadWriteMany")],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: (api.delete("PersistentVolume", "pv1"),
                             api.create(pv("pv1", access="ReadWriteMany", node_affinity_in=("aaa", ["bbb"])))),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the PV is updated",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").label(ZONE, "us-east-1a").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", node_affinity_in=(BETA_ZONE, ["us-east-1a"]))],
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True, access="ReadWriteMany")],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.update(pv("pv1", access="ReadWriteMany", node_affinity_in=(ZONE, ["us-east-1a"]))),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the PVC is created",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1")],
        pvcs=[pvc("pvc1", access="ReadOnlyMany"), pvc("pvc2", access="ReadOnlyMany")],
        pods=[P("pod1").container("image").pvc("pvc1").obj(), P("pod2").container("image").pvc("pvc2").obj()],
        trigger=lambda api: (api.delete("PersistentVolumeClaim", "pvc1", NS),
                             api.create(pvc("pvc1", volume_name="pv1", bound=True, access="ReadOnlyMany"))),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the PVC is updated",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany")],
        pvcs=[pvc("pvc1", access="ReadWriteMany"), pvc("pvc2", access="ReadWriteMany")],
        pods=[P("pod1").container("image").pvc("pvc1").obj(), P("pod2").container("image").pvc("pvc2").obj()],
        trigger=lambda api: api.update(pvc("pvc1", volume_name="pv1", bound=True, access="ReadWriteMany")),
        requeued=["pod1"], bound=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the StorageClass is created",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", storage_class="sc1")],
        pvcs=[pvc("pvc1", access="ReadWriteMany", storage_class="sc1")],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.create(storage_class("sc1", "WaitForFirstConsumer")),
        requeued=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the StorageClass's AllowedTopologies is updated",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").label(ZONE, "us-west-1a").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", storage_class="sc1")],
        pvcs=[pvc("pvc1", access="ReadWriteMany", storage_class="sc1")],
        storage_classes=[storage_class("sc1", "WaitForFirstConsumer", allowed_zones=["us-west-1c"])],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.update(storage_class("sc1", "WaitForFirstConsumer", allowed_zones=["us-west-1a"])),
        requeued=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is not requeued when the StorageClass is updated but the AllowedTopologies is same",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").label(ZONE, "us-west-1c").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", storage_class="sc1")],
        pvcs=[pvc("pvc1", access="ReadWriteMany", storage_class="sc1")],
        storage_classes=[storage_class("sc1", "WaitForFirstConsumer", labels={"key": "value"},
                                       allowed_zones=["us-west-1a"])],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.update(storage_class("sc1", "WaitForFirstConsumer", labels={"key": "updated"},
                                                     allowed_zones=["us-west-1a"])),
        requeued=[], bound=[],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the CSINode is created",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany")],
        pvcs=[pvc("pvc1", access="ReadWriteMany")],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.create(csinode("fake-node")),
        requeued=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the CSINode's MigratedPluginsAnnotation is updated",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", storage_class="sc1")],
        pvcs=[pvc("pvc1", access="ReadWriteMany", storage_class="sc1")],
        csinodes=[csinode("fake-node")],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.update(dict(api.get_raw("CSINode", "fake-node"),
                                            metadata={"name": "fake-node",
                                                      "annotations": {MIGRATED_PLUGINS: "value"}})),
        requeued=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the CSIDriver's StorageCapacity gets disabled",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany")],
        pvcs=[pvc("pvc1", access="ReadWriteMany")],
        csidrivers=[csidriver("csidriver", True)],
        pods=[P("pod1").container("image").pvc("pvc1").volume({"name": "volume", "csi": {"driver": "csidriver"}}).obj()],
        trigger=lambda api: api.update(csidriver("csidriver", False)),
        requeued=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is not requeued when the CSIDriver is updated but the storage capacity is originally enabled",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany")],
        pvcs=[pvc("pvc1", access="ReadWriteMany")],
        csidrivers=[csidriver("csidriver", False)],
        pods=[P("pod1").container("image").pvc("pvc1").volume({"name": "volume", "csi": {"driver": "csidriver"}}).obj()],
        trigger=lambda api: api.update(csidriver("csidriver", True)),
        requeued=[], bound=[],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the CSIStorageCapacity is created",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", storage_class="sc1")],
        pvcs=[pvc("pvc1", access="ReadWriteMany", storage_class="sc1")],
        storage_classes=[storage_class("sc1", "Immediate")],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.create(csi_storage_capacity("csc", "sc1", "10")),
        requeued=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is requeued when the CSIStorageCapacity is increased",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", storage_class="sc1")],
        pvcs=[pvc("pvc1", access="ReadWriteMany", storage_class="sc1")],
        capacities=[csi_storage_capacity("csc", "sc1", "10")],
        storage_classes=[storage_class("sc1", "Immediate")],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.update(csi_storage_capacity("csc", "sc1", "20")),
        requeued=["pod1"],
    ),
    Entry(
        name="Pod rejected with node by the VolumeBinding plugin is not requeued when the CSIStorageCapacity is updated but the volumelimit is not increased",
        plugins=["VolumeBinding"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany")],
        pvcs=[pvc("pvc1", access="ReadWriteMany")],
        capacities=[csi_storage_capacity("csc", "sc1", "10")],
        storage_classes=[storage_class("sc1", "Immediate")],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.update(csi_storage_capacity("csc", "sc1", "5")),
        requeued=[], bound=[],
    ),
    # ---- NodeVolumeLimits ----------------------------------------------------------------------
    Entry(
        name="Pod rejected the CSI NodeVolumeLimits plugin is requeued when the CSINode is added",
        plugins=["NodeVolumeLimits"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", csi={"driver": "csidriver", "volumeHandle": "volumehandle"})],
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True, access="ReadWriteMany")],
        csidrivers=[csidriver("csidriver", True)],
        csinodes=[csinode("fake-node", [csi_driver_entry("csidriver", 0)])],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.create(csinode("csinode")),
        requeued=["pod1"], bound=[],
    ),
    Entry(
        name="Pod rejected with PVC by the CSI NodeVolumeLimits plugin is requeued when the pod having related PVC is deleted",
        plugins=["NodeVolumeLimits"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", csi={"driver": "csidriver", "volumeHandle": "volumehandle1"}),
             pv("pv2", access="ReadWriteMany", csi={"driver": "csidriver", "volumeHandle": "volumehandle2"})],
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True), pvc("pvc2", volume_name="pv2", bound=True)],
        csidrivers=[csidriver("csidriver", True)],
        csinodes=[csinode("fake-node", [csi_driver_entry("csidriver", 1)])],
        initial_pods=[P("pod1").container("image").pvc("pvc1").node("fake-node").obj()],
        pods=[P("pod2").container("image").pvc("pvc2").obj()],
        trigger=lambda api: api.delete("Pod", "pod1", NS),
        requeued=["pod2"], bound=["pod2"],
    ),
    Entry(
        name="Pod rejected with PVC by the CSI NodeVolumeLimits plugin is requeued when the related PVC is added",
        plugins=["NodeVolumeLimits"],
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", csi={"driver": "csidriver", "volumeHandle": "volumehandle1"}),
             pv("pv2", access="ReadWriteMany", csi={"driver": "csidriver", "volumeHandle": "volumehandle2"})],
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True)],
        csidrivers=[csidriver("csidriver", True)],
        csinodes=[csinode("fake-node", [csi_driver_entry("csidriver", 1)])],
        initial_pods=[P("pod1").container("image").pvc("pvc1").node("fake-node").obj()],
        pods=[P("pod2").container("image").pvc("pvc2").obj()],
        trigger=lambda api: api.create(pvc("pvc2", volume_name="pv2", bound=True)),
        requeued=["pod2"], bound=[],
    ),
    Entry(
        name="Pod with PVC rejected the CSI NodeVolumeLimits plugin is requeued when the VolumeAttachment is deleted",
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", csi={"driver": "csidriver", "volumeHandle": "volumehandle"})],
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True, access="ReadWriteMany")],
        attachments=[volume_attachment("volumeattachment1", "test.storage.gke.io", "pv1")],
        csidrivers=[csidriver("csidriver", True)],
        csinodes=[csinode("fake-node", [csi_driver_entry("csidriver", 0)])],
        pods=[P("pod1").container("image").pvc("pvc1").obj()],
        trigger=lambda api: api.delete("VolumeAttachment", "volumeattachment1"),
        requeued=["pod1"], bound=[],
    ),
    Entry(
        name="Pod with Inline Migratable volume (AWSEBSDriver and GCEPDDriver) rejected the CSI NodeVolumeLimits plugin is requeued (only AWSEBSDriver) when the VolumeAttachment is deleted",
        nodes=[N("fake-node").label("node", "fake-node").obj()],
        pvs=[pv("pv1", access="ReadWriteMany", csi={"driver": "ebs.csi.aws.com", "volumeHandle": "volumehandle"}),
             pv("pv2", access="ReadWriteMany", csi={"driver": "pd.csi.storage.gke.io", "volumeHandle": "volumehandle"})],
        pvcs=[pvc("pvc1", volume_name="pv1", bound=True, access="ReadWriteMany"),
              pvc("pvc2", volume_name="pv2", bound=True, access="ReadWriteMany")],
        attachments=[volume_attachment("volumeattachment1", "ebs.csi.aws.com", "pv1"),
                     volume_attachment("volumeattachment2", "pd.csi.storage.gke.io", "pv2")],
        csinodes=[csinode("fake-node", [csi_driver_entry("ebs.csi.aws.com", 0),
                                        csi_driver_entry("pd.csi.storage.gke.io", 0)])],
        pods=[P("pod1").container("image").volume({"name": "vol1", "awsElasticBlockStore": {"volumeID": "pv1"}}).obj(),
              P("pod2").container("image").volume({"name": "vol2", "gcePersistentDisk": {"pdName": "pv2"}}).obj()],
        trigger=lambda api: api.delete("VolumeAttachment", "volumeattachment1"),
        requeued=["pod1"], bound=[],
    ),
]


# =============================================================================================
# RunTestCoreResourceEnqueue
# =============================================================================================
def _config(plugins: Optional[List[str]], zero_backoff: bool) -> Dict[str, Any]:
    cfg: Dict[str, Any] = {"podInitialBackoffSeconds": 0, "podMaxBackoffSeconds": 0} if zero_backoff else {}
    if plugins is not None:
        enabled = [{"name": "PrioritySort"}, {"name": "DefaultBinder"}] + [{"name": n} for n in plugins]
        cfg["profiles"] = [{"schedulerName": "default-scheduler",
                            "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}}}]
    return cfg


def run_entry(tt: Entry, zero_backoff: bool = True) -> Scheduler:
    """zero_backoff as upstream; otherwise the default 1s/10s backoff, under which a requeued pod
    that failed a moment ago (in virtual time) goes to backoffQ instead of activeQ."""
    registry = default_registry()
    features = resolve(tt.version, tt.gates or None)
    cfg = set_defaults(_config(tt.plugins, zero_backoff), registry, features)
    cluster = Cluster()
    api = Api(cluster)
    api.defaults.features = features
    for group in (tt.nodes, tt.csinodes, tt.capacities, tt.attachments, tt.csidrivers, tt.storage_classes,
                  tt.pvs, tt.pvcs, tt.initial_pods, tt.device_classes):
        for obj in group:
            api.create(obj, notify=False)
    sched = Scheduler(cfg, registry, cluster, features=features)
    sched.start()
    names = [p["metadata"]["name"] for p in tt.pods]
    for obj in tt.pods:
        api.create(obj)
    sched.run_until_quiet()

    # every pod was tried once and waits in the unschedulable pool
    q = sched.queue
    assert not q.pods_in_active() and not q.pods_in_backoff()
    pending = sorted(p.name for p in q.unschedulable_pods())
    assert pending == sorted(names), f"pods not pending after their first attempt: {pending}"

    tt.trigger(api)

    if zero_backoff:
        assert not q.pods_in_backoff()
        requeued = sorted(p.name for p in q.pods_in_active())
    else:
        assert not q.pods_in_active()
        requeued = sorted(p.name for p in q.pods_in_backoff())
    assert requeued == sorted(tt.requeued), (
        f"requeued {requeued}, want {sorted(tt.requeued)}; unschedulable plugins: "
        + str({pi.pod.name: sorted(pi.unschedulable_plugins | pi.pending_plugins)
               for pi in q.unschedulable.values()}))

    sched.run_until_quiet()
    if tt.bound is not None:
        got = sorted(p.name for p in cluster.list("Pod", NS) if p.node_name and p.name in names)
        assert got == sorted(tt.bound)
    return sched


@pytest.mark.parametrize("zero_backoff", [True, False], ids=["zero-backoff", "default-backoff"])
@pytest.mark.parametrize("tt", [pytest.param(e, id=e.name, marks=[pytest.mark.xfail(reason=e.xfail, strict=True)]
                                             if e.xfail else []) for e in ENTRIES])
def test_core_resource_enqueue(tt: Entry, zero_backoff: bool):
    run_entry(tt, zero_backoff)
