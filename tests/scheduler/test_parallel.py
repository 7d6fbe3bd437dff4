"""`run --parallel`: Filter and Score on the Parallelizer's threads give the sequential outcome
for thread-safe plugins, and flag by name a plugin that is not."""

from __future__ import annotations

import os
import sys

import pytest

from harness.case import find_cases, load_case, run_case
from harness.case.loader import case_from_data
from harness.cli import main
from harness.framework.parallelize import RunSettings, chunk_size_for, num_workers_for_chunk_size, using

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SAMPLE = os.path.join(ROOT, "tests", "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)
VERIFIED = os.path.normpath(os.path.join(ROOT, "..", "shared", "verified-versions"))


def _outcome(res):
    return res.bindings, res.messages, res.preempted, res.nominated, res.failures


def _all_cases():
    paths = find_cases([os.path.join(ROOT, "cases")])
    if os.path.isdir(VERIFIED):
        paths += find_cases([VERIFIED])
    return paths


def test_chunk_size_for_as_upstream():
    # max(1, min(sqrt(n), n/parallelism + 1))
    assert chunk_size_for(1, 16) == 1
    assert chunk_size_for(100, 16) == 7  # sqrt 10, 100/16+1 = 7
    assert chunk_size_for(5000, 16) == 70  # sqrt 70.7
    assert num_workers_for_chunk_size(16, 10, 1) == 10
    assert num_workers_for_chunk_size(16, 5000, 70) == 16


def test_parallel_gives_the_sequential_outcome_on_every_case():
    paths = _all_cases()
    assert len(paths) > 200
    diffs = []
    for path in paths:
        seq = run_case(load_case(path))
        with using(RunSettings(parallel=True)):
            par = run_case(load_case(path))
        if _outcome(seq) != _outcome(par):
            diffs.append(f"{path}: sequential {_outcome(seq)} != parallel {_outcome(par)}")
    assert not diffs, "\n".join(diffs[:5])


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}


def case(points, parallel=False, nodes=40):
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "plugins": ["schedharness_parallel_plugins"],
            "config": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "parallelism": 8,
                       "profiles": [{"schedulerName": "default-scheduler", "plugins": points}]},
            "cluster": [node(f"n{i:02d}") for i in range(nodes)], "pods": [pod("p1"), pod("p2")], "expect": {}}
    if parallel:
        data["parallel"] = True
    return case_from_data(data, os.path.join(SAMPLE, "inline.yaml"))  # its module in its tree


def test_unsynchronized_state_in_self_is_flagged_by_name():
    res = run_case(case({"filter": {"enabled": [{"name": "RacyFilter"}]}}, parallel=True))
    assert not res.passed
    assert any(f.startswith('plugin "RacyFilter" is not safe for parallel filtering: Filter on node ')
               for f in res.failures), res.failures
    # the same case run sequentially passes: the race exists only under threads
    seq = run_case(case({"filter": {"enabled": [{"name": "RacyFilter"}]}}))
    assert seq.passed, seq.failures


def test_a_locked_plugin_is_not_flagged():
    res = run_case(case({"filter": {"enabled": [{"name": "LockedFilter"}]}}, parallel=True))
    assert res.passed, res.failures


def test_score_raising_only_under_threads_is_flagged():
    res = run_case(case({"score": {"enabled": [{"name": "RacyScore", "weight": 1}]}}, parallel=True))
    assert any(f.startswith('plugin "RacyScore" is not safe for parallel filtering: Score on node ')
               for f in res.failures), res.failures


def test_cli_parallel_prints_a_fail_line_naming_the_plugin(tmp_path, capsys):
    import yaml

    c = case({"filter": {"enabled": [{"name": "RacyFilter"}]}})
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "racy"},
            "config": c.config, "cluster": c.cluster, "pods": c.pods}
    f = tmp_path / "racy.yaml"
    f.write_text(yaml.safe_dump(data))
    plugin = ["-p", "schedharness_parallel_plugins"]  # tests/sample is not the case's tree: -p may
    assert main(["run", str(f), *plugin]) == 0
    capsys.readouterr()
    assert main(["run", "--parallel", str(f), *plugin]) == 1
    out = capsys.readouterr().out
    assert 'FAIL racy: plugin "RacyFilter" is not safe for parallel filtering' in out


def test_parallel_key_in_a_case_file_is_accepted():
    c = case({"filter": {"enabled": [{"name": "LockedFilter"}]}}, parallel=True)
    assert c.parallel is True
    with pytest.raises(Exception):
        case_from_data({"apiVersion": "schedharness/v1alpha1", "kind": "Case", "parallel": "yes"}, "bad.yaml")
