"""A global virtual-time loop with per-replica clocks, and an election among replicas on it.

`VirtualLoop` orders callbacks by global virtual time (ties: the order they were scheduled).
`ReplicaClock` is one process's local clock: local = skew + rate * global; `set_rate` changes the
rate from now on and moves that clock's pending timers (they wait for the local clock). It
implements the elector's Clock protocol.

`ElectionSim` runs kube-scheduler processes that only elect (no scheduling): start, crash, stop,
partition, clock rate, and keeps a trace: when each process believed it led (between
OnStartedLeading and the end of Run or a crash), every Lease write, and every attempt. The case
runner may reuse these pieces or replace them with its own loop.
"""

from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ..cluster import Cluster
from ..errors import UserError
from .client import LeaseClient
from .elector import LeaderElector
from .kube_scheduler import leader_elect, make_scheduler_elector, new_identity
from .resourcelock import lease_spec_to_record


class _Entry:
    __slots__ = ("time", "seq", "fn", "cancelled")

    def __init__(self, time: float, seq: int, fn: Callable[[], None]):
        self.time, self.seq, self.fn, self.cancelled = time, seq, fn, False

    def __lt__(self, other: "_Entry") -> bool:
        return (self.time, self.seq) < (other.time, other.seq)

    def cancel(self) -> None:
        self.cancelled = True


class VirtualLoop:
    """Callbacks at global virtual times (seconds), run in time order, ties in schedule order."""

    def __init__(self, max_callbacks: Optional[int] = None) -> None:
        self.now = 0.0
        self._heap: List[_Entry] = []
        self._seq = itertools.count()
        self.callbacks = 0  # run so far
        self.max_callbacks = max_callbacks  # more is an error (a case that would run for hours)

    def call_at(self, when: float, fn: Callable[[], None]) -> _Entry:
        e = _Entry(max(when, self.now), next(self._seq), fn)
        heapq.heappush(self._heap, e)
        return e

    def call_later(self, delay: float, fn: Callable[[], None]) -> _Entry:
        return self.call_at(self.now + delay, fn)

    def next_time(self) -> Optional[float]:
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0].time if self._heap else None

    def run_until(self, until: float) -> None:
        """Run every callback due at or before `until`, then set the time to `until`."""
        while True:
            t = self.next_time()
            if t is None or t > until:
                break
            e = heapq.heappop(self._heap)
            self.now = e.time
            self.callbacks += 1
            if self.max_callbacks is not None and self.callbacks > self.max_callbacks:
                raise UserError(f"more than {self.max_callbacks} timers fired by virtual time "
                                f"{self.now:g}s (Lease renewals, retries): advance less far, or "
                                f"give the replicas' clocks a lower rate")
            e.fn()
        self.now = max(self.now, float(until))


class _ClockTimer:
    __slots__ = ("clock", "local_due", "fn", "entry", "done")

    def __init__(self, clock: "ReplicaClock", local_due: float, fn: Callable[[], None]):
        self.clock, self.local_due, self.fn, self.entry, self.done = clock, local_due, fn, None, False

    def cancel(self) -> None:
        if not self.done:
            self.done = True
            if self.entry is not None:
                self.entry.cancel()
            self.clock._timers.pop(self, None)

    def _fire(self) -> None:
        if self.done:
            return
        self.done = True
        self.clock._timers.pop(self, None)
        self.fn()


class ReplicaClock:
    """A process's local clock on a VirtualLoop: local = skew + rate * global. It reads the
    global time at creation (synchronized wall clocks) unless `local_now` says otherwise. Any
    loop with a float `now` and `call_at(when, fn)` returning a handle with `cancel()` will do."""

    def __init__(self, loop: VirtualLoop, rate: float = 1.0, local_now: Optional[float] = None):
        self.loop = loop
        self.rate = float(rate)
        start = loop.now if local_now is None else float(local_now)
        self.skew = start - self.rate * loop.now
        self._timers: Dict[_ClockTimer, None] = {}  # pending, in the order they were set

    def now(self) -> float:
        if self.rate == 1.0:
            return self.loop.now + self.skew
        return self.skew + self.rate * self.loop.now

    def global_now(self) -> float:
        """The loop's (the case's) virtual time."""
        return self.loop.now

    def _global_of(self, local: float) -> float:
        if self.rate == 1.0:
            return local - self.skew
        return (local - self.skew) / self.rate

    def after(self, delay: float, fn: Callable[[], None]) -> _ClockTimer:
        t = _ClockTimer(self, self.now() + delay, fn)
        t.entry = self.loop.call_at(self._global_of(t.local_due), t._fire)
        self._timers[t] = None
        return t

    def set_rate(self, rate: float) -> None:
        """From now on the local clock runs `rate` times as fast as global time; pending timers
        still fire when the local clock reaches their due time."""
        local = self.now()
        self.rate = float(rate)
        self.skew = local - self.rate * self.loop.now
        for t in list(self._timers):
            t.entry.cancel()
            t.entry = self.loop.call_at(self._global_of(t.local_due), t._fire)

    def stop_all(self) -> None:
        for t in list(self._timers):
            t.cancel()


