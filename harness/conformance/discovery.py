"""Worlds that reach what a plugin reads: before the rules run, the plugin's PreEnqueue,
PreFilter, Filter and Score are called on the world's probe pods and nodes with the nodes' and
pods' labels watched. A label key looked up that no object of the world carries is then given to
one node (and one probe pod) with a value that records what the plugin compares it with
(`labels.get("lifecycle") == "spot"` records "spot"); the world gains a node, and a probe pod,
carrying each key with each value found (or a plain value when none was compared). So a Score
plugin that misbehaves only on nodes labelled `lifecycle=spot` fails its rule on the default
world, without a `--case`.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Set, Tuple

from ..framework.cycle_state import CycleState
from ..framework.status import Code

MAX_KEYS = 8  # label keys turned into objects (the ones looked up first)
MAX_VALUES = 4  # values per key
PLAIN_VALUE = "conformance"


class _Seen:
    def __init__(self) -> None:
        self.keys: Dict[str, Set[str]] = {}  # "node"/"pod" -> keys looked up, in order
        self.order: List[Tuple[str, str]] = []
        self.values: Dict[Tuple[str, str], List[str]] = {}

    def key(self, where: str, key: Any) -> None:
        if isinstance(key, str) and (where, key) not in self.values:
            self.values[(where, key)] = []
            self.order.append((where, key))

    def value(self, where: str, key: str, value: Any) -> None:
        if isinstance(value, str):
            vals = self.values.setdefault((where, key), [])
            if value not in vals and value != PLAIN_VALUE:
                vals.append(value)


class _Labels(dict):
    """A labels map that records the keys looked up (get, [], in)."""

    def __init__(self, data: Dict[str, str], seen: _Seen, where: str):
        super().__init__(data)
        self._seen, self._where = seen, where

    def get(self, key, default=None):  # noqa: D401
        self._seen.key(self._where, key)
        return super().get(key, default)

    def __getitem__(self, key):
        self._seen.key(self._where, key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self._seen.key(self._where, key)
        return super().__contains__(key)


class _Probe(str):
    """A label value that records the strings it is compared with."""

    def __new__(cls, seen: _Seen, where: str, key: str):
        s = super().__new__(cls, PLAIN_VALUE)
        s._seen, s._where, s._key = seen, where, key
        return s

    def __eq__(self, other):
        self._seen.value(self._where, self._key, other)
        return str.__eq__(self, other)

    def __ne__(self, other):
        self._seen.value(self._where, self._key, other)
        return str.__ne__(self, other)

    __hash__ = str.__hash__


def _exercise(s, seen: _Seen, extra: Optional[Dict[Tuple[str, str], Any]] = None) -> None:
    """The plugin's queue and cycle hooks over every probe pod and node, labels watched."""
    nodes = s.nodes()
    pods = s.probe_pods()
    saved = [(ni.node, ni.node.labels) for ni in nodes if ni.node is not None]
    saved += [(p, p.labels) for p in pods]
    try:
        for node, labels in saved:
            where = "pod" if node.kind == "Pod" else "node"
            data = dict(labels)
            for (w, k), v in (extra or {}).items():
                if w == where and k not in data:
                    data[k] = v
            node.labels = _Labels(data, seen, where)
        for pod in pods:
            if s.implements("pre_enqueue"):
                s.call("pre_enqueue", pod)
            state = CycleState()
            res, st = s.pre_filter(state, pod)
            if st is not None and st.code not in (Code.Success, Code.Skip):
                continue
            feasible = []
            for ni in nodes:
                if s.implements("filter"):
                    f = s.call("filter", state, pod, ni)
                    if f is not None and not f.is_success():
                        continue
                feasible.append(ni)
            if s.implements("score") and feasible:
                if s.implements("pre_score"):
                    s.call("pre_score", state, pod, feasible)
                for ni in feasible:
                    s.call("score", state, pod, ni)
    finally:
        for obj, labels in saved:
            obj.labels = labels


def reachable_world(name: str, registry, world, args=None):
    """The world, plus a node and a probe pod for each label key (and value) the plugin looks
    up that the world lacks; the world itself when it already has them all."""
    from .subject import Subject

    quiet = lambda rule, msg: None  # noqa: E731 (the rules report problems, not this pass)
    try:
        s = Subject(name, registry, world, args, report=quiet)
    except Exception:
        return world
    seen = _Seen()
    try:
        _exercise(s, seen)
        present = {("node", k) for n in world.nodes() for k in ((n.get("metadata") or {}).get("labels") or {})}
        present |= {("pod", k) for p in world.pods for k in ((p.get("metadata") or {}).get("labels") or {})}
        missing = [wk for wk in seen.order if wk not in present][:MAX_KEYS]
        if not missing:
            return world
        probes = {(w, k): _Probe(seen, w, k) for w, k in missing}
        _exercise(Subject(name, registry, world, args, report=quiet), seen, probes)
    except Exception:
        return world  # a plugin that fails here fails its rules later, on the plain world
    out = world.copy()
    nodes = world.nodes()
    template = copy.deepcopy(nodes[0]) if nodes else None
    base_pod = world.pods[0] if world.pods else None
    added = 0
    for where, key in missing:
        values = seen.values.get((where, key))[:MAX_VALUES] or [PLAIN_VALUE]
        for value in values:
            added += 1
            if where == "node" and template is not None:
                n = copy.deepcopy(template)
                md = n.setdefault("metadata", {})
                md["name"] = f"reach-{added}"
                md["labels"] = dict(md.get("labels") or {}, **{"kubernetes.io/hostname": f"reach-{added}", key: value})
                n.get("spec", {}).pop("taints", None)
                n.get("spec", {}).pop("unschedulable", None)
                out.cluster.append(n)
            elif where == "pod" and base_pod is not None:
                p = copy.deepcopy(base_pod)
                md = p.setdefault("metadata", {})
                md["name"] = f"reach-{added}"
                md["labels"] = dict(md.get("labels") or {}, **{key: value})
                out.pods.append(p)
    if out.cluster == world.cluster and out.pods == world.pods:
        return world
    out.name = f"{world.name}, with what the plugin reads ({', '.join(f'{w} label {k}' for w, k in missing)})"
    return out
