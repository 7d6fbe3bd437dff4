"""The LeastAllocated scoring strategy (framework/plugins/noderesources/least_allocated.go)."""

from __future__ import annotations

from typing import List, Optional, Sequence

from harness.framework import MAX_NODE_SCORE
from harness.framework.node_table import numpy

from ._gomath import go_div, go_div_columns
from .resource_allocation import CpuMemoryScorer, ResourceSpec, Scorer, cpu_memory_weights, weighted_score_columns


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """leastResourceScorer: the weighted average over the resources the node has of
    (allocatable - requested) * 100 / allocatable, in integer arithmetic:
    sum(score_i * weight_i) / sum(weight_i)."""
    weights = [w for _, w in resources]

    def scorer(requested: List[int], allocatable: List[int]) -> int:
        node_score = weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            w = weights[i]
            node_score += least_requested_score(requested[i], alloc) * w
            weight_sum += w
        if weight_sum == 0:
            return 0
        return go_div(node_score, weight_sum)

    def columns(requested, allocatable):
        """scorer over int64 columns, one per resource (requested >= 0, every value below
        2**56: nothing overflows)."""
        np = numpy()
        return weighted_score_columns(weights, requested, allocatable, lambda req, alloc, divisor: np.where(
            req > alloc, 0, go_div_columns(np.maximum(alloc - req, 0) * MAX_NODE_SCORE, divisor)))

    scorer.columns = columns  # type: ignore[attr-defined]
    return scorer


def least_resource_scorer_cpu_memory(resources: Sequence[ResourceSpec]) -> Optional[CpuMemoryScorer]:
    """leastResourceScorer specialised to resources == [cpu, memory] on a node with positive
    allocatable of both (None for other resources). With capacity > 0 every leastRequestedScore
    is >= 0 and so is the weighted sum, so Python's floor division is Go's truncating one."""
    weights = cpu_memory_weights(resources)
    if weights is None:
        return None
    w_cpu, w_mem = weights
    weight_sum = w_cpu + w_mem
    max_score = MAX_NODE_SCORE

    def scorer(req_cpu: int, alloc_cpu: int, req_mem: int, alloc_mem: int) -> int:
        cpu = 0 if req_cpu > alloc_cpu else (alloc_cpu - req_cpu) * max_score // alloc_cpu
        mem = 0 if req_mem > alloc_mem else (alloc_mem - req_mem) * max_score // alloc_mem
        return (cpu * w_cpu + mem * w_mem) // weight_sum

    def many(req_cpu, alloc_cpu, req_mem, alloc_mem) -> List[int]:
        """scorer over lists."""
        cpu = [0 if r > a else (a - r) * max_score // a for r, a in zip(req_cpu, alloc_cpu)]
        mem = [0 if r > a else (a - r) * max_score // a for r, a in zip(req_mem, alloc_mem)]
        return [(c * w_cpu + m * w_mem) // weight_sum for c, m in zip(cpu, mem)]

    def columns(req_cpu, alloc_cpu, req_mem, alloc_mem):
        """scorer over int64 columns (every value below 2**56, so nothing overflows)."""
        np = numpy()
        cpu = np.where(req_cpu > alloc_cpu, 0, (alloc_cpu - req_cpu) * max_score // alloc_cpu)
        mem = np.where(req_mem > alloc_mem, 0, (alloc_mem - req_mem) * max_score // alloc_mem)
        return (cpu * w_cpu + mem * w_mem) // weight_sum

    scorer.many = many  # type: ignore[attr-defined]
    scorer.columns = columns  # type: ignore[attr-defined]
    return scorer


def least_requested_score(requested: int, capacity: int) -> int:
    """leastRequestedScore: the unused capacity on a 0-100 scale (0 when over-requested)."""
    if capacity == 0:
        return 0
    if requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)
