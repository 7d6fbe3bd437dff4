"""Statuses made in bulk by the batch forms of Filter (filter_nodes): not an upstream type.

A batch form rejects hundreds of nodes a cycle, each with its own Status (the framework names the
plugin on it and the diagnosis keeps one per node). `rejection` builds the same object as
``Status(code, reason)`` without the constructor's enum conversion and argument handling: the
code must already be a Code member."""

from __future__ import annotations

from harness.framework.status import Code, Status

_new = object.__new__

UNSCHEDULABLE = Code.Unschedulable
UNRESOLVABLE = Code.UnschedulableAndUnresolvable


def rejection(code: Code, reason: str) -> Status:
    """Status(code, reason): equal to it in every field."""
    s = _new(Status)
    s.code = code
    s.reasons = [reason]
    s.err = None
    s.plugin = ""
    return s


__all__ = ["rejection", "UNSCHEDULABLE", "UNRESOLVABLE"]
