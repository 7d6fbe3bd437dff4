"""What the API server's validation refuses in the four resource.k8s.io/v1 kinds the harness
reads: pkg/apis/resource/validation (ValidateDeviceClass, ValidateResourceSlice,
ValidateResourceClaim, ValidateResourceClaimTemplate) at v1.34.9, after strict decoding.

CEL selectors are compiled as validateCELSelector compiles them: a compile error is
`Invalid value`, an expression whose estimated worst-case cost exceeds
CELSelectorExpressionMaxCost (1,000,000) is `Forbidden: too complex, exceeds cost limit`
(the estimate: harness/api/dra_cel.py estimate_cost).
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, Mapping, Set

from .field_checks import (_bool, _duplicate, _fail, _int, _invalid, _label_name, _map,
                                _maps, _node_selector_term, _quantity, _required, _str, _strs,
                                _time, _unsupported, _wrong_type, short_value)
from .validation import is_dns1123_subdomain, is_extended_resource_name, is_valid_label_value

# pkg/apis/resource/types.go
DRIVER_NAME_MAX = 63
POOL_NAME_MAX = 253
RESOURCE_SLICE_MAX_DEVICES = 128
MAX_ATTRIBUTES_AND_CAPACITIES = 32
DEVICE_MAX_DOMAIN = 63
DEVICE_MAX_ID = 32
ATTRIBUTE_MAX_VALUE = 64
DEVICE_TAINTS_MAX = 4
BINDING_CONDITIONS_MAX = 4  # BindingConditionsMaxSize, BindingFailureConditionsMaxSize
COUNTER_CONSUMPTIONS_MAX = 2  # ResourceSliceMaxDeviceCounterConsumptionsPerDevice
DEVICE_REQUESTS_MAX = 32
DEVICE_CONSTRAINTS_MAX = 32
DEVICE_CONFIG_MAX = 32
DEVICE_SELECTORS_MAX = 32
FIRST_AVAILABLE_MAX = 8
CAPACITY_VALID_VALUES_MAX = 10  # CapacityRequestPolicyDiscreteMaxOptions
CEL_MAX_LENGTH = 10 * 1024
CEL_MAX_COST = 1_000_000
OPAQUE_PARAMETERS_MAX = 10 * 1024

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
    r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$")
_TAINT_EFFECTS = ["NoExecute", "NoSchedule"]


def _too_long(path: str, limit: int):
    _fail(path, f"Too long: may not be more than {limit} bytes")


def _too_many(path: str, n: int, limit: int):
    _fail(path, f"Too many: {n}: must have at most {limit} items")


def _dns_label(value: str, path: str) -> None:
    """ValidateDNS1123Label (request, device and counter names)."""
    if len(value) > 63:
        _invalid(path, value, "must be no more than 63 characters")
    if not _DNS1123_LABEL.fullmatch(value):
        _invalid(path, value, "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                 "characters or '-', and must start and end with an alphanumeric character (e.g. "
                 "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")


def _subdomain(value: str, path: str) -> None:
    for msg in is_dns1123_subdomain(value):
        _invalid(path, value, msg)


def _driver_name(value: str, path: str) -> None:
    """ValidateCSIDriverName."""
    if not value:
        _required(path)
    if len(value) > DRIVER_NAME_MAX:
        _too_long(path, DRIVER_NAME_MAX)
    for msg in is_dns1123_subdomain(value.lower()):
        _invalid(path, value, msg)


def _c_identifier(value: str, path: str) -> None:
    if len(value) > DEVICE_MAX_ID:
        _too_long(path, DEVICE_MAX_ID)
    if not _C_IDENTIFIER.fullmatch(value):
        _invalid(path, value, "a valid C identifier must start with alphabetic character or '_', followed "
                 "by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or "
                 "'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')")


def _qualified_name(name: Any, path: str) -> None:
    """validateQualifiedName: an attribute or capacity name, `id` or `domain/id`."""
    if not isinstance(name, str):
        _wrong_type(path, "a string", name)
    if not name:
        _required(path, "name required")
    parts = name.split("/")
    if len(parts) == 1:
        _c_identifier(parts[0], path)
    elif len(parts) == 2:
        if not parts[0]:
            _required(path, "the domain must not be empty")
        _driver_name(parts[0], path)
        if not parts[1]:
            _required(path, "the name must not be empty")
        _c_identifier(parts[1], path)


def _fully_qualified_name(name: str, path: str) -> None:
    _qualified_name(name, path)
    if "/" not in name:
        _invalid(path, name, "must include a domain")


def _key_path(path: str, key: str) -> str:
    """field.Path.Key, the key cut in the middle past 16 characters... as truncateIfTooLong."""
    limit = max(DEVICE_MAX_DOMAIN + 1 + DEVICE_MAX_ID, 16)
    if len(key) > limit:
        rest = limit - 3
        key = key[:(rest + 1) // 2] + "..." + key[len(key) - rest // 2:]
    return f"{path}[{key}]"


# -- CEL and opaque configuration ---------------------------------------------------------------
def _cel_selector(sel: Mapping, path: str) -> None:
    """validateSelector / validateCELSelector."""
    if sel.get("cel") is None:
        _required(f"{path}.cel")
    cel = _map(sel, "cel", path)
    expr = _str(cel, "expression", f"{path}.cel")
    ep = f"{path}.cel.expression"
    if len(expr.encode()) > CEL_MAX_LENGTH:
        _too_long(ep, CEL_MAX_LENGTH)
    # the DynamicResources plugin's own CEL (cel-python underneath); compiled once per text
    from harness.api.dra_cel import compile_expression, estimate_cost

    result = compile_expression(expr)
    if result.error is not None:
        if not expr.strip():
            _required(ep, "expression must not be empty")
        detail = result.error
        _invalid(ep, expr, detail)
    if estimate_cost(expr) > CEL_MAX_COST:
        _fail(ep, "Forbidden: too complex, exceeds cost limit")


def _selectors(obj: Mapping, path: str) -> None:
    sels = _maps(obj, "selectors", path)
    for p, sel in sels:
        _cel_selector(sel, p)
    if len(sels) > DEVICE_SELECTORS_MAX:
        _too_many(f"{path}.selectors", len(sels), DEVICE_SELECTORS_MAX)


def _opaque_config(cfg: Mapping, path: str) -> None:
    """validateDeviceConfiguration / validateOpaqueConfiguration / validateRawExtension."""
    if cfg.get("opaque") is None:
        _required(f"{path}.opaque")
    op = _map(cfg, "opaque", path)
    opp = f"{path}.opaque"
    _driver_name(_str(op, "driver", opp), f"{opp}.driver")
    params = op.get("parameters")
    pp = f"{opp}.parameters"
    if params is None:
        _required(pp)
    try:
        raw = json.dumps(params, separators=(",", ":"))
    except (TypeError, ValueError):
        raw = ""
    if len(raw) > OPAQUE_PARAMETERS_MAX:
        _too_long(pp, OPAQUE_PARAMETERS_MAX)
    if not isinstance(params, dict):
        _invalid(pp, "<value omitted>", "must be a valid JSON object")


def _config_list(obj: Mapping, path: str, request_names: Set[str] = None) -> None:
    items = _maps(obj, "config", path)
    for p, cfg in items:
        if request_names is not None:
            _request_refs(cfg, p, request_names)
        _opaque_config(cfg, p)
    if len(items) > DEVICE_CONFIG_MAX:
        _too_many(f"{path}.config", len(items), DEVICE_CONFIG_MAX)


# -- DeviceClass ----------------------------------------------------------------------------------
def device_class(obj: Mapping, features=None) -> None:
    """ValidateDeviceClass."""
    spec = _map(obj, "spec", "")
    _selectors(spec, "spec")
    _config_list(spec, "spec")
    ern = spec.get("extendedResourceName")
    if ern is not None and not (isinstance(ern, str) and is_extended_resource_name(ern)):
        _invalid("spec.extendedResourceName", ern, "must be a valid extended resource name")


# -- ResourceClaim(Template) ----------------------------------------------------------------------
def _allocation_mode(req: Mapping, path: str) -> None:
    """validateDeviceAllocationMode (after defaulting: ExactCount, count 1)."""
    mode = req.get("allocationMode", "ExactCount")
    count = _int(req, "count", path, 64)
    if mode == "All":
        if count:
            _invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'")
    elif mode == "ExactCount":
        if count is None:
            count = 1
        if count <= 0:
            _invalid(f"{path}.count", count, "must be greater than zero")
    else:
        _unsupported(f"{path}.allocationMode", mode, ["All", "ExactCount"])


def _device_toleration(t: Mapping, path: str) -> None:
    """validateDeviceToleration."""
    key = _str(t, "key", path)
    if key:
        _label_name(key, f"{path}.key")
    op = _str(t, "operator", path) or "Equal"  # defaulted to Equal
    value = _str(t, "value", path)
    if op == "Exists":
        if value:
            _invalid(f"{path}.value", value, "must be empty for operator `Exists`")
    elif op == "Equal":
        for msg in is_valid_label_value(value):
            _invalid(f"{path}.value", value, msg)
    else:
        _unsupported(f"{path}.operator", op, ["Equal", "Exists"])
    effect = _str(t, "effect", path)
    if effect and effect not in _TAINT_EFFECTS:
        _unsupported(f"{path}.effect", effect, _TAINT_EFFECTS)
    _int(t, "tolerationSeconds", path, 64)


def _class_ref(req: Mapping, path: str) -> None:
    name = _str(req, "deviceClassName", path)
    if not name:
        _required(f"{path}.deviceClassName")
    _subdomain(name, f"{path}.deviceClassName")


def _exact_or_sub(req: Mapping, path: str) -> None:
    """validateExactDeviceRequest / validateDeviceSubRequest (shared part)."""
    _class_ref(req, path)
    _selectors(req, path)
    _allocation_mode(req, path)
    for p, t in _maps(req, "tolerations", path):
        _device_toleration(t, p)
    _bool(req, "adminAccess", path)
    # capacity.requests: quantities (decoded; no other validation)
    cap = _map(req, "capacity", path)
    for k, v in _map(cap, "requests", f"{path}.capacity").items():
        _quantity(v, _key_path(f"{path}.capacity.requests", str(k)))


def _request_names(devices: Mapping) -> Set[str]:
    """gatherRequestNames: each request, and request/subrequest for firstAvailable."""
    names: Set[str] = set()
    for req in devices.get("requests") or []:
        if not isinstance(req, dict):
            continue
        name = req.get("name")
        if not isinstance(name, str):
            continue
        names.add(name)
        for sub in req.get("firstAvailable") or []:
            if isinstance(sub, dict) and isinstance(sub.get("name"), str):
                names.add(f"{name}/{sub['name']}")
    return names


def _no_duplicates(entries, show=None) -> None:
    """The first (path, value) whose value came before is `Duplicate value` at its path (the
    value as `show` words it)."""
    seen = set()
    for path, value in entries:
        if value in seen:
            _duplicate(path, show(value) if show else value)
        seen.add(value)


def _request_refs(obj: Mapping, path: str, names: Set[str]) -> None:
    """validateRequestNameRef over a set of names (duplicates refused)."""
    refs = _strs(obj, "requests", path)
    for i, name in enumerate(refs):
        p = f"{path}.requests[{i}]"
        segments = name.split("/")
        msg = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
        if len(segments) > 2:
            _invalid(p, name, msg)
        for seg in segments:
            _dns_label(seg, p)
        if name not in names:
            _invalid(p, name, msg)
    _no_duplicates((f"{path}.requests[{i}]", name) for i, name in enumerate(refs))
    if len(refs) > DEVICE_REQUESTS_MAX:
        _too_many(f"{path}.requests", len(refs), DEVICE_REQUESTS_MAX)


def claim_spec(spec: Mapping, path: str, features=None) -> None:
    """validateResourceClaimSpec / validateDeviceClaim."""
    devices = _map(spec, "devices", path)
    dp = f"{path}.devices"
    names = _request_names(devices)
    reqs = _maps(devices, "requests", dp)
    for rp, req in reqs:
        _dns_label(_str(req, "name", rp), f"{rp}.name")
        kinds = 0
        subs = _maps(req, "firstAvailable", rp)
        if subs:
            kinds += 1
            for sp, sub in subs:
                sname = _str(sub, "name", sp)
                _dns_label(sname, f"{sp}.name")
                _exact_or_sub(sub, sp)
            _no_duplicates((f"{sp}.name", sub.get("name")) for sp, sub in subs)
            if len(subs) > FIRST_AVAILABLE_MAX:
                _too_many(f"{rp}.firstAvailable", len(subs), FIRST_AVAILABLE_MAX)
        if req.get("exactly") is not None:
            kinds += 1
            _exact_or_sub(_map(req, "exactly", rp), f"{rp}.exactly")
        if kinds == 0:
            _required(rp, "exactly one of `exactly` or `firstAvailable` is required")
        if kinds > 1:
            _invalid(rp, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set")
    _no_duplicates((f"{rp}.name", req.get("name")) for rp, req in reqs)
    if len(reqs) > DEVICE_REQUESTS_MAX:
        _too_many(f"{dp}.requests", len(reqs), DEVICE_REQUESTS_MAX)
    cons = _maps(devices, "constraints", dp)
    for cp, c in cons:
        _request_refs(c, cp, names)
        if c.get("matchAttribute") is not None:
            _fully_qualified_name(_str(c, "matchAttribute", cp), f"{cp}.matchAttribute")
        elif c.get("distinctAttribute") is not None:
            _fully_qualified_name(_str(c, "distinctAttribute", cp), f"{cp}.distinctAttribute")
        elif _consumable(features):
            _required(cp, 'exactly one of "matchAttribute" or "distinctAttribute" is required, '
                          'but multiple fields are set')
        else:
            _required(f"{cp}.matchAttribute")
    if len(cons) > DEVICE_CONSTRAINTS_MAX:
        _too_many(f"{dp}.constraints", len(cons), DEVICE_CONSTRAINTS_MAX)
    _config_list(devices, dp, names)


def _consumable(features) -> bool:
    if features is None:
        from ..versions import DEFAULT as features
    return features.enabled("DRAConsumableCapacity")


def resource_claim(obj: Mapping, features=None) -> None:
    """ValidateResourceClaim; the status's allocation results' shareIDs (validateUID)."""
    claim_spec(_map(obj, "spec", ""), "spec", features)
    status = obj.get("status")
    alloc = status.get("allocation") if isinstance(status, dict) else None
    results = ((alloc.get("devices") or {}).get("results") or []) if isinstance(alloc, dict) else []
    for i, r in enumerate(results):
        if isinstance(r, dict) and r.get("shareID") is not None:
            _uid(r["shareID"], f"status.allocation.devices.results[{i}].shareID")
        for k, v in (_map(r, "consumedCapacity", f"status.allocation.devices.results[{i}]")
                     if isinstance(r, dict) else {}).items():
            _quantity(v, _key_path(f"status.allocation.devices.results[{i}].consumedCapacity", str(k)))


_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")


def _uid(uid: Any, path: str) -> None:
    """validateUID: a UUID, in its normalized form (36 characters, lowercase)."""
    text = uid if isinstance(uid, str) else str(uid)
    if not _UUID.match(text.strip("{}").removeprefix("urn:uuid:")):
        _invalid(path, text, f"error validating uid: invalid UUID length: {len(text)}"
                 if len(text) not in (32, 36, 38, 45) else "error validating uid: invalid UUID format")
    if len(text) != 36 or text != text.lower():
        _invalid(path, text, "uid must be in RFC 4122 normalized form, "
                 "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters")


def resource_claim_template(obj: Mapping, features=None) -> None:
    """ValidateResourceClaimTemplate."""
    spec = _map(obj, "spec", "")
    claim_spec(_map(spec, "spec", "spec"), "spec.spec", features)


# -- ResourceSlice ---------------------------------------------------------------------------------
def _attribute(attr: Any, path: str) -> None:
    """validateDeviceAttribute."""
    if not isinstance(attr, dict):
        _wrong_type(path, "a mapping (one of int, bool, string, version)", attr)
    n = 0
    if attr.get("bool") is not None:
        n += 1
        _bool(attr, "bool", path)
    if attr.get("int") is not None:
        n += 1
        _int(attr, "int", path, 64)
    if attr.get("string") is not None:
        n += 1
        if len(_str(attr, "string", path).encode()) > ATTRIBUTE_MAX_VALUE:
            _too_long(f"{path}.string", ATTRIBUTE_MAX_VALUE)
    if attr.get("version") is not None:
        n += 1
        v = _str(attr, "version", path)
        if not _SEMVER.match(v):
            _invalid(f"{path}.version", v, "must be a string compatible with semver.org spec 2.0.0")
        if len(v.encode()) > ATTRIBUTE_MAX_VALUE:
            _too_long(f"{path}.version", ATTRIBUTE_MAX_VALUE)
    if n == 0:
        _required(path, "exactly one value must be specified")
    if n > 1:
        _invalid(path, attr, "exactly one value must be specified")


def _device(dev: Mapping, path: str, counter_sets: Dict[str, Set[str]], per_device: bool,
            features=None) -> None:
    """validateDevice (after dropDisabledFields: the binding conditions of a version whose
    DRADeviceBindingConditions is off are dropped before validation, their Go types checked)."""
    _dns_label(_str(dev, "name", path), f"{path}.name")
    attrs = _map(dev, "attributes", path)
    caps = _map(dev, "capacity", path)
    if len(attrs) + len(caps) > MAX_ATTRIBUTES_AND_CAPACITIES:
        _invalid(path, len(attrs) + len(caps), "the total number of attributes and capacities must "
                 f"not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}")
    for k, v in attrs.items():
        kp = _key_path(f"{path}.attributes", str(k))
        _qualified_name(k, kp)
        _attribute(v, kp)
    _bool(dev, "allowMultipleAllocations", path)
    for k, v in caps.items():
        kp = _key_path(f"{path}.capacity", str(k))
        _qualified_name(k, kp)
        if not isinstance(v, dict):
            _wrong_type(kp, "a mapping with value", v)
        if v.get("value") is None:
            _required(f"{kp}.value")
        _quantity(v.get("value"), f"{kp}.value")
        if v.get("requestPolicy") is not None:
            if not dev.get("allowMultipleAllocations"):
                _fail(f"{kp}.requestPolicy", "Forbidden: allowMultipleAllocations must be true")
            _request_policy(v.get("value"), _map(v, "requestPolicy", kp), f"{kp}.requestPolicy")
    taints = _maps(dev, "taints", path)
    for tp, t in taints:
        key = _str(t, "key", tp)
        _label_name(key, f"{tp}.key")
        value = _str(t, "value", tp)
        if value:
            for msg in is_valid_label_value(value):
                _invalid(f"{tp}.value", value, msg)
        effect = _str(t, "effect", tp)
        if not effect:
            _required(f"{tp}.effect")
        if effect not in _TAINT_EFFECTS:
            _unsupported(f"{tp}.effect", effect, _TAINT_EFFECTS)
        _time(t, "timeAdded", tp)
    if len(taints) > DEVICE_TAINTS_MAX:
        _too_many(f"{path}.taints", len(taints), DEVICE_TAINTS_MAX)
    consumes = _maps(dev, "consumesCounters", path)
    if len(consumes) > COUNTER_CONSUMPTIONS_MAX:
        _too_many(f"{path}.consumesCounters", len(consumes), COUNTER_CONSUMPTIONS_MAX)
    for cp, c in consumes:
        cs = _str(c, "counterSet", cp)
        if not cs:
            _required(f"{cp}.counterSet")
        _dns_label(cs, f"{cp}.counterSet")
        counters = _map(c, "counters", cp)
        if not counters:
            _required(f"{cp}.counters")
        for k, v in counters.items():
            kp = _key_path(f"{cp}.counters", str(k))
            _dns_label(str(k), kp)
            if not isinstance(v, dict):
                _wrong_type(kp, "a mapping with value", v)
            _quantity(v.get("value"), f"{kp}.value")
    _no_duplicates((f"{cp}", c.get("counterSet")) for cp, c in consumes)
        # whether counterSet names a set of this slice is not checked: DRAPartitionableDevices is
        # off in v1.34 (the API server drops the field) and v1.36 puts counter sets in their own slices
    given = [f for f in ("nodeName", "nodeSelector", "allNodes") if dev.get(f) is not None]
    if not per_device and given:
        _invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                 "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
    placed = []
    if per_device:
        if dev.get("nodeName") is not None:
            nn = _str(dev, "nodeName", path)
            if not nn:
                _invalid(f"{path}.nodeName", nn, "must not be empty")
            placed.append("nodeName")
            _subdomain(nn, f"{path}.nodeName")
        if dev.get("nodeSelector") is not None:
            placed.append("nodeSelector")
            sel = _map(dev, "nodeSelector", path)
            terms = _maps(sel, "nodeSelectorTerms", f"{path}.nodeSelector")
            if not terms:
                _required(f"{path}.nodeSelector.nodeSelectorTerms", "must have at least one node selector term")
            for tp, term in terms:
                _node_selector_term(term, tp, False)
        if dev.get("allNodes") is not None:
            if _bool(dev, "allNodes", path):
                placed.append("allNodes")
            else:
                _invalid(f"{path}.allNodes", False, "must be either unset or set to true")
    if per_device and len(placed) != 1:
        msg = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
               "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
        if not placed:
            _required(path, msg)
        _invalid(path, "{" + ", ".join(f"`{p}`" for p in placed) + "}", msg)
    _binding_conditions(dev, path, features)


def _binding_conditions(dev: Mapping, path: str, features=None) -> None:
    """validateDeviceBindingParameters."""
    conds = _strs(dev, "bindingConditions", path)
    fails = _strs(dev, "bindingFailureConditions", path)
    if features is None:
        from ..versions import DEFAULT as features
    if not (features.get("DRADeviceBindingConditions", False) and features.get("DRAResourceClaimDeviceStatus", False)):
        return  # dropped (harness/case/dra_fields.py)
    for key, items in (("bindingConditions", conds), ("bindingFailureConditions", fails)):
        if len(items) > BINDING_CONDITIONS_MAX:
            _too_many(f"{path}.{key}", len(items), BINDING_CONDITIONS_MAX)
        for i, c in enumerate(items):
            _label_name(c, f"{path}.{key}[{i}]")
    _no_duplicates((f"{path}.bindingConditions[{i}]", c) for i, c in enumerate(conds))
    _no_duplicates((f"{path}.bindingFailureConditions[{i}]", c) for i, c in enumerate(fails))
    for i, c in enumerate(fails):
        if c in conds:
            _invalid(f"{path}.bindingFailureConditions[{i}]", c,
                     "bindingFailureConditions must not overlap with bindingConditions")
    if not conds and fails:
        _invalid(f"{path}.bindingConditions", conds, "bindingConditions are required to use bindingFailureConditions")
    if not fails and conds:
        _invalid(f"{path}.bindingFailureConditions", fails, "bindingFailureConditions are required to use bindingConditions")


def _qstr(raw: Any) -> str:
    """Quantity.String of a manifest's quantity."""
    from .quantity import parse_q
    return str(parse_q(raw))


