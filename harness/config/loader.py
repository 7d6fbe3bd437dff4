"""Loading a KubeSchedulerConfiguration file (what kube-scheduler reads with --config)."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from ..errors import ConfigError
from ..yamlfile import load_yaml_file
from ..versions import DEFAULT as DEFAULT_FEATURES, Features
from . import defaults
from .extenders import extender_config_errors

API_VERSION = "kubescheduler.config.k8s.io/v1"


def _raise_first(problems, source: str) -> None:
    if problems:
        key, msg = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ConfigError(msg + more, file=source, key=key or None)


def load_config_data(data: Any, registry: Mapping[str, type], source: str = "config",
                     features: Optional[Features] = None) -> Dict[str, Any]:
    """Decode (strictly), default and validate a KubeSchedulerConfiguration given as a mapping,
    in kube-scheduler's order: decoding errors, then validation, then the frameworks; as the
    kube-scheduler of ``features``' version (default: the newest modelled) does."""
    from . import validation

    features = features or DEFAULT_FEATURES
    _raise_first(validation.validate_schema(data), source)
    _raise_first(validation.validate_plugin_args_kinds(data, registry), source)
    _raise_first(validation.validate_plugin_args_fields(data, registry, features), source)
    cfg = defaults.set_defaults(validation.zero_nulls(data, registry), registry, features)
    _raise_first(validation.validate_kube_scheduler_configuration(cfg, registry, features=features), source)
    # scheduler.New: buildExtenders first
    _raise_first(extender_config_errors(cfg), source)
    _raise_first(validation.validate_frameworks(cfg, registry, features=features), source)
    return cfg


def load_config_file(path: str, registry: Mapping[str, type],
                     features: Optional[Features] = None) -> Dict[str, Any]:
    return load_config_data(load_yaml_file(path, ConfigError), registry, source=path, features=features)
