"""DefaultPreemption (framework/plugins/defaultpreemption/default_preemption.go): the PostFilter
plugin that evicts lower-priority pods to make room for an unschedulable pod. The algorithm lives
in harness.framework.preemption (preemption.go); this module supplies the default policy:
which pods may be victims, in which order they are reprieved, and how many nodes to dry-run."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from harness.api.nodeaffinity import aggregate_error
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, Code, EventResource,
                               Plugin, QueueingHint, Status, hookimpl)
from harness.framework import parallelize
from harness.framework.filter_memo import (MEMO_SHAPES_LIMIT, NODE_LOCAL_FILTER_PLUGINS,  # noqa: F401
                                           ShapeIds, copy_status, node_local_filters, nominated_lister,
                                           NominationColumns, RowAnswers, nomination_version, queue_nominator,
                                           same_pods)
from harness.framework.preemption import (DISRUPTION_TARGET, POD_REASON_PREEMPTION_BY_SCHEDULER,
                                          Candidate, Evaluator, Victims, default_criteria, more_important_pod,
                                          PDBBudgets, sort_by_importance)

from . import names

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100

ERR_NO_VICTIMS = "No preemption victims found for incoming pod"
ERR_PREEMPT_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_TERMINATING_ON_NOMINATED_NODE = "not eligible due to a terminating pod on the nominated node."
ERR_WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"
ERR_WAITING_FOR_GROUP_PREEMPTION = "waiting for the preemption for this pod group to be finished"
ERR_WORKLOAD_AWARE = "preemption: not eligible due to workload aware preemption enabled"
ERR_PLACEMENT_BASED = "preemption: not eligible due to placement-based pod group scheduling limitation"


class DefaultPreemption(Plugin):
    name = names.DefaultPreemption
    args_kind = "DefaultPreemptionArgs"

    # features.SchedulerAsyncPreemption (beta, on by default since v1.33), read from the
    # handle's feature gates at construction; None: the gate's state
    enable_async_preemption: Optional[bool] = None
    # reuse a node's dry run across preemptors when nothing it depends on changed (the harness's
    # own speed-up, off = the straightforward per-node SelectVictimsOnNode of every dry run)
    memo_dry_run = True

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        args = self.set_defaults(dict(args or {}))
        errs = self.validate_args(args)
        if errs:
            raise ValueError(aggregate_error([f"{path}: {msg}" for path, msg in errs]))
        super().__init__(args, handle)
        self.min_candidate_nodes_percentage = int(args["minCandidateNodesPercentage"])
        self.min_candidate_nodes_absolute = int(args["minCandidateNodesAbsolute"])
        # IsEligiblePod: no filtering beyond "lower priority than the preemptor".
        self.is_eligible_pod = any_pod_eligible
        # MoreImportantPod: higher priority, then earlier start.
        self.more_important_pod = more_important_pod
        if self.enable_async_preemption is None:
            features = getattr(handle, "feature_gates", None)
            self.enable_async_preemption = True if features is None else features.enabled("SchedulerAsyncPreemption")
        self.evaluator = Evaluator(self.name, handle, self, self.enable_async_preemption)
        # features.WorkloadAwarePreemption (v1.36): PodGroupPostFilter, and the pod-by-pod
        # PostFilter/PreEnqueue turned to the pod group for its members
        features = getattr(handle, "feature_gates", None)
        self.enable_workload_aware_preemption = bool(features is not None
                                                     and features.get("WorkloadAwarePreemption", False))
        self.enable_topology_aware_workload_scheduling = bool(
            features is not None and features.get("TopologyAwareWorkloadScheduling", False))
        self.pod_group_evaluator = None
        if self.enable_workload_aware_preemption:
            from harness.framework.podgroup_preemption import PodGroupEvaluator
            self.pod_group_evaluator = PodGroupEvaluator(handle, self.evaluator, self.name)
        self._dry_run_memo: Dict[Any, Dict[str, Any]] = {}
        # the same answers by row of the node table, for the dry run's bulk lookups
        self._row_memos: Dict[Any, _RowMemo] = {}
        self._shapes = ShapeIds()

    # -- args ------------------------------------------------------------------------------------
    @classmethod
    def set_defaults(cls, args: Dict[str, Any]) -> Dict[str, Any]:
        """SetDefaults_DefaultPreemptionArgs."""
        if args.get("minCandidateNodesPercentage") is None:
            args["minCandidateNodesPercentage"] = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
        if args.get("minCandidateNodesAbsolute") is None:
            args["minCandidateNodesAbsolute"] = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE
        return args

    @classmethod
    def validate_args(cls, args: Dict[str, Any]) -> List[Tuple[str, str]]:
        """ValidateDefaultPreemptionArgs (messages are field.Invalid's ErrorBody)."""
        errs: List[Tuple[str, str]] = []
        pct = int(args.get("minCandidateNodesPercentage") or 0)
        absolute = int(args.get("minCandidateNodesAbsolute") or 0)
        if pct < 0 or pct > 100:
            errs.append(("minCandidateNodesPercentage", f"Invalid value: {pct}: not in valid range [0, 100]"))
        if absolute < 0:
            errs.append(("minCandidateNodesAbsolute", f"Invalid value: {absolute}: not in valid range [0, inf)"))
        if pct == 0 and absolute == 0:
            errs.append(("minCandidateNodesPercentage",
                         f"Invalid value: {pct}: cannot be zero at the same time as minCandidateNodesAbsolute"))
            errs.append(("minCandidateNodesAbsolute",
                         f"Invalid value: {absolute}: cannot be zero at the same time as minCandidateNodesPercentage"))
        return errs

    # -- extension points --------------------------------------------------------------------------
    @hookimpl
    def post_filter(self, state, pod, filtered_node_status_map):
        """PostFilter: the evaluator's result, its message prefixed with "preemption: ". With
        WorkloadAwarePreemption a pod group's member is not preempted for pod by pod (its group's
        PodGroupPostFilter preempts for the whole group)."""
        group = pod.spec.get("schedulingGroup")
        if group and self.enable_topology_aware_workload_scheduling:
            cluster = getattr(self.handle, "cluster", None)
            pg = cluster.get("PodGroup", pod.namespace, group.get("podGroupName")) if cluster is not None else None
            if pg is None:
                return None, Status(Code.Unschedulable, "preemption: pod group for pod not found")
            if (pg.raw.get("spec") or {}).get("schedulingConstraints") is not None:
                return None, Status(Code.Unschedulable, ERR_PLACEMENT_BASED)
        if group and self.enable_workload_aware_preemption:
            return None, Status(Code.Unschedulable, ERR_WORKLOAD_AWARE)
        result, status = self.evaluator.preempt(state, pod, filtered_node_status_map)
        msg = status.message()
        if msg:
            return result, Status(status.code, "preemption: " + msg)
        return result, status

    @hookimpl
    def pre_enqueue(self, pod):
        """PreEnqueue: gate a pod while its asynchronous preemption is running."""
        if not self.enable_async_preemption:
            return None
        group = pod.spec.get("schedulingGroup")
        if group and self.enable_workload_aware_preemption:
            # a member waits for its group's preemption (a group not found: not gated here)
            cluster = getattr(self.handle, "cluster", None)
            pg = cluster.get("PodGroup", pod.namespace, group.get("podGroupName")) if cluster is not None else None
            if pg is not None and self.evaluator.is_pod_running_preemption(pg.uid):
                return Status(Code.UnschedulableAndUnresolvable, ERR_WAITING_FOR_GROUP_PREEMPTION)
            return None
        if self.evaluator.is_pod_running_preemption(pod.uid):
            return Status(Code.UnschedulableAndUnresolvable, ERR_WAITING_FOR_PREEMPTION)
        return None

    def pod_group_post_filter(self, pg, pods, nodes, scheduling_func, touched):
        """PodGroupPostFilter (WorkloadAwarePreemption): the pod group evaluator's Preempt."""
        return self.pod_group_evaluator.preempt(pg, pods, nodes, scheduling_func, touched)

    @hookimpl
    def events_to_register(self):
        """EventsToRegister: Pod/Delete with a hint that always skips (the plugins whose failure
        the preemption resolves requeue the pod)."""
        if not self.enable_async_preemption:
            return []
        return [ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete),
                                     is_pod_schedulable_after_pod_deletion)]

    # -- preemption.Interface ------------------------------------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        """calculateNumCandidates: numNodes * percentage / 100, at least the absolute minimum,
        at most numNodes."""
        n = (num_nodes * self.min_candidate_nodes_percentage) // 100
        if n < self.min_candidate_nodes_absolute:
            n = self.min_candidate_nodes_absolute
        if n > num_nodes:
            n = num_nodes
        return n

    def get_offset_and_num_candidates(self, num_nodes: int) -> Tuple[int, int]:
        """GetOffsetAndNumCandidates. Upstream draws the offset with rand.Int31n(numNodes); the
        harness starts at the first potential node so that a run repeats (`explore` draws it)."""
        opts = parallelize.current()
        if opts is not None and opts.explore_rng is not None and num_nodes > 0:
            return opts.explore_rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)
        return 0, self.calculate_num_candidates(num_nodes)

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> Dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def ordered_score_funcs(self, nodes_to_victims):
        return None

    def is_preemption_allowed(self, node_info, victim_info, preemptor) -> bool:
        """isPreemptionAllowed: lower priority than the preemptor, and IsEligiblePod."""
        return (victim_info.pod.priority < preemptor.priority
                and self.is_eligible_pod(node_info, victim_info, preemptor))

    def pod_eligible_to_preempt_others(self, pod, nominated_node_status: Status) -> Tuple[bool, str]:
        """PodEligibleToPreemptOthers."""
        if pod.spec.get("preemptionPolicy") == "Never":
            return False, ERR_PREEMPT_NEVER
        nom_node_name = pod.nominated_node_name
        if nom_node_name:
            # A nominated node the filters now reject as unresolvable: preempt again.
            if nominated_node_status.code == Code.UnschedulableAndUnresolvable:
                return True, ""
            try:
                node_info = self.handle.snapshot.get(nom_node_name)
            except KeyError:
                node_info = None
            if node_info is not None:
                for pi in node_info.pods:
                    if self.is_preemption_allowed(node_info, pi, pod) and pod_terminating_by_preemption(pi.pod):
                        return False, ERR_TERMINATING_ON_NOMINATED_NODE
        return True, ""

    def victims_on_node_checker(self, state, pod, pdbs) -> Optional[Callable[[Any], Tuple[List[Any], int, Status]]]:
        """For Evaluator.dry_run_preemption: a function giving, for a node of the snapshot, what
        select_victims_on_node gives on copies of that node and of `state`, remembering the
        answer across dry runs. None (the plain per-node path) unless every Filter plugin that
        runs and every PreFilter extension that runs is an in-tree node-local one
        (filter_memo.node_local_filters), there is no PDB, and the victim policy is the default
        one: then the answer depends only on the node's NodeInfo (its generation), what the
        plugins read of the preemptor (filter_memo.pod_filter_shape), and the nominated pods of
        equal or higher priority on the node (compared by identity), which make the key. One
        entry per node and shape: a node's newer generation replaces its entry."""
        if not self.memo_dry_run or pdbs or type(self) is not DefaultPreemption:
            return None
        if self.more_important_pod is not more_important_pod or self.is_eligible_pod is not any_pod_eligible:
            return None
        handle = self.handle
        if not hasattr(handle, "nominated_pods_for_node"):
            return None
        ran = node_local_filters(handle, state)
        if ran is None:
            return None
        memo = self._dry_run_memo
        if len(memo) >= MEMO_SHAPES_LIMIT:
            memo.clear()
            self._row_memos.clear()
        key = (self._shapes.of(pod), ran)
        per_node = memo.setdefault(key, {})
        nominated_on = nominated_lister(handle)
        nominator = queue_nominator(handle)
        priority, uid = pod.priority, pod.uid
        row_memo = self._row_memos.get(key)

        def check(node_info) -> Tuple[List[Any], int, Status]:
            """select_victims_on_node on copies of node_info and state, or its remembered answer."""
            node = node_info.node
            name = node.name if node is not None else ""
            noms = nominated_on(name)
            nominated = [pi for pi in noms if pi.pod.priority >= priority and pi.pod.uid != uid] if noms else []
            hit = per_node.get(name)
            if hit is not None and hit[0] == node_info.generation and same_pods(hit[1], nominated):
                pods, n, status, ok, criteria = hit[2:7]
                # a successful status is only tested by the caller; a failed one is kept by it
                return list(pods), n, (status if ok else copy_status(status)), criteria
            pods, n, status = self.select_victims_on_node(state.clone(), pod, node_info.snapshot(), pdbs)
            if status is not None and status.code != Code.Error:
                ok = status.code == Code.Success
                # the candidate's pick criteria, once for every dry run that reuses the answer
                criteria = default_criteria(pods, n) if ok and pods else None
                entry = per_node[name] = (node_info.generation, nominated, tuple(pods), n, copy_status(status),
                                          ok, criteria, nomination_version(nominator, name, uid))
                if row_memo is not None:
                    row_memo.note(name, entry)
            return pods, n, status

        def remembered(table, rows) -> Optional[List[Any]]:
            """For rows (an int array) of the node table `table`: per row, the answer check
            would give from the memo, as (victims tuple, PDB violations, status, ok, criteria,
            kind, row, kinds) with the status shared (a failed one is copied before it is kept;
            kinds[kind], when kind >= 0, is the failed status as lazy_status makes it), where the
            answer remembered holds now (the same NodeInfo generation and nominated pods:
            filter_memo.NominationColumns.valid); else None (call check). None: no answers by
            row here (no queue's Nominator)."""
            nonlocal row_memo
            if nominator is None:
                return None
            if row_memo is None or row_memo.table is not table:
                row_memo = self._row_memos[key] = _RowMemo(table, per_node)
            own = nominator.pod_to_node.get(uid)
            own_row = table.row_of.get(own, -1) if own is not None else -1
            ok = NominationColumns.of(nominator, table).valid(rows, table.generation, row_memo.generation,
                                                              row_memo.version, row_memo.empty, own_row)
            entries, kinds = row_memo.entries, row_memo.kinds
            out: List[Any] = [None] * len(rows)
            hits = rows[ok]
            for k, row, kind in zip(ok.nonzero()[0].tolist(), hits.tolist(), row_memo.kind[hits].tolist()):
                e = entries[row]
                out[k] = (e[2], e[3], e[4], e[5], e[6], kind, row, kinds)
            return out

        check.remembered = remembered
        return check

    def select_victims_on_node(self, state, pod, node_info, pdbs) -> Tuple[List[Any], int, Status]:
        """SelectVictimsOnNode: remove every lower-priority pod; if the pod then fits, add them
        back by importance (PDB-violating ones first) as long as it still fits."""
        handle = self.handle

        def remove_pod(rpi) -> Optional[Exception]:
            try:
                node_info.remove_pod(rpi.pod)
            except KeyError as e:
                return RuntimeError(e.args[0] if e.args else str(e))
            s = handle.run_pre_filter_extension_remove_pod(state, pod, rpi, node_info)
            if s is not None and not s.is_success():
                return s.as_error()
            return None

        def add_pod(api) -> Optional[Exception]:
            node_info.add_pod_info(api)
            s = handle.run_pre_filter_extension_add_pod(state, pod, api, node_info)
            if s is not None and not s.is_success():
                return s.as_error()
            return None

        potential_victims = []
        for pi in list(node_info.pods):
            if self.is_preemption_allowed(node_info, pi, pod):
                potential_victims.append(pi)
                err = remove_pod(pi)
                if err is not None:
                    return [], 0, Status.error(err)

        if not potential_victims:
            return [], 0, Status(Code.UnschedulableAndUnresolvable, ERR_NO_VICTIMS)

        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if status is not None and not status.is_success():
            return [], 0, status

        sort_by_importance(potential_victims, self.more_important_pod, lambda pi: pi.pod)
        violating, non_violating = filter_pods_with_pdb_violation(potential_victims, pdbs)
        victims = []

        def reprieve_pod(pi) -> Tuple[bool, Optional[Exception]]:
            err = add_pod(pi)
            if err is not None:
                return False, err
            s = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
            fits = s is None or s.is_success()
            if not fits:
                err = remove_pod(pi)
                if err is not None:
                    return False, err
                victims.append(pi)
            return fits, None

        num_violating_victim = 0
        for pi in violating:
            fits, err = reprieve_pod(pi)
            if err is not None:
                return [], 0, Status.error(err)
            if not fits:
                num_violating_victim += 1
        for pi in non_violating:
            _, err = reprieve_pod(pi)
            if err is not None:
                return [], 0, Status.error(err)

        if violating and non_violating:
            sort_by_importance(victims, self.more_important_pod, lambda pi: pi.pod)
        return [pi.pod for pi in victims], num_violating_victim, Status(Code.Success)


