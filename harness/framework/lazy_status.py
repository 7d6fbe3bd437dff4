"""Filter statuses of many nodes, made when read: not an upstream type.

kube-scheduler gives every node a Filter rejects its own Status, and a pod that fits nowhere
among 5000 nodes gets 5000 of them in its Diagnosis, which FitError's message and PostFilter
then read. The batch forms of the in-tree Filter plugins decide whole chunks of nodes at once
(node_table); here their verdicts stay as columns until something reads one node's Status:

- `StatusColumn`: what a batch Filter form may return instead of a list of statuses: per node a
  key into a table of kinds, (code, reasons) or None for a node that passes. Read as a sequence,
  it gives the very Status objects the per-node Filter would (fresh ones, one per node).
- `ChunkVerdicts`: RunFilterPlugins over a chunk of nodes (Framework.run_filter_plugins_batch_lazy):
  per position a kind, -1 for a feasible node, else an index into `kinds`, whose entries are
  either (code, reasons, plugin) to make the Status from, or a Status a plugin gave as it is.
- `LazyStatusMap`: a cycle record's node -> Status map (what reports read) over the same
  columns: a Mapping whose statuses are made when it is first read.
- `LazyStatuses`: the rejected nodes of the chunks a cycle walked, kept by NodeToStatus until
  something reads them one by one: then each node's Status is made once (the same object on every
  read), in the order the walk met the nodes. Counting reasons (FitError) and finding the nodes of
  a code (NodesForStatusCode) read the columns without making them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from .node_table import numpy, row_index
from .status import REJECTED_CODES, Code, Status

_new = object.__new__


def make_status(kind: Any) -> Status:
    """The Status of a kind: a Status as it is, else a fresh Status(code, *reasons, plugin=)."""
    if isinstance(kind, Status):
        return kind
    code, reasons, plugin = kind
    s = _new(Status)
    s.code = code
    s.reasons = list(reasons)
    s.err = None
    s.plugin = plugin
    return s


class StatusColumn(Sequence):
    """A batch Filter form's statuses for a list of nodes: node i's is None when
    kinds[keys[i]] is None, else Status(code, *reasons) for kinds[keys[i]] = (code, reasons);
    every code a kind names is a rejection (Unschedulable, UnschedulableAndUnresolvable or
    Pending). `keys` is a numpy integer array."""

    __slots__ = ("keys", "kinds")

    def __init__(self, keys, kinds: Sequence[Optional[Tuple[Code, Tuple[str, ...]]]]) -> None:
        self.keys = keys
        self.kinds = kinds

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        kind = self.kinds[int(self.keys[i])]
        if kind is None:
            return None
        return make_status((kind[0], kind[1], ""))

    def passes_all(self) -> bool:
        """Is every node's status None (no node rejected)?"""
        kinds = self.kinds
        if not kinds or (kinds[0] is None and not numpy().count_nonzero(self.keys)):
            return True  # (the common form: every key 0, naming kind None)
        return all(k is None for k in kinds)

    def rejected(self) -> List[int]:
        """The positions whose kind is not None (ascending)."""
        np = numpy()
        known = np.fromiter((k is not None for k in self.kinds), dtype=bool, count=len(self.kinds))
        return known[self.keys].nonzero()[0].tolist()

    def __iter__(self) -> Iterator[Optional[Status]]:
        kinds = self.kinds
        for k in self.keys.tolist():
            kind = kinds[k]
            yield None if kind is None else make_status((kind[0], kind[1], ""))


