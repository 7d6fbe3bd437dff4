"""The harness's memo of RunFilterPluginsWithNominatedPods for node-local Filter plugins (no
upstream counterpart: kube-scheduler re-runs the filters on every node of every cycle).

With only in-tree node-local Filter and PreFilter plugins running (NODE_LOCAL_FILTER_PLUGINS:
their PreFilter state and Filter verdict on a node are functions of the pod's namespace and spec,
the plugin's args and that node's NodeInfo, and none has PreFilter extensions), the status
RunFilterPluginsWithNominatedPods gives on a node of the snapshot is a function of:

- the NodeInfo's generation (every change to a NodeInfo takes a new, never reused generation;
  the snapshot's copy of a cache NodeInfo keeps the cache's generation),
- what the plugins read of the pod (`pod_filter_shape`) and which Filter plugins run,
- the nominated pods of equal or higher priority on the node (by identity: a nominated pod's
  update makes a new PodInfo) that addGENominatedPods adds.

The memo is keyed by these; anything else (other plugins, a NodeInfo that is not the
snapshot's, e.g. a dry-run copy) goes the straightforward way. Errors are not remembered.
"""

from __future__ import annotations

import json
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .node_table import numpy
from .status import REJECTED_CODES, Status

# In-tree Filter plugins whose PreFilter state and Filter verdict on a node depend only on the
# pod's namespace and spec (and status resources), the plugin's args and that node (its NodeInfo)
NODE_LOCAL_FILTER_PLUGINS = frozenset(["NodeUnschedulable", "NodeName", "TaintToleration",
                                       "NodeAffinity", "NodePorts", "NodeResourcesFit"])
MEMO_SHAPES_LIMIT = 1_000  # (pod shape, filters) pairs; a memo starts afresh beyond them


def pod_filter_shape(pod) -> str:
    """What a node-local plugin may read of the pod: its namespace and spec, and its whole status
    when a container status, or the pod's own (InPlacePodLevelResourcesVerticalScaling), reports
    resources (UseStatusResources then reads it)."""
    st = pod.status or {}
    css = list(st.get("containerStatuses") or []) + list(st.get("initContainerStatuses") or [])
    extra = st if (st.get("resources") is not None
                   or any(cs.get("resources") is not None for cs in css)) else None
    return json.dumps([pod.namespace, pod.spec, extra], sort_keys=True, default=str)


def node_local_filters(fw, state) -> Optional[Tuple[str, ...]]:
    """The names of the Filter plugins that run (sorted), when every Filter and PreFilter plugin
    of `fw` that runs (not skipped in `state`) is an in-tree node-local one; else None."""
    skip = state.skip_filter_plugins
    fit = state.get("PreFilterNodeResourcesFit")
    if fit is not None and fit.has_scalars and _dra_extended_resources(fw) and _dra_may_delegate(fit):
        return None  # DRAExtendedResource: Fit's verdict also reads the DeviceClasses
    for ep in ("filter_plugins", "pre_filter_plugins"):
        for pc in getattr(fw, ep, None) or []:
            if pc.name in skip:
                continue
            if (pc.name not in NODE_LOCAL_FILTER_PLUGINS
                    or not type(pc.plugin).__module__.startswith("builtin_plugins.")):
                return None
    return tuple(sorted(pc.name for pc in fw.filter_plugins if pc.name not in skip))


def _dra_may_delegate(fit) -> bool:
    """Whether NodeResourcesFit's Filter may leave one of the pod's scalar requests to DRA
    (its delegate maps one of them to a DeviceClass); when none is, its verdict reads only the
    node. A delegate that cannot say is taken to map them."""
    delegate = getattr(fit, "delegate", None)
    if delegate is None:
        return False
    maps = getattr(delegate, "maps", None)
    return maps is None or any(maps(name) for name, q in fit.resource.scalar_resources.items() if q != 0)


def _dra_extended_resources(fw) -> bool:
    """Whether DRAExtendedResource is on: NodeResourcesFit may then leave a scalar resource to
    DRA according to the DeviceClasses (v1.34: as they were at PreFilter, even with no mapping
    yet), which no NodeInfo generation tracks."""
    gates = getattr(fw, "feature_gates", None)
    return gates is None or gates.enabled("DRAExtendedResource")


