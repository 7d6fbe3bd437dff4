"""The Placement extension points of v1.36 (TopologyAwareWorkloadScheduling): the types a
PlacementGenerate or PlacementScore plugin sees (fwk.Placement, fwk.PodGroupInfo,
fwk.PodGroupAssignments, fwk.PlacementScore), the framework's RunPlacementGeneratePlugins and
RunPlacementScorePlugins, and the pod group cycle's podGroupSchedulingPlacementAlgorithm and
findBestPlacement (schedule_one_podgroup.go).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from .cycle_state import CycleState
from .status import Code, Status

if TYPE_CHECKING:  # pragma: no cover
    from .types import NodeInfo, QueuedPodInfo

MAX_PLACEMENT_SCORE = 100  # fwk.MaxScore
MIN_PLACEMENT_SCORE = 0


@dataclass
class Placement:
    """fwk.Placement: a named set of nodes a pod group may be placed in."""

    name: str = ""
    nodes: List["NodeInfo"] = field(default_factory=list)


@dataclass
class PodGroupInfo:
    """fwk.PodGroupInfo: the pod group of a cycle (its namespace and name, and the pods this
    cycle places)."""

    namespace: str
    name: str
    pods: List[Any] = field(default_factory=list)

    def get_namespace(self) -> str:
        return self.namespace

    def get_name(self) -> str:
        return self.name


@dataclass
class PodGroupAssignments:
    """fwk.PodGroupAssignments: a feasible placement and the (pod, node name) pairs found in it."""

    placement: Placement
    proposed_assignments: List[Tuple[Any, str]] = field(default_factory=list)


@dataclass
class PlacementScore:
    """fwk.PlacementScore."""

    placement: Placement
    score: int = 0


def _call(plugin: str, fn, *args) -> Tuple[Any, Optional[Status]]:
    try:
        out = fn(*args)
    except Exception as e:  # a plugin that raises is an Error naming it
        return None, Status(Code.Error, err=RuntimeError(f"plugin {plugin!r} raised {type(e).__name__}: {e}"))
    if isinstance(out, tuple) and len(out) == 2:
        return out[0], out[1]
    return out, None


def run_placement_generate_plugins(fw, state, pod_group: PodGroupInfo, nodes: List["NodeInfo"]
                                   ) -> Tuple[List[Placement], Optional[Status]]:
    """RunPlacementGeneratePlugins: only the first PlacementGenerate plugin runs, on a placement
    of every node."""
    parent = Placement("", list(nodes))
    calls = fw.ep_plugins.get("placementGenerate") or []
    if not calls:
        return [parent], None
    pc = calls[0]
    placements, st = _call(pc.name, pc.fn, state, pod_group, parent)
    if st is not None and not st.is_success():
        st.plugin = pc.name
        return [], st
    placements = list(placements or [])
    if not placements:
        return [], Status(Code.Unschedulable, "no feasible placements found", plugin=pc.name)
    return placements, None


def run_placement_score_plugins(fw, state, pod_group: PodGroupInfo, assignments: List[PodGroupAssignments]
                                ) -> Tuple[List[Tuple[Placement, int]], Optional[Status]]:
    """RunPlacementScorePlugins: each plugin scores each placement, normalizes its scores, and
    the weighted scores are summed per placement."""
    calls = fw.ep_plugins.get("placementScore") or []
    per_plugin = {}
    for pc in calls:
        scores = []
        for a in assignments:
            score, st = _call(pc.name, pc.fn, state, pod_group, a)
            if st is not None and not st.is_success():
                return [], Status(Code.Error, err=RuntimeError(
                    f'running PlacementScore plugins: plugin "{pc.name}" failed with: {st.as_error()}'))
            scores.append(PlacementScore(a.placement, int(score or 0)))
        per_plugin[pc.name] = scores
    for pc in calls:
        norm = getattr(pc.plugin, "normalize_placement_score", None)
        if norm is None or not getattr(norm, "schedharness_impl", None):
            continue
        _, st = _call(pc.name, norm, state, pod_group, per_plugin[pc.name])
        if st is not None and not st.is_success():
            return [], Status(Code.Error, err=RuntimeError(
                f'running NormalizePlacementScore on PlacementScore plugins: plugin "{pc.name}" failed with: '
                f'{st.as_error()}'))
    totals = []
    for i, a in enumerate(assignments):
        total = 0
        for pc in calls:
            score = per_plugin[pc.name][i].score
            if score > MAX_PLACEMENT_SCORE or score < MIN_PLACEMENT_SCORE:
                return [], Status(Code.Error, err=RuntimeError(
                    f'applying score defaultWeights on PlacementScore plugins: plugin "{pc.name}" returns an '
                    f'invalid score {score}, it should in the range of [{MIN_PLACEMENT_SCORE}, '
                    f'{MAX_PLACEMENT_SCORE}] after normalizing'))
            total += score * fw.placement_score_weight.get(pc.name, 1)
        totals.append((a.placement, total))
    return totals, None


@dataclass
class AlgorithmResult:
    """algorithmResult: one pod's outcome in the pod group algorithm."""

    pinfo: "QueuedPodInfo"
    result: object  # ScheduleResult
    state: CycleState
    record: object  # CycleRecord
    status: Optional[Status] = None
    permit_status: Optional[Status] = None
    requires_preemption: bool = False


