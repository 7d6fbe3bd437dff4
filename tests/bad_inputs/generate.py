"""Writes the bad-input corpus (run from the repository root: python tests/bad_inputs/generate.py).

Each file is an input that a user could write and that the harness must refuse with one line
naming the file and the key (EXPECTED.json: file -> a fragment of that line), exit 2, no
traceback. Kubernetes-object rules mirror pkg/apis/core/validation (and scheduling/policy
validation); configuration rules mirror v1.34's KubeSchedulerConfiguration validation."""

from __future__ import annotations

import codecs
import copy
import json
import os

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))

NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}}
BASE = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "base"},
        "cluster": [NODE], "pods": [POD], "expect": {"bindings": {"web": "node-a"}}}

EXPECTED = {}


def _write(name: str, data, fragment: str) -> None:
    path = os.path.join(HERE, name)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)
    EXPECTED[name] = fragment


def case(name: str, fragment: str, mutate) -> None:
    c = copy.deepcopy(BASE)
    c["metadata"]["name"] = name.rsplit(".", 1)[0]
    mutate(c)
    _write(name, yaml.safe_dump(c, sort_keys=False), fragment)


def pod(c):
    return c["pods"][0]


def spec(c):
    return c["pods"][0]["spec"]


def ctr(c):
    return c["pods"][0]["spec"]["containers"][0]


def node(c):
    return c["cluster"][0]


def setp(obj, path, value):
    cur = obj
    for k in path[:-1]:
        cur = cur.setdefault(k, {}) if isinstance(cur, dict) else cur[k]
    cur[path[-1]] = value


def config(extra):
    def mutate(c):
        c["config"] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
        c["config"].update(extra)
    return mutate


def plugin_args(name, args):
    return config({"profiles": [{"schedulerName": "default-scheduler",
                                 "pluginConfig": [{"name": name, "args": args}]}]})


VALID = yaml.safe_dump(BASE, sort_keys=False)


