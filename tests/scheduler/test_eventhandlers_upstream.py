"""The scheduler's event handlers and the events an update is, ported from kubernetes
pkg/scheduler/eventhandlers_test.go and pkg/scheduler/framework/events_test.go (v1.34 semantics,
SchedulerQueueingHints on, DynamicResourceAllocation on).

Cases of the newer upstream tests that need informer tombstones (DeletedFinalStateUnknown) or
that test behaviour added after v1.34 (dropping an assumed pod on a deletion timestamp or on the
delete of its unassigned version) are ported with v1.34's outcome, as noted on each."""

from __future__ import annotations

import os
import sys

import pytest

from harness.framework.types import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from harness.scheduler.cache import Cache
from harness.scheduler.events import node_scheduling_properties_change, pod_scheduling_properties_change
from harness.scheduler.queue import EVENT_ASSIGNED_POD_ADD, EVENT_ASSIGNED_POD_DELETE, SchedulingQueue
from harness.scheduler.scheduler import VirtualClock, node_update_action

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample"))

from cache_fakes import (FakeFramework, RecordingQueue, handler_scheduler, make_node,  # noqa: E402
                         make_pod)

NODE = EventResource.Node
ASSIGNED = EventResource.AssignedPod
UNSCHEDULED = EventResource.UnscheduledPod
A = ActionType


def ev(resource, action):
    return ClusterEvent(resource, action)


# =============================================================================================
# framework/events_test.go
# =============================================================================================
def node_with(**status):
    raw = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": {}, "status": status}
    from harness.api.objects import Node
    return Node(raw)


@pytest.mark.parametrize("name,changed,old,new", [
    ("no allocatable resources changed", False, {"memory": "1Ki"}, {"memory": "1Ki"}),
    ("new node has more allocatable resources", True, {"memory": "1Ki"}, {"memory": "1Ki", "storage": "1Ki"}),
    ("same quantity written differently", False, {"memory": "1024", "cpu": "1"}, {"memory": "1Ki", "cpu": "1000m"}),
    ("nil and empty allocatable", False, None, {}),
])
def test_node_allocatable_change(name, changed, old, new):
    """TestNodeAllocatableChange (equality.Semantic: quantities by value, nil == empty)."""
    o = node_with(allocatable=old) if old is not None else node_with()
    n = node_with(allocatable=new)
    got = [e.action_type for e in node_scheduling_properties_change(n, o)]
    assert (A.UpdateNodeAllocatable in got) is changed


@pytest.mark.parametrize("name,changed,old,new", [
    ("no labels changed", False, {"foo": "bar"}, {"foo": "bar"}),
    ("new object has more labels", True, {"foo": "bar"}, {"foo": "bar", "test": "value"}),
])
def test_node_labels_change(name, changed, old, new):
    """TestNodeLabelsChange."""
    o = make_node().name("n").labels(old).obj()
    n = make_node().name("n").labels(new).obj()
    assert (node_scheduling_properties_change(n, o) == [ev(NODE, A.UpdateNodeLabel)]) is changed


@pytest.mark.parametrize("name,changed,old,new", [
    ("no taint changed", False, [{"key": "key", "value": "value"}], [{"key": "key", "value": "value"}]),
    ("taint value changed", True, [{"key": "key", "value": "value1"}], [{"key": "key", "value": "value2"}]),
])
def test_node_taints_change(name, changed, old, new):
    """TestNodeTaintsChange."""
    o = make_node().name("n").taints(old).obj()
    n = make_node().name("n").taints(new).obj()
    assert (node_scheduling_properties_change(n, o) == [ev(NODE, A.UpdateNodeTaint)]) is changed


@pytest.mark.parametrize("name,changed,old,new", [
    ("no condition changed", False, [{"type": "DiskPressure", "status": "True"}],
     [{"type": "DiskPressure", "status": "True"}]),
    ("only LastHeartbeatTime changed", False,
     [{"type": "DiskPressure", "status": "True", "lastHeartbeatTime": "1970-01-01T00:00:01Z"}],
     [{"type": "DiskPressure", "status": "True", "lastHeartbeatTime": "1970-01-01T00:00:02Z"}]),
    ("new node has more healthy conditions", True, [], [{"type": "Ready", "status": "True"}]),
    ("new node has less unhealthy conditions", True, [{"type": "DiskPressure", "status": "True"}], []),
    ("condition status changed", True, [{"type": "Ready", "status": "False"}], [{"type": "Ready", "status": "True"}]),
])
def test_node_conditions_change(name, changed, old, new):
    """TestNodeConditionsChange: only type -> status counts."""
    got = node_scheduling_properties_change(node_with(conditions=new), node_with(conditions=old))
    assert (got == [ev(NODE, A.UpdateNodeCondition)]) is changed


def _cap(foo):
    return make_node().capacity({"cpu": "1000m", "memory": "100m", "example.com/foo": foo}).obj()


TAINT_EMPTY = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
TAINT_FOO = [{"key": "node.kubernetes.io/unschedulable", "value": "foo", "effect": "NoSchedule"}]


