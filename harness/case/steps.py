"""A case's `steps` (CASE_FORMAT.md, "Cases that unfold over time"): checked when the case loads,
then applied one by one to the simulated API server, whose watch events reach the scheduler as
its informers would deliver them."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from ..api.duration import parse_duration_ns
from ..errors import CaseError

# the step actions of the contract: on the cluster, and on the kube-scheduler processes
STEP_ACTIONS = ("create", "update", "delete", "advance", "fail", "expect")
REPLICA_ACTIONS = ("crash", "stop", "start", "partition", "clock")
STEP_EXPECT_KEYS = ("bindings", "preempted", "messages", "nominated", "queue", "attempts",
                    "lease", "boundBy", "decisions", "history")
QUEUE_STATES = ("active", "backoff", "unschedulable", "gated", "waiting", "bound")
# a `clock` step's rate: a faster clock fires its renewals and retries that much more often in
# virtual time (1000 times fast: every 2 ms), an infinite one would never let time pass
MIN_CLOCK_RATE, MAX_CLOCK_RATE = 0.001, 1000

def _describe(v: Any) -> str:
    from ..api.field_checks import _describe as describe

    return describe(v)


def parse_duration(text: Any) -> float:
    """time.ParseDuration, in seconds (harness/api/duration.py). Raises ValueError."""
    if not isinstance(text, str):
        raise ValueError(f"a duration is a string such as 30s or 5m, not {text!r}")
    return parse_duration_ns(text) / 1e9


@dataclass
class Step:
    """One step: its index in `steps`, its action and its value (checked)."""

    index: int
    action: str
    value: Any
    seconds: float = 0.0  # advance

    @property
    def key(self) -> str:
        return f"steps[{self.index}].{self.action}"


def parse_steps(raw: Any, path: str) -> List[Step]:
    """Check every step's shape (the objects themselves are checked when the step runs, as the
    API server would check them)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise CaseError("steps must be a list", file=path, key="steps")
    out: List[Step] = []
    for i, item in enumerate(raw):
        key = f"steps[{i}]"
        if not isinstance(item, dict) or len(item) != 1:
            what = "an empty mapping" if item == {} else (
                f"{len(item)} keys ({', '.join(map(str, item))})" if isinstance(item, dict) else type(item).__name__)
            raise CaseError(f"a step is a mapping with exactly one key (one of {', '.join(STEP_ACTIONS)}), "
                            f"not {what}", file=path, key=key)
        action, value = next(iter(item.items()))
        if action not in STEP_ACTIONS + REPLICA_ACTIONS:
            raise CaseError(f'unknown step "{action}" (one of {", ".join(STEP_ACTIONS + REPLICA_ACTIONS)})',
                            file=path, key=key)
        step = Step(i, action, value)
        _check_step(step, path)
        out.append(step)
    return out


