"""The node table (harness/framework/node_table.py): the batch Filter/Score forms reading its
int64 columns give every case the outcome the plain loops give, its rows follow the snapshot,
and numbers too large for int64 arithmetic turn it off rather than overflow."""

from __future__ import annotations

import os

import pytest

from harness.case import find_cases, load_case, run_case
from harness.case.loader import case_from_data
from harness.framework import node_table

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared"))


def _outcome(res):
    return res.bindings, res.messages, res.preempted, res.nominated, res.failures, res.passed


@pytest.fixture
def table_everywhere():
    saved = node_table.MIN_NODES, node_table.CHECK
    node_table.MIN_NODES, node_table.CHECK = 0, True
    yield
    node_table.MIN_NODES, node_table.CHECK = saved


def _all_cases():
    dirs = [os.path.join(ROOT, "cases"), os.path.join(SHARED, "verified-versions")]
    return find_cases([d for d in dirs if os.path.isdir(d)])


def test_every_case_has_the_same_outcome_with_the_table(table_everywhere):
    paths = _all_cases()
    assert len(paths) > 200
    diffs = []
    for path in paths:
        node_table.MIN_NODES = 10 ** 9
        plain = run_case(load_case(path))
        node_table.MIN_NODES = 0
        table = run_case(load_case(path))
        if _outcome(plain) != _outcome(table):
            diffs.append(f"{path}: plain {_outcome(plain)} != table {_outcome(table)}")
    assert not diffs, "\n".join(diffs[:5])


def _node(name, cpu="4", memory="8Gi", **extra):
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
         "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}
    n.update(extra)
    return n


def _pod(name, cpu, memory="1Gi"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x",
                                     "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}}


def _case(nodes, pods):
    return case_from_data({"apiVersion": "schedharness/v1alpha1", "kind": "Case", "cluster": nodes,
                           "pods": pods, "expect": {}}, "inline.yaml")


def test_pods_filling_nodes_one_after_another(table_everywhere):
    # 70 nodes of 4 cpu, 90 pods of 3 cpu: 70 bind (one per node, LeastAllocated spreading
    # them), 20 are unschedulable with "Insufficient cpu" from the table's fast path failing
    nodes = [_node(f"n{i:02d}") for i in range(70)]
    pods = [_pod(f"p{i:02d}", "3") for i in range(90)]
    node_table.MIN_NODES = 10 ** 9
    plain = run_case(_case(nodes, pods))
    node_table.MIN_NODES = 0
    table = run_case(_case(nodes, pods))
    assert _outcome(plain) == _outcome(table)
    assert sum(1 for v in table.bindings.values() if v) == 70
    assert len(set(v for v in table.bindings.values() if v)) == 70


def test_numbers_beyond_int64_arithmetic_fall_back_to_the_plain_loops(table_everywhere):
    # 1Ei of memory is 2**60 bytes: (allocatable - requested) * 100 overflows int64, so the
    # table is off and the scores are Python's. On "small" the pod scores 87 + 100
    # (LeastAllocated 7/8 of each, equal fractions), on "big" 87 + 87: "small" wins
    nodes = [_node("big", memory="1Ei"), _node("small", cpu="8", memory="8Gi")]
    pods = [_pod("p", "1", "1Gi")]
    res = run_case(_case(nodes, pods))
    node_table.MIN_NODES = 10 ** 9
    plain = run_case(_case(nodes, pods))
    assert _outcome(res) == _outcome(plain)
    assert res.bindings["default/p"] == "small"


def test_a_row_back_in_range_turns_the_table_on_with_every_row_true(table_everywhere):
    # "big" starts with 1Ei of memory (beyond the columns' range: the table is off), then is
    # updated to 8Gi, so the table turns on again; every other row must then hold its node's
    # numbers (node_table.CHECK compares each row with its NodeInfo at every use), and the
    # outcome is the plain loops'. After the update, p1 (3 cpu) goes to one of the 4-cpu nodes;
    # p2 (3 cpu) cannot share it (Insufficient cpu) and goes to another node
    nodes = [_node("big", memory="1Ei")] + [_node(f"n{i:02d}") for i in range(5)]
    pods = [_pod("p0", "1", "1Gi")]
    big_now = _node("big", memory="8Gi")
    steps = [{"update": [big_now]}, {"create": [_pod("p1", "3"), _pod("p2", "3")]}]

    def case():
        return case_from_data({"apiVersion": "schedharness/v1alpha1", "kind": "Case", "cluster": nodes,
                               "pods": pods, "steps": steps, "expect": {}}, "inline.yaml")
    node_table.MIN_NODES = 10 ** 9
    plain = run_case(case())
    node_table.MIN_NODES = 0
    table = run_case(case())
    assert table.passed and _outcome(plain) == _outcome(table)
    assert table.bindings["default/p1"] != table.bindings["default/p2"]