@pytest.mark.parametrize("name,new,old,want", [
    ("no specific changed applied", make_node().unschedulable(False).obj(), make_node().unschedulable(False).obj(), []),
    ("only node spec unavailable changed", make_node().unschedulable(False).obj(),
     make_node().unschedulable(True).obj(), [ev(NODE, A.UpdateNodeTaint)]),
    ("node becoming unschedulable is no event", make_node().unschedulable(True).obj(),
     make_node().unschedulable(False).obj(), []),
    ("only node allocatable changed", _cap("1"), _cap("2"), [ev(NODE, A.UpdateNodeAllocatable)]),
    ("only node label changed", make_node().label("foo", "bar").obj(), make_node().label("foo", "fuz").obj(),
     [ev(NODE, A.UpdateNodeLabel)]),
    ("only node taint changed", make_node().taints(TAINT_EMPTY).obj(), make_node().taints(TAINT_FOO).obj(),
     [ev(NODE, A.UpdateNodeTaint)]),
    ("only node annotation changed", make_node().annotation("foo", "bar").obj(),
     make_node().annotation("foo", "fuz").obj(), [ev(NODE, A.UpdateNodeAnnotation)]),
    ("only node condition changed", make_node().obj(), make_node().condition("Ready", "True", "Ready", "Ready").obj(),
     [ev(NODE, A.UpdateNodeCondition)]),
    ("both node label and node taint changed", make_node().label("foo", "bar").taints(TAINT_EMPTY).obj(),
     make_node().taints(TAINT_FOO).obj(), [ev(NODE, A.UpdateNodeLabel), ev(NODE, A.UpdateNodeTaint)]),
    ("everything changed, in upstream's order",
     make_node().unschedulable(False).allocatable({"cpu": "2"}).label("a", "b").taints(TAINT_EMPTY)
     .condition("Ready", "True").annotation("x", "y").obj(),
     make_node().unschedulable(True).allocatable({"cpu": "1"}).obj(),
     [ev(NODE, A.UpdateNodeTaint), ev(NODE, A.UpdateNodeAllocatable), ev(NODE, A.UpdateNodeLabel),
      ev(NODE, A.UpdateNodeTaint), ev(NODE, A.UpdateNodeCondition), ev(NODE, A.UpdateNodeAnnotation)]),
])
def test_node_scheduling_properties_change(name, new, old, want):
    """TestNodeSchedulingPropertiesChange."""
    assert node_scheduling_properties_change(new, old) == want
    action = A.NONE
    for e in want:
        action |= e.action_type
    assert node_update_action(old, new) == action


def _app_pod(cpu, labels=None):
    w = make_pod().containers([{"name": "app", "resources": {"requests": {"cpu": cpu}}}])
    w.raw["status"]["containerStatuses"] = [{"name": "app", "allocatedResources": {"cpu": cpu}}]
    if labels:
        w.labels(labels)
    return w.obj()


BIG = _app_pod("101m")
SMALL = _app_pod("100m")
SMALL_WITH_LABEL = _app_pod("100m", {"foo": "bar"})
CLAIM_A = {"name": "my-claim", "resourceClaimName": "claim"}
CLAIM_B = {"name": "my-claim-2", "resourceClaimName": "claim-2"}
EXT_A = {"requestMappings": [{"requestName": "request", "containerName": "c", "resourceName": "example.com/gpu"}],
         "resourceClaimName": "claim"}
EXT_B = {"requestMappings": [{"requestName": "request", "containerName": "c", "resourceName": "example.com/gpu"}],
         "resourceClaimName": "claim-2"}