# ---- an election among kube-scheduler processes ----------------------------------------------

@dataclass
class Process:
    """One kube-scheduler process (an incarnation of a replica)."""

    replica: str
    identity: str
    clock: ReplicaClock
    client: LeaseClient
    elector: Optional[LeaderElector] = None
    alive: bool = True
    exit_code: Optional[int] = None
    exit_reason: str = ""
    leading_since: Optional[float] = None   # global time of OnStartedLeading
    resume: Optional[Callable[[], None]] = None  # the rest of its start, once its caches synced


@dataclass
class LeaseWrite:
    time: float          # global virtual time
    holder: str          # holderIdentity as written ("" when released)
    transitions: int
    resource_version: int


@dataclass
class ElectionTrace:
    # (replica, identity, from, to): global times a process believed it led (to None: still)
    leading: List[Tuple[str, str, float, Optional[float]]] = field(default_factory=list)
    lease_writes: List[LeaseWrite] = field(default_factory=list)
    events: List[Tuple[float, str, str]] = field(default_factory=list)  # (time, replica, what)


class ElectionSim:
    """Replicas `scheduler-0..n-1` electing over one Cluster. Jitter and identities come from
    `seed`: the same seed and the same schedule give the same trace."""

    def __init__(self, le: Mapping[str, Any], seed: int = 0, cluster: Optional[Cluster] = None,
                 loop: Optional[VirtualLoop] = None):
        self.le = dict(le)
        self.elect = leader_elect(self.le)  # leaderElect false: every process runs at once
        self.seed = seed
        self.cluster = cluster or Cluster()
        self.loop = loop or VirtualLoop()
        self.processes: Dict[str, Process] = {}
        self.rates: Dict[str, float] = {}
        self.partitioned_until: Dict[str, float] = {}
        self.trace = ElectionTrace()
        self._incarnation: Dict[str, int] = {}
        # hooks for what runs in the processes (the case runner's schedulers)
        self.on_process_start: Optional[Callable[[Process], None]] = None
        self.on_started_leading: Optional[Callable[[Process], None]] = None
        self.on_process_end: Optional[Callable[[Process], None]] = None
        # server.go waits for the informers' caches to sync before the election (or, with
        # leaderElect false, before scheduling): True holds the process there until synced()
        self.wait_for_sync: Optional[Callable[[Process], bool]] = None
        self.cluster.subscribe(self._on_cluster_event)

    # ---- the trace -----------------------------------------------------------------------
    def _on_cluster_event(self, kind: str, old, new) -> None:
        if kind != "Lease" or new is None:
            return
        rec = lease_spec_to_record(new.raw.get("spec") or {})
        self.trace.lease_writes.append(LeaseWrite(self.loop.now, rec.holder_identity,
                                                  rec.leader_transitions, new.resource_version))

    def _event(self, replica: str, what: str) -> None:
        self.trace.events.append((self.loop.now, replica, what))

    def leaders_now(self) -> List[str]:
        """Replicas whose process believes it leads at this instant."""
        return [p.replica for p in self.processes.values() if p.alive and p.leading_since is not None]

    def lease_holder(self) -> Optional[str]:
        """The replica named by the stored Lease's holderIdentity (None: no Lease or released)."""
        lease = self.cluster.get("Lease", self.le.get("resourceNamespace") or "kube-system",
                                 self.le.get("resourceName") or "kube-scheduler")
        if lease is None:
            return None
        holder = (lease.raw.get("spec") or {}).get("holderIdentity") or ""
        return holder.rsplit("_", 1)[0] if holder else None

    # ---- steps ---------------------------------------------------------------------------
    def start(self, replica: str) -> Process:
        """A new process of `replica` (new identity) starts as a candidate now."""
        old = self.processes.get(replica)
        if old is not None and old.alive:
            raise ValueError(f"{replica} is running")
        n = self._incarnation.get(replica, 0)
        self._incarnation[replica] = n + 1
        rng = random.Random(f"{self.seed}/{replica}/{n}")
        identity = new_identity(replica, rng)
        clock = ReplicaClock(self.loop, self.rates.get(replica, 1.0))
        client = LeaseClient(self.cluster, reachable=lambda: self.reachable(replica))
        proc = Process(replica, identity, clock, client)

        def started() -> None:
            proc.leading_since = self.loop.now
            self._event(replica, "started leading")
            if self.on_started_leading is not None:
                self.on_started_leading(proc)

        def exited(code: int, reason: str) -> None:
            self._end_leading(proc)
            proc.alive = False
            proc.exit_code, proc.exit_reason = code, reason
            proc.clock.stop_all()
            self._event(replica, f"exit {code}: {reason}")
            if self.on_process_end is not None:
                self.on_process_end(proc)

        def run() -> None:
            if not self.elect:
                started()  # leaderElect false: the process runs without an election
                return
            proc.elector = make_scheduler_elector(le=self.le, identity=identity, client=client,
                                                  clock=clock, rng=rng, on_started_leading=started,
                                                  on_exit=exited)
            proc.elector.run()

        self.processes[replica] = proc
        self._event(replica, f"start {identity}")
        if self.on_process_start is not None:
            self.on_process_start(proc)
        if self.wait_for_sync is not None and self.wait_for_sync(proc):
            proc.resume = run
            self._event(replica, "waiting for caches to sync")
            return proc
        run()
        return proc

    def synced(self, replica: str) -> None:
        """The informers of `replica`'s process synced: it goes on with its start (the election,
        or with leaderElect false, scheduling)."""
        proc = self.processes.get(replica)
        if proc is not None and proc.alive and proc.resume is not None:
            run, proc.resume = proc.resume, None
            self._event(replica, "caches synced")
            run()

    def _end_leading(self, proc: Process) -> None:
        if proc.leading_since is not None:
            self.trace.leading.append((proc.replica, proc.identity, proc.leading_since, self.loop.now))
            proc.leading_since = None

    def crash(self, replica: str) -> None:
        proc = self.processes[replica]
        if not proc.alive:
            return
        if proc.elector is not None:
            proc.elector.kill()
        proc.clock.stop_all()
        self._end_leading(proc)
        proc.alive = False
        proc.exit_reason = "crashed"
        self._event(replica, "crash")
        if self.on_process_end is not None:
            self.on_process_end(proc)

    def stop(self, replica: str) -> None:
        """A clean shutdown: Run's context is cancelled (ReleaseOnCancel releases a held Lease)."""
        proc = self.processes[replica]
        if not proc.alive:
            return
        self._event(replica, "stop")
        if proc.elector is not None:
            proc.elector.cancel()
            return
        self._end_leading(proc)  # no election: the process just ends
        proc.alive = False
        proc.exit_code, proc.exit_reason = 0, "Requested to terminate, exiting"
        proc.clock.stop_all()
        if self.on_process_end is not None:
            self.on_process_end(proc)

    def partition(self, replica: str, duration: float) -> None:
        """`replica` cannot reach the API server for `duration` seconds of global time."""
        self.partitioned_until[replica] = max(self.partitioned_until.get(replica, 0.0),
                                              self.loop.now + duration)
        self._event(replica, f"partition {duration}s")

    def reachable(self, replica: str) -> bool:
        return self.loop.now >= self.partitioned_until.get(replica, -1.0)

    def set_rate(self, replica: str, rate: float) -> None:
        self.rates[replica] = rate
        proc = self.processes.get(replica)
        if proc is not None and proc.alive:
            proc.clock.set_rate(rate)
        self._event(replica, f"clock rate {rate}")

    def run_until(self, t: float) -> None:
        self.loop.run_until(t)

    def finish(self) -> ElectionTrace:
        """Close the leading intervals still open (at the current time) and return the trace."""
        out = ElectionTrace(list(self.trace.leading), list(self.trace.lease_writes), list(self.trace.events))
        for p in self.processes.values():
            if p.alive and p.leading_since is not None:
                out.leading.append((p.replica, p.identity, p.leading_since, None))
        return out
