"""What `bench` measures and how it shows it while it runs: scheduler_perf's percentiles, the
throughput samples of its throughputCollector, peak RSS, and the progress lines on stderr."""

from __future__ import annotations

import math
import resource
import sys
from typing import List, Optional

PERCENTILES = (50, 90, 95, 99)
SAMPLE_INTERVAL = 1.0  # seconds of wall time between throughput samples (throughputCollector)


def percentile(sorted_values: List[float], p: int) -> float:
    """The p-th percentile as scheduler_perf's collectors take it: sorted[ceil(n*p/100)-1]."""
    if not sorted_values:
        return 0.0
    return sorted_values[int(math.ceil(len(sorted_values) * p / 100.0)) - 1]


def peak_rss_mib() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024.0 * 1024.0) if sys.platform == "darwin" else r / 1024.0


class Progress:
    def __init__(self, name: str, quiet: bool = False):
        self.name = name
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._bar = False

    def line(self, text: str) -> None:
        if self.quiet:
            return
        if self._bar:
            sys.stderr.write("\n")
            self._bar = False
        sys.stderr.write(f"[{self.name}] {text}\n")
        sys.stderr.flush()

    def bar(self, done: int, total: int, rate: float) -> None:
        if self.quiet:
            return
        of = f"/{total}" if total else ""  # a steady state's pods are not known in advance
        if self.tty:
            width = 30
            filled = int(width * done / total) if total else width
            sys.stderr.write(f"\r[{self.name}] [{'#' * filled}{'.' * (width - filled)}] "
                             f"{done}{of} pods, {rate:.0f} pods/s ")
            self._bar = True
        else:
            sys.stderr.write(f"[{self.name}]   {done}{of} measured pods scheduled, {rate:.0f} pods/s\n")
        sys.stderr.flush()



class ThroughputSampler:
    """scheduler_perf's throughputCollector.run: every SAMPLE_INTERVAL of wall time, the measured
    pods scheduled since the last sample per second; no sample until a first pod is scheduled,
    that first interval skipped (an outlier: sampling and creating pods start independently),
    and an interval in which no pod was scheduled recorded not as 0 pods/s but, once pods are
    scheduled again, as that rate once for each interval it spans (so that percentiles stay
    right). A window shorter than two intervals yields one sample over the whole window."""

    def __init__(self, now: float, bound: int, progress: "Progress", total: int):
        self.t0, self.bound0 = now, bound
        self.next = now + SAMPLE_INTERVAL
        self.last: Optional[tuple] = None  # (time, bound) of the last sample, once started
        self.skipped = 0
        self.samples: List[float] = []
        self.progress, self.total = progress, total

    def tick(self, now: float, bound: int) -> None:
        while now >= self.next:  # the ticker's ticks that passed
            self._sample(self.next, bound)
            self.next += SAMPLE_INTERVAL

    def _sample(self, now: float, bound: int) -> None:
        if bound == self.bound0:
            return
        if self.last is None:
            self.last = (now, bound)
            return
        new = bound - self.last[1]
        if new == 0:
            self.skipped += 1
            return
        rate = new / (now - self.last[0])
        self.samples.extend([rate] * (self.skipped + 1))
        self.skipped = 0
        self.last = (now, bound)
        self.progress.bar(bound - self.bound0, self.total, rate)

    def finish(self, now: float, bound: int) -> List[float]:
        if not self.samples and bound > self.bound0 and now > self.t0:
            return [(bound - self.bound0) / (now - self.t0)]
        return self.samples
