"""kube-scheduler replicas electing in virtual time (harness.leaderelection.sim), with
leaderElection's defaults: leaseDuration 15s, renewDeadline 10s, retryPeriod 2s. A jittered retry
waits retryPeriod + rand*1.2*retryPeriod, i.e. between 2s and 4.4s."""

from __future__ import annotations

import pytest

from harness.leaderelection.sim import ElectionSim, ReplicaClock, VirtualLoop

LD, RD, RP = 15.0, 10.0, 2.0
JITTERED = RP * (1 + 1.2)  # the longest wait between two tries of a candidate: 4.4s


def _sim(n, seed=0, le=None, rates=None):
    s = ElectionSim(le or {}, seed=seed)
    for name, rate in (rates or {}).items():
        s.set_rate(name, rate)
    for i in range(n):
        s.start(f"scheduler-{i}")
    return s


def _writes_by(s, replica):
    ident = s.processes[replica].identity
    return [w.time for w in s.trace.lease_writes if w.holder == ident]


def _leading(trace, replica):
    return [(a, b) for r, _, a, b in trace.leading if r == replica]


def _observed_before_success(proc, t):
    """The observedTime the winning try acted on (the one left by the try before it)."""
    attempts = proc.elector.attempts
    i = next(i for i, (at, ok, _) in enumerate(attempts) if ok and abs(at - t) < 1e-9)
    return attempts[i - 1][2]


def test_first_candidate_acquires_at_once():
    s = _sim(3)
    s.run_until(60)
    tr = s.finish()
    assert _leading(tr, "scheduler-0") == [(0.0, None)]
    assert _leading(tr, "scheduler-1") == [] and _leading(tr, "scheduler-2") == []
    assert s.lease_holder() == "scheduler-0"
    # create at 0, the first renew at once (renew's first poll tries immediately), then every 2s
    assert _writes_by(s, "scheduler-0")[:5] == [0.0, 0.0, 2.0, 4.0, 6.0]
    assert {w.transitions for w in tr.lease_writes} == {0}


@pytest.mark.parametrize("seed", range(12))
def test_crashed_holder_is_replaced_within_the_window(seed):
    s = _sim(3, seed)
    s.run_until(7.3)
    last_renewal = _writes_by(s, "scheduler-0")[-1]
    assert last_renewal == 6.0
    s.crash("scheduler-0")
    s.run_until(60)
    tr = s.finish()
    (winner, _, took_over, _), = [x for x in tr.leading if x[0] != "scheduler-0"]
    observed = _observed_before_success(s.processes[winner], took_over)
    # client-go's rule: no earlier than leaseDuration after the winner last saw the record change
    # (by its own clock), no later than that plus one jittered retry
    assert last_renewal <= observed <= last_renewal + JITTERED
    assert observed + LD <= took_over <= observed + LD + JITTERED
    assert last_renewal + LD <= took_over <= last_renewal + LD + 2 * JITTERED
    assert s.lease_holder() == winner
    assert tr.lease_writes[-1].transitions == 1


@pytest.mark.parametrize("seed", range(8))
def test_clean_stop_hands_over_at_the_next_retry(seed):
    s = _sim(2, seed)
    s.run_until(7.3)
    s.stop("scheduler-0")
    assert s.lease_holder() is None          # released: holderIdentity ""
    released = s.trace.lease_writes[-1]
    assert released.time == 7.3 and released.holder == "" and released.transitions == 0
    assert s.processes["scheduler-0"].exit_code == 0
    s.run_until(30)
    tr = s.finish()
    (a, b), = _leading(tr, "scheduler-0")
    assert (a, b) == (0.0, 7.3)
    (t, _), = _leading(tr, "scheduler-1")
    assert 7.3 < t <= 7.3 + JITTERED
    assert s.lease_holder() == "scheduler-1" and tr.lease_writes[-1].transitions == 1


def test_partitioned_holder_fails_to_renew_within_renew_deadline_and_exits():
    s = _sim(2, seed=3)
    s.run_until(5.0)
    s.partition("scheduler-0", 30)
    s.run_until(60)
    tr = s.finish()
    # last renewal at 4; the round at 6 fails and retries on its 2s ticker (8, 10, 12, 14); its
    # renewDeadline context expires at 6 + 10 = 16: the process exits (kube-scheduler does not
    # step down) and, cut off, cannot release
    assert _writes_by(s, "scheduler-0")[-1] == 4.0
    assert _leading(tr, "scheduler-0") == [(0.0, 16.0)]
    p0 = s.processes["scheduler-0"]
    assert (p0.exit_code, p0.exit_reason) == (1, "Leaderelection lost")
    (t, _), = _leading(tr, "scheduler-1")
    assert 4.0 + LD <= t <= 4.0 + LD + 2 * JITTERED
    assert s.lease_holder() == "scheduler-1"


def test_short_partition_heals_before_the_deadline():
    s = _sim(2, seed=3)
    s.run_until(5.0)
    s.partition("scheduler-0", 5)   # reachable again at 10: the tick at 10 renews
    s.run_until(60)
    tr = s.finish()
    assert _leading(tr, "scheduler-0") == [(0.0, None)]
    assert 10.0 in _writes_by(s, "scheduler-0") and 6.0 not in _writes_by(s, "scheduler-0")
    assert {w.transitions for w in tr.lease_writes} == {0}


