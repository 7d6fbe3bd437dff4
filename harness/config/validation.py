"""Validation of a KubeSchedulerConfiguration as kube-scheduler v1.34 validates it.

Three layers, in the order kube-scheduler meets them:

1. :func:`validate_schema` — the strict decoding of the v1 document (unknown or mis-cased fields,
   wrong JSON types, apiVersion/kind), against ``harness/schemas/kubeschedulerconfiguration.schema.json``.
   Run it on the configuration as the user wrote it. (In decoding.py, imported here.)
2. :func:`validate_kube_scheduler_configuration` — ``ValidateKubeSchedulerConfiguration``
   (pkg/scheduler/apis/config/validation/validation.go), on the *defaulted* configuration
   (``harness.config.defaults.set_defaults``).
3. :func:`validate_frameworks` — the checks ``frameworkruntime.NewFramework`` and ``profile.NewMap``
   make while building each profile (unknown plugins, a plugin listed at an extension point it does
   not implement, one queue sort plugin, at least one bind plugin, score weight overflow, the args
   validation each in-tree plugin factory does).

Errors are ``(field path, message)`` pairs; ``f"{path}: {message}"`` is the text of the upstream
``field.Error`` (e.g. ``parallelism: Invalid value: 0: should be an integer value greater than
zero``). :func:`format_errors` joins them the way ``utilerrors.Aggregate`` prints them
(field_errors.py, imported here).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..api.validation import is_extended_resource_name, is_qualified_name  # noqa: F401 (re-exported)
from ..api.duration import format_duration, parse_duration_ns
from .decoding import API_VERSION, SCHEMA_PATH, validate_plugin_args_fields, validate_plugin_args_kinds  # noqa: F401
from .decoding import validate_schema, zero_nulls  # noqa: F401 (config.loader calls them as validation.X)
from .defaults import EXTENSION_POINT_KEYS
from .field_errors import (duplicate, FieldError, format_errors, _go_json, _go_quote, go_value, invalid,
                           join_path, _Raw, required)  # noqa: F401 (also re-exported)
from ..framework.plugin import call_with_features
from ..framework.registry import origin_suffix
from ..versions import DEFAULT as DEFAULT_FEATURES, Features


MAX_NODE_SCORE = 100
MAX_TOTAL_SCORE = (1 << 63) - 1

# invalidPluginsByVersion: plugins removed from the v1 API.
INVALID_PLUGINS_V1 = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

# validatePluginConfig's table: the plugin configs whose args config validation checks. The
# upstream table keys NodeResourcesFit's validator as "NodeResourcesFitArgs" (sic), so
# NodeResourcesFit's args are only checked when the plugin is built (see validate_frameworks),
# and a pluginConfig *named* "NodeResourcesFitArgs" fails the args type check.
ARGS_VALIDATED_IN_CONFIG = (
    "DefaultPreemption", "InterPodAffinity", "NodeAffinity", "NodeResourcesBalancedAllocation",
    "PodTopologySpread", "VolumeBinding", "DynamicResources",
)
_MISKEYED_VALIDATOR = "NodeResourcesFitArgs"

# stagesToPluginSet in validatePluginConfig (Go iterates a map; this is the literal's order).
_STAGES = ["preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
           "reserve", "permit", "preBind", "bind", "postBind"]

# frameworkImpl.getExtensionPoints: config key, Go interface name, the hook that makes a plugin
# class "implement" it (see extends()).
FRAMEWORK_EXTENSION_POINTS: List[Tuple[str, str, str]] = [
    ("preFilter", "PreFilterPlugin", "pre_filter"),
    ("filter", "FilterPlugin", "filter"),
    ("postFilter", "PostFilterPlugin", "post_filter"),
    ("reserve", "ReservePlugin", "reserve"),
    ("preScore", "PreScorePlugin", "pre_score"),
    ("score", "ScorePlugin", "score"),
    ("preBind", "PreBindPlugin", "pre_bind"),
    ("bind", "BindPlugin", "bind"),
    ("postBind", "PostBindPlugin", "post_bind"),
    ("permit", "PermitPlugin", "permit"),
    ("preEnqueue", "PreEnqueuePlugin", "pre_enqueue"),
    ("queueSort", "QueueSortPlugin", "less"),
]
_HOOK_OF = {key: hook for key, _, hook in FRAMEWORK_EXTENSION_POINTS}


# ---- Go durations (metav1.Duration) -----------------------------------------------------------

parse_duration = parse_duration_ns  # time.ParseDuration, in nanoseconds


def _duration(value: Any, default_ns: int) -> int:
    """A leader election duration after RecommendedDefaultLeaderElectionConfiguration: unset or
    zero becomes the default."""
    if value is None:
        return default_ns
    ns = parse_duration(value) if isinstance(value, str) else int(value)
    return default_ns if ns == 0 else ns


# ---- 2. ValidateKubeSchedulerConfiguration ----------------------------------------------------

def _validate_percentage(path: str, value: Any) -> List[FieldError]:
    if value is not None and (value < 0 or value > 100):
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _is_plugin_invalid(name: str) -> bool:
    return name in INVALID_PLUGINS_V1


def _invalid_plugin_detail() -> str:
    return (f"was invalid in version {_go_quote(API_VERSION)} (KubeSchedulerConfiguration is "
            f"version {_go_quote(API_VERSION)})")


def _validate_plugin_config(path: str, profile: Mapping[str, Any],
                            registry: Mapping[str, type]) -> List[FieldError]:
    errors: List[FieldError] = []
    plugins = profile.get("plugins")
    if plugins is not None:
        for stage in _STAGES:
            for k, p in enumerate(((plugins.get(stage) or {}).get("enabled")) or []):
                name = p.get("name") or ""
                if _is_plugin_invalid(name):
                    errors.append(invalid(f"{path}.plugins.{stage}.enabled[{k}]", name,
                                          _invalid_plugin_detail()))
    seen = set()
    for j, pc in enumerate(profile.get("pluginConfig") or []):
        pc_path = f"{path}.pluginConfig[{j}]"
        name = pc.get("name") or ""
        args = pc.get("args")
        if name in seen:
            errors.append(duplicate(pc_path, name))
        else:
            seen.add(name)
        if _is_plugin_invalid(name):
            errors.append(invalid(pc_path, name, _invalid_plugin_detail()))
        elif name == _MISKEYED_VALIDATOR:
            errors.append(invalid(f"{pc_path}.args", _Raw(_go_json(args)), "has to match plugin args"))
        elif name in ARGS_VALIDATED_IN_CONFIG:
            cls = registry.get(name)
            if cls is None or not getattr(cls, "args_kind", None):
                continue
            if not isinstance(args, dict):
                errors.append(invalid(f"{pc_path}.args", _Raw(_go_json(args)), "has to match plugin args"))
                continue
            for rel, msg in cls.validate_args(args) or []:
                errors.append((join_path(f"{pc_path}.args", rel), msg))
    return errors


def _plugin_list(ps: Optional[Mapping[str, Any]], key: str) -> List[Tuple[str, int]]:
    return [((p.get("name") or ""), int(p.get("weight") or 0)) for p in ((ps or {}).get(key) or [])]


def _internal_plugin_set(ps: Optional[Mapping[str, Any]]) -> Tuple[List[Tuple[str, int]], List[Tuple[str, int]]]:
    """A v1 PluginSet as the internal config.PluginSet compares (weight nil -> 0, nil == [])."""
    return _plugin_list(ps, "enabled"), _plugin_list(ps, "disabled")


def _render_internal_plugin_set(ps: Optional[Mapping[str, Any]]) -> _Raw:
    """json.Marshal of the internal config.PluginSet (no json tags: Go field names)."""
    def render(items: List[Tuple[str, int]]) -> Any:
        if not items:
            return None
        return [{"Name": n, "Weight": w} for n, w in items]

    enabled, disabled = _internal_plugin_set(ps)
    return _Raw("{" + f"\"Enabled\":{_go_json(render(enabled))},\"Disabled\":{_go_json(render(disabled))}" + "}")


def _validate_common_queue_sort(profiles: Sequence[Mapping[str, Any]]) -> List[FieldError]:
    errors: List[FieldError] = []
    first = profiles[0]
    canon = None
    queue_sort_name = ""
    queue_sort_args = None
    if first.get("plugins") is not None:
        canon = first["plugins"].get("queueSort")
        enabled = (canon or {}).get("enabled") or []
        if enabled:
            queue_sort_name = enabled[0].get("name") or ""
        if len(enabled) > 1:
            errors.append(invalid("profiles[0].plugins.queueSort.Enabled", len(enabled),
                                  "only one queue sort plugin can be enabled"))
    for pc in first.get("pluginConfig") or []:
        if queue_sort_name and pc.get("name") == queue_sort_name:
            queue_sort_args = pc.get("args")
    for i in range(1, len(profiles)):
        curr = None
        if profiles[i].get("plugins") is not None:
            curr = profiles[i]["plugins"].get("queueSort")
        if _internal_plugin_set(canon) != _internal_plugin_set(curr):
            errors.append(invalid(f"profiles[{i}].plugins.queueSort", _render_internal_plugin_set(curr),
                                  "must be the same for all profiles"))
        for pc in profiles[i].get("pluginConfig") or []:
            if pc.get("name") == queue_sort_name and not _args_equal(queue_sort_args, pc.get("args")):
                errors.append(invalid(f"profiles[{i}].pluginConfig.args", _Raw(_go_json(pc.get("args"))),
                                      "queueSort must be the same for all profiles"))
    return errors


def _args_equal(a: Any, b: Any) -> bool:
    """apiequality.Semantic.DeepEqual on args: empty and unset compare equal."""
    if not a and not b:
        return True
    return a == b


def _validate_extenders(extenders: Sequence[Mapping[str, Any]]) -> List[FieldError]:
    errors: List[FieldError] = []
    binders = 0
    managed = set()
    for i, ext in enumerate(extenders):
        path = f"extenders[{i}]"
        weight = ext.get("weight") or 0
        if ext.get("prioritizeVerb") and weight <= 0:
            errors.append(invalid(f"{path}.weight", weight, "must have a positive weight applied to it"))
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources") or []):
            rpath = f"{path}.managedResources[{j}].name"
            name = res.get("name") or ""
            problems = is_qualified_name(name)
            for msg in problems:
                errors.append(invalid(rpath, name, msg))
            if not problems and not is_extended_resource_name(name):
                errors.append(invalid(rpath, name, "is an invalid extended resource name"))
            if name in managed:
                errors.append(invalid(rpath, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errors.append(invalid("extenders", f"found {binders} extenders implementing bind",
                              "only one extender can implement bind"))
    return errors


def _validate_leader_election(le: Mapping[str, Any]) -> List[FieldError]:
    """componentbasevalidation.ValidateLeaderElectionConfiguration plus the "leases" check."""
    errors: List[FieldError] = []
    leader_elect = le.get("leaderElect")
    if leader_elect is None:
        leader_elect = True
    if not leader_elect:
        return errors
    path = "leaderElection"
    try:
        lease = _duration(le.get("leaseDuration"), 15 * 10 ** 9)
        renew = _duration(le.get("renewDeadline"), 10 * 10 ** 9)
        retry = _duration(le.get("retryPeriod"), 2 * 10 ** 9)
    except ValueError as e:  # not decodable (validate_schema reports it with its field)
        return [(path, str(e))]
    if lease <= 0:
        errors.append(invalid(f"{path}.leaseDuration", format_duration(lease), "must be greater than zero"))
    if renew <= 0:
        errors.append(invalid(f"{path}.renewDeadline", format_duration(renew), "must be greater than zero"))
    if retry <= 0:
        errors.append(invalid(f"{path}.retryPeriod", format_duration(retry), "must be greater than zero"))
    if lease <= renew:
        errors.append(invalid(f"{path}.leaseDuration", format_duration(renew),
                              "must be greater than `RenewDeadline`"))
    if not le.get("resourceLock"):
        errors.append(required(f"{path}.resourceLock"))
    if not le.get("resourceNamespace"):
        errors.append(required(f"{path}.resourceNamespace"))
    if not le.get("resourceName"):
        errors.append(required(f"{path}.resourceName"))
    return errors


def validate_kube_scheduler_configuration(cfg: Mapping[str, Any], registry: Mapping[str, type], *,
                                          features: Features = DEFAULT_FEATURES) -> List[FieldError]:
    """ValidateKubeSchedulerConfiguration on a defaulted configuration (a dict with the v1 field
    names, as ``set_defaults`` returns it), as the version of ``features`` validates it. Returns
    the errors in upstream's order."""
    errors: List[FieldError] = []
    cc = cfg.get("clientConnection") or {}
    if (cc.get("burst") or 0) < 0:
        errors.append(invalid("clientConnection.burst", cc.get("burst"), "must be non-negative"))
    le = cfg.get("leaderElection") or {}
    errors.extend(_validate_leader_election(le))
    leader_elect = le.get("leaderElect")
    if (leader_elect is None or leader_elect) and le.get("resourceLock") != "leases":
        errors.append(invalid("leaderElection.resourceLock", le.get("resourceLock") or "",
                              'resourceLock value must be "leases"'))

    parallelism = cfg.get("parallelism")
    if parallelism is None:
        parallelism = 0
    if parallelism <= 0:
        errors.append(invalid("parallelism", parallelism, "should be an integer value greater than zero"))

    profiles = cfg.get("profiles") or []
    if not profiles:
        errors.append(required("profiles"))
    else:
        existing: Dict[str, int] = {}
        for i, profile in enumerate(profiles):
            path = f"profiles[{i}]"
            name = profile.get("schedulerName") or ""
            if not name:
                errors.append(required(f"{path}.schedulerName"))
            errors.extend(_validate_percentage(f"{path}.percentageOfNodesToScore",
                                               profile.get("percentageOfNodesToScore")))
            errors.extend(_validate_plugin_config(path, profile, registry))
            if name in existing:
                # The bad value is a *field.Path, which encoding/json renders as {}.
                errors.append(duplicate(f"{path}.schedulerName", _Raw("{}")))
            existing[name] = i
        errors.extend(_validate_common_queue_sort(profiles))

    errors.extend(_validate_percentage("percentageOfNodesToScore", cfg.get("percentageOfNodesToScore")))

    initial = cfg.get("podInitialBackoffSeconds")
    initial = 0 if initial is None else initial
    maximum = cfg.get("podMaxBackoffSeconds")
    maximum = 0 if maximum is None else maximum
    if initial <= 0:
        errors.append(invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    if maximum < initial:
        errors.append(invalid("podMaxBackoffSeconds", maximum,
                              "must be greater than or equal to PodInitialBackoffSeconds"))

    errors.extend(_validate_extenders(cfg.get("extenders") or []))
    return errors


# ---- 3. framework construction (NewFramework, profile.NewMap) ---------------------------------

class FrameworkConfigError(Exception):
    """An error NewFramework returns while building a profile (worded as upstream)."""


def extends(cls: type, extension_point: str) -> bool:
    """Whether a plugin class implements an extension point (its hook carries pluggy's
    ``schedharness_impl`` marker), as Go's ``Implements(pluginType)``."""
    hook = _HOOK_OF[extension_point]
    return hasattr(getattr(cls, hook, None), "schedharness_impl")


def _plugins_needed(plugins: Mapping[str, Any]) -> List[str]:
    names: List[str] = []
    for key in EXTENSION_POINT_KEYS + ["multiPoint"]:
        for p in ((plugins.get(key) or {}).get("enabled")) or []:
            n = p.get("name") or ""
            if n not in names:
                names.append(n)
    return names


def _args_errors(cls: type, args: Any, features: Features) -> List[FieldError]:
    if not isinstance(args, dict) or not getattr(cls, "args_kind", None):
        return []
    return list(call_with_features(cls.validate_args, args, features) or [])


def build_profile_plugins(profile: Mapping[str, Any], registry: Mapping[str, type], *,
                          features: Features = DEFAULT_FEATURES) -> Tuple[Dict[str, List[str]], Dict[str, int]]:
    """What NewFramework does with a defaulted profile's plugins: the plugin names that run at each
    extension point, in order (explicit lists, then multiPoint expansion), and the score weights.
    Raises FrameworkConfigError with upstream's message at the first problem."""
    plugins = profile.get("plugins") or {}
    seen_cfg = set()
    args_of: Dict[str, Any] = {}
    for pc in profile.get("pluginConfig") or []:
        name = pc.get("name") or ""
        if name in seen_cfg:
            raise FrameworkConfigError(f"repeated config for plugin {name}")
        seen_cfg.add(name)
        args_of[name] = pc.get("args")

    needed = set(_plugins_needed(plugins))
    plugins_map: Dict[str, type] = {}
    for name, cls in registry.items():
        if name not in needed:
            continue
        errs = _args_errors(cls, args_of.get(name), features)
        if errs:
            raise FrameworkConfigError(f"initializing plugin {_go_quote(name)}: {format_errors(errs)}")
        plugins_map[name] = cls

    lists: Dict[str, List[str]] = {}
    for key, type_name, _ in FRAMEWORK_EXTENSION_POINTS:
        names: List[str] = []
        for p in ((plugins.get(key) or {}).get("enabled")) or []:
            name = p.get("name") or ""
            if name not in plugins_map:
                raise FrameworkConfigError(f"{type_name} {_go_quote(name)} does not exist")
            if not extends(plugins_map[name], key):
                raise FrameworkConfigError(f"plugin {_go_quote(name)} does not extend {type_name} plugin"
                                           + origin_suffix(name, plugins_map[name]))
            if name in names:
                raise FrameworkConfigError(f"plugin {_go_quote(name)} already registered as {_go_quote(type_name)}")
            names.append(name)
        lists[key] = names

    multi = ((plugins.get("multiPoint") or {}).get("enabled")) or []
    if multi:
        for key, type_name, _ in FRAMEWORK_EXTENSION_POINTS:
            ps = plugins.get(key) or {}
            enabled_set = [p.get("name") or "" for p in (ps.get("enabled") or [])]
            disabled = {p.get("name") or "" for p in (ps.get("disabled") or [])}
            if "*" in disabled:
                continue
            multi_enabled: List[str] = []
            overrides: List[str] = []
            for ep in multi:
                name = ep.get("name") or ""
                if name not in plugins_map:
                    raise FrameworkConfigError(f"{type_name} {_go_quote(name)} does not exist")
                if not extends(plugins_map[name], key):
                    continue
                if name in disabled:
                    continue
                if name in enabled_set:
                    if name not in overrides:
                        overrides.append(name)
                    continue
                if name in multi_enabled:
                    raise FrameworkConfigError(f"plugin {_go_quote(name)} already registered as {_go_quote(type_name)}")
                multi_enabled.append(name)
            explicit = list(dict.fromkeys(enabled_set))
            ordered = [n for n in explicit if n in overrides]
            ordered += multi_enabled
            ordered += [n for n in explicit if n not in overrides]
            lists[key] = ordered

    name_of_profile = profile.get("schedulerName") or ""
    if len(lists["queueSort"]) != 1:
        raise FrameworkConfigError(
            f"only one queue sort plugin required for profile with scheduler name "
            f"{_go_quote(name_of_profile)}, but got {len(lists['queueSort'])}")
    if not lists["bind"]:
        raise FrameworkConfigError(
            f"at least one bind plugin is needed for profile with scheduler name {_go_quote(name_of_profile)}")

    weights: Dict[str, int] = {}
    total = 0
    score_entries = list(((plugins.get("score") or {}).get("enabled")) or []) + list(multi)
    for e in score_entries:
        name = e.get("name") or ""
        cls = plugins_map.get(name)
        if cls is None or not extends(cls, "score"):
            continue
        if name in weights:
            continue
        w = int(e.get("weight") or 0)
        if w == 0:
            w = 1
        weights[name] = w
        if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise FrameworkConfigError("total score of Score plugins could overflow")
        total += w * MAX_NODE_SCORE
    for name in lists["score"]:
        if weights.get(name, 0) == 0:
            raise FrameworkConfigError(f"score plugin {_go_quote(name)} is not configured with weight")
    return lists, weights


def validate_frameworks(cfg: Mapping[str, Any], registry: Mapping[str, type], *,
                        features: Features = DEFAULT_FEATURES) -> List[FieldError]:
    """profile.NewMap over a defaulted (and validated) configuration: builds each profile's plugin
    lists and reports, per profile, the error kube-scheduler would stop at. Messages are worded as
    NewMap returns them (kube-scheduler prefixes them with "initializing profiles: "); upstream
    stops at the first one, so report ``errors[0]`` to mimic it exactly."""
    errors: List[FieldError] = []
    first_queue_sort: Optional[str] = None
    first_queue_sort_args: Any = None
    names_seen = set()
    for i, profile in enumerate(cfg.get("profiles") or []):
        path = f"profiles[{i}]"
        scheduler_name = profile.get("schedulerName") or ""
        try:
            lists, _ = build_profile_plugins(profile, registry, features=features)
        except FrameworkConfigError as e:
            errors.append((path, f"creating profile for scheduler name {scheduler_name}: {e}"))
            continue
        if not scheduler_name:
            errors.append((path, "scheduler name is needed"))
            continue
        if profile.get("plugins") is None:
            errors.append((path, f"plugins required for profile with scheduler name {_go_quote(scheduler_name)}"))
            continue
        if scheduler_name in names_seen:
            errors.append((path, f"duplicate profile with scheduler name {_go_quote(scheduler_name)}"))
            continue
        queue_sort = lists["queueSort"][0]
        args = None
        for pc in profile.get("pluginConfig") or []:
            if pc.get("name") == queue_sort:
                args = pc.get("args")
                break
        if first_queue_sort is None:
            first_queue_sort, first_queue_sort_args = queue_sort, args
        elif first_queue_sort != queue_sort:
            errors.append((path, f"different queue sort plugins for profile {_go_quote(scheduler_name)}: "
                                 f"{_go_quote(queue_sort)}, first: {_go_quote(first_queue_sort)}"))
            continue
        elif first_queue_sort_args != args:
            errors.append((path, f"different queue sort plugin args for profile {_go_quote(scheduler_name)}"))
            continue
        names_seen.add(scheduler_name)
    return errors
