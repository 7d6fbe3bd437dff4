"""Kinds of one name in different API groups are different kinds, as the API server keys them
(schema.GroupKind; harness/api/group_kind.py): a case holding both keeps both; a bare name
resolves as kubectl resolves one among the resources served (a built-in kind the version and
gates serve: its own group; any other: every group), `Kind.group` that group."""

from __future__ import annotations

import pytest

from harness.api.group_kind import store_kind
from harness.api.objects import make_object
from harness.case.loader import case_from_data
from harness.case.runner import CaseRun
from harness.cluster import Cluster
from harness.errors import CaseError
from harness.framework.custom_resources import CustomResource, DynamicLister
from harness.versions import case_features

WORKLOAD_API_ON = case_features("v1.36", {"GenericWorkload": True})

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def widget(group, name="w", size=1):
    """An undeclared kind: stored as written (cluster-scoped here: the harness cannot know an
    undeclared kind is namespaced)."""
    return {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": size}}


def pod_group(api_version, name="team"):
    return {"apiVersion": api_version, "kind": "PodGroup", "metadata": {"name": name, "namespace": "default"},
            "spec": {"minMember": 2}}


def _case(cluster, steps=()):
    return case_from_data({"apiVersion": "schedharness/v1alpha1", "kind": "Case", "cluster": [NODE] + list(cluster),
                           "steps": list(steps), "expect": {}}, "groups.yaml")


def test_a_case_keeps_two_kinds_of_one_name_in_two_groups():
    run = CaseRun(_case([widget("a.example.com", size=1), widget("b.example.com", size=2)]))
    both = run.cluster.list("Widget")
    assert [(o.api_version, o.spec["size"]) for o in both] == [("a.example.com/v1", 1), ("b.example.com/v1", 2)]
    assert run.cluster.get("Widget.b.example.com", "", "w").spec["size"] == 2
    assert [o.spec["size"] for o in run.cluster.list("Widget.a.example.com")] == [1]


def test_the_same_name_twice_in_one_group_is_still_a_duplicate():
    with pytest.raises(CaseError, match="duplicate Widget w"):
        CaseRun(_case([widget("a.example.com"), widget("a.example.com", size=2)]))


def test_steps_update_and_delete_the_kind_of_their_apiVersion():
    run = CaseRun(_case([widget("a.example.com", size=1), widget("b.example.com", size=2)],
                        [{"update": [widget("b.example.com", size=5)]},
                         {"delete": [{"apiVersion": "a.example.com/v1", "kind": "Widget", "name": "w"}]}]))
    run.run()
    for step in run.case.steps:
        run.apply(step)
    assert [(o.api_version, o.spec["size"]) for o in run.cluster.list("Widget")] == [("b.example.com/v1", 5)]


def test_the_workload_apis_podgroup_and_a_custom_podgroup_of_one_name_are_both_kept():
    """With the Workload API served, a bare "PodGroup" (the in-tree readers: GangScheduling,
    the controllers) is the scheduling.k8s.io one only; scheduler-plugins' PodGroup is read in
    its own group."""
    cluster = Cluster(WORKLOAD_API_ON)
    builtin = cluster.create(make_object(pod_group("scheduling.k8s.io/v1alpha2")))
    custom = cluster.create(make_object(pod_group("scheduling.x-k8s.io/v1alpha1")))
    assert cluster.get("PodGroup", "default", "team") is builtin
    assert cluster.list("PodGroup") == [builtin]
    assert cluster.get("PodGroup.scheduling.x-k8s.io", "default", "team") is custom
    cr = CustomResource("scheduling.x-k8s.io", "v1alpha1", "PodGroup")
    assert DynamicLister(cluster, cr).list() == [custom]
    cluster.delete(custom)
    assert cluster.list("PodGroup") == [builtin] and DynamicLister(cluster, cr).list() == []


@pytest.mark.parametrize("features", [None, case_features("v1.36", {}), case_features("v1.35", {"GenericWorkload": True}),
                                      case_features("v1.34", {})])
def test_without_the_workload_apis_podgroup_a_bare_name_reads_the_custom_one(features):
    """PodGroup not served (GenericWorkload off, the default; or v1.35, whose Workload API has no
    PodGroup): a plugin reading its scheduler-plugins PodGroups by the bare name gets them."""
    cluster = Cluster(features)
    custom = cluster.create(make_object(pod_group("scheduling.x-k8s.io/v1alpha1")))
    assert cluster.get("PodGroup", "default", "team") is custom
    assert cluster.list("PodGroup") == [custom] and cluster.list("PodGroup", "default") == [custom]
    assert cluster.get("PodGroup.scheduling.x-k8s.io", "default", "team") is custom


def test_writes_of_one_group_leave_the_other_alone():
    cluster = Cluster()
    a = cluster.create(make_object(widget("a.example.com")))
    v = cluster.kind_version("Widget.b.example.com")
    cluster.update(make_object(widget("a.example.com", size=3)))
    assert cluster.kind_version("Widget.b.example.com") == v
    assert cluster.kind_version("Widget") > 0 and a.spec["size"] == 1


@pytest.mark.parametrize("kind, api_version, key", [
    ("Pod", "v1", "Pod"), ("Pod", "", "Pod"), ("PriorityClass", "scheduling.k8s.io/v1", "PriorityClass"),
    ("PodGroup", "scheduling.k8s.io/v1alpha2", "PodGroup"),
    ("PodGroup", "scheduling.x-k8s.io/v1alpha1", "PodGroup.scheduling.x-k8s.io"),
    ("Deployment", "apps/v1", "Deployment"), ("Pod", "example.com/v1", "Pod.example.com"),
    ("Widget", "example.com/v1", "Widget.example.com"), ("Widget", "", "Widget"),
])
def test_store_keys(kind, api_version, key):
    assert store_kind(kind, api_version) == key


def test_steps_find_an_undeclared_kind_in_the_namespace_it_was_stored_in():
    """A kind no package declares is stored as written, namespace and all; a step's update or
    delete names it the same way (it used to look it up without its namespace and fail)."""
    def namespaced_widget(size):
        w = widget("a.example.com", size=size)
        w["metadata"]["namespace"] = "team-a"
        return w

    run = CaseRun(_case([namespaced_widget(1)],
                        [{"update": [namespaced_widget(7)]}]))
    run.run()
    for step in run.case.steps:
        run.apply(step)
    assert [(o.namespace, o.spec["size"]) for o in run.cluster.list("Widget")] == [("team-a", 7)]
    run = CaseRun(_case([namespaced_widget(1)],
                        [{"delete": [{"apiVersion": "a.example.com/v1", "kind": "Widget", "name": "w",
                                      "namespace": "team-a"}]}]))
    run.run()
    for step in run.case.steps:
        run.apply(step)
    assert run.cluster.list("Widget") == []
