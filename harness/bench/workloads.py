"""scheduler_perf's workload file (test/integration/scheduler_perf: performance-config.yaml):
test cases with a `workloadTemplate` of ops and `workloads` with `params`, read and checked
before anything runs. Mirrors scheduler_perf.go's testCase / workload / op types and each op's
patchParams (`countParam: $name` and `templateParams` values `$name` read the workload's params).
Templates are Kubernetes manifests run through the part of Go's text/template that
scheduler_perf's templates use: `{{.Name}}` and the arithmetic functions (getTemplateFuncs)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ..api.duration import parse_duration_ns
from ..errors import UserError
from ..yamlfile import MAX_BYTES, check_regular_file, decode_yaml_bytes, load_yaml_file, load_yaml_text

# objects one op may create: each is held in memory (scheduler_perf's largest workloads create
# tens of thousands of pods)
MAX_COUNT = 1_000_000
# devices createResourceDriver puts in each node's ResourceSlice (the API's ResourceSliceMaxDevices)
MAX_DEVICES_PER_SLICE = 128

# op code -> (required keys, optional keys)
_COMMON = {"opcode"}
OPS: Dict[str, Tuple[set, set]] = {
    "createNodes": (set(), {"count", "countParam", "nodeTemplatePath", "nodeAllocatableStrategy",
                            "labelNodePrepareStrategy", "uniqueNodeLabelStrategy", "templateParams"}),
    "createNamespaces": ({"prefix"}, {"count", "countParam", "namespaceTemplatePath"}),
    "createPods": (set(), {"count", "countParam", "countMultiplierParam", "podTemplatePath",
                           "collectMetrics", "namespace", "skipWaitToCompletion", "templateParams",
                           "steadyState", "steadyStateParam", "duration", "durationParam",
                           "persistentVolumeTemplatePath", "persistentVolumeClaimTemplatePath",
                           "signatureBatchSize", "signatureBatchSizeParam"}),
    "createPodSets": ({"namespacePrefix", "createPodsOp"}, {"count", "countParam"}),
    "createAny": ({"templatePath"}, {"namespace", "count", "countParam", "templateParams"}),
    "deletePods": ({"namespace"}, {"labelSelector", "skipWaitToCompletion", "deletePodsPerSecond"}),
    "churn": ({"mode", "templatePaths"}, {"number", "intervalMilliseconds", "namespace"}),
    "barrier": (set(), {"namespaces", "labelSelector", "stageRequirement"}),
    "sleep": (set(), {"duration", "durationParam"}),
    # dra.go's ops: a DRA driver's ResourceSlices for the nodes named by a glob, and claims
    # allocated without a pod
    "createResourceDriver": ({"driverName", "nodes"}, {"maxClaimsPerNode", "maxClaimsPerNodeParam"}),
    "allocResourceClaims": (set(), {"namespace"}),
}
_TESTCASE_KEYS = {"name", "workloadTemplate", "workloads", "defaultPodTemplatePath",
                  "schedulerConfigPath", "featureGates", "labels", "metricsCollectorConfig",
                  "schedulerConfigTemplate"}
_WORKLOAD_KEYS = {"name", "params", "featureGates", "labels", "threshold"}


@dataclass
class Op:
    """One op of a workload with its params resolved (patchParams)."""

    opcode: str
    spec: Dict[str, Any]
    index: int
    count: int = 0
    template_params: Dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.spec.get(key, default)


@dataclass
class Workload:
    name: str  # "<test case>/<workload>"
    params: Dict[str, Any]
    ops: List[Op]
    base_dir: str
    scheduler_config_path: Optional[str]
    default_pod_template: Optional[str]
    threshold: Optional[float] = None
    feature_gates: Dict[str, bool] = field(default_factory=dict)  # the test case's, then the workload's
    file: str = ""  # the workload file

    @property
    def label(self) -> str:
        """Where an error of this workload is: `<file>: <test case>/<workload>`."""
        return f"{self.file}: {self.name}" if self.file else self.name


def parse_duration(text: Any, file: str, key: str) -> float:
    """time.ParseDuration (harness/api/duration.py), in seconds."""
    try:
        return parse_duration_ns(str(text)) / 1e9
    except ValueError as e:
        raise UserError(str(e), file=file, key=key) from None


def _param_int(params: Dict[str, Any], ref: Any, file: str, key: str) -> int:
    """Params.get: `$name` names an int parameter of the workload."""
    if not isinstance(ref, str) or not ref.startswith("$"):
        raise UserError(f"{ref!r} must be a $parameter", file=file, key=key)
    name = ref[1:]
    if name not in params:
        raise UserError(f'parameter "{name}" is not defined by the workload', file=file, key=key)
    v = params[name]
    if isinstance(v, bool) or not isinstance(v, int):
        raise UserError(f'parameter "{name}" must be an integer, got {v!r}', file=file, key=key)
    return v


def _count(spec: Dict[str, Any], params: Dict[str, Any], file: str, key: str, default: int = 0) -> int:
    if spec.get("countParam"):
        n = _param_int(params, spec["countParam"], file, f"{key}.countParam")
    else:
        n = spec.get("count", default)
        if isinstance(n, bool) or not isinstance(n, int):
            raise UserError(f"count must be an integer, got {n!r}", file=file, key=f"{key}.count")
    if n < 0:
        raise UserError(f"invalid count {n}: must not be negative", file=file, key=key)
    if n > MAX_COUNT:
        raise UserError(f"invalid count {_short(n)}: at most {MAX_COUNT} objects per op", file=file, key=key)
    return n


def _short(v: Any) -> str:
    text = repr(v) if not isinstance(v, int) or abs(v) < 10 ** 30 else f"{str(v)[:20]}... ({len(str(v))} digits)"
    return text if len(text) <= 80 else text[:80] + "..."


def _resolve_template_params(tp: Any, params: Dict[str, Any], file: str, key: str) -> Dict[str, Any]:
    """resolveTemplateParams: a string value `$name` takes the workload's parameter."""
    if tp is None:
        return {}
    if not isinstance(tp, dict):
        raise UserError("templateParams must be a mapping", file=file, key=key)
    out = dict(tp)
    for k, v in tp.items():
        if isinstance(v, str) and v.startswith("$"):
            if v[1:] not in params:
                raise UserError(f'parameter "{v[1:]}" not found', file=file, key=f"{key}.{k}")
            out[k] = params[v[1:]]
    return out


