"""Plugins for `run --parallel` (tests/scheduler/test_parallel.py) and `run --coverage`."""

from __future__ import annotations

import threading
import time

from harness.framework import Plugin, Status, hookimpl


class RacyFilter(Plugin):
    """Keeps the node being filtered in `self` (unsynchronized per-cycle state): under threads
    another worker overwrites it during the sleep, and the plugin rejects a node it should pass."""

    name = "RacyFilter"

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.current = ""

    @hookimpl
    def filter(self, state, pod, node_info):
        self.current = node_info.name
        time.sleep(0.002)
        if self.current != node_info.name:
            return Status.unschedulable(f"saw node {self.current}")
        return None


class LockedFilter(RacyFilter):
    """The same per-cycle state, under a lock: thread-safe."""

    name = "LockedFilter"

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.lock = threading.Lock()

    @hookimpl
    def filter(self, state, pod, node_info):
        with self.lock:
            return RacyFilter.filter(self, state, pod, node_info)


class RacyScore(Plugin):
    """Score from unsynchronized state in `self`: raises when another worker interleaves."""

    name = "RacyScore"

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.current = ""

    @hookimpl
    def score(self, state, pod, node_info):
        self.current = node_info.name
        time.sleep(0.002)
        if self.current != node_info.name:
            raise RuntimeError(f"scored {self.current} for {node_info.name}")
        return 50, None


class Ledger(Plugin):
    """Reserve and Unreserve that only count (Unreserve is reached only when a later phase fails)."""

    name = "Ledger"

    @hookimpl
    def reserve(self, state, pod, node_name):
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        pass


@hookimpl
def schedharness_plugins():
    return [RacyFilter, LockedFilter, RacyScore, Ledger]
