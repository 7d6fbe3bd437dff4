"""What a real cluster's objects meet in a case (issue 15, real inputs): the built-in
PriorityClasses, pods created bound, pod-level resources defaulting, what `--json` reports,
and what the API server refuses in steps (immutable fields, a second default class)."""

from __future__ import annotations

import json
import os
import sys

import pytest
import yaml

from harness.case import load_case, run_case
from harness.cli import main
from harness.framework import CycleState

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name, cpu=None, **spec):
    c = {"name": "c", "image": "i"}
    if cpu is not None:
        c["resources"] = {"requests": {"cpu": cpu}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": dict({"containers": [c]}, **spec)}


SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)
from case_files import refused, write_case  # noqa: E402


def write(tmp_path, name="c", cluster=None, pods=(), expect=None, steps=None, **extra):
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": name},
            "cluster": cluster if cluster is not None else [NODE], "pods": list(pods),
            "expect": expect or {}}
    if steps is not None:
        data["steps"] = steps
    return write_case(tmp_path, name, data, **extra)


PC = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass"}


# -- built-in PriorityClasses ----------------------------------------------------------------
def test_builtin_priority_classes_exist_without_being_listed(tmp_path):
    path = write(tmp_path, pods=[pod("proxy", priorityClassName="system-node-critical"),
                                 pod("dns", priorityClassName="system-cluster-critical")])
    res = run_case(path)
    prio = {p.name: p.raw["spec"]["priority"] for p in res.scheduler.cluster.list("Pod")}
    assert prio == {"proxy": 2000001000, "dns": 2000000000}


def test_builtin_priority_class_listed_as_a_dump_lists_it_is_accepted(tmp_path):
    listed = dict(PC, metadata={"name": "system-node-critical"}, value=2000001000,
                  preemptionPolicy="PreemptLowerPriority", description="Used for system critical pods")
    path = write(tmp_path, cluster=[NODE, listed], pods=[pod("proxy", priorityClassName="system-node-critical")],
                 expect={"bindings": {"proxy": "node-a"}})
    assert run_case(path).passed


def test_builtin_priority_class_with_another_value_or_policy_is_refused(tmp_path, capsys):
    other = dict(PC, metadata={"name": "system-node-critical"}, value=5)
    refused(write(tmp_path, "v", cluster=[NODE, other]), capsys, "must be 2000001000")
    never = dict(PC, metadata={"name": "system-cluster-critical"}, value=2000000000, preemptionPolicy="Never")
    refused(write(tmp_path, "p", cluster=[NODE, never]), capsys, "cluster[1].preemptionPolicy")


def test_builtin_priority_class_cannot_be_deleted(tmp_path, capsys):
    path = write(tmp_path, steps=[{"delete": [{"kind": "PriorityClass", "name": "system-node-critical"}]}])
    refused(path, capsys, "this is a system priority class and cannot be deleted")


# -- pods created bound ---------------------------------------------------------------------
def test_pod_created_bound_counts_on_its_node_and_is_never_queued(tmp_path):
    path = write(tmp_path, pods=[pod("pinned", cpu="3", nodeName="node-a"), pod("late", cpu="2")],
                 expect={"bindings": {"pinned": "node-a", "late": None}},
                 steps=[{"expect": {"attempts": {"pinned": 0}, "queue": {"pinned": "bound"}}}])
    res = run_case(path)
    assert res.passed, res.failures


def test_pod_created_bound_to_a_missing_node_is_refused(tmp_path, capsys):
    refused(write(tmp_path, pods=[pod("pinned", nodeName="node-z")]), capsys, "pods[0].spec.nodeName")


# -- pod-level resources ------------------------------------------------------------------------
def test_pod_level_requests_default_from_pod_level_limits(tmp_path):
    big = pod("big", nodeName="node-a", resources={"limits": {"cpu": "3", "memory": "1Gi"}})
    path = write(tmp_path, pods=[big, pod("late", cpu="2")], expect={"bindings": {"late": None}})
    res = run_case(path)
    assert res.passed, res.failures
    stored = res.scheduler.cluster.get("Pod", "default", "big").raw["spec"]["resources"]
    assert stored["requests"] == {"cpu": "3", "memory": "1Gi"}


def test_pod_level_requests_take_the_containers_requests_first(tmp_path):
    p = pod("p", cpu="500m", resources={"limits": {"cpu": "2"}})
    res = run_case(write(tmp_path, pods=[p]))
    stored = res.scheduler.cluster.get("Pod", "default", "p").raw["spec"]["resources"]
    assert stored["requests"] == {"cpu": "500m"}