@pytest.mark.parametrize("name,new,old,want", [
    ("assigned pod is updated", make_pod().label("foo", "bar").node("node").obj(),
     make_pod().label("foo", "bar2").node("node").obj(), [ev(ASSIGNED, A.UpdatePodLabel)]),
    ("only label is updated", make_pod().label("foo", "bar").obj(), make_pod().label("foo", "bar2").obj(),
     [ev(UNSCHEDULED, A.UpdatePodLabel)]),
    ("pod's resource request is scaled down", SMALL, BIG, [ev(UNSCHEDULED, A.UpdatePodScaleDown)]),
    ("pod's resource request is scaled up", BIG, SMALL, [ev(UNSCHEDULED, A.Update)]),
    ("both pod's resource request and label are updated", SMALL_WITH_LABEL, BIG,
     [ev(UNSCHEDULED, A.UpdatePodLabel), ev(UNSCHEDULED, A.UpdatePodScaleDown)]),
    ("untracked properties of pod is updated", make_pod().annotation("foo", "bar").obj(),
     make_pod().annotation("foo", "bar2").obj(), [ev(UNSCHEDULED, A.Update)]),
    ("scheduling gate is eliminated", make_pod().scheduling_gates([]).obj(),
     make_pod().scheduling_gates(["foo"]).obj(), [ev(UNSCHEDULED, A.UpdatePodSchedulingGatesEliminated)]),
    ("scheduling gate is removed, but not completely eliminated", make_pod().scheduling_gates(["foo"]).obj(),
     make_pod().scheduling_gates(["foo", "bar"]).obj(), [ev(UNSCHEDULED, A.Update)]),
    ("pod's tolerations are updated", make_pod().toleration("key").toleration("key2").obj(),
     make_pod().toleration("key").obj(), [ev(UNSCHEDULED, A.UpdatePodToleration)]),
    ("pod claim statuses change, feature enabled", make_pod().resource_claim_statuses(CLAIM_A).obj(),
     make_pod().obj(), [ev(UNSCHEDULED, A.UpdatePodGeneratedResourceClaim)]),
    ("pod claim statuses swapped", make_pod().resource_claim_statuses(CLAIM_A, CLAIM_B).obj(),
     make_pod().resource_claim_statuses(CLAIM_B, CLAIM_A).obj(), [ev(UNSCHEDULED, A.UpdatePodGeneratedResourceClaim)]),
    ("pod extended resource claim status change, feature enabled",
     make_pod().extended_resource_claim_status(EXT_A).obj(), make_pod().obj(),
     [ev(UNSCHEDULED, A.UpdatePodGeneratedResourceClaim)]),
    ("pod extended resource claim status swapped", make_pod().extended_resource_claim_status(EXT_B).obj(),
     make_pod().extended_resource_claim_status(EXT_A).obj(), [ev(UNSCHEDULED, A.UpdatePodGeneratedResourceClaim)]),
    ("a removed request is a scale-down", make_pod().req({"cpu": "1"}).obj(),
     make_pod().req({"cpu": "1", "memory": "1Gi"}).obj(), [ev(UNSCHEDULED, A.UpdatePodScaleDown)]),
    ("a scale-down below a milli is no scale-down (MilliValue)", make_pod().req({"memory": "1000100u"}).obj(),
     make_pod().req({"memory": "1000200u"}).obj(), [ev(UNSCHEDULED, A.Update)]),
])
def test_pod_scheduling_properties_change(name, new, old, want):
    """Test_podSchedulingPropertiesChange."""
    assert pod_scheduling_properties_change(new, old) == want


def test_pod_scale_down_reads_resized_container_statuses():
    """extractPodScaleDown uses PodRequests with UseStatusResources: a container whose status
    reports resources counts with max(spec, status requests, allocated)."""
    def pod(spec_cpu, status_cpu):
        w = make_pod().containers([{"name": "app", "resources": {"requests": {"cpu": spec_cpu}}}])
        w.raw["status"]["containerStatuses"] = [{"name": "app", "resources": {"requests": {"cpu": status_cpu}},
                                                 "allocatedResources": {"cpu": status_cpu}}]
        return w.obj()
    # spec lowered from 2 to 1 but the status still reports 2: no scale-down yet
    assert pod_scheduling_properties_change(pod("1", "2"), pod("2", "2")) == [ev(UNSCHEDULED, A.Update)]
    # the resize done: the status drops to 1
    assert pod_scheduling_properties_change(pod("1", "1"), pod("1", "2")) == [ev(UNSCHEDULED, A.UpdatePodScaleDown)]


# =============================================================================================
# eventhandlers_test.go
# =============================================================================================
HIGH, MID, LOW = 100000, 100, 10
SCHED = "default-scheduler"


def active_or_backoff(q):
    """Names of the pods in activeQ or backoffQ."""
    if hasattr(q, "pods_in_active"):
        return {p.name for p in q.pods_in_active()} | {p.name for p in q.pods_in_backoff()}
    return {it.pinfo.pod.name for it in q.active} | {t[2].pod.name for t in q.backoff}


def _nominated_queue():
    """A PriorityQueue with backoff disabled whose profile's only plugin, fooPlugin1, wakes on
    AssignedPod/Delete when the deleted pod had a nominated node."""

    def hint(pod, old, new):
        return QueueingHint.Queue if old is not None and old.nominated_node_name else QueueingHint.QueueSkip

    fw = FakeFramework(events=[("fooPlugin1", [ClusterEventWithHint(EVENT_ASSIGNED_POD_DELETE, hint)])])
    q = SchedulingQueue({SCHED: fw}, VirtualClock(), 0, 0)
    return q, fw


def _pods():
    high = make_pod().name("hpp").namespace("ns1").uid("hppns1").priority(HIGH).scheduler_name(SCHED).obj()
    med_nominated = (make_pod().name("mpp").namespace("ns2").uid("mppns1").priority(MID).scheduler_name(SCHED)
                     .nominated_node_name("node1").obj())
    med = make_pod().name("smpp").namespace("ns3").uid("mppns2").priority(MID).scheduler_name(SCHED).obj()
    low = make_pod().name("lpp").namespace("ns4").uid("lppns1").priority(LOW).scheduler_name(SCHED).obj()
    return high, med_nominated, med, low


def _with(pod, **status):
    raw = dict(pod.raw)
    raw["metadata"] = dict(raw["metadata"], resourceVersion="1")
    st = dict(raw.get("status") or {})
    for k, v in status.items():
        if v is None:
            st.pop(k, None)
        else:
            st[k] = v
    raw["status"] = st
    from harness.api.objects import Pod
    return Pod(raw)