def test_restarted_replica_waits_for_its_old_record_to_expire():
    s = _sim(1)
    s.run_until(5.0)
    s.crash("scheduler-0")
    s.start("scheduler-0")            # a new process: a new identity
    s.run_until(40)
    tr = s.finish()
    # its first Get at 5 shows the record of the old identity (renewed at 4): it takes over at
    # its first try at or after 5 + 15 = 20
    (_, _, t, _) = tr.leading[-1]
    assert tr.leading[0][:3] == ("scheduler-0", tr.leading[0][1], 0.0)
    assert 20.0 <= t <= 20.0 + JITTERED
    assert tr.leading[-1][1] != tr.leading[0][1]
    assert tr.lease_writes[-1].transitions == 1


def test_fast_clock_takes_over_early_with_overlap():
    """scheduler-1's clock runs 1.5x fast: 15s of its clock pass in 10s. When scheduler-0 is cut
    off at 5 (last renewal at 4), scheduler-1 takes over about 10s after it last saw a change,
    before scheduler-0's renewDeadline expires at 16: both believe they lead for a while."""
    overlaps = []
    for seed in range(10):
        s = _sim(2, seed, rates={"scheduler-1": 1.5})
        s.run_until(5.0)
        s.partition("scheduler-0", 30)
        s.run_until(40)
        tr = s.finish()
        assert _leading(tr, "scheduler-0") == [(0.0, 16.0)]
        (t, _), = _leading(tr, "scheduler-1")
        p1 = s.processes["scheduler-1"]
        observed_local = _observed_before_success(p1, p1.clock.skew + 1.5 * t)
        took_local = p1.clock.skew + 1.5 * t
        assert observed_local + LD <= took_local + 1e-9 <= observed_local + LD + JITTERED + 1e-9
        assert t < 4.0 + LD   # earlier than any candidate with a true clock
        overlaps.append(max(0.0, 16.0 - t))
    assert max(overlaps) > 0   # the overlap client-go allows (it has no fencing)


def test_same_seed_same_trace():
    def run(seed):
        s = _sim(3, seed)
        s.run_until(3.1)
        s.crash("scheduler-0")
        s.run_until(30)
        s.partition(s.lease_holder(), 15)
        s.run_until(60)
        s.start("scheduler-0")
        s.run_until(120)
        tr = s.finish()
        return tr.leading, [(w.time, w.holder, w.transitions) for w in tr.lease_writes], tr.events
    assert run(7) == run(7)
    assert run(7) != run(8)


def test_replica_clock_rate_change_moves_pending_timers():
    loop = VirtualLoop()
    c = ReplicaClock(loop)
    fired = []
    c.after(10, lambda: fired.append(("a", loop.now, c.now())))
    loop.run_until(4)
    c.set_rate(2.0)           # 6 local seconds left: 3 global seconds
    loop.run_until(20)
    assert fired == [("a", 7.0, 10.0)]
    assert c.now() == 10.0 + 2 * 13


def test_renew_deadline_plus_retry_beyond_lease_duration_overlaps_even_with_true_clocks():
    """leaseDuration 11s, renewDeadline 10s, retryPeriod 2s passes every check (11 > 10 > 2.4),
    yet a cut-off holder (last renewal at 4) believes it leads until 6 + 10 = 16 while a
    candidate may take over from 4 + 11 = 15."""
    overlaps = []
    for seed in range(10):
        s = _sim(2, seed, le={"leaseDuration": "11s", "renewDeadline": "10s", "retryPeriod": "2s"})
        s.run_until(5.0)
        s.partition("scheduler-0", 30)
        s.run_until(40)
        tr = s.finish()
        assert _leading(tr, "scheduler-0") == [(0.0, 16.0)]
        (t, _), = _leading(tr, "scheduler-1")
        assert 15.0 <= t
        overlaps.append(16.0 - t)
    assert max(overlaps) > 0


def test_stopping_a_cut_off_leader_cannot_release():
    """ReleaseOnCancel's release needs the API server: a partitioned leader that is stopped exits
    (code 0) without writing, and the others wait for its record to expire."""
    s = _sim(2, seed=5)
    s.run_until(5.0)
    s.partition("scheduler-0", 60)
    s.stop("scheduler-0")
    assert s.processes["scheduler-0"].exit_code == 0
    assert s.lease_holder() == "scheduler-0"
    s.run_until(40)
    tr = s.finish()
    (t, _), = _leading(tr, "scheduler-1")
    assert 4.0 + LD <= t <= 4.0 + LD + 2 * JITTERED


def test_health_check_of_a_leader_that_cannot_renew():
    """LeaderElector.Check (kube-scheduler's healthz watchdog, 20s tolerance)."""
    s = _sim(1)
    s.run_until(3.0)
    el = s.processes["scheduler-0"].elector
    assert el.check(20 * 10**9) is None
    el.observed_time = -40.0
    assert el.check(20 * 10**9) == "failed election to renew leadership on lease kube-scheduler"
