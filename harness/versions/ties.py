"""How a kube-scheduler version breaks a tie among the nodes with the top final score, and
whether that choice is random (the one place `diff` and reports ask it).

- v1.34: ``selectHost`` (pkg/scheduler/schedule_one.go) pops the score heap and keeps one of
  the top-scored nodes by reservoir sampling (``rand.Intn(cntOfMaxScore)``): random at any
  ``parallelism``.
- v1.35 on (``SelectHostFromScoreHeap`` in :data:`harness.versions.CHANGES`): ``schedulePod``
  takes ``newSortedNodeScores(priorityList).Pop()``; ``nodeScoreHeap.Less`` orders equal
  ``TotalScore``s by ``Randomizer``, which only nodes an extender scored get
  (``prioritizeNodes``: ``rand.Int()``), else by the heap's order over the feasible list.
  ``findNodesThatPassFilters`` fills that list as the Parallelizer's workers finish
  (``feasibleNodes[atomic.AddInt32(&feasibleNodesLen, 1)-1]``): with ``parallelism`` above 1
  its order is the workers' finishing order, random; with ``parallelism`` 1 it is node order
  from ``nextStartNodeIndex``, so the pick is fixed.
"""

from __future__ import annotations

from typing import Any, Mapping


def feasible_order_breaks_ties(features: Any, parallelism: int) -> bool:
    """Whether the feasible list's order, random because ``parallelism`` workers fill it as they
    finish, decides which of the tied top-scored nodes wins (v1.35 on: the heap's first)."""
    return parallelism > 1 and features is not None and features.has("SelectHostFromScoreHeap")


def tie_break_is_random(features: Any, parallelism: int, extender_scores: bool = False) -> bool:
    """Whether equal top final scores are broken at random on this version with this
    configuration's ``parallelism`` (and whether an extender with a prioritizeVerb scores)."""
    if not features.has("SelectHostFromScoreHeap"):
        return True  # selectHost's reservoir sampling
    return feasible_order_breaks_ties(features, parallelism) or extender_scores


def tie_break_rule(features: Any, parallelism: int, extender_scores: bool = False) -> str:
    """One sentence: how this version and parallelism pick among tied top-scored nodes."""
    v = features.version.release
    if not features.has("SelectHostFromScoreHeap"):
        return f"{v} draws one of the top-scored nodes at random (selectHost's reservoir sampling)"
    if parallelism > 1:
        return (f"{v} takes the score heap's first of the tied nodes, and with parallelism {parallelism} the "
                f"feasible list's order is the Filter workers' finishing order (findNodesThatPassFilters): random")
    if extender_scores:
        return f"{v} orders tied nodes an extender scored by a random Randomizer (prioritizeNodes): random"
    return f"{v} with parallelism 1 takes the score heap's first of the tied nodes in node order: fixed"


def config_tie_break(features: Any, config: Mapping[str, Any]) -> tuple:
    """(random?, rule) for a defaulted KubeSchedulerConfiguration mapping."""
    parallelism = int(config.get("parallelism") or 16)
    extender_scores = any((e or {}).get("prioritizeVerb") for e in config.get("extenders") or [])
    return (tie_break_is_random(features, parallelism, extender_scores),
            tie_break_rule(features, parallelism, extender_scores))
