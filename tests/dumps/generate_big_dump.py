"""Writes a large `kubectl get nodes,pods -A -o yaml` style dump (every status field,
managedFields, ownerReferences, annotations), for measuring `schedharness import` and `run` at
real-cluster sizes. The output is not committed (a 2000-node / 30000-pod dump is ~150 MB):

    python tests/dumps/generate_big_dump.py --nodes 2000 --pods 30000 --pending 200 -o /tmp/big.yaml
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
                                "topology.kubernetes.io/region": "region-1"},
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                     "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
                     "managedFields": [_managed("kubelet"), _managed("kubelet", "status")]},
        "spec": {"podCIDR": f"10.{i // 256}.{i % 256}.0/24", "podCIDRs": [f"10.{i // 256}.{i % 256}.0/24"],
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
    app = f"app-{i % 500}"
    name = f"{app}-{i:06d}"
    p = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": f"ns-{i % 50}", "uid": f"00000000-0000-0000-0002-{i:012d}",
                     "resourceVersion": str(100000 + i), "creationTimestamp": T, "generateName": f"{app}-",
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--pods", type=int, default=30000, help="pods running on the nodes")
    ap.add_argument("--pending", type=int, default=200, help="pending pods (the ones to schedule)")
    ap.add_argument("--zones", type=int, default=3)
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args(argv)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    try:
        out.write("apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n")
        items = [node(i, args.zones) for i in range(args.nodes)]
        items += [pod(i, f"node-{i % args.nodes:05d}") for i in range(args.pods)]
        items += [pod(args.pods + i) for i in range(args.pending)]
        for k in range(0, len(items), 1000):  # in chunks: a bounded emitter buffer
            out.write(yaml.dump(items[k:k + 1000], Dumper=dumper, default_flow_style=False, sort_keys=False))
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
