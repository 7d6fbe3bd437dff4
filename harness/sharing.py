"""Equal values of a case's objects held once (a per-load table of strings, mappings and lists).

A real cluster repeats itself: a Deployment's 300 replicas carry the same containers, volumes,
tolerations, probes and conditions, and every object the same keys and timestamps. Decoded as
they are written, each pod of the 150,000-pod case held 46 dicts, 15 lists and 86 strings of its
own (16 KB); with equal strings and equal containers shared, about 2.5 KB (README, "Real
clusters"). Not an upstream piece: Go's decoder allocates every object afresh, in 1/5 of the
memory.

The objects a case's run writes into are never shared: an object's own mapping and its direct
children (metadata, spec, status) are private copies (`own`), since the API server's defaulting
and the harness write there; deeper values are read, never written in place (a changed pod is a
new object with copied parts: objects.Pod.with_node, with_status), and the few defaulting writes
below that level depend only on the value written (a container's requests from its own limits),
so a shared value takes them once for all its holders, as each would. Objects of other kinds than
Pod and Node (DynamicResources' objects are defaulted deeply) are copied whole.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

# kinds whose objects share their values below metadata/spec/status
SHARED_KINDS = frozenset(("Pod", "Node"))
# entries before the tables are started again (a bound on their own memory while a case loads)
_MAX_ENTRIES = 4_000_000


class _Strings(dict):
    """The table's strings: each maps to itself; a missing one is added by looking it up."""

    def __missing__(self, key: str) -> str:
        self[key] = key
        return key


class DuplicateKey(ValueError):
    """A mapping of decoded JSON names a key twice (YAML refuses it: the line is left to YAML)."""


