"""Worlds that reach what a plugin reads.

A plugin that behaves badly only on nodes labelled `lifecycle=spot` passes every rule on a world
without such a node. Before the rules run, the kit watches the plugin decide on the world's probe
pods (PreEnqueue, PreFilter, Filter, PreScore, Score, NormalizeScore) with every label and
annotation map of the nodes and pods replaced by one that records the keys the plugin looks up
and the values it compares them with; a second look gives every key it looked for a value that
records comparisons. The world then grows by a node per (key, value) of node labels and
annotations the plugin read and no node carries, and by a probe pod and a running pod per
(key, value) of pod labels and annotations, so that the rules see the plugin on them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from ..api.validation import is_qualified_name, is_valid_label_value
from .world import World

MAX_ADDED = 8  # nodes, and pods, added at most: a plugin comparing with hundreds of values
PROBE_VALUE = "conformance-probe"  # the value a looked-up key gets on the second look
_FIELDS = ("labels", "annotations")


class _ProbeValue(str):
    """A label or annotation value that records what the plugin compares it with (==, !=,
    startswith, endswith, `in` a list or tuple of strings)."""

    def __new__(cls, value: str, sink: Set[str]) -> "_ProbeValue":
        s = super().__new__(cls, value)
        s._sink = sink
        return s

    def _note(self, other: Any) -> None:
        if isinstance(other, str):
            self._sink.add(str(other))
        elif isinstance(other, tuple):
            self._sink.update(str(o) for o in other if isinstance(o, str))

    def __eq__(self, other: Any) -> bool:
        self._note(other)
        return str.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        self._note(other)
        return str.__ne__(self, other)

    __hash__ = str.__hash__

    def startswith(self, prefix: Any, *args: Any) -> bool:  # type: ignore[override]
        self._note(prefix)
        return str.startswith(self, prefix, *args)

    def endswith(self, suffix: Any, *args: Any) -> bool:  # type: ignore[override]
        self._note(suffix)
        return str.endswith(self, suffix, *args)


class _RecordingMap(dict):
    """A labels or annotations map that records the keys looked up and hands out values that
    record comparisons."""

    def __init__(self, data: Dict[str, str], reads: Dict[str, Set[str]]):
        super().__init__(data)
        self._reads = reads

    def _value(self, key: str, value: Any) -> Any:
        return _ProbeValue(value, self._reads.setdefault(key, set())) if isinstance(value, str) else value

    def __getitem__(self, key: Any) -> Any:
        self._reads.setdefault(key, set())
        return self._value(key, dict.__getitem__(self, key))

    def get(self, key: Any, default: Any = None) -> Any:
        self._reads.setdefault(key, set())
        if dict.__contains__(self, key):
            return self._value(key, dict.__getitem__(self, key))
        return default

    def __contains__(self, key: Any) -> bool:
        self._reads.setdefault(key, set())
        return dict.__contains__(self, key)

    def items(self):  # type: ignore[override]
        return [(k, self._value(k, v)) for k, v in dict.items(self)]

    def values(self):  # type: ignore[override]
        return [self._value(k, v) for k, v in dict.items(self)]


@dataclass
class Reads:
    """What the plugin looked up: (kind, field) -> key -> values compared with, where kind is
    Node or Pod and field labels or annotations."""

    maps: Dict[Tuple[str, str], Dict[str, Set[str]]] = field(default_factory=dict)

    def sink(self, kind: str, fld: str) -> Dict[str, Set[str]]:
        return self.maps.setdefault((kind, fld), {})

    def merge(self, other: "Reads") -> None:
        for where, keys in other.maps.items():
            mine = self.sink(*where)
            for k, vals in keys.items():
                mine.setdefault(k, set()).update(vals)


def _instrument(subject, reads: Reads, extra_keys: Optional["Reads"] = None) -> None:
    """Replace the label and annotation maps of the subject's nodes and pods by recording ones
    (with `extra_keys`' keys, where an object lacks them, set to a value that records
    comparisons)."""
    for kind in ("Node", "Pod"):
        for obj in subject.sched.cluster.list(kind):
            for fld in _FIELDS:
                data = dict(getattr(obj, fld) or {})
                if extra_keys is not None:
                    for key in extra_keys.sink(kind, fld):
                        data.setdefault(key, PROBE_VALUE)
                setattr(obj, fld, _RecordingMap(data, reads.sink(kind, fld)))


def _decide(subject) -> None:
    """The plugin's decisions on every probe pod, as the kit's rules ask for them."""
    for pod in subject.probe_pods():
        try:
            subject.verdict(pod)
            if subject.implements("score"):
                subject.scores(pod, subject.nodes())
        except Exception:  # the rules report a plugin that raises; a look only looks
            continue


def observe(name: str, registry, world: World, args: Optional[Dict[str, Any]]) -> Reads:
    """The keys and values the plugin reads on this world (two looks: as it is, then with every
    key it looked for present)."""
    from .subject import Subject

    reads = Reads()
    for extra in (None, reads):
        try:
            s = Subject(name, registry, world, args, report=lambda rule, msg: None)
        except Exception:  # a world the plugin cannot even be built on: the rules say why
            return reads
        look = Reads()
        _instrument(s, look, extra)
        _decide(s)
        reads.merge(look)
    return reads


def _wanted(reads: Reads, kind: str, carried: Iterable[Dict[str, Any]]) -> List[Tuple[str, str, str]]:
    """(field, key, value) pairs read on objects of `kind` that no object of the world carries,
    valid as label keys and values, at most MAX_ADDED."""
    have: Set[Tuple[str, str, str]] = set()
    for o in carried:
        md = o.get("metadata") or {}
        for fld in _FIELDS:
            have.update((fld, k, str(v)) for k, v in (md.get(fld) or {}).items())
    out: List[Tuple[str, str, str]] = []
    for fld in _FIELDS:
        for key, vals in sorted(reads.sink(kind, fld).items()):
            if not isinstance(key, str) or is_qualified_name(key):
                continue
            values = sorted(v for v in vals if v != PROBE_VALUE and not is_valid_label_value(v)) or ["true"]
            for v in values:
                if (fld, key, v) not in have and len(out) < MAX_ADDED:
                    out.append((fld, key, v))
    return out


def reach(name: str, registry, world: World, args: Optional[Dict[str, Any]]) -> World:
    """The world grown by nodes and pods that carry the labels and annotations the plugin reads
    (the world itself when it reads none that the world lacks)."""
    reads = observe(name, registry, world, args)
    nodes = world.nodes()
    node_pairs = _wanted(reads, "Node", nodes) if nodes else []
    pods = [o for o in world.cluster if o.get("kind") == "Pod"] + list(world.pods)
    pod_pairs = _wanted(reads, "Pod", pods) if world.pods else []
    if not node_pairs and not pod_pairs:
        return world
    grown = world.copy()
    for i, (fld, key, value) in enumerate(node_pairs):
        n = _renamed(nodes[0], f"conformance-reach-node-{i}", fld, key, value)
        n["metadata"].setdefault("labels", {})["kubernetes.io/hostname"] = n["metadata"]["name"]
        n["spec"] = {}
        grown.cluster.append(n)
    for i, (fld, key, value) in enumerate(pod_pairs):
        probe = _renamed(world.pods[0], f"conformance-reach-pod-{i}", fld, key, value)
        grown.pods.append(probe)
        if nodes:
            running = _renamed(world.pods[0], f"conformance-reach-running-{i}", fld, key, value)
            running["spec"]["nodeName"] = nodes[0]["metadata"]["name"]
            running["spec"].pop("schedulingGates", None)
            grown.cluster.append(running)
    grown.grown_by = ([f"node {fld[:-1]} {k}={v}" for fld, k, v in node_pairs]
                      + [f"pod {fld[:-1]} {k}={v}" for fld, k, v in pod_pairs])
    return grown


def _renamed(obj: Dict[str, Any], new_name: str, fld: str, key: str, value: str) -> Dict[str, Any]:
    o = copy.deepcopy(obj)
    md = o.setdefault("metadata", {})
    md["name"] = new_name
    for k in ("uid", "resourceVersion", "generateName"):
        md.pop(k, None)
    md[fld] = {**(md.get(fld) or {}), key: value}
    o.setdefault("spec", {})
    return o
