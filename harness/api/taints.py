"""Taints and tolerations: v1.Toleration.ToleratesTaint (k8s.io/api/core/v1/toleration.go),
v1.Taint.ToString, and TolerationsTolerateTaint / FindMatchingUntoleratedTaint
(k8s.io/component-helpers/scheduling/corev1/helpers.go).

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

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

__all__ = [
    "TAINT_EFFECT_NO_SCHEDULE", "TAINT_EFFECT_PREFER_NO_SCHEDULE", "TAINT_EFFECT_NO_EXECUTE",
    "TOLERATION_OP_EXISTS", "TOLERATION_OP_EQUAL", "TAINT_NODE_UNSCHEDULABLE",
    "toleration_tolerates_taint", "tolerations_tolerate_taint", "find_matching_untolerated_taint",
    "do_not_schedule_taints_filter", "taint_to_string",
]


def _s(obj: Mapping[str, Any], key: str) -> str:
    v = obj.get(key)
    return "" if v is None else str(v)


def toleration_tolerates_taint(toleration: Toleration, taint: Taint) -> bool:
    """Toleration.ToleratesTaint.

    - an empty effect matches every effect, an empty key (with Exists) every key;
    - operator "" or Equal compares values; Exists ignores the value; any other operator
      tolerates nothing.
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
    return False


def tolerations_tolerate_taint(tolerations: Optional[Iterable[Toleration]], taint: Taint) -> bool:
    """TolerationsTolerateTaint: is the taint tolerated by any of the tolerations?"""
    for t in tolerations or ():
        if toleration_tolerates_taint(t, taint):
            return True
    return False


def find_matching_untolerated_taint(taints: Optional[Sequence[Taint]],
                                    tolerations: Optional[Iterable[Toleration]],
                                    inclusion_filter: Optional[Callable[[Taint], bool]] = None
                                    ) -> Optional[Taint]:
    """FindMatchingUntoleratedTaint: the first taint (in node order) that passes the inclusion
    filter and that no toleration tolerates, or None when all of them are tolerated."""
    tolerations = tolerations or ()
    for taint in taints or ():
        if inclusion_filter is not None and not inclusion_filter(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
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
