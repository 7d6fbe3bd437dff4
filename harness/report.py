"""Human-readable reports: a failing case's per-pod outcome and `schedharness explain`.

Each scheduling attempt is printed by `attempt_lines`, one section per step of the cycle
(PreFilter, Filter, Score, PostFilter/preemption, outcome); a new per-attempt column or section
is one more function in ATTEMPT_SECTIONS.
"""

from __future__ import annotations

from typing import Callable, List, Optional

from .case.runner import CaseResult, pod_ref
from .framework.status import Code


def _status(st) -> str:
    if st is None or st.is_success():
        return "Success"
    msg = st.message()
    return f"{st.code.name}: {msg}" if msg else st.code.name


def _requeued_by(rec) -> str:
    """The event that brought the pod back to activeQ/backoffQ before this attempt."""
    if rec.attempt <= 1 or not rec.event:
        return ""
    return f", requeued by {rec.event}"


def _pre_filter_lines(rec) -> List[str]:
    lines = []
    if rec.pre_filter is not None and not rec.pre_filter.is_success():
        lines.append(f"    PreFilter: {rec.pre_filter.plugin or '-'} {_status(rec.pre_filter)}")
    skipped = []
    for rows in rec.filter_table.values():
        skipped = [plugin for plugin, st in rows if st is not None and st.code == Code.Skip]
        break
    if skipped:
        lines.append(f"    PreFilter returned Skip (their Filter does not run): {', '.join(skipped)}")
    return lines


def _filter_lines(rec) -> List[str]:
    """Each node's verdict and the filters kube-scheduler ran there, in order, up to the first
    that rejected the node (RunFilterPlugins stops there)."""
    lines: List[str] = []
    table = rec.filter_table
    hint = getattr(rec, "batch_hint", "")
    if hint:
        lines.append(f"    OpportunisticBatching hint: {hint}, the next node of the previous pod's scores "
                     f"(same signature, its node now rejects this pod), tried first as a nominated node is")
    for node, rows in table.items():
        decided = rec.node_statuses.get(node)
        by_extender = getattr(rec, "extender_filtered", {}).get(node)
        if by_extender is not None:
            verdict = f"rejected by extender {by_extender[0]}"
        elif decided is not None:
            verdict = f"rejected by {decided.plugin}"
        elif node in rec.feasible:
            verdict = "feasible"
        elif hint and rec.feasible == [hint]:
            lines.append(f"    node {node}: not evaluated (the batch's hint passed the filters)")
            continue
        else:
            lines.append(f"    node {node}: not evaluated (enough feasible nodes were found, or "
                         f"PreFilter narrowed the nodes)")
            continue
        lines.append(f"    node {node}: {verdict}")
        nominated = getattr(rec, "nominated_filter_table", {}).get(node)
        if nominated is not None:
            # RunFilterPluginsWithNominatedPods: first with the nominated pods of equal or higher
            # priority on the node, then (only if that passed) without them
            keys, with_rows = nominated
            lines.append(f"      with the pods nominated to it ({', '.join(keys)}), as kube-scheduler "
                         f"filters first:")
            first_ok = _filter_rows(lines, with_rows, "  ")
            if not first_ok:
                continue
            lines.append("      then without them:")
            _filter_rows(lines, rows, "  ")
        else:
            _filter_rows(lines, rows, "")
        if by_extender is not None:
            lines.extend(_extender_rows(rec, by_extender))
        elif decided is not None and not any(p == decided.plugin for p, _ in rows):
            lines.append(f"      {_status(decided)}")
        elif node in rec.feasible:
            lines.extend(f"      extender {name}: kept" for name in getattr(rec, "extenders_passed", []))
    if not table:
        for node, st in rec.node_statuses.items():
            lines.append(f"    node {node}: {_status(st)}" + (f" ({st.plugin})" if st is not None and st.plugin else ""))
    return lines


def _extender_rows(rec, by_extender) -> List[str]:
    """findNodesThatPassExtenders on a node one of them removed: the extenders before it kept
    the node, that one failed it."""
    name, st = by_extender
    out = []
    for passed in getattr(rec, "extenders_passed", []):
        if passed == name:
            break
        out.append(f"      extender {passed}: kept")
    out.append(f"      extender {name}: {_status(st)}")
    return out


def _extender_error_lines(rec) -> List[str]:
    """Errors of extenders that were skipped (ignorable filters, any prioritizer)."""
    return [f"    extender {name} {verb} failed, skipped: {err}"
            for name, verb, err in getattr(rec, "extender_errors", [])]


def _filter_rows(lines: List[str], rows, indent: str) -> bool:
    """The filters that ran on a node, in order, up to the first that rejected it; whether all
    passed."""
    for plugin, st in rows:
        if st is not None and st.code == Code.Skip:
            continue
        lines.append(f"      {indent}filter {plugin}: {_status(st)}")
        detail = getattr(st, "detail", None)  # optional lines a plugin adds for explain
        if callable(detail):
            lines.extend(f"        {indent}{d}" for d in detail())
        if st is not None and not st.is_success():
            return False
    return True


def _score_lines(rec) -> List[str]:
    lines: List[str] = []
    if rec.score_detail:
        lines.append("    scores (raw / normalized x weight = weighted):")
        totals = {s.name: s.total_score for s in rec.scores}
        for idx, nps in enumerate(rec.scores):
            parts = []
            for plugin, (raw, norm, weight) in rec.score_detail.items():
                parts.append(f"{plugin} {raw[idx].score}/{norm[idx].score}x{weight}={norm[idx].score * weight}")
            for name, raw, weight, added in getattr(rec, "extender_scores", {}).get(nps.name, []):
                parts.append(f"extender {name} {raw}x{weight}x10={added}")
            lines.append(f"      {nps.name}: " + ", ".join(parts) + f"; total {totals[nps.name]}")
    elif rec.scores:
        for nps in rec.scores:
            lines.append(f"      {nps.name}: total {nps.total_score}")
    elif len(rec.feasible) == 1:
        lines.append("    scoring skipped: only one feasible node (kube-scheduler picks it without scoring)")
    return lines


