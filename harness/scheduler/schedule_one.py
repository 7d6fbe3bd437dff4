"""One scheduling attempt (schedule_one.go): scheduleOne -> schedulingCycle -> bindingCycle.

Left whole at about 1000 lines on purpose: it mirrors one upstream file (schedule_one.go, 1339
lines in v1.36); its records and results are in cycle_records.py, the pod group cycle (its own
upstream file) in schedule_one_podgroup.py."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from ..apierrors import API_ERRORS
from ..framework import node_table, parallelize
from ..framework.blocking import Task, drive
from ..framework.cycle_state import CycleState
from ..framework.filter_memo import nominated_lister, queue_nominations
from ..framework.lazy_status import ChunkVerdicts, LazyStatusMap
from ..framework.node_table import NodeRows
from ..framework.prebind import PodInPreBind, PreBindContext
from ..framework.runtime import Framework
from ..framework.status import Code, Status
from ..framework.types import (Diagnosis, FitError, NodeInfo, NodePluginScores, NodeToStatus,
                               PodInfo, QueuedPodInfo)
from ..framework.verbose_filters import verbose_filter_table

from . import parallel_filter
from .cycle_records import CycleRecord, ScheduleResult, compact_record, record_post_filter
from .schedule_one_podgroup import PodGroupCycles
from .extender import EXTENDER_NAME, MAX_EXTENDER_PRIORITY, MAX_NODE_SCORE, ExtenderError

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NUMBER_OF_HIGHEST_SCORED_NODES_TO_REPORT = 3
CLEAR_NOMINATED_NODE = ("ModeOverride", "")  # clearNominatedNode


class NoNodesAvailable(Exception):
    def __str__(self) -> str:
        return "no nodes available to schedule pods"


def num_feasible_nodes_to_find(percentage: Optional[int], global_percentage: int, num_all_nodes: int) -> int:
    """numFeasibleNodesToFind."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    p = percentage if percentage is not None else global_percentage
    if p == 0:
        p = 50 - num_all_nodes // 125
        if p < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            p = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all_nodes * p // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def select_host(scores: List[NodePluginScores], rng) -> str:
    """selectHost: the highest total score; ties broken uniformly at random with the case's
    seed (upstream samples the tied nodes uniformly too, by reservoir sampling)."""
    if not scores:
        raise RuntimeError("empty priorityList")
    totals = getattr(scores, "totals", None)
    if totals is not None:  # NodeScoreColumns: the same pick from the totals column
        top = (totals == totals.max()).nonzero()[0]
        k = int(top[rng.randrange(len(top))]) if len(top) > 1 else int(top[0])
        return scores.nodes[k].node.name
    best = max(s.total_score for s in scores)
    top = [s.name for s in scores if s.total_score == best]
    return top[rng.randrange(len(top))] if len(top) > 1 else top[0]


def _totals(scores) -> List[int]:
    totals = getattr(scores, "totals", None)
    if totals is not None:
        return [int(t) for t in totals]
    return [sc.total_score for sc in scores]


def _names(scores) -> List[str]:
    totals = getattr(scores, "totals", None)
    if totals is not None:
        return [ni.node.name for ni in scores.nodes]
    return [sc.name for sc in scores]


def heap_first(totals: Sequence[int], randomizers: Optional[Sequence[int]] = None) -> int:
    """The index newSortedNodeScores(list).Pop() returns (v1.35 on): container/heap over the
    list, Less = higher TotalScore, or equal and higher Randomizer. heap.Init only moves a child
    above its parent when it is strictly greater and prefers the left child on a tie, so among
    the greatest entries the root is the one met first in a pre-order walk of the heap's tree:
    the smallest binary path (heap index + 1 without its leading 1, a prefix first)."""
    keys = totals if randomizers is None else list(zip(totals, randomizers))
    best = max(keys)
    return heap_root([i for i, k in enumerate(keys) if k == best])


def heap_root(top: Sequence[int]) -> int:
    """Of the heap indices of the greatest entries, the one heap.Init leaves at the root: the
    first in a pre-order walk of the tree, i.e. the smallest binary path (bin(i + 1) without
    its leading 1, a prefix first). The paths are compared as integers left-aligned to one
    width, then by length (a prefix first); on a numpy index array, column-wise."""
    if len(top) == 1:
        return int(top[0])
    if hasattr(top, "dtype") or len(top) > 16:
        np = node_table.numpy()
        top = np.asarray(top, dtype=np.int64)
        keys = _heap_keys(int(top.max()) + 1)
        return int(top[int(np.argmin(keys[top]))])
    width = (max(int(i) for i in top) + 1).bit_length()

    def path(i: int):
        b = (i + 1).bit_length()
        return (i + 1) << (width - b), b

    return min((int(i) for i in top), key=path)


# heap index -> its pre-order key (see _heap_keys), for indices below len(_HEAP_KEYS)
_HEAP_KEYS: Any = None
_HEAP_WIDTH = 56  # bits of an aligned path: indices below 2**50 (a key also holds the length)


def _heap_keys(n: int):
    """Each heap index's place in a pre-order walk of the heap's tree, as an int64 key: its
    binary path (bin(i + 1) without the leading 1) left-aligned to _HEAP_WIDTH bits, then its
    bit length (a prefix first). Computed once for the indices below n (rounded up to a power of
    two) and kept."""
    global _HEAP_KEYS
    if _HEAP_KEYS is None or len(_HEAP_KEYS) < n:
        np = node_table.numpy()
        size = 1 << max(n - 1, 1).bit_length()
        v = np.arange(1, size + 1, dtype=np.int64)
        bits = np.frexp(v.astype(np.float64))[1].astype(np.int64)  # bit_length (exact below 2**53)
        _HEAP_KEYS = ((v << (_HEAP_WIDTH - bits)) << 6) | bits
    return _HEAP_KEYS


