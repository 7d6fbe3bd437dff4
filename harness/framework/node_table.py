"""A column table of the snapshot's nodes for the batch forms of in-tree plugins: not an
upstream type. Row i holds, for snapshot.node_info_list[i], the numbers that NodeResourcesFit,
the resource scorers, TaintToleration, NodeUnschedulable and ImageLocality read from its
NodeInfo, as numpy int64 columns, so that one Filter or Score over a chunk of nodes is a few
array operations instead of a Python loop; and the NodeInfo's generation, for memos of answers
per node that hold while it is the same (DefaultPreemption's dry run).

The table follows the snapshot as NodeSums does (builtin_plugins/node_sums.py): it is rebuilt
when the snapshot's node list is replaced, and otherwise brought up to date from the nodes the
snapshot's journal names since its last use (UpdateSnapshot notes every NodeInfo it changes in
place). Plugins only see it through NodeRows, which the framework builds for chunks of the
snapshot's own node list, so a NodeInfo that is not the snapshot's (a preemption copy, a node
with nominated pods added) never meets it.

Scalar resources (extended resources, hugepages, ...) get columns on demand, per resource name,
the first time a batch form asks for them (NodeTable.scalar): the node's allocatable (0 when
absent), its requested, and whether its allocatable names the resource at all; they are kept up
to date with the rest from then on.

Integer columns are int64, as in Go; a node whose numbers could overflow int64 arithmetic in
the scorers (any value at or above 2**55) turns the table off for the whole snapshot, and the
plugins take their Python path, which computes with unbounded integers as before."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional

# Tables are built for snapshots of at least this many nodes: below it the plain loops are as
# fast and numpy's import (~0.1 s) is not paid. Tests set it to 0 to run the table everywhere.
MIN_NODES = int(os.environ.get("SCHEDHARNESS_NODE_TABLE_MIN", "64"))
# "1": check every row against its NodeInfo each time the table is used (tests set it).
CHECK = os.environ.get("SCHEDHARNESS_CHECK_NODE_TABLE") == "1"

# numbers the columns take: below it, (allocatable - requested) * 100 and a weighted sum of
# scores stay inside int64
LIMIT = 1 << 55

# derived columns kept per table (see NodeTable.derived)
DERIVED_KEEP = 16

# column order of the data array
COLUMNS = ("alloc_cpu", "alloc_mem", "alloc_eph", "alloc_pods", "req_cpu", "req_mem", "req_eph",
           "num_pods", "nz_cpu", "nz_mem", "unschedulable", "tainted", "has_images", "generation")

# the 0/1 columns plugins look up the set rows of (NodeRows.flagged)
FLAGS = ("unschedulable", "tainted", "has_images")
_FLAG_AT = tuple((name, COLUMNS.index(name)) for name in FLAGS)

_np: Any = None


def numpy():
    global _np
    if _np is None:
        import numpy as np
        _np = np
    return _np


def _row(ni) -> tuple:
    a = ni.allocatable
    r = ni.requested
    z = ni.non_zero_requested
    node = ni.node
    return (a.milli_cpu, a.memory, a.ephemeral_storage, a.allowed_pod_number,
            r.milli_cpu, r.memory, r.ephemeral_storage, len(ni.pods), z.milli_cpu, z.memory,
            1 if node.unschedulable else 0, 1 if node.taints else 0, 1 if ni.image_states else 0,
            ni.generation)


def _scalar_row(ni, name: str) -> tuple:
    a = ni.allocatable.scalar_resources
    return a.get(name, 0), ni.requested.scalar_resources.get(name, 0), name in a


def _safe(row: tuple) -> bool:
    for v in row:
        if v >= LIMIT or v <= -LIMIT:
            return False
    return True


class NodeTable:
    """Columns over snapshot.node_info_list (see the module docstring)."""

    __slots__ = ("nodes", "names", "epoch", "pos", "row_of", "data", "safe", "unsafe_rows", "node_objs",
                 "node_version", "_versions", "scalars", "changed", "_derived", "flag_counts") + COLUMNS

    def __init__(self, snap: Any) -> None:
        np = numpy()
        nodes = snap.node_info_list
        self.nodes: List[Any] = nodes
        self.epoch = snap.journal_epoch
        self.pos = len(snap.journal)
        # node names by row and back (fixed for the table's life: a change to the node list
        # makes a new table)
        self.names: List[str] = [ni.node.name for ni in nodes]
        self.row_of: Dict[str, int] = {name: i for i, name in enumerate(self.names)}
        rows = [_row(ni) for ni in nodes]
        self.unsafe_rows = {i for i, row in enumerate(rows) if not _safe(row)}
        self.safe = not self.unsafe_rows
        # an unsafe row is held as zeros (the table is off while it is there); every other row
        # holds its numbers, so that the table is true again once that row comes back in range
        zeros = (0,) * len(COLUMNS)
        data = np.array([zeros if i in self.unsafe_rows else row for i, row in enumerate(rows)]
                        if self.unsafe_rows else rows, dtype=np.int64)
        self.data = np.ascontiguousarray(data.reshape(len(rows), len(COLUMNS)).T)
        self._bind_columns()
        # how many rows have each flag column set (NodeRows.flagged answers [] at once at 0)
        self.flag_counts: Dict[str, int] = {name: int(getattr(self, name).sum()) for name in FLAGS}
        # node_version[i] changes whenever row i's Node object is replaced (an update of the
        # node), for plugins that keep per-node answers that read only the Node object
        self.node_objs = [ni.node for ni in nodes]
        self.node_version = np.zeros(len(nodes), dtype=np.int64)
        self._versions = 0
        # scalar resource name -> (allocatable, requested, named in allocatable) columns
        self.scalars: Dict[str, tuple] = {}
        # the rows catch_up refreshed, in order (derived() brings its columns up to date from it)
        self.changed: List[int] = []
        # key -> [column over every row, position in `changed` it is up to date with, fn, one]
        self._derived: Dict[Any, list] = {}

    def derived(self, key: Any, fn: Callable[[Any], Any], one: Callable[[int], int]):
        """A column computed from the table's own columns, over every row, kept across cycles:
        `fn(rows)` gives its values at `rows` (a slice or an int array), `one(i)` the value at
        row i (the same, in Python: a few rows cost less that way than numpy's calls); both
        must read nothing but this table's columns at those rows and what `key` names (e.g. a
        pod's requests). It is computed once for all rows, then only for the rows refreshed
        since (the node a pod was bound to). At most DERIVED_KEEP keys are kept (the oldest
        dropped)."""
        entry = self._derived.get(key)
        changed = self.changed
        if entry is None:
            if len(self._derived) >= DERIVED_KEEP:
                del self._derived[next(iter(self._derived))]
            with numpy().errstate(all="ignore"):
                entry = self._derived[key] = [fn(slice(0, len(self.names))), len(changed), fn, one]
        elif entry[1] != len(changed):
            col = entry[0]
            if len(changed) - entry[1] <= 8:
                for i in set(changed[entry[1]:]):
                    col[i] = one(i)
            else:
                np = numpy()
                rows = np.unique(np.asarray(changed[entry[1]:], dtype=np.intp))
                with np.errstate(all="ignore"):
                    col[rows] = fn(rows)
            entry[1] = len(changed)
        return entry[0]

    def scalar(self, name: str) -> tuple:
        """The columns of one scalar resource (allocatable, requested: int64; has: whether the
        node's allocatable names it), built on first use. A value out of the columns' range
        marks its row unsafe (the table is then off, as for the other columns)."""
        cols = self.scalars.get(name)
        if cols is None:
            np = numpy()
            vals = [_scalar_row(ni, name) for ni in self.nodes]
            for i, v in enumerate(vals):
                if not _safe(v[:2]):
                    self.unsafe_rows.add(i)
            self.safe = not self.unsafe_rows
            alloc = np.array([v[0] if _safe(v[:2]) else 0 for v in vals], dtype=np.int64)
            req = np.array([v[1] if _safe(v[:2]) else 0 for v in vals], dtype=np.int64)
            has = np.array([v[2] for v in vals], dtype=bool)
            cols = self.scalars[name] = (alloc, req, has)
        return cols

    def _bind_columns(self) -> None:
        for k, name in enumerate(COLUMNS):
            setattr(self, name, self.data[k])

    def catch_up(self, snap: Any) -> None:
        """Refresh the rows of the nodes the journal names since the last use."""
        journal = snap.journal
        if self.pos == len(journal):
            return
        row_of = self.row_of
        data = self.data
        nodes = self.nodes
        for name in dict.fromkeys(journal[self.pos:]):
            i = row_of.get(name)
            if i is None:
                continue  # a node the list does not hold (it is rebuilt when that changes)
            ni = nodes[i]
            if ni.node is not self.node_objs[i]:
                self.node_objs[i] = ni.node
                self._versions += 1
                self.node_version[i] = self._versions
            row = _row(ni)
            ok = _safe(row)
            if ok:
                counts = self.flag_counts
                for name, k in _FLAG_AT:
                    if row[k] != data[k, i]:
                        counts[name] += row[k] - int(data[k, i])
                data[:, i] = row
            for name, (alloc, req, has) in self.scalars.items():
                v = _scalar_row(ni, name)
                if _safe(v[:2]):
                    alloc[i], req[i], has[i] = v
                else:
                    ok = False
            if ok:
                if self.unsafe_rows:
                    self.unsafe_rows.discard(i)
            else:
                self.unsafe_rows.add(i)
            self.changed.append(i)
        self.safe = not self.unsafe_rows
        self.pos = len(journal)
        if len(self.changed) > 4 * len(nodes) + 1024:
            self.changed = []
            self._derived = {}  # (their positions no longer mean anything: made again on use)

    def check(self) -> None:
        """Every row against its NodeInfo (SCHEDHARNESS_CHECK_NODE_TABLE=1), and every derived
        column against its function over all rows."""
        if not self.safe:
            return
        np = numpy()
        for name, count in self.flag_counts.items():
            if count != int(getattr(self, name).sum()):
                raise AssertionError(f"node table count of {name} rows is stale: {count}")
        for key, (_, _, fn, one) in list(self._derived.items()):
            col = self.derived(key, fn, one)
            with np.errstate(all="ignore"):
                fresh = fn(slice(0, len(self.names)))
            if not np.array_equal(fresh, col):
                raise AssertionError(f"node table derived column {key!r} is stale")
        for i, ni in enumerate(self.nodes):
            if ni.node is not self.node_objs[i]:
                raise AssertionError(f"node table row {i} ({ni.node.name}) holds an old Node object")
            want = _row(ni)
            got = tuple(int(v) for v in self.data[:, i])
            if got != want:
                raise AssertionError(f"node table row {i} ({ni.node.name}) is stale: {got} != {want}")
            for name, (alloc, req, has) in self.scalars.items():
                got_s = (int(alloc[i]), int(req[i]), bool(has[i]))
                want_s = _scalar_row(ni, name)
                if got_s != want_s:
                    raise AssertionError(f"node table row {i} ({ni.node.name}) is stale in {name}: "
                                         f"{got_s} != {want_s}")


def table_of(snap: Any) -> Optional[NodeTable]:
    """The snapshot's table, built or brought up to date; None when the snapshot is too small,
    has no journal, or holds numbers the int64 columns cannot take."""
    nodes = snap.node_info_list
    if len(nodes) < MIN_NODES or getattr(snap, "journal", None) is None:
        return None
    t = getattr(snap, "node_table", None)
    if t is None or t.nodes is not nodes or t.epoch != snap.journal_epoch:
        t = NodeTable(snap)
        snap.node_table = t
    else:
        t.catch_up(snap)
    if CHECK:
        t.check()
    return t if t.safe else None


class NodeRows(list):
    """A list of NodeInfo that are rows of a NodeTable: `rows` indexes the table's columns in
    the list's order (a slice for a contiguous run, else an int array). The framework passes
    it to batch Filter and Score forms; a plugin that does not know it sees a plain list."""

    __slots__ = ("table", "rows")

    def __init__(self, items, table: NodeTable, rows) -> None:
        super().__init__(items)
        self.table = table
        self.rows = rows

    def flagged(self, column: str) -> List[int]:
        """The positions in this list whose row has a non-zero `column` (e.g. "tainted")."""
        if not self.table.flag_counts.get(column, 1):
            return []  # no row of the table has it
        return getattr(self.table, column)[self.rows].nonzero()[0].tolist()

    def take(self, positions: List[int]) -> "NodeRows":
        """The sub-list at `positions` (ascending), with its rows."""
        index = row_index(self.rows)[numpy().asarray(positions, dtype=numpy().intp)]
        return NodeRows([self[i] for i in positions], self.table, index)


def row_index(rows):
    """rows (a slice or an int array) as an int array."""
    if isinstance(rows, slice):
        return numpy().arange(rows.start, rows.stop)
    return rows


def rows_of_chunk(table: NodeTable, lo: int, size: int, n: int):
    """The rows of nodes[lo:lo+size] of the snapshot's list, wrapping around its end."""
    if lo + size <= n:
        return slice(lo, lo + size)
    np = numpy()
    return np.concatenate((np.arange(lo, n), np.arange(0, lo + size - n)))


def concat_rows(pieces: list):
    """One row index for the rows of consecutive chunks."""
    if len(pieces) == 1:
        return pieces[0]
    return numpy().concatenate([row_index(p) for p in pieces])
