"""Nodes' values of a label (a topology key), kept across cycles: not an upstream type.

InterPodAffinity and PodTopologySpread read, for hundreds of nodes a cycle, each node's value of
one or two topology keys. TopologyValues keeps, per key asked for, a column of the values of the
snapshot's node list (None where the node lacks the label: label values are strings), brought up
to date from the nodes the snapshot's journal names (as node_sums does). `values(snap, nodes,
key)` gives the values of `nodes` when they are nodes of that list (a run of it, as the Filter
chunks are, or any subset, as the feasible nodes are), else None: the caller then reads each
node's labels itself. Off with node_sums.ENABLED (the property test's per-node reference).
"""

from __future__ import annotations

from itertools import repeat
from operator import is_
from typing import Any, Dict, List, Optional, Tuple

from harness.framework import node_table

from . import node_sums


class TopologyValues:
    __slots__ = ("_snap", "_list", "_epoch", "_pos", "_index", "_by_name", "_columns", "_pair_columns",
                 "_code_columns")

    def __init__(self) -> None:
        self._snap: Any = None
        self._list: Optional[List[Any]] = None
        self._epoch = -1
        self._pos = 0
        self._index: Dict[int, int] = {}
        self._by_name: Dict[str, int] = {}
        self._columns: Dict[str, List[Optional[str]]] = {}
        # per key, the (key, value) pairs of the column (a topology pair, as counts key them)
        self._pair_columns: Dict[str, List[tuple]] = {}
        # per key, the column as integer codes (numpy int64; 0: no such label) and the codes'
        # values (values[code], values[0] None), for the batch forms on the node table
        self._code_columns: Dict[str, Tuple[Any, List[Optional[str]], Dict[Optional[str], int]]] = {}

    def _sync(self, snap: Any) -> bool:
        """Make the columns those of snap.node_info_list as it is now; False when the snapshot
        keeps no journal."""
        journal = getattr(snap, "journal", None)
        if journal is None:
            return False
        lst = snap.node_info_list
        if (self._snap is not snap or self._list is not lst or self._epoch != snap.journal_epoch
                or len(self._index) != len(lst)):
            self._rebuild(snap, lst)
            return True
        if self._pos < len(journal):
            by_name, columns = self._by_name, self._columns
            for name in dict.fromkeys(journal[self._pos:]):
                i = by_name.get(name)
                node = lst[i].node if i is not None else None
                if node is None or node.name != name:
                    self._rebuild(snap, lst)
                    return True
                labels = node.labels
                for key, col in columns.items():
                    col[i] = labels.get(key)
                for key, col in self._pair_columns.items():
                    col[i] = (key, labels.get(key))
                for key, (codes, values, code_of) in self._code_columns.items():
                    codes[i] = _code(labels.get(key), values, code_of)
            self._pos = len(journal)
        return True

    def _rebuild(self, snap: Any, lst: List[Any]) -> None:
        self._snap, self._list, self._epoch, self._pos = snap, lst, snap.journal_epoch, len(snap.journal)
        self._index = {id(ni): i for i, ni in enumerate(lst)}
        self._by_name = {ni.node.name: i for i, ni in enumerate(lst) if ni.node is not None}
        self._columns = {}
        self._pair_columns = {}
        self._code_columns = {}

    def _column(self, key: str) -> List[Optional[str]]:
        col = self._columns.get(key)
        if col is None:
            col = self._columns[key] = [ni.node.labels.get(key) if ni.node is not None else None
                                        for ni in self._list]
        return col

    def positions(self, snap: Any, nodes: List[Any]):
        """Where `nodes` sit in snap.node_info_list: (start, None) for a run from `start`
        (wrapping around the end), (None, [index...]) for any other subset, None when some
        node is not one of the list's (a copy, another snapshot) or there is no journal."""
        if not node_sums.ENABLED or not self._sync(snap):
            return None
        n = len(nodes)
        lst = self._list
        if n == 0:
            return (0, None)
        start = self._index.get(id(nodes[0]))
        if start is None:
            return None
        ref = lst[start:start + n]
        if len(ref) < n:
            ref += lst[:n - len(ref)]
        if len(ref) == n and all(map(is_, nodes, ref)):
            return (start, None)
        idx = list(map(self._index.get, map(id, nodes)))
        if None in idx or not all(map(is_, nodes, map(lst.__getitem__, idx))):
            return None
        return (None, idx)

    def column_at(self, where, key: str, n: int) -> List[Optional[str]]:
        """The values of `key` at `where` (from positions) for n nodes."""
        return _at(self._column(key), where, n)

    def pairs_at(self, where, key: str, n: int) -> List[tuple]:
        """The (key, value) pairs of `key` at `where` for n nodes."""
        col = self._pair_columns.get(key)
        if col is None:
            col = self._pair_columns[key] = list(zip(repeat(key), self._column(key)))
        return _at(col, where, n)

    def codes_at(self, where, key: str, n: int):
        """The values of `key` at `where` (from positions) for n nodes as (int64 codes, values):
        values[code] is the value (values[0] None: no such label)."""
        entry = self._code_columns.get(key)
        if entry is None:
            np = node_table.numpy()
            values: List[Optional[str]] = [None]
            code_of: Dict[Optional[str], int] = {None: 0}
            codes = np.array([_code(v, values, code_of) for v in self._column(key)], dtype=np.int64)
            entry = self._code_columns[key] = (codes, values, code_of)
        codes, values, _ = entry
        start, idx = where
        if idx is None:
            out = codes[start:start + n]
            if len(out) < n:
                out = node_table.numpy().concatenate((out, codes[:n - len(out)]))
            return out, values
        return codes[idx], values

    def rows_where(self, snap: Any, nodes: Any):
        """positions() for a NodeRows of the snapshot's node table: its rows, without comparing
        the nodes one by one (the table's rows are snap.node_info_list's positions); None when
        `nodes` is not one or the columns cannot follow the snapshot."""
        if nodes.__class__ is not node_table.NodeRows or not node_sums.ENABLED or not self._sync(snap):
            return None
        if nodes.table.nodes is not self._list or nodes.table.epoch != snap.journal_epoch:
            return None
        rows = nodes.rows
        if rows.__class__ is slice:
            return (rows.start, None)
        return (None, rows.tolist())

    def values(self, snap: Any, nodes: List[Any], key: str) -> Optional[List[Optional[str]]]:
        """Each node's value of label `key` (None: no such label), or None (see positions)."""
        where = self.positions(snap, nodes)
        if where is None:
            return None
        return self.column_at(where, key, len(nodes))


