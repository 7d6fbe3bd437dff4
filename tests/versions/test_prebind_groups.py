"""v1.36's PreBind groups and pods in PreBind: getPreBindPluginGroups (TestGetPreBindPluginGroups),
podInPreBind (TestPodsInBindingMap), RunPreBindPlugins' parallel groups in virtual time and the
cancellation of a pod's PreBind context."""

import pytest

from harness.framework import Code, PreBindCanceled, PreBindPreFlightResult, Status
from harness.framework.cycle_state import CycleState
from harness.framework.prebind import PodInPreBind, PreBindContext, pre_bind_plugin_groups
from harness.framework.runtime import Framework, PluginCall
from harness.testing import make_pod
from harness.versions import resolve

P = ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"]

# TestGetPreBindPluginGroups (framework_test.go, v1.36.3): (name, plugins, skipped, parallel, groups)
GROUPS = [
    ("No plugins", [], set(), set(), []),
    ("Single plugin, not skipped, not parallel", P[:1], set(), set(), [["p1"]]),
    ("Single plugin, skipped", P[:1], {"p1"}, set(), []),
    ("Single plugin, parallel", P[:1], set(), {"p1"}, [["p1"]]),
    ("Single plugin, parallel & skipped", P[:1], {"p1"}, {"p1"}, []),
    ("Multiple plugins, consecutive serial", P[:2], set(), set(), [["p1"], ["p2"]]),
    ("Multiple plugins, consecutive parallel", P[:2], set(), {"p1", "p2"}, [["p1", "p2"]]),
    ("Multiple plugins, mixed parallel and serial", P[:4], set(), {"p2", "p3"}, [["p1"], ["p2", "p3"], ["p4"]]),
    ("Parallel plugins separated by serial", P[:3], set(), {"p1", "p3"}, [["p1"], ["p2"], ["p3"]]),
    ("Skipped plugins", P[:3], {"p2"}, set(), [["p1"], ["p3"]]),
    ("Parallel plugins with one skipped in between", P[:3], {"p2"}, {"p1", "p2", "p3"}, [["p1", "p3"]]),
    ("Parallel plugins with one serial & skipped in between", P[:3], {"p2"}, {"p1", "p3"}, [["p1"], ["p3"]]),
    ("Complex mix", P, {"p3", "p5"}, {"p2", "p4", "p5", "p6"}, [["p1"], ["p2"], ["p4", "p6"], ["p7"], ["p8"]]),
]


@pytest.mark.parametrize("name,plugins,skipped,parallel,want", GROUPS, ids=[g[0] for g in GROUPS])
def test_get_pre_bind_plugin_groups(name, plugins, skipped, parallel, want):
    got = [[plugins[i] for i in g] for g in pre_bind_plugin_groups(plugins, skipped, parallel)]
    assert got == want


def test_pod_in_pre_bind_cancel_and_mark_prebound():
    """TestPodsInBindingMap: CancelPod until MarkPrebound; MarkPrebound fails once cancelled."""
    woken = []
    ctx = PreBindContext(wake=lambda: woken.append(1))
    pib = PodInPreBind(ctx)
    assert pib.cancel_pod("preempted by DefaultPreemption")
    assert pib.cancel_pod("again")  # a second cancel says true, keeps the first cause
    assert ctx.cause == "preempted by DefaultPreemption" and woken == [1]
    assert not pib.mark_prebound()
    done = PodInPreBind(PreBindContext())
    assert done.mark_prebound()
    assert not done.cancel_pod("too late")
    assert done.ctx.cause is None


def test_child_context_takes_the_parent_cause():
    parent = PreBindContext()
    child = PreBindContext(parent=parent)
    parent.cancel("preempted by DefaultPreemption")
    assert child.cause == "preempted by DefaultPreemption"


class _Clock:
    def __init__(self):
        self.t = 0.0

    def now(self):
        return self.t


def _framework(plugins, version="v1.36"):
    fw = Framework.__new__(Framework)
    fw.feature_gates = resolve(version)
    fw.clock = _Clock()
    fw.pre_bind_plugins = [PluginCall.__new__(PluginCall) for _ in plugins]
    for pc, (name, fn) in zip(fw.pre_bind_plugins, plugins):
        pc.name, pc.fn = name, fn
    return fw


