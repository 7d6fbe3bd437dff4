"""`schedharness diff`: every case under two configurations, the pods whose outcome changes and
why (the score rows or Filter verdicts that differ), and the figures of each side."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple

from ..case.decisions import score_table
from .outcomes import CaseOutcome, Figures, PodOutcome, Task, load_cases, run_tasks
from ..errors import UserError


@dataclass
class Side:
    label: str
    config: Optional[Dict[str, Any]]
    kubernetes_version: Optional[str] = None


CLASSES = ("real", "tie-break", "knock-on")


@dataclass
class Change:
    case: str
    path: str
    pod: str
    before: PodOutcome
    after: PodOutcome
    why: List[str]  # the text lines
    klass: str = "real"  # real | tie-break | knock-on (README, "Comparing configurations and versions")
    data: Dict[str, Any] = field(default_factory=dict)  # the why as data (--json, --html)
    attempts: List[Any] = field(default_factory=list)  # each side's last Attempt (or None)
    nodes: List[str] = field(default_factory=list)  # the nodes the why shows

    def to_json(self) -> Dict[str, Any]:
        def side(p: PodOutcome) -> Dict[str, Any]:
            return {"node": p.node, "preempted": p.preempted, "victims": p.victims, "message": p.message,
                    "nominated": p.nominated}
        return {"case": self.case, "file": self.path, "pod": self.pod, "class": self.klass,
                "a": side(self.before), "b": side(self.after), "why": self.data}


def load_config_for_diff(path: str, plugins: List[str], version: Optional[str] = None) -> Dict[str, Any]:
    """A configuration file, validated once here (for `version`, else the run's default) so
    that its errors name it (exit 2)."""
    from ..config.loader import load_config_file
    from ..framework.registry import build_registry, default_registry
    from ..versions import resolve, run_default_version
    from ..yamlfile import load_yaml_file

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
    """The pods whose outcome differs between the two runs of one case, each classified."""
    out = []
    for pod in list(dict.fromkeys(list(a.pods) + list(b.pods))):
        pa, pb = a.pods.get(pod, PodOutcome(None)), b.pods.get(pod, PodOutcome(None))
        if not _changed(pa, pb):
            continue
        nodes = [n for n in dict.fromkeys([pa.node, pb.node]) if n]
        aa, ab = a.attempts.get(pod), b.attempts.get(pod)
        why = why_lines(labels[0], aa, nodes) + why_lines(labels[1], ab, nodes)
        out.append(Change(a.name, a.path, pod, pa, pb, why, attempts=[aa, ab], nodes=nodes))
    classify(out, (a, b), labels)
    return out


# --------------------------------------------------------------------------------------------
# Classification (README, "Comparing configurations and versions": real, tie-break, knock-on)


def _node_rows(attempt) -> Dict[str, Tuple[Any, Any]]:
    """Each node the attempt evaluated -> (its Filter rejection, its Score rows as (raw,
    weight) per plugin or None when not scored): what decided the pod on that node, before
    NormalizeScore (which rescales every node by the others)."""
    nodes = dict.fromkeys(list(attempt.filter) + list(attempt.decisive) + list(attempt.final))
    out = {}
    for n in nodes:
        v = attempt.decisive.get(n)
        rejection = (attempt.rejected_by.get(n), v.code, v.message) if v is not None else None
        scores = ({p: (sc.raw, sc.weight) for p, sc in attempt.scores.get(n, {}).items()}
                  if n in attempt.final else None)
        out[n] = (rejection, scores)
    return out


def differing_nodes(a, b) -> Set[str]:
    """The nodes on which the two attempts' decision tables differ: a Filter rejection, whether
    the node was scored, or a Score plugin's raw score or weight (a node evaluated on one side
    only differs too)."""
    ra, rb = _node_rows(a), _node_rows(b)
    return {n for n in set(ra) | set(rb) if ra.get(n) != rb.get(n)}


def _tie(attempt, nodes: List[str]) -> Optional[Tuple[int, List[str]]]:
    """(top score, the tied nodes) when every node of `nodes` has the attempt's top final score
    and at least two nodes share it."""
    if attempt is None or not attempt.final:
        return None
    top = max(attempt.final.values())
    tied = [n for n, v in attempt.final.items() if v == top]
    if len(tied) > 1 and all(n in tied for n in nodes):
        return top, tied
    return None


def _tie_break(c: Change, outcomes, tags) -> Optional[Dict[str, Any]]:
    """A tie-break: the pod is bound on both sides, on different nodes, with nothing else
    different, and on a side whose version and parallelism break ties at random both nodes
    have that side's top final score."""
    pa, pb = c.before, c.after
    if not (pa.node and pb.node) or pa.preempted or pb.preempted or sorted(pa.victims) != sorted(pb.victims):
        return None
    for tag, attempt, o in zip(tags, c.attempts, outcomes):
        t = _tie(attempt, [pa.node, pb.node])
        if t is not None and o.ties_random:
            return {"side": tag, "score": t[0], "nodes": t[1], "rule": o.tie_rule, "version": o.version}
    return None


