"""NodeSums (builtin_plugins/node_sums.py): sums brought up to date from the snapshot's journal
equal a fresh walk over every node, whatever the sequence of node changes."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from builtin_plugins import node_sums  # noqa: E402
from builtin_plugins.node_sums import NodeSums  # noqa: E402


class _Node:
    def __init__(self, name):
        self.name = name


class _NodeInfo:
    def __init__(self, name, contrib):
        self.node = _Node(name)
        self.contrib = contrib


class _Snap:
    def __init__(self, n):
        self.node_info_list = [_NodeInfo(f"n{i}", {}) for i in range(n)]
        self.node_info_map = {ni.node.name: ni for ni in self.node_info_list}
        self.journal = []
        self.journal_epoch = 0


contrib_st = st.dictionaries(st.sampled_from(["a", "b", "c", ("t", "z1")]), st.integers(-2, 3), max_size=3)


def _check_against_a_walk(n, steps, partial: bool):
    snap = _Snap(n)
    sums = NodeSums()
    contrib = lambda ni: dict(ni.contrib)  # noqa: E731
    for idx, c, sig, extra in steps:
        ni = snap.node_info_list[idx % n]
        ni.contrib = c
        snap.journal.append(ni.node.name)
        # node_index's answer: every node outside it contributes nothing
        only = ({x.node.name for x in snap.node_info_list if x.contrib} | {f"n{i}" for i in extra}
                if partial else None)
        got = sums.sums(snap, sig, contrib, lambda: only)
        node_sums.ENABLED = False
        try:
            want = NodeSums().sums(snap, sig, contrib)
        finally:
            node_sums.ENABLED = True
        assert got == want


_steps = st.lists(st.tuples(st.integers(0, 4), contrib_st, st.sampled_from(["x", "x", "y"]), st.sets(st.integers(0, 4))),
                  max_size=12)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(n=st.integers(1, 5), steps=_steps)
def test_incremental_sums_equal_a_walk(n, steps):
    _check_against_a_walk(n, steps, partial=False)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(n=st.integers(1, 5), steps=_steps)
def test_sums_over_the_nodes_that_can_contribute_equal_a_walk(n, steps):
    """With `only`, partial walks and their catch-up from the journal give the sums of a walk
    over every node."""
    _check_against_a_walk(n, steps, partial=True)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(n=st.integers(1, 5), steps=st.lists(st.tuples(st.integers(0, 4), contrib_st), max_size=12))
def test_node_index_kept_from_the_journal_equals_a_fresh_one(n, steps):
    from builtin_plugins.node_index import NodeKeyIndex

    snap = _Snap(n)
    keys_of = lambda ni: {k: v for k, v in ni.contrib.items() if v > 0}  # noqa: E731
    index = NodeKeyIndex(keys_of)
    for idx, c in steps:
        ni = snap.node_info_list[idx % n]
        ni.contrib = c
        snap.journal.append(ni.node.name)
        assert index.of(snap) == NodeKeyIndex(keys_of).of(snap)