def topology_values(plugin: Any) -> TopologyValues:
    """The plugin's TopologyValues (one per plugin instance)."""
    tv = getattr(plugin, "_topology_values", None)
    if tv is None:
        tv = TopologyValues()
        plugin._topology_values = tv
    return tv


class NodeColumns:
    """The values of `nodes` (one batch call's nodes), key by key: from the plugin's
    TopologyValues where it can, else read from each node's labels."""

    __slots__ = ("nodes", "_tv", "_where", "_labels", "_cache")

    def __init__(self, plugin: Any, nodes: List[Any]) -> None:
        self.nodes = nodes
        snap = getattr(getattr(plugin, "handle", None), "snapshot", None)
        self._tv = topology_values(plugin) if snap is not None else None
        self._where = None
        if self._tv is not None:
            self._where = self._tv.rows_where(snap, nodes)
            if self._where is None:
                self._where = self._tv.positions(snap, nodes)
        self._labels: Optional[List[Dict[str, str]]] = None
        self._cache: Dict[str, List[Optional[str]]] = {}

    def labels(self) -> List[Dict[str, str]]:
        """Each node's labels."""
        if self._labels is None:
            self._labels = [ni.node.labels for ni in self.nodes]
        return self._labels

    def get(self, key: str) -> List[Optional[str]]:
        """Each node's value of `key` (None: no such label)."""
        col = self._cache.get(key)
        if col is None:
            if self._where is not None:
                col = self._tv.column_at(self._where, key, len(self.nodes))
            else:
                col = [lb.get(key) for lb in self.labels()]
            self._cache[key] = col
        return col

    def pairs(self, key: str) -> List[tuple]:
        """Each node's topology pair (key, its value of key or None)."""
        if self._where is not None:
            return self._tv.pairs_at(self._where, key, len(self.nodes))
        return list(zip(repeat(key), self.get(key)))

    def codes(self, key: str):
        """Each node's value of `key` as (int64 codes, values: values[code] the value, values[0]
        None), or None when the nodes are not the snapshot's (read get() instead)."""
        if self._where is None:
            return None
        return self._tv.codes_at(self._where, key, len(self.nodes))

    def tuples(self, keys) -> List:
        """Each node's value of the one key in `keys`, or its tuple of values of the keys."""
        if len(keys) == 1:
            return self.get(keys[0])
        return list(zip(*[self.get(k) for k in keys]))


__all__ = ["TopologyValues", "topology_values", "NodeColumns"]


def _code(value: Optional[str], values: List[Optional[str]], code_of: Dict[Optional[str], int]) -> int:
    """value's code in a code column (a new one for a value not seen yet)."""
    c = code_of.get(value)
    if c is None:
        c = code_of[value] = len(values)
        values.append(value)
    return c


def _at(col: List[Any], where, n: int) -> List[Any]:
    """col's entries at `where` (positions: a start in the list, wrapping, or an index list)."""
    start, idx = where
    if idx is None:
        out = col[start:start + n]
        if len(out) < n:
            out += col[:n - len(out)]
        return out
    return list(map(col.__getitem__, idx))