# -- --json ---------------------------------------------------------------------------------------
def test_json_of_a_single_replica_case_has_lease_and_bound_by(tmp_path, capsys):
    path = write(tmp_path, pods=[pod("web", cpu="1"), pod("pinned", nodeName="node-a")])
    assert main(["run", "--json", path]) == 0
    out = json.loads(capsys.readouterr().out)[0]
    assert out["lease"] == {"holder": "scheduler-0", "transitions": 0}
    assert out["boundBy"] == {"default/web": "scheduler-0"}


def test_json_lists_invalid_files_with_their_error(tmp_path, capsys):
    good = write(tmp_path, "good", pods=[pod("web")])
    bad = write(tmp_path, "zbad", pods=[pod("web", priorityClassName="nope")])
    assert main(["run", "--json", good, bad]) == 2
    out = json.loads(capsys.readouterr().out)
    assert [e["file"] for e in out] == [good, bad]
    assert "no PriorityClass with name nope" in out[1]["error"] and out[1]["passed"] is False


# -- CycleState ---------------------------------------------------------------------------------
def test_reading_missing_cycle_state_says_not_found():
    from builtin_plugins.dynamicresources.plugin import DynamicResources  # noqa: F401
    with pytest.raises(KeyError) as e:
        CycleState().read("DynamicResources")
    assert str(e.value) == "not found"


# -- steps the API server refuses ----------------------------------------------------------------
def test_second_global_default_created_in_a_step_is_refused(tmp_path, capsys):
    a = dict(PC, metadata={"name": "a"}, value=1, globalDefault=True)
    b = dict(PC, metadata={"name": "b"}, value=2, globalDefault=True)
    path = write(tmp_path, cluster=[NODE, a], steps=[{"create": [b]}])
    refused(path, capsys, "PriorityClass a is already marked as default")


@pytest.mark.parametrize("obj,change,fragment", [
    (dict(PC, metadata={"name": "a"}, value=1), {"value": 2}, "update[0].value: the API server refuses this update: Forbidden: may not be changed"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc"},
      "provisioner": "x"}, {"volumeBindingMode": "WaitForFirstConsumer"}, "update[0].volumeBindingMode: the API server refuses this update: Invalid value"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc"},
      "provisioner": "x"}, {"provisioner": "y"}, "updates to provisioner are forbidden"),
    ({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
      "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/a"}}},
     {"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/b"}}},
     "persistentvolumesource is immutable"),
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "claim"},
      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
     {"spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}},
     "spec is immutable after creation"),
])
def test_update_of_an_immutable_field_is_refused(tmp_path, capsys, obj, change, fragment):
    path = write(tmp_path, cluster=[NODE, obj], steps=[{"update": [dict(obj, **change)]}])
    refused(path, capsys, fragment)


def test_update_of_mutable_fields_is_accepted(tmp_path):
    a = dict(PC, metadata={"name": "a"}, value=1)
    path = write(tmp_path, cluster=[NODE, a], steps=[{"update": [dict(a, description="now", globalDefault=True)]},
                                                     {"create": [pod("web")]}])
    res = run_case(path)
    assert res.passed
    assert res.scheduler.cluster.get("Pod", "default", "web").raw["spec"]["priority"] == 1


def test_deleting_the_scheduler_lease_is_legal(tmp_path):
    path = write(tmp_path, pods=[pod("early")], steps=[
        {"expect": {"lease": {"holder": "scheduler-0", "transitions": 0}}},
        {"delete": [{"kind": "Lease", "name": "kube-scheduler", "namespace": "kube-system"}]},
        {"expect": {"lease": {"holder": None}}},
        {"advance": "3s"},
        {"expect": {"lease": {"holder": "scheduler-0", "transitions": 0}}},
        {"create": [pod("late")]},
        {"expect": {"bindings": {"late": "node-a"}, "boundBy": {"late": "scheduler-0"}}}])
    res = run_case(load_case(path))
    assert res.passed, res.failures


