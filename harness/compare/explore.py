"""What `schedharness explore CASE --runs N` does (harness.cli.explore is the command): run a case N times with kube-scheduler's nondeterministic
choices drawn at random, and print every distinct outcome with its frequency.

What is varied in each run (everything else is as in `run`):
- v1.34's selectHost tie-break among the top-scored nodes (and v1.35+'s Randomizer of nodes
  an extender scored): the scheduler's random source is seeded afresh for every run (the
  case's `seed` is replaced);
- the order in which findNodesThatPassFilters' workers finish: one random interleaving of the
  Parallelizer's workers over their chunks (harness.scheduler.parallel_filter.explore_walk).
  It decides which feasible nodes are kept when the walk stops at numFeasibleNodesToFind
  (100 nodes or more), and from v1.35, with `parallelism` above 1, the order of the feasible
  list, whose first top-scored node takes a tie (newSortedNodeScores' heap);
- DryRunPreemption's offset (upstream rand.Int31n(numNodes); `run` starts at 0): it changes
  the outcome only when fewer candidates are shortlisted than there are potential nodes (more
  than 100 of them with the default args).
- v1.36's pod group placements (TopologyAwareWorkloadScheduling): the order they are tried in,
  which upstream's TopologyPlacement takes from a map of topology domains (`run`: by name;
  harness.framework.placement.placement_order).
- everything else drawn from the case's `seed`, since it is replaced: with `replicas`, leader
  election's identities and jittered retry times (client-go's wait.JitterUntil, random upstream
  too), and DRA's share IDs. A case whose timing expectations were worked out from its seed
  (cases/leader-election) meets them only in the runs that draw the same timing.
Not varied: the order of other Go map iterations (e.g. pickOneNodeForPreemption's last tie-break) and
the interleaving of the binding goroutines with later scheduling cycles.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from typing import Dict, List, Tuple

Outcome = Tuple[Tuple[Tuple[str, str], ...], Tuple[str, ...]]


def outcome_of(res) -> Outcome:
    bindings = tuple(sorted((k, v or "") for k, v in res.bindings.items()))
    return bindings, tuple(sorted(res.preempted))


def explore(case, registry, runs: int, seed: int = 0) -> List[Tuple[Outcome, int, bool]]:
    """Each distinct outcome with how many runs gave it and whether it meets the case's expect,
    most frequent first."""
    from ..case import run_case
    from ..framework.parallelize import RunSettings, using
    from .outcomes import collect_run

    rng = random.Random(seed)
    counts: Counter = Counter()
    passes: Dict[Outcome, bool] = {}
    first: Dict[Outcome, int] = {}
    for k in range(runs):
        run_seed = rng.randrange(1 << 31)
        c = dataclasses.replace(case, seed=run_seed)
        with using(RunSettings(explore_rng=random.Random(rng.randrange(1 << 62)))):
            res = run_case(c, registry)
        out = outcome_of(res)
        counts[out] += 1
        passes.setdefault(out, res.passed)
        first.setdefault(out, k)
        del res
        collect_run()  # the run's garbage freed before the next run builds
    return [(o, n, passes[o]) for o, n in sorted(counts.items(), key=lambda kv: (-kv[1], first[kv[0]]))]


def format_outcome(out: Outcome) -> str:
    bindings, preempted = out
    b = ", ".join(f"{pod}={node or '-'}" for pod, node in bindings) or "-"
    return f"bindings: {b}; preempted: {', '.join(preempted) or '-'}"
