"""A failing case's report: `run --json` gives each failure as data (pod, field, expected,
got, text); the FAIL lines are readable (one failure per line, no Python reprs)."""

from __future__ import annotations

import json
import pickle

import yaml

from harness.case.failures import Failure, failure_json
from harness.cli import main

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "1", "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, cpu: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}


CASE = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "wrong"},
        "cluster": [NODE], "pods": [_pod("small", "100m"), _pod("big", "2")],
        "expect": {"bindings": {"small": None, "big": "n1"}, "preempted": ["small"],
                   "messages": {"big": "no such words"}, "nominated": {"big": "n1"}}}


def test_json_failures_are_objects(tmp_path, capsys):
    path = tmp_path / "wrong.yaml"
    path.write_text(yaml.safe_dump(CASE))
    assert main(["run", "--json", str(path)]) == 1
    [entry] = json.loads(capsys.readouterr().out)
    by = {(f["pod"], f["field"]): f for f in entry["failures"]}
    assert by[("default/small", "bindings")]["expected"] is None
    assert by[("default/small", "bindings")]["got"] == "n1"
    assert by[("default/big", "bindings")]["expected"] == "n1" and by[("default/big", "bindings")]["got"] is None
    assert by[(None, "preempted")]["expected"] == ["default/small"] and by[(None, "preempted")]["got"] == []
    assert by[("default/big", "messages")]["expected"] == "no such words"
    assert "Insufficient cpu" in by[("default/big", "messages")]["got"]
    assert by[("default/big", "nominated")] == {"pod": "default/big", "field": "nominated", "expected": "n1",
                                                "got": None, "text": by[("default/big", "nominated")]["text"]}
    assert all(set(f) >= {"pod", "field", "expected", "got", "text"} for f in entry["failures"])


def test_fail_lines_are_readable(tmp_path, capsys):
    path = tmp_path / "wrong.yaml"
    path.write_text(yaml.safe_dump(CASE))
    assert main(["run", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "FAIL wrong:"
    body = out[1:6]
    assert all(line.startswith("  ") for line in body)
    assert "  preempted: expected [default/small], got []" in body
    assert "  default/big: nominatedNodeName expected n1, got none" in body
    assert not any("'" in line or "None" in line for line in body)


def test_failures_keep_their_parts_through_pickle():
    f = Failure("default/p: expected n1, got n2", pod="default/p", field="bindings", expected="n1", got="n2")
    g = pickle.loads(pickle.dumps(f))
    assert g == f and failure_json(g) == failure_json(f)
    assert failure_json("steps[2]: default/p: decisions (attempt 1 at 0s): picked expected a, got b") == {
        "pod": "default/p", "field": "decisions", "expected": None, "got": None, "step": "steps[2]",
        "text": "steps[2]: default/p: decisions (attempt 1 at 0s): picked expected a, got b"}
