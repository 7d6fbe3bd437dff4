"""DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate are validated as
pkg/apis/resource/validation (v1.34.9) validates them, CEL compiled with its cost limit; an
expression whose cost explodes is refused at once and can never run away at evaluation."""

from __future__ import annotations

import copy
import time

import pytest

from harness.api import dra_cel as cel
from harness.api.object_validation import validate_object

R = "resource.k8s.io/v1"
CLASS = {"apiVersion": R, "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
SLICE = {"apiVersion": R, "kind": "ResourceSlice", "metadata": {"name": "s"},
         "spec": {"driver": "gpu.example.com", "nodeName": "node-a",
                  "pool": {"name": "node-a", "generation": 0, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"},
                                                                "gpu.example.com/numa": {"int": 0}},
                               "capacity": {"memory": {"value": "80Gi"}}}]}}
CLAIM = {"apiVersion": R, "kind": "ResourceClaim", "metadata": {"name": "c"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}
TEMPLATE = {"apiVersion": R, "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
            "spec": {"spec": copy.deepcopy(CLAIM["spec"])}}
NESTED = "[" + ",".join(["0"] * 100) + "]"


def with_(obj, path, value):
    o = copy.deepcopy(obj)
    cur = o
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return o


def test_valid_objects_pass():
    for obj in (CLASS, SLICE, CLAIM, TEMPLATE):
        assert validate_object(obj) is None, obj["kind"]


@pytest.mark.parametrize("obj,path,message", [
    (with_(SLICE, ["spec", "devices"], [{"name": "gpu-0"}, {"name": "gpu-0"}]), "spec.devices[1].name",
     'Duplicate value: "gpu-0"'),
    (with_(SLICE, ["spec", "devices", 0, "attributes", "model"], {"string": "a", "int": 1}),
     "spec.devices[0].attributes[model]", "exactly one value must be specified"),
    (with_(SLICE, ["spec", "devices", 0, "attributes", "model"], {}), "spec.devices[0].attributes[model]",
     "Required value: exactly one value must be specified"),
    (with_(SLICE, ["spec", "devices", 0, "attributes", "model"], {"string": "x" * 65}),
     "spec.devices[0].attributes[model].string", "Too long: may not be more than 64 bytes"),
    (with_(SLICE, ["spec", "devices", 0, "attributes", "model"], {"version": "1.0"}),
     "spec.devices[0].attributes[model].version", "semver.org spec 2.0.0"),
    (with_(SLICE, ["spec", "devices", 0, "attributes"], {"bad-name": {"int": 1}}),
     "spec.devices[0].attributes[bad-name]", "a valid C identifier"),
    (with_(SLICE, ["spec", "devices", 0, "name"], "GPU_0"), "spec.devices[0].name", "RFC 1123 label"),
    (with_(SLICE, ["spec", "pool", "resourceSliceCount"], 0), "spec.pool.resourceSliceCount",
     "must be greater than zero"),
    (with_(SLICE, ["spec", "allNodes"], True), "spec", "but multiple fields are set"),
    (with_(SLICE, ["spec", "driver"], "Not A Driver"), "spec.driver", "Invalid value"),
    (with_(CLAIM, ["spec", "devices", "requests", 0, "exactly", "count"], 0),
     "spec.devices.requests[0].exactly.count", "Invalid value: 0: must be greater than zero"),
    (with_(CLAIM, ["spec", "devices", "requests", 0, "exactly", "allocationMode"], "Some"),
     "spec.devices.requests[0].exactly.allocationMode", 'Unsupported value: "Some"'),
    (with_(CLAIM, ["spec", "devices", "requests", 0, "exactly"], {"deviceClassName": "gpu", "allocationMode": "All", "count": 2}),
     "spec.devices.requests[0].exactly.count", "must not be specified when allocationMode is 'All'"),
    (with_(CLAIM, ["spec", "devices", "requests"], [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}] * 2),
     "spec.devices.requests[1].name", "Duplicate value"),
    (with_(CLAIM, ["spec", "devices", "requests", 0], {"name": "gpu"}), "spec.devices.requests[0]",
     "exactly one of `exactly` or `firstAvailable` is required"),
    (with_(CLAIM, ["spec", "devices", "constraints"], [{"requests": ["nope"], "matchAttribute": "a.com/x"}]),
     "spec.devices.constraints[0].requests[0]", "must be the name of a request in the claim"),
    (with_(CLAIM, ["spec", "devices", "constraints"], [{"matchAttribute": "numa"}]),
     "spec.devices.constraints[0].matchAttribute", "must include a domain"),
    (with_(TEMPLATE, ["spec", "spec", "devices", "requests", 0, "exactly", "count"], -1),
     "spec.spec.devices.requests[0].exactly.count", "must be greater than zero"),
    (with_(CLASS, ["spec", "selectors", 0, "cel", "expression"], "device.driver =="),
     "spec.selectors[0].cel.expression", "compilation failed"),
    (with_(CLASS, ["spec", "selectors", 0, "cel", "expression"], "nodevice.driver == 'x'"),
     "spec.selectors[0].cel.expression", "undeclared reference"),
    (with_(CLASS, ["spec", "selectors", 0], {}), "spec.selectors[0].cel", "Required value"),
    (with_(CLASS, ["spec", "config"], [{"opaque": {"driver": "gpu.example.com", "parameters": [1]}}]),
     "spec.config[0].opaque.parameters", "must be a valid JSON object"),
    (with_(CLASS, ["spec", "selectors", 0, "cel", "expression"],
           f"{NESTED}.all(a, {NESTED}.all(b, {NESTED}.all(c, a == b)))"),
     "spec.selectors[0].cel.expression", "Forbidden: too complex, exceeds cost limit"),
    (with_(CLASS, ["spec", "selectors", 0, "cel", "expression"],
           'device.attributes["a.com"].all(k, device.attributes["a.com"].all(j, device.attributes["a.com"]'
           '.all(l, device.attributes["a.com"].all(m, k + j + l + m == "x"))))'),
     "spec.selectors[0].cel.expression", "Forbidden: too complex, exceeds cost limit"),
])
def test_invalid_objects_are_refused_as_upstream_refuses_them(obj, path, message):
    t0 = time.process_time()  # CPU time: other work on the machine does not count
    err = validate_object(obj)
    assert err is not None and err[0] == path and message in err[1], err
    assert time.process_time() - t0 < 10  # refused, not evaluated


def test_cost_estimate_is_small_for_ordinary_selectors():
    for expr in ['device.driver == "gpu.example.com"',
                 'device.attributes["gpu.example.com"].model == "a100"',
                 'device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0',
                 'device.attributes["gpu.example.com"].all(k, k != "x")']:
        assert cel.estimate_cost(expr) < 10_000, expr


def test_evaluation_stops_at_the_cost_limit(monkeypatch):
    """Upstream's runtime bound (cel.CostLimit): an expression that would run past the budget
    stops with cel-go's error instead of running on."""
    monkeypatch.setattr(cel, "COST_LIMIT", 5_000)
    r = cel.compile_expression(f"{NESTED}.all(a, {NESTED}.all(b, a == b || true))")
    with pytest.raises(cel.CELRuntimeError, match="operation cancelled: actual cost limit exceeded"):
        r.device_matches(cel.device_variable("gpu.example.com", {"name": "gpu-0"}))
