"""The cases of ../shared/verified-cases, whose expectations were recorded from the real
kube-scheduler v1.34.1. When one fails, the harness is wrong."""

from __future__ import annotations

import os

import pytest

from harness.case import find_cases, run_case

HERE = os.path.dirname(os.path.abspath(__file__))
VERIFIED = os.environ.get("SCHEDHARNESS_VERIFIED_CASES",
                          os.path.normpath(os.path.join(HERE, "..", "..", "shared", "verified-cases")))


def _cases():
    if not os.path.isdir(VERIFIED):
        return [pytest.param(None, id="verified-cases-missing")]
    return [pytest.param(p, id=os.path.relpath(p, VERIFIED)) for p in find_cases([VERIFIED])]


@pytest.mark.parametrize("path", _cases())
def test_verified_case(path):
    assert path is not None, (f"{VERIFIED} not found: the verified cases live in ../shared beside "
                              f"the repository (or set SCHEDHARNESS_VERIFIED_CASES)")
    res = run_case(path)
    assert res.passed, "\n".join(res.failures)
