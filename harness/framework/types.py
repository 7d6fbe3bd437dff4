"""NodeInfo, PodInfo, Resource and the other framework types
(pkg/scheduler/framework/types.go and k8s.io/kube-scheduler/framework/types.go). The results of
the extension points (interface.go's PreFilterResult, NodeScore, NodeToStatus..., with
Diagnosis and FitError) are in results.py, imported here for their users."""

from __future__ import annotations

import enum
from fractions import Fraction
import itertools
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple

from ..api import labels as labelsel
from ..api.objects import Node, Pod
from ..api.pod_resources import (DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST,
                                 is_pod_level_requests_set, is_scalar_resource_name, pod_requests,
                                 status_resources_spec)
from ..api.quantity import parse_quantity
# results.py's types: their users import them from here too (their home before the split)
from .results import (Diagnosis, FitError, NodePluginScores, NodeScore, NodeScoreColumns, NodeToStatus,  # noqa: F401
                      PostFilterResult, PreFilterResult)

_generation = itertools.count(1)


def next_generation() -> int:
    return next(_generation)


def _ceil(f) -> int:
    f = parse_quantity(f) if isinstance(f, str) else f
    return -((-f.numerator) // f.denominator) if hasattr(f, "numerator") else int(f)


# ---------------------------------------------------------------------------------------------
# Resource
# ---------------------------------------------------------------------------------------------
class Resource:
    """framework.Resource: milli-CPU, bytes of memory and ephemeral storage, pod count, scalars."""

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "allowed_pod_number", "scalar_resources")

    def __init__(self, milli_cpu: int = 0, memory: int = 0, ephemeral_storage: int = 0,
                 allowed_pod_number: int = 0, scalar_resources: Optional[Dict[str, int]] = None):
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar_resources: Dict[str, int] = scalar_resources if scalar_resources is not None else {}

    @classmethod
    def from_list(cls, rl: Optional[Mapping[str, Any]]) -> "Resource":
        """NewResource(rl)."""
        r = cls()
        r.add(rl)
        return r

    def add(self, rl: Optional[Mapping[str, Any]]) -> None:
        """Resource.Add: quantities may be strings or Fractions."""
        for name, q in (rl or {}).items():
            q = parse_quantity(q) if not hasattr(q, "numerator") else q
            if name == "cpu":
                self.milli_cpu += _ceil(q * 1000)
            elif name == "memory":
                self.memory += _ceil(q)
            elif name == "pods":
                self.allowed_pod_number += _ceil(q)
            elif name == "ephemeral-storage":
                self.ephemeral_storage += _ceil(q)
            elif is_scalar_resource_name(name):
                self.scalar_resources[name] = self.scalar_resources.get(name, 0) + _ceil(q)

    def set_max_resource(self, rl: Optional[Mapping[str, Any]]) -> None:
        for name, q in (rl or {}).items():
            q = parse_quantity(q) if not hasattr(q, "numerator") else q
            if name == "memory":
                self.memory = max(self.memory, _ceil(q))
            elif name == "cpu":
                self.milli_cpu = max(self.milli_cpu, _ceil(q * 1000))
            elif name == "ephemeral-storage":
                self.ephemeral_storage = max(self.ephemeral_storage, _ceil(q))
            elif is_scalar_resource_name(name):
                self.scalar_resources[name] = max(self.scalar_resources.get(name, 0), _ceil(q))

    def clone(self) -> "Resource":
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage,
                        self.allowed_pod_number, dict(self.scalar_resources))

    def add_scalar(self, name: str, quantity: int) -> None:
        self.scalar_resources[name] = self.scalar_resources.get(name, 0) + quantity

    def set_scalar(self, name: str, quantity: int) -> None:
        self.scalar_resources[name] = quantity

    def __repr__(self) -> str:
        return (f"Resource(milli_cpu={self.milli_cpu}, memory={self.memory}, "
                f"ephemeral_storage={self.ephemeral_storage}, pods={self.allowed_pod_number}, "
                f"scalars={self.scalar_resources})")


@dataclass
class PodResource:
    """fwk.PodResource: the pod's requests and the non-zero cpu/memory used for scoring."""

    resource: Resource
    non0_cpu: int
    non0_mem: int


