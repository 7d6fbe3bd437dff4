"""The HTML reports of `run --html`, `diff --html` and `sweep --html`: one self-contained file
(inline CSS and SVG, no script, nothing fetched) rendered from harness/reports/templates/report.html.j2."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from markupsafe import Markup

from ..case.decisions import Attempt, attempt_of
from .charts import render, timeline_svg
from .text import DEFAULT_NODES, pod_group_lines, sample_names, scheduler_versions


def _version() -> str:
    from .. import version

    return version()


def _own_versions() -> str:
    """The header of a report whose cases each ran on their own kubernetesVersion."""
    from ..versions import MODELLED

    return "each case on its own kubernetesVersion of kube-scheduler " + ", ".join(MODELLED.values())


def _sides_versions(sides) -> str:
    """The header of a diff: the two sides' versions, when they name them."""
    from ..versions import parse_version

    named = [getattr(s, "kubernetes_version", None) for s in sides]
    if all(named):
        return "kube-scheduler " + " vs ".join(parse_version(v).release for v in named)
    return _own_versions()


def decision_table(a: Attempt, limit: Optional[int] = DEFAULT_NODES,
                   only: Optional[List[str]] = None) -> Dict[str, Any]:
    """One attempt as a table: a row per node (its Filter verdict, each Score plugin's weighted
    score with raw/normalized/weight as a tooltip, the total), the picked node marked. With more
    than `limit` nodes (None: no limit), as `explain` prints them: the `limit` top-scored nodes
    (and the picked one) in full, the others one row per verdict (`1,703 nodes (a, b, c, ...)`).
    With `only`, those nodes' rows alone (diff's why)."""
    nodes = list(dict.fromkeys(list(a.filter) + list(a.decisive) + list(a.final)))
    if only is not None:
        nodes = [n for n in only if n in nodes] + [n for n in only if n not in nodes]
        limit = None
    plugins: List[str] = []
    for row in a.scores.values():
        for p in row:
            if p not in plugins:
                plugins.append(p)

    feasible = set(a.feasible)  # (a list: a lookup per node of 5000 was 38% of run --html)

    def verdict_of(n: str):
        if n in a.decisive:
            return f"rejected by {a.rejected_by.get(n, '-')}: {a.decisive[n].text()}", "rejected"
        if n in feasible:
            return "feasible", "feasible"
        return "not evaluated", "skipped"

    def row(n: str) -> Dict[str, Any]:
        verdict, cls = verdict_of(n)
        cells = []
        for p in plugins:
            s = a.scores.get(n, {}).get(p)
            cells.append({"text": str(s.weighted) if s else "", "title": f"{p}: {s.text()}" if s else ""})
        return {"node": n, "verdict": verdict, "cls": cls + (" picked" if n == a.node else ""),
                "cells": cells, "final": a.final.get(n, "")}

    tie = ""
    if len(a.final) > 1:
        best = max(a.final.values())
        tied = sum(1 for v in a.final.values() if v == best)
        if tied > 1:
            tie = f"{tied:,} nodes share the top score {best}; the version's selectHost broke the tie (see explain)"
    if limit is None or len(nodes) <= limit:
        rows = [row(n) for n in nodes]
    else:
        full = sorted(a.final, key=lambda n: -a.final[n])[:limit]
        if a.node and a.node not in full:
            full = full[:-1] + [a.node] if full else [a.node]
        rows = [row(n) for n in full]
        groups: Dict[Any, List[str]] = {}
        for n in nodes:
            if n not in full:
                groups.setdefault(verdict_of(n), []).append(n)
        for (verdict, cls), members in sorted(groups.items(), key=lambda g: -len(g[1])):
            finals = [a.final[n] for n in members if n in a.final]
            rows.append({"node": f"{len(members):,} nodes ({sample_names(members)})", "verdict": verdict, "cls": cls,
                         "cells": [{"text": "", "title": ""} for _ in plugins],
                         "final": (f"{min(finals)}-{max(finals)}" if min(finals) != max(finals) else finals[0])
                         if finals else ""})
    return {"attempt": a.attempt, "time": a.time, "event": a.event, "result": a.result, "node": a.node,
            "message": a.message, "plugins": plugins, "rows": rows, "rejected": a.rejected,
            "preemption": a.preemption, "nominated": a.nominated, "tie": tie}


