"""`schedharness bench` files: values scheduler_perf's JSON decoding refuses (issue 15)."""

from __future__ import annotations

import pytest

from harness.cli import main


@pytest.mark.parametrize("workload,needle", [
    ("{name: w, threshold: fast}", "workloads[0].threshold: must be a number"),
    ("{name: w, threshold: true}", "workloads[0].threshold: must be a number"),
    ("{name: w, featureGates: {SchedulerQueueingHints: 'no'}}", "must be true or false"),
])
def test_bench_values_of_the_wrong_type_are_refused(tmp_path, capsys, workload, needle):
    path = tmp_path / "perf.yaml"
    path.write_text(f"- name: X\n  workloadTemplate: []\n  workloads: [{workload}]\n")
    assert main(["bench", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
