"""ValidateTolerations' Lt/Gt operators per version (validation_test.go v1.35/v1.36:
TestNumericTolerationsWithFeatureGate), on pod creation and on pod update."""

from __future__ import annotations

import pytest

from harness.api.object_validation import validate_object
from harness.api.pod_update import validate_pod_update
from harness.versions import resolve


def pod(toleration):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}],
                     "tolerations": [dict({"key": "node.kubernetes.io/sla", "effect": "NoSchedule"}, **toleration)]}}


ON = resolve("v1.35", {"TaintTolerationComparisonOperators": True})
OFF = resolve("v1.35")
V134 = resolve("v1.34")
V136 = resolve("v1.36")
CANONICAL = "must be a valid decimal integer in canonical form"

CASES = [
    ("Gt", "950", ON, None),
    ("Lt", "800", ON, None),
    ("Gt", "-100", ON, None),
    ("Gt", "0", ON, None),
    ("Gt", "9223372036854775807", ON, None),
    ("Gt", "high", ON, ("spec.tolerations[0].value", f'Invalid value: "high": {CANONICAL}')),
    ("Gt", "0950", ON, ("spec.tolerations[0].value", f'Invalid value: "0950": {CANONICAL}')),
    ("Gt", "95.5", ON, ("spec.tolerations[0].value", f'Invalid value: "95.5": {CANONICAL}')),
    ("Gt", "-", ON, ("spec.tolerations[0].value", f'Invalid value: "-": {CANONICAL}')),
    ("Gt", "+100", ON, ("spec.tolerations[0].value", f'Invalid value: "+100": {CANONICAL}')),
    ("Gt", "95 0", ON, ("spec.tolerations[0].value", f'Invalid value: "95 0": {CANONICAL}')),
    ("Gt", "", ON, ("spec.tolerations[0].value", 'Invalid value: "": must be non-empty')),
    ("Gt", "9223372036854775808", ON, ("spec.tolerations[0].value", 'Invalid value: "9223372036854775808": '
                                       'strconv.ParseInt: parsing "9223372036854775808": value out of range')),
    # the gate off (v1.35, v1.36): the operator is known but not supported
    ("Lt", "950", OFF, ("spec.tolerations[0].operator",
                        'Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"')),
    ("Gt", "950", V136, ("spec.tolerations[0].operator",
                         'Unsupported value: "Gt": supported values: "Equal", "Exists", "Lt", "Gt"')),
    # v1.34 has no such operators
    ("Gt", "950", V134, ("spec.tolerations[0].operator", 'Unsupported value: "Gt": supported values: "Equal", "Exists"')),
]


@pytest.mark.parametrize("op,value,features,want", CASES)
def test_numeric_tolerations(op, value, features, want):
    assert validate_object(pod({"operator": op, "value": value}), features) == want


def test_update_keeps_comparison_operators_of_the_old_pod():
    """allowTaintTolerationComparisonOperators: with the gate off, an update may keep (and add)
    Lt/Gt tolerations when the old pod already uses them; a pod without them may not gain one."""
    old = pod({"operator": "Gt", "value": "950"})["spec"]
    new = dict(old, tolerations=old["tolerations"] + [{"key": "b", "operator": "Lt", "value": "5"}])
    assert validate_pod_update(new, old, OFF) is None
    plain = dict(old, tolerations=[])
    err = validate_pod_update(new, plain, OFF)
    assert err == ("spec.tolerations[0].operator", 'Unsupported value: "Gt": supported values: "Equal", "Exists", '
                                                   '"Lt", "Gt"')
    assert validate_pod_update(new, plain, ON) is None
