"""The cases of ../shared/verified-cases, whose expectations were recorded from the real
kube-scheduler v1.34.1. When one fails, the harness is wrong."""

from __future__ import annotations

import os

import pytest

from harness.case import find_cases, run_case

HERE = os.path.dirname(os.path.abspath(__file__))
VERIFIED = os.environ.get("SCHEDHARNESS_VERIFIED_CASES",
                          os.path.normpath(os.path.join(HERE, "..", "..", "shared", "verified-cases")))


# the folders of ../shared/verified-next whose capability has landed (each joins with its issue)
VERIFIED_NEXT = os.environ.get("SCHEDHARNESS_VERIFIED_NEXT",
                               os.path.normpath(os.path.join(VERIFIED, "..", "verified-next")))
LANDED_NEXT = ["steps", "dra"]

# cases whose v1.34.1 recording a later patch release changed upstream: the harness models
# v1.34.9 on, and ../shared/verified-versions/<version>/ holds their re-recordings
CHANGED_AFTER_V1341 = {
    "filters/mixed-reasons-message.yaml": "TaintToleration.Filter's reason names no taint since v1.34.9",
    "filters/pts-node-taints-policy-ignore.yaml": "TaintToleration.Filter's reason names no taint since v1.34.9",
}


def _cases():
    if not os.path.isdir(VERIFIED):
        return [pytest.param(None, id="verified-cases-missing")]
    out = []
    for p in find_cases([VERIFIED]):
        rel = os.path.relpath(p, VERIFIED)
        why = CHANGED_AFTER_V1341.get(rel)
        marks = [pytest.mark.skip(reason=f"recorded from v1.34.1: {why}")] if why else []
        out.append(pytest.param(p, id=rel, marks=marks))
    for folder in LANDED_NEXT:
        path = os.path.join(VERIFIED_NEXT, folder)
        if not os.path.isdir(path):
            out.append(pytest.param(None, id=f"verified-next-{folder}-missing"))
            continue
        out += [pytest.param(p, id="next/" + os.path.relpath(p, VERIFIED_NEXT)) for p in find_cases([path])]
    return out


@pytest.mark.parametrize("path", _cases())
def test_verified_case(path):
    assert path is not None, (f"{VERIFIED} not found: the verified cases live in ../shared beside "
                              f"the repository (or set SCHEDHARNESS_VERIFIED_CASES)")
    res = run_case(path)
    assert res.passed, "\n".join(res.failures)
