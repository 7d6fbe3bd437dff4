"""Human-readable reports: a failing case's per-pod outcome and `schedharness explain`."""

from __future__ import annotations

from typing import List, Optional

from .case.runner import CaseResult, pod_ref


def _status(st) -> str:
    if st is None or st.is_success():
        return "Success"
    msg = st.message()
    return f"{st.code.name}: {msg}" if msg else st.code.name


def explain_records(res: CaseResult, pod: Optional[str] = None) -> List[str]:
    sched = res.scheduler
    keys = [pod_ref(pod)] if pod else list(sched.tracked_pods)
    lines: List[str] = []
    for key in keys:
        recs = sched.records.get(key)
        final = res.bindings.get(key)
        lines.append(f"pod {key}: {'bound to ' + final if final else 'not bound'}")
        if not recs:
            lines.append("  never attempted (gated, or no profile serves its schedulerName)")
            continue
        for rec in recs:
            lines.append(f"  attempt {rec.attempt}:")
            if rec.pre_filter is not None and not rec.pre_filter.is_success():
                lines.append(f"    PreFilter: {rec.pre_filter.plugin or '-'} {_status(rec.pre_filter)}")
            table = rec.filter_table
            for node, rows in table.items():
                decided = rec.node_statuses.get(node)
                verdict = (f"rejected by {decided.plugin}" if decided is not None
                           else ("feasible" if node in rec.feasible else "not evaluated"))
                lines.append(f"    node {node}: {verdict}")
                for plugin, st in rows:
                    lines.append(f"      filter {plugin}: {_status(st)}")
                    detail = getattr(st, "detail", None)  # optional lines a plugin adds for explain
                    if callable(detail):
                        lines.extend(f"        {d}" for d in detail())
            if not table:
                for node, st in rec.node_statuses.items():
                    lines.append(f"    node {node}: {_status(st)}" + (f" ({st.plugin})" if st is not None and st.plugin else ""))
            if rec.score_detail:
                lines.append("    scores (raw / normalized x weight = weighted):")
                totals = {s.name: s.total_score for s in rec.scores}
                for idx, nps in enumerate(rec.scores):
                    parts = []
                    for plugin, (raw, norm, weight) in rec.score_detail.items():
                        parts.append(f"{plugin} {raw[idx].score}/{norm[idx].score}x{weight}={norm[idx].score * weight}")
                    lines.append(f"      {nps.name}: " + ", ".join(parts) + f"; total {totals[nps.name]}")
            elif rec.scores:
                for nps in rec.scores:
                    lines.append(f"      {nps.name}: total {nps.total_score}")
            if rec.picked:
                lines.append(f"    picked: {rec.picked}")
            if rec.message:
                lines.append(f"    message: {rec.message}")
    return lines


def explain(res: CaseResult, pod: Optional[str] = None) -> str:
    return "\n".join(explain_records(res, pod))
