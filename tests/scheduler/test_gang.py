"""Gang scheduling through the Workload API (issue 27): the objects as the API server takes them,
the GangScheduling plugin, v1.35's Permit timeouts, v1.36's pod group cycle, the Placement
extension points, and the loop a v1.36 gang that never fits runs."""

from __future__ import annotations

import os
import sys

import pytest

from harness.case import load_case, run_case
from harness.cli import main
from harness.framework import Placement, Plugin, hookimpl
from harness.framework.registry import Registry, default_registry

GATES = {"GenericWorkload": True, "GangScheduling": True}


def node(name, cpu="4", **labels):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": dict({"kubernetes.io/hostname": name}, **labels)},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def member(name, cpu="1", version="v1.36", group="g", **spec):
    ref = ({"schedulingGroup": {"podGroupName": group}} if version == "v1.36"
           else {"workloadRef": {"name": group, "podGroup": "workers"}})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": dict(ref, containers=[{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
                         **spec)}


def pod_group(name="g", min_count=3, **spec):
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": name},
            "spec": dict({"schedulingPolicy": {"gang": {"minCount": min_count}}}, **spec)}


def workload(name="g", policy=None):
    return {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": name},
            "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 3}} if policy is None else policy}]}}


SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)
from case_files import refused as one_error_line, write_case  # noqa: E402


def write(tmp_path, cluster, pods, version="v1.36", gates=None, expect=None, name="c", **extra):
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "kubernetesVersion": version,
            "metadata": {"name": name}, "featureGates": GATES if gates is None else gates,
            "cluster": cluster, "pods": pods, "expect": expect or {}}
    return write_case(tmp_path, name, data, **extra)


# -- the objects, as the API server of each version serves and validates them ------------------
@pytest.mark.parametrize("version, obj, fragment", [
    ("v1.35", pod_group(), 'no matches for kind "PodGroup" in version "scheduling.k8s.io/v1alpha2"'),
    ("v1.36", workload(), 'no matches for kind "Workload" in version "scheduling.k8s.io/v1alpha1"'),
    ("v1.35", workload(policy={"gang": {"minCount": 0}}), "spec.podGroups[0].policy.gang.minCount: Invalid value: 0"),
    ("v1.35", workload(policy={"basic": {}, "gang": {"minCount": 2}}),
     "exactly one of `basic`, `gang` is required, but multiple fields are set"),
    ("v1.35", workload(policy={}), "spec.podGroups[0].policy: Required value: exactly one of `basic`, `gang` is required"),
    ("v1.35", dict(workload(), spec={"podGroups": []}), "spec.podGroups: Required value: must have at least one item"),
    ("v1.35", dict(workload(), spec={"podGroups": [{"name": "Bad_Name", "policy": {"basic": {}}}]}),
     "spec.podGroups[0].name: Invalid value"),
    ("v1.36", pod_group(min_count=-1), "spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater "
                                       "than or equal to 1"),
    ("v1.36", pod_group(min_count=0), "spec.schedulingPolicy.gang.minCount: Required value"),
    ("v1.36", dict(pod_group(), spec={"schedulingPolicy": {}}),
     'spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`'),
    ("v1.36", dict(pod_group(), spec={"schedulingPolicy": {"gang": {"minCount": 2}}, "minMember": 2}),
     'strict decoding error: unknown field "spec.minMember"'),
])
def test_the_api_server_refuses_what_it_would(tmp_path, capsys, version, obj, fragment):
    one_error_line(write(tmp_path, [node("n"), obj], [], version=version), capsys, fragment)


@pytest.mark.parametrize("field, value", [
    ("schedulingConstraints", {"topology": [{"key": "zone"}]}), ("priorityClassName", "high"),
    ("priority", 7), ("disruptionMode", "PodGroup"),
    ("resourceClaims", [{"name": "gpu", "resourceClaimName": "gpu"}]),
])
def test_a_field_whose_gate_is_off_is_dropped_before_validation(tmp_path, field, value):
    # dropDisabledPodGroupSpecFields runs in PrepareForCreate, before validation: the field is
    # never Forbidden, it is gone
    res = run_case(write(tmp_path, [node("n"), pod_group(**{field: value})], [member("w-0")]))
    pg = res.scheduler.cluster.get("PodGroup", "default", "g")
    assert field not in pg.raw["spec"]


def test_without_generic_workload_the_api_is_not_served(tmp_path, capsys):
    one_error_line(write(tmp_path, [node("n"), pod_group()], [], gates={}),
                   capsys, "served only with the GenericWorkload feature gate on")


