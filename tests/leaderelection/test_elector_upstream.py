"""Ported from client-go's tools/leaderelection/leaderelection_test.go (TestTryAcquireOrRenewLeases,
TestLeaseSpecToLeaderElectionRecordRoundTrip, TestReleaseLeaseLeases, TestReleaseMethodCallsGet,
TestReleaseOnCancellation_Leases, TestLeaderElectionConfigValidation, TestFastPathLeaderElection),
against the v0.34.1 code the harness mirrors. The fake client answers with reactors as
fake.Clientset does; the clock is a manual one (upstream uses the real clock)."""

from __future__ import annotations

import random

import pytest

from harness.apierrors import Conflict
from harness.leaderelection.elector import (
    SECOND, LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaderElectorConfigError,
    new_leader_elector, validate_leader_election_config,
)
from harness.leaderelection.resourcelock import (
    LeaderElectionRecord, LeaseLock, lease_spec_to_record, record_to_lease_spec,
)

from ._fakes import FakeLeases, ManualClock, echo, lock_object, not_found

FUTURE = 1000.0 + 1000 * 3600
PAST = 1000.0 - 1000 * 3600


def _get(record):
    return lambda ns, name: lock_object(ns, name, record)


TRY_ACQUIRE_OR_RENEW = [
    dict(name="acquire from no object",
         reactors={"get": [not_found], "create": [echo]}, n_actions=2,
         expect_success=True, out_holder="baz"),
    dict(name="acquire from object without annotations",
         reactors={"get": [_get(None)], "update": [echo]}, n_actions=2,
         expect_success=True, transition_leader=True, out_holder="baz"),
    dict(name="acquire from led object with the lease duration seconds",
         reactors={"get": [_get(LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=3))],
                   "update": [echo]}, n_actions=3,
         retry_after=3, expect_success=True, transition_leader=True, out_holder="baz"),
    dict(name="acquire from unled object",
         reactors={"get": [_get(LeaderElectionRecord())], "update": [echo]}, n_actions=2,
         expect_success=True, transition_leader=True, out_holder="baz"),
    dict(name="acquire from led, unacked object",
         reactors={"get": [_get(LeaderElectionRecord(holder_identity="bing"))], "update": [echo]}, n_actions=2,
         observed_record=LeaderElectionRecord(holder_identity="bing"), observed_time=PAST,
         expect_success=True, transition_leader=True, out_holder="baz"),
    dict(name="acquire from empty led, acked object",
         reactors={"get": [_get(LeaderElectionRecord(holder_identity=""))], "update": [echo]}, n_actions=2,
         observed_time=FUTURE, expect_success=True, transition_leader=True, out_holder="baz"),
    # Upstream's record has leaseDurationSeconds 0 and passes only because the real clock moves
    # between tryAcquireOrRenew's `now` and setObservedRecord's Now(); API calls take no
    # virtual time here, so the record carries a real duration.
    dict(name="don't acquire from led, acked object",
         reactors={"get": [_get(LeaderElectionRecord(holder_identity="bing", lease_duration_seconds=10))]},
         n_actions=1, observed_time=FUTURE, expect_success=False, out_holder="bing"),
    # The fast path's Update fails without an API call (the lock has no Lease yet: "lease not
    # initialized, call get or create first"), hence a get and an update.
    dict(name="renew already acquired object",
         reactors={"get": [_get(LeaderElectionRecord(holder_identity="baz"))], "update": [echo]}, n_actions=2,
         observed_time=FUTURE, observed_record=LeaderElectionRecord(holder_identity="baz"),
         expect_success=True, out_holder="baz"),
]


def _elector(client, clock, observed_record=None, observed_time=None, reported=None, **cfg):
    lock = LeaseLock("foo", "bar", client, "baz")
    lec = LeaderElectionConfig(lock=lock, lease_duration=cfg.get("lease_duration", 10 * SECOND),
                               renew_deadline=cfg.get("renew_deadline", 0),
                               retry_period=cfg.get("retry_period", 0),
                               callbacks=cfg.get("callbacks") or LeaderCallbacks(
                                   on_new_leader=lambda l: reported.append(l) if reported is not None else None),
                               release_on_cancel=cfg.get("release_on_cancel", False))
    le = LeaderElector(lec, clock, random.Random(0))
    rec = observed_record or LeaderElectionRecord()
    le.observed_record = rec
    le.observed_raw_record = rec.raw()
    if observed_time is not None:
        le.observed_time = observed_time
    return le


