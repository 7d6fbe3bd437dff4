"""Human-readable reports: a failing case's per-pod outcome and `schedharness explain`.

Each scheduling attempt is printed by `attempt_lines`, one section per step of the cycle
(PreFilter, Filter, Score, PostFilter/preemption, outcome); a new per-attempt column or section
is one more function in ATTEMPT_SECTIONS, called with the record and the View.

At scale (more nodes than View.nodes) the Filter section groups the nodes whose filters said the
same, the Score section shows the top-scored nodes only, and ties at the top score say how the
case's version breaks them (selectHost); `--all-nodes` prints every node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Set, Tuple

from ..case.record_columns import whole
from ..case.runner import CaseResult, pod_ref
from ..framework.status import Code
from ..versions.ties import feasible_order_breaks_ties

DEFAULT_NODES = 10  # explain --nodes: nodes shown one by one before grouping
GROUP_NAMES = 3  # names shown of a group of nodes


@dataclass
class View:
    """How much of each attempt a report prints, and what the scheduler was (for the tie rule).

    nodes: at most this many nodes one by one (Filter verdicts, top scores, preemption
    candidates); beyond it nodes with the same verdict are grouped. all_nodes: every node.
    heap_select: selectHost pops newSortedNodeScores' heap (v1.35 on) instead of sampling the
    tied nodes at random (v1.34). parallelism: the configuration's. order_random: the feasible
    list's order is the filter workers' and breaks ties (versions.ties)."""

    nodes: int = DEFAULT_NODES
    all_nodes: bool = False
    heap_select: bool = True
    parallelism: int = 16
    order_random: bool = True  # versions.ties.feasible_order_breaks_ties for this run
    version: str = ""

    def fits(self, n: int) -> bool:
        return self.all_nodes or n <= self.nodes


def view_of(res: CaseResult, nodes: Optional[int] = None, all_nodes: bool = False) -> View:
    """The View of a case's run: its version's selectHost and its configuration's parallelism."""
    sched = res.scheduler
    features = getattr(sched, "features", None) or res.case.features
    config = getattr(sched, "config", None) or {}
    parallelism = int(config.get("parallelism") or 16)
    return View(nodes=DEFAULT_NODES if nodes is None else nodes, all_nodes=all_nodes,
                heap_select=features.has("SelectHostFromScoreHeap"),
                parallelism=parallelism, order_random=feasible_order_breaks_ties(features, parallelism),
                version=features.describe())


def scheduler_versions(described: List[str]) -> str:
    """`kube-scheduler v1.36.3`, or per version how many cases ran on it (`v1.34.9: 3, ...`);
    with none known, the modelled releases."""
    counts: Dict[str, int] = {}
    for d in described:
        counts[d] = counts.get(d, 0) + 1
    if not counts:
        from ..versions import MODELLED

        return "kube-scheduler " + ", ".join(MODELLED.values())
    if len(counts) == 1:
        return f"kube-scheduler {next(iter(counts))}"
    return "kube-scheduler " + ", ".join(f"{d}: {n}" for d, n in sorted(counts.items()))


def sample_names(nodes: List[str]) -> str:
    """`a, b, c, ...`: the first GROUP_NAMES names of a group."""
    return ", ".join(nodes[:GROUP_NAMES]) + (", ..." if len(nodes) > GROUP_NAMES else "")


def _count(n: int, what: str = "node") -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


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


def _pre_filter_lines(rec, view: View) -> List[str]:
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


