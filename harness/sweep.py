"""`schedharness sweep`: one plugin weight or one plugin argument varied over a range (or a list
of configurations) across a set of cases; per value, the cases passing and the figures of the
cluster at the end, as a table and as an SVG chart."""

from __future__ import annotations

import copy
import json
import os
import sys
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Dict, List, Optional

from .compare import CaseOutcome, Figures, Task, load_cases, run_tasks
from .errors import UserError


@dataclass
class Point:
    """One value of the sweep and the outcomes of every case under it."""

    label: str
    value: Any
    config: Dict[str, Any]
    outcomes: Optional[List[CaseOutcome]] = None
    axis: str = ""  # what varies, for the chart's x axis
    # the value applied to a configuration (with_weight/with_arg); None: `config` is whole
    apply: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None

    @property
    def short(self) -> str:
        return os.path.basename(self.value) if self.axis == "configuration" else str(self.value)

    def row(self) -> Dict[str, Any]:
        outs = self.outcomes or []
        ok = [o for o in outs if not o.error]
        figs = Figures.total([o.figures for o in ok]).row()
        return {"value": self.label, "cases passing": sum(1 for o in ok if o.passed), "cases": len(outs),
                "errors": len(outs) - len(ok), **figs}


def parse_values(text: str, key: str) -> List[Any]:
    """`1,2,5` (a list, each item read as a YAML scalar) or `A:B[:STEP]` (integers A to B
    inclusive)."""
    import yaml

    if ":" in text and "," not in text:
        parts = text.split(":")
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            raise UserError(f"a range is START:STOP[:STEP] of integers, got {text!r}", key=key) from None
        if len(nums) not in (2, 3) or (len(nums) == 3 and nums[2] <= 0) or nums[1] < nums[0]:
            raise UserError(f"a range is START:STOP[:STEP] with START <= STOP and STEP > 0, got {text!r}", key=key)
        step = nums[2] if len(nums) == 3 else 1
        return list(range(nums[0], nums[1] + 1, step))
    vals = [yaml.safe_load(v) for v in text.split(",") if v.strip()]
    if not vals:
        raise UserError("no values", key=key)
    return vals


def _profiles(cfg: Dict[str, Any]) -> List[Dict[str, Any]]:
    profiles = cfg.setdefault("profiles", [])
    if not profiles:
        profiles.append({"schedulerName": "default-scheduler"})
    return profiles


def with_weight(base: Dict[str, Any], plugin: str, weight: int) -> Dict[str, Any]:
    """The configuration with `plugin`'s Score weight set in every profile (an entry under
    plugins.score.enabled, which takes precedence over multiPoint's)."""
    cfg = copy.deepcopy(base)
    for prof in _profiles(cfg):
        score = prof.setdefault("plugins", {}).setdefault("score", {})
        enabled = score.setdefault("enabled", [])
        for e in enabled:
            if e.get("name") == plugin:
                e["weight"] = weight
                break
        else:
            enabled.append({"name": plugin, "weight": weight})
    return cfg


def with_arg(base: Dict[str, Any], plugin: str, path: List[str], value: Any) -> Dict[str, Any]:
    """The configuration with one field of `plugin`'s args set in every profile's pluginConfig."""
    cfg = copy.deepcopy(base)
    for prof in _profiles(cfg):
        pcs = prof.setdefault("pluginConfig", [])
        entry = next((pc for pc in pcs if pc.get("name") == plugin), None)
        if entry is None:
            entry = {"name": plugin, "args": {}}
            pcs.append(entry)
        node = entry.setdefault("args", {})
        for k in path[:-1]:
            node = node.setdefault(k, {})
        node[path[-1]] = value
    return cfg


def points_of(args) -> List[Point]:
    from .diff import load_config_for_diff
    from .flags import MAX_WEIGHT

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
            if not 1 <= v <= MAX_WEIGHT:  # (harness/flags.py: why not 0 nor a negative one)
                raise UserError(f"a Score weight is from 1 to {MAX_WEIGHT}, got {v}", key="--weight")
        return [Point(f"{name} weight {v}", v, with_weight(base, name, v), axis=f"{name} weight",
                      apply=partial(_weight_on, name=name, weight=v)) for v in vals]
    target, _, spec = args.arg.partition("=")
    plugin, _, field = target.partition(".")
    if not plugin or not field or not spec:
        raise UserError(f"--arg is PLUGIN.FIELD[.FIELD...]=VALUES, got {args.arg!r}", key="--arg")
    return [Point(f"{target}={v}", v, with_arg(base, plugin, field.split("."), v), axis=target,
                  apply=partial(_arg_on, plugin=plugin, path=field.split("."), value=v))
            for v in parse_values(spec, "--arg")]


def score_disabled(profile: Dict[str, Any], plugin: str) -> bool:
    """The profile turns the plugin's Score off: named (or '*') under score.disabled or
    multiPoint.disabled and not enabled again under score.enabled (mergePlugins: a disabled
    default stays off unless listed as enabled)."""
    plugins = profile.get("plugins") or {}
    names = lambda point, key: {e.get("name") for e in ((plugins.get(point) or {}).get(key) or [])}  # noqa: E731
    off = (names("score", "disabled") | names("multiPoint", "disabled")) & {plugin, "*"}
    return bool(off) and plugin not in names("score", "enabled") | names("multiPoint", "enabled")


