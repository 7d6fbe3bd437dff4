"""Python equivalents of the fake plugins kube-scheduler's schedule_one_test.go uses
(pkg/scheduler/testing/framework/fake_plugins.go and the plugins defined in the test file).

The fixed plugins are registered through `schedharness_plugins`, so a case can name this module
in `plugins:`. The parameterised ones (upstream's NewFakeFilterPlugin(map), NewFakePreFilterPlugin
(name, result, status), ...) are built per test by the factory functions below, each returning a
new plugin class; a test adds it to a registry. Classes count their calls in class attributes
(upstream's NumFilterCalled lives on the plugin object; the framework builds one object per
profile, so a class-level counter is the same number here)."""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple

from harness.framework import Code, Plugin, PreFilterResult, Status, hookimpl

ERR_REASON_FAKE = "Nodes failed the fake plugin"  # tf.ErrReasonFake


# ---- filters -----------------------------------------------------------------------------------

class FalseFilter(Plugin):
    """FalseFilterPlugin: every node is Unschedulable."""

    name = "FalseFilter"

    @hookimpl
    def filter(self, state, pod, node_info):
        return Status(Code.Unschedulable, ERR_REASON_FAKE)


class TrueFilter(Plugin):
    """TrueFilterPlugin: every node fits."""

    name = "TrueFilter"

    @hookimpl
    def filter(self, state, pod, node_info):
        return None


class MatchFilter(Plugin):
    """MatchFilterPlugin: the node whose name is the pod's name fits."""

    name = "MatchFilter"

    @hookimpl
    def filter(self, state, pod, node_info):
        if pod.name == node_info.node.name:
            return None
        return Status(Code.Unschedulable, ERR_REASON_FAKE)


class NoPodsFilter(Plugin):
    """noPodsFilterPlugin (schedule_one_test.go): nodes without pods fit."""

    name = "NoPodsFilter"

    @hookimpl
    def filter(self, state, pod, node_info):
        if not node_info.pods:
            return None
        return Status(Code.Unschedulable, ERR_REASON_FAKE)


class FakeNodeSelector(Plugin):
    """fakeNodeSelector: only the node named in the args (`nodeName`) fits."""

    name = "FakeNodeSelector"

    @hookimpl
    def filter(self, state, pod, node_info):
        if node_info.node.name != (self.args or {}).get("nodeName"):
            return Status(Code.UnschedulableAndUnresolvable)
        return None


class _FakeFilterBase(Plugin):
    failed_node_return_code_map: Dict[str, Code] = {}
    num_filter_called = 0

    @hookimpl
    def filter(self, state, pod, node_info):
        type(self).num_filter_called += 1
        code = self.failed_node_return_code_map.get(node_info.node.name)
        if code is not None:
            return Status(code, f"injecting failure for pod {pod.name}")
        return None


def fake_filter(codes: Optional[Dict[str, Code]] = None, name: str = "FakeFilter") -> type:
    """NewFakeFilterPlugin(failedNodeReturnCodeMap): the listed nodes get that code with reason
    "injecting failure for pod <name>"; counts its Filter calls in `num_filter_called`."""
    return type(name, (_FakeFilterBase,), {"name": name, "num_filter_called": 0,
                                           "failed_node_return_code_map": dict(codes or {})})


FakeFilter = fake_filter()


class _FakePreFilterBase(Plugin):
    result_node_names: Optional[Iterable[str]] = None
    status: Optional[Status] = None

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        res = None if self.result_node_names is None else PreFilterResult(set(self.result_node_names))
        st = self.status
        return res, (Status(st.code, *st.reasons, err=st.err) if st is not None else None)


def fake_pre_filter(name: str, node_names: Optional[Iterable[str]] = None,
                    status: Optional[Status] = None) -> type:
    """NewFakePreFilterPlugin(name, result, status): PreFilter returns a PreFilterResult with
    `node_names` (None: all nodes) and `status`."""
    return type(name, (_FakePreFilterBase,), {
        "name": name, "status": status,
        "result_node_names": None if node_names is None else frozenset(node_names)})


def fake_pre_filter_and_filter(name: str, pre_filter_status: Optional[Status],
                               codes: Dict[str, Code]) -> type:
    """FakePreFilterAndFilterPlugin: a PreFilter returning `pre_filter_status` and a Filter like
    fake_filter(codes)."""
    return type(name, (_FakePreFilterBase, _FakeFilterBase), {
        "name": name, "status": pre_filter_status, "result_node_names": None,
        "num_filter_called": 0, "failed_node_return_code_map": dict(codes)})


# ---- scores ------------------------------------------------------------------------------------

class NumericMap(Plugin):
    """numericMapPlugin: the score is the node's name as an integer."""

    name = "NumericMap"

    @hookimpl
    def score(self, state, pod, node_info):
        try:
            return int(node_info.node.name), None
        except ValueError:
            return 0, Status(Code.Error, f"Error converting nodename to int: {node_info.node.name}")


