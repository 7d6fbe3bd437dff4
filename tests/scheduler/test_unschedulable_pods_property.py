"""MoveAllToActiveOrBackoffQueue through the unschedulable pool's files (gated pods filed by
gating plugin, harness/scheduler/unschedulable_pods.py) moves the same pods, in the same order,
as weighing every pod of the pool (movePodsToActiveOrBackoffQueue's per-pod check): random
sequences of adds, failed and successful attempts, cluster events with and without pre-checks,
updates that gate or ungate pods, activations, deletions, PreEnqueue plugins changing their minds
and flushes, run on two queues in lockstep."""

from __future__ import annotations

import os
import sys
from typing import Dict, List

from hypothesis import example, given, settings, strategies as st

from harness.framework.types import ActionType, ClusterEvent, EventResource, QueueingHint
from harness.scheduler.queue import (EVENT_ASSIGNED_POD_ADD, EVENT_ASSIGNED_POD_DELETE,
                                     EVENT_UNSCHEDULABLE_TIMEOUT, EVENT_UNSCHEDULED_POD_UPDATE,
                                     SchedulingQueue)
from harness.scheduler.unschedulable_pods import UnschedulablePods

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)

import queue_fakes as qf  # noqa: E402
from queue_fakes import NODE_ADD, PV_ADD, PVC_ADD, hint_queue, hint_skip, make_pod  # noqa: E402

NODE_TAINT = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)
EVENTS = [NODE_ADD, PV_ADD, PVC_ADD, NODE_TAINT, EVENT_ASSIGNED_POD_ADD, EVENT_ASSIGNED_POD_DELETE,
          EVENT_UNSCHEDULED_POD_UPDATE, EVENT_UNSCHEDULABLE_TIMEOUT]


def _hint_by_name(pod, old, new):
    return QueueingHint.Queue if int(pod.name[1:]) % 3 else QueueingHint.QueueSkip


HINTS = [(NODE_ADD, "gateA", hint_queue), (EVENT_UNSCHEDULED_POD_UPDATE, "gateA", hint_queue),
         (PV_ADD, "gateB", _hint_by_name), (EVENT_ASSIGNED_POD_DELETE, "gateB", hint_queue),
         (NODE_ADD, "fit", hint_queue), (EVENT_ASSIGNED_POD_ADD, "fit", _hint_by_name),
         (EVENT_ASSIGNED_POD_DELETE, "fit", hint_queue), (PVC_ADD, "vol", hint_skip),
         (PV_ADD, "vol", hint_queue)]
REJECTORS = ["fit", "vol", "gateB"]


class _ScanQueue(SchedulingQueue):
    """The queue weighing every pod of the pool on each event (the code before the files)."""

    def move_all_to_active_or_backoff(self, event, old, new, pre_check=None):
        if not self.is_event_of_interest(event):
            return
        pods = [p for p in self.unschedulable.values() if pre_check is None or pre_check(p.pod)]
        self.move_pods_to_active_or_backoff(pods, event, old, new)


def _state(q: SchedulingQueue) -> tuple:
    return ([it.pinfo.pod.uid for it in q.active], [t[2].pod.uid for t in q.backoff],
            [t[2].pod.uid for t in q.error_backoff],
            [(uid, p.gating_plugin, sorted(p.unschedulable_plugins)) for uid, p in q.unschedulable.items()],
            dict(q.in_queue), dict(q.in_flight), len(q.in_flight_events))


_op = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 29), st.integers(0, 3)),
    st.tuples(st.just("fail"), st.integers(0, 7), st.integers(0, 0)),
    st.tuples(st.just("done"), st.integers(0, 0), st.integers(0, 0)),
    st.tuples(st.just("move"), st.integers(0, len(EVENTS) - 1), st.integers(0, 2)),
    st.tuples(st.just("update"), st.integers(0, 29), st.integers(0, 3)),
    st.tuples(st.just("activate"), st.integers(0, 29), st.integers(0, 0)),
    st.tuples(st.just("delete"), st.integers(0, 29), st.integers(0, 0)),
    st.tuples(st.just("step"), st.integers(0, 400), st.integers(0, 1)),
    st.tuples(st.just("allow"), st.integers(0, 1), st.integers(0, 1)),
    # more of what changes a pooled pod's gating plugin in place (a gate opening, then Activate)
    # and of the events gated pods wait for
    st.tuples(st.just("allow"), st.integers(0, 1), st.integers(1, 1)),
    st.tuples(st.just("activate"), st.integers(0, 29), st.integers(0, 0)),
    st.tuples(st.just("move"), st.integers(0, 3), st.integers(0, 0)),
)


