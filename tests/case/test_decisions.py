"""`expect.decisions` and `expect.history`: pinning why a pod went where it went, and the
readable table a failure shows."""

from __future__ import annotations

import copy
import json
import os
import sys

import pytest

from harness.case.loader import case_from_data, load_case
from harness.case.runner import run_case
from harness.cli import main
from harness.yamlfile import load_yaml_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PINNED = os.path.join(ROOT, "cases", "decisions", "image-locality-scores-pinned.yaml")
HISTORY = os.path.join(ROOT, "cases", "decisions", "filter-verdicts-and-attempt-history.yaml")
SAMPLE = os.path.join(ROOT, "tests", "sample")


def _data(path):
    return copy.deepcopy(load_yaml_file(path, ValueError))


def _weight(plugin, w):
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"score": {"enabled": [{"name": plugin, "weight": w}]}}}]}


def test_pinned_relation_fails_with_the_differing_rows_when_a_weight_reverses_it():
    data = _data(PINNED)
    data["config"] = _weight("NodeResourcesFit", 20)
    res = run_case(case_from_data(data, PINNED))
    assert not res.passed
    rel = [f for f in res.failures if "final(node-a) > final(node-b) does not hold" in f]
    assert len(rel) == 1
    lines = rel[0].splitlines()
    header = lines[1].split()
    assert header[-2:] == ["node-a", "node-b"]
    rows = {ln.split()[0]: ln.split()[1:] for ln in lines[2:]}
    # only the plugins whose weighted scores differ between the two nodes, then the totals
    assert set(rows) == {"NodeResourcesFit", "ImageLocality", "final"}
    assert rows["NodeResourcesFit"] == ["75/75x20=1500", "87/87x20=1740"]
    assert rows["final"] == ["1924", "2140"]


def test_filter_verdict_mismatch_names_node_plugin_expected_and_got():
    data = _data(HISTORY)
    data["cluster"][0]["status"]["allocatable"]["cpu"] = "4"  # node-a now fits web-1
    data["steps"] = data["steps"][:1]
    data["steps"][0]["expect"].pop("bindings")
    res = run_case(case_from_data(data, HISTORY))
    text = "\n".join(res.failures)
    assert "Filter verdicts differ" in text
    row = next(ln for ln in text.splitlines() if ln.split()[:2] == ["node-a", "NodeResourcesFit"])
    assert row.split()[-1] == "Success"
    assert "rejected (plugin: nodes) differ" in text


def test_history_mismatch_shows_the_attempts_that_differ():
    data = _data(HISTORY)
    del data["steps"][1]  # no update: web-1 stays parked after one attempt
    data["steps"][1]["expect"].pop("bindings")
    data["steps"][1]["expect"].pop("decisions")
    data.pop("expect")
    res = run_case(case_from_data(data, HISTORY))
    assert len(res.failures) == 1
    lines = res.failures[0].splitlines()
    assert "attempt history differs (2 attempt(s) expected, 1 made)" in lines[0]
    assert lines[-1].split()[0] == "2" and lines[-1].endswith("(no such attempt)")


def test_the_cases_pass_as_written():
    for path in (PINNED, HISTORY):
        res = run_case(load_case(path))
        assert res.passed, res.failures


def test_third_party_plugin_verdicts_and_scores():
    if SAMPLE not in sys.path:
        sys.path.insert(0, SAMPLE)
    node = lambda name, **labels: {"apiVersion": "v1", "kind": "Node",  # noqa: E731
                                   "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
                                   "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}}
    cfg = _weight("GpuFirst", 5)
    cfg["profiles"][0]["plugins"] = {"multiPoint": {"enabled": [{"name": "GpuFirst", "weight": 5}]}}
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "config": cfg,
            "plugins": ["schedharness_sample_plugins"],
            "cluster": [node("cpu-only"), node("t4", gpu="t4"), node("a100", gpu="a100")],
            "pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train"},
                      "spec": {"containers": [{"name": "c", "image": "x"}]}}],
            "expect": {"decisions": {"train": {
                "filter": {"cpu-only": {"GpuFirst": {"code": "Unschedulable", "message": "no gpu"}}},
                "score": {"a100": {"GpuFirst": {"raw": 100, "weighted": 500}}, "t4": {"GpuFirst": 0}},
                "rejected": {"GpuFirst": 1},
                "relations": ["GpuFirst(a100) > GpuFirst(t4)", "final(a100) > final(t4)"]}}}}
    res = run_case(case_from_data(data, os.path.join(SAMPLE, "inline.yaml")))  # its module in its tree
    assert res.passed, res.failures


@pytest.mark.parametrize("decisions,key", [
    ({"ghost": {"picked": "node-a"}}, "expect.decisions.ghost"),
    ({"big": {"order": ["node-a", "node-z"]}}, "expect.decisions.big.order[1]"),
    ({"big": {"score": {"node-a": {"NoSuchPlugin": 1}}}}, "expect.decisions.big.score.node-a.NoSuchPlugin"),
    ({"big": {"relations": ["final(node-a) >> final(node-b)"]}}, "expect.decisions.big.relations[0]"),
    ({"big": {"filter": {"node-a": {"NodeResourcesFit": "Fine"}}}}, "expect.decisions.big.filter.node-a.NodeResourcesFit"),
])
def test_unknown_names_and_bad_shapes_exit_2_naming_file_and_key(tmp_path, capsys, decisions, key):
    import yaml

    data = _data(PINNED)
    data["config"] = os.path.join(ROOT, "profiles", "default.yaml")
    data["expect"]["decisions"] = decisions
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["run", str(path), "--allow-outside-root"]) == 2  # the config is the repository's
    err = capsys.readouterr().err
    assert f"{path}: {key}:" in err


def test_history_in_run_json_and_explain(capsys):
    assert main(["run", "--json", HISTORY]) == 0
    out = json.loads(capsys.readouterr().out)
    hist = out[0]["history"]["default/web-1"]
    assert [h["result"] for h in hist] == ["unschedulable", "scheduled"]
    assert hist[0]["rejected"] == {"NodeResourcesFit": 1, "TaintToleration": 1}
    assert hist[1]["event"] == "NodeUpdateNodeAllocatable" and hist[1]["node"] == "node-a"
    assert main(["explain", HISTORY, "web-1"]) == 0
    text = capsys.readouterr().out
    assert "after NodeUpdateNodeAllocatable; scheduled on node-a" in text
