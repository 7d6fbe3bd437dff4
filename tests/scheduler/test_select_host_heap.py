"""v1.35 on, schedulePod takes newSortedNodeScores(priorityList).Pop(): Go's container/heap over
the node scores (nodeScoreHeap.Less: higher TotalScore, or equal and higher Randomizer)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from harness.scheduler.schedule_one import heap_first, heap_order


def test_ties_without_randomizer_go_to_the_heap_root():
    # heap.Init on [a, b] with equal scores keeps a at the root: Pop gives a (upstream: the
    # v1.36.3 recording of balanced-allocation-extended-resource, 425/425, binds node-a)
    assert heap_first([425, 425]) == 0
    assert heap_order([425, 425]) == [0, 1]
    # a strictly greater child rises: [1, 5, 5] -> index 1 (the left child wins the tie)
    assert heap_first([1, 5, 5]) == 1
    # the max deep in the left subtree comes before one in the right: [0, 1, 2, 9, 0, 0, 9]
    assert heap_first([0, 1, 2, 9, 0, 0, 9]) == 3


def test_randomizer_breaks_ties():
    assert heap_first([7, 7, 7], [0, 5, 3]) == 1
    assert heap_order([7, 7, 7], [0, 5, 3])[0] == 1


@settings(max_examples=500, derandomize=True, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=40),
       st.booleans(), st.randoms(use_true_random=False))
def test_the_first_pop_is_the_pre_order_first_of_the_greatest(totals, with_randomizer, rnd):
    rands = [rnd.randrange(3) for _ in totals] if with_randomizer else None
    order = heap_order(totals, rands)
    assert sorted(order) == list(range(len(totals)))
    assert heap_first(totals, rands) == order[0]
    keys = totals if rands is None else list(zip(totals, rands))
    # successive Pops never go up in (TotalScore, Randomizer)
    assert all(keys[a] >= keys[b] for a, b in zip(order, order[1:]))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.integers(min_value=1, max_value=3000), st.integers(min_value=1, max_value=6), st.randoms(use_true_random=False))
def test_the_root_of_many_ties_on_a_column(n, spread, rnd):
    # the node table's totals column: heap_root over the indices of its greatest entries (a
    # numpy array, the pre-order keys kept across calls) is the first Pop
    import numpy as np
    from harness.scheduler.schedule_one import heap_root
    totals = [rnd.randrange(spread) for _ in range(n)]
    col = np.asarray(totals, dtype=np.int64)
    assert heap_root((col == col.max()).nonzero()[0]) == heap_order(totals)[0]
