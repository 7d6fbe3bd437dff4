"""Issue 15, crashes, hangs and lost results: every input below ends as one error line naming the
file (and the key), exit 2, no traceback, no hang; one bad case, file, path or plugin module
never stops the others, and the summary always prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import yaml

from harness.cli import main

NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}}


def case_text(**extra) -> str:
    c = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "base"},
         "cluster": [NODE], "pods": [POD], "expect": {"bindings": {"web": "node-a"}}}
    c.update(extra)
    return yaml.safe_dump(c, sort_keys=False)


def write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def cli(tmp_path, *argv, env=None, timeout=60, cwd=None):
    """The command in a child process (what a user sees: exit code, stdout, stderr)."""
    full_env = dict(os.environ, **(env or {}))
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), full_env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "harness", *argv], capture_output=True, text=True,
                          timeout=timeout, env=full_env, cwd=cwd or str(tmp_path))


def one_error(err: str, path: str, *fragments: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err, err
    assert lines[0].startswith(f"error: {path}"), lines[0]
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


BIG = "1" + "0" * 5000  # more digits than Python's int() reads by default (4300)


@pytest.mark.parametrize("name,extra,key", [
    ("steps-delete-namespace-list", {"steps": [{"delete": [{"kind": "Pod", "name": "web", "namespace": ["a"]}]}]},
     "steps[0].delete[0].namespace"),
    ("steps-create-namespace-list", {"steps": [{"create": [dict(POD, metadata={"name": "w2", "namespace": ["a"]})]}]},
     "steps[0].create[0].metadata.namespace"),
    ("expect-int-key", {"expect": {"bindings": {1: "node-a"}}}, "expect.bindings"),
    ("expect-int-key-messages", {"expect": {"messages": {1: "x"}}}, "expect.messages"),
    ("step-expect-int-key", {"steps": [{"expect": {"queue": {2: "active"}}}]}, "steps[0].expect.queue"),
    ("replicas-1e9", {"replicas": 1000000000}, "replicas"),
    ("clock-rate-inf", {"replicas": 2, "steps": [{"clock": {"replica": "scheduler-1", "rate": float("inf")}}]},
     "steps[0].clock.rate"),
])
def test_malformed_case_is_one_line(tmp_path, capsys, name, extra, key):
    path = write(tmp_path, name + ".yaml", case_text(**extra))
    for command in ("run", "validate"):
        assert main([command, path]) == 2
        one_error(capsys.readouterr().err, path, key)


@pytest.mark.parametrize("where", ["seed", "replicas", "priority"])
def test_integers_longer_than_4300_digits(tmp_path, capsys, where):
    text = case_text()
    if where == "priority":
        text = text.replace("containers:", f"priority: {BIG}\n    containers:", 1)
    else:
        text += f"{where}: {BIG}\n"
    path = write(tmp_path, "big.yaml", text)
    assert main(["run", path]) == 2
    one_error(capsys.readouterr().err, path, "line")


def test_replicas_bound_is_checked_before_anything_is_built(tmp_path, capsys):
    path = write(tmp_path, "r.yaml", case_text(replicas=1001))
    assert main(["validate", path]) == 2
    one_error(capsys.readouterr().err, path, "replicas", "1000")


def test_endless_timers_end_as_an_error_naming_the_step(tmp_path, capsys, monkeypatch):
    import harness.case.replicas as replicas

    monkeypatch.setattr(replicas, "MAX_TIMERS", 500)
    path = write(tmp_path, "long.yaml", case_text(replicas=2, steps=[{"advance": "10h"}]))
    assert main(["run", path]) == 2
    one_error(capsys.readouterr().err, path, "steps[0].advance", "timers")


def _endless_claim_case(**extra) -> dict:
    """cases/versions/dra/binding-conditions-v1.36.yaml without the busy pod: node-a and node-b
    tie, the heap pick takes node-a each time, its device never reaches its binding condition,
    the claim is deallocated and allocated again: kube-scheduler retries the pod forever."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "cases/versions/dra/binding-conditions-v1.36.yaml")) as f:
        case = yaml.safe_load(f)
    case["cluster"] = [o for o in case["cluster"] if o["metadata"]["name"] != "busy"]
    case.pop("steps")
    case.update(extra)
    return case


@pytest.mark.parametrize("replicas", [1, 2])
def test_pod_retried_forever_by_its_own_attempts_ends_as_an_error(tmp_path, capsys, replicas):
    case = _endless_claim_case(replicas=replicas) if replicas > 1 else _endless_claim_case()
    path = write(tmp_path, "endless.yaml", yaml.safe_dump(case, sort_keys=False))
    other = write(tmp_path, "fine.yaml", case_text())
    assert main(["run", path, other]) == 2
    captured = capsys.readouterr()
    one_error(captured.err, path, "pods: ", "did not become quiet", "default/trainer")
    assert "1 passed" in captured.out


