"""A case is data (issue 25, README "What a case may cause"): the modules and callables it names
come from its tree or installed entry points, the files it names from its tree; plugin imports
are isolated; a custom kind cannot take a core kind. Each refusal happens before anything runs,
on one line naming the file and the key, exit 2, under `run` and `validate` alike."""

from __future__ import annotations

import os
import sys

import pytest
import yaml

from harness.cli import main

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "c", "image": "x"}]}}


def _case(folder, name="case.yaml", **keys):
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "cluster": [NODE], "pods": [POD],
            "expect": {"bindings": {"web": "node-a"}}, **keys}
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _extender_config(verb):
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "extenders": [{"urlPrefix": "http://x.example/", "filterVerb": verb}]}


def _refused(capsys, args, key, fragment=""):
    rc = main(args)
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2, out + err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f": {key}: " in lines[0] and fragment in lines[0], lines[0]
    return out, lines[0]


# ---- the examples: refused before anything runs -----------------------------------------
@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("target", ["builtins:eval", "builtins:exec", "os:system", "shutil:rmtree"])
def test_a_case_naming_a_library_callable_is_refused_before_it_runs(tmp_path, capsys, command, target):
    marker = tmp_path / "ran"
    victim = tmp_path / "victim"
    victim.mkdir()
    verb = {"builtins:eval": f"open({str(marker)!r}, 'w').write('x')",
            "builtins:exec": f"open({str(marker)!r}, 'w').write('x')",
            "os:system": f"touch {marker}", "shutil:rmtree": str(victim)}[target]
    path = _case(tmp_path, config=_extender_config(verb),
                 extenders=[{"urlPrefix": "http://x.example/", "python": target}])
    _, line = _refused(capsys, [command, path], "extenders[0].python", f"module {target.split(':')[0]!r}")
    assert line.startswith(f"error: {path}: ")
    assert not marker.exists() and victim.exists()


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_case_naming_a_standard_library_module_is_not_imported(tmp_path, capsys, command):
    sys.modules.pop("this", None)
    path = _case(tmp_path, plugins=["this"])
    out, _ = _refused(capsys, [command, path], "plugins[0]", "module 'this'")
    assert "Beautiful is better" not in out
    assert "this" not in sys.modules


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("key,value", [
    ("config", "/etc/shadow"), ("config", "../../x.yaml"),
    ("cluster", {"files": ["/etc/passwd"]}), ("cluster", {"files": ["../outside.yaml"]}),
])
def test_a_path_outside_the_case_tree_is_refused(tmp_path, capsys, command, key, value):
    (tmp_path / "outside.yaml").write_text(yaml.safe_dump([NODE]))
    path = _case(tmp_path / "cases", **{key: value})
    want = "config" if key == "config" else "cluster.files[0]"
    _, line = _refused(capsys, [command, path], want, "outside the case's tree")
    assert "root:" not in line


def test_a_symlink_out_of_the_tree_is_outside(tmp_path, capsys):
    (tmp_path / "secret.yaml").write_text(yaml.safe_dump([NODE]))
    (tmp_path / "cases").mkdir()
    os.symlink(tmp_path / "secret.yaml", tmp_path / "cases" / "link.yaml")
    path = _case(tmp_path / "cases", cluster={"files": ["link.yaml"]})
    _refused(capsys, ["validate", path], "cluster.files[0]", "outside the case's tree")


def test_the_folder_given_on_the_command_line_is_the_tree(tmp_path, capsys):
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump([NODE]))
    path = _case(tmp_path / "sub", cluster={"files": ["../nodes.yaml"]})
    _refused(capsys, ["validate", path], "cluster.files[0]", "outside")  # the file alone: its folder
    assert main(["validate", str(tmp_path)]) == 0  # the folder holding both
    assert main(["run", path, "--allow-outside-root"]) == 0
    capsys.readouterr()


def test_errors_about_a_file_do_not_echo_its_content(tmp_path, capsys):
    (tmp_path / "shadow").write_text("root:*:20228:0:99999:7::\n")
    path = _case(tmp_path, config="shadow")
    rc = main(["validate", path])
    err = capsys.readouterr().err
    assert rc == 2 and "20228" not in err and "root:*" not in err, err