# -- strict decoding ------------------------------------------------------------------------------
@pytest.mark.parametrize("where,mutate,fragment", [
    ("pod", lambda p: p["spec"].update(toleration=[]), 'unknown field "spec.toleration"'),
    ("pod", lambda p: p["spec"].update(nodeSelectr={"a": "b"}), 'unknown field "spec.nodeSelectr"'),
    ("pod", lambda p: p["spec"]["containers"][0].update(resource={}), 'unknown field "spec.containers[0].resource"'),
    ("pod", lambda p: p["spec"].update(affinity={"nodeAffinity": {"required": {}}}),
     'unknown field "spec.affinity.nodeAffinity.required"'),
    ("pod", lambda p: p["metadata"].update(label={"a": "b"}), 'unknown field "metadata.label"'),
    ("pod", lambda p: p.update(apiVersion="apps/v1"), 'no matches for kind "Pod" in version "apps/v1"'),
    ("node", lambda n: n["status"].update(allocatble={"cpu": "1"}), 'unknown field "status.allocatble"'),
    ("node", lambda n: n.update(apiVersion="v2"), 'no matches for kind "Node" in version "v2"'),
    ("node", lambda n: n.update(spec={"taint": []}), 'unknown field "spec.taint"'),
])
def test_unknown_fields_and_wrong_versions_are_refused(tmp_path, capsys, where, mutate, fragment):
    import copy
    node, p = copy.deepcopy(NODE), pod("web")
    mutate(node if where == "node" else p)
    refused(write(tmp_path, cluster=[node], pods=[p]), capsys, fragment)


@pytest.mark.parametrize("obj,fragment", [
    (dict(PC, metadata={"name": "a"}, value=1, preemptionPolicies="Never"), 'unknown field "preemptionPolicies"'),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc"}, "provisioner": "x",
      "bindingMode": "Immediate"}, 'unknown field "bindingMode"'),
    ({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
      "spec": {"minAvailable": 1, "selectors": {}}}, 'unknown field "spec.selectors"'),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
      "spec": {"selectors": [{"cel": {"expr": "true"}}]}}, 'unknown field "spec.selectors[0].cel.expr"'),
    ({"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
     "the harness reads DeviceClass objects of resource.k8s.io/v1"),
    ({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
      "spec": {"holder": "x"}}, 'unknown field "spec.holder"'),
])
def test_unknown_fields_in_other_kinds_are_refused(tmp_path, capsys, obj, fragment):
    refused(write(tmp_path, cluster=[NODE, obj]), capsys, fragment)


def test_a_full_kubectl_dump_object_decodes(tmp_path):
    """Every status field, managedFields, ownerReferences and annotations of a real dump."""
    node = dict(NODE, metadata={
        "name": "node-a", "uid": "u", "resourceVersion": "12", "creationTimestamp": "2026-01-01T00:00:00Z",
        "annotations": {"node.alpha.kubernetes.io/ttl": "0"}, "labels": {"kubernetes.io/hostname": "node-a"},
        "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                           "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}}}}},
                           "subresource": "status"}]},
        spec={"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24"], "providerID": "kind://x"},
        status={"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "capacity": {"cpu": "4"},
                "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "t",
                                "lastTransitionTime": "t", "reason": "KubeletReady", "message": "ok"}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "images": [{"names": ["a"], "sizeBytes": 1}],
                "nodeInfo": {"architecture": "amd64", "bootID": "b", "containerRuntimeVersion": "c",
                             "kernelVersion": "k", "kubeProxyVersion": "", "kubeletVersion": "v1.34.9",
                             "machineID": "m", "operatingSystem": "linux", "osImage": "o", "systemUUID": "s",
                             "swap": {"capacity": 0}},
                "runtimeHandlers": [{"name": "runc", "features": {"recursiveReadOnlyMounts": True,
                                                                   "userNamespaces": True}}],
                "features": {"supplementalGroupsPolicy": True}})
    running = pod("running", cpu="1", nodeName="node-a")
    running["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                               "uid": "u", "controller": True, "blockOwnerDeletion": True}]
    running["spec"]["containers"][0].update(
        ports=[{"containerPort": 80, "protocol": "TCP"}], terminationMessagePath="/dev/termination-log",
        livenessProbe={"httpGet": {"path": "/", "port": 80, "scheme": "HTTP"}, "periodSeconds": 10},
        volumeMounts=[{"name": "kube-api-access", "mountPath": "/var/run", "readOnly": True}])
    running["spec"]["volumes"] = [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                    "path": "namespace"}]}}]}}]
    running["status"] = {"phase": "Running", "qosClass": "Burstable", "hostIP": "10.0.0.1",
                         "hostIPs": [{"ip": "10.0.0.1"}], "podIPs": [{"ip": "10.1.0.5"}], "startTime": "t",
                         "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None,
                                         "lastTransitionTime": "t"}],
                         "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0, "started": True,
                                                "image": "i", "imageID": "x", "containerID": "containerd://1",
                                                "state": {"running": {"startedAt": "t"}}, "lastState": {},
                                                "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run",
                                                                  "readOnly": True, "recursiveReadOnly": "Disabled"}]}]}
    res = run_case(write(tmp_path, cluster=[node, running], pods=[pod("web", cpu="1")],
                         expect={"bindings": {"web": "node-a"}}))
    assert res.passed, res.failures


