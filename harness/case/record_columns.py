"""A finished explained cycle's whole record kept as columns (`run -v`, `explain`): not an
upstream piece.

`explain` prints each attempt's per-node tables (CycleRecord.filter_table, node_statuses,
feasible, scores, score_detail, the nodes preemption did not pick and why): about 7 MB per
attempt at 5000 nodes, over 2 GB for the 200 pending pods of an imported 150,000-pod case, held
to the end of the run because `run -v` prints only the pods that failed, known then (issue 24).
A scheduler given `keep_record_columns` turns each explained record, once its scheduling cycle
ends, into a RecordColumns (node numbers and small integer arrays; each distinct Status and
Filter row held once per run, in a RecordTables) and compacts the record as for a pod not
explained (cycle_records.compact_record). `whole(rec)` gives back a record with the same tables
in the same order, made only while a report reads it: `explain`'s text, attempt_of's Attempt and
`run --json`'s history are those of the whole records.

attempt_columns.py keeps less (what an Attempt holds, for `diff` and `run --html`); this keeps
all that the text report reads. A Status the harness cannot tell by its value (an error, a
plugin's own Status type) is kept as it is.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ..framework.results import NodePluginScores, NodeScore, NodeToStatus
from ..framework.status import Status
from ..framework.verbose_filters import FilterTable
from ..scheduler.cycle_records import compact_record
from .attempt_columns import ColumnTables, _small

_NONE = -1


@dataclass
class RecordTables(ColumnTables):
    """ColumnTables (node names by number) and what the records of one run share: each distinct
    Status once, and each distinct Filter row (plugin, Status per filter that ran) once."""

    statuses: List[Status] = field(default_factory=list)
    status_id: Dict[Any, int] = field(default_factory=dict)
    filter_rows: List[Tuple[Tuple[str, Optional[Status]], ...]] = field(default_factory=list)
    filter_row_id: Dict[Tuple[Tuple[str, int], ...], int] = field(default_factory=dict)

    def status(self, st: Optional[Status]) -> int:
        if st is None:
            return _NONE
        if st.__class__ is Status and st.err is None:
            key: Any = (st.code, tuple(st.reasons), st.plugin)
        else:  # an error or a plugin's own Status type: itself
            key = ("object", id(st))
        i = self.status_id.get(key)
        if i is None:
            i = self.status_id[key] = len(self.statuses)
            self.statuses.append(st)
        return i

    def filter_row(self, rows) -> int:
        return self.filter_row_of_ids(tuple((p, self.status(st)) for p, st in rows))

    def filter_row_of_ids(self, key: Tuple[Tuple[str, int], ...]) -> int:
        """The number of the Filter row whose statuses have these numbers (self.status)."""
        i = self.filter_row_id.get(key)
        if i is None:
            i = self.filter_row_id[key] = len(self.filter_rows)
            self.filter_rows.append(tuple((p, self.statuses[s] if s != _NONE else None) for p, s in key))
        return i

    def status_of(self, i: int) -> Optional[Status]:
        return None if i == _NONE else self.statuses[i]

    def __getstate__(self):
        return dict(self.__dict__)

    def __setstate__(self, state):
        self.__dict__.update(state)


def _ints(values: List[Any]) -> Optional[np.ndarray]:
    """The values as a small integer column, or None when one is not an int (kept as it is)."""
    for v in values:
        if v.__class__ is not int:
            return None
    return _small(values)


class _Nodes:
    """Node-number columns of one record, the same list of names held once."""

    def __init__(self, tables: RecordTables):
        self.t = tables
        self.seen: Dict[Tuple[str, ...], np.ndarray] = {}

    def __call__(self, names) -> np.ndarray:
        key = tuple(names)
        arr = self.seen.get(key)
        if arr is None:
            arr = self.seen[key] = self.t.nodes(key)
        return arr


@dataclass
class RecordColumns:
    """The per-node tables of one explained CycleRecord as columns over the run's RecordTables
    (anything not in the shapes the harness makes is kept as it is, in `kept`)."""

    tables: RecordTables
    filter_nodes: np.ndarray
    filter_rows: np.ndarray
    status_nodes: np.ndarray
    status_ids: np.ndarray  # node_statuses (a LazyStatusMap given back as a dict of the same items)
    feasible: np.ndarray
    nominated: List[Tuple[int, Tuple[str, ...], int]]  # nominated_filter_table: (node, keys, row)
    score_nodes: Optional[np.ndarray] = None
    score_totals: Optional[np.ndarray] = None
    score_plugins: List[Tuple[str, np.ndarray]] = field(default_factory=list)  # NodePluginScores.scores
    detail: List[Tuple[str, Any]] = field(default_factory=list)  # plugin -> (raw, normalized, weight)
    preemption: Optional[Dict[str, Any]] = None  # the dict, its `statuses` as (nodes, ids, absent)
    kept: Dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def of(rec, t: RecordTables) -> "RecordColumns":
        nodes = _Nodes(t)
        ft = rec.filter_table
        ns = rec.node_statuses
        if ft.__class__ is FilterTable:
            filter_nodes, filter_rows = nodes(ft.names), _filter_rows(ft, t)
        else:
            filter_nodes, filter_rows = nodes(ft), _small([t.filter_row(rows) for rows in ft.values()])
        cols = RecordColumns(
            t, filter_nodes, filter_rows,
            nodes(ns), _small([t.status(st) for st in ns.values()]),
            nodes(rec.feasible),
            [(t.node(n), tuple(keys), t.filter_row(rows)) for n, (keys, rows) in rec.nominated_filter_table.items()])
        cols._scores(rec.scores, nodes)
        for plugin, d in rec.score_detail.items():
            cols.detail.append((plugin, _detail(d, nodes)))
        pre = rec.preemption
        if pre is not None:
            pre = dict(pre)
            st = pre.get("statuses")
            if st.__class__ is NodeToStatus:
                items = list(st.items())
                pre["statuses"] = (nodes([n for n, _ in items]), _small([t.status(s) for _, s in items]),
                                   st.absent_nodes_status)
            else:
                cols.kept["statuses"] = st
            cols.preemption = pre
        return cols

    def _scores(self, scores, nodes: _Nodes) -> None:
        if not scores:
            self.kept["scores"] = scores
            return
        columns = getattr(scores, "columns", None)
        if columns is not None and getattr(scores, "totals", None) is not None:  # NodeScoreColumns
            names = [ni.node.name for ni in scores.nodes]
            totals = _ints(scores.totals.tolist())
            plugins = [(p, _ints(col.tolist())) for p, col in columns]
        else:
            items = list(scores)
            names = [nps.name for nps in items]
            totals = _ints([nps.total_score for nps in items])
            first = [p for p, _ in items[0].scores]
            plugins = []
            if all([p for p, _ in nps.scores] == first for nps in items):
                plugins = [(p, _ints([nps.scores[j][1] for nps in items])) for j, p in enumerate(first)]
            else:
                totals = None
        if totals is None or any(col is None for _, col in plugins):
            self.kept["scores"] = list(scores)
            return
        self.score_nodes, self.score_totals = nodes(names), totals
        self.score_plugins = plugins  # type: ignore[assignment]

    def restore(self, rec):
        """A copy of the compacted record `rec` with its per-node tables as they were."""
        t = self.tables
        names = t.names
        out = copy.copy(rec)
        out.columns = None
        out.diagnosis = None
        rows = t.filter_rows
        out.filter_table = {names[n]: list(rows[r]) for n, r in zip(self.filter_nodes.tolist(),
                                                                  self.filter_rows.tolist())}
        out.nominated_filter_table = {names[n]: (list(keys), list(rows[r])) for n, keys, r in self.nominated}
        statuses = {names[n]: t.status_of(s) for n, s in zip(self.status_nodes.tolist(), self.status_ids.tolist())}
        out.node_statuses = statuses
        out.feasible = [names[n] for n in self.feasible.tolist()]
        if "scores" in self.kept:
            out.scores = self.kept["scores"]
        else:
            score_names = [names[n] for n in self.score_nodes.tolist()]
            cols = [(p, col.tolist()) for p, col in self.score_plugins]
            out.scores = [NodePluginScores(n, None, total, cols, i)
                          for i, (n, total) in enumerate(zip(score_names, self.score_totals.tolist()))]
        out.score_detail = {p: _restore_detail(d, names) for p, d in self.detail}
        if self.preemption is not None:
            pre = dict(self.preemption)
            if "statuses" in self.kept:
                pre["statuses"] = self.kept["statuses"]
            else:
                pn, ids, absent = pre["statuses"]
                pre["statuses"] = NodeToStatus({names[n]: t.status_of(s) for n, s in zip(pn.tolist(), ids.tolist())},
                                               absent)
            out.preemption = pre
        return out


def _filter_rows(ft: FilterTable, t: RecordTables) -> np.ndarray:
    """Each node's Filter row number, from the FilterTable's columns: the columns that differ
    between nodes folded into one integer key per node, the distinct keys found by numpy, each
    distinct row numbered once."""
    ids = ft.status_ids(t.status)
    n = ids.shape[1]
    if not n:
        return _small([])
    plugins = [p for p, _ in ft.columns]

    def number(j: int) -> int:  # the row of node j
        return t.filter_row_of_ids(tuple(zip(plugins, ids[:, j].tolist())))

    varying = [j for j in range(len(plugins)) if (ids[j] != ids[j, 0]).any()]
    if not varying:
        return _small([number(0)] * n)
    sub = ids[varying] + 1  # (_NONE is -1)
    bases = (sub.max(axis=1) + 1).tolist()
    key = np.zeros(n, dtype=np.int64)
    scale = 1
    for col, base in zip(sub, bases):
        if scale * base >= 2 ** 62:  # too many distinct statuses for one key: rows compared whole
            _, first, inverse = np.unique(ids, axis=1, return_index=True, return_inverse=True)
            break
        key += col * scale
        scale *= base
    else:
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    numbers = np.array([number(j) for j in first.tolist()], dtype=np.int64)
    return _small(numbers[inverse.reshape(-1)].tolist())


def _detail(d, nodes: _Nodes) -> Any:
    """score_detail's (raw NodeScores, normalized NodeScores, weight) as ("columns", raw nodes,
    raw scores, normalized nodes, normalized scores, weight), or as it is."""
    try:
        raw, norm, weight = d
        if not all(ns.__class__ is NodeScore for ns in raw) or not all(ns.__class__ is NodeScore for ns in norm):
            return ("kept", d)
        raw_scores, norm_scores = _ints([ns.score for ns in raw]), _ints([ns.score for ns in norm])
    except (TypeError, ValueError):
        return ("kept", d)
    if raw_scores is None or norm_scores is None:
        return ("kept", d)
    return ("columns", nodes([ns.name for ns in raw]), raw_scores, nodes([ns.name for ns in norm]), norm_scores,
            weight)


class _NodeScores(Sequence):
    """A plugin's NodeScore list over its columns, each NodeScore made when read (the text
    report reads the shown nodes' only)."""

    def __init__(self, names: List[str], nodes: np.ndarray, scores: np.ndarray):
        self._names, self._nodes, self._scores = names, nodes, scores

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return NodeScore(self._names[int(self._nodes[i])], int(self._scores[i]))

    def __iter__(self):
        names = self._names
        return (NodeScore(names[n], s) for n, s in zip(self._nodes.tolist(), self._scores.tolist()))


