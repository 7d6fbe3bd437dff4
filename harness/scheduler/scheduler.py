"""The scheduler (scheduler.go + eventhandlers.go) over a simulated cluster, in virtual time."""

from __future__ import annotations

import math

import copy
import heapq
import itertools
import random
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ..api.objects import KubeObject, Node, Pod, update_pod_condition
from ..cluster import Cluster
from ..apierrors import API_ERRORS
from ..errors import UserError
from ..gcpause import freeze_survivors
from ..framework.custom_resources import custom_resources
from ..framework.runtime import Framework
from ..framework.types import ActionType, ClusterEvent, EventResource
from ..versions import DEFAULT as DEFAULT_FEATURES, Features
from .cache import Cache, CacheError
from .extender import HTTPExtender, apply_ignored_resources, build_extenders, ignored_extended_resources
from .events import node_scheduling_properties_change, pod_scheduling_properties_change
from .queue import (EVENT_ASSIGNED_POD_ADD, EVENT_ASSIGNED_POD_DELETE, EVENT_UNSCHEDULED_POD_ADD,
                    UNSCHEDULABLE_Q, SchedulingQueue)
from .schedule_one import CycleRecord, SchedulingCycles
from .snapshot import Snapshot
from .workload_manager import WorkloadManager

MAX_CONSECUTIVE_ERRORS = 3
# an until-quiet run that has waited for this many timers per pod (plus ten) gives up: the
# pods' own attempts keep the scheduler busy forever (for instance a DRA claim allocated, its
# binding timing out, the claim deallocated, allocated again); kube-scheduler retries them forever
QUIET_WAITS_PER_POD = 100
# an `advance` may make this many scheduling attempts per pod (plus ten) before it is refused: a
# pod that stays unschedulable is retried about every 5m30s (podMaxInUnschedulablePodsDuration,
# then the 30-second flush), 1000 attempts in about 3.8 days of virtual time; an advance of
# 100000h would retry it a million times (minutes of CPU), as kube-scheduler would
ADVANCE_ATTEMPTS_PER_POD = 1000


def quiet_wait_limit(cluster) -> int:
    """How many timers an until-quiet run waits for before it gives up."""
    return QUIET_WAITS_PER_POD * (len(cluster.list("Pod")) + 10)


def never_quiet(schedulers, limit: int) -> UserError:
    """The error of an until-quiet run that never became quiet, naming the pods behind it."""
    top = sorted((a for s in schedulers for a in s.most_attempted()), key=lambda kv: -kv[1])[:3]
    pods = ", ".join(f"{key} ({count} attempts)" for key, count in top)
    now = schedulers[0].clock.now() if schedulers else 0.0
    return UserError(f"the scheduler did not become quiet: it waited for {limit} timers, up to virtual "
                     f"time {now:g}s, while pods kept being retried ({pods}); kube-scheduler would retry "
                     f"them forever, so this case has no end state (change it so that they schedule or "
                     f"fail for good)")


def too_long_advance(sched, limit: int, start: float, until: float) -> UserError:
    """The error of an advance that would retry pods more often than ADVANCE_ATTEMPTS_PER_POD."""
    top = sorted(sched.most_attempted(), key=lambda kv: -kv[1])
    pods = ", ".join(f"{key} ({count} attempts)" for key, count in top)
    return UserError(f"this advance of {until - start:g}s would make more than {limit} scheduling attempts "
                     f"(by virtual time {sched.clock.now() - start:g}s into it, pods kept being retried: "
                     f"{pods}); kube-scheduler would retry them all that time: advance less, or let them "
                     f"schedule")


UNSCHEDULABLE_FLUSH_PERIOD = 30.0  # PriorityQueue.Run: wait.Until(flushUnschedulablePodsLeftover, 30s)

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


def node_update_action(old: Node, new: Node, features=None) -> ActionType:
    """The actions of NodeSchedulingPropertiesChange(new, old), ORed (NONE when the update is
    no event). The handler moves pods once per event, in order (node_scheduling_properties_change)."""
    a = ActionType.NONE
    for ev in node_scheduling_properties_change(new, old, features):
        a |= ev.action_type
    return a


def terminated(pod: KubeObject) -> bool:
    """A pod in phase Succeeded or Failed, which kube-scheduler's pod informer never lists."""
    return pod.status.get("phase") in ("Succeeded", "Failed")


