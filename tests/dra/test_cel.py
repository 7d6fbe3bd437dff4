"""Device selectors in CEL (dynamic-resource-allocation/cel): the device variable, Kubernetes'
quantity and semver extensions, cel-go's equality, compile and runtime errors."""

from __future__ import annotations

import pytest

from harness.api.dra_cel import CELRuntimeError, compile_expression, device_variable

DEV = device_variable("gpu.example.com", {
    "name": "gpu-0",
    "attributes": {"model": {"string": "a100"}, "cores": {"int": 8}, "driverVersion": {"version": "1.10.0"},
                   "ecc": {"bool": True}, "other.io/zone": {"string": "z1"}},
    "capacity": {"memory": {"value": "40Gi"}, "other.io/slots": {"value": "4"}},
})


@pytest.mark.parametrize("expr,want", [
    ('device.driver == "gpu.example.com"', True),
    ('device.driver.startsWith("gpu")', True),
    ('device.attributes["gpu.example.com"].model == "a100"', True),
    ('device.attributes["gpu.example.com"].model in ["a100", "h100"]', True),
    ('device.attributes["gpu.example.com"].cores >= 8', True),
    ('device.attributes["gpu.example.com"].ecc', True),
    ('device.attributes["other.io"].zone == "z1"', True),
    ('has(device.attributes["gpu.example.com"].model)', True),
    ('has(device.attributes["gpu.example.com"].missing)', False),
    ('has(device.attributes["unknown.io"].x)', False),
    ('"other.io" in device.attributes', True),
    ('"unknown.io" in device.attributes', False),  # only lookups default to an empty map
    ('device.attributes["unknown.io"].size() == 0', True),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0', True),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("16Gi")) > 0', True),
    ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("64Gi"))', False),
    ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("64Gi"))', True),
    ('device.capacity["gpu.example.com"].memory == quantity("40960Mi")', True),
    ('device.capacity["other.io"].slots.asInteger() == 4', True),
    ('quantity("1.5").isInteger()', False),
    ('quantity("1500m").asApproximateFloat() == 1.5', True),
    ('quantity("1Gi").add(quantity("1Gi")) == quantity("2Gi")', True),
    ('isQuantity("1Gi") && !isQuantity("one")', True),
    ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.9.0"))', True),
    ('device.attributes["gpu.example.com"].driverVersion.compareTo(semver("1.10.0")) == 0', True),
    ('device.attributes["gpu.example.com"].driverVersion == semver("1.10.0")', True),
    ('device.attributes["gpu.example.com"].driverVersion.minor() == 10', True),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ('isSemver("1.2.3") && !isSemver("1.2")', True),
    ('device.attributes["gpu.example.com"].model == 1', False),  # heterogeneous equality
    ('1 == 1.0', True),
    ('device.attributes["gpu.example.com"].model.upperAscii() == "A100"', True),
    ('device.attributes["gpu.example.com"].model.indexOf("1") == 1', True),
    ('device.attributes["gpu.example.com"].model.substring(1, 3) == "10"', True),
    ('"a,b,c".split(",").size() == 3 && ["a", "b"].join("-") == "a-b"', True),
    ('" x ".trim() == "x" && "aXa".replace("X", "y") == "aya" && "abc".charAt(1) == "b"', True),
    ('device.attributes["gpu.example.com"].model.matches("^a[0-9]+$")', True),
    ('["a", "b"].exists(x, x == device.attributes["gpu.example.com"].model)', False),
])
def test_matches(expr, want):
    r = compile_expression(expr)
    assert r.error is None
    assert r.device_matches(DEV) is want


@pytest.mark.parametrize("expr,msg", [
    ('device.attributes["gpu.example.com"].missing == "x"', "no such key: missing"),
    ('device.attributes["gpu.example.com"].cores', "could not be converted to bool"),
    ('quantity("abc").sign() == 1', "quantities must match the regular expression"),
])
def test_runtime_errors(expr, msg):
    r = compile_expression(expr)
    assert r.error is None
    with pytest.raises(CELRuntimeError) as e:
        r.device_matches(DEV)
    assert msg in str(e.value)


@pytest.mark.parametrize("expr,msg", [
    ("noSuchVar", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in container '')"),
    ("device.driver ==", "compilation failed: ERROR: <input>:1:"),
    ('noSuchFunction(device.driver)', "undeclared reference to 'noSuchFunction'"),
    ('cel.bind(m, device.driver, m == "x")', "schedharness does not implement the Kubernetes CEL function 'bind'"),
    ('isIP("1.2.3.4")', "schedharness does not implement the Kubernetes CEL function 'isIP'"),
])
def test_compile_errors(expr, msg):
    r = compile_expression(expr)
    assert r.error is not None and msg in r.error
