"""Property test (hypothesis, 300 random clusters with priorities): DefaultPreemption's dry-run
memo (victims_on_node_checker) gives the same candidates, victims, dry-run statuses, nominated
nodes, preempted pods and bindings as the straightforward per-node path (memo_dry_run off)."""

from __future__ import annotations

import copy

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from builtin_plugins.default_preemption import DefaultPreemption  # noqa: E402
from harness.case.loader import case_from_data  # noqa: E402
from harness.case.runner import run_case  # noqa: E402
from harness.framework.preemption import Evaluator  # noqa: E402


def _pod(name, cpu, priority, node=None, ports=None, selector=None):
    c = {"name": "c", "image": "x", "resources": {"requests": {"cpu": f"{cpu}m", "memory": "128Mi"}}}
    if ports:
        c["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "x"}},
         "spec": {"priority": priority, "containers": [c]}}
    if node:
        p["spec"]["nodeName"] = node
    if selector:
        p["spec"]["nodeSelector"] = {"zone": selector}
    return p


@st.composite
def clusters(draw):
    n_nodes = draw(st.integers(1, 6))
    objs = []
    for i in range(n_nodes):
        objs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                                              "zone": draw(st.sampled_from(["a", "b"]))}},
                     "status": {"allocatable": {"cpu": f"{draw(st.sampled_from([1000, 2000, 4000]))}m",
                                                "memory": "8Gi", "pods": str(draw(st.integers(2, 8)))}}})
        used = 0
        for j in range(draw(st.integers(0, 4))):
            cpu = draw(st.sampled_from([300, 500, 900]))
            used += cpu
            if used > 4000:
                break
            objs.append(_pod(f"run-{i}-{j}", cpu, draw(st.sampled_from([0, 0, 5, 20])), node=f"n{i}",
                             ports=draw(st.integers(0, 5)) == 0))
    shapes = [(draw(st.sampled_from([500, 1000, 1500, 3000])), draw(st.sampled_from([1, 10, 10, 30])),
               draw(st.integers(0, 5)) == 0, draw(st.sampled_from([None, None, "a", "b"])))
              for _ in range(draw(st.integers(1, 3)))]
    pending = []
    for k in range(draw(st.integers(1, 8))):
        cpu, prio, ports, sel = shapes[draw(st.integers(0, len(shapes) - 1))]
        pending.append(_pod(f"p-{k}", cpu, prio, ports=ports, selector=sel))
    if draw(st.integers(0, 9)) == 0:
        pending[0]["spec"]["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "x"}}}]
    return {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "seed": 0,
            "cluster": objs, "pods": pending, "expect": {}}


def _run(data, memo: bool, monkeypatch):
    seen = []
    orig = Evaluator.dry_run_preemption

    def spy(self, state, pod, nodes, pdbs, offset, num):
        cands, statuses, err = orig(self, state, pod, nodes, pdbs, offset, num)
        seen.append((pod.key, [(c.name, [p.key for p in c.victims.pods], c.victims.num_pdb_violations)
                               for c in cands],
                     sorted((n.name, str(statuses.get(n.name))) for n in nodes), str(err)))
        return cands, statuses, err

    monkeypatch.setattr(Evaluator, "dry_run_preemption", spy)
    monkeypatch.setattr(DefaultPreemption, "memo_dry_run", memo)
    res = run_case(case_from_data(copy.deepcopy(data), "random.yaml"))
    return seen, res.bindings, res.preempted, res.nominated, res.messages


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(clusters())
def test_memo_matches_per_node_path(data):
    with pytest.MonkeyPatch.context() as mp:
        fast = _run(data, True, mp)
    with pytest.MonkeyPatch.context() as mp:
        slow = _run(data, False, mp)
    assert fast == slow