def queue_nominator(fw) -> Any:
    """The scheduling queue's Nominator, when fw.nominated_pods_for_node reads exactly its map
    node name -> PodInfos nominated to it (no empty lists); else None."""
    nominator = getattr(fw, "nominator", None)
    nominated = getattr(nominator, "nominated", None)
    method = getattr(type(nominator), "nominated_pods_for_node", None)
    if (type(nominated) is dict and "nominated_pods_for_node" not in getattr(fw, "__dict__", {})
            and _is_framework_lister(getattr(type(fw), "nominated_pods_for_node", None))
            and getattr(method, "__module__", "") == "harness.scheduler.queue"
            and getattr(method, "__qualname__", "") == "Nominator.nominated_pods_for_node"):
        return nominator
    return None


def queue_nominations(fw) -> Optional[Dict[str, Sequence[Any]]]:
    """The scheduling queue's own map node name -> PodInfos nominated to it (no empty lists),
    when fw.nominated_pods_for_node reads exactly that map; else None."""
    nominator = queue_nominator(fw)
    return nominator.nominated if nominator is not None else None


def nomination_version(nominator, name: str, uid: str) -> int:
    """What an answer computed now for the pod `uid` on node `name` is remembered with, for
    lookups by row (NominationColumns): the version of the node's nominated list, or -1 (never
    looked up by version) when the pod itself is nominated there (its own entry is left out of
    the list the filters see, so the answer holds for it alone) or there is no queue's
    Nominator."""
    if nominator is None or nominator.pod_to_node.get(uid) == name:
        return -1
    return nominator.versions.get(name, 0)


class NominationColumns:
    """The queue Nominator's lists over the rows of a node table, for memos looked up by row:
    `nominated` (bool per row: the node has nominated pods), `version` (int64 per row: the
    Nominator's version of the node's list, 0 for a node never nominated to). An answer
    remembered on a row with version V for a pod not nominated there holds for another pod of
    the same shape not nominated there while the row's version is V (the same PodInfos, so the
    same ones of equal or higher priority); one remembered with no nominated pods of equal or
    higher priority holds while the node has none at all. Kept up to date from the
    Nominator's list of changed nodes."""

    __slots__ = ("table", "epoch", "nominated", "version")

    def __init__(self, nominator, table) -> None:
        np = numpy()
        self.table = table
        self.epoch = nominator.epoch
        n = len(table.names)
        self.nominated = np.zeros(n, dtype=bool)
        self.version = np.zeros(n, dtype=np.int64)
        self._set(nominator, nominator.versions)

    def _set(self, nominator, names) -> None:
        row_of = self.table.row_of
        nominated, versions = nominator.nominated, nominator.versions
        for name in names:
            row = row_of.get(name)
            if row is not None:
                self.version[row] = versions[name]
                self.nominated[row] = name in nominated

    @staticmethod
    def of(nominator, table) -> "NominationColumns":
        """The columns for the Nominator's current lists."""
        cols = _COLUMNS.get(nominator)
        if cols is None or cols.table is not table or cols.epoch < nominator.changes_base:
            cols = _COLUMNS[nominator] = NominationColumns(nominator, table)
        elif cols.epoch != nominator.epoch:
            cols._set(nominator, dict.fromkeys(nominator.changes[cols.epoch - nominator.changes_base:]))
            cols.epoch = nominator.epoch
        return cols

    def valid(self, rows, gen, memo_gen, memo_version, memo_empty, own_row: int):
        """The rows (an int array) whose remembered answer holds for the current pod: same
        NodeInfo generation as when remembered, and the same nominated list (by version), or
        none of equal or higher priority then and none at all now; never the row the pod is
        nominated to itself (`own_row`, -1 for none)."""
        ok = memo_gen[rows] == gen[rows]
        ok &= (memo_version[rows] == self.version[rows]) | (memo_empty[rows] & ~self.nominated[rows])
        if own_row >= 0:
            ok &= rows != own_row
        return ok


_COLUMNS: "weakref.WeakKeyDictionary[Any, NominationColumns]" = weakref.WeakKeyDictionary()


def nominated_lister(fw) -> Callable[[str], Sequence[Any]]:
    """node name -> the PodInfos nominated to it, as fw.nominated_pods_for_node gives them, read
    without a copy from the scheduling queue's nominator when the framework has one."""
    nominated = queue_nominations(fw)
    if nominated is not None:
        get = nominated.get
        return lambda name: get(name, ())
    return fw.nominated_pods_for_node


