"""The scheduling queue (backend/queue/scheduling_queue.go) in virtual time: activeQ ordered by
the QueueSort plugin, backoffQ, the unschedulable pool, PreEnqueue gating, queueing hints for
in-flight pods, and the nominator."""

from __future__ import annotations

import enum
import heapq
import itertools
from typing import Callable, Dict, List, Optional, Tuple

from ..api.objects import Pod
from ..framework.status import Code
from ..framework.types import (ActionType, ClusterEvent, EventResource, PodInfo, QueuedPodInfo,
                               QueueingHint)


class Strategy(enum.Enum):
    QUEUE_SKIP = 0
    QUEUE_AFTER_BACKOFF = 1
    QUEUE_IMMEDIATELY = 2


EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.WildCard, ActionType.All, "UnschedulableTimeout")
EVENT_ASSIGNED_POD_ADD = ClusterEvent(EventResource.AssignedPod, ActionType.Add)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
EVENT_FORCE_ACTIVATE = ClusterEvent(EventResource.WildCard, ActionType.All, "ForceActivate")


class _ActiveItem:
    __slots__ = ("pinfo", "less")

    def __init__(self, pinfo: QueuedPodInfo, less):
        self.pinfo = pinfo
        self.less = less

    def __lt__(self, other: "_ActiveItem") -> bool:
        return self.less(self.pinfo, other.pinfo)


class Nominator:
    """nominator.go: pods nominated to a node (by preemption), in the order they were added."""

    def __init__(self) -> None:
        self.nominated: Dict[str, List[PodInfo]] = {}
        self.pod_to_node: Dict[str, str] = {}

    def add(self, pod_info: PodInfo, node_name: str) -> None:
        self.delete(pod_info.pod)
        if not node_name:
            return
        self.pod_to_node[pod_info.pod.uid] = node_name
        self.nominated.setdefault(node_name, []).append(pod_info)

    def delete(self, pod: Pod) -> None:
        node = self.pod_to_node.pop(pod.uid, None)
        if node is None:
            return
        lst = [pi for pi in self.nominated.get(node, []) if pi.pod.uid != pod.uid]
        if lst:
            self.nominated[node] = lst
        else:
            self.nominated.pop(node, None)

    def add_from_status(self, pod_info: PodInfo) -> None:
        """addNominatedPod with no nominating info (ModeNoop): the pod's own nominatedNodeName."""
        if pod_info.pod.nominated_node_name:
            self.add(pod_info, pod_info.pod.nominated_node_name)

    def update(self, old_pod: Pod, new_pod_info: PodInfo) -> None:
        """UpdateNominatedPod: keep an in-memory nomination only when neither version of the
        pod carries a nominatedNodeName; otherwise follow the new pod's status."""
        keep = None
        if not old_pod.nominated_node_name and not new_pod_info.pod.nominated_node_name:
            keep = self.pod_to_node.get(old_pod.uid)
        self.delete(old_pod)
        if keep is not None:
            self.add(new_pod_info, keep)
        else:
            self.add_from_status(new_pod_info)

    def nominated_pods_for_node(self, node_name: str) -> List[PodInfo]:
        return list(self.nominated.get(node_name, []))


