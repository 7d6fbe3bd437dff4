"""The framework runtime (harness/framework/runtime.py) against the table tests of kubernetes
pkg/scheduler/framework/runtime/framework_test.go, with the expectations of the v1.34 source
(framework.go, waiting_pods_map.go). Statuses are compared the way upstream's statusCmpOpts does:
Success equals nil, Error statuses by their error text, others by code, plugin and message."""

from __future__ import annotations

import copy
import os
import sys
from typing import Any, Dict, List, Optional

import pytest

from harness.errors import ConfigError
from harness.framework import Code, Status
from harness.framework.cycle_state import CycleState
from harness.framework.runtime import MAX_PERMIT_TIMEOUT, MAX_TOTAL_SCORE, Framework
from harness.framework.types import NodeInfo, NodePluginScores, PodInfo, PreFilterResult
from harness.scheduler.queue import Nominator
from harness.scheduler.snapshot import Snapshot
from harness.testing import make_node, make_pod

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample"))

from runtime_fakes import (  # noqa: E402
    BIND_PLUGIN, DUPLICATE_PLUGIN_NAME, INJECT_FILTER_REASON, INJECT_REASON, PERMIT_PLUGIN,
    PLUGIN_NOT_IMPLEMENTING_SCORE, QUEUE_SORT_PLUGIN, SCORE_PLUGIN_1, SCORE_PLUGIN_2,
    SCORE_WITH_NORMALIZE_PLUGIN_1, SCORE_WITH_NORMALIZE_PLUGIN_2, TEST_PLUGIN, Injected, TestBindPlugin,
    TestPermitPlugin, TestPlugin, TestPreFilterPlugin, TestPreFilterWithExtensionsPlugin,
    TestQueueSortPlugin, instance, registry)

TEST_PROFILE_NAME = "test-profile"
NODE_NAME = "testNode"
DEFAULT_WEIGHTS = {SCORE_WITH_NORMALIZE_PLUGIN_1: 1, SCORE_WITH_NORMALIZE_PLUGIN_2: 2, SCORE_PLUGIN_1: 1}

S, E, U, UU, W, SK = (Code.Success, Code.Error, Code.Unschedulable,
                      Code.UnschedulableAndUnresolvable, Code.Wait, Code.Skip)


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------
def err(msg: str) -> Status:
    """framework.AsStatus(errors.New(msg))."""
    return Status(Code.Error, err=RuntimeError(msg))


def st(code: Code, *reasons: str, plugin: str = "") -> Status:
    return Status(code, *reasons, plugin=plugin)


def status_equal(want: Optional[Status], got: Optional[Status]) -> bool:
    """statusCmpOpts."""
    if want is None or got is None:
        return (want is None or want.is_success()) and (got is None or got.is_success())
    if want.code == Code.Error:
        return got.code == Code.Error and str(want.as_error()) == str(got.as_error())
    return want.code == got.code and want.plugin == got.plugin and want.message() == got.message()


def assert_status(want: Optional[Status], got: Optional[Status]) -> None:
    assert status_equal(want, got), f"want {want!r}, got {got!r}"


def code(s: Optional[Status]) -> Code:
    return Code.Success if s is None else s.code


def new_fw(plugins: Dict[str, Any], reg: Optional[Dict[str, Any]] = None,
           plugin_config: Optional[List[Dict[str, Any]]] = None, **kw: Any) -> Framework:
    """newFrameworkWithQueueSortAndBind: a queue sort and a bind plugin are added when the
    profile has none."""
    reg = dict(registry() if reg is None else reg)
    reg.setdefault(QUEUE_SORT_PLUGIN, instance(TestQueueSortPlugin()))
    reg.setdefault(BIND_PLUGIN, instance(TestBindPlugin()))
    plugins = copy.deepcopy(plugins)
    if not (plugins.get("queueSort") or {}).get("enabled"):
        plugins.setdefault("queueSort", {}).setdefault("enabled", []).append({"name": QUEUE_SORT_PLUGIN})
    if not (plugins.get("bind") or {}).get("enabled"):
        plugins.setdefault("bind", {}).setdefault("enabled", []).append({"name": BIND_PLUGIN})
    profile = {"schedulerName": TEST_PROFILE_NAME, "plugins": plugins,
               "pluginConfig": list(plugin_config or [])}
    return Framework(profile, reg, **kw)


def fw_with(ep: str, plugins: List[TestPlugin], **kw: Any) -> Framework:
    """A framework with the given plugin instances enabled at one extension point."""
    reg = {p.name: instance(p) for p in plugins}
    return new_fw({ep: {"enabled": [{"name": p.name} for p in plugins]}}, reg, **kw)


def tp(name: str, **inj: Any) -> TestPlugin:
    return TestPlugin(name, Injected(**inj))


def score_config(*names: str) -> Dict[str, Any]:
    """buildScoreConfigDefaultWeights."""
    return {"score": {"enabled": [{"name": n, "weight": DEFAULT_WEIGHTS.get(n, 0)} for n in names]}}


def build_node_infos(*names: str) -> List[NodeInfo]:
    out = []
    for n in names:
        ni = NodeInfo()
        ni.set_node(make_node(n))
        out.append(ni)
    return out


POD = make_pod(name="", uid="")
NODES = ("node1", "node2")


# ----------------------------------------------------------------------------------------------
# construction
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("plugins,init_err", [
    pytest.param(score_config("notExist"), True, id="enabled Score plugin doesn't exist in registry"),
    pytest.param(score_config(PLUGIN_NOT_IMPLEMENTING_SCORE), True,
                 id="enabled Score plugin doesn't extend the ScorePlugin interface"),
    pytest.param({}, False, id="Score plugins are nil"),
    pytest.param(score_config(), False, id="enabled Score plugin list is empty"),
    pytest.param(score_config(SCORE_PLUGIN_1), False, id="enabled plugin only implements ScorePlugin interface"),
    pytest.param(score_config(SCORE_WITH_NORMALIZE_PLUGIN_1), False,
                 id="enabled plugin implements ScoreWithNormalizePlugin interface"),
])
def test_init_framework_with_score_plugins(plugins, init_err):
    if init_err:
        with pytest.raises(ConfigError):
            new_fw(plugins)
    else:
        new_fw(plugins)


def test_init_framework_errors_are_worded_like_upstream():
    with pytest.raises(ConfigError, match='ScorePlugin "notExist" does not exist'):
        new_fw(score_config("notExist"))
    with pytest.raises(ConfigError, match=f'plugin "{PLUGIN_NOT_IMPLEMENTING_SCORE}" does not extend ScorePlugin plugin'):
        new_fw(score_config(PLUGIN_NOT_IMPLEMENTING_SCORE))
    with pytest.raises(ConfigError, match='only one queue sort plugin required for profile with scheduler name '
                                          '"test-profile", but got 0'):
        Framework({"schedulerName": TEST_PROFILE_NAME, "plugins": {"bind": {"enabled": [{"name": BIND_PLUGIN}]}}},
                  registry())
    with pytest.raises(ConfigError, match='only one queue sort plugin required for profile with scheduler name '
                                          '"test-profile", but got 2'):
        Framework({"schedulerName": TEST_PROFILE_NAME, "plugins": {
            "queueSort": {"enabled": [{"name": QUEUE_SORT_PLUGIN}, {"name": TEST_PLUGIN}]},
            "bind": {"enabled": [{"name": BIND_PLUGIN}]}}}, registry())
    with pytest.raises(ConfigError, match='at least one bind plugin is needed for profile with scheduler name '
                                          '"test-profile"'):
        Framework({"schedulerName": TEST_PROFILE_NAME,
                   "plugins": {"queueSort": {"enabled": [{"name": QUEUE_SORT_PLUGIN}]}}}, registry())
    with pytest.raises(ConfigError, match='PreFilterPlugin "nope" does not exist'):
        new_fw({"multiPoint": {"enabled": [{"name": "nope"}]}})


