"""`explain` of a pod rejected because of a pod nominated to the node: the filters are shown as
RunFilterPluginsWithNominatedPods ran them (first with the nominated pods of equal or higher
priority), so the verdict and the filter lines agree."""

from __future__ import annotations

import os

from harness.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASE = os.path.join(ROOT, "cases", "preemption", "preempt-nominated-pod-holds-freed-room.yaml")


def test_explain_shows_the_pass_with_the_nominated_pods(capsys):
    assert main(["explain", CASE, "filler"]) == 0
    out = capsys.readouterr().out
    first = out.split("attempt 2")[0]
    lines = first.splitlines()
    at = next(i for i, line in enumerate(lines) if "node node-a: rejected by NodeResourcesFit" in line)
    below = lines[at + 1:]
    assert "with the pods nominated to it (default/urgent)" in below[0]
    fit = [line for line in below if "filter NodeResourcesFit" in line]
    assert fit and "Insufficient cpu" in fit[0]
    assert "filter NodeResourcesFit: Success" not in first


def test_explain_of_one_pod_records_only_its_attempts_node_by_node():
    """`schedharness explain CASE POD`: the other pods are scheduled alike, without the per-node
    filter tables (a big case's pending pods would each keep one per node)."""
    from harness.case.loader import case_from_data
    from harness.case.runner import run_case

    node = lambda n: {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},  # noqa: E731
                      "status": {"allocatable": {"cpu": "2", "pods": "10"}}}
    pod = lambda p: {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": p},  # noqa: E731
                     "spec": {"containers": [{"name": "c", "image": "i",
                                              "resources": {"requests": {"cpu": "1"}}}]}}
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "c"},
            "cluster": [node("n1"), node("n2")], "pods": [pod("p1"), pod("p2")],
            "expect": {"bindings": {"p1": ["n1", "n2"], "p2": ["n1", "n2"]}}}
    every = run_case(case_from_data(data, "c.yaml"), explain=True)
    one = run_case(case_from_data(data, "c.yaml"), explain={"default/p2"})
    assert one.passed and one.bindings == every.bindings
    recs = one.scheduler.records
    assert set(recs["default/p2"][0].filter_table) == {"n1", "n2"}
    assert recs["default/p1"][0].filter_table == {}
    assert set(every.scheduler.records["default/p1"][0].filter_table) == {"n1", "n2"}