class SchedulingQueue:
    """PriorityQueue with SchedulerQueueingHints on (v1.34's default)."""

    def __init__(self, frameworks: Dict[str, object], clock, initial_backoff: float = 1.0,
                 max_backoff: float = 10.0):
        self.frameworks = frameworks
        self.clock = clock
        self.initial_backoff = float(initial_backoff)
        self.max_backoff = float(max_backoff)
        self.active: List[_ActiveItem] = []
        self.backoff: List[Tuple[float, int, QueuedPodInfo]] = []
        self.unschedulable: Dict[str, QueuedPodInfo] = {}
        self.in_queue: Dict[str, str] = {}  # uid -> "active"/"backoff"/"unschedulable"
        self.in_flight: Dict[str, int] = {}  # uid -> index into in_flight_events at pop
        self.in_flight_events: List[Tuple[ClusterEvent, object, object]] = []
        self.nominator = Nominator()
        self._seq = itertools.count()
        fw = next(iter(frameworks.values()))
        self._less = fw.less
        # profile -> [(event, plugin, hint_fn)]
        self.hint_map: Dict[str, List[Tuple[ClusterEvent, str, Optional[Callable]]]] = {}
        for name, f in frameworks.items():
            rows = []
            for plugin, events in f.enqueue_extensions:
                for ev in events:
                    rows.append((ev.event, plugin, ev.queueing_hint_fn))
            self.hint_map[name] = rows

    # ------------------------------------------------------------------------------------------
    def new_queued_pod_info(self, pod: Pod) -> QueuedPodInfo:
        return QueuedPodInfo(PodInfo.of(pod), self.clock.now(), next(self._seq))

    def _run_pre_enqueue(self, pinfo: QueuedPodInfo) -> bool:
        fw = self.frameworks[pinfo.pod.scheduler_name]
        s = fw.run_pre_enqueue_plugins(pinfo.pod)
        if s is None or s.is_success():
            pinfo.gating_plugin = ""
            pinfo.gating_plugin_events = []
            return True
        pinfo.gating_plugin = s.plugin
        pinfo.gating_plugin_events = [ev for ev, plugin, _ in self.hint_map[pinfo.pod.scheduler_name]
                                      if plugin == s.plugin]
        pinfo.unschedulable_plugins = {s.plugin}
        return False

    def _move_to_active(self, pinfo: QueuedPodInfo) -> bool:
        if not self._run_pre_enqueue(pinfo):
            self.unschedulable[pinfo.pod.uid] = pinfo
            self.in_queue[pinfo.pod.uid] = "unschedulable"
            return False
        heapq.heappush(self.active, _ActiveItem(pinfo, self._less))
        self.in_queue[pinfo.pod.uid] = "active"
        self.unschedulable.pop(pinfo.pod.uid, None)
        if pinfo.pod.nominated_node_name:
            self.nominator.add_from_status(pinfo.pod_info)
        return True

    def _backoff_time(self, pinfo: QueuedPodInfo) -> Optional[float]:
        """getBackoffTime."""
        if self.max_backoff == 0:
            return None
        count = pinfo.unschedulable_count
        if pinfo.consecutive_errors_count > 0:
            count = pinfo.consecutive_errors_count
        if count == 0:
            return None
        if pinfo.backoff_expiration is None:
            shift = count - 1
            if self.initial_backoff > self.max_backoff / (2 ** shift):
                d = self.max_backoff
            else:
                d = self.initial_backoff * (2 ** shift)
            pinfo.backoff_expiration = pinfo.timestamp + d
        return pinfo.backoff_expiration

    def _is_backing_off(self, pinfo: QueuedPodInfo) -> bool:
        t = self._backoff_time(pinfo)
        return t is not None and t > self.clock.now()

    def _move_to_backoff(self, pinfo: QueuedPodInfo) -> bool:
        if not self._run_pre_enqueue(pinfo):
            self.unschedulable[pinfo.pod.uid] = pinfo
            self.in_queue[pinfo.pod.uid] = "unschedulable"
            return False
        heapq.heappush(self.backoff, (self._backoff_time(pinfo) or 0.0, pinfo.seq, pinfo))
        self.in_queue[pinfo.pod.uid] = "backoff"
        self.unschedulable.pop(pinfo.pod.uid, None)
        return True

    # ------------------------------------------------------------------------------------------
    def add(self, pod: Pod) -> None:
        pinfo = self.new_queued_pod_info(pod)
        self._move_to_active(pinfo)

    def pop(self) -> Optional[QueuedPodInfo]:
        """Pop: the head of activeQ, or (SchedulerPopFromBackoffQ) of backoffQ when activeQ is
        empty."""
        if self.active:
            pinfo = heapq.heappop(self.active).pinfo
        elif self.backoff:
            pinfo = heapq.heappop(self.backoff)[2]
        else:
            return None
        del self.in_queue[pinfo.pod.uid]
        pinfo.attempts += 1
        if pinfo.initial_attempt_timestamp is None:
            pinfo.initial_attempt_timestamp = self.clock.now()
        pinfo.unschedulable_plugins = set()
        pinfo.pending_plugins = set()
        self.in_flight[pinfo.pod.uid] = len(self.in_flight_events)
        return pinfo

    def done(self, uid: str) -> None:
        self.in_flight.pop(uid, None)
        if not self.in_flight:
            self.in_flight_events.clear()

    def flush_backoff_completed(self) -> None:
        now = self.clock.now()
        while self.backoff and self.backoff[0][0] <= now:
            _, _, pinfo = heapq.heappop(self.backoff)
            self._move_to_active(pinfo)

    def next_backoff_expiry(self) -> Optional[float]:
        return self.backoff[0][0] if self.backoff else None

    def add_unschedulable_if_not_present(self, pinfo: QueuedPodInfo) -> None:
        uid = pinfo.pod.uid
        try:
            if uid in self.in_queue:
                return
            if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
                pinfo.consecutive_errors_count += 1
            else:
                pinfo.unschedulable_count += 1
                pinfo.consecutive_errors_count = 0
            pinfo.timestamp = self.clock.now()
            pinfo.backoff_expiration = None
            strategy = self._hint_for_in_flight(pinfo)
            self._requeue(pinfo, strategy)
        finally:
            self.done(uid)

    def _hint_for_in_flight(self, pinfo: QueuedPodInfo) -> Strategy:
        if not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            return Strategy.QUEUE_AFTER_BACKOFF
        start = self.in_flight.get(pinfo.pod.uid, len(self.in_flight_events))
        strategy = Strategy.QUEUE_SKIP
        for ev, old, new in self.in_flight_events[start:]:
            s = self._worth_requeuing(pinfo, ev, old, new)
            if s == Strategy.QUEUE_IMMEDIATELY:
                return s
            if s == Strategy.QUEUE_AFTER_BACKOFF:
                strategy = s
                if not pinfo.pending_plugins:
                    return s
        return strategy

    def _requeue(self, pinfo: QueuedPodInfo, strategy: Strategy) -> str:
        if strategy == Strategy.QUEUE_SKIP:
            self.unschedulable[pinfo.pod.uid] = pinfo
            self.in_queue[pinfo.pod.uid] = "unschedulable"
            return "unschedulable"
        if strategy == Strategy.QUEUE_AFTER_BACKOFF and self._is_backing_off(pinfo):
            return "backoff" if self._move_to_backoff(pinfo) else "unschedulable"
        return "active" if self._move_to_active(pinfo) else "unschedulable"

    def _worth_requeuing(self, pinfo: QueuedPodInfo, event: ClusterEvent, old, new) -> Strategy:
        """isPodWorthRequeuing."""
        rejectors = pinfo.unschedulable_plugins | pinfo.pending_plugins
        if not rejectors:
            return Strategy.QUEUE_AFTER_BACKOFF
        if event.is_wildcard():
            if new is not None and (not isinstance(new, Pod) or new.uid != pinfo.pod.uid):
                return Strategy.QUEUE_SKIP
            return Strategy.QUEUE_AFTER_BACKOFF
        rows = self.hint_map.get(pinfo.pod.scheduler_name)
        if rows is None:
            return Strategy.QUEUE_AFTER_BACKOFF
        strategy = Strategy.QUEUE_SKIP
        for ev, plugin, fn in rows:
            if not ev.match(event) or plugin not in rejectors:
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

    def move_all_to_active_or_backoff(self, event: ClusterEvent, old, new,
                                      pre_check: Optional[Callable[[Pod], bool]] = None) -> None:
        """MoveAllToActiveOrBackoffQueue over the unschedulable pool (in queue order)."""
        pods = [p for p in self.unschedulable.values() if pre_check is None or pre_check(p.pod)]
        for pinfo in pods:
            if pinfo.gated() and not any(e.match(event) for e in pinfo.gating_plugin_events):
                continue
            strategy = self._worth_requeuing(pinfo, event, old, new)
            if strategy == Strategy.QUEUE_SKIP:
                continue
            self.unschedulable.pop(pinfo.pod.uid, None)
            self.in_queue.pop(pinfo.pod.uid, None)
            self._requeue(pinfo, strategy)
        if self.in_flight:
            self.in_flight_events.append((event, old, new))

    def activate(self, pods: List[Pod]) -> None:
        for pod in pods:
            pinfo = self.unschedulable.pop(pod.uid, None)
            if pinfo is None:
                for i, (_, _, pi) in enumerate(self.backoff):
                    if pi.pod.uid == pod.uid:
                        pinfo = pi
                        self.backoff.pop(i)
                        heapq.heapify(self.backoff)
                        break
            if pinfo is not None:
                self.in_queue.pop(pod.uid, None)
                self._move_to_active(pinfo)

    def delete(self, pod: Pod) -> None:
        where = self.in_queue.pop(pod.uid, None)
        if where == "active":
            self.active = [it for it in self.active if it.pinfo.pod.uid != pod.uid]
            heapq.heapify(self.active)
        elif where == "backoff":
            self.backoff = [t for t in self.backoff if t[2].pod.uid != pod.uid]
            heapq.heapify(self.backoff)
        elif where == "unschedulable":
            self.unschedulable.pop(pod.uid, None)
        self.nominator.delete(pod)

    def update(self, old: Pod, new: Pod) -> None:
        """Update of a pending pod: replace it in whichever queue holds it; an unschedulable
        pod is re-evaluated (e.g. scheduling gates removed)."""
        where = self.in_queue.get(new.uid)
        if where is None:  # in flight: only the nomination follows
            self.nominator.update(old, PodInfo.of(new))
            return
        if where == "active":
            for it in self.active:
                if it.pinfo.pod.uid == new.uid:
                    it.pinfo.pod_info = PodInfo.of(new)
            heapq.heapify(self.active)
        elif where == "backoff":
            for _, _, pi in self.backoff:
                if pi.pod.uid == new.uid:
                    pi.pod_info = PodInfo.of(new)
        else:
            pinfo = self.unschedulable[new.uid]
            pinfo.pod_info = PodInfo.of(new)
            if pinfo.gated():
                self.unschedulable.pop(new.uid)
                self.in_queue.pop(new.uid)
                self._move_to_active(pinfo)
            else:
                ev = ClusterEvent(EventResource.UnscheduledPod, ActionType.Update)
                s = self._worth_requeuing(pinfo, ev, old, new)
                if s != Strategy.QUEUE_SKIP:
                    self.unschedulable.pop(new.uid)
                    self.in_queue.pop(new.uid)
                    self._requeue(pinfo, s)
        self.nominator.update(old, PodInfo.of(new))

    def pending_pods(self) -> List[QueuedPodInfo]:
        out = [it.pinfo for it in self.active] + [t[2] for t in self.backoff]
        out += list(self.unschedulable.values())
        return out

    def empty_active_and_backoff(self) -> bool:
        return not self.active and not self.backoff
