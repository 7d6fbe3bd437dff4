"""Typos in a case's `steps` are user errors: exit code 2 and one line naming the file, the step
and the key (CASE_FORMAT.md, "Cases that unfold over time"); and `advance` durations are read as
Go's time.ParseDuration reads them (kube-scheduler's own configuration durations are Go
durations too)."""

from __future__ import annotations

import math
import textwrap

import pytest

from harness.case.steps import parse_duration
from harness.cli import main

HEAD = textwrap.dedent("""\
    apiVersion: schedharness/v1alpha1
    kind: Case
    cluster:
      - {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
    pods:
      - {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: [{name: c, image: registry.k8s.io/pause:3.9}]}}
    expect:
      bindings: {web: node-a}
    """)


def run_steps(tmp_path, capsys, steps: str):
    path = tmp_path / "typo.yaml"
    path.write_text(HEAD + "steps:\n" + textwrap.indent(textwrap.dedent(steps), "  "))
    code = main(["run", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(result, *fragments):
    code, out, err = result
    assert code == 2, out + err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "typo.yaml" in lines[0], lines[0]
    for f in fragments:
        assert f in lines[0], lines[0]


def test_a_valid_step_case_runs(tmp_path, capsys):
    code, out, err = run_steps(tmp_path, capsys, """\
        - advance: 5m30s
        - expect: {bindings: {web: node-a}, queue: {web: bound}, attempts: {web: 1}}
        """)
    assert code == 0, out + err


@pytest.mark.parametrize("steps, fragments", [
    pytest.param("- advence: 30s\n", ["steps[0]", 'unknown step "advence"'], id="unknown-step-key"),
    pytest.param("- expect: {}\n- crate: []\n", ["steps[1]", '"crate"'], id="unknown-step-key-later"),
    pytest.param("- {advance: 1s, expect: {}}\n", ["steps[0]", "exactly one key"], id="two-keys"),
    pytest.param("- advance: 5 minutes\n", ["steps[0].advance", 'unknown unit " minutes"'], id="duration-with-words"),
    pytest.param("- advance: -3s\n", ["steps[0].advance", "-3s"], id="negative-duration"),
    pytest.param("- advance: 30\n", ["steps[0].advance", "30"], id="duration-without-unit"),
    pytest.param("- advance: 1d\n", ["steps[0].advance", 'unknown unit "d"'], id="duration-in-days"),
    pytest.param("- expect: {queue: {web: parked}}\n", ["steps[0].expect.queue.web", "parked"],
                 id="bad-queue-state"),
    pytest.param("- expect: {attempts: {web: -1}}\n", ["steps[0].expect.attempts.web"], id="negative-attempts"),
    pytest.param("- expect: {bindigs: {web: node-a}}\n", ["steps[0].expect", 'unknown key "bindigs"'],
                 id="unknown-expect-key"),
    pytest.param("- fail: {binding: [web]}\n", ["steps[0].fail"], id="fail-without-bind"),
    pytest.param("- fail: {bind: []}\n", ["steps[0].fail.bind"], id="fail-empty-list"),
    pytest.param("- delete: [{kind: Pod, nam: web}]\n", ["steps[0].delete[0]"], id="delete-without-name"),
    pytest.param("- create: [{kind: Node, metadata: {}}]\n", ["steps[0].create[0].metadata.name"],
                 id="create-without-name"),
])
def test_malformed_step(tmp_path, capsys, steps, fragments):
    assert_one_line_error(run_steps(tmp_path, capsys, steps), *fragments)


@pytest.mark.parametrize("steps, fragments", [
    pytest.param("""\
        - update:
            - {apiVersion: v1, kind: Node, metadata: {name: node-z}, status: {allocatable: {cpu: "4"}}}
        """, ["steps[0].update[0]", 'no Node "node-z" to update'], id="update-missing-node"),
    pytest.param("""\
        - expect: {bindings: {web: node-a}}
        - delete: [{kind: Pod, name: web-2}]
        """, ["steps[1].delete[0]", 'no Pod "default/web-2" to delete'], id="delete-missing-pod"),
    pytest.param("""\
        - delete: [{kind: Pod, name: web}]
        - delete: [{kind: Pod, name: web}]
        """, ["steps[1].delete[0]", 'no Pod "default/web" to delete'], id="delete-twice"),
    pytest.param("""\
        - create:
            - {apiVersion: v1, kind: Node, metadata: {name: node-a}, status: {allocatable: {cpu: "4"}}}
        """, ["steps[0].create[0]", "node-a"], id="create-existing-node"),
    pytest.param("- expect: {bindings: {ghost: node-a}}\n", ["steps[0].expect.bindings.ghost"],
                 id="expect-unknown-pod"),
])
def test_step_naming_a_missing_or_existing_object(tmp_path, capsys, steps, fragments):
    assert_one_line_error(run_steps(tmp_path, capsys, steps), *fragments)


# ---- parse_duration and Go's time.ParseDuration ---------------------------------------------
# golang/go src/time/time_test.go, parseDurationTests (input, nanoseconds). The harness keeps
# virtual time in float seconds (a double), so values are compared to double precision.
NS = 1
US = 1000 * NS
MS = 1000 * US
S = 1000 * MS
M = 60 * S
H = 60 * M

PARSE_DURATION_TESTS = [
    ("0", 0), ("5s", 5 * S), ("30s", 30 * S), ("1478s", 1478 * S),
    ("-5s", -5 * S), ("+5s", 5 * S), ("-0", 0), ("+0", 0),
    ("5.0s", 5 * S), ("5.6s", 5 * S + 600 * MS), ("5.s", 5 * S), (".5s", 500 * MS),
    ("1.0s", 1 * S), ("1.00s", 1 * S), ("1.004s", 1 * S + 4 * MS), ("1.0040s", 1 * S + 4 * MS),
    ("100.00100s", 100 * S + 1 * MS),
    ("10ns", 10 * NS), ("11us", 11 * US), ("12\u00b5s", 12 * US), ("12\u03bcs", 12 * US),
    ("13ms", 13 * MS), ("14s", 14 * S), ("15m", 15 * M), ("16h", 16 * H),
    ("3h30m", 3 * H + 30 * M), ("10.5s4m", 4 * M + 10 * S + 500 * MS),
    ("-2m3.4s", -(2 * M + 3 * S + 400 * MS)),
    ("1h2m3s4ms5us6ns", 1 * H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS),
    ("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
    ("52763797000ns", 52763797000 * NS),
    ("0.3333333333333333333h", 20 * M),
    ("9007199254740993ns", (1 << 53) + 1),
    ("9223372036854775807ns", (1 << 63) - 1),
    ("9223372036854775.807us", (1 << 63) - 1),
    ("9223372036s854ms775us807ns", (1 << 63) - 1),
    ("-9223372036854775808ns", -(1 << 63)),
    ("-9223372036854775.808us", -(1 << 63)),
    ("-9223372036s854ms775us808ns", -(1 << 63)),
    ("-2562047h47m16.854775808s", -(1 << 63)),
    ("0.100000000000000000000h", 6 * M),
    ("0.830103483285477580700h", 49 * M + 48 * S + 372539827 * NS),
]


@pytest.mark.parametrize("text, want_ns", PARSE_DURATION_TESTS, ids=[t for t, _ in PARSE_DURATION_TESTS])
def test_parse_duration_matches_go(text, want_ns):
    got = parse_duration(text)
    assert math.isclose(got * 1e9, want_ns, rel_tol=1e-15, abs_tol=1.0), (text, got, want_ns)


# parseDurationErrorTests: Go rejects these; its message quotes the input.
PARSE_DURATION_ERRORS = ["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "\x85\x85", "\xffff",
                         "hello \xffff world", "\ufffd", "\ufffd hello \ufffd world",
                         "5 minutes", "1h-5m", "1e3s", "30 s"]
# Go also rejects these; the harness accepts them (reported: overflow of int64 nanoseconds is
# not checked, and surrounding blanks are stripped before parsing).
PARSE_DURATION_OVERFLOW_AND_BLANKS = ["9223372036854775810ns", "9223372036854775808ns",
                                  "-9223372036854775809ns", "9223372036854776us", "3000000h",
                                  "9223372036854775.808us", "9223372036854ms775us808ns",
                                  " 5s", "5s "]


@pytest.mark.parametrize("text", PARSE_DURATION_ERRORS)
def test_parse_duration_rejects_what_go_rejects(text):
    with pytest.raises(ValueError) as e:
        parse_duration(text)
    if text.isascii() and text.isprintable():
        assert f'"{text}"' in str(e.value)


@pytest.mark.parametrize("text", PARSE_DURATION_OVERFLOW_AND_BLANKS)
def test_parse_duration_rejects_overflow_and_blanks_like_go(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_parse_duration_rejects_non_strings():
    for value in (30, 1.5, None, ["5s"]):
        with pytest.raises(ValueError):
            parse_duration(value)
