"""What kube-scheduler refuses at start about leaderElection, and step typos of replica cases:
each ends with one line naming the file and the key, exit code 2 (harness/errors.py).

Start-up refusals come in kube-scheduler's order: the configuration's validation
(ValidateKubeSchedulerConfiguration runs component-base's ValidateLeaderElectionConfiguration,
then checks resourceLock), then server.go's Run builds the elector and NewLeaderElector refuses
what the validation let through ("couldn't create leader elector: ..."). Real kube-scheduler
exits 1 on either; the harness exits 2 as for every configuration error."""

from __future__ import annotations

import textwrap

import pytest

from harness.cli import main

NODE = ('  - {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}, '
        'status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}\n')
POD = ('  - {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: [{name: c, image: pause, '
       'resources: {requests: {cpu: 100m}}}]}}\n')


def case_text(leader_election=None, replicas=2, steps=None, expect=None):
    out = "apiVersion: schedharness/v1alpha1\nkind: Case\nmetadata: {name: le-error}\n"
    if replicas is not None:
        out += f"replicas: {replicas}\n"
    if leader_election is not None:
        out += ("config:\n  apiVersion: kubescheduler.config.k8s.io/v1\n  kind: KubeSchedulerConfiguration\n"
                f"  leaderElection: {leader_election}\n")
    out += "cluster:\n" + NODE + "pods:\n" + POD
    if steps is not None:
        out += "steps:\n" + textwrap.indent(steps, "  ")
    out += "expect:\n" + (expect or "  bindings: {web: node-a}\n")
    return out


def run_cli(tmp_path, capsys, text, name="case.yaml"):
    path = tmp_path / name
    path.write_text(text)
    code = main(["run", str(path)])
    captured = capsys.readouterr()
    return code, captured, str(path)


def assert_refused(tmp_path, capsys, text, message):
    code, captured, path = run_cli(tmp_path, capsys, text)
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2, captured.out + captured.err
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"error: {path}: "), lines[0]
    assert message in lines[0], lines[0]
    return lines[0]


# ---- component-base's ValidateLeaderElectionConfiguration (and the resourceLock check) ----------
@pytest.mark.parametrize("le, message", [
    # field.Invalid(leaseDuration, cc.RenewDeadline, ...): upstream shows the renewDeadline's value
    ("{leaseDuration: 5s, renewDeadline: 10s}",
     'config: leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`'),
    ("{leaseDuration: 10s, renewDeadline: 10s}",
     'config: leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`'),
    ("{leaseDuration: -1s}", 'config: leaderElection.leaseDuration: Invalid value: "-1s": must be greater than zero'),
    ("{renewDeadline: -1s}", 'config: leaderElection.renewDeadline: Invalid value: "-1s": must be greater than zero'),
    ("{retryPeriod: -2s}", 'config: leaderElection.retryPeriod: Invalid value: "-2s": must be greater than zero'),
    ("{resourceLock: endpointsleases}",
     'config: leaderElection.resourceLock: Invalid value: "endpointsleases": resourceLock value must be "leases"'),
])
def test_validate_leader_election_configuration(tmp_path, capsys, le, message):
    assert_refused(tmp_path, capsys, case_text(le), message)


# ---- client-go's NewLeaderElector, in server.go's Run ---------------------------------------------
@pytest.mark.parametrize("le", [
    "{retryPeriod: 9s}",                                   # 10s <= 1.2 x 9s = 10.8s
    "{renewDeadline: 2400ms, retryPeriod: 2s}",             # 2.4s <= 1.2 x 2s: equal is refused
    "{leaseDuration: 60s, renewDeadline: 30s, retryPeriod: 25s}",
])
def test_new_leader_elector_checks(tmp_path, capsys, le):
    assert_refused(tmp_path, capsys, case_text(le),
                   "leaderElection: couldn't create leader elector: renewDeadline must be greater than "
                   "retryPeriod*JitterFactor")


@pytest.mark.parametrize("le", [
    "{renewDeadline: 2401ms, retryPeriod: 2s}",
    "{leaseDuration: 0s, renewDeadline: 0s, retryPeriod: 0s}",     # zero: the defaults 15s/10s/2s
    "{leaderElect: false, leaseDuration: 5s, renewDeadline: 10s}",  # not validated, no elector
    "{leaderElect: false, retryPeriod: 9s}",
])
def test_accepted_configurations(tmp_path, capsys, le):
    code, captured, _ = run_cli(tmp_path, capsys, case_text(le))
    assert code == 0, captured.out + captured.err


def test_single_replica_refused_like_kube_scheduler(tmp_path, capsys):
    assert_refused(tmp_path, capsys, case_text("{retryPeriod: 9s}", replicas=None),
                   "couldn't create leader elector: renewDeadline must be greater than retryPeriod*JitterFactor")


