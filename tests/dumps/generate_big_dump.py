"""Writes a large `kubectl get nodes,pods,namespaces,priorityclasses,pdb -A -o yaml` style dump
(every status field, managedFields, ownerReferences, annotations), for measuring `schedharness
import` and `run` at real-cluster sizes. The output is not committed (a 2000-node / 30000-pod
dump is ~160 MB, a 5000-node / 150,000-pod one ~750 MB):

    python tests/dumps/generate_big_dump.py --nodes 2000 --pods 30000 --pending 200 -o /tmp/big.yaml

What it holds, so the scheduler has real work: nodes in --zones zones, every 20th one tainted
`dedicated=infra:NoSchedule` and labelled `node-role=infra`, 20 images each; namespaces; three
PriorityClasses (one globalDefault); a PodDisruptionBudget per 100 apps; bound pods of 500 apps
(ReplicaSet owners) spread over 50 namespaces with requests/limits, a sidecar on every 4th app,
an init container on every 10th, a spread constraint, the infra toleration and a required node
affinity on every 20th app, a preferred pod anti-affinity on every 7th; and --pending pending pods
of the same shapes, in creation order.
"""

from __future__ import annotations

import argparse
import sys

import yaml

T = "2026-01-01T00:00:00Z"


def _managed(manager: str, subresource: str = None) -> dict:
    entry = {"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": manager, "operation": "Update",
             "time": T, "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                                     "f:spec": {"f:containers": {'k:{"name":"app"}': {".": {}, "f:image": {}}}}}}
    if subresource:
        entry["subresource"] = subresource
    return entry


def node(i: int, zones: int) -> dict:
    name = f"node-{i:05d}"
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": f"00000000-0000-0000-0001-{i:012d}", "resourceVersion": str(1000 + i),
                     "creationTimestamp": T,
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                "kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "m5.2xlarge",
                                "topology.kubernetes.io/zone": f"zone-{i % zones}",
                                "topology.kubernetes.io/region": "region-1",
                                **({"node-role": "infra"} if i % 20 == 0 else {})},
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                     "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
                     "managedFields": [_managed("kubelet"), _managed("kubelet", "status")]},
        "spec": {**({"taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]}
                    if i % 20 == 0 else {}),
                 "podCIDR": f"10.{i // 256}.{i % 256}.0/24", "podCIDRs": [f"10.{i // 256}.{i % 256}.0/24"],
                 "providerID": f"aws:///zone/i-{i:017x}"},
        "status": {
            "addresses": [{"type": "InternalIP", "address": f"10.0.{i // 256}.{i % 256}"},
                          {"type": "Hostname", "address": name}],
            "allocatable": {"cpu": "7910m", "ephemeral-storage": "95551679124", "hugepages-1Gi": "0",
                            "hugepages-2Mi": "0", "memory": "31792664Ki", "pods": "110"},
            "capacity": {"cpu": "8", "ephemeral-storage": "103797740Ki", "hugepages-1Gi": "0",
                         "hugepages-2Mi": "0", "memory": "32499224Ki", "pods": "110"},
            "conditions": [{"type": t, "status": "False" if t != "Ready" else "True", "lastHeartbeatTime": T,
                            "lastTransitionTime": T, "reason": f"Kubelet{t}", "message": f"kubelet {t}"}
                           for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": [{"names": [f"registry.example.com/team/image-{j}@sha256:{j:064x}",
                                  f"registry.example.com/team/image-{j}:v{j}"], "sizeBytes": 100000000 + j}
                       for j in range(20)],
            "nodeInfo": {"architecture": "amd64", "bootID": "b", "containerRuntimeVersion": "containerd://1.7.0",
                         "kernelVersion": "6.1.0", "kubeProxyVersion": "", "kubeletVersion": "v1.34.9",
                         "machineID": "m", "operatingSystem": "linux", "osImage": "Linux", "systemUUID": "s"},
        },
    }


