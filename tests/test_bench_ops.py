"""Issue 18: the scheduler_perf ops the churn, gated, deleted-pods, DaemonSet and DRA
steady-state workloads need (delete semantics, rate-limited deletes, churn modes, barrier stages,
steady state, createResourceDriver, allocResourceClaims), each on a tiny workload, asserting
what exists and what is bound afterwards; and the shipped file's new workloads at small sizes."""

from __future__ import annotations

import os
import textwrap

import pytest

from harness.bench.runner import ATTEMPT_COST, WorkloadRun, _glob_match
from harness.bench.workloads import load_workloads
from harness.errors import UserError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = os.path.join(ROOT, "bench", "performance-config.yaml")

TEMPLATES = {
    "node.yaml": "apiVersion: v1\nkind: Node\nmetadata: {generateName: n-}\n"
                 "status: {capacity: {cpu: \"4\", memory: 32Gi, pods: \"110\"}}\n",
    "dranode.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-node-{{.Index}}}\n"
                    "status: {capacity: {cpu: \"4\", memory: 32Gi, pods: \"110\"}}\n",
    "pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {generateName: p-}\nspec:\n  containers:\n"
                "  - {name: c, image: pause, resources: {requests: {cpu: 100m}}}\n",
    "quick.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {generateName: q-}\nspec:\n"
                  "  terminationGracePeriodSeconds: 0\n  containers:\n  - {name: c, image: pause}\n",
    "final.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {generateName: f-, finalizers: [x.io/keep]}\n"
                  "spec:\n  containers:\n  - {name: c, image: pause}\n",
    "gated.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {generateName: g-}\nspec:\n"
                  "  schedulingGates: [{name: x.io/hold}]\n  containers:\n  - {name: c, image: pause}\n",
    "huge.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {generateName: huge-}\nspec:\n  priority: 10\n"
                 "  containers:\n  - {name: c, image: pause, resources: {requests: {cpu: \"9\"}}}\n",
    "svc.yaml": "apiVersion: v1\nkind: Service\nmetadata: {generateName: svc-}\n"
                "spec: {selector: {app: a}, ports: [{port: 80}]}\n",
    "class.yaml": "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                  "spec: {selectors: [{cel: {expression: 'device.driver == \"d.example.com\"'}}]}\n",
    "claim.yaml": "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c-{{.Index}}}\n"
                  "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n",
    "rct.yaml": "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one}\n"
                "spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}}\n",
    "drapod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {generateName: d-}\nspec:\n"
                   "  containers:\n  - {name: c, image: pause, resources: {claims: [{name: g}]}}\n"
                   "  resourceClaims: [{name: g, resourceClaimTemplateName: one}]\n",
}


@pytest.fixture
def workload(tmp_path):
    for name, text in TEMPLATES.items():
        (tmp_path / name).write_text(text)

    def make(ops: str, params: str = "{}"):
        text = f"- name: T\n  workloadTemplate:\n{textwrap.indent(textwrap.dedent(ops), '  ')}" \
               f"  workloads:\n  - {{name: w, params: {params}}}\n"
        path = tmp_path / "perf.yaml"
        path.write_text(text)
        [wl] = load_workloads(str(path))
        return wl
    return make


def run_ops(wl, upto=None):
    """A WorkloadRun and its ops run one by one (the first `upto` of them)."""
    run = WorkloadRun(wl, quiet=True)
    for op in wl.ops[:upto]:
        getattr(run, "op_" + op.opcode)(op)
    return run


def advance_background(run, seconds):
    """Let `seconds` of the background clock pass with no scheduling attempt in between."""
    run.attempts += round(seconds / ATTEMPT_COST)
    run._tick_background()


def names(run, ns=None, kind="Pod"):
    return sorted(o.name for o in run.cluster.list(kind, ns))


