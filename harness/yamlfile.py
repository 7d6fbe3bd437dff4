"""Reading a YAML file with a clean one-line error."""

from __future__ import annotations

from typing import Any, Type

import yaml

from .errors import UserError


# libyaml's safe loader when PyYAML has it: the same documents, several times faster
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def load_yaml_file(path: str, error_cls: Type[UserError]) -> Any:
    """The document of the YAML file at `path` (yaml.safe_load). A file that cannot be read
    raises error_cls("cannot read: <reason>", file=path), a YAML syntax error
    error_cls("invalid YAML: <problem> (line L, column C)", file=path)."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
        if _FAST_LOADER is not None:
            try:
                return yaml.load(text, Loader=_FAST_LOADER)
            except yaml.YAMLError:
                pass  # the pure-Python loader below gives the error with its usual wording
        return yaml.safe_load(text)
    except OSError as e:
        raise error_cls(f"cannot read: {e.strerror}", file=path) from None
    except yaml.YAMLError as e:
        raise error_cls(f"invalid YAML: {_yaml_problem(e)}", file=path) from None


def _yaml_problem(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    if mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return problem
