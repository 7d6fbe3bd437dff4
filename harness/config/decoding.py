"""The strict decoding of a KubeSchedulerConfiguration (kube-scheduler's first step, before
defaulting and ValidateKubeSchedulerConfiguration): unknown or mis-cased fields, wrong JSON
types, apiVersion/kind, against harness/schemas/kubeschedulerconfiguration.schema.json; each
plugin's args decoded into its v1 type (types_pluginargs.go), and nulls zeroed as Go's decoder
leaves them. validation.py runs the rest."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional

from ..versions import Features
from ..errors import shown_key
from .field_errors import FieldError, _go_quote, join_path

API_VERSION = "kubescheduler.config.k8s.io/v1"
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "kubeschedulerconfiguration.schema.json"


# ---- 1. strict decoding (JSON schema) ---------------------------------------------------------

_SCHEMA_VALIDATOR = None


def _schema_validator():
    global _SCHEMA_VALIDATOR
    if _SCHEMA_VALIDATOR is None:
        import jsonschema

        with open(SCHEMA_PATH, encoding="utf-8") as f:
            schema = json.load(f)
        cls = jsonschema.validators.validator_for(schema)
        _SCHEMA_VALIDATOR = cls(schema)
    return _SCHEMA_VALIDATOR


def _schema_path(parts: Iterable[Any]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out = f"{out}.{p}" if out else str(p)
    return out


_JSON_TYPE = {"string": "string", "integer": "number", "number": "number", "boolean": "bool",
              "object": "object", "array": "array", "null": "null"}


def _json_kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def validate_schema(cfg: Any) -> List[FieldError]:
    """The strict v1 decoding of a configuration as the user wrote it: unknown fields are
    reported as ``unknown field "<path>"`` (sigs.k8s.io/json's wording), wrong types and
    apiVersion/kind as decoding errors. Plugin args are left to the plugins."""
    if not isinstance(cfg, dict):
        return [("", f"cannot decode {_json_kind(cfg)} as KubeSchedulerConfiguration: "
                     "expected an object")]
    errors: List[FieldError] = []
    validator = _schema_validator()
    for err in sorted(validator.iter_errors(cfg), key=lambda e: [str(p) for p in e.absolute_path]):
        path = _schema_path(err.absolute_path)
        if err.validator == "additionalProperties":
            known = set((err.schema.get("properties") or {}).keys())
            for key in err.instance:
                if key not in known:
                    errors.append((path, f"unknown field {_go_quote(shown_key(join_path(path, str(key))))}"))
        elif err.validator == "required":
            for key in [k for k in err.validator_value if k not in err.instance]:
                # runtime.NewMissingKindErr / NewMissingVersionErr
                errors.append((key, f"Object {'Kind' if key == 'kind' else key!r} is missing"))
        elif err.validator == "const":
            if path == "kind":
                version = cfg.get("apiVersion") or ""
                errors.append((path, f"no kind {_go_quote(str(err.instance))} is registered for "
                                     f"version {_go_quote(str(version))}"))
            else:
                errors.append((path, f"no kind \"KubeSchedulerConfiguration\" is registered for "
                                     f"version {_go_quote(str(err.instance))}"))
        elif err.validator == "type":
            want = err.validator_value
            want = [w for w in (want if isinstance(want, list) else [want]) if w != "null"]
            errors.append((path, f"cannot unmarshal {_json_kind(err.instance)} into a "
                                 f"{'/'.join(_JSON_TYPE.get(w, w) for w in want)} field"))
        elif err.validator == "pattern":
            errors.append((path, f"time: invalid duration {_go_quote(str(err.instance))}"))
        elif err.validator in ("minimum", "maximum"):
            errors.append((path, f"cannot unmarshal number {err.instance} into a field of its "
                                 f"integer size"))
        else:
            errors.append((path, err.message))
    return errors


def validate_plugin_args_kinds(cfg: Mapping[str, Any], registry: Mapping[str, type]) -> List[FieldError]:
    """PluginConfig.decodeNestedObjects: args of a plugin with an args kind that name another
    kind (``kind:``) or another API version are rejected. Run it on the configuration as written
    (defaulting strips apiVersion/kind from args)."""
    errors: List[FieldError] = []
    for i, prof in enumerate(cfg.get("profiles") or []):
        if not isinstance(prof, dict):
            continue
        for j, pc in enumerate(prof.get("pluginConfig") or []):
            if not isinstance(pc, dict):
                continue
            name = pc.get("name") or ""
            args = pc.get("args")
            cls = registry.get(name)
            kind_name = getattr(cls, "args_kind", None) if cls is not None else None
            if not kind_name or not isinstance(args, dict):
                continue
            path = f"profiles[{i}].pluginConfig[{j}]"
            api = args.get("apiVersion")
            kind = args.get("kind")
            group = API_VERSION.split("/")[0]
            if kind is not None and kind != kind_name:
                got_group = str(api).split("/")[0] if api else ""
                errors.append((path, f"decoding .profiles[{i}].pluginConfig[{j}]: args for plugin "
                                     f"{name} were not of type {kind_name}.{group}, got "
                                     f"{kind}.{got_group}"))
            elif api is not None and api != API_VERSION:
                errors.append((path, f"decoding .profiles[{i}].pluginConfig[{j}]: decoding args for "
                                     f"plugin {name}: no kind {_go_quote(kind_name)} is registered "
                                     f"for version {_go_quote(str(api))}"))
    return errors


# v1 args types (k8s.io/kube-scheduler/config/v1 types_pluginargs.go, types.go) as JSON shapes:
# "int32"/"int64"/"bool"/"string": a scalar; [t]: a list of t; {field: t}: an object with only
# these fields; ("map", t): an object with any keys and values of t.
_TYPE_META = ("apiVersion", "kind")
_RESOURCE_SPEC = {"name": "string", "weight": "int64"}
_SHAPE_POINT = {"utilization": "int32", "score": "int32"}
_LABEL_SELECTOR = {"matchLabels": ("map", "string"),
                   "matchExpressions": [{"key": "string", "operator": "string", "values": ["string"]}]}
_NODE_SELECTOR_REQ = {"key": "string", "operator": "string", "values": ["string"]}
_NODE_SELECTOR_TERM = {"matchExpressions": [_NODE_SELECTOR_REQ], "matchFields": [_NODE_SELECTOR_REQ]}
_SPREAD_CONSTRAINT = {"maxSkew": "int32", "topologyKey": "string", "whenUnsatisfiable": "string",
                      "labelSelector": _LABEL_SELECTOR, "minDomains": "int32", "nodeAffinityPolicy": "string",
                      "nodeTaintsPolicy": "string", "matchLabelKeys": ["string"]}
_ARGS_FIELDS: Dict[str, Dict[str, Any]] = {
    "DefaultPreemptionArgs": {"minCandidateNodesPercentage": "int32", "minCandidateNodesAbsolute": "int32"},
    "InterPodAffinityArgs": {"hardPodAffinityWeight": "int32", "ignorePreferredTermsOfExistingPods": "bool"},
    "NodeResourcesFitArgs": {"ignoredResources": ["string"], "ignoredResourceGroups": ["string"], "scoringStrategy": {
        "type": "string", "resources": [_RESOURCE_SPEC],
        "requestedToCapacityRatio": {"shape": [_SHAPE_POINT]}}},
    "PodTopologySpreadArgs": {"defaultConstraints": [_SPREAD_CONSTRAINT], "defaultingType": "string"},
    "NodeResourcesBalancedAllocationArgs": {"resources": [_RESOURCE_SPEC]},
    "VolumeBindingArgs": {"bindTimeoutSeconds": "int64", "shape": [_SHAPE_POINT]},
    "NodeAffinityArgs": {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_NODE_SELECTOR_TERM]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": "int32", "preference": _NODE_SELECTOR_TERM}]}},
    "DynamicResourcesArgs": {"filterTimeout": "string", "bindingTimeout": "string"},
}


def _args_shape(kind: str, features: Optional[Features]) -> Optional[Dict[str, Any]]:
    """The fields of an args kind in the version's kubescheduler.config.k8s.io/v1."""
    shape = _ARGS_FIELDS.get(kind)
    if shape is not None and kind == "DynamicResourcesArgs" and features is not None and not features.has("DynamicResourcesBindingTimeout"):
        shape = {k: v for k, v in shape.items() if k != "bindingTimeout"}  # v1.35 on
    return shape


def _decode_errors(value: Any, shape: Any, path: str) -> List[str]:
    """Strict JSON decoding of `value` into `shape`: unknown fields and wrong types (null is
    the zero value, as encoding/json takes it)."""
    if value is None:
        return []
    if isinstance(shape, str):
        if shape in ("int32", "int64"):
            ok = (isinstance(value, int) and not isinstance(value, bool)) or (
                isinstance(value, float) and value.is_integer())
            if ok and not -2 ** (int(shape[3:]) - 1) <= value < 2 ** (int(shape[3:]) - 1):
                ok = False
        elif shape == "bool":
            ok = isinstance(value, bool)
        else:
            ok = isinstance(value, str)
        return [] if ok else [f"cannot unmarshal {_json_kind(value)} into args field "
                              f"{_go_quote(path)} of type {shape}"]
    if isinstance(shape, list):
        if not isinstance(value, list):
            return [f"cannot unmarshal {_json_kind(value)} into args field {_go_quote(path)} of type array"]
        out: List[str] = []
        for i, item in enumerate(value):
            out += _decode_errors(item, shape[0], f"{path}[{i}]")
        return out
    if not isinstance(value, dict):
        return [f"cannot unmarshal {_json_kind(value)} into args field {_go_quote(path or 'args')} of type object"]
    out = []
    if isinstance(shape, tuple):  # ("map", t)
        for k, v in value.items():
            out += _decode_errors(v, shape[1], join_path(path, str(k)))
        return out
    for k, v in value.items():
        if k not in shape:
            out.append(f"strict decoding error: unknown field {_go_quote(join_path(path, str(k)))}")
        else:
            out += _decode_errors(v, shape[k], join_path(path, k))
    return out


def _drop_nulls(value: Any, shape: Any) -> Any:
    """`value` decoded as Go decodes JSON into `shape`: a null field is the zero value (left
    out, so that defaulting fills it), a null list item the zero value of the item."""
    if isinstance(shape, list) and isinstance(value, list):
        zero = {} if isinstance(shape[0], dict) else ("" if shape[0] == "string" else value)
        return [(_drop_nulls(v, shape[0]) if v is not None else zero) for v in value]
    if isinstance(shape, dict) and isinstance(value, dict):
        return {k: _drop_nulls(v, shape.get(k)) for k, v in value.items() if v is not None}
    return value


def zero_nulls(cfg: Dict[str, Any], registry: Mapping[str, type]) -> Dict[str, Any]:
    """A copy of a (schema-checked) configuration with nulls read as Go's zero values: a null
    profile, plugin or pluginConfig entry is an empty one, a null name is "", null args fields
    are left out."""
    cfg = copy.deepcopy(cfg)
    profiles = cfg.get("profiles")
    if isinstance(profiles, list):
        cfg["profiles"] = profiles = [p if p is not None else {} for p in profiles]
        for prof in profiles:
            if not isinstance(prof, dict):
                continue
            for point in (prof.get("plugins") or {}).values() if isinstance(prof.get("plugins"), dict) else []:
                if isinstance(point, dict):
                    for k in ("enabled", "disabled"):
                        if isinstance(point.get(k), list):
                            point[k] = [dict(e or {}, name=(e or {}).get("name") or "") if isinstance(e, dict) or e is None else e
                                        for e in point[k]]
            if isinstance(prof.get("pluginConfig"), list):
                pcs = []
                for pc in prof["pluginConfig"]:
                    pc = dict(pc or {}) if isinstance(pc, dict) or pc is None else pc
                    if isinstance(pc, dict):
                        pc["name"] = pc.get("name") or ""
                        cls = registry.get(pc["name"])
                        shape = _ARGS_FIELDS.get(getattr(cls, "args_kind", None) or "")
                        if shape is not None and isinstance(pc.get("args"), dict):
                            pc["args"] = _drop_nulls(pc["args"], dict(shape, apiVersion="string", kind="string"))
                    pcs.append(pc)
                prof["pluginConfig"] = pcs
    return cfg


def validate_plugin_args_fields(cfg: Mapping[str, Any], registry: Mapping[str, type],
                                features: Optional[Features] = None) -> List[FieldError]:
    """The strict decoding of in-tree plugins' args (decodeNestedObjects with the scheme's strict
    codec): an unknown field or a value of the wrong type is an error, as kube-scheduler refuses
    it."""
    errors: List[FieldError] = []
    for i, prof in enumerate(cfg.get("profiles") or []):
        if not isinstance(prof, dict):
            continue
        for j, pc in enumerate(prof.get("pluginConfig") or []):
            if not isinstance(pc, dict) or pc.get("args") is None:
                continue
            cls = registry.get(pc.get("name") or "") if isinstance(pc.get("name"), str) else None
            shape = _args_shape(getattr(cls, "args_kind", None) or "", features)
            if shape is None:
                continue
            args = pc["args"]
            if isinstance(args, dict):
                args = {k: v for k, v in args.items() if k not in _TYPE_META}
            for problem in _decode_errors(args, shape, ""):
                errors.append((f"profiles[{i}].pluginConfig[{j}].args",
                               f"decoding .profiles[{i}].pluginConfig[{j}]: {problem}"))
    return errors
