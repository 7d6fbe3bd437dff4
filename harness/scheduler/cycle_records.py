"""What a scheduling cycle's record keeps after the cycle: not an upstream piece.

A CycleRecord (schedule_one.py) holds, while its cycle runs, the Diagnosis, the feasible nodes,
the scores and preemption's candidates. For a pod `explain` does not record node by node, the
record is made compact once the scheduling cycle ends (`compact_record`): what the attempt
history reads (the plugins that rejected how many nodes, FitError's reason counts, the victims
of the candidate preemption picked) is kept as small values and the per-node data is dropped,
so that memory per pending pod does not grow with the nodes (an 8000-pod, 1500-node trace kept
about 200 KB per pod). `run --json`'s `history`, `diff` and `sweep` read only what stays.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

from .extender import EXTENDER_NAME


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
