"""The MostAllocated scoring strategy (framework/plugins/noderesources/most_allocated.go)."""

from __future__ import annotations

from typing import List, Sequence

from harness.framework import MAX_NODE_SCORE

from ._gomath import go_div
from .resource_allocation import ResourceSpec, Scorer


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

    return scorer


def most_requested_score(requested: int, capacity: int) -> int:
    """mostRequestedScore: the used capacity on a 0-100 scale; requested may exceed capacity
    because pods without requests count with the non-zero defaults, and is then capped."""
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return go_div(requested * MAX_NODE_SCORE, capacity)
