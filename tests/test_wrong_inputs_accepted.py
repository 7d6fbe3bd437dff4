"""Inputs of issue 25 that kube-scheduler and the API server accept, and that the harness must
accept too (the refused ones are in tests/bad_inputs/wrong-*)."""

from __future__ import annotations

import copy

import pytest
import yaml

from harness.cli import main

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}}
BASE = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "ok"},
        "cluster": [NODE], "pods": [POD], "expect": {"bindings": {"web": "node-a"}}}
R = "resource.k8s.io/v1"


def profile(**kw):
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [dict({"schedulerName": "default-scheduler"}, **kw)]}


def with_objs(*objs):
    return lambda c: c["cluster"].extend(copy.deepcopy(list(objs)))


def slice_with(**dev):
    return {"apiVersion": R, "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "gpu.example.com", "perDeviceNodeSelection": True,
                     "pool": {"name": "p", "generation": 0, "resourceSliceCount": 1},
                     "devices": [dict({"name": "gpu-0"}, **dev)]}}


ACCEPTED = {
    # runtime.NewFramework keys pluginConfig by name: a nameless entry configures no plugin
    "pluginconfig-without-name": lambda c: c.update(config=profile(pluginConfig=[{"args": {}}])),
    "pluginconfig-name-null": lambda c: c.update(config=profile(pluginConfig=[{"name": None}])),
    # no validation bounds a plugin's Score weight from below (only the total's overflow)
    "score-weight-negative": lambda c: c.update(config=profile(plugins={"score": {"enabled": [
        {"name": "NodeResourcesFit", "weight": -1}]}})),
    "metadata-every-field-typed": lambda c: c["pods"][0]["metadata"].update(
        uid="0a1b", generation=3, creationTimestamp="2024-01-01T00:00:00Z", finalizers=["example.com/keep"],
        deletionGracePeriodSeconds=30, selfLink="/api/v1/x", managedFields=[{"manager": "kubectl"}],
        generateName="web-"),
    "creation-timestamp-fraction-offset": lambda c: c["pods"][0]["metadata"].update(
        creationTimestamp="2024-01-01T00:00:00.5+02:00"),
    "rbac-name-with-colon": with_objs({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                       "metadata": {"name": "system:controller:x"}}),
    "per-device-node-name": with_objs(slice_with(nodeName="node-a")),
    "per-device-all-nodes": with_objs(slice_with(allNodes=True)),
    "per-device-node-selector": with_objs(slice_with(nodeSelector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]})),
    "binding-conditions-pair": with_objs(slice_with(nodeName="node-a", bindingConditions=["a", "b", "c", "d"],
                                                    bindingFailureConditions=["e"])),
    "taint-time-added": with_objs(slice_with(nodeName="node-a", taints=[
        {"key": "k", "effect": "NoSchedule", "timeAdded": "2024-05-01T10:00:00Z"}])),
    "selector-of-unknown-type": with_objs({"apiVersion": R, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                                           "spec": {"selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].ok'}}]}}),
    "selector-comparison": with_objs({"apiVersion": R, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                                      "spec": {"selectors": [{"cel": {"expression": "device.driver.size() > 3 && true"}}]}}),
    "pod-claims-and-container-refs": lambda c: (
        c["pods"][0]["spec"].update(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpu-t"}]),
        c["pods"][0]["spec"]["containers"][0]["resources"].update(claims=[{"name": "gpu", "request": "r1"},
                                                                          {"name": "gpu", "request": "r2"}])),
    "init-restart-always": lambda c: c["pods"][0]["spec"].update(
        initContainers=[{"name": "side", "image": "x", "restartPolicy": "Always"}]),
    "init-restart-never-v1.35": lambda c: (c.update(kubernetesVersion="v1.35"), c["pods"][0]["spec"].update(
        initContainers=[{"name": "init", "image": "x", "restartPolicy": "Never"}])),
    "volume-defaults-to-empty-dir": lambda c: c["pods"][0]["spec"].update(volumes=[{"name": "scratch"}]),
    "csinode-count-zero": with_objs({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node-a"},
                                     "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1",
                                                           "allocatable": {"count": 0}, "topologyKeys": ["zone"]}]}}),
    "kubernetes-version-patch": lambda c: c.update(kubernetesVersion="v1.35.6"),
    "step-creates-pod-after-its-priorityclass": lambda c: c.update(steps=[
        {"create": [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gold"}, "value": 5}]},
        {"create": [dict(copy.deepcopy(POD), metadata={"name": "late"},
                         spec=dict(copy.deepcopy(POD["spec"]), priorityClassName="gold"))]}]),
    "expect-lease-of-a-replica": lambda c: c.update(replicas=2, expect={"lease": {"holder": "scheduler-0"},
                                                                       "boundBy": {"web": "scheduler-0"}}),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_as_the_api_server_and_kube_scheduler_accept_it(name, tmp_path, capsys):
    case = copy.deepcopy(BASE)
    ACCEPTED[name](case)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(case, sort_keys=False))
    assert main(["validate", str(path)]) == 0, capsys.readouterr().err