def _knock_on(c: Change, changes: List[Change], outcomes) -> Optional[Dict[str, Any]]:
    """A knock-on: the pod's own decision would be the same, but an earlier change of the same
    case changed the cluster it saw (README, "Comparing configurations and versions"). Either
    it is a victim on one side of another change's preemption and went to the same node on
    both sides, or it was attempted on both sides and every node on which its last attempts' decision tables differ
    (differing_nodes) held an earlier-changed pod on one side and not on the other (an earlier
    change: a pod whose last attempt started before this pod's on either side; held: bound
    or nominated there), a node that rejects the pod on one side only holds such a pod on
    that side, and the plugins that score or reject on those nodes have the same args on both
    sides (their weights are in the rows compared)."""
    pa, pb = c.before, c.after
    if pa.preempted != pb.preempted:
        victim_side = 0 if pa.preempted else 1
        by = [o.pod for o in changes if o is not c and c.pod in (o.before, o.after)[victim_side].victims]
        attempts = [x for x in c.attempts if x is not None]
        if by and len(attempts) == 2 and attempts[0].node == attempts[1].node:
            return {"after": by, "nodes": [attempts[0].node] if attempts[0].node else []}
        return None
    if any(x is None for x in c.attempts):
        return None
    earlier = [o for o in changes if o is not c and o.pod != "(the case)" and any(
        o.pod in out.order and c.pod in out.order and out.order[o.pod] < out.order[c.pod] for out in outcomes)]
    held: List[Dict[str, Set[str]]] = [{}, {}]  # side -> node -> earlier-changed pods there
    for o in earlier:
        for side, p in enumerate((o.before, o.after)):
            for n in {p.node, p.nominated} - {None}:
                held[side].setdefault(n, set()).add(o.pod)
    diff = differing_nodes(*c.attempts)
    if not diff:
        return None
    plugins = {p for x in c.attempts for n in diff for p in list(x.scores.get(n, {})) + [x.rejected_by.get(n)]}
    if any(outcomes[0].plugin_args.get(p) != outcomes[1].plugin_args.get(p) for p in plugins if p):
        return None  # a plugin deciding on those nodes is configured otherwise: its rules changed
    after: List[str] = []
    for n in sorted(diff):
        on = [held[0].get(n, set()), held[1].get(n, set())]
        if on[0] == on[1]:
            return None
        rejects = [n in x.decisive for x in c.attempts]
        if rejects[0] != rejects[1] and not on[rejects.index(True)] - on[rejects.index(False)]:
            return None  # rejected where no more earlier-changed pods are: not their doing
        after += sorted(on[0] ^ on[1])
    return {"after": list(dict.fromkeys(after)), "nodes": sorted(diff)}


def classify(changes: List[Change], outcomes, labels: List[str]) -> None:
    """Set each change's class and its why as data: a tie-break first (it may vanish on
    another run), then a knock-on, else real."""
    tags = ["A", "B"]
    for c in changes:
        c.data = why_data(c, labels)
        tie = _tie_break(c, outcomes, tags)
        if tie is not None:
            c.klass, c.data["tie"] = "tie-break", tie
            continue
        knock = _knock_on(c, changes, outcomes)
        if knock is not None:
            c.klass, c.data["knockOn"] = "knock-on", knock