def main() -> None:
    for fn in os.listdir(HERE):
        if fn.startswith(("yaml-", "case-", "obj-", "expect-", "config-", "steps-", "robust-", "wrong-")):
            os.remove(os.path.join(HERE, fn))
    # ---- YAML itself ------------------------------------------------------------------------
    _write("yaml-unclosed-flow.yaml", VALID.replace("- apiVersion: v1\n  kind: Node", "- [apiVersion: v1\n  kind: Node", 1), "invalid YAML")
    _write("yaml-tab-indent.yaml", VALID.replace("\n  kind: Node", "\n\tkind: Node", 1), "invalid YAML")
    _write("yaml-bad-indent.yaml", VALID.replace("\n  kind: Node", "\n     kind: Node", 1), "invalid YAML")
    _write("yaml-duplicate-top-key.yaml", VALID + "kind: Case\n", 'duplicate key "kind"')
    _write("yaml-duplicate-nested-key.yaml", VALID.replace("    name: node-a\n", "    name: node-a\n    name: node-b\n", 1), 'duplicate key "name"')
    _write("yaml-binary.yaml", bytes(range(256)) * 4, "not a text file")
    _write("yaml-latin1.yaml", VALID.replace("name: base", "name: caf\u00e9").encode("latin-1"), "not a text file")
    _write("yaml-nul-byte.yaml", VALID.encode()[:40] + b"\0" + VALID.encode()[40:], "invalid YAML")
    _write("yaml-deep-nesting.yaml", "apiVersion: schedharness/v1alpha1\nkind: Case\nseed: " + "[" * 5000 + "]" * 5000 + "\n", "")  # the parser's words or ours
    laughs = "apiVersion: schedharness/v1alpha1\nkind: Case\nx: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    prev = "a"
    for n in "bcdefgh":
        laughs += f"{n}: &{n} [" + ", ".join([f"*{prev}"] * 10) + "]\n"
        prev = n
    _write("yaml-billion-laughs.yaml", laughs, "too large")
    _write("yaml-unknown-alias.yaml", VALID + "seed: *nowhere\n", "invalid YAML")
    _write("yaml-two-documents.yaml", VALID + "---\n" + VALID, "invalid YAML")
    _write("yaml-unterminated-quote.yaml", VALID.replace("name: base", 'name: "base'), "invalid YAML")
    _write("yaml-python-tag.yaml", VALID + "seed: !!python/object:os.system {}\n", "invalid YAML")
    _write("yaml-utf16-broken.yaml", codecs.BOM_UTF16_LE + (VALID + "seed: [\n").encode("utf-16-le"), "invalid YAML")
    _write("yaml-utf16-odd-length.yaml", codecs.BOM_UTF16_LE + VALID.encode("utf-16-le") + b"\x41", "not a text file")
    _write("yaml-scalar-document.yaml", "apiVersion: schedharness/v1alpha1 kind: Case\n", "")
    _write("yaml-control-char.yaml", VALID.replace("name: base", "name: ba\x07se"), "invalid YAML")
    # ---- the case format --------------------------------------------------------------------
    case("case-apiversion-typo.yaml", "apiVersion", lambda c: c.update(apiVersion="schedharnes/v1alpha1"))
    case("case-kind-typo.yaml", "kind", lambda c: c.update(kind="Cases"))
    case("case-cluster-string.yaml", "cluster", lambda c: c.update(cluster="node-a"))
    case("case-cluster-int.yaml", "cluster", lambda c: c.update(cluster=3))
    case("case-cluster-mapping-not-list.yaml", "cluster", lambda c: c.update(cluster={"kind": "Node", "metadata": {"name": "x"}}))
    case("case-cluster-item-string.yaml", "cluster[0]", lambda c: c.update(cluster=["node-a"]))
    case("case-cluster-item-no-kind.yaml", "cluster[0]", lambda c: node(c).pop("kind"))
    case("case-cluster-list-items-string.yaml", "cluster.items", lambda c: c.update(cluster={"apiVersion": "v1", "kind": "List", "items": "x"}))
    case("case-cluster-list-item-no-kind.yaml", "cluster.items[0]", lambda c: c.update(cluster={"apiVersion": "v1", "kind": "List", "items": [{"metadata": {"name": "a"}}]}))
    case("case-pods-mapping.yaml", "pods", lambda c: c.update(pods=POD))
    case("case-pods-item-node.yaml", "pods[0].kind", lambda c: c.update(pods=[NODE]))
    case("case-pod-no-metadata.yaml", "pods[0]", lambda c: pod(c).pop("metadata"))
    case("case-pod-name-empty.yaml", "pods[0].metadata.name", lambda c: setp(pod(c), ["metadata", "name"], ""))
    case("case-pod-no-spec.yaml", "pods[0]", lambda c: pod(c).pop("spec"))
    case("case-expect-list.yaml", "expect", lambda c: c.update(expect=["web"]))
    case("case-bindings-list.yaml", "expect.bindings", lambda c: c["expect"].update(bindings=["web"]))
    case("case-binding-int.yaml", "expect.bindings.web", lambda c: c["expect"].update(bindings={"web": 3}))
    case("case-binding-empty-list.yaml", "expect.bindings.web", lambda c: c["expect"].update(bindings={"web": []}))
    case("case-preempted-string.yaml", "expect.preempted", lambda c: c["expect"].update(preempted="web"))
    case("case-messages-int.yaml", "expect.messages.web", lambda c: c["expect"].update(messages={"web": 5}))
    case("case-nominated-list.yaml", "expect.nominated.web", lambda c: c["expect"].update(nominated={"web": ["a"]}))
    case("case-seed-string.yaml", "seed", lambda c: c.update(seed="one"))
    case("case-seed-float.yaml", "seed", lambda c: c.update(seed=1.5))
    case("case-plugins-string.yaml", "plugins", lambda c: c.update(plugins="mymod"))
    case("case-plugins-missing-module.yaml", "no_such_plugin_module", lambda c: c.update(plugins=["no_such_plugin_module"]))
    case("case-config-int.yaml", "config", lambda c: c.update(config=5))
    case("case-config-file-missing.yaml", "config", lambda c: c.update(config="nowhere.yaml"))
    case("case-metadata-list.yaml", "metadata", lambda c: c.update(metadata=["x"]))
    case("case-metadata-name-int.yaml", "metadata.name", lambda c: c["metadata"].update(name=5))
    case("case-unknown-top-key.yaml", 'unknown key "expected"', lambda c: c.update(expected={}))
    case("case-unknown-expect-key.yaml", 'unknown key "binding"', lambda c: c["expect"].update(binding={}))
    _write("case-almost-no-apiversion.yaml", yaml.safe_dump({k: v for k, v in BASE.items() if k not in ("apiVersion", "kind")}), "apiVersion")
    # ---- Kubernetes objects -----------------------------------------------------------------
    for n, q in (("1.5.5", "1.5.5"), ("four", "four"), ("units", "4 cores"), ("empty", ""), ("bool", True), ("list", [1])):
        case(f"obj-pod-quantity-{n}.yaml", "pods[0].spec.containers[0].resources.requests[cpu]", lambda c, q=q: ctr(c)["resources"]["requests"].update(cpu=q))
    case("obj-node-quantity-bad.yaml", "cluster[0].status.allocatable[cpu]", lambda c: node(c)["status"]["allocatable"].update(cpu="4 cores"))
    case("obj-node-quantity-negative.yaml", "cluster[0].status.allocatable[memory]", lambda c: node(c)["status"]["allocatable"].update(memory="-1Gi"))
    case("obj-pod-request-negative.yaml", "requests[cpu]", lambda c: ctr(c)["resources"]["requests"].update(cpu="-1"))
    case("obj-pod-request-above-limit.yaml", "pods[0].spec.containers[0].resources.requests", lambda c: ctr(c)["resources"].update(limits={"cpu": "500m"}))
    case("obj-pod-extended-no-limit.yaml", "pods[0].spec.containers[0].resources.limits", lambda c: ctr(c)["resources"]["requests"].update({"example.com/gpu": "1"}))
    case("obj-pod-extended-fraction.yaml", "example.com/gpu", lambda c: ctr(c)["resources"].update(limits={"example.com/gpu": "500m"}))
    case("obj-pod-resource-name-unknown.yaml", "requests[cpus]", lambda c: ctr(c)["resources"]["requests"].update(cpus="1"))
    case("obj-pod-resources-string.yaml", "pods[0].spec.containers[0].resources", lambda c: ctr(c).update(resources="1 cpu"))
    case("obj-label-key-space.yaml", "cluster[0].metadata.labels", lambda c: node(c)["metadata"]["labels"].update({"my zone": "a"}))
    case("obj-label-key-too-long.yaml", "cluster[0].metadata.labels", lambda c: node(c)["metadata"]["labels"].update({"k" * 64: "a"}))
    case("obj-label-key-three-parts.yaml", "cluster[0].metadata.labels", lambda c: node(c)["metadata"]["labels"].update({"a/b/c": "a"}))
    case("obj-label-prefix-uppercase.yaml", "cluster[0].metadata.labels", lambda c: node(c)["metadata"]["labels"].update({"Example.com/zone": "a"}))
    case("obj-label-value-space.yaml", "cluster[0].metadata.labels", lambda c: node(c)["metadata"]["labels"].update(zone="zone a"))
    case("obj-label-value-too-long.yaml", "cluster[0].metadata.labels", lambda c: node(c)["metadata"]["labels"].update(zone="z" * 64))
    case("obj-label-value-null.yaml", "cluster[0].metadata.labels.zone", lambda c: node(c)["metadata"]["labels"].update(zone=None))
    case("obj-label-value-bool.yaml", "pods[0].metadata.labels.canary", lambda c: pod(c)["metadata"].update(labels={"canary": True}))
    case("obj-label-value-int.yaml", "pods[0].metadata.labels.version", lambda c: pod(c)["metadata"].update(labels={"version": 2}))
    case("obj-labels-list.yaml", "pods[0].metadata.labels", lambda c: pod(c)["metadata"].update(labels=["app=web"]))
    case("obj-node-name-uppercase.yaml", "cluster[0].metadata.name", lambda c: node(c)["metadata"].update(name="Node-A"))
    case("obj-pod-name-underscore.yaml", "pods[0].metadata.name", lambda c: pod(c)["metadata"].update(name="web_1"))
    case("obj-namespace-uppercase.yaml", "pods[0].metadata.namespace", lambda c: pod(c)["metadata"].update(namespace="Prod"))
    case("obj-node-no-name.yaml", "cluster[0].metadata.name", lambda c: node(c)["metadata"].pop("name"))
    case("obj-node-name-int.yaml", "cluster[0].metadata.name", lambda c: node(c)["metadata"].update(name=7))
    case("obj-metadata-string.yaml", "cluster[0].metadata", lambda c: node(c).update(metadata="node-a"))
    case("obj-taint-effect-typo.yaml", "cluster[0].spec.taints[0].effect", lambda c: node(c).update(spec={"taints": [{"key": "k", "effect": "NoScheduled"}]}))
    case("obj-taint-effect-missing.yaml", "cluster[0].spec.taints[0].effect", lambda c: node(c).update(spec={"taints": [{"key": "k"}]}))
    case("obj-taint-key-empty.yaml", "cluster[0].spec.taints[0].key", lambda c: node(c).update(spec={"taints": [{"key": "", "effect": "NoSchedule"}]}))
    case("obj-taint-value-invalid.yaml", "cluster[0].spec.taints[0].value", lambda c: node(c).update(spec={"taints": [{"key": "k", "value": "a b", "effect": "NoSchedule"}]}))
    case("obj-taint-duplicate.yaml", "cluster[0].spec.taints[1]", lambda c: node(c).update(spec={"taints": [{"key": "k", "value": "1", "effect": "NoSchedule"}, {"key": "k", "value": "2", "effect": "NoSchedule"}]}))
    case("obj-taints-mapping.yaml", "cluster[0].spec.taints", lambda c: node(c).update(spec={"taints": {"key": "k"}}))
    case("obj-toleration-operator-typo.yaml", "pods[0].spec.tolerations[0].operator", lambda c: spec(c).update(tolerations=[{"key": "k", "operator": "Equals", "value": "v"}]))
    case("obj-toleration-exists-with-value.yaml", "pods[0].spec.tolerations[0].operator", lambda c: spec(c).update(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]))
    case("obj-toleration-empty-key-equal.yaml", "pods[0].spec.tolerations[0].operator", lambda c: spec(c).update(tolerations=[{"operator": "Equal", "value": "v"}]))
    case("obj-toleration-seconds-noschedule.yaml", "pods[0].spec.tolerations[0].effect", lambda c: spec(c).update(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]))
    case("obj-toleration-effect-typo.yaml", "pods[0].spec.tolerations[0].effect", lambda c: spec(c).update(tolerations=[{"key": "k", "operator": "Exists", "effect": "noschedule"}]))
    case("obj-toleration-key-invalid.yaml", "pods[0].spec.tolerations[0].key", lambda c: spec(c).update(tolerations=[{"key": "a b", "operator": "Exists"}]))
    case("obj-tolerations-string.yaml", "pods[0].spec.tolerations", lambda c: spec(c).update(tolerations="all"))
    case("obj-nodeselector-value-invalid.yaml", "pods[0].spec.nodeSelector", lambda c: spec(c).update(nodeSelector={"zone": "a b"}))
    case("obj-nodeselector-list.yaml", "pods[0].spec.nodeSelector", lambda c: spec(c).update(nodeSelector=["zone=a"]))
    na = lambda req: lambda c: spec(c).update(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": req}})
    term = lambda expr: {"nodeSelectorTerms": [{"matchExpressions": [expr]}]}
    base_req = "pods[0].spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    case("obj-nodeaffinity-no-terms.yaml", base_req + ".nodeSelectorTerms", na({"nodeSelectorTerms": []}))
    case("obj-nodeaffinity-operator-lowercase.yaml", ".operator", na(term({"key": "zone", "operator": "in", "values": ["a"]})))
    case("obj-nodeaffinity-in-no-values.yaml", ".values", na(term({"key": "zone", "operator": "In", "values": []})))
    case("obj-nodeaffinity-exists-values.yaml", ".values", na(term({"key": "zone", "operator": "Exists", "values": ["a"]})))
    case("obj-nodeaffinity-gt-two-values.yaml", ".values", na(term({"key": "cores", "operator": "Gt", "values": ["1", "2"]})))
    case("obj-nodeaffinity-key-invalid.yaml", ".key", na(term({"key": "-zone", "operator": "Exists"})))
    case("obj-nodeaffinity-value-invalid.yaml", ".values[0]", na(term({"key": "zone", "operator": "In", "values": ["a b"]})))
    case("obj-nodeaffinity-matchfields-key.yaml", "matchFields[0].key", na({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.labels", "operator": "In", "values": ["a"]}]}]}))
    case("obj-nodeaffinity-matchfields-two-values.yaml", "matchFields[0].values", na({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]}))
    case("obj-nodeaffinity-preferred-weight-0.yaml", "preferredDuringSchedulingIgnoredDuringExecution[0].weight", lambda c: spec(c).update(affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]}}))
    pa = lambda t: lambda c: spec(c).update(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [t]}})
    case("obj-podaffinity-no-topologykey.yaml", "topologyKey", pa({"labelSelector": {"matchLabels": {"app": "web"}}}))
    case("obj-podaffinity-selector-operator.yaml", "labelSelector.matchExpressions[0].operator", pa({"topologyKey": "zone", "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["web"]}]}}))
    case("obj-podaffinity-namespace-invalid.yaml", "namespace", pa({"topologyKey": "zone", "namespaces": ["Prod"]}))
    case("obj-podaffinity-preferred-weight-101.yaml", "weight", lambda c: spec(c).update(affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 101, "podAffinityTerm": {"topologyKey": "zone"}}]}}))
    case("obj-affinity-list.yaml", "pods[0].spec.affinity", lambda c: spec(c).update(affinity=[]))
    tsc = lambda **kw: lambda c: spec(c).update(topologySpreadConstraints=[dict({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}, **kw)])
    ts = "pods[0].spec.topologySpreadConstraints[0]"
    case("obj-spread-maxskew-0.yaml", ts + ".maxSkew", tsc(maxSkew=0))
    case("obj-spread-maxskew-string.yaml", ts + ".maxSkew", tsc(maxSkew="1"))
    case("obj-spread-when-typo.yaml", ts + ".whenUnsatisfiable", tsc(whenUnsatisfiable="DontSchedule"))
    case("obj-spread-no-topologykey.yaml", ts + ".topologyKey", tsc(topologyKey=""))
    case("obj-spread-mindomains-scheduleanyway.yaml", ts + ".minDomains", tsc(minDomains=2, whenUnsatisfiable="ScheduleAnyway"))
    case("obj-spread-mindomains-0.yaml", ts + ".minDomains", tsc(minDomains=0))
    case("obj-spread-policy-typo.yaml", ts + ".nodeAffinityPolicy", tsc(nodeAffinityPolicy="Honour"))
    case("obj-spread-duplicate.yaml", "topologySpreadConstraints[1]", lambda c: spec(c).update(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}] * 2))
    case("obj-spread-selector-value.yaml", ts + ".labelSelector", tsc(labelSelector={"matchLabels": {"app": "w e b"}}))
    case("obj-pod-no-containers.yaml", "pods[0].spec.containers", lambda c: spec(c).update(containers=[]))
    case("obj-container-no-name.yaml", "pods[0].spec.containers[0].name", lambda c: ctr(c).pop("name"))
    case("obj-container-name-invalid.yaml", "pods[0].spec.containers[0].name", lambda c: ctr(c).update(name="Main_1"))
    case("obj-container-duplicate-name.yaml", "pods[0].spec.containers[1].name", lambda c: spec(c)["containers"].append(copy.deepcopy(ctr(c))))
    case("obj-container-no-image.yaml", "pods[0].spec.containers[0].image", lambda c: ctr(c).pop("image"))
    case("obj-containers-mapping.yaml", "pods[0].spec.containers", lambda c: spec(c).update(containers={"name": "c"}))
    port = lambda **kw: lambda c: ctr(c).update(ports=[dict({"containerPort": 80}, **kw)])
    pp = "pods[0].spec.containers[0].ports[0]"
    case("obj-port-zero.yaml", pp + ".containerPort", port(containerPort=0))
    case("obj-port-too-big.yaml", pp + ".containerPort", port(containerPort=70000))
    case("obj-port-string.yaml", pp + ".containerPort", port(containerPort="80"))
    case("obj-hostport-negative.yaml", pp + ".hostPort", port(hostPort=-1))
    case("obj-port-protocol-typo.yaml", pp + ".protocol", port(protocol="HTTP"))
    case("obj-port-name-too-long.yaml", pp + ".name", port(name="a-very-long-port-name"))
    case("obj-port-name-duplicate.yaml", "ports[1].name", lambda c: ctr(c).update(ports=[{"containerPort": 80, "name": "http"}, {"containerPort": 81, "name": "http"}]))
    case("obj-hostport-duplicate.yaml", "ports[1].hostPort", lambda c: ctr(c).update(ports=[{"containerPort": 80, "hostPort": 80}, {"containerPort": 81, "hostPort": 80}]))
    case("obj-volume-duplicate.yaml", "pods[0].spec.volumes[1].name", lambda c: spec(c).update(volumes=[{"name": "data", "emptyDir": {}}, {"name": "data", "emptyDir": {}}]))
    case("obj-scheduling-gate-duplicate.yaml", "pods[0].spec.schedulingGates[1].name", lambda c: spec(c).update(schedulingGates=[{"name": "a"}, {"name": "a"}]))
    case("obj-priority-string.yaml", "pods[0].spec.priority", lambda c: spec(c).update(priority="high"))
    case("obj-spec-list.yaml", "pods[0].spec", lambda c: pod(c).update(spec=[]))
    case("obj-preemption-policy-typo.yaml", "pods[0].spec.preemptionPolicy", lambda c: spec(c).update(preemptionPolicy="Always"))
    case("obj-owner-ref-no-uid.yaml", "pods[0].metadata.ownerReferences[0].uid", lambda c: pod(c)["metadata"].update(ownerReferences=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs"}]))
    case("obj-owner-ref-two-controllers.yaml", "pods[0].metadata.ownerReferences", lambda c: pod(c)["metadata"].update(ownerReferences=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a", "uid": "1", "controller": True}, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "b", "uid": "2", "controller": True}]))
    pc = lambda **kw: lambda c: c["cluster"].append(dict({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}, **kw))
    case("obj-priorityclass-too-high.yaml", "cluster[1].value", pc(value=2000000000))
    case("obj-priorityclass-system-prefix.yaml", "cluster[1].metadata.name", pc(metadata={"name": "system-mine"}))
    case("obj-priorityclass-value-string.yaml", "cluster[1].value", pc(value="1000"))
    case("obj-priorityclass-policy-typo.yaml", "cluster[1].preemptionPolicy", pc(preemptionPolicy="Sometimes"))
    case("obj-priorityclass-two-defaults.yaml", "cluster[2].globalDefault", lambda c: c["cluster"].extend([
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "a"}, "value": 1, "globalDefault": True},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "b"}, "value": 2, "globalDefault": True}]))
    case("obj-priorityclass-name-list.yaml", "cluster[1].metadata.name", pc(metadata={"name": ["high"]}))
    case("obj-priorityclass-missing.yaml", "pods[0].spec.priorityClassName", lambda c: spec(c).update(priorityClassName="gold"))
    pdb = lambda s: lambda c: c["cluster"].append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"}, "spec": s})
    case("obj-pdb-min-and-max.yaml", "cluster[1].spec", pdb({"minAvailable": 1, "maxUnavailable": 1}))
    case("obj-pdb-percent-over-100.yaml", "cluster[1].spec.maxUnavailable", pdb({"maxUnavailable": "150%"}))
    case("obj-pdb-negative.yaml", "cluster[1].spec.minAvailable", pdb({"minAvailable": -1}))
    case("obj-pdb-selector-operator.yaml", "cluster[1].spec.selector.matchExpressions[0].operator", pdb({"minAvailable": 1, "selector": {"matchExpressions": [{"key": "app", "operator": "Equal", "values": ["a"]}]}}))
    case("obj-kind-plural.yaml", "cluster[0].kind", lambda c: node(c).update(kind="Nodes"))
    case("obj-kind-lowercase.yaml", "cluster[1].kind", lambda c: c["cluster"].append(dict(copy.deepcopy(POD), kind="pod", metadata={"name": "x"})))
    case("obj-kind-typo.yaml", "cluster[1].kind", lambda c: c["cluster"].append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClas", "metadata": {"name": "p"}, "value": 1}))
    case("obj-bound-pod-missing-node.yaml", "cluster[1].spec.nodeName", lambda c: c["cluster"].append(dict(copy.deepcopy(POD), metadata={"name": "running"}, spec=dict(POD["spec"], nodeName="node-z"))))
    case("obj-pending-pod-with-nodename.yaml", "pods[0].spec.nodeName", lambda c: spec(c).update(nodeName="node-z"))
    case("obj-duplicate-pod.yaml", "pods[1]", lambda c: c["pods"].append(copy.deepcopy(POD)))
    case("obj-duplicate-node.yaml", "cluster[1]", lambda c: c["cluster"].append(copy.deepcopy(NODE)))
    case("obj-cluster-item-list-kind-in-list.yaml", "cluster.items[0].metadata.name", lambda c: c.update(cluster={"apiVersion": "v1", "kind": "List", "items": [dict(copy.deepcopy(NODE), metadata={"name": "Bad_Name"})]}))
    case("obj-resourceversion-text.yaml", "pods[0].metadata.resourceVersion", lambda c: pod(c)["metadata"].update(resourceVersion="abc"))
    # ---- expectations -----------------------------------------------------------------------
    case("expect-binding-unknown-pod.yaml", "expect.bindings.wbe", lambda c: c["expect"].update(bindings={"wbe": "node-a"}))
    case("expect-binding-unknown-node.yaml", "expect.bindings.web", lambda c: c["expect"].update(bindings={"web": "node-z"}))
    case("expect-binding-unknown-node-in-list.yaml", "expect.bindings.web", lambda c: c["expect"].update(bindings={"web": ["node-a", "node-z"]}))
    case("expect-preempted-unknown-pod.yaml", "expect.preempted[0]", lambda c: c["expect"].update(preempted=["nobody"]))
    case("expect-messages-unknown-pod.yaml", "expect.messages.nobody", lambda c: c["expect"].update(messages={"nobody": "x"}))
    case("expect-nominated-unknown-pod.yaml", "expect.nominated.nobody", lambda c: c["expect"].update(nominated={"nobody": None}))
    case("expect-nominated-unknown-node.yaml", "expect.nominated.web", lambda c: c["expect"].update(nominated={"web": "node-z"}))
    case("expect-binding-wrong-namespace.yaml", "expect.bindings.prod/web", lambda c: c["expect"].update(bindings={"prod/web": "node-a"}))
    case("expect-decisions-unknown-pod.yaml", "expect.decisions.ghost", lambda c: c["expect"].update(decisions={"ghost": {"picked": "node-a"}}))
    case("expect-decisions-unknown-node.yaml", "expect.decisions.web.filter.node-z", lambda c: c["expect"].update(decisions={"web": {"filter": {"node-z": {"NodeResourcesFit": "Success"}}}}))
    case("expect-decisions-unknown-plugin.yaml", "expect.decisions.web.score.node-a.NodeResourcesFitt", lambda c: c["expect"].update(decisions={"web": {"score": {"node-a": {"NodeResourcesFitt": 1}}}}))
    case("expect-decisions-bad-code.yaml", "expect.decisions.web.filter.node-a.NodeResourcesFit", lambda c: c["expect"].update(decisions={"web": {"filter": {"node-a": {"NodeResourcesFit": "Fine"}}}}))
    case("expect-decisions-bad-relation.yaml", "expect.decisions.web.relations[0]", lambda c: c["expect"].update(decisions={"web": {"relations": ["final(node-a) >> final(node-b)"]}}))
    case("expect-history-unknown-node.yaml", "expect.history.web[0].node", lambda c: c["expect"].update(history={"web": [{"node": "node-z"}]}))
    # ---- objects and expectations in steps (checked before anything runs, by validate too) --
    bad_pod = dict(copy.deepcopy(POD), metadata={"name": "late"})
    bad_pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "four"
    case("steps-create-bad-quantity.yaml", "steps[0].create[0].spec.containers[0].resources.requests[cpu]", lambda c: c.update(steps=[{"create": [bad_pod]}]))
    tainted = dict(copy.deepcopy(NODE), spec={"taints": [{"key": "k", "effect": "NoScheduled"}]})
    case("steps-update-bad-taint.yaml", "steps[0].update[0].spec.taints[0].effect", lambda c: c.update(steps=[{"update": [tainted]}]))
    case("steps-expect-unknown-pod.yaml", "steps[0].expect.bindings.ghost", lambda c: c.update(steps=[{"expect": {"bindings": {"ghost": None}}}]))
    case("steps-expect-unknown-node.yaml", "steps[0].expect.bindings.web", lambda c: c.update(steps=[{"expect": {"bindings": {"web": "node-z"}}}]))
    case("steps-expect-decisions-unknown-key.yaml", 'steps[0].expect.decisions.web: unknown key "bogus"', lambda c: c.update(steps=[{"expect": {"decisions": {"web": {"bogus": 1}}}}]))
    # ---- KubeSchedulerConfiguration ---------------------------------------------------------
    case("config-parallelism-0.yaml", "parallelism", config({"parallelism": 0}))
    case("config-percentage-101.yaml", "percentageOfNodesToScore", config({"percentageOfNodesToScore": 101}))
    case("config-unknown-field.yaml", "parallelizm", config({"parallelizm": 4}))
    case("config-profiles-string.yaml", "profiles", config({"profiles": "default"}))
    case("config-apiversion-wrong.yaml", "apiVersion", config({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}))
    case("config-unknown-plugin.yaml", "NoSuchPlugin", config({"profiles": [{"schedulerName": "default-scheduler", "plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}]}))
    case("config-duplicate-scheduler-name.yaml", "profiles", config({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}))
    case("config-backoff-max-below-initial.yaml", "podMaxBackoffSeconds", config({"podInitialBackoffSeconds": 10, "podMaxBackoffSeconds": 5}))
    case("config-backoff-initial-zero.yaml", "podInitialBackoffSeconds", config({"podInitialBackoffSeconds": 0}))
    case("config-parallelism-string.yaml", "parallelism", config({"parallelism": "four"}))
    case("config-args-unknown-field.yaml", "hardPodAffinityWieght", plugin_args("InterPodAffinity", {"hardPodAffinityWieght": 1}))
    case("config-args-interpodaffinity-101.yaml", "hardPodAffinityWeight", plugin_args("InterPodAffinity", {"hardPodAffinityWeight": 101}))
    case("config-args-fit-strategy-type.yaml", "scoringStrategy.type", plugin_args("NodeResourcesFit", {"scoringStrategy": {"type": "MostUsed"}}))
    case("config-args-fit-resource-weight-101.yaml", "weight", plugin_args("NodeResourcesFit", {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}}))
    case("config-args-fit-unknown-nested-field.yaml", "scoringStrategy.resource", plugin_args("NodeResourcesFit", {"scoringStrategy": {"type": "LeastAllocated", "resource": [{"name": "cpu", "weight": 1}]}}))
    case("config-args-fit-ignored-group.yaml", "ignoredResourceGroups", plugin_args("NodeResourcesFit", {"ignoredResourceGroups": ["example.com/"]}))
    case("config-args-spread-maxskew-0.yaml", "maxSkew", plugin_args("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]}))
    case("config-args-spread-selector-set.yaml", "labelSelector", plugin_args("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}]}))
    case("config-args-spread-defaultingtype.yaml", "defaultingType", plugin_args("PodTopologySpread", {"defaultingType": "Sometimes"}))
    case("config-args-preemption-percentage.yaml", "minCandidateNodesPercentage", plugin_args("DefaultPreemption", {"minCandidateNodesPercentage": 101}))
    case("config-args-preemption-absolute.yaml", "minCandidateNodesAbsolute", plugin_args("DefaultPreemption", {"minCandidateNodesAbsolute": -1}))
    case("config-args-dra-filtertimeout-negative.yaml", 'args.filterTimeout: Invalid value: "-1m30s": must be zero or positive', plugin_args("DynamicResources", {"filterTimeout": "-90s"}))
    case("config-args-volumebinding-timeout.yaml", "bindTimeoutSeconds", plugin_args("VolumeBinding", {"bindTimeoutSeconds": -1}))
    case("config-args-nodeaffinity-added.yaml", "addedAffinity", plugin_args("NodeAffinity", {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]}}}))
    case("config-args-balanced-resource-weight.yaml", "weight", plugin_args("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 200}]}))
    case("config-args-wrong-kind.yaml", "args", plugin_args("InterPodAffinity", {"kind": "NodeResourcesFitArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"}))
    spread = lambda **kw: {"defaultingType": "List", "defaultConstraints": [dict({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}, **kw)]}
    case("config-args-preemption-both-zero.yaml", "minCandidateNodes", plugin_args("DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}))
    case("config-args-interpodaffinity-negative.yaml", "hardPodAffinityWeight", plugin_args("InterPodAffinity", {"hardPodAffinityWeight": -1}))
    case("config-args-spread-system-with-constraints.yaml", "defaultingType", plugin_args("PodTopologySpread", dict(spread(), defaultingType="System")))
    case("config-args-spread-when-typo.yaml", "whenUnsatisfiable", plugin_args("PodTopologySpread", spread(whenUnsatisfiable="DontSchedule")))
    case("config-args-spread-no-topologykey.yaml", "topologyKey", plugin_args("PodTopologySpread", spread(topologyKey="")))
    case("config-args-spread-duplicate.yaml", "defaultConstraints[1]", plugin_args("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}] * 2}))
    case("config-args-balanced-duplicate-resource.yaml", "resources[1]", plugin_args("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]}))
    case("config-args-fit-ignored-resource-invalid.yaml", "ignoredResources", plugin_args("NodeResourcesFit", {"ignoredResources": ["a b"]}))
    rtcr = lambda shape: plugin_args("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1}], "requestedToCapacityRatio": {"shape": shape}}})
    case("config-args-rtcr-shape-empty.yaml", "shape", rtcr([]))
    case("config-args-rtcr-score-11.yaml", "score", rtcr([{"utilization": 0, "score": 11}]))
    case("config-args-rtcr-utilization-decreasing.yaml", "utilization", rtcr([{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]))
    case("config-args-rtcr-utilization-101.yaml", "utilization", rtcr([{"utilization": 101, "score": 1}]))
    # upstream's NewNodeSelector checks matchFields' operator and values, not the key
    case("config-args-nodeaffinity-matchfields.yaml", "addedAffinity", plugin_args("NodeAffinity", {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]}}}))
    case("config-args-type-string-for-int.yaml", "hardPodAffinityWeight", plugin_args("InterPodAffinity", {"hardPodAffinityWeight": "5"}))
    case("config-args-type-int-for-list.yaml", "ignoredResources", plugin_args("NodeResourcesFit", {"ignoredResources": 5}))
    case("config-args-type-list-item-string.yaml", "resources[0]", plugin_args("NodeResourcesBalancedAllocation", {"resources": ["cpu"]}))
    case("config-args-type-weight-duration.yaml", "weight", plugin_args("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": "1s"}]}))
    case("config-args-type-term-list.yaml", "nodeSelectorTerms[0]", plugin_args("NodeAffinity", {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [["zone"]]}}}))
    case("config-args-not-a-mapping.yaml", "args", plugin_args("InterPodAffinity", ["hardPodAffinityWeight"]))
    case("config-pluginconfig-duplicate.yaml", "pluginConfig", config({"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{"name": "InterPodAffinity", "args": {}}, {"name": "InterPodAffinity", "args": {}}]}]}))
    case("config-queuesort-two.yaml", "queue sort", config({"profiles": [{"schedulerName": "default-scheduler", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "PrioritySort"}]}}}]}))
    wrong_inputs()
    inputs_corpus()
    robust_inputs()
    trust_inputs()
    gang_inputs()
    with open(os.path.join(HERE, "EXPECTED.json"), "w") as f:
        json.dump(dict(sorted(EXPECTED.items())), f, indent=1)
        f.write("\n")


# ---- real inputs (branch `inputs`, issue 15): kept in one block to ease merging ----------------
PC = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass"}
SC = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc"}, "provisioner": "x"}


def steps(*items):
    def mutate(c):
        c["steps"] = list(items)
    return mutate


def with_cluster(*objs, then=None):
    def mutate(c):
        c["cluster"].extend(copy.deepcopy(list(objs)))
        if then:
            then(c)
    return mutate


def inputs_corpus() -> None:
    """Inputs the API server refuses although the harness once took them (or refused them for
    the wrong reason)."""
    case("in-pc-system-wrong-value.yaml", "cluster[1].metadata.name",
         with_cluster(dict(PC, metadata={"name": "system-node-critical"}, value=1000)))
    case("in-pc-system-global-default.yaml", "globalDefault of system-cluster-critical",
         with_cluster(dict(PC, metadata={"name": "system-cluster-critical"}, value=2000000000, globalDefault=True)))
    case("in-pc-system-never.yaml", "cluster[1].preemptionPolicy",
         with_cluster(dict(PC, metadata={"name": "system-node-critical"}, value=2000001000, preemptionPolicy="Never")))
    case("in-pc-system-delete.yaml", "steps[0].delete[0]",
         steps({"delete": [{"kind": "PriorityClass", "name": "system-cluster-critical"}]}))
    pc_a = dict(PC, metadata={"name": "a"}, value=1, globalDefault=True)
    case("in-pc-second-default-create.yaml", "steps[0].create[0].globalDefault",
         with_cluster(pc_a, then=steps({"create": [dict(PC, metadata={"name": "b"}, value=2, globalDefault=True)]})))
    pc_b = dict(PC, metadata={"name": "b"}, value=2)
    case("in-pc-second-default-update.yaml", "steps[0].update[0].globalDefault",
         with_cluster(pc_a, pc_b, then=steps({"update": [dict(pc_b, globalDefault=True)]})))
    case("in-pc-update-value.yaml", "steps[0].update[0].value",
         with_cluster(pc_b, then=steps({"update": [dict(pc_b, value=3)]})))
    case("in-pc-update-policy.yaml", "steps[0].update[0].preemptionPolicy",
         with_cluster(pc_b, then=steps({"update": [dict(pc_b, preemptionPolicy="Never")]})))
    case("in-sc-update-binding-mode.yaml", "steps[0].update[0].volumeBindingMode",
         with_cluster(SC, then=steps({"update": [dict(SC, volumeBindingMode="WaitForFirstConsumer")]})))
    case("in-sc-update-provisioner.yaml", "steps[0].update[0].provisioner",
         with_cluster(SC, then=steps({"update": [dict(SC, provisioner="y")]})))
    case("in-sc-update-parameters.yaml", "steps[0].update[0].parameters",
         with_cluster(SC, then=steps({"update": [dict(SC, parameters={"type": "ssd"})]})))
    case("in-sc-update-reclaim.yaml", "steps[0].update[0].reclaimPolicy",
         with_cluster(SC, then=steps({"update": [dict(SC, reclaimPolicy="Retain")]})))
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
          "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/a"}}}
    case("in-pv-update-source.yaml", "steps[0].update[0].spec.persistentvolumesource",
         with_cluster(pv, then=steps({"update": [dict(pv, spec=dict(pv["spec"], hostPath={"path": "/b"}))]})))
    case("in-pv-update-volume-mode.yaml", "steps[0].update[0].volumeMode",
         with_cluster(pv, then=steps({"update": [dict(pv, spec=dict(pv["spec"], volumeMode="Block"))]})))
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "claim"},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    case("in-pvc-update-spec.yaml", "steps[0].update[0].spec",
         with_cluster(pvc, then=steps({"update": [dict(pvc, spec=dict(pvc["spec"], storageClassName="other"))]})))
    case("in-pod-bound-missing-node.yaml", "pods[0].spec.nodeName", lambda c: spec(c).update(nodeName="node-b"))
    # strict decoding (kubectl's default --validate=strict)
    for name, where, mut in [
        ("pod-toleration", 'unknown field "spec.toleration"', lambda c: spec(c).update(toleration=[])),
        ("pod-nodeselectr", 'unknown field "spec.nodeSelectr"', lambda c: spec(c).update(nodeSelectr={"a": "b"})),
        ("pod-resource", 'unknown field "spec.containers[0].resource"', lambda c: ctr(c).update(resource={})),
        ("pod-requets", 'unknown field "spec.containers[0].resources.requets"',
         lambda c: ctr(c)["resources"].update(requets={})),
        ("pod-affinity-required", 'unknown field "spec.affinity.nodeAffinity.required"',
         lambda c: spec(c).update(affinity={"nodeAffinity": {"required": {}}})),
        ("pod-spread-skew", 'unknown field "spec.topologySpreadConstraints[0].skew"',
         lambda c: spec(c).update(topologySpreadConstraints=[{"skew": 1}])),
        ("pod-metadata-label", 'unknown field "metadata.label"', lambda c: pod(c)["metadata"].update(label={})),
        ("pod-top-level", 'unknown field "specs"', lambda c: pod(c).update(specs={})),
        ("pod-status-phse", 'unknown field "status.phse"', lambda c: pod(c).update(status={"phse": "Running"})),
        ("node-allocatble", 'unknown field "status.allocatble"', lambda c: node(c)["status"].update(allocatble={})),
        ("node-taint", 'unknown field "spec.taint"', lambda c: node(c).update(spec={"taint": []})),
        ("node-taint-effects", 'unknown field "spec.taints[0].effects"',
         lambda c: node(c).update(spec={"taints": [{"key": "a", "effects": "NoSchedule"}]})),
    ]:
        case(f"in-strict-{name}.yaml", where, mut)
    for name, obj, where in [
        ("pc", dict(PC, metadata={"name": "a"}, value=1, preemptionPolicies="Never"), 'unknown field "preemptionPolicies"'),
        ("sc", dict(SC, bindingMode="Immediate"), 'unknown field "bindingMode"'),
        ("pdb", {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
                 "spec": {"minAvailable": 1, "selectors": {}}}, 'unknown field "spec.selectors"'),
        ("pv", {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
                "spec": {"capacity": {"storage": "1Gi"}, "hostpath": {"path": "/a"}}}, 'unknown field "spec.hostpath"'),
        ("pvc", {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
                 "spec": {"resources": {"request": {"storage": "1Gi"}}}}, 'unknown field "spec.resources.request"'),
        ("csinode", {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node-a"},
                     "spec": {"drivers": [{"name": "d", "nodeID": "n", "allocatable": {"counts": 1}}]}},
         'unknown field "spec.drivers[0].allocatable.counts"'),
        ("service", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"selectors": {}}},
         'unknown field "spec.selectors"'),
        ("lease", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
                   "spec": {"holder": "x"}}, 'unknown field "spec.holder"'),
        ("deviceclass", {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                         "spec": {"selectors": [{"cel": {"expr": "true"}}]}}, 'unknown field "spec.selectors[0].cel.expr"'),
        ("slice-attribute", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                             "spec": {"driver": "d", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "node-a",
                                      "devices": [{"name": "g", "attributes": {"model": {"str": "x"}}}]}},
         'unknown field "spec.devices[0].attributes.model.str"'),
        ("claim-exact", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
                         "spec": {"devices": {"requests": [{"name": "r", "exact": {"deviceClassName": "gpu"}}]}}},
         'unknown field "spec.devices.requests[0].exact"'),
    ]:
        case(f"in-strict-{name}.yaml", where, with_cluster(obj))
    for name, kind_api, where in [
        ("pod-apps-v1", ("pods", "apps/v1"), 'no matches for kind "Pod" in version "apps/v1"'),
        ("node-v2", ("cluster", "v2"), 'no matches for kind "Node" in version "v2"'),
        ("pod-no-apiversion", ("pods", None), "apiVersion not set"),
    ]:
        def mut(c, kind_api=kind_api):
            obj = c[kind_api[0]][0]
            if kind_api[1] is None:
                del obj["apiVersion"]
            else:
                obj["apiVersion"] = kind_api[1]
        case(f"in-version-{name}.yaml", where, mut)
    case("in-version-pc-v1beta1.yaml", 'no matches for kind "PriorityClass" in version "scheduling.k8s.io/v1beta2"',
         with_cluster(dict(PC, apiVersion="scheduling.k8s.io/v1beta2", metadata={"name": "a"}, value=1)))
    case("in-version-claim-v1beta1.yaml", "the harness reads ResourceClaim objects of resource.k8s.io/v1",
         with_cluster({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": {}}))
    # pkg/apis/resource/validation
    r = "resource.k8s.io/v1"
    dclass = {"apiVersion": r, "kind": "DeviceClass", "metadata": {"name": "gpu"},
              "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
    rslice = {"apiVersion": r, "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "gpu.example.com", "nodeName": "node-a",
                       "pool": {"name": "node-a", "generation": 0, "resourceSliceCount": 1},
                       "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}}}]}}
    claim = {"apiVersion": r, "kind": "ResourceClaim", "metadata": {"name": "c"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}

    def edit(obj, fn):
        o = copy.deepcopy(obj)
        fn(o)
        return o
    nested = "[" + ",".join(["0"] * 100) + "]"
    for name, obj, where in [
        ("slice-duplicate-device", edit(rslice, lambda o: o["spec"]["devices"].append({"name": "gpu-0"})),
         "cluster[1].spec.devices[1].name: Duplicate value"),
        ("slice-attribute-two-values", edit(rslice, lambda o: o["spec"]["devices"][0]["attributes"].update(model={"string": "a", "int": 1})),
         "exactly one value must be specified"),
        ("slice-attribute-bad-version", edit(rslice, lambda o: o["spec"]["devices"][0]["attributes"].update(model={"version": "v1"})),
         "semver.org"),
        ("slice-attribute-long-string", edit(rslice, lambda o: o["spec"]["devices"][0]["attributes"].update(model={"string": "x" * 65})),
         "Too long"),
        ("slice-no-node", edit(rslice, lambda o: o["spec"].pop("nodeName")), "exactly one of `nodeName`"),
        ("slice-count-zero", edit(rslice, lambda o: o["spec"]["pool"].update(resourceSliceCount=0)), "resourceSliceCount"),
        ("claim-count-zero", edit(claim, lambda o: o["spec"]["devices"]["requests"][0]["exactly"].update(count=0)),
         "cluster[1].spec.devices.requests[0].exactly.count: Invalid value: 0"),
        ("claim-mode-unknown", edit(claim, lambda o: o["spec"]["devices"]["requests"][0]["exactly"].update(allocationMode="Any")),
         "Unsupported value"),
        ("claim-no-class", edit(claim, lambda o: o["spec"]["devices"]["requests"][0]["exactly"].pop("deviceClassName")),
         "deviceClassName: Required value"),
        ("claim-duplicate-request", edit(claim, lambda o: o["spec"]["devices"]["requests"].append(copy.deepcopy(o["spec"]["devices"]["requests"][0]))),
         "requests[1].name: Duplicate value"),
        ("class-cel-syntax", edit(dclass, lambda o: o["spec"]["selectors"][0]["cel"].update(expression="device.driver ==")),
         "compilation failed"),
        ("class-cel-undeclared", edit(dclass, lambda o: o["spec"]["selectors"][0]["cel"].update(expression="gpu.driver == 'x'")),
         "undeclared reference"),
        ("class-cel-too-costly", edit(dclass, lambda o: o["spec"]["selectors"][0]["cel"].update(
            expression=f"{nested}.all(a, {nested}.all(b, {nested}.all(c, a == b)))")), "too complex, exceeds cost limit"),
        ("class-config-not-object", edit(dclass, lambda o: o["spec"].update(config=[{"opaque": {"driver": "gpu.example.com", "parameters": "x"}}])),
         "must be a valid JSON object"),
    ]:
        case(f"in-dra-{name}.yaml", where, with_cluster(obj))
    case("in-pod-level-bad-quantity.yaml", "spec.resources.limits[cpu]",
         lambda c: spec(c).update(resources={"limits": {"cpu": "lots"}}))


# ==== issue 25, wrong inputs (files wrong-*, plugin module plugins/crdplugin_kinds.py) ==========
CRD_PLUGIN = ("from harness.framework import CustomResource, hookimpl\n\n\n@hookimpl\n"
              "def schedharness_custom_resources():\n"
              "    return [CustomResource(\"example.com\", \"v1\", \"Quota\", namespaced=True),\n"
              "            CustomResource(\"example.com\", \"v1\", \"Fence\", namespaced=False)]\n")
CEL_NOT_BOOL = "must evaluate to bool or the unknown type"


def wrong_inputs() -> None:
    """Issue 25's wrong inputs: each as the API server (or kube-scheduler) refuses it."""
    plugins = os.path.join(HERE, "plugins")
    os.makedirs(plugins, exist_ok=True)
    with open(os.path.join(plugins, "crdplugin_kinds.py"), "w") as f:
        f.write(CRD_PLUGIN)

    # -- a custom resource's metadata: apiextensions' ValidateObjectMetaAccessor with
    #    NameIsDNSSubdomain, after ObjectMeta was decoded to its Go types
    def cr(md, kind="Quota"):
        def mutate(c):
            c["plugins"] = ["crdplugin_kinds"]
            c["cluster"].append({"apiVersion": "example.com/v1", "kind": kind, "metadata": md, "spec": {}})
        return mutate
    q = "cluster[1].metadata"
    for name, md, where in [
        ("name-uppercase", {"name": "Quota-A"}, q + ".name: Invalid value"),
        ("name-underscore", {"name": "quota_a"}, q + ".name: Invalid value"),
        ("name-space", {"name": "my quota"}, q + ".name: Invalid value"),
        ("name-too-long", {"name": "q" * 254}, q + ".name: Invalid value"),
        ("name-trailing-dot", {"name": "quota."}, q + ".name: Invalid value"),
        ("name-int", {"name": 5}, q + ".name: must be a string"),
        ("name-list", {"name": ["q"]}, q + ".name: must be a string"),
        ("name-missing", {"labels": {"a": "b"}}, q + ".name: Required value"),
        ("generatename-underscore", {"generateName": "Bad_"}, q + ".generateName: Invalid value"),
        ("generatename-uppercase", {"generateName": "Quota-", "name": "quota"}, q + ".generateName: Invalid value"),
        ("generatename-int", {"generateName": 5, "name": "quota"}, q + ".generateName: must be a string"),
        ("uid-int", {"name": "quota", "uid": 5}, q + ".uid: must be a string"),
        ("uid-list", {"name": "quota", "uid": ["a"]}, q + ".uid: must be a string"),
        ("namespace-uppercase", {"name": "quota", "namespace": "Prod"}, q + ".namespace: Invalid value"),
        ("namespace-int", {"name": "quota", "namespace": 7}, q + ".namespace: must be a string"),
        ("labels-key", {"name": "quota", "labels": {"a b": "x"}}, q + ".labels"),
        ("labels-value", {"name": "quota", "labels": {"a": "x y"}}, q + ".labels"),
        ("labels-list", {"name": "quota", "labels": ["a=b"]}, q + ".labels: must be a mapping"),
        ("annotations-key", {"name": "quota", "annotations": {"a b": "x"}}, q + ".annotations"),
        ("annotations-value-int", {"name": "quota", "annotations": {"a": 1}}, q + ".annotations.a: must be a string"),
        ("annotations-too-large", {"name": "quota", "annotations": {"a": "x" * 262144}}, q + ".annotations: Too long"),
        ("finalizers-string", {"name": "quota", "finalizers": "a"}, q + ".finalizers: must be a list"),
        ("finalizers-name", {"name": "quota", "finalizers": ["a b"]}, q + ".finalizers[0]: Invalid value"),
        ("generation-negative", {"name": "quota", "generation": -1}, q + ".generation: Invalid value"),
        ("generation-string", {"name": "quota", "generation": "one"}, q + ".generation: must be an integer"),
        ("creationtimestamp-word", {"name": "quota", "creationTimestamp": "yesterday"}, q + ".creationTimestamp: Invalid value"),
        ("creationtimestamp-int", {"name": "quota", "creationTimestamp": 5}, q + ".creationTimestamp: must be a time"),
        ("deletiontimestamp-date", {"name": "quota", "deletionTimestamp": "2024-13-01"}, q + ".deletionTimestamp: Invalid value"),
        ("deletiongrace-string", {"name": "quota", "deletionGracePeriodSeconds": "30s"}, q + ".deletionGracePeriodSeconds: must be an integer"),
        ("ownerreferences-mapping", {"name": "quota", "ownerReferences": {"name": "x"}}, q + ".ownerReferences: must be a list"),
        ("ownerreferences-no-uid", {"name": "quota", "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p"}]}, q + ".ownerReferences[0].uid"),
        ("managedfields-string", {"name": "quota", "managedFields": "x"}, q + ".managedFields: must be a list"),
        ("managedfields-item-string", {"name": "quota", "managedFields": ["x"]}, q + ".managedFields[0]: must be a mapping"),
        ("resourceversion-text", {"name": "quota", "resourceVersion": "abc"}, q + ".resourceVersion"),
        ("selflink-int", {"name": "quota", "selfLink": 3}, q + ".selfLink: must be a string"),
    ]:
        case(f"wrong-cr-{name}.yaml", where, cr(md))
    case("wrong-cr-cluster-scoped-name.yaml", q + ".name: Invalid value", cr({"name": "Fence_1"}, "Fence"))
    case("wrong-cr-metadata-string.yaml", q + ": must be a mapping", lambda c: (cr({})(c), c["cluster"][1].update(metadata="quota")))
    # the same Go types on a built-in kind's ObjectMeta
    for name, md, where in [
        ("uid-int", {"uid": 5}, ".uid: must be a string"),
        ("generation-negative", {"generation": -2}, ".generation: Invalid value"),
        ("creationtimestamp-word", {"creationTimestamp": "now"}, ".creationTimestamp: Invalid value"),
        ("finalizers-string", {"finalizers": "kubernetes"}, ".finalizers: must be a list"),
        ("generatename-bad", {"generateName": "Web_"}, ".generateName: Invalid value"),
        ("selflink-list", {"selfLink": ["x"]}, ".selfLink: must be a string"),
    ]:
        case(f"wrong-pod-metadata-{name}.yaml", "pods[0].metadata" + where, lambda c, md=md: pod(c)["metadata"].update(md))
    case("wrong-node-metadata-uid-int.yaml", "cluster[0].metadata.uid: must be a string", lambda c: node(c)["metadata"].update(uid=12))

    # -- DRA: pkg/apis/resource/validation's validateDevice (v1.36: every gate below on)
    r = "resource.k8s.io/v1"
    rslice = {"apiVersion": r, "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "gpu.example.com", "nodeName": "node-a",
                       "pool": {"name": "node-a", "generation": 0, "resourceSliceCount": 1},
                       "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}}}]}}

    def dev_edit(fn, per_device=False):
        def mutate(c):
            o = copy.deepcopy(rslice)
            if per_device:
                o["spec"].pop("nodeName")
                o["spec"]["perDeviceNodeSelection"] = True
            fn(o["spec"]["devices"][0])
            c["cluster"].append(o)
        return mutate
    d0 = "cluster[1].spec.devices[0]"
    cap = lambda rng, **kw: lambda d: d.update(dict({"allowMultipleAllocations": True, "capacity": {"memory": {
        "value": "10Gi", "requestPolicy": {"default": "1Gi", "validRange": rng}}}}, **kw))
    for name, fn, where in [
        ("step-zero", cap({"min": "1Gi", "step": "0"}), d0 + ".capacity[memory].requestPolicy.validRange.step"),
        ("step-zero-with-max", cap({"min": "1Gi", "max": "4Gi", "step": "0Gi"}), ".validRange.step"),
        ("step-not-a-quantity", cap({"min": "1Gi", "step": "one"}), ".validRange.step"),
        ("allow-multiple-yes", lambda d: d.update(allowMultipleAllocations="yes"), d0 + ".allowMultipleAllocations: must be true or false"),
        ("allow-multiple-int", lambda d: d.update(allowMultipleAllocations=1), d0 + ".allowMultipleAllocations: must be true or false"),
        ("request-policy-single", lambda d: d.update(capacity={"memory": {"value": "1Gi", "requestPolicy": {"default": "1Gi"}}}), "allowMultipleAllocations must be true"),
        ("taint-time-yesterday", lambda d: d.update(taints=[{"key": "k", "effect": "NoSchedule", "timeAdded": "yesterday"}]), d0 + ".taints[0].timeAdded"),
        ("taint-time-int", lambda d: d.update(taints=[{"key": "k", "effect": "NoSchedule", "timeAdded": 1700000000}]), d0 + ".taints[0].timeAdded"),
        ("taint-time-no-zone", lambda d: d.update(taints=[{"key": "k", "effect": "NoSchedule", "timeAdded": "2024-01-01T00:00:00"}]), d0 + ".taints[0].timeAdded"),
        ("device-all-nodes-no-per-device", lambda d: d.update(allNodes=True), "can only be set if `perDeviceNodeSelection`"),
        ("device-node-name-no-per-device", lambda d: d.update(nodeName="node-a"), "can only be set if `perDeviceNodeSelection`"),
        ("consumes-bad-set-name", lambda d: d.update(consumesCounters=[{"counterSet": "Bad_Set", "counters": {"mem": {"value": "1Gi"}}}]), d0 + ".consumesCounters[0].counterSet"),
        ("consumes-empty-set-name", lambda d: d.update(consumesCounters=[{"counterSet": "", "counters": {"mem": {"value": "1Gi"}}}]), d0 + ".consumesCounters[0].counterSet: Required value"),
        ("consumes-bad-quantity", lambda d: d.update(consumesCounters=[{"counterSet": "cs", "counters": {"mem": {"value": "lots"}}}]), d0 + ".consumesCounters[0].counters[mem].value"),
        ("consumes-duplicate-set", lambda d: d.update(consumesCounters=[{"counterSet": "cs", "counters": {"mem": {"value": "1"}}}] * 2), d0 + ".consumesCounters[1]: Duplicate value"),
        ("consumes-three-sets", lambda d: d.update(consumesCounters=[{"counterSet": f"cs{i}", "counters": {"mem": {"value": "1"}}} for i in range(3)]), d0 + ".consumesCounters: Too many"),
        ("consumes-bad-counter-name", lambda d: d.update(consumesCounters=[{"counterSet": "cs", "counters": {"Mem_1": {"value": "1"}}}]), d0 + ".consumesCounters[0].counters[Mem_1]"),
        ("consumes-counter-not-mapping", lambda d: d.update(consumesCounters=[{"counterSet": "cs", "counters": {"mem": "1Gi"}}]), d0 + ".consumesCounters[0].counters[mem]"),
        ("consumes-no-counters", lambda d: d.update(consumesCounters=[{"counterSet": "cs"}]), d0 + ".consumesCounters[0].counters: Required value"),
        ("consumes-string", lambda d: d.update(consumesCounters="cs"), d0 + ".consumesCounters: must be a list"),
        ("binding-conditions-five", lambda d: d.update(bindingConditions=list("abcde"), bindingFailureConditions=["f"]), d0 + ".bindingConditions: Too many"),
        ("binding-conditions-duplicate", lambda d: d.update(bindingConditions=["a", "a"], bindingFailureConditions=["f"]), d0 + ".bindingConditions[1]: Duplicate value"),
        ("binding-conditions-string", lambda d: d.update(bindingConditions="ready", bindingFailureConditions=["f"]), d0 + ".bindingConditions: must be a list"),
        ("binding-conditions-bad-name", lambda d: d.update(bindingConditions=["not ready"], bindingFailureConditions=["f"]), d0 + ".bindingConditions[0]: Invalid value"),
        ("binding-conditions-int-item", lambda d: d.update(bindingConditions=[1], bindingFailureConditions=["f"]), d0 + ".bindingConditions[0]: must be a string"),
        ("binding-failure-five", lambda d: d.update(bindingConditions=["a"], bindingFailureConditions=list("bcdef")), d0 + ".bindingFailureConditions: Too many"),
        ("binding-failure-duplicate", lambda d: d.update(bindingConditions=["a"], bindingFailureConditions=["f", "f"]), d0 + ".bindingFailureConditions[1]: Duplicate value"),
        ("binding-failure-overlap", lambda d: d.update(bindingConditions=["a"], bindingFailureConditions=["a"]), d0 + ".bindingFailureConditions[0]: Invalid value"),
        ("binding-failure-alone", lambda d: d.update(bindingFailureConditions=["f"]), d0 + ".bindingConditions: Invalid value"),
        ("binding-conditions-alone", lambda d: d.update(bindingConditions=["a"]), d0 + ".bindingFailureConditions: Invalid value"),
    ]:
        case(f"wrong-dra-{name}.yaml", where, with_cluster(then=dev_edit(fn)))
    for name, fn, where in [
        ("all-nodes-false", lambda d: d.update(allNodes=False), d0 + ".allNodes: Invalid value: false"),
        ("all-nodes-string", lambda d: d.update(allNodes="yes"), d0 + ".allNodes: must be true or false"),
        ("node-name-empty", lambda d: d.update(nodeName=""), d0 + ".nodeName: Invalid value"),
        ("node-name-invalid", lambda d: d.update(nodeName="Node_A"), d0 + ".nodeName: Invalid value"),
        ("node-name-and-all-nodes", lambda d: d.update(nodeName="node-a", allNodes=True), d0 + ": Invalid value"),
        ("no-placement", lambda d: None, d0 + ": Required value"),
        ("node-selector-no-terms", lambda d: d.update(nodeSelector={"nodeSelectorTerms": []}), d0 + ".nodeSelector.nodeSelectorTerms: Required value"),
        ("node-selector-operator", lambda d: d.update(nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "in", "values": ["a"]}]}]}), ".operator"),
    ]:
        case(f"wrong-dra-per-device-{name}.yaml", where, with_cluster(then=dev_edit(fn, per_device=True)))
    # a device selector must be boolean (CompileCELExpression's output type check)
    dclass = lambda e: {"apiVersion": r, "kind": "DeviceClass", "metadata": {"name": "gpu"},
                        "spec": {"selectors": [{"cel": {"expression": e}}]}}
    for name, expr, out in [("string-field", "device.driver", "string"), ("string-literal", '"gpu"', "string"),
                            ("int", "1 + 2", "int"), ("size", "device.driver.size()", "int"),
                            ("list", "[true]", "list"), ("ternary-int", "device.driver == 'a' ? 1 : 0", "int"),
                            ("double", "0.5", "double"), ("null", "null", "null_type")]:
        case(f"wrong-dra-class-cel-{name}.yaml", f"cluster[1].spec.selectors[0].cel.expression: Invalid value",
             with_cluster(dclass(expr)))
    case("wrong-dra-claim-cel-not-bool.yaml", CEL_NOT_BOOL, with_cluster(
        {"apiVersion": r, "kind": "ResourceClaim", "metadata": {"name": "c"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [
             {"cel": {"expression": "device.driver"}}]}}]}}}))

    # -- a pod's resourceClaims (validatePodResourceClaims, validateResourceClaimNames)
    rc = "pods[0].spec.resourceClaims"
    claims = lambda *cl: lambda c: spec(c).update(resourceClaims=list(cl))
    for name, fn, where in [
        ("both-names", claims({"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}), rc + "[0]: Invalid value"),
        ("neither-name", claims({"name": "gpu"}), rc + "[0]: Invalid value"),
        ("no-name", claims({"resourceClaimName": "a"}), rc + "[0].name: Required value"),
        ("duplicate-name", claims({"name": "gpu", "resourceClaimName": "a"}, {"name": "gpu", "resourceClaimName": "b"}), rc + "[1].name: Duplicate value"),
        ("name-invalid", claims({"name": "Gpu_1", "resourceClaimName": "a"}), rc + "[0].name: Invalid value"),
        ("claim-name-invalid", claims({"name": "gpu", "resourceClaimName": "A_b"}), rc + "[0].resourceClaimName: Invalid value"),
        ("template-name-invalid", claims({"name": "gpu", "resourceClaimTemplateName": "T b"}), rc + "[0].resourceClaimTemplateName: Invalid value"),
        ("claim-name-int", claims({"name": "gpu", "resourceClaimName": 5}), rc + "[0].resourceClaimName: must be a string"),
        ("string", lambda c: spec(c).update(resourceClaims="gpu"), rc + ": must be a list"),
        ("item-string", lambda c: spec(c).update(resourceClaims=["gpu"]), rc + "[0]: must be a mapping"),
    ]:
        case(f"wrong-pod-claims-{name}.yaml", where, fn)
    has_gpu = {"name": "gpu", "resourceClaimName": "gpu-claim"}
    cc = "pods[0].spec.containers[0].resources.claims"
    ctr_claims = lambda refs, pod_claims=(has_gpu,): lambda c: (spec(c).update(resourceClaims=list(pod_claims)),
                                                                ctr(c)["resources"].update(claims=refs))
    for name, fn, where in [
        ("unknown", ctr_claims([{"name": "fpga"}]), cc + "[0]: Not found"),
        ("pod-has-none", ctr_claims([{"name": "gpu"}], ()), cc + "[0]: Not found"),
        ("string", ctr_claims("gpu"), cc + ": must be a list"),
        ("item-string", ctr_claims(["gpu"]), cc + "[0]: must be a mapping"),
        ("duplicate", ctr_claims([{"name": "gpu"}, {"name": "gpu"}]), cc + "[1]: Duplicate value"),
        ("no-name", ctr_claims([{"request": "r"}]), cc + "[0]: Required value"),
        ("request-invalid", ctr_claims([{"name": "gpu", "request": "R_1"}]), cc + "[0].request: Invalid value"),
        ("request-after-whole", ctr_claims([{"name": "gpu"}, {"name": "gpu", "request": "r"}]), cc + "[1]: Duplicate value"),
    ]:
        case(f"wrong-container-claims-{name}.yaml", where, fn)
    case("wrong-init-container-claims-unknown.yaml", "pods[0].spec.initContainers[0].resources.claims[0]: Not found",
         lambda c: spec(c).update(initContainers=[{"name": "init", "image": "busybox", "resources": {"claims": [{"name": "gpu"}]}}]))

    # -- containers, volumes, CSINode (pkg/apis/core/validation, pkg/apis/storage/validation)
    init = lambda **kw: lambda c: spec(c).update(initContainers=[dict({"name": "init", "image": "busybox"}, **kw)])
    case("wrong-init-restart-policy-bogus.yaml", "pods[0].spec.initContainers[0].restartPolicy: Unsupported value", init(restartPolicy="Bogus"))
    case("wrong-init-restart-policy-lowercase.yaml", "pods[0].spec.initContainers[0].restartPolicy: Unsupported value", init(restartPolicy="always"))
    case("wrong-init-restart-policy-int.yaml", "pods[0].spec.initContainers[0].restartPolicy: must be a string", init(restartPolicy=1))
    case("wrong-init-restart-policy-v1.34-never.yaml", "pods[0].spec.initContainers[0].restartPolicy: Unsupported value",
         lambda c: (c.update(kubernetesVersion="v1.34"), init(restartPolicy="Never")(c)))
    case("wrong-container-restart-policy-bogus.yaml", "pods[0].spec.containers[0].restartPolicy: Unsupported value", lambda c: ctr(c).update(restartPolicy="Bogus"))
    case("wrong-container-restart-policy-v1.34.yaml", "pods[0].spec.containers[0].restartPolicy: Forbidden",
         lambda c: (c.update(kubernetesVersion="v1.34"), ctr(c).update(restartPolicy="Always")))
    vol = lambda *v: lambda c: spec(c).update(volumes=list(v))
    case("wrong-volume-pvc-no-claim-name.yaml", "pods[0].spec.volumes[0].persistentVolumeClaim.claimName: Required value", vol({"name": "data", "persistentVolumeClaim": {}}))
    case("wrong-volume-pvc-empty-claim-name.yaml", "pods[0].spec.volumes[0].persistentVolumeClaim.claimName: Required value", vol({"name": "data", "persistentVolumeClaim": {"claimName": ""}}))
    case("wrong-volume-pvc-claim-name-int.yaml", "pods[0].spec.volumes[0].persistentVolumeClaim.claimName: must be a string", vol({"name": "data", "persistentVolumeClaim": {"claimName": 5}}))
    case("wrong-volume-pvc-string.yaml", "pods[0].spec.volumes[0].persistentVolumeClaim: must be a mapping", vol({"name": "data", "persistentVolumeClaim": "claim"}))
    case("wrong-volume-two-types.yaml", "pods[0].spec.volumes[0].persistentVolumeClaim: Forbidden", vol({"name": "data", "emptyDir": {}, "persistentVolumeClaim": {"claimName": "c"}}))
    csi = lambda *drivers: with_cluster({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node-a"},
                                         "spec": {"drivers": list(drivers)}})
    drv = lambda **kw: dict({"name": "ebs.csi.aws.com", "nodeID": "i-1"}, **kw)
    case("wrong-csinode-count-negative.yaml", "cluster[1].spec.drivers[0].allocatable.count: Invalid value: -1", csi(drv(allocatable={"count": -1})))
    case("wrong-csinode-count-string.yaml", "cluster[1].spec.drivers[0].allocatable.count: must be an integer", csi(drv(allocatable={"count": "ten"})))
    case("wrong-csinode-no-node-id.yaml", "cluster[1].spec.drivers[0].nodeID: Required value", csi(drv(nodeID="")))
    case("wrong-csinode-driver-name.yaml", "cluster[1].spec.drivers[0].name: Invalid value", csi(drv(name="ebs csi")))
    case("wrong-csinode-no-driver-name.yaml", "cluster[1].spec.drivers[0].name: Required value", csi(drv(name="")))
    case("wrong-csinode-duplicate-driver.yaml", "cluster[1].spec.drivers[1].name: Duplicate value", csi(drv(), drv()))
    case("wrong-csinode-duplicate-topology-key.yaml", "cluster[1].spec.drivers[0]: Duplicate value", csi(drv(topologyKeys=["zone", "zone"])))

    # -- the configuration: `config:` naming no file; weights Go's int32 cannot hold
    case("wrong-config-empty-string.yaml", "config: must name a KubeSchedulerConfiguration file", lambda c: c.update(config=""))
    case("wrong-config-folder-dot.yaml", "config: names a folder", lambda c: c.update(config="."))
    case("wrong-config-folder-plugins.yaml", "config: names a folder", lambda c: c.update(config="plugins"))
    case("wrong-config-folder-slash.yaml", "config: names a folder", lambda c: c.update(config="plugins/"))
    for name, w in (("2-31", 2 ** 31), ("2-62", 2 ** 62), ("2-63", 2 ** 63)):
        case(f"wrong-config-score-weight-{name}.yaml", "profiles[0].plugins.score.enabled[0].weight", config({"profiles": [
            {"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": w}]}}}]}))
    case("wrong-config-multipoint-weight-2-40.yaml", "profiles[0].plugins.multiPoint.enabled[0].weight", config({"profiles": [
        {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 2 ** 40}]}}}]}))
    # -- kubernetesVersion: v1.MINOR or v1.MINOR.PATCH as written
    for name, v in (("leading-zero", "v1.035"), ("spaces", " v1.35 "), ("no-v", "1.35"), ("5000-digits", "v1." + "9" * 5000),
                    ("patch-leading-zero", "v1.35.06"), ("capital-v", "V1.35"), ("trailing-newline", "v1.35\n"),
                    ("float", 1.35), ("minor-only", "v1"), ("suffix", "v1.35.6-rc.0")):
        case(f"wrong-kubernetes-version-{name}.yaml", "kubernetesVersion", lambda c, v=v: c.update(kubernetesVersion=v))

    # -- steps and expectations naming what the case lacks
    late = dict(copy.deepcopy(POD), metadata={"name": "late"})
    late["spec"]["priorityClassName"] = "gold"
    case("wrong-steps-create-unknown-priorityclass.yaml", "steps[0].create[0].spec.priorityClassName: no PriorityClass with name gold",
         steps({"create": [late]}))
    case("wrong-steps-create-deleted-priorityclass.yaml", "steps[1].create[0].spec.priorityClassName: no PriorityClass with name gold",
         with_cluster(dict(PC, metadata={"name": "gold"}, value=10),
                      then=steps({"delete": [{"kind": "PriorityClass", "name": "gold"}]}, {"create": [late]})))
    two = lambda **kw: lambda c: c.update(replicas=2, **kw)
    case("wrong-expect-lease-unknown-replica.yaml", "expect.lease.holder: no replica scheduler-7",
         two(expect={"lease": {"holder": "scheduler-7"}}))
    case("wrong-expect-boundby-unknown-replica.yaml", "expect.boundBy.web: no replica scheduler-2",
         two(expect={"boundBy": {"web": "scheduler-2"}}))
    case("wrong-steps-expect-lease-unknown-replica.yaml", "steps[0].expect.lease.holder: no replica kube-scheduler",
         two(steps=[{"expect": {"lease": {"holder": "kube-scheduler"}}}]))
    case("wrong-steps-expect-boundby-unknown-replica.yaml", "steps[0].expect.boundBy.web: no replica scheduler-9",
         two(steps=[{"expect": {"boundBy": {"web": "scheduler-9"}}}]))
    case("wrong-expect-boundby-single-replica.yaml", "expect.boundBy.web: no replica scheduler-1",
         lambda c: c.update(expect={"boundBy": {"web": "scheduler-1"}}))


