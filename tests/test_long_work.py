"""Long work bounded (issue 25): a big case with a bad top-level value is refused before its
objects are read; a long `advance` passes the idle ticks of the unschedulable flush over
(the same outcome as firing them) and is refused, naming the step, when it would retry pods
more than ADVANCE_ATTEMPTS_PER_POD times each."""

from __future__ import annotations

import json

import pytest
import yaml

from harness.case.loader import EARLY_CHECK_BYTES, load_case
from harness.case.runner import run_case
from harness.cli import main
from harness.framework.registry import default_registry
from harness.scheduler import scheduler as scheduler_mod

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(cpu="1", name="web"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}}


def big_case(tmp_path, top: str, tail: str = "") -> str:
    """A case file over EARLY_CHECK_BYTES: its top-level lines, then 6500 nodes (one JSON line
    each, as `import` writes them), then `tail`."""
    lines = ["apiVersion: schedharness/v1alpha1", "kind: Case", "metadata: {name: big}", top, "cluster:"]
    for i in range(6500):
        node = dict(NODE, metadata={"name": f"node-{i}", "labels": {"zone": f"z{i % 3}"}})
        lines.append("- " + json.dumps(node, separators=(", ", ": ")))
    text = "\n".join(lines) + "\n" + tail
    assert len(text) > EARLY_CHECK_BYTES
    path = tmp_path / "big.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("top, tail, where", [
    ("seed: bad", "", "seed: must be an integer"),
    ("", "seed: 1.5\n", "seed: must be an integer"),
    ("replicas: 0", "", "replicas"),
    ("replicas: '3'", "", "replicas"),
    ("kubernetesVersion: v1.035", "", "kubernetesVersion"),
    ("kubernetesVersion: \"1.35\"", "", "kubernetesVersion"),
])
@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_big_case_with_a_bad_top_level_value_is_refused_before_its_objects_are_read(
        top, tail, where, command, tmp_path, capsys, monkeypatch):
    path = big_case(tmp_path, top, tail)

    def never(*a, **k):  # the objects are not read at all
        raise AssertionError("the whole file was read")
    monkeypatch.setattr("harness.case.loader.load_yaml_file", never)
    monkeypatch.setattr("harness.yamlfile.load_yaml_file", never)
    assert main([command, path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}: ") and where in err[0], err


def test_a_big_case_with_good_top_level_values_still_loads(tmp_path, capsys):
    path = big_case(tmp_path, "seed: 7\nkubernetesVersion: v1.35\nreplicas: 1", "pods: []\nexpect: {}\n")
    assert main(["validate", path]) == 0, capsys.readouterr().err


def advance_case(tmp_path, duration: str, attempts=None) -> str:
    case = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "long"},
            "cluster": [NODE], "pods": [pod(cpu="100")],
            "steps": [{"advance": duration}],
            "expect": {"bindings": {"web": None}, **({"attempts": {"web": attempts}} if attempts else {})}}
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(case))
    return str(path)


def test_idle_flush_ticks_passed_over_give_the_outcome_of_firing_each(tmp_path, monkeypatch):
    """An unschedulable pod fails at 0s, leaves the unschedulable pool at the first flush tick
    more than podMaxInUnschedulablePodsDuration (300s) later, 330s, and fails again: every 330s.
    In 2h (7200s): attempts at 0, 330, ..., 6930, 22 of them, whether the idle ticks in between
    fire or are passed over."""
    path = advance_case(tmp_path, "2h", attempts=22)
    res = run_case(load_case(path), default_registry())
    assert res.passed, res.failures
    monkeypatch.setattr(scheduler_mod.Scheduler, "_pass_idle_flush_ticks", lambda self, target: None)
    ticked = run_case(load_case(path), default_registry())
    assert ticked.passed, ticked.failures


@pytest.mark.parametrize("duration", ["9223372036854775807ns", "2562047h", "100000h"])
def test_a_long_advance_with_nothing_pending_finishes(duration, tmp_path, capsys):
    case = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "long"},
            "cluster": [NODE], "pods": [pod()], "steps": [{"advance": duration}],
            "expect": {"bindings": {"web": "node-a"}}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(case))
    assert main(["run", str(path)]) == 0, capsys.readouterr()


@pytest.mark.parametrize("duration", ["100000h", "9223372036854775807ns"])
def test_a_long_advance_retrying_an_unschedulable_pod_is_refused_naming_the_step(duration, tmp_path, capsys):
    path = advance_case(tmp_path, duration)
    assert main(["run", path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}: steps[0].advance: "), err
    assert "scheduling attempts" in err[0] and "default/web" in err[0]
