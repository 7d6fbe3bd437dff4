"""The table tests of kube-scheduler's pkg/scheduler/backend/queue (scheduling_queue_test.go,
backoff_queue_test.go) ported to harness/scheduler/queue.py, with SchedulerQueueingHints and
SchedulerPopFromBackoffQ on (v1.34's defaults): Add/Pop order, in-flight pods and their events,
AddUnschedulableIfNotPresent (activeQ / backoffQ / unschedulable pool), isPodWorthRequeuing,
MoveAllToActiveOrBackoffQueue with hints and pre-checks, backoff durations and the 1s ordering
window, PreEnqueue gating, Update / Delete / Activate, the nominator.

The fakes are in tests/sample/queue_fakes.py. Upstream's test file at the index is newer than
v1.34; where it tests later behaviour (Pop keeping UnschedulablePlugins, ForceActivate from the
backoffQ skipping PreEnqueue, Attempts-based backoff) the v1.34 source
(vendor/k8s.io/kubernetes/pkg/scheduler/backend/queue) decides and the test says so.
Virtual time starts at 0 (upstream's fake clock at time.Now()); where alignment to whole seconds
matters the start is chosen off the second like a real clock.
"""

from __future__ import annotations

import os
import sys

import pytest

from harness.framework.types import ActionType, ClusterEvent, EventResource, QueuedPodInfo
from harness.scheduler.queue import (ACTIVE_Q, BACKOFF_Q, EVENT_ASSIGNED_POD_ADD,
                                     EVENT_FORCE_ACTIVATE, EVENT_UNSCHEDULABLE_TIMEOUT,
                                     EVENT_UNSCHEDULED_POD_UPDATE, UNSCHEDULABLE_Q, Nominator,
                                     Strategy, align_to_window, match_cluster_events)

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)

import queue_fakes as qf  # noqa: E402
from queue_fakes import (CSI_NODE_UPDATE, HIGH, MID, NODE_ADD, PV_ADD, PV_UPDATE,  # noqa: E402
                         PVC_ADD, hint_queue, hint_skip, lookup, make_pod, names,
                         new_step_queue, where)


def pop_expect(q, pod):
    p = q.pop()
    assert p is not None and p.pod.uid == pod.uid, f"popped {p} instead of {pod.name}"
    return p


# ------------------------------------------------------------------------------------------------
# TestPriorityQueue_Add, TestPriorityQueue_AddWithReversePriorityLessFunc
# ------------------------------------------------------------------------------------------------
def test_add_pop_order_and_nominator():
    q, _ = new_step_queue()
    mpp, up, hpp = qf.med_priority_pod(), qf.unschedulable_pod(), qf.high_priority_pod()
    q.add(mpp)
    q.add(up)
    q.add(hpp)
    # pods added with a nominatedNodeName are in the nominator, in the order they came
    assert q.nominator.pod_to_node == {mpp.uid: "node1", up.uid: "node1"}
    assert [pi.pod.name for pi in q.nominator.nominated["node1"]] == ["mpp", "up"]
    pop_expect(q, hpp)
    pop_expect(q, mpp)
    pop_expect(q, up)
    # popping does not drop nominations
    assert len(q.nominator.nominated["node1"]) == 2


def test_add_higher_priority_first():
    q, _ = new_step_queue()
    mpp, hpp = qf.med_priority_pod(), qf.high_priority_pod()
    q.add(mpp)
    q.add(hpp)
    pop_expect(q, hpp)
    pop_expect(q, mpp)


# ------------------------------------------------------------------------------------------------
# Test_InFlightPods (the cases with SchedulingQueueHint enabled)
# ------------------------------------------------------------------------------------------------
POD1 = ("targetpod", "pod1")
POD2 = ("targetpod2", "pod2")
POD3 = ("targetpod3", "pod3")


def _inflight_pods():
    return [make_pod(n, uid=u) for n, u in (POD1, POD2, POD3)]


def _run_inflight(hints, initial, actions):
    q, clock = new_step_queue(hints)
    for p in initial:
        q.add(p)
        clock.step(1.0)
    for kind, arg in actions:
        if kind == "event":
            q.move_all_to_active_or_backoff(arg, None, None)
        elif kind == "pop":
            pop_expect(q, arg)
        elif kind == "enqueue":
            q.add_unschedulable_if_not_present(arg if isinstance(arg, QueuedPodInfo) else arg(q))
        elif kind == "create":
            q.add(arg)
        elif kind == "call":
            arg(q)
    return q


def _events(q, pod):
    return [e for e, _, _ in q.in_flight_events_for(pod.uid)]


def test_inflight_pod_and_interested_events_are_recorded():
    p1, _, _ = _inflight_pods()
    q = _run_inflight([(PV_ADD, "fooPlugin1", hint_queue)], [p1], [
        ("event", PVC_ADD),   # nobody in flight: not recorded
        ("pop", p1),
        ("event", PV_ADD),    # recorded
        ("event", PV_UPDATE),  # no plugin is interested: not recorded
    ])
    assert set(q.in_flight) == {p1.uid}
    assert _events(q, p1) == [PV_ADD]


HINTS_FOO1 = [(PV_ADD, "fooPlugin1", hint_queue), (NODE_ADD, "fooPlugin1", hint_queue),
              (PVC_ADD, "fooPlugin1", hint_queue)]


def test_inflight_pod_enqueued_back_to_backoff_q():
    p1, p2, _ = _inflight_pods()
    q = _run_inflight(HINTS_FOO1, [p1, p2], [
        ("event", PVC_ADD), ("pop", p1), ("event", PV_ADD), ("pop", p2), ("event", NODE_ADD),
        # no rejecting plugin (an unexpected error): backoffQ
        ("enqueue", lambda q: lookup(q, p1)),
    ])
    assert names(q.pods_in_backoff()) == ["targetpod"]
    assert set(q.in_flight) == {p2.uid}
    assert _events(q, p2) == [NODE_ADD]


def test_all_inflight_pods_enqueued_back():
    p1, p2, _ = _inflight_pods()
    q = _run_inflight(HINTS_FOO1 + [(CSI_NODE_UPDATE, "fooPlugin1", hint_queue)], [p1, p2], [
        ("event", PVC_ADD), ("pop", p1), ("event", PV_ADD), ("pop", p2), ("event", NODE_ADD),
        ("enqueue", lambda q: lookup(q, p1)), ("event", CSI_NODE_UPDATE),
        ("enqueue", lambda q: lookup(q, p2)),
    ])
    assert names(q.pods_in_backoff()) == ["targetpod", "targetpod2"]
    assert q.in_flight == {} and q.in_flight_events == []


def test_one_intermediate_inflight_pod_enqueued_back():
    p1, p2, p3 = _inflight_pods()
    hints = [(PV_ADD, "fooPlugin1", hint_queue), (NODE_ADD, "fooPlugin1", hint_queue),
             (EVENT_ASSIGNED_POD_ADD, "fooPlugin1", hint_queue)]
    q = _run_inflight(hints, [p1, p2, p3], [
        ("event", PVC_ADD), ("pop", p1), ("event", PV_ADD), ("pop", p2), ("event", NODE_ADD),
        ("pop", p3), ("event", EVENT_ASSIGNED_POD_ADD),
        ("enqueue", lambda q: lookup(q, p2)),
    ])
    assert names(q.pods_in_backoff()) == ["targetpod2"]
    assert set(q.in_flight) == {p1.uid, p3.uid}
    assert _events(q, p1) == [PV_ADD, NODE_ADD, EVENT_ASSIGNED_POD_ADD]
    assert _events(q, p3) == [EVENT_ASSIGNED_POD_ADD]


def test_events_before_pop_are_ignored():
    p1, _, _ = _inflight_pods()
    q = _run_inflight([(EVENT_ASSIGNED_POD_ADD, "fooPlugin1", hint_skip)], [p1], [
        ("event", EVENT_UNSCHEDULABLE_TIMEOUT), ("pop", p1), ("event", EVENT_ASSIGNED_POD_ADD),
        ("enqueue", lambda q: lookup(q, p1, "fooPlugin1")),
    ])
    assert where(q, p1) == UNSCHEDULABLE_Q
    assert q.in_flight == {} and q.in_flight_events == []


def test_enqueued_to_backoff_if_no_failed_plugin():
    p1, _, _ = _inflight_pods()
    q = _run_inflight([(EVENT_ASSIGNED_POD_ADD, "fooPlugin1", hint_queue)], [p1], [
        ("pop", p1), ("event", EVENT_ASSIGNED_POD_ADD), ("enqueue", lambda q: lookup(q, p1)),
    ])
    assert names(q.pods_in_backoff()) == ["targetpod"]
    assert q.in_flight == {}


