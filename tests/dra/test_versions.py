"""DynamicResources across versions: Test_computesScore and TestNormalizeScore
(dynamicresources_test.go, v1.35), the Score hooks per version, and the allocator each version's
gates pick (structured.NewAllocator)."""

from __future__ import annotations

import pytest

from builtin_plugins.dynamicresources import DynamicResources
from builtin_plugins.dynamicresources.allocator import Features
from builtin_plugins.dynamicresources.plugin import compute_score
from harness.api.objects import KubeObject
from harness.framework.runtime import implements
from harness.testing import FakeHandle
from harness.versions import resolve


def _claim(*requests, allocation=None):
    raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": "c", "namespace": "default"},
           "spec": {"devices": {"requests": [
               {"name": name, "firstAvailable": [{"name": f"subreq-{i + 1}", "deviceClassName": "cls"}
                                                 for i in range(subs)]} for name, subs in requests]}}}
    if allocation is not None:
        raw["status"] = {"allocation": allocation}
    return KubeObject(raw)


def _alloc(*requests):
    return {"devices": {"results": [{"request": r} for r in requests]}}


SCORE_CASES = {
    "mix-of-allocated-and-unallocated-claims": (
        [KubeObject({"metadata": {"name": "a"}, "spec": {"devices": {"requests": [
            {"name": "req-1", "exactly": {"deviceClassName": "cls"}}]}},
            "status": {"allocation": _alloc("req-1")}}),
         KubeObject({"metadata": {"name": "b"}, "spec": {"devices": {"requests": [
             {"name": "req-1", "exactly": {"deviceClassName": "cls"}}]}}})],
        [_alloc("req-1")], 0),
    "single-request-only-subrequest-allocated": ([_claim(("req-1", 1))], [_alloc("req-1/subreq-1")], 8),
    "single-request-last-subrequest-allocated": ([_claim(("req-1", 8))], [_alloc("req-1/subreq-8")], 1),
    "multiple-requests-with-middle-subrequests-allocated": (
        [_claim(("req-1", 4), ("req-2", 5))], [_alloc("req-1/subreq-4", "req-2/subreq-5")], 9),
    "multiple-requests-with-top-subrequests-allocated": (
        [_claim(("req-1", 8), ("req-2", 1))], [_alloc("req-1/subreq-8", "req-2/subreq-1")], 9),
    "multiple-claims-with-last-subrequests-allocated": (
        [_claim(("req-1", 8)), _claim(("req-2", 8))], [_alloc("req-1/subreq-8"), _alloc("req-2/subreq-8")], 2),
    "multiple-claims-with-top-subrequests-allocated": (
        [_claim(("req-1", 1)), _claim(("req-2", 1))], [_alloc("req-1/subreq-1"), _alloc("req-2/subreq-1")], 16),
    "allocated-claim-scores-by-its-own-allocation": (
        [_claim(("req-1", 2), allocation=_alloc("req-1/subreq-2"))], [], 7),
}


@pytest.mark.parametrize("name", sorted(SCORE_CASES))
def test_compute_score(name):
    claims, allocations, want = SCORE_CASES[name]
    assert compute_score(claims, allocations) == want


def test_compute_score_more_claims_than_allocations():
    from builtin_plugins.dynamicresources.claims import ClaimError
    with pytest.raises(ClaimError):
        compute_score([_claim(("req-1", 1)), _claim(("req-2", 1))], [])


def _plugin(version):
    handle = FakeHandle()
    handle.feature_gates = resolve(version)
    return DynamicResources(DynamicResources.set_defaults({}, features=handle.feature_gates), handle)


def test_score_extension_point_from_v1_35():
    assert not implements(_plugin("v1.34"), "score")
    assert not implements(_plugin("v1.34"), "normalize_score")
    for v in ("v1.35", "v1.36"):
        assert implements(_plugin(v), "score") and implements(_plugin(v), "normalize_score")


@pytest.mark.parametrize("scores,want", [([], []), ([42], [100]), ([8, 8], [100, 100]),
                                         ([2**31 - 1, 2**31 - 1], [100, 100]), ([8, 7], [100, 87]),
                                         ([0, 0], [0, 0])])
def test_normalize_score(scores, want):
    from harness.framework import NodeScore
    lst = [NodeScore(f"node-{i}", s) for i, s in enumerate(scores)]
    _plugin("v1.35").normalize_score(None, None, lst)
    assert [s.score for s in lst] == want


@pytest.mark.parametrize("version,gates,want", [
    ("v1.34", {}, "experimental"),  # DRAResourceClaimDeviceStatus needs experimental in v1.34
    ("v1.35", {}, "incubating"),
    ("v1.35", {"DRADeviceBindingConditions": True}, "experimental"),
    ("v1.35", {"DRADeviceTaints": True}, "incubating"),
    ("v1.36", {}, "incubating"),
    ("v1.36", {"DRAConsumableCapacity": False, "DRADeviceBindingConditions": False}, "stable"),
])
def test_allocator_implementation(version, gates, want):
    f = resolve(version, gates)
    assert Features.from_gates(f).implementation(f.version.minor) == want
