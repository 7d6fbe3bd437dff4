"""movePodsToActiveOrBackoffQueue skips, without calling isPodWorthRequeuing, each pod none of
whose rejecting plugins has a hint for the event (property test, hypothesis): on pools of pods
rejected by any set of plugins (unschedulable and pending), some with hints that queue or skip
and some with none, every pod ends where calling isPodWorthRequeuing on each of them puts it."""

from __future__ import annotations

import os
import sys

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness.framework.types import QueuedPodInfo  # noqa: E402
from harness.scheduler.queue import EVENT_ASSIGNED_POD_ADD, SchedulingQueue  # noqa: E402

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)

import queue_fakes as qf  # noqa: E402
from queue_fakes import NODE_ADD, hint_queue, hint_skip, make_pod, new_step_queue, where  # noqa: E402

PLUGINS = ["foo", "bar", "baz", "qux"]
HINTS = [(NODE_ADD, "foo", hint_queue), (NODE_ADD, "bar", hint_skip), (EVENT_ASSIGNED_POD_ADD, "baz", hint_queue),
         (NODE_ADD, "baz", None)]

pod_st = st.tuples(st.sets(st.sampled_from(PLUGINS), max_size=2), st.sets(st.sampled_from(PLUGINS), max_size=1))


def _rejected(q, clock, suffix: str, unsched, pending):
    """A pod added, popped, and put in the unschedulable pool as rejected by those plugins."""
    pod = make_pod(f"p{suffix}", uid=f"u{suffix}")
    q.add(pod)
    q.pop()
    pinfo = QueuedPodInfo(qf._pod_info(pod), clock.now(), 0)
    pinfo.unschedulable_plugins = set(unsched)
    pinfo.pending_plugins = set(pending)
    q.add_unschedulable_if_not_present(pinfo)
    return pod


def _outcome(pods, event, fast: bool, mp):
    if not fast:
        mp.setattr(SchedulingQueue, "_skipped_plugins", lambda self, event: None)
    q, clock = new_step_queue(HINTS)
    made = [_rejected(q, clock, f"{i}", unsched, pending) for i, (unsched, pending) in enumerate(pods)]
    q.move_all_to_active_or_backoff(event, None, None)
    return [where(q, p) for p in made]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(pods=st.lists(pod_st, min_size=1, max_size=8), event=st.sampled_from([NODE_ADD, EVENT_ASSIGNED_POD_ADD]))
def test_skipped_pods_stay_where_the_hints_leave_them(pods, event):
    with pytest.MonkeyPatch.context() as mp:
        fast = _outcome(pods, event, True, mp)
    with pytest.MonkeyPatch.context() as mp:
        reference = _outcome(pods, event, False, mp)
    assert fast == reference


def _per_pod_moves(self, event, old, new, pre_check=None):
    """MoveAllToActiveOrBackoffQueue without the pods worth asking kept per event: every pod of
    the pool the event may move is handed to move_pods_to_active_or_backoff."""
    from harness.scheduler.queue import match_cluster_events

    if not self.is_event_of_interest(event):
        return
    pods = self.unschedulable.movable(event, match_cluster_events)
    if pre_check is not None:
        pods = [p for p in pods if pre_check(p.pod)]
    self.move_pods_to_active_or_backoff(pods, event, old, new)


def _rounds_outcome(rounds, fast: bool, mp):
    """Rounds of (pods rejected by some plugins added to the pool, events): where every pod is
    after each round's events (the pool is met again and again, as by an AssignedPodAdd per
    binding, and changes between rounds)."""
    if not fast:
        mp.setattr(SchedulingQueue, "_skipped_plugins", lambda self, event: None)
        mp.setattr(SchedulingQueue, "move_all_to_active_or_backoff", _per_pod_moves)
    q, clock = new_step_queue(HINTS)
    made, seen = [], []
    for r, (pods, events) in enumerate(rounds):
        made += [_rejected(q, clock, f"{r}-{i}", unsched, pending) for i, (unsched, pending) in enumerate(pods)]
        for event in events:
            q.move_all_to_active_or_backoff(event, None, None)
            seen.append([where(q, p) for p in made])
    return seen


@settings(max_examples=200, derandomize=True, deadline=None)
@given(rounds=st.lists(st.tuples(st.lists(pod_st, max_size=5),
                                 st.lists(st.sampled_from([NODE_ADD, EVENT_ASSIGNED_POD_ADD]), min_size=1, max_size=4)),
                       min_size=1, max_size=4))
def test_repeated_events_move_the_pods_the_per_pod_calls_move(rounds):
    """The pods worth asking, kept per event while the pool is unchanged, give every pod the
    place the per-pod calls give it, event after event."""
    with pytest.MonkeyPatch.context() as mp:
        fast = _rounds_outcome(rounds, True, mp)
    with pytest.MonkeyPatch.context() as mp:
        reference = _rounds_outcome(rounds, False, mp)
    assert fast == reference