def _check_step(step: Step, path: str) -> None:
    key, v = step.key, step.value
    if step.action in ("create", "update"):
        if not isinstance(v, list) or not v:
            raise CaseError("a non-empty list of objects", file=path, key=key)
        for j, obj in enumerate(v):
            if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str) or not obj.get("kind"):
                raise CaseError("an object with a kind", file=path, key=f"{key}[{j}]")
            md = obj.get("metadata")
            if not isinstance(md, dict) or not isinstance(md.get("name"), str) or not md.get("name"):
                raise CaseError("metadata.name is required", file=path, key=f"{key}[{j}].metadata.name")
            if md.get("namespace") is not None and not isinstance(md["namespace"], str):
                raise CaseError(f"must be a string, got {_describe(md['namespace'])}", file=path,
                                key=f"{key}[{j}].metadata.namespace")
    elif step.action == "delete":
        if not isinstance(v, list) or not v:
            raise CaseError("a non-empty list of {kind, name[, namespace]}", file=path, key=key)
        for j, ref in enumerate(v):
            if not isinstance(ref, dict) or not isinstance(ref.get("kind"), str) or not isinstance(ref.get("name"), str):
                raise CaseError("each entry is {kind, name[, namespace]}", file=path, key=f"{key}[{j}]")
            extra = sorted(map(str, set(ref) - {"kind", "name", "namespace", "apiVersion"}))
            if extra:
                raise CaseError(f'unknown key "{extra[0][:60]}"', file=path, key=f"{key}[{j}]")
            for k in ("namespace", "apiVersion"):
                if ref.get(k) is not None and not isinstance(ref[k], str):
                    raise CaseError(f"must be a string, got {_describe(ref[k])}", file=path, key=f"{key}[{j}].{k}")
    elif step.action == "advance":
        try:
            step.seconds = parse_duration(v)
        except ValueError as e:
            raise CaseError(str(e), file=path, key=key) from None
        if step.seconds < 0:
            raise CaseError(f'virtual time only moves forward: "{v}"', file=path, key=key)
    elif step.action == "fail":
        if not isinstance(v, dict) or set(v) != {"bind"}:
            raise CaseError("fail takes {bind: [pod, ...]}", file=path, key=key)
        pods = v["bind"]
        if not isinstance(pods, list) or not pods or not all(isinstance(p, str) and p for p in pods):
            raise CaseError("a non-empty list of pod references", file=path, key=f"{key}.bind")
    elif step.action == "expect":
        check_expect(v, path, key, in_step=True)
    elif step.action in ("crash", "stop", "start"):
        if not isinstance(v, str) or not v:
            raise CaseError("a replica name (scheduler-0, scheduler-1, ...)", file=path, key=key)
    elif step.action == "partition":
        if not isinstance(v, dict) or set(v) != {"replica", "for"} or not isinstance(v["replica"], str):
            raise CaseError("partition takes {replica: scheduler-N, for: <duration>}", file=path, key=key)
        try:
            step.seconds = parse_duration(v["for"])
        except ValueError as e:
            raise CaseError(str(e), file=path, key=f"{key}.for") from None
        if step.seconds <= 0:
            raise CaseError(f'a partition lasts a positive duration, not "{v["for"]}"', file=path, key=f"{key}.for")
    elif step.action == "clock":
        if not isinstance(v, dict) or set(v) != {"replica", "rate"} or not isinstance(v["replica"], str):
            raise CaseError("clock takes {replica: scheduler-N, rate: <number>}", file=path, key=key)
        rate = v["rate"]
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) \
                or not MIN_CLOCK_RATE <= rate <= MAX_CLOCK_RATE:
            raise CaseError(f"a clock rate is a number from {MIN_CLOCK_RATE} to {MAX_CLOCK_RATE} (times as "
                            f"fast as the other clocks), not {_describe(rate)}", file=path, key=f"{key}.rate")


def step_replica(step: Step) -> Optional[str]:
    """The replica a process step names."""
    if step.action in ("crash", "stop", "start"):
        return step.value
    if step.action in ("partition", "clock"):
        return step.value["replica"]
    return None


def check_replicas(steps: List[Step], replicas: int, path: str, expect: Any = None) -> None:
    """Process steps name one of the case's replicas, and so do the expectations `lease.holder`
    and `boundBy` (top level and in steps). (Whether it runs is known only when the step runs: a
    replica that loses the Lease exits by itself.)"""
    names = [f"scheduler-{i}" for i in range(replicas)]
    for step in steps:
        r = step_replica(step)
        if r is not None and r not in names:
            raise CaseError(f"no replica {r} (the case has {', '.join(names)})", file=path, key=step.key)
        if step.action == "expect":
            _expect_replicas(step.value, names, path, step.key)
    if isinstance(expect, dict):
        _expect_replicas(expect, names, path, "expect")


def _expect_replicas(v: Any, names: List[str], path: str, key: str) -> None:
    if not isinstance(v, dict):
        return
    lease = v.get("lease")
    holder = lease.get("holder") if isinstance(lease, dict) else None
    if isinstance(holder, str) and holder not in names:
        raise CaseError(f"no replica {holder[:60]} (the case has {', '.join(names)})", file=path,
                        key=f"{key}.lease.holder")
    for ref, want in (v.get("boundBy") or {}).items() if isinstance(v.get("boundBy"), dict) else ():
        if isinstance(want, str) and want not in names:
            raise CaseError(f"no replica {want[:60]} (the case has {', '.join(names)})", file=path,
                            key=f"{key}.boundBy.{ref}")


