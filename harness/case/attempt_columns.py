"""An attempt's per-node tables kept as columns (`diff`, `run --html`): not an upstream piece.

`explain`'s records keep, for every node of every attempt, each Filter plugin's status and each
Score plugin's raw and normalized score (`Attempt.filter`, `decisive`, `scores`, `final`): at
5000 nodes and 200 pending pods that was about 14 GB for `diff` (issue 24). A scheduler given
`keep_as_columns` turns each explained record, once its scheduling cycle ends, into an
`AttemptColumns` (node numbers and small integer arrays; the statuses and filter rows held once
per run in a `ColumnTables`) and compacts the record as for a pod not explained
(cycle_records.compact_record). `decisions.attempt_of` then gives the same Attempt as from the
whole record: its per-node mappings are read-only views over the columns, in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from .decisions import Attempt, Score, Verdict, attempt_of
from ..scheduler.cycle_records import compact_record

_NONE = -1


def _small(values: List[int]) -> np.ndarray:
    """The integers in the smallest signed dtype that holds them (int64 beyond)."""
    arr = np.asarray(values, dtype=np.int64) if values else np.zeros(0, dtype=np.int8)
    if arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        for dt in (np.int8, np.int16, np.int32):
            info = np.iinfo(dt)
            if info.min <= lo and hi <= info.max:
                return arr.astype(dt)
    return arr


@dataclass
class ColumnTables:
    """What the columns of one run share: the node names by number, and each distinct Filter
    row (plugin, code, message per plugin) and rejection (plugin, code, message) once."""

    names: List[str] = field(default_factory=list)
    number: Dict[str, int] = field(default_factory=dict)
    rows: List[Tuple[Tuple[str, str, str], ...]] = field(default_factory=list)
    row_id: Dict[Tuple[Tuple[str, str, str], ...], int] = field(default_factory=dict)

    def node(self, name: str) -> int:
        i = self.number.get(name)
        if i is None:
            i = self.number[name] = len(self.names)
            self.names.append(name)
        return i

    def nodes(self, names) -> np.ndarray:
        return np.asarray([self.node(n) for n in names], dtype=np.int32)

    def row(self, row: Tuple[Tuple[str, str, str], ...]) -> int:
        i = self.row_id.get(row)
        if i is None:
            i = self.row_id[row] = len(self.rows)
            self.rows.append(row)
        return i

    def __getstate__(self):  # the lookups are rebuilt where they are needed (a worker's result)
        return {"names": self.names, "rows": self.rows}

    def __setstate__(self, state):
        self.names, self.rows = state["names"], state["rows"]
        self.number = {n: i for i, n in enumerate(self.names)}
        self.row_id = {r: i for i, r in enumerate(self.rows)}


class _View(Mapping):
    """node name -> value, over a column of node numbers (in the Attempt's order)."""

    def __init__(self, tables: ColumnTables, nodes: np.ndarray):
        self._t, self._nodes, self._pos = tables, nodes, None

    def _at(self, name: str) -> int:
        i = self._t.number.get(name)
        if i is None:
            return _NONE
        if self._pos is None:
            pos = np.full(len(self._t.names), _NONE, dtype=np.int32)
            pos[self._nodes] = np.arange(len(self._nodes), dtype=np.int32)
            self._pos = pos
        return int(self._pos[i]) if i < len(self._pos) else _NONE

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._at(name) != _NONE

    def __getitem__(self, name: str):
        k = self._at(name) if isinstance(name, str) else _NONE
        if k == _NONE:
            raise KeyError(name)
        return self._value(k)

    def __iter__(self) -> Iterator[str]:
        names = self._t.names
        return (names[i] for i in self._nodes.tolist())

    def __len__(self) -> int:
        return len(self._nodes)

    def _value(self, k: int) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} nodes)"


class _Filter(_View):
    """Attempt.filter: node -> plugin -> Verdict."""

    def __init__(self, tables, nodes, rows):
        super().__init__(tables, nodes)
        self._rows = rows

    def _value(self, k):
        return {p: Verdict(code, msg) for p, code, msg in self._t.rows[int(self._rows[k])]}


class _Decisive(_View):
    """Attempt.decisive (node -> Verdict) or, `plugin`, Attempt.rejected_by (node -> plugin)."""

    def __init__(self, tables, nodes, ids, plugin: bool):
        super().__init__(tables, nodes)
        self._ids, self._plugin = ids, plugin

    def _value(self, k):
        p, code, msg = self._t.rows[int(self._ids[k])][0]
        return p if self._plugin else Verdict(code, msg)


class _Final(_View):
    """Attempt.final: node -> total score."""

    def __init__(self, tables, nodes, values):
        super().__init__(tables, nodes)
        self._values = values

    def _value(self, k):
        return int(self._values[k])

    def values(self):  # the mapping's values in order, at numpy's speed (ties, top score)
        return self._values.tolist()


