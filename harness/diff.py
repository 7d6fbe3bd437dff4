"""`schedharness diff`: every case under two configurations, the pods whose outcome changes and
why (the score rows or Filter verdicts that differ), and the figures of each side."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .case.decisions import score_table
from .compare import CaseOutcome, Figures, PodOutcome, Task, load_cases, run_tasks
from .errors import UserError


@dataclass
class Side:
    label: str
    config: Optional[Dict[str, Any]]
    kubernetes_version: Optional[str] = None


@dataclass
class Change:
    case: str
    path: str
    pod: str
    before: PodOutcome
    after: PodOutcome
    why: List[str]

    def to_json(self) -> Dict[str, Any]:
        def side(p: PodOutcome) -> Dict[str, Any]:
            return {"node": p.node, "preempted": p.preempted, "victims": p.victims, "message": p.message,
                    "nominated": p.nominated}
        return {"case": self.case, "file": self.path, "pod": self.pod, "a": side(self.before),
                "b": side(self.after), "why": self.why}


def load_config_for_diff(path: str, plugins: List[str], version: Optional[str] = None) -> Dict[str, Any]:
    """A configuration file, validated once here (for `version`, else the run's default) so
    that its errors name it (exit 2)."""
    from .config.loader import load_config_file
    from .framework.registry import build_registry, default_registry
    from .versions import resolve, run_default_version
    from .yamlfile import load_yaml_file

    if not os.path.exists(path):
        raise UserError("no such file", file=path)
    registry = build_registry(plugins) if plugins else default_registry()
    load_config_file(path, registry, resolve(version or run_default_version(), file="--kubernetes-version"))
    return load_yaml_file(path, UserError)


def _changed(a: PodOutcome, b: PodOutcome) -> bool:
    return (a.node, a.preempted, sorted(a.victims), a.message) != (b.node, b.preempted, sorted(b.victims), b.message)


def why_lines(label: str, attempt, nodes: List[str]) -> List[str]:
    """Why one side's last attempt went where it went, on the nodes either side picked."""
    if attempt is None:
        return [f"{label}: never attempted (gated, or no profile serves its schedulerName)"]
    head = f"{label}: attempt {attempt.attempt} {attempt.result}" + (f" on {attempt.node}" if attempt.node else "")
    lines = [head]
    scored = [n for n in nodes if n in attempt.final]
    if len(scored) >= 1 and attempt.final:
        lines += score_table(attempt, nodes)
    for n in nodes:
        if n in attempt.decisive:
            v = attempt.decisive[n]
            lines.append(f"    {n}: rejected by {attempt.rejected_by.get(n, '-')}: {v.text()}")
    if not attempt.final and attempt.node:
        lines.append(f"    {attempt.node}: the only feasible node (not scored)")
    if attempt.result != "scheduled":
        if attempt.rejected:
            lines.append("    rejected: " + ", ".join(f"{p} {c}" for p, c in attempt.rejected.items()))
        if attempt.message:
            lines.append(f"    message: {attempt.message}")
    if attempt.preemption is not None and attempt.preemption.get("picked"):
        victims = attempt.preemption["candidates"].get(attempt.preemption["picked"], [])
        lines.append(f"    preemption picked {attempt.preemption['picked']}, evicting {', '.join(victims)}")
    return lines


def compare(a: CaseOutcome, b: CaseOutcome, labels: List[str]) -> List[Change]:
    out = []
    for pod in list(dict.fromkeys(list(a.pods) + list(b.pods))):
        pa, pb = a.pods.get(pod, PodOutcome(None)), b.pods.get(pod, PodOutcome(None))
        if not _changed(pa, pb):
            continue
        nodes = [n for n in dict.fromkeys([pa.node, pb.node]) if n]
        why = why_lines(labels[0], a.attempts.get(pod), nodes) + why_lines(labels[1], b.attempts.get(pod), nodes)
        out.append(Change(a.name, a.path, pod, pa, pb, why))
    return out


def figures_table(sides: List[str], figs: List[Figures]) -> List[str]:
    rows = [f.row() for f in figs]
    names = list(rows[0])
    width = max(len(n) for n in names)
    col = max(12, *(len(s) for s in sides))
    lines = [" " * width + "  " + "  ".join(s.rjust(col) for s in sides)]
    for n in names:
        lines.append(n.ljust(width) + "  " + "  ".join(str(r[n]).rjust(col) for r in rows))
    return lines


def run_diff(paths: List[str], sides: List[Side], plugins: List[str], jobs: int = 1,
             dask_scheduler: Optional[str] = None):
    """Load every case, run it under each side; returns (changes, per-side outcomes, invalid lines)."""
    cases, invalid = load_cases(paths)
    cwd = os.getcwd()
    tasks = [Task(c, s.config, tuple(plugins), s.kubernetes_version, cwd) for s in sides for c in cases]
    results = run_tasks(tasks, jobs, dask_scheduler)
    n = len(cases)
    per_side = [results[i * n:(i + 1) * n] for i in range(len(sides))]
    changes: List[Change] = []
    labels = [f"{tag} ({s.label})" for tag, s in zip("AB", sides)]
    for a, b in zip(*per_side):
        if a.error and a.error == b.error:  # not comparable: it runs under neither side
            print(f"SKIP {a.path}: runs under neither configuration: {a.error}", file=sys.stderr)
        elif a.error or b.error:  # it cannot run under one side: that is a change too
            why = [f"{label}: {o.error}" for label, o in zip(labels, (a, b)) if o.error]
            changes.append(Change(a.name, a.path, "(the case)", PodOutcome(None, a.error or "runs"),
                                  PodOutcome(None, b.error or "runs"), why))
        else:
            changes += compare(a, b, labels)
    return changes, per_side, invalid


def cmd_diff(args) -> int:
    from .versions import parse_version

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
    from .flags import check_output_file, check_plugin_modules

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
    if args.json:
        print(json.dumps({"sides": [s.label for s in sides], "changes": [c.to_json() for c in changes],
                          "summary": {s.label: f.row() for s, f in zip(sides, figs)}}, indent=2))
    else:
        print_changes(changes, sides)
        print("\n".join(figures_table(labels, figs)))
        n_cases = len(per_side[0])
        print(f"{len(changes)} pod(s) change in {len({c.path for c in changes})} of {n_cases} case(s)")
    if args.html:
        from .html import write_diff_report

        rows = [f.row() for f in figs]
        table = [{"figure": k, labels[0]: rows[0][k], labels[1]: rows[1][k]} for k in rows[0]]
        write_diff_report(args.html, sides, changes, table, invalid)
    if invalid:
        return 2
    return 1 if changes else 0


def print_changes(changes: List[Change], sides: List[Side]) -> None:
    last = None
    for c in changes:
        if c.path != last:
            print(f"{c.path} ({c.case}):")
            last = c.path
        if c.pod != "(the case)":
            print(f"  {c.pod}: {c.before.text()} -> {c.after.text()}")
        else:
            print("  the case runs under one side only:")
        if c.pod == "(the case)":
            for line in c.why:
                print("    " + line)
            continue
        if c.before.message != c.after.message and (c.before.message or c.after.message):
            for tag, m in (("A", c.before.message), ("B", c.after.message)):
                print(f"    {tag} message: {m or '-'}")
        for line in c.why:
            print("    " + line)


def add_parser(sub, plugin_option) -> None:
    d = sub.add_parser("diff", help="run cases under two configurations and list the pods that move",
                       description="Run every case under two configurations (the case's own `config` "
                                   "replaced) and list the pods whose outcome changes (node, preemption, "
                                   "message) with the scores or Filter verdicts that made the difference, "
                                   "then per side: nodes used, mean and max cpu/memory requested share of "
                                   "the used nodes, pods left unbound, preemptions. Or the same cases on "
                                   "two Kubernetes versions. Exit 1 when anything "
                                   "changed, 0 otherwise, 2 on invalid input.")
    from .flags import MAX_JOBS, bounded_int, non_empty

    d.add_argument("paths", nargs="+", metavar="PATH", help="case files or folders")
    d.add_argument("--config", action="append", metavar="CONFIG",
                   help="a KubeSchedulerConfiguration file (give it twice: A, then B)")
    d.add_argument("--kubernetes-version", action="append", dest="kubernetes_versions", metavar="VERSION",
                   help="a kube-scheduler version, v1.34, v1.35 or v1.36 (give it twice: A, then B); "
                        "every case runs on it, whatever its own kubernetesVersion")
    d.add_argument("--json", action="store_true", help="print the changes and figures as JSON")
    d.add_argument("-j", "--jobs", type=bounded_int(1, MAX_JOBS), default=1, metavar="N",
                   help="run the cases on N processes (1 to 256)")
    d.add_argument("--dask-scheduler", metavar="ADDRESS", default=None, type=non_empty,
                   help="run the cases on a Dask cluster (the `dask` extra)")
    d.add_argument("--html", metavar="REPORT.html", default=None,
                   help="also write a self-contained HTML report of the changes and figures")
    plugin_option(d)
    d.set_defaults(func=cmd_diff)
