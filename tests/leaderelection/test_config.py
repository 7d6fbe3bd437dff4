"""What kube-scheduler refuses at start about leaderElection: component-base's
ValidateLeaderElectionConfiguration (run by the configuration's validation, already in
harness.config.validation) and then, in server.go's Run, NewLeaderElector's checks, reported as
"couldn't create leader elector: <message>"."""

from __future__ import annotations

import random

import pytest

from harness.config.defaults import set_defaults
from harness.config.validation import validate_kube_scheduler_configuration
from harness.errors import ConfigError
from harness.leaderelection import (
    check_leader_elector_config, leader_election_durations, make_scheduler_elector, new_identity,
)
from harness.leaderelection.elector import LeaderElectorConfigError

from config._stubs import stub_registry  # tests/config (rootdir-relative package)


@pytest.mark.parametrize("le, message", [
    ({}, None),
    ({"leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s"}, None),
    # 1.2 x 2s = 2.4s: the renewDeadline must exceed it
    ({"renewDeadline": "2400ms", "retryPeriod": "2s"}, "renewDeadline must be greater than retryPeriod*JitterFactor"),
    ({"renewDeadline": "2401ms", "retryPeriod": "2s"}, None),
    ({"leaseDuration": "5s", "renewDeadline": "4s", "retryPeriod": "4s"},
     "renewDeadline must be greater than retryPeriod*JitterFactor"),
    ({"leaderElect": False, "renewDeadline": "1s", "retryPeriod": "2s"}, None),
    ({"leaseDuration": "0s", "renewDeadline": "0s", "retryPeriod": "0s"}, None),  # zero: the defaults
])
def test_new_leader_elector_checks(le, message):
    if message is None:
        check_leader_elector_config(le, "sched.yaml")
        return
    with pytest.raises(ConfigError) as e:
        check_leader_elector_config(le, "sched.yaml")
    assert str(e.value) == f"sched.yaml: leaderElection: couldn't create leader elector: {message}"


def test_config_validation_runs_before_and_catches_the_rest():
    """leaseDuration <= renewDeadline is refused by ValidateLeaderElectionConfiguration (exit 2
    from the configuration) before NewLeaderElector would see it."""
    cfg = set_defaults({"leaderElection": {"leaseDuration": "10s", "renewDeadline": "10s"}}, stub_registry())
    errors = validate_kube_scheduler_configuration(cfg, stub_registry())
    assert ("leaderElection.leaseDuration", 'Invalid value: "10s": must be greater than `RenewDeadline`') in errors
    cfg = set_defaults({"leaderElection": {"renewDeadline": "2s", "retryPeriod": "2s"}}, stub_registry())
    assert not [e for e in validate_kube_scheduler_configuration(cfg, stub_registry()) if "leaderElection" in e[0]]
    with pytest.raises(ConfigError):
        check_leader_elector_config(cfg["leaderElection"])


def test_durations_and_identity():
    assert leader_election_durations({}) == (15 * 10**9, 10 * 10**9, 2 * 10**9)
    assert leader_election_durations({"leaseDuration": "1m", "retryPeriod": "500ms"}) == (
        60 * 10**9, 10 * 10**9, 5 * 10**8)
    a = new_identity("scheduler-0", random.Random("1"))
    assert a == new_identity("scheduler-0", random.Random("1"))
    name, uid = a.split("_")
    assert name == "scheduler-0" and len(uid) == 36 and uid[14] == "4"


def test_make_scheduler_elector_refuses_what_new_leader_elector_refuses():
    with pytest.raises(LeaderElectorConfigError):
        make_scheduler_elector(le={"renewDeadline": "2s"}, identity="x_1", client=None, clock=None,
                               rng=random.Random(0), on_started_leading=lambda: None,
                               on_exit=lambda code, reason: None)
