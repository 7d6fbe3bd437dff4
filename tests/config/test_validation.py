"""KubeSchedulerConfiguration validation, ported from kube-scheduler v1.34:
pkg/scheduler/apis/config/validation/validation_test.go (TestValidateKubeSchedulerConfigurationV1),
pkg/scheduler/framework/runtime/framework_test.go (TestNewFrameworkErrors,
TestNewFrameworkMultiPointExpansion, TestInitFrameworkWithScorePlugins) and the strict decoding."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from harness.config.defaults import set_defaults
from harness.config.validation import (
    FrameworkConfigError, build_profile_plugins, format_duration, format_errors, go_value,
    is_extended_resource_name, parse_duration, validate_frameworks,
    validate_kube_scheduler_configuration, validate_plugin_args_kinds, validate_schema,
)

from harness.versions import resolve

from ._stubs import stub_registry

REGISTRY = stub_registry()
PROFILES_DIR = Path(__file__).resolve().parents[2] / "profiles"
API = "kubescheduler.config.k8s.io/v1"
INVALID_DETAIL = ('was invalid in version "kubescheduler.config.k8s.io/v1" '
                  '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")')


def valid_config():
    """validation_test.go's validConfig, as a (defaulted) v1 dict."""
    return {
        "apiVersion": API,
        "kind": "KubeSchedulerConfiguration",
        "parallelism": 8,
        "clientConnection": {"acceptContentTypes": "application/json", "contentType": "application/json",
                             "qps": 10, "burst": 10},
        "leaderElection": {"resourceLock": "leases", "leaderElect": True, "leaseDuration": "30s",
                           "renewDeadline": "15s", "retryPeriod": "5s", "resourceNamespace": "name",
                           "resourceName": "name"},
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 1,
        "profiles": [
            {"schedulerName": "me", "percentageOfNodesToScore": 35,
             "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]},
                         "score": {"disabled": [{"name": "*"}]}},
             "pluginConfig": [{"name": "DefaultPreemption",
                               "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}}]},
            {"schedulerName": "other", "percentageOfNodesToScore": 35,
             "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]},
                         "bind": {"enabled": [{"name": "CustomBind"}]}}},
        ],
        "extenders": [{"prioritizeVerb": "prioritize", "weight": 1}],
    }


def _mutate(fn):
    cfg = valid_config()
    fn(cfg)
    return cfg


def _set(path, value):
    def fn(cfg):
        obj = cfg
        for p in path[:-1]:
            obj = obj[p]
        obj[path[-1]] = value
    return fn


def _mismatch_queue_sort(cfg):
    cfg["profiles"] = [
        {"schedulerName": "me", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
         "pluginConfig": [{"name": "PrioritySort"}]},
        {"schedulerName": "other", "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}},
         "pluginConfig": [{"name": "CustomSort"}]},
    ]


def _duplicate_bind(cfg):
    cfg["extenders"][0]["bindVerb"] = "foo"
    cfg["extenders"].append({"prioritizeVerb": "prioritize", "bindVerb": "bar", "weight": 1})


V1_SCENARIOS = {
    "good": (valid_config(), []),
    "bad-parallelism-invalid-value": (
        _mutate(_set(["parallelism"], 0)),
        [("parallelism", "Invalid value: 0: should be an integer value greater than zero")]),
    # component-base v1.34 reports these as Required (the upstream table says Invalid but
    # compares only the field; the vendored ValidateLeaderElectionConfiguration uses Required).
    "bad-resource-name-not-set": (
        _mutate(_set(["leaderElection", "resourceName"], "")),
        [("leaderElection.resourceName", "Required value")]),
    "bad-resource-namespace-not-set": (
        _mutate(_set(["leaderElection", "resourceNamespace"], "")),
        [("leaderElection.resourceNamespace", "Required value")]),
    "bad-resource-lock-not-leases": (
        _mutate(_set(["leaderElection", "resourceLock"], "configmap")),
        [("leaderElection.resourceLock", 'Invalid value: "configmap": resourceLock value must be "leases"')]),
    "bad-percentage-of-nodes-to-score": (
        _mutate(_set(["percentageOfNodesToScore"], 101)),
        [("percentageOfNodesToScore", "Invalid value: 101: not in valid range [0-100]")]),
    "negative-percentage-of-nodes-to-score": (
        _mutate(_set(["percentageOfNodesToScore"], -1)),
        [("percentageOfNodesToScore", "Invalid value: -1: not in valid range [0-100]")]),
    "scheduler-name-not-set": (
        _mutate(_set(["profiles", 1, "schedulerName"], "")),
        [("profiles[1].schedulerName", "Required value")]),
    "repeated-scheduler-name": (
        _mutate(_set(["profiles", 0, "schedulerName"], "other")),
        # The bad value is a *field.Path, which encoding/json renders as {}.
        [("profiles[1].schedulerName", "Duplicate value: {}")]),
    "greater-than-100-profile-percentage-of-nodes-to-score": (
        _mutate(_set(["profiles", 1, "percentageOfNodesToScore"], 101)),
        [("profiles[1].percentageOfNodesToScore", "Invalid value: 101: not in valid range [0-100]")]),
    "negative-profile-percentage-of-nodes-to-score": (
        _mutate(_set(["profiles", 1, "percentageOfNodesToScore"], -1)),
        [("profiles[1].percentageOfNodesToScore", "Invalid value: -1: not in valid range [0-100]")]),
    "different-queue-sort": (
        _mutate(_set(["profiles", 1, "plugins", "queueSort", "enabled", 0, "name"], "AnotherSort")),
        [("profiles[1].plugins.queueSort",
          'Invalid value: {"Enabled":[{"Name":"AnotherSort","Weight":0}],"Disabled":null}: '
          'must be the same for all profiles')]),
    "one-empty-queue-sort": (
        _mutate(_set(["profiles", 0, "plugins"], None)),
        [("profiles[1].plugins.queueSort",
          'Invalid value: {"Enabled":[{"Name":"CustomSort","Weight":0}],"Disabled":null}: '
          'must be the same for all profiles')]),
    "extender-negative-weight": (
        _mutate(_set(["extenders", 0, "weight"], -1)),
        [("extenders[0].weight", "Invalid value: -1: must have a positive weight applied to it")]),
    "extender-duplicate-managed-resources": (
        _mutate(_set(["extenders", 0, "managedResources"],
                     [{"name": "example.com/foo"}, {"name": "example.com/foo"}])),
        [("extenders[0].managedResources[1].name",
          'Invalid value: "example.com/foo": duplicate extender managed resource name')]),
    "extender-duplicate-bind": (
        _mutate(_duplicate_bind),
        [("extenders", 'Invalid value: "found 2 extenders implementing bind": only one extender can implement bind')]),
    "invalid-node-percentage": (
        _mutate(_set(["profiles", 0, "pluginConfig"],
                     [{"name": "DefaultPreemption",
                       "args": {"minCandidateNodesPercentage": 200, "minCandidateNodesAbsolute": 100}}])),
        [("profiles[0].pluginConfig[0].args.minCandidateNodesPercentage",
          "Invalid value: 200: not in valid range [0, 100]")]),
    # Go: args of another type than the plugin's ("has to match plugin args"). With dicts the
    # closest is args that are not an object at all.
    "invalid-plugin-args": (
        _mutate(_set(["profiles", 0, "pluginConfig"], [{"name": "DefaultPreemption", "args": []}])),
        [("profiles[0].pluginConfig[0].args", "Invalid value: []: has to match plugin args")]),
    "duplicated-plugin-config": (
        _mutate(_set(["profiles", 0, "pluginConfig"], [{"name": "config"}, {"name": "config"}])),
        [("profiles[0].pluginConfig[1]", 'Duplicate value: "config"')]),
    "mismatch-queue-sort": (
        _mutate(_mismatch_queue_sort),
        [("profiles[1].plugins.queueSort",
          'Invalid value: {"Enabled":[{"Name":"CustomSort","Weight":0}],"Disabled":null}: '
          'must be the same for all profiles')]),
    "valid-plugins": (
        _mutate(_set(["profiles", 0, "plugins", "score", "enabled"], [{"name": "PodTopologySpread", "weight": 2}])),
        []),
    # From the earlier (v1beta2/v1beta3) tables: plugins removed from the API.
    "bad-removed-plugins": (
        _mutate(_set(["profiles", 0, "plugins", "score", "enabled"],
                     [{"name": "PodTopologySpread", "weight": 2}, {"name": "EBSLimits", "weight": 2}])),
        [("profiles[0].plugins.score.enabled[1]", f'Invalid value: "EBSLimits": {INVALID_DETAIL}')]),
    "bad-plugins-config": (
        _mutate(lambda c: c["profiles"][0]["pluginConfig"].append({"name": "AzureDiskLimits", "args": {}})),
        [("profiles[0].pluginConfig[1]", f'Invalid value: "AzureDiskLimits": {INVALID_DETAIL}')]),
}


@pytest.mark.parametrize("name", sorted(V1_SCENARIOS))
def test_validate_kube_scheduler_configuration_v1(name):
    cfg, want = V1_SCENARIOS[name]
    assert validate_kube_scheduler_configuration(copy.deepcopy(cfg), REGISTRY) == want


# ---- more of validation.go ---------------------------------------------------------------------

MORE_SCENARIOS = {
    "backoff-initial-zero": (
        _mutate(_set(["podInitialBackoffSeconds"], 0)),
        [("podInitialBackoffSeconds", "Invalid value: 0: must be greater than 0")]),
    "backoff-max-below-initial": (
        _mutate(_set(["podMaxBackoffSeconds"], 0)),
        [("podMaxBackoffSeconds", "Invalid value: 0: must be greater than or equal to PodInitialBackoffSeconds")]),
    "client-connection-negative-burst": (
        _mutate(_set(["clientConnection", "burst"], -1)),
        [("clientConnection.burst", "Invalid value: -1: must be non-negative")]),
    "lease-duration-negative": (
        _mutate(_set(["leaderElection", "leaseDuration"], "-1s")),
        [("leaderElection.leaseDuration", 'Invalid value: "-1s": must be greater than zero'),
         ("leaderElection.leaseDuration", 'Invalid value: "15s": must be greater than `RenewDeadline`')]),
    "lease-duration-not-above-renew-deadline": (
        _mutate(_set(["leaderElection", "leaseDuration"], "15000ms")),
        [("leaderElection.leaseDuration", 'Invalid value: "15s": must be greater than `RenewDeadline`')]),
    # RecommendedDefaultLeaderElectionConfiguration turns a zero duration into the default.
    "zero-durations-are-defaulted": (
        _mutate(lambda c: c["leaderElection"].update(leaseDuration="0s", renewDeadline="0", retryPeriod=None)),
        []),
    "no-leader-election-skips-checks": (
        _mutate(lambda c: c["leaderElection"].update(leaderElect=False, resourceLock="configmap",
                                                     leaseDuration="-1s", resourceName="")),
        []),
    "only-one-queue-sort-plugin": (
        _mutate(lambda c: [p["plugins"]["queueSort"]["enabled"].append({"name": "AnotherSort"})
                           for p in c["profiles"]]),
        [("profiles[0].plugins.queueSort.Enabled", "Invalid value: 2: only one queue sort plugin can be enabled")]),
    "queue-sort-weight-unset-equals-zero": (
        _mutate(_set(["profiles", 1, "plugins", "queueSort", "enabled"], [{"name": "CustomSort", "weight": 0}])),
        []),
    "queue-sort-args-differ": (
        _mutate(lambda c: (c["profiles"][0]["pluginConfig"].append({"name": "CustomSort", "args": {"a": 1}}),
                           c["profiles"][1].update(pluginConfig=[{"name": "CustomSort", "args": {"a": 2}}]))),
        [("profiles[1].pluginConfig.args", 'Invalid value: {"a":2}: queueSort must be the same for all profiles')]),
    "extender-invalid-resource-name": (
        _mutate(_set(["extenders", 0, "managedResources"], [{"name": "kubernetes.io/foo"}])),
        [("extenders[0].managedResources[0].name", 'Invalid value: "kubernetes.io/foo": is an invalid extended resource name')]),
    "extender-unqualified-resource-name": (
        _mutate(_set(["extenders", 0, "managedResources"], [{"name": "a/b/c"}])),
        [("extenders[0].managedResources[0].name",
          "Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' "
          "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
          "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with "
          "an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")]),
    "extender-prioritize-without-weight": (
        _mutate(lambda c: c["extenders"][0].pop("weight")),
        [("extenders[0].weight", "Invalid value: 0: must have a positive weight applied to it")]),
    # validatePluginConfig's table keys NodeResourcesFit as "NodeResourcesFitArgs": its args are
    # not checked here (only when the plugin is built) ...
    "node-resources-fit-args-not-checked-by-config-validation": (
        _mutate(lambda c: c["profiles"][0]["pluginConfig"].append(
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Foo"}}})),
        []),
    # ... and a pluginConfig named "NodeResourcesFitArgs" fails the args type check.
    "plugin-config-named-node-resources-fit-args": (
        _mutate(lambda c: c["profiles"][0]["pluginConfig"].append({"name": "NodeResourcesFitArgs", "args": None})),
        [("profiles[0].pluginConfig[1].args", "Invalid value: null: has to match plugin args")]),
    "plugin-config-for-disabled-plugin-is-still-validated": (
        _mutate(lambda c: c["profiles"][0]["pluginConfig"].append(
            {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}})),
        [("profiles[0].pluginConfig[1].args.hardPodAffinityWeight", "Invalid value: 101: not in valid range [0, 100]")]),
    "out-of-tree-plugin-args-not-checked": (
        _mutate(lambda c: c["profiles"][0]["pluginConfig"].append({"name": "MyPlugin", "args": {"x": -1}})),
        []),
    "no-profiles": (
        _mutate(_set(["profiles"], [])),
        [("profiles", "Required value")]),
}


@pytest.mark.parametrize("name", sorted(MORE_SCENARIOS))
def test_validate_more(name):
    cfg, want = MORE_SCENARIOS[name]
    assert validate_kube_scheduler_configuration(copy.deepcopy(cfg), REGISTRY) == want


def test_errors_keep_upstream_order():
    cfg = valid_config()
    cfg["parallelism"] = -1
    cfg["percentageOfNodesToScore"] = 200
    cfg["profiles"][1]["schedulerName"] = "me"
    cfg["podInitialBackoffSeconds"] = 0
    cfg["leaderElection"]["resourceLock"] = "endpoints"
    got = validate_kube_scheduler_configuration(cfg, REGISTRY)
    assert [p for p, _ in got] == ["leaderElection.resourceLock", "parallelism", "profiles[1].schedulerName",
                                   "percentageOfNodesToScore", "podInitialBackoffSeconds"]


def test_format_errors_like_aggregate():
    assert format_errors([]) == ""
    assert format_errors([("parallelism", "Invalid value: 0: x")]) == "parallelism: Invalid value: 0: x"
    assert format_errors([("a", "Required value"), ("b", "Required value"), ("a", "Required value")]) == \
        "[a: Required value, b: Required value]"
    assert format_errors([("a", "x"), ("a", "x")]) == "a: x"


def test_go_value_rendering():
    assert go_value(0) == "0"
    assert go_value(True) == "true"
    assert go_value("x") == '"x"'
    assert go_value(None) == "null"
    assert go_value({"b": 1, "a": "<"}) == '{"a":"\\u003c","b":1}'
    assert go_value(10.0) == "10"
    assert go_value(0.5) == "0.5"


@pytest.mark.parametrize("text,ns,canonical", [
    ("15s", 15 * 10 ** 9, "15s"), ("1m30s", 90 * 10 ** 9, "1m30s"), ("1.5h", 5400 * 10 ** 9, "1h30m0s"),
    ("500ms", 5 * 10 ** 8, "500ms"), ("1.5ms", 1500000, "1.5ms"), ("0", 0, "0s"), ("-2s", -2 * 10 ** 9, "-2s"),
    ("1us", 1000, "1\u00b5s"), ("2\u03bcs", 2000, "2\u00b5s"), ("3ns", 3, "3ns"), (".5s", 5 * 10 ** 8, "500ms"),
    ("1h0m0.000000001s", 3600 * 10 ** 9 + 1, "1h0m0.000000001s"),
])
def test_go_durations(text, ns, canonical):
    assert parse_duration(text) == ns
    assert format_duration(ns) == canonical


@pytest.mark.parametrize("bad,why", [
    ("", "invalid duration"), ("15", "missing unit in duration"), ("s", "invalid duration"),
    ("1x", 'unknown unit "x" in duration'), ("1.s.", "invalid duration"), ("--1s", "invalid duration"),
    ("1s ", 'unknown unit "s " in duration'), (".", "invalid duration")])
def test_go_duration_invalid(bad, why):
    """Go's time.ParseDuration errors, as src/time/format.go words them."""
    with pytest.raises(ValueError, match="^time: " + why):
        parse_duration(bad)


@pytest.mark.parametrize("name,want", [
    ("example.com/foo", True), ("foo", False), ("kubernetes.io/foo", False), ("requests.foo/bar", False),
    ("a.kubernetes.io/foo", False), ("Example.com/foo", False),
])
def test_is_extended_resource_name(name, want):
    assert is_extended_resource_name(name) is want


# ---- whole configurations through defaulting ------------------------------------------------------

def _load(name):
    with open(PROFILES_DIR / name, encoding="utf-8") as f:
        return yaml.safe_load(f)


def _check(cfg):
    errors = validate_schema(cfg) + validate_plugin_args_kinds(cfg, REGISTRY)
    if errors:
        return errors
    defaulted = set_defaults(cfg, REGISTRY)
    return validate_kube_scheduler_configuration(defaulted, REGISTRY) + validate_frameworks(defaulted, REGISTRY)


@pytest.mark.parametrize("name", ["default.yaml", "bin-packing.yaml", "two-profiles.yaml"])
def test_ready_made_profiles_are_valid(name):
    assert _check(_load(name)) == []


def test_empty_configuration_is_valid():
    assert _check({"apiVersion": API, "kind": "KubeSchedulerConfiguration"}) == []


def test_two_unnamed_profiles():
    cfg = {"apiVersion": API, "kind": "KubeSchedulerConfiguration", "profiles": [{}, {}]}
    defaulted = set_defaults(cfg, REGISTRY)
    assert validate_kube_scheduler_configuration(defaulted, REGISTRY) == [
        ("profiles[0].schedulerName", "Required value"),
        ("profiles[1].schedulerName", "Required value"),
        ("profiles[1].schedulerName", "Duplicate value: {}"),
    ]


def _frameworks(cfg):
    defaulted = set_defaults(dict(cfg, apiVersion=API, kind="KubeSchedulerConfiguration"), REGISTRY)
    assert validate_kube_scheduler_configuration(defaulted, REGISTRY) == []
    return validate_frameworks(defaulted, REGISTRY)


def _profile(**kw):
    return {"profiles": [dict({"schedulerName": "default-scheduler"}, **kw)]}


PREFIX = "creating profile for scheduler name default-scheduler: "


def test_custom_queue_sort_without_disabling_the_default():
    assert _frameworks(_profile(plugins={"queueSort": {"enabled": [{"name": "CustomSort"}]}})) == [
        ("profiles[0]", PREFIX + 'only one queue sort plugin required for profile with scheduler name '
                                 '"default-scheduler", but got 2')]


def test_custom_queue_sort_replacing_the_default():
    assert _frameworks(_profile(plugins={
        "multiPoint": {"disabled": [{"name": "PrioritySort"}]},
        "queueSort": {"enabled": [{"name": "CustomSort"}]}})) == []


def test_no_bind_plugin():
    assert _frameworks(_profile(plugins={"bind": {"disabled": [{"name": "*"}]}})) == [
        ("profiles[0]", PREFIX + 'at least one bind plugin is needed for profile with scheduler name '
                                 '"default-scheduler"')]


def test_unknown_multipoint_plugin():
    assert _frameworks(_profile(plugins={"multiPoint": {"enabled": [{"name": "Foo"}]}})) == [
        ("profiles[0]", PREFIX + 'PreFilterPlugin "Foo" does not exist')]


def test_unknown_filter_plugin():
    assert _frameworks(_profile(plugins={"filter": {"enabled": [{"name": "Foo"}]}})) == [
        ("profiles[0]", PREFIX + 'FilterPlugin "Foo" does not exist')]


def test_plugin_listed_where_it_has_no_hook():
    assert _frameworks(_profile(plugins={"filter": {"enabled": [{"name": "Unmarked"}]}})) == [
        ("profiles[0]", PREFIX + 'plugin "Unmarked" does not extend FilterPlugin plugin')]
    assert _frameworks(_profile(plugins={"score": {"enabled": [{"name": "NodePorts"}]}})) == [
        ("profiles[0]", PREFIX + 'plugin "NodePorts" does not extend ScorePlugin plugin')]


def test_plugin_factory_validates_node_resources_fit_args():
    args = {"scoringStrategy": {"type": "Foo"}}
    assert _frameworks(_profile(pluginConfig=[{"name": "NodeResourcesFit", "args": args}])) == [
        ("profiles[0]", PREFIX + 'initializing plugin "NodeResourcesFit": scoringStrategy.type: '
                                 'Unsupported value: "Foo": supported values: "LeastAllocated", '
                                 '"MostAllocated", "RequestedToCapacityRatio"')]
    # Not built (disabled everywhere), so not validated.
    assert _frameworks(_profile(pluginConfig=[{"name": "NodeResourcesFit", "args": args}],
                                plugins={"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}})) == []


def test_different_queue_sort_plugins_across_profiles():
    cfg = {"profiles": [
        {"schedulerName": "a"},
        {"schedulerName": "b", "plugins": {"multiPoint": {"enabled": [{"name": "CustomSort"}],
                                                          "disabled": [{"name": "PrioritySort"}]}}},
    ]}
    assert _frameworks(cfg) == [
        ("profiles[1]", 'different queue sort plugins for profile "b": "CustomSort", first: "PrioritySort"')]


def test_multipoint_reenable_resets_weight():
    """shared/verified-cases/config/multipoint-reenable-resets-weight.yaml"""
    defaulted = set_defaults(_profile(plugins={"multiPoint": {"enabled": [{"name": "TaintToleration"}]}}), REGISTRY)
    lists, weights = build_profile_plugins(defaulted["profiles"][0], REGISTRY)
    assert weights["TaintToleration"] == 1
    assert lists["score"][0] == "TaintToleration"


def test_score_weight_per_extension_point_wins():
    """shared/verified-cases/config/score-weight-per-extension-point-wins.yaml"""
    defaulted = set_defaults(_profile(plugins={"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 1}]},
                                               "score": {"enabled": [{"name": "ImageLocality", "weight": 5}]}}),
                             REGISTRY)
    lists, weights = build_profile_plugins(defaulted["profiles"][0], REGISTRY)
    assert weights == {"ImageLocality": 5, "TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1,
                       "VolumeBinding": 1, "PodTopologySpread": 2, "InterPodAffinity": 2,
                       "NodeResourcesBalancedAllocation": 1}
    # The explicitly re-configured plugin comes first, then the multiPoint expansion.
    assert lists["score"] == ["ImageLocality", "TaintToleration", "NodeAffinity", "NodeResourcesFit",
                              "VolumeBinding", "PodTopologySpread", "InterPodAffinity",
                              "NodeResourcesBalancedAllocation"]


@pytest.mark.parametrize("version", ["v1.34", "v1.36"])
def test_default_profile_plugin_lists(version):
    features = resolve(version)
    defaulted = set_defaults({"apiVersion": API, "kind": "KubeSchedulerConfiguration"}, REGISTRY, features)
    lists, weights = build_profile_plugins(defaulted["profiles"][0], REGISTRY, features=features)
    # v1.36: NodeDeclaredFeatures (PreFilter, Filter) last, after DefaultBinder
    ndf = ["NodeDeclaredFeatures"] if version == "v1.36" else []
    assert lists == {
        "preEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
        "queueSort": ["PrioritySort"],
        "preFilter": ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
                      "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"] + ndf,
        "filter": ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                   "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
                   "PodTopologySpread", "InterPodAffinity", "DynamicResources"] + ndf,
        "postFilter": ["DynamicResources", "DefaultPreemption"],
        "preScore": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
                     "InterPodAffinity", "NodeResourcesBalancedAllocation"],
        "score": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
                  "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality"],
        "reserve": ["VolumeBinding", "DynamicResources"],
        "permit": [],
        "preBind": ["VolumeBinding", "DynamicResources"],
        "bind": ["DefaultBinder"],
        "postBind": [],
    }
    assert weights == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
                       "PodTopologySpread": 2, "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1,
                       "ImageLocality": 1}


