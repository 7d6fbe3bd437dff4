"""The scheduler (scheduler.go + eventhandlers.go) over a simulated cluster, in virtual time."""

from __future__ import annotations

import random
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..api.objects import KubeObject, Node, Pod, update_pod_condition
from ..cluster import Cluster
from ..errors import UserError
from ..framework.runtime import Framework
from ..framework.types import ActionType, ClusterEvent, EventResource
from .cache import Cache, CacheError
from .events import node_scheduling_properties_change, pod_scheduling_properties_change
from .queue import EVENT_ASSIGNED_POD_ADD, EVENT_ASSIGNED_POD_DELETE, SchedulingQueue
from .schedule_one import CycleRecord, SchedulingCycles
from .snapshot import Snapshot

MAX_CONSECUTIVE_ERRORS = 3

EVENT_NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)
EVENT_NODE_DELETE = ClusterEvent(EventResource.Node, ActionType.Delete)

_KIND_RESOURCE = {
    "PersistentVolume": EventResource.PersistentVolume,
    "PersistentVolumeClaim": EventResource.PersistentVolumeClaim,
    "StorageClass": EventResource.StorageClass,
    "CSINode": EventResource.CSINode,
    "CSIDriver": EventResource.CSIDriver,
    "CSIStorageCapacity": EventResource.CSIStorageCapacity,
    "VolumeAttachment": EventResource.VolumeAttachment,
    "ResourceClaim": EventResource.ResourceClaim,
    "ResourceSlice": EventResource.ResourceSlice,
    "DeviceClass": EventResource.DeviceClass,
}


class VirtualClock:
    def __init__(self, start: float = 0.0):
        self.t = start

    def now(self) -> float:
        return self.t

    def advance_to(self, t: float) -> None:
        if t > self.t:
            self.t = t


def node_update_action(old: Node, new: Node) -> ActionType:
    """The actions of NodeSchedulingPropertiesChange(new, old), ORed (NONE when the update is
    no event). The handler moves pods once per event, in order (node_scheduling_properties_change)."""
    a = ActionType.NONE
    for ev in node_scheduling_properties_change(new, old):
        a |= ev.action_type
    return a