class ScoreHeap:
    """newSortedNodeScores: Go's container/heap over the node scores (nodeScoreHeap.Less:
    higher TotalScore, or equal and higher Randomizer), ported; each pop() is heap.Pop, so a
    batch that takes a few nodes pays for those only. Pops give (index, name)."""

    def __init__(self, totals: Sequence[int], randomizers: Optional[Sequence[int]] = None,
                 names: Optional[Sequence[str]] = None):
        self._keys = list(totals) if randomizers is None else list(zip(totals, randomizers))
        self._names = names
        self._h = list(range(len(self._keys)))
        n = len(self._h)
        for i in range(n // 2 - 1, -1, -1):
            self._down(i, n)

    def _down(self, i: int, n: int) -> None:
        h, keys = self._h, self._keys
        while True:
            j = 2 * i + 1
            if j >= n:
                break
            if j + 1 < n and keys[h[j + 1]] > keys[h[j]]:
                j += 1
            if not keys[h[j]] > keys[h[i]]:
                break
            h[i], h[j] = h[j], h[i]
            i = j

    def pop_index(self) -> int:
        h = self._h
        last = len(h) - 1
        h[0], h[last] = h[last], h[0]
        self._down(0, last)
        return h.pop()

    def pop(self) -> str:
        return self._names[self.pop_index()]

    def __len__(self) -> int:
        return len(self._h)


def heap_order(totals: Sequence[int], randomizers: Optional[Sequence[int]] = None) -> List[int]:
    """Every index in the order successive Pops of newSortedNodeScores give them."""
    heap = ScoreHeap(totals, randomizers)
    return [heap.pop_index() for _ in range(len(heap))]


class SchedulingCycles(PodGroupCycles):
    """The cycle functions of Scheduler, kept apart so each reads like its upstream namesake."""

    sched: Any  # the Scheduler (scheduler.py) these cycles are the methods of
    extender_scored: Set[str] = set()  # nodes an extender scored in this cycle (prioritizeNodes)
    batch_hint: str = ""  # OpportunisticBatching: this cycle's node hint and pod signature
    batch_signature: Optional[str] = None

    # ------------------------------------------------------------------------------------------
    def schedule_one(self) -> bool:
        """ScheduleOne: pop a pod and run a scheduling cycle, then its binding cycle."""
        s = self.sched
        pinfo = s.queue.pop()
        if pinfo is None:
            return False
        pod = pinfo.pod
        fw = s.profiles.get(pod.scheduler_name)
        if fw is None or pod.deletion_timestamp or s.cache.is_assumed_pod(pod):
            s.queue.done(pod.uid)
            return True
        if s.workload_manager is not None and s.features.version.minor >= 36 and \
                pod.spec.get("schedulingGroup") is not None:
            # ScheduleOne (v1.36): a pod of a pod group brings its group to one cycle
            self.schedule_one_pod_group(pinfo)
            return True
        record = self.new_record(pinfo)
        state = CycleState()
        result, assumed_pinfo, status = self.scheduling_cycle(state, fw, pinfo, record)
        self.after_scheduling_cycle(state, fw, pinfo, result, assumed_pinfo, status, record)
        return True

    def new_record(self, pinfo: QueuedPodInfo) -> "CycleRecord":
        """A scheduling attempt of a popped pod: counted, and recorded for reports."""
        s = self.sched
        pod = pinfo.pod
        s.attempts[pod.uid] = pinfo.attempts
        record = CycleRecord(pod.key, pinfo.attempts, s.virtual_time(), pinfo.requeue_event, s.name)
        if s.keep_records:
            s.records.setdefault(pod.key, []).append(record)
        return record

    def after_scheduling_cycle(self, state: CycleState, fw: Framework, pinfo: QueuedPodInfo,
                               result: "ScheduleResult", assumed_pinfo: QueuedPodInfo,
                               status: Optional[Status], record: "CycleRecord") -> None:
        """The rest of scheduleOne: the failure handler, or the binding goroutine (after the
        wait at Permit)."""
        s = self.sched
        pod = pinfo.pod
        if s.keep_records and not s.full_record(pod):
            compact_record(record)  # only the attempt history is kept (cycle_records)
        elif s.record_columns is not None and s.keep_records:
            s.record_columns(record, s.records.get(pod.key) or [])
        if status is not None and status.is_wait():
            # the binding goroutine starts now: its PreBindPreFlight step runs before it blocks
            # in WaitOnPermit (here: before the pod joins the waiting pods' loop)
            st = self.binding_pre_flight(state, fw, result, assumed_pinfo)
            if st is not None:
                # upstream's goroutine returns before WaitOnPermit, leaving the waiting pod in
                # the map until its timeout rejects it unheard; here it leaves the map now
                fw.waiting_pods.pop(pod.uid, None)
                self.handle_binding_cycle_error(state, fw, assumed_pinfo, result, st, record)
                return
            s.waiting.append((state, fw, result, assumed_pinfo, record))
            return
        if status is not None and not status.is_success():
            self.handle_scheduling_failure(fw, assumed_pinfo, status, result.nominating_info, record)
            return
        s.start_binding(self.binding_goroutine(state, fw, result, assumed_pinfo, record), pod.uid)

    def binding_goroutine(self, state: CycleState, fw: Framework, result: ScheduleResult,
                          assumed: QueuedPodInfo, record: CycleRecord, pre_flight: bool = True) -> Task:
        """The goroutine scheduleOne starts after a scheduling cycle: the binding cycle, then
        handleBindingCycleError on failure. A task: it may wait (PreBind) in virtual time.
        `pre_flight`: False for a pod that waited at Permit (its PreBindPreFlight step ran when
        the scheduling cycle ended)."""
        status = None
        if pre_flight:
            status = self.binding_pre_flight(state, fw, result, assumed)
        if status is None:
            status = yield from self.binding_cycle_task(state, fw, result, assumed)
        if status is not None and not status.is_success():
            self.handle_binding_cycle_error(state, fw, assumed, result, status, record)

    def scheduling_cycle(self, state: CycleState, fw: Framework, pinfo: QueuedPodInfo,
                         record: CycleRecord):
        """schedulingCycle: schedulePod, PostFilter on failure, assume, Reserve, Permit."""
        result, status = self.scheduling_algorithm(state, fw, pinfo, record)
        if status is not None:
            return result, pinfo, status
        return self.prepare_for_binding_cycle(state, fw, pinfo, result)

    def scheduling_algorithm(self, state: CycleState, fw: Framework, pinfo: QueuedPodInfo,
                             record: CycleRecord) -> Tuple["ScheduleResult", Optional[Status]]:
        """schedulingAlgorithm: schedulePod, and PostFilter when no node fits."""
        s = self.sched
        pod = pinfo.pod
        try:
            result = self.schedule_pod(fw, state, pod, record)
        except NoNodesAvailable as e:
            return (ScheduleResult(nominating_info=self.failure_nominating_info()),
                    Status(Code.UnschedulableAndUnresolvable, err=e))
        except FitError as fit_error:
            if not fw.has_post_filter_plugins():
                # v1.34: ScheduleResult{} (the nomination left as it is); v1.35: cleared
                nominating = CLEAR_NOMINATED_NODE if s.features.has("ClearNominatedNodeOnFailure") else None
                return ScheduleResult(nominating_info=nominating), Status(Code.Unschedulable, err=fit_error)
            pf_result, pf_status = fw.run_post_filter_plugins(state, pod, fit_error.diagnosis.node_to_status)
            fit_error.diagnosis.post_filter_msg = pf_status.message()
            record_post_filter(record, state, pf_result, pf_status)
            nominating = None
            if pf_result is not None:
                nominating = (pf_result.nominating_mode, pf_result.nominated_node_name)
            return ScheduleResult(nominating_info=nominating), Status(Code.Unschedulable, err=fit_error)
        except _CycleError as e:
            return ScheduleResult(nominating_info=self.failure_nominating_info()), e.status
        return result, None

    def assume_and_reserve(self, state: CycleState, fw: Framework, pinfo: QueuedPodInfo, host: str
                           ) -> Tuple[QueuedPodInfo, Optional[Status]]:
        """assumeAndReserve: the pod assumed on `host` in the cache, then Reserve (undone on
        failure)."""
        s = self.sched
        pod = pinfo.pod
        assumed_pod = pod.with_node(host)
        assumed = QueuedPodInfo(PodInfo.of(assumed_pod), pinfo.timestamp, pinfo.seq)
        assumed.attempts = pinfo.attempts
        assumed.unschedulable_count = pinfo.unschedulable_count
        assumed.consecutive_errors_count = pinfo.consecutive_errors_count
        assumed.initial_attempt_timestamp = pinfo.initial_attempt_timestamp
        assumed.requeue_event = pinfo.requeue_event
        s.cache.assume_pod(assumed_pod)
        s.queue.nominator.delete(assumed_pod)
        sts = fw.run_reserve_plugins_reserve(state, assumed_pod, host)
        if sts is not None and not sts.is_success():
            fw.run_reserve_plugins_unreserve(state, assumed_pod, host)
            s.cache.forget_pod(assumed_pod)
            return assumed, self._single_node_fit_error(pod, host, sts)
        return assumed, None

    def prepare_for_binding_cycle(self, state: CycleState, fw: Framework, pinfo: QueuedPodInfo,
                                  result: "ScheduleResult"):
        """prepareForBindingCycle: assume and Reserve, then Permit (a Wait holds the pod)."""
        s = self.sched
        pod = pinfo.pod
        host = result.suggested_host
        assumed, sts = self.assume_and_reserve(state, fw, pinfo, host)
        if sts is not None:
            return ScheduleResult(nominating_info=self.failure_nominating_info()), assumed, sts
        assumed_pod = assumed.pod
        sts = fw.run_permit_plugins(state, assumed_pod, host)
        if sts is not None and not sts.is_wait() and not sts.is_success():
            fw.run_reserve_plugins_unreserve(state, assumed_pod, host)
            s.cache.forget_pod(assumed_pod)
            return (ScheduleResult(nominating_info=self.failure_nominating_info()), assumed,
                    self._single_node_fit_error(pod, host, sts))
        return result, assumed, sts if (sts is not None and sts.is_wait()) else None

    def failure_nominating_info(self) -> Optional[Tuple[str, str]]:
        """newFailureNominatingInfo (v1.34): None (the nomination kept) with
        NominatedNodeNameForExpectation on, else clear it; v1.35's clearNominatedNode always."""
        features = self.sched.features
        if not features.has("ClearNominatedNodeOnFailure") and features.enabled("NominatedNodeNameForExpectation"):
            return None
        return CLEAR_NOMINATED_NODE

    @staticmethod
    def _single_node_fit_error(pod, host: str, sts: Status) -> Status:
        if not sts.is_rejected():
            return sts
        d = Diagnosis(NodeToStatus())
        d.node_to_status.set(host, sts)
        d.add_plugin_status(sts)
        return Status(sts.code, err=FitError(pod, 1, d))

    def schedule_pod(self, fw: Framework, state: CycleState, pod, record: CycleRecord) -> ScheduleResult:
        """schedulePod: snapshot, filter, then score and select a host."""
        s = self.sched
        s.cache.update_snapshot(s.snapshot)
        if s.snapshot.num_nodes() == 0:
            raise NoNodesAvailable()
        self.batch_hint, self.batch_signature = "", None
        feasible, diagnosis = self.find_nodes_that_fit_pod(fw, state, pod, record)
        if not feasible:
            raise FitError(pod, s.snapshot.num_nodes(), diagnosis)
        record.n_feasible = len(feasible)
        if s.full_record(pod):  # read by reports only
            record.feasible = [ni.node.name for ni in feasible]
        if len(feasible) == 1:
            record.picked = feasible[0].node.name
            if fw.batch is not None:
                fw.batch.store_schedule_results(self.batch_signature, self.batch_hint, record.picked, None,
                                                s.queue.scheduling_cycle)
            return ScheduleResult(feasible[0].node.name, 1 + diagnosis.node_to_status.length(), 1)
        self.extender_scored = set()
        scores = self.prioritize_nodes(fw, state, pod, feasible, record)
        record.scores = scores
        rest = None
        if s.features.has("SelectHostFromScoreHeap"):
            # newSortedNodeScores(priorityList).Pop(): ties by Randomizer, which only nodes an
            # extender scored get (rand.Int()); otherwise by the heap's own order. The batch
            # keeps the heap for the next pods only when this one is signed (StoreScheduleResults
            # drops it otherwise), so only then is the heap built.
            keep = fw.batch is not None and self.batch_signature is not None
            totals = getattr(scores, "totals", None)
            if not keep and not self.extender_scored and totals is not None:
                # the node table's totals column: only the greatest entries need a heap position
                host = scores.nodes[heap_root((totals == totals.max()).nonzero()[0])].node.name
            else:
                names = _names(scores)
                randomizers = ([s.rng.getrandbits(63) if n in self.extender_scored else 0 for n in names]
                               if self.extender_scored else None)
                if keep:
                    rest = ScoreHeap(_totals(scores), randomizers, names)  # the batch pops the rest
                    host = rest.pop()
                else:
                    host = names[heap_first(_totals(scores), randomizers)]
        else:
            host = select_host(scores, s.rng)
        record.picked = host
        if fw.batch is not None:
            fw.batch.store_schedule_results(self.batch_signature, self.batch_hint, host,
                                            rest, s.queue.scheduling_cycle)
        return ScheduleResult(host, len(feasible) + diagnosis.node_to_status.length(), len(feasible))

    def find_nodes_that_fit_pod(self, fw: Framework, state: CycleState, pod, record: CycleRecord
                                ) -> Tuple[List[NodeInfo], Diagnosis]:
        """findNodesThatFitPod."""
        s = self.sched
        diagnosis = Diagnosis(NodeToStatus())
        all_nodes = s.snapshot.list()
        pre_res, st, unsched_plugins = fw.run_pre_filter_plugins(state, pod)
        diagnosis.unschedulable_plugins = set(unsched_plugins)
        record.pre_filter = st
        if s.keep_records:  # read by reports and decision assertions only
            record.diagnosis, record.num_nodes = diagnosis, len(all_nodes)
        if s.explains(pod) and (st is None or st.is_success()):
            # every plugin's status on every node, as columns (verbose_filters)
            table = verbose_filter_table(fw, state, pod, all_nodes, s.snapshot)
            if record.filter_table:  # a pod group's cycle filters each placement into one record
                merged = dict(record.filter_table.items())
                merged.update(table.items())
                record.filter_table = merged
            else:
                record.filter_table = table
            nominator = fw.nominator  # (none nominated: no node has a second table)
            for ni in (all_nodes if nominator is not None and getattr(nominator, "nominated", True) else ()):
                added, state_n, ni_n, err = fw._add_ge_nominated_pods(pod, state, ni)
                if added and err is None:
                    keys = [pi.pod.key for pi in fw.nominated_pods_for_node(ni.node.name)
                            if pi.pod.priority >= pod.priority and pi.pod.uid != pod.uid]
                    record.nominated_filter_table[ni.node.name] = (
                        keys, fw.run_filter_plugins_verbose(state_n, pod, ni_n))
        if st is not None and not st.is_success():
            if not st.is_rejected():
                raise _CycleError(st)
            diagnosis.node_to_status.set_absent_nodes_status(st)
            diagnosis.pre_filter_msg = st.message()
            diagnosis.add_plugin_status(st)
            return [], diagnosis
        if fw.batch is not None:
            # OpportunisticBatching: a hint from the previous cycle's scores, tried as a
            # nominated node is (the signature is the queue's from v1.36, the same value)
            self.batch_signature = fw.sign_pod(pod)
            self.batch_hint = fw.batch.get_node_hint(state, pod, self.batch_signature, s.queue.scheduling_cycle)
            if not pod.nominated_node_name:  # (a nominated node is tried instead)
                record.batch_hint = self.batch_hint
        if pod.nominated_node_name or self.batch_hint:
            feasible = self.evaluate_nominated_node(fw, state, pod, diagnosis, record, self.batch_hint)
            if feasible:
                return feasible, diagnosis
        nodes = all_nodes
        if pre_res is not None and not pre_res.all_nodes():
            nodes = _pre_filter_nodes(s.snapshot, all_nodes, pre_res.node_names)
            diagnosis.node_to_status.set_absent_nodes_status(Status(
                Code.UnschedulableAndUnresolvable,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(unsched_plugins))}]"))
        feasible = []
        try:
            feasible = self.find_nodes_that_pass_filters(fw, state, pod, diagnosis, nodes, record)
        except _FilterError as e:
            feasible = e.feasible
            raise
        finally:
            # always updated, an error or not, so that every node gets its turn
            processed = len(feasible) + diagnosis.node_to_status.length()
            s.next_start_node_index = (s.next_start_node_index + processed) % len(all_nodes)
        after = self.find_nodes_that_pass_extenders(pod, feasible, diagnosis.node_to_status, record)
        if len(after) != len(feasible):
            # extenders have no EnqueueExtensions: the pod names "Extender", which every
            # event requeues (the framework's defaultEnqueueExtension)
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        return after, diagnosis

    def evaluate_nominated_node(self, fw, state, pod, diagnosis, record, node_hint: str = "") -> List[NodeInfo]:
        """evaluateNominatedNode: the pod's nominated node, else the batch's hint."""
        s = self.sched
        try:
            ni = s.snapshot.get(pod.nominated_node_name or node_hint)
        except KeyError:
            return []
        try:
            feasible = self.find_nodes_that_pass_filters(fw, state, pod, diagnosis, [ni], record)
            return self.find_nodes_that_pass_extenders(pod, feasible, diagnosis.node_to_status, record)
        except (_FilterError, _CycleError):
            # upstream logs the error ("Evaluation failed on nominated node") and goes on with
            # all the nodes
            return []

    def find_nodes_that_pass_extenders(self, pod, feasible: List[NodeInfo], statuses: NodeToStatus,
                                       record: Optional[CycleRecord] = None) -> List[NodeInfo]:
        """findNodesThatPassExtenders: each interested extender in turn narrows the feasible
        nodes; its failed (and failed-and-unresolvable, which take precedence) nodes get that
        status; an error skips an ignorable extender and fails the attempt otherwise."""
        for ext in self.sched.extenders:
            if not feasible:
                break
            if not ext.is_interested(pod):
                continue
            try:
                kept, failed, unresolvable = ext.filter(pod, feasible)
            except ExtenderError as e:
                if ext.is_ignorable():
                    if record is not None and self.sched.keep_records:
                        record.extender_errors.append((ext.name(), "filter", str(e)))
                    continue  # "Skipping extender as it returned error and has ignorable flag set"
                raise _CycleError(Status(Code.Error, err=RuntimeError(str(e))))
            for name, msg in unresolvable.items():
                statuses.set(name, Status(Code.UnschedulableAndUnresolvable, msg))
            for name, msg in failed.items():
                if name not in unresolvable:
                    statuses.set(name, Status(Code.Unschedulable, msg))
            if record is not None and self.sched.keep_records:
                if ext.name() not in record.extenders_passed:
                    record.extenders_passed.append(ext.name())
                for name in list(unresolvable) + [n for n in failed if n not in unresolvable]:
                    record.extender_filtered.setdefault(name, (ext.name(), statuses.get(name)))
            feasible = kept
        return feasible

    def find_nodes_that_pass_filters(self, fw: Framework, state: CycleState, pod, diagnosis: Diagnosis,
                                     nodes: List[NodeInfo], record: CycleRecord) -> List[NodeInfo]:
        """findNodesThatPassFilters: nodes from nextStartNodeIndex, stopping once
        numFeasibleNodesToFind fit (upstream's workers find the same set wherever it is
        deterministic)."""
        s = self.sched
        n = len(nodes)
        if n == 0:
            return []
        to_find = num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, s.percentage_of_nodes_to_score, n)
        if not s.has_extender_filters() and not s.has_scoring(fw):
            to_find = 1
        start = s.next_start_node_index
        if not fw.has_filter_plugins():
            return [nodes[(start + i) % n] for i in range(to_find)]
        feasible: List[NodeInfo] = []
        use_nominated = bool(s.queue.nominator.nominated)
        run = fw.run_filter_plugins_with_nominated_pods if use_nominated else fw.run_filter_plugins
        statuses = record.node_statuses if s.full_record(pod) else None
        opts = parallelize.current()
        if opts is not None and n > 1 and (opts.parallel or (opts.explore_rng is not None and self._explore_draws(
                fw, to_find, n))):
            return self._find_nodes_that_pass_filters_parallel(opts, fw, state, pod, diagnosis, nodes,
                                                               start, to_find, run, statuses)
        if n > 1 and fw.use_batch:
            # In chunks of as many nodes as there are feasible nodes still to find: the walk
            # below would visit every node of such a chunk, so the batch visits the same nodes.
            # A node with nominated pods goes through RunFilterPluginsWithNominatedPods; on the
            # others that is one RunFilterPlugins, which the batch gives.
            # fw.nominated_pods_for_node, read without its copy where that is the queue's own
            nominated_for = nominated_lister(fw) if use_nominated else None
            # chunks of the snapshot's own list carry their rows of its column table
            table = node_table.table_of(s.snapshot) if nodes is s.snapshot.node_info_list else None
            if table is not None and fw.lazy_statuses:
                if statuses is not None and statuses.__class__ is not LazyStatusMap:
                    # the record keeps the walk's statuses as columns too (made when a report reads them)
                    record.node_statuses = statuses = LazyStatusMap(statuses)
                return self._find_nodes_on_table(fw, state, pod, diagnosis, nodes, table, start, to_find,
                                                 run if use_nominated else None, statuses)
            pieces: Optional[list] = [] if table is not None else None
            i = 0
            while i < n and len(feasible) < to_find:
                size = min(to_find - len(feasible), n - i)
                lo = (start + i) % n
                chunk = _wrapped_chunk(nodes, lo, size)
                if table is not None:
                    chunk = NodeRows(chunk, table, node_table.rows_of_chunk(table, lo, size, n))
                i += size
                if nominated_for is None:
                    sts = fw.run_filter_plugins_batch(state, pod, chunk)
                else:
                    sts = [None] * len(chunk)
                    plain = [k for k, ni in enumerate(chunk) if not nominated_for(ni.node.name)]
                    if plain:
                        sub = chunk.take(plain) if table is not None else [chunk[k] for k in plain]
                        for k, st in zip(plain, fw.run_filter_plugins_batch(state, pod, sub)):
                            sts[k] = st
                    if len(plain) != len(chunk):
                        plain_set = set(plain)
                        for k, ni in enumerate(chunk):
                            if k not in plain_set:
                                sts[k] = run(state, pod, ni)
                if not any(sts):  # all None: every node feasible
                    feasible.extend(chunk)
                    if pieces is not None:
                        pieces.append(chunk.rows)
                    continue
                kept = _walk_chunk(chunk, sts, feasible, diagnosis, statuses)
                if pieces is not None and kept:
                    pieces.append(chunk.take(kept).rows)
            if pieces and len(feasible) > 1:
                return NodeRows(feasible, table, node_table.concat_rows(pieces))
            return feasible
        return _walk_nodes(nodes, start, to_find, lambda i, ni: run(state, pod, ni), diagnosis,
                           statuses, feasible)

    def _find_nodes_on_table(self, fw: Framework, state: CycleState, pod, diagnosis: Diagnosis,
                             nodes: List[NodeInfo], table, start: int, to_find: int, run,
                             statuses: Optional[LazyStatusMap] = None) -> List[NodeInfo]:
        """find_nodes_that_pass_filters' chunked walk over the snapshot's own list (its node
        table's rows), the rejected nodes handed to the diagnosis as columns
        (lazy_status; each Status made when something reads it). `run`: the per-node filter of
        the nodes with nominated pods (None when no pod is nominated). `statuses`: the record's
        map of the walk's statuses, given the same columns."""
        np = node_table.numpy()
        n = len(nodes)
        feasible: List[NodeInfo] = []
        pieces: list = []
        nts = diagnosis.node_to_status
        row_of = table.row_of
        nominated_rows = None
        nominated_for = None
        if run is not None:
            noms = queue_nominations(fw)
            if noms is not None:
                nominated_rows = np.array(sorted(row_of[name] for name in noms if name in row_of), dtype=np.int64)
            else:
                nominated_for = fw.nominated_pods_for_node
        i = 0
        while i < n and len(feasible) < to_find:
            size = min(to_find - len(feasible), n - i)
            lo = (start + i) % n
            chunk = _wrapped_chunk(nodes, lo, size)
            rows = node_table.rows_of_chunk(table, lo, size, n)
            chunk = NodeRows(chunk, table, rows)
            i += size
            if nominated_rows is not None:
                nominated = np.isin(node_table.row_index(rows), nominated_rows) if len(nominated_rows) else None
            elif nominated_for is not None:
                nominated = np.fromiter((bool(nominated_for(ni.node.name)) for ni in chunk), dtype=bool, count=size)
            else:
                nominated = None
            if nominated is not None and nominated.any():
                v = ChunkVerdicts(size)
                plain = (~nominated).nonzero()[0]
                if len(plain):
                    v.merge(plain, fw.run_filter_plugins_batch_lazy(state, pod, chunk.take(plain.tolist())))
                at_pos = nominated.nonzero()[0]
                if run == fw.run_filter_plugins_with_nominated_pods:
                    # the answers remembered by row first, then node by node
                    known = fw.nominated_filter_rows(state, pod, table, node_table.row_index(rows)[at_pos])
                    if known is not None:
                        hit, kind, kinds = known
                        if hit.any():
                            v.add_kinds(at_pos[hit], kind, kinds)
                            at_pos = at_pos[~hit]
                    at = at_pos.tolist()
                    sts = fw.run_filter_plugins_with_nominated_pods_many(state, pod, [chunk[k] for k in at])
                else:
                    at = at_pos.tolist()
                    sts = [run(state, pod, chunk[k]) for k in at]
                for k, st in zip(at, sts):
                    v.set_status(k, st)
            else:
                v = fw.run_filter_plugins_batch_lazy(state, pod, chunk)
            if not v.kinds:
                # no node got a kind: every node of the chunk passed (kind_of all -1)
                if not feasible and size >= to_find:
                    return chunk if size > 1 else list(chunk)  # the one chunk, its rows with it
                feasible.extend(chunk)
                pieces.append(rows)
                continue
            if v.has_error():
                # the walk's order matters up to the first error: node by node
                kept = _walk_chunk(chunk, v.statuses(), feasible, diagnosis, statuses)
                if kept:
                    pieces.append(chunk.take(kept).rows)
                continue
            fits = v.kind_of < 0
            kept_pos = fits.nonzero()[0]
            if len(kept_pos) == size:
                feasible.extend(chunk)
                pieces.append(rows)
                continue
            row_arr = node_table.row_index(rows)
            if len(kept_pos):
                feasible.extend([chunk[k] for k in kept_pos.tolist()])
                pieces.append(row_arr[kept_pos])
            rejected_pos = (~fits).nonzero()[0]
            nts.add_lazy(table, row_arr[rejected_pos], v.kind_of[rejected_pos], v.kinds)
            if statuses is not None:
                statuses.add_lazy(table, row_arr[rejected_pos], v.kind_of[rejected_pos], v.kinds)
            for plugin, code in {(k.plugin, k.code) if isinstance(k, Status) else (k[2], k[0]) for k in v.kinds}:
                diagnosis.add_plugin_code(plugin, code)
        if pieces and len(feasible) > 1:
            return NodeRows(feasible, table, node_table.concat_rows(pieces))
        return feasible

    def _explore_draws(self, fw: Framework, to_find: int, n: int) -> bool:
        """`explore`: whether the filter workers' interleaving is drawn for this walk: it
        decides which nodes are kept when the walk stops early, and (from v1.35, with
        `parallelism` above 1) the feasible list's order, which breaks ties."""
        return to_find < n or parallel_filter.feasible_order_drawn(self.sched.features, fw.parallelism)

    def _find_nodes_that_pass_filters_parallel(self, opts, fw: Framework, state: CycleState, pod,
                                               diagnosis: Diagnosis, nodes: List[NodeInfo], start: int,
                                               to_find: int, run, statuses) -> List[NodeInfo]:
        """findNodesThatPassFilters with its checkNode on Parallelizer.Until (`--parallel`: the
        results merged in node order, as the sequential walk gives them), or with one random
        interleaving of its workers (`explore`: the feasible set beyond the stop point, and the
        feasible list's order where it breaks ties, drawn)."""
        n = len(nodes)
        order = [pc.name for pc in fw.filter_plugins]
        if opts.explore_rng is not None and self._explore_draws(fw, to_find, n):
            fidx, ridx, sts = parallel_filter.explore_walk(opts.explore_rng, fw.parallelism, state, pod,
                                                           nodes, start, to_find, run)
            for i in ridx:
                if sts[i].code == Code.Error:
                    raise _FilterError(sts[i], [nodes[(start + k) % n] for k in fidx])
            for i in sorted(ridx):
                ni, st = nodes[(start + i) % n], sts[i]
                _record_rejection(diagnosis, statuses, ni, st)
            return [nodes[(start + k) % n] for k in fidx]
        sts = parallel_filter.filter_statuses(opts, fw.parallelism, state, pod, nodes, start, to_find, run, order)

        def status_of(i: int, ni: NodeInfo):
            st = sts[i]
            # a node not reached before the stop (kept for safety) is filtered here
            return run(state, pod, ni) if st is parallel_filter.MISSING else st
        return _walk_nodes(nodes, start, to_find, status_of, diagnosis, statuses, [])

    def prioritize_nodes(self, fw: Framework, state: CycleState, pod, nodes: List[NodeInfo],
                         record: Optional[CycleRecord] = None) -> List[NodePluginScores]:
        """prioritizeNodes."""
        if not self.sched.extenders and not fw.has_score_plugins():
            return [NodePluginScores(ni.node.name, [], 1) for ni in nodes]
        st = fw.run_pre_score_plugins(state, pod, nodes)
        if st is not None and not st.is_success():
            raise _CycleError(st)
        detail = record.score_detail if (record is not None and self.sched.explains(pod)) else None
        opts = parallelize.current()
        if opts is not None and opts.parallel and len(nodes) > 1:
            node_map = parallel_filter.score_node_map(opts, fw.parallelism)
            scores, st = fw.run_score_plugins(state, pod, nodes, detail, node_map=node_map)
        else:
            scores, st = fw.run_score_plugins(state, pod, nodes, detail)
        if st is not None and not st.is_success():
            raise _CycleError(st)
        if self.sched.extenders and nodes:
            scores = self.add_extender_scores(pod, nodes, scores, record if self.sched.keep_records else None)
        return scores

    def add_extender_scores(self, pod, nodes: List[NodeInfo], scores,
                            record: Optional[CycleRecord] = None) -> List[NodePluginScores]:
        """prioritizeNodes' extender part: each interested extender's HostPriorityList, scaled
        to the plugins' range (score * weight * (MaxNodeScore / MaxExtenderPriority), in integers)
        and added to the node's total; an extender that fails gives no score."""
        per_node: Dict[str, List[Tuple[str, int]]] = {}
        for ext in self.sched.extenders:
            if not ext.is_interested(pod):
                continue
            try:
                prioritized, weight = ext.prioritize(pod, nodes)
            except ExtenderError as e:
                if record is not None:
                    record.extender_errors.append((ext.name(), "prioritize", str(e)))
                continue  # "Failed to run extender's priority function. No score given by this extender."
            for host, score in prioritized:
                final = score * weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)
                per_node.setdefault(host, []).append((ext.name(), final))
                if record is not None:
                    record.extender_scores.setdefault(host, []).append((ext.name(), score, weight, final))
        self.extender_scored = set(per_node)  # these nodes get a Randomizer (v1.35 on)
        out = []
        for nps in scores:
            extra = per_node.get(nps.name)
            if extra:
                nps = NodePluginScores(nps.name, list(nps.scores) + extra,
                                       nps.total_score + sum(v for _, v in extra))
            out.append(nps)
        return out

    # ------------------------------------------------------------------------------------------
    def binding_cycle(self, state: CycleState, fw: Framework, result: ScheduleResult,
                      assumed: QueuedPodInfo) -> Optional[Status]:
        """bindingCycle with no time passing (see binding_cycle_task)."""
        return drive(self.binding_cycle_task(state, fw, result, assumed))

    def binding_pre_flight(self, state: CycleState, fw: Framework, result: ScheduleResult,
                           assumed: QueuedPodInfo) -> Optional[Status]:
        """bindingCycle's first step with NominatedNodeNameForExpectation (beta, on from v1.35;
        alpha, off in v1.34): RunPreBindPreFlights (an Error, or a rejection, which it does not
        support, fails the binding cycle); when a PreBind plugin will work (Success) or the pod
        will wait at Permit, status.nominatedNodeName is patched to the chosen node, telling
        other components (the cluster autoscaler) where the pod is about to go. PreBind plugins
        whose PreBindPreFlight returned Skip are skipped. Without the gate every PreBind plugin
        runs and nothing is patched."""
        s = self.sched
        if not s.features.enabled("NominatedNodeNameForExpectation"):
            return None
        pod = assumed.pod
        host = result.suggested_host
        st = fw.run_pre_bind_pre_flights(state, pod, host)
        if st is not None and (st.code == Code.Error or st.is_rejected()):
            return st
        state.pre_bind_will_work = st is None or st.is_success()
        if st is None or st.is_success() or fw.will_wait_on_permit(pod):
            current = s.cluster.get("Pod", pod.namespace, pod.name)
            if current is not None and current.uid == pod.uid:
                # "Failed to update the nominated node name in the binding cycle" is logged
                # and binding goes on when the patch fails
                s.update_pod(pod, None, ("ModeOverride", host), current=current)
        return None

    def binding_cycle_task(self, state: CycleState, fw: Framework, result: ScheduleResult,
                           assumed: QueuedPodInfo) -> Task:
        """bindingCycle: WaitOnPermit (already resolved), PreBind (which may wait), Bind,
        PostBind."""
        s = self.sched
        pod = assumed.pod
        host = result.suggested_host
        wp = fw.waiting_pods.pop(pod.uid, None)
        if wp is not None and wp.result is not None and not wp.result.is_success():
            st = wp.result
            if st.is_rejected():
                d = Diagnosis(NodeToStatus(), unschedulable_plugins={st.plugin})
                d.node_to_status.set(host, st)
                return Status(st.code, err=FitError(pod, 1, d))
            # WaitOnPermit: "Failed waiting on permit for pod" (v1.36: a preempted waiting pod)
            return Status(Code.Error, err=RuntimeError(f"waiting on permit for pod: {st.as_error()}"),
                          plugin=st.plugin)
        s.queue.done(pod.uid)
        # v1.36: a pod whose PreBind will work (or whose PreBindPreFlights did not run) is a pod
        # in PreBind until its binding cycle returns; preemption cancels it instead of deleting
        # it while its PreBind runs (PodInPreBind.cancel_pod)
        ctx = pib = None
        if s.features.has("PreemptionCancelsPodInPreBind") and state.pre_bind_will_work:
            uid = pod.uid
            ctx = PreBindContext(wake=lambda: s.wake_binding(uid))
            pib = PodInPreBind(ctx)
            fw.add_pod_in_pre_bind(uid, pib)
        try:
            st = yield from fw.run_pre_bind_plugins_task(state, pod, host, ctx)
            if st is not None and not st.is_success():
                return st
            # "Verify that pod was not preempted during prebinding"
            if pib is not None and not pib.mark_prebound():
                return Status(Code.Error, err=RuntimeError(ctx.cause))
            st = self.bind(fw, state, pod, host)
            if st is not None and not st.is_success():
                return st
            fw.run_post_bind_plugins(state, pod, host)
            return None
        finally:
            if pib is not None:
                fw.remove_pod_in_pre_bind(pod.uid)

    def bind(self, fw: Framework, state: CycleState, pod, host: str) -> Optional[Status]:
        """bind: an extender that binds the pod first (extendersBinding), else the Bind
        plugins."""
        bound, err = self.extenders_binding(pod, host)
        if bound:
            return None if err is None else Status(Code.Error, err=RuntimeError(err))
        return fw.run_bind_plugins(state, pod, host)

    def extenders_binding(self, pod, node: str) -> Tuple[bool, Optional[str]]:
        """extendersBinding: the first interested binder binds (an ignorable one that fails is
        skipped). The extender itself POSTs the Binding to the API server: the harness makes
        that call for it once the extender answered without error."""
        for ext in self.sched.extenders:
            if not ext.is_binder() or not ext.is_interested(pod):
                continue
            try:
                ext.bind(pod, node)
            except ExtenderError as e:
                if ext.is_ignorable():
                    continue  # "Skipping extender in bind as it returned error and has ignorable flag set"
                return True, str(e)
            try:
                self.sched.cluster.create_binding(pod, node)
            except API_ERRORS as e:
                return True, str(e)
            return True, None
        return False, None

    def handle_binding_cycle_error(self, state, fw: Framework, assumed: QueuedPodInfo,
                                   result: ScheduleResult, status: Status, record: CycleRecord) -> None:
        from .queue import EVENT_ASSIGNED_POD_DELETE
        s = self.sched
        pod = assumed.pod
        fw.run_reserve_plugins_unreserve(state, pod, result.suggested_host)
        if not s.cache.forget_pod(pod):
            # "scheduler cache ForgetPod failed" (v1.35: the pod's deletion forgot it already):
            # no move
            self.handle_scheduling_failure(fw, assumed, status, self.failure_nominating_info(), record)
            return
        if status.is_rejected():
            # upstream defers this move until after the failure handler, and skips the pod
            self.handle_scheduling_failure(fw, assumed, status, self.failure_nominating_info(), record)
            s.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None,
                                                  lambda p: p.uid != pod.uid)
        else:
            s.queue.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_DELETE, pod, None)
            self.handle_scheduling_failure(fw, assumed, status, self.failure_nominating_info(), record)

    def handle_scheduling_failure(self, fw: Framework, pinfo: QueuedPodInfo, status: Status,
                                  nominating_info, record: CycleRecord) -> None:
        """handleSchedulingFailure: record the plugins that rejected the pod, requeue it, set
        its nomination and its PodScheduled=False condition."""
        s = self.sched
        reason = "Unschedulable" if status.is_rejected() else "SchedulerError"
        err = status.as_error()
        if isinstance(err, FitError):
            pinfo.unschedulable_plugins = set(err.diagnosis.unschedulable_plugins)
            pinfo.pending_plugins = set(err.diagnosis.pending_plugins)
        msg = status.message()
        record.message = msg
        attempted = pinfo.pod  # upstream's `pod := podInfo.Pod`, before the informer's copy replaces it
        record.result = reason
        current = s.cluster.get("Pod", pinfo.pod.namespace, pinfo.pod.name)
        if current is None:
            s.queue.done(pinfo.pod.uid)  # deleted: nothing to requeue, and the patch finds no pod
            return
        if current.node_name:
            # "Pod has been assigned to node. Abort adding it back to queue." The status patch
            # still goes out, and lands on the bound pod.
            s.queue.done(pinfo.pod.uid)
        elif current.uid != pinfo.pod.uid:
            # "Pod was recreated while handling scheduling failure. Skip requeueing and status
            # updates." (v1.34.9 on): the new pod has its own place in the queue
            s.queue.done(pinfo.pod.uid)
            return
        else:
            pinfo.pod_info = PodInfo.of(current)
            if s.features.has("FailurePatchJudgedOnInformerPod"):
                attempted = pinfo.pod  # v1.36: `pod = podInfo.Pod`, the informer's copy
            s.queue.add_unschedulable_if_not_present(pinfo)
            s.queue.nominator.add_nominated_pod(pinfo.pod_info, nominating_info)
        if err is not None:
            # (a status without an error, every Bind plugin skipped: no pod update upstream)
            # The change is judged on the pod this attempt had (v1.34/v1.35: its
            # nominatedNodeName as it was popped, so one the binding cycle patched since is not
            # seen, and stays; v1.36: the informer's copy, so clearNominatedNode clears it), the
            # patch lands on the API server's pod.
            s.update_pod(attempted, {"type": "PodScheduled", "status": "False", "reason": reason,
                                     "message": msg}, nominating_info, current=current)
        if not current.node_name and not pinfo.unschedulable_plugins and not pinfo.pending_plugins:
            # requeued after backoff whatever happens (an Error, or no nodes)
            s.note_error(current)


