"""The marker of a case's extender stand-in: a Python callable answering one of the
configuration's HTTP extenders (the case key `extenders: [{urlPrefix, python: module:callable}]`)
must be marked ``@extender``, so that a case can name no other callable (README "What a case
may cause"). No upstream counterpart: kube-scheduler's extenders are HTTP servers. Also
ExtenderError, what a call to an extender raises (harness.scheduler.extender makes the calls,
the framework's preemption catches it)."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

MARK = "__schedharness_extender__"

F = TypeVar("F", bound=Callable[..., Any])


def extender(fn: F) -> F:
    """Mark `fn(verb, args)` as a stand-in for an HTTP extender that cases may name."""
    if not callable(fn):
        raise TypeError(f"@extender marks a callable, got {type(fn).__name__}")
    setattr(fn, MARK, True)
    return fn


def is_extender(fn: Any) -> bool:
    """Was `fn` marked with @extender (the marker itself, not any truthy attribute)?"""
    try:
        return callable(fn) and getattr(fn, MARK, None) is True
    except Exception:  # noqa: BLE001 - an object whose attribute lookup raises is not marked
        return False


__all__ = ["MARK", "extender", "is_extender"]


class ExtenderError(Exception):
    """An extender call that failed: the error text kube-scheduler would have (its Go error)."""
