"""WorkloadAwarePreemption (v1.36, issue 27): DefaultPreemption's PodGroupPostFilter preempts for a
whole gang, the pod-by-pod PostFilter is skipped for its members, PreEnqueue holds a member while
its group's preemption runs, and the API server sets a PodGroup's priority and disruptionMode.
The scenarios with their arithmetic are cases/gang/gang-wap-*.yaml and
gang-workload-aware-preemption-v136.yaml."""

from __future__ import annotations

import os
import sys

import pytest

from harness.case import run_case

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(os.path.dirname(HERE), "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)
from case_files import refused, write_case  # noqa: E402

GATES = {"GenericWorkload": True, "GangScheduling": True, "WorkloadAwarePreemption": True}


def node(name, cpu="4", **labels):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": dict({"kubernetes.io/hostname": name}, **labels)},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def priority_class(name, value, **extra):
    return dict({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                 "value": value}, **extra)


def pod(name, cpu="2", node_name=None, group=None, **spec):
    s = dict(containers=[{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}], **spec)
    if node_name:
        s["nodeName"] = node_name
    if group:
        s["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": s}


def pod_group(name="g", min_count=2, **spec):
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name},
            "spec": dict({"schedulingPolicy": {"gang": {"minCount": min_count}}}, **spec)}


def write(tmp_path, cluster, pods, gates=None, name="c", **extra):
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "kubernetesVersion": "v1.36",
            "metadata": {"name": name}, "featureGates": GATES if gates is None else gates,
            "cluster": cluster, "pods": pods, "expect": {}}
    return write_case(tmp_path, name, data, **extra)


def condition(res, name="g"):
    pg = res.scheduler.cluster.get("PodGroup", "default", name)
    (c,) = [c for c in (pg.raw.get("status") or {}).get("conditions") or [] if c["type"] == "PodGroupScheduled"]
    return c


# -- the API server --------------------------------------------------------------------------------
@pytest.mark.parametrize("classes, spec, priority, class_name", [
    ([priority_class("high", 1000)], {"priorityClassName": "high"}, 1000, "high"),
    ([priority_class("dflt", 7, globalDefault=True)], {}, 7, "dflt"),  # the global default class
    ([], {}, 0, None),  # no class at all: 0
])
def test_the_pod_group_gets_its_priority_and_disruption_mode(tmp_path, classes, spec, priority, class_name):
    res = run_case(write(tmp_path, [node("n")] + classes + [pod_group(**spec)], []))
    pg = res.scheduler.cluster.get("PodGroup", "default", "g")
    assert pg.raw["spec"]["priority"] == priority
    assert pg.raw["spec"].get("priorityClassName") == class_name
    assert pg.raw["spec"]["disruptionMode"] == "Pod"


def test_a_pod_group_priority_the_class_does_not_give_is_forbidden(tmp_path, capsys):
    path = write(tmp_path, [node("n"), priority_class("high", 1000),
                            pod_group(priorityClassName="high", priority=5)], [])
    refused(path, capsys, "priority set in the pod group (5) must match the priority computed (1000)")


def test_an_unknown_priority_class_is_refused(tmp_path, capsys):
    refused(write(tmp_path, [node("n"), pod_group(priorityClassName="nope")], []), capsys,
            "no PriorityClass with name nope was found")


def test_a_class_above_the_highest_user_definable_priority_is_refused_after_admission(tmp_path, capsys):
    # admitPodGroup sets priority from system-cluster-critical (2000000000); validation, which
    # runs after admission, refuses it (+k8s:maximum=1000000000)
    refused(write(tmp_path, [node("n"), pod_group(priorityClassName="system-cluster-critical")], []), capsys,
            "spec.priority: Invalid value: 2000000000: must be less than or equal to 1000000000")


