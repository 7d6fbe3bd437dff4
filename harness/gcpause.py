"""Python's cyclic garbage collector kept off a case's objects while they are built and run.

Reading a big case allocates millions of dicts and lists that all live on; each of the
collector's full passes walks every one of them again (about a third of reading and admitting a
150,000-pod case), and the first passes after the build walk all of them once more (11 s of the
first scheduling cycle of that case). So the collector is paused while they are built, and what
was built is then left out of its passes (gc.freeze) until the case's run ends (thaw). Objects
are freed by reference counting as before; only cyclic garbage waits. Not an upstream piece
(Go's collector is concurrent).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False
_freeze = False


@contextmanager
def collector_paused(freeze: bool = False) -> Iterator[None]:
    """gc.disable() for the outermost of nested (or concurrent) uses; when the last one ends,
    the collector's state before it is restored, after gc.freeze() if any of them asked for it."""
    global _depth, _was_enabled, _freeze
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
        _freeze = _freeze or freeze
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if _freeze:
                    gc.freeze()
                    _freeze = False
                if _was_enabled:
                    gc.enable()


# scheduling cycles between two freeze_survivors calls that freeze
FREEZE_EVERY = 500
_cycles = 0


def freeze_survivors() -> None:
    """Called once per scheduling cycle: every FREEZE_EVERY cycles, while the collector runs,
    what has survived so far (mostly what the attempts keep for reports) leaves its passes too
    (gc.freeze), until thaw. Without it each full pass walked every record kept so far: 78 s of
    the 92 s CPU of `run` on the 8152-pod OpenB case. Objects are still freed by reference
    counting; only cyclic garbage older than the freeze waits for thaw."""
    global _cycles
    _cycles += 1
    if _cycles >= FREEZE_EVERY:
        _cycles = 0
        if gc.isenabled():
            gc.freeze()


def thaw() -> None:
    """What a freeze left out of the collector's passes is collected again (a case's run ended:
    its cycles can be freed)."""
    gc.unfreeze()