def test_enqueued_to_unschedulable_if_no_event_can_make_it_schedulable():
    p1, _, _ = _inflight_pods()
    q = _run_inflight([(EVENT_ASSIGNED_POD_ADD, "fooPlugin1", hint_queue)], [p1], [
        ("pop", p1), ("event", NODE_ADD), ("enqueue", lambda q: lookup(q, p1, "fooPlugin1")),
    ])
    assert where(q, p1) == UNSCHEDULABLE_Q


def test_enqueued_to_unschedulable_when_failed_plugin_hint_skips():
    p1, _, _ = _inflight_pods()
    q = _run_inflight([(EVENT_ASSIGNED_POD_ADD, "fooPlugin1", hint_skip)], [p1], [
        ("pop", p1), ("event", EVENT_ASSIGNED_POD_ADD),
        ("enqueue", lambda q: lookup(q, p1, "fooPlugin1")),
    ])
    assert where(q, p1) == UNSCHEDULABLE_Q


def _pending(q, pod, unsched, pending):
    pinfo = lookup(q, pod, *unsched)
    pinfo.pending_plugins = set(pending)
    return pinfo


def test_enqueued_to_active_when_pending_plugin_hint_queues():
    p1, _, _ = _inflight_pods()
    hints = [(EVENT_ASSIGNED_POD_ADD, "fooPlugin3", hint_skip),
             (EVENT_ASSIGNED_POD_ADD, "fooPlugin2", hint_queue),
             (EVENT_ASSIGNED_POD_ADD, "fooPlugin1", hint_queue)]
    q = _run_inflight(hints, [p1], [
        ("pop", p1), ("event", EVENT_ASSIGNED_POD_ADD),
        ("enqueue", lambda q: _pending(q, p1, ["fooPlugin2", "fooPlugin3"], ["fooPlugin1"])),
    ])
    assert names(q.pods_in_active()) == ["targetpod"]
    assert q.in_flight == {}


def test_enqueued_to_backoff_when_failed_plugin_hint_queues():
    p1, _, _ = _inflight_pods()
    hints = [(EVENT_ASSIGNED_POD_ADD, "fooPlugin2", hint_skip),
             (EVENT_ASSIGNED_POD_ADD, "fooPlugin1", hint_queue)]
    q = _run_inflight(hints, [p1], [
        ("pop", p1), ("event", EVENT_ASSIGNED_POD_ADD),
        ("enqueue", lambda q: lookup(q, p1, "fooPlugin1", "fooPlugin2")),
    ])
    assert names(q.pods_in_backoff()) == ["targetpod"]


def test_pending_plugin_queues_for_event_received_while_another_pod_was_in_flight():
    p1, p2, _ = _inflight_pods()
    hints = [(EVENT_ASSIGNED_POD_ADD, "fooPlugin3", hint_skip),
             (EVENT_ASSIGNED_POD_ADD, "fooPlugin2", hint_queue),
             (EVENT_ASSIGNED_POD_ADD, "fooPlugin1", hint_queue)]
    popped = {}

    def enqueue2(q):
        pinfo = popped["p2"]
        pinfo.unschedulable_plugins = {"fooPlugin2", "fooPlugin3"}
        pinfo.pending_plugins = {"fooPlugin1"}
        q.add_unschedulable_if_not_present(pinfo)

    q = _run_inflight(hints, [p1, p2], [
        ("call", lambda q: popped.__setitem__("p1", pop_expect(q, p1))),
        ("event", NODE_ADD),
        ("call", lambda q: popped.__setitem__("p2", pop_expect(q, p2))),
        ("event", EVENT_ASSIGNED_POD_ADD),
        ("call", lambda q: q.add_unschedulable_if_not_present(popped["p1"])),
        ("call", enqueue2),
    ])
    assert names(q.pods_in_active()) == ["targetpod2"]
    assert names(q.pods_in_backoff()) == ["targetpod"]
    assert q.in_flight == {} and q.in_flight_events == []


def test_pop_clears_rejecting_and_gating_plugins():
    """v1.34's unlockedPop clears UnschedulablePlugins, PendingPlugins and the gating plugin
    (later releases keep them for logging; the queue reads none of them before they are set
    again by the failure handler)."""
    p1, _, _ = _inflight_pods()
    q, _ = new_step_queue([(PV_ADD, "fooPlugin1", hint_queue)])
    q.add(p1)
    popped = pop_expect(q, p1)
    popped.pending_plugins = {"fooPlugin1"}
    popped.unschedulable_plugins = {"fooPlugin2"}
    q.add_unschedulable_if_not_present(popped)
    assert where(q, p1) == UNSCHEDULABLE_Q
    q.move_all_to_active_or_backoff(PV_ADD, None, None)  # Pending plugin: activeQ at once
    assert where(q, p1) == ACTIVE_Q
    popped = pop_expect(q, p1)
    assert popped.attempts == 2
    assert popped.unschedulable_plugins == set() and popped.pending_plugins == set()
    assert not popped.gated()
    # failed with no rejecting plugin: backoffQ
    q.add_unschedulable_if_not_present(popped)
    assert where(q, p1) == BACKOFF_Q


def test_pop_twice_for_the_same_pod_is_discarded_and_cleaned_up():
    p1, p2, p3 = _inflight_pods()
    hints = HINTS_FOO1 + [(CSI_NODE_UPDATE, "fooPlugin1", hint_queue)]

    def bug(q):  # a pod put into activeQ while it is being scheduled
        qf.add_active_directly(q, lookup(q, p1))

    def active_is_empty(q):
        assert q.pods_in_active() == []

    q = _run_inflight(hints, [p1, p2], [
        ("event", PVC_ADD), ("pop", p1), ("event", PV_ADD), ("pop", p2),
        ("call", bug), ("create", p3),
        ("pop", p3),  # pod1 is popped first but discarded: it is in flight already
        ("call", active_is_empty),
        ("event", NODE_ADD),
        ("enqueue", lambda q: lookup(q, p1)), ("event", CSI_NODE_UPDATE),
        ("enqueue", lambda q: lookup(q, p2)), ("enqueue", lambda q: lookup(q, p3)),
    ])
    assert names(q.pods_in_backoff()) == ["targetpod", "targetpod2", "targetpod3"]
    assert q.in_flight == {} and q.in_flight_events == []


# ------------------------------------------------------------------------------------------------
# TestPop
# ------------------------------------------------------------------------------------------------
def test_pop_pending_plugin_requeues_immediately():
    pod = make_pod("targetpod", uid="pod1")
    q, _ = new_step_queue([(PV_ADD, "fooPlugin1", hint_queue)])
    q.add(pod)
    popped = pop_expect(q, pod)
    popped.pending_plugins = {"fooPlugin1"}
    q.add_unschedulable_if_not_present(popped)
    q.move_all_to_active_or_backoff(PV_ADD, None, None)
    pop_expect(q, pod)


# ------------------------------------------------------------------------------------------------
# TestPriorityQueue_AddUnschedulableIfNotPresent(_Backoff)
# ------------------------------------------------------------------------------------------------
def test_add_unschedulable_if_not_present():
    q, _ = new_step_queue()
    up, hpn = qf.unschedulable_pod(), qf.high_pri_nominated_pod()
    q.add(up)
    pop_expect(q, up)
    q.add(hpn)
    q.add_unschedulable_if_not_present(lookup(q, up, "plugin"))
    pop_expect(q, hpn)
    assert len(q.nominator.nominated) == 1
    # no event while it was in flight: the unschedulable pool
    assert q.unschedulable[up.uid].pod is up


def test_add_unschedulable_if_not_present_backoff_after_move_request():
    q, _ = new_step_queue()
    pods = [make_pod(f"pod{i}", f"ns{i}", f"upns{i}", priority=i) for i in range(10)]
    for p in pods:
        q.add(p)
    for i in range(9, 0, -1):
        pop_expect(q, pods[i])
    # a move request while they are being scheduled
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    pop_expect(q, pods[0])
    for i in range(1, 10):
        q.add_unschedulable_if_not_present(lookup(q, pods[i], "plugin"))
    for i in range(1, 10):
        assert where(q, pods[i]) == BACKOFF_Q, pods[i].name


def test_add_unschedulable_if_not_present_ignores_pod_already_queued():
    q, _ = new_step_queue()
    pod = qf.high_priority_pod()
    q.add(pod)
    assert q.add_unschedulable_if_not_present(lookup(q, pod, "plugin")) is None
    assert where(q, pod) == ACTIVE_Q


