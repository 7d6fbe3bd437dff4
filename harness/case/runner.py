"""Running a case: the cluster, the scheduler until quiet, its steps, and the comparison with
`expect` (at each `expect` step and at the end)."""

from __future__ import annotations

import contextlib

import os
from dataclasses import dataclass, field
from typing import AbstractSet, Any, Dict, List, Optional, Union

import copy

from ..api.group_kind import store_kind
from ..api.object_update import validate_object_update
from .pod_groups import pod_group_outcomes
from ..api.object_validation import SYSTEM_PRIORITY_CLASSES
from ..api.objects import KubeObject, Pod, make_object
from ..api.pod_update import validate_pod_update
from ..api.valid_memo import remembering
from ..cluster import Cluster
from ..config import loader as config_loader
from ..config.defaults import set_defaults
from ..errors import CaseError, UserError
from ..framework import parallelize
from ..gcpause import collector_paused, thaw
from ..trust import reading_for
from ..framework.custom_resources import custom_resources
from ..framework.registry import build_registry, default_registry
from ..scheduler.scheduler import Scheduler, terminated
from .apiserver import ApiServerDefaults
from .checks import (check_cluster, check_decision_names, check_expect, check_step_changes, check_step_objects,
                     has_decisions)
from .decisions import DecisionCheck, history
from .failures import Failure, failure_json, show
from .controllers import claim_outcomes, start_controllers
from .loader import Case, load_case, plugin_modules
from ..leaderelection.kube_scheduler import check_leader_elector_config
from .replicas import World
from .steps import Step, carry_over_update


@dataclass
class Observation:
    """The state of the case's pods at one instant (a step, or the end of the run)."""

    time: float = 0.0
    bindings: Dict[str, Optional[str]] = field(default_factory=dict)
    preempted: List[str] = field(default_factory=list)
    nominated: Dict[str, Optional[str]] = field(default_factory=dict)
    messages: Dict[str, str] = field(default_factory=dict)
    queue: Dict[str, str] = field(default_factory=dict)
    attempts: Dict[str, int] = field(default_factory=dict)
    lease: Optional[Dict[str, Any]] = None
    bound_by: Optional[Dict[str, str]] = None

    def to_json(self) -> Dict[str, Any]:
        out = {"time": self.time, "bindings": self.bindings, "preempted": self.preempted,
               "nominated": self.nominated, "messages": self.messages, "queue": self.queue,
               "attempts": self.attempts}
        if self.lease is not None:
            out["lease"] = self.lease
            out["boundBy"] = self.bound_by or {}
        return out


@dataclass
class StepResult:
    index: int
    action: str
    observation: Observation

    def to_json(self) -> Dict[str, Any]:
        return {"index": self.index, "action": self.action, **self.observation.to_json()}


@dataclass
class CaseResult:
    case: Case
    passed: bool
    failures: List[str] = field(default_factory=list)
    bindings: Dict[str, Optional[str]] = field(default_factory=dict)
    preempted: List[str] = field(default_factory=list)
    nominated: Dict[str, Optional[str]] = field(default_factory=dict)
    messages: Dict[str, str] = field(default_factory=dict)
    scheduler: Any = None
    steps: List[StepResult] = field(default_factory=list)
    final: Optional[Observation] = None
    lease_history: Optional[List[Dict[str, Any]]] = None  # with replicas
    claims: Dict[str, Any] = field(default_factory=dict)  # DynamicResources' allocations
    coverage: Optional[Dict[str, Any]] = None  # extension points reached (`run --coverage`)
    pod_groups: Dict[str, Any] = field(default_factory=dict)  # the Workload API's groups (pod_groups.py)

    def to_json(self) -> Dict[str, Any]:
        out = {"case": self.case.name, "file": self.case.path,
               "kubernetesVersion": self.case.features.version.release,
               "featureGates": dict(sorted(self.case.features.overrides.items())),
               "passed": self.passed, "bindings": self.bindings,
               "preempted": self.preempted, "nominated": self.nominated, "messages": self.messages,
               "failures": [failure_json(f) for f in self.failures]}
        if self.case.steps or self.lease_history is not None:
            out["time"] = self.final.time if self.final else 0.0
            out["queue"] = self.final.queue if self.final else {}
            out["attempts"] = self.final.attempts if self.final else {}
        if self.final is not None and self.final.lease is not None:
            out["lease"] = self.final.lease
            out["boundBy"] = self.final.bound_by or {}
        if self.lease_history is not None:
            out["leaseHistory"] = self.lease_history
        if self.claims:
            out["claims"] = self.claims
        if self.pod_groups:
            out["podGroups"] = self.pod_groups
        if self.case.steps:
            out["steps"] = [s.to_json() for s in self.steps]
        if self.coverage is not None:
            out["coverage"] = self.coverage
        if self.scheduler is not None:
            out["history"] = history(self.scheduler, list(self.scheduler.tracked_pods))
        return out


