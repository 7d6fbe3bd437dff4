"""TopologyValues / NodeColumns (builtin_plugins/topology_values.py): the nodes' values of a
topology key, kept across cycles from the snapshot's journal, equal each node's own labels
whatever the sequence of label changes, list rebuilds and node selections (runs that wrap around
the end of the list, subsets, nodes that are not the list's)."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from builtin_plugins import node_sums  # noqa: E402
from builtin_plugins.topology_values import NodeColumns, TopologyValues  # noqa: E402

KEYS = ["zone", "host"]


class _Node:
    def __init__(self, name, labels):
        self.name = name
        self.labels = labels


class _NodeInfo:
    def __init__(self, node):
        self.node = node


class _Snap:
    def __init__(self, n):
        self.node_info_list = [_NodeInfo(_Node(f"n{i}", {"host": f"n{i}"})) for i in range(n)]
        self.node_info_map = {ni.node.name: ni for ni in self.node_info_list}
        self.journal = []
        self.journal_epoch = 0


class _Plugin:
    def __init__(self, snap):
        self.handle = type("H", (), {"snapshot": snap})()


labels_st = st.dictionaries(st.sampled_from(KEYS + ["other"]), st.sampled_from(["a", "b", "n0"]), max_size=3)
select_st = st.one_of(
    st.tuples(st.just("run"), st.integers(0, 9), st.integers(0, 9)),
    st.tuples(st.just("subset"), st.lists(st.integers(0, 9), max_size=6), st.just(0)),
    st.tuples(st.just("copy"), st.integers(0, 9), st.just(0)),
)
step_st = st.one_of(
    st.tuples(st.just("relabel"), st.integers(0, 9), labels_st),
    st.tuples(st.just("rebuild"), st.just(0), st.just({})),
    st.tuples(st.just("epoch"), st.just(0), st.just({})),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(n=st.integers(1, 6), steps=st.lists(st.tuples(step_st, select_st, st.sampled_from(KEYS)), max_size=10))
def test_columns_equal_the_labels(n, steps):
    snap = _Snap(n)
    plugin = _Plugin(snap)
    for (what, idx, labels), (how, a, b), key in steps:
        if what == "relabel":
            ni = snap.node_info_list[idx % n]
            ni.node = _Node(ni.node.name, dict(labels))
            snap.journal.append(ni.node.name)  # UpdateSnapshot notes every node it changes
        elif what == "rebuild":
            snap.node_info_list = list(snap.node_info_list)
        else:
            snap.journal = []
            snap.journal_epoch += 1
        lst = snap.node_info_list
        if how == "run":
            size = b % (n + 1)
            nodes = [lst[(a + i) % n] for i in range(size)]
        elif how == "subset":
            nodes = [lst[i % n] for i in a]
        else:
            nodes = [_NodeInfo(lst[a % n].node)] + lst[:1]
        want = [ni.node.labels.get(key) for ni in nodes]
        cols = NodeColumns(plugin, nodes)
        assert cols.get(key) == want
        assert cols.pairs(key) == [(key, v) for v in want]
        assert cols.tuples(KEYS) == [tuple(ni.node.labels.get(k) for k in KEYS) for ni in nodes]
        got = TopologyValues().values(snap, nodes, key)
        assert got is None or got == want


def test_off_with_node_sums():
    snap = _Snap(3)
    node_sums.ENABLED = False
    try:
        assert TopologyValues().values(snap, snap.node_info_list, "host") is None
    finally:
        node_sums.ENABLED = True
    assert TopologyValues().values(snap, snap.node_info_list, "host") == ["n0", "n1", "n2"]


def test_nodes_not_of_the_list_are_read_from_their_labels():
    snap = _Snap(3)
    copy = _NodeInfo(_Node("n1", {"host": "elsewhere"}))
    assert TopologyValues().values(snap, [snap.node_info_list[0], copy], "host") is None
    assert NodeColumns(_Plugin(snap), [snap.node_info_list[0], copy]).get("host") == ["n0", "elsewhere"]
