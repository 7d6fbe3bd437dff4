"""The conformance rules: the framework's contract with a plugin, each checked on a world the
way kube-scheduler's integration tests exercise plugins. A rule appends Findings; a finding of
severity "note" is reported but does not fail the check."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..api.objects import Pod, make_object
from ..framework.cycle_state import CycleState
from ..framework.placement import Placement, PlacementScore, PodGroupAssignments, PodGroupInfo
from ..framework.runtime import MAX_NODE_SCORE, MIN_NODE_SCORE
from ..framework.status import Code, Status
from ..framework.types import (ClusterEvent, NodeToStatus, PodInfo, QueuedPodInfo,
                               QueueingHint)
from .subject import PROFILE, Subject, _fmt
from .world import Mutation, World, apply, mutations


@dataclass
class Finding:
    rule: str
    message: str
    severity: str = "error"  # "error" fails the check, "note" does not


@dataclass
class Context:
    """What a rule needs: the plugin, the registry it comes from, the world and the args."""

    name: str
    registry: Any
    world: World
    args: Optional[Dict[str, Any]] = None
    findings: List[Finding] = field(default_factory=list)
    checks: Dict[str, int] = field(default_factory=dict)  # rule -> situations checked
    _fresh: Dict[str, Subject] = field(default_factory=dict)

    def count(self, *rules: str) -> None:
        for r in rules:
            self.checks[r] = self.checks.get(r, 0) + 1

    def subject(self, world: Optional[World] = None) -> Subject:
        """The plugin over the world (this context's by default); every call of its hooks, by a
        rule or by the framework, is guarded (guard.Guard) and its problems become findings."""
        return Subject(self.name, self.registry, world or self.world, self.args, report=self.guarded)

    def guarded(self, rule: str, message: str) -> None:
        self.fail(rule, message)

    def fresh(self, key: str, world: World) -> Subject:
        """A subject over a changed world, built once per change."""
        s = self._fresh.get(key)
        if s is None:
            s = self._fresh[key] = self.subject(world)
        return s

    def fail(self, rule: str, message: str, severity: str = "error") -> None:
        f = Finding(rule, message, severity)
        if f not in self.findings:
            self.findings.append(f)


# ---------------------------------------------------------------------------------------------
# observations
# ---------------------------------------------------------------------------------------------
def fingerprint(s: Subject) -> Dict[str, Any]:
    """What the plugin says about every probe pod: its verdict and, where it scores, the scores
    of the nodes its Filter accepts."""
    out: Dict[str, Any] = {}
    for pod in s.probe_pods():
        v = s.verdict(pod)
        entry: Dict[str, Any] = {"verdict": v}
        if s.implements("score"):
            nodes = [ni for ni in s.nodes() if v.get(ni.name) == "ok"]
            if nodes:
                entry["scores"] = s.scores(pod, nodes)
        out[pod.key] = entry
    return out


_OPAQUE = ("Framework", "Scheduler", "Cluster", "Snapshot", "SchedulingQueue", "Cache")


def state_dump(obj: Any, depth: int = 0, seen: Optional[set] = None) -> Any:
    """A comparable picture of a plugin's own state (its attributes, recursively), leaving out the
    handle and what the framework owns."""
    if seen is None:
        seen = set()
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return obj
    if depth > 6:
        return "<deep>"
    if id(obj) in seen:
        return "<cycle>"
    t = type(obj).__name__
    if t in _OPAQUE or callable(obj) and not hasattr(obj, "__dict__"):
        return f"<{t}>"
    seen = seen | {id(obj)}
    if isinstance(obj, dict):
        return tuple(sorted(((repr(k), state_dump(v, depth + 1, seen)) for k, v in obj.items()), key=repr))
    if isinstance(obj, (list, tuple)):
        return tuple(state_dump(v, depth + 1, seen) for v in obj)
    if isinstance(obj, (set, frozenset)):
        return ("set",) + tuple(sorted((repr(state_dump(v, depth + 1, seen)) for v in obj)))
    attrs: Dict[str, Any] = {}
    if hasattr(obj, "__dict__"):
        attrs.update(vars(obj))
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()) or ():
            if hasattr(obj, slot):
                attrs[slot] = getattr(obj, slot)
    if not attrs:
        return f"<{t}>"
    return (t,) + tuple(sorted((k, state_dump(v, depth + 1, seen)) for k, v in attrs.items()
                               if k not in ("handle", "_handle", "fh", "args")))


def _diff(a: Dict[str, Any], b: Dict[str, Any]) -> str:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            return f"for pod {k}: {a.get(k)} became {b.get(k)}"
    return "its state changed"


# ---------------------------------------------------------------------------------------------
# Reserve / Unreserve
# ---------------------------------------------------------------------------------------------
def _reserve_targets(s: Subject) -> List[Tuple[Pod, CycleState, str]]:
    out = []
    for pod in s.probe_pods():
        state, feasible = s.prepared_state(pod)
        if feasible:
            out.append((pod, state, feasible[0].name))
    return out


def rule_reserve_symmetric(ctx: Context) -> Optional[str]:
    """Reserve then Unreserve leaves the plugin saying what it said before (Filter and Score for
    every pod): Unreserve undoes what Reserve claimed."""
    s0 = ctx.subject()
    if not (s0.implements("reserve") or s0.implements("unreserve")):
        return "not a Reserve plugin"
    for pod, _, node in _reserve_targets(s0):
        s = ctx.subject()
        pod = s.sched.cluster.get("Pod", pod.namespace, pod.name)
        base = fingerprint(s)
        state, _ = s.prepared_state(pod)
        assumed = pod.with_node(node)
        st = s.call("reserve", state, assumed, node) if s.implements("reserve") else None
        if st is not None and not st.is_success() and st.code != Code.Error:
            continue  # a rejecting Reserve: the framework unreserves, nothing was claimed
        if s.implements("unreserve"):
            s.call("unreserve", state, assumed, node)
        after = fingerprint(s)
        ctx.count("reserve-unreserve-symmetric")
        if after != base:
            ctx.fail("reserve-unreserve-symmetric",
                     f"Reserve then Unreserve of pod {pod.key} on {node} changed what the plugin "
                     f"says {_diff(base, after)}")
    return None


def rule_unreserve_idempotent(ctx: Context) -> Optional[str]:
    """Unreserve twice is Unreserve once (the plugin's own state and what it says), and
    Unreserve without Reserve changes nothing the plugin says."""
    s0 = ctx.subject()
    if not s0.implements("unreserve"):
        return "no Unreserve"
    for pod, _, node in _reserve_targets(s0):
        s = ctx.subject()
        pod = s.sched.cluster.get("Pod", pod.namespace, pod.name)
        base = fingerprint(s)
        state, _ = s.prepared_state(pod)
        assumed = pod.with_node(node)
        s.call("unreserve", state, assumed, node)
        after = fingerprint(s)
        if after != base:
            ctx.fail("unreserve-idempotent", f"Unreserve of pod {pod.key} on {node} without a Reserve "
                                             f"changed what the plugin says {_diff(base, after)}")
        if s.implements("reserve"):
            st = s.call("reserve", state, assumed, node)
            if st is not None and not st.is_success():
                continue
        s.call("unreserve", state, assumed, node)
        once, once_state = fingerprint(s), state_dump(s.plugin)
        s.call("unreserve", state, assumed, node)
        twice, twice_state = fingerprint(s), state_dump(s.plugin)
        ctx.count("unreserve-idempotent")
        if once != twice:
            ctx.fail("unreserve-idempotent", f"a second Unreserve of pod {pod.key} on {node} changed "
                                             f"what the plugin says {_diff(once, twice)}")
        elif once_state != twice_state:
            ctx.fail("unreserve-idempotent", f"a second Unreserve of pod {pod.key} on {node} changed "
                                             f"the plugin's state")
    return None


# ---------------------------------------------------------------------------------------------
# Score
# ---------------------------------------------------------------------------------------------
def rule_normalize_score_range(ctx: Context) -> Optional[str]:
    """After NormalizeScore (or Score, without it) every score is within [0, 100]."""
    s = ctx.subject()
    if not s.implements("score"):
        return "not a Score plugin"
    for pod in s.probe_pods():
        _, feasible = s.prepared_state(pod)
        for nodes in (feasible, feasible[:1]):
            if not nodes:
                continue
            scores = s.scores(pod, nodes)
            if scores:
                ctx.count("normalize-score-range")
            point = "NormalizeScore" if s.implements("normalize_score") else "Score"
            for node, sc in (scores or {}).items():
                if node.startswith("<") or isinstance(sc, str) and sc.startswith(("Error", "Unschedulable")):
                    continue  # a failing hook: hooks-return-well-formed names it
                if not isinstance(sc, int) or isinstance(sc, bool):
                    ctx.fail("normalize-score-range",
                             f'plugin "{ctx.name}": {point} left node {node} with {sc!r} for pod '
                             f'{pod.key}, not an integer score')
                elif not MIN_NODE_SCORE <= sc <= MAX_NODE_SCORE:
                    ctx.fail("normalize-score-range",
                             f'plugin "{ctx.name}": {point} left node {node} with score {sc} for pod '
                             f'{pod.key}, outside [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}]')
    return None


def rule_score_deterministic(ctx: Context) -> Optional[str]:
    """The same pod and nodes give the same scores: twice in a row, and with the nodes in the
    other order."""
    s = ctx.subject()
    if not s.implements("score"):
        return "not a Score plugin"
    for pod in s.probe_pods():
        _, feasible = s.prepared_state(pod)
        if not feasible:
            continue
        first = s.scores(pod, feasible)
        if first is not None and any(isinstance(v, str) for v in first.values()):
            continue  # a failing hook: hooks-return-well-formed (or the plugin's own Error) says it
        again = s.scores(pod, feasible)
        rev = s.scores(pod, list(reversed(feasible)))
        if first is not None:
            ctx.count("score-deterministic")
        if again != first:
            ctx.fail("score-deterministic", f"pod {pod.key}: scores {first} then {again} for the same input")
        elif rev != first:
            ctx.fail("score-deterministic", f"pod {pod.key}: scores {first}, but {rev} with the nodes "
                                            f"in reverse order")
    return None


# ---------------------------------------------------------------------------------------------
# Requeueing: registered events and queueing hints
# ---------------------------------------------------------------------------------------------
def _rejected_everywhere(v: Dict[str, str]) -> bool:
    return bool(v) and not any(x == "ok" for x in v.values())


def _events(ctx: Context, m: Mutation, probe_name: str) -> Tuple[Subject, List[Tuple[ClusterEvent, Any, Any]]]:
    """The events kube-scheduler's handlers would hand the queue for this change, recorded from a
    scheduler over the world (a declared custom resource: the GVK event its dynamic informer
    gives; an undeclared kind: none, as no informer lists it)."""
    from ..scheduler.events import pod_scheduling_properties_change

    s = ctx.subject()
    rec: List[Tuple[ClusterEvent, Any, Any]] = []
    s.sched.queue.move_all_to_active_or_backoff = lambda ev, old, new, *a, **k: rec.append((ev, old, new))
    cluster = s.sched.cluster
    ref = m.old if m.old is not None else m.new
    md = ref.get("metadata") or {}
    kind = ref.get("kind")
    ns = md.get("namespace") or ("default" if kind == "Pod" else "")
    existing = cluster.get(kind, ns, md.get("name")) or cluster.get(kind, "", md.get("name"))
    new_obj = None
    if m.new is not None:
        raw = copy.deepcopy(m.new)
        rmd = raw.setdefault("metadata", {})
        base = existing.raw.get("metadata") if existing is not None else {"uid": "conformance-new",
                                                                          "creationTimestamp": "2026-01-01T00:00:00Z"}
        for k, v in (base or {}).items():
            if k not in ("labels", "annotations", "resourceVersion"):
                rmd.setdefault(k, v)
        if kind == "Pod":
            rmd.setdefault("namespace", "default")
            raw.setdefault("spec", {}).setdefault("schedulerName", "default-scheduler")
        new_obj = make_object(raw)
    if m.probe:
        old_pod = existing
        rec.extend((ev, old_pod, new_obj) for ev in pod_scheduling_properties_change(new_obj, old_pod))
        return s, rec
    if existing is None and m.old is not None:
        return s, rec
    if m.old is None:
        cluster.create(new_obj)
    elif m.new is None:
        cluster.delete(existing)
    else:
        cluster.update(new_obj)
    return s, rec


def _permit_accepts(ctx: Context, world: World, pod: Pod) -> bool:
    """Does the plugin's own Permit (after its PreFilter and Filter) let the pod through in this
    world? A pod it would reject at Permit anyway gains nothing from a requeue."""
    ps = ctx.subject(world)
    p = ps.sched.cluster.get("Pod", pod.namespace, pod.name)
    state, feasible = ps.prepared_state(p)
    if not feasible:
        return False
    node = feasible[0].name
    out = ps.call("permit", state, p.with_node(node), node)
    st = out[0] if isinstance(out, tuple) else out
    return st is None or st.code in (Code.Success, Code.Wait)


def rule_requeue_and_hints(ctx: Context) -> Optional[str]:
    """For each pod the plugin rejects (PreEnqueue, PreFilter, or Filter on some node), and each
    change of the world: when a fresh run of the plugin after the change accepts the pod on a
    node it rejected (or on a new node), the
    events of that change must requeue it (rule `rejection-requeued-by-registered-events` when no
    event the plugin registered matches, `queueing-hints-consistent` when its hint said
    QueueSkip); events the plugin does not register must not requeue it; a hint that says Queue
    while a fresh run still rejects the pod is noted."""
    from ..scheduler.queue import Strategy

    s = ctx.subject()
    if not any(s.implements(h) for h in ("pre_enqueue", "pre_filter", "filter")):
        return "rejects no pods (no PreEnqueue, PreFilter or Filter)"
    rows = [(ev, fn) for ev, plugin, fn in s.sched.queue.hint_map.get(PROFILE, []) if plugin == ctx.name]
    for probe in ctx.world.pods:
        pod = s.sched.cluster.get("Pod", probe["metadata"].get("namespace") or "default", probe["metadata"]["name"])
        v = s.verdict(pod)
        if not v or all(x == "ok" for x in v.values()):
            continue  # the plugin rejects the pod nowhere: it is not among its rejectors
        point = "PreEnqueue" if "preEnqueue" in v else "PreFilter" if "preFilter" in v else "Filter"
        for m in mutations(ctx.world, probe):
            w2 = apply(ctx.world, m, pod.name)
            fresh_s = ctx.fresh(f"{pod.key}|{m.label}" if m.probe else m.label, w2)
            fresh_pod = fresh_s.sched.cluster.get("Pod", pod.namespace, pod.name)
            fresh = fresh_s.verdict(fresh_pod)
            # the change lifts a rejection: a node the plugin rejected (or a new one) passes now
            accepts = any(x == "ok" and v.get(n, "rejected") != "ok" for n, x in fresh.items())
            if accepts and s.implements("permit"):
                accepts = _permit_accepts(ctx, w2, pod)
            es, events = _events(ctx, m, pod.name)
            if not events:
                continue  # kube-scheduler hears of no event: nothing a plugin could register
            qpod = es.sched.cluster.get("Pod", pod.namespace, pod.name) or pod
            pinfo = QueuedPodInfo(PodInfo.of(qpod), 0.0)
            pinfo.unschedulable_plugins = {ctx.name}
            labels = ", ".join(ev.label() for ev, _, _ in events)
            ctx.count("rejection-requeued-by-registered-events")
            if any(fn is not None for ev, fn in rows for e, _, _ in events if ev.match(e)):
                ctx.count("queueing-hints-consistent")
            matched = [(ev, fn) for ev, fn in rows for e, _, _ in events if ev.match(e)]
            queued = any(es.sched.queue.is_pod_worth_requeuing(pinfo, e, old, new) != Strategy.QUEUE_SKIP
                         for e, old, new in events)
            if queued and not matched:
                ctx.fail("rejection-requeued-by-registered-events",
                         f"pod {pod.key} ({point} rejection) was requeued by {labels}, which the plugin "
                         f"does not register")
            if accepts and not queued:
                if not matched:
                    ctx.fail("rejection-requeued-by-registered-events",
                             f"pod {pod.key}: after '{m.label}' ({labels}) a fresh {point} accepts it, "
                             f"but the plugin registers no event that matches: the pod would stay "
                             f"unschedulable")
                else:
                    ctx.fail("queueing-hints-consistent",
                             f"pod {pod.key}: the queueing hint for {matched[0][0].label()} returned "
                             f"QueueSkip after '{m.label}', but a fresh {point} now accepts the pod")
            elif not accepts and queued and any(fn is not None for _, fn in matched):
                ctx.fail("queueing-hints-consistent",
                         f"pod {pod.key}: a queueing hint returned Queue after '{m.label}' ({labels}), "
                         f"but a fresh {point} still rejects it (a needless retry)", severity="note")
    return None


# ---------------------------------------------------------------------------------------------
# PreFilter extensions
# ---------------------------------------------------------------------------------------------
def _same(got: Optional[Status], fresh_verdict: Dict[str, str], node: str) -> Tuple[bool, str, str]:
    g = "ok" if got is None or got.is_success() else _fmt(got)
    if "preFilter" in fresh_verdict or "preEnqueue" in fresh_verdict:
        f = next(iter(fresh_verdict.values()))
        return (g != "ok"), g, f
    f = fresh_verdict.get(node, "ok")
    return g == f, g, f


def rule_prefilter_extensions(ctx: Context) -> Optional[str]:
    """AddPod / RemovePod on a CycleState clone, then Filter on the changed node, gives what a
    fresh PreFilter and Filter give with that pod really added to / removed from the node."""
    s = ctx.subject()
    if not s.implements("pre_filter") or not (s.implements("add_pod") or s.implements("remove_pod")):
        return "no PreFilter extensions (AddPod/RemovePod)"
    probes = s.probe_pods()
    for pod in probes:
        state = CycleState()
        _, st = s.pre_filter(state, pod)
        if st is not None and not st.is_success():
            continue
        if s.implements("remove_pod"):
            for q in ctx.world.bound_pods():
                qmd = q["metadata"]
                qpod = s.sched.cluster.get("Pod", qmd.get("namespace") or "default", qmd["name"])
                node = qpod.node_name
                ni = s.sched.snapshot.get(node).snapshot()
                ni.remove_pod(qpod)
                st2 = state.clone()
                r = s.call("remove_pod", st2, pod, PodInfo.of(qpod), ni)
                if r is not None and not r.is_success():
                    ctx.fail("prefilter-extensions-match-fresh-prefilter",
                             f"RemovePod of {qpod.key} for pod {pod.key} failed: {_fmt(r)}")
                    continue
                got = s.filter(st2, pod, ni)
                ctx.count("prefilter-extensions-match-fresh-prefilter")
                w2 = ctx.world.copy()
                w2.cluster = [o for o in w2.cluster if o is not q and o != q]
                fresh_s = ctx.fresh(f"remove|{qpod.key}", w2)
                fresh = fresh_s.verdict(fresh_s.sched.cluster.get("Pod", pod.namespace, pod.name))
                ok, g, f = _same(got, fresh, node)
                if not ok:
                    ctx.fail("prefilter-extensions-match-fresh-prefilter",
                             f"pod {pod.key} on {node} with {qpod.key} removed: RemovePod then Filter "
                             f"says {g!r}, a fresh PreFilter and Filter say {f!r}")
        if s.implements("add_pod"):
            for other in [p for p in probes if p.uid != pod.uid][:3]:
                for ni0 in s.nodes():
                    node = ni0.name
                    added = other.with_node(node)
                    ni = ni0.snapshot()
                    ni.add_pod(added)
                    st2 = state.clone()
                    r = s.call("add_pod", st2, pod, PodInfo.of(added), ni)
                    if r is not None and not r.is_success():
                        ctx.fail("prefilter-extensions-match-fresh-prefilter",
                                 f"AddPod of {other.key} for pod {pod.key} failed: {_fmt(r)}")
                        continue
                    got = s.filter(st2, pod, ni)
                    ctx.count("prefilter-extensions-match-fresh-prefilter")
                    w2 = ctx.world.copy()
                    raw = [p for p in w2.pods if p["metadata"]["name"] == other.name][0]
                    w2.pods = [p for p in w2.pods if p is not raw]
                    raw["spec"]["nodeName"] = node
                    w2.cluster.append(raw)
                    fresh_s = ctx.fresh(f"add|{other.key}|{node}", w2)
                    fresh = fresh_s.verdict(fresh_s.sched.cluster.get("Pod", pod.namespace, pod.name))
                    ok, g, f = _same(got, fresh, node)
                    if not ok:
                        ctx.fail("prefilter-extensions-match-fresh-prefilter",
                                 f"pod {pod.key} on {node} with {other.key} added: AddPod then Filter "
                                 f"says {g!r}, a fresh PreFilter and Filter say {f!r}")
    return None


# ---------------------------------------------------------------------------------------------
# Permit
# ---------------------------------------------------------------------------------------------
class _RecordingWaitingPod:
    def __init__(self, wp, calls: List[Tuple[str, str, str]]):
        self._wp = wp
        self._calls = calls

    def __getattr__(self, name):
        return getattr(self._wp, name)

    def allow(self, plugin: str) -> None:
        self._calls.append(("allow", plugin, self._wp.pod.key))
        self._wp.allow(plugin)

    def reject(self, plugin: str, msg: str) -> None:
        self._calls.append(("reject", plugin, self._wp.pod.key))
        self._wp.reject(plugin, msg)


def rule_permit(ctx: Context) -> Optional[str]:
    """The world's pods scheduled with the plugin: Permit returns Success, Wait (with a positive
    timeout) or a rejection; a plugin allows or rejects waiting pods under its own name; every
    pod that waited is allowed, rejected or timed out by the end (no pod is left waiting)."""
    s = ctx.subject()
    if not s.implements("permit"):
        return "not a Permit plugin"
    fw = s.fw
    calls: List[Tuple[str, str, str]] = []
    returns: List[Tuple[str, Any, Any]] = []
    orig_iter = fw.iterate_over_waiting_pods
    orig_get = fw.get_waiting_pod
    fw.iterate_over_waiting_pods = lambda cb: orig_iter(lambda wp: cb(_RecordingWaitingPod(wp, calls)))
    fw.get_waiting_pod = lambda uid: (lambda wp: _RecordingWaitingPod(wp, calls) if wp is not None else None)(orig_get(uid))
    for pc in fw.permit_plugins:
        if pc.name == ctx.name:
            inner = pc.fn

            def recording(state, pod, node_name, _inner=inner):
                out = _inner(state, pod, node_name)
                returns.append((pod.key, out[0] if isinstance(out, tuple) else out,
                                out[1] if isinstance(out, tuple) and len(out) > 1 else None))
                return out
            pc.fn = recording
    from ..errors import UserError
    try:
        s.sched.run_until_quiet()
    except UserError as e:  # e.g. pods rejected at once and retried forever
        ctx.fail("permit-wait-allow-reject-timeout", f"scheduling the world with the plugin: {e}")
    for key, st, timeout in returns:
        ctx.count("permit-wait-allow-reject-timeout")
        code = Code.Success if st is None else st.code
        if code not in (Code.Success, Code.Wait, Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Error):
            ctx.fail("permit-wait-allow-reject-timeout", f"Permit returned {code.name} for pod {key}: "
                                                         f"not a Permit result (Success, Wait or a rejection)")
        if code == Code.Wait and not (isinstance(timeout, (int, float)) and timeout > 0):
            ctx.fail("permit-wait-allow-reject-timeout", f"Permit asked pod {key} to wait with timeout "
                                                         f"{timeout!r}: it times out at once")
    for what, plugin, key in calls:
        if plugin != ctx.name:
            ctx.fail("permit-wait-allow-reject-timeout",
                     f"the plugin called {what}({plugin!r}) on waiting pod {key}: a plugin allows or "
                     f"rejects under its own name ({ctx.name!r}), or the pod waits for a plugin that "
                     f"never answers")
    if fw.waiting_pods:
        ctx.fail("permit-wait-allow-reject-timeout",
                 f"pods still waiting at Permit after the run: {sorted(w.pod.key for w in fw.waiting_pods.values())}")
    return None


# ---------------------------------------------------------------------------------------------
# No mutation of inputs; well-formed results
# ---------------------------------------------------------------------------------------------
def rule_every_hook(ctx: Context) -> Optional[str]:
    """Every hook the plugin implements, on every probe pod (and the nodes it passes), then a
    whole run of the world with the plugin alone in its profile: each call is guarded
    (guard.Guard), so a hook that changes an input (pod, node, NodeInfo, the pods in it), raises
    or returns a malformed result is a finding under no-mutation-of-inputs or
    hooks-return-well-formed, naming the plugin, the hook and the input."""
    from ..errors import UserError

    s = ctx.subject()
    before = s.guard.calls
    for pod in s.probe_pods():
        s.verdict(pod)
        state, feasible = s.prepared_state(pod)
        if s.implements("score") and feasible:
            s.scores(pod, feasible)
        if s.implements("post_filter") and not feasible:
            s.call("post_filter", state, pod, NodeToStatus())
        if not feasible:
            continue
        node = feasible[0].name
        assumed = pod.with_node(node)
        for hook in ("reserve", "permit", "pre_bind_pre_flight", "unreserve"):
            if s.implements(hook):
                s.call(hook, state, assumed, node)
        ni = s.sched.snapshot.get(node)
        for other in s.probe_pods():
            if other.uid == pod.uid:
                continue
            if s.implements("add_pod"):
                s.call("add_pod", state.clone(), pod, PodInfo.of(other.with_node(node)), ni)
            break
        if s.implements("remove_pod") and ni.pods:
            s.call("remove_pod", state.clone(), pod, ni.pods[0], ni)
    if s.implements("less"):
        infos = [QueuedPodInfo(PodInfo.of(p), float(i)) for i, p in enumerate(s.probe_pods())]
        for a, b in zip(infos, infos[1:] + infos[:1]):
            s.call("less", a, b)
    run = ctx.subject()
    try:  # the framework's own calls (PreBind, Bind, PostBind included), guarded the same way
        run.sched.run_until_quiet()
    except UserError:
        pass  # e.g. pods retried forever: permit-wait-allow-reject-timeout reports it
    n = s.guard.calls - before + run.guard.calls
    if n:
        ctx.checks["no-mutation-of-inputs"] = ctx.checks.get("no-mutation-of-inputs", 0) + n
        ctx.checks["hooks-return-well-formed"] = ctx.checks.get("hooks-return-well-formed", 0) + n
    return None


# ---------------------------------------------------------------------------------------------
# Placement (v1.36's pod group cycle)
# ---------------------------------------------------------------------------------------------
def _placement_sets(out: Any) -> Optional[List[Tuple[str, Tuple[str, ...]]]]:
    if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], (list, tuple))):
        return None
    return [(p.name, tuple(sorted(ni.name for ni in p.nodes))) for p in out[0] if isinstance(p, Placement)]


def rule_placements(ctx: Context) -> Optional[str]:
    """PlacementGenerate: every placement's nodes come from the parent placement it was given,
    and the same parent gives the same placements; PlacementScore: after
    NormalizePlacementScore (or PlacementScore, without it) every score is an integer within
    [0, 100], as RunPlacementScorePlugins requires."""
    s = ctx.subject()
    gen, score = s.implements("generate_placements"), s.implements("score_placement")
    if not gen and not score:
        return "not a PlacementGenerate or PlacementScore plugin"
    pods = s.probe_pods()
    group = PodGroupInfo("default", "conformance-group", pods)
    nodes = s.nodes()
    state = CycleState()
    state.pod_group_cycle = True
    found: List[Placement] = []
    if gen:
        for parent in (Placement("", list(nodes)), Placement("half", list(nodes[:max(1, len(nodes) // 2)]))):
            out = s.call("generate_placements", state, group, parent)
            sets = _placement_sets(out)
            if sets is None:
                continue  # hooks-return-well-formed names it
            ctx.count("placements-within-parent")
            allowed = {ni.name for ni in parent.nodes}
            for p in out[0]:
                extra = sorted(ni.name for ni in p.nodes if ni.name not in allowed)
                if extra:
                    ctx.fail("placements-within-parent",
                             f'plugin "{ctx.name}": PlacementGenerate returned placement {p.name!r} with '
                             f'node(s) {", ".join(extra)} outside the parent placement it was given '
                             f'({len(allowed)} nodes)')
            again = _placement_sets(s.call("generate_placements", state, group, parent))
            if again is not None and sorted(again) != sorted(sets):
                ctx.fail("placements-within-parent",
                         f'plugin "{ctx.name}": PlacementGenerate gave different placements for the same '
                         f'parent placement ({len(allowed)} nodes): {sorted(sets)} then {sorted(again)}')
            found.extend(p for p in out[0] if p.nodes)
    if score:
        candidates = found or [Placement("all", list(nodes)), Placement("first", list(nodes[:1]))]
        scores: List[PlacementScore] = []
        for p in candidates:
            assigned = [(pod, p.nodes[i % len(p.nodes)].name) for i, pod in enumerate(pods)] if p.nodes else []
            out = s.call("score_placement", state, group, PodGroupAssignments(p, assigned))
            if not (isinstance(out, tuple) and len(out) == 2) or (out[1] is not None and not out[1].is_success()):
                continue
            scores.append(PlacementScore(p, out[0]))
        point = "PlacementScore"
        if scores and s.implements("normalize_placement_score"):
            st = s.call("normalize_placement_score", state, group, scores)
            point = "NormalizePlacementScore"
            if st is not None and not st.is_success():
                scores = []
        for ps in scores:
            ctx.count("placement-score-range")
            if type(ps.score) is not int or not MIN_NODE_SCORE <= ps.score <= MAX_NODE_SCORE:
                ctx.fail("placement-score-range",
                         f'plugin "{ctx.name}": {point} left placement {ps.placement.name!r} with score '
                         f'{ps.score!r}, outside [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}]')
    return None


RuleFn = Callable[[Context], Optional[str]]

# rule name -> (function, one-line statement)
RULES: Dict[str, Tuple[RuleFn, str]] = {
    "reserve-unreserve-symmetric": (rule_reserve_symmetric, "Reserve then Unreserve leaves no trace"),
    "unreserve-idempotent": (rule_unreserve_idempotent, "Unreserve twice is Unreserve once; without Reserve it changes nothing"),
    "normalize-score-range": (rule_normalize_score_range, "scores end within [0, 100]"),
    "score-deterministic": (rule_score_deterministic, "the same input gives the same scores"),
    "rejection-requeued-by-registered-events": (rule_requeue_and_hints, "a rejection is lifted only by events the plugin registers"),
    "queueing-hints-consistent": (rule_requeue_and_hints, "queueing hints agree with a fresh PreEnqueue/PreFilter/Filter"),
    "prefilter-extensions-match-fresh-prefilter": (rule_prefilter_extensions, "AddPod/RemovePod equal a fresh PreFilter on the changed node"),
    "permit-wait-allow-reject-timeout": (rule_permit, "Permit's Wait, Allow, Reject and timeout are well formed"),
    "no-mutation-of-inputs": (rule_every_hook, "hooks leave every input unchanged (pod, node, NodeInfo and its pods)"),
    "hooks-return-well-formed": (rule_every_hook, "hooks neither raise nor return a result of the wrong shape"),
    "placements-within-parent": (rule_placements, "PlacementGenerate keeps to its parent placement, the same way each time"),
    "placement-score-range": (rule_placements, "placement scores end within [0, 100]"),
}

_ = QueueingHint  # re-exported for plugin authors writing hints
