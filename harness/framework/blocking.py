"""Hooks that block, in virtual time.

Some of kube-scheduler's extension points run in the binding goroutine and may block it:
VolumeBinding's PreBind polls (`wait.PollUntilContextTimeout`, 1s) until the PV controller has
bound the claims. Here nothing sleeps: such a hook returns a *task*, a generator that yields the
virtual seconds it waits each time and returns its result (a Status or None). The binding cycle
runs as such a task too, so other scheduling cycles go on while it waits, as upstream's
goroutine lets them.
"""

from __future__ import annotations

import types
from typing import Any, Generator

Task = Generator[float, None, Any]

# a task driven with no time passing gives up after this many waits (a poll that never ends)
MAX_WAITS_WITHOUT_TIME = 100_000


def is_task(value: Any) -> bool:
    return isinstance(value, types.GeneratorType)


def as_task(value: Any) -> Task:
    """`yield from as_task(hook_result)`: the hook's result, after its waits if it is a task."""
    if is_task(value):
        return (yield from value)
    return value


def drive(value: Any) -> Any:
    """The result of a hook, running its task (if it is one) without letting time pass: for
    callers outside the binding cycle (unit tests, PreBind outside virtual time)."""
    if not is_task(value):
        return value
    for _ in range(MAX_WAITS_WITHOUT_TIME):
        try:
            next(value)
        except StopIteration as stop:
            return stop.value
    raise RuntimeError("a blocking hook kept waiting")
