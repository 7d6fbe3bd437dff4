"""`schedharness sweep PATH...`: one plugin weight or argument varied over a range (or a list of
configurations) across cases (harness.compare.sweep runs them); a table, an SVG chart, --json
or --html."""

from __future__ import annotations

import json
import sys
from functools import partial
from typing import Any, Dict, List

from ..compare.diff import load_config_for_diff
from ..compare.sweep import Point, arg_on, check_points, flips, parse_values, run_sweep, weight_on, with_arg, with_weight
from ..errors import UserError
from ..reports.charts import sweep_chart_svg
from .options import MAX_WEIGHT, check_output_file, check_plugin_modules, jobs_options, plugin_option


def points_of(args) -> List[Point]:
    plugins = list(args.plugin or [])
    chosen = [x for x in (args.weight, args.arg, args.configs) if x]
    if len(chosen) != 1:
        raise UserError("give one of --weight PLUGIN=VALUES, --arg PLUGIN.FIELD=VALUES or --configs FILE...",
                        key="--weight")
    if args.configs:
        return [Point(p, p, load_config_for_diff(p, plugins), axis="configuration") for p in args.configs]
    base = load_config_for_diff(args.config, plugins) if args.config else {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    if args.weight:
        name, _, spec = args.weight.partition("=")
        if not name or not spec:
            raise UserError(f"--weight is PLUGIN=VALUES, got {args.weight!r}", key="--weight")
        vals = parse_values(spec, "--weight")
        for v in vals:
            if not isinstance(v, int) or isinstance(v, bool):
                raise UserError(f"a Score weight is an integer, got {v!r}", key="--weight")
            if not 1 <= v <= MAX_WEIGHT:  # (harness/cli/options.py: why not 0 nor a negative one)
                raise UserError(f"a Score weight is from 1 to {MAX_WEIGHT}, got {v}", key="--weight")
        return [Point(f"{name} weight {v}", v, with_weight(base, name, v), axis=f"{name} weight",
                      apply=partial(weight_on, name=name, weight=v)) for v in vals]
    target, _, spec = args.arg.partition("=")
    plugin, _, field = target.partition(".")
    if not plugin or not field or not spec:
        raise UserError(f"--arg is PLUGIN.FIELD[.FIELD...]=VALUES, got {args.arg!r}", key="--arg")
    return [Point(f"{target}={v}", v, with_arg(base, plugin, field.split("."), v), axis=target,
                  apply=partial(arg_on, plugin=plugin, path=field.split("."), value=v))
            for v in parse_values(spec, "--arg")]


def own_config_line(points: List[Point], args) -> str:
    """What became of the cases' own configurations (README, "Comparing configurations and
    versions"); "" when none has one."""
    outs = points[0].outcomes or [] if points else []
    n, total = sum(1 for o in outs if o.own_config), len(outs)
    if not n:
        return ""
    if args.configs:
        return f"{n} of {total} case(s) have a configuration of their own: each --configs file replaced it"
    if args.config:
        return f"{n} of {total} case(s) have a configuration of their own: {args.config} with the value replaced it"
    return f"{n} of {total} case(s) have a configuration of their own: the value is applied on top of it"


def table_lines(rows: List[Dict[str, Any]]) -> List[str]:
    cols = list(rows[0])
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    out = ["  ".join(c.rjust(widths[c]) if i else c.ljust(widths[c]) for i, c in enumerate(cols))]
    for r in rows:
        out.append("  ".join(str(r[c]).rjust(widths[c]) if i else str(r[c]).ljust(widths[c])
                             for i, c in enumerate(cols)))
    return out


def cmd_sweep(args) -> int:
    plugins = list(args.plugin or [])
    check_plugin_modules(plugins)
    check_output_file(args.chart, "--chart")
    check_output_file(args.html, "--html")
    points = points_of(args)
    check_points(points, plugins)
    on_own = not args.config and not args.configs
    invalid = run_sweep(args.paths, points, plugins, args.jobs, args.dask_scheduler, on_own)
    for line in invalid:
        print(line, file=sys.stderr)
    own = own_config_line(points, args)
    rows = [p.row() for p in points]
    svg = sweep_chart_svg(rows, [p.short for p in points], points[0].axis)
    if args.chart:
        with open(args.chart, "w", encoding="utf-8") as f:
            f.write(svg)
    changing = flips(points)
    if args.json:
        n_own = sum(1 for o in points[0].outcomes or [] if o.own_config)
        print(json.dumps({"rows": rows, "flips": changing, "chart": args.chart,
                          "ownConfig": {"cases": n_own, "mode": "replaced" if not on_own else "on top"}},
                         indent=2))
    else:
        print("\n".join(table_lines(rows)))
        if own:
            print(own)
        if changing:
            print(f"cases whose result depends on the value ({len(changing)}):")
            print("\n".join("  " + line for line in table_lines(changing)))
        if args.chart:
            print(f"chart: {args.chart}")
    if args.html:
        from ..reports.html import write_sweep_report

        write_sweep_report(args.html, rows, svg, invalid, changing, own)
    return 2 if invalid else 0


def add_parser(sub) -> None:
    s = sub.add_parser("sweep", help="vary one plugin weight or argument over cases; table and chart",
                       description="Run every case once per value of one plugin's Score weight "
                                   "(--weight), one field of a plugin's args (--arg) or per configuration "
                                   "(--configs), and report per value the "
                                   "cases passing and the cluster figures (nodes used, mean/max cpu and "
                                   "memory requested share of the used nodes, pods unbound, preemptions), "
                                   "as a table and as an SVG chart. Without --config, a value is applied on top "
                                   "of each case's own configuration (the defaults for a case without one); "
                                   "--config BASE and --configs replace the cases' own. Exit 0, or 2 on invalid "
                                   "input.")
    s.add_argument("paths", nargs="+", metavar="PATH", help="case files or folders")
    s.add_argument("--config", metavar="CONFIG", default=None,
                   help="the KubeSchedulerConfiguration the values are applied to, in place of each case's own "
                        "(default: each case's own, or the defaults for a case without one)")
    s.add_argument("--weight", metavar="PLUGIN=VALUES",
                   help="a Score weight: e.g. NodeResourcesFit=1,2,5 or NodeResourcesFit=1:10:3 (inclusive)")
    s.add_argument("--arg", metavar="PLUGIN.FIELD=VALUES",
                   help="a plugin argument: e.g. NodeResourcesFit.scoringStrategy.type=LeastAllocated,MostAllocated")
    s.add_argument("--configs", nargs="+", metavar="CONFIG", help="whole configurations, one value each")
    s.add_argument("--chart", metavar="CHART.svg", default="sweep.svg",
                   help="where to write the chart (default sweep.svg; '' for none)")
    s.add_argument("--json", action="store_true", help="print the table as JSON")
    jobs_options(s)
    s.add_argument("--html", metavar="REPORT.html", default=None,
                   help="also write a self-contained HTML report: the table and the chart")
    plugin_option(s)
    s.set_defaults(func=cmd_sweep)
