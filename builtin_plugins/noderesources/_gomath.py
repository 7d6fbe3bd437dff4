"""Go's integer and float arithmetic where it differs from Python's.

Go's `/` on int64 truncates toward zero (Python's `//` floors), and `math.Round` rounds half away
from zero (Python's `round` rounds half to even). The scorers of this package use these helpers
wherever an operand could be negative or a value could sit exactly on a half.
"""

from __future__ import annotations

import math


def go_div(a: int, b: int) -> int:
    """a / b for Go integers: the quotient truncated toward zero. b must not be 0."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_round(x: float) -> float:
    """math.Round: the nearest integer, halves away from zero."""
    if math.isnan(x) or math.isinf(x):
        return x
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return float(t)


def go_int64_of_float(x: float) -> int:
    """int64(x) for a finite float: truncation toward zero."""
    return int(x)


def go_div_columns(a, b):
    """go_div over int64 numpy columns (b nowhere 0)."""
    from harness.framework.node_table import numpy
    np = numpy()
    q = np.abs(a) // np.abs(b)
    return np.where((a >= 0) == (b > 0), q, -q)


def go_round_columns(x):
    """go_round over a float64 numpy column of finite values, as int64."""
    from harness.framework.node_table import numpy
    np = numpy()
    t = np.trunc(x)
    t = np.where(np.abs(x - t) >= 0.5, t + np.copysign(1.0, x), t)
    return t.astype(np.int64)
