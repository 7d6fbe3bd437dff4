"""`schedharness explain` names, under DynamicResources' "cannot allocate all claims", what each
request needs and what the node offers (the message itself stays upstream's)."""

from __future__ import annotations

import os

from harness.case import run_case
from harness.reports.text import explain

CASES = os.path.join(os.path.dirname(__file__), "..", "..", "cases", "dra")


def test_explain_names_the_short_request():
    res = run_case(os.path.join(CASES, "no-node-can-satisfy.yaml"), explain=True)
    out = explain(res, "greedy")
    assert "filter DynamicResources: UnschedulableAndUnresolvable: cannot allocate all claims" in out
    assert ("claim default/four-gpus, request gpu: needs 4 device(s); 2 on this node match, "
            "2 of them not allocated") in out
    assert ("claim default/four-gpus, request gpu: needs 4 device(s); 0 on this node match, "
            "0 of them not allocated") in out


def test_explain_constraints():
    res = run_case(os.path.join(CASES, "match-attribute-two-requests.yaml"), explain=True)
    out = explain(res, "numa-aligned")
    assert "every request has enough devices on its own: constraints (matchAttribute)" in out


def test_explain_allocated_elsewhere():
    res = run_case(os.path.join(CASES, "devices-allocated-elsewhere.yaml"), explain=True)
    out = explain(res, "second")
    assert ("claim default/second-claim, request gpu: needs 1 device(s); 2 on this node match, "
            "0 of them not allocated") in out
