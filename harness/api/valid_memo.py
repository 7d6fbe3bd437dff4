"""Validation of a shared value remembered while a cluster is built (not an upstream piece).

A big case's pods hold their equal values once (harness/sharing.py): the 300 replicas of a
Deployment point at one container list, one toleration list, one affinity. The API server's
checks of such a value (strict decoding's unknown fields, validateContainers, ...) depend on the
value alone, so while `remembering()` is on, a check that found a value valid records it, and the
same check of the same object passes at once. Only passing checks are recorded: a value that
fails is checked again, and its error names the path of the object at hand, as before.

The record is keyed by the values' identities and holds the values themselves (an identity is
never reused while its object lives), and is dropped when `remembering()` ends: outside it every
check runs in full.
"""

from __future__ import annotations

from contextlib import contextmanager
from operator import is_
from typing import Any, Callable, Dict, Hashable, Iterator, Optional, Tuple

# (check, ids...) -> the values checked (kept alive: their ids stay theirs)
_valid: Optional[Dict[Tuple[Hashable, ...], Tuple[Any, ...]]] = None


@contextmanager
def remembering() -> Iterator[None]:
    """Checks that pass are remembered per checked object until the outermost use ends."""
    global _valid
    outer = _valid is None
    if outer:
        _valid = {}
    try:
        yield
    finally:
        if outer:
            _valid = None


def table() -> Optional[Dict[Any, Any]]:
    """The record itself while remembering (else None), for a walk that checks many values
    (fields._find): `table.get(key) is v` when the check found `v` valid, recorded by
    `table[key] = v`, its key a tuple naming the check and ending with id(v)."""
    return _valid


def known_valid(check: Hashable, *values: Any) -> bool:
    """Did `check` find these very objects valid (while remembering)?"""
    memo = _valid
    if memo is None:
        return False
    got = memo.get((check, *[id(v) for v in values]))
    if got is None:
        return False
    for a, b in zip(got, values):
        if a is not b:
            return False
    return True


def found_valid(check: Hashable, *values: Any) -> None:
    """`check` found these objects valid (recorded while remembering)."""
    memo = _valid
    if memo is not None:
        memo[(check, *[id(v) for v in values])] = values


def derived(check: Hashable, values: Tuple[Any, ...], compute: Callable[[], Any], extra: Hashable = ()) -> Any:
    """compute(), a value derived from these very objects alone (and `extra`, hashable), once
    per identity while remembering (the same check of the same objects answers at once); outside
    it compute() each time."""
    memo = _valid
    if memo is None:
        return compute()
    key = (check, extra, *map(id, values))
    got = memo.get(key)
    if got is not None:
        held, out = got
        if all(map(is_, held, values)):
            return out
    out = compute()
    memo[key] = (values, out)
    return out


# the types of values a key holds by value (equal values are interchangeable); a value of any
# other type is keyed by its identity, and held
_BY_VALUE = (str, int, bool, float, type(None))


def members_key(mapping: Dict[Any, Any], leave_out: Tuple[Any, ...]) -> Optional[Tuple[Tuple[Any, ...], Tuple[Any, ...]]]:
    """A key standing for a mapping's members but those of `leave_out` (a scalar by its type and value,
    any other value by its identity), and the values it holds by identity; None when not
    remembering."""
    if _valid is None:
        return None
    key: list = []
    held: list = []
    for k, v in mapping.items():
        if k in leave_out:
            continue
        tv = type(v)
        if tv in _BY_VALUE:
            key.append((k, tv, v))
        else:
            key.append((k, id(v)))
            held.append(v)
    return tuple(key), tuple(held)


def known_valid_key(check: Hashable, key: Optional[Tuple[Tuple[Any, ...], Tuple[Any, ...]]]) -> bool:
    """Did `check` find valid what `key` (members_key's) stands for, its held values these very
    objects?"""
    memo = _valid
    if memo is None or key is None:
        return False
    got = memo.get((check, key[0]))
    if got is None:
        return False
    for a, b in zip(got, key[1]):
        if a is not b:
            return False
    return True


def found_valid_key(check: Hashable, key: Optional[Tuple[Tuple[Any, ...], Tuple[Any, ...]]]) -> None:
    """`check` found valid what `key` stands for (recorded while remembering)."""
    memo = _valid
    if memo is not None and key is not None:
        memo[(check, key[0])] = key[1]
