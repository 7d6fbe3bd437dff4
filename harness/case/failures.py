"""A failed expectation: the line `run` prints, and the same as data for `run --json` (pod,
field, expected, got)."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

_STEP = re.compile(r"^(steps\[\d+\]): ")
_POD = re.compile(r"^([^\s/:]+/[^\s/:]+): (\w+)")


class Failure(str):
    """A failure's text (a str, as every reader of `failures` takes it) with its parts: the pod
    (namespace/name, or None for a case-wide expectation), the field of `expect` (bindings,
    preempted, messages, ...), what was expected and what happened, and the step."""

    pod: Optional[str]
    field: str
    expected: Any
    got: Any
    step: Optional[str]

    def __new__(cls, text: str, *, pod: Optional[str] = None, field: str = "", expected: Any = None,
                got: Any = None, step: Optional[str] = None) -> "Failure":
        self = super().__new__(cls, text)
        self.pod, self.field, self.expected, self.got, self.step = pod, field, expected, got, step
        return self

    def __reduce__(self):  # picklable for diff/sweep workers, parts included
        return (_rebuild, (str(self), self.pod, self.field, self.expected, self.got, self.step))


def _rebuild(text, pod, field, expected, got, step) -> Failure:
    return Failure(text, pod=pod, field=field, expected=expected, got=got, step=step)


def failure_json(f: str) -> Dict[str, Any]:
    """`run --json`'s object of a failure: {pod, field, expected, got, text} (and step). A
    failure that carries no parts (a decision table, a plugin unsafe under threads) gives the
    pod and field its text starts with, expected and got null."""
    if isinstance(f, Failure):
        out = {"pod": f.pod, "field": f.field, "expected": f.expected, "got": f.got}
        step = f.step
    else:
        text = str(f)
        m = _STEP.match(text)
        step = m.group(1) if m else None
        rest = text[m.end():] if m else text
        p = _POD.match(rest)
        out = {"pod": p.group(1) if p else None, "field": p.group(2) if p else None, "expected": None, "got": None}
    if step:
        out["step"] = step
    out["text"] = str(f)
    return out


def show(value: Any) -> str:
    """A value in a failure's text, without Python's reprs: none, a, [a, b], "text"."""
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
    return str(value)
