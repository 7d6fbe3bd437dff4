"""field.Error as kube-scheduler's configuration validation prints it: a value rendered as Go
renders it, Invalid / Required / Duplicate, a path joined, the errors joined as
utilerrors.Aggregate prints them (k8s.io/apimachinery/pkg/util/validation/field/errors.go,
util/errors). Errors are (field path, message) pairs."""

from __future__ import annotations

import json
from typing import Any, List, Sequence, Tuple

FieldError = Tuple[str, str]


def _go_quote(s: str) -> str:
    """Go's %q for a string (close enough: printable non-ASCII is kept, as Go does)."""
    return json.dumps(s, ensure_ascii=False)


def _go_json(v: Any) -> str:
    """encoding/json.Marshal: compact, map keys sorted, <, > and & escaped."""
    out = json.dumps(v, ensure_ascii=False, separators=(",", ":"), sort_keys=isinstance(v, dict))
    return out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def go_value(v: Any) -> str:
    """How field.Error.ErrorBody renders a bad value: numbers and bools plainly, strings quoted,
    anything else as JSON."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return str(v)
    if isinstance(v, str):
        return _go_quote(v)
    return _go_json(v)


class _Raw:
    """A bad value that is printed as given (already rendered)."""

    def __init__(self, text: str):
        self.text = text


def _render(v: Any) -> str:
    return v.text if isinstance(v, _Raw) else go_value(v)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return (path, f"Invalid value: {_render(value)}: {detail}")


def required(path: str, detail: str = "") -> FieldError:
    return (path, "Required value" + (f": {detail}" if detail else ""))


def duplicate(path: str, value: Any) -> FieldError:
    return (path, f"Duplicate value: {_render(value)}")


def join_path(prefix: str, rel: str) -> str:
    """Append a relative field path (as a plugin's validate_args returns it) to a prefix."""
    if not rel:
        return prefix
    if not prefix:
        return rel
    if rel.startswith("["):
        return prefix + rel
    return f"{prefix}.{rel}"


def error_string(err: FieldError) -> str:
    path, msg = err
    return f"{path}: {msg}" if path else msg


def format_errors(errors: Sequence[FieldError]) -> str:
    """utilerrors.Aggregate.Error(): one error as is, several as "[a, b]" without repeats."""
    msgs: List[str] = []
    for e in errors:
        s = error_string(e)
        if s not in msgs:
            msgs.append(s)
    if not msgs:
        return ""
    if len(errors) == 1 or len(msgs) == 1:
        return msgs[0]
    return "[" + ", ".join(msgs) + "]"
