"""The results of the extension points and of a failed scheduling attempt: PreFilterResult,
PostFilterResult, NodeScore, NodePluginScores and NodeToStatus (k8s.io/kube-scheduler/framework
interface.go, pkg/scheduler/framework/interface.go), Diagnosis and FitError
(pkg/scheduler/framework/types.go). Node lists here hold NodeInfos (types.py, which imports
this module)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from ..api.objects import Pod
from .status import REJECTED_CODES, Code, Status


@dataclass
class PreFilterResult:
    """PreFilterResult: node_names None means all nodes are eligible."""

    node_names: Optional[Set[str]] = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: Optional["PreFilterResult"]) -> "PreFilterResult":
        if self.all_nodes() and (other is None or other.all_nodes()):
            return PreFilterResult(None)
        if self.all_nodes():
            return PreFilterResult(set(other.node_names))
        if other is None or other.all_nodes():
            return PreFilterResult(set(self.node_names))
        return PreFilterResult(self.node_names & other.node_names)


@dataclass
class PostFilterResult:
    """PostFilterResult: the nominating info (node name) a PostFilter plugin produced."""

    nominated_node_name: str = ""
    nominating_mode: str = "ModeOverride"


class NodeScore:
    """framework.NodeScore."""

    __slots__ = ("name", "score")

    def __init__(self, name: str, score: int):
        self.name = name
        self.score = score

    def __eq__(self, other) -> bool:
        return isinstance(other, NodeScore) and (self.name, self.score) == (other.name, other.score)

    def __repr__(self) -> str:
        return f"NodeScore({self.name!r}, {self.score})"


class NodePluginScores:
    """framework.NodePluginScores: per-plugin weighted scores and their total for one node.
    The framework passes the per-plugin columns and this node's index; `scores` is built from
    them only when read (reports), as the cycle itself needs only `total_score`."""

    __slots__ = ("name", "_scores", "total_score", "_columns", "_idx")

    def __init__(self, name: str, scores: Optional[List[Tuple[str, int]]] = None, total_score: int = 0,
                 columns: Optional[List[Tuple[str, List[int]]]] = None, idx: int = 0):
        self.name = name
        self._scores = scores
        self.total_score = total_score
        self._columns = columns
        self._idx = idx

    @property
    def scores(self) -> List[Tuple[str, int]]:
        if self._scores is None:
            self._scores = [(plugin, col[self._idx]) for plugin, col in (self._columns or [])]
        return self._scores

    def __eq__(self, other) -> bool:
        if not isinstance(other, NodePluginScores):
            return NotImplemented
        return (self.name, self.scores, self.total_score) == (other.name, other.scores, other.total_score)

    def __repr__(self) -> str:
        return f"NodePluginScores({self.name!r}, {self.scores!r}, {self.total_score})"


class NodeScoreColumns(Sequence):
    """The []NodePluginScores of RunScorePlugins when every plugin gave an int64 column (the
    batch forms on the node table): the weighted columns and their totals, with the per-node
    NodePluginScores built only when something reads them (reports); selectHost reads the
    totals column (see schedule_one.select_host)."""

    __slots__ = ("nodes", "totals", "raw_columns", "weights", "_items")

    def __init__(self, nodes: List[Any], totals: Any, columns: List[Tuple[str, Any]],
                 weights: Optional[List[int]] = None):
        self.nodes = nodes
        self.totals = totals
        self.raw_columns = columns  # each plugin's column before its weight
        self.weights = weights if weights is not None else [1] * len(columns)
        self._items: Optional[List[NodePluginScores]] = None

    @property
    def columns(self) -> List[Tuple[str, Any]]:
        """Each plugin's weighted column."""
        return [(name, col if w == 1 else col * w) for (name, col), w in zip(self.raw_columns, self.weights)]

    def items(self) -> List[NodePluginScores]:
        if self._items is None:
            cols = [(name, col.tolist()) for name, col in self.columns]
            self._items = [NodePluginScores(ni.node.name, None, total, cols, i)
                           for i, (ni, total) in enumerate(zip(self.nodes, self.totals.tolist()))]
        return self._items

    def __len__(self) -> int:
        return len(self.nodes)

    def __getitem__(self, i):
        return self.items()[i]

    def __iter__(self):
        return iter(self.items())

    def __eq__(self, other) -> bool:
        if not isinstance(other, (list, NodeScoreColumns)):
            return NotImplemented
        return list(self) == list(other)


