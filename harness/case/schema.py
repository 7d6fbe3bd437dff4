"""The case format's JSON schema (harness/schemas/case.schema.json) and how its errors are
worded: the loader, `decisions` and the steps check a case's shape with it. Imports nothing of
the case package (the loader, decisions and steps all import this)."""

from __future__ import annotations

import json
from importlib import resources
from ..api.field_checks import _describe as describe

_SCHEMA = None


def case_schema() -> dict:
    """The case schema, read once."""
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = json.loads(resources.files("harness").joinpath("schemas/case.schema.json").read_text())
    return _SCHEMA


def key_path(path) -> str:
    """A jsonschema error's path as a case key: `pods[2].spec`."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else ("." if out else "") + str(p)
    return out or "<root>"


def schema_message(e) -> str:
    """A jsonschema error worded without printing the whole offending instance."""
    v = e.validator
    if v == "additionalProperties":
        extra = [k for k in e.instance if k not in (e.schema.get("properties") or {})]
        return ", ".join(f'unknown key "{str(k)[:60]}"' for k in extra) or "unknown key"
    if v == "type":
        want = e.validator_value if isinstance(e.validator_value, list) else [e.validator_value]
        names = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "an integer",
                 "null": "null", "boolean": "true or false", "number": "a number"}
        return f"must be {' or '.join(names.get(w, w) for w in want)}, got {describe(e.instance)}"
    if v == "const":
        return f'must be "{e.validator_value}", got {describe(e.instance)}'
    if v == "required":
        return e.message if len(e.message) < 100 else "a required key is missing"
    if v in ("maximum", "minimum"):
        bound = "at most" if v == "maximum" else "at least"
        return f"must be {bound} {e.validator_value}, got {describe(e.instance)}"
    if v == "minLength":
        return "must not be empty"
    if v == "minItems":
        return "must not be an empty list"
    if v in ("anyOf", "oneOf"):
        want = e.schema.get("description") if isinstance(e.schema, dict) else None
        return f"invalid value: {describe(e.instance)}" + (f" (want {want})" if want else "")
    if v == "enum":
        return f"must be one of {', '.join(map(str, e.validator_value))}, got {describe(e.instance)}"
    msg = e.message
    return msg if len(msg) <= 160 else msg[:160] + "..."
