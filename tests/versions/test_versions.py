"""Kubernetes versions and feature gates: the registry's defaults per version, --feature-gates'
checks, and the one version switch (case key, command-line option, pytest option, run output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from harness import versions
from harness.versions import VersionError, parse_version, resolve

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytest_plugins = ["pytester"]


# ---- the registry ---------------------------------------------------------------------------
@pytest.mark.parametrize("version, gate, enabled", [
    # kube_features.go of each release
    ("v1.34", "SchedulerAsyncAPICalls", False),  # turned off again in v1.34 patches (#134400)
    ("v1.34", "NominatedNodeNameForExpectation", False),  # alpha in v1.34
    ("v1.35", "NominatedNodeNameForExpectation", True),  # beta in v1.35
    ("v1.35", "OpportunisticBatching", True),
    ("v1.35", "DRAExtendedResource", False),
    ("v1.36", "DRAExtendedResource", True),
    ("v1.36", "DRADeviceTaints", True),
    ("v1.36", "DRAPartitionableDevices", True),
    ("v1.36", "DRAConsumableCapacity", True),
    ("v1.36", "DRADeviceBindingConditions", True),
    ("v1.36", "NodeDeclaredFeatures", True),
    ("v1.35", "NodeDeclaredFeatures", False),
    ("v1.36", "GenericWorkload", False),
    ("v1.36", "DRAPrioritizedList", True),
    ("v1.34", "PodLevelResources", True),
])
def test_default_gates_per_version(version, gate, enabled):
    assert resolve(version).enabled(gate) is enabled
    assert resolve(version)[gate] is enabled


@pytest.mark.parametrize("version, gate", [
    ("v1.34", "OpportunisticBatching"),  # added in v1.35
    ("v1.34", "GenericWorkload"),
    ("v1.35", "DRAListTypeAttributes"),  # added in v1.36
    ("v1.36", "CSIMigrationPortworx"),  # removed in v1.36
])
def test_a_gate_of_another_version_is_unknown(version, gate):
    assert gate not in resolve(version)
    with pytest.raises(VersionError, match=f"unrecognized feature gate: {gate}"):
        resolve(version, {gate: True}, file="c.yaml")


def test_versions_parse_as_cases_name_them():
    assert parse_version("v1.35").release == "v1.35.6"
    assert parse_version("v1.34.9").release == "v1.34.9"
    for bad in ("v1.34.1", "v1.33", "v2.0", "latest", 135, "1.36", " v1.35 ", "v1.035", "v1.35.06",
                "v1." + "9" * 5000, "v1.35\n"):
        with pytest.raises(VersionError):
            parse_version(bad, file="c.yaml", key="kubernetesVersion")


def test_newest_modelled_is_the_default():
    assert versions.DEFAULT.version.release == "v1.36.3"
    assert resolve().version == parse_version(versions.NEWEST)


@pytest.mark.parametrize("version, gates, words", [
    ("v1.36", {"DRAAdminAccess": False}, "cannot set feature gate DRAAdminAccess to false, feature is locked to true"),
    ("v1.34", {"SchedulerQueueingHints": False}, "feature is locked to true"),
    ("v1.36", {"DRAResourceClaimDeviceStatus": False},
     "DRADeviceBindingConditions is enabled, but depends on features that are disabled: [DRAResourceClaimDeviceStatus]"),
    ("v1.36", {"GenericWorkload": False, "DRAWorkloadResourceClaims": False}, None),
    ("v1.35", {"GangScheduling": True}, "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
    ("v1.36", {"PodLevelResources": "no"}, "invalid value of PodLevelResources=no"),
    ("v1.36", {"GenericWorkload": True}, None),  # the Workload API is modelled both ways
    ("v1.35", {"GenericWorkload": True, "GangScheduling": True}, None),
    ("v1.36", {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}, None),
    ("v1.36", {"GenericWorkload": True, "GangScheduling": True, "WorkloadAwarePreemption": True}, None),
    ("v1.36", {"GenericWorkload": True, "WorkloadAwarePreemption": True},
     "WorkloadAwarePreemption is enabled, but depends on features that are disabled: [GangScheduling]"),
    ("v1.35", {"WorkloadAwarePreemption": True}, "unrecognized feature gate: WorkloadAwarePreemption"),
    ("v1.36", {"GenericWorkload": True, "DRAWorkloadResourceClaims": True}, None),  # modelled both ways
    ("v1.36", {"DRAWorkloadResourceClaims": True},
     "DRAWorkloadResourceClaims is enabled, but depends on features that are disabled: [GenericWorkload]"),
    ("v1.35", {"GenericWorkload": True, "DRAWorkloadResourceClaims": True},
     "unrecognized feature gate: DRAWorkloadResourceClaims"),
    ("v1.34", {"PodLevelResources": False}, "PodLevelResources=false is not modelled"),
])
def test_feature_gate_errors(version, gates, words):
    if words is None:  # naming gates at their defaults is fine
        resolve(version, gates)
        return
    with pytest.raises(VersionError) as e:
        resolve(version, gates, file="c.yaml")
    assert words in str(e.value)
    assert str(e.value).startswith("c.yaml: featureGates")


def test_gates_set_as_feature_gates_flag_takes_them():
    assert versions.parse_gate_flag("A=true, B=false,,C=1") == {"A": True, "B": False, "C": True}
    with pytest.raises(VersionError, match="missing bool value for A"):
        versions.parse_gate_flag("A")
    f = resolve("v1.36", {"StorageCapacityScoring": "true"})
    assert f.enabled("StorageCapacityScoring") is True
    assert f.describe() == "v1.36.3 (StorageCapacityScoring=true)"
    # a gate modelled at its default only may still be named with that default
    assert resolve("v1.36", {"DRADeviceTaints": True}).enabled("DRADeviceTaints")


def test_the_v1_34_table_has_no_dependencies():
    # kube_features.go declares gate dependencies from v1.35 on
    assert resolve("v1.34", {"VolumeAttributesClass": False}).enabled("VolumeAttributesClass") is False
    with pytest.raises(VersionError, match="depends on"):  # v1.35 does declare this one
        resolve("v1.35", {"GangScheduling": True, "GenericWorkload": False})


# ---- the version switch ---------------------------------------------------------------------
CASE = textwrap.dedent("""\
    apiVersion: schedharness/v1alpha1
    kind: Case
    metadata: {name: versioned}
    VERSION
    cluster:
      - {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}, status: {allocatable: {cpu: "2", memory: 4Gi}}}
    pods:
      - {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: [{name: c, image: nginx}]}}
    expect:
      bindings: {web: node-a}
    """)


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop(versions.ENV_VERSION, None)
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, env=env)


def _case(tmp_path, version_line=""):
    p = tmp_path / "case.yaml"
    p.write_text(CASE.replace("VERSION", version_line))
    return str(p)


def test_a_case_without_version_runs_on_the_newest_and_says_so(tmp_path):
    proc = _cli("run", _case(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "1 passed, 0 failed (kube-scheduler v1.36.3)"
    out = json.loads(_cli("run", "--json", _case(tmp_path)).stdout)
    assert out[0]["kubernetesVersion"] == "v1.36.3" and out[0]["featureGates"] == {}


def test_the_option_sets_the_version_of_cases_that_name_none(tmp_path):
    proc = _cli("run", "--kubernetes-version", "v1.35", _case(tmp_path))
    assert proc.stdout.splitlines()[-1] == "1 passed, 0 failed (kube-scheduler v1.35.6)"
    pinned = _case(tmp_path, "kubernetesVersion: v1.34")
    proc = _cli("run", "--kubernetes-version", "v1.35", pinned)
    assert proc.stdout.splitlines()[-1] == "1 passed, 0 failed (kube-scheduler v1.34.9)"
    explain = _cli("explain", "--kubernetes-version", "v1.35", _case(tmp_path))
    assert "kube-scheduler v1.35.6" in explain.stdout.splitlines()[0]


def test_gates_from_the_case_and_the_option(tmp_path):
    path = _case(tmp_path, "kubernetesVersion: v1.36\nfeatureGates: {StorageCapacityScoring: true}")
    out = json.loads(_cli("run", "--json", "--feature-gates", "VolumeAttributesClass=true", path).stdout)
    assert out[0]["featureGates"] == {"StorageCapacityScoring": True, "VolumeAttributesClass": True}


@pytest.mark.parametrize("line, key, words", [
    ("kubernetesVersion: v1.33", "kubernetesVersion", "v1.33 is not modelled"),
    ("kubernetesVersion: v1.35.2", "kubernetesVersion", "the harness models v1.35.6"),
    ("featureGates: {NoSuchGate: true}", "featureGates.NoSuchGate", "unrecognized feature gate"),
    ("kubernetesVersion: v1.34\nfeatureGates: {OpportunisticBatching: false}", "featureGates.OpportunisticBatching",
     "unrecognized feature gate"),
    ("kubernetesVersion: v1.36\nfeatureGates: {DRAAdminAccess: false}", "featureGates.DRAAdminAccess",
     "locked to true"),
    ("kubernetesVersion: v1.34\nfeatureGates: {DRAWorkloadResourceClaims: true}",
     "featureGates.DRAWorkloadResourceClaims", "unrecognized feature gate: DRAWorkloadResourceClaims"),
    ("kubernetesVersion: v1.34\nfeatureGates: {GangScheduling: true}", "featureGates.GangScheduling",
     "unrecognized feature gate: GangScheduling"),
    ("featureGates: [a]", "featureGates", "mapping"),
])
def test_bad_version_or_gate_is_one_line_exit_2(tmp_path, capsys, line, key, words):
    from harness.cli import main

    path = _case(tmp_path, line)
    for cmd in ("run", "validate"):
        rc = main([cmd, path])
        err = capsys.readouterr().err
        assert rc == 2, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err
        assert lines[0].startswith(f"error: {path}: {key}"), lines[0]
        assert words in lines[0]


def test_bad_option_is_one_line_exit_2(tmp_path):
    proc = _cli("run", "--kubernetes-version", "v9.9", _case(tmp_path))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "--kubernetes-version" in proc.stderr
    proc = _cli("run", "--feature-gates", "Nope=true", _case(tmp_path))
    assert proc.returncode == 2 and "unrecognized feature gate: Nope" in proc.stderr


def test_main_in_process_leaves_the_defaults_as_they_were(tmp_path):
    from harness.cli import main

    before = versions.run_defaults()
    assert main(["run", "--kubernetes-version", "v1.34", _case(tmp_path)]) == 0
    assert versions.run_defaults() == before


def test_pytest_option_and_ini_set_the_version(pytester):
    pytester.makefile(".yaml", case=CASE.replace("VERSION", ""))
    pytester.makeini("[pytest]\nkubernetes_version = v1.35\n")
    args = ["-p", "harness.pytest_plugin"] if not _installed() else []
    result = pytester.runpytest_subprocess(*args, "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*cases without kubernetesVersion run on kube-scheduler v1.35.6*"])
    result = pytester.runpytest_subprocess(*args, "--kubernetes-version", "v1.34")
    result.stdout.fnmatch_lines(["*kube-scheduler v1.34.9*"])
    result = pytester.runpytest_subprocess(*args, "--kubernetes-version", "v1.20")
    assert result.ret != 0


def _installed() -> bool:
    from importlib.metadata import entry_points

    eps = entry_points()
    group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    return any(ep.value == "harness.pytest_plugin" for ep in group)


def test_the_tox_factors_set_the_version():
    text = open(os.path.join(ROOT, "tox.ini")).read()
    for minor in ("134", "135", "136"):
        assert f"k8s{minor}: {versions.ENV_VERSION} = v1.{minor[1:]}" in text


def test_the_readme_lists_every_gate_as_the_registry_has_it():
    text = open(os.path.join(ROOT, "README.md")).read()
    for row in versions.gate_table():
        assert row in text, f"README's gate table lacks or misstates: {row}"
    for name in versions.NOT_MODELLED:
        assert f"{name} ({versions.NOT_MODELLED[name]})" in text, name


@pytest.mark.parametrize("version, obj, bad", [
    # staging/src/k8s.io/api core/v1: NodeStatus.declaredFeatures from v1.35; PodSpec.workloadRef
    # in v1.35 only (v1.36's Workload API v1alpha2 replaced it with schedulingGroup)
    ("v1.34", {"kind": "Node", "status": {"declaredFeatures": ["A"]}}, "status.declaredFeatures"),
    ("v1.35", {"kind": "Node", "status": {"declaredFeatures": ["A"]}}, None),
    ("v1.35", {"kind": "Pod", "spec": {"workloadRef": {"name": "w", "podGroup": "g"}}}, None),
    ("v1.36", {"kind": "Pod", "spec": {"workloadRef": {"name": "w"}}}, "spec.workloadRef"),
    ("v1.35", {"kind": "Pod", "spec": {"schedulingGroup": {"podGroupName": "g"}}}, "spec.schedulingGroup"),
    ("v1.36", {"kind": "Pod", "spec": {"schedulingGroup": {"podGroupName": "g"}}}, None),
])
def test_strict_decoding_knows_each_versions_fields(version, obj, bad):
    from harness.api import fields

    assert fields.unknown_field(obj, obj["kind"], resolve(version).version.minor) == bad
