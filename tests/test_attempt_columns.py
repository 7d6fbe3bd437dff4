"""Explain's per-node tables kept as columns (harness/case/attempt_columns.py, what `diff` and
`run --html` use) give the same attempts, the same diff and the same report as the whole records."""

from __future__ import annotations

import glob
import json
import os

import pytest

from harness.case import load_case, run_case
from harness.case.attempt_columns import ColumnsHook
from harness.case.decisions import attempt_of
from harness.errors import UserError
from harness.reports.html import decision_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = sorted(glob.glob(os.path.join(ROOT, "cases", "**", "*.yaml"), recursive=True))


def _attempts(res):
    out = {}
    for key, recs in sorted((res.scheduler.records if res.scheduler is not None else {}).items()):
        out[key] = [a.to_json() | {"table": decision_table(a), "only": decision_table(a, only=sorted(a.final)[:3]),
                                   "feasible": list(a.feasible), "rejected_by": dict(a.rejected_by)}
                    for a in map(attempt_of, recs)]
    return json.loads(json.dumps(out, default=str))


@pytest.mark.parametrize("path", CASES, ids=lambda p: os.path.relpath(p, ROOT))
def test_columns_give_the_attempts_of_the_whole_records(path):
    try:
        whole = run_case(load_case(path), explain=True)
        columns = run_case(load_case(path), explain=True, hooks=ColumnsHook())
    except UserError:
        pytest.skip("not a runnable case on its own")
    assert columns.bindings == whole.bindings and columns.failures == whole.failures
    assert _attempts(columns) == _attempts(whole)


def test_a_run_keeps_the_columns_not_the_tables():
    path = os.path.join(ROOT, "cases", "preemption")
    path = sorted(glob.glob(os.path.join(path, "*.yaml")))[0]
    res = run_case(load_case(path), explain=True, hooks=ColumnsHook(last_only=True))
    recs = [r for rs in res.scheduler.records.values() for r in rs]
    assert recs and all(not r.filter_table and not r.score_detail and not r.node_statuses for r in recs)
    for rs in res.scheduler.records.values():  # last_only: the last attempt of each pod alone
        assert rs[-1].columns is not None and all(r.columns is None for r in rs[:-1])


def test_run_html_from_columns_is_the_report_from_the_whole_records(tmp_path, capsys):
    """`run --html` keeps the tables as columns; with -v they stay whole (its text reads them):
    the two reports are the same file."""
    from harness.cli import main

    paths = [os.path.join(ROOT, "cases", d) for d in ("preemption", "scoring", "filters", "extenders")]
    a, b = str(tmp_path / "a.html"), str(tmp_path / "b.html")
    main(["run", "--html", a, *paths])
    main(["run", "-v", "--html", b, *paths])
    capsys.readouterr()
    with open(a, encoding="utf-8") as fa, open(b, encoding="utf-8") as fb:
        assert fa.read() == fb.read()