# ------------------------------------------------------------------------------------------------
# TestPriorityQueue_Pop (SchedulerPopFromBackoffQ enabled)
# ------------------------------------------------------------------------------------------------
def test_pop_from_active_then_backoff_never_error_backoff():
    q, _ = new_step_queue()
    mpp, hpp, up = qf.med_priority_pod(), qf.high_priority_pod(), qf.unschedulable_pod()
    hpp2 = make_pod("hpp2", "ns1", "hpp2ns1", HIGH)
    q.add(mpp)
    qf.add_backoff_directly(q, q.new_queued_pod_info(hpp, "plugin"))  # podBackoffQ
    qf.add_backoff_directly(q, q.new_queued_pod_info(hpp2))  # podErrorBackoffQ
    qf.add_unschedulable_directly(q, q.new_queued_pod_info(up, "plugin"))
    got = []
    for _ in range(3):
        p = q.pop()
        if p is None:
            break
        got.append(p.pod.name)
    assert got == ["mpp", "hpp"]


# ------------------------------------------------------------------------------------------------
# TestPriorityQueue_Update, TestPriorityQueue_UpdateWhenInflight
# ------------------------------------------------------------------------------------------------
UPDATE_HINTS = [(EVENT_UNSCHEDULED_POD_UPDATE, "queuePlugin", hint_queue),
                (EVENT_UNSCHEDULED_POD_UPDATE, "skipPlugin", hint_skip)]


def _prep_not_in_queue(q, clock):
    mpp = qf.med_priority_pod()
    return mpp, qf.updated(mpp, annotations={"annot2": "val2", "foo": "test"})


def _prep_add_nominated(q, clock):
    return qf.high_priority_pod(), qf.high_pri_nominated_pod()


def _prep_in_active(q, clock):
    hpp = qf.high_priority_pod()
    q.add(hpp)
    return hpp, hpp


def _prep_in_backoff(q, clock):
    pinfo = q.new_queued_pod_info(qf.med_priority_pod())
    qf.add_backoff_directly(q, pinfo)
    return pinfo.pod, pinfo.pod


def _prep_unsched(plugin, step):
    def prep(q, clock):
        mpp = qf.med_priority_pod()
        pinfo = q.new_queued_pod_info(mpp, plugin)
        pinfo.unschedulable_count += 1
        qf.add_unschedulable_directly(q, pinfo)
        if step:
            clock.step(q.max_backoff)
        return mpp, qf.updated(mpp, annotations={"annot2": "val2", "foo": "test1"})
    return prep


def _prep_in_flight(q, clock):
    mpp = qf.med_priority_pod()
    q.add(mpp)
    pop_expect(q, mpp)
    return mpp, qf.updated(mpp, annotations={"annot2": "val2", "foo": "bar"})


@pytest.mark.parametrize("prep,want_q,want_nominated", [
    (_prep_not_in_queue, ACTIVE_Q, False),
    (_prep_add_nominated, ACTIVE_Q, True),
    (_prep_in_active, ACTIVE_Q, False),
    (_prep_in_backoff, BACKOFF_Q, False),
    (_prep_unsched("queuePlugin", False), BACKOFF_Q, False),  # still backing off
    (_prep_unsched("queuePlugin", True), ACTIVE_Q, False),    # backoff over
    (_prep_unsched("skipPlugin", False), UNSCHEDULABLE_Q, False),  # the hint says QueueSkip
    (_prep_in_flight, None, False),                          # in flight: in no queue
], ids=["not-in-queue", "nominated", "in-active", "in-backoff", "unsched-backing-off",
        "unsched-backoff-expired", "unsched-hint-skips", "in-flight"])
def test_update(prep, want_q, want_nominated):
    q, clock = new_step_queue(UPDATE_HINTS)
    old, new = prep(q, clock)
    q.update(old, new)
    assert where(q, new) == want_q
    if want_q is None:
        return
    assert q.get(new.uid).pod is new
    if want_nominated:
        assert len(q.nominator.nominated) == 1


def test_update_when_in_flight_requeues_on_return():
    q, _ = new_step_queue([(EVENT_UNSCHEDULED_POD_UPDATE, "fakePlugin", hint_queue)])
    pod = make_pod("test-pod", "test-ns", "test-uid")
    q.add(pod)
    pop_expect(q, pod)
    upd = qf.updated(pod, tolerations=[{"key": "foo", "effect": "NoSchedule"}])
    q.update(pod, upd)
    # rejected by fakePlugin, but the update it got meanwhile may help: backoffQ
    q.add_unschedulable_if_not_present(lookup(q, upd, "fakePlugin"))
    assert where(q, upd) == BACKOFF_Q
    assert q.get(upd.uid).pod is upd


def test_update_of_foreign_pod_not_in_queue_is_ignored():
    q, _ = new_step_queue()
    pod = make_pod("other", uid="other")
    pod.raw["spec"]["schedulerName"] = "other-scheduler"
    pod = type(pod)(pod.raw)
    q.update(pod, qf.updated(pod, labels={"a": "b"}))
    assert where(q, pod) is None


# ------------------------------------------------------------------------------------------------
# TestPriorityQueue_Delete
# ------------------------------------------------------------------------------------------------
def test_delete():
    q, _ = new_step_queue()
    hpp, hpn, up = qf.high_priority_pod(), qf.high_pri_nominated_pod(), qf.unschedulable_pod()
    q.update(hpp, hpn)  # in no queue: added to activeQ
    q.add(up)
    q.delete(hpn)
    assert where(q, up) == ACTIVE_Q
    assert where(q, hpn) is None and names(q.pods_in_active()) == ["up"]
    assert len(q.nominator.nominated) == 1
    q.delete(up)
    assert q.nominator.nominated == {}


# ------------------------------------------------------------------------------------------------
# TestPriorityQueue_Activate
# ------------------------------------------------------------------------------------------------
def test_activate_pod_already_in_active():
    q, _ = new_step_queue()
    pod = qf.high_pri_nominated_pod()
    q.add(pod)
    q.activate({"test_pod": pod})
    assert names(q.pods_in_active()) == ["hpp"]


def test_activate_pod_not_in_queue():
    q, _ = new_step_queue()
    q.activate([qf.high_pri_nominated_pod()])
    assert q.pods_in_active() == []


def test_activate_in_flight_pod_records_force_activate():
    q, _ = new_step_queue()
    pod = qf.high_pri_nominated_pod()
    qf.add_active_directly(q, lookup(q, pod))
    pop_expect(q, pod)
    q.activate({"test_pod": pod})
    assert q.pods_in_active() == []
    assert q.in_flight_events_for(pod.uid) == [(EVENT_FORCE_ACTIVATE, None, pod)]


def test_activate_pod_not_in_flight_records_nothing():
    q, _ = new_step_queue()
    mpp = qf.med_priority_pod()
    qf.add_active_directly(q, lookup(q, mpp))
    pop_expect(q, mpp)
    q.activate({"test_pod": qf.high_pri_nominated_pod()})
    assert q.pods_in_active() == [] and q.in_flight_events == []


def test_activate_pod_in_unschedulable():
    q, _ = new_step_queue()
    pod = qf.high_pri_nominated_pod()
    qf.add_unschedulable_directly(q, lookup(q, pod))
    q.activate({"test_pod": pod})
    assert names(q.pods_in_active()) == ["hpp"] and q.unschedulable == {}


def test_activate_pod_in_backoff():
    q, _ = new_step_queue()
    pod = qf.high_pri_nominated_pod()
    qf.add_backoff_directly(q, lookup(q, pod))
    q.activate({"test_pod": pod})
    assert names(q.pods_in_active()) == ["hpp"] and q.pods_in_backoff() == []


def test_activate_from_backoff_runs_pre_enqueue_in_v134():
    """v1.34's moveToActiveQ skips PreEnqueue only for BackoffComplete; ForceActivate runs them."""
    q, _ = new_step_queue(pre_enqueue=[qf.PreEnqueuePlugin(["foo"])])
    pod = make_pod("bar", uid="bar", labels={"bar": ""})
    qf.add_backoff_directly(q, q.new_queued_pod_info(pod))
    q.activate([pod])
    assert where(q, pod) == UNSCHEDULABLE_Q
    assert q.unschedulable[pod.uid].gating_plugin == "preEnqueuePlugin"


@pytest.mark.parametrize("version", ["v1.35", "v1.36"])
def test_activate_from_backoff_skips_pre_enqueue_from_v135(version):
    """v1.35's moveToActiveQ(movesFromBackoffQ): a pod activated straight from the backoffQ
    passed PreEnqueue on entering it, and is not gated again."""
    from harness.versions import resolve
    q, _ = new_step_queue(pre_enqueue=[qf.PreEnqueuePlugin(["foo"])], features=resolve(version))
    pod = make_pod("bar", uid="bar", labels={"bar": ""})
    qf.add_backoff_directly(q, q.new_queued_pod_info(pod))
    q.activate([pod])
    assert names(q.pods_in_active()) == ["bar"]


