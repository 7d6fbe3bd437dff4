"""The MostAllocated scoring strategy (framework/plugins/noderesources/most_allocated.go)."""

from __future__ import annotations

from typing import List, Optional, Sequence

from harness.framework import MAX_NODE_SCORE

from harness.framework.node_table import numpy

from ._gomath import go_div, go_div_columns
from .resource_allocation import CpuMemoryScorer, ResourceSpec, Scorer, cpu_memory_weights, weighted_score_columns


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """mostResourceScorer: the weighted average over the resources the node has of
    requested * 100 / allocatable (requested capped at allocatable), in integer arithmetic."""
    weights = [w for _, w in resources]

    def scorer(requested: List[int], allocatable: List[int]) -> int:
        node_score = weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            w = weights[i]
            node_score += most_requested_score(requested[i], alloc) * w
            weight_sum += w
        if weight_sum == 0:
            return 0
        return go_div(node_score, weight_sum)

    def columns(requested, allocatable):
        """scorer over int64 columns, one per resource (requested >= 0, every value below
        2**56: nothing overflows)."""
        np = numpy()
        return weighted_score_columns(weights, requested, allocatable, lambda req, alloc, divisor: go_div_columns(
            np.minimum(req, alloc) * MAX_NODE_SCORE, divisor))

    scorer.columns = columns  # type: ignore[attr-defined]
    return scorer


def most_resource_scorer_cpu_memory(resources: Sequence[ResourceSpec]) -> Optional[CpuMemoryScorer]:
    """mostResourceScorer specialised to resources == [cpu, memory] on a node with positive
    allocatable of both (None for other resources). With capacity > 0 and requested >= 0 every
    mostRequestedScore is >= 0 and so is the weighted sum, so Python's floor division is Go's
    truncating one; a negative requested (only with negative requests) takes the list scorer."""
    weights = cpu_memory_weights(resources)
    if weights is None:
        return None
    w_cpu, w_mem = weights
    weight_sum = w_cpu + w_mem
    max_score = MAX_NODE_SCORE
    general = most_resource_scorer(resources)

    def scorer(req_cpu: int, alloc_cpu: int, req_mem: int, alloc_mem: int) -> int:
        if req_cpu < 0 or req_mem < 0:
            return general([req_cpu, req_mem], [alloc_cpu, alloc_mem])
        cpu = (alloc_cpu if req_cpu > alloc_cpu else req_cpu) * max_score // alloc_cpu
        mem = (alloc_mem if req_mem > alloc_mem else req_mem) * max_score // alloc_mem
        return (cpu * w_cpu + mem * w_mem) // weight_sum

    return scorer


def most_requested_score(requested: int, capacity: int) -> int:
    """mostRequestedScore: the used capacity on a 0-100 scale; requested may exceed capacity
    because pods without requests count with the non-zero defaults, and is then capped."""
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return go_div(requested * MAX_NODE_SCORE, capacity)
