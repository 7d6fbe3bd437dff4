"""`schedharness diff PATH...`: cases under two configurations (or two Kubernetes versions);
the pods whose outcome changes, each classed real, tie-break or knock-on, and the figures per
side (harness.compare.diff runs and classes them)."""

from __future__ import annotations

import json
import sys
from typing import List

from ..compare.diff import (CLASSES, Change, Side, class_line, figures_table, headline, load_config_for_diff,
                            run_diff)
from ..compare.outcomes import Figures
from ..errors import UserError
from ..versions import parse_version
from .options import check_output_file, check_plugin_modules, jobs_options, plugin_option


def cmd_diff(args) -> int:
    configs = list(args.config or [])
    versions = list(args.kubernetes_versions or [])
    for v in versions:
        parse_version(v, file="--kubernetes-version")
    if len(configs) == 2 and len(versions) in (0, 2):
        sides = [Side(configs[i] + (f" @ {versions[i]}" if versions else ""), None,
                      versions[i] if versions else None) for i in range(2)]
    elif len(versions) == 2 and len(configs) <= 1:
        sides = [Side((configs[0] + " @ " if configs else "") + v, None, v) for v in versions]
    else:
        raise UserError("give two --config, or two --kubernetes-version (with at most one --config for "
                        "both), or two of each", key="--config")
    plugins = list(args.plugin or [])
    check_plugin_modules(plugins)
    check_output_file(args.html, "--html")
    for i, s in enumerate(sides):
        path = configs[i] if len(configs) == 2 else (configs[0] if configs else None)
        s.config = load_config_for_diff(path, plugins, s.kubernetes_version) if path else None
    changes, per_side, invalid = run_diff(args.paths, sides, plugins, args.jobs, args.dask_scheduler)
    for line in invalid:
        print(line, file=sys.stderr)
    figs = [Figures.total([o.figures for o in outs if not o.error]) for outs in per_side]
    labels = ["A: " + sides[0].label, "B: " + sides[1].label]
    shown = [c for c in changes if c.klass == "real"] if args.only_real else changes
    n_cases = len(per_side[0])
    if args.json:
        counts = {k: sum(1 for c in changes if c.klass == k) for k in CLASSES}
        print(json.dumps({"sides": [s.label for s in sides], "changes": [c.to_json() for c in shown],
                          "counts": {"changes": len(changes), **counts},
                          "summary": {s.label: f.row() for s, f in zip(sides, figs)}}, indent=2))
    else:
        print_changes(shown, sides)
        print("\n".join(figures_table(labels, figs)))
        print(headline(changes, n_cases) + (" (--only-real: the real ones listed)" if args.only_real and
                                             len(shown) < len(changes) else ""))
    if args.html:
        rows = [f.row() for f in figs]
        table = [{"figure": k, labels[0]: rows[0][k], labels[1]: rows[1][k]} for k in rows[0]]
        from ..reports.html import write_diff_report

        write_diff_report(args.html, sides, shown, table, invalid, headline(changes, n_cases))
    if invalid:
        return 2
    return 1 if any(c.klass == "real" for c in changes) else 0


def print_changes(changes: List[Change], sides: List[Side]) -> None:
    last = None
    for c in changes:
        if c.path != last:
            print(f"{c.path} ({c.case}):")
            last = c.path
        if c.pod != "(the case)":
            print(f"  {c.pod}: {c.before.text()} -> {c.after.text()} [{c.klass}]")
            if c.klass != "real":
                print("    " + class_line(c))
        else:
            print("  the case runs under one side only [real]:")
        if c.pod == "(the case)":
            for line in c.why:
                print("    " + line)
            continue
        if c.before.message != c.after.message and (c.before.message or c.after.message):
            for tag, m in (("A", c.before.message), ("B", c.after.message)):
                print(f"    {tag} message: {m or '-'}")
        for line in c.why:
            print("    " + line)


def add_parser(sub) -> None:
    d = sub.add_parser("diff", help="run cases under two configurations and list the pods that move",
                       description="Run every case under two configurations (the case's own `config` "
                                   "replaced) and list the pods whose outcome changes (node, preemption, "
                                   "message) with the scores or Filter verdicts that made the difference, "
                                   "then per side: nodes used, mean and max cpu/memory requested share of "
                                   "the used nodes, pods left unbound, preemptions. Or the same cases on "
                                   "two Kubernetes versions. Each change is classed real, tie-break (equal top "
                                   "scores on a side that breaks ties at random) or knock-on (caused by an "
                                   "earlier change of the case). Exit 1 when anything real changed, 0 otherwise "
                                   "(tie-breaks and knock-ons only), 2 on invalid input.")
    d.add_argument("paths", nargs="+", metavar="PATH", help="case files or folders")
    d.add_argument("--config", action="append", metavar="CONFIG",
                   help="a KubeSchedulerConfiguration file (give it twice: A, then B)")
    d.add_argument("--kubernetes-version", action="append", dest="kubernetes_versions", metavar="VERSION",
                   help="a kube-scheduler version, v1.34, v1.35 or v1.36 (give it twice: A, then B); "
                        "every case runs on it, whatever its own kubernetesVersion")
    d.add_argument("--json", action="store_true", help="print the changes and figures as JSON")
    d.add_argument("--only-real", action="store_true",
                   help="list only the real changes (the headline still counts tie-breaks and knock-ons)")
    jobs_options(d)
    d.add_argument("--html", metavar="REPORT.html", default=None,
                   help="also write a self-contained HTML report of the changes and figures")
    plugin_option(d)
    d.set_defaults(func=cmd_diff)