def _node_block(rec, node: str, rows, hint: str, compact: bool, feasible: Set[str]) -> Tuple[str, List[str]]:
    """One node's verdict and the lines under it: the filters kube-scheduler ran there, in
    order, up to the first that rejected the node (RunFilterPlugins stops there). compact:
    the filters that passed on one line (grouped output). feasible: rec.feasible as a set
    (a list's membership test, once per node, made the grouping quadratic in the nodes)."""
    decided = rec.node_statuses.get(node)
    by_extender = getattr(rec, "extender_filtered", {}).get(node)
    if by_extender is not None:
        verdict = f"rejected by extender {by_extender[0]}"
    elif decided is not None:
        verdict = f"rejected by {decided.plugin}" + (f" ({_status(decided)})" if compact else "")
    elif node in feasible:
        verdict = "feasible"
    elif hint and rec.feasible == [hint]:
        return "not evaluated (the batch's hint passed the filters)", []
    else:
        return "not evaluated (enough feasible nodes were found, or PreFilter narrowed the nodes)", []
    lines: List[str] = []
    nominated = getattr(rec, "nominated_filter_table", {}).get(node)
    if nominated is not None:
        # RunFilterPluginsWithNominatedPods: first with the nominated pods of equal or higher
        # priority on the node, then (only if that passed) without them
        keys, with_rows = nominated
        lines.append(f"      with the pods nominated to it ({', '.join(keys)}), as kube-scheduler "
                     f"filters first:")
        if not _filter_rows(lines, with_rows, "  ", compact):
            return verdict, lines
        lines.append("      then without them:")
        _filter_rows(lines, rows, "  ", compact)
    else:
        _filter_rows(lines, rows, "", compact)
    if by_extender is not None:
        lines.extend(_extender_rows(rec, by_extender))
    elif decided is not None and not any(p == decided.plugin for p, _ in rows):
        lines.append(f"      {_status(decided)}")
    elif node in feasible:
        lines.extend(f"      extender {name}: kept" for name in getattr(rec, "extenders_passed", []))
    return verdict, lines


def _filter_lines(rec, view: View) -> List[str]:
    """Each node's verdict and filters; with more nodes than the view shows, one entry per
    group of nodes with the same verdict and filter statuses (most nodes first)."""
    lines: List[str] = []
    table = rec.filter_table
    hint = getattr(rec, "batch_hint", "")
    if hint:
        lines.append(f"    OpportunisticBatching hint: {hint}, the next node of the previous pod's scores "
                     f"(same signature, its node now rejects this pod), tried first as a nominated node is")
    feasible = set(rec.feasible)
    if view.fits(len(table)):
        for node, rows in table.items():
            verdict, block = _node_block(rec, node, rows, hint, False, feasible)
            lines.append(f"    node {node}: {verdict}")
            lines.extend(block)
    else:
        groups: Dict[Tuple[str, Tuple[str, ...]], List[str]] = {}
        for node, rows in table.items():
            verdict, block = _node_block(rec, node, rows, hint, True, feasible)
            groups.setdefault((verdict, tuple(block)), []).append(node)
        lines.append(f"    {_count(len(table))} in {_count(len(groups), 'group')} of the same verdict "
                     f"(--nodes N or --all-nodes lists them one by one):")
        for (verdict, block), nodes in sorted(groups.items(), key=lambda g: -len(g[1])):
            if len(nodes) == 1:
                lines.append(f"    node {nodes[0]}: {verdict}")
            else:
                lines.append(f"    {_count(len(nodes))} ({sample_names(nodes)}): {verdict}")
            lines.extend(block)
    if not table:
        verdicts = [(node, _status(st) + (f" ({st.plugin})" if st is not None and st.plugin else ""))
                    for node, st in rec.node_statuses.items()]
        if view.fits(len(verdicts)):
            lines.extend(f"    node {node}: {text}" for node, text in verdicts)
        else:
            lines.extend(_group_lines(verdicts, "    "))
    return lines


def _group_lines(verdicts: List[Tuple[str, str]], indent: str) -> List[str]:
    """`N nodes (a, b, c, ...): text` per distinct text of (node, text) pairs, most nodes first."""
    by_text: Dict[str, List[str]] = {}
    for node, text in verdicts:
        by_text.setdefault(text, []).append(node)
    return [f"{indent}{_count(len(nodes))} ({sample_names(nodes)}): {text}"
            for text, nodes in sorted(by_text.items(), key=lambda g: -len(g[1]))]


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


def _extender_error_lines(rec, view: View) -> List[str]:
    """Errors of extenders that were skipped (ignorable filters, any prioritizer)."""
    return [f"    extender {name} {verb} failed, skipped: {err}"
            for name, verb, err in getattr(rec, "extender_errors", [])]