@pytest.mark.parametrize("name,update,want", [
    ("Update of a nominated node name to a different value should trigger rescheduling of lower priority pods",
     lambda s, p: s.on_event("Pod", p[1], _with(p[1], nominatedNodeName="node2")), {"lpp", "smpp", "mpp"}),
    ("Removal of a nominated node name should trigger rescheduling of lower priority pods",
     lambda s, p: s.on_event("Pod", p[1], _with(p[1], nominatedNodeName=None)), {"lpp", "smpp", "mpp"}),
    ("Removal of a pod that had nominated node name should trigger rescheduling of lower priority pods",
     lambda s, p: s.on_event("Pod", p[1], None), {"lpp", "smpp"}),
    ("Addition of a nominated node name to the high priority pod that did not have it before shouldn't "
     "trigger rescheduling",
     lambda s, p: s.on_event("Pod", p[0], _with(p[0], nominatedNodeName="node2")), set()),
])
def test_move_to_active_on_nominated_node_update(name, update, want):
    """TestEventHandlers_MoveToActiveOnNominatedNodeUpdate (with queueing hints)."""
    q, fw = _nominated_queue()
    pods = _pods()
    for pod in pods:
        q.add(pod)
        pinfo = q.pop()
        pinfo.unschedulable_plugins = {"fooPlugin1"}
        q.add_unschedulable_if_not_present(pinfo)
    assert not active_or_backoff(q)
    s = handler_scheduler(q, {SCHED: fw})
    update(s, pods)
    assert active_or_backoff(q) == want


@pytest.mark.parametrize("new_uid", ["oldUID", "newUID"], ids=["pod updated with the same UID",
                                                               "pod updated with different UIDs"])
def test_update_assigned_pod_in_cache(new_uid):
    """TestUpdateAssignedPodInCache."""
    old = (make_pod().name("pod").uid("oldUID").node("node").host_port(80).obj())
    new = (make_pod().name("pod").uid(new_uid).node("node").host_port(8080).resource_version("2").obj())
    s = handler_scheduler(RecordingQueue())
    s.on_event("Pod", None, old)
    s.on_event("Pod", old, new)
    if new_uid != "oldUID":
        assert s.cache.get_pod(old) is None
    assert s.cache.get_pod(new) is new


def test_pre_check_for_node_is_nil_with_queueing_hints():
    """TestPreCheckForNode ("no filtering when QHint is enabled"): node events move pods with no
    pre-check."""
    q = RecordingQueue()
    s = handler_scheduler(q)
    n = make_node().name("fake-node").label("hostname", "fake-node").capacity({"cpu": "8"}).obj()
    s.on_event("Node", None, n)
    n2 = make_node().name("fake-node").label("hostname", "fake-node").capacity({"cpu": "16"}).obj()
    s.on_event("Node", n, n2)
    assert [m[3] for m in q.moves()] == [None, None]


@pytest.mark.parametrize("name,pod,in_queue,in_cache", [
    ("add unscheduled pod", make_pod().name("pod1").namespace("ns1").uid("pod1").scheduler_name("supported-scheduler").obj(),
     True, False),
    ("add unscheduled pod with other scheduler name",
     make_pod().name("pod1").namespace("ns1").uid("pod1").scheduler_name("other-scheduler").obj(), False, False),
    ("add scheduled pod", make_pod().name("pod1").namespace("ns1").uid("pod1").node("node1").obj(), False, True),
])
def test_add_pod(name, pod, in_queue, in_cache):
    """TestAddPod."""
    q = RecordingQueue()
    s = handler_scheduler(q, {"supported-scheduler": FakeFramework()})
    s.on_event("Pod", None, pod)
    assert (pod.uid in q.queued) is in_queue
    assert (s.cache.get_pod(pod) is not None) is in_cache


def _update_pods():
    base = lambda: make_pod().name("pod1").namespace("ns1").uid("pod1")  # noqa: E731
    return {
        "pod": base().scheduler_name("supported-scheduler").obj(),
        "updatedPod": base().labels({"foo": "bar"}).resource_version("2").scheduler_name("supported-scheduler").obj(),
        "podWithDeletionTimestamp": base().terminating().resource_version("2").scheduler_name("supported-scheduler").obj(),
        "otherPod": base().scheduler_name("other-scheduler").obj(),
        "updatedOtherPod": base().labels({"foo": "bar"}).resource_version("2").scheduler_name("other-scheduler").obj(),
        "scheduledPod": base().node("node1").scheduler_name("supported-scheduler").obj(),
        "updatedScheduledPod": base().labels({"foo": "bar"}).resource_version("2").node("node1")
        .scheduler_name("supported-scheduler").obj(),
        "otherScheduledPod": base().node("node1").scheduler_name("other-scheduler").obj(),
        "updatedOtherScheduledPod": base().labels({"foo": "bar"}).resource_version("2").node("node1")
        .scheduler_name("other-scheduler").obj(),
        "scheduledPodOtherNode": base().node("node2").scheduler_name("supported-scheduler").obj(),
    }


UP = _update_pods()


