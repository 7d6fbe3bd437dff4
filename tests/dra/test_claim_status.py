"""The API server's ResourceClaim status-update check (harness/api/claim_status.py): at most 256
reservedFor entries, refused with errors.NewInvalid's wording and nothing stored."""

from __future__ import annotations

import copy

import pytest

from harness.api.objects import make_object
from harness.apierrors import Invalid, is_invalid
from harness.cluster import Cluster

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _claim(n: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "shared", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu"}]}},
            "status": {"reservedFor": [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"}
                                       for i in range(n)]}}


def test_257th_reservation_is_refused_and_nothing_is_stored():
    cluster = Cluster()
    stored = cluster.create(make_object(_claim(256)), notify=False)
    events = []
    cluster.subscribe(lambda kind, old, new: events.append(kind))
    raw = copy.deepcopy(stored.raw)
    raw["status"]["reservedFor"].append({"resource": "pods", "name": "p256", "uid": "u256"})
    with pytest.raises(Invalid) as info:
        cluster.update_status(make_object(raw))
    assert str(info.value) == ('ResourceClaim.resource.k8s.io "shared" is invalid: status.reservedFor: '
                               "Too many: 257: must have at most 256 items")
    assert info.value.code == 422 and is_invalid(info.value)
    assert len(cluster.get("ResourceClaim", "default", "shared").status["reservedFor"]) == 256
    assert events == []


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=600))
def test_status_update_accepted_iff_at_most_256_reservations(n):
    cluster = Cluster()
    cluster.create(make_object(_claim(0)), notify=False)
    try:
        cluster.update_status(make_object(_claim(n)))
    except Invalid as e:
        assert n > 256 and f"Too many: {n}:" in str(e)
        assert "reservedFor" not in cluster.get("ResourceClaim", "default", "shared").status or \
            not cluster.get("ResourceClaim", "default", "shared").status["reservedFor"]
    else:
        assert n <= 256
        assert len(cluster.get("ResourceClaim", "default", "shared").status.get("reservedFor") or []) == n