# ------------------------------------------------------------------------------------------------
# TestPriorityQueue_moveToActiveQ, TestPriorityQueue_moveToBackoffQ (PopFromBackoffQ enabled)
# ------------------------------------------------------------------------------------------------
P_POD = ("p", {"p": ""})
BAR_POD = ("bar", {"bar": ""})


@pytest.mark.parametrize("allow,podspec,event,want_unsched,want_ok", [
    (None, P_POD, "add", 0, True),                 # no plugins registered
    ([], P_POD, "add", 1, False),                  # pod not in the allow list
    (["foo"], BAR_POD, "add", 1, False),           # the plugin kept under the name: allows foo
    (["foo"], BAR_POD, "BackoffComplete", 0, True),  # moved from backoffQ: PreEnqueue not run
    (["foo"], BAR_POD, "ForceActivate", 1, False),  # activated from the unschedulable pool
    (["bar"], BAR_POD, "add", 0, True),            # passes
], ids=["no-plugins", "not-allowed", "fails-one", "backoff-complete", "force-activate", "passes"])
def test_move_to_active_q(allow, podspec, event, want_unsched, want_ok):
    from harness.scheduler.queue import EVENT_UNSCHEDULED_POD_ADD
    pre = [] if allow is None else [qf.PreEnqueuePlugin(allow)]
    q, _ = new_step_queue(pre_enqueue=pre, initial=30, max_backoff=60)
    name, labels = podspec
    pod = make_pod(name, labels=labels)
    ev = EVENT_UNSCHEDULED_POD_ADD if event == "add" else event
    assert q._move_to_active(q.new_queued_pod_info(pod), ev) is want_ok
    assert len(q.unschedulable) == want_unsched
    # an update that changes nothing the gate looks at leaves it where it is
    q.update(pod, qf.updated(pod, annotations={"foo": ""}))
    assert len(q.unschedulable) == want_unsched


@pytest.mark.parametrize("allow,podspec,want_ok", [
    (None, P_POD, True),
    ([], P_POD, False),
    (["foo"], BAR_POD, False),
    (["bar"], BAR_POD, True),
], ids=["no-plugins", "not-allowed", "fails-one", "passes"])
def test_move_to_backoff_q(allow, podspec, want_ok):
    pre = [] if allow is None else [qf.PreEnqueuePlugin(allow)]
    q, _ = new_step_queue(pre_enqueue=pre, initial=30, max_backoff=60)
    name, labels = podspec
    pinfo = q.new_queued_pod_info(make_pod(name, labels=labels))
    assert q._move_to_backoff(pinfo, "UnschedulablePodAdd") is want_ok
    if want_ok:
        assert where(q, pinfo.pod) == BACKOFF_Q and pinfo.pod.uid not in q.unschedulable
    else:
        assert where(q, pinfo.pod) == UNSCHEDULABLE_Q


# ------------------------------------------------------------------------------------------------
# TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint
# ------------------------------------------------------------------------------------------------
def _gated(pinfo, plugin, events):
    """setQueuedPodInfoGated."""
    pinfo.gating_plugin = plugin
    pinfo.unschedulable_plugins = {plugin}
    pinfo.gating_plugin_events = list(events)
    return pinfo


def _hint_must_not_run(pod, old, new):
    raise AssertionError("QueueingHintFn should not be called as pod is gated")


@pytest.mark.parametrize("setup,hint,duration,want_q", [
    (lambda pi: setattr(pi, "pending_plugins", {"foo"}), hint_queue, 0, ACTIVE_Q),
    (lambda pi: setattr(pi, "unschedulable_plugins", {"foo"}), hint_queue, 0, BACKOFF_Q),
    # one failure: 1s backoff, and one more second for the ordering window
    (lambda pi: setattr(pi, "unschedulable_plugins", {"foo"}), hint_queue, 2, ACTIVE_Q),
    (lambda pi: setattr(pi, "unschedulable_plugins", {"foo"}), hint_skip, 0, UNSCHEDULABLE_Q),
    (lambda pi: _gated(pi, "SchedulingGates", [EVENT_UNSCHEDULED_POD_UPDATE]), _hint_must_not_run, 0,
     UNSCHEDULABLE_Q),
    (lambda pi: _gated(pi, "foo", [NODE_ADD]), hint_queue, 0, BACKOFF_Q),
], ids=["pending-to-active", "backing-off-to-backoff", "backoff-over-to-active", "skip",
        "gated-plugin-not-interested", "gated-plugin-interested"])
def test_move_all_with_queueing_hint(setup, hint, duration, want_q):
    from builtin_plugins.scheduling_gates import SchedulingGates
    gates = SchedulingGates(None, None)
    pre = [gates, qf.NamedPreEnqueue("foo", qf.PreEnqueuePlugin(["foo"]))]
    hints = [(NODE_ADD, "foo", hint), (EVENT_UNSCHEDULED_POD_UPDATE, "SchedulingGates", hint_queue)]
    q, clock = new_step_queue(hints, pre)
    pod = make_pod("pod1", "ns1", "1", labels={"foo": "bar"})
    q.add(pod)
    pop_expect(q, pod)
    pinfo = QueuedPodInfo(qf._pod_info(pod), clock.now(), 0)
    setup(pinfo)
    q.add_unschedulable_if_not_present(pinfo)
    clock.step(duration)
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    assert where(q, pod) == want_q


# ------------------------------------------------------------------------------------------------
# TestPriorityQueue_MoveAllToActiveOrBackoffQueue
# ------------------------------------------------------------------------------------------------
def _expect_in_flight(q, *pods):
    assert set(q.in_flight) == {p.uid for p in pods}


def test_move_all_to_active_or_backoff():
    q, clock = new_step_queue([(NODE_ADD, "fooPlugin", hint_queue)], start=0.3)
    up, hpp, mpp = qf.unschedulable_pod(), qf.high_priority_pod(), qf.med_priority_pod()
    q.add(up)
    pop_expect(q, up)
    _expect_in_flight(q, up)
    q.add(hpp)
    pop_expect(q, hpp)
    _expect_in_flight(q, up, hpp)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(up, "fooPlugin"))
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp, "fooPlugin"))
    _expect_in_flight(q)
    hpp1 = qf.clone_pod(hpp, "hpp1")
    q.add(hpp1)
    pop_expect(q, hpp1)
    pinfo = q.new_queued_pod_info(hpp1)
    pinfo.unschedulable_count += 1
    q.add_unschedulable_if_not_present(pinfo)  # no rejecting plugin: backoffQ
    hpp2 = qf.clone_pod(hpp, "hpp2")
    q.add(hpp2)
    pop_expect(q, hpp2)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp2, "barPlugin"))
    _expect_in_flight(q)
    # NodeAdd: fooPlugin's hint moves up and hpp to the backoffQ; hpp2 stays
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    q.add(mpp)
    assert len(q.active) == 1
    pop_expect(q, mpp)
    _expect_in_flight(q, mpp)
    assert len(q.pods_in_backoff()) == 3
    clock.step(q.max_backoff)
    qf.pop_all_backoff_completed(q)  # out of the queue, not in flight
    _expect_in_flight(q, mpp)

    for p in (up, hpp, hpp1):
        q.add(p)
        pop_expect(q, p)
    _expect_in_flight(q, mpp, up, hpp, hpp1)
    hpp1_info = q.new_queued_pod_info(hpp1)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(up, "fooPlugin"))
    _expect_in_flight(q, mpp, hpp, hpp1)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp, "fooPlugin"))
    _expect_in_flight(q, mpp, hpp1)
    q.add_unschedulable_if_not_present(hpp1_info)
    _expect_in_flight(q, mpp)
    q.add(mpp)
    for p in (up, hpp, hpp2):
        assert where(q, p) == UNSCHEDULABLE_Q, p.name
    assert where(q, hpp1) == BACKOFF_Q
    assert len(q.active) == 1
    # after podMaxBackoffDuration every backoff is over
    clock.step(q.max_backoff)
    q.flush_backoff_completed()
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    assert len(q.active) == 4 and q.pods_in_backoff() == []
    _expect_in_flight(q, mpp)
    assert list(q.unschedulable) == [hpp2.uid]  # barPlugin is not interested in NodeAdd


