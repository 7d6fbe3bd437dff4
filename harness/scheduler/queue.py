"""The scheduling queue (backend/queue/scheduling_queue.go, active_queue.go, backoff_queue.go,
nominator.go) in virtual time, with SchedulerQueueingHints and SchedulerPopFromBackoffQ on (both
default in v1.34): activeQ ordered by the QueueSort plugin, backoffQ (pods rejected by plugins,
ordered by backoff expiry then QueueSort) and the error backoffQ (pods that failed with no
rejecting plugin, ordered by backoff expiry), the unschedulable pool, PreEnqueue gating, queueing
hints with the events received while pods are in flight, and the nominator."""

from __future__ import annotations

import enum
import heapq
import itertools
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from ..api.objects import Pod
from ..versions import DEFAULT as DEFAULT_FEATURES
from ..framework.types import (ActionType, ClusterEvent, EventResource, PodInfo, QueuedPodInfo,
                               QueueingHint)
from .unschedulable_pods import UnschedulablePods

try:  # framework.PodSchedulingPropertiesChange
    from .events import pod_scheduling_properties_change
except ImportError:  # pragma: no cover - events.py is the scheduler's; keep the queue importable
    def pod_scheduling_properties_change(new: Pod, old: Pod, features=None) -> List[ClusterEvent]:
        res = EventResource.AssignedPod if new.node_name else EventResource.UnscheduledPod
        return [ClusterEvent(res, ActionType.Update)]


class Strategy(enum.Enum):
    """queueingStrategy."""

    QUEUE_SKIP = 0
    QUEUE_AFTER_BACKOFF = 1
    QUEUE_IMMEDIATELY = 2


EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WildCard, ActionType.All, "UnschedulableTimeout")
EVENT_FORCE_ACTIVATE = ClusterEvent(EventResource.WildCard, ActionType.All, "ForceActivate")
EVENT_ASSIGNED_POD_ADD = ClusterEvent(EventResource.AssignedPod, ActionType.Add)
EVENT_ASSIGNED_POD_UPDATE = ClusterEvent(EventResource.AssignedPod, ActionType.Update)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UnscheduledPod, ActionType.Add)
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UnscheduledPod, ActionType.Update)
EVENT_UNSCHEDULED_POD_DELETE = ClusterEvent(EventResource.UnscheduledPod, ActionType.Delete)

# the event labels the queue passes around for moves that are no cluster event
BACKOFF_COMPLETE = "BackoffComplete"
FORCE_ACTIVATE = "ForceActivate"
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"

DEFAULT_POD_MAX_IN_UNSCHEDULABLE = 300.0  # 5 minutes

ACTIVE_Q = "active"
BACKOFF_Q = "backoff"
UNSCHEDULABLE_Q = "unschedulable"

# backoffQOrderingWindowDuration: with SchedulerPopFromBackoffQ, backoff expirations are truncated
# to whole seconds and the backoffQ is flushed once a second, on the second.
_WINDOW_NS = 1_000_000_000


