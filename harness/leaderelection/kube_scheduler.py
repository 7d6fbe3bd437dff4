"""How kube-scheduler v1.34 sets up its elector: cmd/kube-scheduler/app/options/options.go
(makeLeaderElectionConfig) and cmd/kube-scheduler/app/server.go (Run: the callbacks, then
NewLeaderElector, refused as "couldn't create leader elector: ...").
"""

from __future__ import annotations

import random
import uuid
from typing import Any, Callable, Mapping, Optional, Tuple

from ..config.validation import parse_duration
from ..errors import ConfigError
from .elector import (
    SECOND, LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaderElectorConfigError,
    new_leader_elector, validate_leader_election_config,
)
from .resourcelock import LeaseLock, LeasesClient

DEFAULT_LEASE_DURATION = 15 * SECOND  # RecommendedDefaultLeaderElectionConfiguration
DEFAULT_RENEW_DEADLINE = 10 * SECOND
DEFAULT_RETRY_PERIOD = 2 * SECOND


def _duration(value: Any, default: int) -> int:
    if value is None:
        return default
    ns = parse_duration(value) if isinstance(value, str) else int(value)
    return default if ns == 0 else ns


def leader_election_durations(le: Mapping[str, Any]) -> Tuple[int, int, int]:
    """leaseDuration, renewDeadline, retryPeriod of a `leaderElection` section in nanoseconds
    (unset or zero: the defaults 15s, 10s, 2s)."""
    return (_duration(le.get("leaseDuration"), DEFAULT_LEASE_DURATION),
            _duration(le.get("renewDeadline"), DEFAULT_RENEW_DEADLINE),
            _duration(le.get("retryPeriod"), DEFAULT_RETRY_PERIOD))


def leader_elect(le: Mapping[str, Any]) -> bool:
    v = le.get("leaderElect")
    return True if v is None else bool(v)


def check_leader_elector_config(le: Mapping[str, Any], source: Optional[str] = None) -> None:
    """What kube-scheduler's Run refuses after the configuration validated: NewLeaderElector's
    checks (e.g. renewDeadline must exceed 1.2 x retryPeriod). Raises ConfigError (exit 2) with
    server.go's message. Nothing to check when leaderElect is false."""
    if not leader_elect(le):
        return
    lease, renew, retry = leader_election_durations(le)
    lec = LeaderElectionConfig(
        lock=LeaseLock(str(le.get("resourceNamespace") or "kube-system"),
                       str(le.get("resourceName") or "kube-scheduler"), None, "check"),
        lease_duration=lease, renew_deadline=renew, retry_period=retry,
        callbacks=LeaderCallbacks(on_started_leading=lambda: None, on_stopped_leading=lambda: None),
        release_on_cancel=True, name="kube-scheduler")
    try:
        validate_leader_election_config(lec)
    except LeaderElectorConfigError as e:
        raise ConfigError(f"couldn't create leader elector: {e}", file=source, key="leaderElection") from None


def new_identity(hostname: str, rng: random.Random) -> str:
    """makeLeaderElectionConfig's identity: `<hostname>_<uuid>` (the uuid drawn from rng, so a
    seeded run repeats)."""
    return f"{hostname}_{uuid.UUID(int=rng.getrandbits(128), version=4)}"


def make_scheduler_elector(*, le: Mapping[str, Any], identity: str, client: LeasesClient, clock,
                           rng: random.Random, on_started_leading: Callable[[], None],
                           on_exit: Callable[[int, str], None],
                           on_new_leader: Optional[Callable[[str], None]] = None) -> LeaderElector:
    """The elector of one kube-scheduler process: a Lease lock on resourceNamespace/resourceName,
    the configured durations, ReleaseOnCancel, name "kube-scheduler", and server.go's callbacks:
    OnStartedLeading starts scheduling; OnStoppedLeading ends the process: on_exit(0, ...) when
    it was asked to terminate (cancel()), on_exit(1, "Leaderelection lost") otherwise.
    Call check_leader_elector_config first: this raises LeaderElectorConfigError on a bad one."""
    lease, renew, retry = leader_election_durations(le)
    lock = LeaseLock(str(le.get("resourceNamespace") or "kube-system"),
                     str(le.get("resourceName") or "kube-scheduler"), client, identity)
    holder: dict = {}

    def stopped() -> None:
        elector = holder["elector"]
        if elector.cancelled:
            on_exit(0, "Requested to terminate, exiting")
        else:
            on_exit(1, "Leaderelection lost")

    lec = LeaderElectionConfig(
        lock=lock, lease_duration=lease, renew_deadline=renew, retry_period=retry,
        callbacks=LeaderCallbacks(on_started_leading=on_started_leading, on_stopped_leading=stopped,
                                  on_new_leader=on_new_leader),
        release_on_cancel=True, name="kube-scheduler")
    elector = new_leader_elector(lec, clock, rng)
    holder["elector"] = elector
    return elector
