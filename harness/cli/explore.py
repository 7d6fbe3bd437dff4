"""`schedharness explore CASE --runs N`: a case run N times with kube-scheduler's random choices
drawn at random; each distinct outcome with its frequency (harness.compare.explore runs it)."""

from __future__ import annotations

from typing import Any

from ..compare.explore import __doc__ as explore_doc
from ..compare.explore import explore, format_outcome
from .options import MAX_RUNS, bounded_int, plugin_option, registry_for, version_options


def cmd_explore(args) -> int:
    from ..case import load_case

    case = load_case(args.case)
    rows = explore(case, registry_for(case, args), args.runs, args.seed)
    print(f"explore {case.name}: {args.runs} run(s), {len(rows)} distinct outcome(s)")
    for out, n, ok in rows:
        print(f"  {n}/{args.runs} ({100.0 * n / args.runs:.0f}%) [expect {'passes' if ok else 'fails'}] "
              f"{format_outcome(out)}")
    return 0


def add_parser(sub: Any) -> None:
    e = sub.add_parser("explore", help="run a case N times with kube-scheduler's random choices drawn "
                                       "at random; print each distinct outcome and its frequency",
                       description=explore_doc.split("\n\n", 1)[1] if explore_doc else None)
    e.add_argument("case", metavar="CASE", help="a case file")
    e.add_argument("--runs", type=bounded_int(1, MAX_RUNS), default=20, help="how many runs (default 20, at most 100,000)")
    e.add_argument("--seed", type=int, default=0, help="the explore's own seed (default 0): the same "
                                                      "seed gives the same runs")
    plugin_option(e)
    version_options(e)
    e.set_defaults(func=cmd_explore)
