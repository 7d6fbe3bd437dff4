"""Guarded hook calls: every call of the plugin under check (direct, or by the framework in a
whole run) is watched for a raise, a result of the wrong shape and a change to any input (the
pod, its labels, annotations, spec and status; the node and everything of a NodeInfo, its pods
included). The inputs are pictured as deep copies before the call and compared after it.

A problem becomes a finding naming the plugin, the hook (by its upstream name) and the input
(pod and node); the call then returns what the framework makes of it (an Error status), so the
check goes on."""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..api.objects import KubeObject, Node, Pod
from ..framework.blocking import is_task
from ..framework.status import Code, Status
from ..framework.prebind import PreBindPreFlightResult
from ..framework.placement import Placement
from ..framework.types import (NodeInfo, NodeToStatus, PodInfo, PostFilterResult, PreFilterResult,
                               QueuedPodInfo)

# hook -> the extension point's name in kube-scheduler's framework
HOOK_NAMES = {
    "pre_enqueue": "PreEnqueue", "less": "QueueSort.Less", "pre_filter": "PreFilter",
    "add_pod": "PreFilterExtensions.AddPod", "remove_pod": "PreFilterExtensions.RemovePod",
    "filter": "Filter", "post_filter": "PostFilter", "pre_score": "PreScore", "score": "Score",
    "normalize_score": "NormalizeScore", "reserve": "Reserve", "unreserve": "Unreserve",
    "permit": "Permit", "pre_bind_pre_flight": "PreBindPreFlight", "pre_bind": "PreBind",
    "bind": "Bind", "post_bind": "PostBind",
    "generate_placements": "PlacementGenerate", "score_placement": "PlacementScore",
    "normalize_placement_score": "NormalizePlacementScore",
}

# what each hook returns; checked by `shape_problem`
_STATUS_HOOKS = {"pre_enqueue", "filter", "add_pod", "remove_pod", "pre_score", "normalize_score",
                 "reserve", "pre_bind_pre_flight", "pre_bind", "bind", "normalize_placement_score"}
_TASK_HOOKS = {"reserve", "pre_bind", "bind", "permit"}  # may block (framework/blocking.py)
WANT = {
    "pre_filter": "(PreFilterResult or None, Status or None)",
    "post_filter": "(PostFilterResult or None, Status)",
    "score": "(int score, Status or None)",
    "permit": "(Status or None, timeout seconds)",
    "generate_placements": "(list of Placement, Status or None)",
    "score_placement": "(int score, Status or None)",
    "less": "a bool",
}

MUTATION_RULE = "no-mutation-of-inputs"
SHAPE_RULE = "hooks-return-well-formed"


# ---------------------------------------------------------------------------------------------
# pictures of the inputs
# ---------------------------------------------------------------------------------------------
def _object_picture(o: KubeObject) -> Dict[str, Any]:
    pic: Dict[str, Any] = {"manifest": copy.deepcopy(o.raw), "labels": dict(o.labels),
                           "annotations": dict(o.annotations)}
    if isinstance(o, Pod):
        pic.update(nodeName=o.node_name, schedulerName=o.scheduler_name, priority=o.priority,
                   nominatedNodeName=o.nominated_node_name)
    elif isinstance(o, Node):
        pic.update(spec=copy.deepcopy(o.spec_), taints=copy.deepcopy(o.taints),
                   unschedulable=o.unschedulable, allocatable=copy.deepcopy(o.allocatable),
                   images=copy.deepcopy(o.images))
    return pic


def _resource(r) -> Dict[str, Any]:
    return {"milliCPU": r.milli_cpu, "memory": r.memory, "ephemeralStorage": r.ephemeral_storage,
            "allowedPodNumber": r.allowed_pod_number, "scalarResources": dict(r.scalar_resources)}


