"""Property tests (hypothesis, derandomized) of the preemption fast paths against their reference
paths, on random clusters with priorities, nominated pods (set in the case and made by
preemption), taints, node selectors, host ports, sometimes a PDB or a topology spread constraint
(where the memos must stand aside):

- Framework's RunFilterPluginsWithNominatedPods memo (filter_memo) together with
  DefaultPreemption's dry-run memo, against both off: every RunFilterPluginsWithNominatedPods
  answer, every dry run (candidates, victims, statuses), and the bindings, preemptions,
  nominations and messages are the same;
- pickOneNodeForPreemption's one-pass default criteria against the score functions applied in
  turn, and the inlined NodesForStatusCode against NodeToStatus.get.
"""

from __future__ import annotations

import copy

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from builtin_plugins.default_preemption import DefaultPreemption  # noqa: E402
from harness.api.objects import Node, Pod  # noqa: E402
from harness.case.loader import case_from_data  # noqa: E402
from harness.case.runner import run_case  # noqa: E402
from harness.framework.preemption import (Evaluator, Victims, default_criteria, default_score_funcs,  # noqa: E402
                                          nodes_for_status_code, pick_one_node_for_preemption)
from harness.framework.runtime import Framework  # noqa: E402
from harness.framework.status import Code, Status  # noqa: E402
from harness.framework.types import NodeInfo, NodeToStatus  # noqa: E402

_SETTINGS = dict(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))


def _pod(name, cpu, priority, node=None, ports=False, selector=None, tolerate=False, nominated=None,
         never=False):
    c = {"name": "c", "image": "x", "resources": {"requests": {"cpu": f"{cpu}m", "memory": "128Mi"}}}
    if ports:
        c["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "x"}},
         "spec": {"priority": priority, "containers": [c]}}
    if node:
        p["spec"]["nodeName"] = node
    if selector:
        p["spec"]["nodeSelector"] = {"zone": selector}
    if tolerate:
        p["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    if never:
        p["spec"]["preemptionPolicy"] = "Never"
    if nominated:
        p["status"] = {"nominatedNodeName": nominated}
    return p


@st.composite
def clusters(draw):
    n_nodes = draw(st.integers(1, 6))
    objs = []
    for i in range(n_nodes):
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                                         "zone": draw(st.sampled_from(["a", "b"]))}},
                "spec": {},
                "status": {"allocatable": {"cpu": f"{draw(st.sampled_from([1000, 2000, 4000]))}m",
                                           "memory": "8Gi", "pods": str(draw(st.integers(2, 8)))}}}
        if draw(st.integers(0, 7)) == 0:
            node["spec"]["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        if draw(st.integers(0, 11)) == 0:
            node["spec"]["unschedulable"] = True
        objs.append(node)
        used = 0
        for j in range(draw(st.integers(0, 4))):
            cpu = draw(st.sampled_from([300, 500, 900]))
            used += cpu
            if used > 4000:
                break
            objs.append(_pod(f"run-{i}-{j}", cpu, draw(st.sampled_from([0, 0, 5, 20])), node=f"n{i}",
                             ports=draw(st.integers(0, 5)) == 0))
    if draw(st.integers(0, 9)) == 0:
        objs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                     "metadata": {"name": "pdb", "namespace": "default"},
                     "spec": {"selector": {"matchLabels": {"app": "x"}}},
                     "status": {"disruptionsAllowed": draw(st.integers(0, 2))}})
    shapes = [(draw(st.sampled_from([500, 1000, 1500, 3000])), draw(st.sampled_from([1, 5, 10, 10, 30])),
               draw(st.integers(0, 5)) == 0, draw(st.sampled_from([None, None, "a", "b"])),
               draw(st.integers(0, 3)) == 0)
              for _ in range(draw(st.integers(1, 3)))]
    pending = []
    for k in range(draw(st.integers(1, 9))):
        cpu, prio, ports, sel, tol = shapes[draw(st.integers(0, len(shapes) - 1))]
        nominated = f"n{draw(st.integers(0, n_nodes - 1))}" if draw(st.integers(0, 3)) == 0 else None
        pending.append(_pod(f"p-{k}", cpu, prio, ports=ports, selector=sel, tolerate=tol, nominated=nominated,
                            never=draw(st.integers(0, 15)) == 0))
    if draw(st.integers(0, 9)) == 0:
        pending[0]["spec"]["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "x"}}}]
    return {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "seed": 0,
            "cluster": objs, "pods": pending, "expect": {}}


def _st(s):
    if s is None:
        return None
    return (int(s.code), list(s.reasons), s.plugin, str(s.err) if s.err is not None else None)


def _run(data, fast: bool, mp):
    filtered = []
    dry_runs = []
    orig_filter = Framework.run_filter_plugins_with_nominated_pods
    orig_dry = Evaluator.dry_run_preemption

    def spy_filter(self, state, pod, info):
        s = orig_filter(self, state, pod, info)
        if self.snapshot.node_info_map.get(info.name) is info:  # not a dry run's copy (memo skips those)
            filtered.append((pod.key, info.name, _st(s)))
        return s

    def spy_dry(self, state, pod, nodes, pdbs, offset, num):
        cands, statuses, err = orig_dry(self, state, pod, nodes, pdbs, offset, num)
        dry_runs.append((pod.key, [(c.name, [p.key for p in c.victims.pods], c.victims.num_pdb_violations)
                                   for c in cands],
                         sorted((n.name, _st(statuses.get(n.name))) for n in nodes), str(err)))
        return cands, statuses, err

    mp.setattr(Framework, "run_filter_plugins_with_nominated_pods", spy_filter)
    mp.setattr(Evaluator, "dry_run_preemption", spy_dry)
    mp.setattr(Framework, "memo_nominated_filters", fast)
    mp.setattr(DefaultPreemption, "memo_dry_run", fast)
    res = run_case(case_from_data(copy.deepcopy(data), "random.yaml"))
    return filtered, dry_runs, res.bindings, res.preempted, res.nominated, res.messages


@settings(max_examples=400, **_SETTINGS)
@given(clusters())
def test_memos_match_reference_paths(data):
    with pytest.MonkeyPatch.context() as mp:
        fast = _run(data, True, mp)
    with pytest.MonkeyPatch.context() as mp:
        slow = _run(data, False, mp)
    assert fast == slow


def _victim(name, priority, start, index):
    md = {"name": name, "namespace": "default", "x-creationIndex": index,
          "creationTimestamp": "2024-01-01T00:00:00Z"}
    status = {"startTime": f"2024-01-01T00:00:{start:02d}Z"} if start is not None else {}
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": md,
                "spec": {"priority": priority, "containers": []}, "status": status})