def _le_priority(priority: int):
    """getLEPriorityPreCheck: only pods of lower or equal priority."""
    return lambda p: p.priority <= priority


class Scheduler:
    """One kube-scheduler: profiles (frameworks), cache, queue, and the event handlers."""

    event_seq = 0  # cluster events received (a pod in error is retried after one)
    workload_manager: Optional[WorkloadManager] = None  # GenericWorkload on
    gang_scheduling = False  # the GangScheduling gate

    def __init__(self, config: Mapping[str, Any], registry: Mapping[str, type], cluster: Cluster,
                 seed: int = 0, source: str = "config", clock=None, name: str = "",
                 features: Optional[Features] = None, extender_handlers: Optional[Mapping[str, Any]] = None):
        self.config = config
        self.features: Features = features if features is not None else DEFAULT_FEATURES
        self.cluster = cluster
        self.clock = clock if clock is not None else VirtualClock()
        self.name = name  # the replica (process) this scheduler runs in
        # the case's virtual time (this process's clock may run at another rate)
        self.virtual_time = getattr(self.clock, "global_now", None) or self.clock.now
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.rng = random.Random(seed)
        # DRA share IDs (GenerateShareID draws random UUIDs): a stream of its own, read by the
        # DynamicResources plugin through its handle (share_id_rng)
        self.share_id_rng = random.Random(seed + 2)
        self.next_start_node_index = 0
        self.percentage_of_nodes_to_score = int(config.get("percentageOfNodesToScore") or 0)
        self.records: Dict[str, List[CycleRecord]] = {}
        self.waiting: List[Tuple[Any, Framework, Any, Any, CycleRecord]] = []
        if ignored_extended_resources(config):
            config = copy.deepcopy(dict(config))
            apply_ignored_resources(config, source)
            self.config = config
        # buildExtenders: the configuration's extenders, ignorable ones last (a case's handler
        # answers an extender in place of HTTP)
        self.extenders: List[HTTPExtender] = build_extenders(config, extender_handlers, source)
        # kind -> CustomResource: the CRDs the plugin packages declared (dynamic informers)
        self.custom_resources = custom_resources(registry)
        # scheduler.New: a workload manager with GenericWorkload on (v1.35 on)
        self.workload_manager: Optional[WorkloadManager] = (
            WorkloadManager(self.features) if self.features.get("GenericWorkload", False) else None)
        self.gang_scheduling = self.features.get("GangScheduling", False)
        if self.workload_manager is not None and self.features.version.minor >= 36:
            self.cache.pod_groups = self.workload_manager  # the cache's pod group states
        self.profiles: Dict[str, Framework] = {}
        waiting_pods: Dict[str, Any] = {}
        pods_in_pre_bind: Dict[str, Any] = {}  # podsInPreBind (v1.36), as waitingPods shared
        for prof in config["profiles"]:
            fw = Framework(prof, registry, snapshot=self.snapshot, cluster=cluster,
                           parallelism=int(config.get("parallelism") or 16), clock=self.clock,
                           waiting_pods=waiting_pods, pods_in_pre_bind=pods_in_pre_bind,
                           source=source, features=self.features,
                           extenders=self.extenders, workload_manager=self.workload_manager)
            fw.share_id_rng = self.share_id_rng
            self.profiles[prof["schedulerName"]] = fw
        self.queue = SchedulingQueue(self.profiles, self.clock,
                                     config.get("podInitialBackoffSeconds", 1),
                                     config.get("podMaxBackoffSeconds", 10))
        self.queue.features = self.features
        for fw in self.profiles.values():
            fw.nominator = self.queue.nominator
            fw.activator = self.queue.activate
            fw.run_async = self.go
        self.cycles = SchedulingCycles()
        self.cycles.sched = self
        self._failed_at_event: Dict[str, int] = {}
        self.next_flush_tick = UNSCHEDULABLE_FLUSH_PERIOD  # wait.Until ran it at 0 already
        self.attempts: Dict[str, int] = {}  # pod uid -> scheduling attempts (the queue's count)
        self.bindings_in_flight: List[Tuple[float, int, Any]] = []  # (resume at, seq, task)
        self._binding_seq = itertools.count()
        self._binding_of_pod: Dict[str, Any] = {}  # pod uid -> its waiting binding goroutine
        self._pod_of_binding: Dict[Any, str] = {}  # and back
        # record every filter status and score, for `schedharness explain`: True for every pod,
        # or the keys of the pods to record (explains)
        self.explain = False
        self.keep_records = True  # keep each cycle's statuses and scores (reports); off in bench
        # a record of a pod not explained keeps only its attempt history once its cycle ends
        # (cycle_records); False: every record whole (tests comparing paths node by node)
        self.compact_records = True
        # diff, run --html: called with an explained record and the pod's records once its cycle
        # ends, to keep its per-node tables as columns (harness.case.attempt_columns)
        self.record_columns: Optional[Callable[[Any, List[Any]], None]] = None
        # `bench CASE`: called with ScheduleOne instead of calling it (times each attempt)
        self.attempt_timer: Optional[Callable[[Callable[[], bool]], Any]] = None
        self.tracked_pods: List[str] = []
        # v1.36 workload-aware preemptions, in order (podgroup_preemption.group_preemption_event
        # with `time` and the members' `attempts`): reports show them as group events
        self.group_preemptions: List[Dict[str, Any]] = []

    # ------------------------------------------------------------------------------------------
    # start-up: the informers' initial list
    # ------------------------------------------------------------------------------------------
    def start_queue(self) -> None:
        """sched.Run -> SchedulingQueue.Run: the flush ticks count from now (the process starts
        scheduling when it becomes the leader)."""
        self.next_flush_tick = self.clock.now() + UNSCHEDULABLE_FLUSH_PERIOD

    def full_record(self, pod) -> bool:
        """Does this pod's cycle record keep every node's status, the feasible nodes and the
        scores past its cycle?"""
        return self.keep_records and (not self.compact_records or self.explains(pod))

    def explains(self, pod) -> bool:
        """Are explain's records (every node's filter statuses, the score detail) kept for this pod?"""
        e = self.explain
        return bool(e) and (e is True or pod.key in e)

    def start(self) -> None:
        for node in sorted(self.cluster.list("Node"), key=lambda n: n.name):
            self.cache.add_node(node)
        pods = [p for p in self.cluster.list("Pod") if not terminated(p)]
        wm = self.workload_manager
        for pod in pods:
            if pod.node_name:
                if wm is not None:
                    wm.add_pod(pod)
                self.cache.add_pod(pod)
        for pod in pods:
            if not pod.node_name:
                if wm is not None:
                    wm.add_pod(pod)
                if pod.scheduler_name in self.profiles:
                    self._add_pod_to_scheduling_queue(pod)
        self.cluster.subscribe(self.on_event)

    # ------------------------------------------------------------------------------------------
    # event handlers (eventhandlers.go)
    # ------------------------------------------------------------------------------------------
    def on_event(self, kind: str, old: Optional[KubeObject], new: Optional[KubeObject]) -> None:
        self.event_seq += 1
        if kind == "Pod":
            # the pod informer's field selector status.phase!=Succeeded,status.phase!=Failed:
            # a pod that finishes leaves the informer as a deletion
            old = None if old is not None and terminated(old) else old
            new = None if new is not None and terminated(new) else new
            if old is not None or new is not None:
                self._on_pod(old, new)
        elif kind == "Node":
            self._on_node(old, new)
        else:
            resource = _KIND_RESOURCE.get(kind)
            if kind in ("Workload", "PodGroup"):
                # the Workload API's informers (GenericWorkload on): v1.35's Workload, v1.36's
                # PodGroup; an object of a plugin's own group of that kind is its custom resource
                obj = new if new is not None else old
                if obj.api_version.startswith("scheduling.k8s.io/"):
                    if self.workload_manager is None:
                        return
                    resource = EventResource.Workload if kind == "Workload" else EventResource.PodGroup
            if resource is None:
                cr = self.custom_resources.get(kind)
                if cr is None:
                    return  # no informer of this scheduler lists the kind
                # addAllEventHandlers' default branch: a dynamic informer for the GVK
                # `<plural>.<version>.<group>` a plugin registered (at least two dots)
                resource = cr.event_resource
                if resource.count(".") < 2:
                    return
            if old is None:
                action = ActionType.Add
            elif new is None:
                action = ActionType.Delete
            else:
                action = ActionType.Update
            # addAllEventHandlers: an informer handler for this kind and action only when a
            # plugin of some profile registered it (unionedGVKs; buildEvtResHandler).
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

    def has_scoring(self, fw: Framework) -> bool:
        """hasScoring: Score plugins in the profile, or a prioritizing extender."""
        return fw.has_score_plugins() or any(e.is_prioritizer() for e in self.extenders)

    def has_extender_filters(self) -> bool:
        """hasExtenderFilters."""
        return any(e.is_filter() for e in self.extenders)

    def _responsible_for(self, pod: Pod) -> bool:
        """responsibleForPod."""
        return pod.scheduler_name in self.profiles

    def _on_pod(self, old: Optional[Pod], new: Optional[Pod]) -> None:
        """The two Pod informer handlers, each behind a FilteringResourceEventHandler: assigned
        pods go to the cache, unassigned pods of this scheduler's profiles to the queue. An update
        that makes a pod pass or fail a filter is an Add or Delete for that handler (binding:
        an Add for the cache, then a Delete for the queue)."""
        old_assigned = old is not None and bool(old.node_name)
        new_assigned = new is not None and bool(new.node_name)
        wm = self.workload_manager
        if wm is not None:  # before the cache and the queue
            if old is None:
                wm.add_pod(new)
            elif new is None:
                wm.delete_pod(old)
            else:
                wm.update_pod(old, new)
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
            self._add_pod_to_scheduling_queue(new)
        elif old_q:
            self._delete_pod_from_scheduling_queue(old, in_binding=new_assigned)

    def _add_pod_to_scheduling_queue(self, pod: Pod) -> None:
        """addPodToSchedulingQueue: with GangScheduling on, the new pod may complete a gang
        (v1.35 on: MoveAllToActiveOrBackoffQueue(UnscheduledPodAdd))."""
        self.queue.add(pod)
        if self.gang_scheduling:
            self.queue.move_all_to_active_or_backoff(EVENT_UNSCHEDULED_POD_ADD, None, pod)

    def _add_pod_to_cache(self, pod: Pod) -> None:
        self.cache.add_pod(pod)
        self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD, None, pod)

    def _update_pod_in_cache(self, old: Pod, new: Pod) -> None:
        self.cache.update_pod(old, new)
        for ev in pod_scheduling_properties_change(new, old, self.features):
            self.queue.move_all_to_active_or_backoff(ev, old, new)

    def _delete_pod_from_cache(self, pod: Pod) -> None:
        self.cache.remove_pod(pod)
        self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)

    def _update_pod_in_scheduling_queue(self, old: Pod, new: Pod) -> None:
        if old.resource_version == new.resource_version:
            return  # an update carrying identical objects (#96071)
        if self.cache.is_assumed_pod(new):
            if (self.features.has("AssumedPodDeletionHandling") and new.deletion_timestamp
                    and not old.deletion_timestamp):
                # "Assumed pod deletion has started" (v1.35 on)
                self._handle_assumed_pod_deletion(new)
            return
        self.queue.update(old, new)
        if old.nominated_node_name and old.nominated_node_name != new.nominated_node_name:
            # as if the pod left its nominated node: lower or equal priority pods may fit now
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, old, None,
                                                     _le_priority(old.priority))

    def _delete_pod_from_scheduling_queue(self, pod: Pod, in_binding: bool = False) -> None:
        """deletePodFromSchedulingQueue. `in_binding`: the pod left the queue's informer filter
        because it was bound."""
        self.queue.delete(pod)
        if self.features.has("AssumedPodDeletionHandling"):
            # v1.35: a binding is no removal (no moves); an assumed pod's deletion frees what it
            # held at once (handleAssumedPodDeletion)
            if in_binding:
                return
            if self.cache.is_assumed_pod(pod):
                self._handle_assumed_pod_deletion(pod)
            elif pod.nominated_node_name:
                self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None,
                                                         _le_priority(pod.priority))
            return
        # v1.34: as the queue handler's OnDelete, bindings included
        fw = self.profiles.get(pod.scheduler_name)
        if fw is None:
            return
        if fw.reject_waiting_pod(pod.uid):
            # the pod was assumed (waiting at Permit) and leaves the cache
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)
        elif pod.nominated_node_name:
            self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None,
                                                     _le_priority(pod.priority))

    def _handle_assumed_pod_deletion(self, pod: Pod) -> None:
        """handleAssumedPodDeletion (v1.35 on): a pod waiting at Permit is rejected (its binding
        cycle fails and cleans up); one in PreBind or Bind is forgotten now (its binding will
        fail); then pods move as for an assigned pod's deletion."""
        assumed = self.cache.get_pod(pod)
        if assumed is None:
            return  # "Assumed pod was already forgotten"
        fw = self.profiles.get(assumed.scheduler_name)
        if fw is None:
            return
        if not fw.reject_waiting_pod(assumed.uid):
            self.cache.forget_pod(assumed)
        self.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, assumed, None)

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
            for ev in node_scheduling_properties_change(new, old, self.features):
                self.queue.move_all_to_active_or_backoff(ev, old, new)

    # ------------------------------------------------------------------------------------------
    # API writes the scheduler makes
    # ------------------------------------------------------------------------------------------
    def update_pod(self, pod: Pod, condition: Optional[Dict[str, str]], nominating_info,
                   current: Optional[Pod] = None) -> Optional[Pod]:
        """updatePod: patch the PodScheduled condition and, with ModeOverride, the
        nominatedNodeName, when either changes. What changes is judged on `pod`, the scheduler's
        copy (util.PatchPodStatus sends the difference between its status and the new one); the
        patch lands on `current`, the API server's object (default: `pod`). The patch comes
        back through the informer as a pod update, which the queue runs through the queueing
        hints."""
        nnn_update = (nominating_info is not None and nominating_info[0] == "ModeOverride"
                      and (pod.nominated_node_name or "") != nominating_info[1])
        cond_update = False
        if condition is not None:
            probe = {"conditions": [dict(c) for c in pod.status.get("conditions") or []]}
            cond_update = update_pod_condition(probe, condition)
        if not cond_update and not nnn_update:
            return None

        def patch(st: Dict[str, Any]) -> None:
            if cond_update:
                update_pod_condition(st, condition)
            if nnn_update:
                if nominating_info[1]:
                    st["nominatedNodeName"] = nominating_info[1]
                else:
                    st.pop("nominatedNodeName", None)

        target = current if current is not None else pod
        new = target.with_status(patch)
        if new.status == target.status:
            return None  # a patch that changes nothing on the server: no write, no event
        try:
            self.cluster.update(new)
        except API_ERRORS:
            return None  # "Error updating pod" is logged upstream; the informer has the truth
        return new

    def queue_state(self, pod: Pod) -> str:
        """Where a pod is (CASE_FORMAT.md's `queue`): bound, waiting (at Permit), active,
        backoff, gated (held by a PreEnqueue plugin) or unschedulable; "none" for a pod in no
        queue (no profile serves its schedulerName, or it finished)."""
        if pod.node_name:
            return "bound"
        uid = pod.uid
        if any(uid in fw.waiting_pods for fw in self.profiles.values()):
            return "waiting"
        where = self.queue.in_queue.get(uid)
        if where == UNSCHEDULABLE_Q:
            pinfo = self.queue.unschedulable.get(uid)
            return "gated" if pinfo is not None and pinfo.gated() else "unschedulable"
        if where is not None:
            return where
        return "active" if uid in self.queue.in_flight else "none"

    # ------------------------------------------------------------------------------------------
    # the run loop
    # ------------------------------------------------------------------------------------------
    def run_until_quiet(self, max_cycles: Optional[int] = None) -> None:
        """Schedule until the active and backoff queues are empty, no pod waits at Permit and no
        binding is in flight; time in backoff and at Permit passes virtually."""
        self.run(None, max_cycles)

    def advance(self, duration: float) -> None:
        """Let `duration` seconds of virtual time pass: every timer due in that window runs in
        time order (backoff flushes, Permit timeouts, the 30-second unschedulable flush), then
        the scheduler runs until quiet."""
        self.run(self.clock.now() + duration)
        self.run(None)

    def run(self, until: Optional[float] = None, max_cycles: Optional[int] = None,
            done: Optional[Callable[[], bool]] = None) -> None:
        """The scheduling loop in virtual time. With `until`, time passes up to `until`, every
        timer firing on the way; without, only as far as pods in backoff or at Permit need (a
        pod whose attempts keep ending in an error is waited for only after something changed:
        kube-scheduler would retry it forever, at most podMaxBackoffSeconds apart). `done`, when
        given, is asked before each step and ends the loop early (what a caller waits for)."""
        if max_cycles is None:
            max_cycles = 50 * (len(self.cluster.list("Pod")) + 10)
        cycles = 0  # cycles at one virtual instant
        waits, wait_limit = 0, (quiet_wait_limit(self.cluster) if until is None else None)
        attempts, attempt_limit = 0, (ADVANCE_ATTEMPTS_PER_POD * (len(self.cluster.list("Pod")) + 10)
                                      if until is not None else None)
        start = self.clock.now()
        while True:
            if done is not None and done():
                break
            if self.schedule_ready():
                cycles += 1
                attempts += 1
                if attempt_limit is not None and attempts > attempt_limit:
                    raise too_long_advance(self, attempt_limit, start, until)
                if cycles > max_cycles:
                    raise UserError(f"the scheduler did not become quiet after {max_cycles} scheduling "
                                    f"cycles at virtual time {self.clock.now():g}s (pods keep being requeued"
                                    f"{self._retry_loop_detail()})")
                continue
            target = self.next_timer(quiet=until is None)
            if until is not None:
                target = until if target is None else min(target, until)
            if target is None:
                break
            if self.next_flush_tick <= target:
                self._pass_idle_flush_ticks(target)
            if self.next_flush_tick <= target:
                self.clock.advance_to(self.next_flush_tick)
                self.fire_flush_tick()
                cycles = 0
                continue
            if until is not None and self.clock.now() >= until:
                break
            waits += 1
            if wait_limit is not None and waits > wait_limit:
                raise never_quiet([self], wait_limit)
            self.clock.advance_to(target)
            cycles = 0

    def _retry_loop_detail(self) -> str:
        """What keeps a scheduler busy at one instant: the pods retried most, and when they
        belong to a pod group (v1.36), the loop kube-scheduler runs forever there."""
        top = self.most_attempted()
        if not top:
            return ""
        pods = ", ".join(f"{key} ({count} attempts)" for key, count in top)
        groups = []
        if self.workload_manager is not None and self.features.version.minor >= 36:
            keys = {p.key: p for p in self.cluster.list("Pod")}
            for key, _ in top:
                pod = keys.get(key)
                g = (pod.spec.get("schedulingGroup") or {}).get("podGroupName") if pod is not None else None
                if g and f"{pod.namespace}/{g}" not in groups:
                    groups.append(f"{pod.namespace}/{g}")
        if not groups:
            return f": {pods}"
        return (f": {pods}; pod group {', '.join(groups)} is retried at once after every failed pod group "
                f"cycle, with no backoff: GangScheduling's Permit activates the members still unplaced and "
                f"scheduleOnePodGroup pops every member again (PopSpecificPod), so kube-scheduler v1.36 "
                f"repeats the cycle forever; change the case so that the group fits or some member stays "
                f"out of the queue")

    def most_attempted(self, n: int = 3) -> List[Tuple[str, int]]:
        """The pods with the most scheduling attempts, as (namespace/name, attempts)."""
        top = sorted(self.attempts.items(), key=lambda kv: -kv[1])[:n]
        keys = {p.uid: p.key for p in self.cluster.list("Pod")}
        return [(keys.get(uid, uid), count) for uid, count in top]

    def schedule_ready(self) -> bool:
        """What is due at the current instant: binding goroutines whose wait is over, Permit
        waits that ended, the backoffQ flush, then one scheduling cycle if a pod can be popped.
        Returns whether a scheduling cycle ran."""
        self._resume_bindings()
        self._resolve_waiting()
        self.queue.flush_backoff_completed()
        if self.queue.active or self.queue.backoff:
            if self.attempt_timer is None:
                self.cycles.schedule_one()
            else:
                self.attempt_timer(self.cycles.schedule_one)
            freeze_survivors()
            return True
        return False

    def next_timer(self, quiet: bool) -> Optional[float]:
        """When (this scheduler's clock) the next timer that work waits for fires: a Permit
        deadline, an error backoff release, a binding goroutine's wait; None when nothing waits.
        `quiet`: leave out pods whose attempts keep ending in an error with nothing changed."""
        retry = self._worth_retrying if quiet else None
        times = [t for t in (self._next_waiting_deadline(), self.queue.next_error_backoff_release(retry),
                             self.bindings_in_flight[0][0] if self.bindings_in_flight else None)
                 if t is not None]
        return min(times) if times else None

    def _pass_idle_flush_ticks(self, target: float) -> None:
        """The ticks of flushUnschedulablePodsLeftover due by `target` that would move no pod
        (none has been in the unschedulable pool longer than podMaxInUnschedulablePodsDuration
        by then) are passed over, the next one kept on wait.Until's 30-second grid: the same
        outcome as firing them, without ticking through 100000h of virtual time 30 s at a time."""
        pool = self.queue.unschedulable
        first_due = (min(p.timestamp for p in pool.values()) + self.queue.max_in_unschedulable
                     if pool else math.inf)
        limit = min(target, first_due)  # a tick at t moves a pod only when t > first_due
        if self.next_flush_tick <= limit:
            skipped = math.floor((limit - self.next_flush_tick) / UNSCHEDULABLE_FLUSH_PERIOD) + 1
            self.next_flush_tick += skipped * UNSCHEDULABLE_FLUSH_PERIOD

    def fire_flush_tick(self) -> None:
        """flushUnschedulablePodsLeftover, on wait.Until's 30-second period from the start."""
        self.next_flush_tick += UNSCHEDULABLE_FLUSH_PERIOD
        self.queue.flush_unschedulable_pods_leftover()

    def _worth_retrying(self, pinfo) -> bool:
        """Whether the until-quiet loop waits for this error-backoff pod's release: during its
        first few errors, after a binding failure a case injected (there are finitely many), or
        when a cluster event came since its last failure."""
        if pinfo.consecutive_errors_count < MAX_CONSECUTIVE_ERRORS:
            return True
        if pinfo.pod.key in getattr(self.cluster, "injected_failures", ()):
            return True
        return self.event_seq != self._failed_at_event.get(pinfo.pod.uid)

    def note_error(self, pod: Pod) -> None:
        """A scheduling attempt of `pod` ended in an error (no rejecting plugin), after the
        scheduler's own status patch."""
        self._failed_at_event[pod.uid] = self.event_seq

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
            self.start_binding(self.cycles.binding_goroutine(state, fw, result, assumed, record,
                                                             pre_flight=False), assumed.pod.uid)

    # ------------------------------------------------------------------------------------------
    # binding goroutines, in virtual time
    # ------------------------------------------------------------------------------------------
    def go(self, fn) -> None:
        """`go fn()` for the plugins' goroutines (preemption's victim deletions): it runs once
        the current scheduling cycle has ended, at the same virtual instant."""
        def task():
            fn()
            return
            yield  # a generator
        heapq.heappush(self.bindings_in_flight, (self.clock.now(), next(self._binding_seq), task()))

    def start_binding(self, task, pod_uid: Optional[str] = None) -> None:
        """`go bindingCycle(...)`: run it until it waits (a blocking PreBind) or ends. With
        `pod_uid`, wake_binding can resume it before its wait is over."""
        try:
            delay = next(task)
        except StopIteration:
            return  # done without waiting (the usual case): nothing to wake
        if pod_uid is not None:
            self._binding_of_pod[pod_uid] = task
            self._pod_of_binding[task] = pod_uid
        self._push_binding(task, delay)

    def _step_binding(self, task) -> None:
        try:
            delay = next(task)
        except StopIteration:
            uid = self._pod_of_binding.pop(task, None)
            if uid is not None and self._binding_of_pod.get(uid) is task:
                del self._binding_of_pod[uid]
            return
        self._push_binding(task, delay)

    def _push_binding(self, task, delay) -> None:
        heapq.heappush(self.bindings_in_flight, (self.clock.now() + max(0.0, float(delay)),
                                                 next(self._binding_seq), task))

    def wake_binding(self, pod_uid: str) -> None:
        """Resume a pod's waiting binding goroutine now (its PreBind context was cancelled,
        which a Go plugin waiting on ctx.Done() sees at once)."""
        task = self._binding_of_pod.get(pod_uid)
        if task is None:
            return
        now = self.clock.now()
        for i, (at, seq, t) in enumerate(self.bindings_in_flight):
            if t is task:
                if at > now:
                    self.bindings_in_flight[i] = (now, seq, t)
                    heapq.heapify(self.bindings_in_flight)
                return

    def _resume_bindings(self) -> None:
        """Resume the binding goroutines whose wait is over, in the order they are due."""
        now = self.clock.now()
        while self.bindings_in_flight and self.bindings_in_flight[0][0] <= now:
            _, _, task = heapq.heappop(self.bindings_in_flight)
            self._step_binding(task)
