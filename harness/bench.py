"""`schedharness bench`: scheduler_perf's workloads (test/integration/scheduler_perf) run on the
harness, with the figures scheduler_perf reports: SchedulingThroughput (average and percentiles
of per-second samples of the measured pods scheduled, in wall time as scheduler_perf's
throughputCollector takes them), per-attempt scheduling latency percentiles, and peak memory.

`schedharness bench FILE [--workload NAME] [--param k=v]` runs a workload file (see
bench/performance-config.yaml); `schedharness bench --nodes N --init-pods I --pods P` runs
SchedulingBasic with those counts.

How ops run (one thread, no API server): createX ops create objects and the scheduler sees them
as watch events; createPods waits until the scheduler is quiet (all its pods attempted, the
schedulable ones bound) unless skipWaitToCompletion, in which case scheduling happens at the next
op that waits; barrier waits likewise; sleep lets the duration pass in the scheduler's virtual
time (backoffs end) without sleeping; churn and rate-limited deletePods run "in the background":
they are ticked by wall time between scheduling attempts. The measured window of a createPods op
with collectMetrics starts once its pods are created and ends when the scheduler is quiet."""

from __future__ import annotations

import gc
import json
import math
import os
import resource
import sys
import random
import re
import time
from typing import Any, Callable, Dict, List, Optional

from .api.objects import Pod, make_object, update_pod_condition
from .benchfile import Op, Template, Workload, load_workloads, parse_param_overrides
from .case.apiserver import ApiServerDefaults
from .case.controllers import start_controllers
from .cluster import Cluster
from .config.defaults import set_defaults
from .versions import case_features
from .errors import UserError
from .framework.registry import default_registry
from .leaderelection.resourcelock import format_time
from .scheduler.scheduler import Scheduler

# makeBaseNode / makeBasePod (scheduler_perf util.go): what createNodes and createPods use
# without a template.
BASE_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"generateName": "scheduler-perf-"},
             "spec": {},
             "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"}, "phase": "Running",
                        "conditions": [{"type": "Ready", "status": "True"}]}}
BASE_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"},
            "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                     "ports": [{"containerPort": 80}],
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"},
                                                   "limits": {"cpu": "100m", "memory": "500Mi"}}}]}}

PERCENTILES = (50, 90, 95, 99)
SAMPLE_INTERVAL = 1.0  # seconds of wall time between throughput samples (throughputCollector)


def percentile(sorted_values: List[float], p: int) -> float:
    """The p-th percentile as scheduler_perf's collectors take it: sorted[ceil(n*p/100)-1]."""
    if not sorted_values:
        return 0.0
    return sorted_values[int(math.ceil(len(sorted_values) * p / 100.0)) - 1]


def peak_rss_mib() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024.0 * 1024.0) if sys.platform == "darwin" else r / 1024.0


# The background ops' clock (churn, rate-limited deletes): the scheduler's virtual time plus
# ATTEMPT_COST per scheduling attempt. scheduler_perf runs them on the wall clock beside a
# kube-scheduler that takes about a millisecond per attempt (SchedulingBasic's 5000-node
# workloads: several hundred pods/s); on the wall clock here, a slower or busier machine would
# get more churn per attempt, and churn faster than the attempts never lets the measured pods
# through. On this clock every run of a workload interleaves churn and attempts alike.
ATTEMPT_COST = 0.001
MAX_BACKGROUND_TICKS = 100_000


class _Background:
    """A task ticked by the background clock while the scheduler runs (churn, rate-limited
    deletes)."""

    def __init__(self, interval: float, fn: Callable[[], bool], now: float):
        self.interval = interval
        self.fn = fn  # returns False when done
        self.start = now
        self.ticks = 0  # the ticks so far: the next one is due at start + (ticks + 1) * interval
        self.next = now + interval
        self.done = False

    def tick(self, now: float) -> None:
        # a time.Ticker's ticks, counted from the start (not by adding up the interval: 0.1
        # added three times is not 0.3), to the nanosecond the clocks can tell apart
        now += 1e-9
        due = (now - self.next) / self.interval + 1 if now >= self.next else 0
        if due > MAX_BACKGROUND_TICKS:  # a long sleep with churn: scheduler_perf would run for ever
            raise UserError(f"a background op would run {due:.0f} times at once (a sleep this long with "
                            f"churn or deletes every {self.interval * 1000:g} ms); at most {MAX_BACKGROUND_TICKS}")
        while not self.done and now >= self.next:
            self.ticks += 1
            self.next = self.start + (self.ticks + 1) * self.interval
            if not self.fn():
                self.done = True


class Progress:
    def __init__(self, name: str, quiet: bool = False):
        self.name = name
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._bar = False

    def line(self, text: str) -> None:
        if self.quiet:
            return
        if self._bar:
            sys.stderr.write("\n")
            self._bar = False
        sys.stderr.write(f"[{self.name}] {text}\n")
        sys.stderr.flush()

    def bar(self, done: int, total: int, rate: float) -> None:
        if self.quiet:
            return
        of = f"/{total}" if total else ""  # a steady state's pods are not known in advance
        if self.tty:
            width = 30
            filled = int(width * done / total) if total else width
            sys.stderr.write(f"\r[{self.name}] [{'#' * filled}{'.' * (width - filled)}] "
                             f"{done}{of} pods, {rate:.0f} pods/s ")
            self._bar = True
        else:
            sys.stderr.write(f"[{self.name}]   {done}{of} measured pods scheduled, {rate:.0f} pods/s\n")
        sys.stderr.flush()