@pytest.mark.parametrize("name,old,assumed,new,in_queue,in_cache", [
    ("update unscheduled pod", "pod", None, "updatedPod", "updatedPod", None),
    ("update unscheduled pod with other scheduler name", "otherPod", None, "updatedOtherPod", None, None),
    ("update assumed pod", "pod", "scheduledPod", "updatedPod", None, "scheduledPod"),
    ("update scheduled pod", "scheduledPod", None, "updatedScheduledPod", None, "updatedScheduledPod"),
    ("update scheduled pod with other scheduler name", "otherScheduledPod", None, "updatedOtherScheduledPod",
     None, "updatedOtherScheduledPod"),
    ("bind unscheduled pod", "pod", None, "scheduledPod", None, "scheduledPod"),
    ("bind assumed pod", "pod", "scheduledPod", "scheduledPod", None, "scheduledPod"),
    ("bind assumed pod to a different node", "pod", "scheduledPod", "scheduledPodOtherNode", None,
     "scheduledPodOtherNode"),
    # v1.34: an update of an assumed (still unassigned) pod is ignored, a deletion timestamp
    # included (newer upstream drops the assumed pod from the cache here)
    ("assumed pod gets a deletion timestamp", "pod", "scheduledPod", "podWithDeletionTimestamp", None,
     "scheduledPod"),
])
def test_update_pod(name, old, assumed, new, in_queue, in_cache):
    """TestUpdatePod."""
    q = RecordingQueue()
    s = handler_scheduler(q, {"supported-scheduler": FakeFramework()})
    if assumed is not None:
        s.cache.assume_pod(UP[assumed])
    else:
        s.on_event("Pod", None, UP[old])
    s.on_event("Pod", UP[old], UP[new])
    queued = q.queued.get(UP[new].uid)
    assert queued is (UP[in_queue] if in_queue else None)
    cached = s.cache.get_pod(UP[new])
    assert cached is (UP[in_cache] if in_cache else None)


@pytest.mark.parametrize("name,initial,assumed,to_delete,gone_from_cache", [
    ("delete unscheduled pod", "pod", False, "pod", True),
    ("delete unscheduled pod with other scheduler name", "otherPod", False, "otherPod", True),
    # v1.34: the delete of the unassigned pod goes to the queue handler only; the assumed pod
    # leaves the cache when its binding fails (newer upstream removes it right away)
    ("delete assumed pod", "scheduledPod", True, "pod", False),
    ("delete scheduled pod", "scheduledPod", False, "scheduledPod", True),
    ("delete scheduled pod with other scheduler name", "otherScheduledPod", False, "otherScheduledPod", True),
])
def test_delete_pod(name, initial, assumed, to_delete, gone_from_cache):
    """TestDeletePod (the tombstone cases have no counterpart: the harness delivers objects)."""
    q = RecordingQueue()
    s = handler_scheduler(q, {"supported-scheduler": FakeFramework()})
    if assumed:
        s.cache.assume_pod(UP[initial])
    else:
        s.on_event("Pod", None, UP[initial])
    s.on_event("Pod", UP[to_delete], None)
    assert (s.cache.get_pod(UP[initial]) is None) is gone_from_cache
    assert UP[initial].uid not in q.queued


# ---------------------------------------------------------------------------------------------
# eventhandlers.go: which events go to the queue
# ---------------------------------------------------------------------------------------------
def _moves(q):
    return [(m[0], m[1], m[2], m[3]) for m in q.moves()]


def test_node_add_update_delete_events():
    """addNodeToCache / updateNodeInCache / deleteNodeFromCache."""
    q = RecordingQueue()
    s = handler_scheduler(q)
    n1 = make_node().name("n").label("a", "1").obj()
    s.on_event("Node", None, n1)
    assert _moves(q) == [(ev(NODE, A.Add), None, n1, None)]
    assert s.cache.nodes["n"].node is n1
    # no scheduling property changed (e.g. a heartbeat): the cache is updated, no move
    n2 = make_node().name("n").label("a", "1").condition("Ready", "True").obj()
    n3 = make_node().name("n").label("a", "1").condition("Ready", "True", "KubeletReady", "later").obj()
    s.on_event("Node", n1, n2)
    q.calls.clear()
    s.on_event("Node", n2, n3)
    assert q.moves() == [] and s.cache.nodes["n"].node is n3
    # two kinds of change: one move per event, in order
    n4 = make_node().name("n").label("a", "2").annotation("x", "y").condition("Ready", "True").obj()
    s.on_event("Node", n3, n4)
    assert _moves(q) == [(ev(NODE, A.UpdateNodeLabel), n3, n4, None),
                         (ev(NODE, A.UpdateNodeAnnotation), n3, n4, None)]
    # delete: the pods are moved before the node leaves the cache
    q.calls.clear()
    seen = []
    q.on_move = lambda e, old, new, pre: seen.append("n" in s.cache.nodes)
    s.on_event("Node", n4, None)
    assert _moves(q) == [(ev(NODE, A.Delete), n4, None, None)]
    assert seen == [True] and "n" not in s.cache.nodes
    # deleting an unknown node: upstream logs the cache's error
    s.on_event("Node", n4, None)


def test_node_becoming_unschedulable_is_no_event():
    q = RecordingQueue()
    s = handler_scheduler(q)
    n1 = make_node().name("n").obj()
    n2 = make_node().name("n").unschedulable(True).obj()
    s.on_event("Node", None, n1)
    q.calls.clear()
    s.on_event("Node", n1, n2)
    assert q.moves() == []
    s.on_event("Node", n2, n1)
    assert _moves(q) == [(ev(NODE, A.UpdateNodeTaint), n2, n1, None)]


