"""The leader elector: client-go v0.34.1 tools/leaderelection/leaderelection.go, run as an
event-driven state machine over an injected clock (virtual time: no threads, no sleeping).

Go's goroutines and blocking loops become timers on the replica's own clock:

- `run()` is LeaderElector.Run: `acquire` (wait.JitterUntil(tryAcquireOrRenew, retryPeriod,
  JitterFactor 1.2, sliding)) until it succeeds, then OnStartedLeading and `renew`.
- `renew` is wait.Until(poll, retryPeriod) where each `poll` is
  wait.PollUntilContextTimeout(retryPeriod, renewDeadline, immediate): a try at once, then one
  on every tick of a retryPeriod ticker started with the poll, until one succeeds or the
  renewDeadline context expires (the deadline wins a tie with a tick: its timer was armed first).
  A poll that times out ends `renew`: with ReleaseOnCancel the elector releases, then
  OnStoppedLeading.
- `cancel()` is the cancellation of Run's context (a clean stop); `kill()` a crash (nothing more
  happens: no write, no callback).

Each API call takes no virtual time. Callbacks run synchronously (Go runs OnStartedLeading and
OnNewLeader in goroutines); a callback may call `cancel()` or `kill()`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Protocol, Tuple

from ..apierrors import is_not_found
from .resourcelock import LeaderElectionRecord, LeaseLock

JITTER_FACTOR = 1.2
SECOND = 1_000_000_000  # durations are Go time.Duration: integer nanoseconds
ZERO_TIME = -math.inf   # time.Time{}: before any instant of any clock


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float:
        """This replica's local clock, in seconds."""

    def after(self, delay: float, fn: Callable[[], None]) -> Timer:
        """Run fn when the local clock has advanced by delay seconds."""


def jitter(duration: int, max_factor: float, rng: random.Random) -> int:
    """wait.Jitter: duration + rand*maxFactor*duration (maxFactor <= 0 means 1), in ns."""
    if max_factor <= 0.0:
        max_factor = 1.0
    return duration + int(rng.random() * max_factor * float(duration))


@dataclass
class LeaderCallbacks:
    """leaderelection.LeaderCallbacks."""

    on_started_leading: Optional[Callable[[], None]] = None
    on_stopped_leading: Optional[Callable[[], None]] = None
    on_new_leader: Optional[Callable[[str], None]] = None


@dataclass
class LeaderElectionConfig:
    """leaderelection.LeaderElectionConfig; durations in nanoseconds."""

    lock: Optional[LeaseLock]
    lease_duration: int
    renew_deadline: int
    retry_period: int
    callbacks: LeaderCallbacks = field(default_factory=LeaderCallbacks)
    release_on_cancel: bool = False
    name: str = ""


class LeaderElectorConfigError(ValueError):
    """NewLeaderElector refused the configuration (upstream's message)."""


def validate_leader_election_config(lec: LeaderElectionConfig) -> None:
    """The checks of leaderelection.NewLeaderElector, in its order, with its messages."""
    if lec.lease_duration <= lec.renew_deadline:
        raise LeaderElectorConfigError("leaseDuration must be greater than renewDeadline")
    if lec.renew_deadline <= int(JITTER_FACTOR * float(lec.retry_period)):
        raise LeaderElectorConfigError("renewDeadline must be greater than retryPeriod*JitterFactor")
    if lec.lease_duration < 1:
        raise LeaderElectorConfigError("leaseDuration must be greater than zero")
    if lec.renew_deadline < 1:
        raise LeaderElectorConfigError("renewDeadline must be greater than zero")
    if lec.retry_period < 1:
        raise LeaderElectorConfigError("retryPeriod must be greater than zero")
    if lec.callbacks.on_started_leading is None:
        raise LeaderElectorConfigError("OnStartedLeading callback must not be nil")
    if lec.callbacks.on_stopped_leading is None:
        raise LeaderElectorConfigError("OnStoppedLeading callback must not be nil")
    if lec.lock is None:
        raise LeaderElectorConfigError("Lock must not be nil.")
    if lec.lock.identity() == "":
        raise LeaderElectorConfigError("Lock identity is empty")


def new_leader_elector(lec: LeaderElectionConfig, clock: Clock, rng: random.Random) -> "LeaderElector":
    """leaderelection.NewLeaderElector: validate, then build (raises LeaderElectorConfigError)."""
    validate_leader_election_config(lec)
    return LeaderElector(lec, clock, rng)


# Phases of Run.
NEW, ACQUIRING, LEADING, STOPPED = "new", "acquiring", "leading", "stopped"