class WorkloadRun:
    """Executes one workload's ops against a Cluster and a Scheduler (executor.go's runOp)."""

    def __init__(self, wl: Workload, quiet: bool = False):
        self.wl = wl
        self.progress = Progress(wl.name, quiet)
        registry = default_registry()
        features = case_features(None, wl.feature_gates, file=wl.label)
        if wl.scheduler_config_path:
            from .config.loader import load_config_file
            cfg = load_config_file(wl.scheduler_config_path, registry, features)
        else:
            cfg = set_defaults({}, registry, features)
        self.cluster = Cluster(features)
        self.api = ApiServerDefaults([], wl.label, features)
        self.sched = Scheduler(cfg, registry, self.cluster, source=wl.scheduler_config_path or "config",
                               features=features)
        self.sched.keep_records = False
        self.sched.start()
        start_controllers(self.cluster)  # the resourceclaim controller, as scheduler_perf runs it
        self._index = 0
        self._names: Dict[str, int] = {}
        self._templates: Dict[str, Template] = {}
        self.background: List[_Background] = []
        # measurement
        self.measured: set = set()
        self.measured_bound = 0
        self.measuring = False
        self.latencies: List[float] = []
        self.samples: List[float] = []
        self._sampler: Optional[_ThroughputSampler] = None
        self._total_measured = 0
        self.attempts = 0  # every scheduling attempt so far (the background clock)
        # numPodsScheduledPerNamespace: the namespaces a barrier waits for, each with the pods
        # created there without waiting (skipWaitToCompletion)
        self.pending_namespaces: Dict[str, int] = {}
        self.cpu_seconds = 0.0  # CPU time (this process) of the measured windows
        self._rand = random.Random(0)  # allocResourceClaims' node shuffle, the same every run
        self._bound_uids: set = set()  # the pods that exist and are bound
        self.cluster.subscribe(self._on_event)
        self._wrap_scheduler()

    # ------------------------------------------------------------------------------------------
    def _on_event(self, kind: str, old, new) -> None:
        if kind != "Pod":
            return
        if new is not None and new.node_name and (old is None or not old.node_name):
            self._bound_uids.add(new.uid)
            if new.uid in self.measured:
                self.measured_bound += 1
        elif new is None and old is not None:
            self._bound_uids.discard(old.uid)

    def _wrap_scheduler(self) -> None:
        """Time each scheduling attempt (scheduling and binding cycle) of a measured pod; tick
        the background tasks and the throughput sampler between attempts."""
        cycles, queue = self.sched.cycles, self.sched.queue
        inner_one, inner_pop = cycles.schedule_one, queue.pop
        last = [None]

        def pop():
            p = inner_pop()
            last[0] = p.pod.uid if p is not None else None
            return p

        def schedule_one():
            last[0] = None
            t0 = time.perf_counter()
            r = inner_one()
            t1 = time.perf_counter()
            if last[0] is not None:
                self.attempts += 1
            if self.measuring and last[0] in self.measured:
                self.latencies.append(t1 - t0)
            if self.background:
                self._tick_background()
            if self._sampler is not None:
                self._sampler.tick(t1, self.measured_bound)
            return r

        queue.pop = pop
        cycles.schedule_one = schedule_one

    def background_now(self) -> float:
        """The background ops' clock (see ATTEMPT_COST)."""
        return self.sched.clock.now() + self.attempts * ATTEMPT_COST

    def _tick_background(self) -> None:
        now = self.background_now()
        for b in self.background:
            b.tick(now)
        self.background = [b for b in self.background if not b.done]

    # ------------------------------------------------------------------------------------------
    def _template(self, rel: Optional[str], default: Dict[str, Any]) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
        if not rel:
            return lambda env: json.loads(json.dumps(default))
        path = rel if os.path.isabs(rel) else os.path.join(self.wl.base_dir, rel)
        t = self._templates.get(path)
        if t is None:
            t = self._templates[path] = Template(path)
        return t.render

    def _name(self, obj: Dict[str, Any]) -> None:
        md = obj.setdefault("metadata", {})
        if md.get("name"):
            return
        gen = md.pop("generateName", None) or f"{obj.get('kind', 'object').lower()}-"
        n = self._names.get(gen, 0)
        self._names[gen] = n + 1
        md["name"] = f"{gen}{n:05d}"

    def create(self, obj: Dict[str, Any], namespace: Optional[str] = None):
        self._name(obj)
        if namespace:
            obj["metadata"]["namespace"] = namespace
        self.api.default_object(obj, obj["kind"], self._index)
        self._index += 1
        return self.cluster.create(make_object(obj))

    # ------------------------------------------------------------------------------------------
    def run(self) -> Dict[str, Any]:
        t_start = time.perf_counter()
        measured_time = 0.0
        measured_pods = 0
        unscheduled = 0
        for op in self.wl.ops:
            t0 = time.perf_counter()
            try:
                what = getattr(self, "op_" + op.opcode)(op)
            except UserError as e:  # what running the op found: name the workload and the op
                if e.file:
                    raise
                raise UserError(e.detail, file=self.wl.label, key=f"workloadTemplate[{op.index}]") from None
            dt = time.perf_counter() - t0
            if what.get("measured"):
                measured_time += what["seconds"]
                measured_pods += what["pods"]
                unscheduled += max(0, what.get("unscheduled", 0))
            self.progress.line(f"op {op.index + 1}/{len(self.wl.ops)} {op.opcode}: {what['text']} ({dt:.1f}s)")
        self.background = []
        samples = sorted(self.samples)
        lat = sorted(self.latencies)
        result = {
            "name": self.wl.name,
            "params": self.wl.params,
            "measuredPods": measured_pods,
            "scheduledPods": self.measured_bound,
            "seconds": measured_time,
            "podsPerSecond": self.measured_bound / measured_time if measured_time > 0 else 0.0,
            # the same windows in this process's CPU time: what a busy machine does not distort
            "cpuSeconds": self.cpu_seconds,
            "podsPerCPUSecond": self.measured_bound / self.cpu_seconds if self.cpu_seconds > 0 else 0.0,
            "SchedulingThroughput": {"Average": sum(samples) / len(samples) if samples else 0.0,
                                     **{f"Perc{p}": percentile(samples, p) for p in PERCENTILES}},
            "samples": len(samples),
            "attempts": len(lat),
            "AttemptLatencyMs": {"Average": 1000 * sum(lat) / len(lat) if lat else 0.0,
                                 **{f"Perc{p}": 1000 * percentile(lat, p) for p in PERCENTILES}},
            "peakRSSMiB": peak_rss_mib(),
            "totalSeconds": time.perf_counter() - t_start,
            # measured pods left unscheduled (main warns and exits 1)
            "unscheduledPods": unscheduled,
        }
        if self.wl.threshold is not None:
            result["threshold"] = self.wl.threshold
        return result

    def _until_quiet(self) -> None:
        self.sched.run_until_quiet()

    def _until_scheduled(self, uids: Optional[set] = None) -> None:
        """scheduler_perf's wait for an op's pods (waitUntilPodsScheduledInNamespace): until each
        of `uids` is bound or has been found unschedulable (where kube-scheduler would leave it
        until the wait times out), while background ops go on; without `uids`, until quiet.
        Background churn that keeps the scheduler from finishing (faster than ATTEMPT_COST, or
        starving the pods) ends in an error after a bounded number of attempts, the same on any
        machine."""
        if not uids and not self.background:
            self._until_quiet()
            return
        all_pods = self.cluster.list("Pod")
        pods = {p.uid: p for p in all_pods if p.uid in (uids or ())}
        order = list(pods)  # creation order: the pods finished first come first
        first = [0]  # order[:first] are bound or gone
        limit = 50 * (len(all_pods) + 10)
        start = self.attempts

        def state(uid: str) -> str:
            pod = self.cluster.get("Pod", pods[uid].namespace, pods[uid].name)
            return self.sched.queue_state(pod) if pod is not None else "none"

        def done() -> bool:
            if self.attempts - start > limit:
                raise UserError(f"the scheduler did not finish after {limit} scheduling attempts: "
                                f"background ops (churn, deletes) keep it busy", file=self.wl.label)
            if not uids:
                return False
            i = first[0]
            while i < len(order) and state(order[i]) in ("bound", "none"):
                i += 1
            first[0] = i
            return all(state(order[j]) in ("bound", "none", "unschedulable", "gated")
                       for j in range(i, len(order)))

        self.sched.run(None, done=done)

    # ops ----------------------------------------------------------------------------------------
    def op_createNodes(self, op: Op) -> Dict[str, Any]:
        render = self._template(op.get("nodeTemplatePath"), BASE_NODE)
        label = op.get("labelNodePrepareStrategy")
        unique = op.get("uniqueNodeLabelStrategy")
        alloc = op.get("nodeAllocatableStrategy")
        if alloc:
            raise UserError("nodeAllocatableStrategy is not supported by schedharness bench yet",
                            file=self.wl.label, key=f"workloadTemplate[{op.index}]")
        values = list((label or {}).get("labelValues") or [])
        if label is not None and (not label.get("labelKey") or not values):
            raise UserError("labelNodePrepareStrategy needs labelKey and labelValues",
                            file=self.wl.label, key=f"workloadTemplate[{op.index}]")
        for i in range(op.count):
            obj = render({"Index": i, "Count": op.count, **op.template_params})
            labels = obj.setdefault("metadata", {}).setdefault("labels", {})
            if label is not None:
                labels[label["labelKey"]] = values[i % len(values)]  # round robin
            if unique is not None:
                labels[unique["labelKey"]] = f"{unique['labelKey']}-{self._index}"
            self._name(obj)
            labels.setdefault("kubernetes.io/hostname", obj["metadata"]["name"])
            self.create(obj)
        return {"text": f"{op.count} nodes"}

    def op_createNamespaces(self, op: Op) -> Dict[str, Any]:
        render = self._template(op.get("namespaceTemplatePath"),
                                {"apiVersion": "v1", "kind": "Namespace", "metadata": {}})
        for i in range(op.count):
            obj = render({"Index": i, "Count": op.count})
            obj.setdefault("metadata", {})["name"] = f"{op.get('prefix')}-{i}"
            self.create(obj)
            self.pending_namespaces.setdefault(obj["metadata"]["name"], 0)
        return {"text": f"{op.count} namespaces {op.get('prefix')}-*"}

    def op_createPods(self, op: Op, namespace: Optional[str] = None) -> Dict[str, Any]:
        """runCreatePodsOp: the pods, then (unless skipWaitToCompletion) the wait for them; in
        steady state (createPodsSteadily) rounds of `count` pods instead (see _steady_state)."""
        ns = namespace or op.get("namespace") or f"namespace-{op.index}"
        self.pending_namespaces.setdefault(ns, 0)  # createNamespaceIfNotPresent
        collect = bool(op.get("collectMetrics"))
        if op.get("steadyState"):
            return self._steady_state(op, ns, collect)
        created = self._render_pods(op, name=collect)
        if not collect:
            made = [self.create(obj, ns) for obj in created]
            if op.get("skipWaitToCompletion"):
                self.pending_namespaces[ns] += op.count
                return {"text": f"{op.count} pods in {ns} (not waited for)"}
            self._until_scheduled({p.uid for p in made})
            return {"text": f"{op.count} pods in {ns}"}
        uids = []
        for obj in created:
            p = self.create(obj, ns)
            uids.append(p.uid)
        self.measured.update(uids)
        self._total_measured += len(uids)
        before = self.measured_bound
        t0, c0 = self._start_window()
        self._until_scheduled(set(uids))
        t1, c1 = self._stop_window()
        bound = self.measured_bound - before
        rate = bound / (t1 - t0) if t1 > t0 else 0.0
        # scheduler_perf waits for a collectMetrics op's pods to be scheduled and fails when
        # they are not (such an op may not set skipWaitToCompletion: benchfile rejects it)
        missing = op.count - bound
        return {"text": f"{op.count} measured pods in {ns}: {bound} scheduled in {t1 - t0:.2f}s = {rate:.1f} pods/s "
                        f"({c1 - c0:.2f}s CPU)",
                "measured": True, "seconds": t1 - t0, "pods": op.count, "unscheduled": missing}

    def _render_pods(self, op: Op, name: bool = False) -> List[Dict[str, Any]]:
        tpath = op.get("podTemplatePath") or self.wl.default_pod_template
        render = self._template(tpath, BASE_POD)
        batch = int(op.get("signatureBatchSize") or 1)
        created = []
        for i in range(op.count):
            obj = render({"Index": i, "Count": op.count, **op.template_params})
            if batch > 1:
                obj.setdefault("metadata", {}).setdefault("labels", {})["signature"] = f"signature-label-{i // batch}"
            if name:
                obj.setdefault("metadata", {})
                self._name(obj)
            created.append(obj)
        return created

    def _start_window(self):
        # What exists before the window (nodes, init pods, the cluster) is moved out of the cyclic
        # collector's reach: otherwise each full collection during the window walks it again.
        gc.collect()
        gc.freeze()
        t0, c0 = time.perf_counter(), time.process_time()
        self.measuring = True
        self._sampler = _ThroughputSampler(t0, self.measured_bound, self.progress, self._total_measured)
        self._window_cpu = c0
        return t0, c0

    def _stop_window(self):
        t1, c1 = time.perf_counter(), time.process_time()
        self.samples.extend(self._sampler.finish(t1, self.measured_bound))
        self._sampler = None
        self.measuring = False
        self.cpu_seconds += c1 - self._window_cpu
        return t1, c1

    def _steady_state(self, op: Op, ns: str, collect: bool) -> Dict[str, Any]:
        """createPodsSteadily: `count` pods; each time all of them are scheduled, every pod of
        the namespace is deleted (DeleteCollection, grace period 0) and `count` new ones are
        created; for `duration`. Upstream's duration is wall time; here it is the background
        clock's (virtual time plus ATTEMPT_COST per scheduling attempt), so that a run does as
        many rounds on any machine. A round whose pods cannot all be scheduled waits until the
        duration is over, as upstream's loop does. Upstream fails when no pod at all got
        scheduled; so does this."""
        end = self.background_now() + op.get("seconds")
        before = self.measured_bound
        rounds = [0]
        current: set = set()

        def new_round() -> None:
            rounds[0] += 1
            uids = [self.create(obj, ns).uid for obj in self._render_pods(op)]
            current.clear()
            current.update(uids)
            if collect:
                self.measured.update(uids)
                self._total_measured += len(uids)

        if collect:
            t0, c0 = self._start_window()
            self._sampler.total = 0  # the progress line: no total
        scheduled = 0
        new_round()
        while True:
            over = [False]

            def done() -> bool:
                if self.background_now() >= end:
                    over[0] = True
                    return True
                return all(self._bound(uid) for uid in current)

            self.sched.run(None, max_cycles=50 * (len(current) + 10) + 1000, done=done)
            if over[0]:
                break
            if not all(self._bound(uid) for uid in current):
                break  # quiet with pods left: nothing more happens until the duration ends
            scheduled += len(current)
            for p in self.cluster.list("Pod", ns):
                self.delete_pod(p, grace=0)
            new_round()
        if collect:
            t1, c1 = self._stop_window()
        for uid in current:
            scheduled += self._bound(uid)
        if scheduled == 0:
            raise UserError("no pod at all got scheduled, either because of a problem or because the test "
                            "interval was too small")
        text = f"{rounds[0]} rounds of {op.count} pods in {ns} for {op.get('seconds'):g}s: {scheduled} scheduled"
        if not collect:
            return {"text": text}
        bound = self.measured_bound - before
        rate = bound / (t1 - t0) if t1 > t0 else 0.0
        return {"text": f"{text} in {t1 - t0:.2f}s = {rate:.1f} pods/s ({c1 - c0:.2f}s CPU)",
                "measured": True, "seconds": t1 - t0, "pods": bound, "unscheduled": 0}

    def _bound(self, uid: str) -> bool:
        return uid in self._bound_uids

    def op_createPodSets(self, op: Op) -> Dict[str, Any]:
        sub: Op = op.get("createPodsOp")
        for i in range(op.count):
            self.op_createPods(sub, f"{op.get('namespacePrefix')}-{i}")
        return {"text": f"{op.count} pod sets of {sub.count} pods"}

    def op_createAny(self, op: Op) -> Dict[str, Any]:
        render = self._template(op.get("templatePath"), {})
        if op.get("namespace"):
            self.pending_namespaces.setdefault(op.get("namespace"), 0)  # requiredNamespaces
        for i in range(op.count):
            obj = render({"Index": i, "Count": op.count, **op.template_params})
            self.create(obj, op.get("namespace"))
        return {"text": f"{op.count} object(s) from {op.get('templatePath')}"}

    def _pods_in(self, namespace: Optional[str], labels: Optional[Dict[str, str]]) -> List[Pod]:
        return [p for p in self.cluster.list("Pod", namespace)
                if not labels or all(p.labels.get(k) == v for k, v in labels.items())]

    def delete_pod(self, pod: Pod, grace: Optional[int] = None) -> None:
        """DELETE of a pod as the API server does it (podStrategy.CheckGracefulDelete, then the
        generic registry's BeforeDelete and finalizers): the grace period is the request's, else
        the pod's terminationGracePeriodSeconds (defaulted to 30), but 0 for a pod not scheduled
        or finished. A pod with a grace period above 0 or with finalizers stays, with its
        deletionTimestamp set (an update: there is no kubelet to finish it, as in
        scheduler_perf's cluster); the others are gone."""
        current = self.cluster.get("Pod", pod.namespace, pod.name)
        if current is None or current.uid != pod.uid:
            return
        md = current.raw.get("metadata") or {}
        if md.get("deletionTimestamp"):
            return  # already being deleted: the registry leaves it so
        period = grace
        if period is None:
            period = current.spec.get("terminationGracePeriodSeconds")
            period = 30 if period is None else int(period)  # DefaultTerminationGracePeriodSeconds
        if not current.node_name or current.status.get("phase") in ("Failed", "Succeeded"):
            period = 0
        if period == 0 and not md.get("finalizers"):
            self.cluster.delete(current)
            return
        raw = dict(current.raw)
        raw["metadata"] = dict(md, deletionTimestamp=format_time(self.sched.clock.now()),
                               deletionGracePeriodSeconds=period)
        self.cluster.update(Pod(raw))

    def _pods_in(self, namespace: Optional[str], labels: Optional[Dict[str, str]]) -> List[Pod]:
        return [p for p in self.cluster.list("Pod", namespace)
                if not labels or all(p.labels.get(k) == v for k, v in labels.items())]

    def op_deletePods(self, op: Op) -> Dict[str, Any]:
        """runDeletePodsOp: the pods of the namespace (and label selector) listed now, deleted
        with the API server's default options (delete_pod), at deletePodsPerSecond on the
        background clock (in a shuffled order) or all at once (DeleteCollection)."""
        pods = self._pods_in(op.get("namespace"), op.get("labelSelector"))
        rate = int(op.get("deletePodsPerSecond") or 0)
        if rate > 0 and op.get("skipWaitToCompletion"):
            # the informer's list comes in no particular order (a Go map): a seeded shuffle
            todo = list(pods)
            self._rand.shuffle(todo)

            def step() -> bool:
                if todo:
                    self.delete_pod(todo.pop())
                return bool(todo)

            self.background.append(_Background(1.0 / rate, step, self.background_now()))
            return {"text": f"deleting {len(pods)} pods at {rate}/s in the background"}
        for p in pods:
            self.delete_pod(p)
        if not op.get("skipWaitToCompletion"):
            self._until_scheduled()
        return {"text": f"{len(pods)} pods deleted"}

    def op_churn(self, op: Op) -> Dict[str, Any]:
        renders = [self._template(p, {}) for p in op.get("templatePaths")]
        ns = op.get("namespace") or f"namespace-{op.index}"
        number = int(op.get("number") or 0)
        mode = op.get("mode")
        count = [0]
        slots: List[List[Any]] = [[None] * max(number, 1) for _ in renders]

        def make(render):
            obj = render({"Index": count[0], "Count": number})
            return self.create(obj, ns if self.api.namespaced(obj.get("kind", "")) else None)

        def step() -> bool:
            if mode == "create":
                for r in renders:
                    make(r)
                count[0] += 1
                return number == 0 or count[0] < number
            k = count[0] % number
            for i, r in enumerate(renders):
                if slots[i][k] is not None:
                    self._delete_object(slots[i][k])
                    slots[i][k] = None
                else:
                    slots[i][k] = make(r)
            count[0] += 1
            return True

        interval = int(op.get("intervalMilliseconds") or 500) / 1000.0
        self.background.append(_Background(interval, step, self.background_now()))
        return {"text": f"{mode} every {interval * 1000:.0f}ms in the background"}

    def op_createResourceDriver(self, op: Op) -> Dict[str, Any]:
        """createResourceDriverOp.run: for each node whose name matches the `nodes` glob
        (filepath.Match), one ResourceSlice named after the node, of driver `driverName`, in a
        pool named after the node, with maxClaimsPerNode devices instance-0... (resourceSlice in
        dra.go: attributes model A100, family GPU, driverVersion 1.2.3, dra.example.com/numa
        the device's index; capacity memory 1Gi)."""
        driver, pattern = op.get("driverName"), op.get("nodes")
        names = [n.name for n in self.cluster.list("Node") if _glob_match(pattern, n.name)]
        for name in names:
            devices = [{"name": f"instance-{i}",
                        "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                                       "driverVersion": {"version": "1.2.3"},
                                       "dra.example.com/numa": {"int": i}},
                        "capacity": {"memory": {"value": "1Gi"}}} for i in range(op.count)]
            self.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                         "metadata": {"name": name},
                         "spec": {"driver": driver, "nodeName": name,
                                  "pool": {"name": name, "resourceSliceCount": 1}, "devices": devices}})
        return {"text": f"{len(names)} ResourceSlices of {op.count} devices ({driver}, nodes {pattern})"}

    def op_allocResourceClaims(self, op: Op) -> Dict[str, Any]:
        """allocResourceClaimsOp.run: each claim of the namespace (all namespaces if none) not
        allocated yet is allocated by the structured allocator, without a pod, on the first
        node that has room, the nodes shuffled before each claim (math/rand there; a random
        generator seeded alike on every run here); its status gets the allocation and nothing
        else (no reservedFor, no finalizer). A claim no node can take is an error ("Could not
        allocate claim")."""
        from builtin_plugins.dynamicresources.allocator import Allocator, Features
        from builtin_plugins.dynamicresources.cel import CELCache
        from builtin_plugins.dynamicresources.claims import allocation_of, foreach_allocated_device

        ns = op.get("namespace") or None
        claims = self.cluster.list("ResourceClaim", ns)
        nodes = self.cluster.list("Node")
        slices = self.cluster.list("ResourceSlice")
        features = Features.from_gates(self.sched.features)
        cel_cache, match_cache, pool_cache = CELCache(), {}, {}
        allocated = set()
        for c in self.cluster.list("ResourceClaim"):
            allocated.update(foreach_allocated_device(allocation_of(c)))

        def get_class(name: str):
            c = self.cluster.get("DeviceClass", "", name)
            return c.raw if c is not None else None

        done = 0
        for i, claim in enumerate(claims):
            if allocation_of(claim):
                continue
            allocator = Allocator(features, set(allocated), get_class, slices, cel_cache, match_cache, pool_cache)
            self._rand.shuffle(nodes)
            for node in nodes:
                result = allocator.allocate(node, [claim.raw])
                if result is not None:
                    raw = dict(claim.raw)
                    raw["status"] = dict(raw.get("status") or {}, allocation=result[0])
                    updated = self.cluster.update(make_object(raw))
                    allocated.update(foreach_allocated_device(allocation_of(updated)))
                    done += 1
                    break
            else:
                raise UserError(f"Could not allocate claim {i} out of {len(claims)}")
        return {"text": f"{done} ResourceClaims allocated"}

    def _delete_object(self, obj) -> None:
        """A churn op's DELETE with default options (a pod's as delete_pod does it)."""
        if obj.kind == "Pod":
            self.delete_pod(obj)
            return
        current = self.cluster.get(obj.kind, obj.namespace, obj.name)
        if current is not None and current.uid == obj.uid:
            self.cluster.delete(current)

    def _attempted(self, pod: Pod) -> bool:
        """isAttempted: the pod has a PodScheduled condition. A gated pod has one from its
        creation on (the API server's applySchedulingGatedCondition: PodScheduled=False,
        SchedulingGated), which the harness's API server does not write: a pod held by
        PreEnqueue counts as attempted here."""
        if any(c.get("type") == "PodScheduled" for c in pod.status.get("conditions") or []):
            return True
        return self.sched.queue_state(pod) == "gated"

    def op_barrier(self, op: Op) -> Dict[str, Any]:
        """runBarrierOp: for each namespace (those given, else every namespace an op created
        pods in), until as many of its pods (matching labelSelector) as were created there
        without waiting are scheduled (stageRequirement Scheduled; those namespaces are then
        forgotten) or scheduled or attempted (Attempted). Background ops go on meanwhile.
        Upstream polls for up to 10 minutes and then fails; here the scheduler runs until the
        condition holds or nothing more can happen without time passing, and a barrier that is
        not met then is an error."""
        namespaces = list(op.get("namespaces") or [])
        for ns in namespaces:
            if ns not in self.pending_namespaces:
                raise UserError(f"unknown namespace {ns}")
        if not namespaces:
            namespaces = list(self.pending_namespaces)
        attempted = op.get("stageRequirement") == "Attempted"
        labels = op.get("labelSelector")

        def counts(ns: str) -> int:
            pods = self._pods_in(ns, labels)
            if attempted:
                return sum(1 for p in pods if p.node_name or self._attempted(p))
            return sum(1 for p in pods if p.node_name)

        def met() -> bool:
            return all(counts(ns) >= self.pending_namespaces[ns] for ns in namespaces)

        # the condition is checked each time the scheduler goes quiet or every 1000 attempts,
        # so that a barrier over many pods does not recount them before each attempt
        start = [self.attempts]

        def check() -> bool:
            if self.attempts - start[0] < 1000:
                return False
            start[0] = self.attempts
            return met()

        while not met():
            before = self.attempts
            self.sched.run(None, done=check)
            if self.attempts == before and not met():
                missing = {ns: self.pending_namespaces[ns] - counts(ns) for ns in namespaces}
                missing = {k: v for k, v in missing.items() if v > 0}
                raise UserError(f"barrier: pods not {'attempted' if attempted else 'scheduled'} "
                                f"(namespace: how many): {missing} (scheduler_perf would time out)")
        if not attempted:
            for ns in namespaces:
                del self.pending_namespaces[ns]
        return {"text": f"{', '.join(namespaces) or 'no namespace'}: every pod "
                        f"{'attempted' if attempted else 'scheduled'}"}

    def op_sleep(self, op: Op) -> Dict[str, Any]:
        self._until_scheduled()
        clock = self.sched.clock
        clock.advance_to(clock.now() + op.get("seconds"))
        if self.background:
            self._tick_background()  # what ran in the background while the op slept
        self._until_scheduled()
        return {"text": f"{op.get('seconds')}s of virtual time"}