def _is_framework_lister(method: Any) -> bool:
    """Whether `method` is the runtime's own Framework.nominated_pods_for_node (not a subclass's
    or a test double's override), told by its module and name: runtime imports this module."""
    return (getattr(method, "__module__", "") == "harness.framework.runtime"
            and getattr(method, "__qualname__", "") == "Framework.nominated_pods_for_node")


def same_pods(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two sequences hold the very same objects in the same order."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is not y:
            return False
    return True


def copy_status(s: Optional[Status]) -> Optional[Status]:
    """A fresh Status equal to s (callers set .plugin and keep it)."""
    if s is None:
        return None
    c = Status.__new__(Status)
    c.code = s.code
    c.reasons = list(s.reasons)
    c.err = s.err
    c.plugin = s.plugin
    return c


class ShapeIds:
    """Small ints for pod shapes (keys stay short)."""

    def __init__(self) -> None:
        self._ids: Dict[str, int] = {}

    def of(self, pod) -> int:
        shape = pod_filter_shape(pod)
        return self._ids.setdefault(shape, len(self._ids))


class NominatedFilterMemo:
    """One framework's memo of RunFilterPluginsWithNominatedPods (see the module docstring): per
    (pod shape, filters that run), per node, the answer for one generation and one set of
    nominated pods (a newer one replaces it); and the same answers by row of the node table
    (`lookup_rows`), for the nodes with nominated pods of a walk over the table."""

    def __init__(self, fw) -> None:
        self.fw = fw
        self.shapes = ShapeIds()
        self.memo: Dict[Any, Dict[str, Any]] = {}
        self.row_memos: Dict[Any, FilterRowMemo] = {}

    def _cycle(self, state, pod) -> Any:
        """(per-node memo, priority, uid, nominated lister, snapshot's node map, memo key, queue
        Nominator) for this cycle's state, or None when the memo does not apply; computed once
        per CycleState."""
        cached = state.filter_memo_key
        if cached is not None and cached[0] is self:
            return cached[1]
        ran = node_local_filters(self.fw, state)
        node_map = getattr(self.fw.snapshot, "node_info_map", None)
        cycle = None
        if ran is not None and type(node_map) is dict:
            memo = self.memo
            if len(memo) >= MEMO_SHAPES_LIMIT:
                memo.clear()
                self.row_memos.clear()
            key = (self.shapes.of(pod), ran)
            per_node = memo.setdefault(key, {})
            cycle = (per_node, pod.priority, pod.uid, nominated_lister(self.fw), node_map, key,
                     queue_nominator(self.fw))
        state.filter_memo_key = (self, cycle)
        return cycle

    def _remember(self, cycle, name: str, info, nominated: list, status: Optional[Status]) -> None:
        """Keep an answer (not an Error) in the per-node memo and the key's row memo."""
        if status is not None and status.code == 1:  # Code.Error: not remembered
            return
        per_node, _, uid, _, _, key, nominator = cycle
        per_node[name] = (info.generation, nominated, copy_status(status))
        rows = self.row_memos.get(key)
        if rows is not None:
            rows.note(name, info.generation, nomination_version(nominator, name, uid), not nominated, status)

    def run(self, state, pod, info, slow: Callable[[Any, Any, Any], Optional[Status]]) -> Optional[Status]:
        """slow(state, pod, info), or its remembered answer."""
        cycle = self._cycle(state, pod)
        if cycle is None:
            return slow(state, pod, info)
        per_node, priority, uid, nominated_on, node_map = cycle[:5]
        node = info.node
        name = node.name if node is not None else ""
        if node is None or node_map.get(name) is not info:  # e.g. a dry run's copy
            return slow(state, pod, info)
        noms = nominated_on(name)
        nominated = [pi for pi in noms if pi.pod.priority >= priority and pi.pod.uid != uid] if noms else []
        hit = per_node.get(name)
        if hit is not None and hit[0] == info.generation and same_pods(hit[1], nominated):
            return copy_status(hit[2])
        status = slow(state, pod, info)
        self._remember(cycle, name, info, nominated, status)
        return status

    def run_many(self, state, pod, infos: Sequence[Any],
                 slow: Callable[[Any, Any, Any], Optional[Status]]) -> List[Optional[Status]]:
        """[run(state, pod, info, slow) for info in infos], in one loop."""
        cycle = self._cycle(state, pod)
        if cycle is None:
            return [slow(state, pod, info) for info in infos]
        per_node, priority, uid, nominated_on, node_map = cycle[:5]
        get_hit = per_node.get
        out: List[Optional[Status]] = []
        append = out.append
        for info in infos:
            node = info.node
            name = node.name if node is not None else ""
            if node is None or node_map.get(name) is not info:
                append(slow(state, pod, info))
                continue
            noms = nominated_on(name)
            nominated = [pi for pi in noms if pi.pod.priority >= priority and pi.pod.uid != uid] if noms else []
            hit = get_hit(name)
            if hit is not None and hit[0] == info.generation and same_pods(hit[1], nominated):
                append(copy_status(hit[2]))
                continue
            status = slow(state, pod, info)
            self._remember(cycle, name, info, nominated, status)
            append(status)
        return out

    def lookup_rows(self, state, pod, table, rows) -> Optional[Tuple[Any, Any, List[Any]]]:
        """For rows (an int array) of the snapshot's node table `table`: (hit, kind, kinds) where
        hit[i] says row i's answer is remembered and holds now (NominationColumns.valid) and
        kind[j] is the j-th hit's index into kinds ((code, reasons, plugin) to make its Status
        from), -1 for a node that passes; None when the memo does not apply or there is no
        queue's Nominator (then every row goes through run_many)."""
        cycle = self._cycle(state, pod)
        if cycle is None or cycle[6] is None or cycle[4] is not getattr(self.fw.snapshot, "node_info_map", None):
            return None
        key, nominator = cycle[5], cycle[6]
        memo = self.row_memos.get(key)
        if memo is None or memo.table is not table:
            memo = self.row_memos[key] = FilterRowMemo(table)
            np = numpy()
            return np.zeros(len(rows), dtype=bool), np.zeros(0, dtype=np.int64), memo.kinds
        cols = NominationColumns.of(nominator, table)
        own = nominator.pod_to_node.get(pod.uid)
        own_row = table.row_of.get(own, -1) if own is not None else -1
        hit = cols.valid(rows, table.generation, memo.generation, memo.version, memo.empty, own_row)
        return hit, memo.kind[rows[hit]], memo.kinds


class RowAnswers:
    """Answers remembered by row of one node table: the NodeInfo generation (-1: none), the
    nominated list's version (nomination_version) and whether no nominated pod of equal or
    higher priority was there when remembered (NominationColumns.valid reads the three), and
    a failed answer's status as a lazy_status kind ((code, reasons, plugin), interned; -1:
    none)."""

    __slots__ = ("table", "generation", "version", "empty", "kind", "kinds", "_kind_ids")

    def __init__(self, table) -> None:
        np = numpy()
        n = len(table.names)
        self.table = table
        self.generation = np.full(n, -1, dtype=np.int64)
        self.version = np.full(n, -1, dtype=np.int64)
        self.empty = np.zeros(n, dtype=bool)
        self.kind = np.full(n, -1, dtype=np.int64)
        self.kinds: List[Any] = []
        self._kind_ids: Dict[Any, int] = {}

    def kind_of(self, status: Status) -> int:
        """A rejection without an error as an index into kinds; -1 for any other status."""
        if status.err is not None or status.code not in REJECTED_CODES:
            return -1
        kind = (status.code, tuple(status.reasons), status.plugin)
        k = self._kind_ids.get(kind)
        if k is None:
            k = self._kind_ids[kind] = len(self.kinds)
            self.kinds.append(kind)
        return k

    def set_row(self, row: int, generation: int, version: int, empty: bool, kind: int) -> None:
        self.generation[row] = generation
        self.version[row] = version
        self.empty[row] = empty
        self.kind[row] = kind


class FilterRowMemo(RowAnswers):
    """A NominatedFilterMemo key's answers by row of one node table (kind -1: the node
    passes)."""

    __slots__ = ()

    def note(self, name: str, generation: int, version: int, empty: bool, status: Optional[Status]) -> None:
        row = self.table.row_of.get(name)
        if row is None:
            return
        k = -1
        if status is not None and status.code != 0:  # Code.Success: the node passes
            k = self.kind_of(status)
            if k < 0:
                self.generation[row] = -1  # not a kind: looked up node by node
                return
        self.set_row(row, generation, version, empty, k)
