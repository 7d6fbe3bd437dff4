"""Why a pod went where it went: each scheduling attempt as plain data (Filter verdicts, scores,
the rejection breakdown, preemption, the attempt history), and the `expect.decisions` and
`expect.history` assertions over it.

The data comes from the scheduler's CycleRecord (harness/scheduler/schedule_one.py), the same
record `explain` prints; any plugin's results are there, in-tree or third-party.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..errors import CaseError
from ..framework.status import Code
from ..scheduler.cycle_records import rejection_breakdown, rejector
from ..scheduler.extender import EXTENDER_NAME
from .schema import case_schema, key_path, schema_message

CODES = tuple(c.name for c in Code)
SCORE_FIELDS = ("raw", "normalized", "weight", "weighted")
RESULTS = ("scheduled", "unschedulable", "error", "in-flight")

# --------------------------------------------------------------------------------------------
# One attempt as data


@dataclass
class Verdict:
    """A Filter plugin's status on a node."""

    code: str
    message: str = ""

    def text(self) -> str:
        return f"{self.code}: {self.message}" if self.message else self.code


@dataclass
class Score:
    """A Score plugin's result on a node: raw, after NormalizeScore, its weight, and the product."""

    raw: int
    normalized: int
    weight: int

    @property
    def weighted(self) -> int:
        return self.normalized * self.weight

    def get(self, name: str) -> int:
        return getattr(self, name)

    def text(self) -> str:
        return f"{self.raw}/{self.normalized}x{self.weight}={self.weighted}"


@dataclass
class Attempt:
    """One scheduling attempt of a pod, as reports and assertions read it."""

    pod: str
    attempt: int
    time: float
    event: str
    replica: str
    result: str  # scheduled | unschedulable | error | in-flight
    node: Optional[str]  # the node the cycle picked
    nominated: Optional[str]
    message: str
    filter: Dict[str, Dict[str, Verdict]] = field(default_factory=dict)  # node -> plugin -> verdict
    decisive: Dict[str, Verdict] = field(default_factory=dict)  # node -> the status that rejected it
    rejected_by: Dict[str, str] = field(default_factory=dict)  # node -> the plugin that rejected it
    feasible: List[str] = field(default_factory=list)
    scores: Dict[str, Dict[str, Score]] = field(default_factory=dict)  # node -> plugin -> score
    final: Dict[str, int] = field(default_factory=dict)  # node -> total score
    rejected: Dict[str, int] = field(default_factory=dict)  # plugin -> nodes it rejected
    reasons: Dict[str, int] = field(default_factory=dict)  # the `0/N nodes are available` counts
    preemption: Optional[Dict[str, Any]] = None  # {candidates: {node: [victims]}, picked}

    def summary(self) -> Dict[str, Any]:
        """The attempt-history entry (run --json, explain, expect.history)."""
        return {"attempt": self.attempt, "time": self.time, "event": self.event or None,
                "result": self.result, "node": self.node, "nominated": self.nominated,
                "rejected": dict(self.rejected), "message": self.message,
                **({"replica": self.replica} if self.replica else {})}

    def to_json(self) -> Dict[str, Any]:
        out = self.summary()
        out["filter"] = {n: {p: {"code": v.code, "message": v.message} for p, v in row.items()}
                         for n, row in self.filter.items()}
        out["scores"] = {n: {p: {"raw": s.raw, "normalized": s.normalized, "weight": s.weight,
                                 "weighted": s.weighted} for p, s in row.items()}
                         for n, row in self.scores.items()}
        out["final"] = dict(self.final)
        out["reasons"] = dict(self.reasons)
        if self.preemption is not None:
            out["preemption"] = self.preemption
        return out


def _verdict(st) -> Verdict:
    if st is None:
        return Verdict("Success")
    return Verdict(st.code.name, st.message())