def _filter_rows(lines: List[str], rows, indent: str, compact: bool = False) -> bool:
    """The filters that ran on a node, in order, up to the first that rejected it; whether all
    passed. compact: those that passed without detail on one `filters passed:` line."""
    passed: List[str] = []
    for plugin, st in rows:
        if st is not None and st.code == Code.Skip:
            continue
        detail = getattr(st, "detail", None)  # optional lines a plugin adds for explain
        if compact and (st is None or st.is_success()) and not callable(detail):
            passed.append(plugin)
            continue
        if passed:
            lines.append(f"      {indent}filters passed: {', '.join(passed)}")
            passed = []
        lines.append(f"      {indent}filter {plugin}: {_status(st)}")
        if callable(detail):
            lines.extend(f"        {indent}{d}" for d in detail())
        if st is not None and not st.is_success():
            return False
    if passed:
        lines.append(f"      {indent}filters passed: {', '.join(passed)}")
    return True


def _score_line(rec, idx: int, nps, mark: str) -> str:
    parts = []
    for plugin, (raw, norm, weight) in rec.score_detail.items():
        parts.append(f"{plugin} {raw[idx].score}/{norm[idx].score}x{weight}={norm[idx].score * weight}")
    for name, raw, weight, added in getattr(rec, "extender_scores", {}).get(nps.name, []):
        parts.append(f"extender {name} {raw}x{weight}x10={added}")
    head = f"      {nps.name}: "
    if not parts:
        return f"{head}total {nps.total_score}{mark}"
    return head + ", ".join(parts) + f"; total {nps.total_score}{mark}"


def _score_lines(rec, view: View) -> List[str]:
    """Each scored node's plugin scores and total, in node order; with more than the view
    shows, the top-scored nodes only (the picked one among them). Nodes tied at the top score
    are marked, and a line says how the version broke the tie."""
    if not rec.scores:
        if len(rec.feasible) == 1:
            return ["    scoring skipped: only one feasible node (kube-scheduler picks it without scoring)"]
        return []
    scored = list(enumerate(rec.scores))
    best = max(nps.total_score for _, nps in scored)
    tied = [nps.name for _, nps in scored if nps.total_score == best]
    lines: List[str] = []
    if rec.score_detail:
        lines.append("    scores (raw / normalized x weight = weighted):")
    if view.fits(len(scored)):
        shown = scored
    else:
        ranked = sorted(scored, key=lambda e: -e[1].total_score)  # stable: node order among equals
        shown = ranked[:view.nodes]
        if rec.picked and all(nps.name != rec.picked for _, nps in shown):
            shown = shown[:-1] + [e for e in ranked if e[1].name == rec.picked] if shown else shown
        lines[:] = [f"    scores of the {_count(len(shown), 'top-scored node')} of {len(scored):,} "
                    f"(--nodes N or --all-nodes shows more)" + (":" if not rec.score_detail else
                                                                " (raw / normalized x weight = weighted):")]
    for idx, nps in shown:
        mark = ""
        if len(tied) > 1 and nps.total_score == best:
            mark = " (tied top)"
        if nps.name == rec.picked:
            mark += " <- picked"
        lines.append(_score_line(rec, idx, nps, mark))
    if len(shown) < len(scored):
        rest = [nps.total_score for idx, nps in scored if all(idx != j for j, _ in shown)]
        lines.append(f"      ... {_count(len(rest), 'more scored node')}, totals {min(rest)} to {max(rest)}")
    if len(tied) > 1:
        lines.extend(_tie_lines(rec, view, tied, best))
    return lines


def _tie_lines(rec, view: View, tied: List[str], best: int) -> List[str]:
    """How selectHost broke a tie at the top score, as the case's version does."""
    head = f"    tie: {_count(len(tied))} share the top score {best} ({sample_names(tied)})"
    if not view.heap_select:  # v1.34: reservoir sampling over the tied nodes
        return [head + ";",
                f"      selectHost ({view.version or 'v1.34'}) picks one of them uniformly at random "
                f"(the harness draws with the case's seed); another run may pick another"]
    if getattr(rec, "extender_scores", None):
        how = ("the heap orders equal totals by a random Randomizer given to the nodes an extender "
               "scored, then by their place in the feasible list")
    else:
        how = ("among equal totals the heap (container/heap over the feasible list) returns the one first "
               "met in a pre-order walk of its tree, which is decided by the list's order alone")
    order = ("the feasible list is in node order (parallelism 1)" if not view.order_random else
             f"with parallelism {view.parallelism} the feasible list is in the order the filter "
             f"workers finished, which varies between runs (the harness takes node order)")
    return [head + ";",
            f"      selectHost ({view.version or 'v1.35+'}) pops newSortedNodeScores' heap: {how}; {order}"]


