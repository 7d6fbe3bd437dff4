"""NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs: v1 defaulting
(apis/config/v1/defaults.go) and validation (apis/config/validation/validation_pluginargs.go).

Args are dicts with the v1 JSON field names. Validation returns (field path, message) pairs; the
path is relative to the args and the message is field.Error's ErrorBody(), e.g.
("scoringStrategy.resources[0].weight",
 "Invalid value: 0: resource weight of cpu not in valid range (0, 100]").
"""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, List, Tuple

from harness.api.validation import is_qualified_name

from .requested_to_capacity_ratio import MAX_CUSTOM_PRIORITY_SCORE

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SUPPORTED_SCORING_STRATEGY_TYPES = sorted([LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO])

# defaultResourceSpec
DEFAULT_RESOURCE_SPEC: List[Dict[str, Any]] = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]

FieldError = Tuple[str, str]


# ---------------------------------------------------------------------------------------------
# Defaulting
# ---------------------------------------------------------------------------------------------
def set_defaults_node_resources_fit_args(args: Dict[str, Any]) -> Dict[str, Any]:
    """SetDefaults_NodeResourcesFitArgs: LeastAllocated over cpu and memory when no scoring
    strategy is given; the default resources when the strategy lists none; weight 0 -> 1."""
    args = copy.deepcopy(args) if args else {}
    if args.get("scoringStrategy") is None:
        args["scoringStrategy"] = {"type": LEAST_ALLOCATED, "resources": copy.deepcopy(DEFAULT_RESOURCE_SPEC)}
    ss = args["scoringStrategy"]
    if not ss.get("resources"):
        ss["resources"] = copy.deepcopy(DEFAULT_RESOURCE_SPEC)
    for r in ss["resources"]:
        if not r.get("weight"):
            r["weight"] = 1
    return args


def set_defaults_node_resources_balanced_allocation_args(args: Dict[str, Any]) -> Dict[str, Any]:
    """SetDefaults_NodeResourcesBalancedAllocationArgs: cpu and memory when no resources are
    given; weight 0 -> 1."""
    args = copy.deepcopy(args) if args else {}
    if not args.get("resources"):
        args["resources"] = copy.deepcopy(DEFAULT_RESOURCE_SPEC)
        return args
    for r in args["resources"]:
        if not r.get("weight"):
            r["weight"] = 1
    return args


