"""`schedharness diff` classifies each change (real, tie-break, knock-on: README, "diff"), gives
its why as data, and gives one answer whatever the order of its sides and `-j`; the tie-break
rule of harness/versions/ties.py."""

from __future__ import annotations

import json
import os
import textwrap

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness.cli import main
from harness.versions import resolve
from harness.versions.ties import tie_break_is_random

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "cases")
DEFAULT = os.path.join(ROOT, "profiles", "default.yaml")
PACKING = os.path.join(ROOT, "profiles", "bin-packing.yaml")

NODES = """\
cluster:
  - {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
"""
POD = ('  - {{apiVersion: v1, kind: Pod, metadata: {{name: {name}}}, spec: {{containers: [{{name: c, image: i, '
       'resources: {{requests: {{cpu: "3", memory: 1Gi}}}}}}]}}}}\n')


def _case(path, name: str, pods, seed: int = 0) -> str:
    path.write_text(f"apiVersion: schedharness/v1alpha1\nkind: Case\nmetadata: {{name: {name}}}\nseed: {seed}\n"
                    + NODES + "pods:\n" + "".join(POD.format(name=p) for p in pods) + "expect: {}\n")
    return str(path)


@pytest.fixture
def tie(tmp_path):
    """Two equal empty nodes; `first` (3 of 4 cpu) ties between them, `second` (3 cpu) fits only
    where `first` is not. v1.34 (seed 0) draws node-b for `first`; v1.36 takes node-a."""
    return _case(tmp_path / "tie.yaml", "tie-then-knock-on", ["first", "second"])


def _json(capsys, *argv):
    rc = main(["diff", "--json", *argv])
    return rc, json.loads(capsys.readouterr().out)


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


def test_a_real_change_names_the_plugin_rows_that_differ_as_data(tmp_path, capsys):
    case = tmp_path / "pack.yaml"
    case.write_text("apiVersion: schedharness/v1alpha1\nkind: Case\nmetadata: {name: pack}\n" + NODES
                    + '  - {apiVersion: v1, kind: Pod, metadata: {name: load}, spec: {nodeName: node-a, containers: '
                      '[{name: c, image: i, resources: {requests: {cpu: "2", memory: 4Gi}}}]}}\n'
                    + "pods:\n" + POD.format(name="web").replace('"3"', '"1"') + "expect: {}\n")
    rc, data = _json(capsys, "--config", DEFAULT, "--config", PACKING, str(case))
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
    from harness.charts import nice_axis

    lo, hi = (lo, lo + span) if integer else (lo / 10, (lo + span) / 10)
    ticks = nice_axis(lo, hi, integer=integer)
    assert ticks[0] <= lo and ticks[-1] >= hi
    assert 2 <= len(ticks) <= 12
    steps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert max(steps) - min(steps) <= 1e-6 * steps[0]
    if integer:
        assert all(float(t).is_integer() for t in ticks)