class ValueTable:
    """The strings, mappings and lists of one load, each distinct value held once. The JSON
    decoder builds shared values through `pairs_hook` (its object_pairs_hook) and `shared_list`;
    a value built otherwise (by YAML) is shared by `share`. Values are told apart by type as
    well as by equality (`1`, `1.0` and `true` are equal in Python, not in YAML)."""

    __slots__ = ("_strs", "_dicts", "_lists", "_decoded")

    def __init__(self) -> None:
        self._strs: Dict[str, str] = _Strings()
        self._dicts: Dict[Tuple[Any, ...], Dict[str, Any]] = {}
        self._lists: Dict[Tuple[Any, ...], List[Any]] = {}
        self._decoded: Set[int] = set()  # ids of the objects the JSON decoder built with the table

    # --- while decoding JSON ------------------------------------------------------------------
    def pairs_hook(self, pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
        """json's object_pairs_hook: the mapping of `pairs` (their mapping values already shared,
        lists shared here), the table's own when an equal one was built before; a new one holds
        the table's strings (most mappings are not new: their strings are left to be freed).
        A key given twice raises DuplicateKey (a ValueError: the decoding fails)."""
        keys, vals = zip(*pairs) if pairs else ((), ())
        types = tuple(map(type, vals))
        if dict in types or list in types or float in types:
            vals = list(vals)  # (its lists replaced by the table's)
            t: Tuple[Any, ...] = (keys, self._values_key(vals))
        else:  # strings, integers, booleans, nulls: the values and their types say it all
            t = (keys, types, vals)
        got = self._dicts.get(t)
        if got is None:
            strs = self._strs
            got = {strs.setdefault(k, k): strs.setdefault(x, x) if type(x) is str else x
                   for k, x in zip(keys, vals)}
            if len(got) != len(keys):
                raise DuplicateKey(next(k for i, k in enumerate(keys) if k in keys[:i]))
            self._dicts[t] = got
            if len(self._dicts) > _MAX_ENTRIES:
                self._dicts.clear()
        return got

    def interner(self) -> Callable[[str], str]:
        """A function giving the table's string equal to its argument (the argument, kept,
        when the table has none)."""
        return self._strs.__getitem__

    def known(self) -> Callable[..., Any]:
        """The table's strings' `get` (a string the table has not is not added)."""
        return self._strs.get

    def shared_list(self, v: List[Any]) -> List[Any]:
        """A list the JSON decoder built (its mappings already shared): its lists shared in
        place, then the table's own equal list if there is one (a new one holds the table's
        strings)."""
        t = self._values_key(v)
        got = self._lists.get(t)
        if got is None:
            strs = self._strs
            for i, x in enumerate(v):
                if type(x) is str:
                    v[i] = strs.setdefault(x, x)
            got = self._lists[t] = v
            if len(self._lists) > _MAX_ENTRIES:
                self._lists.clear()
        return got

    def _values_key(self, v: List[Any]) -> Tuple[Any, ...]:
        """What stands for decoded values (a list's, a mapping's) in their container's key: a
        string itself, a mapping its identity (the decoder's mappings are the table's), a list
        the identity of the table's equal list (put in its place in `v`), a number or a boolean
        its type with it."""
        key: List[Any] = []
        app = key.append
        for i, x in enumerate(v):
            tx = type(x)
            if tx is str:
                app(x)
            elif tx is dict:
                app(id(x))
            elif tx is list:
                x = v[i] = self.shared_list(x)
                app(id(x))
            elif tx is float:
                app((tx, repr(x)))
            else:
                app((tx, x))
        return tuple(key)

    def decoded(self, obj: Any) -> None:
        """`obj` (an entry of a case's list) was built by pairs_hook."""
        self._decoded.add(id(obj))

    @property
    def decoded_any(self) -> bool:
        return bool(self._decoded)

    # --- values built otherwise -----------------------------------------------------------------
    def share(self, v: Any, depth: int = 0) -> Any:
        """A copy of `v` whose strings and containers are the table's (containers at `depth` 0
        and 1, an object and its metadata/spec/status, are new: never shared). A value of a type
        JSON has not (YAML's bytes, sets) is copied and not shared."""
        tv = type(v)
        if tv is str:
            return self._strs.setdefault(v, v)
        if tv is dict:
            out: Dict[Any, Any] = {}
            key: List[Any] = []
            plain = True
            for k, x in v.items():
                x = self.share(x, depth + 1)
                if type(k) is str:
                    k = self._strs.setdefault(k, k)
                else:
                    plain = False
                out[k] = x
                if plain:
                    kx = _value_key(x)
                    if kx is None:
                        plain = False
                    else:
                        key.append(k)
                        key.append(kx)
            return out if depth < 2 or not plain else _held(self._dicts, tuple(key), out)
        if tv is list:
            items = [self.share(x, depth + 1) for x in v]
            keys = [_value_key(x) for x in items]
            return items if depth < 2 or None in keys else _held(self._lists, tuple(keys), items)
        if tv in (int, bool, float) or v is None:
            return v
        return copy.deepcopy(v)

    def own(self, obj: Any, copy_objects: bool) -> Any:
        """The object a case holds for an entry of its `cluster` or `pods`: a Pod's or Node's
        values shared below metadata/spec/status (which are its own); any other kind's a copy of
        its own when the decoder shared them (or when `copy_objects`: the document stays as it
        was), else the entry itself."""
        decoded = id(obj) in self._decoded
        if isinstance(obj, dict) and obj.get("kind") in SHARED_KINDS:
            if not decoded:
                return self.share(obj)
            out = dict(obj)
            for k, x in out.items():
                if type(x) is dict:
                    out[k] = dict(x)
                elif type(x) is list:
                    out[k] = list(x)
            return out
        if self._decoded or copy_objects:  # (an item of a decoded List is not marked itself)
            return private(obj)
        return obj


def _held(table: Dict[Tuple[Any, ...], Any], key: Tuple[Any, ...], value: Any) -> Any:
    """The table's value for `key`, `value` when it has none yet."""
    got = table.get(key)
    if got is None:
        got = table[key] = value
    return got


def _value_key(x: Any) -> Optional[Any]:
    """What stands for a shared value in its container's key: a string itself, a container its
    identity (shared values are the table's: equal ones are the same object), a number or a
    boolean its type with it; None for anything else (the container is not shared)."""
    tx = type(x)
    if tx is str:
        return x
    if tx is dict or tx is list:
        return id(x)
    if tx is float:
        return (tx, repr(x))
    if tx is int or tx is bool or x is None:
        return (tx, x)
    return None


def private(v: Any) -> Any:
    """A copy of `v` sharing no mapping or list with anything (copy.deepcopy keeps a value
    that appears twice shared in its copy)."""
    tv = type(v)
    if tv is dict:
        return {k: private(x) for k, x in v.items()}
    if tv is list:
        return [private(x) for x in v]
    if tv in (str, int, bool, float) or v is None:
        return v
    return copy.deepcopy(v)