def test_pod_retried_forever_after_a_step_names_the_step(tmp_path, capsys):
    case = _endless_claim_case()
    case["steps"] = [{"create": case.pop("pods")}]
    path = write(tmp_path, "endless-step.yaml", yaml.safe_dump(case, sort_keys=False))
    assert main(["run", path]) == 2
    one_error(capsys.readouterr().err, path, "steps[0].create", "default/trainer")


PLUGIN_MODULES = {
    "p_raises": "raise RuntimeError('boom at import')\n",
    "p_syntax": "def f(:\n",
    "p_recurses": "def f():\n    return f()\nf()\n",
    "p_exits": "import sys\nsys.exit(3)\n",
    "p_interrupts": "raise KeyboardInterrupt\n",
    "p_relative": "from . import sibling\n",
    "p_bad_hookimpl": textwrap.dedent("""\
        from harness.framework.hookspecs import hookimpl

        @hookimpl
        def schedharness_plugins(bogus):
            return []
        """),
    "p_returns_junk": textwrap.dedent("""\
        from harness.framework.hookspecs import hookimpl

        @hookimpl
        def schedharness_plugins():
            return ["not a class"]
        """),
}


@pytest.mark.parametrize("how", ["plugins", "-p"])
@pytest.mark.parametrize("module", sorted(PLUGIN_MODULES) + [".relative_name"])
def test_broken_plugin_module_is_an_error_line_and_the_other_cases_run(tmp_path, module, how):
    for mod, text in PLUGIN_MODULES.items():
        write(tmp_path, mod + ".py", text)
    good = write(tmp_path, "a-good.yaml", case_text())
    if how == "plugins":
        bad = write(tmp_path, "b-bad.yaml", case_text(plugins=[module]))
        r = cli(tmp_path, "run", bad, good)
        one_error(r.stderr, bad, "plugins", module)
        assert "PASS base" in r.stdout and "1 passed, 0 failed, 1 invalid" in r.stdout, r.stdout
    else:
        r = cli(tmp_path, "run", "-p", module, good)
        assert module in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert "0 passed, 0 failed, 1 invalid" in r.stdout, r.stdout
    assert r.returncode == 2, r.stdout + r.stderr