def _node_info_picture(ni: NodeInfo) -> Dict[str, Any]:
    return {
        "node": _object_picture(ni.node) if ni.node is not None else None,
        "pods": {pi.pod.key: _object_picture(pi.pod) for pi in ni.pods},
        "podOrder": [pi.pod.uid for pi in ni.pods],
        "podsWithAffinity": [pi.pod.uid for pi in ni.pods_with_affinity],
        "podsWithRequiredAntiAffinity": [pi.pod.uid for pi in ni.pods_with_required_anti_affinity],
        "usedPorts": {ip: sorted(map(repr, ports)) for ip, ports in ni.used_ports.items()},
        "requested": _resource(ni.requested), "nonZeroRequested": _resource(ni.non_zero_requested),
        "allocatable": _resource(ni.allocatable),
        "imageStates": {k: repr(vars(v)) if hasattr(v, "__dict__") else repr(v) for k, v in ni.image_states.items()},
        "pvcRefCounts": dict(ni.pvc_ref_counts), "generation": ni.generation,
    }


def picture(x: Any) -> Tuple[str, Any]:
    """(what the input is, its picture), or ("", None) for an input that is not watched (the
    CycleState, names, the score list NormalizeScore is meant to change)."""
    if isinstance(x, Pod):
        return f"pod {x.key}", _object_picture(x)
    if isinstance(x, NodeInfo):
        return f"NodeInfo of {x.name}", _node_info_picture(x)
    if isinstance(x, PodInfo):
        return f"PodInfo of pod {x.pod.key}", _object_picture(x.pod)
    if isinstance(x, QueuedPodInfo):
        return f"QueuedPodInfo of pod {x.pod.key}", _object_picture(x.pod)
    if isinstance(x, NodeToStatus):
        return "node-to-status map", {"statuses": {n: (int(s.code), list(s.get_reasons())) for n, s in x.items()},
                                      "absent": (int(x.absent_nodes_status.code), list(x.absent_nodes_status.get_reasons()))}
    if isinstance(x, list) and x and all(isinstance(n, NodeInfo) for n in x):
        return "node list", {"names": [n.name for n in x], "nodes": [_node_info_picture(n) for n in x]}
    return "", None


def first_difference(a: Any, b: Any, path: str = "") -> Optional[str]:
    """The first place two pictures differ, as `path: before -> after`."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in b:
                return f"{path}.{k} removed" if path else f"{k} removed"
            if k not in a:
                return f"{path}.{k} added ({_short(b[k])})" if path else f"{k} added ({_short(b[k])})"
            d = first_difference(a[k], b[k], f"{path}.{k}" if path else str(k))
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if a != b:
        return f"{path or 'value'}: {_short(a)} -> {_short(b)}"
    return None


def _short(v: Any) -> str:
    t = repr(v)
    return t if len(t) <= 80 else t[:77] + "..."


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------
def _is_status(s: Any) -> bool:
    return s is None or isinstance(s, Status)


def shape_problem(hook: str, out: Any) -> Optional[str]:
    """What is wrong with a hook's result (None: well formed)."""
    if hook in _TASK_HOOKS and is_task(out):
        return None
    if hook == "pre_bind_pre_flight":
        # RunPreBindPreFlights: any other code is `returned "X", which is unsupported`; v1.36's
        # (PreBindPreFlightResult, status) pair carries the same status
        if isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], PreBindPreFlightResult):
            out = out[1]
        if out is None or (isinstance(out, Status) and out.code in (Code.Success, Code.Skip, Code.Error)):
            return None
        return "a Status of Success, Skip or Error, or None (optionally after a PreBindPreFlightResult)"
    if hook in _STATUS_HOOKS:
        return None if _is_status(out) else "a Status or None"
    pair = isinstance(out, tuple) and len(out) == 2
    if hook == "pre_filter":
        ok = pair and (out[0] is None or isinstance(out[0], PreFilterResult)) and _is_status(out[1])
    elif hook == "post_filter":
        ok = pair and (out[0] is None or isinstance(out[0], PostFilterResult)) and _is_status(out[1])
    elif hook == "score":
        ok = pair and type(out[0]) is int and _is_status(out[1])
    elif hook == "permit":
        ok = (pair and _is_status(out[0]) and isinstance(out[1], (int, float))
              and not isinstance(out[1], bool))
    elif hook == "less":
        ok = isinstance(out, bool)
    elif hook == "generate_placements":
        ok = pair and (out[0] is None or (isinstance(out[0], (list, tuple))
                                          and all(isinstance(p, Placement) for p in out[0]))) and _is_status(out[1])
    elif hook == "score_placement":
        ok = pair and type(out[0]) is int and _is_status(out[1])
    else:
        return None  # Unreserve, PostBind: nothing is read back
    return None if ok else WANT[hook]


