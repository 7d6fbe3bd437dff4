"""Fakes for the scheduling queue tests (tests/scheduler/test_queue_upstream.py): a framework with
only what SchedulingQueue reads (`less`, `run_pre_enqueue_plugins`, `enqueue_extensions`), the
PreEnqueue plugin and hint functions of upstream's scheduling_queue_test.go, and pods built like
its st.MakePod() fixtures."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from harness.api.objects import Pod
from harness.framework.status import Code, Status
from harness.framework.types import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                                     QueuedPodInfo, QueueingHint)
from harness.scheduler.queue import SchedulingQueue
from harness.scheduler.scheduler import VirtualClock

PROFILE = "default-scheduler"

LOW, MID, HIGH = 0, 100, 1000
MEDIUM = (LOW + HIGH) // 2

NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)
PV_ADD = ClusterEvent(EventResource.PersistentVolume, ActionType.Add)
PV_UPDATE = ClusterEvent(EventResource.PersistentVolume, ActionType.Update)
PVC_ADD = ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add)
CSI_NODE_UPDATE = ClusterEvent(EventResource.CSINode, ActionType.Update)


def priority_sort_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """PrioritySort.Less (builtin_plugins/queuesort.py)."""
    p1, p2 = a.pod.priority, b.pod.priority
    return p1 > p2 or (p1 == p2 and (a.timestamp, a.seq) < (b.timestamp, b.seq))


# ---------------------------------------------------------------------------------------------
# hint functions (queueHintReturnQueue, queueHintReturnSkip, and one returning an error)
# ---------------------------------------------------------------------------------------------
def hint_queue(pod, old, new):
    return QueueingHint.Queue


def hint_skip(pod, old, new):
    return QueueingHint.QueueSkip


def hint_err(pod, old, new):
    raise RuntimeError("unexpected error")


class CountingHints:
    """Hint functions that count their calls (Test_isPodWorthRequeuing)."""

    def __init__(self) -> None:
        self.count = 0

    def queue(self, pod, old, new):
        self.count += 1
        return QueueingHint.Queue

    def skip(self, pod, old, new):
        self.count += 1
        return QueueingHint.QueueSkip

    def err(self, pod, old, new):
        self.count += 1
        raise RuntimeError("unexpected error")


# ---------------------------------------------------------------------------------------------
# PreEnqueue plugins
# ---------------------------------------------------------------------------------------------
class PreEnqueuePlugin:
    """preEnqueuePlugin: admits a pod that has a label whose key is in the allow list."""

    name = "preEnqueuePlugin"

    def __init__(self, allowlists: Sequence[str] = ()) -> None:
        self.allowlists = list(allowlists)

    def pre_enqueue(self, pod: Pod) -> Optional[Status]:
        for allowed in self.allowlists:
            if allowed in pod.labels:
                return None
        return Status(Code.UnschedulableAndUnresolvable, "pod name not in allowlists")


class NamedPreEnqueue:
    """A PreEnqueue plugin under another name (wrapping one of the above)."""

    def __init__(self, name: str, inner) -> None:
        self.name = name
        self.inner = inner

    def pre_enqueue(self, pod: Pod) -> Optional[Status]:
        return self.inner.pre_enqueue(pod)


# ---------------------------------------------------------------------------------------------
# the framework
# ---------------------------------------------------------------------------------------------
class FakeFramework:
    """`hints`: [(event, plugin, hint_fn or None)] in registration order, as a
    QueueingHintMapPerProfile entry lists them; `pre_enqueue`: plugins with `name` and
    `pre_enqueue(pod)`."""

    def __init__(self, hints: Iterable[Tuple[ClusterEvent, str, Optional[Callable]]] = (),
                 pre_enqueue: Iterable[Any] = (), less: Callable = priority_sort_less) -> None:
        self.less = less
        self.pre_enqueue_plugins: List[Any] = list(pre_enqueue)
        by_plugin: Dict[str, List[ClusterEventWithHint]] = {}
        for ev, plugin, fn in hints:
            by_plugin.setdefault(plugin, []).append(ClusterEventWithHint(ev, fn))
        self.enqueue_extensions = list(by_plugin.items())

    def run_pre_enqueue_plugins(self, pod: Pod) -> Optional[Status]:
        for pl in self.pre_enqueue_plugins:
            s = pl.pre_enqueue(pod)
            if s is not None and not s.is_success():
                s.plugin = pl.name
                return s
        return None


def new_queue(hints=(), pre_enqueue=(), start: float = 0.0, initial: float = 1.0,
              max_backoff: float = 10.0) -> Tuple[SchedulingQueue, VirtualClock]:
    clock = VirtualClock(start)
    fw = FakeFramework(hints, pre_enqueue)
    return SchedulingQueue({PROFILE: fw}, clock, initial, max_backoff), clock


class StepClock(VirtualClock):
    """testingclock.FakeClock.Step."""

    def step(self, seconds: float) -> None:
        self.t += seconds


def new_step_queue(hints=(), pre_enqueue=(), start: float = 0.0, initial: float = 1.0,
                   max_backoff: float = 10.0, features=None) -> Tuple[SchedulingQueue, StepClock]:
    """A queue as v1.34 has it (the tables using it are v1.34's) unless `features` says otherwise."""
    from harness.versions import resolve

    clock = StepClock(start)
    fw = FakeFramework(hints, pre_enqueue)
    q = SchedulingQueue({PROFILE: fw}, clock, initial, max_backoff)
    q.features = features if features is not None else resolve("v1.34")
    return q, clock


# ---------------------------------------------------------------------------------------------
# pods (st.MakePod())
# ---------------------------------------------------------------------------------------------
def make_pod(name: str, namespace: str = "default", uid: str = "", priority: int = 0,
             nominated: str = "", labels: Optional[Dict[str, str]] = None,
             annotations: Optional[Dict[str, str]] = None, node: str = "",
             gates: Optional[List[str]] = None, tolerations: Optional[List[dict]] = None,
             unschedulable_condition: bool = False) -> Pod:
    spec: Dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}],
                            "schedulerName": PROFILE, "priority": priority}
    if node:
        spec["nodeName"] = node
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if tolerations:
        spec["tolerations"] = list(tolerations)
    status: Dict[str, Any] = {}
    if nominated:
        status["nominatedNodeName"] = nominated
    if unschedulable_condition:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    raw = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": namespace, "uid": uid or f"{name}{namespace}",
                        "labels": dict(labels or {}), "annotations": dict(annotations or {})},
           "spec": spec, "status": status}
    return Pod(raw)