def test_init_framework_plugin_factory_error():
    def boom(args, handle):
        raise ValueError("bad args")
    reg = dict(registry(), boom=boom)
    with pytest.raises(ConfigError, match='initializing plugin "boom": bad args'):
        new_fw({"filter": {"enabled": [{"name": "boom"}]}}, reg)


@pytest.mark.parametrize("plugins,plugin_cfg,want_err", [
    pytest.param({"preFilter": {"enabled": [{"name": DUPLICATE_PLUGIN_NAME, "weight": 1},
                                            {"name": DUPLICATE_PLUGIN_NAME, "weight": 1}]}},
                 [{"name": DUPLICATE_PLUGIN_NAME}], "already registered", id="duplicate plugin name"),
    pytest.param({"preFilter": {"enabled": [{"name": DUPLICATE_PLUGIN_NAME, "weight": 1}]}},
                 [{"name": DUPLICATE_PLUGIN_NAME}, {"name": DUPLICATE_PLUGIN_NAME}],
                 "repeated config for plugin", id="duplicate plugin config"),
])
def test_new_framework_errors(plugins, plugin_cfg, want_err):
    with pytest.raises(ConfigError) as ei:
        Framework({"plugins": plugins, "pluginConfig": plugin_cfg}, registry())
    assert want_err in str(ei.value)


def test_new_framework_error_messages_exact():
    with pytest.raises(ConfigError) as ei:
        Framework({"plugins": {"preFilter": {"enabled": [{"name": DUPLICATE_PLUGIN_NAME}] * 2}}}, registry())
    assert ei.value.detail == f'plugin "{DUPLICATE_PLUGIN_NAME}" already registered as "PreFilterPlugin"'
    with pytest.raises(ConfigError) as ei:
        Framework({"plugins": {}, "pluginConfig": [{"name": "x"}, {"name": "x"}]}, registry())
    assert ei.value.detail == "repeated config for plugin x"


def _all(name: str, score_weight: int = 1, with_pre_score=True) -> Dict[str, List[Dict[str, Any]]]:
    """Every extension point TestPlugin implements, with only `name` enabled."""
    out = {k: [{"name": name}] for k in ("queueSort", "preFilter", "filter", "postFilter", "preScore",
                                          "reserve", "permit", "preBind", "bind", "postBind")}
    out["score"] = [{"name": name, "weight": score_weight}]
    if not with_pre_score:
        del out["preScore"]
    return out


def _n(*names: str) -> List[Dict[str, Any]]:
    return [{"name": n} for n in names]


def _w(*pairs) -> List[Dict[str, Any]]:
    return [{"name": n, "weight": w} for n, w in pairs]


def _tp_plus(pre_score, score) -> Dict[str, List[Dict[str, Any]]]:
    out = _all(TEST_PLUGIN)
    if pre_score is None:
        del out["preScore"]
    else:
        out["preScore"] = pre_score
    out["score"] = score
    return out


MULTI_POINT_CASES = [
    pytest.param({"multiPoint": {"enabled": [{"name": TEST_PLUGIN, "weight": 5}]}},
                 _all(TEST_PLUGIN, 5), None, id="plugin expansion"),
    pytest.param({"multiPoint": {"enabled": _n(TEST_PLUGIN)},
                  "preScore": {"disabled": _n(TEST_PLUGIN)}, "score": {"disabled": _n(TEST_PLUGIN)}},
                 {k: v for k, v in _all(TEST_PLUGIN).items() if k not in ("preScore", "score")}, None,
                 id="disable MultiPoint plugin at some extension points"),
    pytest.param({"multiPoint": {"enabled": _n(TEST_PLUGIN, SCORE_PLUGIN_1)}},
                 _tp_plus(_n(TEST_PLUGIN, SCORE_PLUGIN_1), _w((TEST_PLUGIN, 1), (SCORE_PLUGIN_1, 1))), None,
                 id="Multiple MultiPoint plugins"),
    pytest.param({"multiPoint": {"enabled": _n(TEST_PLUGIN, SCORE_PLUGIN_1)},
                  "preScore": {"disabled": _n("*")}},
                 _tp_plus(None, _w((TEST_PLUGIN, 1), (SCORE_PLUGIN_1, 1))), None,
                 id="disable MultiPoint extension"),
    pytest.param({"multiPoint": {"enabled": _n(SCORE_WITH_NORMALIZE_PLUGIN_1, TEST_PLUGIN, SCORE_PLUGIN_1)},
                  "score": {"enabled": _n(SCORE_PLUGIN_1, TEST_PLUGIN)}},
                 _tp_plus(_n(TEST_PLUGIN, SCORE_PLUGIN_1),
                          _w((SCORE_PLUGIN_1, 1), (TEST_PLUGIN, 1), (SCORE_WITH_NORMALIZE_PLUGIN_1, 1))), None,
                 id="Reorder MultiPoint plugins (specified extension takes precedence)"),
    pytest.param({"multiPoint": {"enabled": _n(TEST_PLUGIN, SCORE_PLUGIN_1)},
                  "score": {"enabled": _n(SCORE_WITH_NORMALIZE_PLUGIN_1, SCORE_PLUGIN_1, TEST_PLUGIN)}},
                 _tp_plus(_n(TEST_PLUGIN, SCORE_PLUGIN_1),
                          _w((SCORE_PLUGIN_1, 1), (TEST_PLUGIN, 1), (SCORE_WITH_NORMALIZE_PLUGIN_1, 1))), None,
                 id="Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)"),
    pytest.param({"multiPoint": {"enabled": _n(TEST_PLUGIN, SCORE_PLUGIN_1)},
                  "score": {"enabled": _w((SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3))}},
                 _tp_plus(_n(TEST_PLUGIN, SCORE_PLUGIN_1), _w((SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3))), None,
                 id="Override MultiPoint plugins weights"),
    pytest.param({"multiPoint": {"enabled": _n(QUEUE_SORT_PLUGIN, BIND_PLUGIN, SCORE_PLUGIN_1),
                                 "disabled": _n("*")}},
                 {"queueSort": _n(QUEUE_SORT_PLUGIN), "preScore": _n(SCORE_PLUGIN_1),
                  "score": _w((SCORE_PLUGIN_1, 1)), "bind": _n(BIND_PLUGIN)}, None,
                 id="disable and enable MultiPoint plugins with '*'"),
    pytest.param({"multiPoint": {"enabled": _n(BIND_PLUGIN, QUEUE_SORT_PLUGIN, SCORE_PLUGIN_1),
                                 "disabled": _n(SCORE_PLUGIN_1)}},
                 {"queueSort": _n(QUEUE_SORT_PLUGIN), "preScore": _n(SCORE_PLUGIN_1),
                  "score": _w((SCORE_PLUGIN_1, 1)), "bind": _n(BIND_PLUGIN)}, None,
                 id="disable and enable MultiPoint plugin by name"),
    pytest.param({"multiPoint": {"enabled": _n(TEST_PLUGIN, TEST_PLUGIN)}}, None, "already registered",
                 id="Expect 'already registered' error"),
    pytest.param({"multiPoint": {"enabled": _n(TEST_PLUGIN, SCORE_PLUGIN_1)},
                  "score": {"enabled": _w((SCORE_PLUGIN_1, 5), (SCORE_PLUGIN_2, 5), (TEST_PLUGIN, 3))}},
                 _tp_plus(_n(TEST_PLUGIN, SCORE_PLUGIN_1),
                          _w((SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3), (SCORE_PLUGIN_2, 5))), None,
                 id="Override MultiPoint plugins weights and avoid a plugin being loaded multiple times"),
]


