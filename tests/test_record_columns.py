"""Explain's whole records kept as columns (harness/case/record_columns.py, what `run -v` and
`explain` use) print the same text, give the same attempts and the same history as the whole
records, for every case and every verified case."""

from __future__ import annotations

import glob
import json
import os

import pytest

from harness.case import load_case, run_case
from harness.case.decisions import attempt_of, history
from harness.case.record_columns import RecordColumns, RecordColumnsHook
from harness.errors import UserError
from harness.reports.text import explain, explain_pods, view_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERIFIED = os.path.normpath(os.path.join(ROOT, "..", "shared", "verified-versions"))
CASES = sorted(glob.glob(os.path.join(ROOT, "cases", "**", "*.yaml"), recursive=True)) + sorted(
    glob.glob(os.path.join(VERIFIED, "**", "*.yaml"), recursive=True))


def _attempts(res):
    out = {}
    for key, recs in sorted((res.scheduler.records if res.scheduler is not None else {}).items()):
        out[key] = [a.to_json() | {"feasible": list(a.feasible), "rejected_by": dict(a.rejected_by),
                                   "decisive": {n: v.text() for n, v in a.decisive.items()}}
                    for a in map(attempt_of, recs)]
    return json.loads(json.dumps(out, default=str))


def _texts(res):
    sched = res.scheduler
    if sched is None:
        return {}
    pods = list(sched.tracked_pods)
    return {"all": explain(res), "wide": explain(res, None, view_of(res, nodes=2)),
            "every": explain(res, None, view_of(res, all_nodes=True)),
            "pods": [explain_pods(res, [p]) for p in pods[:3]],
            "history": json.dumps(history(sched, pods), default=str)}


@pytest.mark.parametrize("path", CASES, ids=lambda p: os.path.relpath(p, os.path.dirname(ROOT)))
def test_columns_print_what_the_whole_records_print(path):
    try:
        whole = run_case(load_case(path), explain=True)
        columns = run_case(load_case(path), explain=True, hooks=RecordColumnsHook())
    except UserError:
        pytest.skip("not a runnable case on its own")
    assert columns.bindings == whole.bindings and columns.failures == whole.failures
    assert _texts(columns) == _texts(whole)
    assert _attempts(columns) == _attempts(whole)


def test_a_run_keeps_the_columns_not_the_tables():
    path = sorted(glob.glob(os.path.join(ROOT, "cases", "preemption", "*.yaml")))[0]
    res = run_case(load_case(path), explain=True, hooks=RecordColumnsHook())
    recs = [r for rs in res.scheduler.records.values() for r in rs]
    assert recs and all(isinstance(r.columns, RecordColumns) for r in recs)
    assert all(not r.filter_table and not r.score_detail and not r.node_statuses and not r.scores for r in recs)


def test_a_record_of_an_unknown_shape_stays_whole():
    """A Filter row the columns cannot hold (here a Status whose reasons cannot be hashed) leaves
    that record whole: explain prints it as before."""
    from harness.case.record_columns import RecordTables, keep_record_columns
    from harness.framework.status import Code, Status
    from harness.scheduler.cycle_records import CycleRecord

    st = Status(Code.Unschedulable, "too small")
    st.reasons = [["not", "hashable"]]
    rec = CycleRecord("default/p", 1, filter_table={"n1": [("Odd", st)]}, node_statuses={"n1": st})
    keep_record_columns(RecordTables())(rec, [rec])
    assert rec.columns is None and rec.filter_table == {"n1": [("Odd", st)]}
