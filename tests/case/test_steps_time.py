"""Virtual time through steps: the timers kube-scheduler runs, at the instants it runs them."""

from __future__ import annotations

import copy

import pytest

from harness.case.loader import case_from_data
from harness.case.runner import run_case


def node(name, cpu="4", **labels):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(name, cpu="1", **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9",
                                     "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}], **spec}}


def run(cluster, pods, steps, config=None):
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "cluster": cluster, "pods": pods,
            "steps": steps}
    if config is not None:
        data["config"] = config
    return run_case(case_from_data(copy.deepcopy(data), "inline.yaml"))


def test_parked_pod_moves_at_first_flush_tick_after_five_minutes():
    # parked at t=0; ticks every 30 s: the first tick T with T - 0 > 300 s is 330 s
    res = run([node("a", cpu="1")], [pod("p", cpu="2")],
              [{"advance": "5m29s"}, {"expect": {"attempts": {"p": 1}, "queue": {"p": "unschedulable"}}},
               {"advance": "1s"}, {"expect": {"attempts": {"p": 2}, "queue": {"p": "unschedulable"}}}])
    assert res.passed, res.failures
    assert [s.observation.time for s in res.steps] == [329.0, 329.0, 330.0, 330.0]


def test_second_flush_after_another_five_minutes():
    # attempt 2 at 330 s parks the pod again at 330 s: next move at the first tick > 630 s: 660 s
    res = run([node("a", cpu="1")], [pod("p", cpu="2")],
              [{"advance": "659s"}, {"expect": {"attempts": {"p": 2}}},
               {"advance": "1s"}, {"expect": {"attempts": {"p": 3}}}])
    assert res.passed, res.failures


def test_bind_failure_backoff_doubles():
    # each failed binding is an error: consecutive errors 1, 2 -> backoff 1 s, 2 s, aligned to the
    # 1 s window and released at the first flush after it: t=0 fail, t=2 fail, t=5 bound
    res = run([node("a")], [], [{"fail": {"bind": ["p", "p"]}}, {"create": [pod("p")]},
                                {"expect": {"attempts": {"p": 3}, "queue": {"p": "bound"}}}])
    assert res.passed, res.failures
    assert res.steps[1].observation.time == 5.0
    times = [r.time for r in res.scheduler.records["default/p"]]
    assert times == [0.0, 2.0, 5.0]


WFFC = [
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
     "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
    {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-a"},
     "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
              "local": {"path": "/mnt/a"},
              "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                  {"key": "kubernetes.io/hostname", "operator": "In", "values": ["a"]}]}]}}},
     "status": {"phase": "Available"}},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}},
              "storageClassName": "local"}, "status": {"phase": "Pending"}},
]


def test_volume_binding_prebind_polls_after_one_second():
    # BindPodVolumes: the PV controller binds at once, PollUntilContextTimeout (1 s, immediate
    # false) sees it at t=1; meanwhile the next pod's scheduling cycle runs with db assumed
    db = pod("db", cpu="3", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])
    res = run([node("a"), node("b"), *WFFC], [], [{"create": [db, pod("web", cpu="2")]},
                                                 {"expect": {"bindings": {"db": "a", "web": "b"}}}])
    assert res.passed, res.failures
    assert res.steps[0].observation.time == 1.0
    web = res.scheduler.records["default/web"][0]
    assert web.time == 0.0  # scheduled while db's binding cycle waited


def test_bind_timeout_zero_fails_volume_binding():
    # bindTimeoutSeconds is validated > 0 upstream; with 1 s the first check at 1 s still succeeds
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
               {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 1}}]}]}
    db = pod("db", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])
    res = run([node("a"), *WFFC], [], [{"create": [db]}, {"expect": {"bindings": {"db": "a"}}}], config=cfg)
    assert res.passed, res.failures


@pytest.mark.parametrize("steps", [
    [{"advance": "0s"}],
    [{"expect": {}}],
])
def test_empty_steps_keep_time(steps):
    res = run([node("a")], [pod("p")], steps)
    assert res.passed and res.steps[0].observation.time == 0.0