@pytest.mark.parametrize("plugins,want_plugins,want_err", MULTI_POINT_CASES)
def test_new_framework_multi_point_expansion(plugins, want_plugins, want_err):
    if want_err:
        with pytest.raises(ConfigError) as ei:
            Framework({"plugins": plugins}, registry())
        assert want_err in str(ei.value)
        return
    fw = Framework({"plugins": plugins}, registry())
    assert fw.list_plugins() == want_plugins


def test_multi_point_already_registered_message():
    with pytest.raises(ConfigError) as ei:
        Framework({"plugins": {"multiPoint": {"enabled": _n(TEST_PLUGIN, TEST_PLUGIN)}}}, registry())
    # the first extension point expanded is PreFilter
    assert ei.value.detail == f'plugin "{TEST_PLUGIN}" already registered as "PreFilterPlugin"'


@pytest.mark.parametrize("plugins,want", [
    pytest.param({}, {"queueSort": _n(QUEUE_SORT_PLUGIN), "bind": _n(BIND_PLUGIN)}, id="Add empty plugin"),
    pytest.param({"score": {"enabled": [{"name": SCORE_PLUGIN_1, "weight": 3}, {"name": SCORE_WITH_NORMALIZE_PLUGIN_1}]}},
                 {"queueSort": _n(QUEUE_SORT_PLUGIN), "bind": _n(BIND_PLUGIN),
                  "score": _w((SCORE_PLUGIN_1, 3), (SCORE_WITH_NORMALIZE_PLUGIN_1, 1))},
                 id="Add multiple plugins"),
])
def test_list_plugins(plugins, want):
    assert new_fw(plugins).list_plugins() == want


def test_score_weights_default_to_one_and_score_entry_wins_over_multi_point():
    fw = new_fw({"multiPoint": {"enabled": [{"name": SCORE_PLUGIN_1, "weight": 7},
                                            {"name": SCORE_PLUGIN_2, "weight": 0}]},
                 "score": {"enabled": [{"name": SCORE_PLUGIN_1, "weight": 2}]}})
    assert fw.score_plugin_weight == {SCORE_PLUGIN_1: 2, SCORE_PLUGIN_2: 1}


def test_score_weights_overflow():
    big = MAX_TOTAL_SCORE // 100
    with pytest.raises(ConfigError, match="total score of Score plugins could overflow"):
        new_fw({"score": {"enabled": _w((SCORE_PLUGIN_1, big), (SCORE_PLUGIN_2, 1))}})
    new_fw({"score": {"enabled": _w((SCORE_PLUGIN_1, big))}})  # exactly fits


# ----------------------------------------------------------------------------------------------
# PreFilter
# ----------------------------------------------------------------------------------------------
def test_pre_filter_plugins_and_extensions_are_called():
    pf1, pf2 = TestPreFilterPlugin(), TestPreFilterWithExtensionsPlugin()
    fw = new_fw({"preFilter": {"enabled": _n(pf2.name, pf1.name)}},
                {pf1.name: instance(pf1), pf2.name: instance(pf2)}, snapshot=Snapshot())
    state = CycleState()
    fw.run_pre_filter_plugins(state, None)
    fw.run_pre_filter_extension_add_pod(state, None, None, None)
    fw.run_pre_filter_extension_remove_pod(state, None, None, None)
    assert (pf1.pre_filter_called, pf2.pre_filter_called, pf2.add_called, pf2.remove_called) == (1, 1, 1, 1)


RUN_PRE_FILTER_CASES = [
    pytest.param([tp("success1"), tp("success2")], None, set(), S, id="all PreFilter returned success"),
    pytest.param([tp("success"), tp("error", pre_filter_status=E)], None, set(), E,
                 id="one PreFilter plugin returned success, but another PreFilter plugin returned non-success"),
    pytest.param([tp("skip", pre_filter_status=SK), tp("error", pre_filter_status=E)], None, {"skip"}, E,
                 id="one PreFilter plugin returned skip, but another PreFilter plugin returned non-success"),
    pytest.param([tp("skip1", pre_filter_status=SK), tp("skip2", pre_filter_status=SK),
                  tp("skip3", pre_filter_status=SK)], None, {"skip1", "skip2", "skip3"}, S,
                 id="all PreFilter plugins returned skip"),
    pytest.param([tp("skip1", pre_filter_status=SK), tp("success1"), tp("skip2", pre_filter_status=SK),
                  tp("success2")], None, {"skip1", "skip2"}, S, id="some PreFilter plugins returned skip"),
    pytest.param([tp("unschedulable", pre_filter_status=U), tp("skip", pre_filter_status=SK)], None, {"skip"}, U,
                 id="one PreFilter plugin returned Unschedulable, but another PreFilter plugin should be executed"),
    pytest.param([tp("unresolvable", pre_filter_status=UU), tp("skip", pre_filter_status=SK)], None, set(), UU,
                 id="one PreFilter plugin returned UnschedulableAndUnresolvable, and all other plugins aren't executed"),
    pytest.param([tp("reject-all-nodes", pre_filter_result=PreFilterResult(set())), tp("skip", pre_filter_status=SK)],
                 PreFilterResult(set()), set(), UU,
                 id="all nodes are filtered out by prefilter result, but other plugins aren't executed"),
]


@pytest.mark.parametrize("plugins,want_result,want_skipped,want_code", RUN_PRE_FILTER_CASES)
def test_run_pre_filter_plugins(plugins, want_result, want_skipped, want_code):
    fw = fw_with("preFilter", plugins, snapshot=Snapshot())
    state = CycleState()
    result, status, _ = fw.run_pre_filter_plugins(state, None)
    assert result == want_result
    assert code(status) == want_code
    assert state.skip_filter_plugins == want_skipped


def test_run_pre_filter_plugins_messages():
    fw = fw_with("preFilter", [tp("success"), tp("error", pre_filter_status=E)], snapshot=Snapshot())
    _, s, _ = fw.run_pre_filter_plugins(CycleState(), None)
    assert_status(err(f'running PreFilter plugin "error": {INJECT_REASON}'), s)
    assert s.plugin == "error"
    # Unschedulable keeps running the others and returns the last Unschedulable status, with its plugin
    fw = fw_with("preFilter", [tp("u1", pre_filter_status=U), tp("ok"), tp("u2", pre_filter_status=U)],
                 snapshot=Snapshot())
    _, s, _ = fw.run_pre_filter_plugins(CycleState(), None)
    assert_status(st(U, INJECT_REASON, plugin="u2"), s)
    fw = fw_with("preFilter", [tp("uu", pre_filter_status=UU)], snapshot=Snapshot())
    _, s, _ = fw.run_pre_filter_plugins(CycleState(), None)
    assert_status(st(UU, INJECT_REASON, plugin="uu"), s)


def test_run_pre_filter_plugins_result_merging():
    """PreFilterResult.Merge and the message when the intersection is empty (framework.go)."""
    def run(*plugins):
        fw = fw_with("preFilter", list(plugins), snapshot=Snapshot())
        return fw.run_pre_filter_plugins(CycleState(), None)

    result, s, with_nodes = run(tp("a", pre_filter_result=PreFilterResult({"n1", "n2"})), tp("all"),
                                tp("b", pre_filter_result=PreFilterResult({"n2", "n3"})))
    assert (result, code(s), with_nodes) == (PreFilterResult({"n2"}), S, {"a", "b"})

    result, s, with_nodes = run(tp("b", pre_filter_result=PreFilterResult({"n1"})),
                                tp("a", pre_filter_result=PreFilterResult({"n2"})), tp("never", pre_filter_status=E))
    assert result == PreFilterResult(set())
    assert_status(st(UU, "node(s) didn't satisfy plugin(s) [a b] simultaneously"), s)
    assert with_nodes == {"a", "b"}

    result, s, with_nodes = run(tp("all"), tp("only", pre_filter_result=PreFilterResult(set())))
    assert_status(st(UU, "node(s) didn't satisfy plugin only"), s)
    assert with_nodes == {"only"}

    # a Skip status ignores the plugin's result
    result, s, _ = run(tp("s", pre_filter_status=SK, pre_filter_result=PreFilterResult(set())))
    assert (result is None or result.all_nodes(), code(s)) == (True, S)