class NodeToStatus:
    """framework.NodeToStatus: node -> rejecting status, and the status of absent nodes.

    A cycle's walk over the node table may hand it the rejected nodes of whole chunks as
    columns (`add_lazy`, harness.framework.lazy_status): their Status objects are made when
    something reads them (each one once, in the walk's order), while length, the reasons'
    counts of FitError and NodesForStatusCode read the columns as they are."""

    def __init__(self, statuses: Optional[Dict[str, Status]] = None,
                 absent_status: Optional[Status] = None):
        self._statuses: Dict[str, Status] = statuses if statuses is not None else {}
        self._lazy = None  # a lazy_status.LazyStatuses, or None
        self.absent_nodes_status = absent_status or Status(
            Code.UnschedulableAndUnresolvable)  # no reasons

    @property
    def node_to_status(self) -> Dict[str, Status]:
        """The map itself (every status held as a column made now)."""
        if self._lazy is not None:
            self._materialize()
        return self._statuses

    @node_to_status.setter
    def node_to_status(self, statuses: Dict[str, Status]) -> None:
        self._lazy = None
        self._statuses = statuses

    def _materialize(self) -> None:
        lazy, self._lazy = self._lazy, None
        statuses = self._statuses
        # the column nodes were met after the ones in the map (add_lazy keeps them apart)
        lazy.materialize(statuses)

    def add_lazy(self, table, rows, kind_of, kinds: List[Any]) -> None:
        """The rejected nodes of a chunk as columns (lazy_status.LazyStatuses.add), after every
        node already held. A chunk holding a node the map already has is made at once, as
        set() would have given it."""
        statuses = self._statuses
        if statuses and any(table.row_of.get(name) is not None for name in statuses):
            from .lazy_status import make_status
            if self._lazy is not None:
                self._materialize()
            names = table.names
            for r, k in zip(rows.tolist(), kind_of.tolist()):
                statuses[names[r]] = make_status(kinds[k])
            return
        if self._lazy is None:
            from .lazy_status import LazyStatuses
            self._lazy = LazyStatuses()
        self._lazy.add(table, rows, kind_of, kinds)

    def get(self, node_name: str) -> Status:
        if self._lazy is not None:
            st = self._statuses.get(node_name)
            if st is None:
                st = self._lazy.find(node_name)
            return self.absent_nodes_status if st is None else st
        return self._statuses.get(node_name, self.absent_nodes_status)

    def set(self, node_name: str, status: Status) -> None:
        if self._lazy is not None:
            self._materialize()
        self._statuses[node_name] = status

    def length(self) -> int:
        if self._lazy is not None:
            return len(self._statuses) + self._lazy.count
        return len(self._statuses)

    def set_absent_nodes_status(self, status: Status) -> None:
        self.absent_nodes_status = status

    def items(self) -> Iterable[Tuple[str, Status]]:
        return self.node_to_status.items()

    def reason_counts(self) -> Dict[str, int]:
        """How many held statuses give each reason (Status.get_reasons of each), without
        making the ones held as columns."""
        reasons: Dict[str, int] = {}
        for st in self._statuses.values():
            for r in st.get_reasons():
                reasons[r] = reasons.get(r, 0) + 1
        if self._lazy is not None:
            self._lazy.reason_counts(reasons)
        return reasons

    def rejection_counts(self, who) -> Tuple[Dict[str, int], Dict[str, int]]:
        """How many held statuses each rejecting plugin gave (`who(node, status)` names it for a
        status held in the map; one held as a column is named by its plugin, "-" for none) and
        how many give each reason, without making the ones held as columns."""
        by_plugin: Dict[str, int] = {}
        reasons: Dict[str, int] = {}
        for node, st in self._statuses.items():
            p = who(node, st)
            by_plugin[p] = by_plugin.get(p, 0) + 1
            for r in st.get_reasons():
                reasons[r] = reasons.get(r, 0) + 1
        if self._lazy is not None:
            self._lazy.plugin_counts(by_plugin, reasons)
        return by_plugin, reasons

    def codes_by_row(self, table):
        """Each node's status code (an absent one's: the absent status's) as a numpy array by
        row of the NodeTable `table`, when the columns held are that table's; else None (read
        the statuses one by one)."""
        lazy = self._lazy
        if lazy is None or not lazy.chunks:
            return None
        from .node_table import numpy
        np = numpy()
        codes = np.full(len(table.names), int(self.absent_nodes_status.code), dtype=np.int64)
        if not lazy.codes_into(codes, table):
            return None
        row_of = table.row_of
        for name, st in self._statuses.items():
            row = row_of.get(name)
            if row is not None:
                codes[row] = int(st.code)
        return codes

    def lazy_table(self):
        """The NodeTable of the first column held, or None."""
        lazy = self._lazy
        return lazy.chunks[0][0] if lazy is not None and lazy.chunks else None

    def nodes_for_status_code(self, nodes: List[Any], code) -> List[Any]:
        """NodesForStatusCode: nodes whose status has the given code (absent ones included)."""
        out = []
        statuses = self.node_to_status
        if self.absent_nodes_status.code == code:
            for ni in nodes:
                if ni.name not in statuses:
                    out.append(ni)
        for ni in nodes:
            st = statuses.get(ni.name)
            if st is not None and st.code == code:
                out.append(ni)
        return out


@dataclass
class Diagnosis:
    """framework.Diagnosis."""

    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: Set[str] = field(default_factory=set)
    pending_plugins: Set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, st: Optional[Status]) -> None:
        if st is not None:
            self.add_plugin_code(st.plugin, st.code)

    def add_plugin_code(self, plugin: str, code: int) -> None:
        """AddPluginStatus for a status of `code` from `plugin` (nothing for an unnamed one)."""
        if not plugin:
            return
        if code in REJECTED_CODES:
            self.unschedulable_plugins.add(plugin)
        if code == Code.Pending:
            self.pending_plugins.add(plugin)


class FitError(Exception):
    """framework.FitError; str() is v1.34's message."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis):
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        super().__init__()

    def __str__(self) -> str:
        msg = f"0/{self.num_all_nodes} nodes are available:"
        d = self.diagnosis
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            reasons = d.node_to_status.reason_counts()
            if d.node_to_status.length() < self.num_all_nodes:
                for r in d.node_to_status.absent_nodes_status.get_reasons():
                    reasons[r] = reasons.get(r, 0) + self.num_all_nodes - d.node_to_status.length()
            hist = sorted(f"{v} {k}" for k, v in reasons.items())
            if hist:
                msg += f" {', '.join(hist)}."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg
