"""An extender's answer decoded as Go's encoding/json decodes it into the structs of
k8s.io/kube-scheduler/extender/v1 (json.NewDecoder(resp.Body).Decode(result) in
pkg/scheduler/extender.go's send):

- the first JSON value of the body; what follows it is not read;
- object keys matched to struct fields by their json tag, exactly or else case-insensitively
  (`{"NodeNames": ...}` fills `nodenames`); unknown keys ignored; a key given twice: the last
  wins (a map is merged into);
- `null` leaves a field at its zero value (a pointer nil);
- a value of the wrong JSON type is Go's UnmarshalTypeError (`json: cannot unmarshal string into
  Go struct field ExtenderFilterResult.nodenames of type []string`), the first one reported after
  the whole value is decoded, the others' fields left at zero; an integer field refuses a
  fraction or exponent (`number 1.5`).

A type is a tuple: ("string",), ("int64",), ("bool",), ("raw",) (any JSON, kept as decoded: a
v1.Node), ("slice", elem, go), ("map", elem, go) (string keys), ("ptr", elem),
("struct", go, {tag: type}).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from ..config.decoding import _json_kind  # UnmarshalTypeError's Value: the JSON kind


class _Number(float):
    """A JSON number that was written with a fraction or an exponent (its text kept)."""

    text = ""


def _parse_float(text: str) -> _Number:
    n = _Number(float(text))
    n.text = text
    return n


def first_value(text: str) -> Tuple[Any, bool]:
    """(the first JSON value of text, True) or (None, False) when there is none; raises
    json.JSONDecodeError on a syntax error."""
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        return None, False
    value, _ = json.JSONDecoder(parse_float=_parse_float).raw_decode(stripped)
    return value, True


def go_type(t: Tuple) -> str:
    """reflect.Type.String() of a type."""
    kind = t[0]
    if kind in ("string", "int64", "bool"):
        return kind
    if kind == "ptr":
        return "*" + go_type(t[1])
    if kind in ("slice", "map", "struct"):
        return t[2] if kind != "struct" else t[1]
    return "interface {}"


class Decoder:
    """One Decode call: the first type error kept (Go's d.savedError), decoding goes on."""

    def __init__(self) -> None:
        self.error: Optional[str] = None
        self.struct = ""
        self.fields: List[str] = []

    def _fail(self, value: str, t: Tuple) -> None:
        if self.error is None:
            if self.struct or self.fields:
                self.error = (f"json: cannot unmarshal {value} into Go struct field "
                              f"{self.struct}.{'.'.join(self.fields)} of type {go_type(t)}")
            else:
                self.error = f"json: cannot unmarshal {value} into Go value of type {go_type(t)}"

    def decode(self, v: Any, t: Tuple, into: Any = None) -> Any:
        kind = t[0]
        if v is None:
            return into  # null: the zero value (or what is there) stays
        if kind == "raw":
            return v
        if kind == "ptr":
            return self.decode(v, t[1], into)
        if kind == "string":
            if isinstance(v, str):
                return v
            self._fail(_json_kind(v), t)
            return into
        if kind == "bool":
            if isinstance(v, bool):
                return v
            self._fail(_json_kind(v), t)
            return into
        if kind == "int64":
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                self._fail(_json_kind(v), t)
                return into
            if isinstance(v, float) or not -(1 << 63) <= v < (1 << 63):
                self._fail(f"number {getattr(v, 'text', '') or v}", t)
                return into
            return v
        if kind == "slice":
            if not isinstance(v, list):
                self._fail(_json_kind(v), t)
                return into
            return [self.decode(item, t[1]) for item in v]
        if kind == "map":
            if not isinstance(v, dict):
                self._fail(_json_kind(v), t)
                return into
            out = dict(into) if isinstance(into, dict) else {}
            for k, item in v.items():
                out[k] = self.decode(item, t[1], out.get(k))
            return out
        # struct
        if not isinstance(v, dict):
            self._fail(_json_kind(v), t)
            return into
        fields: Dict[str, Tuple] = t[2]
        folded = {name.lower(): name for name in fields}
        out = dict(into) if isinstance(into, dict) else {}
        outer_struct, outer_fields = self.struct, self.fields
        for k, item in v.items():
            name = k if k in fields else folded.get(k.lower())
            if name is None:
                continue  # an unknown field
            # errorContext: the innermost struct's name, the path of field names from the top
            self.struct, self.fields = t[1].rsplit(".", 1)[-1], outer_fields + [name]
            out[name] = self.decode(item, fields[name], out.get(name))
            self.struct, self.fields = outer_struct, outer_fields
        return out


def unmarshal(v: Any, t: Tuple) -> Tuple[Any, Optional[str]]:
    """(the value decoded into t, the first UnmarshalTypeError's text or None)."""
    d = Decoder()
    out = d.decode(v, t)
    return out, d.error


# k8s.io/kube-scheduler/extender/v1
STRING, INT64, RAW = ("string",), ("int64",), ("raw",)
FAILED_NODES_MAP = ("map", STRING, "v1.FailedNodesMap")
NODE_LIST = ("struct", "v1.NodeList", {"metadata": RAW, "items": ("slice", RAW, "[]v1.Node")})
EXTENDER_FILTER_RESULT = ("struct", "v1.ExtenderFilterResult", {
    "nodes": ("ptr", NODE_LIST), "nodenames": ("ptr", ("slice", STRING, "[]string")),
    "failedNodes": FAILED_NODES_MAP, "failedAndUnresolvableNodes": FAILED_NODES_MAP,
    "error": STRING})
HOST_PRIORITY_LIST = ("slice", ("struct", "v1.HostPriority", {"host": STRING, "score": INT64}),
                      "v1.HostPriorityList")
EXTENDER_BINDING_RESULT = ("struct", "v1.ExtenderBindingResult", {"error": STRING})
META_VICTIMS = ("struct", "v1.MetaVictims", {
    "pods": ("slice", ("ptr", ("struct", "v1.MetaPod", {"uid": STRING})), "[]*v1.MetaPod"),
    "numPDBViolations": INT64})
EXTENDER_PREEMPTION_RESULT = ("struct", "v1.ExtenderPreemptionResult", {
    "nodeNameToMetaVictims": ("map", ("ptr", META_VICTIMS), "map[string]*v1.MetaVictims")})

__all__ = ["EXTENDER_BINDING_RESULT", "EXTENDER_FILTER_RESULT", "EXTENDER_PREEMPTION_RESULT",
           "HOST_PRIORITY_LIST", "first_value", "go_type", "unmarshal"]