def pod(i: int, node_name: str = None) -> dict:
    a = i % 500
    app = f"app-{a}"
    name = f"{app}-{i:06d}"
    created = T if node_name else f"2026-01-02T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
    p = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": f"ns-{i % 50}", "uid": f"00000000-0000-0000-0002-{i:012d}",
                     "resourceVersion": str(100000 + i), "creationTimestamp": created, "generateName": f"{app}-",
                     "labels": {"app": app, "pod-template-hash": "5d8f7c9b4"},
                     "annotations": {"kubectl.kubernetes.io/restartedAt": T},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-5d8f7c9b4",
                                          "uid": f"00000000-0000-0000-0003-{i % 500:012d}", "controller": True,
                                          "blockOwnerDeletion": True}],
                     "managedFields": [_managed("kube-controller-manager"), _managed("kubelet", "status")]},
        "spec": {
            "containers": [{"name": "app", "image": f"registry.example.com/team/image-{i % 20}:v1",
                            "imagePullPolicy": "IfNotPresent",
                            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                                          "limits": {"memory": "256Mi"}},
                            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                                               "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1,
                                               "failureThreshold": 3},
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File",
                            "volumeMounts": [{"name": "kube-api-access", "readOnly": True,
                                              "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
            "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0, "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "securityContext": {}, "serviceAccount": "default", "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
                             "tolerationSeconds": 300},
                            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
                             "tolerationSeconds": 300}],
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                           "whenUnsatisfiable": "ScheduleAnyway",
                                           "labelSelector": {"matchLabels": {"app": app}}}],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                            "path": "namespace"}]}}]}}],
        },
    }
    spec = p["spec"]
    if a % 4 == 0:
        spec["containers"].append({"name": "sidecar", "image": "registry.example.com/team/proxy:v2",
                                   "resources": {"requests": {"cpu": "50m", "memory": "64Mi"},
                                                 "limits": {"cpu": "200m", "memory": "64Mi"}}})
    if a % 10 == 0:
        spec["initContainers"] = [{"name": "init", "image": "registry.example.com/team/init:v1",
                                   "resources": {"requests": {"cpu": "200m", "memory": "32Mi"}}}]
    if a % 20 == 0:
        spec["tolerations"].append({"key": "dedicated", "operator": "Equal", "value": "infra",
                                    "effect": "NoSchedule"})
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "node-role", "operator": "In", "values": ["infra"]}]}]}}}
    elif a % 7 == 0:
        spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                "labelSelector": {"matchLabels": {"app": app}}}}]}}
    if a % 3 == 0:
        spec["priorityClassName"] = "high" if a % 6 == 0 else "low"
        spec["priority"] = 1000 if a % 6 == 0 else 10
    else:
        spec["priorityClassName"] = "standard"
        spec["priority"] = 100
    if node_name:
        p["spec"]["nodeName"] = node_name
        p["status"] = {
            "phase": "Running", "qosClass": "Burstable", "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}],
            "podIP": f"10.1.{i // 256 % 256}.{i % 256}", "podIPs": [{"ip": f"10.1.{i // 256 % 256}.{i % 256}"}],
            "startTime": T,
            "conditions": [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": T}
                           for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                     "PodScheduled")],
            "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0, "started": True,
                                   "image": f"registry.example.com/team/image-{i % 20}:v1",
                                   "imageID": f"registry.example.com/team/image-{i % 20}@sha256:{i % 20:064x}",
                                   "containerID": f"containerd://{i:064x}",
                                   "state": {"running": {"startedAt": T}}, "lastState": {},
                                   "volumeMounts": [{"name": "kube-api-access", "readOnly": True,
                                                     "recursiveReadOnly": "Disabled",
                                                     "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
        }
    else:
        p["status"] = {"phase": "Pending", "qosClass": "Burstable",
                       "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                       "lastTransitionTime": T, "reason": "Unschedulable",
                                       "message": "0/1 nodes are available"}]}
    return p


def priority_classes() -> list:
    return [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
             "metadata": {"name": name, "uid": f"00000000-0000-0000-0004-{k:012d}", "creationTimestamp": T},
             "value": value, "globalDefault": name == "standard", "preemptionPolicy": "PreemptLowerPriority",
             "description": f"{name} priority"}
            for k, (name, value) in enumerate((("high", 1000), ("standard", 100), ("low", 10)))]


def namespace(k: int) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": f"ns-{k}", "uid": f"00000000-0000-0000-0005-{k:012d}", "creationTimestamp": T,
                         "labels": {"kubernetes.io/metadata.name": f"ns-{k}", "team": f"team-{k % 7}"}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def pdb(a: int) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": f"app-{a}", "namespace": f"ns-{a % 50}", "creationTimestamp": T,
                         "uid": f"00000000-0000-0000-0006-{a:012d}"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": f"app-{a}"}}},
            "status": {"currentHealthy": 3, "desiredHealthy": 1, "disruptionsAllowed": 2, "expectedPods": 3,
                       "observedGeneration": 1}}


def items(args):
    """The dump's objects, one at a time (a 150,000-pod dump is never held whole)."""
    yield from priority_classes()
    for k in range(50):
        yield namespace(k)
    for a in range(0, 500, 100):
        yield pdb(a)
    for i in range(args.nodes):
        yield node(i, args.zones)
    for i in range(args.pods):
        yield pod(i, f"node-{i % args.nodes:05d}")
    for i in range(args.pending):
        yield pod(args.pods + i)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--pods", type=int, default=30000, help="pods running on the nodes")
    ap.add_argument("--pending", type=int, default=200, help="pending pods (the ones to schedule)")
    ap.add_argument("--zones", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="write `kubectl get -o json`'s layout instead")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args(argv)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    try:
        if args.json:
            import json

            out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
            for n, obj in enumerate(items(args)):
                text = json.dumps(obj, indent=4).replace("\n", "\n        ")
                out.write((",\n" if n else "") + "        " + text)
            out.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
            return 0
        out.write("apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n")
        chunk = []
        for obj in items(args):  # in chunks: a bounded emitter buffer
            chunk.append(obj)
            if len(chunk) == 1000:
                out.write(yaml.dump(chunk, Dumper=dumper, default_flow_style=False, sort_keys=False))
                chunk = []
        if chunk:
            out.write(yaml.dump(chunk, Dumper=dumper, default_flow_style=False, sort_keys=False))
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