# ---- step typos (refused when the case loads, before anything runs) --------------------------------
@pytest.mark.parametrize("steps, message", [
    ("- crash: scheduler-7\n", "steps[0].crash: no replica scheduler-7 (the case has scheduler-0, scheduler-1)"),
    ("- stop: scheduler-2\n", "steps[0].stop: no replica scheduler-2 (the case has scheduler-0, scheduler-1)"),
    ("- clock: {replica: scheduler-9, rate: 2}\n", "steps[0].clock: no replica scheduler-9"),
    ("- partition: {replica: kube-scheduler, for: 5s}\n", "steps[0].partition: no replica kube-scheduler"),
    ("- start: scheduler-1\n", "steps[0].start: scheduler-1 is running: crash or stop it before starting it"),
    ("- crash: scheduler-0\n- start: scheduler-0\n- start: scheduler-0\n",
     "steps[2].start: scheduler-0 is running: crash or stop it before starting it"),
    ("- stop: scheduler-1\n- crash: scheduler-1\n", "steps[1].crash: scheduler-1 is not running"),
    ("- crash: [scheduler-0]\n", "steps[0].crash: a replica name (scheduler-0, scheduler-1, ...)"),
    ("- partition: {replica: scheduler-0, for: 20}\n", "steps[0].partition.for: a duration is a string"),
    ("- partition: {replica: scheduler-0, for: 20x}\n", 'steps[0].partition.for: time: unknown unit "x" in duration "20x"'),
    ("- partition: {replica: scheduler-0, for: 0s}\n",
     'steps[0].partition.for: a partition lasts a positive duration, not "0s"'),
    ("- partition: {replica: scheduler-0, for: -5s}\n",
     'steps[0].partition.for: a partition lasts a positive duration, not "-5s"'),
    ("- partition: {replica: scheduler-0}\n",
     "steps[0].partition: partition takes {replica: scheduler-N, for: <duration>}"),
    ("- clock: {replica: scheduler-1, rate: 0}\n", "steps[0].clock.rate: a clock rate is a number from 0.001 to 1000"),
    ("- clock: {replica: scheduler-1, rate: fast}\n", "steps[0].clock.rate: a clock rate is a number from 0.001 to 1000"),
    ("- expect: {lease: {holder: 3}}\n", "steps[0].expect.lease.holder: a replica name or null"),
    ("- expect: {lease: {owner: scheduler-0}}\n", "steps[0].expect.lease: lease is {holder, transitions}"),
    ("- expect: {lease: {transitions: -1}}\n", "steps[0].expect.lease.transitions: a count (0 or more)"),
    ("- expect: {boundBy: {web: 0}}\n", "steps[0].expect.boundBy.web: a replica name"),
])
def test_step_typos(tmp_path, capsys, steps, message):
    assert_refused(tmp_path, capsys, case_text(steps=steps), message)


def test_crash_of_the_only_replica_named_by_its_index(tmp_path, capsys):
    assert_refused(tmp_path, capsys, case_text(replicas=None, steps="- crash: scheduler-1\n"),
                   "steps[0].crash: no replica scheduler-1 (the case has scheduler-0)")


def test_boundby_of_an_unknown_pod(tmp_path, capsys):
    assert_refused(tmp_path, capsys, case_text(steps="- expect: {boundBy: {nope: scheduler-0}}\n"),
                   "steps[0].expect.boundBy.nope: no pod default/nope in the case")


# ---- a step that only the run can refuse: the replica exited by itself -------------------------------
EXITED = ("- partition: {replica: scheduler-0, for: 30s}\n"
          "- advance: 20s\n")  # renewals fail from t=2, renewDeadline ends it at 12: exit 1


def test_crash_of_a_replica_that_lost_the_lease_names_the_file(tmp_path, capsys):
    assert_refused(tmp_path, capsys, case_text(steps=EXITED + "- crash: scheduler-0\n"),
                   "steps[2].crash: scheduler-0 is not running")


def test_crash_of_a_replica_that_lost_the_lease_exits_2(tmp_path, capsys):
    code, captured, _ = run_cli(tmp_path, capsys, case_text(steps=EXITED + "- crash: scheduler-0\n"))
    assert code == 2
    assert "steps[2].crash: scheduler-0 is not running" in captured.err
    assert "Traceback" not in captured.err


def test_a_replica_that_lost_the_lease_can_be_started_again(tmp_path, capsys):
    code, captured, _ = run_cli(tmp_path, capsys, case_text(steps=EXITED + "- start: scheduler-0\n"))
    assert code == 0, captured.err
