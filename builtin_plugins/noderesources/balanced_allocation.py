"""NodeResourcesBalancedAllocation (framework/plugins/noderesources/balanced_allocation.go):
favours nodes whose resource fractions (requested / allocatable, after placing the pod) are
close to each other.

From v1.36 (ungated, kubernetes #135573; CHANGES "BalancedAllocationScoresChange") the score is
the change in balance the pod makes: 50 + (50 + balance with the pod - balance without it) / 2,
each balance already truncated to an integer (balancedResourceScore) and the division an
integer one, so an unchanged balance scores 75, perfectly balancing a node 100 and unbalancing
it 50."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

from harness.framework import MAX_NODE_SCORE, Plugin, Status, hookimpl
from harness.framework.status import SKIP
from harness.framework.node_table import numpy

from .lazy_modules import dra_scoring as _dra_scoring, extended as _extended
from .. import names
from ..helper import features_of
from . import args as baargs
from .fit import sign_resources
from .resource_allocation import ResourceAllocationScorer

NAME = names.NodeResourcesBalancedAllocation
PRE_SCORE_STATE_KEY = "PreScore" + NAME


class BalancedAllocationPreScoreState:
    """balancedAllocationPreScoreState: the pod's requests in the order of args.resources."""

    __slots__ = ("pod_requests", "dra")

    def __init__(self, pod_requests: List[int], dra: Any = None):
        self.pod_requests = pod_requests
        self.dra = dra  # draPreScoreState (DRAExtendedResource, v1.35 on)

    def clone(self) -> "BalancedAllocationPreScoreState":
        return self


def balanced_resource_scorer(requested: List[int], allocatable: List[int]) -> int:
    """balancedResourceScorer: int64((1 - std) * 100) over the fractions requested/allocatable
    (each capped at 1) of the resources the node has, in float64 as Go computes them: with two
    fractions std = |f1 - f2| / 2, with more the population standard deviation, with one 0."""
    fractions: List[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable):
        if alloc == 0:
            continue
        fraction = float(req) / float(alloc)
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(len(fractions)))
    return int((1 - std) * float(MAX_NODE_SCORE))


_MAX_NODE_SCORE_F = float(MAX_NODE_SCORE)


def _balanced_score_columns(requested, allocatable):
    """balanced_resource_scorer over int64 columns, one per resource: per node the fractions of
    the resources it has (allocatable != 0), the same float64 operations in the same order
    (the sums accumulate only over the fractions a node has), int() truncating as astype does."""
    np = numpy()
    n = len(requested[0])
    count = np.zeros(n, dtype=np.int64)
    total = np.zeros(n, dtype=np.float64)
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    fractions = []
    for req, alloc in zip(requested, allocatable):
        present = alloc != 0
        f = req.astype(np.float64) / np.where(present, alloc, 1).astype(np.float64)
        f = np.where(f > 1, 1.0, f)
        total = np.where(present, total + f, total)
        first = np.where(present & (count == 0), f, first)
        second = np.where(present & (count == 1), f, second)
        count = count + present
        fractions.append((present, f))
    std = np.where(count == 2, np.abs((first - second) / 2), 0.0)
    many = count > 2
    if many.any():
        mean = total / np.where(many, count, 1).astype(np.float64)
        acc = np.zeros(n, dtype=np.float64)
        for present, f in fractions:
            acc = np.where(present, acc + (f - mean) * (f - mean), acc)
        std = np.where(many, np.sqrt(acc / np.where(many, count, 1).astype(np.float64)), std)
    return ((1 - std) * _MAX_NODE_SCORE_F).astype(np.int64)


balanced_resource_scorer.columns = _balanced_score_columns  # type: ignore[attr-defined]


def balanced_resource_scorer_cpu_memory(req_cpu: int, alloc_cpu: int, req_mem: int, alloc_mem: int) -> int:
    """balancedResourceScorer for resources == [cpu, memory] on a node that has both: its
    two-fraction branch, the same float64 operations in the same order."""
    f_cpu = float(req_cpu) / float(alloc_cpu)
    if f_cpu > 1:
        f_cpu = 1.0
    f_mem = float(req_mem) / float(alloc_mem)
    if f_mem > 1:
        f_mem = 1.0
    return int((1 - abs((f_cpu - f_mem) / 2)) * _MAX_NODE_SCORE_F)