# ==== issue 15, crashes / hangs / lost results (files robust-*, plugin modules plugins/badplugin_*)
# Each of these once ended in a traceback or a hang; now one line naming the file and the key.
BIG = "1" + "0" * 5000  # more digits than Python's int() reads by default (4300)

PLUGIN_MODULES = {
    "badplugin_raises": "raise RuntimeError('boom at import')\n",
    "badplugin_syntax": "def f(:\n",
    "badplugin_recurses": "def f():\n    return f()\n\n\nf()\n",
    "badplugin_exits": "import sys\n\nsys.exit(3)\n",
    "badplugin_interrupts": "raise KeyboardInterrupt\n",
    "badplugin_relative": "from . import sibling  # noqa: F401\n",
    "badplugin_missing_dep": "import no_such_dependency_anywhere  # noqa: F401\n",
    "badplugin_bad_hookimpl": ("from harness.framework.hookspecs import hookimpl\n\n\n@hookimpl\n"
                               "def schedharness_plugins(bogus):\n    return []\n"),
    "badplugin_hook_raises": ("from harness.framework.hookspecs import hookimpl\n\n\n@hookimpl\n"
                              "def schedharness_plugins():\n    raise ValueError('no plugins today')\n"),
    "badplugin_returns_string": ("from harness.framework.hookspecs import hookimpl\n\n\n@hookimpl\n"
                                 "def schedharness_plugins():\n    return 'MyPlugin'\n"),
    "badplugin_returns_instance": ("from harness.framework.hookspecs import hookimpl\n\n\n@hookimpl\n"
                                   "def schedharness_plugins():\n    return [object()]\n"),
    "badplugin_nameless": ("from harness.framework.hookspecs import hookimpl\n\n\nclass P:\n    pass\n\n\n"
                           "@hookimpl\ndef schedharness_plugins():\n    return [P]\n"),
    "badplugin_not_a_hook": ("from harness.framework.hookspecs import hookimpl\n\n\nclass P:\n    name = 'P'\n\n"
                             "    @hookimpl\n    def filterr(self, state, pod, node_info):\n        return None\n\n\n"
                             "@hookimpl\ndef schedharness_plugins():\n    return [P]\n"),
    "badplugin_extra_arg": ("from harness.framework.hookspecs import hookimpl\n\n\nclass P:\n    name = 'P'\n\n"
                            "    @hookimpl\n    def filter(self, state, pod, node_info, extra):\n        return None\n\n\n"
                            "@hookimpl\ndef schedharness_plugins():\n    return [P]\n"),
    "badplugin_deep_recursion_in_hook": ("from harness.framework.hookspecs import hookimpl\n\n\ndef f(n):\n"
                                         "    return f(n + 1)\n\n\n@hookimpl\ndef schedharness_plugins():\n"
                                         "    return f(0)\n"),
}


