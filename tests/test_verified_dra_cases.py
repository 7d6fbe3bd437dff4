"""The DRA cases of ../shared/verified-next/dra, whose expectations were recorded from the real
kube-scheduler v1.34.1 (run the same way as tests/test_verified_cases.py). When one fails, the
harness is wrong."""

from __future__ import annotations

import os

import pytest

from harness.case import find_cases, run_case

HERE = os.path.dirname(os.path.abspath(__file__))
VERIFIED_DRA = os.environ.get("SCHEDHARNESS_VERIFIED_DRA_CASES",
                              os.path.normpath(os.path.join(HERE, "..", "..", "shared", "verified-next", "dra")))


def _cases():
    if not os.path.isdir(VERIFIED_DRA):
        return [pytest.param(None, id="verified-dra-cases-missing")]
    return [pytest.param(p, id=os.path.relpath(p, VERIFIED_DRA)) for p in find_cases([VERIFIED_DRA])]


@pytest.mark.parametrize("path", _cases())
def test_verified_dra_case(path):
    assert path is not None, (f"{VERIFIED_DRA} not found: the verified DRA cases live in ../shared "
                              f"beside the repository (or set SCHEDHARNESS_VERIFIED_DRA_CASES)")
    res = run_case(path)
    assert res.passed, "\n".join(res.failures)