def _check_keys(obj: Dict[str, Any], allowed: set, required: set, file: str, key: str) -> None:
    for k in obj:
        if k not in allowed | required:
            raise UserError(f'unknown field "{k}"', file=file, key=key)
    for k in sorted(required):
        if k not in obj:
            raise UserError(f'"{k}" is required', file=file, key=key)


def _threshold(v: Any, file: str, key: str) -> Optional[float]:
    """A workload's threshold: scheduler_perf's `Threshold float64`, so a number (JSON decoding
    refuses a string or a boolean there); infinite or NaN is no threshold at all."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise UserError(f"must be a number (pods/s), got {type(v).__name__} {str(v)[:40]!r}", file=file, key=key)
    if v != v or v in (float("inf"), float("-inf")):
        raise UserError(f"must be a finite number, got {v}", file=file, key=key)
    return float(v)


def check_feature_gates(gates: Any, file: str, key: str) -> Dict[str, bool]:
    """A test case's or workload's featureGates, checked as --feature-gates is for the run's
    Kubernetes version (harness.versions.check_gates)."""
    from ..versions import check_gates, parse_version, run_default_version

    if gates is None:
        return {}
    if not isinstance(gates, dict):
        raise UserError("featureGates must be a mapping of gate names to true/false", file=file, key=key)
    return check_gates(parse_version(run_default_version()), gates, file=file, key=key)


# the Go types of the ops' fields that are not counts or params (scheduler_perf.go's op structs):
# a value of another type is refused as the strict YAML decoding of the workload file refuses it
_FIELD_TYPES: Dict[str, Tuple[type, str]] = {
    **{k: (str, "a string") for k in ("nodeTemplatePath", "podTemplatePath", "templatePath",
                                      "namespaceTemplatePath", "namespace", "prefix", "namespacePrefix",
                                      "countParam", "countMultiplierParam", "durationParam",
                                      "stageRequirement", "steadyStateParam", "signatureBatchSizeParam",
                                      "persistentVolumeTemplatePath", "persistentVolumeClaimTemplatePath",
                                      "driverName", "nodes", "maxClaimsPerNodeParam")},
    **{k: (bool, "true or false") for k in ("collectMetrics", "skipWaitToCompletion", "steadyState")},
    **{k: (dict, "a mapping") for k in ("labelSelector", "labelNodePrepareStrategy", "uniqueNodeLabelStrategy",
                                        "nodeAllocatableStrategy", "createPodsOp")},
    "namespaces": (list, "a list of namespaces"),
    "signatureBatchSize": (int, "an integer"),
    "maxClaimsPerNode": (int, "an integer"),
}


def _check_field_types(raw: Dict[str, Any], file: str, key: str) -> None:
    for k, v in raw.items():
        want = _FIELD_TYPES.get(k)
        if want is None or v is None:
            continue
        if not isinstance(v, want[0]) or (want[0] is int and isinstance(v, bool)):
            raise UserError(f"must be {want[1]}, got {type(v).__name__} {_short(v)}", file=file, key=f"{key}.{k}")
    for k in ("labelSelector",):
        sel = raw.get(k) or {}
        if not all(isinstance(a, str) and isinstance(b, str) for a, b in sel.items()):
            raise UserError("a mapping of label keys to values (strings)", file=file, key=f"{key}.{k}")
    for k in ("labelNodePrepareStrategy", "uniqueNodeLabelStrategy"):
        st = raw.get(k)
        if st is not None and not isinstance(st.get("labelKey", ""), str):
            raise UserError("must be a string", file=file, key=f"{key}.{k}.labelKey")
        if st is not None and not all(isinstance(v, str) for v in (st.get("labelValues") or [])
                                      if isinstance(st.get("labelValues"), list)):
            raise UserError("must be a list of strings", file=file, key=f"{key}.{k}.labelValues")
        if st is not None and st.get("labelValues") is not None and not isinstance(st["labelValues"], list):
            raise UserError("must be a list of strings", file=file, key=f"{key}.{k}.labelValues")
    if isinstance(raw.get("signatureBatchSize"), int) and raw["signatureBatchSize"] < 0:
        raise UserError("must not be negative", file=file, key=f"{key}.signatureBatchSize")


def _patch_op(raw: Any, params: Dict[str, Any], index: int, file: str, key: str) -> Op:
    if not isinstance(raw, dict) or "opcode" not in raw:
        raise UserError("each op must be a mapping with an opcode", file=file, key=key)
    code = raw["opcode"]
    if code not in OPS:
        raise UserError(f'opcode "{code}" is not supported by schedharness bench (supported: '
                        f'{", ".join(sorted(OPS))})', file=file, key=f"{key}.opcode")
    required, optional = OPS[code]
    _check_keys(raw, optional | _COMMON, required, file, key)
    _check_field_types(raw, file, key)
    op = Op(code, dict(raw), index)
    if code in ("createNodes", "createNamespaces", "createPodSets"):
        op.count = _count(raw, params, file, key)
    elif code == "createAny":
        op.count = _count(raw, params, file, key, default=1)
    elif code == "createPods":
        op.count = _count(raw, params, file, key)
        if raw.get("countMultiplierParam"):
            op.count *= _param_int(params, raw["countMultiplierParam"], file, f"{key}.countMultiplierParam")
            if not 0 <= op.count <= MAX_COUNT:
                raise UserError(f"invalid count {_short(op.count)}: 0 to {MAX_COUNT} objects per op",
                                file=file, key=f"{key}.countMultiplierParam")
        if raw.get("collectMetrics") and raw.get("skipWaitToCompletion"):
            raise UserError("collectMetrics and skipWaitToCompletion cannot be true at the same time",
                            file=file, key=key)
        _patch_steady_state(op, params, file, key)
        for unsupported in ("persistentVolumeTemplatePath", "persistentVolumeClaimTemplatePath"):
            if raw.get(unsupported):
                raise UserError(f"{unsupported} is not supported by schedharness bench yet",
                                file=file, key=f"{key}.{unsupported}")
    elif code == "createPodSets":
        pass
    elif code == "churn":
        if not isinstance(raw["mode"], str) or raw["mode"] not in ("recreate", "create"):
            raise UserError(f'invalid mode: {_short(raw["mode"])}. must be one of [recreate create]', file=file, key=f"{key}.mode")
        n = raw.get("number", 0)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise UserError(f"number ({_short(n)}) must be an integer, not negative", file=file, key=f"{key}.number")
        if n > MAX_COUNT:
            raise UserError(f"number ({_short(n)}): at most {MAX_COUNT}", file=file, key=f"{key}.number")
        if raw["mode"] == "recreate" and n == 0:
            raise UserError("number cannot be 0 when mode is recreate", file=file, key=f"{key}.number")
        paths = raw["templatePaths"]
        if not isinstance(paths, list) or not paths or not all(isinstance(t, str) and t for t in paths):
            raise UserError("at least one template spec file needs to be specified (a list of paths)",
                            file=file, key=f"{key}.templatePaths")
        ms = raw.get("intervalMilliseconds", 0)
        if isinstance(ms, bool) or not isinstance(ms, int) or not 0 <= ms <= 10 ** 9:
            raise UserError(f"intervalMilliseconds must be an integer from 0 (500, the default) to "
                            f"1000000000, got {_short(ms)}", file=file, key=f"{key}.intervalMilliseconds")
    elif code == "barrier":
        st = raw.get("stageRequirement") or "Scheduled"
        if st not in ("Scheduled", "Attempted"):
            raise UserError(f"invalid StageRequirement {st}", file=file, key=f"{key}.stageRequirement")
        op.spec["stageRequirement"] = st  # barrierOp.patchParams: "" is Scheduled
        if not all(isinstance(n, str) and n for n in raw.get("namespaces") or []):
            raise UserError("must be a list of namespace names", file=file, key=f"{key}.namespaces")
    elif code == "createResourceDriver":
        # createResourceDriverOp.patchParams / isValid
        if raw.get("maxClaimsPerNodeParam"):
            n = _param_int(params, raw["maxClaimsPerNodeParam"], file, f"{key}.maxClaimsPerNodeParam")
        else:
            n = raw.get("maxClaimsPerNode", 0)
        if n <= 0 or n > MAX_DEVICES_PER_SLICE:
            raise UserError(f"invalid MaxClaimsPerNode={_short(n)}: 1 to {MAX_DEVICES_PER_SLICE} "
                            f"(the devices of one ResourceSlice)", file=file, key=key)
        op.count = n
        if not raw["driverName"] or not raw["nodes"]:
            raise UserError("driverName and nodes must be set", file=file, key=key)
    elif code == "sleep":
        if raw.get("durationParam"):
            ref = raw["durationParam"]
            name = ref[1:] if isinstance(ref, str) and ref.startswith("$") else None
            if name is None or name not in params:
                raise UserError(f"parameter {ref!r} not found", file=file, key=f"{key}.durationParam")
            op.spec["duration"] = params[name]
        op.spec["seconds"] = parse_duration(op.spec.get("duration", "0s"), file, f"{key}.duration")
    elif code == "deletePods":
        r = raw.get("deletePodsPerSecond", 0)
        if isinstance(r, bool) or not isinstance(r, int) or r < 0:
            raise UserError(f"invalid DeletePodsPerSecond={_short(r)}; should be non-negative", file=file, key=key)
        if r > 10 ** 9:
            raise UserError(f"invalid DeletePodsPerSecond={_short(r)}; at most 1000000000", file=file, key=key)
    if code == "createPodSets":
        inner = raw["createPodsOp"]
        sub = _patch_op(inner, params, index, file, f"{key}.createPodsOp")
        if sub.opcode != "createPods":
            raise UserError("createPodsOp must be a createPods op", file=file, key=f"{key}.createPodsOp")
        op.spec["createPodsOp"] = sub
    op.template_params = _resolve_template_params(raw.get("templateParams"), params, file, f"{key}.templateParams")
    return op


def _patch_steady_state(op: Op, params: Dict[str, Any], file: str, key: str) -> None:
    """createPodsOp.patchParams and isValid for steady state: `durationParam` names a duration
    parameter (a string such as "10s"), `steadyStateParam` a boolean one; steady state needs a
    duration above zero and excludes skipWaitToCompletion."""
    raw = op.spec

    def param(field: str) -> Tuple[str, Any]:
        ref = raw[field]
        name = ref[1:] if ref.startswith("$") else None
        if name is None or name not in params:
            raise UserError(f"parameter {ref!r} not found", file=file, key=f"{key}.{field}")
        return name, params[name]

    if raw.get("durationParam"):
        name, value = param("durationParam")
        if not isinstance(value, str):
            raise UserError(f'parameter "{name}" must be a duration string such as "10s", got '
                            f'{_short(value)}', file=file, key=f"{key}.durationParam")
        raw["duration"] = value
    if raw.get("steadyStateParam"):
        name, value = param("steadyStateParam")
        if not isinstance(value, bool):
            raise UserError(f'parameter "{name}" must be true or false, got {_short(value)}',
                            file=file, key=f"{key}.steadyStateParam")
        raw["steadyState"] = value
    if raw.get("duration") is not None and not isinstance(raw["duration"], str):
        raise UserError(f"must be a duration such as 10s, got {_short(raw['duration'])}", file=file,
                        key=f"{key}.duration")
    raw["seconds"] = parse_duration(raw.get("duration") or "0s", file, f"{key}.duration")
    if raw.get("steadyState"):
        if raw.get("skipWaitToCompletion"):
            raise UserError("skipWaitToCompletion and steadyState cannot be true at the same time",
                            file=file, key=key)
        if raw["seconds"] <= 0:
            raise UserError("when creating pods in a steady state, the test duration must be > 0",
                            file=file, key=f"{key}.duration")
        if op.count <= 0:
            raise UserError("steady state needs a count above 0 (the pods of each round)", file=file, key=key)


def parse_param_overrides(items: List[str]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise UserError(f'--param {item!r}: expected name=value')
        k, v = item.split("=", 1)
        if not k.strip():
            raise UserError(f'--param {item[:60]!r}: the parameter name is empty (expected name=value)')
        try:
            out[k.strip()] = int(v)
        except ValueError:
            out[k.strip()] = v
    return out


def load_workloads(path: str, select: Optional[str] = None,
                   overrides: Optional[Dict[str, Any]] = None) -> List[Workload]:
    """The workloads of the file (all, or those whose `<case>/<workload>` name or case name is
    `select`), their params overridden by `overrides`, every op checked."""
    data = load_yaml_file(path, UserError)
    if not isinstance(data, list) or not data:
        raise UserError("a workload file is a list of test cases (name, workloadTemplate, workloads)", file=path)
    base = os.path.dirname(os.path.abspath(path))
    out: List[Workload] = []
    names: List[str] = []
    refs: Set[str] = set()
    for i, tc in enumerate(data):
        key = f"[{i}]"
        if not isinstance(tc, dict):
            raise UserError("a test case must be a mapping", file=path, key=key)
        _check_keys(tc, _TESTCASE_KEYS, {"name", "workloadTemplate", "workloads"}, path, key)
        if not isinstance(tc["name"], str) or not tc["name"]:
            raise UserError(f"must be a non-empty string, got {_short(tc['name'])}", file=path, key=f"{key}.name")
        key = tc["name"]
        for k in ("workloadTemplate", "workloads"):
            if tc[k] is not None and not isinstance(tc[k], list):
                raise UserError(f"must be a list, got {type(tc[k]).__name__}", file=path, key=f"{key}.{k}")
        for k in ("defaultPodTemplatePath", "schedulerConfigPath"):
            if tc.get(k) is not None and not isinstance(tc[k], str):
                raise UserError(f"must be a path (a string), got {_short(tc[k])}", file=path, key=f"{key}.{k}")
        tc_gates = check_feature_gates(tc.get("featureGates"), path, f"{key}.featureGates")
        for field_ in ("metricsCollectorConfig", "schedulerConfigTemplate"):
            if tc.get(field_) is not None:
                raise UserError(f"{field_} is not supported by schedharness bench", file=path, key=f"{key}.{field_}")
        for j, w in enumerate(tc["workloads"] or []):
            wkey = f"{key}.workloads[{j}]"
            if not isinstance(w, dict):
                raise UserError("a workload must be a mapping", file=path, key=wkey)
            _check_keys(w, _WORKLOAD_KEYS, {"name"}, path, wkey)
            if not isinstance(w["name"], str) or not w["name"]:
                raise UserError(f"must be a non-empty string, got {_short(w['name'])}", file=path, key=f"{wkey}.name")
            if w.get("params") is not None and not (isinstance(w["params"], dict)
                                                    and all(isinstance(k, str) for k in w["params"])):
                raise UserError("params must be a mapping of parameter names to values", file=path,
                                key=f"{wkey}.params")
            full = f"{tc['name']}/{w['name']}"
            names.append(full)
            if select and select not in (full, tc["name"]):
                continue
            refs |= _param_refs(tc["workloadTemplate"]) | set(w.get("params") or {})
            gates = dict(tc_gates)
            gates.update(check_feature_gates(w.get("featureGates"), path, f"{wkey}.featureGates"))
            params = dict(w.get("params") or {})
            for k, v in (overrides or {}).items():
                params[k] = v
            ops = [_patch_op(raw, params, n, path, f"{key}.workloadTemplate[{n}]")
                   for n, raw in enumerate(tc["workloadTemplate"] or [])]
            sc = tc.get("schedulerConfigPath")
            out.append(Workload(full, params, ops, base,
                                os.path.join(base, sc) if sc else None,
                                tc.get("defaultPodTemplatePath"),
                                _threshold(w.get("threshold"), path, f"{wkey}.threshold"), gates, path))
    if select and not out:
        raise UserError(f'no workload named "{select}" (the file has: {", ".join(names)})', file=path, key="--workload")
    for k in overrides or {}:
        # a parameter no selected workload has nor any of their ops reads is a typo
        if k not in refs:
            known = sorted(refs)
            raise UserError(f'no selected workload has a parameter "{k[:60]}" (they have: {", ".join(known) or "none"})',
                            file=path, key=f"--param {k[:60]}")
    return out


def _param_refs(raw: Any) -> Set[str]:
    """The parameter names a test case's ops read (`$name` values, `...Param: name` keys)."""
    out: Set[str] = set()
    stack = [raw]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str) and k.endswith("Param") and isinstance(x, str):
                    out.add(x.lstrip("$"))
                stack.append(x)
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str) and v.startswith("$"):
            out.add(v[1:])
    return out