def _balanced_many(req_cpu, alloc_cpu, req_mem, alloc_mem) -> List[int]:
    """balanced_resource_scorer_cpu_memory over lists (the same float64 operations)."""
    fc = [1.0 if f > 1 else f for f in [float(r) / float(a) for r, a in zip(req_cpu, alloc_cpu)]]
    fm = [1.0 if f > 1 else f for f in [float(r) / float(a) for r, a in zip(req_mem, alloc_mem)]]
    mx = _MAX_NODE_SCORE_F
    return [int((1 - abs((c - m) / 2)) * mx) for c, m in zip(fc, fm)]


def _balanced_columns(req_cpu, alloc_cpu, req_mem, alloc_mem):
    """balanced_resource_scorer_cpu_memory over int64 columns: the same float64 operations,
    int() truncating toward zero as astype does."""
    np = numpy()
    fc = np.minimum(req_cpu.astype(np.float64) / alloc_cpu.astype(np.float64), 1.0)
    fm = np.minimum(req_mem.astype(np.float64) / alloc_mem.astype(np.float64), 1.0)
    return ((1 - np.abs((fc - fm) / 2)) * _MAX_NODE_SCORE_F).astype(np.int64)


balanced_resource_scorer_cpu_memory.many = _balanced_many  # type: ignore[attr-defined]
balanced_resource_scorer_cpu_memory.columns = _balanced_columns  # type: ignore[attr-defined]

_HALF = MAX_NODE_SCORE // 2


def balance_change_score(score_with_pod: int, score_without_pod: int) -> int:
    """v1.36's balancedResourceScorer after its two balancedResourceScore calls:
    MaxNodeScore/2 + (MaxNodeScore/2 + with - without) / 2. Both scores lie in [50, 100], so the
    dividend is never negative and Go's truncating division is a floor."""
    return _HALF + (_HALF + score_with_pod - score_without_pod) // 2


def balanced_resource_change_scorer(requested: List[int], allocated: List[int], allocatable: List[int]) -> int:
    """balancedResourceScorer (v1.36): the balance with the pod (`requested`) against the
    balance without it (`allocated`), each balancedResourceScore (balanced_resource_scorer)."""
    return balance_change_score(balanced_resource_scorer(requested, allocatable),
                                balanced_resource_scorer(allocated, allocatable))


def _balanced_change_score_columns(requested, allocated, allocatable):
    """balanced_resource_change_scorer over int64 columns."""
    return balance_change_score(_balanced_score_columns(requested, allocatable),
                                _balanced_score_columns(allocated, allocatable))


balanced_resource_change_scorer.columns = _balanced_change_score_columns  # type: ignore[attr-defined]


def balanced_change_cpu_memory(req_cpu: int, alloc_cpu: int, req_mem: int, alloc_mem: int,
                               prev_cpu: int, prev_mem: int) -> int:
    """balanced_resource_change_scorer for resources == [cpu, memory] on a node that has both."""
    return balance_change_score(balanced_resource_scorer_cpu_memory(req_cpu, alloc_cpu, req_mem, alloc_mem),
                                balanced_resource_scorer_cpu_memory(prev_cpu, alloc_cpu, prev_mem, alloc_mem))


