"""A scheduling cycle's result and record (ScheduleResult, CycleRecord) and what the record keeps
after the cycle: not an upstream piece, but ScheduleResult (schedule_one.go).

A CycleRecord holds, while its cycle runs, the Diagnosis, the feasible nodes,
the scores and preemption's candidates. For a pod `explain` does not record node by node, the
record is made compact once the scheduling cycle ends (`compact_record`): what the attempt
history reads (the plugins that rejected how many nodes, FitError's reason counts, the victims
of the candidate preemption picked) is kept as small values and the per-node data is dropped,
so that memory per pending pod does not grow with the nodes (an 8000-pod, 1500-node trace kept
about 200 KB per pod). `run --json`'s `history`, `diff` and `sweep` read only what stays.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..framework.cycle_state import CycleState
from ..framework.preemption import PREEMPTION_EXPLAIN_KEY
from ..framework.status import Status
from ..framework.types import Diagnosis, NodePluginScores
from .extender import EXTENDER_NAME


@dataclass
class ScheduleResult:
    suggested_host: str = ""
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    nominating_info: Optional[Tuple[str, str]] = None  # (mode, node name)


def record_post_filter(record: "CycleRecord", state: CycleState, result, status) -> None:
    """What PostFilter did, for `explain`: its status, the nominated node, preemption's view."""
    record.post_filter = status
    record.nominated = getattr(result, "nominated_node_name", "") or ""
    try:
        record.preemption = state.read(PREEMPTION_EXPLAIN_KEY)
    except Exception:  # PostFilter did not reach preemption's candidate search
        record.preemption = None


@dataclass
class CycleRecord:
    """What one scheduling cycle saw, for reports and `explain`."""

    pod: str
    attempt: int
    time: float = 0.0  # virtual seconds when the attempt started
    event: str = ""  # the event that last moved the pod to activeQ or backoffQ
    replica: str = ""  # the kube-scheduler process that made the attempt (with replicas)
    node_statuses: Dict[str, Optional[Status]] = field(default_factory=dict)
    feasible: List[str] = field(default_factory=list)
    scores: List[NodePluginScores] = field(default_factory=list)
    picked: str = ""
    message: str = ""
    pre_filter: Optional[Status] = None
    filter_table: Dict[str, List[Tuple[str, Optional[Status]]]] = field(default_factory=dict)
    # explain: nodes with nominated pods of equal or higher priority -> (those pods' keys, the
    # filters of RunFilterPluginsWithNominatedPods' first pass, which counts them)
    nominated_filter_table: Dict[str, Tuple[List[str], List[Tuple[str, Optional[Status]]]]] = field(default_factory=dict)
    score_detail: Dict[str, Any] = field(default_factory=dict)
    post_filter: Optional[Status] = None  # PostFilter's status (preemption), when it ran
    nominated: str = ""  # the node PostFilter nominated
    preemption: Optional[Dict[str, Any]] = None  # candidates, statuses and pick (explain only)
    result: str = ""  # handleSchedulingFailure's reason: Unschedulable or SchedulerError
    diagnosis: Optional[Diagnosis] = None  # findNodesThatFitPod's, for the rejection breakdown
    num_nodes: int = 0  # the snapshot's nodes in this cycle
    n_feasible: int = 0  # how many nodes passed the filters (and the extenders)
    # a compact record (cycle_records.compact_record): (rejected, reasons) of the breakdown
    breakdown: Optional[Tuple[Dict[str, int], Dict[str, int]]] = None
    batch_hint: str = ""  # OpportunisticBatching: the node GetNodeHint gave (tried first)
    # explain: what each extender did; filter: node -> (extender, its status) for the nodes an
    # extender removed, and the extenders each feasible node went through; skipped: (extender,
    # verb, error) of ignored errors; extender_scores: node -> [(extender, raw, weight, added)]
    extender_filtered: Dict[str, Tuple[str, Status]] = field(default_factory=dict)
    extenders_passed: List[str] = field(default_factory=list)
    extender_errors: List[Tuple[str, str, str]] = field(default_factory=list)
    extender_scores: Dict[str, List[Tuple[str, int, int, int]]] = field(default_factory=dict)
    # the order attempts started in, across pods and replicas (diff: which change came first)
    seq: int = field(default_factory=itertools.count().__next__)
    # the per-node tables as columns, once the cycle ended (harness.case.attempt_columns)
    columns: Any = None


def rejector(rec, node: str, st) -> str:
    """Who rejected a node: the plugin, "Extender" for a node an extender filtered out (the
    name the pod's unschedulable plugins carry), else "-"."""
    if st.plugin:
        return st.plugin
    return EXTENDER_NAME if node in getattr(rec, "extender_filtered", {}) else "-"


def rejection_breakdown(rec) -> Tuple[Dict[str, int], Dict[str, int]]:
    """Which plugins rejected how many nodes, and the reasons' counts as FitError words them
    (FitError.Error's histogram), from the cycle's Diagnosis (or what compact_record kept)."""
    kept = getattr(rec, "breakdown", None)
    if kept is not None:
        return dict(kept[0]), dict(kept[1])
    d = getattr(rec, "diagnosis", None)
    n_all = getattr(rec, "num_nodes", 0)
    if d is None:
        return {}, {}
    nts = d.node_to_status
    by_plugin, reasons = nts.rejection_counts(lambda node, st: rejector(rec, node, st))
    absent = n_all - nts.length() if rec.picked == "" else 0
    if absent > 0 and not (rec.feasible or getattr(rec, "n_feasible", 0)):
        st = nts.absent_nodes_status
        plugins = [st.plugin] if st.plugin else sorted(d.unschedulable_plugins) or ["-"]
        for p in plugins:
            by_plugin[p] = by_plugin.get(p, 0) + absent
        if d.pre_filter_msg:
            reasons[d.pre_filter_msg] = reasons.get(d.pre_filter_msg, 0) + absent
        else:
            for r in st.get_reasons():
                reasons[r] = reasons.get(r, 0) + absent
    return dict(sorted(by_plugin.items())), dict(sorted(reasons.items()))


def compact_record(rec) -> None:
    """Keep of a finished cycle's record only what the attempt history reads (see the module
    docstring): the rejection breakdown, and of preemption the candidate it picked."""
    rec.breakdown = rejection_breakdown(rec)
    rec.diagnosis = None
    rec.node_statuses = {}
    rec.feasible = []
    rec.scores = []
    pre: Any = rec.preemption
    if pre is not None:
        picked = pre.get("picked") or ""
        rec.preemption = {"candidates": [c for c in pre.get("candidates") or [] if c.name == picked],
                          "statuses": None, "picked": picked}
