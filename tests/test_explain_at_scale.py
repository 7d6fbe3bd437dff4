"""`explain` and `run -v` on a few hundred nodes: nodes with the same Filter verdict are grouped,
the top-scored nodes are shown with the tie at the top marked and how the version breaks it,
and the output stays short; `--all-nodes` lists every node."""

from __future__ import annotations

import re

import pytest
import yaml

from harness.cli import main

FULL, TAINTED, FIT = 200, 50, 50  # nodes: too small for the pod, tainted, identical and big enough


def _case(version: str, parallelism: int = 16) -> dict:
    nodes = []
    for i in range(FULL + TAINTED + FIT):
        name = f"node-{i:03d}"
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": "1" if i < FULL else "4", "memory": "8Gi", "pods": "110"}}}
        if FULL <= i < FULL + TAINTED:
            node["spec"] = {"taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]}
        nodes.append(node)
    return {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "many-nodes"},
            "kubernetesVersion": version,
            "config": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "parallelism": parallelism, "percentageOfNodesToScore": 100,
                       "profiles": [{"schedulerName": "default-scheduler"}]},
            "cluster": nodes,
            "pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                      "spec": {"containers": [{"name": "c", "image": "nginx",
                                               "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}]}}],
            "expect": {"bindings": {"web": None}}}  # fails (it binds): run -v prints the table


def _write(tmp_path, version: str, parallelism: int = 16) -> str:
    p = tmp_path / f"case-{version}-{parallelism}.yaml"
    p.write_text(yaml.safe_dump(_case(version, parallelism)))
    return str(p)


def _explain(capsys, *args) -> str:
    assert main(["explain", *args]) == 0
    return capsys.readouterr().out


def test_grouped_by_verdict_and_short(tmp_path, capsys):
    out = _explain(capsys, _write(tmp_path, "v1.36"), "web")
    lines = out.splitlines()
    assert len(lines) < 60, out
    assert "200 nodes (node-000, node-001, node-002, ...): rejected by NodeResourcesFit" in out
    assert "Insufficient cpu" in out
    assert "50 nodes (node-200, node-201, node-202, ...): rejected by TaintToleration" in out
    assert "50 nodes (node-250, node-251, node-252, ...): feasible" in out
    assert not any(line.strip().startswith("node node-1") for line in lines)  # no node one by one
    # the 10 top-scored nodes, all tied, the picked one marked; the other 40 summed up
    assert sum("(tied top)" in line for line in lines) == 10
    assert sum("<- picked" in line for line in lines) == 1
    assert "... 40 more scored nodes" in out
    assert "tie: 50 nodes share the top score" in out
    assert "(one of 50 tied at the top score)" in out


def test_tie_rule_follows_the_version(tmp_path, capsys):
    v134 = _explain(capsys, _write(tmp_path, "v1.34"), "web")
    assert "uniformly at random" in v134 and "heap" not in v134
    v136 = _explain(capsys, _write(tmp_path, "v1.36"), "web")
    assert "newSortedNodeScores' heap" in v136 and "with parallelism 16" in v136
    p1 = _explain(capsys, _write(tmp_path, "v1.35", parallelism=1), "web")
    assert "node order (parallelism 1)" in p1


def test_nodes_and_all_nodes(tmp_path, capsys):
    path = _write(tmp_path, "v1.36")
    few = _explain(capsys, path, "web", "--nodes", "3")
    assert sum("(tied top)" in line for line in few.splitlines()) == 3
    every = _explain(capsys, path, "web", "--all-nodes")
    assert sum(line.startswith("    node node-") for line in every.splitlines()) == FULL + TAINTED + FIT
    assert sum("(tied top)" in line for line in every.splitlines()) == FIT


def test_run_verbose_groups_too(tmp_path, capsys):
    assert main(["run", "-v", _write(tmp_path, "v1.36")]) == 1
    out = capsys.readouterr().out
    assert "200 nodes (node-000, node-001, node-002, ...): rejected by NodeResourcesFit" in out
    assert len(out.splitlines()) < 60, out


