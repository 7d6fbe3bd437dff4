"""The generic preemption evaluator (pkg/scheduler/framework/preemption/preemption.go).

A preemption PostFilter plugin (DefaultPreemption) implements :class:`PreemptionInterface` and
hands itself to an :class:`Evaluator`, whose :meth:`Evaluator.preempt` runs the algorithm:

1. the preemptor must be eligible (``pod_eligible_to_preempt_others``);
2. ``find_candidates``: the nodes whose filter status is Unschedulable are dry-run
   (``select_victims_on_node`` on a copy of the node and of the cycle state);
3. no candidate: Unschedulable with a FitError-style message over the dry-run statuses;
4. ``select_candidate`` picks one node (``pick_one_node_for_preemption``);
5. ``prepare_candidate[_async]`` evicts the victims and clears lower-priority nominations.

Deterministic stand-ins for what is random or concurrent upstream (say so where it matters):

- ``DryRunPreemption`` checks nodes in parallel and keeps candidates in completion order; here the
  nodes are checked one by one from the offset, in the order of the snapshot's node list, stopping
  as soon as the upstream stop condition holds (a non-violating candidate exists and there are
  ``num_candidates`` candidates in all).
- ``pickOneNodeForPreemption`` iterates a Go map, so its last tie-break ("the first node") is
  random; here it is the first candidate in candidate order (non-PDB-violating candidates first,
  each group in node order).
- ``NodesForStatusCode`` over the explicit statuses iterates a Go map; here the snapshot's node
  order is kept.
- The asynchronous preemption goroutine (SchedulerAsyncPreemption, on by default in v1.34) runs
  through the handle's ``run_async(fn)``: the scheduler starts it once the scheduling cycle has
  ended, at the same virtual instant (without such a handle it runs to completion at once); the
  pod stays in the "preempting" set (and PreEnqueue gates it) until its last victim is deleted.
- ``GetPodStartTime`` falls back to "now" when ``status.startTime`` is absent; here it falls back
  to ``metadata.creationTimestamp`` (pods in cases are not started by a kubelet), and equal
  times are ordered by creation.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from typing import Any, Callable, Dict, Iterable, List, Optional, Protocol, Sequence, Set, Tuple

from ..api.nodeaffinity import aggregate_error
from ..api.objects import Pod, update_pod_condition
from .extender_handler import ExtenderError
from .filter_memo import copy_status
from .node_table import NodeRows, numpy, row_index, table_of
from .status import Code, Status
from .types import Diagnosis, FitError, NodeInfo, NodeToStatus, PostFilterResult

MAX_INT32 = (1 << 31) - 1
# nodes whose remembered dry-run answers are looked up at once (the dry run usually stops
# after some hundreds)
_KNOWN_STRETCH = 256
MIN_INT64 = -(1 << 63)

# v1.DisruptionTarget / v1.PodReasonPreemptionByScheduler
DISRUPTION_TARGET = "DisruptionTarget"
POD_REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


# ---------------------------------------------------------------------------------------------
# Candidates
# ---------------------------------------------------------------------------------------------
PREEMPTION_EXPLAIN_KEY = "schedharness/preemption"  # CycleState key: what Preempt saw, for reports


class Victims:
    """extenderv1.Victims: the pods to evict (most important first) and the PDB violations."""

    __slots__ = ("pods", "num_pdb_violations", "criteria")

    def __init__(self, pods: Sequence[Pod], num_pdb_violations: int = 0,
                 criteria: Optional[Tuple[Any, ...]] = None):
        self.pods: List[Pod] = list(pods)
        self.num_pdb_violations = num_pdb_violations
        # default_criteria(pods, num_pdb_violations) when the dry run knew it (a memo's), read
        # by pickOneNodeForPreemption only while pods and num_pdb_violations are these
        self.criteria = (tuple(self.pods), num_pdb_violations, criteria) if criteria is not None else None

    @classmethod
    def remembered(cls, pods: Tuple[Pod, ...], num_pdb_violations: int,
                   criteria: Optional[Tuple[Any, ...]]) -> "Victims":
        """Victims(pods, num_pdb_violations, criteria) for a tuple of pods (a memo's)."""
        v = cls.__new__(cls)
        v.pods = list(pods)
        v.num_pdb_violations = num_pdb_violations
        v.criteria = (pods, num_pdb_violations, criteria) if criteria is not None else None
        return v

    def __repr__(self) -> str:
        return f"Victims({[p.key for p in self.pods]}, pdb_violations={self.num_pdb_violations})"


class Candidate:
    """preemption.Candidate: a node the preemptor could run on once `victims` are evicted."""

    __slots__ = ("name", "victims")

    def __init__(self, name: str, victims: Victims):
        self.name = name
        self.victims = victims

    def __repr__(self) -> str:
        return f"Candidate({self.name}, {self.victims!r})"


class PreemptionInterface(Protocol):
    """preemption.Interface: what a preemption plugin provides to the Evaluator."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> Tuple[int, int]:
        """The offset of the first node to dry-run and how many candidates to shortlist."""

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> Dict[str, Victims]:
        """Node name -> victims (only for plugins with one candidate per node)."""

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status) -> Tuple[bool, str]:
        """Whether the pod may preempt, and the reason when it may not."""

    def select_victims_on_node(self, state, pod: Pod, node_info: NodeInfo,
                               pdbs: Sequence[Any]) -> Tuple[List[Pod], int, Status]:
        """The victims on one node (state and node_info are copies the method may change)."""

    def ordered_score_funcs(self, nodes_to_victims: Dict[str, Victims]) -> Optional[List[Callable[[str], Any]]]:
        """Score functions to pick the candidate; None for the default criteria."""


# ---------------------------------------------------------------------------------------------
# Pod start times and importance (pkg/scheduler/util/utils.go)
# ---------------------------------------------------------------------------------------------
_NOW = 1 << 62  # "time.Now()": later than any timestamp in a case
_TS = re.compile(r"^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|z|[+-]\d\d:?\d\d)?$")


def parse_time_ns(value: Any) -> Optional[int]:
    """An RFC 3339 timestamp (metav1.Time / MicroTime) as Unix nanoseconds; None if unparsable."""
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        dt = value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)
        return int(dt.timestamp()) * 10**9 + dt.microsecond * 1000
    if isinstance(value, (int, float)):
        return int(value * 10**9)
    m = _TS.match(str(value).strip())
    if m is None:
        return None
    y, mo, d, h, mi, s, frac, tz = m.groups()
    dt = _dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=_dt.timezone.utc)
    secs = int((dt - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)).total_seconds())
    if tz and tz not in ("Z", "z"):
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        secs -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    ns = int((frac or "0").ljust(9, "0"))
    return secs * 10**9 + ns


def get_pod_start_time(pod: Pod) -> Tuple[int, int]:
    """util.GetPodStartTime as (Unix nanoseconds, creation index): status.startTime; without it
    upstream uses time.Now(), here metadata.creationTimestamp stands in (then "now", later than
    everything). Equal times are ordered by creation (metadata x-creationIndex): pods created
    earlier are taken to have started earlier."""

    start = pod.status.get("startTime")
    # remembered with the startTime it was computed for: copies made by status updates share
    # the memo
    memo = getattr(pod, "_memo", None)
    hit = memo.get("preemption_start_time") if type(memo) is dict else None
    if hit is not None and hit[0] == start:
        return hit[1]
    t = parse_time_ns(start)
    if t is None:
        t = parse_time_ns(pod.raw.get("metadata", {}).get("creationTimestamp"))
    value = (_NOW if t is None else t, pod.creation_index)
    if type(memo) is dict:
        memo["preemption_start_time"] = (start, value)
    return value


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """util.MoreImportantPod: higher priority, then the one that started earlier."""
    if pod1.priority != pod2.priority:
        return pod1.priority > pod2.priority
    return get_pod_start_time(pod1) < get_pod_start_time(pod2)


def sort_by_importance(items: List[Any], more_important: Callable[[Pod, Pod], bool],
                       pod_of: Callable[[Any], Pod] = lambda x: x) -> None:
    """sort.Slice(items, MoreImportantPod) in place. Go's sort.Slice is an insertion sort for up
    to 12 elements (stable); this one is stable for any length."""

    def cmp(a, b) -> int:
        pa, pb = pod_of(a), pod_of(b)
        if more_important(pa, pb):
            return -1
        if more_important(pb, pa):
            return 1
        return 0

    items.sort(key=functools.cmp_to_key(cmp))


def get_earliest_pod_start_time(victims: Victims) -> Optional[Tuple[int, int]]:
    """util.GetEarliestPodStartTime: the earliest start time among the highest-priority victims."""
    return earliest_start_time_of(victims.pods)


def earliest_start_time_of(pods: Sequence[Pod]) -> Optional[Tuple[int, int]]:
    """get_earliest_pod_start_time of victims with these pods."""
    if not pods:
        return None
    earliest = get_pod_start_time(pods[0])
    max_priority = pods[0].priority
    for pod in pods[1:]:  # (pods[0] would leave both as they are)
        if pod.priority == max_priority:
            t = get_pod_start_time(pod)
            if t < earliest:
                earliest = t
        elif pod.priority > max_priority:
            max_priority = pod.priority
            earliest = get_pod_start_time(pod)
    return earliest


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------
def nodes_for_status_code(m: NodeToStatus, nodes: Sequence[NodeInfo], code: Code) -> List[NodeInfo]:
    """NodeToStatus.NodesForStatusCode, keeping the node list's order."""
    if type(m) is NodeToStatus:
        table = m.lazy_table()
        if table is not None and table.nodes is nodes:
            # the walk's rejections held as columns over the node table: read the codes by row
            codes = m.codes_by_row(table)
            if codes is not None:
                rows = (codes == int(code)).nonzero()[0]
                return NodeRows([nodes[i] for i in rows.tolist()], table, rows)
        # m.get inlined
        get, absent = m.node_to_status.get, m.absent_nodes_status
        return [ni for ni in nodes if get(ni.node.name if ni.node is not None else "", absent).code == code]
    return [ni for ni in nodes if m.get(ni.name).code == code]


def _add_lazy(m: NodeToStatus, table, rows: List[int], kinds_of: List[int], kinds: List[Any]) -> None:
    """m.add_lazy of nodes by row with their kinds (lazy_status), and the lists emptied."""
    np = numpy()
    m.add_lazy(table, np.asarray(rows, dtype=np.int64), np.asarray(kinds_of, dtype=np.int64), kinds)
    rows.clear()
    kinds_of.clear()


def _not_found(kind: str, name: str) -> RuntimeError:
    return RuntimeError(f'{kind} "{name}" not found')


class _NotFound(Exception):
    pass


def pick_one_node_for_preemption(nodes_to_victims: Dict[str, Victims],
                                 score_funcs: Optional[List[Callable[[str], Any]]] = None) -> str:
    """pickOneNodeForPreemption: the node with, in order,
    1. the fewest PDB violations, 2. the lowest highest-priority victim, 3. the smallest sum of
    victim priorities (each shifted by MaxInt32+1), 4. the fewest victims, 5. the latest earliest
    start time among its highest-priority victims, 6. the first remaining (map order upstream,
    candidate order here)."""
    if not nodes_to_victims:
        return ""
    all_candidates = list(nodes_to_victims)
    if not score_funcs:
        if all(v.pods for v in nodes_to_victims.values()):
            return _pick_by_default_criteria(nodes_to_victims, all_candidates)
        score_funcs = default_score_funcs(nodes_to_victims)
    for f in score_funcs:
        selected: List[str] = []
        max_score: Any = None
        for node in all_candidates:
            score = f(node)
            if max_score is None or score > max_score:
                max_score = score
                selected = []
            if score == max_score:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        all_candidates = selected
    return all_candidates[0]


def default_score_funcs(nodes_to_victims: Dict[str, Victims]) -> List[Callable[[str], Any]]:
    """pickOneNodeForPreemption's default criteria, as score functions (greater is better)."""

    def min_num_pdb_violating(node: str) -> int:
        return -nodes_to_victims[node].num_pdb_violations

    def min_highest_priority(node: str) -> int:
        return -nodes_to_victims[node].pods[0].priority

    def min_sum_priorities(node: str) -> int:
        return -sum(p.priority + MAX_INT32 + 1 for p in nodes_to_victims[node].pods)

    def min_num_pods(node: str) -> int:
        return -len(nodes_to_victims[node].pods)

    def latest_start_time(node: str) -> Tuple[int, int]:
        t = get_earliest_pod_start_time(nodes_to_victims[node])
        return (MIN_INT64, 0) if t is None else t

    return [min_num_pdb_violating, min_highest_priority, min_sum_priorities, min_num_pods, latest_start_time]


def default_criteria(pods: Sequence[Pod], num_pdb_violations: int) -> Tuple[Any, ...]:
    """pickOneNodeForPreemption's default criteria of a candidate with these victims (at least
    one) as one tuple, greater is better: fewer PDB violations, lower highest priority, smaller
    sum of priorities (each shifted by MaxInt32+1), fewer victims, later earliest start time."""
    total = 0
    for p in pods:
        total += p.priority + MAX_INT32 + 1
    return (-num_pdb_violations, -pods[0].priority, -total, -len(pods), earliest_start_time_of(pods))


def _known_criteria(v: Victims) -> Optional[Tuple[Any, ...]]:
    """The criteria the dry run gave v, while its pods and violations are still those."""
    c = v.criteria
    if c is None or c[1] != v.num_pdb_violations:
        return None
    pods, known = v.pods, c[0]
    if len(pods) != len(known):
        return None
    for a, b in zip(pods, known):
        if a is not b:
            return None
    return c[2]


def _pick_by_default_criteria(nodes_to_victims: Dict[str, Victims], all_candidates: List[str]) -> str:
    """pick_one_node_for_preemption's default criteria, fewer calls: narrowing the candidates by
    each score in turn (keeping the maxima, in order) and taking the first left is taking the
    first candidate whose tuple of scores is the greatest (max keeps the first of equal maxima);
    the start times are looked up only for the candidates tied on the four other scores. Every
    candidate has at least one victim."""

    keyed = []
    knowns: Dict[str, Tuple[Any, ...]] = {}
    for node in all_candidates:
        v = nodes_to_victims[node]
        known = _known_criteria(v) if v.criteria is not None else None
        if known is not None:
            knowns[node] = known
            keyed.append((known[:4], node))
            continue
        pods = v.pods
        total = 0
        for p in pods:
            total += p.priority + MAX_INT32 + 1
        keyed.append(((-v.num_pdb_violations, -pods[0].priority, -total, -len(pods)), node))
    best = max(k for k, _ in keyed)
    tied = [node for k, node in keyed if k == best]
    if len(tied) == 1:
        return tied[0]

    def start(node: str):
        known = knowns.get(node)
        return known[4] if known is not None else get_earliest_pod_start_time(nodes_to_victims[node])

    return max(tied, key=start)


def pdb_selector(pdb: Any) -> Any:
    """A PDB's selector (metav1.LabelSelectorAsSelector); None when it matches nothing (nil,
    empty or invalid)."""
    from ..api import labels as labelsel

    try:
        s = labelsel.from_label_selector((pdb.raw.get("spec") or {}).get("selector"))
    except labelsel.SelectorError:
        return None
    if s.is_nothing() or s.empty():
        return None
    return s


class PDBBudgets:
    """The PDBs' allowed disruptions, counted down as pods are taken (filterPodsWithPDBViolation
    and filterVictimsWithPDBViolation share this walk)."""

    def __init__(self, pdbs: Sequence[Any]):
        self.pdbs = list(pdbs)
        self.allowed = [int((pdb.raw.get("status") or {}).get("disruptionsAllowed") or 0) for pdb in pdbs]
        self.selectors = [pdb_selector(pdb) for pdb in pdbs]

    def take(self, pod: Pod) -> Iterable[bool]:
        """For each PDB matching the pod (same namespace, selector, the pod not in its
        status.disruptedPods), in order: one disruption counted, and whether it went below
        zero."""
        if not pod.labels:
            return
        for i, pdb in enumerate(self.pdbs):
            if pdb.namespace != pod.namespace:
                continue
            sel = self.selectors[i]
            if sel is None or not sel.matches(pod.labels):
                continue
            if pod.name in ((pdb.raw.get("status") or {}).get("disruptedPods") or {}):
                continue
            self.allowed[i] -= 1
            yield self.allowed[i] < 0


def get_lower_priority_nominated_pods(handle, pod: Pod, node_name: str) -> List[Pod]:
    """getLowerPriorityNominatedPods: pods nominated to node_name with a lower priority."""
    pod_infos = handle.nominated_pods_for_node(node_name) if hasattr(handle, "nominated_pods_for_node") else []
    return [pi.pod for pi in pod_infos or [] if pi.pod.priority < pod.priority]


# ---------------------------------------------------------------------------------------------
# The evaluator
# ---------------------------------------------------------------------------------------------
class Evaluator:
    """preemption.Evaluator."""

    def __init__(self, plugin_name: str, handle, interface: PreemptionInterface,
                 enable_async_preemption: bool):
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface
        self.enable_async_preemption = enable_async_preemption
        # pods currently preempting asynchronously (uids), gated by PreEnqueue meanwhile
        self.preempting: Set[str] = set()
        self.preempt_pod: Callable[[Candidate, Pod, Pod, str], None] = self._preempt_pod

    def is_pod_running_preemption(self, pod_uid: str) -> bool:
        return pod_uid in self.preempting

    # -- Preempt ---------------------------------------------------------------------------------
    def preempt(self, state, pod: Pod, m: NodeToStatus) -> Tuple[Optional[PostFilterResult], Status]:
        """Evaluator.Preempt."""
        # 0) the latest version of the pod, from the informer cache
        cluster = getattr(self.handle, "cluster", None)
        latest = cluster.get("Pod", pod.namespace, pod.name) if cluster is not None else None
        if latest is None:
            return None, Status.error(_not_found("pod", pod.name))
        pod = latest

        # 1) the preemptor must be eligible
        nominated_node_status = m.get(pod.nominated_node_name)
        ok, msg = self.interface.pod_eligible_to_preempt_others(pod, nominated_node_status)
        if not ok:
            return None, Status(Code.Unschedulable, msg)

        # 2) all preemption candidates
        all_nodes = self.handle.snapshot.list()
        candidates, node_to_status, err = self.find_candidates(state, all_nodes, pod, m)
        explained = {"candidates": list(candidates), "statuses": node_to_status, "picked": ""}
        state.write(PREEMPTION_EXPLAIN_KEY, explained)  # for `schedharness explain` only
        if err is not None and not candidates:
            return None, Status.error(err)

        if not candidates:
            fit_error = FitError(pod, len(all_nodes), Diagnosis(node_to_status=node_to_status))
            node_to_status.set_absent_nodes_status(
                Status(Code.UnschedulableAndUnresolvable, "Preemption is not helpful for scheduling"))
            return PostFilterResult(nominated_node_name=""), Status(Code.Unschedulable, str(fit_error))

        # 3) the extenders may narrow the candidates
        candidates, st = self.call_extenders(pod, candidates)
        if st is not None and not st.is_success():
            return None, st

        # 4) the best candidate
        best = self.select_candidate(candidates)
        explained["picked"] = best.name if best is not None else ""
        if best is None or not best.name:
            return None, Status(Code.Unschedulable, "no candidate node for preemption")

        # 5) evict the victims
        if self.enable_async_preemption:
            self.prepare_candidate_async(best, pod, self.plugin_name)
        else:
            s = self.prepare_candidate(best, pod, self.plugin_name)
            if s is not None and not s.is_success():
                return None, s
        return PostFilterResult(nominated_node_name=best.name), Status(Code.Success)

    def call_extenders(self, pod: Pod, candidates: List[Candidate]) -> Tuple[List[Candidate], Optional[Status]]:
        """callExtenders: each interested extender with a preempt verb gets the victims map and
        returns the nodes (and victims) it accepts; a node without victims is an error (or
        dropped, for an ignorable extender); an error fails preemption unless ignorable."""
        extenders = list(getattr(self.handle, "extenders", None) or [])
        if not extenders:
            return candidates, None
        victims_map = self.interface.candidates_to_victims_map(candidates)
        if not victims_map:
            return candidates, None
        for ext in extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod):
                continue
            try:
                node_to_victims = ext.process_preemption(pod, victims_map, self.handle.snapshot)
            except ExtenderError as e:
                if ext.is_ignorable():
                    continue  # "Skipped extender as it returned error and has ignorable flag set"
                return [], Status.error(str(e))
            for node, victims in list(node_to_victims.items()):
                if victims is None or not victims.pods:
                    if ext.is_ignorable():
                        del node_to_victims[node]
                        continue
                    return [], Status.error(f'expected at least one victim pod on node "{node}"')
            victims_map = node_to_victims
            if not victims_map:
                break
        return [Candidate(node, victims) for node, victims in victims_map.items()], None

    def find_candidates(self, state, all_nodes: Sequence[NodeInfo], pod: Pod, m: NodeToStatus
                        ) -> Tuple[List[Candidate], NodeToStatus, Optional[Exception]]:
        """findCandidates: dry-run the nodes where preemption might help (status Unschedulable;
        UnschedulableAndUnresolvable ones are skipped)."""
        if not all_nodes:
            return [], NodeToStatus(), RuntimeError("no nodes available")
        potential = nodes_for_status_code(m, all_nodes, Code.Unschedulable)
        if not potential:
            return [], NodeToStatus(), None
        pdbs = self.pod_disruption_budgets()
        offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def pod_disruption_budgets(self) -> List[Any]:
        """getPodDisruptionBudgets: every PDB of the cluster."""
        cluster = getattr(self.handle, "cluster", None)
        return list(cluster.list("PodDisruptionBudget")) if cluster is not None else []

    def dry_run_preemption(self, state, pod: Pod, potential_nodes: Sequence[NodeInfo],
                           pdbs: Sequence[Any], offset: int, num_candidates: int
                           ) -> Tuple[List[Candidate], NodeToStatus, Optional[Exception]]:
        """DryRunPreemption, sequentially from `offset` (see the module docstring): candidates
        that violate no PDB first, then the others, each list capped at num_candidates."""
        non_violating: List[Candidate] = []
        violating: List[Candidate] = []
        node_statuses = NodeToStatus()
        errs: List[Exception] = []
        n = len(potential_nodes)
        # an interface may supply a per-dry-run checker of one node (e.g. with a memo); it
        # must give exactly what select_victims_on_node gives on copies of the node and state,
        # and may add a fourth value: default_criteria of the victims it gives
        make_checker = getattr(self.interface, "victims_on_node_checker", None)
        check = make_checker(state, pod, pdbs) if make_checker is not None else None
        # ... and answers it already knows, by row of the node table, for many nodes at once
        remembered = getattr(check, "remembered", None)
        table = prow = None
        if remembered is not None and potential_nodes.__class__ is NodeRows:
            table = potential_nodes.table
            if table_of(self.handle.snapshot) is not table:
                table = None
            else:
                prow = row_index(potential_nodes.rows)
        known: Optional[List[Any]] = None
        known_lo = known_hi = 0

        def add(c: Candidate) -> bool:
            """Keep a candidate (each list capped); whether the dry run stops here."""
            target = non_violating if c.victims.num_pdb_violations == 0 else violating
            if len(target) < num_candidates:
                target.append(c)
            return bool(non_violating) and len(non_violating) + len(violating) >= num_candidates

        # with the table, the failed nodes go to node_statuses as columns, in the walk's order
        # (lazy_status): those with a remembered answer as its kind, the others as their Status
        lazy_rows: List[int] = []
        lazy_kinds: List[int] = []
        kinds: List[Any] = []  # this dry run's kinds
        kind_at: Dict[int, int] = {}  # the memo's kinds (by id) -> index in kinds
        memo_kinds: Any = None
        for i in range(n):
            criteria = None
            if table is not None:
                if i >= known_hi:  # the next stretch of nodes in the dry run's order
                    known_lo, known_hi = i, min(n, i + _KNOWN_STRETCH)
                    known = remembered(table, prow[(numpy().arange(known_lo, known_hi) + offset) % n])
                    if known is None:
                        table = None
                        if lazy_rows:  # node by node from here on (set() keeps the order)
                            _add_lazy(node_statuses, potential_nodes.table, lazy_rows, lazy_kinds, kinds)
                hit = known[i - known_lo] if table is not None else None
                if hit is not None:
                    pods, num_pdb_violations, status, ok, criteria, kind, row, of = hit
                    if not ok:
                        if kind < 0:
                            lazy_rows.append(row)
                            lazy_kinds.append(len(kinds))
                            kinds.append(copy_status(status))
                            continue
                        if of is not memo_kinds:
                            memo_kinds = of
                            kind_at = {}
                        at = kind_at.get(kind)
                        if at is None:
                            at = kind_at[kind] = len(kinds)
                            kinds.append(of[kind])
                        lazy_rows.append(row)
                        lazy_kinds.append(at)
                        continue
                    if pods:
                        if add(Candidate(table.names[row], Victims.remembered(pods, num_pdb_violations, criteria))):
                            break
                        continue
                    node_info = potential_nodes[(offset + i) % n]
                    name = node_info.name
                    pods = []
                else:
                    node_info = potential_nodes[(offset + i) % n]
                    name = node_info.name
                    answer = check(node_info)
                    pods, num_pdb_violations, status = answer[0], answer[1], answer[2]
                    if len(answer) > 3:
                        criteria = answer[3]
            elif check is not None:
                node_info = potential_nodes[(offset + i) % n]
                name = node_info.name
                answer = check(node_info)
                pods, num_pdb_violations, status = answer[0], answer[1], answer[2]
                if len(answer) > 3:
                    criteria = answer[3]
            else:
                node_info_copy = potential_nodes[(offset + i) % n].snapshot()
                name = node_info_copy.name
                state_copy = state.clone()
                pods, num_pdb_violations, status = self.interface.select_victims_on_node(
                    state_copy, pod, node_info_copy, pdbs)
            ok = status is None or status.is_success()
            if ok and pods:
                if add(Candidate(name, Victims(pods, num_pdb_violations, criteria))):
                    break
                continue
            if ok and not pods:
                status = Status.error(f'expected at least one victim pod on node "{name}"')
            if status.code == Code.Error:
                errs.append(status.as_error())
            if table is not None:
                lazy_rows.append(prow[(offset + i) % n])
                lazy_kinds.append(len(kinds))
                kinds.append(status)
                continue
            node_statuses.set(name, status)
        if lazy_rows and table is not None:
            _add_lazy(node_statuses, table, lazy_rows, lazy_kinds, kinds)
        err = RuntimeError(aggregate_error([str(e) for e in errs])) if errs else None
        return non_violating + violating, node_statuses, err

    def select_candidate(self, candidates: Sequence[Candidate]) -> Optional[Candidate]:
        """SelectCandidate."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims_map = self.interface.candidates_to_victims_map(candidates)
        score_funcs = self.interface.ordered_score_funcs(victims_map)
        node = pick_one_node_for_preemption(victims_map, score_funcs)
        victims = victims_map.get(node)
        if victims is not None:
            return Candidate(node, victims)
        return candidates[0]

    # -- evicting the victims ----------------------------------------------------------------------
    def _preempt_pod(self, c: Candidate, preemptor: Pod, victim: Pod, plugin_name: str) -> None:
        """Executor.PreemptPod: reject a victim waiting at Permit (v1.36: preempt it, an Error
        for its binding cycle), cancel one in PreBind (v1.36), else add the DisruptionTarget
        condition to it and delete it. Raises _NotFound when the victim is already gone."""
        get_waiting_pod = getattr(self.handle, "get_waiting_pod", None)
        waiting = get_waiting_pod(victim.uid) if get_waiting_pod is not None else None
        features = getattr(self.handle, "feature_gates", None)
        if waiting is not None:
            if features is not None and not features.has("PreemptionPreemptsWaitingPod"):
                waiting.reject(plugin_name, "preempted")  # v1.34/v1.35: no API call either way
                return
            # v1.36: Preempt (an Error for the waiting pod); a wait already over falls back to
            # the API calls
            if waiting.preempt(plugin_name, "preempted"):
                return
        else:
            # v1.36: a victim in PreBind has its binding cycle cancelled, no API call
            # (GetPodInPreBind, CancelPod); once its PreBind finished, CancelPod says false
            get_pod_in_pre_bind = getattr(self.handle, "get_pod_in_pre_bind", None)
            in_pre_bind = get_pod_in_pre_bind(victim.uid) if get_pod_in_pre_bind is not None else None
            if in_pre_bind is not None and in_pre_bind.cancel_pod(f"preempted by {plugin_name}"):
                return
        cluster = self.handle.cluster
        current = cluster.get("Pod", victim.namespace, victim.name)
        if current is None:
            raise _NotFound(victim.key)
        condition = {
            "type": DISRUPTION_TARGET,
            "status": "True",
            "reason": POD_REASON_PREEMPTION_BY_SCHEDULER,
            "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority "
                       f"{getattr(preemptor, 'preemptor_type', 'pod')}",
        }
        changed = []
        patched = current.with_status(lambda st: changed.append(update_pod_condition(st, condition)))
        if changed and changed[0]:
            cluster.update(patched)
            current = patched
        if current.deletion_timestamp is not None:
            # a DELETE of a pod whose graceful deletion has started (only v1.34 sends it): the
            # API server leaves it pending, the kubelet still has to finish it; it is a
            # preemption all the same (the victim gets its Preempted event)
            delete_terminating = getattr(cluster, "delete_terminating", None)
            if delete_terminating is not None:
                delete_terminating(current)
            return
        cluster.delete(current)

    def _clear_nominated_node_name(self, pods: Iterable[Pod]) -> None:
        """clearNominatedNodeName: patch status.nominatedNodeName to "" where it is set."""
        cluster = self.handle.cluster
        for p in pods:
            current = cluster.get("Pod", p.namespace, p.name)
            if current is None or not current.nominated_node_name:
                continue
            cluster.update(current.with_status(lambda st: st.pop("nominatedNodeName", None)))

    def _skips_terminating_victims(self) -> bool:
        """v1.35 on: a victim whose graceful deletion has started gets no API call (v1.34.9
        reverted v1.34.1's skip: it patches and deletes every victim)."""
        features = getattr(self.handle, "feature_gates", None)
        return features is None or features.has("PreemptionSkipsTerminatingVictims")

    def prepare_candidate(self, c: Candidate, pod: Pod, plugin_name: str) -> Optional[Status]:
        """prepareCandidate (SchedulerAsyncPreemption off): evict, then clear nominations."""
        skip_terminating = self._skips_terminating_victims()
        for victim in c.victims.pods:
            if skip_terminating and victim.deletion_timestamp is not None:
                continue
            try:
                self.preempt_pod(c, pod, victim, plugin_name)
            except _NotFound:
                pass
            except Exception as e:
                return Status.error(e)
        self._clear_nominated_node_name(get_lower_priority_nominated_pods(self.handle, pod, c.name))
        return None

    def prepare_candidate_async(self, c: Candidate, pod: Pod, plugin_name: str) -> None:
        """prepareCandidateAsync: clear lower-priority nominations, evict all victims but the last,
        leave the preempting set, evict the last one.

        v1.35 on (PreemptionSkipsTerminatingVictims) victims already being deleted are left out,
        and with none left nothing starts; v1.34.9 evicts every victim. An eviction error
        cancels the goroutine's context, so the last victim is not evicted (v1.36 skips it
        explicitly; v1.34/v1.35's call fails on the cancelled context). Then the preemptor is
        activated. With every call done at one virtual instant, v1.35's "last victim pending"
        bookkeeping (IsPodRunningPreemption false once the last victim is deleting or gone)
        answers as v1.34's "leave the set before the last eviction" does."""
        if self._skips_terminating_victims():
            victim_pods = [v for v in c.victims.pods if v.deletion_timestamp is None]
        else:
            victim_pods = list(c.victims.pods)
        if not victim_pods:
            return
        self.preempting.add(pod.uid)

        def run() -> None:
            failed = False
            try:
                self._clear_nominated_node_name(get_lower_priority_nominated_pods(self.handle, pod, c.name))
            except Exception:
                pass  # "Cannot clear 'NominatedNodeName' field": logged, not critical
            for victim in victim_pods[:-1]:
                try:
                    self.preempt_pod(c, pod, victim, plugin_name)
                except _NotFound:
                    pass
                except Exception:
                    failed = True
                    break
            self.preempting.discard(pod.uid)
            if not failed:
                try:
                    self.preempt_pod(c, pod, victim_pods[-1], plugin_name)
                except _NotFound:
                    pass
                except Exception:
                    failed = True
            if failed:
                activate = getattr(self.handle, "activate", None)
                if activate is not None:
                    activate(list(getattr(pod, "pods", None) or [pod]))  # preemptor.Pods()

        run_async = getattr(self.handle, "run_async", None)
        if callable(run_async):
            run_async(run)
        else:
            run()
