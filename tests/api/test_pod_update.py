"""ValidatePodUpdate (pkg/apis/core/validation): what an update may change in a pod's spec."""

from __future__ import annotations

import pytest

from harness.api.pod_update import validate_pod_update

BASE = {"containers": [{"name": "c", "image": "a", "resources": {"requests": {"cpu": "1"}}}]}


def spec(**kw):
    out = {"containers": [dict(BASE["containers"][0])]}
    out.update(kw)
    return out


@pytest.mark.parametrize("old,new", [
    (spec(), spec()),
    (spec(), {"containers": [{"name": "c", "image": "b", "resources": {"requests": {"cpu": "1"}}}]}),
    (spec(tolerations=[{"key": "k", "operator": "Exists"}]),
     spec(tolerations=[{"key": "k", "operator": "Exists"}, {"key": "j", "operator": "Exists"}])),
    (spec(schedulingGates=[{"name": "g"}, {"name": "h"}]), spec(schedulingGates=[{"name": "h"}])),
    (spec(schedulingGates=[{"name": "g"}], nodeSelector={"a": "1"}),
     spec(schedulingGates=[{"name": "g"}], nodeSelector={"a": "1", "b": "2"})),
    (spec(activeDeadlineSeconds=30), spec(activeDeadlineSeconds=10)),
])
def test_allowed(old, new):
    assert validate_pod_update(new, old) is None


@pytest.mark.parametrize("old,new,path,message", [
    (spec(), {"containers": [{"name": "c", "image": "a", "resources": {"requests": {"cpu": "2"}}}]},
     "spec", "Forbidden: pod updates may not change fields other than `spec.containers[*].image`"),
    (spec(), spec(containers=[BASE["containers"][0], {"name": "d", "image": "a"}]),
     "spec.containers", "Forbidden: pod updates may not add or remove containers"),
    (spec(tolerations=[{"key": "k", "operator": "Exists"}]), spec(),
     "spec.tolerations", "Forbidden: existing toleration can not be modified except its tolerationSeconds"),
    (spec(schedulingGates=[{"name": "g"}]), spec(schedulingGates=[{"name": "g"}, {"name": "x"}]),
     "spec.schedulingGates[1].name", "Forbidden: only deletion is allowed, but found new scheduling gate 'x'"),
    (spec(nodeSelector={"a": "1"}), spec(nodeSelector={"a": "1", "b": "2"}),
     "spec", "Forbidden: pod updates may not change fields"),  # not gated: nodeSelector is immutable
    (spec(schedulingGates=[{"name": "g"}], nodeSelector={"a": "1"}),
     spec(schedulingGates=[{"name": "g"}], nodeSelector={"a": "2"}),
     "spec.nodeSelector", 'Invalid value: map[string]string{"a":"2"}: only additions to spec.nodeSelector'),
    (spec(activeDeadlineSeconds=10), spec(activeDeadlineSeconds=30),
     "spec.activeDeadlineSeconds", "Invalid value: 30: must be less than or equal to previous value"),
])
def test_refused(old, new, path, message):
    err = validate_pod_update(new, old)
    assert err is not None and err[0] == path and err[1].startswith(message), err
