"""v1 defaulting of KubeSchedulerConfiguration (apis/config/v1/defaults.go, default_plugins.go).

The configuration stays a dict with the v1 field names; defaulting fills it in the way
SetDefaults_KubeSchedulerConfiguration does.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Mapping, Optional

from ..framework.plugin import call_with_features
from ..versions import DEFAULT as DEFAULT_FEATURES, Features

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0  # config.DefaultPercentageOfNodesToScore: adaptive
EXTENSION_POINT_KEYS = ["preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
                        "score", "reserve", "permit", "preBind", "bind", "postBind"]
PLUGIN_SET_KEYS = ["multiPoint"] + EXTENSION_POINT_KEYS


def default_plugins(features: Features = DEFAULT_FEATURES) -> Dict[str, Any]:
    """getDefaultPlugins, with DynamicResources (on by default in v1.34) before DefaultPreemption."""
    enabled = [
        {"name": "SchedulingGates"},
        {"name": "PrioritySort"},
        {"name": "NodeUnschedulable"},
        {"name": "NodeName"},
        {"name": "TaintToleration", "weight": 3},
        {"name": "NodeAffinity", "weight": 2},
        {"name": "NodePorts"},
        {"name": "NodeResourcesFit", "weight": 1},
        {"name": "VolumeRestrictions"},
        {"name": "NodeVolumeLimits"},
        {"name": "VolumeBinding"},
        {"name": "VolumeZone"},
        {"name": "PodTopologySpread", "weight": 2},
        {"name": "InterPodAffinity", "weight": 2},
        {"name": "DynamicResources"},
        {"name": "DefaultPreemption"},
        {"name": "NodeResourcesBalancedAllocation", "weight": 1},
        {"name": "ImageLocality", "weight": 1},
        {"name": "DefaultBinder"},
    ]
    if features.has("DynamicResourcesScore"):
        # applyDynamicResources, v1.35 on: DynamicResources is a Score plugin with weight 2
        for p in enabled:
            if p["name"] == "DynamicResources":
                p["weight"] = 2
    # applyFeatureGates (v1.35 on): NodeDeclaredFeatures appended when its gate is on (v1.36's
    # default)
    if features.get("NodeDeclaredFeatures", False):
        enabled.append({"name": "NodeDeclaredFeatures"})
    # applyGangScheduling (v1.35 on)
    if features.get("GangScheduling", False):
        enabled.append({"name": "GangScheduling"})
    # applyTopologyAwareWorkloadScheduling (v1.36)
    if features.get("TopologyAwareWorkloadScheduling", False):
        enabled.append({"name": "TopologyPlacementGenerator"})
        enabled.append({"name": "PodGroupPodsCount", "weight": 1})
    plugins: Dict[str, Any] = {k: {"enabled": [], "disabled": []} for k in PLUGIN_SET_KEYS}
    plugins["multiPoint"]["enabled"] = enabled
    return plugins


def _plugin(p: Mapping) -> Dict[str, Any]:
    out = {"name": p.get("name", "")}
    if p.get("weight") is not None:
        out["weight"] = p["weight"]
    return out


def merge_plugin_set(default: Mapping, custom: Optional[Mapping]) -> Dict[str, Any]:
    """mergePluginSet: custom disabled (then default disabled); default enabled minus disabled,
    a re-listed default replaced in place by the custom entry; then the other custom entries."""
    custom = custom or {}
    disabled: List[Dict[str, Any]] = []
    disabled_names = set()
    for d in list(custom.get("disabled") or []) + list(default.get("disabled") or []):
        disabled.append({"name": d.get("name", "")})
        disabled_names.add(d.get("name", ""))
    custom_enabled = list(custom.get("enabled") or [])
    index_of = {}
    for i, p in enumerate(custom_enabled):
        index_of[p.get("name", "")] = i  # the last occurrence wins, as with Go's map
    replaced = set()
    enabled: List[Dict[str, Any]] = []
    if "*" not in disabled_names:
        for p in default.get("enabled") or []:
            if p["name"] in disabled_names:
                continue
            if p["name"] in index_of:
                i = index_of[p["name"]]
                p = custom_enabled[i]
                replaced.add(i)
            enabled.append(_plugin(p))
    for i, p in enumerate(custom_enabled):
        if i not in replaced:
            enabled.append(_plugin(p))
    return {"enabled": enabled, "disabled": disabled}


def merge_plugins(defaults: Dict[str, Any], custom: Optional[Mapping]) -> Dict[str, Any]:
    if custom is None:
        return defaults
    return {k: merge_plugin_set(defaults.get(k) or {}, custom.get(k)) for k in PLUGIN_SET_KEYS}


def plugins_names(plugins: Mapping) -> List[str]:
    """pluginsNames: every plugin enabled at some extension point, sorted."""
    names = set()
    for k in PLUGIN_SET_KEYS:
        for p in (plugins.get(k) or {}).get("enabled") or []:
            names.add(p.get("name", ""))
    return sorted(names)


def _strip_type_meta(args: Any) -> Any:
    if isinstance(args, dict):
        return {k: v for k, v in args.items() if k not in ("apiVersion", "kind")}
    return args


def set_defaults_profile(prof: Dict[str, Any], registry: Mapping[str, type],
                         features: Features = DEFAULT_FEATURES) -> None:
    """setDefaults_KubeSchedulerProfile."""
    prof["plugins"] = merge_plugins(default_plugins(features), prof.get("plugins"))
    existing = set()
    pcs = []
    for pc in prof.get("pluginConfig") or []:
        pc = dict(pc)
        existing.add(pc.get("name"))
        cls = registry.get(pc.get("name", ""))
        args = _strip_type_meta(pc.get("args"))
        if cls is not None and getattr(cls, "args_kind", None):
            args = call_with_features(cls.set_defaults, copy.deepcopy(args) if isinstance(args, dict) else {},
                                      features)
        pc["args"] = args
        pcs.append(pc)
    for name in plugins_names(prof["plugins"]):
        if name in existing:
            continue
        cls = registry.get(name)
        if cls is None or not getattr(cls, "args_kind", None):
            continue
        pcs.append({"name": name, "args": call_with_features(cls.set_defaults, {}, features)})
    prof["pluginConfig"] = pcs


def set_defaults(cfg: Mapping[str, Any], registry: Mapping[str, type],
                 features: Features = DEFAULT_FEATURES) -> Dict[str, Any]:
    """SetDefaults_KubeSchedulerConfiguration on a copy, for the given version and gates."""
    obj: Dict[str, Any] = copy.deepcopy(dict(cfg))
    obj.setdefault("apiVersion", "kubescheduler.config.k8s.io/v1")
    obj.setdefault("kind", "KubeSchedulerConfiguration")
    if obj.get("parallelism") is None:
        obj["parallelism"] = 16
    profiles = obj.get("profiles") or []
    if not profiles:
        profiles = [{}]
    profiles = [dict(p) for p in profiles]
    if len(profiles) == 1 and profiles[0].get("schedulerName") is None:
        profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    for prof in profiles:
        set_defaults_profile(prof, registry, features)
    obj["profiles"] = profiles
    if obj.get("percentageOfNodesToScore") is None:
        obj["percentageOfNodesToScore"] = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
    le = dict(obj.get("leaderElection") or {})
    # RecommendedDefaultLeaderElectionConfiguration: nil leaderElect and zero durations default
    if le.get("leaderElect") is None:
        le["leaderElect"] = True
    for k, v in (("leaseDuration", "15s"), ("renewDeadline", "10s"), ("retryPeriod", "2s")):
        if not le.get(k) or str(le.get(k)) in ("0", "0s"):
            le[k] = v
    if not le.get("resourceLock"):
        le["resourceLock"] = "leases"
    if not le.get("resourceNamespace"):
        le["resourceNamespace"] = "kube-system"
    if not le.get("resourceName"):
        le["resourceName"] = "kube-scheduler"
    obj["leaderElection"] = le
    cc = dict(obj.get("clientConnection") or {})
    if not cc.get("contentType"):
        cc["contentType"] = "application/vnd.kubernetes.protobuf"
    if not cc.get("qps"):
        cc["qps"] = 50.0
    if not cc.get("burst"):
        cc["burst"] = 100
    obj["clientConnection"] = cc
    if obj.get("podInitialBackoffSeconds") is None:
        obj["podInitialBackoffSeconds"] = 1
    if obj.get("podMaxBackoffSeconds") is None:
        obj["podMaxBackoffSeconds"] = 10
    if obj.get("enableProfiling") is None:
        obj["enableProfiling"] = True
    if obj["enableProfiling"] and obj.get("enableContentionProfiling") is None:
        obj["enableContentionProfiling"] = True
    obj.setdefault("extenders", [])
    return obj
