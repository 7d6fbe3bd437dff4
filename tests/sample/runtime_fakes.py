"""Fake plugins for the framework runtime tests (tests/framework/test_runtime_upstream.py), modelled
on the fakes of kubernetes pkg/scheduler/framework/runtime/framework_test.go: plugins whose
statuses and scores are injected, so that the tests exercise the framework's loops only."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from harness.framework import Code, Plugin, Status, hookimpl
from harness.framework.types import PreFilterResult

# Plugin names used by upstream's tests.
QUEUE_SORT_PLUGIN = "no-op-queue-sort-plugin"
SCORE_WITH_NORMALIZE_PLUGIN_1 = "score-with-normalize-plugin-1"
SCORE_WITH_NORMALIZE_PLUGIN_2 = "score-with-normalize-plugin-2"
SCORE_PLUGIN_1 = "score-plugin-1"
SCORE_PLUGIN_2 = "score-plugin-2"
PLUGIN_NOT_IMPLEMENTING_SCORE = "plugin-not-implementing-score"
PRE_FILTER_PLUGIN_NAME = "prefilter-plugin"
PRE_FILTER_WITH_EXTENSIONS_PLUGIN_NAME = "prefilter-with-extensions-plugin"
DUPLICATE_PLUGIN_NAME = "duplicate-plugin"
TEST_PLUGIN = "test-plugin"
PERMIT_PLUGIN = "permit-plugin"
BIND_PLUGIN = "bind-plugin"

INJECT_REASON = "injected status"
INJECT_FILTER_REASON = "injected filter status"


class Injected:
    """injectedResult: what each extension point of a fake returns. Codes are ints (Code
    values); the args of a pluginConfig entry use the same camelCase keys as upstream's JSON."""

    _KEYS = {
        "scoreRes": "score_res", "normalizeRes": "normalize_res", "scoreStatus": "score_status",
        "normalizeStatus": "normalize_status", "preFilterStatus": "pre_filter_status",
        "preFilterAddPodStatus": "pre_filter_add_pod_status",
        "preFilterRemovePodStatus": "pre_filter_remove_pod_status", "filterStatus": "filter_status",
        "postFilterStatus": "post_filter_status", "preScoreStatus": "pre_score_status",
        "reserveStatus": "reserve_status", "preBindPreFlightStatus": "pre_bind_pre_flight_status",
        "preBindStatus": "pre_bind_status", "bindStatus": "bind_status",
        "permitStatus": "permit_status", "permitTimeout": "permit_timeout",
    }

    def __init__(self, pre_filter_result: Optional[PreFilterResult] = None, **kw: Any):
        for attr in self._KEYS.values():
            setattr(self, attr, 0)
        self.pre_filter_result = pre_filter_result
        for k, v in kw.items():
            if k not in self._KEYS.values():
                raise TypeError(f"unknown injected result {k}")
            setattr(self, k, v)

    @classmethod
    def from_args(cls, args: Optional[Dict[str, Any]]) -> "Injected":
        """DecodeInto(args, &injectedResult)."""
        return cls(**{cls._KEYS[k]: v for k, v in (args or {}).items()})


def _status(code: int, reason: str) -> Status:
    """framework.NewStatus(Code(code), reason): always a Status, even for Success."""
    return Status(Code(code), reason)


def set_score_res(inj: Injected):
    if inj.score_status != Code.Success:
        return 0, _status(inj.score_status, "injecting failure.")
    return inj.score_res, None


def inject_normalize_res(inj: Injected, scores) -> Optional[Status]:
    if inj.normalize_status != Code.Success:
        return _status(inj.normalize_status, "injecting failure.")
    for s in scores:
        s.score = inj.normalize_res
    return None


class TestScoreWithNormalizePlugin(Plugin):
    """Score and NormalizeScore."""

    __test__ = False

    def __init__(self, name: str, inj: Injected):
        super().__init__(None, None)
        self.name = name
        self.inj = inj

    @hookimpl
    def score(self, state, pod, node_info):
        return set_score_res(self.inj)

    @hookimpl
    def normalize_score(self, state, pod, scores):
        return inject_normalize_res(self.inj, scores)


class TestScorePlugin(Plugin):
    """PreScore and Score (no ScoreExtensions)."""

    __test__ = False

    def __init__(self, name: str, inj: Injected):
        super().__init__(None, None)
        self.name = name
        self.inj = inj

    @hookimpl
    def pre_score(self, state, pod, nodes):
        return _status(self.inj.pre_score_status, INJECT_REASON)

    @hookimpl
    def score(self, state, pod, node_info):
        return set_score_res(self.inj)


class PluginNotImplementingScore(Plugin):
    name = PLUGIN_NOT_IMPLEMENTING_SCORE