def _labels(bits: int) -> Dict[str, str]:
    out = {"any": ""}
    if bits & 1:
        out["a-ok"] = ""
    if bits & 2:
        out["b-ok"] = ""
    return out


@settings(max_examples=1000, derandomize=True, deadline=None)
# a gate opening, then Activate: PreEnqueue runs on a pod in the pool, which stays gated by the
# other plugin (its file changes in place); gateB's event then moves it
@example([0, 0, 0], [("allow", 0, 1), ("activate", 1, 0), ("move", 1, 0)])
@given(st.lists(st.integers(0, 3), min_size=0, max_size=30), st.lists(_op, min_size=10, max_size=150))
def test_the_files_move_the_pods_the_scan_moves(first, ops):
    gate_a = qf.NamedPreEnqueue("gateA", qf.PreEnqueuePlugin(["a-ok"]))
    gate_b = qf.NamedPreEnqueue("gateB", qf.PreEnqueuePlugin(["b-ok"]))
    queues: List[SchedulingQueue] = []
    clocks = []
    for cls in (SchedulingQueue, _ScanQueue):
        clock = qf.StepClock(0.3)
        q = cls({qf.PROFILE: qf.FakeFramework(HINTS, [gate_a, gate_b])}, clock, 1.0, 10.0)
        queues.append(q)
        clocks.append(clock)
    fast, scan = queues
    assert isinstance(fast.unschedulable, UnschedulablePods)
    fast.unschedulable.check = True  # each lookup also compared with the scan of the pool
    pods: Dict[int, object] = {}
    popped: List[object] = [[], []]
    # a pool to start from: pods gated by gateA, gateB or neither, some failed once
    ops = [("add", i, bits) for i, bits in enumerate(first)] + [("fail", 1 + i % 7, 0) for i in range(len(first) // 3)] + ops
    for op, a, b in ops:
        fresh = op == "add" and a not in pods
        if fresh:
            pods[a] = make_pod(f"p{a}", uid=f"u{a}", labels=_labels(b), priority=a % 3)
        for n, q in enumerate(queues):
            if fresh:
                q.add(pods[a])
            elif op == "fail":
                p = q.pop()
                if p is not None:
                    p.unschedulable_plugins = {r for i, r in enumerate(REJECTORS) if a >> i & 1}
                    q.add_unschedulable_if_not_present(p)
            elif op == "done":
                p = q.pop()
                if p is not None:
                    q.done(p.pod.uid)
                    popped[n].append(p.pod.uid)
            elif op == "move":
                new = make_pod("x1", node="n") if EVENTS[a].resource == EventResource.AssignedPod else None
                pre_check = None if b == 0 else (lambda p, b=b: int(p.name[1:]) % 2 == b - 1)
                q.move_all_to_active_or_backoff(EVENTS[a], None, new, pre_check)
            elif op == "update" and a in pods:
                old = pods[a]
                new = qf.updated(old, labels=_labels(b))
                q.update(old, new)
                if n == 1:
                    pods[a] = new
            elif op == "activate" and a in pods:
                q.activate([pods[a]])
            elif op == "delete" and a in pods:
                q.delete(pods[a])
            elif op == "step":
                clocks[n].step(a / 100)
                q.flush_backoff_completed()
                if b:
                    q.flush_unschedulable_pods_leftover()
        if op == "allow":  # a PreEnqueue plugin now admits every pod (all have "any"), or no longer
            (gate_a, gate_b)[a].inner.allowlists = [("a-ok", "b-ok")[a]] + (["any"] if b else [])
        assert _state(fast) == _state(scan), op
    assert popped[0] == popped[1]
