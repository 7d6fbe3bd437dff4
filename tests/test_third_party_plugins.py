"""Out-of-tree plugins on the same hooks as the in-tree ones: ordering, weights, errors, Permit
waits in virtual time, Reserve failures and Bind Skip."""

from __future__ import annotations

import os
import sys

import pytest

from harness.case.loader import case_from_data
from harness.case.runner import run_case
from harness.errors import ConfigError, UserError

SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)

import schedharness_sample_plugins as sample  # noqa: E402


def node(name, cpu="4", **labels):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi"}}}


def pod(name, cpu="1", **labels):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}}


def config(**points):
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "plugins": points}]}


def run(cluster, pods, cfg, expect, version=None):
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "config": cfg,
            "plugins": ["schedharness_sample_plugins"], "cluster": cluster, "pods": pods,
            "expect": expect}
    if version is not None:
        data["kubernetesVersion"] = version
    return run_case(case_from_data(data, os.path.join(SAMPLE, "inline.yaml")))  # its module in its tree


@pytest.mark.parametrize("version", ["v1.34", "v1.35", "v1.36"])
def test_a_plugin_written_for_v134_runs_unchanged_on_every_version(version):
    """The sample plugins implement v1.34's hooks only (no sign_pod, no pre_bind_pre_flight):
    on v1.35/v1.36 their profile schedules without OpportunisticBatching (a Filter/Score plugin
    that cannot sign turns signatures off, as upstream) and a PreBind-less profile patches no
    nomination; the outcomes are v1.34's. Except Waiter's on v1.36: a pod that waits at Permit
    gets a nomination from its binding cycle (NominatedNodeNameForExpectation), and v1.36's
    failure handler clears it after each timeout (FailurePatchJudgedOnInformerPod), a pod
    update that requeues a pod whose rejector registers no events: retried forever."""
    cfg = config(multiPoint={"enabled": [{"name": "GpuFirst", "weight": 5}]})
    res = run([node("cpu-only"), node("t4", gpu="t4"), node("a100", cpu="2", gpu="a100")],
              [pod("train"), pod("train-2"), pod("train-3", cpu="3")], cfg,
              {"bindings": {"train": "a100", "train-2": "a100", "train-3": "t4"}}, version)
    assert res.passed, res.failures
    cfg = config(permit={"enabled": [{"name": "Gang"}]})
    res = run([node("n1")], [pod("a", gang="g"), pod("b", gang="g")], cfg,
              {"bindings": {"a": "n1", "b": "n1"}}, version)
    assert res.passed, res.failures
    cfg = config(permit={"enabled": [{"name": "Waiter"}]})
    if version == "v1.36":
        with pytest.raises(UserError, match="did not become quiet"):
            run([node("n1")], [pod("p")], cfg, {"bindings": {"p": None}}, version)
        return
    res = run([node("n1")], [pod("p")], cfg, {"bindings": {"p": None}}, version)
    assert res.passed, res.failures
    assert res.messages["default/p"] == ("0/1 nodes are available: 1 rejected due to timeout "
                                         "after waiting 5s at plugin Waiter.")


def test_filter_and_weighted_score_of_an_out_of_tree_plugin():
    cfg = config(multiPoint={"enabled": [{"name": "GpuFirst", "weight": 5}]})
    res = run([node("cpu-only"), node("t4", gpu="t4"), node("a100", cpu="2", gpu="a100")],
              [pod("train")], cfg, {"bindings": {"train": "a100"}})
    # a100 is the smaller node (LeastAllocated favours t4 by 12 + balanced), but GpuFirst's
    # 100 x 5 outweighs it; cpu-only is filtered out.
    assert res.passed, res.failures


def test_plugin_that_raises_is_an_error_status_naming_it():
    cfg = config(filter={"enabled": [{"name": "Raiser"}]})
    res = run([node("n1")], [pod("p")], cfg, {"bindings": {"p": None}})
    assert res.passed, res.failures
    assert res.messages["default/p"] == 'running "Raiser" filter plugin: RuntimeError: boom'


def test_permit_wait_times_out_in_virtual_time():
    # v1.35: on v1.36 the pod is retried forever (see the test above)
    cfg = config(permit={"enabled": [{"name": "Waiter"}]})
    res = run([node("n1")], [pod("p")], cfg, {"bindings": {"p": None}}, "v1.35")
    assert res.passed, res.failures
    assert res.messages["default/p"] == ("0/1 nodes are available: 1 rejected due to timeout "
                                         "after waiting 5s at plugin Waiter.")


def test_permit_waiting_pods_allowed_by_a_later_pod():
    cfg = config(permit={"enabled": [{"name": "Gang"}]})
    res = run([node("n1")], [pod("a", gang="g"), pod("b", gang="g")], cfg,
              {"bindings": {"a": "n1", "b": "n1"}})
    assert res.passed, res.failures


def test_reserve_rejection_unreserves_and_reports_the_node():
    sample.NoReserve.unreserved.clear()
    cfg = config(reserve={"enabled": [{"name": "NoReserve"}]})
    res = run([node("n1")], [pod("p")], cfg, {"bindings": {"p": None}})
    assert res.passed, res.failures
    assert res.messages["default/p"] == "0/1 nodes are available: 1 reserve says no."
    assert ("p", "n1") in sample.NoReserve.unreserved


def test_bind_skip_hands_over_to_the_next_binder():
    sample.SkipBinder.seen.clear()
    cfg = config(bind={"enabled": [{"name": "SkipBinder"}, {"name": "DefaultBinder"}],
                       "disabled": [{"name": "*"}]})
    res = run([node("n1")], [pod("p")], cfg, {"bindings": {"p": "n1"}})
    assert res.passed, res.failures
    assert sample.SkipBinder.seen == ["p"]


def test_plugin_not_extending_the_configured_point():
    cfg = config(score={"enabled": [{"name": "Waiter"}]})
    with pytest.raises(ConfigError, match='Waiter'):
        run([node("n1")], [pod("p")], cfg, {})