@dataclass
class PodGroupAlgorithmResult:
    """podGroupAlgorithmResult."""

    pod_results: List[AlgorithmResult]
    status: Optional[Status]
    waiting_on_preemption: bool = False


def placement_order(placements: List[Placement]) -> List[Placement]:
    """The order the placements are tried in. Upstream tries them in the order the
    PlacementGenerate plugin returns them, and TopologyPlacement builds that list by ranging over
    a map of topology domains: random from cycle to cycle. `run` takes them by name (a fixed
    order, as for the harness's other Go map iterations); `explore` draws an order (a shuffle on
    its random source). The order decides which placement's failure a group that fits nowhere
    reports ("first placement status"), and which placement's PostFilter side effects (a
    nomination, a deallocated claim) come first; among feasible placements the best score wins
    whatever the order (ties by findBestPlacement's Randomizer)."""
    from . import parallelize

    ordered = sorted(placements, key=lambda p: p.name)
    opts = parallelize.current()
    if opts is not None and opts.explore_rng is not None and len(ordered) > 1:
        opts.explore_rng.shuffle(ordered)
    return ordered


def run_placement_algorithm(cycles, fw, group):
    """podGroupSchedulingPlacementAlgorithm: the default algorithm in each generated placement
    (in placement_order); none feasible is
    Unschedulable "0/N placements are available, first placement status: ..."; several are
    scored and the best kept (ties at random, findBestPlacement's Randomizer)."""
    s = cycles.sched
    s.cache.update_snapshot(s.snapshot)
    first = group[0][0].pod
    name = (first.spec.get("schedulingGroup") or {}).get("podGroupName") or ""
    pod_group = PodGroupInfo(first.namespace, name, [p.pod for p, _ in group])
    state = CycleState()
    state.pod_group_cycle = True
    placements, st = run_placement_generate_plugins(fw, state, pod_group, s.snapshot.list())
    if st is not None:
        return PodGroupAlgorithmResult([], st)
    any_result = None
    feasible: List[Tuple[Placement, Any]] = []
    for placement in placement_order(placements):
        s.snapshot.assume_placement({ni.node.name for ni in placement.nodes if ni.node is not None})
        try:
            result = cycles.pod_group_scheduling_default_algorithm(fw, group)
        finally:
            s.snapshot.forget_placement()
        if result.status is not None and result.status.code == Code.Error:
            return result
        if any_result is None:
            any_result = result
        if result.status is None or result.waiting_on_preemption:
            feasible.append((placement, result))
    if not feasible:
        first_err = any_result.status.as_error() if any_result.status is not None else None
        any_result.status = Status(Code.Unschedulable, f"0/{len(placements)} placements are available, "
                                                       f"first placement status: {first_err}")
        return any_result
    if len(feasible) == 1:
        return feasible[0][1]
    assignments = [PodGroupAssignments(p, [(r.pinfo.pod, r.result.suggested_host) for r in res.pod_results
                                           if r.result is not None and r.result.suggested_host])
                   for p, res in feasible]
    totals, st = run_placement_score_plugins(fw, state, pod_group, assignments)
    if st is not None:
        return PodGroupAlgorithmResult([], st)
    best, best_key = 0, None
    for i, (_, total) in enumerate(totals):
        key = (total, s.rng.getrandbits(63))  # rand.Int() per placement
        if best_key is None or key > best_key:
            best, best_key = i, key
    return feasible[best][1]


__all__ = ["Placement", "PodGroupInfo", "PodGroupAssignments", "PlacementScore",
           "run_placement_generate_plugins", "run_placement_score_plugins", "run_placement_algorithm"]