@pytest.mark.parametrize("bad", ["0", "-2"])
def test_nodes_must_be_positive(tmp_path, capsys, bad):
    assert main(["explain", _write(tmp_path, "v1.36"), "web", "--nodes", bad]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--nodes" in err[0]


def _preemption_case(n: int) -> dict:
    """n full nodes, each running one low-priority pod started at a different time; a
    high-priority pod must preempt one: every node is a candidate with the same keys but the
    start time, so pickOneNodeForPreemption takes the node whose victim started last."""
    cluster = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                "value": 1000}]
    for i in range(n):
        name = f"node-{i:03d}"
        cluster.append({"apiVersion": "v1", "kind": "Node",
                        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                        "status": {"allocatable": {"cpu": "1", "memory": "8Gi", "pods": "110"}}})
        cluster.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"low-{i:03d}"},
                        "spec": {"nodeName": name, "containers": [
                            {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]},
                        "status": {"phase": "Running", "startTime": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z"}})
    return {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "preempt"},
            "cluster": cluster,
            "pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "urgent"},
                      "spec": {"priorityClassName": "high", "containers": [
                          {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}],
            "expect": {"preempted": [f"low-{n - 1:03d}"]}}


@pytest.mark.parametrize("n", [3, 150])
def test_preemption_shows_each_candidates_keys_with_start_times(tmp_path, capsys, n):
    path = tmp_path / "preempt.yaml"
    case = _preemption_case(n)
    case["expect"] = {}
    path.write_text(yaml.safe_dump(case))
    out = _explain(capsys, str(path), "urgent")
    lines = out.splitlines()
    picked = next(line.split(": ")[1] for line in lines if line.strip().startswith("preemption picked:"))
    if n == 3:
        assert picked == "node-002"  # equal keys but the start time: the latest started victim
    cands = [line.strip() for line in lines if ": evict default/low-" in line]
    assert any(c.startswith(f"{picked}: evict default/low-{picked[-3:]} (priority 0, started 2026-01-01T00:")
               for c in cands)
    keys = [line.strip() for line in lines if line.strip().startswith("keys:")]
    assert len(keys) == len(cands) == min(n, 10)
    assert all("0 PDB violation(s), highest victim priority 0, sum of priorities 0" in k
               and "1 victim, earliest start of the highest-priority victims 2026-01-01T00:" in k for k in keys)
    assert "then latest earliest start time of the highest-priority victims" in out
    if n > 10:  # the 10 best by the keys (best first: the latest start), the rest counted
        starts = [k.rsplit(" ", 1)[1] for k in keys]
        assert starts == sorted(starts, reverse=True) and cands[0].startswith(picked + ":")
        assert re.search(r"\.\.\. \d+ more candidates", out)
        assert len(lines) < 80


def test_statuses_without_filter_tables_are_grouped_too():
    """An attempt recorded without per-node filter tables (PreFilter decided): its node
    statuses, one line per node up to --nodes, grouped beyond."""
    from harness.framework.status import Code, Status
    from harness.reports.text import View, attempt_lines
    from harness.scheduler.schedule_one import CycleRecord

    rec = CycleRecord(pod="default/p", attempt=1)
    for i in range(30):
        st = Status(Code.UnschedulableAndUnresolvable, "node(s) didn't match Pod's node affinity/selector")
        st.plugin = "NodeAffinity"
        rec.node_statuses[f"n{i:02d}"] = st
    grouped = attempt_lines(rec, View(nodes=10))
    assert ("    30 nodes (n00, n01, n02, ...): UnschedulableAndUnresolvable: node(s) didn't match Pod's "
            "node affinity/selector (NodeAffinity)") in grouped
    assert sum(line.startswith("    node n") for line in attempt_lines(rec, View(all_nodes=True))) == 30


def test_html_report_groups_the_same_way(tmp_path, capsys):
    report = tmp_path / "r.html"
    assert main(["run", "--html", str(report), _write(tmp_path, "v1.36")]) == 1
    html = report.read_text()
    table = re.search(r'<table class="decision".*?</table>', html, re.S).group(0)
    assert table.count("<tr") == 1 + 10 + 3  # header, the 10 top-scored, three groups
    assert "<td>200 nodes (node-000, node-001, node-002, ...)</td>" in table
    assert "<td>40 nodes (node-260, node-261, node-262, ...)</td>" in table  # the rest of the tied nodes
    assert "50 nodes share the top score" in html