# delete_pod: the API server's DELETE -------------------------------------------------------------
def test_delete_follows_the_grace_period_and_finalizers(workload):
    """Unscheduled: gone at once; scheduled with the default 30 s grace period: stays with a
    deletionTimestamp (no kubelet finishes it); scheduled with grace period 0, or a request of
    0: gone; a finalizer keeps even an unscheduled pod, marked."""
    wl = workload("""\
        - {opcode: createNodes, count: 1, nodeTemplatePath: node.yaml}
        - {opcode: createPods, count: 2, podTemplatePath: pod.yaml, namespace: a}
        - {opcode: createPods, count: 1, podTemplatePath: quick.yaml, namespace: a}
        - {opcode: createPods, count: 1, podTemplatePath: final.yaml, namespace: b, skipWaitToCompletion: true}
        - {opcode: createPods, count: 1, podTemplatePath: huge.yaml, namespace: c}
        """)
    run = run_ops(wl)
    p0, p1, q0 = run.cluster.list("Pod", "a")
    assert p0.node_name and q0.node_name
    run.delete_pod(p0)
    run.delete_pod(p1, grace=0)
    run.delete_pod(q0)
    [kept] = run.cluster.list("Pod", "a")
    assert kept.name == p0.name and kept.deletion_timestamp
    assert kept.raw["metadata"]["deletionGracePeriodSeconds"] == 30
    [f] = run.cluster.list("Pod", "b")
    assert not f.node_name
    run.delete_pod(f)
    [f2] = run.cluster.list("Pod", "b")
    assert f2.deletion_timestamp and f2.raw["metadata"]["deletionGracePeriodSeconds"] == 0
    [h] = run.cluster.list("Pod", "c")
    run.delete_pod(h)
    assert run.cluster.list("Pod", "c") == []


def test_a_deleted_pending_pod_with_a_finalizer_is_never_scheduled(workload):
    """SchedulingDeletedPodsWithFinalizers' point: the pod stays, marked, and the scheduler
    skips it (skipPodSchedule); the measured pods are all scheduled."""
    wl = workload("""\
        - {opcode: createNodes, count: 2, nodeTemplatePath: node.yaml}
        - {opcode: createPods, count: 3, podTemplatePath: final.yaml, skipWaitToCompletion: true}
        - {opcode: deletePods, namespace: namespace-1, skipWaitToCompletion: true}
        - {opcode: createPods, count: 4, podTemplatePath: quick.yaml, collectMetrics: true}
        """)
    run = WorkloadRun(wl, quiet=True)
    result = run.run()
    left = run.cluster.list("Pod", "namespace-1")
    assert len(left) == 3 and all(p.deletion_timestamp and not p.node_name for p in left)
    assert result["scheduledPods"] == 4


def test_rate_limited_deletes_run_on_the_background_clock(workload):
    """deletePodsPerSecond 10 with skipWaitToCompletion: one DELETE per 100 ms of the
    background clock, from the op on; pods of grace period 0 go at once."""
    wl = workload("""\
        - {opcode: createNodes, count: 1, nodeTemplatePath: node.yaml}
        - {opcode: createPods, count: 5, podTemplatePath: quick.yaml}
        - {opcode: deletePods, namespace: namespace-1, deletePodsPerSecond: 10, skipWaitToCompletion: true}
        """)
    run = run_ops(wl)
    assert len(run.cluster.list("Pod", "namespace-1")) == 5
    advance_background(run, 0.25)
    assert len(run.cluster.list("Pod", "namespace-1")) == 3
    advance_background(run, 1.0)
    assert run.cluster.list("Pod", "namespace-1") == [] and run.background == []


def test_delete_pods_with_a_label_selector(workload):
    wl = workload("""\
        - {opcode: createNodes, count: 1, nodeTemplatePath: node.yaml}
        - {opcode: createPods, count: 2, podTemplatePath: quick.yaml, namespace: a}
        - {opcode: deletePods, namespace: a, labelSelector: {app: none}}
        """)
    run = run_ops(wl)
    assert len(run.cluster.list("Pod", "a")) == 2


# churn ----------------------------------------------------------------------------------------
def test_churn_recreate_alternates_create_and_delete(workload):
    """recreate, number 1: each tick creates each template's object, the next deletes it
    (namespaced kinds in the op's namespace, nodes cluster-wide)."""
    wl = workload("""\
        - {opcode: createNodes, count: 1, nodeTemplatePath: node.yaml}
        - {opcode: churn, mode: recreate, number: 1, templatePaths: [node.yaml, huge.yaml, svc.yaml],
           intervalMilliseconds: 1000}
        """)
    run = run_ops(wl)
    for tick in range(1, 5):
        advance_background(run, 1.0)
        exists = tick % 2 == 1
        assert len(run.cluster.list("Node")) == 1 + exists
        assert len(run.cluster.list("Pod", "namespace-1")) == exists
        assert len(run.cluster.list("Service", "namespace-1")) == exists


def test_churn_recreate_keeps_number_objects_per_template(workload):
    """recreate, number 2: slots 0, 1 filled by the first two ticks, emptied by the next two."""
    wl = workload("""\
        - {opcode: churn, mode: recreate, number: 2, templatePaths: [huge.yaml], intervalMilliseconds: 100}
        """)
    run = run_ops(wl)
    counts = []
    for _ in range(5):
        advance_background(run, 0.1)
        counts.append(len(run.cluster.list("Pod", "namespace-0")))
    assert counts == [1, 2, 1, 0, 1]


