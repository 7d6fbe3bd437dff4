"""The objects a conformance check runs a plugin on: a cluster (nodes, bound pods, other objects)
and probe pods (pending pods the plugin is asked about). The default world exercises every in-tree
plugin a little; a plugin author passes a case file to use its `cluster` and `pods` instead."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


def _node(name: str, zone: str, cpu: str, labels: Optional[Dict[str, str]] = None,
          **spec: Any) -> Dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": zone, **(labels or {})}},
            "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "images": [{"names": ["registry.k8s.io/nginx:1.27"], "sizeBytes": 200000000}]}}


def _pod(name: str, cpu: str = "500m", labels: Optional[Dict[str, str]] = None, node: str = "",
         ports: Optional[List[Dict[str, Any]]] = None, **spec: Any) -> Dict[str, Any]:
    container: Dict[str, Any] = {"name": "c", "image": "registry.k8s.io/nginx:1.27",
                                 "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}
    if ports:
        container["ports"] = ports
    sp: Dict[str, Any] = {"containers": [container], **spec}
    if node:
        sp["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": dict(labels or {})}, "spec": sp}


def default_world() -> "World":
    """Three nodes (one tainted, one cordoned, two zones), two running pods, and probe pods that
    one plugin or another rejects: too big, a nodeSelector nobody matches, a host port in use,
    anti-affinity to a running pod, a zone spread, a scheduling gate, a toleration, a claim that
    only a zone-2 volume can satisfy (WaitForFirstConsumer)."""
    cluster = [
        _node("node-a", "zone-1", "4", {"disktype": "ssd"}),
        _node("node-b", "zone-2", "4", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
        _node("node-c", "zone-1", "2", unschedulable=True),
        _pod("web-0", "1", {"app": "web"}, node="node-a", ports=[{"containerPort": 80, "hostPort": 8080}]),
        _pod("db-0", "1", {"app": "db"}, node="node-b",
             tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]),
    ]
    cluster += [
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
         "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
        {"apiVersion": "v1", "kind": "PersistentVolume",
         "metadata": {"name": "pv-zone-2", "labels": {"topology.kubernetes.io/zone": "zone-2"}},
         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                  "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                      {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-2"]}]}]}}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                  "resources": {"requests": {"storage": "1Gi"}}}},
    ]
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    pods = [
        _pod("plain"),
        _pod("big", "3500m"),
        _pod("selector", nodeSelector={"disktype": "hdd"}),
        _pod("port", ports=[{"containerPort": 80, "hostPort": 8080}]),
        _pod("anti", labels={"app": "api"}, affinity=anti),
        _pod("spread", labels={"app": "web"}, topologySpreadConstraints=spread),
        _pod("gated", schedulingGates=[{"name": "example.com/wait"}]),
        _pod("tolerant", tolerations=[{"key": "dedicated", "operator": "Exists"}]),
        _pod("volume", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]),
    ]
    return World(cluster, pods, name="default world")


@dataclass
class World:
    """Manifests (plain dicts, as in a case) of the cluster and of the probe pods."""

    cluster: List[Dict[str, Any]]
    pods: List[Dict[str, Any]]
    name: str = "world"
    config: Any = None  # a case's config (only its pluginConfig args for the plugin are used)
    path: str = "conformance.yaml"
    extra_mutations: List["Mutation"] = field(default_factory=list)
    grown_by: List[str] = field(default_factory=list)  # what reach.reach added, as "node label k=v"

    def copy(self) -> "World":
        return World(copy.deepcopy(self.cluster), copy.deepcopy(self.pods), self.name, self.config,
                     self.path, list(self.extra_mutations), list(self.grown_by))

    @classmethod
    def from_case(cls, path: str) -> "World":
        from ..case.loader import load_case

        case = load_case(path)
        return cls(case.cluster, case.pods, name=f"case {case.name}", config=case.config, path=case.path)

    def bound_pods(self) -> List[Dict[str, Any]]:
        return [o for o in self.cluster if o.get("kind") == "Pod" and (o.get("spec") or {}).get("nodeName")]

    def nodes(self) -> List[Dict[str, Any]]:
        return [o for o in self.cluster if o.get("kind") == "Node"]


@dataclass
class Mutation:
    """One change of the world, as the API server would see it: `old` None is a create, `new`
    None a delete. `probe` True when it changes the probe pod itself (a pod update)."""

    label: str
    old: Optional[Dict[str, Any]]
    new: Optional[Dict[str, Any]]
    probe: bool = False


def _key(o: Dict[str, Any]):
    md = o.get("metadata") or {}
    return o.get("kind"), md.get("namespace") or "", md.get("name")


def apply(world: World, m: Mutation, probe_name: str) -> World:
    """The world after the mutation (the probe pod is replaced when `m.probe`)."""
    w = world.copy()
    if m.probe:
        w.pods = [copy.deepcopy(m.new) if p["metadata"]["name"] == probe_name else p for p in w.pods]
        return w
    if m.old is not None:
        w.cluster = [o for o in w.cluster if _key(o) != _key(m.old)]
    if m.new is not None:
        w.cluster.append(copy.deepcopy(m.new))
    return w


def mutations(world: World, probe: Dict[str, Any]) -> List[Mutation]:
    """Generic changes that may make a rejected pod schedulable: node updates (taints gone,
    uncordoned, twice the allocatable, the labels the probe selects), a new node, running pods
    deleted or relabelled, other objects deleted, and updates the API server allows on the probe
    pod itself (scheduling gates removed, a toleration of everything added)."""
    out: List[Mutation] = []
    selector = dict(((probe.get("spec") or {}).get("nodeSelector")) or {})
    for n in world.nodes():
        name = n["metadata"]["name"]
        spec = n.get("spec") or {}
        if spec.get("taints"):
            new = copy.deepcopy(n)
            new["spec"].pop("taints", None)
            out.append(Mutation(f"Node {name}: taints removed", n, new))
        if spec.get("unschedulable"):
            new = copy.deepcopy(n)
            new["spec"]["unschedulable"] = False
            out.append(Mutation(f"Node {name}: uncordoned", n, new))
        new = copy.deepcopy(n)
        alloc = new.setdefault("status", {}).setdefault("allocatable", {})
        for k in ("cpu", "memory", "pods"):
            if k in alloc:
                alloc[k] = _double(alloc[k])
        out.append(Mutation(f"Node {name}: allocatable doubled", n, new))
        if selector and any((n["metadata"].get("labels") or {}).get(k) != v for k, v in selector.items()):
            new = copy.deepcopy(n)
            new["metadata"].setdefault("labels", {}).update(selector)
            out.append(Mutation(f"Node {name}: labels {selector} added", n, new))
    nodes = world.nodes()
    if nodes:
        new = copy.deepcopy(nodes[0])
        new["metadata"]["name"] = "conformance-new-node"
        new["metadata"]["labels"] = {**(new["metadata"].get("labels") or {}), **selector,
                                     "kubernetes.io/hostname": "conformance-new-node"}
        new["spec"] = {}
        alloc = new.setdefault("status", {}).setdefault("allocatable", {})
        for k in ("cpu", "memory", "pods"):
            if k in alloc:
                alloc[k] = _double(alloc[k])
        out.append(Mutation("Node conformance-new-node added", None, new))
    for p in world.bound_pods():
        name = f"{p['metadata'].get('namespace') or 'default'}/{p['metadata']['name']}"
        out.append(Mutation(f"Pod {name} deleted", p, None))
        if p["metadata"].get("labels"):
            new = copy.deepcopy(p)
            new["metadata"]["labels"] = {}
            out.append(Mutation(f"Pod {name}: labels removed", p, new))
    for o in world.cluster:
        if o.get("kind") not in ("Node", "Pod", "PriorityClass", "Namespace"):
            md = o.get("metadata") or {}
            out.append(Mutation(f"{o.get('kind')} {md.get('name')} deleted", o, None))
    spec = probe.get("spec") or {}
    if spec.get("schedulingGates"):
        new = copy.deepcopy(probe)
        new["spec"]["schedulingGates"] = []
        out.append(Mutation("the pod's scheduling gates removed", probe, new, probe=True))
    new = copy.deepcopy(probe)
    new["spec"]["tolerations"] = list(spec.get("tolerations") or []) + [{"operator": "Exists"}]
    out.append(Mutation("the pod tolerates every taint", probe, new, probe=True))
    out.extend(world.extra_mutations)
    return out


def _double(q: Any) -> str:
    from ..api.quantity import parse_quantity

    v = parse_quantity(q) * 2
    if v.denominator == 1:
        return str(v.numerator)
    return f"{int(v * 1000)}m"