class _Scores(_View):
    """Attempt.scores: node -> plugin -> Score, each plugin's raw and normalized scores a column
    over its own nodes (in the same order as the node's entries were made)."""

    def __init__(self, tables, nodes, plugins):
        super().__init__(tables, nodes)
        self._plugins = plugins  # [(plugin, its _View of positions, raw, normalized, weight)]

    def _value(self, k):
        name = self._t.names[int(self._nodes[k])]
        out = {}
        for p, where, raw, norm, weight in self._plugins:
            j = where._at(name)
            if j != _NONE:
                out[p] = Score(int(raw[j]), int(norm[j]), weight)
        return out


@dataclass
class AttemptColumns:
    """The per-node parts of one Attempt (filter, decisive/rejected_by, feasible, scores,
    final) and its preemption, as columns over the run's ColumnTables."""

    tables: ColumnTables
    filter_nodes: np.ndarray
    filter_rows: np.ndarray
    decisive_nodes: np.ndarray
    decisive_ids: np.ndarray
    feasible: np.ndarray
    score_nodes: np.ndarray
    scores: List[Tuple[str, np.ndarray, np.ndarray, np.ndarray, int]]  # plugin, nodes, raw, norm, weight
    final_nodes: np.ndarray
    final_values: np.ndarray
    preemption: Optional[Dict[str, Any]]

    @staticmethod
    def of(a: Attempt, t: ColumnTables) -> "AttemptColumns":
        rows = [t.row(tuple((p, v.code, v.message) for p, v in row.items())) for row in a.filter.values()]
        ids = [t.row(((a.rejected_by.get(n, "-"), v.code, v.message),)) for n, v in a.decisive.items()]
        per_plugin: Dict[str, Tuple[List[str], List[int], List[int], int]] = {}
        for n, row in a.scores.items():
            for p, s in row.items():
                e = per_plugin.setdefault(p, ([], [], [], s.weight))
                if s.weight != e[3]:
                    raise ValueError("one weight per plugin and attempt")  # never: the profile's
                e[0].append(n)
                e[1].append(s.raw)
                e[2].append(s.normalized)
        score_nodes = t.nodes(a.scores)
        scores = []
        for p, (nodes, raw, norm, weight) in per_plugin.items():
            arr = score_nodes if nodes == list(a.scores) else t.nodes(nodes)
            scores.append((p, arr, _small(raw), _small(norm), weight))
        return AttemptColumns(t, t.nodes(a.filter), _small(rows), t.nodes(a.decisive), _small(ids),
                              t.nodes(a.feasible), score_nodes, scores, t.nodes(a.final),
                              _small(list(a.final.values())), a.preemption)

    def fill(self, a: Attempt) -> None:
        """Set the Attempt's per-node parts (made from a compacted record) to views over the
        columns."""
        t = self.tables
        a.filter = _Filter(t, self.filter_nodes, self.filter_rows)  # type: ignore[assignment]
        a.decisive = _Decisive(t, self.decisive_nodes, self.decisive_ids, False)  # type: ignore[assignment]
        a.rejected_by = _Decisive(t, self.decisive_nodes, self.decisive_ids, True)  # type: ignore[assignment]
        a.feasible = [t.names[i] for i in self.feasible.tolist()]
        a.scores = _Scores(t, self.score_nodes, [(p, _View(t, nodes), raw, norm, w)  # type: ignore[assignment]
                                                 for p, nodes, raw, norm, w in self.scores])
        a.final = _Final(t, self.final_nodes, self.final_values)  # type: ignore[assignment]
        a.preemption = self.preemption


def keep_as_columns(tables: ColumnTables, last_only: bool = False):
    """The scheduler's `record_columns` callback: the finished cycle's record (explained, so
    whole) as columns, then compacted. `last_only` (diff reads a pod's last attempt): the
    pod's earlier records drop theirs."""
    def done(rec, records: Optional[List[Any]] = None) -> None:
        rec.columns = AttemptColumns.of(attempt_of(rec), tables)
        compact_record(rec)
        rec.filter_table, rec.nominated_filter_table, rec.score_detail = {}, {}, {}
        rec.extender_filtered, rec.extenders_passed, rec.extender_scores = {}, [], {}
        if last_only and records:
            for r in records:
                if r is not rec:
                    r.columns = None
    return done


class ColumnsHook:
    """run_case's `hooks`: the run's scheduler keeps explained records as columns (a case with
    `expect.decisions` keeps them whole: its checks read the records; so does a case with
    replicas, small by nature)."""

    def __init__(self, last_only: bool = False):
        self.last_only = last_only

    def built(self, run) -> None:
        from .checks import has_decisions

        if run.sched is not None and not has_decisions(run.case):
            run.sched.record_columns = keep_as_columns(ColumnTables(), self.last_only)

    def ran(self, run) -> None:
        pass