@pytest.mark.parametrize("plugins,skipped,want_code", [
    pytest.param([tp("success1"), tp("success2")], set(), S,
                 id="no plugins are skipped and all RemovePod() returned success"),
    pytest.param([tp("success1"), tp("error1", pre_filter_remove_pod_status=E)], set(), E,
                 id="one RemovePod() returned error"),
    pytest.param([tp("success1"), tp("skipped", pre_filter_remove_pod_status=E)], {"skipped"}, S,
                 id="one RemovePod() is skipped"),
])
def test_run_pre_filter_extension_remove_pod(plugins, skipped, want_code):
    fw = fw_with("preFilter", plugins)
    state = CycleState()
    state.skip_filter_plugins = skipped
    s = fw.run_pre_filter_extension_remove_pod(state, None, None, None)
    assert code(s) == want_code
    if want_code == E:
        assert_status(err(f'running RemovePod on PreFilter plugin "error1": {INJECT_REASON}'), s)


@pytest.mark.parametrize("plugins,skipped,want_code", [
    pytest.param([tp("success1"), tp("success2")], set(), S,
                 id="no plugins are skipped and all AddPod() returned success"),
    pytest.param([tp("success1"), tp("error1", pre_filter_add_pod_status=E)], set(), E,
                 id="one AddPod() returned error"),
    pytest.param([tp("success1"), tp("skipped", pre_filter_add_pod_status=E)], {"skipped"}, S,
                 id="one AddPod() is skipped"),
])
def test_run_pre_filter_extension_add_pod(plugins, skipped, want_code):
    fw = fw_with("preFilter", plugins)
    state = CycleState()
    state.skip_filter_plugins = skipped
    s = fw.run_pre_filter_extension_add_pod(state, None, None, NodeInfo())
    assert code(s) == want_code
    if want_code == E:
        assert_status(err(f'running AddPod on PreFilter plugin "error1": {INJECT_REASON}'), s)


def test_pre_filter_extension_unschedulable_is_an_error():
    fw = fw_with("preFilter", [tp("u", pre_filter_add_pod_status=U, pre_filter_remove_pod_status=UU)])
    assert_status(err(f'running AddPod on PreFilter plugin "u": {INJECT_REASON}'),
                  fw.run_pre_filter_extension_add_pod(CycleState(), None, None, NodeInfo()))
    assert_status(err(f'running RemovePod on PreFilter plugin "u": {INJECT_REASON}'),
                  fw.run_pre_filter_extension_remove_pod(CycleState(), None, None, NodeInfo()))


# ----------------------------------------------------------------------------------------------
# Filter / PostFilter / FilterWithNominatedPods
# ----------------------------------------------------------------------------------------------
def _filter_err(name: str) -> Status:
    return err(f'running "{name}" filter plugin: {INJECT_FILTER_REASON}').with_plugin(name)


FILTER_CASES = [
    pytest.param([tp("TestPlugin", filter_status=S)], set(), None, id="SuccessFilter"),
    pytest.param([tp("TestPlugin", filter_status=E)], set(), _filter_err("TestPlugin"), id="ErrorFilter"),
    pytest.param([tp("TestPlugin", filter_status=U)], set(), st(U, INJECT_FILTER_REASON, plugin="TestPlugin"),
                 id="UnschedulableFilter"),
    pytest.param([tp("TestPlugin", filter_status=UU)], set(), st(UU, INJECT_FILTER_REASON, plugin="TestPlugin"),
                 id="UnschedulableAndUnresolvableFilter"),
    pytest.param([tp("TestPlugin1", filter_status=E), tp("TestPlugin2", filter_status=E)], set(),
                 _filter_err("TestPlugin1"), id="ErrorAndErrorFilters"),
    pytest.param([tp("TestPlugin1", filter_status=U), tp("TestPlugin2", filter_status=U)], set(),
                 st(U, INJECT_FILTER_REASON, plugin="TestPlugin1"), id="UnschedulableAndUnschedulableFilters"),
    pytest.param([tp("TestPlugin1", filter_status=UU), tp("TestPlugin2", filter_status=U)], set(),
                 st(UU, INJECT_FILTER_REASON, plugin="TestPlugin1"),
                 id="UnschedulableAndUnschedulableAndUnresolvableFilters"),
    pytest.param([tp("TestPlugin1", filter_status=S), tp("TestPlugin2", filter_status=S)], set(), None,
                 id="SuccessAndSuccessFilters"),
    pytest.param([tp("TestPlugin1", filter_status=S), tp("TestPlugin2", filter_status=E)], {"TestPlugin2"}, None,
                 id="SuccessAndSkipFilters"),
    pytest.param([tp("TestPlugin1", filter_status=E), tp("TestPlugin2", filter_status=S)], set(),
                 _filter_err("TestPlugin1"), id="ErrorAndSuccessFilters"),
    pytest.param([tp("TestPlugin1", filter_status=S), tp("TestPlugin2", filter_status=E)], set(),
                 _filter_err("TestPlugin2"), id="SuccessAndErrorFilters"),
    pytest.param([tp("TestPlugin1", filter_status=S), tp("TestPlugin2", filter_status=U)], set(),
                 st(U, INJECT_FILTER_REASON, plugin="TestPlugin2"), id="SuccessAndUnschedulableFilters"),
]


@pytest.mark.parametrize("plugins,skipped,want", FILTER_CASES)
def test_filter_plugins(plugins, skipped, want):
    fw = fw_with("filter", plugins)
    state = CycleState()
    state.skip_filter_plugins = skipped
    got = fw.run_filter_plugins(state, POD, None)
    assert_status(want, got)
    if want is not None and want.code == E:
        assert got.plugin == want.plugin  # the Error status names the plugin too


def test_filter_plugin_that_raises_is_an_error_naming_it():
    from harness.framework import hookimpl

    class Raises(TestPlugin):
        @hookimpl
        def filter(self, state, pod, node_info):
            raise ValueError("boom")

    fw = fw_with("filter", [Raises("R")])
    got = fw.run_filter_plugins(CycleState(), POD, None)
    assert got.code == E and got.plugin == "R"
    assert str(got.as_error()).startswith('running "R" filter plugin: ')


POST_FILTER_CASES = [
    pytest.param([tp("TestPlugin", post_filter_status=S)], st(S, INJECT_REASON),
                 id="a single plugin makes a Pod schedulable"),
    pytest.param([tp("TestPlugin1", post_filter_status=U), tp("TestPlugin2", post_filter_status=S)],
                 st(S, INJECT_REASON),
                 id="plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod schedulable"),
    pytest.param([tp("TestPlugin1", post_filter_status=S), tp("TestPlugin2", post_filter_status=U)],
                 st(S, INJECT_REASON),
                 id="plugin1 makes a Pod schedulable, followed by plugin2 which cannot make the Pod schedulable"),
    pytest.param([tp("TestPlugin1", post_filter_status=E), tp("TestPlugin2", post_filter_status=S)],
                 err(INJECT_REASON), id="plugin1 errors, followed by plugin2 which makes the Pod schedulable"),
    pytest.param([tp("TestPlugin1", post_filter_status=U), tp("TestPlugin2", post_filter_status=UU)],
                 st(UU, INJECT_REASON, plugin="TestPlugin2"),
                 id="plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod unresolvable"),
    pytest.param([tp("TestPlugin1", post_filter_status=U), tp("TestPlugin2", post_filter_status=U)],
                 st(U, INJECT_REASON, INJECT_REASON, plugin="TestPlugin1"),
                 id="both plugins failed to make a Pod schedulable"),
    pytest.param([], st(U), id="no PostFilter plugin"),
]


