"""Builders and fakes for the cache and event-handler tests (tests/scheduler/test_cache_upstream.py,
tests/scheduler/test_eventhandlers_upstream.py), modelled on kubernetes pkg/scheduler/testing's
st.MakePod / st.MakeNode wrappers and on the helpers of backend/cache/cache_test.go."""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional, Tuple

from harness.api.objects import Node, Pod
from harness.framework.types import ClusterEventWithHint, NodeInfo, PodInfo
from harness.scheduler.cache import Cache, ImageState
from harness.scheduler.scheduler import Scheduler

MB = 1024 * 1024


# ---------------------------------------------------------------------------------------------
# st.MakePod / st.MakeNode
# ---------------------------------------------------------------------------------------------
class PodWrapper:
    """st.PodWrapper: chainable, `.obj()` builds a harness Pod from the manifest."""

    def __init__(self) -> None:
        self.raw: Dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                                    "metadata": {"name": "", "namespace": ""},
                                    "spec": {"containers": []}, "status": {}}

    @property
    def md(self) -> Dict[str, Any]:
        return self.raw["metadata"]

    @property
    def spec(self) -> Dict[str, Any]:
        return self.raw["spec"]

    def name(self, n: str) -> "PodWrapper":
        self.md["name"] = n
        return self

    def namespace(self, ns: str) -> "PodWrapper":
        self.md["namespace"] = ns
        return self

    def uid(self, u: str) -> "PodWrapper":
        self.md["uid"] = u
        return self

    def resource_version(self, rv: str) -> "PodWrapper":
        self.md["resourceVersion"] = rv
        return self

    def label(self, k: str, v: str) -> "PodWrapper":
        self.md.setdefault("labels", {})[k] = v
        return self

    def labels(self, labels: Dict[str, str]) -> "PodWrapper":
        self.md.setdefault("labels", {}).update(labels)
        return self

    def annotation(self, k: str, v: str) -> "PodWrapper":
        self.md.setdefault("annotations", {})[k] = v
        return self

    def terminating(self) -> "PodWrapper":
        self.md["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        return self

    def node(self, n: str) -> "PodWrapper":
        self.spec["nodeName"] = n
        return self

    def scheduler_name(self, n: str) -> "PodWrapper":
        self.spec["schedulerName"] = n
        return self

    def priority(self, p: int) -> "PodWrapper":
        self.spec["priority"] = p
        return self

    def nominated_node_name(self, n: str) -> "PodWrapper":
        self.raw["status"]["nominatedNodeName"] = n
        return self

    def container(self, c: Dict[str, Any]) -> "PodWrapper":
        self.spec["containers"].append(c)
        return self

    def containers(self, cs: List[Dict[str, Any]]) -> "PodWrapper":
        self.spec["containers"] = list(cs)
        return self

    def req(self, requests: Dict[str, str]) -> "PodWrapper":
        """st.Req: one more container with these requests."""
        n = len(self.spec["containers"])
        return self.container({"name": f"con{n}", "image": "pause",
                               "resources": {"requests": dict(requests)}})

    def host_port(self, port: int) -> "PodWrapper":
        return self.container({"name": "container", "image": "pause",
                               "ports": [{"hostPort": port}]})

    def pvc(self, claim: str) -> "PodWrapper":
        self.spec.setdefault("volumes", []).append(
            {"name": claim, "persistentVolumeClaim": {"claimName": claim}})
        return self

    def toleration(self, key: str) -> "PodWrapper":
        self.spec.setdefault("tolerations", []).append({"key": key, "operator": "Exists",
                                                         "effect": "NoSchedule"})
        return self

    def scheduling_gates(self, gates: List[str]) -> "PodWrapper":
        self.spec["schedulingGates"] = [{"name": g} for g in gates]
        return self

    def pod_affinity(self, topology_key: str, selector: Dict[str, Any], anti: bool = False) -> "PodWrapper":
        """st.PodAffinity / PodAntiAffinity with PodAffinityWithRequiredReq."""
        kind = "podAntiAffinity" if anti else "podAffinity"
        aff = self.spec.setdefault("affinity", {}).setdefault(kind, {})
        aff.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(
            {"labelSelector": selector, "topologyKey": topology_key})
        return self

    def pod_affinity_exists(self, label_key: str, topology_key: str) -> "PodWrapper":
        return self.pod_affinity(topology_key, {"matchExpressions": [{"key": label_key, "operator": "Exists"}]})

    def resource_claim_statuses(self, *statuses: Dict[str, Any]) -> "PodWrapper":
        self.raw["status"]["resourceClaimStatuses"] = list(statuses)
        return self

    def extended_resource_claim_status(self, status: Dict[str, Any]) -> "PodWrapper":
        self.raw["status"]["extendedResourceClaimStatus"] = status
        return self

    def obj(self) -> Pod:
        return Pod(copy.deepcopy(self.raw))


def make_pod() -> PodWrapper:
    return PodWrapper()


class NodeWrapper:
    def __init__(self) -> None:
        self.raw: Dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": ""},
                                    "spec": {}, "status": {}}

    def name(self, n: str) -> "NodeWrapper":
        self.raw["metadata"]["name"] = n
        return self

    def label(self, k: str, v: str) -> "NodeWrapper":
        self.raw["metadata"].setdefault("labels", {})[k] = v
        return self

    def labels(self, labels: Dict[str, str]) -> "NodeWrapper":
        self.raw["metadata"].setdefault("labels", {}).update(labels)
        return self

    def annotation(self, k: str, v: str) -> "NodeWrapper":
        self.raw["metadata"].setdefault("annotations", {})[k] = v
        return self

    def capacity(self, resources: Dict[str, str]) -> "NodeWrapper":
        """st.Capacity: capacity and allocatable."""
        self.raw["status"]["capacity"] = dict(resources)
        self.raw["status"]["allocatable"] = dict(resources)
        return self

    def allocatable(self, resources: Dict[str, str]) -> "NodeWrapper":
        self.raw["status"]["allocatable"] = dict(resources)
        return self

    def taints(self, taints: List[Dict[str, Any]]) -> "NodeWrapper":
        self.raw["spec"]["taints"] = [dict(t) for t in taints]
        return self

    def unschedulable(self, u: bool) -> "NodeWrapper":
        self.raw["spec"]["unschedulable"] = u
        return self

    def images(self, images: Dict[str, int]) -> "NodeWrapper":
        """st.Images: one ContainerImage per name."""
        self.raw["status"]["images"] = [{"names": [n], "sizeBytes": s} for n, s in images.items()]
        return self

    def condition(self, typ: str, status: str, reason: str = "", message: str = "") -> "NodeWrapper":
        self.raw["status"].setdefault("conditions", []).append(
            {"type": typ, "status": status, "reason": reason, "message": message})
        return self

    def obj(self) -> Node:
        return Node(copy.deepcopy(self.raw))


