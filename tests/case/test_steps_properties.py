"""Invariants of cases with steps, over random clusters and random step sequences (hypothesis):
after every step, no node is over-committed when a pod is bound to it, no pod is bound twice or
to a node its filters reject, every pod of the case is bound, queued, gated or waiting, and the
same case with the same seed gives the same trace; and no value below a Pod's or a Node's
metadata/spec/status is written in place (sharing's rule, harness/sharing.py)."""

from __future__ import annotations

import copy
import json
import os
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.case.loader import case_from_data
from harness.case.runner import CaseRun, StepResult

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)
from shared_values import SharedValuesWatch  # noqa: E402

EXAMPLES = 300

POOLS = ["a", "b"]


def node_manifest(i: int, cpu: int, pods: int, pool: str, taint: bool, cordon: bool):
    spec = {}
    if taint:
        spec["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    if cordon:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}", "pool": pool}},
            "spec": spec,
            "status": {"allocatable": {"cpu": str(cpu), "memory": f"{cpu * 2}Gi", "pods": str(pods),
                                       "example.com/gpu": str(cpu % 3)}}}


def pod_manifest(i: int, milli: int, gpu: int, pool, tolerate: bool, priority: int, gated: bool):
    spec = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                            "resources": {"requests": {"cpu": f"{milli}m", "memory": f"{milli}Mi"}}}]}
    if gpu:
        spec["containers"][0]["resources"]["requests"]["example.com/gpu"] = str(gpu)
        spec["containers"][0]["resources"]["limits"] = {"example.com/gpu": str(gpu)}
    if pool:
        spec["nodeSelector"] = {"pool": pool}
    if tolerate:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    if priority:
        spec["priority"] = priority
    if gated:
        spec["schedulingGates"] = [{"name": "example.com/hold"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{i}"}, "spec": spec}


nodes_st = st.lists(st.tuples(st.integers(1, 4), st.integers(1, 4), st.sampled_from(POOLS),
                              st.booleans(), st.booleans()), min_size=1, max_size=4)
pod_st = st.tuples(st.sampled_from([250, 500, 1000, 1500, 3000]), st.integers(0, 2),
                   st.sampled_from([None, None, "a", "b"]), st.booleans(), st.sampled_from([0, 0, 100]),
                   st.sampled_from([False, False, False, True]))
step_st = st.one_of(
    st.tuples(st.just("create-pod"), pod_st),
    st.tuples(st.just("delete-pod"), st.integers(0, 50)),
    st.tuples(st.just("ungate-pod"), st.integers(0, 50)),
    st.tuples(st.just("create-node"), st.tuples(st.integers(1, 4), st.integers(1, 4), st.sampled_from(POOLS),
                                                st.booleans(), st.booleans())),
    st.tuples(st.just("update-node"), st.tuples(st.integers(0, 10), st.booleans(), st.booleans())),
    st.tuples(st.just("delete-node"), st.integers(0, 10)),
    st.tuples(st.just("advance"), st.sampled_from(["1s", "3s", "10s", "45s", "5m", "6m"])),
    st.tuples(st.just("fail"), st.integers(0, 50)),
)


def build_case(nodes, pods, steps, seed):
    """A case from the drawn values; step references to pods and nodes are taken modulo what
    exists at that point of the sequence, so every step is valid."""
    cluster = [node_manifest(i, *n) for i, n in enumerate(nodes)]
    pod_list = [pod_manifest(i, *p) for i, p in enumerate(pods)]
    live_pods = [p["metadata"]["name"] for p in pod_list]
    gated = {p["metadata"]["name"]: p for p in pod_list if p["spec"].get("schedulingGates")}
    live_nodes = {n["metadata"]["name"]: n for n in cluster}
    next_pod, next_node = len(pod_list), len(nodes)
    out = []
    for kind, arg in steps:
        if kind == "create-pod":
            m = pod_manifest(next_pod, *arg)
            next_pod += 1
            live_pods.append(m["metadata"]["name"])
            if m["spec"].get("schedulingGates"):
                gated[m["metadata"]["name"]] = m
            out.append({"create": [m]})
        elif kind == "delete-pod" and live_pods:
            name = live_pods.pop(arg % len(live_pods))
            gated.pop(name, None)
            out.append({"delete": [{"kind": "Pod", "name": name}]})
        elif kind == "ungate-pod" and gated:
            name = sorted(gated)[arg % len(gated)]
            m = copy.deepcopy(gated.pop(name))
            del m["spec"]["schedulingGates"]
            out.append({"update": [m]})
        elif kind == "create-node":
            m = node_manifest(next_node, *arg)
            next_node += 1
            live_nodes[m["metadata"]["name"]] = m
            out.append({"create": [m]})
        elif kind == "update-node" and live_nodes:
            idx, taint, cordon = arg
            name = sorted(live_nodes)[idx % len(live_nodes)]
            m = copy.deepcopy(live_nodes[name])
            m["spec"] = {}
            if taint:
                m["spec"]["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
            if cordon:
                m["spec"]["unschedulable"] = True
            live_nodes[name] = m
            out.append({"update": [m]})
        elif kind == "delete-node" and live_nodes:
            name = sorted(live_nodes)[arg % len(live_nodes)]
            del live_nodes[name]
            out.append({"delete": [{"kind": "Node", "name": name}]})
        elif kind == "advance":
            out.append({"advance": arg})
        elif kind == "fail" and live_pods:
            out.append({"fail": {"bind": [live_pods[arg % len(live_pods)]]}})
    return {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "seed": seed,
            "cluster": cluster, "pods": pod_list, "steps": out}


def _milli(q: str) -> int:
    return int(q[:-1]) if q.endswith("m") else int(q) * 1000


class BindingChecker:
    """Checks every binding at the moment the API server accepts it."""

    def __init__(self, run: CaseRun):
        self.run = run
        self.bound = {}
        self.problems = []
        run.cluster.subscribe(self.on_event)

    def on_event(self, kind, old, new):
        if kind != "Pod" or new is None or not new.node_name or (old is not None and old.node_name):
            return
        if new.uid in self.bound:
            self.problems.append(f"{new.key} bound twice")
        self.bound[new.uid] = new.node_name
        node = self.run.cluster.get("Node", "", new.node_name)
        if node is None:
            self.problems.append(f"{new.key} bound to missing node {new.node_name}")
            return
        spec, labels = node.raw.get("spec") or {}, node.labels
        pod_spec = new.spec
        if spec.get("unschedulable"):
            self.problems.append(f"{new.key} bound to cordoned {node.name}")
        if spec.get("taints") and not pod_spec.get("tolerations"):
            self.problems.append(f"{new.key} bound to tainted {node.name}")
        for k, v in (pod_spec.get("nodeSelector") or {}).items():
            if labels.get(k) != v:
                self.problems.append(f"{new.key} bound to {node.name} against its nodeSelector")
        alloc = node.raw["status"]["allocatable"]
        on_node = [p for p in self.run.cluster.list("Pod") if p.node_name == node.name
                   and (p.raw.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        on_node = [p for p in on_node if p.uid != new.uid] + [new]
        cpu = sum(_milli(p.spec["containers"][0]["resources"]["requests"]["cpu"]) for p in on_node)
        gpu = sum(int(p.spec["containers"][0]["resources"]["requests"].get("example.com/gpu", 0)) for p in on_node)
        if cpu > _milli(alloc["cpu"]):
            self.problems.append(f"{node.name} over-committed in cpu: {cpu}m > {alloc['cpu']}")
        if gpu > int(alloc["example.com/gpu"]):
            self.problems.append(f"{node.name} over-committed in example.com/gpu: {gpu} > {alloc['example.com/gpu']}")
        if len(on_node) > int(alloc["pods"]):
            self.problems.append(f"{node.name} over-committed in pods: {len(on_node)} > {alloc['pods']}")


def trace(data):
    """Run the case, checking the invariants after every step; returns its JSON trace."""
    case = case_from_data(copy.deepcopy(data), "generated.yaml")
    run = CaseRun(case)
    checker = BindingChecker(run)
    values = SharedValuesWatch()
    values.watch(run)
    run.run()
    steps = []
    for step in case.steps:
        run.apply(step)
        obs = run.observe()
        steps.append(StepResult(step.index, step.action, obs).to_json())
        assert not checker.problems, (checker.problems, step)
        written = values.written()  # sharing's rule (harness/sharing.py)
        assert not written, ("written in place", written[:1], step)
        pods = {p.key: p for p in run.cluster.list("Pod")}
        for key in run.sched.tracked_pods:
            if key in pods:
                state = obs.queue[key]
                assert state in ("bound", "active", "backoff", "unschedulable", "gated", "waiting"), (key, state)
                assert state not in ("active",), f"{key} left in activeQ after the scheduler went quiet"
    return json.dumps(steps, sort_keys=True)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nodes=nodes_st, pods=st.lists(pod_st, max_size=6), steps=st.lists(step_st, max_size=12),
       seed=st.integers(0, 3))
def test_step_invariants_and_determinism(nodes, pods, steps, seed):
    data = build_case(nodes, pods, steps, seed)
    first = trace(data)
    assert trace(data) == first
