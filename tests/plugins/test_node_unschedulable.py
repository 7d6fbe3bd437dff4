"""nodeunschedulable/node_unschedulable_test.go: TestNodeUnschedulable,
TestIsSchedulableAfterNodeChange, TestIsSchedulableAfterPodTolerationChange."""

from __future__ import annotations

import pytest

from builtin_plugins.node_unschedulable import ERR_REASON_UNSCHEDULABLE, NodeUnschedulable
from harness.api.objects import Node, Pod
from harness.framework import ActionType, EventResource, NodeInfo, QueueingHint, Status


def node(unschedulable=False, name="n"):
    return Node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                 "spec": {"unschedulable": unschedulable}})


def pod(tolerations=(), uid="uid0"):
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": uid},
                "spec": {"tolerations": list(tolerations)}})


UNSCHED_TOL = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


@pytest.mark.parametrize("name,p,n,want", [
    ("Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)", pod(), node(True),
     Status.unresolvable(ERR_REASON_UNSCHEDULABLE)),
    ("Schedule pod to normal node", pod(), node(False), None),
    ("Schedule pod with toleration to unschedulable node", pod([UNSCHED_TOL]), node(True), None),
    ("toleration with empty key and Exists tolerates it", pod([{"operator": "Exists"}]), node(True), None),
    ("toleration for another effect does not", pod([dict(UNSCHED_TOL, effect="NoExecute")]), node(True),
     Status.unresolvable(ERR_REASON_UNSCHEDULABLE)),
], ids=lambda x: x if isinstance(x, str) else "")
def test_node_unschedulable(name, p, n, want):
    ni = NodeInfo()
    ni.set_node(n)
    got = NodeUnschedulable(None, None).filter(None, p, ni)
    if want is None:
        assert got is None
    else:
        assert got == want


@pytest.mark.parametrize("name,old,new,want", [
    ("backoff-wrong-new-object-added-schedulable", None, node(False), QueueingHint.Queue),
    ("skip-queue-on-unschedulable-node-added", None, node(True), QueueingHint.QueueSkip),
    ("queue-on-unschedulable-field-change", node(True), node(False), QueueingHint.Queue),
    ("skip-unrelated-change", node(True), node(True), QueueingHint.QueueSkip),
    ("skip-unrelated-change-schedulable", node(False), node(False), QueueingHint.QueueSkip),
    ("skip-becoming-unschedulable", node(False), node(True), QueueingHint.QueueSkip),
])
def test_is_schedulable_after_node_change(name, old, new, want):
    assert NodeUnschedulable(None, None).is_schedulable_after_node_change(pod(), old, new) == want


def test_is_schedulable_after_pod_toleration_change():
    pl = NodeUnschedulable(None, None)
    target = pod()
    # another pod: skip
    assert pl.is_schedulable_after_pod_toleration_change(target, pod(uid="x"), pod([UNSCHED_TOL], uid="x")) \
        == QueueingHint.QueueSkip
    # the pod gains the toleration: queue
    assert pl.is_schedulable_after_pod_toleration_change(target, target, pod([UNSCHED_TOL])) == QueueingHint.Queue
    # the pod gains an unrelated toleration: skip
    assert pl.is_schedulable_after_pod_toleration_change(
        target, target, pod([{"key": "foo", "operator": "Exists"}])) == QueueingHint.QueueSkip


def test_events_to_register():
    evs = NodeUnschedulable(None, None).events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in evs] == [
        (EventResource.Node, ActionType.Add | ActionType.UpdateNodeTaint),
        (EventResource.Pod, ActionType.UpdatePodToleration)]
