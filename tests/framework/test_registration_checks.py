"""Registration checks at load: each problem is one UserError naming the plugin and the
distribution (or module) it came from; the CLI prints it on one line and exits 2."""

from __future__ import annotations

import itertools
import textwrap

import pytest

from harness.cli import main
from harness.errors import UserError
from harness.framework.registry import build_registry

_n = itertools.count()


def fake_distribution(tmp_path, monkeypatch, dist: str, body: str) -> str:
    """An installed distribution `dist` (a dist-info on sys.path) whose `schedharness.plugins`
    entry point is a module with `body` (and the usual imports)."""
    mod = f"fake_plugins_{next(_n)}"
    root = tmp_path / dist
    root.mkdir()
    (root / f"{mod}.py").write_text(
        "from harness.framework import Code, Plugin, Status, hookimpl\n\n" + textwrap.dedent(body))
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[schedharness.plugins]\nplugins = {mod}\n")
    monkeypatch.syspath_prepend(str(root))
    return mod


TWIN = """
class Twin(Plugin):
    name = "Twin"

    @hookimpl
    def filter(self, state, pod, node_info):
        return None

@hookimpl
def schedharness_plugins():
    return [Twin]
"""


def test_two_distributions_with_one_plugin_name(tmp_path, monkeypatch):
    fake_distribution(tmp_path, monkeypatch, "acme-one", TWIN)
    fake_distribution(tmp_path, monkeypatch, "acme-two", TWIN)
    with pytest.raises(UserError) as e:
        build_registry()
    msg = str(e.value)
    assert 'a plugin named "Twin" already exists' in msg
    assert 'distribution "acme-one"' in msg and 'distribution "acme-two"' in msg


def test_a_distribution_reusing_an_in_tree_name(tmp_path, monkeypatch):
    fake_distribution(tmp_path, monkeypatch, "acme-fit", TWIN.replace('"Twin"', '"NodeResourcesFit"'))
    with pytest.raises(UserError) as e:
        build_registry()
    assert 'a plugin named "NodeResourcesFit" already exists' in str(e.value)
    assert "in-tree" in str(e.value) and 'distribution "acme-fit"' in str(e.value)


def test_hookimpl_parameter_not_in_its_hookspec(tmp_path, monkeypatch):
    fake_distribution(tmp_path, monkeypatch, "acme-params", TWIN.replace("node_info", "node"))
    with pytest.raises(UserError) as e:
        build_registry()
    msg = str(e.value)
    assert msg.startswith('plugin "Twin" from distribution "acme-params"')
    assert "filter(state, pod, node) takes 'node'" in msg
    assert "it passes state, pod, node_info" in msg


def test_hookimpl_that_is_no_extension_point(tmp_path, monkeypatch):
    fake_distribution(tmp_path, monkeypatch, "acme-typo", TWIN.replace("def filter", "def filtre"))
    with pytest.raises(UserError) as e:
        build_registry()
    assert 'plugin "Twin" from distribution "acme-typo", entry point "plugins": method filtre() is marked @hookimpl' in str(e.value)


def test_a_subset_of_the_hookspec_parameters_is_fine(tmp_path, monkeypatch):
    fake_distribution(tmp_path, monkeypatch, "acme-subset",
                      TWIN.replace("self, state, pod, node_info", "self, pod, node_info"))
    assert "Twin" in build_registry()


def test_entry_point_that_cannot_be_imported(tmp_path, monkeypatch):
    fake_distribution(tmp_path, monkeypatch, "acme-broken", "import no_such_module_anywhere\n")
    with pytest.raises(UserError) as e:
        build_registry()
    assert 'distribution "acme-broken"' in str(e.value)
    assert "ModuleNotFoundError" in str(e.value)


def test_enabled_at_an_extension_point_it_does_not_implement(tmp_path, monkeypatch, capsys):
    fake_distribution(tmp_path, monkeypatch, "acme-ep", TWIN)
    case = tmp_path / "case.yaml"
    case.write_text(textwrap.dedent("""\
        apiVersion: schedharness/v1alpha1
        kind: Case
        config:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: KubeSchedulerConfiguration
          profiles:
          - schedulerName: default-scheduler
            plugins:
              score: {enabled: [{name: Twin, weight: 1}]}
        pods: []
        """))
    import harness.framework.registry as reg
    monkeypatch.setattr(reg, "_DEFAULT", None)
    assert main(["run", str(case)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert 'plugin "Twin" does not extend ScorePlugin plugin' in err[0]
    assert '(plugin "Twin" is from distribution "acme-ep", entry point "plugins")' in err[0]


def test_cli_prints_a_registration_error_on_one_line(tmp_path, monkeypatch, capsys):
    fake_distribution(tmp_path, monkeypatch, "acme-cli", TWIN.replace("node_info", "node"))
    import harness.framework.registry as reg
    monkeypatch.setattr(reg, "_DEFAULT", None)
    case = tmp_path / "c.yaml"
    case.write_text("apiVersion: schedharness/v1alpha1\nkind: Case\npods: []\n")
    assert main(["run", str(case)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'distribution "acme-cli"' in err[0]
