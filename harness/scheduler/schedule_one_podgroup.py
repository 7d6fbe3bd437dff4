"""The pod group scheduling cycle of v1.36 (schedule_one_podgroup.go): a popped pod of a pod group
(``spec.schedulingGroup``, GenericWorkload on) brings the group's other queued pods along
(PopSpecificPod) and the group is placed in one cycle: each pod filtered and scored on the same
snapshot, assumed and Reserved so that the next sees it, Permit checked; then every assumption is
undone, and only when some pod's Permit allowed the group do the pods go to their own binding
cycles (prepareForBindingCycle). A group that does not fit sends every pod back to the queue.

Mixed into SchedulingCycles (schedule_one.py), whose pieces it reuses.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Tuple

from ..framework.cycle_state import POD_GROUP_MEMBERS_KEY, CycleState
from ..framework.placement import AlgorithmResult, PodGroupAlgorithmResult
from ..framework.status import Code, Status
from ..framework.types import QueuedPodInfo
from .cycle_records import CycleRecord, ScheduleResult

# errPodGroupUnschedulable
ERR_POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"


class PodGroupError(Exception):
    """An error of the pod group cycle, worded as upstream's fmt.Errorf."""


def _unschedulable(*reasons: str) -> Status:
    return Status(Code.Unschedulable, *reasons, err=PodGroupError(ERR_POD_GROUP_UNSCHEDULABLE))


