"""Progress lines on stderr for long commands: `run: 12 of 300 files (10s)`.

A command prints one at most every INTERVAL seconds of wall time and none before INTERVAL has
passed, so a short command prints its results alone. Tests replace CLOCK (and INTERVAL) to
drive it without the wall clock.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, TextIO

INTERVAL = 5.0  # seconds between progress lines (as `import` prints them)
CLOCK: Callable[[], float] = time.monotonic


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
