"""Statuses made in bulk by the batch forms of Filter (filter_nodes): not an upstream type.

A batch form rejects hundreds of nodes a cycle, each with its own Status (the framework names the
plugin on it and the diagnosis keeps one per node). `rejection` builds the same object as
``Status(code, reason)`` without the constructor's enum conversion and argument handling: the
code must already be a Code member."""

from __future__ import annotations

from itertools import compress
from typing import List, Optional

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


def rejection_of(code: Code, reasons: tuple) -> Status:
    """Status(code, *reasons): equal to it in every field."""
    s = _new(Status)
    s.code = code
    s.reasons = list(reasons)
    s.err = None
    s.plugin = ""
    return s


def fill_rejections(out: List[Optional[Status]], bad: List[bool], code: Code, reason: str) -> None:
    """out[i] = Status(code, reason) wherever bad[i] and out[i] is still None."""
    new, cls = _new, Status
    for i in compress(range(len(out)), bad):
        if out[i] is None:
            s = new(cls)
            s.code = code
            s.reasons = [reason]
            s.err = None
            s.plugin = ""
            out[i] = s


__all__ = ["rejection", "rejection_of", "fill_rejections", "UNSCHEDULABLE", "UNRESOLVABLE"]
