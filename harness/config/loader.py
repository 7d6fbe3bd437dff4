"""Loading a KubeSchedulerConfiguration file (what kube-scheduler reads with --config)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Dict, List, Mapping, Optional, Tuple

import yaml

from ..errors import ConfigError
from . import defaults

API_VERSION = "kubescheduler.config.k8s.io/v1"
_SCHEMA: Optional[dict] = None


def _schema() -> Optional[dict]:
    global _SCHEMA
    if _SCHEMA is None:
        try:
            text = resources.files("harness").joinpath("schemas/kubeschedulerconfiguration.schema.json").read_text()
        except (FileNotFoundError, AttributeError, OSError):
            return None
        _SCHEMA = json.loads(text)
    return _SCHEMA


def _path(error_path) -> str:
    out = ""
    for p in error_path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "<root>"


def structural_errors(data: Any) -> List[Tuple[str, str]]:
    """JSON Schema validation of the v1 structure (strict: unknown fields are errors)."""
    import jsonschema

    schema = _schema()
    if schema is None:
        return []
    validator = jsonschema.Draft202012Validator(schema) if "2020-12" in schema.get("$schema", "") \
        else jsonschema.Draft7Validator(schema)
    out = []
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        msg = err.message
        if err.validator == "additionalProperties":
            extra = [k for k in err.instance if k not in (err.schema.get("properties") or {})]
            msg = ", ".join(f'unknown field "{k}"' for k in extra) or msg
        out.append((_path(err.absolute_path), msg))
    return out


def load_config_data(data: Any, registry: Mapping[str, type], source: str = "config") -> Dict[str, Any]:
    """Validate and default a KubeSchedulerConfiguration given as a mapping."""
    if not isinstance(data, dict):
        raise ConfigError("a KubeSchedulerConfiguration must be a mapping", file=source)
    if data.get("apiVersion") != API_VERSION:
        raise ConfigError(f'apiVersion must be "{API_VERSION}", got {data.get("apiVersion")!r}',
                          file=source, key="apiVersion")
    if data.get("kind") != "KubeSchedulerConfiguration":
        raise ConfigError(f'kind must be "KubeSchedulerConfiguration", got {data.get("kind")!r}',
                          file=source, key="kind")
    errs = structural_errors(data)
    if errs:
        key, msg = errs[0]
        more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
        raise ConfigError(msg + more, file=source, key=key)
    cfg = defaults.set_defaults(data, registry)
    try:
        from . import validation
    except ImportError:  # pragma: no cover
        validation = None
    if validation is not None:
        problems = list(validation.validate_kube_scheduler_configuration(cfg, registry))
        if hasattr(validation, "validate_frameworks"):
            problems += list(validation.validate_frameworks(cfg, registry))
        if problems:
            key, msg = problems[0]
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise ConfigError(msg + more, file=source, key=key)
    return cfg


def load_config_file(path: str, registry: Mapping[str, type]) -> Dict[str, Any]:
    try:
        with open(path, "r", encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror}", file=path) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"invalid YAML: {_yaml_problem(e)}", file=path) from None
    return load_config_data(data, registry, source=path)


def _yaml_problem(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    if mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return problem
