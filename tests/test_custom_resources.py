"""Custom resources a plugin package declares (schedharness_custom_resources): they go through
the simulated API server, reach the plugin's lister, and their events reach the queue and the
plugin's queueing hint under the GVK `<plural>.<version>.<group>`, as kube-scheduler's dynamic
informers deliver them (eventhandlers.go, addAllEventHandlers' default branch)."""

from __future__ import annotations

import os
import sys

import pytest

from harness.case.loader import case_from_data
from harness.case.runner import CaseRun, run_case
from harness.errors import CaseError, UserError
from harness.framework.registry import build_registry

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.join(HERE, "sample") not in sys.path:
    sys.path.insert(0, os.path.join(HERE, "sample"))

import schedharness_crd_plugins as crd  # noqa: E402

CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "default-scheduler",
                        "plugins": {"multiPoint": {"enabled": [{"name": "QuotaGate"}]}}}]}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "c", "image": "pause"}]}}


def quota(open_: bool, api: str = "example.com/v1"):
    return {"apiVersion": api, "kind": "Quota", "metadata": {"name": "quota"}, "spec": {"open": open_}}


@pytest.fixture
def registry():
    crd.SEEN.clear()
    return build_registry(["schedharness_crd_plugins"])


def case(cluster, steps=(), expect=None):
    return case_from_data({"apiVersion": "schedharness/v1alpha1", "kind": "Case", "config": CONFIG,
                           "cluster": [NODE] + list(cluster), "pods": [POD], "steps": list(steps),
                           "expect": expect or {}}, "crd.yaml")


def test_the_registry_carries_the_declared_kinds(registry):
    assert registry.custom_resources["Quota"].event_resource == "quotas.v1.example.com"
    assert registry.custom_resources["Fence"].event_resource == "fences.v1.example.com"


def test_two_packages_declaring_one_kind_differently_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "other_quota.py").write_text(
        "from harness.framework import CustomResource, hookimpl\n"
        "@hookimpl\n"
        "def schedharness_custom_resources():\n"
        "    return [CustomResource('other.io', 'v1', 'Quota')]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UserError, match='kind "Quota" is declared twice'):
        build_registry(["schedharness_crd_plugins", "other_quota"])


def test_update_of_a_custom_resource_requeues_through_the_plugins_hint(registry):
    c = case([quota(False)],
             steps=[{"expect": {"bindings": {"web": None}, "queue": {"web": "unschedulable"}}},
                    {"update": [quota(True)]}],
             expect={"bindings": {"web": "node-a"}, "attempts": {"web": 2}})
    res = run_case(c, registry)
    assert res.passed, res.failures
    # the hint got the stored objects of the update, namespaced in "default"
    [(is_update, old, new)] = crd.SEEN
    assert is_update and old.raw["spec"] == {"open": False} and new.raw["spec"] == {"open": True}
    assert new.namespace == "default" and new.kind == "Quota"


def test_create_of_a_custom_resource_requeues(registry):
    c = case([], steps=[{"create": [quota(True)]}], expect={"bindings": {"web": "node-a"}})
    res = run_case(c, registry)
    assert res.passed, res.failures
    assert [old for _, old, _ in crd.SEEN] == [None]


def test_an_event_no_plugin_registers_moves_nothing(registry):
    # QuotaGate registers Add|Update: deleting the Quota (and any Fence event) is no event
    c = case([quota(False), {"apiVersion": "example.com/v1", "kind": "Fence", "metadata": {"name": "f"}}],
             steps=[{"delete": [{"kind": "Quota", "name": "quota"}, {"kind": "Fence", "name": "f"}]},
                    {"expect": {"queue": {"web": "unschedulable"}, "attempts": {"web": 1}}}])
    res = run_case(c, registry)
    assert res.passed, res.failures
    assert crd.SEEN == []


def test_only_declared_kinds_reach_the_queue_as_their_gvk_event(registry):
    from harness.api.objects import make_object

    run = CaseRun(case([quota(True)]), registry)
    moves = []
    run.sched.queue.move_all_to_active_or_backoff = lambda ev, old, new, *a: moves.append(ev.label())
    stored = run.cluster.get("Quota", "default", "quota")
    run.cluster.update(make_object({**stored.raw, "spec": {"open": False}}))
    # a kind no package declares: no informer lists it, no event
    run.cluster.create(make_object({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}))
    assert moves == ["quotas.v1.example.com" + "Update"]


def test_objects_reach_the_plugins_dynamic_lister(registry):
    fence = {"apiVersion": "example.com/v1", "kind": "Fence", "metadata": {"name": "f", "namespace": "x"}}
    run = CaseRun(case([quota(True), fence]), registry)
    fw = run.sched.profiles["default-scheduler"]
    assert [o.key for o in fw.dynamic_lister("Quota").list()] == ["default/quota"]
    # a cluster-scoped kind loses the namespace it was written with (rest.BeforeCreate)
    assert fw.dynamic_lister("fences.v1.example.com").get("", "f").namespace == ""
    with pytest.raises(KeyError, match="no custom resource"):
        fw.dynamic_lister("Widget")


def test_an_object_at_a_version_the_crd_does_not_serve_is_refused(registry):
    with pytest.raises(CaseError, match='no matches for kind "Quota" in version "example.com/v2"') as e:
        CaseRun(case([quota(True, api="example.com/v2")]), registry)
    assert "cluster[1].apiVersion" in str(e.value)
