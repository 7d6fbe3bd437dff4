"""The command line: exit codes and one clear message for errors a user can cause."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

GOOD_CASE = textwrap.dedent("""\
    apiVersion: schedharness/v1alpha1
    kind: Case
    metadata: {name: two-nodes}
    cluster:
      - {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}, status: {allocatable: {cpu: "2", memory: 4Gi}}}
      - {apiVersion: v1, kind: Node, metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}, status: {allocatable: {cpu: "4", memory: 8Gi}}}
    pods:
      - {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]}}
    expect:
      bindings: {web: node-b}
    """)


def run(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SCHEDHARNESS_KUBERNETES_VERSION", None)  # tox's k8s13x factors: the default is v1.36 here
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True,
                          text=True, cwd=cwd, env=env)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def assert_user_error(proc, *fragments):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


def _release() -> str:
    """The release a case naming no version runs on in the CLI subprocess (`run` drops the
    environment's version: the newest modelled)."""
    from harness.versions import NEWEST, parse_version
    return parse_version(NEWEST).release


def test_run_passing_case(tmp_path):
    p = write(tmp_path, "case.yaml", GOOD_CASE)
    proc = run("run", p)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == ["PASS two-nodes", f"1 passed, 0 failed (kube-scheduler {_release()})"]


def test_run_failing_case_exits_1(tmp_path):
    p = write(tmp_path, "case.yaml", GOOD_CASE.replace("{web: node-b}", "{web: node-a}"))
    proc = run("run", p)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0].startswith("FAIL two-nodes: default/web: expected node-a, got node-b")
    assert proc.stdout.splitlines()[-1] == f"0 passed, 1 failed (kube-scheduler {_release()})"


def test_run_json(tmp_path):
    p = write(tmp_path, "case.yaml", GOOD_CASE)
    proc = run("run", "--json", p)
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    assert out[0]["case"] == "two-nodes" and out[0]["passed"] is True
    assert out[0]["bindings"] == {"default/web": "node-b"}
    assert set(out[0]) >= {"case", "passed", "bindings", "preempted", "nominated", "messages"}


def test_invalid_yaml(tmp_path):
    p = write(tmp_path, "bad.yaml", "apiVersion: schedharness/v1alpha1\nkind: Case\npods: [\n")
    assert_user_error(run("run", p), "bad.yaml", "invalid YAML")


def test_malformed_case_names_file_and_key(tmp_path):
    p = write(tmp_path, "bad.yaml", GOOD_CASE.replace("bindings: {web: node-b}", "bindings: {web: 3}"))
    assert_user_error(run("run", p), "bad.yaml", "expect.bindings.web")


def test_unknown_case_key(tmp_path):
    p = write(tmp_path, "bad.yaml", GOOD_CASE + "surprise: 1\n")
    assert_user_error(run("run", p), "bad.yaml", 'unknown key "surprise"')


def test_unknown_plugin(tmp_path):
    cfg = write(tmp_path, "sched.yaml", textwrap.dedent("""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
          - schedulerName: default-scheduler
            plugins:
              filter:
                enabled: [{name: NoSuchPlugin}]
        """))
    proc = run("validate", cfg)
    assert_user_error(proc, "sched.yaml", "NoSuchPlugin")


def test_invalid_config(tmp_path):
    cfg = write(tmp_path, "sched.yaml", textwrap.dedent("""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        parallelism: 0
        """))
    assert_user_error(run("validate", cfg), "sched.yaml", "parallelism")


def test_invalid_plugin_args(tmp_path):
    cfg = write(tmp_path, "sched.yaml", textwrap.dedent("""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
          - schedulerName: default-scheduler
            pluginConfig:
              - name: InterPodAffinity
                args: {hardPodAffinityWeight: 101}
        """))
    assert_user_error(run("validate", cfg), "sched.yaml", "hardPodAffinityWeight")


def test_case_config_file_missing(tmp_path):
    p = write(tmp_path, "case.yaml", GOOD_CASE + "config: nowhere.yaml\n")
    assert_user_error(run("run", p), "case.yaml", "config")


def test_unknown_priority_class(tmp_path):
    p = write(tmp_path, "case.yaml", GOOD_CASE.replace("spec: {containers", "spec: {priorityClassName: gold, containers"))
    assert_user_error(run("run", p), "case.yaml", "pods[0].spec.priorityClassName")


def test_explain_shows_filters_scores_and_pick(tmp_path):
    p = write(tmp_path, "case.yaml", GOOD_CASE)
    proc = run("explain", p, "web")
    assert proc.returncode == 0, proc.stderr
    assert "filter NodeResourcesFit: Success" in proc.stdout
    assert "NodeResourcesFit" in proc.stdout and "total" in proc.stdout
    assert "picked: node-b" in proc.stdout


def test_validate_profiles():
    for name in ("default.yaml", "bin-packing.yaml", "two-profiles.yaml"):
        proc = run("validate", os.path.join(ROOT, "profiles", name))
        assert proc.returncode == 0, proc.stderr


def test_explain_names_the_batch_hint():
    """A pod placed on an OpportunisticBatching hint: explain says so, and why the other nodes
    were not evaluated."""
    proc = run("explain", os.path.join(ROOT, "cases", "versions", "framework", "batch-reuses-next-node-v135.yaml"),
               "web-2")
    assert proc.returncode == 0, proc.stderr
    assert "OpportunisticBatching hint: n2" in proc.stdout
    assert "node n3: not evaluated (the batch's hint passed the filters)" in proc.stdout
    assert "picked: n2" in proc.stdout


def test_a_reader_that_goes_away_stops_run_quietly(tmp_path):
    """`schedharness run cases/ | head -1`: exit as a command killed by SIGPIPE (141), and no
    "internal error" line. (600 PASS lines of 200 characters: more than a pipe holds, so the
    command writes after the reader has gone, however its output is buffered.)"""
    for i in range(600):
        name = f"c{i:03d}-" + "x" * 195
        (tmp_path / f"c{i:03d}.yaml").write_text(textwrap.dedent(f"""\
            apiVersion: schedharness/v1alpha1
            kind: Case
            metadata: {{name: {name}}}
            cluster:
            - {{apiVersion: v1, kind: Node, metadata: {{name: n1}}, status: {{allocatable: {{cpu: "1", pods: "10"}}}}}}
            pods:
            - {{apiVersion: v1, kind: Pod, metadata: {{name: p}}, spec: {{containers: [{{name: c, image: i}}]}}}}
            expect: {{bindings: {{p: n1}}}}
            """))
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", str(tmp_path)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader goes away after one line, as `head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert first.startswith(b"PASS ")
    assert "internal error" not in err and "Traceback" not in err