def _ival(raw: Any) -> int:
    """Quantity.Value (rounded up)."""
    from .quantity import value
    return value(raw)


def _request_policy(max_raw: Any, policy: Mapping, path: str) -> None:
    """validateRequestPolicy (validValues or validRange, with a default; within the capacity)."""
    vals = policy.get("validValues") or []
    if vals and policy.get("validRange") is not None:
        _fail(path, 'Forbidden: exactly one policy can be specified, cannot specify "validValues" and '
                    '"validRange" at the same time')
    cap = _quantity(max_raw, f"{path}.value") if max_raw is not None else None
    default = policy.get("default")
    dq = _quantity(default, f"{path}.default") if default is not None else None
    if vals:
        if default is None:
            _required(f"{path}.default", "required when validValues is defined")
        vp = f"{path}.validValues"
        if not isinstance(vals, list):
            _wrong_type(vp, "a list of quantities", vals)
        qs = [_quantity(v, f"{vp}[{i}]") for i, v in enumerate(vals)]
        for i in range(len(qs) - 1):
            if qs[i] > qs[i + 1]:
                _invalid(f"{vp}[{i + 1}]", _qstr(vals[i + 1]), "values must be sorted in ascending order")
        if len(qs) > CAPACITY_VALID_VALUES_MAX:
            _too_many(vp, len(qs), CAPACITY_VALID_VALUES_MAX)
        for i, q in enumerate(qs):
            if cap is not None and q > cap:
                _invalid(f"{vp}[{i}]", _qstr(vals[i]), f"option is larger than capacity value: {_qstr(max_raw)}")
        _no_duplicates(((f"{vp}[{i}]", _ival(v)) for i, v in enumerate(vals)), show=str)
        if dq not in qs:
            _invalid(vp, _qstr(default), "default value is not valid according to the requestPolicy")
        return
    rng = policy.get("validRange")
    if rng is None:
        return
    rp = f"{path}.validRange"
    rng = _map(policy, "validRange", path)
    if default is None:
        _required(f"{path}.default", "required when validRange is defined")
    if rng.get("min") is None:
        _required(f"{rp}.min", "required when validRange is defined")
    lo = _quantity(rng["min"], f"{rp}.min")
    if cap is not None and lo > cap:
        _invalid(f"{rp}.min", _qstr(rng["min"]), f"min is larger than capacity value: {_qstr(max_raw)}")
    if dq < lo:
        _invalid(f"{rp}.min", _qstr(default), f"default is less than min: {_qstr(rng['min'])}")
    if rng.get("max") is not None:
        hi = _quantity(rng["max"], f"{rp}.max")
        if lo > hi:
            _invalid(f"{rp}.max", _qstr(rng["min"]), f"min is larger than max: {_qstr(rng['max'])}")
        if cap is not None and hi > cap:
            _invalid(f"{rp}.max", _qstr(rng["max"]), f"max is larger than capacity value: {_qstr(max_raw)}")
        if dq > hi:
            _invalid(f"{rp}.max", _qstr(default), f"default is more than max: {_qstr(rng['max'])}")
    if rng.get("step") is not None:
        step = _quantity(rng["step"], f"{rp}.step")
        if step == 0:
            # validateRequestPolicyRangeStep takes the remainder by step.Value(): Go panics on
            # zero, and the API server answers 500 (an internal error), never storing the slice
            _invalid(f"{rp}.step", _qstr(rng["step"]), "the API server fails on a zero step "
                     "(integer divide by zero in validateRequestPolicyRangeStep)")
        if cap is not None and lo + step > cap:
            from .quantity import Q, parse_q
            one = str(Q(lo + step, parse_q(rng["min"]).fmt))
            _invalid(f"{rp}.step", _qstr(rng["step"]), f"one step {one} is larger than capacity value: {_qstr(max_raw)}")
        for raw in [default] + ([rng["max"]] if rng.get("max") is not None else []):
            sv = _ival(rng["step"])
            if sv and _go_rem(_ival(raw) - _ival(rng["min"]), sv) != 0:
                _invalid(f"{rp}.step", _qstr(raw), f"value is not a multiple of a given step "
                         f"({_qstr(rng['step'])}) from ({_qstr(rng['min'])})")