@pytest.mark.parametrize("template, fragment", [
    ({"priorityClassName": "Not_A_Name"}, "spec.podGroupTemplates[0].priorityClassName: Invalid value: "
                                          "\"Not_A_Name\": a lowercase RFC 1123 subdomain"),
    ({"priority": 1000000001}, "spec.podGroupTemplates[0].priority: Invalid value: 1000000001: "
                               "must be less than or equal to 1000000000"),
])
def test_a_workload_template_priority_is_validated_as_written(tmp_path, capsys, template, fragment):
    wl = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "w"},
          "spec": {"podGroupTemplates": [dict({"name": "g", "schedulingPolicy": {"gang": {"minCount": 1}}},
                                              **template)]}}
    refused(write(tmp_path, [node("n"), wl], []), capsys, fragment)


# -- the scheduler ---------------------------------------------------------------------------------
def _full_cluster(victim_priority):
    """Two 4-cpu nodes, each full with two 2-cpu pods of `victim_priority`; the gang g (minCount
    2) has priority 1000."""
    return [node("a"), node("b"), priority_class("victim", victim_priority), priority_class("high", 1000),
            pod_group(priorityClassName="high")] + [
        pod(f"v-{n}{i}", node_name=n, priorityClassName="victim") for n in "ab" for i in range(2)]


def test_the_gang_evicts_only_what_it_needs_and_binds_next_cycle(tmp_path):
    res = run_case(write(tmp_path, _full_cluster(100), [pod(f"g-{i}", group="g", priorityClassName="high")
                                                        for i in range(2)]))
    left = {p.name: p.node_name for p in res.scheduler.cluster.list("Pod")}
    assert len([n for n in left if n.startswith("v-")]) == 2  # two of four victims evicted
    assert left["g-0"] and left["g-1"]
    assert condition(res)["status"] == "True"


@pytest.mark.parametrize("victim_priority, members, appended", [
    (1000, [{}, {}], "No preemption victims found for incoming preemptor"),
    (100, [{}, {"preemptionPolicy": "Never"}], "not eligible due to preemptionPolicy=Never."),
])
def test_a_group_that_cannot_preempt_says_why_in_its_condition(tmp_path, victim_priority, members, appended):
    classes = [priority_class("never", 1000, preemptionPolicy="Never")]
    pods = [pod(f"g-{i}", group="g", priorityClassName="never" if m else "high") for i, m in enumerate(members)]
    res = run_case(write(tmp_path, _full_cluster(victim_priority) + classes, pods))
    assert len([p for p in res.scheduler.cluster.list("Pod") if p.name.startswith("v-")]) == 4
    c = condition(res)
    assert (c["status"], c["reason"]) == ("False", "Unschedulable")
    assert c["message"] == f"pod group is unschedulable, {appended}"


def test_with_the_gate_off_the_members_preempt_pod_by_pod(tmp_path):
    """v1.36's default: each member's own PostFilter nominates it (requiresPreemption), no
    "workload aware preemption" message."""
    gates = {"GenericWorkload": True, "GangScheduling": True}
    cluster = [c for c in _full_cluster(100)]
    cluster[4] = pod_group()  # no priorityClassName without the gate
    res = run_case(write(tmp_path, cluster, [pod(f"g-{i}", group="g", priorityClassName="high") for i in range(2)],
                         gates=gates))
    assert len([p for p in res.scheduler.cluster.list("Pod") if p.name.startswith("v-")]) == 2
    assert condition(res)["status"] == "True"


def test_topology_constraints_are_not_preempted_for(tmp_path):
    """With TopologyAwareWorkloadScheduling a member of a group with schedulingConstraints is
    refused pod-by-pod preemption (placement-based limitation), and workload-aware preemption
    refuses the group."""
    gates = dict(GATES, TopologyAwareWorkloadScheduling=True)
    cluster = _full_cluster(100)
    cluster[4] = pod_group(priorityClassName="high",
                           schedulingConstraints={"topology": [{"key": "kubernetes.io/hostname"}]})
    res = run_case(write(tmp_path, cluster, [pod(f"g-{i}", group="g", priorityClassName="high") for i in range(2)],
                         gates=gates))
    assert len([p for p in res.scheduler.cluster.list("Pod") if p.name.startswith("v-")]) == 4
    assert condition(res)["message"].endswith(
        "workload aware preemption is not supported for pod groups with scheduling constraints")
    msg = res.scheduler.cluster.get("Pod", "default", "g-0").status["conditions"][0]["message"]
    assert "not eligible due to placement-based pod group scheduling limitation" in msg