# ------------------------------------------------------------------------------------------------
# TestPriorityQueue_NominatedPodsForNode, _NominatedPodDeleted, _UpdateNominatedPodForNode
# ------------------------------------------------------------------------------------------------
def test_nominated_pods_for_node():
    q, _ = new_step_queue()
    mpp, up, hpp = qf.med_priority_pod(), qf.unschedulable_pod(), qf.high_priority_pod()
    for p in (mpp, up, hpp):
        q.add(p)
    pop_expect(q, hpp)
    got = q.nominator.nominated_pods_for_node("node1")
    assert [pi.pod.name for pi in got] == ["mpp", "up"]
    got.pop()  # a copy
    assert len(q.nominator.nominated_pods_for_node("node1")) == 2
    assert q.nominator.nominated_pods_for_node("node2") == []


def _lister(*pods):
    store = {(p.namespace, p.name): p for p in pods}
    return lambda ns, name: store.get((ns, name))


@pytest.mark.parametrize("pod,in_lister,want", [
    (qf.med_priority_pod(), True, 1),          # alive pod gets added
    (qf.high_pri_nominated_pod(), False, 0),   # deleted pod is not
    (qf.high_priority_pod(), True, 0),         # no status.nominatedNodeName: not added
], ids=["alive", "deleted", "no-nominated-node-name"])
def test_nominated_pod_deleted(pod, in_lister, want):
    from harness.framework.types import PodInfo
    n = Nominator(_lister(pod) if in_lister else _lister())
    n.add_nominated_pod(PodInfo.of(pod), None)
    assert len(n.nominated_pods_for_node(pod.nominated_node_name)) == want


def _nominator_state(n):
    return ({uid: node for uid, node in n.pod_to_node.items()},
            {node: [pi.pod.name for pi in lst] for node, lst in n.nominated.items()})


def test_update_nominated_pod_for_node():
    from harness.framework.types import PodInfo
    mpp, up, hpp, sp = (qf.med_priority_pod(), qf.unschedulable_pod(), qf.high_priority_pod(),
                        qf.scheduled_pod())
    q, _ = new_step_queue()
    q.nominator.pod_lister = _lister(mpp, up, hpp, sp)
    q.add(mpp)
    q.nominator.add_nominated_pod(PodInfo.of(up), ("ModeOverride", "node5"))
    q.nominator.add_nominated_pod(PodInfo.of(hpp), ("ModeOverride", "node2"))
    want = ({mpp.uid: "node1", hpp.uid: "node2", up.uid: "node5"},
            {"node1": ["mpp"], "node2": ["hpp"], "node5": ["up"]})
    assert _nominator_state(q.nominator) == want
    pop_expect(q, mpp)
    assert _nominator_state(q.nominator) == want
    q.nominator.add_nominated_pod(PodInfo.of(hpp), ("ModeOverride", "node4"))
    want = ({mpp.uid: "node1", hpp.uid: "node4", up.uid: "node5"},
            {"node1": ["mpp"], "node4": ["hpp"], "node5": ["up"]})
    assert _nominator_state(q.nominator) == want
    # a pod the informer does not know, and a pod already scheduled there, are not nominated
    q.nominator.add_nominated_pod(PodInfo.of(qf.non_existent_pod()), ("ModeOverride", "node1"))
    assert _nominator_state(q.nominator) == want
    unbound_copy = make_pod("sp", "ns1", "spns1")
    q.nominator.add_nominated_pod(PodInfo.of(unbound_copy), ("ModeOverride", "node1"))
    assert _nominator_state(q.nominator) == want
    q.nominator.delete(hpp)
    assert _nominator_state(q.nominator) == ({mpp.uid: "node1", up.uid: "node5"},
                                             {"node1": ["mpp"], "node5": ["up"]})


def test_update_nominated_pod_keeps_in_memory_nomination_without_status():
    """UpdateNominatedPod: neither version carries a nominatedNodeName, so the in-memory one
    (set by preemption) stays; a version that carries one is followed."""
    from harness.framework.types import PodInfo
    n = Nominator()
    hpp = qf.high_priority_pod()
    n.add(PodInfo.of(hpp), "node3")
    relabelled = qf.updated(hpp, labels={"a": "b"})
    n.update(hpp, PodInfo.of(relabelled))
    assert n.pod_to_node == {hpp.uid: "node3"}
    nominated = qf.updated(relabelled, nominated="node9")
    n.update(relabelled, PodInfo.of(nominated))
    assert n.pod_to_node == {hpp.uid: "node9"}
    cleared = qf.updated(nominated, nominated="")
    cleared.raw["status"].pop("nominatedNodeName")
    cleared = type(cleared)(cleared.raw)
    n.update(nominated, PodInfo.of(cleared))
    assert n.nominated == {} and n.pod_to_node == {}


def test_add_of_pod_without_nominated_node_name_drops_in_memory_nomination():
    """AddNominatedPod with no nominating info deletes first, then adds only from the status."""
    from harness.framework.types import PodInfo
    n = Nominator()
    hpp = qf.high_priority_pod()
    n.add(PodInfo.of(hpp), "node3")
    n.add_from_status(PodInfo.of(hpp))
    assert n.nominated == {}


# ------------------------------------------------------------------------------------------------
# TestPriorityQueue_PendingPods
# ------------------------------------------------------------------------------------------------
def _summary(q):
    return len(q.active), len(q.backoff) + len(q.error_backoff), len(q.unschedulable)


def test_pending_pods():
    q, _ = new_step_queue()
    up, hpp, mpp = qf.unschedulable_pod(), qf.high_priority_pod(), qf.med_priority_pod()
    q.add(up)
    pop_expect(q, up)
    q.add(hpp)
    pop_expect(q, hpp)
    q.add(mpp)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(up, "plugin"))
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp, "plugin"))
    assert {p.pod.name for p in q.pending_pods()} == {"mpp", "up", "hpp"}
    assert _summary(q) == (1, 0, 2)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    assert {p.pod.name for p in q.pending_pods()} == {"mpp", "up", "hpp"}
    assert _summary(q) == (1, 2, 0)


# ------------------------------------------------------------------------------------------------
# TestRecentlyTriedPodsGoBack, TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod,
# TestHighPriorityBackoff, TestHighPriorityFlushUnschedulablePodsLeftover
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("step", [1e-6, 0.0], ids=["clock-steps", "same-virtual-instant"])
def test_recently_tried_pods_go_back(step):
    q, clock = new_step_queue()
    for i in range(5):
        q.add(make_pod(f"test-pod-{i}", "ns1", f"tp00{i}", HIGH, nominated="node1", node="node1"))
    clock.step(step)
    p1 = q.pop()
    p1.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(p1)
    clock.step(q.max_backoff)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    for i in range(5):
        p = q.pop()
        assert (i == 4) == (p is p1), f"pop {i}: {p.pod.name}"


def test_pod_failed_multiple_times_does_not_block_newer_pod():
    q, clock = new_step_queue()
    unsched = make_pod("test-pod-unscheduled", "ns1", "tp001", HIGH, nominated="node1",
                       unschedulable_condition=True)
    q.add(unsched)
    pop_expect(q, unsched)
    q.add_unschedulable_if_not_present(lookup(q, unsched, "plugin"))
    clock.step(1.0 + 1.0)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    pop_expect(q, unsched)
    newer = make_pod("test-newer-pod", "ns1", "tp002", HIGH, nominated="node1")
    q.add(newer)
    q.add_unschedulable_if_not_present(lookup(q, unsched, "plugin"))
    clock.step(1.0 + 1.0)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    pop_expect(q, newer)


def test_high_priority_backoff_does_not_block_others():
    q, _ = new_step_queue()
    mid = make_pod("test-midpod", "ns1", "tp-mid", MID, nominated="node1")
    high = make_pod("test-highpod", "ns1", "tp-high", HIGH, nominated="node1")
    q.add(mid)
    q.add(high)
    p = pop_expect(q, high)
    q.add_unschedulable_if_not_present(lookup(q, p.pod, "fooPlugin"))
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    pop_expect(q, mid)  # high is in the backoffQ


def test_flush_unschedulable_pods_leftover_keeps_priority_order():
    q, clock = new_step_queue([(NODE_ADD, "fakePlugin", hint_queue)])
    mid = make_pod("test-midpod", "ns1", "tp-mid", MID, nominated="node1", unschedulable_condition=True)
    high = make_pod("test-highpod", "ns1", "tp-high", HIGH, nominated="node1", unschedulable_condition=True)
    q.add(high)
    pop_expect(q, high)
    q.add(mid)
    pop_expect(q, mid)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(high, "fakePlugin"))
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(mid, "fakePlugin"))
    clock.step(300 + 1)
    q.flush_unschedulable_pods_leftover()
    pop_expect(q, high)
    pop_expect(q, mid)