def _restore_detail(d, names: List[str]) -> Any:
    if d[0] == "kept":
        return d[1]
    _, raw_nodes, raw, norm_nodes, norm, weight = d
    return (_NodeScores(names, raw_nodes, raw), _NodeScores(names, norm_nodes, norm), weight)


def whole(rec):
    """The record as reports read it: itself, or, kept as RecordColumns, a copy with its tables."""
    cols = getattr(rec, "columns", None)
    return cols.restore(rec) if isinstance(cols, RecordColumns) else rec


def keep_record_columns(tables: RecordTables):
    """The scheduler's `record_columns` callback: the finished cycle's explained record as
    RecordColumns, then compacted."""
    def done(rec, records: Optional[List[Any]] = None) -> None:
        try:
            cols = RecordColumns.of(rec, tables)
        except (TypeError, ValueError, AttributeError):  # a plugin's result of a shape not known here
            return  # the record stays whole
        compact_record(rec)
        rec.columns = cols
        rec.filter_table, rec.nominated_filter_table, rec.score_detail = {}, {}, {}
    return done


class RecordColumnsHook:
    """run_case's `hooks` for `run -v` and `explain`: the run's scheduler keeps explained records
    as RecordColumns."""

    def built(self, run) -> None:
        if run.sched is not None:
            run.sched.record_columns = keep_record_columns(RecordTables())

    def ran(self, run) -> None:
        pass