@pytest.mark.parametrize("plugins,want", POST_FILTER_CASES)
def test_post_filter_plugins(plugins, want):
    fw = fw_with("postFilter", plugins)
    _, got = fw.run_post_filter_plugins(None, POD, None)
    assert_status(want, got)
    if want.code == E:
        assert got.plugin == "TestPlugin1"
    if want.code == U:
        assert got.reasons == want.reasons


LOW = make_pod("low", uid="low", priority=0)
HIGH = make_pod("high", uid="high", priority=1000)

NOMINATED_CASES = [
    pytest.param(None, None, LOW, None, None, id="node has no nominated pod"),
    pytest.param(tp("TestPlugin1", pre_filter_add_pod_status=S), tp("TestPlugin2", filter_status=S), LOW, HIGH,
                 None, id="node has a high-priority nominated pod and all filters succeed"),
    pytest.param(tp("TestPlugin1", pre_filter_add_pod_status=E), None, LOW, HIGH,
                 err(f'running AddPod on PreFilter plugin "TestPlugin1": {INJECT_REASON}'),
                 id="node has a high-priority nominated pod and pre filters fail"),
    pytest.param(tp("TestPlugin1", pre_filter_add_pod_status=S), tp("TestPlugin2", filter_status=E), LOW, HIGH,
                 _filter_err("TestPlugin2"), id="node has a high-priority nominated pod and filters fail"),
    pytest.param(tp("TestPlugin1", pre_filter_add_pod_status=U), tp("TestPlugin2", filter_status=S), HIGH, LOW,
                 None, id="node has a low-priority nominated pod and pre filters return unschedulable"),
]


@pytest.mark.parametrize("pre_filter,filt,pod,nominated,want", NOMINATED_CASES)
def test_filter_plugins_with_nominated_pods(pre_filter, filt, pod, nominated, want):
    reg: Dict[str, Any] = {}
    plugins: Dict[str, Any] = {}
    if pre_filter is not None:
        reg[pre_filter.name] = instance(pre_filter)
        plugins["preFilter"] = {"enabled": _n(pre_filter.name)}
    if filt is not None:
        reg[filt.name] = instance(filt)
        plugins["filter"] = {"enabled": _n(filt.name)}
    nominator = Nominator()
    if nominated is not None:
        nominator.add(PodInfo(nominated), NODE_NAME)
    fw = new_fw(plugins, reg, nominator=nominator)
    ni = NodeInfo(POD)
    ni.set_node(make_node(NODE_NAME))
    got = fw.run_filter_plugins_with_nominated_pods(CycleState(), pod, ni)
    assert_status(want, got)


class _CountingFilter(TestPlugin):
    """Filter: fails while the node holds more than `limit` pods; records each call's pod count."""

    def __init__(self, name: str, limit: int):
        super().__init__(name)
        self.limit = limit
        self.seen: List[int] = []


def _counting_filter_hook(self, state, pod, node_info):
    self.seen.append(len(node_info.pods))
    if len(node_info.pods) > self.limit:
        return Status(U, "too many pods")
    return None


def test_filter_with_nominated_pods_runs_twice_and_does_not_mutate_the_node_info():
    from harness.framework import hookimpl
    _CountingFilter.filter = hookimpl(_counting_filter_hook)
    f = _CountingFilter("count", limit=5)
    nominator = Nominator()
    nominator.add(PodInfo(make_pod("n-high", uid="n-high", priority=1000)), NODE_NAME)
    nominator.add(PodInfo(make_pod("n-low", uid="n-low", priority=-1)), NODE_NAME)
    fw = new_fw({"filter": {"enabled": _n("count")}}, {"count": instance(f)}, nominator=nominator)
    ni = NodeInfo(POD)
    ni.set_node(make_node(NODE_NAME))
    got = fw.run_filter_plugins_with_nominated_pods(CycleState(), LOW, ni)
    assert got is None or got.is_success()
    # first pass with the equal-or-higher priority nominated pod, second pass without it
    assert f.seen == [2, 1]
    assert len(ni.pods) == 1
    # the first pass failing stops there
    f2 = _CountingFilter("count", limit=1)
    fw = new_fw({"filter": {"enabled": _n("count")}}, {"count": instance(f2)}, nominator=nominator)
    got = fw.run_filter_plugins_with_nominated_pods(CycleState(), LOW, ni)
    assert_status(st(U, "too many pods", plugin="count"), got)
    assert f2.seen == [2]
    # the pod itself is never counted as its own nominated pod
    f3 = _CountingFilter("count", limit=5)
    fw = new_fw({"filter": {"enabled": _n("count")}}, {"count": instance(f3)}, nominator=nominator)
    fw.run_filter_plugins_with_nominated_pods(CycleState(), make_pod("n-high", uid="n-high", priority=1000), ni)
    assert f3.seen == [1]


# ----------------------------------------------------------------------------------------------
# PreScore / Score
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("plugins,want_skipped,want_code", [
    pytest.param([tp("success1"), tp("success2")], set(), S, id="all PreScorePlugins returned success"),
    pytest.param([tp("success"), tp("error", pre_score_status=E)], set(), E,
                 id="one PreScore plugin returned success, but another PreScore plugin returned non-success"),
    pytest.param([tp("skip", pre_score_status=SK), tp("error", pre_score_status=E)], {"skip"}, E,
                 id="one PreScore plugin returned skip, but another PreScore plugin returned non-success"),
    pytest.param([tp("skip1", pre_score_status=SK), tp("skip2", pre_score_status=SK),
                  tp("skip3", pre_score_status=SK)], {"skip1", "skip2", "skip3"}, S,
                 id="all PreScore plugins returned skip"),
    pytest.param([tp("skip1", pre_score_status=SK), tp("success1"), tp("skip2", pre_score_status=SK),
                  tp("success2")], {"skip1", "skip2"}, S, id="some PreScore plugins returned skip"),
])
def test_run_pre_score_plugins(plugins, want_skipped, want_code):
    fw = fw_with("preScore", plugins)
    state = CycleState()
    s = fw.run_pre_score_plugins(state, None, None)
    assert code(s) == want_code
    assert state.skip_score_plugins == want_skipped
    if want_code == E:
        assert_status(err(f'running PreScore plugin "error": {INJECT_REASON}'), s)


def test_pre_score_unschedulable_is_an_error():
    fw = fw_with("preScore", [tp("u", pre_score_status=U)])
    assert_status(err(f'running PreScore plugin "u": {INJECT_REASON}'), fw.run_pre_score_plugins(CycleState(), None, None))


def _nps(*per_plugin) -> List[NodePluginScores]:
    scores = list(per_plugin)
    return [NodePluginScores(n, list(scores), sum(s for _, s in scores)) for n in NODES]


