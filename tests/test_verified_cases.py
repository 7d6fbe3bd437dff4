"""The cases of ../shared/verified-versions/<version>/, whose expectations were recorded from the
real kube-scheduler of that version (each case names it in kubernetesVersion). When one fails,
the harness is wrong for that version.

They hold the scenarios of ../shared/verified-cases and ../shared/verified-next (recorded from
v1.34.1, which the harness no longer models: v1.34 means v1.34.9), so those leave the suite.
"""

from __future__ import annotations

import os

import pytest

from harness.case import find_cases, load_case, run_case
from harness.versions import MODELLED

HERE = os.path.dirname(os.path.abspath(__file__))
VERIFIED_VERSIONS = os.environ.get("SCHEDHARNESS_VERIFIED_VERSIONS",
                                   os.path.normpath(os.path.join(HERE, "..", "..", "shared", "verified-versions")))

# verified cases the harness does not pass yet, each with what it lacks; strict, so that a case
# that starts passing must leave this list
KNOWN_FAILING = {
}


def _cases():
    out = []
    for release in MODELLED.values():
        folder = os.path.join(VERIFIED_VERSIONS, release)
        if not os.path.isdir(folder):
            out.append(pytest.param(None, release, id=f"{release}-missing"))
            continue
        for p in find_cases([folder]):
            rel = os.path.relpath(p, VERIFIED_VERSIONS)
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN_FAILING[rel])] if rel in KNOWN_FAILING else []
            out.append(pytest.param(p, release, id=rel, marks=marks))
    return out


@pytest.mark.parametrize("path, release", _cases())
def test_verified_case(path, release):
    assert path is not None, (f"{os.path.join(VERIFIED_VERSIONS, release)} not found: the verified cases live "
                              f"in ../shared beside the repository (or set SCHEDHARNESS_VERIFIED_VERSIONS)")
    case = load_case(path)
    assert case.features.version.release == release, "a verified case names the version it was recorded from"
    res = run_case(case)
    assert res.passed, "\n".join(res.failures)


def test_every_modelled_version_has_its_verified_cases():
    assert set(MODELLED.values()) <= set(os.listdir(VERIFIED_VERSIONS))