def _glob_match(pattern: str, name: str) -> bool:
    """filepath.Match for a node name (no separators in it): `*`, `?`, `[...]` (`[^...]`
    negates) and `\\` escapes."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        elif ch == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                raise UserError(f"syntax error in pattern {pattern!r}")
            body = pattern[i + 1:j]
            out.append("[" + ("^" + body[1:] if body.startswith("^") else body) + "]")
            i = j
        else:
            out.append(re.escape(ch))
        i += 1
    return re.fullmatch("".join(out), name) is not None


class _ThroughputSampler:
    """scheduler_perf's throughputCollector.run: every SAMPLE_INTERVAL of wall time, the measured
    pods scheduled since the last sample per second; no sample until a first pod is scheduled,
    that first interval skipped (an outlier: sampling and creating pods start independently),
    and an interval in which no pod was scheduled recorded not as 0 pods/s but, once pods are
    scheduled again, as that rate once for each interval it spans (so that percentiles stay
    right). A window shorter than two intervals yields one sample over the whole window."""

    def __init__(self, now: float, bound: int, progress: "Progress", total: int):
        self.t0, self.bound0 = now, bound
        self.next = now + SAMPLE_INTERVAL
        self.last: Optional[tuple] = None  # (time, bound) of the last sample, once started
        self.skipped = 0
        self.samples: List[float] = []
        self.progress, self.total = progress, total

    def tick(self, now: float, bound: int) -> None:
        while now >= self.next:  # the ticker's ticks that passed
            self._sample(self.next, bound)
            self.next += SAMPLE_INTERVAL

    def _sample(self, now: float, bound: int) -> None:
        if bound == self.bound0:
            return
        if self.last is None:
            self.last = (now, bound)
            return
        new = bound - self.last[1]
        if new == 0:
            self.skipped += 1
            return
        rate = new / (now - self.last[0])
        self.samples.extend([rate] * (self.skipped + 1))
        self.skipped = 0
        self.last = (now, bound)
        self.progress.bar(bound - self.bound0, self.total, rate)

    def finish(self, now: float, bound: int) -> List[float]:
        if not self.samples and bound > self.bound0 and now > self.t0:
            return [(bound - self.bound0) / (now - self.t0)]
        return self.samples


# ---------------------------------------------------------------------------------------------
def run_workload_isolated(wl: Workload, quiet: bool = False) -> Dict[str, Any]:
    """Run a workload in a forked child when the platform can, so that its peak RSS is its own."""
    return run_isolated(lambda: WorkloadRun(wl, quiet).run(), wl.name)


def run_isolated(fn: Callable[[], Dict[str, Any]], name: str) -> Dict[str, Any]:
    """fn() (a workload's or a case's benchmark) in a forked child when the platform can, so
    that its peak RSS is its own; a UserError it raises is raised here."""
    if not hasattr(os, "fork"):
        return fn()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        _die_with_parent()
        code = 0
        try:
            out = {"ok": fn()}
        except UserError as e:
            out = {"error": str(e)}
        except BaseException as e:  # noqa: BLE001 - report whatever failed to the parent
            out = {"crash": f"{type(e).__name__}: {e}"}
            code = 1
        with os.fdopen(w, "w") as f:
            json.dump(out, f)
        os._exit(code)
    os.close(w)
    try:
        with os.fdopen(r, "r") as f:
            data = f.read()
        os.waitpid(pid, 0)
    except BaseException:  # Ctrl-C, SIGTERM (see main): the child ends with its parent
        _end_child(pid)
        raise
    out = json.loads(data) if data else {"crash": "the process that ran it died"}
    if "error" in out:
        raise UserError(out["error"])
    if "crash" in out:
        raise RuntimeError(f"{name}: {out['crash']}")
    return out["ok"]


def _die_with_parent() -> None:
    """In a workload's child: the kernel sends SIGKILL when the parent dies however it dies
    (Linux's PR_SET_PDEATHSIG); elsewhere the parent's handlers end it (_end_child)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
            if os.getppid() == 1:  # the parent died before prctl
                os._exit(1)
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            pass


def _end_child(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:  # already gone
        pass


def _terminate_as_interrupt():
    """SIGTERM ends `bench` as Ctrl-C does (its child killed, exit 130 path), not at once."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # pragma: no cover - not the main thread (bench called from a test thread)
        return None


def format_table(results: List[Dict[str, Any]]) -> str:
    head = ["workload", "pods", "sched", "secs", "pods/s", "thr avg", "p50", "p90", "p99",
            "lat p50 ms", "p90", "p99", "peak MiB"]
    rows = [head]
    for r in results:
        t, lat = r["SchedulingThroughput"], r["AttemptLatencyMs"]
        rows.append([r["name"], str(r["measuredPods"]), str(r["scheduledPods"]), f"{r['seconds']:.2f}",
                     f"{r['podsPerSecond']:.0f}", f"{t['Average']:.0f}", f"{t['Perc50']:.0f}",
                     f"{t['Perc90']:.0f}", f"{t['Perc99']:.0f}", f"{lat['Perc50']:.2f}",
                     f"{lat['Perc90']:.2f}", f"{lat['Perc99']:.2f}", f"{r['peakRSSMiB']:.0f}"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row))
                     for row in rows)


def data_items(results: List[Dict[str, Any]]) -> Dict[str, Any]:
    """scheduler_perf's JSON shape (DataItems), one item per metric and workload."""
    items = []
    for r in results:
        items.append({"data": r["SchedulingThroughput"], "unit": "pods/s",
                      "labels": {"Metric": "SchedulingThroughput", "Name": r["name"]}})
        items.append({"data": r["AttemptLatencyMs"], "unit": "ms",
                      "labels": {"Metric": "scheduler_scheduling_attempt_duration_seconds",
                                 "Name": r["name"], "result": "all"}})
        items.append({"data": {"Peak": r["peakRSSMiB"]}, "unit": "MiB",
                      "labels": {"Metric": "PeakRSS", "Name": r["name"]}})
    return {"version": "v1", "dataItems": items, "workloads": results}


def _shorthand(args) -> Workload:
    nodes = 500 if args.nodes is None else args.nodes
    init = 1000 if args.init_pods is None else args.init_pods
    pods = 1000 if args.pods is None else args.pods
    for flag, v, low in (("--nodes", nodes, 1), ("--init-pods", init, 0), ("--pods", pods, 1)):
        if v < low:
            raise UserError(f"{flag} must be at least {low}, got {v}")
    ops = [Op("createNodes", {}, 0, nodes), Op("createPods", {}, 1, init),
           Op("createPods", {"collectMetrics": True}, 2, pods)]
    if init == 0:
        ops = [ops[0], Op("createPods", {"collectMetrics": True}, 1, pods)]
    return Workload(f"SchedulingBasic/{nodes}Nodes_{init}Init_{pods}Pods",
                    {"initNodes": nodes, "initPods": init, "measurePods": pods}, ops, os.getcwd(), None, None)


def is_workload_file(path: str) -> bool:
    """Whether a file given to bench is a scheduler_perf workload file (a YAML list of test
    cases) rather than a case (a mapping): its first line of content starts a sequence. The
    file is read whole by its own loader, which says what is wrong with it."""
    try:
        with open(path, "rb") as f:
            for raw in f:
                line = raw.decode("utf-8", "replace").lstrip("\ufeff").strip()
                if not line or line.startswith(("#", "%", "---")):
                    continue
                return line.startswith(("-", "["))
    except OSError as e:
        raise UserError(f"cannot read: {e.strerror or e}", file=path) from None
    return False


def _entries(args) -> List[tuple]:
    """What to run, in the order the files are given: ("workload", Workload) for each workload
    of a workload file, ("case", path) for each case file (or case under a folder)."""
    from .case.loader import find_cases

    files = list(args.files or [])
    overrides = parse_param_overrides(args.param)
    out: List[tuple] = []
    any_workload_file = False
    for path in files:
        if os.path.isdir(path) or not is_workload_file(path):
            out.extend(("case", p) for p in find_cases([path]))
            continue
        any_workload_file = True
        workloads = load_workloads(path, args.workload, overrides)
        for wl in workloads:  # every template is read and checked before anything runs
            _check_templates(wl)
        out.extend(("workload", wl) for wl in workloads)
    if (args.workload or args.param) and not any_workload_file:
        raise UserError("--workload and --param need a workload file (a case is benchmarked as it is)")
    return out


def main(args) -> int:
    files = list(getattr(args, "files", None) or [])
    if getattr(args, "list", False):
        if not files:
            raise UserError("--list needs a workload file")
        for kind, what in _entries(args):
            if kind == "case":
                print(f"{what}  (a case)")
                continue
            params = " ".join(f"{k}={v}" for k, v in what.params.items())
            print(f"{what.name}" + (f"  {params}" if params else ""))
        return 0
    if files:
        if args.nodes is not None or args.init_pods is not None or args.pods is not None:
            raise UserError("--nodes/--init-pods/--pods run SchedulingBasic: give them without a workload file "
                            "(use --param with a file)")
        entries = _entries(args)
        if not entries:
            raise UserError("no workload or case to run", file=" ".join(files))
    else:
        if args.workload or args.param:
            raise UserError("--workload and --param need a workload file")
        entries = [("workload", _shorthand(args))]
    results = []
    previous = _terminate_as_interrupt()
    try:
        for kind, what in entries:
            if kind == "case":
                from .bench_case import bench_case
                fn = (lambda p=what: bench_case(p, quiet=args.json))
                name = what
            else:
                fn = (lambda wl=what: WorkloadRun(wl, args.json).run())
                name = what.name
            results.append(run_isolated(fn, name) if len(entries) > 1 else fn())
    finally:
        if previous is not None:
            import signal
            signal.signal(signal.SIGTERM, previous)
    failed = [r for r in results if r.get("unscheduledPods", 0) > 0]
    case_failed = [r for r in results if r.get("passed") is False]
    if args.json:
        print(json.dumps(data_items(results), indent=2))
    else:
        print(format_table(results))
        for r in results:
            print(f"{r['name']}: {r['scheduledPods']}/{r['measuredPods']} {'pods bound' if 'passed' in r else 'measured pods scheduled'} in "
                  f"{r['seconds']:.2f}s = {r['podsPerSecond']:.1f} pods/s ({r.get('cpuSeconds', 0.0):.2f}s CPU = "
                  f"{r.get('podsPerCPUSecond', 0.0):.1f} pods per CPU second), peak RSS {r['peakRSSMiB']:.0f} MiB"
                  + (_case_tail(r) if "passed" in r else ""))
    sys.stdout.flush()
    for r in failed:
        sys.stderr.write(f"WARNING: {r['name']}: {r['unscheduledPods']} of {r['measuredPods']} measured pods were "
                         f"not scheduled (scheduler_perf fails a collectMetrics createPods op whose pods are not all "
                         f"scheduled); its figures do not measure what they claim\n")
    return 1 if failed or case_failed else 0


def _case_tail(r: Dict[str, Any]) -> str:
    """The end of a case's last line: reading and building it, and its expectations."""
    verdict = "passed" if r["passed"] else "FAILED: " + "; ".join(r["failures"])
    return (f"; read and built in {r['loadSeconds']:.2f}s ({r['loadCPUSeconds']:.2f}s CPU); "
            f"{r['params']['nodes']} nodes; case {verdict}")


def _check_templates(wl: Workload) -> None:
    def check(rel: Optional[str], params: Dict[str, Any]) -> None:
        if rel:
            path = rel if os.path.isabs(rel) else os.path.join(wl.base_dir, rel)
            Template(path).render({"Index": 0, "Count": 1, **params})

    check(wl.default_pod_template, {})
    for op in wl.ops:
        ops = [op, op.get("createPodsOp")] if op.opcode == "createPodSets" else [op]
        for o in ops:
            for key in ("nodeTemplatePath", "podTemplatePath", "templatePath", "namespaceTemplatePath"):
                check(o.get(key), o.template_params)
            for p in o.get("templatePaths") or []:
                check(p, {})
    if wl.scheduler_config_path and not os.path.exists(wl.scheduler_config_path):
        raise UserError(f"scheduler config {wl.scheduler_config_path} does not exist", file=wl.label,
                        key="schedulerConfigPath")
