"""The pytest plugin: YAML cases are collected as items, and a failing one reports expected vs
actual per pod with the filter/score table of the decision."""

from __future__ import annotations

import textwrap

pytest_plugins = ["pytester"]


def _plugin_args():
    """Load the plugin by name only when it is not installed (its pytest11 entry point)."""
    try:
        from importlib.metadata import entry_points
        eps = entry_points()
        group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
        if any(ep.value == "harness.pytest_plugin" for ep in group):
            return ["-q"]
    except Exception:  # pragma: no cover
        pass
    return ["-p", "harness.pytest_plugin", "-q"]

CASE = textwrap.dedent("""\
    apiVersion: schedharness/v1alpha1
    kind: Case
    metadata: {name: emptier-node}
    cluster:
      - {apiVersion: v1, kind: Node, metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}, status: {allocatable: {cpu: "2", memory: 4Gi}}}
      - {apiVersion: v1, kind: Node, metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}, status: {allocatable: {cpu: "4", memory: 8Gi}}}
    pods:
      - {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]}}
    expect:
      bindings: {web: EXPECTED}
    """)


def test_case_collected_and_passes(pytester):
    pytester.makefile(".yaml", emptier=CASE.replace("EXPECTED", "node-b"))
    pytester.makefile(".yaml", other="not: a case\n")
    result = pytester.runpytest(*_plugin_args())
    result.assert_outcomes(passed=1)


def test_failure_report_shows_expected_actual_and_scores(pytester):
    pytester.makefile(".yaml", emptier=CASE.replace("EXPECTED", "node-a"))
    result = pytester.runpytest(*_plugin_args())
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "default/web: expected node-a, got node-b" in out
    assert "default/web: node-b" in out
    assert "filter NodeResourcesFit: Success" in out
    assert "NodeResourcesFit" in out and "picked: node-b" in out


def test_invalid_case_is_a_collection_error(pytester):
    pytester.makefile(".yaml", bad=CASE.replace("EXPECTED", "node-b").replace("kind: Case", "kind: Case\nbogus: 1"))
    result = pytester.runpytest(*_plugin_args())
    assert result.ret != 0
    assert 'unknown key "bogus"' in result.stdout.str()


def test_a_case_reads_nothing_outside_the_rootdir_unless_the_ini_allows_it(pytester):
    """The trust model under pytest: the rootdir is the case's tree (README "What a case may
    cause"); `schedharness_allow_outside_root = true` (or the option) lifts it."""
    outside = pytester.path.parent / f"{pytester.path.name}-cfg.yaml"
    outside.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    case = CASE.replace("EXPECTED", "node-b").replace("cluster:", f"config: ../{outside.name}\ncluster:", 1)
    pytester.makefile(".yaml", far=case)
    result = pytester.runpytest(*_plugin_args())
    result.stdout.fnmatch_lines(["*config*outside the case's tree*"])
    assert result.ret != 0
    pytester.makeini("[pytest]\nschedharness_allow_outside_root = true\n")
    result = pytester.runpytest(*_plugin_args())
    result.assert_outcomes(passed=1)
