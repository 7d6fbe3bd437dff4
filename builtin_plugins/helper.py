"""Shared plugin helpers (framework/plugins/helper): DefaultNormalizeScore and
DoNotScheduleTaintsFilterFunc."""

from __future__ import annotations

from typing import List

from harness.api.taints import do_not_schedule_taints_filter
from harness.framework.node_table import numpy

__all__ = ["default_normalize_score", "default_normalize_ints", "do_not_schedule_taints_filter",
           "features_of"]


def features_of(handle):
    """The Kubernetes version and feature gates a plugin runs with: ``handle.feature_gates``
    (as upstream's factories get feature.Features), or the newest version's defaults when the
    plugin is built without a framework (unit tests)."""
    fts = getattr(handle, "feature_gates", None)
    if fts is None:
        from harness.versions import DEFAULT
        return DEFAULT
    return fts


def default_normalize_ints(max_priority: int, reverse: bool, scores: List[int]) -> List[int]:
    """default_normalize_score on plain scores (its batch form): the new scores. A numpy
    column (from a batch Score form on the node table) gives a numpy column."""
    if scores.__class__ is not list and hasattr(scores, "dtype"):
        return _default_normalize_column(max_priority, reverse, scores)
    max_count = 0
    for s in scores:
        if s > max_count:
            max_count = s
    if max_count == 0:
        return [max_priority] * len(scores) if reverse else list(scores)
    out = []
    for s in scores:
        v = max_priority * s
        q = abs(v) // max_count
        score = q if v >= 0 else -q
        out.append(max_priority - score if reverse else score)
    return out


def _default_normalize_column(max_priority: int, reverse: bool, scores):
    """default_normalize_ints on an int64 column: the same integer arithmetic."""
    np = numpy()
    max_count = int(scores.max()) if len(scores) else 0
    if max_count <= 0:
        return np.full(len(scores), max_priority, dtype=np.int64) if reverse else scores
    v = scores * max_priority
    q = np.abs(v) // max_count
    score = np.where(v >= 0, q, -q)
    return max_priority - score if reverse else score


def default_normalize_score(max_priority: int, reverse: bool, scores: List) -> None:
    """helper.DefaultNormalizeScore: scale the scores (NodeScore list, in place) from
    [0, max(scores)] to [0, max_priority] with Go's truncating integer division; with `reverse`
    each becomes max_priority - score. All zero: unchanged, or all max_priority when reversed.
    Scores are assumed non-negative. Returns None (a Success status)."""
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return None
    for s in scores:
        v = max_priority * s.score
        # Go's int64 division truncates toward zero (scores are non-negative in practice).
        q = abs(v) // max_count
        score = q if v >= 0 else -q
        if reverse:
            score = max_priority - score
        s.score = score
    return None