def _go_rem(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return a - b * (q if (a < 0) == (b < 0) else -q)


def resource_slice(obj: Mapping, features=None) -> None:
    """ValidateResourceSlice."""
    spec = _map(obj, "spec", "")
    _driver_name(_str(spec, "driver", "spec"), "spec.driver")
    pool = _map(spec, "pool", "spec")
    pname = _str(pool, "name", "spec.pool")
    if not pname:
        _required("spec.pool.name")
    if len(pname) > POOL_NAME_MAX:
        _too_long("spec.pool.name", POOL_NAME_MAX)
    for part in pname.split("/"):
        _subdomain(part, "spec.pool.name")
    count = _int(pool, "resourceSliceCount", "spec.pool", 64) or 0
    if count <= 0:
        _invalid("spec.pool.resourceSliceCount", count, "must be greater than zero")
    gen = _int(pool, "generation", "spec.pool", 64) or 0
    if gen < 0:
        _invalid("spec.pool.generation", gen, "must be greater than or equal to zero")
    placed = []
    if spec.get("nodeName") is not None:
        nn = _str(spec, "nodeName", "spec")
        if not nn:
            _invalid("spec.nodeName", nn, "must be either unset or set to a non-empty string")
        placed.append("`nodeName`")
        _subdomain(nn, "spec.nodeName")
    if spec.get("nodeSelector") is not None:
        placed.append("`nodeSelector`")
        sel = _map(spec, "nodeSelector", "spec")
        terms = _maps(sel, "nodeSelectorTerms", "spec.nodeSelector")
        for tp, term in terms:
            _node_selector_term(term, tp, False)
        if len(terms) != 1:
            _invalid("spec.nodeSelector.nodeSelectorTerms", [t for _, t in terms],
                     "must have exactly one node selector term")
    for flag in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(flag) is not None:
            if _bool(spec, flag, "spec"):
                placed.append(f"`{flag}`")
            else:
                _invalid(f"spec.{flag}", False, "must be either unset or set to true")
    msg = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    if not placed:
        _required("spec", msg)
    if len(placed) > 1:
        _invalid("spec", "{" + ", ".join(placed) + "}", msg + ", but multiple fields are set")
    counter_sets: Dict[str, Set[str]] = {}
    for cp, cs in _maps(spec, "sharedCounters", "spec"):
        name = _str(cs, "name", cp)
        if not name:
            _required(f"{cp}.name")
        _dns_label(name, f"{cp}.name")
        counters = _map(cs, "counters", cp)
        if not counters:
            _required(f"{cp}.counters")
        for k, v in counters.items():
            kp = _key_path(f"{cp}.counters", str(k))
            _dns_label(str(k), kp)
            _quantity((v or {}).get("value") if isinstance(v, dict) else v, f"{kp}.value")
        if name in counter_sets:
            _duplicate(f"{cp}.name", name)
        counter_sets[name] = set(counters)
    devices = _maps(spec, "devices", "spec")
    per_device = bool(spec.get("perDeviceNodeSelection"))
    for dp, dev in devices:
        _device(dev, dp, counter_sets, per_device, features)
    _no_duplicates((f"{dp}.name", dev.get("name")) for dp, dev in devices)
    if len(devices) > RESOURCE_SLICE_MAX_DEVICES:
        _too_many("spec.devices", len(devices), RESOURCE_SLICE_MAX_DEVICES)


BY_KIND = {"DeviceClass": device_class, "ResourceSlice": resource_slice,
           "ResourceClaim": resource_claim, "ResourceClaimTemplate": resource_claim_template}

__all__ = ["BY_KIND", "claim_spec"]
