"""`run` streams: each file is loaded when its turn comes, progress lines go to stderr once a
command has run INTERVAL seconds (a clock the test drives, never the wall clock), and Ctrl-C
while a file loads reports the cases that finished."""

from __future__ import annotations

import itertools

import pytest
import yaml

from harness import progress
from harness.case import loader
from harness.cli import main

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _case(name: str) -> dict:
    return {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": name},
            "cluster": [NODE],
            "pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                      "spec": {"containers": [{"name": "c", "image": "i"}]}}],
            "expect": {"bindings": {"p": "n1"}}}


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "cases"
    d.mkdir()
    for name in ("a", "b", "c"):
        (d / f"{name}.yaml").write_text(yaml.safe_dump(_case(name)))
    (d / "notes.yaml").write_text("just: a note\n")
    return d


@pytest.fixture
def ticking_clock(monkeypatch):
    """A clock that advances 10 s each time it is read."""
    counter = itertools.count()
    monkeypatch.setattr(progress, "CLOCK", lambda: 10.0 * next(counter))


def test_each_file_is_loaded_when_its_turn_comes(folder, capsys, monkeypatch):
    real = loader.load_case
    seen = []

    def load(path):
        seen.append((path.rsplit("/", 1)[-1], capsys.readouterr().out))
        return real(path)
    monkeypatch.setattr(loader, "load_case", load)
    assert main(["run", str(folder)]) == 0
    # c.yaml is loaded after a and b have printed their results
    assert seen[2][0] == "c.yaml" and "PASS b" in seen[2][1]
    assert "PASS a" in seen[1][1]


def test_ctrl_c_while_loading_reports_what_finished(folder, capsys, monkeypatch):
    real = loader.load_case

    def load(path):
        if path.endswith("c.yaml"):
            raise KeyboardInterrupt
        return real(path)
    monkeypatch.setattr(loader, "load_case", load)
    assert main(["run", str(folder)]) == 130
    out, err = capsys.readouterr()
    assert "PASS a" in out and "PASS b" in out
    assert "2 passed, 0 failed" in out and "(interrupted)" in out
    assert "interrupted" in err


def test_run_prints_progress_past_the_interval(folder, capsys, ticking_clock):
    assert main(["run", str(folder)]) == 0
    err = capsys.readouterr().err
    assert "run: 1 of 4 files, 1 case(s) run" in err and "run: 4 of 4 files, 3 case(s) run" in err
    assert all(line.startswith("run: ") for line in err.splitlines())


def test_no_progress_for_a_short_run(folder, capsys, monkeypatch):
    monkeypatch.setattr(progress, "CLOCK", lambda: 0.0)
    assert main(["run", str(folder)]) == 0
    assert capsys.readouterr().err == ""


def test_validate_and_explain_print_progress(folder, capsys, ticking_clock):
    assert main(["validate", str(folder)]) == 0
    err = capsys.readouterr().err
    assert "validate: 1 of 4 files" in err and "validate: 4 of 4 files" in err
    assert main(["explain", str(folder / "a.yaml"), "p"]) == 0
    err = capsys.readouterr().err
    assert "explain: case loaded" in err and "explain: scheduled" in err


def test_diff_prints_progress(folder, capsys, ticking_clock):
    main(["diff", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36", str(folder)])
    err = capsys.readouterr().err
    assert "diff: 1 of 6 case runs" in err


@pytest.fixture
def one_beat_each(monkeypatch):
    """The heartbeat's sleep: each heartbeat's first wait is over at once (one beat), the next
    lasts until its body is done, so exactly one line per long call, without the wall clock."""
    seen = []  # the events themselves (kept alive: an id() may be reused once one is freed)

    def wait(event, timeout):
        if not any(e is event for e in seen):
            seen.append(event)
            return False
        return event.wait()
    monkeypatch.setattr(progress, "WAIT", wait)


def test_one_long_call_is_never_silent(folder, capsys, ticking_clock, one_beat_each):
    """Reading a big case or scheduling it is one call: a heartbeat prints while it runs."""
    assert main(["run", str(folder / "a.yaml")]) == 0
    err = capsys.readouterr().err
    assert "run: 1 of 1 files, 0 case(s) run; reading" in err and "running a" in err
    assert main(["explain", str(folder / "a.yaml"), "p"]) == 0
    err = capsys.readouterr().err
    assert "explain: reading the case" in err and "explain: scheduling (" in err


def test_no_heartbeat_for_a_short_call(folder, capsys, monkeypatch, one_beat_each):
    monkeypatch.setattr(progress, "CLOCK", lambda: 0.0)  # the beat comes, but before INTERVAL: no line
    assert main(["run", str(folder)]) == 0
    assert capsys.readouterr().err == ""