def test_assigned_pod_events():
    """addPodToCache / updatePodInCache / deletePodFromCache: AssignedPod events, an update is
    PodSchedulingPropertiesChange's events (a general Update when nothing specific changed)."""
    q = RecordingQueue()
    s = handler_scheduler(q)
    p1 = make_pod().name("p").namespace("ns").uid("p").node("n").label("a", "1").resource_version("1").obj()
    s.on_event("Pod", None, p1)
    assert _moves(q) == [(EVENT_ASSIGNED_POD_ADD, None, p1, None)]
    q.calls.clear()
    p2 = make_pod().name("p").namespace("ns").uid("p").node("n").label("a", "2").toleration("t").resource_version("2").obj()
    s.on_event("Pod", p1, p2)
    assert _moves(q) == [(ev(ASSIGNED, A.UpdatePodLabel), p1, p2, None),
                         (ev(ASSIGNED, A.UpdatePodToleration), p1, p2, None)]
    assert s.cache.get_pod(p2) is p2
    q.calls.clear()
    p3 = make_pod().name("p").namespace("ns").uid("p").node("n").label("a", "2").toleration("t").annotation("k", "v").obj()
    s.on_event("Pod", p2, p3)
    assert _moves(q) == [(ev(ASSIGNED, A.Update), p2, p3, None)]
    q.calls.clear()
    s.on_event("Pod", p3, None)
    assert _moves(q) == [(EVENT_ASSIGNED_POD_DELETE, p3, None, None)]
    assert s.cache.get_pod(p3) is None
    assert [c[0] for c in q.calls] == ["move"]  # assigned pods never touch the queue itself


def test_unscheduled_pod_events():
    """addPodToSchedulingQueue / updatePodInSchedulingQueue / deletePodFromSchedulingQueue."""
    q = RecordingQueue()
    s = handler_scheduler(q)
    p1 = make_pod().name("p").namespace("ns").uid("p").resource_version("1").obj()
    s.on_event("Pod", None, p1)
    assert q.calls == [("add", "ns/p")]
    # an update carrying the same resourceVersion is dropped
    same = make_pod().name("p").namespace("ns").uid("p").label("x", "y").resource_version("1").obj()
    s.on_event("Pod", p1, same)
    assert q.calls == [("add", "ns/p")]
    p2 = make_pod().name("p").namespace("ns").uid("p").label("x", "y").resource_version("2").obj()
    s.on_event("Pod", p1, p2)
    assert q.calls[-1] == ("update", "ns/p") and q.moves() == []
    # a nominated node set where there was none: no move
    p3 = make_pod().name("p").namespace("ns").uid("p").label("x", "y").nominated_node_name("n1").resource_version("3").obj()
    s.on_event("Pod", p2, p3)
    assert q.moves() == []
    # deleting an unscheduled pod without a nominated node: no move
    q.calls.clear()
    s.on_event("Pod", p2, None)
    assert q.calls == [("delete", "ns/p")]


def test_update_of_an_assumed_pod_is_ignored():
    """updatePodInSchedulingQueue: an assumed pod (waiting at Permit or binding) is skipped, its
    nominated node change included."""
    q = RecordingQueue()
    s = handler_scheduler(q)
    p1 = make_pod().name("p").namespace("ns").uid("p").nominated_node_name("n1").resource_version("1").obj()
    s.cache.assume_pod(make_pod().name("p").namespace("ns").uid("p").node("n1").obj())
    p2 = make_pod().name("p").namespace("ns").uid("p").label("a", "b").resource_version("2").obj()
    s.on_event("Pod", p1, p2)
    assert q.calls == []


def test_deleting_a_waiting_pod_rejects_it_and_moves_all():
    """deletePodFromSchedulingQueue: a pod waiting at Permit is rejected, and its leaving the
    cache is an AssignedPod/Delete event for every pod."""
    q = RecordingQueue()
    fw = FakeFramework(waiting={"p"})
    s = handler_scheduler(q, {SCHED: fw})
    p = make_pod().name("p").namespace("ns").uid("p").nominated_node_name("n1").priority(5).obj()
    s.on_event("Pod", p, None)
    assert fw.rejected == ["p"]
    assert [c[0] for c in q.calls] == ["delete", "move"]
    assert _moves(q) == [(EVENT_ASSIGNED_POD_DELETE, p, None, None)]


def test_deleting_a_nominated_pod_moves_lower_or_equal_priority_pods():
    q = RecordingQueue()
    s = handler_scheduler(q)
    p = make_pod().name("p").namespace("ns").uid("p").nominated_node_name("n1").priority(5).obj()
    s.on_event("Pod", p, None)
    (event, old, new, pre), = q.moves()
    assert (event, old, new) == (EVENT_ASSIGNED_POD_DELETE, p, None)
    assert pre(make_pod().priority(5).obj()) and pre(make_pod().priority(4).obj())
    assert not pre(make_pod().priority(6).obj())