def robust_inputs() -> None:
    plugins = os.path.join(HERE, "plugins")
    os.makedirs(plugins, exist_ok=True)
    for fn in os.listdir(plugins):
        if fn.startswith("badplugin_"):
            os.remove(os.path.join(plugins, fn))
    for mod, text in PLUGIN_MODULES.items():
        with open(os.path.join(plugins, mod + ".py"), "w") as f:
            f.write(text)
    for mod in PLUGIN_MODULES:
        case(f"robust-plugin-{mod[len('badplugin_'):].replace('_', '-')}.yaml", f"plugins: cannot import plugin module '{mod}'"
             if mod in ("badplugin_raises", "badplugin_syntax", "badplugin_recurses", "badplugin_exits",
                        "badplugin_interrupts", "badplugin_relative", "badplugin_missing_dep") else mod,
             lambda c, m=mod: c.update(plugins=[m]))
    for name, ref in (("relative-name", ".badplugin_raises"), ("path", "plugins/badplugin_raises.py"),
                      ("dash", "bad-plugin"), ("empty", ""), ("double-dot", "a..b")):
        case(f"robust-plugin-name-{name}.yaml", "plugins", lambda c, r=ref: c.update(plugins=[r]))
    # integers Python's int() will not read, and integers out of range
    text = VALID
    _write("robust-int-seed-5000-digits.yaml", text + f"seed: {BIG}\n", "line")
    _write("robust-int-replicas-5000-digits.yaml", text + f"replicas: {BIG}\n", "line")
    _write("robust-int-priority-5000-digits.yaml", text.replace("    containers:", f"    priority: {BIG}\n    containers:", 1), "line")
    _write("robust-int-negative-5000-digits.yaml", text + f"seed: -{BIG}\n", "line")
    _write("robust-int-in-list-5000-digits.yaml", text + f"plugins: [{BIG}]\n", "line")
    _write("robust-int-attempts-5000-digits.yaml", text.replace("expect:\n", f"expect:\n  attempts: {{web: {BIG}}}\n", 1), "line")
    for n, v in (("1e9", 1000000000), ("1001", 1001), ("0", 0), ("negative", -1), ("string", "2"), ("float", 2.5),
                 ("4000-digits", int("1" + "0" * 3999))):
        case(f"robust-replicas-{n}.yaml", "replicas", lambda c, v=v: c.update(replicas=v))
    # steps: namespaces and references of the wrong type
    dele = lambda **kw: lambda c: c.update(steps=[{"delete": [dict({"kind": "Pod", "name": "web"}, **kw)]}])
    for n, v in (("list", ["a"]), ("int", 3), ("mapping", {"a": 1}), ("bool", True)):
        case(f"robust-steps-delete-namespace-{n}.yaml", "steps[0].delete[0].namespace", dele(namespace=v))
    case("robust-steps-delete-apiversion-list.yaml", "steps[0].delete[0].apiVersion", dele(apiVersion=["v1"]))
    case("robust-steps-delete-int-key.yaml", "steps[0].delete[0]", lambda c: c.update(steps=[{"delete": [{"kind": "Pod", "name": "web", 7: "x"}]}]))
    late = lambda ns: dict(copy.deepcopy(POD), metadata={"name": "late", "namespace": ns})
    for n, v in (("list", ["a"]), ("int", 3), ("mapping", {"a": 1})):
        case(f"robust-steps-create-namespace-{n}.yaml", "steps[0].create[0].metadata.namespace", lambda c, v=v: c.update(steps=[{"create": [late(v)]}]))
        case(f"robust-steps-update-namespace-{n}.yaml", "steps[0].update[0].metadata.namespace", lambda c, v=v: c.update(steps=[{"update": [late(v)]}]))
    case("robust-steps-int-action.yaml", "steps[0]", lambda c: c.update(steps=[{1: "x"}]))
    case("robust-steps-fail-bind-int.yaml", "steps[0].fail.bind", lambda c: c.update(steps=[{"fail": {"bind": [1]}}]))
    # expect maps keyed by something other than a pod reference
    for where in ("bindings", "messages", "nominated", "queue", "attempts", "boundBy"):
        value = {"bindings": "node-a", "messages": "x", "nominated": "node-a", "queue": "active",
                 "attempts": 1, "boundBy": "scheduler-0"}[where]
        for n, k in (("int", 1), ("bool", True), ("null", None), ("float", 1.5)):
            if where in ("bindings", "queue") or n in ("int", "null"):
                case(f"robust-expect-{where.lower()}-{n}-key.yaml", f"expect.{where}", lambda c, w=where, k=k, v=value: c["expect"].update({w: {k: v}}))
        case(f"robust-steps-expect-{where.lower()}-int-key.yaml", f"steps[0].expect.{where}", lambda c, w=where, v=value: c.update(steps=[{"expect": {w: {7: v}}}]))
    case("robust-expect-empty-key.yaml", "expect.bindings", lambda c: c["expect"].update(bindings={"": "node-a"}))
    _write("robust-expect-list-key.yaml", VALID.replace("expect:\n", "expect:\n  bindings: {? [a, b] : node-a}\n", 1).replace("  bindings:\n    web: node-a\n", "", 1), "")
    # clocks that would never let virtual time pass, or pass it a million times too fast
    clock = lambda r: lambda c: c.update(replicas=2, steps=[{"clock": {"replica": "scheduler-1", "rate": r}}])
    for n, r in (("inf", float("inf")), ("minus-inf", float("-inf")), ("nan", float("nan")), ("zero", 0), ("negative", -1),
                 ("huge", 1e9), ("1001", 1001), ("tiny", 1e-6), ("string", "fast"), ("bool", True), ("list", [2])):
        case(f"robust-clock-rate-{n}.yaml", "steps[0].clock.rate", clock(r))
    # durations and nesting
    case("robust-advance-overflow.yaml", "steps[0].advance", lambda c: c.update(steps=[{"advance": "9999999999h"}]))
    case("robust-advance-int.yaml", "steps[0].advance", lambda c: c.update(steps=[{"advance": 5}]))
    case("robust-partition-inf.yaml", "steps[0].partition.for", lambda c: c.update(replicas=2, steps=[{"partition": {"replica": "scheduler-1", "for": "infh"}}]))
    _write("robust-yaml-recursive-alias.yaml", VALID.replace("metadata:\n  name: base\n", "metadata: &m\n  name: base\n  labels: *m\n", 1), "alias")
    _write("robust-yaml-recursive-list.yaml", VALID + "plugins: &p [a, *p]\n", "alias")
    _write("robust-yaml-deep-block.yaml", VALID + "seed:\n" + "".join("  " * i + "- \n" for i in range(1, 400)) + "  " * 400 + "x\n", "")
    _write("robust-yaml-unhashable-key.yaml", VALID + "? {a: 1}\n: x\n", "")
    _write("robust-yaml-int-top-key.yaml", VALID + "7: x\n", 'unknown key "7"')
    case("robust-metadata-int-key.yaml", "metadata", lambda c: c["metadata"].update({5: "x"}))
    case("robust-cluster-kind-list.yaml", "cluster[0].kind", lambda c: node(c).update(kind=["Node"]))
    # quantities: YAML's .inf/.nan (no JSON number), an exponent whose power would not fit in memory
    for n, q in (("inf", float("inf")), ("nan", float("nan")), ("huge-exponent", "1e99999999")):
        case(f"robust-quantity-{n}.yaml", "cluster[0].status.allocatable[cpu]", lambda c, q=q: node(c)["status"]["allocatable"].update(cpu=q))
        case(f"robust-request-{n}.yaml", "pods[0].spec.containers[0].resources.requests[cpu]", lambda c, q=q: ctr(c)["resources"]["requests"].update(cpu=q))