def _start_time(pod) -> str:
    """The start time preemption compares (util.GetPodStartTime): status.startTime, or as the
    harness stands in without it, metadata.creationTimestamp."""
    start = pod.status.get("startTime")
    if start:
        return str(start)
    created = (pod.raw.get("metadata") or {}).get("creationTimestamp")
    return f"{created} (created; no startTime)" if created else "none (no startTime: now)"


def _victims(v) -> str:
    pods = ", ".join(f"{p.key} (priority {p.priority}, started {_start_time(p)})" for p in v.pods)
    pdb = f"; {v.num_pdb_violations} PDB violation(s)" if v.num_pdb_violations else ""
    return pods + pdb


def _ordering_keys(v) -> str:
    """pickOneNodeForPreemption's keys of a candidate, in the order it compares them."""
    from ..framework.preemption import MAX_INT32, get_pod_start_time

    if not v.pods:
        return f"{v.num_pdb_violations} PDB violation(s), no victims"
    top = max(p.priority for p in v.pods)
    earliest = min((p for p in v.pods if p.priority == top), key=get_pod_start_time)
    total = sum(p.priority for p in v.pods)
    return (f"{v.num_pdb_violations} PDB violation(s), highest victim priority {v.pods[0].priority}, "
            f"sum of priorities {total} ({total + len(v.pods) * (MAX_INT32 + 1)} with each shifted by "
            f"2^31), {_count(len(v.pods), 'victim')}, earliest start of the highest-priority victims "
            f"{_start_time(earliest)}")


def _candidate_rank(c):
    from ..framework.preemption import default_criteria

    return default_criteria(c.victims.pods, c.victims.num_pdb_violations) if c.victims.pods else ()


def _post_filter_lines(rec, view: View) -> List[str]:
    st = getattr(rec, "post_filter", None)
    if st is None:
        return []
    lines = [f"    PostFilter: {_status(st)}"]
    pre = getattr(rec, "preemption", None)
    if pre:
        cands = list(pre.get("candidates") or [])
        if cands:
            lines.append("    preemption candidates (the fewest, lowest-priority victims that make the pod fit):")
            shown = cands
            if not view.fits(len(cands)):  # the best by pickOneNodeForPreemption's keys, and the pick
                shown = sorted(cands, key=_candidate_rank, reverse=True)[:view.nodes]
                picked = [c for c in cands if c.name == pre.get("picked")]
                if picked and picked[0] not in shown:
                    shown = shown[:-1] + picked
            for c in shown:
                lines.append(f"      {c.name}: evict {_victims(c.victims)}")
                if len(cands) > 1:
                    lines.append(f"        keys: {_ordering_keys(c.victims)}")
            if len(shown) < len(cands):
                lines.append(f"      ... {_count(len(cands) - len(shown), 'more candidate')} "
                             f"(--nodes N or --all-nodes shows them)")
            if len(cands) > 1:
                lines.append("    chosen by: fewest PDB violations, then lowest highest victim priority, then "
                             "lowest sum of victim priorities (each shifted by 2^31), then fewest victims, then "
                             "latest earliest start time of the highest-priority victims, then the first")
        statuses = pre.get("statuses")
        items = list(statuses.items()) if statuses is not None and hasattr(statuses, "items") else []
        if view.fits(len(items)):
            for node, s in items:
                lines.append(f"      {node}: not a candidate: {_status(s)}")
        else:
            lines.extend(_group_lines([(node, f"not a candidate: {_status(s)}") for node, s in items], "      "))
        if pre.get("picked"):
            lines.append(f"    preemption picked: {pre['picked']}")
    if getattr(rec, "nominated", ""):
        lines.append(f"    nominated node: {rec.nominated}")
    return lines