def calculate_resource(pod: Pod, pod_level_resize: bool = True) -> PodResource:
    """PodInfo.CalculateResource (memoized on the pod). `pod_level_resize` is
    InPlacePodLevelResourcesVerticalScaling (beta, on from v1.36): the pod-level requests of a
    pod whose ``status.resources`` is set count as max(spec, actuated, allocated). Upstream reads
    the process's gate here; NodeInfo keeps the default, the harness's API server having dropped
    ``status.resources`` and ``status.allocatedResources`` with the gate off
    (dropDisabledPodStatusFields), so a pod carries them only where the gate is on."""

    def compute(p: Pod) -> PodResource:
        spec = status_resources_spec(p, pod_level_resize)  # UseStatusResources
        requests = pod_requests(spec)
        level_set = is_pod_level_requests_set(spec)
        if not level_set:
            non_missing = {"cpu": Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000), "memory": parse_quantity(DEFAULT_MEMORY_REQUEST)}
        else:
            non_missing = {}
            if "cpu" not in requests:
                non_missing["cpu"] = Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000)
            if "memory" not in requests:
                non_missing["memory"] = parse_quantity(DEFAULT_MEMORY_REQUEST)
        non0 = pod_requests(spec, non_missing=non_missing) if non_missing else requests
        res = Resource.from_list(requests)
        return PodResource(res, _ceil(non0.get("cpu", 0) * 1000) if "cpu" in non0 else 0,
                           _ceil(non0["memory"]) if "memory" in non0 else 0)

    return pod.resource_memo("calculate_resource:%d" % pod_level_resize, compute)


# ---------------------------------------------------------------------------------------------
# Affinity terms and PodInfo
# ---------------------------------------------------------------------------------------------
class AffinityTerm:
    """fwk.AffinityTerm: a pod (anti-)affinity term with its selectors parsed."""

    __slots__ = ("namespaces", "selector", "topology_key", "namespace_selector")

    def __init__(self, namespaces: FrozenSet[str], selector: labelsel.Selector, topology_key: str,
                 namespace_selector: labelsel.Selector):
        self.namespaces = namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.namespace_selector = namespace_selector

    def matches(self, pod: Pod, ns_labels: Optional[Mapping[str, str]]) -> bool:
        """AffinityTerm.Matches."""
        if pod.namespace in self.namespaces or self.namespace_selector.matches(ns_labels):
            return self.selector.matches(pod.labels)
        return False


@dataclass
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


def _new_affinity_term(pod: Pod, term: Mapping) -> AffinityTerm:
    """newAffinityTerm, with getNamespacesFromPodAffinityTerm."""
    selector = labelsel.from_label_selector(term.get("labelSelector"))
    nss = term.get("namespaces") or []
    if not nss and term.get("namespaceSelector") is None:
        namespaces = frozenset([pod.namespace])
    else:
        namespaces = frozenset(nss)
    ns_selector = labelsel.from_label_selector(term.get("namespaceSelector"))
    return AffinityTerm(namespaces, selector, term.get("topologyKey", ""), ns_selector)


def get_affinity_terms(pod: Pod, terms: Optional[List[Mapping]]) -> List[AffinityTerm]:
    return [_new_affinity_term(pod, t) for t in (terms or [])]


def _weighted_terms(pod: Pod, terms: Optional[List[Mapping]]) -> List[WeightedAffinityTerm]:
    return [WeightedAffinityTerm(_new_affinity_term(pod, t.get("podAffinityTerm") or {}),
                                 int(t.get("weight", 0))) for t in (terms or [])]