def test_churn_create_stops_after_number(workload):
    wl = workload("""\
        - {opcode: churn, mode: create, number: 3, templatePaths: [huge.yaml], intervalMilliseconds: 200}
        """)
    run = run_ops(wl)
    advance_background(run, 0.5)
    assert len(run.cluster.list("Pod", "namespace-0")) == 2
    advance_background(run, 10.0)
    assert len(run.cluster.list("Pod", "namespace-0")) == 3 and run.background == []


# barrier ----------------------------------------------------------------------------------------
def test_barrier_attempted_counts_gated_pods_and_scheduled_does_not(workload):
    """Pods created without waiting: a barrier for Attempted passes once each is bound,
    unschedulable or gated; a barrier for Scheduled over gated pods cannot pass (scheduler_perf
    times out): an error naming the namespace and how many pods are missing."""
    wl = workload("""\
        - {opcode: createNodes, count: 1, nodeTemplatePath: node.yaml}
        - {opcode: createPods, count: 3, podTemplatePath: gated.yaml, skipWaitToCompletion: true}
        - {opcode: createPods, count: 2, podTemplatePath: pod.yaml, skipWaitToCompletion: true}
        - {opcode: barrier, stageRequirement: Attempted}
        - {opcode: barrier, namespaces: [namespace-2]}
        - {opcode: barrier}
        """)
    run = run_ops(wl, 4)
    assert [run.sched.queue_state(p) for p in run.cluster.list("Pod", "namespace-1")] == ["gated"] * 3
    assert all(p.node_name for p in run.cluster.list("Pod", "namespace-2"))
    assert run.pending_namespaces == {"namespace-1": 3, "namespace-2": 2}
    run.op_barrier(wl.ops[4])  # Scheduled, namespace-2 only: met, and forgotten
    assert run.pending_namespaces == {"namespace-1": 3}
    with pytest.raises(UserError, match=r"not scheduled .*'namespace-1': 3"):
        run.op_barrier(wl.ops[5])


def test_barrier_waits_for_pods_created_without_waiting(workload):
    """The scheduler runs until the barrier's pods are bound (nothing ran before it)."""
    wl = workload("""\
        - {opcode: createNodes, count: 2, nodeTemplatePath: node.yaml}
        - {opcode: createPods, count: 7, podTemplatePath: pod.yaml, skipWaitToCompletion: true}
        - {opcode: barrier, labelSelector: {}}
        """)
    run = run_ops(wl, 2)
    assert not any(p.node_name for p in run.cluster.list("Pod"))
    run.op_barrier(wl.ops[2])
    assert all(p.node_name for p in run.cluster.list("Pod")) and run.pending_namespaces == {}


def test_barrier_on_an_unknown_namespace_is_an_error(workload):
    wl = workload("- {opcode: barrier, namespaces: [nope]}\n")
    with pytest.raises(UserError, match="unknown namespace nope"):
        WorkloadRun(wl, quiet=True).run()


# steady state -----------------------------------------------------------------------------------
STEADY = """\
    - {opcode: createNodes, count: 2, nodeTemplatePath: dranode.yaml}
    - {opcode: createResourceDriver, driverName: d.example.com, nodes: gpu-node-*, maxClaimsPerNodeParam: $perNode}
    - {opcode: createAny, templatePath: class.yaml}
    - {opcode: createAny, templatePath: claim.yaml, countParam: $initClaims, namespace: init}
    - {opcode: allocResourceClaims, namespace: init}
    - {opcode: createAny, templatePath: rct.yaml, namespace: test}
    - {opcode: createPods, namespace: test, count: 4, steadyState: true, durationParam: $duration,
       podTemplatePath: drapod.yaml, collectMetrics: true}
    """


def test_steady_state_rounds_until_the_duration_is_over(workload):
    """2 nodes x 3 devices, 2 claimed without pods: 4 free, rounds of 4 pods each taking the
    4 devices, deleted with their claims when all 4 are scheduled. 40 ms of background clock at
    1 ms per attempt: 10 rounds of 4 attempts, 40 pods scheduled; the last round's 4 pods and
    claims remain."""
    wl = workload(STEADY, "{perNode: 3, initClaims: 2, duration: 40ms}")
    run = WorkloadRun(wl, quiet=True)
    result = run.run()
    assert result["measuredPods"] == 40 and result["scheduledPods"] == 40 and result["unscheduledPods"] == 0
    pods = run.cluster.list("Pod", "test")
    assert len(pods) == 4 and all(p.node_name for p in pods)
    assert len(run.cluster.list("ResourceClaim", "test")) == 4