def test_fifo_is_refused_without_opening_it(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = str(tmp_path / "pipe.yaml")
    os.mkfifo(fifo)
    good = write(tmp_path, "good.yaml", case_text())
    for command in ("run", "validate"):
        r = cli(tmp_path, command, fifo, good, timeout=60)
        one_error(r.stderr, fifo, "not a regular file")
        assert r.returncode == 2
        r = cli(tmp_path, command, str(tmp_path), timeout=60)  # found in a folder
        one_error(r.stderr, fifo, "not a regular file")
        assert r.returncode == 2


def test_missing_path_among_several_runs_the_others(tmp_path, capsys):
    good = write(tmp_path, "good.yaml", case_text())
    missing = str(tmp_path / "nowhere.yaml")
    assert main(["run", missing, good]) == 2
    out, err = capsys.readouterr()
    one_error(err, missing, "no such file")
    assert "PASS base" in out and "1 passed, 0 failed, 1 invalid" in out


def test_case_raising_mid_run_is_an_error_line_and_the_others_run(tmp_path, capsys, monkeypatch):
    import harness.cli.run as cli_module

    a = write(tmp_path, "a.yaml", case_text())
    b = write(tmp_path, "b.yaml", case_text())
    real = cli_module._run_with

    def flaky(opts, case, registry, explain):
        if case.path == a:
            raise ZeroDivisionError("a bug")
        return real(opts, case, registry, explain)

    monkeypatch.setattr(cli_module, "_run_with", flaky)
    assert main(["run", a, b]) == 2
    out, err = capsys.readouterr()
    one_error(err, a, "ZeroDivisionError")
    assert "PASS base" in out and "1 passed, 0 failed, 1 invalid" in out


@pytest.mark.parametrize("json_out", [False, True])
def test_interrupt_prints_what_finished(tmp_path, capsys, monkeypatch, json_out):
    import harness.cli.run as cli_module

    paths = [write(tmp_path, f"{n}.yaml", case_text(metadata={"name": n})) for n in ("a", "b", "c")]
    real = cli_module._run_with

    def interrupted_at_b(opts, case, registry, explain):
        if case.name == "b":
            raise KeyboardInterrupt
        return real(opts, case, registry, explain)

    monkeypatch.setattr(cli_module, "_run_with", interrupted_at_b)
    rc = main(["run", *paths] + (["--json"] if json_out else []))
    out, err = capsys.readouterr()
    assert rc == 130
    assert "interrupted" in err
    if json_out:
        assert [r["case"] if "case" in r else r["name"] for r in json.loads(out)] == ["a"]
    else:
        assert "PASS a" in out and "1 passed, 0 failed" in out and "(interrupted)" in out


def test_ascii_output_encoding_does_not_crash(tmp_path):
    path = write(tmp_path, "cafe.yaml", case_text(metadata={"name": "caf\u00e9"}))
    r = cli(tmp_path, "run", path, env={"PYTHONIOENCODING": "ascii"})
    assert r.returncode == 0, r.stderr
    assert "PASS caf" in r.stdout


def test_deleted_current_folder(tmp_path):
    """Run from a folder deleted meanwhile (absolute paths still work)."""
    path = write(tmp_path, "good.yaml", case_text())
    gone = tmp_path / "gone"
    gone.mkdir()
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = 'cd "$1" && rmdir "$1" && exec "$2" -m harness run "$3"'
    r = subprocess.run(["sh", "-c", script, "sh", str(gone), sys.executable, path], capture_output=True,
                       text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert "PASS base" in r.stdout


# ---- pytest: an invalid case file is an error, the others still run ------------------------------
pytest_plugins = ["pytester"]


def _plugin_args():
    from test_pytest_plugin import _plugin_args as args

    return args()


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_pytest_runs_the_valid_cases_beside_an_invalid_one(pytester, workers):
    pytester.makefile(".yaml", **{"a-good": case_text(), "c-good": case_text(metadata={"name": "other"})})
    pytester.makefile(".yaml", **{"b-bad": case_text(bogus=1)})
    result = pytester.runpytest(*_plugin_args(), *workers)
    result.assert_outcomes(passed=2, errors=1)
    assert 'unknown key "bogus"' in result.stdout.str()


def test_pytest_still_stops_on_other_collection_errors(pytester):
    pytester.makefile(".yaml", **{"a-good": case_text()})
    pytester.makefile(".yaml", **{"b-bad": case_text(bogus=1)})
    pytester.makepyfile(test_broken="import no_such_module_anywhere\n")
    result = pytester.runpytest(*_plugin_args())
    result.assert_outcomes(errors=2)


def test_pytest_one_case_does_not_parse_the_folder(pytester, monkeypatch):
    import harness.case.loader as loader

    pytester.makefile(".yaml", **{"one": case_text()})
    # a large dump beside it: named, it would be parsed (not a case, but `pods` in its text)
    pytester.makefile(".yaml", **{"dump": "apiVersion: v1\nkind: List\nitems: []\n# pods\n"})
    parsed = []
    real = loader.load_yaml_file
    monkeypatch.setattr(loader, "load_yaml_file", lambda path, *a, **k: parsed.append(path) or real(path, *a, **k))
    result = pytester.runpytest_inprocess(*_plugin_args(), "one.yaml")
    result.assert_outcomes(passed=1)
    assert [os.path.basename(p) for p in parsed] == ["one.yaml"], parsed


def test_pytest_collector_does_not_open_a_fifo(pytester):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    pytester.makefile(".yaml", **{"good": case_text()})
    os.mkfifo(str(pytester.path / "pipe.yaml"))
    result = pytester.runpytest_subprocess(*_plugin_args(), timeout=120)
    result.assert_outcomes(passed=1)


# ---- import: malformed items and -o -------------------------------------------------------------
@pytest.mark.parametrize("item,key", [
    ("{kind: Pod, metadata: [a]}", "items[0].metadata"),
    ("{kind: [Pod], metadata: {name: a}}", "items[0].kind"),
    ("{kind: Pod, metadata: {name: a}, spec: 5}", "items[0].spec"),
    ("{kind: Node, metadata: {name: a}, status: [1]}", "items[0].status"),
    ("{metadata: {name: a}}", "items[0].kind"),
])
def test_import_malformed_item_is_one_line(tmp_path, capsys, item, key):
    dump = write(tmp_path, "dump.yaml", f"apiVersion: v1\nkind: List\nitems: [{item}]\n")
    assert main(["import", dump]) == 2
    one_error(capsys.readouterr().err, dump, key)


@pytest.mark.parametrize("where", ["folder", "no-folder", "under-a-file"])
def test_import_output_that_cannot_be_written_is_one_line_before_any_work(tmp_path, capsys, where):
    dump = write(tmp_path, "dump.yaml", "apiVersion: v1\nkind: List\nitems: []\n")
    if where == "folder":
        out = str(tmp_path)
    elif where == "no-folder":
        out = str(tmp_path / "nowhere" / "case.yaml")
    else:  # a path under a file (read-only folders do not stop root)
        out = os.path.join(dump, "case.yaml")
    assert main(["import", dump, "-o", out]) == 2
    one_error(capsys.readouterr().err, out, "-o")