def test_binding_is_a_cache_add_then_a_queue_delete():
    """A pod that gets a nodeName passes the assigned-pod filter (OnAdd) and fails the
    unscheduled-pod one (OnDelete): AssignedPod/Add, then, as the pod had a nominated node,
    AssignedPod/Delete for lower or equal priority pods."""
    q = RecordingQueue()
    s = handler_scheduler(q)
    pending = make_pod().name("p").namespace("ns").uid("p").priority(7).nominated_node_name("n1").resource_version("1").obj()
    s.on_event("Pod", None, pending)
    s.cache.assume_pod(make_pod().name("p").namespace("ns").uid("p").priority(7).node("n1").obj())
    q.calls.clear()
    bound = make_pod().name("p").namespace("ns").uid("p").priority(7).node("n1").nominated_node_name("n1").resource_version("2").obj()
    s.on_event("Pod", pending, bound)
    assert [c[0] for c in q.calls] == ["move", "delete", "move"]
    (e1, o1, n1, pre1), (e2, o2, n2, pre2) = q.moves()
    assert (e1, o1, n1, pre1) == (EVENT_ASSIGNED_POD_ADD, None, bound, None)
    assert (e2, o2, n2) == (EVENT_ASSIGNED_POD_DELETE, pending, None)
    assert pre2(make_pod().priority(7).obj()) and not pre2(make_pod().priority(8).obj())
    assert s.cache.get_pod(bound) is bound and not s.cache.is_assumed_pod(bound)


def test_pods_of_other_schedulers():
    """responsibleForPod: unassigned pods of other schedulers are ignored; assigned ones are
    cached whatever their scheduler."""
    q = RecordingQueue()
    s = handler_scheduler(q)
    other = make_pod().name("o").namespace("ns").uid("o").scheduler_name("other").obj()
    s.on_event("Pod", None, other)
    s.on_event("Pod", other, None)
    assert q.calls == []
    bound = make_pod().name("o").namespace("ns").uid("o").scheduler_name("other").node("n").obj()
    s.on_event("Pod", other, bound)
    assert s.cache.get_pod(bound) is bound
    assert _moves(q) == [(EVENT_ASSIGNED_POD_ADD, None, bound, None)]


@pytest.mark.parametrize("registered,kind,old,new,want", [
    ([ev(EventResource.PersistentVolume, A.Add)], "PersistentVolume", None, "obj",
     [ev(EventResource.PersistentVolume, A.Add)]),
    ([ev(EventResource.PersistentVolume, A.Add)], "PersistentVolume", "obj", "obj", []),
    ([ev(EventResource.PersistentVolume, A.Add | A.Update)], "PersistentVolume", "obj", "obj",
     [ev(EventResource.PersistentVolume, A.Update)]),
    ([ev(EventResource.StorageClass, A.All)], "StorageClass", "obj", None, [ev(EventResource.StorageClass, A.Delete)]),
    ([ev(EventResource.WildCard, A.All)], "CSINode", None, "obj", []),
    ([], "CSINode", None, "obj", []),
])
def test_other_resources_only_when_registered(registered, kind, old, new, want):
    """addAllEventHandlers: informers for other kinds are added for the resources and actions
    plugins register (unionedGVKs); a wildcard registration adds none."""
    from harness.api.objects import KubeObject
    q = RecordingQueue(hint_rows=[(e, "p", None) for e in registered])
    s = handler_scheduler(q)
    obj = KubeObject({"kind": kind, "metadata": {"name": "x"}})
    s.on_event(kind, obj if old else None, obj if new else None)
    assert [m[0] for m in q.moves()] == want


def test_unschedulable_pod_queue_update_wakes_on_matching_event():
    """With the real queue: an unschedulable pod whose update is relevant to its rejector goes
    back to the active queue (the queue's Update runs the pod's own update through the hints)."""
    def hint(pod, old, new):
        return QueueingHint.Queue
    fw = FakeFramework(events=[("P", [ClusterEventWithHint(ev(UNSCHEDULED, A.UpdatePodLabel), hint)])])
    q = SchedulingQueue({SCHED: fw}, VirtualClock(), 0, 0)
    s = handler_scheduler(q, {SCHED: fw}, Cache())
    p1 = make_pod().name("p").namespace("ns").uid("p").resource_version("1").obj()
    s.on_event("Pod", None, p1)
    pinfo = q.pop()
    pinfo.unschedulable_plugins = {"P"}
    q.add_unschedulable_if_not_present(pinfo)
    assert "p" in q.unschedulable
    p2 = make_pod().name("p").namespace("ns").uid("p").label("a", "b").resource_version("2").obj()
    s.on_event("Pod", p1, p2)
    assert active_or_backoff(q) == {"p"}


def test_unschedulable_pod_update_uses_the_specific_events():
    """PriorityQueue.Update: a label change is an UnscheduledPod/UpdatePodLabel event, which a
    plugin registered for UpdatePodToleration does not get."""
    def hint(pod, old, new):
        return QueueingHint.Queue
    fw = FakeFramework(events=[("P", [ClusterEventWithHint(ev(UNSCHEDULED, A.UpdatePodToleration), hint)])])
    q = SchedulingQueue({SCHED: fw}, VirtualClock(), 0, 0)
    s = handler_scheduler(q, {SCHED: fw}, Cache())
    p1 = make_pod().name("p").namespace("ns").uid("p").resource_version("1").obj()
    s.on_event("Pod", None, p1)
    pinfo = q.pop()
    pinfo.unschedulable_plugins = {"P"}
    q.add_unschedulable_if_not_present(pinfo)
    p2 = make_pod().name("p").namespace("ns").uid("p").label("a", "b").resource_version("2").obj()
    s.on_event("Pod", p1, p2)
    assert "p" in q.unschedulable and not active_or_backoff(q)