def pod_ref(ref: str) -> str:
    """`name` -> `default/name`; `namespace/name` unchanged."""
    return ref if "/" in ref else f"default/{ref}"


def extender_handlers(case: Case) -> Dict[str, Any]:
    """The case's `extenders`: urlPrefix -> the Python callable answering that extender (its
    module found in the case's tree, the callable marked @extender)."""
    from ..scheduler.extender import load_handler
    from .loader import extender_module

    out: Dict[str, Any] = {}
    for i, e in enumerate(case.extenders):
        attr, module = extender_module(e, i, case.path, case.tree)
        out[str(e.get("urlPrefix") or "")] = load_handler(module, attr, case.path, f"extenders[{i}].python")
    return out


class CaseRun:
    """One case being run: the simulated API server with the case's objects, the scheduler,
    and what the case did to them (steps)."""

    def __init__(self, case: Case, registry=None, explain: Union[bool, AbstractSet[str]] = False):
        # a big cluster's objects and cache at once (gcpause); the checks of the values its pods
        # share, once per value (api/valid_memo.py)
        with collector_paused(freeze=True), remembering():
            self._build(case, registry, explain)

    def _build(self, case: Case, registry, explain: Union[bool, AbstractSet[str]]) -> None:
        self.case = case
        if registry is None:
            modules = plugin_modules(case.plugins, case.path, case.tree)
            registry = build_registry(modules) if modules else default_registry()
        features = self.features = case.features
        if case.config is None:
            cfg = set_defaults({}, registry, features)
        elif isinstance(case.config, str):
            path = case.config_path
            if not os.path.exists(path):
                raise CaseError(f"config file {path} does not exist", file=case.path, key="config")
            with reading_for(case.tree, case.path):  # the files it names stay in the case's tree
                cfg = config_loader.load_config_file(path, registry, features)
        else:
            with reading_for(case.tree, case.path):
                cfg = config_loader.load_config_data(case.config, registry, source=f"{case.path}: config",
                                                     features=features)
        self.config = cfg
        self.api = ApiServerDefaults(case.cluster, case.path, features, custom_resources(registry))
        self.cluster = Cluster(features)
        self.seen = set()
        self.index = 0
        self.preempted: List[str] = []  # pods deleted by the scheduler (preemption)
        self._deleting = False  # a `delete` step is deleting (not preemption)
        keys = case.cluster_keys if len(case.cluster_keys) == len(case.cluster) else [
            f"cluster[{i}]" for i in range(len(case.cluster))]
        for i, obj in enumerate(case.cluster):
            self.cluster.create(self._admit(obj, keys[i]), notify=False)
        check_cluster(case, keys)
        # pods the case reports on: pending pods of `cluster` (queued first), then `pods`, then
        # pending pods created by steps
        self.tracked_pods = [o.key for o in self.cluster.list("Pod") if not o.node_name and not terminated(o)]
        source = case.config_path or case.path
        handlers = extender_handlers(case)
        self.world: Optional[World] = None
        if case.has_processes:
            self.world = World(cfg, registry, self.cluster, case.replicas, case.seed, source, features)
            self.world.explain = explain
            self.world.case_path = case.path
            self.world.tracked_pods = self.tracked_pods
            self.world.extender_handlers = handlers
            self.world.start_all()
            self.sched = None
        else:
            # kube-scheduler builds its elector at start: NewLeaderElector refuses bad timings
            check_leader_elector_config(dict(cfg.get("leaderElection") or {}), source)
            self.sched = Scheduler(cfg, registry, self.cluster, seed=case.seed, source=source,
                                   features=features, extender_handlers=handlers)
            self.sched.explain = explain
            self.sched.tracked_pods = self.tracked_pods
            self.sched.start()
        start_controllers(self.cluster)  # the resourceclaim controller, as in a cluster
        self.cluster.subscribe(self._on_event)
        for i, obj in enumerate(case.pods):
            o = self._admit(obj, f"pods[{i}]")
            self.tracked_pods.append(o.key)
            self.cluster.create(o)
        check_expect(case)
        check_decision_names(case, self.frameworks(registry, source),
                             extenders=any((e or {}).get("filterVerb") for e in cfg.get("extenders") or []))
        check_step_objects(case)
        check_step_changes(case)

    def frameworks(self, registry, source: str) -> List[Any]:
        """The profiles' frameworks (each replica has its own; their plugins are the same)."""
        if self.sched is not None:
            return list(self.sched.profiles.values())
        from ..framework.runtime import Framework

        return [Framework(prof, registry, source=source, features=self.features)
                for prof in self.config["profiles"]]

    @property
    def engine(self):
        """What runs: the scheduler, or the world of scheduler processes."""
        return self.world if self.world is not None else self.sched

    def _admit(self, obj: Dict[str, Any], key: str) -> KubeObject:
        """The API server's defaulting of a new object (CASE_FORMAT.md), and its uniqueness."""
        self.api.default_object(obj, key, self.index)
        self.index += 1
        o = make_object(obj)
        k = (store_kind(o.kind, o.api_version), o.namespace, o.name)  # a kind in its API group
        if k in self.seen:
            raise CaseError(f"duplicate {o.kind} {o.key}", file=self.case.path, key=key)
        self.seen.add(k)
        if o.kind == "PriorityClass":
            self.api.add_priority_class(obj)
        return o

    def _on_event(self, kind: str, old, new) -> None:
        if kind == "Pod" and new is None and old is not None:
            if not self._deleting:
                self.preempted.append(old.key)

    def preempted_keys(self) -> List[str]:
        """The pods preemption deleted, and those it sent a DELETE while their deletion had
        already started (v1.34.9's PreemptPod does), sorted."""
        return sorted(set(self.preempted) | set(self.cluster.terminating_deletes))

    # ------------------------------------------------------------------------------------------
    def run(self) -> None:
        self.engine.run(None)

    def apply(self, step: Step) -> None:
        """Run one step, then let the scheduler run until quiet."""
        getattr(self, f"_step_{step.action}")(step)
        if step.action not in ("expect", "fail"):
            if step.action == "advance":
                self.engine.advance(step.seconds)
            else:
                self.engine.run(None)

    def now(self) -> float:
        return self.world.now() if self.world is not None else self.sched.clock.now()

    def queue_state(self, pod) -> str:
        return self.engine.queue_state(pod)

    def attempts(self, pod) -> int:
        if self.world is not None:
            return self.world.attempts(pod)
        return self.sched.attempts.get(pod.uid, 0)

    # process steps (replicas) ---------------------------------------------------------------
    def _step_crash(self, step: Step) -> None:
        self.world.crash(step.value, step.key)

    def _step_stop(self, step: Step) -> None:
        self.world.stop(step.value, step.key)

    def _step_start(self, step: Step) -> None:
        self.world.start(step.value, step.key)

    def _step_partition(self, step: Step) -> None:
        self.world.partition(step.value["replica"], step.seconds, step.key)

    def _step_clock(self, step: Step) -> None:
        self.world.set_rate(step.value["replica"], float(step.value["rate"]), step.key)

    def _step_create(self, step: Step) -> None:
        for j, obj in enumerate(step.value):
            if obj.get("kind") == "PriorityClass":
                self.api.admit_priority_class(obj, f"{step.key}[{j}]", None)
            o = self._admit(copy.deepcopy(obj), f"{step.key}[{j}]")
            if o.kind == "Pod" and not o.node_name:
                self.tracked_pods.append(o.key)
            self.cluster.create(o)

    def _step_update(self, step: Step) -> None:
        for j, obj in enumerate(step.value):
            key = f"{step.key}[{j}]"
            md = obj.get("metadata") or {}
            kind, name = obj["kind"], md["name"]
            ns = self.api.reference_namespace(kind, md.get("namespace"))
            old = self.cluster.get(store_kind(kind, obj.get("apiVersion") or ""), ns, name)
            if old is None:
                raise CaseError(f'no {kind} "{ns + "/" if ns else ""}{name}" to update', file=self.case.path, key=key)
            raw = carry_over_update(obj, old.raw)
            self.api.default_object(raw, key, raw["metadata"].get("x-creationIndex", self.index), old=old.raw)
            if kind == "Pod":
                err = validate_pod_update(raw.get("spec") or {}, old.raw.get("spec") or {}, self.case.features)
            else:
                err = validate_object_update(raw, old.raw)
            if err is not None:
                raise CaseError(f"the API server refuses this update: {err[1]}", file=self.case.path,
                                key=f"{key}.{err[0]}")
            if kind == "PriorityClass":
                self.api.admit_priority_class(raw, key, old.raw)
                self.api.forget_priority_class(name)
                self.api.add_priority_class(raw)
            self.cluster.update(make_object(raw))

    def _step_delete(self, step: Step) -> None:
        for j, ref in enumerate(step.value):
            kind = ref["kind"]
            ns = self.api.reference_namespace(kind, ref.get("namespace"))
            if kind == "PriorityClass" and ref["name"] in SYSTEM_PRIORITY_CLASSES:
                raise CaseError(f'priorityclasses.scheduling.k8s.io "{ref["name"]}" is forbidden: this is '
                                f'a system priority class and cannot be deleted', file=self.case.path,
                                key=f"{step.key}[{j}]")
            obj = self.cluster.get(store_kind(kind, ref.get("apiVersion") or ""), ns, ref["name"])
            if obj is None:
                raise CaseError(f'no {kind} "{ns + "/" if ns else ""}{ref["name"]}" to delete',
                                file=self.case.path, key=f"{step.key}[{j}]")
            self._deleting = True
            try:
                self.cluster.delete(obj)
            finally:
                self._deleting = False
            if kind == "PriorityClass":
                self.api.forget_priority_class(obj.name)
            self.seen.discard((store_kind(obj.kind, obj.api_version), obj.namespace, obj.name))

    def _step_advance(self, step: Step) -> None:
        pass  # the time passes in apply()

    def _step_fail(self, step: Step) -> None:
        for ref in step.value["bind"]:
            key = pod_ref(ref)
            self.cluster.failing_binds[key] = self.cluster.failing_binds.get(key, 0) + 1

    def _step_expect(self, step: Step) -> None:
        pass  # checked by run_case against the observation

    # ------------------------------------------------------------------------------------------
    def observe(self) -> Observation:
        obs = Observation(time=self.now(), preempted=self.preempted_keys())
        pods = {p.key: p for p in self.cluster.list("Pod")}
        obs.lease = self.lease()
        obs.bound_by = self.bound_by()
        for key in self.tracked_pods:
            p = pods.get(key)
            obs.bindings[key] = p.node_name or None if p is not None else None
            if p is None:
                continue
            if p.nominated_node_name:
                obs.nominated[key] = p.nominated_node_name
            msg = _pod_condition_message(p)
            if msg and not p.node_name:
                obs.messages[key] = msg
            obs.queue[key] = self.queue_state(p)
            obs.attempts[key] = self.attempts(p)
        return obs

    def check(self, exp: Dict[str, Any], where: str) -> List[str]:
        """The failures of an `expect` mapping against the state now; `where` prefixes the
        keys in errors and failures (`expect`, `steps[3].expect`)."""
        engine = self.engine
        failures: List[str] = []
        prefix = "" if where == "expect" else f"{where.rsplit('.', 1)[0]}: "
        pods = {p.key: p for p in self.cluster.list("Pod")}
        preempted = self.preempted_keys()

        def known(ref: str, k: str) -> str:
            key = pod_ref(ref)
            if key not in pods and key not in preempted and key not in self.tracked_pods:
                raise CaseError(f"no pod {key} in the case", file=self.case.path, key=f"{where}.{k}.{ref}")
            return key

        step = None if where == "expect" else where.rsplit(".", 1)[0]

        def fail(text: str, pod: Optional[str], fld: str, want: Any, got: Any) -> None:
            failures.append(Failure(prefix + text, pod=pod, field=fld, expected=want, got=got, step=step))

        for ref, want in (exp.get("bindings") or {}).items():
            key = known(ref, "bindings")
            got = pods[key].node_name or None if key in pods else None
            ok = (got is None) if want is None else (got in want if isinstance(want, list) else got == want)
            if not ok:
                why = (_pod_condition_message(pods[key]) if key in pods else "") or sched_error(engine, key)
                fail(f"{key}: expected {_fmt(want)}, got {got or 'unbound'}" + (f" ({why})" if why and got is None else ""),
                     key, "bindings", want, got)
        if "preempted" in exp:
            want = sorted(pod_ref(r) for r in exp["preempted"] or [])
            if want != preempted:
                fail(f"preempted: expected {show(want)}, got {show(preempted)}", None, "preempted", want, preempted)
        for ref, sub in (exp.get("messages") or {}).items():
            key = known(ref, "messages")
            got = _pod_condition_message(pods[key]) if key in pods else ""
            if sub not in got:
                fail(f'{key}: message "{got}" does not contain "{sub}"', key, "messages", sub, got)
        for ref, want in (exp.get("nominated") or {}).items():
            key = known(ref, "nominated")
            got = pods[key].nominated_node_name if key in pods else ""
            if (got or None) != want:
                fail(f"{key}: nominatedNodeName expected {show(want)}, got {show(got or None)}", key, "nominated",
                     want, got or None)
        for ref, want in (exp.get("queue") or {}).items():
            key = known(ref, "queue")
            got = self.queue_state(pods[key]) if key in pods else "deleted"
            if got != want:
                fail(f"{key}: queue expected {want}, got {got}", key, "queue", want, got)
        for ref, want in (exp.get("attempts") or {}).items():
            key = known(ref, "attempts")
            got = self.attempts(pods[key]) if key in pods else 0
            if got != want:
                fail(f"{key}: attempts expected {want}, got {got}", key, "attempts", want, got)
        if "lease" in exp:
            lease = self.lease()
            for k, want in exp["lease"].items():
                if lease.get(k) != want:
                    fail(f"lease.{k}: expected {show(want)}, got {show(lease.get(k))}", None, f"lease.{k}", want,
                         lease.get(k))
        for ref, want in (exp.get("boundBy") or {}).items():
            key = known(ref, "boundBy")
            got = self.bound_by().get(key)
            if got != want:
                fail(f"{key}: boundBy expected {show(want)}, got {show(got)}", key, "boundBy", want, got)
        if "decisions" in exp or "history" in exp:
            dc = DecisionCheck(engine, prefix)
            dc.decisions(exp.get("decisions") or {})
            dc.history(exp.get("history") or {})
            failures.extend(dc.failures)
        return failures

    def bound_by(self) -> Dict[str, str]:
        """pod -> the replica whose binding the API server accepted. With one scheduler and no
        process steps: the tracked pods it bound (a pod created bound was bound by nobody)."""
        if self.world is not None:
            return dict(sorted(self.world.bound_by.items()))
        pods = {p.key: p for p in self.cluster.list("Pod")}
        return {k: REPLICA_NAME for k in sorted(self.tracked_pods)
                if k in pods and pods[k].node_name and self.sched.attempts.get(pods[k].uid, 0)}

    def lease(self) -> Dict[str, Any]:
        """The Lease record as the API server stores it. With one replica and no process steps,
        the replica acquires the Lease at once when leaderElect is on (the default) and holds it
        for the whole run (harness/case/replicas.py runs the election otherwise)."""
        if self.world is not None:
            return self.world.lease()
        if (self.config.get("leaderElection") or {}).get("leaderElect", True):
            return {"holder": REPLICA_NAME, "transitions": 0}
        return {"holder": None, "transitions": 0}