def updated(pod: Pod, *, labels=None, annotations=None, nominated=None, gates=None,
            tolerations=None) -> Pod:
    """A copy of the pod with some fields replaced (pod.DeepCopy() and an edit)."""
    c = pod.deep_copy()
    raw = c.raw
    if labels is not None:
        raw["metadata"]["labels"] = dict(labels)
    if annotations is not None:
        raw["metadata"]["annotations"] = dict(annotations)
    if nominated is not None:
        raw.setdefault("status", {})["nominatedNodeName"] = nominated
    if gates is not None:
        if gates:
            raw["spec"]["schedulingGates"] = [{"name": g} for g in gates]
        else:
            raw["spec"].pop("schedulingGates", None)
    if tolerations is not None:
        raw["spec"]["tolerations"] = list(tolerations)
    return Pod(raw)


def high_priority_pod() -> Pod:
    return make_pod("hpp", "ns1", "hppns1", HIGH)


def high_pri_nominated_pod() -> Pod:
    return make_pod("hpp", "ns1", "hppns1", HIGH, nominated="node1")


def med_priority_pod() -> Pod:
    return make_pod("mpp", "ns2", "mppns2", MEDIUM, nominated="node1", annotations={"annot2": "val2"})


def unschedulable_pod() -> Pod:
    return make_pod("up", "ns1", "upns1", LOW, nominated="node1", annotations={"annot2": "val2"},
                    unschedulable_condition=True)


def non_existent_pod() -> Pod:
    return make_pod("ne", "ns1", "nens1")


def scheduled_pod() -> Pod:
    return make_pod("sp", "ns1", "spns1", node="foo")


def clone_pod(pod: Pod, new_name: str) -> Pod:
    """clonePod: a copy under another name (UID name+namespace)."""
    c = pod.deep_copy()
    c.raw["metadata"]["name"] = new_name
    c.raw["metadata"]["uid"] = new_name + pod.namespace
    return Pod(c.raw)


# ---------------------------------------------------------------------------------------------
# reaching into the queue the way upstream's tests do
# ---------------------------------------------------------------------------------------------
def lookup(q: SchedulingQueue, pod: Pod, *plugins: str) -> QueuedPodInfo:
    """newQueuedPodInfoForLookup: a fresh QueuedPodInfo for the pod (counts zero)."""
    pinfo = QueuedPodInfo(_pod_info(pod), q.clock.now(), 0)
    pinfo.unschedulable_plugins = set(plugins)
    return pinfo


def _pod_info(pod: Pod):
    from harness.framework.types import PodInfo
    return PodInfo.of(pod)


def add_active_directly(q: SchedulingQueue, pinfo: QueuedPodInfo) -> None:
    """activeQ.underLock(add): into activeQ without PreEnqueue or bookkeeping."""
    import heapq

    from harness.scheduler.queue import ACTIVE_Q, _ActiveItem
    heapq.heappush(q.active, _ActiveItem(pinfo, q._less))
    q.in_queue[pinfo.pod.uid] = ACTIVE_Q


def add_backoff_directly(q: SchedulingQueue, pinfo: QueuedPodInfo) -> None:
    """backoffQ.add."""
    q._backoff_add(pinfo)


def add_unschedulable_directly(q: SchedulingQueue, pinfo: QueuedPodInfo) -> None:
    """unschedulablePods.addOrUpdate."""
    q._to_unschedulable(pinfo)


def pop_all_backoff_completed(q: SchedulingQueue) -> List[QueuedPodInfo]:
    """backoffQ.popAllBackoffCompleted: out of the backoff queues (and of the queue)."""
    out = q._pop_backoff_completed(q.backoff) + q._pop_backoff_completed(q.error_backoff)
    for pinfo in out:
        q.in_queue.pop(pinfo.pod.uid, None)
    return out


def names(pods: Iterable[Pod]) -> List[str]:
    return sorted(p.name for p in pods)


def where(q: SchedulingQueue, pod: Pod) -> Optional[str]:
    return q.in_queue.get(pod.uid)