def _victims(v) -> str:
    pods = ", ".join(f"{p.key} (priority {p.priority})" for p in v.pods)
    pdb = f"; {v.num_pdb_violations} PDB violation(s)" if v.num_pdb_violations else ""
    return pods + pdb


def _post_filter_lines(rec) -> List[str]:
    st = getattr(rec, "post_filter", None)
    if st is None:
        return []
    lines = [f"    PostFilter: {_status(st)}"]
    pre = getattr(rec, "preemption", None)
    if pre:
        cands = pre.get("candidates") or []
        if cands:
            lines.append("    preemption candidates (the fewest, lowest-priority victims that make the pod fit):")
            for c in cands:
                lines.append(f"      {c.name}: evict {_victims(c.victims)}")
            if len(cands) > 1:
                lines.append("    chosen by: fewest PDB violations, then lowest highest victim priority, then "
                             "lowest sum of victim priorities, then fewest victims, then latest start time")
        statuses = pre.get("statuses")
        for node, s in (statuses.items() if statuses is not None and hasattr(statuses, "items") else []):
            lines.append(f"      {node}: not a candidate: {_status(s)}")
        if pre.get("picked"):
            lines.append(f"    preemption picked: {pre['picked']}")
    if getattr(rec, "nominated", ""):
        lines.append(f"    nominated node: {rec.nominated}")
    return lines


def _outcome_lines(rec) -> List[str]:
    lines = []
    if rec.picked:
        lines.append(f"    picked: {rec.picked}")
    if rec.message:
        lines.append(f"    message: {rec.message}")
    return lines


ATTEMPT_SECTIONS: List[Callable] = [_pre_filter_lines, _filter_lines, _extender_error_lines, _score_lines,
                                    _post_filter_lines, _outcome_lines]


def history_lines(recs) -> List[str]:
    """The attempt history: one line per attempt (time, requeueing event, result, the plugins
    that rejected how many nodes, the nominated node)."""
    from .case.decisions import attempt_of

    lines = ["  history:"]
    for rec in recs:
        a = attempt_of(rec)
        parts = [f"#{a.attempt} at {a.time:g}s", f"after {a.event}" if a.event and a.attempt > 1 else "",
                 a.result + (f" on {a.node}" if a.node and a.result != "unschedulable" else ""),
                 "rejected by " + ", ".join(f"{p} ({n})" for p, n in a.rejected.items()) if a.rejected else "",
                 f"nominated {a.nominated}" if a.nominated else ""]
        lines.append("    " + "; ".join(p for p in parts if p))
    return lines


def attempt_lines(rec) -> List[str]:
    by = f" by {rec.replica}" if getattr(rec, "replica", "") else ""
    lines = [f"  attempt {rec.attempt}{by} at {rec.time:g}s{_requeued_by(rec)}:"]
    for section in ATTEMPT_SECTIONS:
        lines.extend(section(rec))
    return lines


def pod_group_lines(res: CaseResult, keys: List[str]) -> List[str]:
    """The Workload API's pod groups of these pods (harness/case/pod_groups.py): policy, how
    many members are bound, v1.36's PodGroupScheduled condition, and each unbound member with
    why (its PodScheduled message: the plugin that rejected it)."""
    lines: List[str] = []
    for name, g in (getattr(res, "pod_groups", None) or {}).items():
        members = list(g.get("members") or {})
        if not any(k in members for k in keys):
            continue
        policy = g.get("policy") or "unknown"
        head = f"pod group {name} ({policy}" + (f", minCount {g['minCount']}" if g.get("minCount") else "") + ")"
        head += f": {g.get('bound', 0)} of {len(members)} members bound"
        cond = g.get("condition")
        if cond:
            head += f"; PodGroupScheduled {cond.get('status')} ({cond.get('reason')})"
        if g.get("missing"):
            head += f"; {g['missing']}"
        lines.append(head)
        for member, why in (g.get("unbound") or {}).items():
            msg = why.get("message") or "no attempt"
            lines.append(f"  {member} [{why.get('queue')}]: {msg}")
    return lines


def explain_records(res: CaseResult, pod: Optional[str] = None) -> List[str]:
    sched = res.scheduler
    keys = [pod_ref(pod)] if pod else list(sched.tracked_pods)
    lines: List[str] = pod_group_lines(res, keys)
    for key in keys:
        recs = sched.records.get(key)
        final = res.bindings.get(key)
        lines.append(f"pod {key}: {'bound to ' + final if final else 'not bound'}")
        if not recs:
            lines.append("  never attempted (gated, or no profile serves its schedulerName)")
            continue
        if len(recs) > 1:
            lines.extend(history_lines(recs))
        for rec in recs:
            lines.extend(attempt_lines(rec))
    return lines


def explain(res: CaseResult, pod: Optional[str] = None) -> str:
    return "\n".join(explain_records(res, pod))


def explain_pods(res: CaseResult, pods: List[str]) -> str:
    """The decision table of each pod once (pods named by several failures appear once)."""
    seen: List[str] = []
    for p in pods:
        if pod_ref(p) not in seen:
            seen.append(pod_ref(p))
    return "\n".join(explain(res, p) for p in seen) if seen else explain(res)
