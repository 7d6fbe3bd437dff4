"""The plugin guide's tox.ini (docs/plugins.md, "Testing your package with tox") works: a copy
of the example package with exactly that file, run by tox with SCHEDHARNESS pointing at this
checkout, installs the harness from the path and passes its cases, conformance and pytest.

It builds a real environment (pip installs the harness from its path, and its dependencies),
offline: pip has no index, only a wheelhouse packed from the distributions this suite runs
with (tests/sample/wheelhouse.py: the same versions, no network) and virtualenv's embedded
setuptools for the build backends. About 40 s; skipped only where tox is not installed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "coscheduling")
SAMPLE = os.path.join(ROOT, "tests", "sample")


def documented_tox_ini() -> str:
    text = open(os.path.join(ROOT, "docs", "plugins.md"), encoding="utf-8").read()
    m = re.search(r"<!-- tox.ini: [^>]*-->\n```ini\n(.*?)```", text, re.S)
    assert m, "docs/plugins.md lost its tox.ini block"
    return m.group(1)


def test_documented_tox_ini_reads_the_harness_from_a_path():
    ini = documented_tox_ini()
    assert "{env:SCHEDHARNESS:" in ini and "pass_env = SCHEDHARNESS" in ini
    assert "schedharness run" in ini and "pytest" in ini


def test_documented_tox_ini_installs_the_harness_from_a_path(tmp_path):
    pytest.importorskip("tox")
    project = tmp_path / "my-plugin"
    project.mkdir()
    shutil.copy(os.path.join(EXAMPLE, "pyproject.toml"), project)
    for name in os.listdir(EXAMPLE):
        if name.startswith("scheduler-config"):
            shutil.copy(os.path.join(EXAMPLE, name), project)
    shutil.copytree(os.path.join(EXAMPLE, "cases"), project / "cases")
    shutil.copytree(os.path.join(EXAMPLE, "src"), project / "src",
                    ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    (project / "tox.ini").write_text(documented_tox_ini())
    if SAMPLE not in sys.path:
        sys.path.insert(0, SAMPLE)
    import wheelhouse

    wheels = wheelhouse.build(["kube-scheduler-harness[test]"], str(tmp_path / "wheels"),
                              leave_out=["kube-scheduler-harness"])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOX_", "PYTEST_", "SCHEDHARNESS", "PIP_"))}
    env["SCHEDHARNESS"] = ROOT
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=wheels)  # tox passes PIP_* to every pip it runs
    proc = subprocess.run([sys.executable, "-m", "tox", "-e", "py"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert f"pip install '{ROOT}[test]'" in out or f"pip install {ROOT}[test]" in out, out[-4000:]
    assert "6 passed, 0 failed" in out  # the example's cases, run by the installed harness
    assert "congratulations" in out
