"""The DRA manager's in-flight allocations shared by the pods of one pod group cycle
(claimTracker.SignalClaimPendingAllocation / MaybeRemoveClaimPendingAllocation): on random
sequences of pods reserving, unreserving and binding, a claim's allocation stays in flight while
some pod still shares it and no binding stored it, keeps the first pod's allocation, and leaves
with its last sharer or at once when a binding stored it (forced)."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from builtin_plugins.dynamicresources.claims import ClaimTracker  # noqa: E402
from harness.api.objects import KubeObject  # noqa: E402
from harness.cluster import Cluster  # noqa: E402


def _claim(uid: str, device: str) -> KubeObject:
    return KubeObject({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                       "metadata": {"name": uid, "namespace": "default", "uid": uid},
                       "status": {"allocation": {"devices": {"results": [
                           {"request": "r", "driver": "d", "pool": "p", "device": device}]}}}})


OPS = st.lists(st.tuples(st.sampled_from(["reserve", "unreserve", "bind"]), st.sampled_from(["a", "b"]),
                         st.integers(0, 3)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_a_shared_pending_allocation_leaves_with_its_last_sharer_or_when_stored(ops):
    t = ClaimTracker(Cluster())
    model = {}  # uid -> (first device, sharers)
    for op, uid, n in ops:
        if op == "reserve":
            t.signal_claim_pending_allocation(uid, _claim(uid, f"dev-{n}"))
            dev, k = model.get(uid, (f"dev-{n}", 0))
            model[uid] = (dev, k + 1)
        else:
            removed = t.maybe_remove_claim_pending_allocation(uid, force=(op == "bind"))
            if uid not in model:
                assert not removed
                continue
            dev, k = model[uid]
            if op == "bind" or k == 1:
                assert removed
                del model[uid]
            else:
                assert not removed
                model[uid] = (dev, k - 1)
        for u in ("a", "b"):
            assert t.claim_has_pending_allocation(u) == (u in model)
            got = t.get_pending_allocation(u)
            if u in model:
                assert got["devices"]["results"][0]["device"] == model[u][0]
            else:
                assert got is None
        assert t.list_all_allocated_devices() == {("d", "p", model[u][0]) for u in model}