class LeaderElector:
    """leaderelection.LeaderElector. Build it with `new_leader_elector` (tests build it directly,
    as upstream's tests do, to set the observed state)."""

    def __init__(self, config: LeaderElectionConfig, clock: Clock, rng: random.Random):
        self.config = config
        self.clock = clock
        self.rng = rng
        self.observed_record = LeaderElectionRecord()
        self.observed_raw_record: Optional[str] = None
        self.observed_time: float = ZERO_TIME
        self.reported_leader = ""
        self.phase = NEW
        self.cancelled = False           # Run's context is done (cancel())
        self.stop_reason = ""            # why Run ended
        self.log: List[Tuple[float, str]] = []   # (local time, klog line) for a trace
        # (local time, succeeded, observedTime after it) of every try made by acquire and renew
        self.attempts: List[Tuple[float, bool, float]] = []
        self._timer: Optional[Timer] = None
        self._in_step = False
        self._poll_start: Optional[float] = None   # local time the current renew poll began
        self._poll_tick = 0

    @property
    def identity(self) -> str:
        return self.config.lock.identity()

    # ---- the observed record -----------------------------------------------------------------
    def get_leader(self) -> str:
        """GetLeader."""
        return self.observed_record.holder_identity

    def is_leader(self) -> bool:
        """IsLeader: the last observed record names this client."""
        return self.observed_record.holder_identity == self.config.lock.identity()

    def is_lease_valid(self, now: float) -> bool:
        """isLeaseValid: observedTime + the record's leaseDurationSeconds is after now."""
        return self.observed_time + self.observed_record.lease_duration_seconds > now

    def set_observed_record(self, record: LeaderElectionRecord) -> None:
        """setObservedRecord: the record, and observedTime = now on this elector's clock."""
        self.observed_record = LeaderElectionRecord(**vars(record))
        self.observed_time = self.clock.now()

    def _log(self, msg: str) -> None:
        self.log.append((self.clock.now(), msg))

    # ---- one try -----------------------------------------------------------------------------
    def try_acquire_or_renew(self) -> bool:
        """tryAcquireOrRenew: the fast path for the leader, else get or create the record, then
        take it if it is free or expired by this elector's own clock (observedTime)."""
        lock = self.config.lock
        now = self.clock.now()
        record = LeaderElectionRecord(
            holder_identity=lock.identity(),
            lease_duration_seconds=self.config.lease_duration // SECOND,
            renew_time=now, acquire_time=now)

        # 1. fast path for the leader: update optimistically over the record observed last time
        if self.is_leader() and self.is_lease_valid(now):
            old = self.observed_record
            record.acquire_time = old.acquire_time
            record.leader_transitions = old.leader_transitions
            try:
                lock.update(record)
            except Exception as e:
                self._log(f"Failed to update lock optimistically: {e}, falling back to slow path")
            else:
                self.set_observed_record(record)
                return True

        # 2. obtain or create the ElectionRecord
        try:
            old, old_raw = lock.get()
        except Exception as e:
            if not is_not_found(e):
                self._log(f"error retrieving resource lock {lock.describe()}: {e}")
                return False
            try:
                lock.create(record)
            except Exception as e2:
                self._log(f"error initially creating leader election record: {e2}")
                return False
            self.set_observed_record(record)
            return True

        # 3. record obtained, check the identity and the time
        if self.observed_raw_record != old_raw:
            self.set_observed_record(old)
            self.observed_raw_record = old_raw
        if old.holder_identity and self.is_lease_valid(now) and not self.is_leader():
            self._log(f"lock is held by {old.holder_identity} and has not yet expired")
            return False

        # 4. update: keep acquireTime and transitions when renewing, count one when taking over
        if self.is_leader():
            record.acquire_time = old.acquire_time
            record.leader_transitions = old.leader_transitions
        else:
            record.leader_transitions = old.leader_transitions + 1
        try:
            lock.update(record)
        except Exception as e:
            self._log(f"Failed to update lock: {e}")
            return False
        self.set_observed_record(record)
        return True

    def release(self) -> bool:
        """release: read the Lease (for its resourceVersion); if this elector observed itself as
        the holder, write a released record: no holder, leaseDurationSeconds 1, acquire and renew
        time now, the transitions read. IsLeader looks at the observed record, not the one read."""
        lock = self.config.lock
        try:
            old, _ = lock.get()
        except Exception as e:
            if not is_not_found(e):
                self._log(f"error retrieving resource lock {lock.describe()}: {e}")
                return False
            self._log(f"lease lock not found: {lock.describe()}")
            return False
        if not self.is_leader():
            return True
        now = self.clock.now()
        record = LeaderElectionRecord(leader_transitions=old.leader_transitions,
                                      lease_duration_seconds=1, renew_time=now, acquire_time=now)
        try:
            lock.update(record)
        except Exception as e:
            self._log(f"Failed to release lock: {e}")
            return False
        self.set_observed_record(record)
        return True

    def maybe_report_transition(self) -> None:
        """maybeReportTransition: OnNewLeader when the observed holder changed."""
        if self.observed_record.holder_identity == self.reported_leader:
            return
        self.reported_leader = self.observed_record.holder_identity
        if self.config.callbacks.on_new_leader is not None:
            self.config.callbacks.on_new_leader(self.reported_leader)

    def check(self, max_tolerable_expired_lease: int) -> Optional[str]:
        """Check (the healthz watchdog): an error message when this leader has not renewed for
        leaseDuration + max_tolerable_expired_lease (ns)."""
        if not self.is_leader():
            return None
        if (self.clock.now() - self.observed_time) * SECOND > self.config.lease_duration + max_tolerable_expired_lease:
            return f"failed election to renew leadership on lease {self.config.name}"
        return None

    # ---- Run ---------------------------------------------------------------------------------
    def run(self) -> None:
        """Run: acquire (first try now), then lead and renew until the lease is lost or the
        context is cancelled; OnStoppedLeading always ends it."""
        if self.phase != NEW:
            raise RuntimeError("LeaderElector.run called twice")
        self.phase = ACQUIRING
        self._log(f"attempting to acquire leader lease {self.config.lock.describe()}...")
        self._step(self._acquire_try)

    def cancel(self) -> None:
        """Cancel Run's context (a clean stop, SIGTERM for kube-scheduler)."""
        if self.cancelled or self.phase == STOPPED:
            self.cancelled = True
            return
        self.cancelled = True
        if not self._in_step:
            self._step(self._on_cancel)

    def kill(self) -> None:
        """The process dies: timers stop, nothing is written, no callback runs."""
        self._cancel_timer()
        self.phase = STOPPED
        self.stop_reason = self.stop_reason or "killed"

    @property
    def leading(self) -> bool:
        """Between OnStartedLeading and the end of Run."""
        return self.phase == LEADING

    # ---- internals ---------------------------------------------------------------------------
    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _after(self, delay_ns: int, fn: Callable[[], None]) -> None:
        self._cancel_timer()
        if self.phase == STOPPED:  # killed by a callback during this step
            return
        self._timer = self.clock.after(delay_ns / SECOND, lambda: self._fire(fn))

    def _fire(self, fn: Callable[[], None]) -> None:
        self._timer = None
        if self.phase in (NEW, STOPPED):
            return
        self._step(fn)

    def _step(self, fn: Callable[[], None]) -> None:
        """Run one piece of the loop; a cancel() made meanwhile (by a callback) is handled after."""
        self._in_step = True
        try:
            fn()
        finally:
            self._in_step = False
        if self.cancelled and self.phase in (ACQUIRING, LEADING):
            self._step(self._on_cancel)

    def _on_cancel(self) -> None:
        self._cancel_timer()
        if self.phase == ACQUIRING:
            # JitterUntil sees ctx.Done: acquire returns false, Run returns.
            self._stop("context cancelled while acquiring")
        elif self.phase == LEADING:
            if self._poll_start is not None:
                # the poll returns ctx.Err(); renew reports and gives up
                self._poll_start = None
                self.maybe_report_transition()
                self._log(f"failed to renew lease {self.config.lock.describe()}: context canceled")
            self._end_renew("context cancelled")
        elif self.phase == NEW:
            self.phase = STOPPED

    # acquire: wait.JitterUntil(f, retryPeriod, 1.2, sliding=true)
    def _try(self) -> bool:
        ok = self.try_acquire_or_renew()
        self.attempts.append((self.clock.now(), ok, self.observed_time))
        return ok

    def _acquire_try(self) -> None:
        succeeded = self._try()
        self.maybe_report_transition()
        # sliding: the next period is drawn after f, on every round (also the last one)
        delay = jitter(self.config.retry_period, JITTER_FACTOR, self.rng)
        if self.phase != ACQUIRING:
            return
        if not succeeded:
            self._after(delay, self._acquire_try)
            return
        self.config.lock.record_event("became leader")
        self._log(f"successfully acquired lease {self.config.lock.describe()}")
        self.phase = LEADING
        if self.config.callbacks.on_started_leading is not None:
            self.config.callbacks.on_started_leading()
        if self.phase == LEADING and not self.cancelled:
            self._renew_round()

    # renew: wait.Until(poll, retryPeriod); poll = PollUntilContextTimeout(retry, renewDeadline)
    def _renew_round(self) -> None:
        self._poll_start = self.clock.now()
        self._poll_tick = 0
        self._poll_try()

    def _poll_try(self) -> None:
        if self._try():
            self._poll_start = None
            self.maybe_report_transition()
            self._after(self.config.retry_period, self._renew_round)
            return
        k = self._poll_tick
        retry, deadline = self.config.retry_period, self.config.renew_deadline
        if (k + 1) * retry < deadline:
            self._poll_tick = k + 1
            self._after(retry, self._poll_try)
        else:
            self._after(deadline - k * retry, self._poll_timeout)

    def _poll_timeout(self) -> None:
        self._poll_start = None
        self.maybe_report_transition()
        self._log(f"failed to renew lease {self.config.lock.describe()}: context deadline exceeded")
        self._end_renew("failed to renew lease: context deadline exceeded")

    def _end_renew(self, reason: str) -> None:
        if self.config.release_on_cancel:
            self.release()
        self.config.lock.record_event("stopped leading")  # renew's deferred RecordEvent
        self._stop(reason)

    def _stop(self, reason: str) -> None:
        self._cancel_timer()
        self.phase = STOPPED
        self.stop_reason = reason
        if self.config.callbacks.on_stopped_leading is not None:
            self.config.callbacks.on_stopped_leading()