class ChunkVerdicts:
    """RunFilterPlugins' verdict on each node of a chunk (see the module docstring)."""

    __slots__ = ("kind_of", "kinds")

    def __init__(self, n: int) -> None:
        self.kind_of = numpy().full(n, -1, dtype=numpy().int64)
        self.kinds: List[Any] = []

    def set_status(self, pos: int, status: Optional[Status]) -> None:
        """Position `pos` gets `status` as it is (None or Success: feasible)."""
        if status is None or status.code == Code.Success:
            self.kind_of[pos] = -1
            return
        self.kind_of[pos] = len(self.kinds)
        self.kinds.append(status)

    def set_column(self, positions, column: StatusColumn, plugin: str):
        """The nodes at `positions` (an int array, one per entry of the column) that a plugin's
        StatusColumn rejects get its statuses, named after the plugin. Returns the column's
        rejected mask, or None (nothing set) when a kind's code is not a rejection."""
        np = numpy()
        keys = column.keys
        kinds = column.kinds
        mask = np.fromiter((k is not None for k in kinds), dtype=bool, count=len(kinds))[keys]
        sel = keys[mask]
        if not len(sel):
            return mask
        # the kinds used, in the kinds' order, numbered from `base` (a count per kind: the
        # kinds are few, no sort of the keys needed)
        uniq = np.bincount(sel, minlength=len(kinds)).nonzero()[0]
        made = [(kinds[k][0], kinds[k][1], plugin) for k in uniq.tolist()]
        if any(m[0] not in REJECTED_CODES for m in made):
            return None
        base = len(self.kinds)
        self.kinds.extend(made)
        remap = np.zeros(len(kinds), dtype=np.int64)
        remap[uniq] = np.arange(base, base + len(uniq), dtype=np.int64)
        self.kind_of[positions[mask]] = remap[sel]
        return mask

    def add_kinds(self, positions, kind, kinds: Sequence[Any]) -> None:
        """The nodes at `positions` (an int array) get kinds[kind[i]] ((code, reasons, plugin),
        a rejection), or pass where kind[i] is -1; only the kinds used are added."""
        np = numpy()
        passes = kind < 0
        if passes.any():
            self.kind_of[positions[passes]] = -1
            positions, kind = positions[~passes], kind[~passes]
        if not len(kind):
            return
        used = sorted(set(kind.tolist()))  # a few kinds: cheaper than numpy.unique
        remap = np.full(len(kinds), -1, dtype=np.int64)
        base = len(self.kinds)
        remap[np.asarray(used, dtype=np.int64)] = np.arange(base, base + len(used))
        self.kinds.extend(kinds[k] for k in used)
        self.kind_of[positions] = remap[kind]

    def merge(self, positions, other: "ChunkVerdicts") -> None:
        """`other`'s verdicts on a sub-chunk, whose position i is this chunk's positions[i]."""
        base = len(self.kinds)
        self.kinds.extend(other.kinds)
        rejected = other.kind_of >= 0
        self.kind_of[positions[rejected]] = other.kind_of[rejected] + base

    def has_error(self) -> bool:
        return any(isinstance(k, Status) and k.code not in REJECTED_CODES for k in self.kinds)

    def status(self, pos: int) -> Optional[Status]:
        k = int(self.kind_of[pos])
        return None if k < 0 else make_status(self.kinds[k])

    def statuses(self) -> List[Optional[Status]]:
        """Every position's Status (made now)."""
        kinds = self.kinds
        return [None if k < 0 else make_status(kinds[k]) for k in self.kind_of.tolist()]