def make_node() -> NodeWrapper:
    return NodeWrapper()


def make_base_pod(node_name: str, obj_name: str, cpu: str, mem: str, extended: str,
                  ports: List[Dict[str, Any]]) -> Pod:
    """cache_test.go makeBasePod."""
    req: Dict[str, str] = {}
    if cpu:
        req["cpu"] = cpu
        req["memory"] = mem
        if extended:
            k, v = extended.split(":")
            req[k] = v
    container = {"name": "container", "image": "pause", "resources": {"requests": req},
                 "ports": [dict(p) for p in ports]}
    return (make_pod().name(obj_name).namespace("node_info_cache_test").uid(obj_name)
            .node(node_name).containers([container]).obj())


# ---------------------------------------------------------------------------------------------
# NodeInfo comparison (cmp.Diff without the generation)
# ---------------------------------------------------------------------------------------------
def resource_tuple(r) -> Tuple:
    return (r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number,
            tuple(sorted((k, v) for k, v in r.scalar_resources.items())))


def ports_of(ni: NodeInfo) -> Dict[str, set]:
    return {ip: set(s) for ip, s in ni.used_ports.items() if s}


def image_states_of(ni: NodeInfo) -> Dict[str, Tuple[int, int]]:
    return {name: (s.size, s.num_nodes) for name, s in ni.image_states.items()}


def node_info_summary(ni: Optional[NodeInfo]) -> Optional[Dict[str, Any]]:
    if ni is None:
        return None
    return {
        "node": ni.node.name if ni.node is not None else None,
        "pods": [pi.pod.uid for pi in ni.pods],
        "pods_with_affinity": [pi.pod.uid for pi in ni.pods_with_affinity],
        "pods_with_required_anti_affinity": [pi.pod.uid for pi in ni.pods_with_required_anti_affinity],
        "requested": resource_tuple(ni.requested),
        "non_zero_requested": resource_tuple(ni.non_zero_requested),
        "allocatable": resource_tuple(ni.allocatable),
        "used_ports": ports_of(ni),
        "image_states": image_states_of(ni),
        "pvc_ref_counts": dict(ni.pvc_ref_counts),
    }