def _walk_nodes(nodes: List[NodeInfo], start: int, to_find: int, status_of, diagnosis: Diagnosis,
                statuses: Optional[Dict[str, Status]], feasible: List[NodeInfo]) -> List[NodeInfo]:
    """findNodesThatPassFilters' walk: the nodes in order from `start`, each node's Filter status
    from `status_of(i, node)`, until `to_find` are feasible; an Error stops the cycle."""
    n = len(nodes)
    for i in range(n):
        ni = nodes[(start + i) % n]
        st = status_of(i, ni)
        if st is None or st.code == Code.Success:
            feasible.append(ni)
            if len(feasible) >= to_find:
                break
            continue
        if st.code == Code.Error:
            raise _FilterError(st, feasible)
        _record_rejection(diagnosis, statuses, ni, st)
    return feasible


def _wrapped_chunk(nodes: List[NodeInfo], lo: int, size: int) -> List[NodeInfo]:
    """nodes[lo:lo + size], wrapping around the end of the list (the walk starts at
    nextStartNodeIndex)."""
    chunk = nodes[lo:lo + size]
    if len(chunk) < size:
        chunk = chunk + nodes[:size - len(chunk)]
    return chunk


def _record_rejection(diagnosis: Diagnosis, statuses: Optional[Dict[str, Status]], ni: NodeInfo,
                      st: Status) -> None:
    """A node a Filter rejected: its status in the diagnosis (and the cycle's record)."""
    if statuses is not None:
        statuses[ni.node.name] = st
    diagnosis.node_to_status.set(ni.node.name, st)
    diagnosis.add_plugin_status(st)