def test_two_profiles_no_scoring():
    defaulted = set_defaults(_load("two-profiles.yaml"), REGISTRY)
    lists, weights = build_profile_plugins(defaulted["profiles"][1], REGISTRY)
    assert lists["score"] == [] and lists["preScore"] == []
    assert "NodeResourcesFit" in lists["filter"]


# ---- framework_test.go --------------------------------------------------------------------------

TP, SP1, SP2, SWN1 = "test-plugin", "score-plugin-1", "score-plugin-2", "score-with-normalize-plugin-1"
ALL_TP = {"queueSort": [TP], "preFilter": [TP], "filter": [TP], "postFilter": [TP], "reserve": [TP],
          "permit": [TP], "preBind": [TP], "bind": [TP], "postBind": [TP], "preEnqueue": [TP]}


def _build(plugins, plugin_config=None):
    return build_profile_plugins({"plugins": plugins, "pluginConfig": plugin_config or []}, REGISTRY)


def _with(base, **lists):
    out = {k: [] for k in ["preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                           "reserve", "permit", "preBind", "bind", "postBind"]}
    out.update(base)
    out.update(lists)
    return out


def _en(*names, weights=None):
    weights = weights or {}
    return {"enabled": [dict({"name": n}, **({"weight": weights[n]} if n in weights else {})) for n in names]}


MULTIPOINT_CASES = {
    "plugin expansion": (
        {"multiPoint": {"enabled": [{"name": TP, "weight": 5}]}},
        _with(ALL_TP, preScore=[TP], score=[TP]), {TP: 5}),
    "disable MultiPoint plugin at some extension points": (
        {"multiPoint": _en(TP), "preScore": {"disabled": [{"name": TP}]}, "score": {"disabled": [{"name": TP}]}},
        _with(ALL_TP), {TP: 1}),
    "Multiple MultiPoint plugins": (
        {"multiPoint": _en(TP, SP1)},
        _with(ALL_TP, preScore=[TP, SP1], score=[TP, SP1]), {TP: 1, SP1: 1}),
    "disable MultiPoint extension": (
        {"multiPoint": _en(TP, SP1), "preScore": {"disabled": [{"name": "*"}]}},
        _with(ALL_TP, score=[TP, SP1]), {TP: 1, SP1: 1}),
    "Reorder MultiPoint plugins (specified extension takes precedence)": (
        {"multiPoint": _en(SWN1, TP, SP1), "score": _en(SP1, TP)},
        _with(ALL_TP, preScore=[TP, SP1], score=[SP1, TP, SWN1]), {SP1: 1, TP: 1, SWN1: 1}),
    "Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)": (
        {"multiPoint": _en(TP, SP1), "score": _en(SWN1, SP1, TP)},
        _with(ALL_TP, preScore=[TP, SP1], score=[SP1, TP, SWN1]), {SWN1: 1, SP1: 1, TP: 1}),
    "Override MultiPoint plugins weights": (
        {"multiPoint": _en(TP, SP1), "score": _en(SP1, TP, weights={SP1: 5, TP: 3})},
        _with(ALL_TP, preScore=[TP, SP1], score=[SP1, TP]), {SP1: 5, TP: 3}),
    "disable and enable MultiPoint plugins with '*'": (
        {"multiPoint": {"enabled": [{"name": "CustomSort"}, {"name": "CustomBind"}, {"name": SP1}],
                        "disabled": [{"name": "*"}]}},
        _with({}, queueSort=["CustomSort"], preScore=[SP1], score=[SP1], bind=["CustomBind"]), {SP1: 1}),
    "disable and enable MultiPoint plugin by name": (
        {"multiPoint": {"enabled": [{"name": "CustomBind"}, {"name": "CustomSort"}, {"name": SP1}],
                        "disabled": [{"name": SP1}]}},
        _with({}, queueSort=["CustomSort"], preScore=[SP1], score=[SP1], bind=["CustomBind"]), {SP1: 1}),
    "Override MultiPoint plugins weights and avoid a plugin being loaded multiple times": (
        {"multiPoint": _en(TP, SP1), "score": _en(SP1, SP2, TP, weights={SP1: 5, SP2: 5, TP: 3})},
        _with(ALL_TP, preScore=[TP, SP1], score=[SP1, TP, SP2]), {SP1: 5, SP2: 5, TP: 3}),
}


@pytest.mark.parametrize("name", sorted(MULTIPOINT_CASES))
def test_new_framework_multipoint_expansion(name):
    plugins, want_lists, want_weights = MULTIPOINT_CASES[name]
    lists, weights = _build(plugins)
    assert lists == want_lists
    assert weights == want_weights


@pytest.mark.parametrize("plugins,plugin_config,want", [
    ({"multiPoint": _en(TP, TP)}, None, 'plugin "test-plugin" already registered as "PreFilterPlugin"'),
    ({"preFilter": _en(TP, TP)}, [{"name": TP}], 'plugin "test-plugin" already registered as "PreFilterPlugin"'),
    ({"preFilter": _en(TP)}, [{"name": TP}, {"name": TP}], "repeated config for plugin test-plugin"),
])
def test_new_framework_errors(plugins, plugin_config, want):
    with pytest.raises(FrameworkConfigError) as e:
        _build(plugins, plugin_config)
    assert str(e.value) == want


@pytest.mark.parametrize("score,want", [
    (["notExist"], 'ScorePlugin "notExist" does not exist'),
    (["plugin-not-implementing-score"], 'plugin "plugin-not-implementing-score" does not extend ScorePlugin plugin'),
    (None, None),
    ([], None),
    ([SP1], None),
    ([SWN1], None),
])
def test_init_framework_with_score_plugins(score, want):
    plugins = {"queueSort": _en("CustomSort"), "bind": _en("CustomBind")}
    if score is not None:
        plugins["score"] = _en(*score)
    if want is None:
        _build(plugins)
    else:
        with pytest.raises(FrameworkConfigError) as e:
            _build(plugins)
        assert str(e.value) == want


def test_negative_score_weight_is_accepted():
    """Neither validation nor NewFramework rejects a negative weight (only 0 becomes 1)."""
    _, weights = _build({"queueSort": _en("CustomSort"), "bind": _en("CustomBind"),
                         "score": _en(SP1, weights={SP1: -5})})
    assert weights == {SP1: -5}


# ---- strict decoding ----------------------------------------------------------------------------

def _doc(**kw):
    return dict({"apiVersion": API, "kind": "KubeSchedulerConfiguration"}, **kw)


@pytest.mark.parametrize("cfg,want", [
    (_doc(), []),
    (_doc(healthzBindAddress="0.0.0.0:10251"), [("", 'unknown field "healthzBindAddress"')]),
    (_doc(Parallelism=8), [("", 'unknown field "Parallelism"')]),
    (_doc(profiles=[{"schedulerName": "a", "plugin": {}}]), [("profiles[0]", 'unknown field "profiles[0].plugin"')]),
    (_doc(profiles=[{"plugins": {"score": {"enabled": [{"name": "X", "wieght": 3}]}}}]),
     [("profiles[0].plugins.score.enabled[0]", 'unknown field "profiles[0].plugins.score.enabled[0].wieght"')]),
    (_doc(profiles=[{"plugins": {"scoring": {}}}]), [("profiles[0].plugins", 'unknown field "profiles[0].plugins.scoring"')]),
    (_doc(leaderElection={"leaseDuration": "15"}), [("leaderElection.leaseDuration", 'time: invalid duration "15"')]),
    (_doc(parallelism="8"), [("parallelism", "cannot unmarshal string into a number field")]),
    (_doc(profiles=[{"pluginConfig": [{"name": "X", "args": {"anything": {"goes": [1]}}}]}]), []),
    (_doc(profiles=None, parallelism=None, leaderElection=None), []),
    ({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
     [("apiVersion", 'no kind "KubeSchedulerConfiguration" is registered for version '
                     '"kubescheduler.config.k8s.io/v1beta3"')]),
    ({"apiVersion": API}, [("kind", "Object 'Kind' is missing")]),
])
def test_validate_schema(cfg, want):
    assert validate_schema(cfg) == want


def test_plugin_args_kind_must_match():
    cfg = _doc(profiles=[{"pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"apiVersion": API, "kind": "NodeResourcesFitArgs"}},
        {"name": "NodeResourcesFit", "args": {"apiVersion": API, "kind": "InterPodAffinityArgs"}},
        {"name": "MyPlugin", "args": {"kind": "Whatever"}},
    ]}])
    assert validate_plugin_args_kinds(cfg, REGISTRY) == [
        ("profiles[0].pluginConfig[1]", "decoding .profiles[0].pluginConfig[1]: args for plugin NodeResourcesFit "
                                        "were not of type NodeResourcesFitArgs.kubescheduler.config.k8s.io, got "
                                        "InterPodAffinityArgs.kubescheduler.config.k8s.io")]