def test_steady_state_round_that_cannot_finish_waits_for_the_duration(workload):
    """Only 3 free devices for rounds of 4 pods: 3 are scheduled, the 4th never; no second
    round (upstream waits for it until the duration is over)."""
    wl = workload(STEADY, "{perNode: 3, initClaims: 3, duration: 1s}")
    run = WorkloadRun(wl, quiet=True)
    result = run.run()
    assert result["scheduledPods"] == 3
    assert sum(1 for p in run.cluster.list("Pod", "test") if p.node_name) == 3


def test_steady_state_with_nothing_scheduled_fails(workload):
    wl = workload(STEADY, "{perNode: 1, initClaims: 2, duration: 1s}")
    with pytest.raises(UserError, match="no pod at all got scheduled"):
        WorkloadRun(wl, quiet=True).run()


# DRA ops ---------------------------------------------------------------------------------------
def test_create_resource_driver_makes_one_slice_per_matching_node(workload):
    """dra.go's resourceSlice: named after the node, its own pool, maxClaimsPerNode devices
    instance-0.. with the driver's attributes and 1Gi of memory each."""
    wl = workload("""\
        - {opcode: createNodes, count: 3, nodeTemplatePath: dranode.yaml}
        - {opcode: createNodes, count: 2, nodeTemplatePath: node.yaml}
        - {opcode: createResourceDriver, driverName: d.example.com, nodes: "gpu-node-[02]", maxClaimsPerNode: 2}
        """)
    run = run_ops(wl)
    slices = run.cluster.list("ResourceSlice")
    assert [s.name for s in slices] == ["gpu-node-0", "gpu-node-2"]
    spec = slices[1].spec
    assert spec["nodeName"] == "gpu-node-2" and spec["pool"]["name"] == "gpu-node-2"
    assert spec["driver"] == "d.example.com" and spec["pool"]["resourceSliceCount"] == 1
    assert [d["name"] for d in spec["devices"]] == ["instance-0", "instance-1"]
    assert spec["devices"][1]["attributes"]["dra.example.com/numa"] == {"int": 1}


@pytest.mark.parametrize("pattern,name,match", [
    ("scheduler-perf-dra-*", "scheduler-perf-dra-abc", True),
    ("scheduler-perf-dra-*", "scheduler-perf-abc", False),
    ("n-?", "n-1", True), ("n-?", "n-12", False),
    ("n-[^0-4]", "n-7", True), ("n-[^0-4]", "n-3", False),
    ("a.b", "axb", False), ("*", "", True),
])
def test_node_glob_is_filepath_match(pattern, name, match):
    assert _glob_match(pattern, name) is match


def test_alloc_resource_claims_allocates_each_claim_once(workload):
    """Every claim of the namespace gets its own device on some node, the allocation only (no
    reservedFor); the same nodes on every run (a seeded shuffle); a claim no device is left
    for is an error."""
    ops = """\
        - {opcode: createNodes, count: 3, nodeTemplatePath: dranode.yaml}
        - {opcode: createResourceDriver, driverName: d.example.com, nodes: "gpu-node-*", maxClaimsPerNode: 2}
        - {opcode: createAny, templatePath: class.yaml}
        - {opcode: createAny, templatePath: claim.yaml, countParam: $claims, namespace: init}
        - {opcode: allocResourceClaims, namespace: init}
        """
    outcomes = []
    for _ in range(2):
        run = run_ops(workload(ops, "{claims: 5}"))
        claims = run.cluster.list("ResourceClaim", "init")
        results = [c.status["allocation"]["devices"]["results"] for c in claims]
        assert all(len(r) == 1 for r in results) and not any("reservedFor" in c.status for c in claims)
        devices = [(r[0]["pool"], r[0]["device"]) for r in results]
        assert len(set(devices)) == 5
        outcomes.append(devices)
    assert outcomes[0] == outcomes[1]
    with pytest.raises(UserError, match="Could not allocate claim 6 out of 7"):
        run_ops(workload(ops, "{claims: 7}"))


