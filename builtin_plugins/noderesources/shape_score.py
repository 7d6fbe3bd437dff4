"""The broken linear function of RequestedToCapacityRatio (framework/plugins/helper/shape_score.go)."""

from __future__ import annotations

from typing import Any, Callable, List, NamedTuple, Optional, Sequence

from ._gomath import go_div, go_div_columns


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


def build_broken_linear_function_columns(shape: Sequence[FunctionShapePoint]) -> Optional[Callable[[Any], Any]]:
    """build_broken_linear_function over an int64 numpy column of arguments in [0, 100] (the
    same points in the same order, each argument taking the first point at or above it); None
    for a shape whose numbers are not small enough for int64 products."""
    pts = [FunctionShapePoint(int(u), int(s)) for u, s in shape]
    if not pts or any(abs(u) > 1 << 20 or abs(s) > 1 << 20 for u, s in pts):
        return None

    def fn(p):
        from harness.framework.node_table import numpy
        np = numpy()
        out = np.full(len(p), pts[-1].score, dtype=np.int64)
        done = np.zeros(len(p), dtype=bool)
        for i, pt in enumerate(pts):
            hit = ~done & (p <= pt.utilization)
            if not hit.any():
                continue
            if i == 0:
                val = pts[0].score
            else:
                prev = pts[i - 1]
                # pt.utilization == prev.utilization cannot be hit: prev took those arguments
                val = prev.score + go_div_columns((pt.score - prev.score) * (p - prev.utilization),
                                                  pt.utilization - prev.utilization)
            out = np.where(hit, val, out)
            done |= hit
        return out

    return fn
