"""A pod `explain` does not record node by node keeps a compact record of each attempt
(harness/scheduler/cycle_records.py): what `run --json` reports (its `history` included), what
`diff` reads and every outcome are the same as with the full records, on every case of `cases/`
and of the verified versions, with the node table on (every rejection held as a column) and off."""

from __future__ import annotations

import os

import pytest

from harness.case import find_cases, load_case, run_case
from harness.compare.outcomes import outcome_of
from harness.framework import node_table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERIFIED = os.environ.get("SCHEDHARNESS_VERIFIED_VERSIONS",
                          os.path.normpath(os.path.join(ROOT, "..", "shared", "verified-versions")))


def _paths():
    folders = [os.path.join(ROOT, "cases")] + ([VERIFIED] if os.path.isdir(VERIFIED) else [])
    return find_cases(folders)


def _report(path: str, explain: bool):
    case = load_case(path)
    res = run_case(case, explain=explain)
    out = outcome_of(res)
    return res.to_json(), {k: (v.node, v.message, v.nominated, v.preempted, v.victims) for k, v in out.pods.items()}


@pytest.fixture(params=["table", "no-table"])
def table_mode(request):
    saved = node_table.MIN_NODES
    node_table.MIN_NODES = 0 if request.param == "table" else 10 ** 9
    yield
    node_table.MIN_NODES = saved


def test_compact_records_report_what_full_records_do(table_mode):
    paths = _paths()
    assert len(paths) > 300
    compared = 0
    for path in paths:
        compact, compact_outcome = _report(path, explain=False)
        full, full_outcome = _report(path, explain=True)
        assert compact == full, path
        assert compact_outcome == full_outcome, path
        compared += bool(compact.get("history"))
    assert compared > 300


def test_a_compact_record_keeps_no_per_node_data():
    path = os.path.join(ROOT, "cases", "preemption")
    case = load_case(find_cases([path])[0])
    res = run_case(case)
    recs = [r for rs in res.scheduler.records.values() for r in rs]
    assert recs
    for r in recs:
        assert r.diagnosis is None and not r.node_statuses and not r.feasible and not r.scores
        assert r.breakdown is not None
