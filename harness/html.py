"""The HTML reports of `run --html`, `diff --html` and `sweep --html`: one self-contained file
(inline CSS and SVG, no script, nothing fetched) rendered from harness/templates/report.html.j2."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from markupsafe import Markup

from .case.decisions import Attempt, attempt_of
from .charts import render, timeline_svg


def _version() -> str:
    from .cli import _version as v

    return v()


def decision_table(a: Attempt) -> Dict[str, Any]:
    """One attempt as a table: a row per node (its Filter verdict, each Score plugin's weighted
    score with raw/normalized/weight as a tooltip, the total), the picked node marked."""
    nodes = list(dict.fromkeys(list(a.filter) + list(a.decisive) + list(a.final)))
    plugins: List[str] = []
    for row in a.scores.values():
        for p in row:
            if p not in plugins:
                plugins.append(p)
    rows = []
    for n in nodes:
        if n in a.decisive:
            verdict = f"rejected by {a.rejected_by.get(n, '-')}: {a.decisive[n].text()}"
            cls = "rejected"
        elif n in a.feasible:
            verdict, cls = "feasible", "feasible"
        else:
            verdict, cls = "not evaluated", "skipped"
        cells = []
        for p in plugins:
            s = a.scores.get(n, {}).get(p)
            cells.append({"text": str(s.weighted) if s else "", "title": f"{p}: {s.text()}" if s else ""})
        rows.append({"node": n, "verdict": verdict, "cls": cls + (" picked" if n == a.node else ""),
                     "cells": cells, "final": a.final.get(n, "")})
    return {"attempt": a.attempt, "time": a.time, "event": a.event, "result": a.result, "node": a.node,
            "message": a.message, "plugins": plugins, "rows": rows, "rejected": a.rejected,
            "preemption": a.preemption, "nominated": a.nominated}


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
            "description": res.case.description}


def write(path: str, html: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(html)


def write_run_report(path: str, results: List[Any], invalid: Optional[List[str]] = None) -> None:
    cases = [case_view(r) for r in results]
    cases.sort(key=lambda c: c["passed"])  # failing cases first
    write(path, render("report.html.j2", kind="run", title="schedharness run", version=_version(),
                       cases=cases, invalid=invalid or [],
                       passed=sum(1 for c in cases if c["passed"]), failed=sum(1 for c in cases if not c["passed"])))


def write_diff_report(path: str, sides, changes, figures_rows: List[Dict[str, Any]], invalid: List[str]) -> None:
    write(path, render("report.html.j2", kind="diff", title="schedharness diff", version=_version(),
                       sides=[s.label for s in sides], changes=changes, figures=figures_rows, invalid=invalid))


def write_sweep_report(path: str, rows: List[Dict[str, Any]], svg: str, invalid: List[str],
                       flips: Optional[List[Dict[str, Any]]] = None) -> None:
    write(path, render("report.html.j2", kind="sweep", title="schedharness sweep", version=_version(),
                       rows=rows, chart=Markup(svg), invalid=invalid, flips=flips or []))