class ReverseNumericMap(NumericMap):
    """reverseNumericMapPlugin: NumericMap normalised to max + min - score."""

    name = "ReverseNumericMap"

    @hookimpl
    def normalize_score(self, state, pod, scores):
        mx = max(float(s.score) for s in scores) if scores else 0.0
        mn = min(float(s.score) for s in scores) if scores else 0.0
        mx = max(mx, 0.0)  # upstream starts maxScore at 0
        for s in scores:
            s.score = int(mx + mn - float(s.score))
        return None


class TrueMap(Plugin):
    """trueMapPlugin: 1 everywhere; NormalizeScore checks the host names."""

    name = "TrueMap"

    @hookimpl
    def score(self, state, pod, node_info):
        return 1, None

    @hookimpl
    def normalize_score(self, state, pod, scores):
        for s in scores:
            if not s.name:
                return Status(Code.Error, "unexpected empty host name")
        return None


class FalseMap(Plugin):
    """falseMapPlugin: Score fails with errPrioritize."""

    name = "FalseMap"

    @hookimpl
    def score(self, state, pod, node_info):
        return 0, Status.error(RuntimeError("priority map encounters an error"))


class EqualPrioritizerPlugin(Plugin):
    """NewEqualPrioritizerPlugin: 1 everywhere."""

    name = "EqualPrioritizerPlugin"

    @hookimpl
    def score(self, state, pod, node_info):
        return 1, None


class Node2Prioritizer(Plugin):
    """NewNode2PrioritizerPlugin: 100 on node2, 10 elsewhere."""

    name = "Node2Prioritizer"

    @hookimpl
    def score(self, state, pod, node_info):
        return (100 if node_info.node.name == "node2" else 10), None


class _FakePreScoreAndScoreBase(Plugin):
    fixed_score = 0
    pre_score_status: Optional[Status] = None
    score_status: Optional[Status] = None

    @hookimpl
    def pre_score(self, state, pod, nodes):
        return self.pre_score_status

    @hookimpl
    def score(self, state, pod, node_info):
        return self.fixed_score, self.score_status


def fake_pre_score_and_score(name: str, score: int, pre_score_status: Optional[Status],
                             score_status: Optional[Status]) -> type:
    """NewFakePreScoreAndScorePlugin(name, score, preScoreStatus, scoreStatus)."""
    return type(name, (_FakePreScoreAndScoreBase,), {
        "name": name, "fixed_score": score, "pre_score_status": pre_score_status,
        "score_status": score_status})


# ---- reserve, permit, prebind, bind ------------------------------------------------------------

class _FakeReserveBase(Plugin):
    reserve_status: Optional[Status] = None
    unreserved: List[Tuple[str, str]] = []

    @hookimpl
    def reserve(self, state, pod, node_name):
        return self.reserve_status

    @hookimpl
    def unreserve(self, state, pod, node_name):
        type(self).unreserved.append((pod.name, node_name))


def fake_reserve(status: Optional[Status], name: str = "FakeReserve") -> type:
    """NewFakeReservePlugin(status); records Unreserve calls in `unreserved`."""
    return type(name, (_FakeReserveBase,), {"name": name, "reserve_status": status, "unreserved": []})


class _FakePermitBase(Plugin):
    permit_status: Optional[Status] = None
    timeout = 0.0

    @hookimpl
    def permit(self, state, pod, node_name):
        return self.permit_status, self.timeout


def fake_permit(status: Optional[Status], timeout: float = 60.0, name: str = "FakePermit") -> type:
    """NewFakePermitPlugin(status, timeout)."""
    return type(name, (_FakePermitBase,), {"name": name, "permit_status": status, "timeout": timeout})


class _FakePreBindBase(Plugin):
    pre_flight_status: Optional[Status] = None
    pre_bind_status: Optional[Status] = None
    pre_flight_calls = 0
    pre_bind_calls = 0

    @hookimpl
    def pre_bind_pre_flight(self, state, pod, node_name):
        type(self).pre_flight_calls += 1
        return self.pre_flight_status

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        type(self).pre_bind_calls += 1
        return self.pre_bind_status


def fake_pre_bind(pre_flight_status: Optional[Status], pre_bind_status: Optional[Status],
                  name: str = "FakePreBind") -> type:
    """NewFakePreBindPlugin(preBindPreFlightStatus, preBindStatus)."""
    return type(name, (_FakePreBindBase,), {
        "name": name, "pre_flight_status": pre_flight_status, "pre_bind_status": pre_bind_status,
        "pre_flight_calls": 0, "pre_bind_calls": 0})


class _FakeBinderBase(Plugin):
    bind_status: Optional[Status] = None

    @hookimpl
    def bind(self, state, pod, node_name):
        return self.bind_status


def fake_binder(status: Optional[Status], name: str = "FakeBinder") -> type:
    """A Bind plugin returning `status` (upstream injects the error into the fake clientset the
    DefaultBinder calls; the harness's DefaultBinder cannot fail, so a plugin stands in)."""
    return type(name, (_FakeBinderBase,), {"name": name, "bind_status": status})


FIXED_PLUGINS = [FalseFilter, TrueFilter, MatchFilter, NoPodsFilter, FakeNodeSelector, FakeFilter,
                 NumericMap, ReverseNumericMap, TrueMap, FalseMap, EqualPrioritizerPlugin,
                 Node2Prioritizer]


@hookimpl
def schedharness_plugins():
    return list(FIXED_PLUGINS)