def test_flush_unschedulable_pods_leftover_only_old_pods():
    """TestPriorityQueue_initPodMaxInUnschedulablePodsDuration: pods in the pool longer than
    podMaxInUnschedulablePodsDuration (5 minutes by default) move, in QueueSort order."""
    q, clock = new_step_queue(start=1000.0)
    p1 = make_pod("test-pod-1", "ns1", "tp-1", nominated="node1")
    p2 = make_pod("test-pod-2", "ns2", "tp-2", nominated="node2")
    i1 = QueuedPodInfo(qf._pod_info(p1), 999.0, 0)
    i2 = QueuedPodInfo(qf._pod_info(p2), 998.0, 1)
    for pi in (i1, i2):
        pi.unschedulable_count += 1
        qf.add_unschedulable_directly(q, pi)
    clock.step(300)
    q.flush_unschedulable_pods_leftover()
    assert [q.pop().pod.name for _ in range(2)] == ["test-pod-2", "test-pod-1"]
    q2, clock2 = new_step_queue(start=1000.0)
    q2.max_in_unschedulable = 30.0
    young = QueuedPodInfo(qf._pod_info(p1), 999.0, 0)
    young.unschedulable_plugins = {"x"}
    qf.add_unschedulable_directly(q2, young)
    clock2.step(30)  # 31s > 30s
    q2.flush_unschedulable_pods_leftover()
    assert where(q2, p1) == ACTIVE_Q


# ------------------------------------------------------------------------------------------------
# TestPodTimestamp
# ------------------------------------------------------------------------------------------------
def _ts_infos():
    p1 = make_pod("test-pod-1", "ns1", "tp-1", nominated="node1")
    p2 = make_pod("test-pod-2", "ns2", "tp-2", nominated="node2")
    return QueuedPodInfo(qf._pod_info(p1), 0.0, 0), QueuedPodInfo(qf._pod_info(p2), 1.0, 1)


def _pop_all(q):
    out = []
    while q.active:
        out.append(q.pop())
    return out


def test_pod_timestamp_active_q_sorted_by_timestamp():
    q, _ = new_step_queue()
    i1, i2 = _ts_infos()
    qf.add_active_directly(q, i2)
    qf.add_active_directly(q, i1)
    assert _pop_all(q) == [i1, i2]


def test_pod_timestamp_from_unschedulable_sorted_by_timestamp():
    q, clock = new_step_queue()
    i1, i2 = _ts_infos()
    for pi in (i2, i1):
        pi.unschedulable_count += 1
        qf.add_unschedulable_directly(q, pi)
    clock.step(3)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    assert _pop_all(q) == [i1, i2]


def test_pod_timestamp_from_backoff_sorted_by_timestamp():
    q, clock = new_step_queue()
    i1, i2 = _ts_infos()
    qf.add_active_directly(q, i2)
    qf.add_backoff_directly(q, i1)
    clock.step(3)
    q.flush_backoff_completed()
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    assert _pop_all(q) == [i1, i2]


# ------------------------------------------------------------------------------------------------
# TestPerPodSchedulingMetrics (attempts and the initial attempt timestamp)
# ------------------------------------------------------------------------------------------------
def test_per_pod_metrics_one_attempt():
    q, _ = new_step_queue(start=5.0)
    pod = make_pod("test-pod", "test-ns", "test-uid")
    q.add(pod)
    p = q.pop()
    assert p.attempts == 1 and p.initial_attempt_timestamp == 5.0


def test_per_pod_metrics_two_attempts_with_and_without_update():
    for with_update in (False, True):
        q, clock = new_step_queue(start=5.0)
        pod = make_pod("test-pod", "test-ns", "test-uid")
        q.add(pod)
        p = q.pop()
        p.unschedulable_plugins = {"plugin"}
        q.add_unschedulable_if_not_present(p)
        clock.t = 5.0 + 300 + 1e-9
        q.flush_unschedulable_pods_leftover()
        if with_update:
            q.update(pod, qf.updated(pod))
        p = q.pop()
        assert p.attempts == 2 and p.initial_attempt_timestamp == 5.0


def test_per_pod_metrics_gated_pod_initial_attempt_when_ungated():
    pre = qf.PreEnqueuePlugin(["foo"])
    q, clock = new_step_queue([(EVENT_UNSCHEDULED_POD_UPDATE, "preEnqueuePlugin", hint_queue)], [pre],
                              start=5.0)
    pod = make_pod("test-pod", "test-ns", "test-uid")
    q.add(pod)
    assert q.unschedulable[pod.uid].pod is pod
    clock.step(60)
    q.update(pod, qf.updated(pod, labels={"foo": ""}))
    p = q.pop()
    assert p.attempts == 1 and p.initial_attempt_timestamp == 65.0


# ------------------------------------------------------------------------------------------------
# TestBackOffFlow, TestBackoffQueue_calculateBackoffDuration, TestBackoffQueue_popEachBackoffCompleted,
# TestBackoffQueueOrdering
# ------------------------------------------------------------------------------------------------
def test_backoff_flow():
    q, clock = new_step_queue(start=0.3)  # a real clock is not on the second
    pod = make_pod("test-pod", "test-ns", "test-uid")
    q.add(pod)
    for i, want in enumerate([1, 2, 4, 8, 10, 10, 10]):
        timestamp = clock.now()
        p = q.pop()
        assert p.attempts == i + 1
        p.unschedulable_plugins.add("unsched-plugin")
        q.add_unschedulable_if_not_present(p)
        q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
        assert where(q, pod) == BACKOFF_Q
        # the expiration is truncated to the second; the pod leaves on the next flush
        backoff = int(p.backoff_expiration - timestamp) + 1
        assert backoff == want, f"step {i}"
        clock.step(1.0)
        q.flush_backoff_completed()
        assert where(q, pod) == BACKOFF_Q  # an early flush keeps it
        clock.step(backoff)
        q.flush_backoff_completed()
        assert where(q, pod) == ACTIVE_Q


@pytest.mark.parametrize("initial_ns,max_ns,count,want_ns", [
    (1, 32, 0, 0),
    (1, 32, 16, 32),
    (1, 2**31 - 1, 32, 2**31 - 1),
    (1, 2**63 - 1, 64, 2**63),  # MaxInt64 ns as float seconds is 2^63 ns
], ids=["no-backoff", "normal", "overflow_32bit", "overflow_64bit"])
def test_calculate_backoff_duration(initial_ns, max_ns, count, want_ns):
    q, _ = new_step_queue(initial=initial_ns / 1e9, max_backoff=max_ns / 1e9)
    assert q.calculate_backoff_duration(count) == want_ns / 1e9


def test_calculate_backoff_duration_defaults():
    q, _ = new_step_queue()
    assert [q.calculate_backoff_duration(c) for c in range(1, 8)] == [1, 2, 4, 8, 10, 10, 10]


def _bq_infos(now):
    def qpi(name, ts, plugin):
        pi = QueuedPodInfo(qf._pod_info(make_pod(name, uid=name)), ts, 0)
        if plugin:
            pi.unschedulable_plugins = {"plugin"}
            pi.unschedulable_count = 1
        else:
            pi.consecutive_errors_count = 1
        pi.attempts = 1
        return pi
    return {"pod0": qpi("pod0", now - 2, True), "pod1": qpi("pod1", now + 1, True),
            "pod2": qpi("pod2", now - 2, False), "pod3": qpi("pod3", now + 1, False)}


@pytest.mark.parametrize("in_backoff,want", [
    ([], []),
    (["pod0", "pod1"], ["pod0"]),
    (["pod2", "pod3"], ["pod2"]),
    (["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"]),
    (["pod0", "pod2"], ["pod0", "pod2"]),
    (["pod1", "pod3"], []),
])
def test_pop_each_backoff_completed(in_backoff, want):
    q, clock = new_step_queue(start=10.5)
    infos = _bq_infos(clock.now())
    for name in in_backoff:
        qf.add_backoff_directly(q, infos[name])
    got = [p.pod.name for p in qf.pop_all_backoff_completed(q)]
    assert got == want
    assert len(q.pods_in_backoff()) == len(in_backoff) - len(want)


def test_backoff_queue_ordering_within_window_by_priority():
    q, clock = new_step_queue(start=100.0)  # aligned with the ordering window
    now = clock.now()
    spec = [("pod0", 1, now), ("pod1", 1, now - 1), ("pod2", 2, now - 2 + 0.001),
            ("pod3", 1, now - 2), ("pod4", 2, now - 2), ("pod5", 1, now - 3)]
    for i, (name, prio, ts) in enumerate(spec):
        pi = QueuedPodInfo(qf._pod_info(make_pod(name, uid=name, priority=prio)), ts, i)
        pi.unschedulable_plugins = {"plugin"}
        pi.unschedulable_count = 1
        qf.add_backoff_directly(q, pi)
    assert [p.pod.name for p in qf.pop_all_backoff_completed(q)] == ["pod5", "pod4", "pod2", "pod3"]


