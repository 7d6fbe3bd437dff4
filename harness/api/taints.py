"""Taints and tolerations: v1.Toleration.ToleratesTaint (k8s.io/api/core/v1/toleration.go),
v1.Taint.ToString, and TolerationsTolerateTaint / FindMatchingUntoleratedTaint
(k8s.io/component-helpers/scheduling/corev1/helpers.go).

From v1.35 the matching functions take ``enable_comparison_operators`` (the
TaintTolerationComparisonOperators gate: alpha, off): with it, a toleration's ``Lt``/``Gt``
compares the taint's value with its own as decimal integers; without it (and in v1.34, which has
no such operators) ``Lt``/``Gt`` tolerate nothing.

Taints and tolerations are the manifest dicts: {"key", "operator", "value", "effect"}; a missing
field is the empty string, as in Go.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

Taint = Mapping[str, Any]
Toleration = Mapping[str, Any]

TAINT_EFFECT_NO_SCHEDULE = "NoSchedule"
TAINT_EFFECT_PREFER_NO_SCHEDULE = "PreferNoSchedule"
TAINT_EFFECT_NO_EXECUTE = "NoExecute"

TOLERATION_OP_EXISTS = "Exists"
TOLERATION_OP_EQUAL = "Equal"
TOLERATION_OP_LT = "Lt"
TOLERATION_OP_GT = "Gt"

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

__all__ = [
    "TAINT_EFFECT_NO_SCHEDULE", "TAINT_EFFECT_PREFER_NO_SCHEDULE", "TAINT_EFFECT_NO_EXECUTE",
    "TOLERATION_OP_EXISTS", "TOLERATION_OP_EQUAL", "TOLERATION_OP_LT", "TOLERATION_OP_GT",
    "TAINT_NODE_UNSCHEDULABLE", "is_decimal_integer", "toleration_tolerates_taint", "tolerations_tolerate_taint", "find_matching_untolerated_taint",
    "do_not_schedule_taints_filter", "taint_to_string",
]


def _s(obj: Mapping[str, Any], key: str) -> str:
    v = obj.get(key)
    return "" if v is None else str(v)


def is_decimal_integer(value: str) -> bool:
    """content.IsDecimalInteger (apimachinery/pkg/api/validate/content): "0" or an optional "-"
    then a digit 1-9 and more digits; no "+", no leading zeros, no spaces."""
    n = len(value)
    if n == 0:
        return False
    i = 1 if value[0] == "-" else 0
    if i == n:
        return False
    if value[i] == "0":
        return n == 1
    return all("0" <= c <= "9" for c in value[i:])


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _parse_int64(value: str) -> Optional[int]:
    """IsDecimalInteger then strconv.ParseInt(value, 10, 64); None when either fails."""
    if not is_decimal_integer(value):
        return None
    v = int(value)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


def compare_numeric_values(toleration_val: str, taint_val: str, op: str) -> bool:
    """compareNumericValues: Lt tolerates a taint whose value is below the toleration's, Gt one
    above it; a value that is not a canonical int64 tolerates nothing."""
    t = _parse_int64(toleration_val)
    if t is None:
        return False
    v = _parse_int64(taint_val)
    if v is None:
        return False
    if op == TOLERATION_OP_LT:
        return v < t
    if op == TOLERATION_OP_GT:
        return v > t
    return False


def toleration_tolerates_taint(toleration: Toleration, taint: Taint,
                               enable_comparison_operators: bool = False) -> bool:
    """Toleration.ToleratesTaint.

    - an empty effect matches every effect, an empty key (with Exists) every key;
    - operator "" or Equal compares values; Exists ignores the value; Lt/Gt compare them as
      integers when comparison operators are enabled (v1.35+ with the gate on) and tolerate
      nothing otherwise; any other operator tolerates nothing.
    """
    effect = _s(toleration, "effect")
    if effect and effect != _s(taint, "effect"):
        return False
    key = _s(toleration, "key")
    if key and key != _s(taint, "key"):
        return False
    op = _s(toleration, "operator")
    if op == "" or op == TOLERATION_OP_EQUAL:
        return _s(toleration, "value") == _s(taint, "value")
    if op == TOLERATION_OP_EXISTS:
        return True
    if op == TOLERATION_OP_LT or op == TOLERATION_OP_GT:
        if not enable_comparison_operators:
            return False
        return compare_numeric_values(_s(toleration, "value"), _s(taint, "value"), op)
    return False


def tolerations_tolerate_taint(tolerations: Optional[Iterable[Toleration]], taint: Taint,
                               enable_comparison_operators: bool = False) -> bool:
    """TolerationsTolerateTaint: is the taint tolerated by any of the tolerations?"""
    for t in tolerations or ():
        if toleration_tolerates_taint(t, taint, enable_comparison_operators):
            return True
    return False


def find_matching_untolerated_taint(taints: Optional[Sequence[Taint]],
                                    tolerations: Optional[Iterable[Toleration]],
                                    inclusion_filter: Optional[Callable[[Taint], bool]] = None,
                                    enable_comparison_operators: bool = False) -> Optional[Taint]:
    """FindMatchingUntoleratedTaint: the first taint (in node order) that passes the inclusion
    filter and that no toleration tolerates, or None when all of them are tolerated."""
    tolerations = tolerations or ()
    for taint in taints or ():
        if inclusion_filter is not None and not inclusion_filter(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint, enable_comparison_operators):
            return taint
    return None


def do_not_schedule_taints_filter(taint: Taint) -> bool:
    """helper.DoNotScheduleTaintsFilterFunc: only NoSchedule and NoExecute taints."""
    e = taint.get("effect")
    return e == TAINT_EFFECT_NO_SCHEDULE or e == TAINT_EFFECT_NO_EXECUTE


def taint_to_string(taint: Taint) -> str:
    """Taint.ToString."""
    key, value, effect = _s(taint, "key"), _s(taint, "value"), _s(taint, "effect")
    if not effect:
        if not value:
            return key
        return f"{key}={value}:"
    if not value:
        return f"{key}:{effect}"
    return f"{key}={value}:{effect}"
