"""The conformance kit: every in-tree plugin and the example Coscheduling package conform; a
plugin that breaks one rule is flagged under that rule and no other."""

from __future__ import annotations

import glob
import os
import sys

import pytest

from builtin_plugins import plugin_classes
from harness.cli import main
from harness import versions
from harness.conformance import RULES, World, check_plugin
from harness.errors import UserError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for path in (os.path.join(ROOT, "tests", "sample"), os.path.join(ROOT, "examples", "coscheduling", "src")):
    if path not in sys.path:
        sys.path.insert(0, path)

BROKEN = "schedharness_broken_plugins"
EXAMPLE = "schedharness_coscheduling"


@pytest.mark.parametrize("version", ["v1.34", "v1.35", "v1.36"])
@pytest.mark.parametrize("name", sorted(cls.name for cls in plugin_classes()))
def test_in_tree_plugin_conforms(name, version):
    """Every in-tree plugin, at the extension points it has in each version (DynamicResources
    scores from v1.35); a plugin a version does not have is an error naming it."""
    saved = versions.run_defaults()
    versions.set_run_defaults(version)
    try:
        if (name in ("NodeDeclaredFeatures", "GangScheduling") and version == "v1.34") or (
                name in ("TopologyPlacementGenerator", "PodGroupPodsCount") and version != "v1.36"):
            with pytest.raises(UserError, match=f"does not exist in kube-scheduler {version}"):
                check_plugin(name)
            return
        report = check_plugin(name)
    finally:
        versions.restore_run_defaults(saved)
    assert report.passed, report.format()


@pytest.mark.parametrize("case", sorted(glob.glob(os.path.join(ROOT, "examples", "coscheduling", "cases", "*.yaml"))),
                         ids=os.path.basename)
def test_example_coscheduling_conforms_on_its_cases(case):
    report = check_plugin("Coscheduling", world=World.from_case(case), modules=[EXAMPLE])
    assert report.passed, report.format()
    assert "permit-wait-allow-reject-timeout" not in report.skipped


@pytest.mark.parametrize("plugin,rule", [
    ("LeakyReserve", "reserve-unreserve-symmetric"),
    ("DoubleUnreserve", "unreserve-idempotent"),
    ("Overscore", "normalize-score-range"),
    ("Drifting", "score-deterministic"),
    ("DeafToNodes", "rejection-requeued-by-registered-events"),
    ("SkippingHint", "queueing-hints-consistent"),
    ("ForgetfulAddPod", "prefilter-extensions-match-fresh-prefilter"),
    ("WrongNameAllow", "permit-wait-allow-reject-timeout"),
    ("ZeroWait", "permit-wait-allow-reject-timeout"),
    ("Scribbler", "no-mutation-of-inputs"),
    ("NodeListTrimmer", "no-mutation-of-inputs"),
    ("NodeLabeler", "no-mutation-of-inputs"),
    ("PodLabeler", "no-mutation-of-inputs"),
    ("PodAnnotator", "no-mutation-of-inputs"),
    ("PodStatusWriter", "no-mutation-of-inputs"),
    ("NeighbourRelabeler", "no-mutation-of-inputs"),
    ("Raiser", "hooks-return-well-formed"),
    ("BareZeroScore", "hooks-return-well-formed"),
    ("Score500", "normalize-score-range"),
    ("PreflightRejecter", "hooks-return-well-formed"),
    ("StrayPlacement", "placements-within-parent"),
    ("PlacementScore500", "placement-score-range"),
])
def test_broken_plugin_is_flagged_under_its_rule(plugin, rule):
    report = check_plugin(plugin, modules=[BROKEN])
    assert {f.rule for f in report.failures()} == {rule}, report.format()
    assert f"FAIL {rule}" in report.format()