RUN_SCORE_CASES = [
    pytest.param(score_config(), [], set(), _nps(), None, id="no Score plugins"),
    pytest.param(score_config(SCORE_PLUGIN_1), [{"name": SCORE_PLUGIN_1, "args": {"scoreRes": 1}}], set(),
                 _nps((SCORE_PLUGIN_1, 1)), None, id="single Score plugin"),
    pytest.param(score_config(SCORE_WITH_NORMALIZE_PLUGIN_1),
                 [{"name": SCORE_WITH_NORMALIZE_PLUGIN_1, "args": {"scoreRes": 10, "normalizeRes": 5}}], set(),
                 _nps((SCORE_WITH_NORMALIZE_PLUGIN_1, 5)), None, id="single ScoreWithNormalize plugin"),
    pytest.param(score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_PLUGIN_1, SCORE_WITH_NORMALIZE_PLUGIN_2),
                 [{"name": SCORE_PLUGIN_1, "args": {"scoreRes": 1}},
                  {"name": SCORE_WITH_NORMALIZE_PLUGIN_1, "args": {"scoreRes": 3, "normalizeRes": 4}},
                  {"name": SCORE_WITH_NORMALIZE_PLUGIN_2, "args": {"scoreRes": 4, "normalizeRes": 5}}], set(),
                 _nps((SCORE_PLUGIN_1, 1), (SCORE_WITH_NORMALIZE_PLUGIN_1, 4), (SCORE_WITH_NORMALIZE_PLUGIN_2, 10)),
                 None, id="3 Score plugins, 2 NormalizeScore plugins"),
    pytest.param(score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_PLUGIN_1),
                 [{"name": SCORE_WITH_NORMALIZE_PLUGIN_1, "args": {"scoreStatus": 1}}], set(), None,
                 f'running Score plugins: plugin "{SCORE_WITH_NORMALIZE_PLUGIN_1}" failed with: injecting failure.',
                 id="score fails"),
    pytest.param(score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_PLUGIN_1),
                 [{"name": SCORE_WITH_NORMALIZE_PLUGIN_1, "args": {"normalizeStatus": 1}}], set(), None,
                 f'running Normalize on Score plugins: plugin "{SCORE_WITH_NORMALIZE_PLUGIN_1}" failed with: '
                 'injecting failure.', id="normalize fails"),
    pytest.param(score_config(SCORE_PLUGIN_1), [{"name": SCORE_PLUGIN_1, "args": {"scoreRes": 101}}], set(), None,
                 f'applying score defaultWeights on Score plugins: plugin "{SCORE_PLUGIN_1}" returns an invalid score '
                 '101, it should in the range of [0, 100] after normalizing',
                 id="Score plugin return score greater than MaxNodeScore"),
    pytest.param(score_config(SCORE_PLUGIN_1), [{"name": SCORE_PLUGIN_1, "args": {"scoreRes": -1}}], set(), None,
                 f'applying score defaultWeights on Score plugins: plugin "{SCORE_PLUGIN_1}" returns an invalid score '
                 '-1, it should in the range of [0, 100] after normalizing',
                 id="Score plugin return score less than MinNodeScore"),
    pytest.param(score_config(SCORE_WITH_NORMALIZE_PLUGIN_1),
                 [{"name": SCORE_WITH_NORMALIZE_PLUGIN_1, "args": {"normalizeRes": 101}}], set(), None,
                 f'applying score defaultWeights on Score plugins: plugin "{SCORE_WITH_NORMALIZE_PLUGIN_1}" returns an '
                 'invalid score 101, it should in the range of [0, 100] after normalizing',
                 id="ScoreWithNormalize plugin return score greater than MaxNodeScore"),
    pytest.param(score_config(SCORE_WITH_NORMALIZE_PLUGIN_1),
                 [{"name": SCORE_WITH_NORMALIZE_PLUGIN_1, "args": {"normalizeRes": -1}}], set(), None,
                 f'applying score defaultWeights on Score plugins: plugin "{SCORE_WITH_NORMALIZE_PLUGIN_1}" returns an '
                 'invalid score -1, it should in the range of [0, 100] after normalizing',
                 id="ScoreWithNormalize plugin return score less than MinNodeScore"),
    pytest.param({"multiPoint": {"enabled": _n(SCORE_PLUGIN_1)}, "score": {"enabled": _w((SCORE_PLUGIN_1, 3))}},
                 [{"name": SCORE_PLUGIN_1, "args": {"scoreRes": 1}}], set(), _nps((SCORE_PLUGIN_1, 3)), None,
                 id="single Score plugin with MultiPointExpansion"),
    pytest.param(score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_PLUGIN_1),
                 [{"name": SCORE_PLUGIN_1, "args": {"scoreRes": 1}},
                  {"name": SCORE_WITH_NORMALIZE_PLUGIN_1, "args": {"scoreStatus": 1}}],
                 {SCORE_WITH_NORMALIZE_PLUGIN_1}, _nps((SCORE_PLUGIN_1, 1)), None,
                 id="one success plugin, one skip plugin"),
    pytest.param(score_config(SCORE_PLUGIN_1), [{"name": SCORE_PLUGIN_1, "args": {"scoreStatus": 1}}],
                 {SCORE_PLUGIN_1}, _nps(), None, id="all plugins are skipped in prescore"),
    pytest.param(score_config(SCORE_PLUGIN_1), [], {SCORE_PLUGIN_1, "score-plugin-unknown"}, _nps(), None,
                 id="skipped prescore plugin number greater than the number of score plugins"),
]


@pytest.mark.parametrize("plugins,plugin_configs,skipped,want,want_err", RUN_SCORE_CASES)
def test_run_score_plugins(plugins, plugin_configs, skipped, want, want_err):
    fw = new_fw(plugins, plugin_config=plugin_configs)
    state = CycleState()
    state.skip_score_plugins = set(skipped)
    res, status = fw.run_score_plugins(state, POD, build_node_infos(*NODES))
    if want_err:
        assert status is not None and status.code == E
        assert str(status.as_error()) == want_err
        return
    assert status is None or status.is_success()
    assert res == want


def test_run_score_plugins_detail_and_weights():
    """weight 2 applies after NormalizeScore; `detail` records raw and normalized scores."""
    fw = new_fw(score_config(SCORE_WITH_NORMALIZE_PLUGIN_2),
                plugin_config=[{"name": SCORE_WITH_NORMALIZE_PLUGIN_2, "args": {"scoreRes": 300, "normalizeRes": 50}}])
    detail: Dict[str, Any] = {}
    res, status = fw.run_score_plugins(CycleState(), POD, build_node_infos(*NODES), detail)
    assert status is None
    assert res == _nps((SCORE_WITH_NORMALIZE_PLUGIN_2, 100))
    raw, norm, weight = detail[SCORE_WITH_NORMALIZE_PLUGIN_2]
    assert [s.score for s in raw] == [300, 300] and [s.score for s in norm] == [50, 50] and weight == 2


# ----------------------------------------------------------------------------------------------
# Reserve / Unreserve / Permit
# ----------------------------------------------------------------------------------------------
def _reserve_err(name: str) -> Status:
    return err(f'running Reserve plugin "{name}": {INJECT_REASON}')