def trust_inputs() -> None:
    """A case is data (issue 25, README "What a case may cause"): modules and callables only from
    the case's tree or installed entry points, files only from its tree, extender
    configurations kube-scheduler could not build refused when they load."""
    url = "http://x.example/"

    def ext_case(python, verb="filter"):
        def mutate(c):
            config({"extenders": [{"urlPrefix": url, "filterVerb": verb}]})(c)
            c["extenders"] = [{"urlPrefix": url, "python": python}]
        return mutate
    for n, target, verb in (("builtins-eval", "builtins:eval", "__import__('os').system('touch /tmp/x')"),
                            ("builtins-exec", "builtins:exec", "import os; os.system('id')"),
                            ("os-system", "os:system", "touch /tmp/x"),
                            ("shutil-rmtree", "shutil:rmtree", "/tmp/some-dir"),
                            ("subprocess-call", "subprocess:call", "id"),
                            ("yaml-load", "yaml:unsafe_load", "x")):
        case(f"trust-extender-{n}.yaml", "extenders[0].python", ext_case(target, verb))
    case("trust-extender-no-colon.yaml", "extenders[0].python", ext_case("builtins"))
    case("trust-extender-file-path.yaml", "extenders[0].python", ext_case("./ext.py:handle"))
    for n, mod in (("this", "this"), ("os-path", "os.path"), ("site-packages", "yaml"),
                   ("antigravity", "antigravity"), ("pytest", "pytest")):
        case(f"trust-plugins-{n}.yaml", "plugins[0]", lambda c, m=mod: c.update(plugins=[m]))
    case("trust-plugins-relative.yaml", "plugins[0]", lambda c: c.update(plugins=[".sibling"]))
    case("trust-plugins-file-path.yaml", "plugins[0]", lambda c: c.update(plugins=["plugins/x.py"]))
    # (the corpus lives in this repository, whose pyproject.toml makes it the tree: ../../../.. leaves it)
    for n, path in (("etc-shadow", "/etc/shadow"), ("dotdot", "../../../../x.yaml"), ("home", "~/.kube/config")):
        fragment = "outside the case's tree" if n != "home" else "config"
        case(f"trust-config-{n}.yaml", fragment, lambda c, p=path: c.update(config=p))
        case(f"trust-cluster-files-{n}.yaml", "cluster.files[0]",
             lambda c, p=path: c.update(cluster={"files": [p]}))

    def ext_config(**ext):
        return config({"extenders": [{"urlPrefix": url, "filterVerb": "filter", **ext}]})
    for n, ext, fragment in (
            ("url-bracket", {"urlPrefix": "http://[::1"}, "missing ']' in host"),
            ("url-port", {"urlPrefix": "http://x.example:port/"}, 'invalid port ":port"'),
            ("url-scheme", {"urlPrefix": "ftp://x.example/"}, 'unsupported protocol scheme "ftp"'),
            ("url-no-scheme", {"urlPrefix": "x.example/scheduler"}, "unsupported protocol scheme"),
            ("url-escape", {"urlPrefix": "http://x.example/%zz"}, "invalid URL escape"),
            ("url-control", {"urlPrefix": "http://x.example/\x01"}, "invalid control character"),
            ("timeout-negative", {"httpTimeout": "-1s"}, "must not be negative"),
            ("insecure-with-ca", {"enableHTTPS": True, "tlsConfig": {"insecure": True, "caData": "eA=="}},
             "specifying a root certificates file with the insecure flag is not allowed"),
            ("ca-not-pem", {"enableHTTPS": True, "tlsConfig": {"caData": "eA=="}}, "unable to load root certificates"),
            ("ca-file-outside", {"enableHTTPS": True, "tlsConfig": {"caFile": "/etc/ssl/certs/ca-certificates.crt"}},
             "outside the case's tree"),
            ("cert-not-pem", {"tlsConfig": {"certData": "eA==", "keyData": "eA=="}}, "failed to find any PEM data")):
        case(f"trust-extender-config-{n}.yaml", fragment, ext_config(**ext))