def _result(rec) -> str:
    reason = getattr(rec, "result", "")
    if reason == "Unschedulable":
        return "unschedulable"
    if reason == "SchedulerError":
        return "error"
    return "scheduled" if rec.picked else "in-flight"


def _bare(rec) -> Attempt:
    """An Attempt's own values, without its per-node tables."""
    a = Attempt(pod=rec.pod, attempt=rec.attempt, time=rec.time, event=rec.event, replica=rec.replica,
                result=_result(rec), node=rec.picked or None, nominated=rec.nominated or None,
                message=rec.message)
    a.rejected, a.reasons = rejection_breakdown(rec)
    return a


def summary_of(rec) -> Dict[str, Any]:
    """attempt_of(rec).summary(), without making the per-node tables."""
    return _bare(rec).summary()


def attempt_of(rec) -> Attempt:
    """The Attempt a CycleRecord holds (one kept as record_columns.RecordColumns: that of the
    whole record it gives back)."""
    columns = getattr(rec, "columns", None)
    if columns is not None and hasattr(columns, "restore"):
        return attempt_of(columns.restore(rec))
    a = _bare(rec)
    a.feasible = list(rec.feasible)
    for node, rows in rec.filter_table.items():
        a.filter[node] = {p: _verdict(st) for p, st in rows}
    for node, st in rec.node_statuses.items():
        if st is not None:
            a.decisive[node] = _verdict(st)
            a.rejected_by[node] = rejector(rec, node, st)
            a.filter.setdefault(node, {}).setdefault(a.rejected_by[node], _verdict(st))
    for node, (_, st) in getattr(rec, "extender_filtered", {}).items():
        a.decisive[node] = _verdict(st)
        a.rejected_by[node] = EXTENDER_NAME
        a.filter.setdefault(node, {})[EXTENDER_NAME] = _verdict(st)
    if rec.score_detail:
        for plugin, (raw, norm, weight) in rec.score_detail.items():
            for r, n in zip(raw, norm):
                a.scores.setdefault(r.name, {})[plugin] = Score(r.score, n.score, weight)
    for nps in rec.scores:
        a.final[nps.name] = nps.total_score
    pre = rec.preemption
    if pre is not None:
        a.preemption = {"candidates": {c.name: [p.key for p in c.victims.pods] for c in pre.get("candidates") or []},
                        "picked": pre.get("picked") or None}
    columns = getattr(rec, "columns", None)
    if columns is not None:  # kept as columns when its cycle ended (attempt_columns)
        columns.fill(a)
    return a


def attempts_of(engine, pod_key: str) -> List[Attempt]:
    return [attempt_of(r) for r in (engine.records.get(pod_key) or [])]


def history(engine, pods: List[str]) -> Dict[str, List[Dict[str, Any]]]:
    """Every attempt of each pod, as its summary (run --json's `history`)."""
    return {k: [summary_of(r) for r in engine.records.get(k) or []] for k in pods}


# --------------------------------------------------------------------------------------------
# Relations: "final(node-a) > final(node-b)", "NodeResourcesFit.raw(node-a) <= 50"

