"""DynamicResources in v1.36's pod group cycle, and DRAWorkloadResourceClaims (a PodGroup's own
ResourceClaims), both ways; the gate is unknown before v1.36."""

from __future__ import annotations

import copy
import os

import pytest
import yaml

from harness.case import run_case
from harness.cli import main

CASES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "cases", "gang")


def load(name):
    with open(os.path.join(CASES, name)) as f:
        return yaml.safe_load(f)


def write(tmp_path, data, name="c"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def claims(res):
    return {c.name: c for c in res.scheduler.cluster.list("ResourceClaim")}


def test_the_podgroup_claim_is_one_claim_owned_by_the_group_and_reserved_for_it(tmp_path):
    res = run_case(write(tmp_path, load("gang-dra-podgroup-claim-v136.yaml")))
    cl = res.scheduler.cluster
    (claim,) = claims(res).values()
    owner = claim.raw["metadata"]["ownerReferences"][0]
    pg = cl.get("PodGroup", "default", "team")
    assert (owner["kind"], owner["name"], owner["uid"]) == ("PodGroup", "team", pg.uid)
    assert pg.raw["status"]["resourceClaimStatuses"] == [{"name": "link", "resourceClaimName": claim.name}]
    assert [r["resource"] for r in claim.status["reservedFor"]] == ["podgroups"]
    for pod in cl.list("Pod"):
        assert pod.node_name
        assert pod.status["resourceClaimStatuses"] == [{"name": "link", "resourceClaimName": claim.name}]


def test_with_the_gate_off_each_pod_gets_its_own_claim(tmp_path):
    data = load("gang-dra-podgroup-claim-v136.yaml")
    data["featureGates"].pop("DRAWorkloadResourceClaims")
    slice_ = next(o for o in data["cluster"] if o["kind"] == "ResourceSlice")
    slice_["spec"]["devices"].append({"name": "link-1"})  # one device per pod
    data["expect"] = {}
    res = run_case(write(tmp_path, data))
    cl = res.scheduler.cluster
    assert "resourceClaims" not in cl.get("PodGroup", "default", "team").raw["spec"]  # dropped
    got = claims(res)
    assert len(got) == 2
    for claim in got.values():
        assert claim.raw["metadata"]["ownerReferences"][0]["kind"] == "Pod"
        assert [r["resource"] for r in claim.status["reservedFor"]] == ["pods"]
    assert all(p.node_name for p in cl.list("Pod"))


def test_with_the_gate_off_one_device_for_two_pod_claims_never_fits_the_gang(tmp_path, capsys):
    # w-0 fits and Permit activates w-1, which has no device left: v1.36 retries the group forever
    data = load("gang-dra-podgroup-claim-v136.yaml")
    data["featureGates"].pop("DRAWorkloadResourceClaims")
    data["expect"] = {}
    assert main(["run", write(tmp_path, data)]) == 2
    assert "pod group default/team is retried at once" in capsys.readouterr().err


def test_a_pod_of_the_cycle_reuses_the_pending_allocation_without_the_gate(tmp_path):
    res = run_case(write(tmp_path, load("gang-dra-shared-claim-v136.yaml")))
    claim = claims(res)["link"]
    assert sorted(r["name"] for r in claim.status["reservedFor"]) == ["w-0", "w-1"]
    assert claim.status["allocation"]["devices"]["results"][0]["device"] == "link-0"


def _stale_podgroup_claim_case(tmp_path):
    """gang-dra-podgroup-claim-v136 with the PodGroup's claim allocated on a node since gone and
    reserved for the PodGroup."""
    data = load("gang-dra-podgroup-claim-v136.yaml")
    pg = next(o for o in data["cluster"] if o["kind"] == "PodGroup")
    pg["spec"]["resourceClaims"] = [{"name": "link", "resourceClaimName": "link"}]
    pg["metadata"]["uid"] = "pg-uid"
    data["cluster"] = [o for o in data["cluster"] if o["kind"] != "ResourceClaimTemplate"]
    data["cluster"].append({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "link", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "link", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
        "status": {"allocation": {"devices": {"results": [{"request": "link", "driver": "gpu.example.com",
                                                           "pool": "fabric", "device": "link-0"}]},
                                  "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                      {"key": "metadata.name", "operator": "In", "values": ["gone"]}]}]}},
                   "reservedFor": [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "team",
                                    "uid": "pg-uid"}]}})
    for p in data["pods"]:
        p["spec"]["resourceClaims"] = [{"name": "link", "resourceClaimName": "link"}]
    data["expect"] = {}
    return write(tmp_path, data)


def test_postfilter_unreserves_the_podgroup_claim_when_no_member_is_placed(tmp_path, capsys):
    # the claim was allocated on a node since gone and reserved for the PodGroup; no pod of the
    # group is placed: the first PostFilter drops the PodGroup from reservedFor ("ResourceClaim
    # unreserved for PodGroup"), the next pod's PostFilter deallocates the claim, no longer
    # reserved for anyone, and the group is placed anew with the claim reserved for it again
    path = _stale_podgroup_claim_case(tmp_path)
    assert main(["explain", path]) == 0
    out = capsys.readouterr().out
    assert "PostFilter: UnschedulableAndUnresolvable: ResourceClaim unreserved for PodGroup" in out
    res = run_case(path)
    claim = claims(res)["link"]
    assert claim.status["reservedFor"] == [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups",
                                            "name": "team", "uid": "pg-uid"}]
    assert "nodeSelector" not in claim.status["allocation"]  # allocated anew on the fabric device
    assert all(p.node_name for p in res.scheduler.cluster.list("Pod"))