def expected_node_info(requested: Dict[str, Any], non_zero: Dict[str, Any], pods: List[Pod],
                       ports: List[Tuple[str, str, int]], node: Optional[Node] = None,
                       image_states: Optional[Dict[str, Tuple[int, int]]] = None) -> Dict[str, Any]:
    """newNodeInfo(requested, nonzero, pods, usedPorts, imageStates) as a summary."""
    want = node_info_summary(NodeInfo(*pods))
    want["node"] = node.name if node is not None else None

    def res(d):
        return (d.get("milli_cpu", 0), d.get("memory", 0), d.get("ephemeral_storage", 0), 0,
                tuple(sorted((d.get("scalar") or {}).items())))

    want["requested"] = res(requested)
    want["non_zero_requested"] = res(non_zero)
    used: Dict[str, set] = {}
    for protocol, ip, port in ports:
        used.setdefault(ip, set()).add((protocol, port))
    want["used_ports"] = used
    want["image_states"] = dict(image_states or {})
    return want


# ---------------------------------------------------------------------------------------------
# Event handlers: a scheduler with a real cache and a recording queue
# ---------------------------------------------------------------------------------------------
class RecordingQueue:
    """The SchedulingQueue calls the event handlers make, recorded in order."""

    def __init__(self, hint_rows: Optional[List[Tuple[Any, str, Optional[Callable]]]] = None,
                 profile: str = "default-scheduler", on_move: Optional[Callable] = None):
        self.calls: List[Tuple] = []
        self.queued: Dict[str, Pod] = {}
        self.hint_map = {profile: list(hint_rows or [])}
        self.on_move = on_move

    def add(self, pod: Pod) -> None:
        self.calls.append(("add", pod.key))
        self.queued[pod.uid] = pod

    def update(self, old: Pod, new: Pod) -> None:
        self.calls.append(("update", new.key))
        if new.uid in self.queued:
            self.queued[new.uid] = new

    def delete(self, pod: Pod) -> None:
        self.calls.append(("delete", pod.key))
        self.queued.pop(pod.uid, None)

    def move_all_to_active_or_backoff(self, event, old, new, pre_check=None) -> None:
        self.calls.append(("move", event, old, new, pre_check))
        if self.on_move is not None:
            self.on_move(event, old, new, pre_check)

    def moves(self) -> List[Tuple]:
        return [c[1:] for c in self.calls if c[0] == "move"]


class FakeFramework:
    """The parts of a profile's Framework the queue and the event handlers use."""

    def __init__(self, events: Optional[List[Tuple[str, List[ClusterEventWithHint]]]] = None,
                 waiting: Optional[set] = None):
        self.enqueue_extensions = list(events or [])
        self.waiting = set(waiting or ())
        self.rejected: List[str] = []
        self.waiting_pods: Dict[str, Any] = {}

    @staticmethod
    def less(a, b) -> bool:
        """PrioritySort."""
        pa, pb = a.pod.priority, b.pod.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)

    def run_pre_enqueue_plugins(self, pod):
        return None

    def reject_waiting_pod(self, uid: str) -> bool:
        if uid in self.waiting:
            self.waiting.discard(uid)
            self.rejected.append(uid)
            return True
        return False


def handler_scheduler(queue, profiles: Optional[Dict[str, Any]] = None, cache: Optional[Cache] = None) -> Scheduler:
    """A Scheduler with only what its event handlers touch: the cache, the queue, the profiles."""
    s = Scheduler.__new__(Scheduler)
    s.cache = cache if cache is not None else Cache()
    s.queue = queue
    s.profiles = profiles if profiles is not None else {"default-scheduler": FakeFramework()}
    from harness.versions import DEFAULT
    s.features = DEFAULT
    return s


def pod_info(pod: Pod) -> PodInfo:
    return PodInfo.of(pod)


__all__ = ["MB", "make_pod", "make_node", "make_base_pod", "node_info_summary", "expected_node_info",
           "RecordingQueue", "FakeFramework", "handler_scheduler", "ImageState"]
