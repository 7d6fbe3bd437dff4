"""Running a case: the cluster, the scheduler until quiet, and the comparison with `expect`."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..api.objects import Pod, make_object
from ..cluster import Cluster
from ..config import loader as config_loader
from ..config.defaults import set_defaults
from ..errors import CaseError
from ..framework.registry import build_registry, default_registry
from ..scheduler.scheduler import Scheduler
from .apiserver import ApiServerDefaults
from .controllers import claim_outcomes, start_controllers
from .loader import Case, load_case


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
    claims: Dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> Dict[str, Any]:
        out = {"case": self.case.name, "passed": self.passed, "bindings": self.bindings,
               "preempted": self.preempted, "nominated": self.nominated, "messages": self.messages,
               "failures": self.failures}
        if self.claims:
            out["claims"] = self.claims
        return out


def pod_ref(ref: str) -> str:
    """`name` -> `default/name`; `namespace/name` unchanged."""
    return ref if "/" in ref else f"default/{ref}"


def build_scheduler(case: Case, registry=None) -> Scheduler:
    registry = registry or (build_registry(case.plugins) if case.plugins else default_registry())
    if case.config is None:
        cfg = set_defaults({}, registry)
    elif isinstance(case.config, str):
        path = case.config_path
        if not os.path.exists(path):
            raise CaseError(f"config file {path} does not exist", file=case.path, key="config")
        cfg = config_loader.load_config_file(path, registry)
    else:
        cfg = config_loader.load_config_data(case.config, registry, source=f"{case.path}: config")
    api = ApiServerDefaults(case.cluster, case.path)
    cluster = Cluster()
    seen = set()
    index = 0
    for i, obj in enumerate(case.cluster):
        api.default_object(obj, f"cluster[{i}]", index)
        index += 1
        o = make_object(obj)
        k = (o.kind, o.namespace, o.name)
        if k in seen:
            raise CaseError(f"duplicate {o.kind} {o.key}", file=case.path, key=f"cluster[{i}]")
        seen.add(k)
        cluster.create(o, notify=False)
    tracked = [o.key for o in cluster.list("Pod") if not o.node_name]  # queued first
    sched = Scheduler(cfg, registry, cluster, seed=case.seed, source=case.config_path or case.path)
    sched.start()
    start_controllers(cluster)
    for i, obj in enumerate(case.pods):
        api.default_object(obj, f"pods[{i}]", index)
        index += 1
        o = make_object(obj)
        k = (o.kind, o.namespace, o.name)
        if k in seen:
            raise CaseError(f"duplicate Pod {o.key}", file=case.path, key=f"pods[{i}]")
        seen.add(k)
        cluster.create(o)
    sched.tracked_pods = tracked + [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in case.pods]
    return sched


def run_case(case_or_path, registry=None, explain: bool = False) -> CaseResult:
    case = case_or_path if isinstance(case_or_path, Case) else load_case(case_or_path)
    deleted: List[str] = []
    sched = build_scheduler(case, registry)
    sched.explain = explain
    sched.cluster.subscribe(lambda kind, old, new: deleted.append(old.key)
                            if kind == "Pod" and new is None and old is not None else None)
    sched.run_until_quiet()
    return compare(case, sched, deleted)


def _pod_condition_message(pod: Pod) -> str:
    for c in (pod.status.get("conditions") or []):
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("message", "")
    return ""


def compare(case: Case, sched: Scheduler, deleted: List[str]) -> CaseResult:
    res = CaseResult(case, True, scheduler=sched)
    pods = {p.key: p for p in sched.cluster.list("Pod")}
    for key in sched.tracked_pods:
        p = pods.get(key)
        res.bindings[key] = p.node_name or None if p is not None else None
        if p is not None:
            if p.nominated_node_name:
                res.nominated[key] = p.nominated_node_name
            msg = _pod_condition_message(p)
            if msg and not p.node_name:
                res.messages[key] = msg
    res.preempted = sorted(deleted)
    res.claims = claim_outcomes(sched.cluster)
    exp = case.expect
    for ref, want in (exp.get("bindings") or {}).items():
        key = pod_ref(ref)
        if key not in pods and key not in deleted:
            raise CaseError(f"no pod {key} in the case", file=case.path, key=f"expect.bindings.{ref}")
        got = pods[key].node_name or None if key in pods else None
        ok = (got is None) if want is None else (got in want if isinstance(want, list) else got == want)
        if not ok:
            why = res.messages.get(key) or sched_error(sched, key)
            res.failures.append(f"{key}: expected {_fmt(want)}, got {got or 'unbound'}"
                                + (f" ({why})" if why and got is None else ""))
    if "preempted" in exp:
        want = sorted(pod_ref(r) for r in exp["preempted"] or [])
        if want != res.preempted:
            res.failures.append(f"preempted: expected {want}, got {res.preempted}")
    for ref, sub in (exp.get("messages") or {}).items():
        key = pod_ref(ref)
        got = _pod_condition_message(pods[key]) if key in pods else ""
        if sub not in got:
            res.failures.append(f"{key}: message {got!r} does not contain {sub!r}")
    for ref, want in (exp.get("nominated") or {}).items():
        key = pod_ref(ref)
        got = pods[key].nominated_node_name if key in pods else ""
        if (got or None) != want:
            res.failures.append(f"{key}: nominatedNodeName expected {want!r}, got {got or None!r}")
    res.passed = not res.failures
    return res


def sched_error(sched: Scheduler, key: str) -> str:
    recs = sched.records.get(key) or []
    return recs[-1].message if recs else ""


def _fmt(want) -> str:
    if want is None:
        return "unbound"
    if isinstance(want, list):
        return "one of " + ", ".join(want)
    return want