def _ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def align_to_window(t: float) -> float:
    """backoffQueue.alignToWindow: t.Truncate(1s) (virtual seconds count from 0)."""
    return float(_ns(t) // _WINDOW_NS)


def event_label(event: Union[ClusterEvent, str]) -> str:
    """The label an event carries in the queue's metrics (ClusterEvent.Label)."""
    return event if isinstance(event, str) else event.label()


def match_cluster_events(ce: ClusterEvent, incoming: ClusterEvent) -> bool:
    """framework.MatchClusterEvents (ClusterEvent.match)."""
    return ce.match(incoming)


class _ActiveItem:
    __slots__ = ("pinfo", "less")

    def __init__(self, pinfo: QueuedPodInfo, less):
        self.pinfo = pinfo
        self.less = less

    def __lt__(self, other: "_ActiveItem") -> bool:
        return self.less(self.pinfo, other.pinfo)


class _KeyedActiveItem(tuple):
    """(*QueueSort key, QueuedPodInfo) in activeQ when the QueueSort plugin gives its less as a
    key (Framework.queue_sort_key): the heap compares the keys as tuples, without a call; a key
    ends with the pod's queueing seq, so two items never compare their QueuedPodInfos."""

    __slots__ = ()

    @property
    def pinfo(self) -> QueuedPodInfo:
        return self[-1]


_UNSET: Any = object()


_ZERO_TIME = float("-inf")  # time.Time{}: before every time


class _BackoffItem(tuple):
    """(backoff expiration, seq, QueuedPodInfo, less) in a backoff heap. podBackoffQ orders by the
    expiration, then by the QueueSort less (lessBackoffCompletedWithPriority); podErrorBackoffQ
    (less None) by the expiration alone, ties in queueing order."""

    __slots__ = ()

    def __new__(cls, expiration: float, seq: int, pinfo: QueuedPodInfo, less):
        return tuple.__new__(cls, (expiration, seq, pinfo, less))

    def __lt__(self, other) -> bool:  # type: ignore[override]
        if self[0] != other[0]:
            return self[0] < other[0]
        if self[3] is not None:
            return self[3](self[2], other[2])
        return self[1] < other[1]


NOMINATION_CHANGES_KEPT = 4096


class Nominator:
    """nominator.go: pods nominated to a node (by preemption), in the order they were added.
    `pod_lister(namespace, name)` is the informer's view of the pod: a pod that is gone or bound
    is not nominated."""

    def __init__(self, pod_lister: Optional[Callable[[str, str], Optional[Pod]]] = None) -> None:
        self.nominated: Dict[str, List[PodInfo]] = {}
        self.pod_to_node: Dict[str, str] = {}
        self.pod_lister = pod_lister
        # the harness's own (no upstream counterpart): a count of the changes to the node
        # lists, and per node the count at its list's last change (never reused: a node's
        # version says its list holds the very same PodInfos), for memos of filter answers
        # (harness.framework.filter_memo)
        self.epoch = 0
        self.versions: Dict[str, int] = {}
        # the nodes changed, in order (the last CHANGES_KEPT at most: changes[i] is change
        # number changes_base + i + 1), for columns kept up to date from them
        self.changes: List[str] = []
        self.changes_base = 0

    def add_nominated_pod(self, pod_info: PodInfo, nominating_info: Optional[Tuple[str, str]] = None) -> None:
        """AddNominatedPod: nominating_info is (mode, node name) or None (ModeNoop: the pod's
        own status.nominatedNodeName)."""
        pod = pod_info.pod
        self.delete(pod)
        if nominating_info is not None and nominating_info[0] == "ModeOverride":
            node_name = nominating_info[1]
        else:
            if not pod.nominated_node_name:
                return
            node_name = pod.nominated_node_name
        if self.pod_lister is not None:
            current = self.pod_lister(pod.namespace, pod.name)
            if current is None or current.node_name:
                return  # gone from the informer cache, or already scheduled
        if not node_name:
            return  # nominated to "": never listed for any node
        self.pod_to_node[pod.uid] = node_name
        self.nominated.setdefault(node_name, []).append(pod_info)
        self._changed(node_name)

    def add(self, pod_info: PodInfo, node_name: str) -> None:
        """AddNominatedPod with ModeOverride."""
        self.add_nominated_pod(pod_info, ("ModeOverride", node_name))

    def add_from_status(self, pod_info: PodInfo) -> None:
        """AddNominatedPod with no nominating info (ModeNoop): the pod's own nominatedNodeName
        (an in-memory nomination of a pod without one is dropped)."""
        self.add_nominated_pod(pod_info, None)

    def delete(self, pod: Pod) -> None:
        """DeleteNominatedPodIfExists."""
        node = self.pod_to_node.pop(pod.uid, None)
        if node is None:
            return
        lst = [pi for pi in self.nominated.get(node, []) if pi.pod.uid != pod.uid]
        if lst:
            self.nominated[node] = lst
        else:
            self.nominated.pop(node, None)
        self._changed(node)

    def _changed(self, node_name: str) -> None:
        self.epoch += 1
        self.versions[node_name] = self.epoch
        if len(self.changes) >= NOMINATION_CHANGES_KEPT:
            self.changes_base += len(self.changes)
            self.changes = []
        self.changes.append(node_name)

    def update(self, old_pod: Pod, new_pod_info: PodInfo) -> None:
        """UpdateNominatedPod: keep an in-memory nomination only when neither version of the
        pod carries a nominatedNodeName; otherwise follow the new pod's status."""
        nominating = None
        if not old_pod.nominated_node_name and not new_pod_info.pod.nominated_node_name:
            nnn = self.pod_to_node.get(old_pod.uid)
            if nnn is not None:
                nominating = ("ModeOverride", nnn)
        self.delete(old_pod)
        self.add_nominated_pod(new_pod_info, nominating)

    def nominated_pods_for_node(self, node_name: str) -> List[PodInfo]:
        return list(self.nominated.get(node_name, []))


class SchedulingQueue:
    """PriorityQueue with SchedulerQueueingHints and SchedulerPopFromBackoffQ on (v1.34's
    defaults). `frameworks` maps profile name -> framework with `less`,
    `run_pre_enqueue_plugins(pod)` and `enqueue_extensions` [(plugin, [ClusterEventWithHint])]."""

    def __init__(self, frameworks: Dict[str, object], clock, initial_backoff: float = 1.0,
                 max_backoff: float = 10.0):
        self.frameworks = frameworks
        self.clock = clock
        self.features = DEFAULT_FEATURES  # the Scheduler sets its own (harness.versions)
        self.initial_backoff = float(initial_backoff)
        self.max_backoff = float(max_backoff)
        self._initial_ns = _ns(self.initial_backoff)
        self._max_ns = _ns(self.max_backoff)
        self.active: List[_ActiveItem] = []
        self.backoff: List[_BackoffItem] = []  # podBackoffQ
        self.error_backoff: List[_BackoffItem] = []  # podErrorBackoffQ
        self.unschedulable = UnschedulablePods()  # uid -> QueuedPodInfo
        self.in_queue: Dict[str, str] = {}  # uid -> ACTIVE_Q / BACKOFF_Q / UNSCHEDULABLE_Q
        self.in_flight: Dict[str, int] = {}  # uid -> index into in_flight_events at pop
        self.in_flight_events: List[Tuple[ClusterEvent, object, object]] = []
        self.scheduling_cycle = 0
        # podMaxInUnschedulablePodsDuration (flushUnschedulablePodsLeftover; the run loop does
        # not wait for it)
        self.max_in_unschedulable = DEFAULT_POD_MAX_IN_UNSCHEDULABLE
        self._seq = itertools.count()
        fw = next(iter(frameworks.values()))
        self._less = fw.less
        self._sort_key_of = getattr(fw, "queue_sort_key", None) or (lambda: None)
        self._active_key: Any = _UNSET
        # The scheduler nominates only pods that exist and are unbound (it checks the cluster
        # first), so no pod lister is wired here; Nominator(pod_lister) can take one.
        self.nominator = Nominator()
        # QueueingHintMapPerProfile: profile -> [(event, plugin, hint_fn)] (buildQueueingHintMap)
        self.hint_map: Dict[str, List[Tuple[ClusterEvent, str, Optional[Callable]]]] = {}
        for name, f in frameworks.items():
            rows: List[Tuple[ClusterEvent, str, Optional[Callable]]] = []
            for plugin, events in f.enqueue_extensions:
                node_add = node_taint = False
                for ev in events:
                    e = ev.event
                    if e.resource == EventResource.Node:
                        node_add = node_add or bool(e.action_type & ActionType.Add)
                        node_taint = node_taint or bool(e.action_type & ActionType.UpdateNodeTaint)
                    rows.append((e, plugin, ev.queueing_hint_fn))
                if node_add and not node_taint:
                    # kubernetes#109437: a plugin interested in Node/Add is requeued by
                    # Node/UpdateNodeTaint too (with the default hint, Queue).
                    rows.append((ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint), plugin, None))
            self.hint_map[name] = rows
        self._interest: Dict[ClusterEvent, bool] = {}  # is_event_of_interest's answers (hint_map is fixed)
        # (profile, event) -> (its hint_map rows, the (plugin, hint) of those matching the event,
        # their plugins): is_pod_worth_requeuing's rows for an event
        self._matching_rows: Dict[Tuple[str, ClusterEvent], Any] = {}
        # event -> (the unschedulable pool's version, its pods worth asking about the event)
        self._worth_asking_memo: Dict[ClusterEvent, Tuple[int, List[QueuedPodInfo]]] = {}
        # pluginToEventsMap (buildEventMap over every profile): the events that can ungate a pod
        self.plugin_events: Dict[str, List[ClusterEvent]] = {}
        for rows in self.hint_map.values():
            for ev, plugin, _ in rows:
                self.plugin_events.setdefault(plugin, []).append(ev)

    # ------------------------------------------------------------------------------------------
    # QueuedPodInfo, PreEnqueue, backoff
    # ------------------------------------------------------------------------------------------
    def new_queued_pod_info(self, pod: Pod, *plugins: str) -> QueuedPodInfo:
        """newQueuedPodInfo: Timestamp now. `seq` orders timestamps taken at the same virtual
        instant the way a real clock would (later calls, later times)."""
        pinfo = QueuedPodInfo(PodInfo.of(pod), self.clock.now(), next(self._seq))
        pinfo.unschedulable_plugins = set(plugins)
        return pinfo

    def _run_pre_enqueue(self, pinfo: QueuedPodInfo) -> None:
        """runPreEnqueuePlugins: a rejecting plugin becomes the gating plugin (and joins the
        unschedulable plugins); passing them all ungates the pod."""
        fw = self.frameworks[pinfo.pod.scheduler_name]
        s = fw.run_pre_enqueue_plugins(pinfo.pod)
        if s is None or s.is_success():
            pinfo.gating_plugin = ""
        else:
            pinfo.unschedulable_plugins.add(s.plugin)
            pinfo.gating_plugin = s.plugin
            pinfo.gating_plugin_events = list(self.plugin_events.get(s.plugin, []))
        self.unschedulable.refile(pinfo)

    def calculate_backoff_duration(self, count: int) -> float:
        """calculateBackoffDuration, in seconds (computed on nanoseconds as upstream)."""
        if count == 0:
            return 0.0
        shift = count - 1
        if self._initial_ns > (self._max_ns >> shift):
            return self._max_ns / 1e9
        return (self._initial_ns << shift) / 1e9

    def backoff_time(self, pinfo: QueuedPodInfo) -> Optional[float]:
        """getBackoffTime: None is the zero time (no backoff). The expiration is cached on the
        pod and aligned to the ordering window."""
        if self._max_ns == 0:
            return None
        count = pinfo.unschedulable_count
        if pinfo.consecutive_errors_count > 0:
            count = pinfo.consecutive_errors_count
        if count == 0:
            return None
        if pinfo.backoff_expiration is None:
            shift = count - 1
            if self._initial_ns > (self._max_ns >> shift):
                d = self._max_ns
            else:
                d = self._initial_ns << shift
            pinfo.backoff_expiration = float((_ns(pinfo.timestamp) + d) // _WINDOW_NS)
        return pinfo.backoff_expiration

    def is_pod_backing_off(self, pinfo: QueuedPodInfo) -> bool:
        """isPodBackingoff: the expiration is not before the current window."""
        t = self.backoff_time(pinfo)
        return t is not None and t >= align_to_window(self.clock.now())

    def _release_time(self, pinfo: QueuedPodInfo) -> float:
        """The first flush (on a whole second) at which the pod no longer backs off."""
        t = self.backoff_time(pinfo)
        if t is None:
            return self.clock.now()
        return max(self.clock.now(), t + 1.0)

    # ------------------------------------------------------------------------------------------
    # moves between the queues
    # ------------------------------------------------------------------------------------------
    def _unsched_delete(self, uid: str) -> None:
        if self.unschedulable.pop(uid, None) is not None and self.in_queue.get(uid) == UNSCHEDULABLE_Q:
            del self.in_queue[uid]

    def _to_unschedulable(self, pinfo: QueuedPodInfo) -> None:
        """unschedulablePods.addOrUpdate."""
        self.unschedulable[pinfo.pod.uid] = pinfo
        self.in_queue[pinfo.pod.uid] = UNSCHEDULABLE_Q

    def _active_item(self, pinfo: QueuedPodInfo):
        """activeQ's heap entry for pinfo (keyed when the QueueSort plugin has a key form;
        decided at the first entry, so the heap's entries are of one kind)."""
        key = self._active_key
        if key is _UNSET:
            key = self._active_key = self._sort_key_of()
        if key is None:
            return _ActiveItem(pinfo, self._less)
        return _KeyedActiveItem((*key(pinfo), pinfo))

    def _remove_from_active(self, uid: str) -> bool:
        for i, it in enumerate(self.active):
            if it.pinfo.pod.uid == uid:
                self.active.pop(i)
                heapq.heapify(self.active)
                return True
        return False

    def _remove_from_backoff(self, uid: str) -> Optional[QueuedPodInfo]:
        """backoffQueue.delete."""
        for q in (self.backoff, self.error_backoff):
            for i, item in enumerate(q):
                if item[2].pod.uid == uid:
                    q.pop(i)
                    heapq.heapify(q)
                    return item[2]
        return None

    def _move_to_active(self, pinfo: QueuedPodInfo, event: Union[ClusterEvent, str],
                        moves_from_backoff: bool = False) -> bool:
        """moveToActiveQ: PreEnqueue (not again for a pod whose backoff completed: it passed
        them on entering the backoffQ; from v1.35 not for any pod coming straight from the
        backoffQ, an activated one included), then activeQ, or the unschedulable pool when
        gated."""
        uid = pinfo.pod.uid
        if event != BACKOFF_COMPLETE:
            pinfo.requeue_event = event_label(event)
            if not (moves_from_backoff and self.features.has("ActivateFromBackoffSkipsPreEnqueue")):
                self._run_pre_enqueue(pinfo)
        if pinfo.gated():
            if uid in self.in_queue:
                return False  # already in activeQ, backoffQ or the unschedulable pool
            self._to_unschedulable(pinfo)
            return False
        if pinfo.initial_attempt_timestamp is None:
            pinfo.initial_attempt_timestamp = self.clock.now()
        where = self.in_queue.get(uid)
        if where == ACTIVE_Q:
            self._remove_from_active(uid)  # AddOrUpdate
        elif where == BACKOFF_Q:
            self._remove_from_backoff(uid)
        heapq.heappush(self.active, self._active_item(pinfo))
        self.unschedulable.pop(uid, None)
        self.in_queue[uid] = ACTIVE_Q
        if event == EVENT_UNSCHEDULED_POD_ADD or event == EVENT_UNSCHEDULED_POD_UPDATE:
            self.nominator.add_nominated_pod(pinfo.pod_info, None)
        return True

    def _backoff_add(self, pinfo: QueuedPodInfo) -> None:
        """backoffQueue.add: pods that failed with no rejecting plugin go to podErrorBackoffQ."""
        uid = pinfo.pod.uid
        if self.in_queue.get(uid) == BACKOFF_Q:
            self._remove_from_backoff(uid)
        exp = self.backoff_time(pinfo)
        key = _ZERO_TIME if exp is None else exp
        if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            heapq.heappush(self.error_backoff, _BackoffItem(key, pinfo.seq, pinfo, None))
        else:
            heapq.heappush(self.backoff, _BackoffItem(key, pinfo.seq, pinfo, self._less))
        self.in_queue[uid] = BACKOFF_Q

    def _move_to_backoff(self, pinfo: QueuedPodInfo, event: Union[ClusterEvent, str]) -> bool:
        """moveToBackoffQ: PreEnqueue runs on entering the backoffQ (SchedulerPopFromBackoffQ);
        a gated pod goes to the unschedulable pool instead."""
        pinfo.requeue_event = event_label(event)
        self._run_pre_enqueue(pinfo)
        if pinfo.gated():
            if pinfo.pod.uid not in self.unschedulable:
                self._to_unschedulable(pinfo)
            return False
        self._backoff_add(pinfo)
        return True

    def _requeue(self, pinfo: QueuedPodInfo, strategy: Strategy, event: Union[ClusterEvent, str]) -> str:
        """requeuePodWithQueueingStrategy: returns the queue the pod went to."""
        if strategy == Strategy.QUEUE_SKIP:
            self._to_unschedulable(pinfo)
            return UNSCHEDULABLE_Q
        if strategy == Strategy.QUEUE_AFTER_BACKOFF and self.is_pod_backing_off(pinfo):
            return BACKOFF_Q if self._move_to_backoff(pinfo, event) else UNSCHEDULABLE_Q
        return ACTIVE_Q if self._move_to_active(pinfo, event) else UNSCHEDULABLE_Q

    # ------------------------------------------------------------------------------------------
    # Add, Pop, Done, flushes
    # ------------------------------------------------------------------------------------------
    def add(self, pod: Pod) -> None:
        """Add: a new pending pod."""
        self._move_to_active(self.new_queued_pod_info(pod), EVENT_UNSCHEDULED_POD_ADD)

    def pop(self) -> Optional[QueuedPodInfo]:
        """Pop: the head of activeQ or, when activeQ is empty, of podBackoffQ
        (SchedulerPopFromBackoffQ; pods in the error backoffQ wait for their flush)."""
        while True:
            if self.active:
                pinfo = heapq.heappop(self.active).pinfo
            elif self.backoff:
                pinfo = heapq.heappop(self.backoff)[2]
            else:
                return None
            uid = pinfo.pod.uid
            self.in_queue.pop(uid, None)
            if not self._move_to_in_flight(pinfo):
                continue  # "tracked in multiple places": discarded
            return pinfo

    def _move_to_in_flight(self, pinfo: QueuedPodInfo) -> bool:
        """unlockedMovePodToInFlight (and Pop's reset of the rejecting plugins); False when the
        pod is already in flight."""
        uid = pinfo.pod.uid
        pinfo.attempts += 1
        if uid in self.in_flight:
            return False
        self.in_flight[uid] = len(self.in_flight_events)
        self.scheduling_cycle += 1
        pinfo.unschedulable_plugins = set()
        pinfo.pending_plugins = set()
        pinfo.gating_plugin = ""
        pinfo.gating_plugin_events = []
        self.unschedulable.refile(pinfo)
        return True

    def pop_specific_pod(self, pod: Pod) -> Optional[QueuedPodInfo]:
        """PopSpecificPod (v1.36): activate the pod (as an event would), then take it from
        activeQ into flight; None when it is not there (gated, in flight, unknown)."""
        self.activate([pod])
        uid = pod.uid
        if self.in_queue.get(uid) != ACTIVE_Q:
            return None
        pinfo = next((it.pinfo for it in self.active if it.pinfo.pod.uid == uid), None)
        if pinfo is None:
            return None
        self._remove_from_active(uid)
        self.in_queue.pop(uid, None)
        if not self._move_to_in_flight(pinfo):
            return None
        return pinfo

    def done(self, uid: str) -> None:
        """Done: the pod is no longer in flight."""
        self.in_flight.pop(uid, None)
        if not self.in_flight:
            self.in_flight_events.clear()

    def in_flight_events_for(self, uid: str) -> List[Tuple[ClusterEvent, object, object]]:
        """clusterEventsForPod: the events received since the pod was popped."""
        start = self.in_flight.get(uid)
        return [] if start is None else list(self.in_flight_events[start:])

    def _pop_backoff_completed(self, q: List[_BackoffItem]) -> List[QueuedPodInfo]:
        out = []
        while q and not self.is_pod_backing_off(q[0][2]):
            out.append(heapq.heappop(q)[2])
        return out

    def flush_backoff_completed(self) -> None:
        """flushBackoffQCompleted (run on every whole second upstream): pods whose backoff
        completed go to activeQ."""
        moved = self._pop_backoff_completed(self.backoff) + self._pop_backoff_completed(self.error_backoff)
        for pinfo in moved:
            self.in_queue.pop(pinfo.pod.uid, None)
            self._move_to_active(pinfo, BACKOFF_COMPLETE)

    def next_error_backoff_release(self, wanted: Optional[Callable[[QueuedPodInfo], bool]] = None
                                   ) -> Optional[float]:
        """When the first pod of the error backoffQ (which Pop does not take from) is released,
        among the pods `wanted` accepts: the run loop lets virtual time pass to it when nothing
        else can be popped."""
        if wanted is None:
            return self._release_time(self.error_backoff[0][2]) if self.error_backoff else None
        times = [self._release_time(item[2]) for item in self.error_backoff if wanted(item[2])]
        return min(times) if times else None

    def flush_unschedulable_pods_leftover(self) -> None:
        """flushUnschedulablePodsLeftover (every 30s upstream): pods in the unschedulable pool
        for longer than podMaxInUnschedulablePodsDuration move with UnschedulableTimeout."""
        now = self.clock.now()
        pods = [p for p in self.unschedulable.values() if now - p.timestamp > self.max_in_unschedulable]
        if pods:
            self.move_pods_to_active_or_backoff(pods, EVENT_UNSCHEDULABLE_TIMEOUT, None, None)

    def add_unschedulable_if_not_present(self, pinfo: QueuedPodInfo) -> Optional[str]:
        """AddUnschedulableIfNotPresent: requeue a pod after a failed attempt, to activeQ,
        backoffQ or the unschedulable pool by the events received while it was in flight.
        Returns the queue, or None when the pod already was in a queue."""
        uid = pinfo.pod.uid
        try:
            if uid in self.in_queue:
                return None
            if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
                pinfo.consecutive_errors_count += 1
            else:
                pinfo.unschedulable_count += 1
                pinfo.consecutive_errors_count = 0
            pinfo.timestamp = self.clock.now()
            pinfo.seq = next(self._seq)
            pinfo.backoff_expiration = None
            strategy = self.determine_hint_for_in_flight_pod(pinfo)
            return self._requeue(pinfo, strategy, SCHEDULE_ATTEMPT_FAILURE)
        finally:
            self.done(uid)

    def determine_hint_for_in_flight_pod(self, pinfo: QueuedPodInfo) -> Strategy:
        """determineSchedulingHintForInFlightPod."""
        if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            return Strategy.QUEUE_AFTER_BACKOFF
        start = self.in_flight.get(pinfo.pod.uid)
        if start is None:
            return Strategy.QUEUE_AFTER_BACKOFF  # "in flight Pod isn't found": requeue anyway
        strategy = Strategy.QUEUE_SKIP
        for ev, old, new in self.in_flight_events[start:]:
            s = self.is_pod_worth_requeuing(pinfo, ev, old, new)
            if s == Strategy.QUEUE_IMMEDIATELY:
                return s
            if s == Strategy.QUEUE_AFTER_BACKOFF:
                strategy = s
                if not pinfo.pending_plugins:
                    return s
        return strategy

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """isEventOfInterest: a wildcard event, or one some plugin of some profile registered."""
        known = self._interest.get(event)
        if known is None:
            known = self._interest[event] = event.is_wildcard() or any(
                match_cluster_events(ev, event) for rows in self.hint_map.values() for ev, _, _ in rows)
        return known

    def is_pod_worth_requeuing(self, pinfo: QueuedPodInfo, event: ClusterEvent, old, new) -> Strategy:
        """isPodWorthRequeuing: the hints of the plugins that rejected the pod. Queue from a
        Pending plugin is queueImmediately, from an unschedulable plugin queueAfterBackoff; a
        hint that raises counts as Queue."""
        rejectors = pinfo.unschedulable_plugins | pinfo.pending_plugins
        if not rejectors:
            return Strategy.QUEUE_AFTER_BACKOFF
        if event.is_wildcard():
            # a wildcard event carrying a pod (ForceActivate) is for that pod only
            if new is not None and (not isinstance(new, Pod) or new.uid != pinfo.pod.uid):
                return Strategy.QUEUE_SKIP
            return Strategy.QUEUE_AFTER_BACKOFF
        name = pinfo.pod.scheduler_name
        rows = self.hint_map.get(name)
        if rows is None:
            return Strategy.QUEUE_AFTER_BACKOFF
        # the profile's rows whose event covers this one, in their order (hint_map is fixed)
        known = self._matching(name, rows, event)
        if rejectors.isdisjoint(known[2]):
            return Strategy.QUEUE_SKIP
        strategy = Strategy.QUEUE_SKIP
        for plugin, fn in known[1]:
            if plugin not in rejectors:
                continue
            if fn is None:
                hint = QueueingHint.Queue
            else:
                try:
                    hint = fn(pinfo.pod, old, new)
                except Exception:
                    hint = QueueingHint.Queue
            if hint == QueueingHint.QueueSkip:
                continue
            if plugin in pinfo.pending_plugins:
                return Strategy.QUEUE_IMMEDIATELY
            if not pinfo.pending_plugins:
                return Strategy.QUEUE_AFTER_BACKOFF
            strategy = Strategy.QUEUE_AFTER_BACKOFF
        return strategy

    _worth_requeuing = is_pod_worth_requeuing

    def _matching(self, name: str, rows, event: ClusterEvent):
        """(rows, the profile's rows whose event covers `event` in their order, their plugins),
        kept per (profile, event)."""
        known = self._matching_rows.get((name, event))
        if known is None or known[0] is not rows:
            matching = [(plugin, fn) for ev, plugin, fn in rows if match_cluster_events(ev, event)]
            known = self._matching_rows[(name, event)] = (rows, matching, frozenset(p for p, _ in matching))
        return known

    def _skipped_plugins(self, event: ClusterEvent):
        """For move_pods_to_active_or_backoff: scheduler name -> the plugins whose hints could
        requeue a pod of that profile on `event` (None: is_pod_worth_requeuing decides every
        pod); a pod that some plugin rejected, none of them among these, is QueueSkip there."""
        if event.is_wildcard():
            return None
        out = {}
        for name, rows in self.hint_map.items():
            out[name] = self._matching(name, rows, event)[2]
        return out

    # ------------------------------------------------------------------------------------------
    # cluster events
    # ------------------------------------------------------------------------------------------
    def move_all_to_active_or_backoff(self, event: ClusterEvent, old, new,
                                      pre_check: Optional[Callable[[Pod], bool]] = None) -> None:
        """MoveAllToActiveOrBackoffQueue over the unschedulable pool."""
        if not self.is_event_of_interest(event):
            return
        # the gated pods this event cannot move are left out here rather than one by one in
        # move_pods_to_active_or_backoff (the same pods, in the same order)
        if pre_check is None:
            # the pods worth asking are kept per event while the pool is unchanged (an
            # AssignedPodAdd per binding meets the same pool again and again)
            pool = self.unschedulable
            kept = self._worth_asking_memo.get(event)
            if kept is None or kept[0] != pool.version:
                kept = self._worth_asking_memo[event] = (
                    pool.version, self._worth_asking(pool.movable(event, match_cluster_events), event, 1))
            self._move_pods(kept[1], event, old, new)
            return
        pods = self.unschedulable.movable(event, match_cluster_events)
        pods = [p for p in pods if pre_check(p.pod)]
        self.move_pods_to_active_or_backoff(pods, event, old, new)

    def move_pods_to_active_or_backoff(self, pods: Iterable[QueuedPodInfo], event: ClusterEvent,
                                       old, new) -> None:
        """movePodsToActiveOrBackoffQueue: a gated pod moves only on its gating plugin's events;
        the event is kept for the pods in flight."""
        if not self.is_event_of_interest(event):
            return
        self._move_pods(self._worth_asking(list(pods), event, 2), event, old, new)

    def _worth_asking(self, pods: List[QueuedPodInfo], event: ClusterEvent, least: int) -> List[QueuedPodInfo]:
        """The pods of `pods` (in order) that move_pods_to_active_or_backoff asks
        is_pod_worth_requeuing about: a gated pod only on its gating plugin's events, and (with
        at least `least` pods) not one whose rejecting plugins have no hint for the event, for
        which the answer is QueueSkip (its first test, which has no other effect)."""
        covered = self._skipped_plugins(event) if len(pods) >= least else None
        out = []
        for pinfo in pods:
            if pinfo.gating_plugin and not any(match_cluster_events(e, event) for e in pinfo.gating_plugin_events):
                continue
            if covered is not None:
                plugins = covered.get(pinfo.pod.scheduler_name)
                if plugins is not None:
                    u, p = pinfo.unschedulable_plugins, pinfo.pending_plugins
                    if (u or p) and u.isdisjoint(plugins) and p.isdisjoint(plugins):
                        continue
            out.append(pinfo)
        return out

    def _move_pods(self, pods: List[QueuedPodInfo], event: ClusterEvent, old, new) -> None:
        """movePodsToActiveOrBackoffQueue on the pods worth asking (_worth_asking)."""
        for pinfo in pods:
            strategy = self.is_pod_worth_requeuing(pinfo, event, old, new)
            if strategy == Strategy.QUEUE_SKIP:
                continue
            self._unsched_delete(pinfo.pod.uid)
            self._requeue(pinfo, strategy, event)
        if self.in_flight:
            self.in_flight_events.append((event, old, new))

    def activate(self, pods: Union[Mapping[str, Pod], Iterable[Pod]]) -> None:
        """Activate: pods in the unschedulable pool or backoffQ go to activeQ (through
        PreEnqueue); an in-flight pod gets a ForceActivate event for when it comes back."""
        if isinstance(pods, Mapping):
            pods = list(pods.values())
        for pod in pods:
            uid = pod.uid
            pinfo = self.unschedulable.get(uid)
            from_backoff = False
            if pinfo is None and self.in_queue.get(uid) == BACKOFF_Q:
                pinfo = self._remove_from_backoff(uid)
                self.in_queue.pop(uid, None)
                from_backoff = True
            if pinfo is not None:
                self._move_to_active(pinfo, FORCE_ACTIVATE, from_backoff)
                continue
            if uid in self.in_flight:  # addEventsIfPodInFlight
                self.in_flight_events.append((EVENT_FORCE_ACTIVATE, None, pod))

    def delete(self, pod: Pod) -> None:
        """Delete: from whichever queue holds the pod, and from the nominator."""
        self.nominator.delete(pod)
        where = self.in_queue.pop(pod.uid, None)
        if where == ACTIVE_Q:
            self._remove_from_active(pod.uid)
        elif where == BACKOFF_Q:
            self._remove_from_backoff(pod.uid)
        elif where == UNSCHEDULABLE_Q:
            self.unschedulable.pop(pod.uid, None)

    def park(self, pinfo: QueuedPodInfo) -> None:
        """Move a queued pod to the unschedulable pool, where only an event can wake it (the
        harness parks pods whose attempts keep ending in an Error; see Scheduler)."""
        where = self.in_queue.get(pinfo.pod.uid)
        if where == ACTIVE_Q:
            self._remove_from_active(pinfo.pod.uid)
        elif where == BACKOFF_Q:
            self._remove_from_backoff(pinfo.pod.uid)
        self.unschedulable[pinfo.pod.uid] = pinfo
        self.in_queue[pinfo.pod.uid] = UNSCHEDULABLE_Q

    def update(self, old: Optional[Pod], new: Pod) -> None:
        """Update of a pending pod. In flight: its events are kept for when it comes back. In
        activeQ or backoffQ: replaced there. In the unschedulable pool: requeued if a rejecting
        (or gating) plugin's hint says the change may help. In no queue: added to activeQ."""
        uid = new.uid
        events = (pod_scheduling_properties_change(new, old, self.features) if old is not None
                  else [EVENT_UNSCHEDULED_POD_UPDATE])
        if uid in self.in_flight:  # addEventsIfPodInFlight
            for ev in events:
                self.in_flight_events.append((ev, old, new))
            return
        where = self.in_queue.get(uid)
        if old is not None and where == ACTIVE_Q:
            for i, it in enumerate(self.active):
                if it.pinfo.pod.uid == uid:
                    it.pinfo.pod_info = PodInfo.of(new)
                    self.active[i] = self._active_item(it.pinfo)  # a keyed entry's key reads the pod
                    heapq.heapify(self.active)
                    self.nominator.update(old, it.pinfo.pod_info)
                    return
        if old is not None and where == BACKOFF_Q:
            for q in (self.backoff, self.error_backoff):
                for item in q:
                    if item[2].pod.uid == uid:
                        item[2].pod_info = PodInfo.of(new)
                        heapq.heapify(q)
                        self.nominator.update(old, item[2].pod_info)
                        return
        if where == UNSCHEDULABLE_Q:
            pinfo = self.unschedulable[uid]
            pinfo.pod_info = PodInfo.of(new)
            self.nominator.update(old if old is not None else new, pinfo.pod_info)
            for ev in events:
                hint = self.is_pod_worth_requeuing(pinfo, ev, old, new)
                self._unsched_delete(uid)
                queue = self._requeue(pinfo, hint, ev)
                if queue != UNSCHEDULABLE_Q:
                    break
            return
        if new.scheduler_name not in self.frameworks:
            return  # not this scheduler's pod (the informer's filter would not deliver it)
        self._move_to_active(self.new_queued_pod_info(new), EVENT_UNSCHEDULED_POD_UPDATE)

    # ------------------------------------------------------------------------------------------
    # listing
    # ------------------------------------------------------------------------------------------
    def pods_in_active(self) -> List[Pod]:
        return [it.pinfo.pod for it in self.active]

    def pods_in_backoff(self) -> List[Pod]:
        return [t[2].pod for t in self.backoff] + [t[2].pod for t in self.error_backoff]

    def unschedulable_pods(self) -> List[Pod]:
        return [p.pod for p in self.unschedulable.values()]

    def get(self, uid: str) -> Optional[QueuedPodInfo]:
        where = self.in_queue.get(uid)
        if where == ACTIVE_Q:
            for it in self.active:
                if it.pinfo.pod.uid == uid:
                    return it.pinfo
        elif where == BACKOFF_Q:
            for q in (self.backoff, self.error_backoff):
                for item in q:
                    if item[2].pod.uid == uid:
                        return item[2]
        elif where == UNSCHEDULABLE_Q:
            return self.unschedulable.get(uid)
        return None

    def pending_pods(self) -> List[QueuedPodInfo]:
        out = [it.pinfo for it in self.active] + [t[2] for t in self.backoff]
        out += [t[2] for t in self.error_backoff]
        out += list(self.unschedulable.values())
        return out