def check_expect(v: Any, path: str, key: str, in_step: bool) -> None:
    """The shape of an `expect` mapping (the top-level one is also checked by the JSON Schema)."""
    if not isinstance(v, dict):
        raise CaseError("expect is a mapping", file=path, key=key)
    for k in v:
        if k not in STEP_EXPECT_KEYS:
            raise CaseError(f'unknown key "{str(k)[:60]}" (one of {", ".join(STEP_EXPECT_KEYS)})', file=path, key=key)
    for k in ("bindings", "messages", "nominated", "queue", "attempts", "boundBy"):
        if k in v and not isinstance(v[k], dict):
            raise CaseError("a mapping of pod references", file=path, key=f"{key}.{k}")
        for ref in v.get(k) or {}:
            if not isinstance(ref, str) or not ref:
                raise CaseError(f"a pod reference is a name or namespace/name string, got {_describe(ref)}",
                                file=path, key=f"{key}.{k}")
    for ref, want in (v.get("bindings") or {}).items():
        ok = want is None or (isinstance(want, str) and want) or (
            isinstance(want, list) and want and all(isinstance(w, str) and w for w in want))
        if not ok:
            raise CaseError("a node name, a list of node names or null", file=path, key=f"{key}.bindings.{ref}")
    if "preempted" in v and not (isinstance(v["preempted"], list) and all(isinstance(p, str) for p in v["preempted"])):
        raise CaseError("a list of pod references", file=path, key=f"{key}.preempted")
    for ref, want in (v.get("messages") or {}).items():
        if not isinstance(want, str):
            raise CaseError("a string", file=path, key=f"{key}.messages.{ref}")
    for ref, want in (v.get("nominated") or {}).items():
        if want is not None and not isinstance(want, str):
            raise CaseError("a node name or null", file=path, key=f"{key}.nominated.{ref}")
    for ref, want in (v.get("queue") or {}).items():
        if want not in QUEUE_STATES:
            raise CaseError(f"one of {', '.join(QUEUE_STATES)}, not {want!r}", file=path, key=f"{key}.queue.{ref}")
    for ref, want in (v.get("attempts") or {}).items():
        if not isinstance(want, int) or isinstance(want, bool) or want < 0:
            raise CaseError(f"a count of attempts (0 or more), not {want!r}", file=path, key=f"{key}.attempts.{ref}")
    if "lease" in v:
        lease = v["lease"]
        if not isinstance(lease, dict) or not lease or set(lease) - {"holder", "transitions"}:
            raise CaseError("lease is {holder, transitions} (either or both)", file=path, key=f"{key}.lease")
        if "holder" in lease and lease["holder"] is not None and not isinstance(lease["holder"], str):
            raise CaseError("a replica name or null", file=path, key=f"{key}.lease.holder")
        t = lease.get("transitions", 0)
        if not isinstance(t, int) or isinstance(t, bool) or t < 0:
            raise CaseError("a count (0 or more)", file=path, key=f"{key}.lease.transitions")
    for ref, want in (v.get("boundBy") or {}).items():
        if not isinstance(want, str):
            raise CaseError("a replica name", file=path, key=f"{key}.boundBy.{ref}")
    if "decisions" in v or "history" in v:
        from .decisions import check_shape

        check_shape(v, path, key)


def _hashable_ref(obj: Dict[str, Any]) -> bool:
    md = obj["metadata"]
    return (isinstance(obj["kind"], str) and isinstance(md.get("name"), str)
            and isinstance(md.get("namespace") or "", str))


def object_ref(obj: Dict[str, Any], namespaced: bool) -> tuple:
    md = obj.get("metadata") or {}
    ns = (md.get("namespace") or "default") if namespaced else ""
    return obj["kind"], ns, md["name"]


