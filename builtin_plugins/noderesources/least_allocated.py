"""The LeastAllocated scoring strategy (framework/plugins/noderesources/least_allocated.go)."""

from __future__ import annotations

from typing import List, Sequence

from harness.framework import MAX_NODE_SCORE

from ._gomath import go_div
from .resource_allocation import ResourceSpec, Scorer


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

    return scorer


def least_requested_score(requested: int, capacity: int) -> int:
    """leastRequestedScore: the unused capacity on a 0-100 scale (0 when over-requested)."""
    if capacity == 0:
        return 0
    if requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)