def test_error_backoff_released_by_the_flush_after_its_window():
    """A pod that failed with no rejecting plugin waits in the error backoffQ (Pop does not take
    it); when nothing else can be popped, virtual time passes to the flush that releases it:
    expiration floor(t + 1s), released on the next whole second."""
    q, clock = new_step_queue(start=0.0)
    pod = make_pod("err", uid="err")
    q.add(pod)
    p = q.pop()
    q.add_unschedulable_if_not_present(p)
    assert [t[2] for t in q.error_backoff] == [p] and q.pop() is None
    assert q.next_error_backoff_release() == 2.0
    q.flush_backoff_completed()
    assert where(q, pod) != ACTIVE_Q  # not yet: the run loop lets time pass first
    clock.advance_to(q.next_error_backoff_release())
    q.flush_backoff_completed()
    assert where(q, pod) == ACTIVE_Q


def test_align_to_window():
    assert align_to_window(3.7) == 3.0 and align_to_window(4.0) == 4.0 and align_to_window(0.3) == 0.0


# ------------------------------------------------------------------------------------------------
# TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks
# ------------------------------------------------------------------------------------------------
def _never(pod):
    raise AssertionError("preCheck shouldn't be called")


@pytest.mark.parametrize("event,check,want", [
    (EVENT_UNSCHEDULABLE_TIMEOUT, None, {"p0", "p1", "p2", "p3", "p4"}),
    (EVENT_UNSCHEDULABLE_TIMEOUT, lambda p: p.priority >= 2, {"p2", "p3", "p4"}),
    (EVENT_UNSCHEDULABLE_TIMEOUT, lambda p: p.priority % 2 == 0 and p.priority >= 2, {"p2", "p4"}),
    (EVENT_UNSCHEDULABLE_TIMEOUT, lambda p: p.priority % 2 == 0 and p.priority < 0, set()),
    (PV_ADD, _never, set()),  # no plugin is interested in the event: no pre-check
], ids=["nil", "ge-2", "even-ge-2", "even-negative", "not-interested"])
def test_move_all_pre_enqueue_checks(event, check, want):
    q, clock = new_step_queue(start=50.0)
    for i in range(5):
        pod = make_pod(f"p{i}", uid=f"p{i}", priority=i)
        q.add(pod)
        p = pop_expect(q, pod)
        p.unschedulable_plugins = {"plugin"}
        q.add_unschedulable_if_not_present(p)
    q.move_all_to_active_or_backoff(event, None, None, check)
    clock.step(2 * q.max_backoff)
    assert {p.pod.name for p in qf.pop_all_backoff_completed(q)} == want


# ------------------------------------------------------------------------------------------------
# Test_isPodWorthRequeuing
# ------------------------------------------------------------------------------------------------
NODE_UPDATE_LABEL = ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel)


def _worth_cases(h):
    pod = make_pod("pod1", "ns1", "1")
    other = make_pod("pod-different", "ns2", "2")
    return [
        # no hint function registered for the event
        ({"fooPlugin1"}, set(), NODE_ADD, None,
         [(EVENT_ASSIGNED_POD_ADD, "fooPlugin1", h.queue)], Strategy.QUEUE_SKIP, 0),
        # a hint that returns an error counts as Queue
        ({"fooPlugin1"}, set(), NODE_ADD, None,
         [(NODE_ADD, "fooPlugin1", h.err)], Strategy.QUEUE_AFTER_BACKOFF, 1),
        ({"fooPlugin1"}, set(), EVENT_UNSCHEDULABLE_TIMEOUT, None, [], Strategy.QUEUE_AFTER_BACKOFF, 0),
        ({"fooPlugin1"}, set(), EVENT_FORCE_ACTIVATE, pod, [], Strategy.QUEUE_AFTER_BACKOFF, 0),
        ({"fooPlugin1"}, set(), EVENT_FORCE_ACTIVATE, other, [], Strategy.QUEUE_SKIP, 0),
        # Queue from a Pending plugin is queueImmediately
        ({"fooPlugin1", "fooPlugin3"}, {"fooPlugin2"}, NODE_ADD, None,
         [(NODE_ADD, "fooPlugin1", h.queue), (NODE_ADD, "fooPlugin2", h.queue),
          (NODE_ADD, "fooPlugin3", h.queue), (NODE_ADD, "fooPlugin4", h.err)],
         Strategy.QUEUE_IMMEDIATELY, 2),
        # Queue from an unschedulable plugin is queueAfterBackoff
        ({"fooPlugin1", "fooPlugin2"}, set(), NODE_ADD, None,
         [(NODE_ADD, "fooPlugin1", h.skip), (NODE_ADD, "fooPlugin2", h.queue)],
         Strategy.QUEUE_AFTER_BACKOFF, 2),
        # hints of plugins that did not reject the pod are not run
        ({"fooPlugin1", "fooPlugin2"}, set(), NODE_ADD, None,
         [(NODE_ADD, "fooPlugin1", h.skip), (NODE_ADD, "fooPlugin2", h.skip),
          (NODE_ADD, "fooPlugin3", h.queue)], Strategy.QUEUE_SKIP, 2),
        # a specific Node update also runs hints registered for it (and stops at the first Queue)
        ({"fooPlugin1", "fooPlugin2"}, set(), NODE_UPDATE_LABEL, None,
         [(NODE_UPDATE_LABEL, "fooPlugin1", h.queue), (NODE_UPDATE_LABEL, "fooPlugin2", h.queue),
          (ClusterEvent(EventResource.Node, ActionType.Update), "fooPlugin1", h.queue),
          (NODE_ADD, "fooPlugin1", h.queue)], Strategy.QUEUE_AFTER_BACKOFF, 1),
        # a '*' resource registration matches a Node event
        ({"fooPlugin1"}, set(), NODE_ADD, None,
         [(ClusterEvent(EventResource.WildCard, ActionType.Add), "fooPlugin1", h.queue)],
         Strategy.QUEUE_AFTER_BACKOFF, 1),
        # a wildcard registration matches every event
        ({"fooPlugin1"}, set(),
         ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint), None,
         [(ClusterEvent(EventResource.WildCard, ActionType.All), "fooPlugin1", h.queue)],
         Strategy.QUEUE_AFTER_BACKOFF, 1),
    ], pod


@pytest.mark.parametrize("idx", range(11))
def test_is_pod_worth_requeuing(idx):
    h = qf.CountingHints()
    cases, pod = _worth_cases(h)
    unsched, pending, event, new_obj, hints, want, want_count = cases[idx]
    q, _ = new_step_queue(hints)
    pinfo = QueuedPodInfo(qf._pod_info(pod), 0.0, 0)
    pinfo.unschedulable_plugins = set(unsched)
    pinfo.pending_plugins = set(pending)
    assert q.is_pod_worth_requeuing(pinfo, event, None, new_obj) == want
    assert h.count == want_count


def test_is_pod_worth_requeuing_with_no_rejecting_plugin():
    q, _ = new_step_queue()
    pinfo = QueuedPodInfo(qf._pod_info(make_pod("p")), 0.0, 0)
    assert q.is_pod_worth_requeuing(pinfo, NODE_ADD, None, None) == Strategy.QUEUE_AFTER_BACKOFF


# ------------------------------------------------------------------------------------------------
# MatchClusterEvents (framework/types.go) as the queue applies it, and buildQueueingHintMap
# ------------------------------------------------------------------------------------------------
POD = EventResource.Pod


@pytest.mark.parametrize("ce,incoming,want", [
    (ClusterEvent(EventResource.Node, ActionType.Update), NODE_UPDATE_LABEL, True),
    (NODE_UPDATE_LABEL, ClusterEvent(EventResource.Node, ActionType.Update), False),
    (ClusterEvent(POD, ActionType.UpdatePodLabel), EVENT_UNSCHEDULED_POD_UPDATE, False),
    (ClusterEvent(POD, ActionType.UpdatePodLabel),
     ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodLabel), True),
    (ClusterEvent(POD, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete),
     EVENT_ASSIGNED_POD_ADD, True),
    (ClusterEvent(EventResource.WildCard, ActionType.All), NODE_ADD, True),
    (ClusterEvent(EventResource.Node, ActionType.All), EVENT_UNSCHEDULABLE_TIMEOUT, False),
    (ClusterEvent(EventResource.Node, ActionType.Add), PV_ADD, False),
], ids=["general-registered-specific-incoming", "specific-registered-general-incoming",
        "pod-label-vs-general-pod-update", "pod-matches-assigned-pod", "combined-actions",
        "wildcard-registered", "wildcard-incoming", "other-resource"])
def test_match_cluster_events(ce, incoming, want):
    assert match_cluster_events(ce, incoming) is want


