"""The RequestedToCapacityRatio scoring strategy
(framework/plugins/noderesources/requested_to_capacity_ratio.go)."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from harness.framework import MAX_NODE_SCORE

from harness.framework.node_table import numpy

from ._gomath import go_div, go_div_columns, go_round, go_round_columns
from .resource_allocation import CpuMemoryScorer, ResourceSpec, Scorer, cpu_memory_weights
from .shape_score import FunctionShapePoint, build_broken_linear_function, build_broken_linear_function_columns

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10  # config.MaxCustomPriorityScore


def build_requested_to_capacity_ratio_scorer_function(
        scoring_function_shape: Sequence[FunctionShapePoint],
        resources: Sequence[ResourceSpec]) -> Scorer:
    """buildRequestedToCapacityRatioScorerFunction: each resource scores
    shape(requested * 100 / allocatable) (shape(100) when over-requested); resources scoring 0
    are left out; the weighted average is rounded half away from zero (math.Round)."""
    raw = build_broken_linear_function(scoring_function_shape)
    weights = [w for _, w in resources]

    def resource_scoring_function(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(go_div(requested * MAX_UTILIZATION, capacity))

    def scorer(requested: List[int], allocatable: List[int]) -> int:
        node_score = weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            w = weights[i]
            resource_score = resource_scoring_function(requested[i], alloc)
            if resource_score > 0:
                node_score += resource_score * w
                weight_sum += w
        if weight_sum == 0:
            return 0
        return int(go_round(float(node_score) / float(weight_sum)))

    raw_columns = build_broken_linear_function_columns(scoring_function_shape)

    def columns(requested, allocatable):
        """scorer over int64 columns, one per resource (requested >= 0, every value below
        2**56: nothing overflows); an entry whose allocatable is 0 is left out."""
        if raw_columns is None:
            return None
        np = numpy()
        node_score = weight_sum = 0
        for w, req, alloc in zip(weights, requested, allocatable):
            present = alloc != 0
            over = req > alloc
            util = go_div_columns(np.where(over, 0, req) * MAX_UTILIZATION, np.where(present, alloc, 1))
            rs = raw_columns(np.where(over, MAX_UTILIZATION, util))
            counted = present & (rs > 0)
            node_score = node_score + np.where(counted, rs * w, 0)
            weight_sum = weight_sum + np.where(counted, w, 0)
        node_score = node_score + np.zeros(len(requested[0]), dtype=np.int64)
        weight_sum = weight_sum + np.zeros(len(requested[0]), dtype=np.int64)
        none = weight_sum == 0
        ratio = node_score.astype(np.float64) / np.where(none, 1, weight_sum).astype(np.float64)
        return np.where(none, 0, go_round_columns(ratio))

    scorer.columns = columns  # type: ignore[attr-defined]
    return scorer


def build_requested_to_capacity_ratio_scorer_function_cpu_memory(
        scoring_function_shape: Sequence[FunctionShapePoint],
        resources: Sequence[ResourceSpec]) -> Optional[CpuMemoryScorer]:
    """buildRequestedToCapacityRatioScorerFunction specialised to resources == [cpu, memory] on
    a node with positive allocatable of both (None for other resources). requested * 100 /
    capacity is >= 0 when requested is, so Python's floor division is Go's truncating one there."""
    weights = cpu_memory_weights(resources)
    if weights is None:
        return None
    w_cpu, w_mem = weights
    raw = build_broken_linear_function(scoring_function_shape)

    def utilization_score(requested: int, capacity: int) -> int:
        """resourceScoringFunction with capacity > 0."""
        if requested > capacity:
            return raw(MAX_UTILIZATION)
        if requested >= 0:
            return raw(requested * MAX_UTILIZATION // capacity)
        return raw(go_div(requested * MAX_UTILIZATION, capacity))

    def scorer(req_cpu: int, alloc_cpu: int, req_mem: int, alloc_mem: int) -> int:
        node_score = weight_sum = 0
        cpu = utilization_score(req_cpu, alloc_cpu)
        if cpu > 0:
            node_score = cpu * w_cpu
            weight_sum = w_cpu
        mem = utilization_score(req_mem, alloc_mem)
        if mem > 0:
            node_score += mem * w_mem
            weight_sum += w_mem
        if weight_sum == 0:
            return 0
        return int(go_round(float(node_score) / float(weight_sum)))

    return scorer


def _scaled_shape(shape: Sequence[Tuple[int, int]]) -> List[FunctionShapePoint]:
    """The shape's scores (0-10) scaled to 0-100."""
    return [FunctionShapePoint(int(u), int(s) * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
            for u, s in shape]


def requested_to_capacity_ratio_scorer(resources: Sequence[ResourceSpec],
                                       shape: Sequence[Tuple[int, int]]) -> Scorer:
    """requestedToCapacityRatioScorer: shape scores (0-10) are scaled to 0-100."""
    return build_requested_to_capacity_ratio_scorer_function(_scaled_shape(shape), resources)


def requested_to_capacity_ratio_scorer_cpu_memory(resources: Sequence[ResourceSpec],
                                                  shape: Sequence[Tuple[int, int]]
                                                  ) -> Optional[CpuMemoryScorer]:
    """requestedToCapacityRatioScorer specialised to resources == [cpu, memory] (None for other
    resources)."""
    return build_requested_to_capacity_ratio_scorer_function_cpu_memory(_scaled_shape(shape), resources)