@st.composite
def victims_maps(draw):
    m = {}
    for i in range(draw(st.integers(1, 8))):
        pods = [_victim(f"v{i}-{j}", draw(st.sampled_from([-5, 0, 0, 3, 7, 2**31 - 1])),
                        draw(st.sampled_from([None, 1, 2, 2, 5])), draw(st.integers(0, 3)))
                for j in range(draw(st.integers(1, 4)))]
        pods.sort(key=lambda p: -p.priority)  # victims come most important first
        m[f"node-{draw(st.integers(0, 99))}-{i}"] = Victims(pods, draw(st.sampled_from([0, 0, 1, 2])))
    return m


@settings(max_examples=500, **_SETTINGS)
@given(victims_maps())
def test_pick_one_node_default_criteria_in_one_pass(m):
    assert pick_one_node_for_preemption(m) == pick_one_node_for_preemption(m, default_score_funcs(m))


@settings(max_examples=500, **_SETTINGS)
@given(victims_maps(), st.lists(st.integers(0, 3), max_size=4))
def test_pick_one_node_with_criteria_the_dry_run_knew(m, stale):
    """Victims carrying default_criteria (the dry-run memo's) are picked among exactly as
    without it; criteria of pods or violations changed since are not read."""
    want = pick_one_node_for_preemption(m, default_score_funcs(m))
    known = {node: Victims(v.pods, v.num_pdb_violations, default_criteria(v.pods, v.num_pdb_violations))
             for node, v in m.items()}
    nodes = list(known)
    for k in stale:  # change some victims after the fact: their criteria no longer hold
        v = known[nodes[k % len(nodes)]]
        if k % 2:
            v.num_pdb_violations += 1
        else:
            v.pods = v.pods[:-1] or v.pods
    assert pick_one_node_for_preemption(known) == pick_one_node_for_preemption(known, default_score_funcs(known))
    if not stale:
        assert pick_one_node_for_preemption(known) == want


@settings(max_examples=300, **_SETTINGS)
@given(st.lists(st.sampled_from([None, 0, 1, 2, 3]), min_size=0, max_size=8),
       st.sampled_from([Code.Unschedulable, Code.UnschedulableAndUnresolvable]),
       st.sampled_from([Code.Unschedulable, Code.UnschedulableAndUnresolvable]))
def test_nodes_for_status_code_inlined(codes, absent, wanted):
    nodes = []
    m = NodeToStatus(absent_status=Status(absent))
    for i, c in enumerate(codes):
        ni = NodeInfo()
        ni.set_node(Node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}}))
        nodes.append(ni)
        if c is not None:
            m.set(f"n{i}", Status(Code(c)))
    assert nodes_for_status_code(m, nodes, wanted) == [ni for ni in nodes if m.get(ni.name).code == wanted]
