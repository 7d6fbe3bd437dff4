"""`schedharness bench`: scheduler_perf's SchedulingBasic (test/integration/scheduler_perf,
config/performance-config.yaml): nodes with 4 CPU / 32Gi / 110 pods, init pods already bound,
measured pods requesting 100m / 500Mi, default profile. Prints pods/s and peak memory."""

from __future__ import annotations

import resource
import sys
import time
from typing import List, Tuple

from .api.objects import Node, Pod
from .cluster import Cluster
from .config.defaults import set_defaults
from .framework.registry import default_registry
from .scheduler.scheduler import Scheduler

WORKLOADS: List[Tuple[int, int, int]] = [(500, 1000, 1000), (5000, 1000, 10000)]


def _node(i: int) -> Node:
    name = f"node-{i:05d}"
    return Node({"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": name, "uid": f"n-{i}", "labels": {"kubernetes.io/hostname": name}},
                 "spec": {}, "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}}})


def _pod(prefix: str, i: int, node: str = "") -> Pod:
    spec = {"schedulerName": "default-scheduler", "priority": 0,
            "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}
    if node:
        spec["nodeName"] = node
    return Pod({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"{prefix}-{i}", "namespace": "default", "uid": f"{prefix}-{i}"},
                "spec": spec})


def run_workload(nodes: int, init_pods: int, pods: int) -> Tuple[float, float, int]:
    """Returns (pods per second, seconds, pods bound)."""
    registry = default_registry()
    cfg = set_defaults({}, registry)
    cluster = Cluster()
    for i in range(nodes):
        cluster.create(_node(i), notify=False)
    for i in range(init_pods):
        cluster.create(_pod("init", i, f"node-{i % nodes:05d}"), notify=False)
    sched = Scheduler(cfg, registry, cluster)
    sched.keep_records = False
    sched.start()
    for i in range(pods):
        cluster.create(_pod("measured", i))
    t0 = time.perf_counter()
    sched.run_until_quiet()
    dt = time.perf_counter() - t0
    bound = sum(1 for p in cluster.list("Pod") if p.name.startswith("measured") and p.node_name)
    return bound / dt if dt > 0 else float("inf"), dt, bound


def main(args) -> int:
    workloads = WORKLOADS
    if args.nodes or args.init_pods is not None or args.pods:
        workloads = [(args.nodes or 500, args.init_pods if args.init_pods is not None else 1000, args.pods or 1000)]
    for nodes, init_pods, pods in workloads:
        rate, dt, bound = run_workload(nodes, init_pods, pods)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        print(f"SchedulingBasic {nodes} nodes / {init_pods} init pods / {pods} pods: "
              f"{bound} bound in {dt:.1f}s = {rate:.1f} pods/s, peak RSS {peak_mb:.0f} MiB")
        sys.stdout.flush()
    return 0