# the file's checks -------------------------------------------------------------------------------
@pytest.mark.parametrize("op,needle", [
    ("{opcode: createPods, count: 1, steadyState: true, skipWaitToCompletion: true, duration: 1s}",
     "skipWaitToCompletion and steadyState cannot be true at the same time"),
    ("{opcode: createPods, count: 1, steadyState: true}", "the test duration must be > 0"),
    ("{opcode: createPods, count: 1, steadyState: true, durationParam: $d}", 'parameter "d" must be a duration'),
    ("{opcode: createPods, count: 1, steadyStateParam: $d, duration: 1s}", 'parameter "d" must be true or false'),
    ("{opcode: createResourceDriver, driverName: d, nodes: '*', maxClaimsPerNode: 0}", "invalid MaxClaimsPerNode=0"),
    ("{opcode: createResourceDriver, driverName: d, nodes: '*', maxClaimsPerNode: 129}", "invalid MaxClaimsPerNode=129"),
    ("{opcode: createResourceDriver, nodes: '*', maxClaimsPerNode: 1}", '"driverName" is required'),
    ("{opcode: barrier, namespaces: [1]}", "must be a list of namespace names"),
])
def test_bad_ops_are_user_errors(workload, op, needle):
    with pytest.raises(UserError, match=needle):
        workload(f"- {op}\n", "{d: 5}")


# the shipped workloads --------------------------------------------------------------------------
UPSTREAM_SIZES = {
    "PreemptionAsync/5000Nodes": {"initNodes": 5000, "initPods": 20000, "measurePods": 5000},
    "PreemptionAsync/5000Nodes_AsyncPreemptionEnabled": {"initNodes": 5000, "initPods": 20000, "measurePods": 5000},
    "SchedulingWithMixedChurn/5000Nodes_10000Pods": {"initNodes": 5000, "measurePods": 10000},
    "SchedulingWhileGated/1Node_10000GatedPods": {"gatedPods": 10000, "deletingPods": 20000, "measurePods": 20000},
    "SchedulingDaemonset/15000Nodes": {"initNodes": 15000, "measurePods": 30000},
    "Unschedulable/5000Nodes_20000Init": {"initNodes": 5000, "initPods": 20000, "measurePods": 10000},
    "SchedulingDeletedPodsWithFinalizers/5000Node_5000DeletingPods":
        {"initNodes": 5000, "deletingPods": 5000, "measurePods": 5000},
    "SteadyStateClusterResourceClaimTemplate/full_500nodes":
        {"nodesWithDRA": 500, "nodesWithoutDRA": 0, "initClaims": 4990, "maxClaimsPerNode": 10, "duration": "10s"},
}


def test_the_new_workloads_are_at_upstreams_sizes():
    wls = {w.name: w for w in load_workloads(SHIPPED)}
    for name, params in UPSTREAM_SIZES.items():
        assert wls[name].params == params, name
    assert wls["PreemptionAsync/5000Nodes"].feature_gates == {"SchedulerAsyncPreemption": False}


@pytest.mark.parametrize("name,outcome", [
    ("PreemptionAsync/5Nodes", None),
    ("SchedulingWithMixedChurn/10Nodes", None),
    ("SchedulingWhileGated/1Node_10GatedPods", None),
    ("SchedulingDaemonset/5Nodes", "daemonset"),
    ("SchedulingDeletedPodsWithFinalizers/10Node_10DeletingPods", None),
    ("SteadyStateClusterResourceClaimTemplate/fast", "steady"),
])
def test_the_small_workloads_schedule_every_measured_pod(name, outcome):
    [wl] = load_workloads(SHIPPED, name)
    run = WorkloadRun(wl, quiet=True)
    result = run.run()
    assert result["scheduledPods"] == result["measuredPods"] > 0 and result["unscheduledPods"] == 0
    if outcome == "daemonset":
        assert {p.node_name for p in run.cluster.list("Pod")} == {"scheduler-perf-node"}
    if outcome == "steady":
        # 2 DRA nodes x 10 devices, 10 allocated without pods: rounds of 10 pods use the other
        # 10; 100 ms at 1 ms per attempt: 100 pods
        assert result["scheduledPods"] == 100
        assert len(run.cluster.list("ResourceClaim", "init")) == 10


def test_a_half_full_dra_cluster_with_the_node_table_schedules():
    """SteadyStateClusterResourceClaimTemplate/half at 70 nodes (enough for the node table):
    DynamicResources rejects full nodes with a Status subclass of its own, which the rejections
    kept as columns must take as a Status (it ended the run with a TypeError)."""
    [wl] = load_workloads(SHIPPED, "SteadyStateClusterResourceClaimTemplate/half_500nodes",
                          {"nodesWithDRA": 70, "initClaims": 350, "duration": "300ms"})
    result = WorkloadRun(wl, quiet=True).run()
    assert result["scheduledPods"] == result["measuredPods"] > 0 and result["unscheduledPods"] == 0