@pytest.mark.parametrize("version", ["v1.35", "v1.36"])
def test_without_the_gate_the_pod_field_is_dropped_and_the_pod_scheduled_alone(tmp_path, version):
    # dropDisabledWorkloadRef / dropDisabledSchedulingGroup
    res = run_case(write(tmp_path, [node("n")], [member("w-0", version=version)], version=version, gates={}))
    pod = res.scheduler.cluster.get("Pod", "default", "w-0")
    assert pod.node_name == "n"
    assert "workloadRef" not in pod.spec and "schedulingGroup" not in pod.spec


# -- v1.35 --------------------------------------------------------------------------------------
def test_v135_a_member_that_never_fits_repeats_the_timeout_every_five_minutes(tmp_path):
    """The members that fit wait at Permit until the group's deadline; every retry (the
    30-second flush after 5 minutes unschedulable) waits anew: the attempts keep growing."""
    pods = [member("w-0", version="v1.35"), member("w-1", version="v1.35"),
            member("w-2", version="v1.35", nodeSelector={"disk": "ssd"})]
    path = write(tmp_path, [node("n"), workload()], pods, version="v1.35",
                 steps=[{"advance": "30m"}])
    res = run_case(path)
    s = res.scheduler
    attempts = {p.name: s.attempts[p.uid] for p in s.cluster.list("Pod")}
    assert all(p.node_name == "" for p in s.cluster.list("Pod"))
    assert attempts["w-0"] >= 4 and attempts["w-1"] >= 4, attempts
    w0 = s.cluster.get("Pod", "default", "w-0")
    cond = [c for c in w0.status["conditions"] if c["type"] == "PodScheduled"][0]
    assert cond["message"] == ("0/1 nodes are available: 1 rejected due to timeout after waiting 5m0s at plugin "
                               "GangScheduling.")


# -- v1.36 --------------------------------------------------------------------------------------
def _condition(res, name="g"):
    pg = res.scheduler.cluster.get("PodGroup", "default", name)
    return [c for c in (pg.raw.get("status") or {}).get("conditions") or [] if c["type"] == "PodGroupScheduled"]


def test_v136_a_scheduled_group_gets_its_condition(tmp_path):
    res = run_case(write(tmp_path, [node("n"), pod_group()], [member(f"w-{i}") for i in range(3)]))
    assert all(p.node_name == "n" for p in res.scheduler.cluster.list("Pod"))
    (cond,) = _condition(res)
    assert (cond["status"], cond["reason"]) == ("True", "Scheduled")


def test_v136_a_group_that_does_not_fit_is_unschedulable(tmp_path):
    res = run_case(write(tmp_path, [node("n", cpu="2"), pod_group()], [member(f"w-{i}", cpu="3") for i in range(3)]))
    (cond,) = _condition(res)
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"] == "pod group is unschedulable"


def test_v136_a_member_that_never_fits_is_the_loop_the_error_names(tmp_path, capsys):
    """Two members fit, one never does: GangScheduling's Permit activates the unplaced member,
    the next cycle pops the others from backoff: kube-scheduler retries the group forever at
    the same instant. The run ends with one error line naming the pod group and the loop."""
    pods = [member("w-0"), member("w-1"), member("w-2", nodeSelector={"disk": "ssd"})]
    path = write(tmp_path, [node("n"), pod_group()], pods)
    rc = main(["run", path])
    err = capsys.readouterr().err
    assert rc == 2
    assert "pod group default/g is retried at once after every failed pod group cycle" in err, err
    assert "scheduleOnePodGroup" in err and len(err.strip().splitlines()) == 1, err


# -- the Placement extension points: a third-party plugin takes part ---------------------------
class EvenNodesOnly(Plugin):
    """A PlacementGenerate plugin: one placement, the nodes whose name ends in an even digit."""

    name = "EvenNodesOnly"
    calls = 0

    @hookimpl
    def generate_placements(self, state, pod_group, parent_placement):
        type(self).calls += 1
        nodes = [ni for ni in parent_placement.nodes if int(ni.node.name[-1]) % 2 == 0]
        return [Placement("even", nodes)], None


def test_a_third_party_placement_generator_restricts_the_group(tmp_path):
    reg = Registry(default_registry())
    reg[EvenNodesOnly.name] = EvenNodesOnly
    gates = dict(GATES, TopologyAwareWorkloadScheduling=True)
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler",
                            "plugins": {"multiPoint": {"enabled": [{"name": "EvenNodesOnly"}],
                                                       "disabled": [{"name": "TopologyPlacementGenerator"}]}}}]}
    path = write(tmp_path, [node("n1", cpu="8"), node("n2", cpu="2"), node("n4", cpu="2"), pod_group(min_count=2)],
                 [member("w-0"), member("w-1")], gates=gates, config=config)
    res = run_case(load_case(path), registry=reg)
    assert EvenNodesOnly.calls >= 1
    assert sorted(p.node_name for p in res.scheduler.cluster.list("Pod")) == ["n2", "n4"]