# ---- modules from the case's tree ----------------------------------------------------------------
PLUGIN = ("from harness.framework import Plugin, Status, hookimpl\n"
          "class {cls}(Plugin):\n"
          "    name = '{cls}'\n"
          "    @hookimpl\n"
          "    def filter(self, state, pod, node_info):\n"
          "        return Status.unschedulable('no') if node_info.node.name == 'node-a' else None\n"
          "@hookimpl\n"
          "def schedharness_plugins():\n"
          "    return [{cls}]\n")


def _filter_config(name):
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"filter": {"enabled": [{"name": name}]}}}]}


def test_a_module_in_a_plugins_folder_above_the_case_inside_the_tree_is_found(tmp_path, capsys):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "trust_up_plugins.py").write_text(PLUGIN.format(cls="TrustUp"))
    path = _case(tmp_path / "deep" / "er", plugins=["trust_up_plugins"], config=_filter_config("TrustUp"),
                 expect={"bindings": {"web": None}})
    assert main(["run", str(tmp_path)]) == 0, capsys.readouterr()
    _refused(capsys, ["run", path], "plugins[0]", "neither a file in the case's tree")


def test_a_module_shadowing_an_imported_one_is_refused(tmp_path, capsys):
    (tmp_path / "json.py").write_text("X = 1\n")
    path = _case(tmp_path, plugins=["json"])
    _refused(capsys, ["validate", path], "plugins", "already imported")


@pytest.mark.parametrize("body,fragment", [
    ("import sys\nsys.exit(3)\n", "sys.exit(3)"),
    ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
    ("print('hello from import')\n", "when imported"),
])
def test_a_module_that_exits_or_prints_at_import_is_one_error_line(tmp_path, capsys, body, fragment):
    name = f"trust_bad_{abs(hash(body)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(body)
    bad = _case(tmp_path, "bad.yaml", plugins=[name])
    good = _case(tmp_path, "good.yaml")
    rc = main(["run", bad, good])
    out, err = capsys.readouterr()
    assert rc == 2 and "PASS good" in out and "hello from import" not in out + err.replace(fragment, "")
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}: plugins") and fragment in lines[0], err


def test_an_extender_callable_must_be_marked(tmp_path, capsys):
    (tmp_path / "ext_unmarked.py").write_text("def handle(verb, args):\n    return {}\n")
    path = _case(tmp_path, config=_extender_config("filter"),
                 extenders=[{"urlPrefix": "http://x.example/", "python": "ext_unmarked:handle"}])
    _refused(capsys, ["validate", path], "extenders[0].python", "not marked as an extender")


def test_dash_p_may_still_import_a_module_by_name(tmp_path, capsys):
    path = _case(tmp_path)
    assert main(["run", path, "-p", "json"]) == 0
    capsys.readouterr()


def test_a_custom_kind_may_not_shadow_a_core_kind(tmp_path, capsys):
    (tmp_path / "trust_node_crd.py").write_text(
        "from harness.framework import CustomResource, hookimpl\n"
        "@hookimpl\n"
        "def schedharness_plugins():\n"
        "    return []\n"
        "@hookimpl\n"
        "def schedharness_custom_resources():\n"
        "    return [CustomResource('evil.example.com', 'v1', 'Node', namespaced=False)]\n")
    path = _case(tmp_path, plugins=["trust_node_crd"])
    _refused(capsys, ["run", path], "plugins", 'the kind "Node" is a core kind')


@pytest.mark.parametrize("command", ["run", "validate"])
def test_an_extender_module_calling_sys_exit_at_import_is_one_error_line(tmp_path, capsys, command):
    (tmp_path / "ext_exits.py").write_text("import sys\nsys.exit(3)\n")
    path = _case(tmp_path, config=_extender_config("filter"),
                 extenders=[{"urlPrefix": "http://x.example/", "python": "ext_exits:handle"}])
    _refused(capsys, [command, path], "extenders[0].python", "sys.exit(3)")
