"""PreBind's groups and the pods in PreBind (v1.36): framework/runtime's getPreBindPluginGroups
and RunPreBindPlugins' parallel groups, and pods_in_prebind_map.go's podInPreBind, the handle
preemption uses to cancel the binding cycle of a victim that is in PreBind.

Upstream cancels a context; here a PreBind task (framework/blocking.py) waiting in virtual time
is woken at once and gets :class:`PreBindCanceled` thrown at its ``yield``, as a Go plugin sees
``ctx.Done()``: not catching it is returning the context's error, which the framework reports
as ``running PreBind plugin "X": <cause>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Set

# context.Cause of RunPreBindPlugins' context when a plugin of a parallel group failed
SOME_OTHER_PRE_BIND_FAILED = "some other PreBind operation failed"


class PreBindCanceled(Exception):
    """Thrown into a PreBind task whose context was cancelled; `cause` is context.Cause."""

    def __init__(self, cause: str):
        super().__init__(cause)
        self.cause = cause


@dataclass
class PreBindPreFlightResult:
    """fwk.PreBindPreFlightResult (v1.36): `allow_parallel` lets the framework run this plugin's
    PreBind together with the adjacent plugins that allow it too. A PreBindPreFlight hook returns
    ``(PreBindPreFlightResult(allow_parallel=True), status)``; a bare Status (or None) means
    AllowParallel false. Versions before v1.36 run every PreBind plugin on its own."""

    allow_parallel: bool = False


class PreBindContext:
    """A cancellable context of the binding cycle (context.WithCancelCause): a child is
    cancelled with its parent, keeping the parent's cause."""

    __slots__ = ("parent", "_cause", "wake")

    def __init__(self, parent: Optional["PreBindContext"] = None,
                 wake: Optional[Callable[[], None]] = None):
        self.parent = parent
        self._cause: Optional[str] = None
        self.wake = wake  # resumes the binding task now when it waits in virtual time

    @property
    def cause(self) -> Optional[str]:
        """context.Cause: None while not cancelled."""
        if self._cause is not None:
            return self._cause
        return self.parent.cause if self.parent is not None else None

    def cancel(self, cause: str) -> None:
        if self.cause is None:
            self._cause = cause
        ctx = self
        while ctx is not None:
            if ctx.wake is not None:
                ctx.wake()
                return
            ctx = ctx.parent


class PodInPreBind:
    """podInPreBind: a pod in its binding cycle from after WaitOnPermit until it is bound.
    Preemption cancels it (CancelPod) instead of deleting the victim, until PreBind finished
    (MarkPrebound)."""

    __slots__ = ("finished", "canceled", "ctx")

    def __init__(self, ctx: PreBindContext):
        self.finished = False
        self.canceled = False
        self.ctx = ctx

    def cancel_pod(self, message: str) -> bool:
        """CancelPod: False once PreBind finished; else cancels the binding cycle's context
        (once) and says True."""
        if self.finished:
            return False
        if not self.canceled:
            self.ctx.cancel(message)
        self.canceled = True
        return True

    def mark_prebound(self) -> bool:
        """MarkPrebound: False when the pod was cancelled meanwhile; else no cancel may come."""
        if self.canceled:
            return False
        self.finished = True
        return True


def pre_bind_plugin_groups(names: Sequence[str], skipped: Set[str], parallel: Set[str]) -> List[List[int]]:
    """getPreBindPluginGroups: the PreBind plugins (indexes into `names`) chunked into groups run
    together: consecutive plugins whose PreBindPreFlight allowed parallel runs form one group;
    any other plugin is a group of its own and ends the group before it, even when skipped;
    skipped plugins are left out."""
    groups: List[List[int]] = []
    group: List[int] = []
    for i, name in enumerate(names):
        if name in parallel:
            if name not in skipped:
                group.append(i)
            continue
        if group:
            groups.append(group)
            group = []
        if name not in skipped:
            groups.append([i])
    if group:
        groups.append(group)
    return groups


__all__ = ["PreBindCanceled", "PreBindPreFlightResult", "PreBindContext", "PodInPreBind",
           "pre_bind_plugin_groups", "SOME_OTHER_PRE_BIND_FAILED"]