def _outcome_lines(rec, view: View) -> List[str]:
    lines = []
    if rec.picked:
        tied = 0
        if len(rec.scores) > 1:
            best = max(nps.total_score for nps in rec.scores)
            tied = sum(1 for nps in rec.scores if nps.total_score == best)
        lines.append(f"    picked: {rec.picked}" + (f" (one of {tied:,} tied at the top score)" if tied > 1 else ""))
    if rec.message:
        lines.append(f"    message: {rec.message}")
    return lines


ATTEMPT_SECTIONS: List[Callable] = [_pre_filter_lines, _filter_lines, _extender_error_lines, _score_lines,
                                    _post_filter_lines, _outcome_lines]


def history_lines(recs) -> List[str]:
    """The attempt history: one line per attempt (time, requeueing event, result, the plugins
    that rejected how many nodes, the nominated node)."""
    from ..case.decisions import summary_of

    lines = ["  history:"]
    for rec in recs:
        a = summary_of(rec)
        parts = [f"#{a['attempt']} at {a['time']:g}s",
                 f"after {a['event']}" if a["event"] and a["attempt"] > 1 else "",
                 a["result"] + (f" on {a['node']}" if a["node"] and a["result"] != "unschedulable" else ""),
                 "rejected by " + ", ".join(f"{p} ({n})" for p, n in a["rejected"].items()) if a["rejected"] else "",
                 f"nominated {a['nominated']}" if a["nominated"] else ""]
        lines.append("    " + "; ".join(p for p in parts if p))
    return lines


def attempt_lines(rec, view: Optional[View] = None) -> List[str]:
    view = view or View()
    by = f" by {rec.replica}" if getattr(rec, "replica", "") else ""
    lines = [f"  attempt {rec.attempt}{by} at {rec.time:g}s{_requeued_by(rec)}:"]
    for section in ATTEMPT_SECTIONS:
        lines.extend(section(rec, view))
    return lines


def _group_preemption_lines(p) -> List[str]:
    """One workload-aware preemption as a group event (the pod group cycle's PodGroupPostFilter,
    for the whole group): its victims (a pod, or a PodGroup with disruptionMode PodGroup evicted
    whole) with their nodes, and what kube-scheduler tells each evicted pod (its Preempted
    event, its DisruptionTarget condition)."""
    victims = p.get("victims") or {}
    groups = p.get("victimGroups") or {}
    in_group = {v for vs in groups.values() for v in vs}
    units = len(groups) + sum(1 for v in victims if v not in in_group)
    lines = [f"  preemption at {p.get('time', 0):g}s (workload-aware, for the whole group): {units} victim(s), "
             f"{len(victims)} pod(s) evicted"]
    for g, vs in groups.items():
        lines.append(f"    PodGroup {g} (disruptionMode PodGroup, one victim): "
                     + ", ".join(f"{v} on {victims.get(v) or '?'}" for v in vs))
    for v, node in victims.items():
        if v not in in_group:
            lines.append(f"    {v} on {node or '?'}")
    lines.append(f"    each evicted pod: event Preempted \"{p.get('event')}\"; "
                 f"condition DisruptionTarget \"{p.get('condition')}\"")
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
        for p in g.get("preemptions") or ():
            lines.extend(_group_preemption_lines(p))
    return lines


def explain_records(res: CaseResult, pod: Optional[str] = None, view: Optional[View] = None) -> List[str]:
    sched = res.scheduler
    view = view or view_of(res)
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
        for rec in recs:  # (one kept as columns made whole while it is printed)
            lines.extend(attempt_lines(whole(rec), view))
    return lines


def explain(res: CaseResult, pod: Optional[str] = None, view: Optional[View] = None) -> str:
    return "\n".join(explain_records(res, pod, view))


def explain_pods(res: CaseResult, pods: List[str], view: Optional[View] = None) -> str:
    """The decision table of each pod once (pods named by several failures appear once)."""
    seen: List[str] = []
    for p in pods:
        if pod_ref(p) not in seen:
            seen.append(pod_ref(p))
    view = view or view_of(res)
    return "\n".join(explain(res, p, view) for p in seen) if seen else explain(res, None, view)