REPLICA_NAME = "scheduler-0"


def build_scheduler(case: Case, registry=None) -> Scheduler:
    """The case's cluster and scheduler, started, before the first scheduling cycle."""
    try:
        return CaseRun(case, registry).sched
    finally:
        thaw()  # nothing of it runs here: its cycles may be collected as usual


def run_case(case_or_path, registry=None, explain: Union[bool, AbstractSet[str]] = False,
             hooks=None) -> CaseResult:
    """Run a case. `hooks` (bench): an object whose built(run) is called once the cluster and
    the scheduler are built, and ran(run) once the scheduler and the steps are done, before the
    final expectations are checked."""
    case = case_or_path if isinstance(case_or_path, Case) else load_case(case_or_path)
    with parallelize.case_scope(case.parallel) as opts:
        try:
            res = _run_case(case, registry, explain, hooks)
        finally:
            thaw()  # CaseRun froze what it built
        if opts is not None:
            res.failures.extend(opts.failures())
            if opts.coverage is not None:
                res.coverage = opts.coverage.to_json()
            res.passed = not res.failures
    return res


def _run_case(case: Case, registry, explain: Union[bool, AbstractSet[str]], hooks=None) -> CaseResult:
    run = CaseRun(case, registry, explain=True if has_decisions(case) else explain)
    if hooks is not None:
        hooks.built(run)
    with _naming(case.path, "pods"):  # the first run schedules the case's pods
        run.run()
    res = CaseResult(case, True, scheduler=run.engine)
    for step in case.steps:
        with _naming(case.path, step.key):
            run.apply(step)
        if step.action == "expect":
            res.failures.extend(run.check(step.value, f"{step.key}"))
        res.steps.append(StepResult(step.index, step.action, run.observe()))
    if hooks is not None:
        hooks.ran(run)
    res.failures.extend(run.check(case.expect, "expect"))
    for key, n in sorted(run.cluster.failing_binds.items()):
        res.failures.append(f"{key}: {n} injected binding failure(s) of a fail step never used "
                            f"(the pod was not bound again)")
    obs = run.observe()
    res.final = obs
    res.claims = claim_outcomes(run.cluster)
    res.pod_groups = pod_group_outcomes(run.cluster, case.features, run.queue_state,
                                        run.sched.group_preemptions if run.sched is not None else ())
    if run.world is not None:
        res.lease_history = run.world.lease_history()
    res.bindings, res.preempted, res.nominated, res.messages = obs.bindings, obs.preempted, obs.nominated, obs.messages
    res.passed = not res.failures
    return res


@contextlib.contextmanager
def _naming(path, key: str):
    """What running a step found (a run that would not end) names the case file and the step."""
    try:
        yield
    except UserError as e:
        if e.file:
            raise
        raise UserError(e.detail, file=path, key=key) from None


def _pod_condition_message(pod: Pod) -> str:
    for c in (pod.status.get("conditions") or []):
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("message", "")
    return ""


def sched_error(sched: Scheduler, key: str) -> str:
    recs = sched.records.get(key) or []
    return recs[-1].message if recs else ""


def _fmt(want) -> str:
    if want is None:
        return "unbound"
    if isinstance(want, list):
        return "one of " + ", ".join(want)
    return want