@pytest.mark.parametrize("plugins,want", [
    pytest.param([], None, id="NoReservePlugin"),
    pytest.param([tp("TestPlugin", reserve_status=S)], None, id="SuccessReservePlugins"),
    pytest.param([tp("TestPlugin", reserve_status=U)], st(U, INJECT_REASON, plugin="TestPlugin"),
                 id="UnschedulableReservePlugin"),
    pytest.param([tp("TestPlugin", reserve_status=E)], _reserve_err("TestPlugin"), id="ErrorReservePlugin"),
    pytest.param([tp("TestPlugin", reserve_status=UU)], st(UU, INJECT_REASON, plugin="TestPlugin"),
                 id="UnschedulableAndUnresolvableReservePlugin"),
    pytest.param([tp("TestPlugin", reserve_status=S), tp("TestPlugin 1", reserve_status=S)], None,
                 id="SuccessSuccessReservePlugins"),
    pytest.param([tp("TestPlugin", reserve_status=E), tp("TestPlugin 1", reserve_status=E)],
                 _reserve_err("TestPlugin"), id="ErrorErrorReservePlugins"),
    pytest.param([tp("TestPlugin", reserve_status=S), tp("TestPlugin 1", reserve_status=E)],
                 _reserve_err("TestPlugin 1"), id="SuccessErrorReservePlugins"),
    pytest.param([tp("TestPlugin", reserve_status=E), tp("TestPlugin 1", reserve_status=S)],
                 _reserve_err("TestPlugin"), id="ErrorSuccessReservePlugin"),
    pytest.param([tp("TestPlugin", reserve_status=U), tp("TestPlugin 1", reserve_status=S)],
                 st(U, INJECT_REASON, plugin="TestPlugin"), id="UnschedulableAndSuccessReservePlugin"),
])
def test_reserve_plugins(plugins, want):
    fw = fw_with("reserve", plugins)
    assert_status(want, fw.run_reserve_plugins_reserve(None, POD, ""))


def test_unreserve_runs_in_reverse_order_and_survives_a_raising_plugin():
    from harness.framework import hookimpl
    calls: List[str] = []

    class R(TestPlugin):
        @hookimpl
        def unreserve(self, state, pod, node_name):
            calls.append(self.name)
            if self.name == "b":
                raise RuntimeError("ignored")

    fw = fw_with("reserve", [R("a"), R("b"), R("c")])
    fw.run_reserve_plugins_unreserve(None, POD, "n")
    assert calls == ["c", "b", "a"]


def _permit_err(name: str) -> Status:
    return err(f'running Permit plugin "{name}": {INJECT_REASON}')


@pytest.mark.parametrize("plugins,want,want_wait", [
    pytest.param([], None, None, id="NilPermitPlugin"),
    pytest.param([tp("TestPlugin", permit_status=S)], None, None, id="SuccessPermitPlugin"),
    pytest.param([tp("TestPlugin", permit_status=U)], st(U, INJECT_REASON, plugin="TestPlugin"), None,
                 id="UnschedulablePermitPlugin"),
    pytest.param([tp("TestPlugin", permit_status=E)], _permit_err("TestPlugin"), None, id="ErrorPermitPlugin"),
    pytest.param([tp("TestPlugin", permit_status=UU)], st(UU, INJECT_REASON, plugin="TestPlugin"), None,
                 id="UnschedulableAndUnresolvablePermitPlugin"),
    pytest.param([tp("TestPlugin", permit_status=W), tp("TestPlugin2", permit_status=W, permit_timeout=1.0)],
                 st(W, 'one or more plugins asked to wait and no plugin rejected pod ""'),
                 {"TestPlugin": 0.0, "TestPlugin2": 1.0}, id="WaitPermitPlugin"),
    pytest.param([tp("TestPlugin", permit_status=S), tp("TestPlugin 1", permit_status=S)], None, None,
                 id="SuccessSuccessPermitPlugin"),
    pytest.param([tp("TestPlugin", permit_status=E), tp("TestPlugin 1", permit_status=E)],
                 _permit_err("TestPlugin"), None, id="ErrorAndErrorPlugins"),
    pytest.param([tp("TestPlugin", permit_status=W, permit_timeout=3600.0)],
                 st(W, 'one or more plugins asked to wait and no plugin rejected pod ""'),
                 {"TestPlugin": MAX_PERMIT_TIMEOUT}, id="wait timeout is capped at 15 minutes"),
    pytest.param([tp("TestPlugin", permit_status=W, permit_timeout=5.0), tp("TestPlugin 1", permit_status=U)],
                 st(U, INJECT_REASON, plugin="TestPlugin 1"), None, id="a rejection after a wait wins"),
])
def test_permit_plugins(plugins, want, want_wait):
    fw = fw_with("permit", plugins, waiting_pods={})
    got = fw.run_permit_plugins(None, POD, "")
    assert_status(want, got)
    if got is not None and got.code == E:
        assert got.plugin == plugins[0].name
    wp = fw.get_waiting_pod(POD.uid)
    if want_wait is None:
        assert wp is None and not fw.will_wait_on_permit(POD)
    else:
        assert wp.wait_time == want_wait and fw.will_wait_on_permit(POD)
        assert wp.get_pending_plugins() == sorted(want_wait)


def _waiting_fw():
    pod = make_pod("pod", uid="pod")
    fw = new_fw({"permit": {"enabled": [{"name": PERMIT_PLUGIN, "weight": 1}]}},
                {PERMIT_PLUGIN: instance(TestPermitPlugin())}, waiting_pods={})
    s = fw.run_permit_plugins(None, pod, "")
    assert code(s) == W
    return fw, pod


def test_wait_on_permit_reject():
    fw, pod = _waiting_fw()
    fw.get_waiting_pod(pod.uid).reject(PERMIT_PLUGIN, "reject message")
    wp = fw.get_waiting_pod(pod.uid)
    assert wp.done
    assert_status(st(U, "reject message", plugin=PERMIT_PLUGIN), wp.result)


def test_wait_on_permit_allow():
    fw, pod = _waiting_fw()
    fw.get_waiting_pod(pod.uid).allow(PERMIT_PLUGIN)
    wp = fw.get_waiting_pod(pod.uid)
    assert wp.done and wp.result is None


def test_wait_on_permit_timeout_message():
    """waiting_pods_map.go: `rejected due to timeout after waiting %v at plugin %v`."""
    fw, pod = _waiting_fw()
    wp = fw.get_waiting_pod(pod.uid)
    assert wp.next_deadline() == 10.0
    wp.expire(9.999)
    assert not wp.done
    wp.expire(10.0)
    assert_status(st(U, f"rejected due to timeout after waiting 10s at plugin {PERMIT_PLUGIN}", plugin=PERMIT_PLUGIN),
                  wp.result)
    wp.allow(PERMIT_PLUGIN)  # too late: the first signal wins
    assert wp.result is not None and wp.result.code == U


def test_reject_waiting_pod():
    fw, pod = _waiting_fw()
    assert fw.reject_waiting_pod(pod.uid)
    assert_status(st(U, "removed"), fw.get_waiting_pod(pod.uid).result)
    assert not fw.reject_waiting_pod("unknown")


# ----------------------------------------------------------------------------------------------
# binding cycle
# ----------------------------------------------------------------------------------------------
def _pre_bind_err(name: str) -> Status:
    return err(f'running PreBind plugin "{name}": {INJECT_REASON}')


@pytest.mark.parametrize("plugins,want", [
    pytest.param([], None, id="NoPreBindPlugin"),
    pytest.param([tp("TestPlugin", pre_bind_status=S)], None, id="SuccessPreBindPlugins"),
    pytest.param([tp("TestPlugin", pre_bind_status=U)], st(U, INJECT_REASON, plugin="TestPlugin"),
                 id="UnschedulablePreBindPlugin"),
    pytest.param([tp("TestPlugin", pre_bind_status=E)], _pre_bind_err("TestPlugin"), id="ErrorPreBindPlugin"),
    pytest.param([tp("TestPlugin", pre_bind_status=UU)], st(UU, INJECT_REASON, plugin="TestPlugin"),
                 id="UnschedulableAndUnresolvablePreBindPlugin"),
    pytest.param([tp("TestPlugin", pre_bind_status=S), tp("TestPlugin 1", pre_bind_status=E)],
                 _pre_bind_err("TestPlugin 1"), id="SuccessErrorPreBindPlugins"),
    pytest.param([tp("TestPlugin", pre_bind_status=E), tp("TestPlugin 1", pre_bind_status=S)],
                 _pre_bind_err("TestPlugin"), id="ErrorSuccessPreBindPlugin"),
    pytest.param([tp("TestPlugin", pre_bind_status=S), tp("TestPlugin 1", pre_bind_status=S)], None,
                 id="SuccessSuccessPreBindPlugin"),
    pytest.param([tp("TestPlugin", pre_bind_status=E), tp("TestPlugin 1", pre_bind_status=E)],
                 _pre_bind_err("TestPlugin"), id="ErrorAndErrorPlugins"),
    pytest.param([tp("TestPlugin", pre_bind_status=U), tp("TestPlugin 1", pre_bind_status=S)],
                 st(U, INJECT_REASON, plugin="TestPlugin"), id="UnschedulableAndSuccessPreBindPlugin"),
])
def test_pre_bind_plugins(plugins, want):
    fw = fw_with("preBind", plugins)
    assert_status(want, fw.run_pre_bind_plugins(CycleState(), POD, ""))


