"""Every case in cases/ must fail when its expectation is changed: a case that cannot fail tests
nothing. For the first pod with an expectation, we expect another outcome (another node, or
unbound when a node was expected, or the first node when unbound was expected)."""

from __future__ import annotations

import copy
import os

import pytest

from harness.case import find_cases, load_case, run_case

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = find_cases([os.path.join(ROOT, "cases")])


def _mutated(case):
    bindings = case.expect.get("bindings") or {}
    nodes = [o["metadata"]["name"] for o in case.cluster if o.get("kind") == "Node"]
    for ref, want in bindings.items():
        if want is None:
            if nodes:
                return ref, nodes[0]
            continue
        wanted = set(want) if isinstance(want, list) else {want}
        others = [n for n in nodes if n not in wanted]
        return ref, (others[0] if others else None)
    return None, None


@pytest.mark.parametrize("path", CASES, ids=[os.path.relpath(p, ROOT) for p in CASES])
def test_case_fails_when_expectation_changes(path):
    case = load_case(path)
    ref, other = _mutated(case)
    if ref is None:
        assert case.expect.get("messages") or "preempted" in case.expect, \
            f"{path}: expects no binding, message or preemption"
        return
    mutated = copy.deepcopy(case)
    mutated.expect = copy.deepcopy(case.expect)
    mutated.expect["bindings"][ref] = other
    res = run_case(mutated)
    assert not res.passed, f"{path}: still passes when {ref} is expected at {other or 'unbound'}"
