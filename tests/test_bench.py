"""`schedharness bench`: scheduler_perf's workload format, its ops and its figures, on tiny
workloads (the real ones are in bench/performance-config.yaml)."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from harness.bench.measure import percentile
from harness.bench.runner import WorkloadRun
from harness.case.controllers import claim_outcomes
from harness.bench.workloads import Template, load_workloads
from harness.cli import main
from harness.errors import UserError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NODE = """\
apiVersion: v1
kind: Node
metadata: {generateName: n-}
status: {capacity: {cpu: "4", memory: 32Gi, pods: "110"}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {generateName: p-, labels: {app: web}}
spec:
  containers:
  - {name: c, image: pause, resources: {requests: {cpu: {{.Cpu}}, memory: 100Mi}}}
"""
HUGE = """\
apiVersion: v1
kind: Pod
metadata: {generateName: huge-}
spec:
  priority: 10
  containers:
  - {name: c, image: pause, resources: {requests: {cpu: "9"}}}
"""
CLASS = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: pc-{{.Index}}}
value: {{MultiplyInt .Index 10}}
"""

ALL_OPS = """\
- name: Everything
  workloadTemplate:
  - opcode: createNodes
    countParam: $nodes
    nodeTemplatePath: node.yaml
    labelNodePrepareStrategy: {labelKey: zone, labelValues: [a, b]}
  - opcode: createNodes
    count: 1
    uniqueNodeLabelStrategy: {labelKey: unique}
  - opcode: createNamespaces
    prefix: sched
    count: 2
  - opcode: createAny
    templatePath: class.yaml
    count: 2
  - opcode: createPods
    countParam: $pods
    podTemplatePath: pod.yaml
    namespace: sched-0
    skipWaitToCompletion: true
    templateParams: {Cpu: $cpu}
  - opcode: barrier
  - opcode: sleep
    duration: 2s
  - opcode: churn
    mode: recreate
    number: 2
    templatePaths: [huge.yaml]
    intervalMilliseconds: 10
  - opcode: createPods
    countParam: $pods
    podTemplatePath: pod.yaml
    namespace: sched-1
    collectMetrics: true
    templateParams: {Cpu: 100m}
  - opcode: deletePods
    namespace: sched-0
  workloads:
  - name: tiny
    params: {nodes: 4, pods: 6, cpu: 200m}
"""


@pytest.fixture
def wfile(tmp_path):
    for name, text in (("node.yaml", NODE), ("pod.yaml", POD), ("huge.yaml", HUGE), ("class.yaml", CLASS)):
        (tmp_path / name).write_text(text)

    def write(text: str) -> str:
        p = tmp_path / "perf.yaml"
        p.write_text(textwrap.dedent(text))
        return str(p)
    return write


def test_shorthand_keeps_its_last_line(capsys):
    assert main(["bench", "--nodes", "5", "--init-pods", "3", "--pods", "10"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert "10/10 measured pods scheduled" in last and last.split(" pods/s")[0].split()[-1].replace(".", "").isdigit()


@pytest.mark.parametrize("args", [["--nodes", "0"], ["--nodes", "-5"], ["--pods", "0"], ["--init-pods", "-1"]])
def test_shorthand_rejects_bad_counts(args, capsys):
    try:
        rc = main(["bench", *args])
    except SystemExit as e:  # refused as the command line is read (harness/cli/options.py)
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and args[0] in err[0]


def test_every_supported_op_runs(wfile, capsys):
    path = wfile(ALL_OPS)
    assert main(["bench", path, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    wl = out["workloads"][0]
    assert wl["name"] == "Everything/tiny"
    assert wl["measuredPods"] == 6 and wl["scheduledPods"] == 6
    assert wl["attempts"] >= 6
    metrics = {i["labels"]["Metric"] for i in out["dataItems"]}
    assert {"SchedulingThroughput", "scheduler_scheduling_attempt_duration_seconds", "PeakRSS"} <= metrics


def test_param_override_and_selection(wfile, capsys):
    path = wfile(ALL_OPS)
    assert main(["bench", path, "--workload", "Everything/tiny", "--param", "pods=3"]) == 0
    assert "3/3 measured pods scheduled" in capsys.readouterr().out


@pytest.mark.parametrize("text,needle", [
    ("- name: X\n  workloadTemplate: [{opcode: startCollectingMetrics}]\n  workloads: [{name: w}]\n",
     'opcode "startCollectingMetrics" is not supported'),
    ("- name: X\n  workloadTemplate: [{opcode: createNodes, countParam: $n}]\n  workloads: [{name: w}]\n",
     'parameter "n" is not defined'),
    ("- name: X\n  workloadTemplate: [{opcode: createNodes, count: 1, typo: 1}]\n  workloads: [{name: w}]\n",
     'unknown field "typo"'),
    ("- name: X\n  workloadTemplate: [{opcode: createPods, count: 1, collectMetrics: true, skipWaitToCompletion: true}]\n"
     "  workloads: [{name: w}]\n", "cannot be true at the same time"),
    ("- name: X\n  featureGates: {SchedulerQueueingHints: false}\n  workloadTemplate: []\n  workloads: [{name: w}]\n",
     "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true"),
    ("- name: X\n  workloadTemplate: [{opcode: createPods, count: 1, podTemplatePath: nope.yaml}]\n"
     "  workloads: [{name: w}]\n", "cannot read"),
])
def test_bad_files_are_one_line_errors(wfile, capsys, text, needle):
    assert main(["bench", wfile(text)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_unknown_workload_names_the_choices(wfile):
    with pytest.raises(UserError, match="Everything/tiny"):
        load_workloads(wfile(ALL_OPS), "Nope")


def test_template_functions(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text("kind: X\na: {{AddInt .Index 2}}\nb: {{Mod .Index 3}}\nc: {{DivideInt 7 2}}\nd: '{{.Name}}'\n")
    assert Template(str(p)).render({"Index": 4, "Name": "n"}) == {"kind": "X", "a": 6, "b": 1, "c": 3, "d": "n"}


def test_percentile_is_scheduler_perfs():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 99) == 4.0
    assert percentile([], 50) == 0.0


def test_the_shipped_workload_file_is_valid():
    wls = load_workloads(os.path.join(ROOT, "bench", "performance-config.yaml"))
    names = {w.name for w in wls}
    assert "SchedulingWithResourceClaimTemplate/500Nodes_1000Pods" in names
    for case in ("SchedulingBasic", "SchedulingPodAntiAffinity", "SchedulingPodAffinity", "TopologySpreading",
                 "PreferredTopologySpreading", "PreemptionBasic", "Unschedulable", "SchedulingNodeAffinity"):
        assert any(n.startswith(case + "/500") for n in names), case
        assert any(n.startswith(case + "/5000") for n in names), case


def test_dra_workload_allocates_one_device_per_pod():
    """SchedulingWithResourceClaimTemplate at 2 nodes x 8 GPUs (one ResourceSlice per node from
    createAny's index) with 17 pods: the resourceclaim controller makes each pod's claim, 16 pods
    bind, each claim holds its own device on its pod's node, and the 17th pod finds no device."""
    path = os.path.join(ROOT, "bench", "performance-config.yaml")
    [wl] = load_workloads(path, "SchedulingWithResourceClaimTemplate/2Nodes_10Pods", {"measurePods": 17})
    run = WorkloadRun(wl, quiet=True)
    result = run.run()
    assert result["measuredPods"] == 17 and result["scheduledPods"] == 16
    slices = run.cluster.list("ResourceSlice")
    assert sorted(s.name for s in slices) == ["dra-node-0-gpus", "dra-node-1-gpus"]
    pods = {p.name: p.node_name for p in run.cluster.list("Pod", "test")}
    claims = claim_outcomes(run.cluster)
    allocated = [c for c in claims.values() if c["allocated"]]
    assert len(claims) == 17 and len(allocated) == 16
    devices = [d for c in allocated for d in c["devices"]["gpu"]]
    assert len(set(devices)) == 16
    for c in allocated:
        [ref] = c["reservedFor"]
        node = pods[ref.split("/")[1]]
        assert c["node"] == node and c["devices"]["gpu"][0].startswith(f"gpu.bench.example.com/{node}/gpu-")
    assert sorted(pods.values()).count("") == 1



STUCK = """\
- name: Stuck
  workloadTemplate:
  - opcode: createNodes
    count: 2
    nodeTemplatePath: node.yaml
  - opcode: churn
    mode: create
    templatePaths: [huge.yaml]
    intervalMilliseconds: 10
  - opcode: createPods
    count: 3
    podTemplatePath: %s
    collectMetrics: true
    templateParams: {Cpu: 100m}
  workloads:
  - name: tiny
"""


def test_unscheduled_measured_pods_warn_and_fail(wfile, capsys):
    """Measured pods that fit nowhere: a WARNING line and exit 1 (scheduler_perf waits for a
    collectMetrics op's pods to be scheduled and fails when they are not; such an op may not
    set skipWaitToCompletion)."""
    assert main(["bench", wfile(STUCK % "huge.yaml")]) == 1
    err = capsys.readouterr().err
    assert "WARNING: Stuck/tiny: 3 of 3 measured pods were not scheduled" in err


def test_unschedulable_churn_is_not_a_failure(wfile, capsys):
    """As in the Unschedulable workload: churned pods that fit nowhere are not measured pods;
    the measured ones are all scheduled (exit 0, no warning)."""
    assert main(["bench", wfile(STUCK % "pod.yaml")]) == 0
    assert "WARNING" not in capsys.readouterr().err