def _attempt_data(label: str, attempt, nodes: List[str]) -> Dict[str, Any]:
    """One side's last attempt on the nodes of the why: its Score rows that differ across
    them (raw, normalized, weight, weighted per node), the final scores, the Filter
    rejections, the result and message, the preemption."""
    if attempt is None:
        return {"side": label, "attempt": None, "result": "never attempted"}
    rows = []
    plugins = list(dict.fromkeys(p for n in nodes for p in attempt.scores.get(n, {})))
    for p in plugins:
        cells = {n: attempt.scores.get(n, {}).get(p) for n in nodes}
        if len(nodes) > 1 and len({sc.weighted if sc else None for sc in cells.values()}) == 1:
            continue
        rows.append({"plugin": p, "nodes": {n: ({"raw": sc.raw, "normalized": sc.normalized, "weight": sc.weight,
                                                 "weighted": sc.weighted} if sc else None)
                                            for n, sc in cells.items()}})
    out = {"side": label, "attempt": attempt.attempt, "result": attempt.result, "node": attempt.node,
           "scores": rows, "final": {n: attempt.final[n] for n in nodes if n in attempt.final},
           "rejected": {n: {"plugin": attempt.rejected_by.get(n), "code": attempt.decisive[n].code,
                            "message": attempt.decisive[n].message} for n in nodes if n in attempt.decisive},
           "message": attempt.message}
    if attempt.preemption is not None:
        out["preemption"] = attempt.preemption
    return out


def why_data(c: Change, labels: List[str]) -> Dict[str, Any]:
    return {"sides": [_attempt_data(label, x, c.nodes) for label, x in zip(labels, c.attempts)]}


def class_line(c: Change) -> str:
    """The text output's sentence on the change's class."""
    if c.klass == "tie-break":
        t = c.data["tie"]
        nodes = ", ".join(t["nodes"]) if len(t["nodes"]) <= 4 else \
            f"{len(t['nodes'])} nodes ({', '.join(c.nodes)} among them)"
        return (f"tie-break: on {t['side']} {nodes} tie at {t['score']}; {t['rule']}; "
                f"`schedharness explore {c.path} --kubernetes-version {t['version']} --runs 100` gives the odds "
                f"(under the case's own configuration)")
    if c.klass == "knock-on":
        k = c.data["knockOn"]
        nodes = ", ".join(k["nodes"]) if len(k["nodes"]) <= 4 else f"{len(k['nodes'])} nodes those pods were on"
        after = ", ".join(k["after"]) if len(k["after"]) <= 4 else f"{len(k['after'])} earlier changes"
        where = f" (its decision differs only on {nodes})" if k["nodes"] else ""
        return f"knock-on: after {after} changed{where}"
    return "real"


def headline(changes: List[Change], n_cases: int) -> str:
    counts = {k: sum(1 for c in changes if c.klass == k) for k in CLASSES}
    tail = ": " + ", ".join(f"{counts[k]} {k}" for k in CLASSES) if changes else ""
    return f"{len(changes)} pod(s) change in {len({c.path for c in changes})} of {n_cases} case(s){tail}"


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
    cases, invalid = load_cases(paths, frozen=True)
    cwd = os.getcwd()
    tasks = [Task(c, s.config, tuple(plugins), s.kubernetes_version, cwd) for s in sides for c in cases]
    results = run_tasks(tasks, jobs, dask_scheduler, command="diff")
    n = len(cases)
    per_side = [results[i * n:(i + 1) * n] for i in range(len(sides))]
    changes: List[Change] = []
    labels = [f"{tag} ({s.label})" for tag, s in zip("AB", sides)]
    for a, b in zip(*per_side):
        if a.error and a.error == b.error:  # not comparable: it runs under neither side
            print(f"SKIP {a.path}: runs under neither configuration: {a.error}", file=sys.stderr)
        elif a.error or b.error:  # it cannot run under one side: that is a change too
            why = [f"{label}: {o.error}" for label, o in zip(labels, (a, b)) if o.error]
            data = {"errors": [{"side": label, "error": o.error} for label, o in zip(labels, (a, b)) if o.error]}
            changes.append(Change(a.name, a.path, "(the case)", PodOutcome(None, a.error or "runs"),
                                  PodOutcome(None, b.error or "runs"), why, data=data))
        else:
            changes += compare(a, b, labels)
    return changes, per_side, invalid