def _balanced_change_many(req_cpu, alloc_cpu, req_mem, alloc_mem, prev_cpu, prev_mem) -> List[int]:
    with_pod = _balanced_many(req_cpu, alloc_cpu, req_mem, alloc_mem)
    without = _balanced_many(prev_cpu, alloc_cpu, prev_mem, alloc_mem)
    return [_HALF + (_HALF + w - o) // 2 for w, o in zip(with_pod, without)]


def _balanced_change_columns(req_cpu, alloc_cpu, req_mem, alloc_mem, prev_cpu, prev_mem):
    with_pod = _balanced_columns(req_cpu, alloc_cpu, req_mem, alloc_mem)
    without = _balanced_columns(prev_cpu, alloc_cpu, prev_mem, alloc_mem)
    return _HALF + (_HALF + with_pod - without) // 2


balanced_change_cpu_memory.many = _balanced_change_many  # type: ignore[attr-defined]
balanced_change_cpu_memory.columns = _balanced_change_columns  # type: ignore[attr-defined]


class BalancedAllocation(Plugin):
    """NodeResourcesBalancedAllocation: scores with the node's Requested (not the non-zero
    defaults) and the pod's requests including pod-level requests."""

    name = NAME
    args_kind = "NodeResourcesBalancedAllocationArgs"

    enable_in_place_pod_vertical_scaling = True  # InPlacePodVerticalScaling: beta, on
    enable_pod_level_resources = True  # PodLevelResources: beta, on

    @classmethod
    def set_defaults(cls, args: Dict[str, Any]) -> Dict[str, Any]:
        return baargs.set_defaults_node_resources_balanced_allocation_args(args)

    @classmethod
    def validate_args(cls, args: Dict[str, Any]) -> List[Tuple[str, str]]:
        return baargs.validate_node_resources_balanced_allocation_args(args)

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        """NewBalancedAllocation."""
        if args is None:
            args = self.set_defaults({})
        super().__init__(args, handle)
        errs = baargs.validate_node_resources_balanced_allocation_args(args)
        if errs:
            raise ValueError(baargs.aggregate(errs))
        resources = [(r.get("name", ""), int(r.get("weight") or 0)) for r in args.get("resources") or []]
        self.gates = features_of(handle)
        change = self.gates.has("BalancedAllocationScoresChange")
        self.scorer = ResourceAllocationScorer(
            NAME, balanced_resource_change_scorer if change else balanced_resource_scorer, resources,
            use_requested=True, with_allocated=change,
            cpu_memory_scorer=balanced_change_cpu_memory if change else balanced_resource_scorer_cpu_memory,
            enable_pod_level_resources=self.enable_pod_level_resources,
            enable_in_place_pod_vertical_scaling=self.enable_in_place_pod_vertical_scaling,
            enable_in_place_pod_level_resources_vertical_scaling=features_of(handle).get(
                "InPlacePodLevelResourcesVerticalScaling", False))

    @property
    def resources(self) -> List[Tuple[str, int]]:
        return self.scorer.resources

    def _dra_pre_score(self):
        """getDRAPreScoredParams (DRAExtendedResource, v1.35 on). v1.35 builds the scorer without
        the DRA manager: a DRA extended resource name among the resources dereferences it (an
        error here; kube-scheduler crashes). v1.36 has the manager but no CEL cache (see
        dra_scoring)."""
        extended = _extended()
        if not self.gates.enabled("DRAExtendedResource") or not self.gates.has(extended.CHANGE):
            return None, None
        if not self.gates.has("BalancedAllocationDRAManager"):
            if any(extended.is_dra_extended_resource_name(n, self.gates) for n, _ in self.scorer.resources):
                return None, Status.error(RuntimeError(
                    f"{NAME}: invalid memory address or nil pointer dereference (v1.35's scorer has no DRA "
                    f"manager for the DRA extended resource in its resources)"))
            return None, None
        dra_scoring = _dra_scoring()
        if not hasattr(self, "_dra_cache"):
            self._dra_cache: Dict[Any, bool] = {}
        return dra_scoring.get_dra_pre_scored_params(self.handle, self.gates, self.scorer.resources, None,
                                                     self._dra_cache, allow_selectors=False), None

    @hookimpl
    def sign_pod(self, pod):
        """SignPod: the pod's requests as NodeResourcesFit signs them (the same key and value,
        DRAExtendedResource as there)."""
        return sign_resources(pod, self.enable_pod_level_resources, self.gates, getattr(self.handle, "cluster", None))

    @hookimpl
    def pre_score(self, state, pod, nodes):
        pod_requests = self.scorer.calculate_pod_resource_request_list(pod)
        if self.scorer.is_best_effort_pod(pod_requests):
            # Best-effort pods are not balanced, lest they all land on one node (#129138).
            return SKIP
        dra, st = self._dra_pre_score()
        if st is not None:
            return st
        state.write(PRE_SCORE_STATE_KEY, BalancedAllocationPreScoreState(pod_requests, dra))
        return None

    @hookimpl
    def score(self, state, pod, node_info):
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            s = BalancedAllocationPreScoreState(self.scorer.calculate_pod_resource_request_list(pod))
            if self.scorer.is_best_effort_pod(s.pod_requests):
                return 0, None
            s.dra, st = self._dra_pre_score()
            if st is not None:
                return 0, st
        if s.dra is not None:
            dra_scoring = _dra_scoring()
            return dra_scoring.score(self.scorer, NAME, node_info, s.pod_requests, s.dra)
        return self.scorer.score(pod, node_info, s.pod_requests)

    def score_nodes(self, state, pod, nodes):
        """score on each node (the batch form the framework calls)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None or s.dra is not None:
            return None
        return self.scorer.score_nodes(pod, nodes, s.pod_requests)
