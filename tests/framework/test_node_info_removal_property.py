"""NodeInfo.RemovePod through its per-list index keeps upstream's removeFromSlice order: random
sequences of adds and removes (long lists, pods with affinity and required anti-affinity, the
same pod added twice, snapshots changed on their own) give the same pod lists, in the same
order, as a plain list with removeFromSlice's swap (framework/types.go)."""

from __future__ import annotations

from typing import Dict, List

import pytest
from hypothesis import given, settings, strategies as st

from harness.api.objects import Pod
from harness.framework.types import NodeInfo

_TERM = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}


def _pod(i: int, kind: int) -> Pod:
    spec: Dict = {"containers": [{"name": "c", "image": "pause",
                                  "resources": {"requests": {"cpu": f"{1 + i % 7}m"}}}]}
    if kind == 1:
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}}
    elif kind == 2:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}}
    return Pod({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"}, "spec": spec})


class _Reference:
    """Upstream's three slices, AddPodInfo appending and removeFromSlice swapping the last
    element into the first one with the pod's key."""

    def __init__(self) -> None:
        self.lists: List[List[Pod]] = [[], [], []]

    def add(self, pod: Pod, kind: int) -> None:
        self.lists[0].append(pod)
        if kind in (1, 2):
            self.lists[1].append(pod)  # podWithAffinity: PodAffinity or PodAntiAffinity set
        if kind == 2:
            self.lists[2].append(pod)

    def remove(self, uid: str) -> bool:
        found = False
        for n, s in enumerate(self.lists):
            for i, p in enumerate(s):
                if p.uid == uid:
                    s[i] = s[-1]
                    s.pop()
                    found = found or n == 0
                    break
        return found

    def copy(self) -> "_Reference":
        c = _Reference()
        c.lists = [list(s) for s in self.lists]
        return c


def _uids(ni: NodeInfo) -> List[List[str]]:
    return [[pi.pod.uid for pi in s] for s in (ni.pods, ni.pods_with_affinity, ni.pods_with_required_anti_affinity)]


def _same(ni: NodeInfo, ref: _Reference) -> None:
    assert _uids(ni) == [[p.uid for p in s] for s in ref.lists]
    assert ni.requested.milli_cpu == sum(1 + int(p.uid[1:]) % 7 for p in ref.lists[0])


_ops = st.lists(st.tuples(st.sampled_from(["add", "add", "add", "remove", "remove", "snapshot", "dup"]),
                          st.integers(0, 119), st.integers(0, 5)),
                min_size=1, max_size=400)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(st.integers(0, 110), _ops)
def test_removal_order_is_remove_from_slice(prefill, ops):
    pods = {i: _pod(i, i % 3 if i % 4 else 0) for i in range(120)}
    kind = {i: (i % 3 if i % 4 else 0) for i in range(120)}
    ni, ref = NodeInfo(), _Reference()
    others = []  # snapshots taken on the way, changed on their own
    present: List[int] = []
    # lists long enough to be indexed (a list under 32 pods is walked)
    ops = [("add", (i * 7) % 120, 0) for i in range(prefill)] + list(ops)
    for op, i, k in ops:
        if op == "add" and i not in present:
            ni.add_pod(pods[i])
            ref.add(pods[i], kind[i])
            present.append(i)
        elif op == "dup" and present:  # the same pod added again: removeFromSlice takes the first
            j = present[i % len(present)]
            ni.add_pod(pods[j])
            ref.add(pods[j], kind[j])
        elif op == "remove":
            j = present[i % len(present)] if present and k else i
            found = ref.remove(pods[j].uid)
            if found:
                ni.remove_pod(pods[j])
                if j in present and not any(p.uid == pods[j].uid for p in ref.lists[0]):
                    present.remove(j)
            else:
                with pytest.raises(KeyError):
                    ni.remove_pod(pods[j])
        elif op == "snapshot":
            others.append((ni.snapshot(), ref.copy(), list(present)))
        _same(ni, ref)
    # every snapshot still matches its reference, and removing from it in turn keeps matching
    for snap, sref, spresent in others[:5]:
        _same(snap, sref)
        for j in reversed(spresent):
            if sref.remove(pods[j].uid):
                snap.remove_pod(pods[j])
            _same(snap, sref)
    _same(ni, ref)


def test_a_long_list_keeps_upstream_order():
    ni, ref = NodeInfo(), _Reference()
    pods = [_pod(i, 0) for i in range(200)]
    for p in pods:
        ni.add_pod(p)
        ref.add(p, 0)
    for i in list(range(0, 200, 3)) + [199, 1, 100]:
        if ref.remove(pods[i].uid):
            ni.remove_pod(pods[i])
        _same(ni, ref)
    # a plugin replacing the list (tests/sample's NodeListTrimmer does) leaves no stale index
    ni.pods = list(reversed(ni.pods))
    ref.lists[0].reverse()
    for i in (2, 5, 8):
        ref.remove(pods[i].uid)
        ni.remove_pod(pods[i])
        _same(ni, ref)
