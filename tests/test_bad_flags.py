"""Wrong command-line values (issue 25): each refused when the command line is read, before
any case runs, with one line naming the flag and exit code 2 (harness/cli/options.py holds the
bounds); and the command-level mistakes that once ran to the end before saying so."""

from __future__ import annotations

import os

import pytest
import yaml

from harness.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(HERE), "bench", "performance-config.yaml")
CASE = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "one"},
        "cluster": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
                     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}],
        "pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}],
        "expect": {"bindings": {"web": "node-a"}}}


@pytest.fixture
def case(tmp_path):
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump(CASE))
    return str(path)


def refused(argv, capsys):
    """(exit code, the one error line) of a command that must stop before running anything."""
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse
        rc = e.code
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2, out + err
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert "PASS" not in out and "passed" not in out, out  # nothing ran
    return lines[0]


@pytest.mark.parametrize("argv, flag", [
    (["diff", "-j", "0", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36"], "-j/--jobs"),
    (["diff", "-j", "-1", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36"], "-j/--jobs"),
    (["diff", "-j", "257", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36"], "-j/--jobs"),
    (["diff", "-j", "two", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36"], "-j/--jobs"),
    (["diff", "-j", "9" * 5000, "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36"], "-j/--jobs"),
    (["sweep", "-j", "0", "--weight", "NodeResourcesFit=1"], "-j/--jobs"),
    (["sweep", "-j", "-1", "--weight", "NodeResourcesFit=1"], "-j/--jobs"),
    (["diff", "--dask-scheduler", "", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36"], "--dask-scheduler"),
    (["sweep", "--dask-scheduler", " ", "--weight", "NodeResourcesFit=1"], "--dask-scheduler"),
    (["sweep", "--weight", "NodeResourcesFit=-5"], "--weight"),
    (["sweep", "--weight", "NodeResourcesFit=0"], "--weight"),
    (["sweep", "--weight", "NodeResourcesFit=-5:5:5"], "--weight"),
    (["sweep", "--weight", "NodeResourcesFit=2147483648"], "--weight"),
    (["explore", "--runs", "1000000000"], "--runs"),
    (["explore", "--runs", "0"], "--runs"),
    (["explore", "--runs", "-3"], "--runs"),
    (["run", "--kubernetes-version", "v1." + "9" * 5000], "--kubernetes-version"),
    (["run", "--kubernetes-version", "1.35"], "--kubernetes-version"),
    (["diff", "--kubernetes-version", "v1.034", "--kubernetes-version", "v1.36"], "--kubernetes-version"),
])
def test_a_bad_flag_value_is_one_line_naming_the_flag(argv, flag, case, capsys):
    cmd = argv[:1] + ([case] if argv[0] != "explore" else [case]) + argv[1:]
    line = refused(cmd, capsys)
    assert line.startswith("error:") and flag in line, line


@pytest.mark.parametrize("argv, flag", [
    (["bench", "--nodes", "10000001"], "--nodes"),
    (["bench", "--nodes", "-1"], "--nodes"),
    (["bench", "--init-pods", "250001"], "--init-pods"),
    (["bench", "--pods", "1e9"], "--pods"),
    (["bench", "--workload", "", BENCH], "--workload"),
    (["bench", "--param", "=5", "--list", BENCH], "--param"),
    (["bench", "--param", "nosuch=5", "--workload", "SchedulingBasic", "--list", BENCH], "--param nosuch"),
    (["bench", "--param", "initNodes", "--list", BENCH], "--param"),
])
def test_bench_flags(argv, flag, capsys):
    line = refused(argv, capsys)
    assert flag in line, line


def test_a_param_a_selected_workload_has_is_taken(capsys):
    assert main(["bench", "--param", "initNodes=7", "--workload", "SchedulingBasic/500Nodes", "--list", BENCH]) == 0
    assert "initNodes=7" in capsys.readouterr().out


@pytest.mark.parametrize("cmd", [
    ["diff", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36"],
    ["sweep", "--weight", "NodeResourcesFit=1,2"],
])
def test_a_plugin_module_that_does_not_import_is_an_error_not_a_skip_per_case(cmd, case, capsys):
    line = refused(cmd[:1] + [case] + cmd[1:] + ["-p", "nosuch_module_anywhere"], capsys)
    assert "-p" in line and "nosuch_module_anywhere" in line, line


@pytest.mark.parametrize("where", ["folder", "missing-folder"])
@pytest.mark.parametrize("cmd, flag", [
    (["run"], "--html"),
    (["diff", "--kubernetes-version", "v1.34", "--kubernetes-version", "v1.36"], "--html"),
    (["sweep", "--weight", "NodeResourcesFit=1"], "--html"),
    (["sweep", "--weight", "NodeResourcesFit=1"], "--chart"),
])
def test_an_output_that_cannot_be_written_is_refused_before_the_run(cmd, flag, where, case, tmp_path, capsys):
    dest = {"folder": str(tmp_path), "missing-folder": str(tmp_path / "no" / "such" / "r.html")}[where]
    line = refused(cmd[:1] + [case] + cmd[1:] + [flag, dest], capsys)
    assert flag in line, line
    assert not os.path.exists(tmp_path / "no")


def test_an_output_in_a_read_only_folder_is_refused_before_the_run(case, tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(str(ro), os.W_OK):
            pytest.skip("running as a user who may write anywhere (root)")
        line = refused(["run", case, "--html", str(ro / "r.html")], capsys)
        assert "--html" in line and "cannot write" in line
    finally:
        ro.chmod(0o700)


def test_a_checked_output_is_written_at_the_end_as_before(case, tmp_path, capsys):
    dest = tmp_path / "r.html"
    assert main(["run", case, "--html", str(dest)]) == 0
    assert dest.exists() and dest.stat().st_size > 0


def test_a_nul_byte_in_an_argument_is_one_line(capsys):
    for argv in (["run", "/tmp/a\0b"], ["validate", "x\0"], ["import", "d\0.yaml", "-o", "c.yaml"],
                 ["explain", "c.yaml", "p\0"]):
        line = refused(argv, capsys)
        assert "NUL byte" in line, line


def test_explain_of_an_unknown_pod_prints_only_the_error(case, capsys):
    line = refused(["explain", case, "nosuch"], capsys)
    assert "no pod default/nosuch" in line
    assert capsys.readouterr().out == ""


def test_validate_of_an_empty_folder_is_an_error(tmp_path, capsys):
    line = refused(["validate", str(tmp_path)], capsys)
    assert str(tmp_path) in line and "no YAML files" in line


def test_conformance_args_errors_name_the_args_file(tmp_path, capsys):
    args = tmp_path / "args.yaml"
    args.write_text("hardPodAffinityWeight: 500\n")
    line = refused(["conformance", "InterPodAffinity", "--args", str(args)], capsys)
    assert line.startswith(f"error: {args}: hardPodAffinityWeight"), line
    assert "conformance.yaml" not in line


def test_bench_errors_name_the_workload_file(tmp_path, capsys):
    (tmp_path / "node.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata:\n  generateName: n-\n"
                                        "status: {allocatable: {cpu: lots}}\n")
    wl = tmp_path / "wl.yaml"
    wl.write_text(yaml.safe_dump([{"name": "T3", "workloadTemplate": [
        {"opcode": "createNodes", "countParam": "$initNodes", "nodeTemplatePath": "node.yaml"},
        {"opcode": "createPods", "countParam": "$measurePods", "collectMetrics": True}],
        "workloads": [{"name": "2Nodes", "params": {"initNodes": 2, "measurePods": 2}}]}]))
    line = refused(["bench", str(wl)], capsys)
    assert line.startswith(f"error: {wl}: T3/2Nodes"), line