# -- kubectl's YAML to JSON ----------------------------------------------------------------------
def test_integer_keys_and_dates_read_as_kubectl_reads_them(tmp_path):
    """sigs.k8s.io/yaml stringifies integer/boolean keys; go-yaml v2 keeps a timestamp-looking
    scalar as its text."""
    p = tmp_path / "c.yaml"
    p.write_text("""\
apiVersion: schedharness/v1alpha1
kind: Case
metadata: {name: keys}
cluster:
- {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {1: one, true: "yes"}},
   status: {allocatable: {cpu: "2", memory: 4Gi}}}
pods:
- apiVersion: v1
  kind: Pod
  metadata: {name: 2024-01-01}
  spec:
    nodeSelector: {1: one}
    containers: [{name: c, image: i}]
expect:
  bindings: {2024-01-01: node-a}
""")
    res = run_case(str(p))
    assert res.passed, res.failures
    node = res.scheduler.cluster.get("Node", "", "node-a")
    assert node.raw["metadata"]["labels"] == {"1": "one", "true": "yes"}


# -- size: cluster from files, import item by item -----------------------------------------------
def test_cluster_from_separate_files(tmp_path, capsys):
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE]}))
    busy = pod("busy", cpu="4", nodeName="node-a")
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump(busy) + "---\n" + yaml.safe_dump(pod("other", nodeName="node-a")))
    path = write(tmp_path, cluster={"files": ["nodes.yaml", "pods.yaml"]}, pods=[pod("web", cpu="1")],
                 expect={"bindings": {"web": None}})
    res = run_case(path)
    assert res.passed, res.failures
    busy["spec"]["toleration"] = []
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump(busy))
    refused(path, capsys, "cluster.files[1] pods.yaml: document.spec.toleration: strict decoding error")
    refused(write(tmp_path, "m", cluster={"files": ["missing.yaml"]}), capsys, "cluster.files[0] missing.yaml: cannot read")


def test_import_names_the_dumps_own_item(tmp_path, capsys):
    bad = pod("p", nodeName="node-a")
    bad["spec"]["nodeSelectr"] = {}
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, pod("q"), bad]}))
    assert main(["import", str(dump), "-o", str(tmp_path / "case.yaml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{dump}: items[2].spec.nodeSelectr: strict decoding error" in err[0], err
    gone = pod("r", nodeName="gone")
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, pod("q"), gone]}))
    assert main(["import", str(dump), "-o", str(tmp_path / "case.yaml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "items[2].spec.nodeName" in err[0] and 'no Node "gone"' in err[0], err


def test_import_shows_progress_when_it_takes_time(tmp_path, capsys, monkeypatch):
    from harness import progress

    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, pod("q")]}))
    assert main(["import", str(dump), "-o", str(tmp_path / "case.yaml")]) == 0
    err = capsys.readouterr().err
    assert "import: 2 objects read and checked" in err and "imported 1 cluster objects and 1 pending pods" in err


def test_fields_a_newer_minor_adds_are_known_from_that_minor(tmp_path, capsys):
    grouped = pod("web", schedulingGroup={"podGroupName": "g"})
    node = dict(NODE, status=dict(NODE["status"], declaredFeatures=["X"]))
    assert run_case(write(tmp_path, "new", cluster=[node], pods=[grouped], kubernetesVersion="v1.36")).passed
    refused(write(tmp_path, "old", cluster=[node], pods=[pod("web")], kubernetesVersion="v1.34"), capsys,
            'unknown field "status.declaredFeatures"')
    refused(write(tmp_path, "gone", pods=[pod("web", workloadRef={"name": "w"})], kubernetesVersion="v1.36"),
            capsys, 'unknown field "spec.workloadRef"')


def test_imported_case_has_a_normal_files_mode(tmp_path, capsys):
    """Written through a temporary file, the case still gets the mode open(..., "w") gives:
    0666 less the umask for a new file, an existing file's own mode kept."""
    import os
    import stat

    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [NODE, pod("q")]}))
    old = os.umask(0o022)
    try:
        out = tmp_path / "case.yaml"
        assert main(["import", str(dump), "-o", str(out)]) == 0
        assert stat.S_IMODE(os.stat(out).st_mode) == 0o644
        os.chmod(out, 0o640)
        assert main(["import", str(dump), "-o", str(out)]) == 0
        assert stat.S_IMODE(os.stat(out).st_mode) == 0o640
    finally:
        os.umask(old)