def informer_sees(pod: Optional[Pod]) -> bool:
    """The scheduler's pod informer lists and watches pods with the field selector
    `status.phase!=Succeeded,status.phase!=Failed` (NewInformerFactory, scheduler.go): a
    completed pod does not exist for the scheduler."""
    return pod is not None and (pod.raw.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _le_priority(priority: int):
    """getLEPriorityPreCheck: only pods of lower or equal priority."""
    return lambda p: p.priority <= priority


class Scheduler:
    """One kube-scheduler: profiles (frameworks), cache, queue, and the event handlers."""

    def __init__(self, config: Mapping[str, Any], registry: Mapping[str, type], cluster: Cluster,
                 seed: int = 0, source: str = "config"):
        self.config = config
        self.cluster = cluster
        self.clock = VirtualClock()
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.rng = random.Random(seed)
        self.next_start_node_index = 0
        self.percentage_of_nodes_to_score = int(config.get("percentageOfNodesToScore") or 0)
        self.records: Dict[str, List[CycleRecord]] = {}
        self.errors: Dict[str, str] = {}
        self.waiting: List[Tuple[Any, Framework, Any, Any, CycleRecord]] = []
        if config.get("extenders"):
            raise UserError("extenders are not supported by schedharness yet (kube-scheduler would "
                            "call them over HTTP)", file=source, key="extenders")
        self.profiles: Dict[str, Framework] = {}
        waiting_pods: Dict[str, Any] = {}
        for prof in config["profiles"]:
            fw = Framework(prof, registry, snapshot=self.snapshot, cluster=cluster,
                           parallelism=int(config.get("parallelism") or 16), clock=self.clock,
                           waiting_pods=waiting_pods, source=source)
            self.profiles[prof["schedulerName"]] = fw
        self.queue = SchedulingQueue(self.profiles, self.clock,
                                     config.get("podInitialBackoffSeconds", 1),
                                     config.get("podMaxBackoffSeconds", 10))
        for fw in self.profiles.values():
            fw.nominator = self.queue.nominator
            fw.activator = self.queue.activate
        self.cycles = SchedulingCycles()
        self.cycles.sched = self
        self._consecutive_errors: Dict[str, int] = {}
        self.explain = False  # record every filter status and score, for `schedharness explain`
        self.keep_records = True  # keep each cycle's statuses and scores (reports); off in bench
        self.tracked_pods: List[str] = []

    # ------------------------------------------------------------------------------------------
    # start-up: the informers' initial list
    # ------------------------------------------------------------------------------------------
    def start(self) -> None:
        for node in sorted(self.cluster.list("Node"), key=lambda n: n.name):
            self.cache.add_node(node)
        for pod in self.cluster.list("Pod"):
            if pod.node_name and informer_sees(pod):
                self.cache.add_pod(pod)
        for pod in self.cluster.list("Pod"):
            if not pod.node_name and pod.scheduler_name in self.profiles and informer_sees(pod):
                self.queue.add(pod)
        self.cluster.subscribe(self.on_event)

    # ------------------------------------------------------------------------------------------
    # event handlers (eventhandlers.go)
    # ------------------------------------------------------------------------------------------
    def on_event(self, kind: str, old: Optional[KubeObject], new: Optional[KubeObject]) -> None:
        if kind == "Pod":
            self._on_pod(old, new)
        elif kind == "Node":
            self._on_node(old, new)
        elif kind in _KIND_RESOURCE:
            if old is None:
                action = ActionType.Add
            elif new is None:
                action = ActionType.Delete
            else:
                action = ActionType.Update
            resource = _KIND_RESOURCE[kind]
            # addAllEventHandlers: an informer handler for this kind and action only when a
            # plugin of some profile registered it (unionedGVKs).
            if not self._registered_actions().get(resource, ActionType.NONE) & action:
                return
            self.queue.move_all_to_active_or_backoff(ClusterEvent(resource, action), old, new)

    def _registered_actions(self) -> Dict[EventResource, ActionType]:
        gvk = getattr(self, "_gvk_map", None)
        if gvk is None:
            gvk = {}
            for rows in getattr(self.queue, "hint_map", {}).values():
                for ev, _plugin, _fn in rows:
                    gvk[ev.resource] = gvk.get(ev.resource, ActionType.NONE) | ev.action_type
            self._gvk_map = gvk
        return gvk

    def _responsible_for(self, pod: Pod) -> bool:
        """responsibleForPod."""
        return pod.scheduler_name in self.profiles

    def _on_pod(self, old: Optional[Pod], new: Optional[Pod]) -> None:
        """The two Pod informer handlers, each behind a FilteringResourceEventHandler: assigned
        pods go to the cache, unassigned pods of this scheduler's profiles to the queue. An update
        that makes a pod pass or fail a filter is an Add or Delete for that handler (binding:
        an Add for the cache, then a Delete for the queue). The informer's field selector makes
        an update to phase Succeeded/Failed a Delete of the old object."""
        old = old if informer_sees(old) else None
        new = new if informer_sees(new) else None
        old_assigned = old is not None and bool(old.node_name)
        new_assigned = new is not None and bool(new.node_name)
        # scheduled pod cache
        if old_assigned and new_assigned:
            self._update_pod_in_cache(old, new)
        elif new_assigned:
            self._add_pod_to_cache(new)
        elif old_assigned:
            self._delete_pod_from_cache(old)
        # unscheduled pod queue
        old_q = old is not None and not old_assigned and self._responsible_for(old)
        new_q = new is not None and not new_assigned and self._responsible_for(new)
        if old_q and new_q:
            self._update_pod_in_scheduling_queue(old, new)
        elif new_q:
            self.queue.add(new)  # addPodToSchedulingQueue
        elif old_q:
            self._delete_pod_from_scheduling_queue(old)

    def _add_pod_to_cache(self, pod: Pod) -> None:
        self.cache.add_pod(pod)
        self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD, None, pod)

    def _update_pod_in_cache(self, old: Pod, new: Pod) -> None:
        self.cache.update_pod(old, new)
        for ev in pod_scheduling_properties_change(new, old):
            self.queue.move_all_to_active_or_backoff(ev, old, new)

    def _delete_pod_from_cache(self, pod: Pod) -> None:
        self.cache.remove_pod(pod)
        self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)

    def _update_pod_in_scheduling_queue(self, old: Pod, new: Pod) -> None:
        if old.resource_version == new.resource_version:
            return  # an update carrying identical objects (#96071)
        if self.cache.is_assumed_pod(new):
            return
        self.queue.update(old, new)
        if old.nominated_node_name and old.nominated_node_name != new.nominated_node_name:
            # as if the pod left its nominated node: lower or equal priority pods may fit now
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, old, None,
                                                     _le_priority(old.priority))

    def _delete_pod_from_scheduling_queue(self, pod: Pod) -> None:
        self.queue.delete(pod)
        fw = self.profiles.get(pod.scheduler_name)
        if fw is None:
            return
        if fw.reject_waiting_pod(pod.uid):
            # the pod was assumed (waiting at Permit) and leaves the cache
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)
        elif pod.nominated_node_name:
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None,
                                                     _le_priority(pod.priority))

    def _on_node(self, old: Optional[Node], new: Optional[Node]) -> None:
        if old is None:  # addNodeToCache
            self.cache.add_node(new)
            self.queue.move_all_to_active_or_backoff(EVENT_NODE_ADD, None, new)
        elif new is None:  # deleteNodeFromCache
            self.queue.move_all_to_active_or_backoff(EVENT_NODE_DELETE, old, None)
            try:
                self.cache.remove_node(old)
            except CacheError:
                pass  # "Scheduler cache RemoveNode failed" (logged upstream)
        else:  # updateNodeInCache: one move per event, in order
            self.cache.update_node(old, new)
            for ev in node_scheduling_properties_change(new, old):
                self.queue.move_all_to_active_or_backoff(ev, old, new)

    # ------------------------------------------------------------------------------------------
    # API writes the scheduler makes
    # ------------------------------------------------------------------------------------------
    def update_pod(self, pod: Pod, condition: Optional[Dict[str, str]], nominating_info) -> Optional[Pod]:
        """updatePod: patch the PodScheduled condition and, with ModeOverride, the
        nominatedNodeName, when either changes. The patch comes back through the informer as
        a pod update, which the queue runs through the queueing hints."""
        nnn_update = (nominating_info is not None and nominating_info[0] == "ModeOverride"
                      and (pod.nominated_node_name or "") != nominating_info[1])
        cond_update = False

        def patch(st: Dict[str, Any]) -> None:
            nonlocal cond_update
            if condition is not None:
                cond_update = update_pod_condition(st, condition)
            if nnn_update:
                if nominating_info[1]:
                    st["nominatedNodeName"] = nominating_info[1]
                else:
                    st.pop("nominatedNodeName", None)

        new = pod.with_status(patch)
        if not cond_update and not nnn_update:
            return None
        self.cluster.update(new)
        return new

    # ------------------------------------------------------------------------------------------
    # the run loop
    # ------------------------------------------------------------------------------------------
    def run_until_quiet(self, max_cycles: Optional[int] = None) -> None:
        """Schedule until the active and backoff queues are empty, no pod waits at Permit and no
        binding is in flight; time in backoff and at Permit passes virtually."""
        if max_cycles is None:
            max_cycles = 50 * (len(self.cluster.list("Pod")) + 10)
        cycles = 0
        while True:
            self._resolve_waiting()
            self.queue.flush_backoff_completed()
            if self.queue.active or self.queue.backoff:
                head = self._peek() if self._consecutive_errors else None
                if head is not None and self._consecutive_errors.get(head.pod.key, 0) >= MAX_CONSECUTIVE_ERRORS:
                    # kube-scheduler would retry it with backoff forever: leave it pending
                    self.queue.park(head)
                    continue
                self.cycles.schedule_one()
                self._count_errors()
                cycles += 1
                if cycles > max_cycles:
                    raise UserError(f"the scheduler did not become quiet after {max_cycles} scheduling "
                                    f"cycles (pods keep being requeued)")
                continue
            # nothing to pop: let virtual time pass to the next Permit deadline or the release
            # of a pod from the error backoffQ, whichever comes first
            times = [t for t in (self._next_waiting_deadline(), self.queue.next_error_backoff_release())
                     if t is not None]
            if times:
                self.clock.advance_to(min(times))
                continue
            break

    def _peek(self):
        """The pod the next cycle pops (activeQ's head, else backoffQ's: PopFromBackoffQ)."""
        if self.queue.active:
            return self.queue.active[0].pinfo
        if self.queue.backoff:
            return self.queue.backoff[0][2]
        return None

    def _count_errors(self) -> None:
        for key in self.errors:
            self._consecutive_errors[key] = self._consecutive_errors.get(key, 0) + 1
        self.errors.clear()

    def _next_waiting_deadline(self) -> Optional[float]:
        ds = []
        for _, fw, _, assumed, _ in self.waiting:
            wp = fw.waiting_pods.get(assumed.pod.uid)
            d = wp.next_deadline() if wp is not None else None
            if d is not None:
                ds.append(d)
        return min(ds) if ds else None

    def _resolve_waiting(self) -> None:
        """Run the binding cycle of pods whose Permit wait ended (allowed, rejected, timed out)."""
        if not self.waiting:
            return
        now = self.clock.now()
        ready, still = [], []
        for item in self.waiting:
            fw, assumed = item[1], item[3]
            wp = fw.waiting_pods.get(assumed.pod.uid)
            if wp is not None:
                wp.expire(now)
                if not wp.done:
                    still.append(item)
                    continue
            ready.append(item)
        self.waiting = still
        for state, fw, result, assumed, record in ready:
            status = self.cycles.binding_cycle(state, fw, result, assumed)
            if status is not None and not status.is_success():
                self.cycles.handle_binding_cycle_error(state, fw, assumed, result, status, record)