def carry_over_update(new: Dict[str, Any], old_raw: Dict[str, Any]) -> Dict[str, Any]:
    """What an update (PUT) of a stored object keeps from it: uid, creationTimestamp, the
    creation order, and its status when the update has none."""
    new = copy.deepcopy(new)
    md = new.setdefault("metadata", {})
    old_md = old_raw.get("metadata") or {}
    for k in ("uid", "creationTimestamp", "x-creationIndex"):
        if k in old_md:
            md[k] = old_md[k]
    if "namespace" not in md and old_md.get("namespace"):
        md["namespace"] = old_md["namespace"]
    if "status" not in new and "status" in old_raw:
        new["status"] = copy.deepcopy(old_raw["status"])
    return new


def check_references(steps: List[Step], cluster: List[Dict[str, Any]], pods: List[Dict[str, Any]],
                     namespaced_kinds, path: str) -> None:
    """Objects that steps update or delete exist at that point, and objects they create do not
    yet (objects deleted by the scheduler itself, preempted pods, are found when the step runs)."""
    if not steps:
        return  # (a big cluster's objects are not gathered for nothing)

    def ref(obj: Dict[str, Any]) -> tuple:
        return object_ref(obj, obj.get("kind") in namespaced_kinds)

    def show(r: tuple) -> str:
        return f'{r[0]} "{r[1] + "/" if r[1] else ""}{r[2]}"'

    live = {ref(o) for o in list(cluster) + list(pods) if isinstance(o, dict) and o.get("kind")
            and isinstance(o.get("metadata"), dict) and o["metadata"].get("name")
            and _hashable_ref(o)}  # an object with a malformed name is refused when admitted
    # the built-in PriorityClasses exist from the API server's start (apiserver.system_priority_classes)
    live |= {("PriorityClass", "", "system-node-critical"), ("PriorityClass", "", "system-cluster-critical")}
    every_pod = {r for r in live if r[0] == "Pod"}
    every_pod |= {ref(o) for st in steps if st.action == "create" for o in st.value
                  if o.get("kind") == "Pod" and _hashable_ref(o)}
    for step in steps:
        if step.action == "create":
            for j, obj in enumerate(step.value):
                r = ref(obj)
                if r in live:
                    raise CaseError(f"{show(r)} already exists", file=path, key=f"{step.key}[{j}]")
                pc = (obj.get("spec") or {}).get("priorityClassName") if obj.get("kind") == "Pod" and isinstance(
                    obj.get("spec"), dict) else None
                if isinstance(pc, str) and pc and ("PriorityClass", "", pc) not in live:
                    # the API server's Priority admission, as it admits the pod when the step runs
                    raise CaseError(f"no PriorityClass with name {pc[:80]} was found", file=path,
                                    key=f"{step.key}[{j}].spec.priorityClassName")
                live.add(r)
        elif step.action == "update":
            for j, obj in enumerate(step.value):
                r = ref(obj)
                if r not in live:
                    raise CaseError(f"no {show(r)} to update", file=path, key=f"{step.key}[{j}]")
        elif step.action == "fail":
            # the pod may be created by a later step: any pod of the case
            for j, pod_ref in enumerate(step.value["bind"]):
                ns, _, name = pod_ref.rpartition("/")
                r = ("Pod", ns or "default", name)
                if r not in every_pod:
                    raise CaseError(f"no {show(r)} in the case", file=path, key=f"{step.key}.bind[{j}]")
        elif step.action == "delete":
            for j, d in enumerate(step.value):
                r = (d["kind"], (d.get("namespace") or "default") if d["kind"] in namespaced_kinds else "", d["name"])
                if r not in live and d["kind"] != "Lease":  # the scheduler's Lease is found when the step runs
                    raise CaseError(f"no {show(r)} to delete", file=path, key=f"{step.key}[{j}]")
                live.discard(r)


__all__ = ["Step", "parse_steps", "parse_duration", "check_expect", "check_references", "check_replicas",
           "step_replica", "STEP_ACTIONS", "REPLICA_ACTIONS", "QUEUE_STATES"]