class TestPlugin(Plugin):
    """Implements every extension point but PreEnqueue (and NormalizeScore), returning the
    injected codes with the reason "injected status" ("injected filter status" for Filter)."""

    __test__ = False

    def __init__(self, name: str = TEST_PLUGIN, inj: Optional[Injected] = None):
        super().__init__(None, None)
        self.name = name
        self.inj = inj or Injected()

    @hookimpl
    def less(self, pod_info1, pod_info2):
        return False

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return self.inj.pre_filter_result, _status(self.inj.pre_filter_status, INJECT_REASON)

    @hookimpl
    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info):
        return _status(self.inj.pre_filter_add_pod_status, INJECT_REASON)

    @hookimpl
    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info):
        return _status(self.inj.pre_filter_remove_pod_status, INJECT_REASON)

    @hookimpl
    def filter(self, state, pod, node_info):
        return _status(self.inj.filter_status, INJECT_FILTER_REASON)

    @hookimpl
    def post_filter(self, state, pod, filtered_node_status_map):
        return None, _status(self.inj.post_filter_status, INJECT_REASON)

    @hookimpl
    def pre_score(self, state, pod, nodes):
        return _status(self.inj.pre_score_status, INJECT_REASON)

    @hookimpl
    def score(self, state, pod, node_info):
        return 0, _status(self.inj.score_status, INJECT_REASON)

    @hookimpl
    def reserve(self, state, pod, node_name):
        return _status(self.inj.reserve_status, INJECT_REASON)

    @hookimpl
    def unreserve(self, state, pod, node_name):
        return None

    @hookimpl
    def permit(self, state, pod, node_name):
        return _status(self.inj.permit_status, INJECT_REASON), self.inj.permit_timeout

    @hookimpl
    def pre_bind_pre_flight(self, state, pod, node_name):
        return _status(self.inj.pre_bind_pre_flight_status, INJECT_REASON)

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        return _status(self.inj.pre_bind_status, INJECT_REASON)

    @hookimpl
    def bind(self, state, pod, node_name):
        return _status(self.inj.bind_status, INJECT_REASON)

    @hookimpl
    def post_bind(self, state, pod, node_name):
        return None


class TestPreFilterPlugin(Plugin):
    """PreFilter only (no PreFilterExtensions); counts its calls."""

    __test__ = False
    name = PRE_FILTER_PLUGIN_NAME

    def __init__(self):
        super().__init__(None, None)
        self.pre_filter_called = 0

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        self.pre_filter_called += 1
        return None, None


class TestPreFilterWithExtensionsPlugin(Plugin):
    """PreFilter with AddPod/RemovePod; counts its calls."""

    __test__ = False
    name = PRE_FILTER_WITH_EXTENSIONS_PLUGIN_NAME

    def __init__(self):
        super().__init__(None, None)
        self.pre_filter_called = 0
        self.add_called = 0
        self.remove_called = 0

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        self.pre_filter_called += 1
        return None, None

    @hookimpl
    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info):
        self.add_called += 1
        return None

    @hookimpl
    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info):
        self.remove_called += 1
        return None


class TestDuplicatePlugin(Plugin):
    __test__ = False
    name = DUPLICATE_PLUGIN_NAME

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return None, None


class TestPermitPlugin(Plugin):
    """Permit: always Wait for 10s."""

    __test__ = False
    name = PERMIT_PLUGIN

    @hookimpl
    def permit(self, state, pod, node_name):
        return Status(Code.Wait), 10.0


class TestQueueSortPlugin(Plugin):
    __test__ = False
    name = QUEUE_SORT_PLUGIN

    @hookimpl
    def less(self, pod_info1, pod_info2):
        return False


class TestBindPlugin(Plugin):
    __test__ = False
    name = BIND_PLUGIN

    @hookimpl
    def bind(self, state, pod, node_name):
        return None


def instance(plugin: Any) -> Callable[[Any, Any], Any]:
    """A registry factory returning an already built plugin (upstream's `return p, nil`)."""
    return lambda args, handle: plugin


def _with_inj(cls, name: str):
    return lambda args, handle: cls(name, Injected.from_args(args))


def registry() -> Dict[str, Callable[[Any, Any], Any]]:
    """Upstream's package-level `registry`."""
    return {
        SCORE_WITH_NORMALIZE_PLUGIN_1: _with_inj(TestScoreWithNormalizePlugin, SCORE_WITH_NORMALIZE_PLUGIN_1),
        SCORE_WITH_NORMALIZE_PLUGIN_2: _with_inj(TestScoreWithNormalizePlugin, SCORE_WITH_NORMALIZE_PLUGIN_2),
        SCORE_PLUGIN_1: _with_inj(TestScorePlugin, SCORE_PLUGIN_1),
        SCORE_PLUGIN_2: _with_inj(TestScorePlugin, SCORE_PLUGIN_2),
        PLUGIN_NOT_IMPLEMENTING_SCORE: lambda args, handle: PluginNotImplementingScore(args, handle),
        DUPLICATE_PLUGIN_NAME: lambda args, handle: TestDuplicatePlugin(args, handle),
        TEST_PLUGIN: lambda args, handle: TestPlugin(TEST_PLUGIN),
        QUEUE_SORT_PLUGIN: lambda args, handle: TestQueueSortPlugin(args, handle),
        BIND_PLUGIN: lambda args, handle: TestBindPlugin(args, handle),
    }