def test_a_member_waits_while_its_groups_preemption_runs():
    """PreEnqueue: a member is held (UnschedulableAndUnresolvable) while its PodGroup is in the
    executor's preempting set, and let through once it leaves it."""
    from builtin_plugins.default_preemption import DefaultPreemption
    from harness.api.objects import make_object
    from harness.framework import Code
    from harness.versions import resolve

    group = make_object(pod_group())
    group.raw["metadata"]["uid"] = "pg-uid"

    class Cluster:
        def get(self, kind, namespace, name):
            return group if (kind, name) == ("PodGroup", "g") else None

    class Handle:
        feature_gates = resolve("v1.36", GATES)
        cluster = Cluster()

    plugin = DefaultPreemption(handle=Handle())
    member = make_object(dict(pod("m", group="g"), metadata={"name": "m", "namespace": "default", "uid": "m"}))
    assert plugin.pre_enqueue(member) is None
    plugin.evaluator.preempting.add(group.uid)
    st = plugin.pre_enqueue(member)
    assert (st.code, st.message()) == (Code.UnschedulableAndUnresolvable,
                                       "waiting for the preemption for this pod group to be finished")
    plugin.evaluator.preempting.discard(group.uid)
    assert plugin.pre_enqueue(member) is None



def test_without_default_preemption_the_group_cannot_preempt(tmp_path):
    """runWorkloadAwarePreemption: the profile's DefaultPreemption is the only PodGroupPostFilter
    plugin; disabled, the group's condition says so and nothing is evicted."""
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler",
                            "plugins": {"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}}}]}
    path = write(tmp_path, _full_cluster(100), [pod(f"g-{i}", group="g", priorityClassName="high") for i in range(2)],
                 config=config)
    res = run_case(path)
    assert len([p for p in res.scheduler.cluster.list("Pod") if p.name.startswith("v-")]) == 4
    assert condition(res)["message"] == ("pod group is unschedulable, default preemption plugin is not "
                                         "registered, workload aware preemption is disabled")


@pytest.mark.parametrize("protected, evicted", [
    (None, {"v-b0", "v-b1"}),  # by start time: v-a0, v-a1 reprieved, node b's pods evicted
    ("b", {"v-a0", "v-a1"}),  # node b's pods violate a PDB: reprieved first, node a's evicted
])
def test_pdb_violating_victims_are_reprieved_first(tmp_path, protected, evicted):
    cluster = _full_cluster(100)
    for obj in cluster:
        if obj["kind"] == "Pod":
            obj["metadata"]["labels"] = {"node": obj["spec"]["nodeName"]}
    if protected:
        cluster.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
                        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"node": protected}}},
                        "status": {"disruptionsAllowed": 0}})
    res = run_case(write(tmp_path, cluster, [pod(f"g-{i}", group="g", priorityClassName="high") for i in range(2)]))
    left = {p.name for p in res.scheduler.cluster.list("Pod")}
    assert {f"v-{n}{i}" for n in "ab" for i in range(2)} - left == evicted


def test_topology_constraints_refuse_pod_by_pod_preemption_without_the_gate_too(tmp_path):
    gates = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
    cluster = _full_cluster(100)
    cluster[4] = pod_group(schedulingConstraints={"topology": [{"key": "kubernetes.io/hostname"}]})
    res = run_case(write(tmp_path, cluster, [pod(f"g-{i}", group="g", priorityClassName="high") for i in range(2)],
                         gates=gates))
    assert len([p for p in res.scheduler.cluster.list("Pod") if p.name.startswith("v-")]) == 4
    msg = res.scheduler.cluster.get("Pod", "default", "g-0").status["conditions"][0]["message"]
    assert "not eligible due to placement-based pod group scheduling limitation" in msg