def _weight_on(cfg: Dict[str, Any], name: str, weight: int) -> Dict[str, Any]:
    """with_weight on a case's own configuration, leaving a profile that turned the plugin's
    Score off as it is (a weight of a plugin that does not score changes nothing)."""
    cfg = copy.deepcopy(cfg)
    off = [(i, p) for i, p in enumerate(_profiles(cfg)) if score_disabled(p, name)]
    out = with_weight(cfg, name, weight)
    for i, p in off:
        out["profiles"][i] = p
    return out


def _arg_on(cfg: Dict[str, Any], plugin: str, path: List[str], value: Any) -> Dict[str, Any]:
    return with_arg(cfg, plugin, path, value)


def own_config(case) -> Optional[Dict[str, Any]]:
    """The case's own configuration as a mapping (its file read), or None when it has none or
    its file cannot be read (the run then reports that)."""
    from .yamlfile import load_yaml_file

    if case.config is None:
        return None
    if isinstance(case.config, dict):
        return copy.deepcopy(case.config)
    try:
        data = load_yaml_file(case.config_path, UserError)
    except UserError:
        return None
    return data if isinstance(data, dict) else None


def config_for(point: Point, case, on_own: bool) -> Dict[str, Any]:
    """The configuration a case runs with at this point: the value applied on top of the
    case's own configuration (`on_own`, for a case that has one), else the point's."""
    if on_own and point.apply is not None and case.config is not None:
        own = own_config(case)
        if own is not None:
            return point.apply(own)
    return point.config


def check_points(points: List[Point], plugins: List[str]) -> None:
    """Every configuration of the sweep is valid (exit 2 naming the value otherwise)."""
    from .config.loader import load_config_data
    from .framework.registry import build_registry, default_registry

    registry = build_registry(plugins) if plugins else default_registry()
    for p in points:
        load_config_data(copy.deepcopy(p.config), registry, source=f"sweep value {p.label}")


def run_sweep(paths: List[str], points: List[Point], plugins: List[str], jobs: int = 1,
              dask_scheduler: Optional[str] = None, on_own: bool = False) -> List[str]:
    """Fill each point's outcomes; returns the error lines of cases that could not be loaded.
    `on_own`: a case with a configuration of its own runs with the value applied on top of it."""
    cases, invalid = load_cases(paths, frozen=True)
    cwd = os.getcwd()
    tasks = [Task(c, config_for(p, c, on_own), tuple(plugins), None, cwd, explain=False)
             for p in points for c in cases]
    results = run_tasks(tasks, jobs, dask_scheduler, command="sweep")
    n = len(cases)
    for i, p in enumerate(points):
        p.outcomes = results[i * n:(i + 1) * n]
        for c, o in zip(cases, p.outcomes):
            o.own_config = c.config is not None
    return invalid


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


def flips(points: List[Point]) -> List[Dict[str, Any]]:
    """The cases whose result is not the same for every value: case -> PASS/FAIL/ERROR per value."""
    out = []
    if not points or not points[0].outcomes:
        return out
    for i, first in enumerate(points[0].outcomes):
        marks = [("ERROR" if p.outcomes[i].error else "PASS" if p.outcomes[i].passed else "FAIL") for p in points]
        if len(set(marks)) > 1:
            out.append({"case": first.name, **{p.short: m for p, m in zip(points, marks)}})
    return out


def table_lines(rows: List[Dict[str, Any]]) -> List[str]:
    cols = list(rows[0])
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    out = ["  ".join(c.rjust(widths[c]) if i else c.ljust(widths[c]) for i, c in enumerate(cols))]
    for r in rows:
        out.append("  ".join(str(r[c]).rjust(widths[c]) if i else str(r[c]).ljust(widths[c])
                             for i, c in enumerate(cols)))
    return out


def cmd_sweep(args) -> int:
    from .charts import sweep_chart_svg

    plugins = list(args.plugin or [])
    from .flags import check_output_file, check_plugin_modules

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
        from .html import write_sweep_report

        write_sweep_report(args.html, rows, svg, invalid, changing, own)
    return 2 if invalid else 0


def add_parser(sub, plugin_option) -> None:
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
    from .flags import MAX_JOBS, bounded_int, non_empty

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
    s.add_argument("-j", "--jobs", type=bounded_int(1, MAX_JOBS), default=1, metavar="N",
                   help="run on N processes (1 to 256)")
    s.add_argument("--dask-scheduler", metavar="ADDRESS", default=None, type=non_empty,
                   help="run on a Dask cluster (the `dask` extra)")
    s.add_argument("--html", metavar="REPORT.html", default=None,
                   help="also write a self-contained HTML report: the table and the chart")
    plugin_option(s)
    s.set_defaults(func=cmd_sweep)
