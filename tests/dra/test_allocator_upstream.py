"""Port of TestAllocator's table (dynamic-resource-allocation/structured/internal/
allocatortesting/allocator_testing.go), for the features v1.34 enables by default. Cases whose
expectation changed after v1.34 (class config `requests`, incomplete pools) are left out."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import pytest

from builtin_plugins.dynamicresources.allocator import AllocationError, Allocator, Features
from harness.api.dra_cel import CELCache
from harness.api.objects import KubeObject, Node

NODE1, NODE2 = "node-1", "node-2"
REGION1, REGION2 = "region-1", "region-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3, POOL4 = "pool-1", "pool-2", "pool-3", "pool-4"
REQ0, REQ1, REQ2 = "req-0", "req-1", "req-2"
SUB0, SUB1 = "subReq-0", "subReq-1"
DEV0, DEV1, DEV2, DEV3 = "device-0", "device-1", "device-2", "device-3"
ALL_NODES = "<all>"
MAX = 32


def node(name: str, region: str) -> Node:
    return Node({"kind": "Node", "metadata": {"name": name, "labels": {"region": region, "planet": "earth"}}})


def klass(name: str, driver: str, config: Optional[str] = None) -> Dict[str, Any]:
    spec: Dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    if config:
        spec["config"] = [{"opaque": {"driver": driver, "parameters": {config: config + "Value"}}}]
    return {"kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def request(name: str, cls: str, count: int = 1, *selectors: str, mode: str = "ExactCount",
            admin: Optional[bool] = None) -> Dict[str, Any]:
    ex: Dict[str, Any] = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        ex["count"] = count
    if selectors:
        ex["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if admin is not None:
        ex["adminAccess"] = admin
    return {"name": name, "exactly": ex}


def sub(name: str, cls: str, count: int = 1, *selectors: str, mode: str = "ExactCount") -> Dict[str, Any]:
    s: Dict[str, Any] = {"name": name, "deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        s["count"] = count
    if selectors:
        s["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return s


def prioritized(name: str, *subs) -> Dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def claim(name: str, *requests, constraints=None, config=None) -> Dict[str, Any]:
    devices: Dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {"kind": "ResourceClaim", "metadata": {"name": name}, "spec": {"devices": devices}}


def device(name: str, capacity: Optional[Dict[str, str]] = None, attributes: Optional[Dict[str, Any]] = None):
    d: Dict[str, Any] = {"name": name}
    if capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if attributes:
        d["attributes"] = attributes
    return d


_rv = [0]


def slice_(name: str, selection, pool, driver: str, *devices, count: int = 1, generation: int = 1) -> KubeObject:
    spec: Dict[str, Any] = {"driver": driver, "pool": {"name": pool, "generation": generation,
                                                      "resourceSliceCount": count},
                            "devices": list(devices)}
    if selection == ALL_NODES:
        spec["allNodes"] = True
    elif isinstance(selection, dict):
        spec["nodeSelector"] = selection
    else:
        spec["nodeName"] = selection
    _rv[0] += 1
    obj = KubeObject({"kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec})
    obj.resource_version = _rv[0]
    return obj


def one(name, selection, pool, driver, **kw) -> KubeObject:
    return slice_(name, selection, pool, driver, device(DEV1), **kw)


def label_selector(key: str, value: str) -> Dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}


def local(node_name: str) -> Dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


def result(request: str, driver: str, pool: str, dev: str, admin: bool = False) -> Dict[str, Any]:
    r = {"request": request, "driver": driver, "pool": pool, "device": dev}
    if admin:
        r["adminAccess"] = True
    return r


def alloc(selector, *results, config=None) -> Dict[str, Any]:
    out: Dict[str, Any] = {"devices": {"results": list(results)}}
    if config:
        out["devices"]["config"] = config
    if selector is not None:
        out["nodeSelector"] = selector
    return out


def cap_sel(q: str) -> str:
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{q}")) >= 0'


INT_ATTR = f"{DRIVER_A}/numa"
VERSION_ATTR = f"{DRIVER_A}/driverVersion"
STRING_ATTR = f"{DRIVER_A}/stringAttribute"
BOOL_ATTR = f"{DRIVER_A}/boolAttribute"


def attrs(**kw) -> Dict[str, Any]:
    out = {}
    for k, v in kw.items():
        if isinstance(v, bool):
            out[k] = {"bool": v}
        elif isinstance(v, int):
            out[k] = {"int": v}
        elif isinstance(v, str) and v.count(".") == 2 and v[0].isdigit():
            out[k] = {"version": v}
        else:
            out[k] = {"string": v}
    return out


ALL_ATTRS = dict(driverVersion="1.0.0", numa=1, stringAttribute="stringAttributeValue", boolAttribute=True)

CASES: Dict[str, Dict[str, Any]] = {
    "empty": {},
    "simple": dict(claims=[claim("claim-0", request(REQ0, CLASS_A))], classes=[klass(CLASS_A, DRIVER_A)],
                   slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
                   expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1))]),
    "other-node": dict(claims=[claim("claim-0", request(REQ0, CLASS_A))], classes=[klass(CLASS_A, DRIVER_A)],
                       slices=[one("slice-1", NODE1, POOL1, DRIVER_B), one("slice-2", NODE2, POOL2, DRIVER_A)],
                       node=node(NODE2, REGION2),
                       expect=[alloc(local(NODE2), result(REQ0, DRIVER_A, POOL2, DEV1))]),
    "small-and-large": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 1, cap_sel("1Gi")), request(REQ1, CLASS_A, 1, cap_sel("2Gi")))],
        classes=[klass(CLASS_A, DRIVER_A)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1, {"memory": "1Gi"}), device(DEV2, {"memory": "2Gi"}))],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1), result(REQ1, DRIVER_A, POOL1, DEV2))]),
    "small-and-large-backtrack-requests": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 1, cap_sel("1Gi")), request(REQ1, CLASS_A, 1, cap_sel("2Gi")))],
        classes=[klass(CLASS_A, DRIVER_A)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV2, {"memory": "2Gi"}), device(DEV1, {"memory": "1Gi"}))],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1), result(REQ1, DRIVER_A, POOL1, DEV2))]),
    "small-and-large-backtrack-claims": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 1, cap_sel("1Gi"))), claim("claim-1", request(REQ1, CLASS_A, 1, cap_sel("2Gi")))],
        classes=[klass(CLASS_A, DRIVER_A)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV2, {"memory": "2Gi"}), device(DEV1, {"memory": "1Gi"}))],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1)), alloc(local(NODE1), result(REQ1, DRIVER_A, POOL1, DEV2))]),
    "devices-split-across-different-slices": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 2))], classes=[klass(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", NODE1, POOL1, DRIVER_A), one("slice-2", NODE1, POOL2, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1), result(REQ0, DRIVER_A, POOL2, DEV1))]),
    "no-slices": dict(claims=[claim("claim-0", request(REQ0, CLASS_A))], classes=[klass(CLASS_A, DRIVER_A)],
                      slices=[], node=node(NODE1, REGION1), expect=None),
    "not-enough-suitable-devices": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A)), claim("claim-0", request(REQ1, CLASS_A))],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=None),
    "no-classes": dict(claims=[claim("claim-0", request(REQ0, CLASS_A))], classes=[],
                       slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
                       error="could not retrieve device class class-a"),
    "unknown-class": dict(claims=[claim("claim-0", request(REQ0, "unknown-class"))], classes=[klass(CLASS_A, DRIVER_A)],
                          slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
                          error="could not retrieve device class unknown-class"),
    "empty-class": dict(claims=[claim("claim-0", request(REQ0, ""))], classes=[klass(CLASS_A, DRIVER_A)],
                        slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
                        error="claim claim-0, request req-0: missing device class name (unsupported request type?)"),
    "no-claims-to-allocate": dict(claims=[], classes=[klass(CLASS_A, DRIVER_A)],
                                  slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1), expect=[]),
    "all-devices-single": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, mode="All"))], classes=[klass(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1))]),
    "all-devices-many": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, mode="All"))], classes=[klass(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", NODE1, POOL1, DRIVER_A), one("slice-1", NODE1, POOL2, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1), result(REQ0, DRIVER_A, POOL2, DEV1))]),
    "all-devices-of-the-incomplete-pool": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, mode="All"))], classes=[klass(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", NODE1, POOL1, DRIVER_A, count=2)], node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being updated"),
    "all-devices-plus-another": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, mode="All")), claim("claim-1", request(REQ0, CLASS_B))],
        classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[one("slice-1", NODE1, POOL1, DRIVER_A), one("slice-1", NODE1, POOL1, DRIVER_B)], node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1)), alloc(local(NODE1), result(REQ0, DRIVER_B, POOL1, DEV1))]),
    "all-devices-many-plus-another-reversed": dict(
        claims=[claim("claim-1", request(REQ0, CLASS_B)), claim("claim-0", request(REQ0, CLASS_A, mode="All"))],
        classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2)), one("slice-1", NODE1, POOL1, DRIVER_B)],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_B, POOL1, DEV1)),
                alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1), result(REQ0, DRIVER_A, POOL1, DEV2))]),
    "all-devices-no-solution": dict(
        claims=[claim("claim-1", request(REQ0, CLASS_A)), claim("claim-0", request(REQ0, CLASS_A, mode="All"))],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=None),
    "all-devices-no-solution-reversed": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, mode="All")), claim("claim-1", request(REQ0, CLASS_A))],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=None),
    "all-devices-slice-without-devices": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, mode="All"))], classes=[klass(CLASS_A, DRIVER_A)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1), expect=None),
    "all-devices-some-allocated": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, mode="All"))], allocated=[(DRIVER_A, POOL1, DEV1)],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
        node=node(NODE1, REGION1), expect=None),
    "all-devices-some-allocated-admin-access": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, mode="All", admin=True))], allocated=[(DRIVER_A, POOL1, DEV1)],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1, True), result(REQ0, DRIVER_A, POOL1, DEV2, True))]),
    "all-devices-some-allocating-admin-access": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 1, admin=True), request(REQ1, CLASS_A, mode="All", admin=True))],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
        node=node(NODE1, REGION1), expect=None),
    "count-devices-some-allocated-admin-access": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 2, admin=True))], allocated=[(DRIVER_A, POOL1, DEV1)],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1, True), result(REQ0, DRIVER_A, POOL1, DEV2, True))]),
    "separate-claims-share-device-admin-access": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, admin=True)), claim("claim-1", request(REQ0, CLASS_A, admin=True))],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1, True)),
                alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1, True))]),
    "admin-access-claims-device-allocating-for-non-admin-access": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A)), claim("claim-1", request(REQ0, CLASS_A, admin=True))],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2))],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1)),
                alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1, True))]),
    "all-devices-slice-without-devices-prioritized-list": dict(
        claims=[claim("claim-0", prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_B, 1)))],
        classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A), one("slice-2", NODE1, POOL2, DRIVER_B)], node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result("req-0/subReq-1", DRIVER_B, POOL2, DEV1))]),
    "all-devices-some-allocated-prioritized-list": dict(
        claims=[claim("claim-0", prioritized(REQ0, sub(SUB0, CLASS_A, mode="All"), sub(SUB1, CLASS_B, 1)))],
        allocated=[(DRIVER_A, POOL1, DEV1)], classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2)), one("slice-2", NODE1, POOL2, DRIVER_B)],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result("req-0/subReq-1", DRIVER_B, POOL2, DEV1))]),
    "network-attached-device": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A))], classes=[klass(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[alloc(label_selector("region", REGION1), result(REQ0, DRIVER_A, POOL1, DEV1))]),
    "unsuccessful-allocation-network-attached-device": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A))], classes=[klass(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A)], node=node(NODE2, REGION2),
        expect=None),
    "many-network-attached-devices": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 4))], classes=[klass(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A),
                one("slice-1", ALL_NODES, POOL2, DRIVER_A),
                one("slice-1", label_selector("planet", "earth"), POOL3, DRIVER_A),
                one("slice-1", local(NODE1), POOL4, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[alloc({"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "region", "operator": "In", "values": [REGION1]},
                                 {"key": "planet", "operator": "In", "values": ["earth"]}],
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE1]}]}]},
            result(REQ0, DRIVER_A, POOL1, DEV1), result(REQ0, DRIVER_A, POOL2, DEV1),
            result(REQ0, DRIVER_A, POOL3, DEV1), result(REQ0, DRIVER_A, POOL4, DEV1))]),
    "local-and-network-attached-devices": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 2))], classes=[klass(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", label_selector("region", REGION1), POOL1, DRIVER_A), one("slice-1", NODE1, POOL2, DRIVER_A)],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1), result(REQ0, DRIVER_A, POOL2, DEV1))]),
    "several-different-drivers": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A)), claim("claim-0", request(REQ0, CLASS_B))],
        classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1), device(DEV2)), one("slice-1", NODE1, POOL1, DRIVER_B)],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1)), alloc(local(NODE1), result(REQ0, DRIVER_B, POOL1, DEV1))]),
    "already-allocated-devices": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A))], allocated=[(DRIVER_A, POOL1, DEV1), (DRIVER_A, POOL1, DEV2)],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=None),
    "admin-access-disabled": dict(
        features=Features(admin_access=False),
        claims=[claim("claim-0", request(REQ0, CLASS_A, admin=True))], classes=[klass(CLASS_A, DRIVER_A)],
        slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: admin access is requested, but the feature is disabled"),
    "admin-access-enabled": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, admin=True))], allocated=[(DRIVER_A, POOL1, DEV1), (DRIVER_A, POOL1, DEV2)],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1, True))]),
    "with-constraint": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A), request(REQ1, CLASS_A),
                      constraints=[{"matchAttribute": a} for a in (INT_ATTR, VERSION_ATTR, STRING_ATTR, BOOL_ATTR)])],
        classes=[klass(CLASS_A, DRIVER_A)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1, None, attrs(**ALL_ATTRS)), device(DEV2, None, attrs(**ALL_ATTRS)))],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1), result(REQ1, DRIVER_A, POOL1, DEV2))]),
    "with-constraint-non-existent-attribute": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A), constraints=[{"matchAttribute": f"{DRIVER_A}/NonExistentAttribute"}])],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=None),
    **{f"with-constraint-not-matching-{kind}-attribute": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 2), constraints=[{"matchAttribute": f"{DRIVER_A}/{attr}"}])],
        classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1, None, attrs(**{attr: v1})), device(DEV2, None, attrs(**{attr: v2})))],
        node=node(NODE1, REGION1), expect=None)
       for kind, attr, v1, v2 in [("int", "numa", 1, 2), ("string", "stringAttribute", "stringAttributeValue", "stringAttributeValue2"),
                                  ("bool", "boolAttribute", True, False), ("version", "driverVersion", "1.0.0", "2.0.0")]},
    "with-constraint-not-matching-int-attribute-all-devices": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, mode="All"), constraints=[{"matchAttribute": INT_ATTR}])],
        classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1, None, attrs(numa=1)), device(DEV2, None, attrs(numa=2)))],
        node=node(NODE1, REGION1),
        error="claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied"),
    "with-constraint-for-request": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A), request(REQ1, CLASS_A),
                      constraints=[{"requests": [REQ0], "matchAttribute": VERSION_ATTR}])],
        classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1, None, attrs(driverVersion="1.0.0")),
                       device(DEV2, None, attrs(driverVersion="2.0.0")))],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1), result(REQ1, DRIVER_A, POOL1, DEV2))]),
    "with-constraint-for-request-retry": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A), request(REQ1, CLASS_A),
                      constraints=[{"requests": [REQ0], "matchAttribute": VERSION_ATTR}, {"matchAttribute": STRING_ATTR}])],
        classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A,
                       device(DEV1, None, attrs(driverVersion="1.0.0", stringAttribute="a")),
                       device(DEV2, None, attrs(driverVersion="2.0.0", stringAttribute="b")),
                       device(DEV3, None, attrs(driverVersion="3.0.0", stringAttribute="b")))],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV2), result(REQ1, DRIVER_A, POOL1, DEV3))]),
    "claim-with-device-config": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A),
                      config=[{"opaque": {"driver": DRIVER_A, "parameters": {"deviceAttribute": "deviceAttributeValue"}}}])],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV1), config=[
            {"source": "FromClaim", "opaque": {"driver": DRIVER_A, "parameters": {"deviceAttribute": "deviceAttributeValue"}}}])]),
    "unknown-selector": dict(
        claims=[claim("claim-0", {"name": REQ0, "exactly": {"deviceClassName": CLASS_A, "allocationMode": "ExactCount",
                                                            "count": 1, "selectors": [{}]}})],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        error="CEL expression empty (unsupported selector type?)"),
    "unknown-allocation-mode": dict(
        claims=[claim("claim-0", {"name": REQ0, "exactly": {"deviceClassName": CLASS_A, "allocationMode": "future-mode"}})],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        error="unsupported count mode future-mode"),
    "unknown-constraint": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A), constraints=[{}])],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        error="empty constraint (unsupported constraint type?)"),
    "invalid-CEL-one-device": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 1, "noSuchVar"))],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        error="undeclared reference"),
    "invalid-CEL-one-device-class": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A))],
        classes=[{"kind": "DeviceClass", "metadata": {"name": CLASS_A}, "spec": {"selectors": [{"cel": {"expression": "noSuchVar"}}]}}],
        slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1), error="undeclared reference"),
    "invalid-CEL-all-devices": dict(
        claims=[claim("claim-0", {"name": REQ0, "exactly": {"deviceClassName": CLASS_A, "allocationMode": "All",
                                                            "selectors": [{"cel": {"expression": "noSuchVar"}}]}})],
        classes=[klass(CLASS_A, DRIVER_A)], slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        error="undeclared reference"),
    "too-many-devices-single-request": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 500))], classes=[klass(CLASS_A, DRIVER_A)],
        node=node(NODE1, REGION1), error="exceeds the claim limit"),
    "many-devices-okay": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, MAX))], classes=[klass(CLASS_A, DRIVER_A)],
        node=node(NODE1, REGION1), expect=None),
    "too-many-devices-total": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, MAX), request(REQ1, CLASS_A, 1))], classes=[klass(CLASS_A, DRIVER_A)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, *[device(f"device-{i}") for i in range(MAX + 1)])],
        node=node(NODE1, REGION1), error="exceeds the claim limit"),
    "prioritized-list-first-unavailable": dict(
        claims=[claim("claim-0", prioritized(REQ0, sub(SUB0, CLASS_B, 1), sub(SUB1, CLASS_A, 1)))],
        classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[one("slice-1", NODE1, POOL1, DRIVER_A)], node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result("req-0/subReq-1", DRIVER_A, POOL1, DEV1))]),
    "prioritized-list-non-available": dict(
        claims=[claim("claim-0", prioritized(REQ0, sub(SUB0, CLASS_B, 2), sub(SUB1, CLASS_A, 2)))],
        classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[one("slice-1", NODE1, POOL1, DRIVER_A), one("slice-2", NODE1, POOL2, DRIVER_B)], node=node(NODE1, REGION1),
        expect=None),
    "prioritized-list-device-config": dict(
        claims=[claim("claim-0", prioritized(REQ0, sub(SUB0, CLASS_A, 1), sub(SUB1, CLASS_B, 2)), config=[
            {"requests": ["req-0/subReq-0"], "opaque": {"driver": DRIVER_A, "parameters": {"foo": "fooValue"}}},
            {"requests": ["req-0/subReq-1"], "opaque": {"driver": DRIVER_B, "parameters": {"bar": "barValue"}}}])],
        classes=[klass(CLASS_A, DRIVER_A), klass(CLASS_B, DRIVER_B)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_B, device(DEV1), device(DEV2))], node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result("req-0/subReq-1", DRIVER_B, POOL1, DEV1), result("req-0/subReq-1", DRIVER_B, POOL1, DEV2),
                      config=[{"source": "FromClaim", "requests": ["req-0/subReq-1"],
                               "opaque": {"driver": DRIVER_B, "parameters": {"bar": "barValue"}}}])]),
    "prioritized-list-subrequests-with-expressions": dict(
        claims=[claim("claim-0", request(REQ0, CLASS_A, 1, cap_sel("1Gi")),
                      prioritized(REQ1, sub(SUB0, CLASS_A, 1, cap_sel("4Gi")), sub(SUB1, CLASS_A, 2, cap_sel("2Gi"))))],
        classes=[klass(CLASS_A, DRIVER_A)],
        slices=[slice_("slice-1", NODE1, POOL1, DRIVER_A, device(DEV1, {"memory": "2Gi"}), device(DEV2, {"memory": "2Gi"}),
                       device(DEV3, {"memory": "1Gi"}))],
        node=node(NODE1, REGION1),
        expect=[alloc(local(NODE1), result(REQ0, DRIVER_A, POOL1, DEV3), result("req-1/subReq-1", DRIVER_A, POOL1, DEV1),
                      result("req-1/subReq-1", DRIVER_A, POOL1, DEV2))]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_allocator(name):
    tc = CASES[name]
    classes = {c["metadata"]["name"]: c for c in tc.get("classes") or []}
    a = Allocator(tc.get("features") or Features(), set(tc.get("allocated") or []), classes.get,
                  tc.get("slices") or [], CELCache())
    claims = tc.get("claims") or []
    if "error" in tc:
        with pytest.raises(AllocationError) as e:
            a.allocate(tc.get("node"), claims)
        assert tc["error"] in str(e.value)
        return
    got = a.allocate(tc.get("node"), claims)
    want = tc.get("expect")
    if not claims:
        assert got in (None, [])
        return
    assert got == want