def test_node_add_registration_also_registers_node_taint_update():
    """buildQueueingHintMap: a plugin registering Node/Add but not Node/UpdateNodeTaint is
    requeued by taint updates too, with the default hint (kubernetes#109437)."""
    q, _ = new_step_queue([(NODE_ADD, "fooPlugin", hint_skip),
                           (ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
                            "barPlugin", hint_skip)])
    taint = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)
    assert [(e, p) for e, p, fn in q.hint_map[qf.PROFILE] if fn is None] == [(taint, "fooPlugin")]
    pinfo = QueuedPodInfo(qf._pod_info(make_pod("p")), 0.0, 0)
    pinfo.unschedulable_plugins = {"fooPlugin"}
    assert q.is_pod_worth_requeuing(pinfo, taint, None, None) == Strategy.QUEUE_AFTER_BACKOFF
    pinfo.unschedulable_plugins = {"barPlugin"}
    assert q.is_pod_worth_requeuing(pinfo, taint, None, None) == Strategy.QUEUE_SKIP


# ------------------------------------------------------------------------------------------------
# Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate, gated pods and their events
# ------------------------------------------------------------------------------------------------
def _gates_queue():
    from builtin_plugins.scheduling_gates import SchedulingGates
    gates = SchedulingGates(None, None)
    hints = [(ev.event, "SchedulingGates", ev.queueing_hint_fn) for ev in gates.events_to_register()]
    return new_step_queue(hints, [gates])


def test_gated_set_upon_creation_and_unset_upon_update():
    q, _ = _gates_queue()
    gated = make_pod("p", uid="p", gates=["hello world"])
    q.add(gated)
    assert q.unschedulable[gated.uid].gated()
    ungated = qf.updated(gated, gates=[])
    q.update(gated, ungated)
    p = q.pop()
    assert p is not None and not p.gated() and p.pod is ungated


def test_gated_pod_stays_on_updates_that_keep_a_gate_and_on_other_events():
    q, _ = _gates_queue()
    gated = make_pod("p", uid="p", gates=["a", "b"])
    q.add(gated)
    one_gate = qf.updated(gated, gates=["b"], labels={"x": "y"})
    q.update(gated, one_gate)
    assert where(q, gated) == UNSCHEDULABLE_Q
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    q.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD, None, make_pod("x", node="n"))
    assert where(q, gated) == UNSCHEDULABLE_Q
    q.update(one_gate, qf.updated(one_gate, gates=[]))
    assert where(q, gated) == ACTIVE_Q


def test_gated_pod_is_moved_only_by_its_gating_plugin_events():
    """A pod gated by a plugin registered for NodeAdd moves on NodeAdd (and passes PreEnqueue
    once allowed); an event only another plugin registered leaves it gated."""
    allow = qf.PreEnqueuePlugin(["ok"])
    q, _ = new_step_queue([(NODE_ADD, "preEnqueuePlugin", hint_queue),
                           (PV_ADD, "other", hint_queue)], [allow])
    pod = make_pod("p", uid="p")
    q.add(pod)
    pinfo = q.unschedulable[pod.uid]
    assert pinfo.gating_plugin == "preEnqueuePlugin"
    assert pinfo.gating_plugin_events == [NODE_ADD, ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)]
    pinfo.unschedulable_plugins.add("other")
    q.move_all_to_active_or_backoff(PV_ADD, None, None)
    assert where(q, pod) == UNSCHEDULABLE_Q
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)  # still not allowed: PreEnqueue gates again
    assert where(q, pod) == UNSCHEDULABLE_Q and q.unschedulable[pod.uid].gated()
    pod_ok = qf.updated(pod, labels={"ok": ""})  # now admitted (set without an Update event)
    q.unschedulable[pod.uid].pod_info = qf._pod_info(pod_ok)
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    assert where(q, pod) == ACTIVE_Q


def test_pre_enqueue_rejection_adds_to_unschedulable_plugins():
    """runPreEnqueuePlugin inserts the gating plugin into UnschedulablePlugins (it does not
    replace the plugins of the last attempt)."""
    allow = qf.PreEnqueuePlugin(["ok"])
    q, _ = new_step_queue([(NODE_ADD, "fit", hint_queue)], [allow])
    pod = make_pod("p", uid="p", labels={"ok": ""})
    q.add(pod)
    p = pop_expect(q, pod)
    p.unschedulable_plugins = {"fit"}
    allow.allowlists = []
    q.add_unschedulable_if_not_present(p)
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    assert where(q, pod) == UNSCHEDULABLE_Q
    assert q.unschedulable[pod.uid].unschedulable_plugins == {"fit", "preEnqueuePlugin"}


# ------------------------------------------------------------------------------------------------
# Update and the nominator: nominatedNodeName changes
# ------------------------------------------------------------------------------------------------
def test_update_follows_nominated_node_name_changes():
    q, _ = new_step_queue()
    mpp = qf.med_priority_pod()  # nominated to node1
    q.add(mpp)
    moved = qf.updated(mpp, nominated="node2")
    q.update(mpp, moved)
    assert q.nominator.pod_to_node == {mpp.uid: "node2"}
    assert [pi.pod for pi in q.nominator.nominated_pods_for_node("node2")] == [moved]
    cleared = qf.updated(moved, nominated="")
    cleared.raw["status"].pop("nominatedNodeName")
    cleared = type(cleared)(cleared.raw)
    q.update(moved, cleared)
    assert q.nominator.nominated == {}


def test_update_of_in_flight_pod_leaves_the_nominator_alone():
    """v1.34: an in-flight pod's update only records its events (Update returns early)."""
    q, _ = new_step_queue()
    mpp = qf.med_priority_pod()
    q.add(mpp)
    pop_expect(q, mpp)
    q.update(mpp, qf.updated(mpp, nominated="node7"))
    assert q.nominator.pod_to_node == {mpp.uid: "node1"}
    assert [e for e, _, _ in q.in_flight_events_for(mpp.uid)] == [EVENT_UNSCHEDULED_POD_UPDATE]


# ------------------------------------------------------------------------------------------------
# with a real Framework: a plugin without EventsToRegister (UnrollWildCardResource)
# ------------------------------------------------------------------------------------------------
def _real_framework_queue():
    from harness.framework.registry import default_registry
    from harness.framework.runtime import Framework
    from harness.scheduler.scheduler import VirtualClock
    import schedharness_sample_plugins as sample
    reg = dict(default_registry())
    reg["GpuFirst"] = sample.GpuFirst
    fw = Framework({"schedulerName": qf.PROFILE, "plugins": {
        "queueSort": {"enabled": [{"name": "PrioritySort"}]},
        "filter": {"enabled": [{"name": "GpuFirst"}]},
        "bind": {"enabled": [{"name": "DefaultBinder"}]}}}, reg)
    from harness.scheduler.queue import SchedulingQueue
    return SchedulingQueue({qf.PROFILE: fw}, VirtualClock(0.0))


def test_plugin_without_events_to_register_is_requeued_by_its_unrolled_events():
    q = _real_framework_queue()
    pod = make_pod("gpu", uid="gpu")
    q.add(pod)
    p = pop_expect(q, pod)
    p.unschedulable_plugins = {"GpuFirst"}
    q.add_unschedulable_if_not_present(p)
    assert where(q, pod) == UNSCHEDULABLE_Q
    # ResourceSlice is not in UnrollWildCardResource: no plugin is interested
    q.move_all_to_active_or_backoff(ClusterEvent(EventResource.ResourceSlice, ActionType.Add), None, None)
    assert where(q, pod) == UNSCHEDULABLE_Q
    # Node/All covers NodeAdd (default hint Queue); still backing off: backoffQ
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)
    assert where(q, pod) == BACKOFF_Q


def test_status_only_update_requeues_pod_of_plugin_registered_for_all_pod_updates():
    """A status-only change is a general UnschedulablePod/Update: it matches Pod/All (a plugin
    without EventsToRegister), and no in-tree registration of a specific Pod update."""
    q = _real_framework_queue()
    pod = make_pod("gpu", uid="gpu")
    q.add(pod)
    p = pop_expect(q, pod)
    p.unschedulable_plugins = {"GpuFirst"}
    q.add_unschedulable_if_not_present(p)
    new = qf.updated(pod)
    new.raw["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    new = type(new)(new.raw)
    q.update(pod, new)
    assert where(q, pod) == BACKOFF_Q


# ------------------------------------------------------------------------------------------------
# found elsewhere
# ------------------------------------------------------------------------------------------------
def test_cluster_event_match_in_types_rejects_general_incoming_update():
    ce = ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel)
    assert not ce.match(EVENT_UNSCHEDULED_POD_UPDATE)
