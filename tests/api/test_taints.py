"""Toleration.ToleratesTaint, TolerationsTolerateTaint and FindMatchingUntoleratedTaint
(k8s.io/api/core/v1 toleration_test.go and component-helpers helpers_test.go scenarios)."""

from __future__ import annotations

import pytest

from harness.api.taints import (compare_numeric_values, do_not_schedule_taints_filter,
                                find_matching_untolerated_taint, taint_to_string,
                                toleration_tolerates_taint, tolerations_tolerate_taint)

TAINT = {"key": "foo", "value": "bar", "effect": "NoSchedule"}


@pytest.mark.parametrize("toleration,taint,want", [
    # empty toleration key with Exists tolerates every taint
    ({"operator": "Exists"}, TAINT, True),
    ({"operator": "Exists", "effect": "NoSchedule"}, TAINT, True),
    ({"operator": "Exists", "effect": "NoExecute"}, TAINT, False),
    # empty effect matches every effect
    ({"key": "foo", "operator": "Equal", "value": "bar"}, TAINT, True),
    ({"key": "foo", "operator": "Exists"}, TAINT, True),
    ({"key": "foo", "operator": "Exists", "value": "ignored"}, TAINT, True),
    # empty operator means Equal
    ({"key": "foo", "value": "bar", "effect": "NoSchedule"}, TAINT, True),
    ({"key": "foo", "value": "baz", "effect": "NoSchedule"}, TAINT, False),
    # different key
    ({"key": "other", "operator": "Exists"}, TAINT, False),
    # effect mismatch
    ({"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}, TAINT, False),
    # empty key with Equal compares the value against any key
    ({"operator": "Equal", "value": "bar"}, TAINT, True),
    ({"operator": "Equal", "value": "x"}, TAINT, False),
    # taint without value tolerated by Equal with empty value
    ({"key": "foo", "operator": "Equal"}, {"key": "foo", "effect": "NoSchedule"}, True),
    # unknown operator tolerates nothing (Gt/Lt do not exist for tolerations in v1.34)
    ({"key": "foo", "operator": "Gt", "value": "1"}, {"key": "foo", "value": "2", "effect": "NoSchedule"}, False),
    ({"key": "foo", "operator": "Bogus"}, TAINT, False),
])
def test_toleration_tolerates_taint(toleration, taint, want):
    assert toleration_tolerates_taint(toleration, taint) is want


def test_tolerations_tolerate_taint():
    assert not tolerations_tolerate_taint([], TAINT)
    assert not tolerations_tolerate_taint(None, TAINT)
    assert tolerations_tolerate_taint([{"key": "x", "operator": "Exists"}, {"key": "foo", "operator": "Exists"}], TAINT)
    assert tolerations_tolerate_taint([{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                        "effect": "NoSchedule"}],
                                      {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})


def test_find_matching_untolerated_taint_first_in_order():
    taints = [
        {"key": "a", "value": "1", "effect": "PreferNoSchedule"},
        {"key": "b", "value": "2", "effect": "NoSchedule"},
        {"key": "c", "value": "3", "effect": "NoExecute"},
    ]
    # the PreferNoSchedule taint is filtered out; b is the first untolerated one
    assert find_matching_untolerated_taint(taints, [], do_not_schedule_taints_filter) == taints[1]
    # without a filter every taint counts
    assert find_matching_untolerated_taint(taints, [], None) == taints[0]
    tol = [{"key": "b", "operator": "Exists"}]
    assert find_matching_untolerated_taint(taints, tol, do_not_schedule_taints_filter) == taints[2]
    tol.append({"key": "c", "operator": "Equal", "value": "3"})
    assert find_matching_untolerated_taint(taints, tol, do_not_schedule_taints_filter) is None
    assert find_matching_untolerated_taint(None, None, do_not_schedule_taints_filter) is None


def test_taint_to_string():
    assert taint_to_string({"key": "k"}) == "k"
    assert taint_to_string({"key": "k", "value": "v"}) == "k=v:"
    assert taint_to_string({"key": "k", "effect": "NoSchedule"}) == "k:NoSchedule"
    assert taint_to_string({"key": "k", "value": "v", "effect": "NoSchedule"}) == "k=v:NoSchedule"


# toleration_test.go (v1.35): TestCompareNumericValues
COMPARE_CASES = [
    ("100", "200", "Gt", True), ("200", "100", "Gt", False), ("100", "100", "Gt", False),
    ("-100", "-50", "Gt", True), ("-50", "-100", "Gt", False), ("0", "1", "Gt", True),
    ("9223372036854775806", "9223372036854775807", "Gt", True),
    ("200", "100", "Lt", True), ("100", "200", "Lt", False), ("100", "100", "Lt", False),
    ("-50", "-100", "Lt", True), ("-100", "-50", "Lt", False), ("0", "-1", "Lt", True),
    ("abc", "100", "Gt", False), ("", "100", "Gt", False), ("0100", "200", "Gt", False),
    ("+100", "200", "Gt", False), ("100.5", "200", "Gt", False), ("-", "100", "Gt", False),
    ("100", "xyz", "Gt", False), ("100", "", "Gt", False), ("100", "0200", "Gt", False),
    ("100", "+200", "Lt", False), ("100", " 200 ", "Lt", False),
    ("100", "100", "Equal", False), ("100", "100", "Exists", False),
    ("0", "0", "Gt", False), ("0", "0", "Lt", False),
    ("0", "9223372036854775807", "Gt", True), ("0", "-9223372036854775808", "Lt", True),
    ("0", "9223372036854775808", "Gt", False),  # out of int64: ParseInt fails
]


@pytest.mark.parametrize("tol_val,taint_val,op,want", COMPARE_CASES)
def test_compare_numeric_values(tol_val, taint_val, op, want):
    assert compare_numeric_values(tol_val, taint_val, op) is want


# toleration_test.go (v1.35): TestTolerationToleratesTaint, the comparison operators
CMP_TOLERATES = [
    ({"key": "k", "operator": "Gt", "value": "950", "effect": "NoSchedule"}, "800", True, False),
    ({"key": "k", "operator": "Gt", "value": "750", "effect": "NoSchedule"}, "950", True, True),
    ({"key": "k", "operator": "Lt", "value": "800", "effect": "NoSchedule"}, "950", True, False),
    ({"key": "k", "operator": "Lt", "value": "950", "effect": "NoSchedule"}, "800", True, True),
    ({"key": "k", "operator": "Gt", "value": "950", "effect": "NoSchedule"}, "950", True, False),
    ({"key": "k", "operator": "Gt", "value": "950", "effect": "NoSchedule"}, "high", True, False),
    ({"key": "k", "operator": "Gt", "value": "-100", "effect": "NoSchedule"}, "-200", True, False),
    # gate off (and v1.34, which has no such operators): Lt/Gt tolerate nothing
    ({"key": "k", "operator": "Gt", "value": "750", "effect": "NoSchedule"}, "950", False, False),
    ({"key": "k", "operator": "Lt", "value": "950", "effect": "NoSchedule"}, "800", False, False),
    # key and effect still have to match first
    ({"key": "other", "operator": "Gt", "value": "750"}, "950", True, False),
    ({"key": "k", "operator": "Gt", "value": "750", "effect": "NoExecute"}, "950", True, False),
]


@pytest.mark.parametrize("toleration,taint_value,enabled,want", CMP_TOLERATES)
def test_toleration_comparison_operators(toleration, taint_value, enabled, want):
    taint = {"key": "k", "value": taint_value, "effect": "NoSchedule"}
    assert toleration_tolerates_taint(toleration, taint, enabled) is want
    assert tolerations_tolerate_taint([toleration], taint, enabled) is want
    assert (find_matching_untolerated_taint([taint], [toleration], None, enabled) is None) is want