# ---------------------------------------------------------------------------------------------
# templates: the subset of text/template scheduler_perf's manifests use
# ---------------------------------------------------------------------------------------------
def _num(v: Any) -> float:
    if isinstance(v, bool):
        raise ValueError(f"cannot cast {v!r} to float64")
    if isinstance(v, (int, float)):
        return float(v)
    return float(str(v))


def _trunc(x: float) -> int:
    return int(x)


TEMPLATE_FUNCS: Dict[str, Callable[..., Any]] = {
    # getTemplateFuncs (operations.go)
    "AddInt": lambda *a: _trunc(sum(_num(x) for x in a)),
    "SubtractInt": lambda a, b: _trunc(_num(a) - _num(b)),
    "MultiplyInt": lambda *a: _trunc(_prod(a)),
    "DivideInt": lambda a, b: _trunc(_div(a, b)),
    "AddFloat": lambda *a: sum(_num(x) for x in a),
    "SubtractFloat": lambda a, b: _num(a) - _num(b),
    "MultiplyFloat": lambda *a: _prod(a),
    "DivideFloat": lambda a, b: _div(a, b),
    "Mod": lambda a, b: _go_mod(int(_num(a)), int(_num(b))),
}


def _prod(a) -> float:
    p = 1.0
    for x in a:
        p *= _num(x)
    return p