class _RowMemo(RowAnswers):
    """A dry-run memo's entries (one pod shape and filters) by row of one node table (kind: a
    failed entry's status)."""

    __slots__ = ("entries",)

    def __init__(self, table, per_node: Dict[str, Any]) -> None:
        super().__init__(table)
        self.entries: List[Any] = [None] * len(table.names)
        for name, entry in per_node.items():
            self.note(name, entry)

    def note(self, name: str, entry) -> None:
        row = self.table.row_of.get(name)
        if row is None:
            return
        self.entries[row] = entry
        self.set_row(row, entry[0], entry[7], not entry[1], -1 if entry[5] else self.kind_of(entry[4]))


def any_pod_eligible(node_info, victim_info, preemptor) -> bool:
    """DefaultPreemption's IsEligiblePod: no filtering beyond "lower priority than the preemptor"."""
    return True


def is_pod_schedulable_after_pod_deletion(pod, old_obj, new_obj) -> QueueingHint:
    """isPodSchedulableAfterPodDeletion: always QueueSkip."""
    return QueueingHint.QueueSkip


def pod_terminating_by_preemption(p) -> bool:
    """podTerminatingByPreemption: deleting, with DisruptionTarget=True for PreemptionByScheduler
    (the first DisruptionTarget condition decides)."""
    if p.deletion_timestamp is None:
        return False
    for cond in p.status.get("conditions") or []:
        if cond.get("type") == DISRUPTION_TARGET:
            return cond.get("status") == "True" and cond.get("reason") == POD_REASON_PREEMPTION_BY_SCHEDULER
    return False


def filter_pods_with_pdb_violation(pod_infos: Sequence[Any], pdbs: Sequence[Any]) -> Tuple[List[Any], List[Any]]:
    """filterPodsWithPDBViolation: split the pods (order kept) into those whose eviction would
    take a matching PDB below zero allowed disruptions and the others. A pod listed in a PDB's
    status.disruptedPods is not counted against it."""
    budgets = PDBBudgets(pdbs)
    violating: List[Any] = []
    non_violating: List[Any] = []
    for pi in pod_infos:
        violated = any([went_below for went_below in budgets.take(pi.pod)])  # every PDB counted
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


PLUGINS = [DefaultPreemption]