def case_view(res) -> Dict[str, Any]:
    """What the report shows of one CaseResult."""
    engine = res.scheduler
    records = engine.records if engine is not None else {}
    pods = []
    for key, node in res.bindings.items():
        recs = records.get(key) or []
        attempts = [attempt_of(r) for r in recs]
        pods.append({"key": key, "node": node, "message": res.messages.get(key, ""),
                     "failing": any(f.startswith(key + ":") or f": {key}:" in f for f in res.failures), "attempts": [decision_table(a) for a in attempts],
                     "history": [a.summary() for a in attempts]})
    timeline = ""
    if res.case.steps:
        steps = [{"index": s.index, "action": s.action, "time": s.observation.time,
                  "attempts": s.observation.attempts} for s in res.steps]
        groups = {}
        for name, g in (getattr(res, "pod_groups", None) or {}).items():
            what = f"pod group {name} ({g.get('policy') or 'unknown'}" + (
                f", minCount {g['minCount']}" if g.get("minCount") else "") + f"): {g.get('bound', 0)} bound"
            for member in g.get("members") or {}:
                groups[member] = what
        timeline = timeline_svg({p["key"]: p["history"] for p in pods}, steps, groups)
    return {"name": res.case.name, "path": res.case.path, "passed": res.passed, "failures": res.failures,
            "pods": pods, "preempted": res.preempted, "timeline": Markup(timeline),
            # the pod groups as explain shows them: members bound, why the others are not, and
            # each workload-aware preemption as one group event
            "pod_groups": pod_group_lines(res, list(res.bindings)),
            "description": res.case.description, "version": res.case.features.describe()}


def write(path: str, html: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(html)


def write_run_report(path: str, results: List[Any], invalid: Optional[List[str]] = None) -> None:
    write_run_views(path, [case_view(r) for r in results], invalid)


def write_run_views(path: str, cases: List[Dict[str, Any]], invalid: Optional[List[str]] = None) -> None:
    """The run report of the cases' views (case_view, made as each case ran: `run --html`
    holds no case's scheduler to the end)."""
    cases = list(cases)
    cases.sort(key=lambda c: c["passed"])  # failing cases first
    write(path, render("report.html.j2", kind="run", title="schedharness run", version=_version(),
                       scheduler=scheduler_versions([c["version"] for c in cases]), cases=cases, invalid=invalid or [],
                       passed=sum(1 for c in cases if c["passed"]), failed=sum(1 for c in cases if not c["passed"])))


MORE_TIED = 6  # tied (or knock-on's differing) nodes the tables show besides the pod's two


def diff_view(change) -> Dict[str, Any]:
    """One change of `diff`: each side's last attempt as a decision table on the nodes of its
    why (the nodes the pod went to, and the tied nodes of a tie-break), and its class."""
    from ..compare.diff import class_line

    nodes = list(change.nodes)
    nodes += [n for n in (change.data.get("tie") or {}).get("nodes", []) if n not in nodes][:MORE_TIED]
    nodes += [n for n in (change.data.get("knockOn") or {}).get("nodes", []) if n not in nodes][:MORE_TIED]
    sides = []
    for side, a in zip(change.data.get("sides") or [], change.attempts):
        sides.append({"label": side["side"], "table": decision_table(a, only=nodes) if a is not None else None})
    return {"change": change, "sides": sides, "errors": change.data.get("errors") or [],
            "class_line": class_line(change) if change.klass != "real" else ""}


def write_diff_report(path: str, sides, changes, figures_rows: List[Dict[str, Any]], invalid: List[str],
                      headline: str = "") -> None:
    write(path, render("report.html.j2", kind="diff", title="schedharness diff", version=_version(),
                       scheduler=_sides_versions(sides), sides=[s.label for s in sides],
                       changes=[diff_view(c) for c in changes], figures=figures_rows, invalid=invalid,
                       headline=headline))


def write_sweep_report(path: str, rows: List[Dict[str, Any]], svg: str, invalid: List[str],
                       flips: Optional[List[Dict[str, Any]]] = None, own_config: str = "") -> None:
    write(path, render("report.html.j2", kind="sweep", title="schedharness sweep", version=_version(),
                       scheduler=_own_versions(), rows=rows, chart=Markup(svg), invalid=invalid, flips=flips or [],
                       own_config=own_config))
