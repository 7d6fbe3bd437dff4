"""Fakes for the leader election tests: a manual clock, and a Lease client with reactors in the
manner of client-go's fake.Clientset (k8s.io/client-go/testing)."""

from __future__ import annotations

import heapq
import itertools
from typing import Callable, Dict, List, Optional

from harness.api.objects import KubeObject
from harness.apierrors import NotFound
from harness.leaderelection.resourcelock import LeaderElectionRecord, new_lease, record_to_lease_spec


class ManualClock:
    """A clock the test moves by hand; timers fire in due order when it is stepped."""

    def __init__(self, now: float = 1000.0):
        self._now = now
        self._heap: list = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    def after(self, delay: float, fn: Callable[[], None]):
        entry = [self._now + delay, next(self._seq), fn, False]
        heapq.heappush(self._heap, entry)

        class _T:
            def cancel(self_inner):
                entry[3] = True
        return _T()

    def pending(self) -> List[float]:
        return sorted(e[0] for e in self._heap if not e[3])

    def step(self, delta: float) -> None:
        end = self._now + delta
        while self._heap and self._heap[0][0] <= end:
            due, _, fn, cancelled = heapq.heappop(self._heap)
            if cancelled:
                continue
            self._now = due
            fn()
        self._now = end

    def run_until_idle(self, limit: float = 1e6) -> None:
        while any(not e[3] for e in self._heap):
            nxt = min(e[0] for e in self._heap if not e[3])
            if nxt - self._now > limit:
                break
            self.step(nxt - self._now)


def lock_object(namespace: str, name: str, record: Optional[LeaderElectionRecord]) -> KubeObject:
    """createLockObject: a Lease with the record's spec (an empty spec without a record)."""
    return new_lease(namespace, name, record_to_lease_spec(record) if record is not None else {})


class FakeLeases:
    """fake.Clientset with reactors: for each call, the first reactor of its verb answers (a
    function of the object sent, or of (namespace, name) for get). A call no reactor answers is
    recorded and fails, like upstream's catch-all "unreachable action" reactor."""

    def __init__(self, reactors: Optional[Dict[str, List[Callable]]] = None):
        self.reactors: Dict[str, List[Callable]] = reactors or {}
        self.actions: List[str] = []
        self.unexpected: List[str] = []

    def _react(self, verb: str, *args):
        self.actions.append(verb)
        fns = self.reactors.get(verb) or []
        if not fns:
            self.unexpected.append(verb)
            raise RuntimeError("unreachable action")
        return fns[0](*args)

    def get(self, namespace: str, name: str) -> KubeObject:
        return self._react("get", namespace, name)

    def create(self, lease: KubeObject) -> KubeObject:
        return self._react("create", lease)

    def update(self, lease: KubeObject) -> KubeObject:
        return self._react("update", lease)


def not_found(namespace: str, name: str):
    raise NotFound("Lease", name)


def echo(obj: KubeObject) -> KubeObject:
    """`return true, action.GetObject(), nil`."""
    return obj
