"""scheduler_perf's workloads (test/integration/scheduler_perf) run on the
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
import os
import random
import re
import time
from typing import Any, Callable, Dict, List, Optional

from ..api.objects import Pod, make_object
from .workloads import Op, Template, Workload
from ..case.apiserver import ApiServerDefaults
from ..case.controllers import start_controllers
from ..cluster import Cluster
from ..config.defaults import set_defaults
from ..versions import case_features
from ..errors import UserError
from ..framework.registry import default_registry
from ..api.metatime import format_time
from ..scheduler.scheduler import Scheduler
from .measure import PERCENTILES, Progress, ThroughputSampler, peak_rss_mib, percentile

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


class WorkloadRun:
    """Executes one workload's ops against a Cluster and a Scheduler (executor.go's runOp)."""

    def __init__(self, wl: Workload, quiet: bool = False):
        self.wl = wl
        self.progress = Progress(wl.name, quiet)
        registry = default_registry()
        features = case_features(None, wl.feature_gates, file=wl.label)
        if wl.scheduler_config_path:
            from ..config.loader import load_config_file
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
        self._sampler: Optional[ThroughputSampler] = None
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
            st = None
            bound = self._bound_uids  # (a pod whose binding _on_event saw, and not deleted since, is "bound")
            while i < len(order):
                if order[i] in bound:
                    i += 1
                    continue
                st = state(order[i])
                if st not in ("bound", "none"):
                    break
                i += 1
            first[0] = i
            if i == len(order):
                return True
            # order[i]'s state is st (read once: this runs after every attempt)
            return st in ("unschedulable", "gated") and all(
                state(order[j]) in ("bound", "none", "unschedulable", "gated") for j in range(i + 1, len(order)))

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
        self._sampler = ThroughputSampler(t0, self.measured_bound, self.progress, self._total_measured)
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
        from harness.api.dra_cel import CELCache
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