@pytest.mark.parametrize("plugin,hook,what", [
    ("Scribbler", "Filter", "annotations"),
    ("NodeLabeler", "Filter", "node.labels"),
    ("PodLabeler", "Filter", "labels.filtered"),
    ("PodAnnotator", "PreScore", "annotations.scored"),
    ("PodStatusWriter", "Reserve", "status"),
    ("NeighbourRelabeler", "Filter", "pods.default/web-0.labels"),
    ("NodeListTrimmer", "PreFilter", "pods"),
    ("Raiser", "Filter", "raised ValueError"),
    ("BareZeroScore", "Score", "returned 0"),
    ("Score500", "Score", "score 500"),
    ("PreflightRejecter", "PreBindPreFlight", "expected a Status of Success, Skip or Error"),
])
def test_planted_bug_is_a_failure_naming_plugin_hook_and_input(plugin, hook, what):
    # on the default world (no --case): the plugin, the hook, the pod and the node are named
    report = check_plugin(plugin, modules=[BROKEN])
    messages = [f.message for f in report.failures()]
    assert messages and all(f'plugin "{plugin}": {hook}' in m for m in messages), report.format()
    assert any(what in m and "pod default/" in m for m in messages), report.format()
    assert not any("could not go on" in m for m in messages)


def test_a_rule_with_nothing_to_check_is_not_exercised_not_passed(capsys):
    # Scribbler rejects no pod: the requeue rules have nothing to check on the default world
    report = check_plugin("NodeListTrimmer", modules=[BROKEN])
    assert "rejection-requeued-by-registered-events" in report.not_exercised()
    text = report.format()
    assert "NOT EXERCISED rejection-requeued-by-registered-events" in text
    assert "PASS rejection-requeued-by-registered-events" not in text
    # a not-exercised rule alone does not fail the check (exit code 0), but is shown
    assert main(["conformance", "-p", BROKEN, "--rule", "rejection-requeued-by-registered-events",
                 "NodeListTrimmer"]) == 0
    out = capsys.readouterr().out
    assert "NOT EXERCISED" in out and "0 passed, 0 failed, 1 not exercised" in out


def test_every_rule_has_a_broken_plugin():
    tested = {r for r in test_broken_plugin_is_flagged_under_its_rule.pytestmark[0].args[1]}
    assert {rule for _, rule in tested} == set(RULES)


def test_only_the_selected_rules_run():
    report = check_plugin("LeakyReserve", modules=[BROKEN], rules=["no-mutation-of-inputs"])
    assert report.passed and report.rules == ["no-mutation-of-inputs"]


def test_fixture(conformance):
    conformance.assert_conforms("NodePorts")
    report = conformance.check("Overscore", modules=[BROKEN])
    assert not report.passed


def test_cli(capsys, monkeypatch):
    assert main(["conformance", "TaintToleration"]) == 0
    assert "PASS queueing-hints-consistent" in capsys.readouterr().out
    assert main(["conformance", "-p", BROKEN, "Drifting"]) == 1
    assert "FAIL score-deterministic" in capsys.readouterr().out
    assert main(["conformance", "NoSuchPlugin"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'no plugin named "NoSuchPlugin"' in err[0]
    case = glob.glob(os.path.join(ROOT, "examples", "coscheduling", "cases", "*.yaml"))[0]
    assert main(["conformance", "-p", EXAMPLE, "--case", case, "Coscheduling"]) == 0


def test_custom_resource_update_requeues_through_its_gvk_event():
    # trio has minMember 3 and two pods: lowering minMember to 2 lifts the PreFilter rejection;
    # Coscheduling registers podgroups.v1alpha1.scheduling.x-k8s.io Add|Update, so it is requeued
    import copy

    from harness.conformance import Mutation

    case = os.path.join(ROOT, "examples", "coscheduling", "cases", "gang-prefilter-quorum.yaml")
    world = World.from_case(case)
    pg = next(o for o in world.cluster if o["kind"] == "PodGroup")
    lowered = copy.deepcopy(pg)
    lowered["spec"]["minMember"] = 2
    world.extra_mutations.append(Mutation("PodGroup trio: minMember 2", pg, lowered))
    report = check_plugin("Coscheduling", world=world, modules=[EXAMPLE],
                          rules=["rejection-requeued-by-registered-events"])
    assert report.passed, report.format()
    assert report.checks["rejection-requeued-by-registered-events"] >= 2