@pytest.mark.parametrize("tc", TRY_ACQUIRE_OR_RENEW, ids=lambda tc: tc["name"])
def test_try_acquire_or_renew(tc):
    clock = ManualClock()
    client = FakeLeases(tc["reactors"])
    reported = []
    le = _elector(client, clock, tc.get("observed_record"), tc.get("observed_time"), reported)
    if tc["expect_success"] != le.try_acquire_or_renew():
        assert tc.get("retry_after"), "unexpected result of tryAcquireOrRenew"
        clock.step(tc["retry_after"])
        assert tc["expect_success"] == le.try_acquire_or_renew()
    assert le.observed_record.holder_identity == tc["out_holder"]
    assert len(client.actions) == tc["n_actions"], client.actions
    assert not client.unexpected
    assert le.observed_record.leader_transitions == (1 if tc.get("transition_leader") else 0)
    le.maybe_report_transition()
    assert reported == [tc["out_holder"]]


def test_lease_spec_to_leader_election_record_round_trip():
    old_spec = {"holderIdentity": "foo", "leaseDurationSeconds": 10,
                "acquireTime": "2026-01-01T00:00:07.123456Z", "renewTime": "2026-01-01T00:00:09.5Z",
                "leaseTransitions": 1}
    old_record = lease_spec_to_record(old_spec)
    new_spec = record_to_lease_spec(old_record)
    assert new_spec == dict(old_spec, renewTime="2026-01-01T00:00:09.500000Z")
    assert lease_spec_to_record(new_spec) == old_record


def test_raw_record_is_second_precise():
    """json.Marshal(LeaderElectionRecord): metav1.Time drops the fraction, so two renewals in
    the same second are the same bytes."""
    a = LeaderElectionRecord(holder_identity="a", lease_duration_seconds=15, acquire_time=3.0, renew_time=4.1)
    b = LeaderElectionRecord(holder_identity="a", lease_duration_seconds=15, acquire_time=3.0, renew_time=4.9)
    assert a.raw() == b.raw()
    assert a.raw() == ('{"holderIdentity":"a","leaseDurationSeconds":15,"acquireTime":"2026-01-01T00:00:03Z",'
                       '"renewTime":"2026-01-01T00:00:04Z","leaderTransitions":0,"strategy":"","preferredHolder":""}')
    assert LeaderElectionRecord().raw().count("null") == 2


def test_release_lease():
    """testReleaseLease "release acquired lock from no object": acquire, then release writes a
    record without holder."""
    clock = ManualClock()
    client = FakeLeases({"get": [_get(LeaderElectionRecord(holder_identity="baz"))], "create": [echo],
                         "update": [echo]})
    reported = []
    le = _elector(client, clock, reported=reported)
    assert le.try_acquire_or_renew()
    le.maybe_report_transition()
    assert le.release()
    assert le.observed_record.holder_identity == ""
    assert le.observed_record.lease_duration_seconds == 1
    assert le.observed_record.leader_transitions == 0
    assert client.actions == ["get", "update", "get", "update"]
    le.maybe_report_transition()
    assert reported == ["baz", ""]


def test_release_method_calls_get():
    client = FakeLeases({"get": [_get(LeaderElectionRecord(holder_identity="baz", lease_duration_seconds=10))],
                         "update": [echo]})
    le = _elector(client, ManualClock(), observed_record=LeaderElectionRecord(holder_identity="baz"),
                  observed_time=1000.0)
    le.release()
    assert client.actions[0] == "get"


def test_release_when_not_leader_writes_nothing():
    client = FakeLeases({"get": [_get(LeaderElectionRecord(holder_identity="other", lease_duration_seconds=10))]})
    le = _elector(client, ManualClock(), observed_record=LeaderElectionRecord(holder_identity="other"))
    assert le.release() is True
    assert client.actions == ["get"]


class _Store:
    """The reactors' shared lock object (upstream's lockObj)."""

    def __init__(self):
        self.obj = None

    def get(self, ns, name):
        if self.obj is None:
            return not_found(ns, name)
        return self.obj

    def put(self, obj):
        self.obj = obj
        return obj


def _run_config(**kw):
    return dict(lease_duration=15 * SECOND, renew_deadline=2 * SECOND, retry_period=1 * SECOND, **kw)


def test_release_on_cancellation_of_update():
    """testReleaseOnCancellation "release acquired lock on cancellation of update": the renew
    that is cancelled while in flight fails; the elector then releases the Lease."""
    store = _Store()
    clock = ManualClock()
    box = {}
    updates = []

    def update(obj):
        updates.append(1)
        n = len(updates)
        if n % 2 == 1 and n < 5:  # skip the fast path renews
            raise RuntimeError("context canceled")
        if n == 4:
            box["le"].cancel()
            raise RuntimeError("context canceled")
        return store.put(obj)

    client = FakeLeases({"get": [store.get], "create": [store.put], "update": [update]})
    stopped = []
    cb = LeaderCallbacks(on_started_leading=lambda: None, on_stopped_leading=lambda: stopped.append(1),
                         on_new_leader=lambda i: None)
    le = _elector(client, clock, **_run_config(release_on_cancel=True, callbacks=cb))
    box["le"] = le
    le.run()
    clock.run_until_idle()
    assert len(updates) == 5
    assert lease_spec_to_record(store.obj.raw["spec"]).holder_identity == ""
    assert le.config.lock.events == ["Normal LeaderElection baz became leader",
                                     "Normal LeaderElection baz stopped leading"]
    assert stopped == [1]


