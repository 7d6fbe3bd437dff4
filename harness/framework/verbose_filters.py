"""Every Filter plugin's status on every node, for `explain` and `run -v`: not an upstream piece.

kube-scheduler's RunFilterPlugins stops at a node's first rejection; explain shows what each
Filter plugin says of each node (Framework.run_filter_plugins_verbose, one node at a time). At
5000 nodes that is a table of 5000 rows per attempt, once per pod explained, and building it row
by row was most of `run -v`'s time on a 150,000-pod case (issue 24). `verbose_filter_table`
asks each plugin once for all the nodes (its batch form where it has one, which gives what its
per-node calls give: plugin_calls.batch_form) and keeps the answers as columns, one per plugin;
a FilterTable reads as the dict run_filter_plugins_verbose's rows made (node -> [(plugin,
Status or None)] in the profile's order), each row made when it is read, and
record_columns.RecordColumns takes its columns as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .lazy_status import StatusColumn, make_status
from .node_table import NodeRows, numpy, rows_of_chunk, table_of
from .plugin_calls import _error, _status
from .status import Code, Status

SKIP = "skip"  # a column of a plugin PreFilter skipped: Status(Code.Skip) on every node
PASS = "pass"  # a column of a plugin that passed every node: None on every node


class FilterTable(Mapping):
    """node name -> [(plugin, Status or None)], as run_filter_plugins_verbose gives each node's
    row, over one column per plugin: SKIP, PASS, a StatusColumn or a list of statuses."""

    __slots__ = ("names", "columns", "_index")

    def __init__(self, names: List[str], columns: List[Tuple[str, Any]]) -> None:
        self.names = names
        self.columns = columns
        self._index: Optional[Dict[str, int]] = None

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self._positions()

    def _positions(self) -> Dict[str, int]:
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.names)}
        return self._index

    def row(self, i: int) -> List[Tuple[str, Optional[Status]]]:
        """Node i's row (fresh statuses, as each per-node call made its own)."""
        out: List[Tuple[str, Optional[Status]]] = []
        for plugin, col in self.columns:
            if col is SKIP:
                out.append((plugin, Status(Code.Skip)))
            elif col is PASS:
                out.append((plugin, None))
            else:
                out.append((plugin, col[i]))
        return out

    def __getitem__(self, name: str) -> List[Tuple[str, Optional[Status]]]:
        return self.row(self._positions()[name])

    def items(self):  # type: ignore[override]
        return ((n, self.row(i)) for i, n in enumerate(self.names))

    def values(self):  # type: ignore[override]
        return (self.row(i) for i in range(len(self.names)))

    def status_ids(self, status_id: Callable[[Optional[Status]], int]):
        """Per plugin, each node's status as `status_id` numbers it, as an int array of shape
        (plugins, nodes): a column's kinds are numbered once, a list's statuses one by one."""
        np = numpy()
        n = len(self.names)
        out = np.empty((len(self.columns), n), dtype=np.int64)
        for j, (_, col) in enumerate(self.columns):
            if col is SKIP:
                out[j] = status_id(Status(Code.Skip))
            elif col is PASS:
                out[j] = status_id(None)
            elif col.__class__ is StatusColumn:
                kinds = np.array([status_id(None if k is None else make_status((k[0], k[1], "")))
                                  for k in col.kinds], dtype=np.int64)
                out[j] = kinds[col.keys] if len(kinds) else status_id(None)
            else:
                out[j] = [status_id(st) for st in col]
        return out


def _each(name: str, fn, state, pod, nodes: Sequence[Any]) -> List[Optional[Status]]:
    """run_filter_plugins_verbose's call of one plugin on each node: a raise or a result that
    is no Status an Error naming the plugin."""
    out: List[Optional[Status]] = []
    for ni in nodes:
        try:
            s = _status(name, "Filter", fn(state, pod, ni))
        except Exception as e:
            s = _error(name, e)
        out.append(s)
    return out


def verbose_filter_table(fw, state, pod, nodes: List[Any], snapshot=None) -> FilterTable:
    """Framework.run_filter_plugins_verbose on each of `nodes`, plugin by plugin over all the
    nodes (the batch forms standing for their per-node calls), as a FilterTable. `snapshot`:
    the snapshot whose node list `nodes` is (its node table's rows go to the batch forms)."""
    skip = state.skip_filter_plugins
    batch = fw._filter_batch
    sub: Sequence[Any] = nodes
    if snapshot is not None and len(nodes) > 1 and nodes is snapshot.node_info_list:
        table = table_of(snapshot)
        if table is not None:
            sub = NodeRows(nodes, table, rows_of_chunk(table, 0, len(nodes), len(nodes)))
    columns: List[Tuple[str, Any]] = []
    for pc in fw.filter_plugins:
        name = pc.name
        if name in skip:
            columns.append((name, SKIP))
            continue
        sts = fw._batch_filter(batch, name, state, pod, sub) if len(nodes) > 1 else None
        if sts is None:
            sts = _each(name, pc.fn, state, pod, nodes)
        elif sts.__class__ is StatusColumn:
            if sts.passes_all():
                sts = PASS
            columns.append((name, sts))
            continue
        else:
            sts = list(sts)
            if any(s is not None and s.__class__ is not Status and not isinstance(s, Status) for s in sts):
                sts = _each(name, pc.fn, state, pod, nodes)  # as the per-node calls judge it
        columns.append((name, PASS if not any(sts) else sts))
    return FilterTable([ni.node.name for ni in nodes], columns)
