"""The Parallelizer (framework/parallelize/parallelism.go) on a pool of threads, and the
per-run settings that turn it on (`run --parallel`, `parallel: true`, `explore`).

By default the harness filters and scores sequentially (batch forms for in-tree plugins), which
gives the answer upstream gives wherever it is deterministic. With parallel on, Filter and Score
run on `parallelism` threads over chunks of the node list as upstream does; the results are
merged in node order, so a thread-safe plugin gives exactly the sequential answer. Every node
evaluated under threads is evaluated again sequentially: a plugin whose result differs (or that
raised only under threads) is reported as not safe for parallel filtering.
"""

from __future__ import annotations

import math
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional

_POOLS: Dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def chunk_size_for(n: int, parallelism: int) -> int:
    """chunkSizeFor: max(1, min(sqrt(n), n/parallelism + 1))."""
    s = int(math.sqrt(float(n)))
    r = n // parallelism + 1
    if s > r:
        s = r
    elif s < 1:
        s = 1
    return s


def num_workers_for_chunk_size(parallelism: int, pieces: int, chunk_size: int) -> int:
    """numWorkersForChunkSize."""
    chunks = (pieces + chunk_size - 1) // chunk_size
    return chunks if chunks < parallelism else parallelism


def _pool(parallelism: int) -> ThreadPoolExecutor:
    with _POOLS_LOCK:
        ex = _POOLS.get(parallelism)
        if ex is None:
            ex = _POOLS[parallelism] = ThreadPoolExecutor(max_workers=parallelism,
                                                          thread_name_prefix="schedharness-parallelize")
        return ex


def until(parallelism: int, pieces: int, do_work_piece: Callable[[int], None],
          stop: Optional[threading.Event] = None) -> None:
    """Parallelizer.Until -> workqueue.ParallelizeUntil: `workers` threads take chunks of
    `chunk_size_for` pieces in order; each checks `stop` before every piece."""
    if pieces <= 0:
        return
    parallelism = max(1, parallelism)
    chunk = chunk_size_for(pieces, parallelism)
    workers = num_workers_for_chunk_size(parallelism, pieces, chunk)
    chunks = iter(range((pieces + chunk - 1) // chunk))
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                c = next(chunks, None)
            if c is None:
                return
            for p in range(c * chunk, min(c * chunk + chunk, pieces)):
                if stop is not None and stop.is_set():
                    return
                do_work_piece(p)

    futures = [_pool(parallelism).submit(worker) for _ in range(workers)]
    for f in futures:
        f.result()


@dataclass
class RunSettings:
    """What one run asked for; a fresh copy per case (case_scope)."""

    parallel: bool = False
    explore_rng: Optional[random.Random] = None  # `explore`: upstream's random choices drawn
    coverage: Any = None  # a harness.framework.coverage.Coverage, when asked
    unsafe: Dict[str, str] = field(default_factory=dict)  # plugin -> the first difference seen
    lock: threading.Lock = field(default_factory=threading.Lock)

    def flag(self, plugin: str, detail: str) -> None:
        with self.lock:
            self.unsafe.setdefault(plugin or "?", detail)

    def failures(self) -> List[str]:
        return [f'plugin "{p}" is not safe for parallel filtering: {d}' for p, d in sorted(self.unsafe.items())]


_STACK: List[RunSettings] = []


def current() -> Optional[RunSettings]:
    """The settings of the case being run (None: the default sequential run)."""
    return _STACK[-1] if _STACK else None


@contextmanager
def using(settings: RunSettings) -> Iterator[RunSettings]:
    """Run with these settings (the CLI's --parallel, --coverage, explore)."""
    _STACK.append(settings)
    try:
        yield settings
    finally:
        _STACK.pop()


@contextmanager
def case_scope(case_parallel: bool) -> Iterator[Optional[RunSettings]]:
    """Per case: a fresh copy of the run's settings (so each case reports its own unsafe
    plugins and coverage), parallel when the run or the case asks for it."""
    outer = current()
    if outer is None and not case_parallel:
        yield None
        return
    cov = None
    if outer is not None and outer.coverage is not None:
        cov = type(outer.coverage)()
    s = RunSettings(parallel=case_parallel or (outer is not None and outer.parallel),
                    explore_rng=outer.explore_rng if outer is not None else None, coverage=cov)
    with using(s):
        yield s
