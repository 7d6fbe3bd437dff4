"""The broken linear function of RequestedToCapacityRatio (framework/plugins/helper/shape_score.go)."""

from __future__ import annotations

from typing import Callable, List, NamedTuple, Sequence

from ._gomath import go_div


class FunctionShapePoint(NamedTuple):
    """helper.FunctionShapePoint."""

    utilization: int  # the function's argument
    score: int  # the function's value


FunctionShape = List[FunctionShapePoint]


def build_broken_linear_function(shape: Sequence[FunctionShapePoint]) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction: shape[0].score below the first point, shape[-1].score
    above the last one, linear in between, in Go integer arithmetic (the division truncates
    toward zero, which matters on a decreasing segment)."""
    pts = [FunctionShapePoint(int(u), int(s)) for u, s in shape]

    def fn(p: int) -> int:
        for i, pt in enumerate(pts):
            if p <= pt.utilization:
                if i == 0:
                    return pts[0].score
                prev = pts[i - 1]
                return prev.score + go_div((pt.score - prev.score) * (p - prev.utilization),
                                           pt.utilization - prev.utilization)
        return pts[-1].score

    return fn