_TERM = r"\s*(?:(?P<{0}int>-?\d+)|(?P<{0}what>[A-Za-z][\w.-]*?)(?:\.(?P<{0}field>raw|normalized|weight|weighted))?\((?P<{0}node>[^()\s]+)\))\s*"
_RELATION = re.compile("^" + _TERM.format("l") + r"(?P<op>>=|<=|==|!=|>|<)" + _TERM.format("r") + "$")
_OPS = {">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


@dataclass
class Term:
    value: Optional[int] = None  # a literal
    plugin: str = ""  # "" with node: final
    field: str = "weighted"
    node: str = ""

    def text(self) -> str:
        if self.value is not None:
            return str(self.value)
        if not self.plugin:
            return f"final({self.node})"
        return f"{self.plugin}.{self.field}({self.node})"


def parse_relation(text: str) -> Tuple[Term, str, Term]:
    """A relation's two terms and operator; ValueError when it does not parse."""
    m = _RELATION.match(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"not a relation: {str(text)[:80]!r} (write e.g. \"final(node-a) > final(node-b)\" "
                         f"or \"NodeResourcesFit.normalized(node-a) >= 50\")")

    def term(side: str) -> Term:
        if m.group(side + "int") is not None:
            return Term(value=int(m.group(side + "int")))
        what = m.group(side + "what")
        return Term(plugin="" if what == "final" else what, field=m.group(side + "field") or "weighted",
                    node=m.group(side + "node"))
    return term("l"), m.group("op"), term("r")


# --------------------------------------------------------------------------------------------
# Load-time checks: the names an assertion uses exist in the case and its profiles


def _ref(ref: str) -> str:
    return ref if "/" in ref else f"default/{ref}"


def check_names(path: str, where: str, exp: Dict[str, Any], pods, nodes, filter_plugins, score_plugins) -> None:
    """Unknown pods, nodes and plugins in `decisions` and `history` are errors naming the key.
    filter_plugins/score_plugins: None when unknown (not checked)."""
    def pod(ref, key):
        if _ref(ref) not in pods:
            raise CaseError(f"no pod {_ref(ref)} in the case", file=path, key=key)

    def node(name, key):
        if name is not None and name not in nodes:
            raise CaseError(f'no Node "{name}" in the case', file=path, key=key)

    def plugin(name, known, what, key):
        if known is not None and name not in known and name != "-":
            raise CaseError(f'no {what} plugin "{name}" in the case\'s profiles (enabled: '
                            f'{", ".join(sorted(known))})', file=path, key=key)

    for ref, d in (exp.get("decisions") or {}).items():
        base = f"{where}.decisions.{ref}"
        pod(ref, base)
        for n, row in (d.get("filter") or {}).items():
            node(n, f"{base}.filter.{n}")
            for p in row:
                plugin(p, filter_plugins, "Filter/PreFilter", f"{base}.filter.{n}.{p}")
        for n, row in (d.get("score") or {}).items():
            node(n, f"{base}.score.{n}")
            for p in row:
                plugin(p, score_plugins, "Score", f"{base}.score.{n}.{p}")
        for n in d.get("final") or {}:
            node(n, f"{base}.final.{n}")
        for i, n in enumerate(d.get("order") or []):
            node(n, f"{base}.order[{i}]")
        for i, text in enumerate(d.get("relations") or []):
            for t in parse_relation(text)[::2]:
                if t.value is None:
                    node(t.node, f"{base}.relations[{i}]")
                    if t.plugin:
                        plugin(t.plugin, score_plugins, "Score", f"{base}.relations[{i}]")
        for p in d.get("rejected") or {}:
            plugin(p, filter_plugins, "Filter/PreFilter", f"{base}.rejected.{p}")
        if "picked" in d:
            node(d["picked"], f"{base}.picked")
        if "nominated" in d:
            node(d["nominated"], f"{base}.nominated")
        pre = d.get("preemption") or {}
        for n, victims in (pre.get("candidates") or {}).items():
            node(n, f"{base}.preemption.candidates.{n}")
            for j, v in enumerate(victims):
                pod(v, f"{base}.preemption.candidates.{n}[{j}]")
        if "picked" in pre:
            node(pre["picked"], f"{base}.preemption.picked")
    for ref, entries in (exp.get("history") or {}).items():
        base = f"{where}.history.{ref}"
        pod(ref, base)
        for i, e in enumerate(entries):
            for k in ("node", "nominated"):
                if k in e:
                    node(e[k], f"{base}[{i}].{k}")
            for p in e.get("rejected") or {}:
                plugin(p, filter_plugins, "Filter/PreFilter", f"{base}[{i}].rejected.{p}")


_SHAPE_VALIDATORS: Dict[str, Any] = {}


def check_shape(exp: Dict[str, Any], path: str, where: str) -> None:
    """`decisions` and `history` of a step's `expect` against the case schema's definitions (the
    top-level `expect` is checked with the whole case), then the relations' grammar."""
    import jsonschema

    for name in ("decisions", "history"):
        if name not in exp:
            continue
        v = _SHAPE_VALIDATORS.get(name)
        if v is None:
            schema = case_schema()
            v = _SHAPE_VALIDATORS[name] = jsonschema.Draft7Validator(
                {"$ref": f"#/definitions/{name}", "definitions": schema["definitions"]})
        errors = sorted(v.iter_errors(exp[name]), key=lambda e: len(list(e.absolute_path)))
        if errors:
            e = errors[0]
            sub = key_path(e.absolute_path)
            raise CaseError(schema_message(e), file=path,
                            key=f"{where}.{name}" + ("" if sub == "<root>" else "." + sub))
    check_relations(path, where, exp)


def check_relations(path: str, where: str, exp: Dict[str, Any]) -> None:
    for ref, d in (exp.get("decisions") or {}).items():
        for i, text in enumerate((d or {}).get("relations") or []):
            try:
                parse_relation(text)
            except ValueError as e:
                raise CaseError(str(e), file=path, key=f"{where}.decisions.{ref}.relations[{i}]") from None


# --------------------------------------------------------------------------------------------
# The checks against a run


def _table(header: List[str], rows: List[List[str]], indent: str = "    ") -> List[str]:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    fmt = lambda r: indent + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return [fmt(header)] + [fmt(r) for r in rows]


def _pick_attempt(attempts: List[Attempt], which) -> Tuple[Optional[Attempt], str]:
    if not attempts:
        return None, "never attempted"
    if which in (None, "last"):
        return attempts[-1], ""
    if which == "first":
        return attempts[0], ""
    if isinstance(which, int) and 1 <= which <= len(attempts):
        return attempts[which - 1], ""
    return None, f"no attempt {which} (the pod had {len(attempts)})"


def _term_value(a: Attempt, t: Term) -> Optional[int]:
    if t.value is not None:
        return t.value
    if not t.plugin:
        return a.final.get(t.node)
    s = a.scores.get(t.node, {}).get(t.plugin)
    return None if s is None else s.get(t.field)


def score_table(a: Attempt, nodes: List[str], only_differing: bool = True) -> List[str]:
    """The per-node, per-plugin score table for `nodes` (plugin rows whose weighted scores differ
    across them, unless only_differing is False), then the final scores."""
    plugins: List[str] = []
    for n in nodes:
        for p in a.scores.get(n, {}):
            if p not in plugins:
                plugins.append(p)
    rows = []
    for p in plugins:
        cells = [a.scores.get(n, {}).get(p) for n in nodes]
        if only_differing and len(nodes) > 1 and len({c.weighted if c else None for c in cells}) == 1:
            continue
        rows.append([p] + [c.text() if c else "-" for c in cells])
    rows.append(["final"] + [str(a.final[n]) if n in a.final else _why_no_score(a, n) for n in nodes])
    return _table(["plugin (raw/normalized x weight = weighted)"] + nodes, rows)


def _why_no_score(a: Attempt, node: str) -> str:
    if node in a.rejected_by:
        return f"filtered out by {a.rejected_by[node]}"
    if len(a.feasible) == 1:
        return "not scored (one feasible node)"
    return "not scored"


class DecisionCheck:
    """The failures of a `decisions` or `history` mapping against the attempts recorded so far."""

    def __init__(self, engine, prefix: str):
        self.engine = engine
        self.prefix = prefix
        self.failures: List[str] = []

    def fail(self, head: str, lines: List[str] = ()) -> None:
        self.failures.append(self.prefix + head + ("\n" + "\n".join(lines) if lines else ""))

    def decisions(self, spec: Dict[str, Any]) -> None:
        for ref, d in spec.items():
            key = _ref(ref)
            a, why = _pick_attempt(attempts_of(self.engine, key), d.get("attempt"))
            label = f"{key}: decisions (attempt {d.get('attempt', 'last')})"
            if a is None:
                self.fail(f"{label}: {why}")
                continue
            label = f"{key}: decisions (attempt {a.attempt} at {a.time:g}s)"
            self._filter(label, a, d.get("filter") or {})
            self._scores(label, a, d.get("score") or {})
            self._final(label, a, d.get("final") or {})
            self._order(label, a, d.get("order"))
            for text in d.get("relations") or []:
                self._relation(label, a, text)
            self._counts(label, "rejected (plugin: nodes)", a.rejected, d.get("rejected"))
            self._counts(label, "reasons (reason: nodes)", a.reasons, d.get("reasons"))
            if "picked" in d and a.node != d["picked"]:
                self.fail(f"{label}: picked expected {d['picked'] or 'none'}, got {a.node or 'none'}"
                          + (f" ({a.message})" if a.message else ""),
                          score_table(a, [n for n in (d["picked"], a.node) if n]) if a.final else [])
            if "nominated" in d and a.nominated != d["nominated"]:
                self.fail(f"{label}: nominated expected {d['nominated'] or 'none'}, got {a.nominated or 'none'}")
            if "preemption" in d:
                self._preemption(label, a, d["preemption"])

    def _filter(self, label: str, a: Attempt, spec: Dict[str, Any]) -> None:
        rows = []
        for node, plugins in spec.items():
            for plugin, want in plugins.items():
                want = {"code": want} if isinstance(want, str) else want
                got = a.filter.get(node, {}).get(plugin)
                if got is None:
                    got_text = ("not run (PreFilter rejected the pod: " + a.message + ")" if not a.filter and a.message
                                else "not run on this node")
                    rows.append([node, plugin, _want_text(want), got_text])
                    continue
                if ("code" in want and got.code != want["code"]) or (
                        "message" in want and want["message"] not in got.message):
                    rows.append([node, plugin, _want_text(want), got.text()])
        if rows:
            self.fail(f"{label}: Filter verdicts differ", _table(["node", "plugin", "expected", "got"], rows))

    def _scores(self, label: str, a: Attempt, spec: Dict[str, Any]) -> None:
        rows = []
        for node, plugins in spec.items():
            for plugin, want in plugins.items():
                want = {"weighted": want} if isinstance(want, int) else want
                got = a.scores.get(node, {}).get(plugin)
                for f in SCORE_FIELDS:
                    if f not in want:
                        continue
                    if got is None:
                        rows.append([node, plugin, f, str(want[f]), _why_no_score(a, node)])
                    elif got.get(f) != want[f]:
                        rows.append([node, plugin, f, str(want[f]), f"{got.get(f)}  ({got.text()})"])
        if rows:
            self.fail(f"{label}: scores differ", _table(["node", "plugin", "score", "expected", "got"], rows))

    def _final(self, label: str, a: Attempt, spec: Dict[str, int]) -> None:
        bad = [n for n, want in spec.items() if a.final.get(n) != want]
        if bad:
            head = ", ".join(f"{n} expected {spec[n]}, got {a.final.get(n, '-')}" for n in bad)
            self.fail(f"{label}: final scores differ: {head}", score_table(a, bad, only_differing=False))

    def _order(self, label: str, a: Attempt, order: Optional[List[str]]) -> None:
        if not order:
            return
        got = [a.final.get(n) for n in order]
        ok = all(x is not None for x in got) and all(x > y for x, y in zip(got, got[1:]))
        if not ok:
            ranked = sorted(a.final, key=lambda n: -a.final[n])
            self.fail(f"{label}: order {' > '.join(order)} does not hold (by final score: "
                      f"{', '.join(f'{n} {a.final[n]}' for n in ranked) or 'no scores'})",
                      score_table(a, list(order)))

    def _relation(self, label: str, a: Attempt, text: str) -> None:
        left, op, right = parse_relation(text)
        lv, rv = _term_value(a, left), _term_value(a, right)
        if lv is not None and rv is not None and _OPS[op](lv, rv):
            return
        nodes = [t.node for t in (left, right) if t.value is None]
        nodes = list(dict.fromkeys(nodes))
        got = f"{left.text()} = {'-' if lv is None else lv}, {right.text()} = {'-' if rv is None else rv}"
        self.fail(f"{label}: {text} does not hold ({got})", score_table(a, nodes))

    def _counts(self, label: str, what: str, got: Dict[str, int], want: Optional[Dict[str, int]]) -> None:
        if want is None or got == want:
            return
        keys = list(dict.fromkeys(list(want) + list(got)))
        rows = [[k, str(want.get(k, 0)), str(got.get(k, 0))] for k in keys if want.get(k, 0) != got.get(k, 0)]
        self.fail(f"{label}: {what} differ", _table([what.split(" ")[0], "expected", "got"], rows))

    def _preemption(self, label: str, a: Attempt, spec: Optional[Dict[str, Any]]) -> None:
        got = a.preemption
        if spec is None:
            if got is not None:
                self.fail(f"{label}: preemption expected not to run, it found candidates "
                          f"{', '.join(got['candidates']) or 'none'}")
            return
        if got is None:
            self.fail(f"{label}: preemption did not run" + (f" ({a.message})" if a.message else ""))
            return
        rows = []
        if "candidates" in spec:
            want = {n: sorted(_ref(v) for v in vs) for n, vs in (spec["candidates"] or {}).items()}
            have = {n: sorted(vs) for n, vs in got["candidates"].items()}
            for n in dict.fromkeys(list(want) + list(have)):
                if want.get(n) != have.get(n):
                    rows.append([n, ", ".join(want[n]) if n in want else "not a candidate",
                                 ", ".join(have[n]) if n in have else "not a candidate"])
        if "picked" in spec and spec["picked"] != got["picked"]:
            rows.append(["(picked)", spec["picked"] or "none", got["picked"] or "none"])
        if rows:
            self.fail(f"{label}: preemption differs", _table(["node", "expected victims", "got"], rows))

    def history(self, spec: Dict[str, List[Dict[str, Any]]]) -> None:
        for ref, want in spec.items():
            key = _ref(ref)
            got = [summary_of(r) for r in self.engine.records.get(key) or []]
            rows = []
            for i in range(max(len(want), len(got))):
                w = want[i] if i < len(want) else None
                g = got[i] if i < len(got) else None
                if w is None:
                    rows.append([str(i + 1), "(no more attempts)", _history_text(g, list(g))])
                    continue
                if g is None:
                    rows.append([str(i + 1), _history_text(w, list(w)), "(no such attempt)"])
                    continue
                if any(not _history_match(k, v, g.get(k)) for k, v in w.items()):
                    rows.append([str(i + 1), _history_text(w, list(w)), _history_text(g, list(w))])
            if rows:
                self.fail(f"{key}: attempt history differs ({len(want)} attempt(s) expected, {len(got)} made)",
                          _table(["attempt", "expected", "got"], rows))


def _history_match(k: str, want, got) -> bool:
    if k == "message":
        return want in (got or "")
    if k == "time":
        return got is not None and abs(float(got) - float(want)) < 1e-9
    if k == "rejected":
        return dict(want or {}) == dict(got or {})
    return want == got


def _history_text(entry: Dict[str, Any], keys: List[str]) -> str:
    parts = []
    for k in keys:
        v = entry.get(k)
        if k == "rejected":
            v = "{" + ", ".join(f"{p}: {n}" for p, n in (v or {}).items()) + "}"
        elif k == "time" and v is not None:
            v = f"{float(v):g}s"
        parts.append(f"{k}={v}")
    return " ".join(parts)


def _want_text(want: Dict[str, Any]) -> str:
    s = want.get("code", "")
    if "message" in want:
        s += (": " if s else "message contains ") + repr(want["message"])
    return s
