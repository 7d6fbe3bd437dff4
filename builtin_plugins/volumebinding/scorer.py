"""The volume capacity scorer (volumebinding/scorer.go) and helper.BuildBrokenLinearFunction."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Sequence, Tuple

MAX_UTILIZATION = 100


@dataclass
class StorageResource:
    """StorageResource: requested and capacity bytes of one storage class on a node."""

    requested: int = 0
    capacity: int = 0


ClassResourceMap = Dict[str, StorageResource]
FunctionShape = Sequence[Tuple[int, int]]  # (utilization, score) points


def _go_div(a: int, b: int) -> int:
    """Go's int64 division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def build_broken_linear_function(shape: FunctionShape) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction: shape[0].score below the first point, the last score
    above the last one, linear (Go integer arithmetic) in between."""
    points: List[Tuple[int, int]] = [(int(u), int(s)) for u, s in shape]

    def f(p: int) -> int:
        for i, (u, s) in enumerate(points):
            if p <= u:
                if i == 0:
                    return points[0][1]
                pu, ps = points[i - 1]
                return ps + _go_div((s - ps) * (p - pu), u - pu)
        return points[-1][1]

    return f


def build_scorer_function(shape: FunctionShape) -> Callable[[ClassResourceMap], int]:
    """buildScorerFunction: the mean over storage classes of the shape at the class's
    utilization (requested * 100 / capacity, 100 when over capacity or no capacity), rounded
    half away from zero."""
    raw = build_broken_linear_function(shape)

    def f(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(_go_div(requested * MAX_UTILIZATION, capacity))

    def scorer(class_resources: ClassResourceMap) -> int:
        weight_sum = len(class_resources)
        if weight_sum == 0:
            return 0
        node_score = 0
        for res in class_resources.values():
            node_score += f(res.requested, res.capacity)
        x = node_score / weight_sum
        # math.Round: half away from zero.
        return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))

    return scorer