class LazyStatuses:
    """Rejected nodes of a walk not made into Status objects yet (see the module docstring):
    per chunk, the node names by table row, the rows and kind indices of its rejected nodes
    (in walk order) and its kinds."""

    __slots__ = ("chunks", "made", "count")

    def __init__(self) -> None:
        self.chunks: List[Tuple[Any, Any, Any, List[Any]]] = []
        self.made: Dict[str, Status] = {}  # statuses made by a single read, kept for the rest
        self.count = 0

    def add(self, table, rows, kind_of, kinds: List[Any]) -> None:
        """A chunk's rejected nodes: rows of the NodeTable `table` and their kinds (int arrays,
        in walk order), `kinds` as ChunkVerdicts'."""
        self.chunks.append((table, rows, kind_of, kinds))
        self.count += len(rows)

    def find(self, name: str) -> Optional[Status]:
        """The Status of one node held here (made once), or None."""
        st = self.made.get(name)
        if st is not None:
            return st
        for table, rows, kind_of, kinds in self.chunks:
            row = table.row_of.get(name)
            if row is None:
                continue
            hit = (rows == row).nonzero()[0]
            if len(hit):
                st = self.made[name] = make_status(kinds[int(kind_of[hit[0]])])
                return st
        return None

    def names(self) -> List[str]:
        out: List[str] = []
        for table, rows, _, _ in self.chunks:
            names = table.names
            out.extend(names[r] for r in rows.tolist())
        return out

    def materialize(self, into: Dict[str, Status]) -> None:
        """Insert every held node's Status into `into`, in walk order."""
        made = self.made
        for table, rows, kind_of, kinds in self.chunks:
            names = table.names
            for r, k in zip(rows.tolist(), kind_of.tolist()):
                name = names[r]
                st = made.get(name)
                into[name] = st if st is not None else make_status(kinds[k])

    def kind_counts(self) -> Iterator[Tuple[str, List[str], int]]:
        """(plugin, reasons, how many held nodes) of each kind held (Status.get_reasons of
        each), without making the statuses."""
        np = numpy()
        for _, _, kind_of, kinds in self.chunks:
            per_kind = np.bincount(kind_of, minlength=len(kinds)).tolist()
            for kind, c in zip(kinds, per_kind):
                if not c:
                    continue
                if isinstance(kind, Status):
                    yield kind.plugin, kind.get_reasons(), c
                else:
                    yield kind[2], kind[1], c

    def reason_counts(self, counts: Dict[str, int]) -> None:
        """Add each held status's reasons to counts."""
        for _, reasons, c in self.kind_counts():
            for r in reasons:
                counts[r] = counts.get(r, 0) + c

    def plugin_counts(self, by_plugin: Dict[str, int], reasons: Dict[str, int]) -> None:
        """Add each held status's plugin ("-" when it names none) to by_plugin and its reasons
        to reasons (the rejection breakdown of a compact record)."""
        for plugin, rs, c in self.kind_counts():
            plugin = plugin or "-"
            by_plugin[plugin] = by_plugin.get(plugin, 0) + c
            for r in rs:
                reasons[r] = reasons.get(r, 0) + c

    def codes_into(self, codes, table) -> bool:
        """codes[row] = each held node's code, when every chunk is over `table`; else False."""
        np = numpy()
        for t, rows, kind_of, kinds in self.chunks:
            if t is not table:
                return False
            kc = np.array([int(k.code) if isinstance(k, Status) else int(k[0]) for k in kinds], dtype=np.int64)
            codes[rows] = kc[kind_of]
        return True


class LazyStatusMap(Mapping):
    """node name -> Status, as a dict in the order nodes were added, whose chunks added as
    columns (add_lazy, as NodeToStatus.add_lazy takes them) are made into Status objects when
    the map is first read or updated."""

    __slots__ = ("_map", "_lazy")

    def __init__(self, statuses: Optional[Dict[str, Status]] = None) -> None:
        self._map: Dict[str, Status] = dict(statuses or {})
        self._lazy: Optional[LazyStatuses] = None

    def add_lazy(self, table, rows, kind_of, kinds: List[Any]) -> None:
        if self._map:  # a node may be added again: made now, as update would give it
            for r, k in zip(rows.tolist(), kind_of.tolist()):
                self._made()[table.names[r]] = make_status(kinds[k])
            return
        if self._lazy is None:
            self._lazy = LazyStatuses()
        self._lazy.add(table, rows, kind_of, kinds)

    def _made(self) -> Dict[str, Status]:
        if self._lazy is not None:
            lazy, self._lazy = self._lazy, None
            lazy.materialize(self._map)
        return self._map

    def update(self, other) -> None:
        self._made().update(other)

    def __setitem__(self, name: str, status: Status) -> None:
        self._made()[name] = status

    def __getitem__(self, name: str) -> Status:
        return self._made()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._made())

    def __len__(self) -> int:
        return len(self._map) + (self._lazy.count if self._lazy is not None else 0)


def rows_of(nodes) -> Any:
    """The table rows of a NodeRows as an int array."""
    return row_index(nodes.rows)
