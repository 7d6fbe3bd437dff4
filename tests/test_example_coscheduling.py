"""The example out-of-tree package examples/coscheduling: its cases pass (all members of a gang
bound or none), its args are validated with the JSON Schema it ships (errors name the plugin and
the key), and its QueueSort reads creation times on the scheduler's virtual clock."""

from __future__ import annotations

import glob
import os
import sys

import pytest

from harness.case.loader import case_from_data, load_case
from harness.case.runner import run_case
from harness.cli import main
from harness.errors import UserError
from harness.framework import CLUSTER_START, virtual_seconds
from harness.framework.registry import build_registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "coscheduling")
if os.path.join(EXAMPLE, "src") not in sys.path:
    sys.path.insert(0, os.path.join(EXAMPLE, "src"))
CASES = sorted(glob.glob(os.path.join(EXAMPLE, "cases", "*.yaml")))


@pytest.fixture(scope="module")
def registry():
    return build_registry(["schedharness_coscheduling"])


@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_example_case_passes(path, registry):
    res = run_case(load_case(path), registry)
    assert res.passed, res.failures


@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_a_plugin_reading_its_podgroups_by_the_bare_kind_still_passes(path, registry, monkeypatch):
    """Third-party plugins read their scheduler-plugins PodGroups as "PodGroup": with the
    Workload API's PodGroup not served (GenericWorkload off, as in these cases), the bare name
    reads them (harness/api/group_kind.py), as before objects were kept by group and kind."""
    from schedharness_coscheduling import core

    monkeypatch.setattr(core, "POD_GROUP_KIND", "PodGroup")
    res = run_case(load_case(path), registry)
    assert res.passed, res.failures


def test_gangs_bind_all_members_or_none(registry):
    for path in CASES:
        res = run_case(load_case(path), registry)
        groups = {}
        for obj in res.case.pods:
            group = (obj["metadata"].get("labels") or {}).get("scheduling.x-k8s.io/pod-group")
            if group:
                key = f"default/{obj['metadata']['name']}"
                groups.setdefault(group, []).append(res.bindings[key] is not None)
        for group, bound in groups.items():
            assert all(bound) or not any(bound), (path, group, bound)


def _case(args):
    return case_from_data({
        "apiVersion": "schedharness/v1alpha1", "kind": "Case",
        "config": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                   "profiles": [{"schedulerName": "default-scheduler",
                                 "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                                             "queueSort": {"enabled": [{"name": "Coscheduling"}],
                                                           "disabled": [{"name": "*"}]}},
                                 "pluginConfig": [{"name": "Coscheduling", "args": args}]}]},
        "pods": []}, "inline.yaml")


@pytest.mark.parametrize("args,key,detail", [
    ({"permitWaitingTimeSeconds": -1}, "permitWaitingTimeSeconds", "Invalid value: -1: must be greater than 0"),
    ({"podGroupRejectPercentage": 101}, "podGroupRejectPercentage", "Invalid value: 101: must be between 0 and 100"),
    ({"podGroupBackoffSeconds": "30s"}, "podGroupBackoffSeconds", "Invalid value: \"30s\": '30s' is not of type 'integer'"),
    ({"permitWaitingTime": 10}, "permitWaitingTime", 'unknown field "permitWaitingTime"'),
])
def test_invalid_args_name_the_plugin_and_the_key(args, key, detail, registry):
    with pytest.raises(UserError) as e:
        run_case(_case(args), registry)
    msg = str(e.value)
    assert 'initializing plugin "Coscheduling"' in msg
    assert f"{key}: {detail}" in msg


def test_invalid_args_from_the_cli_are_one_line_exit_2(tmp_path, capsys, monkeypatch):
    case = tmp_path / "bad.yaml"
    case.write_text(open(CASES[0]).read().replace("config: ../scheduler-config-backoff.yaml", "config: cfg.yaml"))
    cfg = open(os.path.join(EXAMPLE, "scheduler-config.yaml")).read().replace(
        "permitWaitingTimeSeconds: 10", "permitWaitingTimeSeconds: -5")
    (tmp_path / "cfg.yaml").write_text(cfg)
    assert main(["run", "-p", "schedharness_coscheduling", str(case)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "cfg.yaml" in err[0] and "Coscheduling" in err[0] and "permitWaitingTimeSeconds" in err[0]


def test_virtual_time_starts_at_the_api_servers_creation_timestamp():
    from harness.case.apiserver import _EPOCH

    assert CLUSTER_START == _EPOCH
    assert virtual_seconds(_EPOCH) == 0
    assert virtual_seconds("2025-12-31T23:59:00Z") == -60
    assert virtual_seconds(None) is None and virtual_seconds("yesterday") is None


def _gang_case(min_resources):
    node = lambda n: {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},
                      "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    pod = lambda n: {"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": n, "labels": {"scheduling.x-k8s.io/pod-group": "g"}},
                     "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "config": "scheduler-config.yaml",
            "cluster": [node("n1"), node("n2"),
                        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                         "metadata": {"name": "g", "namespace": "default"},
                         "spec": {"minMember": 2, "minResources": min_resources}}],
            "pods": [pod("g-1"), pod("g-2")], "expect": {}}
    return case_from_data(data, os.path.join(EXAMPLE, "inline.yaml"))


def test_min_resources_the_cluster_cannot_hold(registry):
    # 2 nodes of 4 cpu: 10 cpu is 2 cpu short after both nodes; PreFilter rejects both pods
    res = run_case(_gang_case({"cpu": "10"}), registry)
    assert res.bindings == {"default/g-1": None, "default/g-2": None}
    assert "resource gap: map[cpu:2000m]" in res.messages["default/g-1"]


def test_min_resources_the_cluster_can_hold(registry):
    res = run_case(_gang_case({"cpu": "6"}), registry)
    assert None not in res.bindings.values()