class _FailOnce:
    """An out-of-tree Filter plugin without EventsToRegister (so registered for every event,
    default hint Queue) that rejects each pod's first attempt only."""

    @staticmethod
    def plugin():
        from harness.framework import Plugin, Status, hookimpl

        class FailOnce(Plugin):
            name = "FailOnce"
            seen = set()

            @hookimpl
            def filter(self, state, pod, node_info):
                if pod.uid in FailOnce.seen:
                    return None
                FailOnce.seen.add(pod.uid)
                return Status.unschedulable("not yet")

        return FailOnce


def test_own_status_patch_is_an_update_event_for_the_queue():
    """handleSchedulingFailure: AddUnschedulableIfNotPresent, then updatePod (the PodScheduled
    condition). The informer's Update of that patch reaches PriorityQueue.Update while the pod is
    in the unschedulable pool; a plugin without EventsToRegister is registered for Pod/All with
    the default hint (Queue), so the pod goes back to the queue and its second attempt binds."""
    from harness.case.loader import case_from_data
    from harness.case.runner import run_case
    from harness.framework.registry import default_registry

    registry = dict(default_registry())
    fail_once = _FailOnce.plugin()
    registry["FailOnce"] = fail_once
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case",
            "config": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler",
                                     "plugins": {"filter": {"enabled": [{"name": "FailOnce"}]}}}]},
            "cluster": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}],
            "pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                      "spec": {"containers": [{"name": "c", "image": "x"}]}}]}
    res = run_case(case_from_data(data, "inline.yaml"), registry)
    assert res.bindings == {"default/p": "n1"}


# ---------------------------------------------------------------------------------------------
# v1.35's pod handlers (updatePod / deletePod / handleAssumedPodDeletion)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("version,in_cache", [("v1.34", "scheduledPod"), ("v1.35", None), ("v1.36", None)])
def test_assumed_pod_gets_a_deletion_timestamp(version, in_cache):
    """TestUpdatePod "delete assumed pod with deletion timestamp": v1.35 on, an assumed pod
    whose deletion starts leaves the cache at once (handleAssumedPodDeletion); v1.34 ignores
    the update."""
    from harness.versions import resolve
    q = RecordingQueue()
    s = handler_scheduler(q, {"supported-scheduler": FakeFramework()}, features=resolve(version))
    s.cache.assume_pod(UP["scheduledPod"])
    s.on_event("Pod", UP["pod"], UP["podWithDeletionTimestamp"])
    cached = s.cache.get_pod(UP["podWithDeletionTimestamp"])
    assert cached is (UP[in_cache] if in_cache else None)
    assert [m[0] for m in q.moves()] == ([] if in_cache else [EVENT_ASSIGNED_POD_DELETE])


@pytest.mark.parametrize("version,gone", [("v1.34", False), ("v1.35", True), ("v1.36", True)])
def test_delete_assumed_pod_per_version(version, gone):
    """TestDeletePod "delete assumed pod": v1.35 forgets it at once and moves pods as for an
    assigned pod's deletion (the pod was in PreBind or Bind: no waiting pod to reject)."""
    from harness.versions import resolve
    q = RecordingQueue()
    s = handler_scheduler(q, {"supported-scheduler": FakeFramework()}, features=resolve(version))
    s.cache.assume_pod(UP["scheduledPod"])
    s.on_event("Pod", UP["pod"], None)
    assert (s.cache.get_pod(UP["scheduledPod"]) is None) is gone
    assert [m[0] for m in q.moves()] == ([EVENT_ASSIGNED_POD_DELETE] if gone else [])


@pytest.mark.parametrize("version,moved", [("v1.34", True), ("v1.35", False), ("v1.36", False)])
def test_binding_a_nominated_pod(version, moved):
    """A nominated pod is bound: v1.34's queue handler sees its unassigned version deleted and
    moves lower or equal priority pods (AssignedPodDelete); v1.35's updatePod calls
    deletePodFromSchedulingQueue(inBinding) which only drops it from the queue."""
    from harness.versions import resolve
    q = RecordingQueue()
    s = handler_scheduler(q, {"supported-scheduler": FakeFramework()}, features=resolve(version))
    nominated = _with(UP["pod"], nominatedNodeName="node1")
    s.on_event("Pod", None, nominated)
    bound = make_pod().name("pod1").namespace("ns1").uid("pod1").node("node1").resource_version("3") \
        .scheduler_name("supported-scheduler").obj()
    s.on_event("Pod", nominated, bound)
    delete_moves = [m for m in q.moves() if m[0] == EVENT_ASSIGNED_POD_DELETE]
    assert bool(delete_moves) is moved
    assert nominated.uid not in q.queued