class PodInfo:
    """framework.PodInfo: the pod with its affinity terms parsed once."""

    __slots__ = ("pod", "required_affinity_terms", "required_anti_affinity_terms",
                 "preferred_affinity_terms", "preferred_anti_affinity_terms", "parse_error")

    def __init__(self, pod: Pod):
        self.pod = pod
        self.parse_error: Optional[str] = None
        aff = pod.affinity
        pa = aff.get("podAffinity") or {}
        paa = aff.get("podAntiAffinity") or {}
        if not pa and not paa:  # (most pods: no terms to parse)
            self.required_affinity_terms = []
            self.required_anti_affinity_terms = []
            self.preferred_affinity_terms = []
            self.preferred_anti_affinity_terms = []
            return
        try:
            self.required_affinity_terms = get_affinity_terms(
                pod, pa.get("requiredDuringSchedulingIgnoredDuringExecution"))
            self.required_anti_affinity_terms = get_affinity_terms(
                pod, paa.get("requiredDuringSchedulingIgnoredDuringExecution"))
            self.preferred_affinity_terms = _weighted_terms(
                pod, pa.get("preferredDuringSchedulingIgnoredDuringExecution"))
            self.preferred_anti_affinity_terms = _weighted_terms(
                pod, paa.get("preferredDuringSchedulingIgnoredDuringExecution"))
        except labelsel.SelectorError as e:
            self.parse_error = str(e)
            self.required_affinity_terms = []
            self.required_anti_affinity_terms = []
            self.preferred_affinity_terms = []
            self.preferred_anti_affinity_terms = []

    def calculate_resource(self) -> PodResource:
        return calculate_resource(self.pod)

    @classmethod
    def of(cls, pod: Pod) -> "PodInfo":
        pi = pod.pod_info
        if pi is None:
            pi = pod.pod_info = cls(pod)
        return pi

    def __repr__(self) -> str:
        return f"PodInfo({self.pod.key})"


def _pod_with_affinity(pod: Pod) -> bool:
    aff = pod.affinity
    return bool(aff.get("podAffinity") or aff.get("podAntiAffinity"))


def _pod_with_required_anti_affinity(pod: Pod) -> bool:
    paa = pod.affinity.get("podAntiAffinity") or {}
    return bool(paa.get("requiredDuringSchedulingIgnoredDuringExecution"))


# ---------------------------------------------------------------------------------------------
# Host ports and images
# ---------------------------------------------------------------------------------------------
DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