@pytest.mark.parametrize("version, obj, change, fragment", [
    ("v1.35", workload(), {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 2}}}]},
     "update[0].podGroups: the API server refuses this update: Invalid value"),
    ("v1.36", pod_group(), {"schedulingPolicy": {"gang": {"minCount": 2}}},
     "update[0].spec.schedulingPolicy: the API server refuses this update: Invalid value: null: field is immutable"),
])
def test_the_workload_api_spec_is_immutable(tmp_path, capsys, version, obj, change, fragment):
    updated = dict(obj, spec=change)
    path = write(tmp_path, [node("n"), obj], [], version=version, steps=[{"update": [updated]}])
    one_error_line(path, capsys, fragment)


def test_the_pods_group_reference_is_immutable(tmp_path, capsys):
    moved = member("w-0", group="other")
    path = write(tmp_path, [node("n", cpu="0"), pod_group()], [member("w-0")], steps=[{"update": [moved]}])
    rc = main(["run", path])
    err = capsys.readouterr().err
    assert rc == 2 and "spec" in err and "w-0" not in err.split(":")[0], err


def test_json_reports_each_pod_group(tmp_path, capsys):
    import json

    pods = [member("w-0", cpu="9"), member("w-1", cpu="9")]
    path = write(tmp_path, [node("n"), pod_group(min_count=2)], pods)
    main(["run", "--json", path])
    (out,) = json.loads(capsys.readouterr().out)
    g = out["podGroups"]["default/g"]
    assert (g["policy"], g["minCount"], g["bound"]) == ("gang", 2, 0)
    assert g["members"] == {"default/w-0": None, "default/w-1": None}
    assert "Insufficient cpu" in g["unbound"]["default/w-1"]["message"]
    assert g["condition"]["status"] == "False"


def test_diff_runs_a_gang_case_in_each_versions_api(capsys):
    """diff --kubernetes-version v1.35 --kubernetes-version v1.36 rewrites a gang case for the
    other version's Workload API (workloadRef <-> schedulingGroup, a Workload's pod groups <->
    PodGroups named <workload>-<group>): the same gangs bind on both sides."""
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cases = [os.path.join(root, "cases", "gang", n) for n in (
        "gang-workload-created-later-v135.yaml", "gang-podgroup-created-later-v136.yaml",
        "gang-basic-policy-not-gated-v135.yaml", "gang-none-fits-parks-v136.yaml")]
    rc = main(["diff", "--kubernetes-version", "v1.35", "--kubernetes-version", "v1.36", *cases])
    out = capsys.readouterr()
    assert rc == 0, out.out + out.err
    assert "runs under one side only" not in out.out, out.out


def test_explain_names_the_group_and_why_each_member_is_unbound(tmp_path, capsys):
    path = write(tmp_path, [node("n", cpu="2"), pod_group(min_count=2)], [member("w-0", cpu="3"), member("w-1", cpu="3")])
    main(["explain", path, "default/w-0"])
    out = capsys.readouterr().out
    assert "pod group default/g (gang, minCount 2): 0 of 2 members bound; PodGroupScheduled False (Unschedulable)" in out
    assert "default/w-0 [unschedulable]: 0/1 nodes are available: 1 Insufficient cpu." in out


def test_the_html_timeline_draws_each_pod_group_as_a_band(tmp_path):
    from harness.reports.html import case_view

    steps = [{"expect": {"queue": {"w-0": "gated", "w-1": "gated"}}},
             {"create": [pod_group(min_count=2)]}, {"expect": {"bindings": {"w-0": "n", "w-1": "n"}}}]
    res = run_case(write(tmp_path, [node("n")], [member("w-0"), member("w-1")], steps=steps))
    assert res.passed, res.failures
    svg = str(case_view(res)["timeline"])
    assert "pod group default/g (gang, minCount 2): 2 bound" in svg


@pytest.mark.parametrize("version, ref, fragment", [
    ("v1.35", {"workloadRef": {"name": "w", "podGroup": "Bad_Group"}}, "spec.workloadRef.podGroup: Invalid value"),
    ("v1.35", {"workloadRef": {"name": "", "podGroup": "g"}}, "spec.workloadRef.name: Invalid value"),
    ("v1.36", {"schedulingGroup": {}}, "spec.schedulingGroup.podGroupName: Invalid value: null: must specify one of"),
    ("v1.36", {"schedulingGroup": "g"}, "spec.schedulingGroup: must be an object"),
])
def test_the_pods_group_reference_is_validated(tmp_path, capsys, version, ref, fragment):
    bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": dict(ref, containers=[{"name": "c", "image": "i"}])}
    one_error_line(write(tmp_path, [node("n")], [bad], version=version), capsys, fragment)