class PodGroupCycles:
    """scheduleOnePodGroup and its helpers (v1.36.3)."""

    # the pod group algorithm runs without PostFilter (runWithoutPostFilters)
    pod_group_skip_post_filters = False

    # ------------------------------------------------------------------------------------------
    def schedule_one_pod_group(self, pinfo: QueuedPodInfo) -> None:
        """ScheduleOne's branch for a pod of a pod group: podGroupInfoForPod, then
        scheduleOnePodGroup."""
        s = self.sched
        pinfos = self.pod_group_info_for_pod(pinfo)
        if pinfos is None:
            fw = s.profiles[pinfo.pod.scheduler_name]
            record = self.new_record(pinfo)
            err = PodGroupError("error while retrieving pod group state: "
                                "internal pod group state doesn't exist for a pod's pod group")
            self.handle_scheduling_failure(fw, pinfo, Status(Code.Error, err=err), None, record)
            return
        records = [self.new_record(p) for p in pinfos]
        # frameworkForPodGroup: one schedulerName for the whole group
        names = [p.pod.scheduler_name for p in pinfos]
        fw = s.profiles.get(names[0])
        if any(n != names[0] for n in names):
            err = PodGroupError(f"all pods in a single pod group should have the same .spec.schedulerName "
                                f"set, got: {names[1]!r} and {names[0]!r}".replace("'", '"'))
            for p, r in zip(pinfos, records):
                self.handle_scheduling_failure(s.profiles[p.pod.scheduler_name], p, Status(Code.Error, err=err),
                                               CLEAR, r)
            return
        # skipPodGroupPodSchedule: pods being deleted or already assumed leave the group
        kept = []
        for p, r in zip(pinfos, records):
            if p.pod.deletion_timestamp or s.cache.is_assumed_pod(p.pod):
                s.queue.done(p.pod.uid)
                continue
            kept.append((p, r))
        if not kept:
            return
        self.pod_group_cycle(fw, kept)

    def pod_group_info_for_pod(self, pinfo: QueuedPodInfo) -> Optional[List[QueuedPodInfo]]:
        """podGroupInfoForPod: the popped pod and the group's other unscheduled pods, each popped
        from the queue (PopSpecificPod), by priority then initial attempt time."""
        s = self.sched
        info = s.workload_manager.pod_group_info(pinfo.pod)
        if info is None:
            return None
        out = [pinfo]
        for pod in info.unscheduled_pods():
            if pod.name == pinfo.pod.name:
                continue
            popped = s.queue.pop_specific_pod(pod)
            if popped is not None:
                out.append(popped)
        out.sort(key=lambda p: (-p.pod.priority, p.initial_attempt_timestamp or 0.0))
        return out

    # ------------------------------------------------------------------------------------------
    def pod_group_cycle(self, fw, group: List[Tuple[QueuedPodInfo, object]]) -> None:
        """podGroupCycle: the pod group algorithm on one snapshot; with WorkloadAwarePreemption
        an Unschedulable group runs workload-aware preemption (success: the group waits on it;
        an error replaces the status; otherwise its message is appended); then the result is
        submitted."""
        # the pod group cycle's CycleState (framework.NewCycleState() in scheduleOnePodGroup),
        # shared by every pod's state of this cycle, its placements and preemption's dry runs
        self.pod_group_cycle_state = pg_state = CycleState()
        pg_state.write(POD_GROUP_MEMBERS_KEY, {p.pod.uid for p, _ in group})
        result = self.pod_group_scheduling_algorithm(fw, group)
        if (self.sched.features.get("WorkloadAwarePreemption", False) and result.status is not None
                and result.status.code == Code.Unschedulable):
            status = self.run_workload_aware_preemption(fw, group)
            if status is None or status.is_success():
                result.waiting_on_preemption = True
                self._record_group_preemption(fw, group)
            elif status.code == Code.Error:
                result.status = status
            else:
                result.status.append_reason(status.message())  # AppendReason(status.String())
        self.submit_pod_group_algorithm_result(fw, group, result)

    def _record_group_preemption(self, fw, group) -> None:
        """For reports: the group event of a successful workload-aware preemption (which
        victims, for which PodGroup), with the virtual time and each member's attempt."""
        dp = fw.plugins_map.get("DefaultPreemption")
        event = getattr(getattr(dp, "pod_group_evaluator", None), "last_preemption", None)
        if event is None:
            return
        s = self.sched
        entry = dict(event, time=s.virtual_time(),
                     attempts={p.pod.key: p.attempts for p, _ in group})
        s.group_preemptions.append(entry)

    def run_workload_aware_preemption(self, fw, group) -> Optional[Status]:
        """runWorkloadAwarePreemption: the PodGroupPostFilter plugin (DefaultPreemption) with the
        pod group algorithm run without PostFilter as its feasibility check, on NodeInfos
        restored afterwards (BackupSnapshot and its restore function)."""
        from ..framework.types import next_generation

        s = self.sched
        # frameworkImpl: the profile's DefaultPreemption is the only PodGroupPostFilter plugin
        dp = fw.plugins_map.get("DefaultPreemption")
        plugins = [dp] if callable(getattr(dp, "pod_group_post_filter", None)) else []
        if not plugins:
            return Status(Code.Unschedulable, "default preemption plugin is not registered, workload aware "
                                              "preemption is disabled")
        first = group[0][0].pod
        name = (first.spec.get("schedulingGroup") or {}).get("podGroupName")
        pg = s.cluster.get("PodGroup", first.namespace, name)
        if pg is None:
            return Status(Code.Error, err=PodGroupError(
                f'failed to get pod group object: podgroup.scheduling.k8s.io "{name}" not found'))
        constraints = (pg.raw.get("spec") or {}).get("schedulingConstraints") or {}
        if constraints.get("topology"):
            return Status(Code.Unschedulable, "workload aware preemption is not supported for pod groups "
                                              "with scheduling constraints")
        s.cache.update_snapshot(s.snapshot)
        cache = s.cache
        nodes = [cache.nodes[ni.node.name] for ni in s.snapshot.list() if ni.node is not None]
        backup = {}

        def touched(node_name: str) -> None:
            if node_name not in backup:
                backup[node_name] = cache.nodes[node_name].snapshot()
            cache._move_to_head(node_name)

        # dry runs: their cycle records are not kept
        dry = [(p, CycleRecord(p.pod.key, p.attempts, s.virtual_time(), p.requeue_event, s.name))
               for p, _ in group]

        def scheduling_func() -> Optional[Status]:
            self.pod_group_skip_post_filters = True
            try:
                return self.pod_group_scheduling_algorithm(fw, dry).status
            finally:
                self.pod_group_skip_post_filters = False

        try:
            return plugins[0].pod_group_post_filter(pg, [p.pod for p, _ in group], nodes,
                                                           scheduling_func, touched)
        finally:
            for node_name, saved in backup.items():
                ni = cache.nodes.get(node_name)
                if ni is None:
                    continue
                for attr in type(ni).__slots__:
                    if attr != "__weakref__":
                        setattr(ni, attr, getattr(saved, attr))
                ni.generation = next_generation()
                cache._move_to_head(node_name)

    def pod_group_scheduling_algorithm(self, fw, group) -> PodGroupAlgorithmResult:
        """podGroupSchedulingAlgorithm: with TopologyAwareWorkloadScheduling, the placement
        algorithm; else the default one."""
        if self.sched.features.get("TopologyAwareWorkloadScheduling", False):
            return self.pod_group_scheduling_placement_algorithm(fw, group)
        return self.pod_group_scheduling_default_algorithm(fw, group)

    def pod_group_scheduling_default_algorithm(self, fw, group) -> PodGroupAlgorithmResult:
        """podGroupSchedulingDefaultAlgorithm: each pod in order; a pod that passes is assumed
        (reverted when the algorithm ends) so the next ones see it; the group is feasible when
        some pod's Permit says Success."""
        out = PodGroupAlgorithmResult([], _unschedulable())
        reverts: List[Callable[[], None]] = []
        requires_preemption = False
        try:
            for pinfo, record in group:
                res, revert = self.pod_group_pod_scheduling_algorithm(fw, pinfo, record)
                out.pod_results.append(res)
                if res.status is not None and not res.status.is_success() and not res.requires_preemption:
                    if res.status.is_rejected():
                        continue  # the group may still pass Permit
                    out.status = Status(Code.Error, err=PodGroupError(
                        f"failed to schedule other pod from a pod group: {res.status.as_error()}"))
                    out.waiting_on_preemption = False
                    break
                reverts.append(revert)
                requires_preemption = requires_preemption or res.requires_preemption
                if res.permit_status is None or res.permit_status.is_success():
                    if requires_preemption:
                        out.status = _unschedulable("pod group is waiting for preemption to complete")
                        out.waiting_on_preemption = True
                    else:
                        out.status = None
        finally:
            for revert in reversed(reverts):  # deferred
                revert()
        return out

    def pod_group_pod_scheduling_algorithm(self, fw, pinfo: QueuedPodInfo, record
                                           ) -> Tuple[AlgorithmResult, Optional[Callable[[], None]]]:
        """podGroupPodSchedulingAlgorithm: filter and score one pod (PostFilter on failure), then
        assume, Reserve and check Permit; the revert function undoes the assumption."""
        s = self.sched
        pod = pinfo.pod
        state = CycleState()
        state.pod_group_cycle = True
        state.pod_group_state = getattr(self, "pod_group_cycle_state", None) or CycleState()
        # runWithoutPostFilters (workload-aware preemption's feasibility check)
        state.skip_all_post_filter_plugins = self.pod_group_skip_post_filters
        result, status = self.scheduling_algorithm(state, fw, pinfo, record)
        requires_preemption = False
        if status is not None and not status.is_success():
            ni = result.nominating_info
            if ni is not None and ni[1]:
                # preemption is needed: assume the pod on its nominated node so that the next
                # pods of the group see it there
                result.suggested_host = ni[1]
                requires_preemption = True
            else:
                return AlgorithmResult(pinfo, result, state, record, status), None
        host = result.suggested_host
        assumed, sts = self.assume_and_reserve(state, fw, pinfo, host)
        if sts is not None:
            return AlgorithmResult(pinfo, ScheduleResult(nominating_info=CLEAR), state, record, sts), None
        nominated = pod.nominated_node_name

        def revert() -> None:
            """unreserveAndForget in a pod group cycle: the assumption and the nominator's
            removal undone."""
            fw.run_reserve_plugins_unreserve(state, assumed.pod, host)
            s.cache.forget_pod(assumed.pod)
            if nominated:
                s.queue.nominator.add_nominated_pod(pinfo.pod_info, ("ModeOverride", nominated))

        permit = fw.run_permit_plugins(state, assumed.pod, host, add_waiting=False)
        if permit is not None and not permit.is_wait() and not permit.is_success():
            revert()
            if permit.is_rejected():
                permit = self._single_node_fit_error(pod, host, permit)
            return AlgorithmResult(pinfo, ScheduleResult(nominating_info=CLEAR), state, record, permit), None
        return AlgorithmResult(pinfo, result, state, record, status, permit, requires_preemption), revert

    # ------------------------------------------------------------------------------------------
    def submit_pod_group_algorithm_result(self, fw, group, out: PodGroupAlgorithmResult) -> None:
        """submitPodGroupAlgorithmResult: the feasible group's pods go to their binding cycles;
        otherwise each pod goes back to the queue with its own status, and the PodGroup gets
        its PodGroupScheduled condition."""
        s = self.sched
        group_status = out.status
        for i, (pinfo, record) in enumerate(group):
            if i < len(out.pod_results):
                res = out.pod_results[i]
            else:
                res = AlgorithmResult(pinfo, None, CycleState(), record, _clone(group_status))
            if group_status is not None and group_status.code == Code.Error:
                st = res.status if (res.status is not None and res.status.code == Code.Error) else group_status
                self.handle_scheduling_failure(fw, pinfo, st, CLEAR, record)
                continue
            if res.status is None or res.status.is_success():
                if group_status is None:
                    res.state.pod_group_cycle = False  # SetPodGroupSchedulingCycle(nil)
                    res.state.pod_group_state = None
                    result, assumed, st = self.prepare_for_binding_cycle(res.state, fw, pinfo, res.result)
                    if st is not None and not st.is_wait():
                        self.handle_scheduling_failure(fw, pinfo, st, CLEAR, record)
                        continue
                    self.after_scheduling_cycle(res.state, fw, pinfo, result, assumed, st, record)
                elif group_status.is_rejected():
                    if out.waiting_on_preemption:
                        self.handle_scheduling_failure(fw, pinfo, group_status,
                                                       ("ModeOverride", res.result.suggested_host), record)
                    else:
                        self.handle_scheduling_failure(fw, pinfo, _unschedulable(_message(res.permit_status)),
                                                       CLEAR, record)
                else:
                    err = PodGroupError(f"received unexpected pod group scheduling algorithm status code: "
                                        f"{group_status.code.name}")
                    self.handle_scheduling_failure(fw, pinfo, Status(Code.Error, err=err), CLEAR, record)
            elif res.requires_preemption and not out.waiting_on_preemption:
                self.handle_scheduling_failure(fw, pinfo, _unschedulable(_message(res.permit_status)),
                                               CLEAR, record)
            else:
                ni = res.result.nominating_info if res.result is not None else None
                self.handle_scheduling_failure(fw, pinfo, res.status, ni, record)
        self.update_pod_group_condition(group[0][0].pod, group_status)

    def update_pod_group_condition(self, pod, status: Optional[Status]) -> None:
        """updatePodGroupCondition: PodGroupScheduled True (Scheduled), or False (Unschedulable,
        SchedulerError); a True condition is never turned back to False."""
        s = self.sched
        name = (pod.spec.get("schedulingGroup") or {}).get("podGroupName")
        pg = s.cluster.get("PodGroup", pod.namespace, name)
        if pg is None:
            return  # "Failed to get PodGroup for status update"
        if status is None:
            cond = {"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled", "message": ""}
        elif status.is_rejected():
            cond = {"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable",
                    "message": status.message()}
        else:
            cond = {"type": "PodGroupScheduled", "status": "False", "reason": "SchedulerError",
                    "message": str(status.as_error())}
        conds = [dict(c) for c in (pg.raw.get("status") or {}).get("conditions") or []]
        existing = next((c for c in conds if c.get("type") == cond["type"]), None)
        if existing is not None and existing.get("status") == "True" and cond["status"] != "True":
            return
        cond["observedGeneration"] = int((pg.raw.get("metadata") or {}).get("generation") or 0)
        if existing is not None:
            # SetStatusCondition: the transition time moves only with the status
            if all(existing.get(k) == cond[k] for k in ("status", "reason", "message", "observedGeneration")):
                return
            if existing.get("status") == cond["status"]:
                cond["lastTransitionTime"] = existing.get("lastTransitionTime")
            existing.clear()
            existing.update(cond)
        else:
            conds.append(cond)
        if cond.get("lastTransitionTime") is None:
            cond["lastTransitionTime"] = _rfc3339(s.virtual_time())
        raw = dict(pg.raw)
        raw["status"] = dict(raw.get("status") or {}, conditions=conds)
        from ..api.objects import make_object
        try:
            s.cluster.update(make_object(raw))
        except Exception:  # "Failed to update PodGroup status" is logged upstream
            pass

    # ------------------------------------------------------------------------------------------
    def pod_group_scheduling_placement_algorithm(self, fw, group) -> PodGroupAlgorithmResult:
        """podGroupSchedulingPlacementAlgorithm (TopologyAwareWorkloadScheduling): the
        PlacementGenerate plugins' placements, the default algorithm in each (the snapshot
        restricted to its nodes), and the best feasible placement by the PlacementScore
        plugins (harness/framework/placement.py)."""
        from ..framework.placement import run_placement_algorithm

        return run_placement_algorithm(self, fw, group)


CLEAR = ("ModeOverride", "")  # clearNominatedNode


def _clone(status: Optional[Status]) -> Optional[Status]:
    if status is None:
        return None
    return Status(status.code, *status.reasons, err=status.err, plugin=status.plugin)


def _message(status: Optional[Status]) -> str:
    return "" if status is None else status.message()


def _rfc3339(seconds: float) -> str:
    """metav1.Now() on the virtual clock (second precision, as metav1.Time is serialized)."""
    import datetime

    from ..framework.timestamps import CLUSTER_START

    start = datetime.datetime.strptime(CLUSTER_START, "%Y-%m-%dT%H:%M:%SZ")
    return (start + datetime.timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")