class HostPortInfo(dict):
    """fwk.HostPortInfo: ip -> set of (protocol, port)."""

    @staticmethod
    def _sanitize(ip: str, protocol: str) -> Tuple[str, str]:
        return (ip or DEFAULT_BIND_ALL_HOST_IP, protocol or "TCP")

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        self.setdefault(ip, set()).add((protocol, port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = self._sanitize(ip, protocol)
        s = self.get(ip)
        if s is not None:
            s.discard((protocol, port))
            if not s:
                del self[ip]

    def length(self) -> int:
        return sum(len(s) for s in self.values())

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        if port <= 0:
            return False
        ip, protocol = self._sanitize(ip, protocol)
        pp = (protocol, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in s for s in self.values())
        for key in (DEFAULT_BIND_ALL_HOST_IP, ip):
            s = self.get(key)
            if s is not None and pp in s:
                return True
        return False

    def clone(self) -> "HostPortInfo":
        h = HostPortInfo()
        for k, v in self.items():
            h[k] = set(v)
        return h


def get_host_ports(pod: Pod) -> List[Dict[str, Any]]:
    """schedutil.GetHostPorts: container ports with hostPort > 0 (containers, then sidecars)."""

    def compute(p: Pod):
        ports = []
        for c in p.containers:
            for port in c.get("ports") or []:
                if int(port.get("hostPort") or 0) > 0:
                    ports.append(port)
        for c in p.init_containers:
            if c.get("restartPolicy") != "Always":
                continue
            for port in c.get("ports") or []:
                if int(port.get("hostPort") or 0) > 0:
                    ports.append(port)
        return ports

    return pod.memo("host_ports", compute)


@dataclass
class ImageStateSummary:
    """fwk.ImageStateSummary: an image's size and on how many nodes it is."""

    size: int
    num_nodes: int


# ---------------------------------------------------------------------------------------------
# NodeInfo
# ---------------------------------------------------------------------------------------------
def _remove_from_slice(lst: List["PodInfo"], uid: str) -> Optional["PodInfo"]:
    """removeFromSlice: the first pod with this UID goes; the last element takes its place."""
    for i, pi in enumerate(lst):
        if pi.pod.uid == uid:
            lst[i] = lst[-1]
            lst.pop()
            return pi
    return None


# A pod list shorter than this is walked (as removeFromSlice does) rather than indexed.
_INDEX_MIN = 32


class _SliceIndex:
    """Where each pod of one of NodeInfo's pod lists is (uid -> position), so that RemovePod
    finds it without walking the list (a node with 20000 pods walked them on every assume and
    confirm). It describes one list object (`lst`) and is kept in step by NodeInfo's add and
    remove; removal is removeFromSlice's own swap (the last element into the removed one's
    place), so the list's order is upstream's. It is given up (the walk again) when a UID shows
    up twice, since removeFromSlice removes the first of them."""

    __slots__ = ("lst", "pos")

    def __init__(self, lst: List["PodInfo"]):
        self.lst = lst
        pos: Dict[str, int] = {}
        for i, pi in enumerate(lst):
            pos.setdefault(pi.pod.uid, i)
        self.pos = pos

    @classmethod
    def of(cls, lst: List["PodInfo"]) -> Optional["_SliceIndex"]:
        ix = cls(lst)
        return ix if len(ix.pos) == len(lst) else None

    def valid_for(self, lst: List["PodInfo"]) -> bool:
        return self.lst is lst and len(self.pos) == len(lst)

    def remove(self, uid: str) -> Optional["PodInfo"]:
        """removeFromSlice through the index: the removed pod, or None when the index cannot
        say (the pod is not there, an error upstream, or the list changed behind it)."""
        lst = self.lst
        i = self.pos.get(uid)
        if i is None or i >= len(lst) or lst[i].pod.uid != uid:
            return None
        del self.pos[uid]
        pi = lst[i]
        last = lst.pop()
        if i < len(lst):
            lst[i] = last
            self.pos[last.pod.uid] = i
        return pi


class NodeInfo:
    """framework.NodeInfo: a node and the pods on it, with their aggregated requests."""

    __slots__ = ("node", "pods", "pods_with_affinity", "pods_with_required_anti_affinity",
                 "used_ports", "requested", "non_zero_requested", "allocatable", "image_states",
                 "pvc_ref_counts", "generation", "_indexes", "__weakref__")

    def __init__(self, *pods: Pod):
        self.node: Optional[Node] = None
        self.pods: List[PodInfo] = []
        self.pods_with_affinity: List[PodInfo] = []
        self.pods_with_required_anti_affinity: List[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: Dict[str, ImageStateSummary] = {}
        self.pvc_ref_counts: Dict[str, int] = {}
        self.generation = next_generation()
        # _SliceIndex (or None) of pods, pods_with_affinity, pods_with_required_anti_affinity
        self._indexes: List[Optional[_SliceIndex]] = [None, None, None]
        for p in pods:
            self.add_pod(p)

    @property
    def name(self) -> str:
        return self.node.name if self.node is not None else ""

    def set_node(self, node: Node) -> None:
        self.node = node
        self.allocatable = Resource.from_list(node.allocatable)
        self.generation = next_generation()

    def remove_node(self) -> None:
        self.node = None
        self.generation = next_generation()

    def add_pod(self, pod: Pod) -> None:
        self.add_pod_info(PodInfo.of(pod))

    def add_pod_info(self, pi: PodInfo) -> None:
        self._append(0, self.pods, pi)
        if _pod_with_affinity(pi.pod):
            self._append(1, self.pods_with_affinity, pi)
        if _pod_with_required_anti_affinity(pi.pod):
            self._append(2, self.pods_with_required_anti_affinity, pi)
        self._update(pi, 1)

    def _append(self, which: int, lst: List[PodInfo], pi: PodInfo) -> None:
        lst.append(pi)
        ix = self._indexes[which]
        if ix is not None:
            uid = pi.pod.uid
            if ix.lst is lst and uid not in ix.pos:
                ix.pos[uid] = len(lst) - 1
            else:
                self._indexes[which] = None

    def _remove(self, which: int, lst: List[PodInfo], uid: str) -> Optional[PodInfo]:
        """removeFromSlice on one of the pod lists, through its index when it is long."""
        if len(lst) < _INDEX_MIN:
            self._indexes[which] = None
            return _remove_from_slice(lst, uid)
        ix = self._indexes[which]
        if ix is None or not ix.valid_for(lst):
            ix = self._indexes[which] = _SliceIndex.of(lst)
            if ix is None:
                return _remove_from_slice(lst, uid)
        removed = ix.remove(uid)
        if removed is None:
            self._indexes[which] = None
            return _remove_from_slice(lst, uid)
        return removed

    def remove_pod(self, pod: Pod) -> None:
        """NodeInfo.RemovePod: by UID; as removeFromSlice, the last pod takes the removed one's
        place in each list."""
        uid = pod.uid
        if self.pods_with_affinity:
            self._remove(1, self.pods_with_affinity, uid)
        if self.pods_with_required_anti_affinity:
            self._remove(2, self.pods_with_required_anti_affinity, uid)
        removed = self._remove(0, self.pods, uid)
        if removed is None:
            raise KeyError(f"no corresponding pod {pod.name} in pods of node {self.name}")
        self._update(removed, -1)

    def _update(self, pi: PodInfo, sign: int) -> None:
        pr = pi.calculate_resource()
        r = self.requested
        r.milli_cpu += sign * pr.resource.milli_cpu
        r.memory += sign * pr.resource.memory
        r.ephemeral_storage += sign * pr.resource.ephemeral_storage
        for name, q in pr.resource.scalar_resources.items():
            r.scalar_resources[name] = r.scalar_resources.get(name, 0) + sign * q
        self.non_zero_requested.milli_cpu += sign * pr.non0_cpu
        self.non_zero_requested.memory += sign * pr.non0_mem
        for port in get_host_ports(pi.pod):
            args = (port.get("hostIP") or "", port.get("protocol") or "", int(port.get("hostPort") or 0))
            if sign > 0:
                self.used_ports.add(*args)
            else:
                self.used_ports.remove(*args)
        for v in pi.pod.volumes:
            pvc = v.get("persistentVolumeClaim")
            if not pvc:
                continue
            key = f"{pi.pod.namespace}/{pvc.get('claimName', '')}"
            if sign > 0:
                self.pvc_ref_counts[key] = self.pvc_ref_counts.get(key, 0) + 1
            else:
                n = self.pvc_ref_counts.get(key, 0) - 1
                if n <= 0:
                    self.pvc_ref_counts.pop(key, None)
                else:
                    self.pvc_ref_counts[key] = n
        self.generation = next_generation()

    def snapshot(self) -> "NodeInfo":
        """NodeInfo.Snapshot: a copy whose pod lists and aggregates can change independently."""
        c = NodeInfo.__new__(NodeInfo)
        self.snapshot_into(c)
        return c

    def snapshot_into(self, c: "NodeInfo") -> None:
        """snapshot()'s copy written into the NodeInfo `c` (the scheduler cache's snapshot keeps
        its own objects, which its lists point to)."""
        c.node = self.node
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.allocatable = self.allocatable.clone()
        c.image_states = dict(self.image_states)
        c.pvc_ref_counts = dict(self.pvc_ref_counts)
        c.generation = self.generation
        c._indexes = [None, None, None]  # built again if the copy has pods removed

    clone = snapshot

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={[p.pod.key for p in self.pods]})"


# ---------------------------------------------------------------------------------------------
# Events and queueing hints
# ---------------------------------------------------------------------------------------------
class ActionType(enum.IntFlag):
    """fwk.ActionType."""

    NONE = 0
    Add = 1 << 0
    Delete = 1 << 1
    UpdateNodeAllocatable = 1 << 2
    UpdateNodeLabel = 1 << 3
    UpdateNodeTaint = 1 << 4
    UpdateNodeCondition = 1 << 5
    UpdateNodeAnnotation = 1 << 6
    # v1.35 on (only NodeDeclaredFeatures' events use it; inserted here upstream, so the pod
    # actions' values moved up one bit, which keeps their order)
    UpdateNodeDeclaredFeature = 1 << 7
    UpdatePodLabel = 1 << 8
    UpdatePodScaleDown = 1 << 9
    UpdatePodToleration = 1 << 10
    UpdatePodSchedulingGatesEliminated = 1 << 11
    UpdatePodGeneratedResourceClaim = 1 << 12
    All = (1 << 13) - 1
    Update = ((1 << 13) - 1) & ~3


class EventResource(str, enum.Enum):
    """fwk.EventResource."""

    Pod = "Pod"
    AssignedPod = "AssignedPod"
    UnscheduledPod = "UnscheduledPod"
    Node = "Node"
    PersistentVolume = "PersistentVolume"
    PersistentVolumeClaim = "PersistentVolumeClaim"
    CSINode = "storage.k8s.io/CSINode"
    CSIDriver = "storage.k8s.io/CSIDriver"
    VolumeAttachment = "storage.k8s.io/VolumeAttachment"
    CSIStorageCapacity = "storage.k8s.io/CSIStorageCapacity"
    StorageClass = "storage.k8s.io/StorageClass"
    ResourceClaim = "resource.k8s.io/ResourceClaim"
    ResourceSlice = "resource.k8s.io/ResourceSlice"
    DeviceClass = "resource.k8s.io/DeviceClass"
    Workload = "scheduling.k8s.io/Workload"  # v1.35
    PodGroup = "scheduling.k8s.io/PodGroup"  # v1.36
    WildCard = "*"


class QueueingHint(enum.IntEnum):
    QueueSkip = 0
    Queue = 1


@dataclass(frozen=True)
class ClusterEvent:
    """fwk.ClusterEvent: a resource and the actions on it. A custom resource is its GVK string,
    `<plural>.<version>.<group>` (e.g. "podgroups.v1alpha1.scheduling.x-k8s.io"), as upstream."""

    resource: EventResource
    action_type: ActionType
    custom_label: str = ""

    def label(self) -> str:
        return self.custom_label or f"{getattr(self.resource, 'value', self.resource)}{self.action_type.name}"

    def is_wildcard(self) -> bool:
        return self.resource == EventResource.WildCard and self.action_type == ActionType.All

    def match(self, incoming: "ClusterEvent") -> bool:
        """MatchClusterEvents: does a registered event (self) cover the incoming one? The
        resources match (Pod covers AssignedPod and UnscheduledPod), the actions overlap and the
        incoming action is not numerically greater than the registered one, as upstream."""
        if self.is_wildcard():
            return True
        r, inc = self.resource, incoming.resource
        if not (r == EventResource.WildCard or r == inc
                or (r == EventResource.Pod and inc in (EventResource.AssignedPod, EventResource.UnscheduledPod))):
            return False
        return bool(self.action_type & incoming.action_type) and int(incoming.action_type) <= int(self.action_type)


QueueingHintFn = Callable[[Pod, Any, Any], QueueingHint]


@dataclass
class ClusterEventWithHint:
    """fwk.ClusterEventWithHint: an event a plugin registers and, optionally, its hint function
    `(pod, old_obj, new_obj) -> QueueingHint`."""

    event: ClusterEvent
    queueing_hint_fn: Optional[QueueingHintFn] = None


class QueuedPodInfo:
    """framework.QueuedPodInfo: a pod in the scheduling queue with its queueing bookkeeping.
    Times are virtual seconds."""

    __slots__ = ("pod_info", "timestamp", "attempts", "backoff_expiration", "unschedulable_count",
                 "consecutive_errors_count", "initial_attempt_timestamp", "unschedulable_plugins",
                 "pending_plugins", "gating_plugin", "gating_plugin_events", "seq", "requeue_event")

    def __init__(self, pod_info: PodInfo, timestamp: float, seq: int = 0):
        self.pod_info = pod_info
        self.timestamp = timestamp
        self.attempts = 0
        self.backoff_expiration: Optional[float] = None
        self.unschedulable_count = 0
        self.consecutive_errors_count = 0
        self.initial_attempt_timestamp: Optional[float] = None
        self.unschedulable_plugins: Set[str] = set()
        self.pending_plugins: Set[str] = set()
        self.gating_plugin = ""
        self.gating_plugin_events: List[ClusterEvent] = []
        self.seq = seq  # creation order, breaks exact timestamp ties deterministically
        self.requeue_event = ""  # label of the event that last moved it to activeQ/backoffQ

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod

    def gated(self) -> bool:
        return bool(self.gating_plugin)

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pod.key}, attempts={self.attempts})"
