"""schedulinggates/scheduling_gates_test.go: TestPreEnqueue, Test_isSchedulableAfterPodChange."""

from __future__ import annotations

from builtin_plugins.scheduling_gates import SchedulingGates
from harness.api.objects import Pod
from harness.framework import ActionType, Code, EventResource, QueueingHint, Status


def pod(gates=(), uid="uid0"):
    spec = {"containers": [{"name": "c"}]}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": uid},
                "spec": spec})


def test_pre_enqueue():
    pl = SchedulingGates(None, None)
    assert pl.pre_enqueue(pod()) is None
    st = pl.pre_enqueue(pod(["foo", "bar"]))
    assert st == Status.unresolvable("waiting for scheduling gates: [foo bar]")
    assert st.code == Code.UnschedulableAndUnresolvable
    assert pl.pre_enqueue(pod(["foo"])).message() == "waiting for scheduling gates: [foo]"


def test_hint():
    pl = SchedulingGates(None, None)
    target = pod(["foo"])
    assert pl.is_schedulable_after_update_pod_scheduling_gates_eliminated(
        target, pod(["foo"], uid="other"), pod([], uid="other")) == QueueingHint.QueueSkip
    assert pl.is_schedulable_after_update_pod_scheduling_gates_eliminated(
        target, target, pod([])) == QueueingHint.Queue


def test_events_to_register():
    evs = SchedulingGates(None, None).events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in evs] == [
        (EventResource.Pod, ActionType.UpdatePodSchedulingGatesEliminated)]
