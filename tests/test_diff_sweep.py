"""`schedharness diff` and `schedharness sweep`: the pods that move and why, the figures per
side or per value, the chart; the same answers on worker processes and on a Dask cluster."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from harness.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.join(ROOT, "profiles", "default.yaml")
PACKING = os.path.join(ROOT, "profiles", "bin-packing.yaml")

NODES = """\
cluster:
  - {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Pod, metadata: {name: load}, spec: {nodeName: node-a, containers: [{name: c, image: i, resources: {requests: {cpu: "2", memory: 4Gi}}}]}}
"""


@pytest.fixture
def cases(tmp_path):
    """Two cases: web spreads to empty node-b under LeastAllocated and packs onto node-a under
    MostAllocated; one-node has nowhere else to go."""
    d = tmp_path / "cases"
    d.mkdir()
    (d / "pack.yaml").write_text(textwrap.dedent("""\
        apiVersion: schedharness/v1alpha1
        kind: Case
        metadata: {name: pack-or-spread}
        """) + NODES + textwrap.dedent("""\
        pods:
          - {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1", memory: 2Gi}}}]}}
        expect:
          bindings: {web: node-b}
        """))
    (d / "one.yaml").write_text(textwrap.dedent("""\
        apiVersion: schedharness/v1alpha1
        kind: Case
        metadata: {name: one-node}
        cluster:
          - {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
        pods:
          - {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}}
        expect:
          bindings: {web: node-a}
        """))
    return str(d)


def _diff(capsys, *extra):
    rc = main(["diff", "--config", DEFAULT, "--config", PACKING, "--json", *extra])
    return rc, json.loads(capsys.readouterr().out)


def test_diff_lists_the_pod_that_moves_with_the_scores_that_moved_it(cases, tmp_path, capsys):
    report = tmp_path / "diff.html"
    rc = main(["diff", "--config", DEFAULT, "--config", PACKING, "--html", str(report), cases])
    out = capsys.readouterr().out
    assert rc == 1
    assert "default/web" in report.read_text() and "nodes used" in report.read_text()
    assert "default/web: node-b -> node-a" in out
    assert out.count("NodeResourcesFit") == 2  # the row that differs, on each side
    rc, data = _diff(capsys, cases)
    assert rc == 1
    [change] = data["changes"]
    assert (change["pod"], change["a"]["node"], change["b"]["node"]) == ("default/web", "node-b", "node-a")
    a, b = (data["summary"][s] for s in data["sides"])
    assert (a["nodes used"], b["nodes used"]) == (3, 2)  # node-a, node-b, one-node's node-a; packed: 2
    assert b["cpu mean %"] > a["cpu mean %"]


def test_diff_of_a_configuration_with_itself_is_empty_and_exit_0(cases, capsys):
    assert main(["diff", "--config", DEFAULT, "--config", DEFAULT, cases]) == 0
    assert "0 pod(s) change" in capsys.readouterr().out


def test_diff_refuses_an_invalid_configuration_or_one_config(cases, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles: [{schedulerName: default-scheduler, plugins: {score: {enabled: [{name: Nope}]}}}]\n")
    assert main(["diff", "--config", DEFAULT, "--config", str(bad), cases]) == 2
    assert str(bad) in capsys.readouterr().err
    assert main(["diff", "--config", DEFAULT, cases]) == 2


def test_diff_on_two_processes_gives_the_same_answer(cases, capsys):
    one = _diff(capsys, cases)
    two = _diff(capsys, "-j", "2", cases)
    assert one == two


def test_sweep_over_a_noderesourcesfit_weight_prints_the_table_and_writes_the_chart(cases, tmp_path, capsys):
    chart = tmp_path / "sweep.svg"
    report = tmp_path / "sweep.html"
    rc = main(["sweep", "--config", PACKING, "--weight", "NodeResourcesFit=1:3:2", "--chart", str(chart),
               "--json", "--html", str(report), cases])
    assert rc == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["value"] for r in rows] == ["NodeResourcesFit weight 1", "NodeResourcesFit weight 3"]
    assert all(r["cases passing"] == 1 and r["cases"] == 2 for r in rows)  # pack.yaml expects spreading
    svg = chart.read_text()
    assert svg.startswith("<svg") and "cases passing" in svg and "NodeResourcesFit weight" in svg
    assert "<svg" in report.read_text()
    rc = main(["sweep", "--arg", "NodeResourcesFit.scoringStrategy.type=LeastAllocated,MostAllocated",
               "--chart", str(chart), cases])
    out = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert out[0].split()[:3] == ["value", "cases", "passing"]
    passing = {line.split()[0]: line.split()[1] for line in out[1:3]}
    assert passing == {"NodeResourcesFit.scoringStrategy.type=LeastAllocated": "2",
                       "NodeResourcesFit.scoringStrategy.type=MostAllocated": "1"}
    assert out[3] == "cases whose result depends on the value (1):"
    assert out[5].split() == ["pack-or-spread", "PASS", "FAIL"]


def test_sweep_refuses_a_bad_value(cases, capsys):
    assert main(["sweep", "--weight", "NodeResourcesFit=a:b", cases]) == 2
    assert main(["sweep", "--weight", "NoSuchPlugin=1", "--chart", "", cases]) == 2
    assert "sweep value NoSuchPlugin weight 1" in capsys.readouterr().err


def test_diff_and_sweep_on_a_dask_local_cluster(cases, tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        expected = _diff(capsys, cases)
        assert _diff(capsys, "--dask-scheduler", cluster.scheduler_address, cases) == expected
        rc = main(["sweep", "--weight", "NodeResourcesFit=1,2", "--chart", str(tmp_path / "s.svg"), "--json",
                   "--dask-scheduler", cluster.scheduler_address, cases])
        assert rc == 0
        assert len(json.loads(capsys.readouterr().out)["rows"]) == 2


def test_diff_between_two_kubernetes_versions(cases, capsys):
    rc = main(["diff", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36", "--config", PACKING,
               "--json", cases])
    data = json.loads(capsys.readouterr().out)
    assert data["sides"] == [f"{PACKING} @ v1.34", f"{PACKING} @ v1.36"]
    assert rc == (1 if any(c["class"] == "real" for c in data["changes"]) else 0)
    assert main(["diff", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.20", cases]) == 2
    assert "--kubernetes-version" in capsys.readouterr().err


def test_sweep_applies_a_value_on_top_of_a_cases_own_configuration(cases, tmp_path, capsys):
    """Without --config, a case's own configuration stays and the value is applied on top of it
    (so the default weight passes what `run` passes); --config BASE replaces it, and the
    output says how many cases had one."""
    own = os.path.join(cases, "own.yaml")
    with open(os.path.join(cases, "pack.yaml")) as f:
        text = f.read()
    with open(own, "w") as f:  # packs under its own configuration: web -> node-a
        f.write(text.replace("name: pack-or-spread", "name: packs-by-its-own-config")
                .replace("web: node-b", "web: node-a")
                .replace("cluster:", "config: " + PACKING + "\ncluster:", 1))
    rc = main(["sweep", "--weight", "NodeResourcesFit=1", "--chart", "", cases])
    out = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert out[1].split()[-10] == "3"  # 3 of 3 cases pass, own.yaml under its MostAllocated
    assert "1 of 3 case(s) have a configuration of their own: the value is applied on top of it" in out
    rc = main(["sweep", "--config", DEFAULT, "--weight", "NodeResourcesFit=1", "--chart", "", "--json", cases])
    data = json.loads(capsys.readouterr().out)
    assert data["rows"][0]["cases passing"] == 2  # own.yaml now spreads
    assert data["ownConfig"] == {"cases": 1, "mode": "replaced"}


def test_sweep_leaves_a_score_plugin_a_profile_turned_off_off():
    from harness.sweep import _weight_on

    cfg = {"profiles": [{"schedulerName": "default-scheduler"},
                        {"schedulerName": "no-scoring", "plugins": {"score": {"disabled": [{"name": "*"}]}}}]}
    out = _weight_on(cfg, "NodeResourcesFit", 3)
    assert out["profiles"][0]["plugins"]["score"]["enabled"] == [{"name": "NodeResourcesFit", "weight": 3}]
    assert out["profiles"][1] == cfg["profiles"][1]


def test_the_sweep_charts_axes_fit_the_data():
    from harness.charts import sweep_panels

    rows = [{"cases passing": v, "cases": 267, "nodes used": 10, "cpu mean %": 1.5, "memory mean %": 2.0,
             "cpu max %": 3.0, "pods unbound": 0, "preemptions": 0} for v in (236, 227)]
    panel = sweep_panels(rows, ["1", "5"])[0]
    labels = [float(t) for _, t in panel["ticks"]]
    assert labels[0] <= 227 and labels[-1] >= 236 and labels[-1] - labels[0] <= 20
    (top, bottom) = (p[1] for p in panel["series"][0]["points"])
    assert bottom - top > 0.5 * (panel["y1"] - panel["y0"])  # the drop spans most of the panel