def test_release_on_cancellation_of_get():
    """testReleaseOnCancellation "release acquired lock on cancellation of get"."""
    store = _Store()
    clock = ManualClock()
    box = {}
    gets = []
    updates = []

    def get(ns, name):
        gets.append(1)
        if store.obj is not None:
            if len(gets) >= 4:
                if len(gets) == 4:
                    box["le"].cancel()
                raise RuntimeError("context canceled")
            return store.obj
        return not_found(ns, name)

    def update(obj):
        updates.append(1)
        if len(updates) % 2 == 1:  # always skip the fast path renew
            raise RuntimeError("context canceled")
        return store.put(obj)

    client = FakeLeases({"get": [get], "create": [store.put], "update": [update]})
    cb = LeaderCallbacks(on_started_leading=lambda: None, on_stopped_leading=lambda: None)
    le = _elector(client, clock, **_run_config(release_on_cancel=True, callbacks=cb))
    box["le"] = le
    le.run()
    clock.run_until_idle()
    # the cancelled renew's get fails; release's get fails too (cancelled), so nothing is released
    assert len(gets) == 5
    assert le.config.lock.events == ["Normal LeaderElection baz became leader",
                                     "Normal LeaderElection baz stopped leading"]


@pytest.mark.parametrize("name, ops, conflict_at, cancel_at", [
    ("Exercise fast path after lock acquired", ["get", "create", "update", "update"], None, 2),
    ("Fallback to slow path after fast path fails",
     ["get", "create", "update", "update", "get", "update", "update"], 2, 4),
])
def test_fast_path_leader_election(name, ops, conflict_at, cancel_at):
    store = _Store()
    box = {}
    updates = []

    def update(obj):
        updates.append(1)
        if len(updates) == conflict_at:
            raise Conflict("Lease", "fake conflict")
        if len(updates) == cancel_at:
            box["le"].cancel()
        return store.put(obj)

    client = FakeLeases({"get": [store.get], "create": [store.put], "update": [update]})
    clock = ManualClock()
    cb = LeaderCallbacks(on_started_leading=lambda: None, on_stopped_leading=lambda: None,
                         on_new_leader=lambda i: None)
    le = new_leader_elector(LeaderElectionConfig(lock=LeaseLock("foo", "bar", client, "baz"),
                                                 callbacks=cb, **_run_config()), clock, random.Random(1))
    box["le"] = le
    le.run()
    clock.run_until_idle()
    assert client.actions == ops
    assert le.phase == "stopped"


def _lec(**kw):
    base = dict(lock=LeaseLock("foo", "bar", None, "baz"), lease_duration=15 * SECOND,
                renew_deadline=2 * SECOND, retry_period=1 * SECOND, release_on_cancel=True,
                callbacks=LeaderCallbacks(on_started_leading=lambda: None, on_stopped_leading=lambda: None,
                                          on_new_leader=lambda i: None))
    base.update(kw)
    return LeaderElectionConfig(**base)


@pytest.mark.parametrize("kw, message", [
    ({}, None),
    ({"lock": LeaseLock("foo", "bar", None, "")}, "Lock identity is empty"),
    ({"lease_duration": 2 * SECOND}, "leaseDuration must be greater than renewDeadline"),
    ({"renew_deadline": 1200 * 1000000}, "renewDeadline must be greater than retryPeriod*JitterFactor"),
    ({"renew_deadline": 1200 * 1000000 + 1}, None),
    ({"lease_duration": 0, "renew_deadline": -2, "retry_period": -3}, "leaseDuration must be greater than zero"),
    ({"renew_deadline": 0, "retry_period": -1}, "renewDeadline must be greater than zero"),
    ({"retry_period": 0}, "retryPeriod must be greater than zero"),
    ({"callbacks": LeaderCallbacks(on_stopped_leading=lambda: None)}, "OnStartedLeading callback must not be nil"),
    ({"callbacks": LeaderCallbacks(on_started_leading=lambda: None)}, "OnStoppedLeading callback must not be nil"),
    ({"lock": None}, "Lock must not be nil."),
])
def test_leader_election_config_validation(kw, message):
    """TestLeaderElectionConfigValidation, plus each of NewLeaderElector's checks in its order."""
    if message is None:
        validate_leader_election_config(_lec(**kw))
    else:
        with pytest.raises(LeaderElectorConfigError) as e:
            validate_leader_election_config(_lec(**kw))
        assert str(e.value) == message
