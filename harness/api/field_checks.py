"""The strict decoding and field.Error helpers every object's validation uses: a field of its
Go type (a string where a string belongs, an integer where an integer belongs), field.Invalid /
Required / Duplicate / NotSupported worded as upstream words them (ObjectInvalid carries the
first), names and labels (apimachinery validation), metav1.Time, label and node selectors
(ValidateLabelSelector, ValidateNodeSelectorTerm). object_validation, dra_validation and
workload build on these; this module imports none of them."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import quantity
from .validation import is_dns1123_subdomain, is_qualified_name, is_valid_label_value

_DNS1123_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_IANA_RE = re.compile(r"[-a-z0-9]+")


class ObjectInvalid(Exception):
    """The first problem of an object: its field path (relative to the object) and the message."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def short_value(v: Any, limit: int = 60) -> str:
    """A value as Go's field.Error prints it (JSON), cut short."""
    try:
        s = json.dumps(v, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        s = repr(v)
    return s if len(s) <= limit else s[:limit] + "..."


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "mapping"
    return type(v).__name__


def _fail(path: str, message: str):
    raise ObjectInvalid(path, message)


def _invalid(path: str, value: Any, detail: str):
    _fail(path, f"Invalid value: {short_value(value)}: {detail}")


def _unsupported(path: str, value: Any, valid: Sequence[str]):
    _fail(path, f"Unsupported value: {short_value(value)}: supported values: "
          + ", ".join(f'"{v}"' for v in valid))


def _required(path: str, detail: str = ""):
    _fail(path, "Required value" + (f": {detail}" if detail else ""))


def _duplicate(path: str, value: Any):
    _fail(path, f"Duplicate value: {short_value(value)}")


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _describe(v: Any) -> str:
    """A value in a message: its JSON type and its text, cut short ("null" alone for null)."""
    if v is None or isinstance(v, bool):
        return short_value(v)
    return f"{_type_name(v)} {short_value(v, 40)}"


def _wrong_type(path: str, want: str, v: Any):
    _fail(path, f"must be {want}, got {_describe(v)}")


# -- strict decoding: the Go type of each field ------------------------------------------------
def _map(obj: Mapping, key: str, path: str) -> Dict[str, Any]:
    v = obj.get(key)
    if v is None:
        return {}
    if not isinstance(v, dict):
        _wrong_type(_child(path, key), "a mapping", v)
    return v


def _list(obj: Mapping, key: str, path: str) -> List[Any]:
    v = obj.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        _wrong_type(_child(path, key), "a list", v)
    return v


def _maps(obj: Mapping, key: str, path: str) -> List[Tuple[str, Dict[str, Any]]]:
    out = []
    for i, item in enumerate(_list(obj, key, path)):
        p = f"{_child(path, key)}[{i}]"
        if not isinstance(item, dict):
            _wrong_type(p, "a mapping", item)
        out.append((p, item))
    return out


def _str(obj: Mapping, key: str, path: str) -> str:
    v = obj.get(key)
    if v is None:
        return ""
    if not isinstance(v, str):
        _wrong_type(_child(path, key), "a string", v)
    return v


def _strs(obj: Mapping, key: str, path: str) -> List[str]:
    out = _list(obj, key, path)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            _wrong_type(f"{_child(path, key)}[{i}]", "a string", v)
    return out


def _str_map(obj: Mapping, key: str, path: str) -> Dict[str, str]:
    m = _map(obj, key, path)
    for k, v in m.items():
        if not isinstance(k, str):
            _wrong_type(_child(path, key), "a mapping with string keys", k)
        if not isinstance(v, str):
            _wrong_type(f"{_child(path, key)}.{k}", "a string", v)
    return m


def _int(obj: Mapping, key: str, path: str, bits: int = 32) -> Optional[int]:
    v = obj.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        else:
            _wrong_type(_child(path, key), f"an integer (int{bits})", v)
    lim = 2 ** (bits - 1)
    if not -lim <= v < lim:
        _invalid(_child(path, key), v, f"must fit in int{bits}")
    return v


def _bool(obj: Mapping, key: str, path: str) -> Optional[bool]:
    v = obj.get(key)
    if v is not None and not isinstance(v, bool):
        _wrong_type(_child(path, key), "true or false", v)
    return v


def _quantity(v: Any, path: str):
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        _wrong_type(path, "a quantity (a string such as \"500m\" or \"1Gi\", or a number)", v)
    try:
        return quantity.parse_quantity(v)
    except quantity.QuantityError:
        _fail(path, f"quantities must match the regular expression "
              f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {short_value(v, 40)}")


# -- names and labels (apimachinery validation) ------------------------------------------------
def _dns_label(value: str, path: str) -> None:
    """ValidateDNS1123Label."""
    if len(value.encode()) > 63:
        _invalid(path, value, "must be no more than 63 characters")
    if not _DNS1123_LABEL_RE.fullmatch(value):
        _invalid(path, value, "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                 "characters or '-', and must start and end with an alphanumeric character "
                 f"(e.g. 'my-name',  or '123-abc', regex used for validation is '{_DNS1123_LABEL_FMT}')")


def _dns_subdomain(value: str, path: str) -> None:
    for msg in is_dns1123_subdomain(value):
        _invalid(path, value, msg)


def _label_name(value: str, path: str) -> None:
    """unversionedvalidation.ValidateLabelName."""
    for msg in is_qualified_name(value):
        _invalid(path, value, msg)


def _labels(obj: Mapping, key: str, path: str) -> None:
    """unversionedvalidation.ValidateLabels (after strict decoding: values are strings)."""
    for k, v in _str_map(obj, key, path).items():
        _label_name(k, _child(path, key))
        for msg in is_valid_label_value(v):
            _invalid(_child(path, key), v, msg)


def _port_name(value: str, path: str) -> None:
    """validation.IsValidPortName (IANA_SVC_NAME)."""
    msgs = []
    if len(value) > 15:
        msgs.append("must be no more than 15 characters")
    if not _IANA_RE.fullmatch(value):
        msgs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in value:
        msgs.append("must not contain consecutive hyphens")
    if not re.search("[a-z]", value):
        msgs.append("must contain at least one letter (a-z)")
    if value.startswith("-") or value.endswith("-"):
        msgs.append("must not begin or end with a hyphen")
    if msgs:
        _invalid(path, value, msgs[0])


def _port_num(v: int, path: str) -> None:
    if not 1 <= v <= 65535:
        _invalid(path, v, "must be between 1 and 65535, inclusive")


_RFC3339_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def _time(obj: Mapping, key: str, path: str) -> None:
    """metav1.Time's UnmarshalJSON: null, or a string in RFC 3339 (time.RFC3339)."""
    v = obj.get(key)
    if v is None:
        return
    if not isinstance(v, str):
        _wrong_type(_child(path, key), "a time string (RFC 3339)", v)
    if not _RFC3339_RE.fullmatch(v):
        _invalid(_child(path, key), v, 'must be a time in RFC 3339 form ("2006-01-02T15:04:05Z07:00")')


# -- selectors ----------------------------------------------------------------------------------
def _label_selector(obj: Mapping, key: str, path: str, allow_invalid_values: bool = False) -> None:
    """unversionedvalidation.ValidateLabelSelector."""
    if obj.get(key) is None:
        return
    sel = _map(obj, key, path)
    p = _child(path, key)
    _labels(sel, "matchLabels", p) if not allow_invalid_values else _str_map(sel, "matchLabels", p)
    for ep, expr in _maps(sel, "matchExpressions", p):
        op = _str(expr, "operator", ep)
        values = _strs(expr, "values", ep)
        if op in ("In", "NotIn"):
            if not values:
                _required(_child(ep, "values"), "must be specified when `operator` is 'In' or 'NotIn'")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                _fail(_child(ep, "values"), "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        else:
            _invalid(_child(ep, "operator"), op, "not a valid selector operator")
        _label_name(_str(expr, "key", ep), _child(ep, "key"))
        if not allow_invalid_values:
            for i, v in enumerate(values):
                for msg in is_valid_label_value(v):
                    _invalid(f"{_child(ep, 'values')}[{i}]", v, msg)


def _node_selector_term(term: Mapping, path: str, allow_invalid_values: bool) -> None:
    """ValidateNodeSelectorTerm."""
    for ep, rq in _maps(term, "matchExpressions", path):
        op = _str(rq, "operator", ep)
        values = _strs(rq, "values", ep)
        if op in ("In", "NotIn"):
            if not values:
                _required(_child(ep, "values"), "must be specified when `operator` is 'In' or 'NotIn'")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                _fail(_child(ep, "values"), "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                _required(_child(ep, "values"), "must be specified single value when `operator` is 'Lt' or 'Gt'")
        else:
            _invalid(_child(ep, "operator"), op, "not a valid selector operator")
        _label_name(_str(rq, "key", ep), _child(ep, "key"))
        if not allow_invalid_values:
            for i, v in enumerate(values):
                for msg in is_valid_label_value(v):
                    _invalid(f"{_child(ep, 'values')}[{i}]", v, msg)
    for fp, rq in _maps(term, "matchFields", path):
        op = _str(rq, "operator", fp)
        values = _strs(rq, "values", fp)
        if op in ("In", "NotIn"):
            if len(values) != 1:
                _required(_child(fp, "values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector")
        else:
            _invalid(_child(fp, "operator"), op, "not a valid selector operator")
        key = _str(rq, "key", fp)
        if key != "metadata.name":
            _invalid(_child(fp, "key"), key, "not a valid field selector key")
        for i, v in enumerate(values):
            _dns_subdomain(v, f"{_child(fp, 'values')}[{i}]")
