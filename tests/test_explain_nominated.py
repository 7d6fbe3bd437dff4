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
