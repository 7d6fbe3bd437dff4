"""Status and its codes (k8s.io/kube-scheduler/framework interface.go)."""

from __future__ import annotations

import enum
from typing import List, Optional


class Code(enum.IntEnum):
    """The result codes of a plugin, as v1.34 defines them."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6

    def __str__(self) -> str:  # Code.String()
        return self.name


# the codes Status.is_rejected answers True for (a set: membership without a method call)
REJECTED_CODES = frozenset((Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending))


class Status:
    """framework.Status. `None` stands for Success wherever a Status is returned."""

    __slots__ = ("code", "reasons", "err", "plugin")

    def __init__(self, code: Code = Code.Success, *reasons: str, err: Optional[BaseException] = None,
                 plugin: str = ""):
        self.code = code if code.__class__ is Code else Code(code)
        self.reasons: List[str] = list(reasons)
        self.err = err
        self.plugin = plugin

    # constructors -----------------------------------------------------------------------------
    @classmethod
    def success(cls) -> "Status":
        return cls(Code.Success)

    @classmethod
    def unschedulable(cls, *reasons: str) -> "Status":
        return cls(Code.Unschedulable, *reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> "Status":
        return cls(Code.UnschedulableAndUnresolvable, *reasons)

    @classmethod
    def error(cls, err) -> "Status":
        """AsStatus(err)."""
        if not isinstance(err, BaseException):
            err = RuntimeError(str(err))
        return cls(Code.Error, err=err)

    @classmethod
    def skip(cls) -> "Status":
        return cls(Code.Skip)

    # accessors --------------------------------------------------------------------------------
    def with_plugin(self, plugin: str) -> "Status":
        self.plugin = plugin
        return self

    def get_reasons(self) -> List[str]:
        """Status.Reasons(): the error first, then the reasons."""
        if self.err is not None:
            return [str(self.err)] + self.reasons
        return self.reasons

    def message(self) -> str:
        return ", ".join(self.get_reasons())

    def append_reason(self, reason: str) -> None:
        self.reasons.append(reason)

    def is_success(self) -> bool:
        return self.code == Code.Success

    def is_wait(self) -> bool:
        return self.code == Code.Wait

    def is_skip(self) -> bool:
        return self.code == Code.Skip

    def is_rejected(self) -> bool:
        return self.code in REJECTED_CODES

    def as_error(self) -> Optional[Exception]:
        if self.code in (Code.Success, Code.Wait, Code.Skip):
            return None
        if self.err is not None:
            return self.err if isinstance(self.err, Exception) else RuntimeError(str(self.err))
        return RuntimeError(self.message())

    def __eq__(self, other) -> bool:
        if other is None:
            return self.is_success()
        if not isinstance(other, Status):
            return NotImplemented
        return (self.code == other.code and self.get_reasons() == other.get_reasons()
                and self.plugin == other.plugin)

    def __hash__(self):  # pragma: no cover
        return id(self)

    def __repr__(self) -> str:
        p = f" plugin={self.plugin}" if self.plugin else ""
        return f"Status({self.code.name}{p}: {self.message()!r})"


# The Skip status the in-tree plugins return from PreFilter, PreScore and PreBindPreFlight: one
# shared object (a fresh Status per plugin and cycle was ~16 per pod). The framework only reads a
# Skip's code there; nothing may change it.
SKIP = Status(Code.Skip)


def is_success(status: Optional[Status]) -> bool:
    return status is None or status.code == Code.Success
