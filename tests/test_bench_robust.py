"""Issue 15 for `schedharness bench`: wrong workload files are one error line (exit 2, no
traceback, no hang); churn runs on a clock that does not depend on the machine's speed; the
throughput samples are scheduler_perf's; `--list`; a workload's child process ends with bench."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import harness.bench.runner as bench
from harness.bench.measure import Progress, ThroughputSampler
from harness.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NODE = "apiVersion: v1\nkind: Node\nmetadata: {generateName: n-}\nstatus: {capacity: {cpu: \"4\", memory: 32Gi, pods: \"110\"}}\n"
POD = ("apiVersion: v1\nkind: Pod\nmetadata: {generateName: p-}\nspec:\n  containers:\n"
       "  - {name: c, image: pause, resources: {requests: {cpu: 100m}}}\n")
HUGE = ("apiVersion: v1\nkind: Pod\nmetadata: {generateName: huge-}\nspec:\n  priority: 10\n  containers:\n"
        "  - {name: c, image: pause, resources: {requests: {cpu: \"9\"}}}\n")

GOOD = """\
- name: Basic
  workloadTemplate:
  - {opcode: createNodes, countParam: $nodes, nodeTemplatePath: node.yaml}
  - {opcode: createPods, countParam: $pods, podTemplatePath: pod.yaml, collectMetrics: true}
  workloads:
  - {name: small, params: {nodes: 2, pods: 3}}
  - {name: other, params: {nodes: 3, pods: 4}}
"""


@pytest.fixture
def folder(tmp_path):
    for name, text in (("node.yaml", NODE), ("pod.yaml", POD), ("huge.yaml", HUGE)):
        (tmp_path / name).write_text(text)
    return tmp_path


def write(folder, text, name="perf.yaml") -> str:
    p = folder / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(textwrap.dedent(text))
    return str(p)


LAUGHS = "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\na: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [" + ", ".join([f"*{p}"] * 10) + "]\n" for p, n in zip("abcdefgh", "bcdefghi"))

BAD_FILES = {
    "workloads-int": ("- {name: B, workloadTemplate: [], workloads: 5}\n", "B.workloads"),
    "template-int": ("- {name: B, workloadTemplate: 7, workloads: [{name: w}]}\n", "B.workloadTemplate"),
    "name-list": ("- {name: [B], workloadTemplate: [], workloads: []}\n", "[0].name"),
    "params-list": ("- {name: B, workloadTemplate: [], workloads: [{name: w, params: [1]}]}\n", "params"),
    "count-huge": ("- {name: B, workloadTemplate: [{opcode: createNodes, count: 10000000000000}], workloads: [{name: w}]}\n",
                   "workloadTemplate[0]"),
    "count-inf": ("- {name: B, workloadTemplate: [{opcode: createNodes, count: .inf}], workloads: [{name: w}]}\n",
                  "count"),
    "count-param-huge": ("- {name: B, workloadTemplate: [{opcode: createNodes, countParam: $n}], workloads: [{name: w, params: {n: 99999999999999}}]}\n",
                         "workloadTemplate[0]"),
    "path-int": ("- {name: B, workloadTemplate: [{opcode: createNodes, count: 1, nodeTemplatePath: 5}], workloads: [{name: w}]}\n",
                 "nodeTemplatePath"),
    "selector-list": ("- {name: B, workloadTemplate: [{opcode: deletePods, namespace: a, labelSelector: [a]}], workloads: [{name: w}]}\n",
                      "labelSelector"),
    "label-key-list": ("- {name: B, workloadTemplate: [{opcode: createNodes, count: 1, labelNodePrepareStrategy: {labelKey: [a], labelValues: [b]}}], workloads: [{name: w}]}\n",
                       "labelKey"),
    "churn-interval-negative": ("- {name: B, workloadTemplate: [{opcode: churn, mode: create, templatePaths: [pod.yaml], intervalMilliseconds: -1}], workloads: [{name: w}]}\n",
                                "intervalMilliseconds"),
    "churn-mode-list": ("- {name: B, workloadTemplate: [{opcode: churn, mode: [create], templatePaths: [pod.yaml]}], workloads: [{name: w}]}\n",
                        "mode"),
    "batch-string": ("- {name: B, workloadTemplate: [{opcode: createPods, count: 1, signatureBatchSize: many}], workloads: [{name: w}]}\n",
                     "signatureBatchSize"),
    "recursive-alias": ("- &tc {name: B, workloadTemplate: [{opcode: createPodSets, count: 1, namespacePrefix: a, createPodsOp: *tc}], workloads: [{name: w}]}\n",
                        "alias"),
    "latin1": ("- {name: caf\u00e9, workloadTemplate: [], workloads: []}\n".encode("latin-1"), "not a text file"),
    "template-alias-bomb": ("- {name: B, workloadTemplate: [{opcode: createNodes, count: 1, nodeTemplatePath: bomb.yaml}], workloads: [{name: w}]}\n",
                            "bomb.yaml"),
    "template-latin1": ("- {name: B, workloadTemplate: [{opcode: createNodes, count: 1, nodeTemplatePath: latin.yaml}], workloads: [{name: w}]}\n",
                        "latin.yaml"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_workload_file_is_one_line(folder, capsys, name):
    (folder / "bomb.yaml").write_text(LAUGHS)
    (folder / "latin.yaml").write_bytes(NODE.replace("n-", "n\u00e9-").encode("latin-1"))
    text, fragment = BAD_FILES[name]
    path = write(folder, text)
    t0 = time.process_time()  # CPU time: other work on the machine does not count
    assert main(["bench", path]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert fragment in lines[0], lines[0]
    assert time.process_time() - t0 < 30


def test_list_prints_the_workloads(folder, capsys):
    assert main(["bench", write(folder, GOOD), "--list"]) == 0
    assert capsys.readouterr().out.splitlines() == ["Basic/small  nodes=2 pods=3", "Basic/other  nodes=3 pods=4"]


CHURN = """\
- name: Churn
  workloadTemplate:
  - {opcode: createNodes, count: 2, nodeTemplatePath: node.yaml}
  - {opcode: churn, mode: create, templatePaths: [huge.yaml], intervalMilliseconds: 10}
  - {opcode: createPods, count: 20, podTemplatePath: pod.yaml, collectMetrics: true}
  workloads:
  - {name: w}
