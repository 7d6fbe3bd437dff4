"""`schedharness diff` and `schedharness sweep`: the pods that move and why, the figures per
side or per value, the chart; the same answers on worker processes and on a Dask cluster.
diff classifies each change (real, tie-break, knock-on: README, "diff and sweep") and gives one
answer whatever the order of its sides and `-j`; the tie-break rule of harness/versions/ties.py."""

from __future__ import annotations

import json
import os
import shutil
import textwrap

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.versions import resolve
from harness.versions.ties import tie_break_is_random

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.join(ROOT, "profiles", "default.yaml")
PACKING = os.path.join(ROOT, "profiles", "bin-packing.yaml")
CASES = os.path.join(ROOT, "cases")

TWO_NODES = """\
cluster:
  - {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
"""
NODES = TWO_NODES + """\
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


def _json(capsys, *argv):
    rc = main(["diff", "--json", *argv])
    return rc, json.loads(capsys.readouterr().out)


def _diff(capsys, *extra):
    return _json(capsys, "--config", DEFAULT, "--config", PACKING, *extra)


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
    shutil.copy(PACKING, os.path.join(cases, "packing.yaml"))  # inside the case's tree (a case reads no file outside it)
    with open(own, "w") as f:  # packs under its own configuration: web -> node-a
        f.write(text.replace("name: pack-or-spread", "name: packs-by-its-own-config")
                .replace("web: node-b", "web: node-a")
                .replace("cluster:", "config: packing.yaml\ncluster:", 1))
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
    from harness.compare.sweep import weight_on

    cfg = {"profiles": [{"schedulerName": "default-scheduler"},
                        {"schedulerName": "no-scoring", "plugins": {"score": {"disabled": [{"name": "*"}]}}}]}
    out = weight_on(cfg, "NodeResourcesFit", 3)
    assert out["profiles"][0]["plugins"]["score"]["enabled"] == [{"name": "NodeResourcesFit", "weight": 3}]
    assert out["profiles"][1] == cfg["profiles"][1]


def test_the_sweep_charts_axes_fit_the_data():
    from harness.reports.charts import sweep_panels

    rows = [{"cases passing": v, "cases": 267, "nodes used": 10, "cpu mean %": 1.5, "memory mean %": 2.0,
             "cpu max %": 3.0, "pods unbound": 0, "preemptions": 0} for v in (236, 227)]
    panel = sweep_panels(rows, ["1", "5"])[0]
    labels = [float(t) for _, t in panel["ticks"]]
    assert labels[0] <= 227 and labels[-1] >= 236 and labels[-1] - labels[0] <= 20
    (top, bottom) = (p[1] for p in panel["series"][0]["points"])
    assert bottom - top > 0.5 * (panel["y1"] - panel["y0"])  # the drop spans most of the panel


POD = ('  - {{apiVersion: v1, kind: Pod, metadata: {{name: {name}}}, spec: {{containers: [{{name: c, image: i, '
       'resources: {{requests: {{cpu: "3", memory: 1Gi}}}}}}]}}}}\n')


def _case(path, name: str, pods, seed: int = 0) -> str:
    path.write_text(f"apiVersion: schedharness/v1alpha1\nkind: Case\nmetadata: {{name: {name}}}\nseed: {seed}\n"
                    + TWO_NODES + "pods:\n" + "".join(POD.format(name=p) for p in pods) + "expect: {}\n")
    return str(path)


@pytest.fixture
def tie(tmp_path):
    """Two equal empty nodes; `first` (3 of 4 cpu) ties between them, `second` (3 cpu) fits only
    where `first` is not. v1.34 (seed 0) draws node-b for `first`; v1.36 takes node-a."""
    return _case(tmp_path / "tie.yaml", "tie-then-knock-on", ["first", "second"])


def test_a_tie_on_v134_is_a_tie_break_and_the_pod_it_displaces_a_knock_on(tie, capsys):
    rc, data = _json(capsys, "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36", tie)
    assert rc == 0  # nothing real
    first, second = data["changes"]
    assert (first["pod"], first["a"]["node"], first["b"]["node"], first["class"]) == \
        ("default/first", "node-b", "node-a", "tie-break")
    assert first["why"]["tie"]["side"] == "A" and sorted(first["why"]["tie"]["nodes"]) == ["node-a", "node-b"]
    assert first["why"]["tie"]["score"] == first["why"]["sides"][0]["final"]["node-a"]
    assert (second["pod"], second["class"]) == ("default/second", "knock-on")
    assert second["why"]["knockOn"]["after"] == ["default/first"]
    rejected = second["why"]["sides"][0]["rejected"]["node-b"]
    assert rejected["plugin"] == "NodeResourcesFit" and "Insufficient cpu" in rejected["message"]
    assert data["counts"] == {"changes": 2, "real": 0, "tie-break": 1, "knock-on": 1}
    assert main(["diff", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36", tie]) == 0
    out = capsys.readouterr().out
    assert "2 pod(s) change in 1 of 1 case(s): 0 real, 1 tie-break, 1 knock-on" in out
    assert f"schedharness explore {tie} --kubernetes-version v1.34" in out
    assert "knock-on: after default/first changed" in out
    rc, data = _json(capsys, "--only-real", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36", tie)
    assert rc == 0 and data["changes"] == [] and data["counts"]["changes"] == 2


def _config(tmp_path, name: str, parallelism: int, prefer_b: bool = False) -> str:
    text = f"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: {parallelism}\n"
    if prefer_b:
        text += textwrap.dedent("""\
            profiles:
              - schedulerName: default-scheduler
                pluginConfig:
                  - name: NodeAffinity
                    args:
                      addedAffinity:
                        preferredDuringSchedulingIgnoredDuringExecution:
                          - weight: 1
                            preference: {matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-b]}]}
            """)
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize("parallelism, klass", [(1, "real"), (16, "tie-break")])
def test_from_v135_a_tie_is_a_tie_break_only_when_parallelism_makes_the_feasible_order_random(
        tmp_path, capsys, parallelism, klass):
    case = _case(tmp_path / "one.yaml", "one-pod", ["first"])
    a = _config(tmp_path, "a.yaml", parallelism)
    b = _config(tmp_path, "b.yaml", parallelism, prefer_b=True)
    for sides in ([a, b], [b, a]):
        rc, data = _json(capsys, "--kubernetes-version", "v1.36", "--kubernetes-version", "v1.36",
                         "--config", sides[0], "--config", sides[1], case)
        [change] = data["changes"]
        assert change["class"] == klass
        assert rc == (1 if klass == "real" else 0)


def test_a_real_change_names_the_plugin_rows_that_differ_as_data(cases, capsys):
    rc, data = _diff(capsys, os.path.join(cases, "pack.yaml"))
    assert rc == 1
    [change] = data["changes"]
    assert change["class"] == "real"
    a, b = change["why"]["sides"]
    assert [r["plugin"] for r in a["scores"]] == [r["plugin"] for r in b["scores"]] == ["NodeResourcesFit"]
    fit_a, fit_b = a["scores"][0]["nodes"], b["scores"][0]["nodes"]
    assert fit_a["node-b"]["weighted"] > fit_a["node-a"]["weighted"]  # LeastAllocated: the empty node
    assert fit_b["node-a"]["weighted"] > fit_b["node-b"]["weighted"]  # MostAllocated: the loaded one
    assert set(fit_a["node-a"]) == {"raw", "normalized", "weight", "weighted"}
    assert (a["node"], b["node"]) == ("node-b", "node-a")


def test_the_html_report_shows_the_why_as_decision_tables(tie, tmp_path, capsys):
    report = tmp_path / "diff.html"
    main(["diff", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36", "--html", str(report), tie])
    html = report.read_text()
    assert html.count('<table class="decision"') == 4  # two changes, one table per side
    assert 'data-class="tie-break"' in html and 'data-class="knock-on"' in html
    assert "<pre>" not in html
    assert "0 real, 1 tie-break, 1 knock-on" in html


@pytest.mark.parametrize("version, parallelism, extender, random", [
    ("v1.34", 1, False, True), ("v1.34", 16, False, True),  # selectHost's reservoir sampling
    ("v1.35", 1, False, False), ("v1.36", 1, False, False),  # the heap's first in node order
    ("v1.35", 2, False, True), ("v1.36", 16, False, True),  # the Filter workers' finishing order
    ("v1.36", 1, True, True),  # an extender's scores bring a Randomizer
])
def test_the_tie_break_rule(version, parallelism, extender, random):
    assert tie_break_is_random(resolve(version), parallelism, extender) is random


ALL_CASES = sorted(os.path.relpath(os.path.join(d, f), ROOT) for d, _, fs in os.walk(CASES)
                   for f in fs if f.endswith(".yaml"))


def _changes(capsys, argv, swap: bool = False):
    rc = main(["diff", "--json", *argv])
    out = capsys.readouterr().out
    assert rc in (0, 1), out
    seen = set()
    for c in json.loads(out)["changes"]:
        a, b = (c["b"], c["a"]) if swap else (c["a"], c["b"])
        seen.add((c["file"], c["pod"], c["class"], json.dumps(a, sort_keys=True), json.dumps(b, sort_keys=True)))
    return seen


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.sampled_from(ALL_CASES), min_size=2, max_size=2, unique=True),
       by_version=st.booleans())
@example(files=["cases/versions/dra/consumable-capacity-v1.36.yaml", "cases/pipeline/assumed-pods-count-for-later-pods.yaml"],
         by_version=True)
def test_diff_gives_one_answer_whatever_the_order_of_its_sides_and_jobs(files, by_version, capsys, monkeypatch):
    """Each side runs on its own copy of the case: what one side's API server defaults or drops
    never reaches the other, so swapping the sides mirrors the changes (same pods, same class)
    and two processes give what one gives."""
    monkeypatch.chdir(ROOT)
    a, b = (["--kubernetes-version", "v1.34"], ["--kubernetes-version", "v1.36"]) if by_version else \
        (["--config", DEFAULT], ["--config", PACKING])
    forward = _changes(capsys, a + b + files)
    assert _changes(capsys, b + a + files, swap=True) == forward
    assert _changes(capsys, ["-j", "2"] + a + b + files) == forward


@settings(max_examples=200, deadline=None)
@given(lo=st.integers(-10**7, 10**7), span=st.integers(0, 10**7), integer=st.booleans())
def test_a_chart_axis_covers_its_data_in_a_few_even_steps(lo, span, integer):
    """The figures are counts or shares rounded to 0.1."""
    from harness.reports.charts import nice_axis

    lo, hi = (lo, lo + span) if integer else (lo / 10, (lo + span) / 10)
    ticks = nice_axis(lo, hi, integer=integer)
    assert ticks[0] <= lo and ticks[-1] >= hi
    assert 2 <= len(ticks) <= 12
    steps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert max(steps) - min(steps) <= 1e-6 * steps[0]
    if integer:
        assert all(float(t).is_integer() for t in ticks)


def test_a_preemption_made_needed_by_an_earlier_change_is_a_knock_on(tmp_path, capsys):
    """`low` (2 cpu) goes to empty node-a when spreading and to node-b (1 cpu used) when
    packing: real. `high` (3 cpu, node-a only, created afterwards) must then evict `low` when
    spreading, not when packing: its own decision is the same, a knock-on of low's move."""
    case = tmp_path / "victim.yaml"
    case.write_text(textwrap.dedent("""\
        apiVersion: schedharness/v1alpha1
        kind: Case
        metadata: {name: preempts-where-low-went}
        """) + TWO_NODES + textwrap.dedent("""\
          - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: urgent}, value: 1000}
          - {apiVersion: v1, kind: Pod, metadata: {name: load, namespace: default}, spec: {nodeName: node-b, containers: [{name: c, image: i, resources: {requests: {cpu: "1", memory: 1Gi}}}]}}
        pods:
          - {apiVersion: v1, kind: Pod, metadata: {name: low}, spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "2", memory: 1Gi}}}]}}
        steps:
          - create:
              - {apiVersion: v1, kind: Pod, metadata: {name: high}, spec: {priorityClassName: urgent, nodeSelector: {kubernetes.io/hostname: node-a}, containers: [{name: c, image: i, resources: {requests: {cpu: "3", memory: 1Gi}}}]}}
        expect: {}
        """))
    rc, data = _diff(capsys, str(case))
    assert rc == 1
    low, high = data["changes"]
    assert (low["pod"], low["a"]["preempted"], low["b"]["node"], low["class"]) == ("default/low", True, "node-b", "real")
    assert (high["pod"], high["a"]["victims"], high["b"]["victims"], high["class"]) == \
        ("default/high", ["default/low"], [], "knock-on")
    assert high["why"]["knockOn"]["after"] == ["default/low"]