# ---------------------------------------------------------------------------------------------
# field.Error bodies
# ---------------------------------------------------------------------------------------------
def _go_quote(s: str) -> str:
    """strconv.Quote (what %q prints for a string)."""
    out = ['"']
    esc = {'"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n",
           "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    for ch in s:
        if ch in esc:
            out.append(esc[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append("\\x%02x" % ord(ch))
        elif ord(ch) < 0x10000:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append("\\U%08x" % ord(ch))
    out.append('"')
    return "".join(out)


def _json_quote(s: str) -> str:
    """json.Marshal of a string (what field errors print for a named string type)."""
    return (json.dumps(s, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return _go_quote(v)
    return str(v)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return path, f"Invalid value: {_value(value)}: {detail}"


def _join(path: str, child: str) -> str:
    return f"{path}.{child}" if path else child


def validate_label_name(value: str, path: str) -> List[FieldError]:
    """metav1validation.ValidateLabelName (validation.IsQualifiedName)."""
    return [invalid(path, value, m) for m in is_qualified_name(value)]


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------
def validate_function_shape(shape: Any, path: str) -> List[FieldError]:
    """validateFunctionShape: at least one point, utilizations strictly increasing, utilization
    in [0, 100] and score in [0, 10]."""
    errs: List[FieldError] = []
    if not shape:
        return [(path, "Required value: at least one point must be specified")]
    for i in range(1, len(shape)):
        if int(shape[i - 1].get("utilization") or 0) >= int(shape[i].get("utilization") or 0):
            errs.append(invalid(f"{path}[{i}].utilization", int(shape[i].get("utilization") or 0),
                                "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        u = int(point.get("utilization") or 0)
        s = int(point.get("score") or 0)
        if u < 0 or u > 100:
            errs.append(invalid(f"{path}[{i}].utilization", u, "not in valid range [0, 100]"))
        if s < 0 or s > MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(invalid(f"{path}[{i}].score", s, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return errs


def validate_resources(resources: Any, path: str) -> List[FieldError]:
    """validateResources: each weight in (0, 100]."""
    errs: List[FieldError] = []
    for i, r in enumerate(resources or []):
        w = int(r.get("weight") or 0)
        if w <= 0 or w > 100:
            errs.append(invalid(f"{path}[{i}].weight", w,
                                f"resource weight of {r.get('name', '')} not in valid range (0, 100]"))
    return errs


def validate_node_resources_fit_args(args: Dict[str, Any], path: str = "", features=None) -> List[FieldError]:
    """ValidateNodeResourcesFitArgs. From v1.36 (CHANGES "FitArgsRequestedToCapacityRatioChecks")
    requestedToCapacityRatio is required with that type and forbidden with the others, its shape
    is reported under requestedToCapacityRatio.shape, and a missing scoringStrategy is an error."""
    if features is None:
        from harness.versions import DEFAULT as features
    v136 = features.has("FitArgsRequestedToCapacityRatioChecks")
    args = args or {}
    errs: List[FieldError] = []
    for i, res in enumerate(args.get("ignoredResources") or []):
        errs.extend(validate_label_name(res, f"{_join(path, 'ignoredResources')}[{i}]"))
    for i, group in enumerate(args.get("ignoredResourceGroups") or []):
        p = f"{_join(path, 'ignoredResourceGroups')}[{i}]"
        if "/" in group:
            errs.append(invalid(p, group, "resource group name can't contain '/'"))
        errs.extend(validate_label_name(group, p))
    ss = args.get("scoringStrategy")
    strategy_path = _join(path, "scoringStrategy")
    if ss is not None:
        t = ss.get("type") or ""
        if t not in SUPPORTED_SCORING_STRATEGY_TYPES:
            errs.append((f"{strategy_path}.type", f"Unsupported value: {_json_quote(t)}: supported values: "
                         + ", ".join(_go_quote(v) for v in SUPPORTED_SCORING_STRATEGY_TYPES)))
        errs.extend(validate_resources(ss.get("resources"), f"{strategy_path}.resources"))
        rtcr = ss.get("requestedToCapacityRatio")
        if v136:
            if t == "RequestedToCapacityRatio":
                if rtcr is None:
                    errs.append((f"{strategy_path}.requestedToCapacityRatio",
                                 "Required value: must be specified when type is RequestedToCapacityRatio"))
                else:
                    errs.extend(validate_function_shape(rtcr.get("shape"),
                                                        f"{strategy_path}.requestedToCapacityRatio.shape"))
            elif rtcr is not None:
                errs.append((f"{strategy_path}.requestedToCapacityRatio",
                             "Forbidden: must be nil when type is not RequestedToCapacityRatio"))
        elif rtcr is not None:
            # v1.34/v1.35: the path is scoringStrategy.shape, not ...requestedToCapacityRatio.shape
            errs.extend(validate_function_shape(rtcr.get("shape"), f"{strategy_path}.shape"))
    elif v136:
        errs.append((strategy_path, "Required value: ScoringStrategy field is required"))
    return errs


def validate_node_resources_balanced_allocation_args(args: Dict[str, Any], path: str = "") -> List[FieldError]:
    """ValidateNodeResourcesBalancedAllocationArgs: no duplicate names, every weight 1."""
    args = args or {}
    errs: List[FieldError] = []
    seen = set()
    for i, r in enumerate(args.get("resources") or []):
        name = r.get("name", "")
        p = f"{_join(path, 'resources')}[{i}]"
        if name in seen:
            errs.append((f"{p}.name", f"Duplicate value: {_go_quote(name)}"))
        else:
            seen.add(name)
        w = int(r.get("weight") or 0)
        if w != 1:
            errs.append(invalid(f"{p}.weight", w, "must be 1"))
    return errs


def aggregate(errs: List[FieldError]) -> str:
    """field.ErrorList.ToAggregate().Error(): one error as is, several in brackets."""
    msgs = [f"{p}: {m}" for p, m in errs]
    # utilerrors.NewAggregate drops duplicate messages.
    seen = []
    for m in msgs:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"
