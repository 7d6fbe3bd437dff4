"""The cases of ../shared/verified-versions/<version>/, whose expectations were recorded from the
real kube-scheduler of that version (each case names it in kubernetesVersion). When one fails,
the harness is wrong for that version.

They hold the scenarios of ../shared/verified-cases and ../shared/verified-next (recorded from
v1.34.1, which the harness no longer models: v1.34 means v1.34.9), so those leave the suite.

Beside them run the gang cases of ../shared/verified-next/gang/<version>/ (the Workload API,
recorded from the real v1.35.6 and v1.36.3 with its gates on: issue 27).
"""

from __future__ import annotations

import os

import pytest

from harness.case import find_cases, load_case, run_case
from harness.versions import MODELLED

HERE = os.path.dirname(os.path.abspath(__file__))
VERIFIED_VERSIONS = os.environ.get("SCHEDHARNESS_VERIFIED_VERSIONS",
                                   os.path.normpath(os.path.join(HERE, "..", "..", "shared", "verified-versions")))

VERIFIED_GANG = os.environ.get("SCHEDHARNESS_VERIFIED_GANG",
                               os.path.normpath(os.path.join(HERE, "..", "..", "shared", "verified-next", "gang")))
# the versions that have the Workload API (each has its folder of gang cases)
GANG_RELEASES = [r for r in MODELLED.values() if r not in ("v1.34.9",)]

# verified cases the harness does not pass yet, each with what it lacks; strict, so that a case
# that starts passing must leave this list
KNOWN_FAILING = {
    "gang/v1.36.3/gang-workload-aware-preemption-v136.yaml":
        "the recorded file is not valid YAML: its description's \"setup's\" (line 12) ends the single-quoted "
        "string (a quote inside one is written twice); cases/gang/gang-workload-aware-preemption-v136.yaml "
        "is the same scenario with the quote doubled, and passes",
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
    for release in GANG_RELEASES:
        folder = os.path.join(VERIFIED_GANG, release)
        if not os.path.isdir(folder):
            out.append(pytest.param(None, release, id=f"gang-{release}-missing"))
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".yaml"):
                continue
            p = os.path.join(folder, name)
            rel = "gang/" + os.path.relpath(p, VERIFIED_GANG)
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN_FAILING[rel])] if rel in KNOWN_FAILING else []
            out.append(pytest.param(p, release, id=rel, marks=marks))
    return out


@pytest.mark.parametrize("path, release", _cases())
def test_verified_case(path, release):
    assert path is not None, (f"the verified cases of {release} (in {VERIFIED_VERSIONS} and {VERIFIED_GANG}) "
                              f"not found: they live in ../shared beside the repository (or set "
                              f"SCHEDHARNESS_VERIFIED_VERSIONS / SCHEDHARNESS_VERIFIED_GANG)")
    case = load_case(path)
    assert case.features.version.release == release, "a verified case names the version it was recorded from"
    res = run_case(case)
    assert res.passed, "\n".join(res.failures)


def test_every_modelled_version_has_its_verified_cases():
    assert set(MODELLED.values()) <= set(os.listdir(VERIFIED_VERSIONS))
    assert set(GANG_RELEASES) <= set(os.listdir(VERIFIED_GANG))