def error_result(hook: str, message: str) -> Any:
    """What the framework makes of a raise or a malformed result: an Error status, in the
    hook's shape."""
    st = Status(Code.Error, err=RuntimeError(message))
    if hook in ("pre_filter", "post_filter", "generate_placements"):
        return None, st
    if hook in ("score", "score_placement"):
        return 0, st
    if hook == "permit":
        return st, 0
    if hook == "less":
        return False
    return st


def describe_call(args: Tuple[Any, ...]) -> str:
    """The input of a call, by pod and node: `for pod default/p on node n1`."""
    pod = node = None
    for a in args:
        if pod is None and isinstance(a, Pod):
            pod = a.key
        elif pod is None and isinstance(a, (PodInfo, QueuedPodInfo)):
            pod = a.pod.key
        elif node is None and isinstance(a, NodeInfo):
            node = a.name
        elif node is None and isinstance(a, str) and a:
            node = a
    parts = []
    if pod:
        parts.append(f"pod {pod}")
    if node:
        parts.append(f"node {node}")
    return ("for " + " on ".join(parts)) if parts else ""


class Guard:
    """Wraps the hooks of one plugin; `report(rule, message)` receives each problem."""

    def __init__(self, plugin: str, report: Callable[[str, str], None]):
        self.plugin = plugin
        self.report = report
        self.calls = 0  # guarded calls made

    def wrap(self, hook: str, fn: Callable) -> Callable:
        def guarded(*args):
            return self.call(hook, fn, *args)
        guarded.__wrapped__ = fn  # type: ignore[attr-defined]
        return guarded

    def call(self, hook: str, fn: Callable, *args: Any) -> Any:
        self.calls += 1
        point = HOOK_NAMES.get(hook, hook)
        who = f'plugin "{self.plugin}": {point}'
        where = describe_call(args)
        suffix = f" {where}" if where else ""
        watched = []
        for i, a in enumerate(args):
            what, pic = picture(a)
            if pic is not None:
                watched.append((i, what, pic))
        try:
            out = fn(*args)
        except Exception as e:  # as the framework: an Error status
            msg = f"{type(e).__name__}: {e}"
            self.report(SHAPE_RULE, f"{who} raised {msg}{suffix}")
            out = error_result(hook, msg)
        else:
            want = shape_problem(hook, out)
            if want is not None:
                self.report(SHAPE_RULE, f"{who} returned {_short(out)}{suffix}, expected {want}")
                out = error_result(hook, f"{point} returned {_short(out)}, expected {want}")
        for i, what, before in watched:
            _, after = picture(args[i])
            if after is None:  # e.g. a node list emptied
                after = {}
            diff = first_difference(before, after)
            if diff:
                self.report(MUTATION_RULE, f"{who} changed the {what} it was given{suffix} ({diff})")
        return out


def guard_framework(fw: Any, plugin: str, guard: Guard) -> None:
    """Wrap every call the framework makes of `plugin` (as coverage.instrument does for all
    plugins); its batch forms are turned off so each node goes through the guarded hook."""
    from ..framework.hookspecs import EXTENSION_POINTS

    for key, calls in fw.ep_plugins.items():
        hook = EXTENSION_POINTS[key][0]
        for pc in calls:
            if pc.name == plugin:
                pc.fn = guard.wrap(hook, pc.fn)
    for attr in ("_filter_batch", "_score_batch", "_normalize_batch"):
        table = getattr(fw, attr)
        if plugin in table:
            table[plugin] = None
    for attr, hook in (("_add_pod_calls", "add_pod"), ("_remove_pod_calls", "remove_pod"),
                       ("_unreserve_calls", "unreserve")):
        for pc in getattr(fw, attr):
            if pc.name == plugin:
                pc.fn = guard.wrap(hook, pc.fn)
    for pc in fw._normalize_calls.values():
        if pc.name == plugin:
            pc.fn = guard.wrap("normalize_score", pc.fn)
    for _, pc in fw._pre_bind_pre_flight_calls:
        if pc is not None and pc.name == plugin:
            pc.fn = guard.wrap("pre_bind_pre_flight", pc.fn)


__all__ = ["Guard", "guard_framework", "picture", "first_difference", "shape_problem", "HOOK_NAMES",
           "MUTATION_RULE", "SHAPE_RULE"]
