"""A benchmark in a forked child, so that its peak RSS is its own; the child dies with its
parent, and SIGTERM ends `bench` as Ctrl-C does."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Dict

from ..errors import UserError

def run_isolated(fn: Callable[[], Dict[str, Any]], name: str) -> Dict[str, Any]:
    """fn() (a workload's or a case's benchmark) in a forked child when the platform can, so
    that its peak RSS is its own; a UserError it raises is raised here."""
    if not hasattr(os, "fork"):
        return fn()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        _die_with_parent()
        code = 0
        try:
            out = {"ok": fn()}
        except UserError as e:
            out = {"error": str(e)}
        except BaseException as e:  # noqa: BLE001 - report whatever failed to the parent
            out = {"crash": f"{type(e).__name__}: {e}"}
            code = 1
        with os.fdopen(w, "w") as f:
            json.dump(out, f)
        os._exit(code)
    os.close(w)
    try:
        with os.fdopen(r, "r") as f:
            data = f.read()
        os.waitpid(pid, 0)
    except BaseException:  # Ctrl-C, SIGTERM (see main): the child ends with its parent
        _end_child(pid)
        raise
    out = json.loads(data) if data else {"crash": "the process that ran it died"}
    if "error" in out:
        raise UserError(out["error"])
    if "crash" in out:
        raise RuntimeError(f"{name}: {out['crash']}")
    return out["ok"]


def _die_with_parent() -> None:
    """In a workload's child: the kernel sends SIGKILL when the parent dies however it dies
    (Linux's PR_SET_PDEATHSIG); elsewhere the parent's handlers end it (_end_child)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
            if os.getppid() == 1:  # the parent died before prctl
                os._exit(1)
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            pass


def _end_child(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:  # already gone
        pass


def terminate_as_interrupt():
    """SIGTERM ends `bench` as Ctrl-C does (its child killed, exit 130 path), not at once."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # pragma: no cover - not the main thread (bench called from a test thread)
        return None
