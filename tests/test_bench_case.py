"""`schedharness bench CASE.yaml`: a case benchmarked as a workload is (figures, --json shape),
its outcome the one `run` gives; outcome assertions only, never timings."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from harness.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIND_FAILURE = os.path.join(ROOT, "cases", "steps", "bind-failure-three-times.yaml")
REPLICAS = os.path.join(ROOT, "cases", "leader-election", "normal-start.yaml")

CASE = """\
apiVersion: schedharness/v1alpha1
kind: Case
metadata: {name: tiny}
cluster:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}}
- {apiVersion: v1, kind: Node, metadata: {name: n2}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}}
pods:
- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1500m"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1500m"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: c}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1500m"}}}]}}
expect:
  bindings: {c: null}
"""

WORKLOAD = """\
- name: Basic
  workloadTemplate:
  - {opcode: createNodes, count: 2}
  - {opcode: createPods, count: 3, collectMetrics: true}
  workloads:
  - {name: tiny}
"""


@pytest.fixture
def write(tmp_path):
    def write(name: str, text: str, expect: str = "") -> str:
        p = tmp_path / name
        p.write_text(textwrap.dedent(text).replace("  bindings: {c: null}", expect or "  bindings: {c: null}"))
        return str(p)
    return write


def _json(capsys):
    return json.loads(capsys.readouterr().out)


def test_a_case_gives_a_workloads_figures_and_its_outcome(write, capsys):
    path = write("tiny.yaml", CASE)
    assert main(["bench", path, "--json"]) == 0
    out = _json(capsys)
    (r,) = out["workloads"]
    assert r["name"] == "tiny" and r["file"] == path
    assert r["params"] == {"nodes": 2, "pods": 3}
    assert (r["measuredPods"], r["scheduledPods"], r["unboundPods"]) == (3, 2, 1)
    assert r["passed"] is True and r["failures"] == []
    assert r["attempts"] >= 3  # each pod at least once (c: once more after b's binding, none here)
    assert r["samples"] >= 1 and r["peakRSSMiB"] > 0
    assert set(r["SchedulingThroughput"]) == {"Average", "Perc50", "Perc90", "Perc95", "Perc99"}
    assert set(r["AttemptLatencyMs"]) == {"Average", "Perc50", "Perc90", "Perc95", "Perc99"}
    metrics = [(i["labels"]["Metric"], i["labels"]["Name"]) for i in out["dataItems"]]
    assert metrics == [("SchedulingThroughput", "tiny"), ("scheduler_scheduling_attempt_duration_seconds", "tiny"),
                       ("PeakRSS", "tiny")]


def test_the_last_line_names_the_bound_pods_and_the_verdict(write, capsys):
    assert main(["bench", write("tiny.yaml", CASE)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("tiny: 2/3 pods bound in ") and last.endswith("2 nodes; case passed")


def test_a_failing_case_exits_1_with_its_failures(write, capsys):
    path = write("tiny.yaml", CASE, expect="  bindings: {c: n1}")
    assert main(["bench", path]) == 1
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert "case FAILED: default/c: expected n1, got unbound" in last


def test_cases_and_workload_files_run_in_the_order_given(write, capsys):
    case, wl = write("tiny.yaml", CASE), write("perf.yaml", WORKLOAD)
    assert main(["bench", wl, case, "--json"]) == 0
    names = [r["name"] for r in _json(capsys)["workloads"]]
    assert names == ["Basic/tiny", "tiny"]


@pytest.mark.parametrize("path", [BIND_FAILURE, REPLICAS])
def test_steps_and_replicas_are_measured_as_run_runs_them(path, capsys):
    assert main(["run", "--json", path]) == 0
    bindings = _json(capsys)[0]["bindings"]
    assert main(["bench", path, "--json"]) == 0
    (r,) = _json(capsys)["workloads"]
    assert r["passed"] is True
    assert r["measuredPods"] == len(bindings)
    assert r["scheduledPods"] == sum(1 for v in bindings.values() if v)
    assert r["attempts"] >= r["scheduledPods"]


def test_an_invalid_case_is_one_error_line(write, capsys):
    path = write("bad.yaml", CASE.replace("kind: Pod, metadata: {name: a}", "kind: Pod, metadata: {nam: a}"))
    assert main(["bench", path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}"), err


def test_workload_options_need_a_workload_file(write, capsys):
    assert main(["bench", write("tiny.yaml", CASE), "--workload", "X"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--workload and --param need a workload file" in err[0]