def test_pre_bind_skips_plugins_whose_pre_flight_skipped():
    fw = fw_with("preBind", [tp("skipped", pre_bind_pre_flight_status=SK, pre_bind_status=E),
                             tp("runs", pre_bind_status=U)])
    state = CycleState()
    assert fw.run_pre_bind_pre_flights(state, POD, "") is None
    assert state.skip_pre_bind_plugins == {"skipped"}
    assert_status(st(U, INJECT_REASON, plugin="runs"), fw.run_pre_bind_plugins(state, POD, ""))


@pytest.mark.parametrize("plugins,want", [
    pytest.param([], st(SK), id="Skip when there's no PreBind Plugin"),
    pytest.param([tp("TestPlugin1", pre_bind_pre_flight_status=SK), tp("TestPlugin2", pre_bind_pre_flight_status=S)],
                 None, id="Success when PreBindPreFlight returns Success"),
    pytest.param([tp("TestPlugin1", pre_bind_pre_flight_status=SK), tp("TestPlugin2", pre_bind_pre_flight_status=SK)],
                 st(SK), id="Skip when all PreBindPreFlight returns Skip"),
    pytest.param([tp("TestPlugin1", pre_bind_pre_flight_status=SK), tp("TestPlugin2", pre_bind_pre_flight_status=E)],
                 err(f'running PreBindPreFlight "TestPlugin2": {INJECT_REASON}'),
                 id="Error when PreBindPreFlight returns Error"),
    pytest.param([tp("TestPlugin", pre_bind_pre_flight_status=U)],
                 err('PreBindPreFlight TestPlugin returned "Unschedulable", which is unsupported. It is supposed to '
                     'return Success, Skip, or Error status'),
                 id="Error when PreBindPreFlight returns Unschedulable"),
])
def test_pre_bind_pre_flight_plugins(plugins, want):
    fw = fw_with("preBind", plugins)
    state = CycleState()
    got = fw.run_pre_bind_pre_flights(state, POD, "")
    assert_status(want, got)
    assert code(got) == code(want)


@pytest.mark.parametrize("injects,want", [
    pytest.param([S], S, id="simple success"),
    pytest.param([SK, E, S], E, id="error on second"),
    pytest.param([SK, SK, SK], SK, id="all skip"),
    pytest.param([SK, S, E], S, id="error on third, but not reached"),
    pytest.param([], S, id="no bind plugin, returns default binder"),
    pytest.param([U], U, id="invalid status"),
    pytest.param([E], E, id="simple error"),
    pytest.param([SK, S], S, id="success on second, returns success"),
    pytest.param([SK, UU], UU, id="invalid status, returns error"),
    pytest.param([S, E], S, id="error after success status, returns success"),
    pytest.param([E, S], E, id="success after error status, returns error"),
])
def test_run_bind_plugins(injects, want):
    plugins = [tp(f"bind-{i}", bind_status=c) for i, c in enumerate(injects)]
    fw = fw_with("bind", plugins)
    got = fw.run_bind_plugins(CycleState(), POD, "")
    assert code(got) == want
    if want == E:
        name = plugins[injects.index(E)].name
        assert_status(err(f'running Bind plugin "{name}": {INJECT_REASON}'), got)
    if want in (U, UU):
        assert got.plugin == plugins[injects.index(want)].name


def test_post_bind_runs_every_plugin():
    from harness.framework import hookimpl
    calls: List[str] = []

    class P(TestPlugin):
        @hookimpl
        def post_bind(self, state, pod, node_name):
            calls.append(self.name)

    fw = fw_with("postBind", [P("a"), P("b")])
    assert fw.run_post_bind_plugins(CycleState(), POD, "n") is None
    assert calls == ["a", "b"]


# ----------------------------------------------------------------------------------------------
# EnqueueExtensions (fillEnqueueExtensions) and time.Duration formatting
# ----------------------------------------------------------------------------------------------
def test_fill_enqueue_extensions():
    """Only PreEnqueue/PreFilter/Filter/Reserve/Permit plugins register events; one without
    EventsToRegister gets UnrollWildCardResource() (not the wildcard event)."""
    from harness.framework import hookimpl
    from harness.framework.types import ActionType, ClusterEvent, ClusterEventWithHint, EventResource

    class WithEvents(TestPlugin):
        @hookimpl
        def events_to_register(self):
            return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add))]

    fw = new_fw({"filter": {"enabled": _n("plain", "with-events")}, "score": {"enabled": _n(SCORE_PLUGIN_1)}},
                dict(registry(), plain=instance(TestPlugin("plain")), **{"with-events": instance(WithEvents("with-events"))}))
    ext = dict(fw.enqueue_extensions)
    assert set(ext) == {"plain", "with-events"}  # score-plugin-1 (PreScore/Score only) registers nothing
    assert [e.event for e in ext["with-events"]] == [ClusterEvent(EventResource.Node, ActionType.Add)]
    assert [(e.event.resource, e.event.action_type) for e in ext["plain"]] == [
        (r, ActionType.All) for r in (
            EventResource.Pod, EventResource.Node, EventResource.PersistentVolume,
            EventResource.PersistentVolumeClaim, EventResource.CSINode, EventResource.CSIDriver,
            EventResource.CSIStorageCapacity, EventResource.StorageClass, EventResource.ResourceClaim,
            EventResource.DeviceClass)]
    registered = [e.event for e in ext["plain"]]
    assert any(ev.match(ClusterEvent(EventResource.AssignedPod, ActionType.Delete)) for ev in registered)
    assert not any(ev.match(ClusterEvent(EventResource.ResourceSlice, ActionType.Add)) for ev in registered)
    assert not any(ev.match(ClusterEvent(EventResource.VolumeAttachment, ActionType.Delete)) for ev in registered)


@pytest.mark.parametrize("seconds,want", [
    (0, "0s"), (10, "10s"), (1.5, "1.5s"), (0.5, "500ms"), (0.0015, "1.5ms"), (0.000001, "1µs"),
    (90, "1m30s"), (900, "15m0s"), (3600, "1h0m0s"), (3661.5, "1h1m1.5s"),
])
def test_go_duration(seconds, want):
    from harness.framework.runtime import go_duration
    assert go_duration(seconds) == want


def test_pre_enqueue_plugins():
    from harness.framework import hookimpl

    class PreEnqueue(TestPlugin):
        @hookimpl
        def pre_enqueue(self, pod):
            return None

    assert new_fw({}).pre_enqueue_plugins == []
    fw = new_fw({"preEnqueue": {"enabled": _n("preEnqueue-plugin")}},
                {"preEnqueue-plugin": instance(PreEnqueue("preEnqueue-plugin"))})
    assert [p.name for p in fw.pre_enqueue_plugins] == ["preEnqueue-plugin"]
    assert fw.run_pre_enqueue_plugins(POD) is None