# ==== issue 27, the Workload API's objects (files gang-*) =========================================
def gang_inputs() -> None:
    """v1.36 PodGroup and Workload fields as the API server checks them: after Priority admission
    (a PodGroup's priority from its class, then +k8s:maximum), a template's priority fields as
    written, DRAWorkloadResourceClaims' spec.resourceClaims."""
    def gang(*objs, **gates):
        def mutate(c):
            c["kubernetesVersion"] = "v1.36"
            c["featureGates"] = dict({"GenericWorkload": True, "GangScheduling": True}, **gates)
            c["cluster"] = [NODE] + list(objs)
        return mutate

    def pg(**spec):
        return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "g"},
                "spec": dict({"schedulingPolicy": {"gang": {"minCount": 1}}}, **spec)}

    def wl(**template):
        return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload", "metadata": {"name": "w"},
                "spec": {"podGroupTemplates": [dict({"name": "t", "schedulingPolicy": {"basic": {}}}, **template)]}}
    wap = {"WorkloadAwarePreemption": True}
    claims = {"DRAWorkloadResourceClaims": True}
    case("gang-podgroup-priority-above-user-max.yaml", "cluster[1].spec.priority",
         gang(pg(priorityClassName="system-node-critical"), **wap))
    case("gang-podgroup-priority-class-missing.yaml", "cluster[1].spec.priorityClassName",
         gang(pg(priorityClassName="Not_A_Class"), **wap))
    case("gang-workload-template-priority-above-user-max.yaml", "cluster[1].spec.podGroupTemplates[0].priority",
         gang(wl(priority=1000000001), **wap))
    case("gang-workload-template-priority-class-name.yaml",
         "cluster[1].spec.podGroupTemplates[0].priorityClassName", gang(wl(priorityClassName="a_b"), **wap))
    case("gang-podgroup-claims-both-names.yaml", "cluster[1].spec.resourceClaims[0]",
         gang(pg(resourceClaims=[{"name": "c", "resourceClaimName": "x", "resourceClaimTemplateName": "y"}]),
              **claims))
    case("gang-podgroup-claims-neither-name.yaml", "cluster[1].spec.resourceClaims[0]",
         gang(pg(resourceClaims=[{"name": "c"}]), **claims))
    case("gang-podgroup-claims-too-many.yaml", "cluster[1].spec.resourceClaims",
         gang(pg(resourceClaims=[{"name": f"c{i}", "resourceClaimName": "x"} for i in range(5)]), **claims))
    case("gang-workload-template-claim-name.yaml", "cluster[1].spec.podGroupTemplates[0].resourceClaims[0].name",
         gang(wl(resourceClaims=[{"name": "Bad_Name", "resourceClaimTemplateName": "x"}]), **claims))


if __name__ == "__main__":
    main()
