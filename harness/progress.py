"""Progress lines on stderr for long commands: `run: 12 of 300 files (10s)`.

A command prints one at most every INTERVAL seconds of wall time and none before INTERVAL has
passed, so a short command prints its results alone. Tests replace CLOCK (and INTERVAL) to
drive it without the wall clock.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, TextIO

INTERVAL = 5.0  # seconds between progress lines (as `import` prints them)
CLOCK: Callable[[], float] = time.monotonic
WAIT: Callable[[threading.Event, float], bool] = threading.Event.wait  # the heartbeat's sleep


class Progress:
    """`command: text (Ts)` lines on stderr, at most one per INTERVAL; force: print if the
    command has run INTERVAL or longer, however recently the last line was printed."""

    def __init__(self, command: str, enabled: bool = True, stream: Optional[TextIO] = None):
        self.command = command
        self.enabled = enabled
        self.stream = stream
        self.clock = CLOCK
        self.interval = INTERVAL
        self.start = self.last = self.clock()

    def tick(self, text: str, force: bool = False) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if now - (self.start if force else self.last) >= self.interval:
            self.last = now
            print(f"{self.command}: {text} ({now - self.start:.0f}s)", file=self.stream or sys.stderr, flush=True)

    @contextmanager
    def heartbeat(self, text: str) -> Iterator[None]:
        """While the body runs (one long call: reading a big case, scheduling it), a line every
        INTERVAL from a helper thread, so that a command over 5 s is never silent."""
        if not self.enabled:
            yield
            return
        stop = threading.Event()

        def beat() -> None:
            while not WAIT(stop, self.interval):
                self.tick(text, force=True)

        thread = threading.Thread(target=beat, name=f"{self.command}-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