def _run(fw, task):
    """Drive a binding task, moving the fake clock by each wait."""
    try:
        while True:
            d = next(task)
            fw.clock.t += d
    except StopIteration as stop:
        return stop.value


def _slow(name, wait, log, fail=False):
    def pre_bind(state, pod, node):
        def task():
            try:
                yield wait
            except PreBindCanceled as e:
                log.append((name, "canceled", e.cause))
                raise
            log.append((name, "done"))
            return Status(Code.Error, f"{name} failed") if fail else None
        return task()
    return (name, pre_bind)


@pytest.mark.parametrize("parallel,want_at,want_log", [
    # side by side: p2 fails at t=3 and cancels p1
    ({"p1", "p2"}, 3.0, [("p2", "done"), ("p1", "canceled", "some other PreBind operation failed")]),
    # one after the other: p1 t=0..5, p2 t=5..8
    (set(), 8.0, [("p1", "done"), ("p2", "done")]),
])
def test_run_pre_bind_plugins_parallel_group(parallel, want_at, want_log):
    log = []
    fw = _framework([_slow("p1", 5, log), _slow("p2", 3, log, fail=True)])
    state = CycleState()
    state.parallel_pre_bind_plugins = parallel
    st = _run(fw, fw.run_pre_bind_plugins_task(state, make_pod(), "n"))
    assert st.code == Code.Error and st.message() == 'running PreBind plugin "p2": p2 failed'
    assert fw.clock.t == want_at
    assert log == want_log


def test_pre_bind_pre_flight_records_parallel_plugins_from_v136():
    def flight(allow):
        return lambda state, pod, node: (PreBindPreFlightResult(allow_parallel=allow), None)
    for version, want in (("v1.36", {"a"}), ("v1.35", set())):
        fw = _framework([])
        fw.feature_gates = resolve(version)
        fw._pre_bind_pre_flight_calls = [("a", PluginCall.__new__(PluginCall)), ("b", PluginCall.__new__(PluginCall))]
        fw._pre_bind_pre_flight_calls[0][1].fn = flight(True)
        fw._pre_bind_pre_flight_calls[1][1].fn = lambda state, pod, node: Status(Code.Skip)
        state = CycleState()
        assert fw.run_pre_bind_pre_flights(state, make_pod(), "n") is None
        assert state.parallel_pre_bind_plugins == want and state.skip_pre_bind_plugins == {"b"}


def test_cancelled_context_fails_the_waiting_plugin_with_its_cause():
    log = []
    fw = _framework([_slow("p1", 10, log)])
    ctx = PreBindContext()
    task = fw.run_pre_bind_plugins_task(CycleState(), make_pod(), "n", ctx)
    assert next(task) == 10  # waiting
    fw.clock.t = 2.0
    ctx.cancel("preempted by DefaultPreemption")  # the task is resumed early
    with pytest.raises(StopIteration) as stop:
        next(task)
    st = stop.value.value
    assert st.code == Code.Error
    assert st.message() == 'running PreBind plugin "p1": preempted by DefaultPreemption'
    assert log == [("p1", "canceled", "preempted by DefaultPreemption")]


def test_waiting_pod_preempt_and_reject_end_the_wait_once():
    """waitingPod.Preempt (v1.36) ends the wait with an Error, Reject with Unschedulable; either
    says false once the wait is over (stopWithStatus)."""
    from harness.framework.runtime import WaitingPod

    wp = WaitingPod(make_pod(), {"SlowPermit": 30.0}, 0.0)
    assert wp.preempt("DefaultPreemption", "preempted")
    assert wp.result.code == Code.Error and wp.result.message() == "preempted"
    assert not wp.preempt("DefaultPreemption", "preempted")
    assert not wp.reject("DefaultPreemption", "preempted")
    wp = WaitingPod(make_pod(), {"SlowPermit": 30.0}, 0.0)
    assert wp.reject("DefaultPreemption", "preempted")
    assert wp.result.code == Code.Unschedulable