def test_the_podgroup_unreserve_is_a_status_patch(tmp_path, monkeypatch):
    """Upstream removes the PodGroup from reservedFor with a strategic-merge patch of the claim's
    status subresource, where the API server validates the status update
    (harness/api/claim_status.py); when it refuses, the error is logged and the next claim
    tried: PostFilter ends "still not schedulable", the claim keeps its reservation."""
    import harness.cluster as cluster_module
    from harness.apierrors import Invalid

    path = _stale_podgroup_claim_case(tmp_path)
    writes = []

    def refuse(name, status):
        writes.append((name, [r["resource"] for r in status.get("reservedFor") or []]))
        raise Invalid("ResourceClaim.resource.k8s.io", name, ["status: Invalid value: refused by the test"])

    monkeypatch.setattr(cluster_module, "check_resource_claim_status_update", refuse)
    res = run_case(path, explain=True)
    assert ("link", []) in writes  # the PodGroup's entry dropped, through the status update
    claim = claims(res)["link"]
    assert claim.status["reservedFor"][0]["uid"] == "pg-uid"
    messages = {str(st) for recs in res.scheduler.records.values() for r in recs
                for st in [r.post_filter] if st is not None}
    assert messages and not any("unreserved for PodGroup" in m for m in messages), messages


@pytest.mark.parametrize("claims_, fragment", [
    ([{"name": "a", "resourceClaimName": "x", "resourceClaimTemplateName": "y"}],
     "spec.resourceClaims[0]: Invalid value: \"{`resourceClaimName`, `resourceClaimTemplateName`}\": must specify "
     "exactly one of"),
    ([{"name": "a"}], 'spec.resourceClaims[0]: Invalid value: "": must specify one of: `resourceClaimName`'),
    ([{"name": "A_", "resourceClaimName": "x"}], "spec.resourceClaims[0].name: Invalid value"),
    ([{"name": f"c{i}", "resourceClaimName": "x"} for i in range(5)],
     "spec.resourceClaims: Too many: 5: must have at most 4 items"),
    ([{"name": "a", "resourceClaimName": "Bad_Name"}], "spec.resourceClaims[0].resourceClaimName: Invalid value"),
])
def test_the_podgroup_claims_are_validated_with_the_gate_on(tmp_path, capsys, claims_, fragment):
    data = load("gang-dra-podgroup-claim-v136.yaml")
    pg = next(o for o in data["cluster"] if o["kind"] == "PodGroup")
    pg["spec"]["resourceClaims"] = copy.deepcopy(claims_)
    assert main(["validate", write(tmp_path, data)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1, err


def test_run_tries_placements_by_name_and_explore_draws_their_order():
    # TopologyPlacement ranges over a map of domains: upstream's order is random per cycle
    import random

    from harness.framework.parallelize import RunSettings, using
    from harness.framework.placement import Placement, placement_order

    ps = [Placement(n, []) for n in ("zone-c", "zone-a", "zone-b")]
    assert [p.name for p in placement_order(ps)] == ["zone-a", "zone-b", "zone-c"]
    seen = set()
    for seed in range(40):
        with using(RunSettings(explore_rng=random.Random(seed))):
            seen.add(tuple(p.name for p in placement_order(ps)))
    assert len(seen) == 6


def test_diff_across_versions_lists_a_case_with_a_v136_only_gate_as_one_side_only(tmp_path, capsys):
    # the v1.36-only gate is v1.35's unknown-gate error for that case alone; the others compare
    import shutil

    for name in ("gang-dra-podgroup-claim-v136.yaml", "gang-none-fits-parks-v136.yaml"):
        shutil.copy(os.path.join(CASES, name), tmp_path / name)
    rc = main(["diff", "--kubernetes-version", "v1.35", "--kubernetes-version", "v1.36", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 1, out
    assert "gang-dra-podgroup-claim-v136): \n  the case runs under one side only [real]" in out.replace(
        "gang-dra-podgroup-claim-v136):\n", "gang-dra-podgroup-claim-v136): \n")
    assert "unrecognized feature gate: DRAWorkloadResourceClaims (kube-scheduler v1.35.6 does not know it)" in out
    assert "of 2 case(s)" in out


def test_explain_shows_a_group_preemption_as_one_group_event(tmp_path, capsys):
    path = os.path.join(CASES, "gang-wap-disruption-mode-podgroup-v136.yaml")
    assert main(["explain", path]) == 0
    out = capsys.readouterr().out
    head = out.split("\npod default/")[0]
    assert "pod group default/train-workers" in head
    assert "preemption at 0s (workload-aware, for the whole group): 1 victim(s), 3 pod(s) evicted" in head
    assert ("PodGroup default/batch-workers (disruptionMode PodGroup, one victim): default/batch-0 on node-a, "
            "default/batch-1 on node-a, default/batch-2 on node-b") in head
    assert 'event Preempted "Preempted by podgroup ' in head and ' on node cluster"' in head
    assert 'DisruptionTarget "default-scheduler: preempting to accommodate a higher priority podgroup"' in head


def test_json_lists_the_group_preemption_under_its_pod_group(capsys):
    import json

    assert main(["run", "--json", os.path.join(CASES, "gang-wap-disruption-mode-pod-v136.yaml")]) == 0
    (case,) = json.loads(capsys.readouterr().out)
    (p,) = case["podGroups"]["default/train-workers"]["preemptions"]
    assert p["victims"] == {"default/batch-1": "node-a", "default/batch-2": "node-b"}
    assert p["victimGroups"] == {} and p["time"] == 0


def test_import_keeps_the_gates_a_dump_s_podgroups_use(tmp_path):
    # a PodGroup exported from a cluster with DRAWorkloadResourceClaims and WorkloadAwarePreemption
    # on: the case turns them on, or the API server would drop the fields
    import json

    dump = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
        {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g", "namespace": "default"},
         "spec": {"schedulingPolicy": {"gang": {"minCount": 1}}, "disruptionMode": "Pod", "priority": 0,
                  "resourceClaims": [{"name": "c", "resourceClaimTemplateName": "t"}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
         "spec": {"schedulingGroup": {"podGroupName": "g"},
                  "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}},
    ]}
    src = tmp_path / "dump.json"
    src.write_text(json.dumps(dump))
    out = tmp_path / "case.yaml"
    assert main(["import", str(src), "-o", str(out)]) == 0
    case = yaml.safe_load(out.read_text())
    assert case["kubernetesVersion"] == "v1.36"
    assert case["featureGates"] == {"GenericWorkload": True, "GangScheduling": True,
                                    "WorkloadAwarePreemption": True, "DRAWorkloadResourceClaims": True}
    pg = next(o for o in case["cluster"] if o["kind"] == "PodGroup")
    assert pg["spec"]["resourceClaims"] == [{"name": "c", "resourceClaimTemplateName": "t"}]


@pytest.mark.parametrize("minor, accept, owner, fragment", [
    (35, False, None, "ResourceClaim default/c was not created for pod default/p (pod is not owner)"),
    (36, False, None, "ResourceClaim default/c was not created for Pod default/p (Pod is not owner)"),
    (36, True, None, "was not created for Pod default/p (neither Pod nor PodGroup g is the owner)"),
    (36, True, {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "name": "g", "uid": "x",
                "controller": True}, None),
    (36, False, {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "name": "g", "uid": "x",
                 "controller": True}, "(Pod is not owner)"),
])
def test_is_for_pod_per_version_and_gate(minor, accept, owner, fragment):
    from builtin_plugins.dynamicresources.claims import ClaimError, is_for_pod
    from harness.api.objects import KubeObject, make_object

    pod = make_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u"},
                       "spec": {"schedulingGroup": {"podGroupName": "g"}, "containers": []}})
    md = {"name": "c", "namespace": "default"}
    if owner:
        md["ownerReferences"] = [owner]
    claim = KubeObject({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": md})
    if fragment is None:
        is_for_pod(pod, claim, accept, minor)
        return
    with pytest.raises(ClaimError) as e:
        is_for_pod(pod, claim, accept, minor)
    assert fragment in str(e.value)


def test_the_html_report_shows_the_pod_group_and_its_preemption(tmp_path):
    out = tmp_path / "r.html"
    assert main(["run", "--html", str(out), os.path.join(CASES, "gang-wap-disruption-mode-podgroup-v136.yaml")]) == 0
    html = out.read_text()
    assert "<h3>pod groups</h3>" in html
    assert "preemption at 0s (workload-aware, for the whole group): 1 victim(s), 3 pod(s) evicted" in html