"""


def test_churn_does_not_depend_on_the_machines_speed(folder, monkeypatch, capsys):
    """The same workload on a fast and on a slow machine (every clock read 50 ms later than the
    one before): the measured pods are all scheduled and churn interleaves alike."""
    path = write(folder, CHURN)

    def churned() -> int:
        from harness.bench.workloads import load_workloads

        run = bench.WorkloadRun(load_workloads(path)[0], quiet=True)
        res = run.run()
        assert res["scheduledPods"] == 20 and res["unscheduledPods"] == 0
        return sum(1 for p in run.cluster.list("Pod") if p.name.startswith("huge-"))

    fast = churned()
    clock = [0.0]

    def slow_clock() -> float:
        clock[0] += 0.05
        return clock[0]

    monkeypatch.setattr(bench.time, "perf_counter", slow_clock)
    assert churned() == fast > 0


def test_churn_faster_than_the_scheduler_ends_in_an_error_not_a_hang(folder, capsys):
    path = write(folder, CHURN.replace("intervalMilliseconds: 10", "intervalMilliseconds: 1"))
    assert main(["bench", path]) == 2
    err = capsys.readouterr().err
    assert "Churn/w" in err and "background" in err and "Traceback" not in err


def test_throughput_samples_skip_empty_intervals_as_scheduler_perf_does():
    """throughputCollector.run: no sample before a first pod is scheduled, the first interval
    skipped, an interval without a scheduled pod counted at the next one's rate (never 0)."""
    s = ThroughputSampler(0.0, 0, Progress("x", quiet=True), 100)
    for t, bound in ((1.0, 0), (2.0, 10), (3.0, 30), (4.0, 30), (5.0, 30), (6.0, 60), (6.5, 70)):
        s.tick(t, bound)
    assert s.finish(6.5, 70) == [20.0, 10.0, 10.0, 10.0]
    short = ThroughputSampler(0.0, 0, Progress("x", quiet=True), 5)
    short.tick(0.4, 5)
    assert short.finish(0.5, 5) == [10.0]


def _children(pid: int):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.append(int(entry))
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_bench_children_end_with_their_parent(folder, sig):
    text = GOOD.replace("{nodes: 2, pods: 3}", "{nodes: 500, pods: 100000}").replace("{nodes: 3, pods: 4}", "{nodes: 500, pods: 100000}")
    path = write(folder, text)
    env = dict(os.environ, PYTHONPATH=ROOT)
    # as from a terminal: a shell's background job (a CI step) would start it with SIGINT ignored
    proc = subprocess.Popen([sys.executable, "-m", "harness", "bench", path], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 60
        kids = []
        while time.time() < deadline and not kids:
            time.sleep(0.2)
            kids = _children(proc.pid)
        assert kids, "bench forked no workload process"
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        deadline = time.time() + 30
        while time.time() < deadline and any(os.path.exists(f"/proc/{k}") and _alive(k) for k in kids):
            time.sleep(0.2)
        assert not any(_alive(k) for k in kids)
        assert proc.returncode != 0
    finally:
        if proc.poll() is None:
            proc.kill()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_long_sleep_with_churn_is_an_error_not_a_hang(folder, capsys):
    path = write(folder, """\
        - name: Sleepy
          workloadTemplate:
          - {opcode: createNodes, count: 1, nodeTemplatePath: node.yaml}
          - {opcode: churn, mode: recreate, number: 2, templatePaths: [pod.yaml]}
          - {opcode: sleep, duration: 2000000h}
          workloads:
          - {name: w}
        """)
    t0 = time.process_time()  # CPU time: other work on the machine does not count
    assert main(["bench", path]) == 2
    err = capsys.readouterr().err
    assert "Sleepy/w: workloadTemplate[2]" in err and "Traceback" not in err
    assert time.process_time() - t0 < 30
