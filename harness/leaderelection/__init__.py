"""Leader election as client-go v0.34.1 runs it (tools/leaderelection), in virtual time.

- resourcelock: LeaderElectionRecord, LeaseLock and the record <-> LeaseSpec conversions.
- elector: LeaderElector (tryAcquireOrRenew, acquire, renew, release) over an injected clock.
- client: LeaseClient, a replica's Lease calls on the simulated API server.
- kube_scheduler: kube-scheduler's elector (identity, callbacks, NewLeaderElector's refusals).
- sim: a small global virtual-time loop with per-replica clocks (rates), for tests and reuse.

Imports: config (the leaderElection settings' validation), the simulated cluster, api and the
base modules; never the scheduler, the case or anything above.
"""

from .client import LeaseClient
from .elector import (
    JITTER_FACTOR, LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaderElectorConfigError,
    jitter, new_leader_elector,
)
from .kube_scheduler import (
    check_leader_elector_config, leader_elect, leader_election_durations, make_scheduler_elector,
    new_identity,
)
from .resourcelock import LeaderElectionRecord, LeaseLock

__all__ = [
    "JITTER_FACTOR", "LeaderCallbacks", "LeaderElectionConfig", "LeaderElectionRecord",
    "LeaderElector", "LeaderElectorConfigError", "LeaseClient", "LeaseLock",
    "check_leader_elector_config", "jitter", "leader_elect", "leader_election_durations",
    "make_scheduler_elector", "new_identity", "new_leader_elector",
]