def _pre_filter_nodes(snapshot, all_nodes: List[NodeInfo], names) -> List[NodeInfo]:
    """The nodes a PreFilterResult names, in the snapshot's order (upstream ranges over the
    result's Go map: an order of its own; the harness keeps the nodes' order). A few names
    (a DaemonSet pod's one node among thousands) are looked up, not found by a scan."""
    if len(names) <= 8 and all_nodes is snapshot.list():
        found = [snapshot.node_info_map.get(n) for n in names]
        try:
            return sorted((ni for ni in found if ni is not None and ni.node is not None), key=all_nodes.index)
        except ValueError:  # a NodeInfo of the map not in the list: the scan decides
            pass
    return [ni for ni in all_nodes if ni.node.name in names]


def _walk_chunk(chunk, sts, feasible: List[NodeInfo], diagnosis, statuses) -> List[int]:
    """A chunk's verdicts in the walk's order: feasible nodes appended, rejections recorded, the
    first Error raised (with the rejections before it recorded); the feasible nodes' indexes."""
    kept, rejected = [], []
    for k, (ni, st) in enumerate(zip(chunk, sts)):
        if st is None or st.code == Code.Success:
            feasible.append(ni)
            kept.append(k)
            continue
        if st.code == Code.Error:
            _record_rejections(diagnosis, statuses, rejected)
            raise _FilterError(st, feasible)
        rejected.append((ni, st))
    _record_rejections(diagnosis, statuses, rejected)
    return kept


def _record_rejections(diagnosis: Diagnosis, statuses: Optional[Dict[str, Status]],
                        rejected: List[Tuple[NodeInfo, Status]]) -> None:
    """_record_rejection for many nodes: the statuses by node name, then each distinct
    (plugin, code) once into the diagnosis' plugin sets."""
    if not rejected:
        return
    by_name = {ni.node.name: st for ni, st in rejected}
    if statuses is not None:
        statuses.update(by_name)
    diagnosis.node_to_status.node_to_status.update(by_name)
    for plugin, code in {(st.plugin, st.code) for _, st in rejected}:
        diagnosis.add_plugin_code(plugin, code)


class _CycleError(Exception):
    def __init__(self, status: Status):
        self.status = status
        super().__init__(status.message())


class _FilterError(_CycleError):
    """A Filter plugin's Error status, with the nodes found feasible before it."""

    def __init__(self, status: Status, feasible: List[NodeInfo]):
        super().__init__(status)
        self.feasible = feasible
