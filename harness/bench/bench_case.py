"""`schedharness bench CASE.yaml`: a case benchmarked as `bench` benchmarks a scheduler_perf
workload (harness/bench/runner.py), so that a user can time the scheduler on a cluster of their own
(an `import`ed dump, a trace such as ../shared/openb's). Not an upstream piece.

The case runs as `run` runs it (its expectations checked, the attempt history kept compactly).
The measured pods are the case's pending pods (`cluster`'s pending pods, `pods`, and those its
steps create); the measured window starts once the cluster and the scheduler are built and
ends when the scheduler and every step are done. In it, as for a workload: SchedulingThroughput
(the pods bound per second of wall time, sampled each second by bench's throughputCollector),
the latency of each scheduling attempt (ScheduleOne: the scheduling cycle and what of its
binding cycle runs at once), its CPU time; and the process's peak RSS (reading the case
included).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional

from .measure import PERCENTILES, Progress, ThroughputSampler, peak_rss_mib, percentile
from ..errors import CaseError
from ..gcpause import collector_paused, thaw


class _Window:
    """The hooks run_case calls (built, ran): the scheduler's attempts timed, bound pods counted
    for the throughput samples, between the two."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.bound = 0
        self.latencies: List[float] = []
        self.samples: List[float] = []
        self.sampler: Optional[ThroughputSampler] = None
        self.t0 = self.t1 = self.c0 = self.c1 = 0.0
        self.total = 0
        self.nodes = 0

    def built(self, run) -> None:
        run.cluster.subscribe(self._on_event)
        timer = self._time_attempt
        if run.world is not None:
            run.world.attempt_timer = timer
            for s in run.world.all_schedulers:
                s.attempt_timer = timer
        else:
            run.sched.attempt_timer = timer
        self.total = len(run.tracked_pods)
        self.nodes = len(run.cluster.list("Node"))
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        self.sampler = ThroughputSampler(self.t0, 0, self.progress, self.total)

    def ran(self, run) -> None:
        self.t1, self.c1 = time.perf_counter(), time.process_time()
        if self.sampler is not None:
            self.samples = self.sampler.finish(self.t1, self.bound)
            self.sampler = None

    def _on_event(self, kind: str, old, new) -> None:
        if kind == "Pod" and old is not None and new is not None and new.node_name and not old.node_name:
            self.bound += 1

    def _time_attempt(self, schedule_one: Callable[[], bool]) -> Any:
        t0 = time.perf_counter()
        r = schedule_one()
        t1 = time.perf_counter()
        self.latencies.append(t1 - t0)
        if self.sampler is not None:
            self.sampler.tick(t1, self.bound)
        return r


def bench_case(path: str, data: Any = None, quiet: bool = False) -> Dict[str, Any]:
    """Benchmark the case file at `path` (`data`: its document, when already read): the figures
    of a workload (bench.WorkloadRun.run's keys) plus the case's outcome."""
    from ..case.loader import case_from_data
    from ..case.runner import run_case
    from ..yamlfile import load_yaml_file

    t_start, c_start = time.perf_counter(), time.process_time()
    with collector_paused(freeze=True):  # as load_case: a big case's objects (gcpause)
        if data is None:
            data = load_yaml_file(path, CaseError)
        case = case_from_data(data, path, copy_objects=False)
    del data
    window = _Window(Progress(case.name, quiet))
    try:
        res = run_case(case, hooks=window)
    finally:
        thaw()
    seconds, cpu = window.t1 - window.t0, window.c1 - window.c0
    samples, lat = sorted(window.samples), sorted(window.latencies)
    pods = len(res.bindings)
    bound = sum(1 for v in res.bindings.values() if v)
    return {
        "name": case.name,
        "file": path,
        "params": {"nodes": window.nodes, "pods": pods},
        "measuredPods": pods,
        "scheduledPods": bound,
        "unboundPods": pods - bound,
        "seconds": seconds,
        "podsPerSecond": bound / seconds if seconds > 0 else 0.0,
        "cpuSeconds": cpu,
        "podsPerCPUSecond": bound / cpu if cpu > 0 else 0.0,
        "SchedulingThroughput": {"Average": sum(samples) / len(samples) if samples else 0.0,
                                 **{f"Perc{p}": percentile(samples, p) for p in PERCENTILES}},
        "samples": len(samples),
        "attempts": len(lat),
        "AttemptLatencyMs": {"Average": 1000 * sum(lat) / len(lat) if lat else 0.0,
                             **{f"Perc{p}": 1000 * percentile(lat, p) for p in PERCENTILES}},
        "peakRSSMiB": peak_rss_mib(),
        "loadSeconds": window.t0 - t_start,  # reading the case, building the cluster and scheduler
        "loadCPUSeconds": window.c0 - c_start,
        "totalSeconds": time.perf_counter() - t_start,
        "passed": res.passed,
        "failures": list(res.failures),
    }