def _div(a, b) -> float:
    if _num(b) == 0:
        raise ValueError("division by zero")
    return _num(a) / _num(b)


def _go_mod(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return -r if a < 0 else r


_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|\S+')


class Template:
    """A manifest template: `render(env)` gives the object (a dict). Read, and after templating
    parsed, by the shared YAML loader (harness/yamlfile.py): its encodings, bounds and errors."""

    def __init__(self, path: str):
        self.path = path
        try:
            check_regular_file(path, UserError)
            if os.path.getsize(path) > MAX_BYTES:
                raise UserError(f"too large: more than {MAX_BYTES // (1024 * 1024)} MB", file=path)
            with open(path, "rb") as f:
                data = f.read(MAX_BYTES + 1)
        except OSError as e:
            raise UserError(f"cannot read: {e.strerror or e}", file=path) from None
        try:
            self.text = decode_yaml_bytes(data)
        except UnicodeDecodeError as e:
            raise UserError(f"not a text file in UTF-8 (or UTF-16/32 with a byte order mark): "
                            f"{e.encoding} cannot decode byte offset {e.start}", file=path) from None
        self.static = _ACTION.search(self.text) is None
        self._cached: Optional[Dict[str, Any]] = None

    def _arg(self, tok: str, env: Dict[str, Any]) -> Any:
        if tok.startswith("."):
            name = tok[1:]
            if name not in env:
                raise UserError(f'template: no value for "{tok}"', file=self.path)
            return env[name]
        if tok.startswith('"'):
            return tok[1:-1]
        try:
            return int(tok)
        except ValueError:
            try:
                return float(tok)
            except ValueError:
                raise UserError(f'template: unsupported argument "{tok}" (schedharness supports '
                                f'.Name, numbers, strings and the arithmetic functions)', file=self.path) from None

    def _eval(self, expr: str, env: Dict[str, Any]) -> str:
        toks = _TOKEN.findall(expr)
        if not toks:
            raise UserError("template: empty action", file=self.path)
        head = toks[0]
        if head in TEMPLATE_FUNCS:
            try:
                v = TEMPLATE_FUNCS[head](*[self._arg(t, env) for t in toks[1:]])
            except (TypeError, ValueError) as e:
                raise UserError(f"template: {head}: {e}", file=self.path) from None
        elif len(toks) == 1:
            v = self._arg(head, env)
        else:
            raise UserError(f'template: unsupported action "{{{{{expr}}}}}"', file=self.path)
        return str(v)

    def render(self, env: Dict[str, Any]) -> Dict[str, Any]:
        if self.static:
            if self._cached is None:
                self._cached = self._load(self.text)
            return _deepcopy(self._cached)
        return self._load(_ACTION.sub(lambda m: self._eval(m.group(1), env), self.text))

    def _load(self, text: str) -> Dict[str, Any]:
        obj = load_yaml_text(text, self.path, UserError)
        if not isinstance(obj, dict) or "kind" not in obj:
            raise UserError("a template must be one Kubernetes object with a kind", file=self.path)
        return obj


def _deepcopy(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: _deepcopy(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_deepcopy(v) for v in o]
    return o


def is_workload_file(path: str) -> bool:
    """Whether a file given to bench is a scheduler_perf workload file (a YAML list of test
    cases) rather than a case (a mapping): its first line of content starts a sequence. The
    file is read whole by its own loader, which says what is wrong with it."""
    try:
        with open(path, "rb") as f:
            for raw in f:
                line = raw.decode("utf-8", "replace").lstrip("\ufeff").strip()
                if not line or line.startswith(("#", "%", "---")):
                    continue
                return line.startswith(("-", "["))
    except OSError as e:
        raise UserError(f"cannot read: {e.strerror or e}", file=path) from None
    return False


def check_templates(wl: Workload) -> None:
    """Every template a workload names renders, and its scheduler config exists: before anything
    runs."""

    def check(rel: Optional[str], params: Dict[str, Any]) -> None:
        if rel:
            path = rel if os.path.isabs(rel) else os.path.join(wl.base_dir, rel)
            Template(path).render({"Index": 0, "Count": 1, **params})

    check(wl.default_pod_template, {})
    for op in wl.ops:
        ops = [op, op.get("createPodsOp")] if op.opcode == "createPodSets" else [op]
        for o in ops:
            for key in ("nodeTemplatePath", "podTemplatePath", "templatePath", "namespaceTemplatePath"):
                check(o.get(key), o.template_params)
            for p in o.get("templatePaths") or []:
                check(p, {})
    if wl.scheduler_config_path and not os.path.exists(wl.scheduler_config_path):
        raise UserError(f"scheduler config {wl.scheduler_config_path} does not exist", file=wl.label,
                        key="schedulerConfigPath")
