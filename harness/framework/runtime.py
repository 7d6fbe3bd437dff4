"""The framework of one profile (framework/runtime/framework.go): the only place that loops over
plugins, in the configured order, skipping those whose PreFilter/PreScore returned Skip, applying
score weights and recording per-plugin results. It is also the `Handle` plugins receive.

Split along upstream's files: the opportunistic batch (batch.go) in batch.py, the pods waiting at
Permit (waiting_pods_map.go) in waiting_pods.py, the pods in PreBind (pods_in_prebind_map.go) in
prebind.py, one plugin's hook called and its result checked in plugin_calls.py. What stays here
mirrors framework.go alone (2269 lines in v1.36), hence over 800 lines."""

from __future__ import annotations

from itertools import count, repeat
from operator import add
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import json

import pluggy

from .custom_resources import DynamicLister, custom_resources, find as find_custom_resource
from ..errors import ConfigError
from . import parallelize
from .batch import OpportunisticBatch
from .blocking import Task, drive, is_task
from .cycle_state import CycleState
from .filter_memo import NominatedFilterMemo
from .lazy_status import ChunkVerdicts, StatusColumn
from .node_table import NodeRows, numpy
from .signers import SCHEDULER_NAME_SIGNER_NAME
from .plugin_calls import (_bad_result, batch_form, _error, _filter_each, _filter_verdict,
                           implements, _pair, PluginCall, _PluginManager, _pre_bind_failure,
                           _raised, _status, _VALIDATED_CLASSES)
from .prebind import (SOME_OTHER_PRE_BIND_FAILED, PodInPreBind, PreBindCanceled, PreBindContext,
                      PreBindPreFlightResult, pre_bind_plugin_groups)
from .hookspecs import PROJECT, ExtensionPointSpecs
from .status import Code, Status
from .waiting_pods import WaitingPod, go_duration  # noqa: F401 (go_duration: its users import it from here)
from .types import (ClusterEvent, ClusterEventWithHint, EventResource, ActionType, NodeInfo,
                    NodeScore, NodePluginScores, NodeScoreColumns, NodeToStatus, PodInfo, PostFilterResult,
                    PreFilterResult)
from ..versions import DEFAULT as DEFAULT_FEATURES, Features

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = (1 << 63) - 1
MAX_PERMIT_TIMEOUT = 15 * 60.0
_SIGN_MEMO_IDS = count()  # one pod-memo key per Framework for its signatures

# configuration key -> (hook name, the interface name used in upstream's error messages)
_EP_HOOKS: List[Tuple[str, str, str]] = [
    ("preFilter", "pre_filter", "PreFilterPlugin"),
    ("filter", "filter", "FilterPlugin"),
    ("postFilter", "post_filter", "PostFilterPlugin"),
    ("reserve", "reserve", "ReservePlugin"),
    ("preScore", "pre_score", "PreScorePlugin"),
    ("score", "score", "ScorePlugin"),
    ("preBind", "pre_bind", "PreBindPlugin"),
    ("bind", "bind", "BindPlugin"),
    ("postBind", "post_bind", "PostBindPlugin"),
    ("permit", "permit", "PermitPlugin"),
    ("preEnqueue", "pre_enqueue", "PreEnqueuePlugin"),
    ("queueSort", "less", "QueueSortPlugin"),
    # v1.36 (TopologyAwareWorkloadScheduling): the pod group cycle's placements
    ("placementGenerate", "generate_placements", "PlacementGeneratePlugin"),
    ("placementScore", "score_placement", "PlacementScorePlugin"),
]
_HOOK_NAMES = frozenset(n for n in dir(ExtensionPointSpecs) if not n.startswith("_"))

# framework.UnrollWildCardResource(): the events a plugin without EventsToRegister is registered
# for (defaultEnqueueExtension). Not the wildcard itself: e.g. ResourceSlice and VolumeAttachment
# events do not requeue a pod such a plugin rejected.
_UNROLLED_WILDCARD_RESOURCES = (
    EventResource.Pod, EventResource.Node, EventResource.PersistentVolume,
    EventResource.PersistentVolumeClaim, EventResource.CSINode, EventResource.CSIDriver,
    EventResource.CSIStorageCapacity, EventResource.StorageClass, EventResource.ResourceClaim,
    EventResource.DeviceClass,
)


def unrolled_wildcard_resources(features) -> Tuple[EventResource, ...]:
    """UnrollWildCardResource for a version and its gates: with GenericWorkload on, Workload
    (v1.35) or PodGroup (v1.36) events too."""
    if features is not None and features.get("GenericWorkload", False):
        return _UNROLLED_WILDCARD_RESOURCES + (
            EventResource.Workload if features.version.minor == 35 else EventResource.PodGroup,)
    return _UNROLLED_WILDCARD_RESOURCES


class Framework:
    """frameworkImpl for one profile; also the Handle given to its plugins."""

    # Filter and Score through the plugins' batch forms where they have one (False: per node,
    # as the property test compares)
    use_batch = True

    def __init__(self, profile: Mapping[str, Any], registry: Mapping[str, type], *,
                 snapshot=None, cluster=None, parallelism: int = 16,
                 percentage_of_nodes_to_score: Optional[int] = None, clock=None,
                 nominator=None, activator=None, waiting_pods: Optional[Dict[str, WaitingPod]] = None,
                 pods_in_pre_bind: Optional[Dict[str, PodInPreBind]] = None,
                 source: str = "config", features: Optional[Features] = None,
                 extenders: Optional[List[Any]] = None, workload_manager: Any = None):
        self.profile_name: str = profile.get("schedulerName", "")
        # the scheduler's workload manager (handle.WorkloadManager(), GenericWorkload on): the
        # pod groups' runtime state (harness/scheduler/workload_manager.py)
        self.workload_manager = workload_manager
        # the Kubernetes version and feature gates (handle.feature_gates, as plugins read
        # feature.Features from the registry's options upstream)
        self.feature_gates: Features = features if features is not None else DEFAULT_FEATURES
        self.percentage_of_nodes_to_score = profile.get("percentageOfNodesToScore")
        self.snapshot = snapshot
        self.cluster = cluster
        self.parallelism = parallelism
        self.clock = clock
        self.nominator = nominator
        self.activator = activator
        self.waiting_pods: Dict[str, WaitingPod] = waiting_pods if waiting_pods is not None else {}
        # podsInPreBind (v1.36), shared by the scheduler's profiles as waitingPods is
        self.pods_in_pre_bind: Dict[str, PodInPreBind] = pods_in_pre_bind if pods_in_pre_bind is not None else {}
        self.score_plugin_weight: Dict[str, int] = {}
        self.plugins_map: Dict[str, Any] = {}
        self.enqueue_extensions: List[Tuple[str, List[ClusterEventWithHint]]] = []
        # the scheduler's extenders (handle.Extenders()); with any, a defaultEnqueueExtension
        # named "Extender" registers every event: a pod the extenders rejected names it
        self.extenders: List[Any] = list(extenders or [])
        if self.extenders:
            self.enqueue_extensions.append(("Extender", [
                ClusterEventWithHint(ClusterEvent(r, ActionType.All))
                for r in unrolled_wildcard_resources(self.feature_gates)]))
        self._pm: Optional[pluggy.PluginManager] = None
        # kind -> CustomResource the registry's packages declared (their CRDs)
        self.custom_resources = custom_resources(registry)
        self._build(profile, registry, source)

    @property
    def pm(self) -> pluggy.PluginManager:
        """The profile's pluggy manager, made when a plugin class is first validated."""
        if self._pm is None:
            self._pm = _PluginManager(PROJECT)
            self._pm.add_hookspecs(ExtensionPointSpecs)
        return self._pm

    # ------------------------------------------------------------------------------------------
    # construction: NewFramework
    # ------------------------------------------------------------------------------------------
    def _build(self, profile: Mapping[str, Any], registry: Mapping[str, type], source: str) -> None:
        plugins = profile.get("plugins") or {}
        where = f"profiles[{self.profile_name}]"
        needed: Set[str] = set()
        for key in ["multiPoint"] + [k for k, _, _ in _EP_HOOKS]:
            for p in (plugins.get(key) or {}).get("enabled") or []:
                needed.add(p["name"])
        plugin_config: Dict[str, Any] = {}
        for pc in profile.get("pluginConfig") or []:
            name = pc.get("name") or ""  # a nameless entry configures no plugin (kept, unused)
            if name in plugin_config:
                raise ConfigError(f"repeated config for plugin {name}", file=source, key=where)
            plugin_config[name] = pc.get("args")
        for name in sorted(needed):
            cls = registry.get(name)
            if cls is None:
                continue  # reported below as "does not exist"
            try:
                plugin = cls(plugin_config.get(name), self)
            except ConfigError:
                raise
            except Exception as e:  # a plugin that cannot start is a configuration problem
                raise ConfigError(f'initializing plugin "{name}": {e}', file=source, key=where) from None
            self.plugins_map[name] = plugin
            if type(plugin) not in _VALIDATED_CLASSES or getattr(plugin, "__dict__", {}).keys() & _HOOK_NAMES:
                try:
                    self.pm.register(plugin, name=name)
                except pluggy.PluginValidationError as e:
                    raise ConfigError(f'plugin "{name}": {e}', file=source, key=where) from None
                _VALIDATED_CLASSES.add(type(plugin))
            self._fill_enqueue_extensions(name, plugin)

        self.ep_plugins: Dict[str, List[PluginCall]] = {}
        for key, hook, iface in _EP_HOOKS:
            lst: List[PluginCall] = []
            seen: Set[str] = set()
            for p in (plugins.get(key) or {}).get("enabled") or []:
                name = p["name"]
                pl = self.plugins_map.get(name)
                if pl is None:
                    raise ConfigError(f'{iface} "{name}" does not exist', file=source, key=where)
                if not implements(pl, hook):
                    raise ConfigError(f'plugin "{name}" does not extend {iface} plugin', file=source, key=where)
                if name in seen:
                    raise ConfigError(f'plugin "{name}" already registered as "{iface}"', file=source, key=where)
                seen.add(name)
                lst.append(PluginCall(name, pl, hook))
            self.ep_plugins[key] = lst
        if (plugins.get("multiPoint") or {}).get("enabled"):
            self._expand_multi_point(plugins, source, where)

        if len(self.ep_plugins["queueSort"]) != 1:
            raise ConfigError(f'only one queue sort plugin required for profile with scheduler name '
                              f'"{self.profile_name}", but got {len(self.ep_plugins["queueSort"])}',
                              file=source, key=where)
        if not self.ep_plugins["bind"]:
            raise ConfigError(f'at least one bind plugin is needed for profile with scheduler name '
                              f'"{self.profile_name}"', file=source, key=where)
        self._score_weights(list((plugins.get("score") or {}).get("enabled") or [])
                            + list((plugins.get("multiPoint") or {}).get("enabled") or []), source, where)
        # placementScorePluginWeight: the first entry for a plugin (placementScore, multiPoint)
        self.placement_score_weight: Dict[str, int] = {}
        for e in (list((plugins.get("placementScore") or {}).get("enabled") or [])
                  + list((plugins.get("multiPoint") or {}).get("enabled") or [])):
            if e["name"] not in self.placement_score_weight and implements(self.plugins_map.get(e["name"]),
                                                                              "score_placement"):
                self.placement_score_weight[e["name"]] = int(e.get("weight") or 0) or 1
        for pc in self.ep_plugins["score"]:
            if self.score_plugin_weight.get(pc.name, 0) == 0:
                raise ConfigError(f'score plugin "{pc.name}" is not configured with weight',
                                  file=source, key=where)

        # hot-path views
        self.pre_filter_plugins = self.ep_plugins["preFilter"]
        self.filter_plugins = self.ep_plugins["filter"]
        self.post_filter_plugins = self.ep_plugins["postFilter"]
        self.pre_score_plugins = self.ep_plugins["preScore"]
        self.score_plugins = self.ep_plugins["score"]
        self.reserve_plugins = self.ep_plugins["reserve"]
        self.permit_plugins = self.ep_plugins["permit"]
        self.pre_bind_plugins = self.ep_plugins["preBind"]
        self.bind_plugins = self.ep_plugins["bind"]
        self.post_bind_plugins = self.ep_plugins["postBind"]
        self.pre_enqueue_plugins = self.ep_plugins["preEnqueue"]
        self.queue_sort_plugin = self.ep_plugins["queueSort"][0]
        # batch forms of in-tree Filter and Score plugins (None: called per node)
        self._filter_batch = {p.name: batch_form(p.plugin, "filter", "filter_nodes") for p in self.filter_plugins}
        self._score_batch = {p.name: batch_form(p.plugin, "score", "score_nodes") for p in self.score_plugins}
        self._normalize_batch = {p.name: batch_form(p.plugin, "normalize_score", "normalize_scores")
                                 for p in self.score_plugins}
        self._add_pod_calls = [PluginCall(p.name, p.plugin, "add_pod") for p in self.pre_filter_plugins
                               if implements(p.plugin, "add_pod")]
        self._remove_pod_calls = [PluginCall(p.name, p.plugin, "remove_pod") for p in self.pre_filter_plugins
                                  if implements(p.plugin, "remove_pod")]
        self._normalize_calls = {p.name: PluginCall(p.name, p.plugin, "normalize_score")
                                 for p in self.score_plugins if implements(p.plugin, "normalize_score")}
        self._unreserve_calls = [PluginCall(p.name, p.plugin, "unreserve") for p in self.reserve_plugins
                                 if implements(p.plugin, "unreserve")]
        self._pre_bind_pre_flight_calls = [
            (p.name, PluginCall(p.name, p.plugin, "pre_bind_pre_flight") if implements(p.plugin, "pre_bind_pre_flight") else None)
            for p in self.pre_bind_plugins]
        # OpportunisticBatching (v1.35 on): the batch, and the plugins that sign pods
        self.batch: Optional[OpportunisticBatch] = None
        self.enable_signatures = False
        self._sign_calls: List[PluginCall] = []
        self._sign_order: List[int] = []  # the order _sign_pod asks them in
        self._sign_memo_key = "framework.sign_pod:%d" % next(_SIGN_MEMO_IDS)
        if self.feature_gates.get("OpportunisticBatching", False):  # (a gate v1.34 does not know)
            self.batch = OpportunisticBatch(self)
            self._compute_batchable_plugins()
        opts = parallelize.current()
        # QueueSort as a key (queue_sort_key), unless `run --coverage` counts its calls
        self._sort_key = batch_form(self.queue_sort_plugin.plugin, "less", "sort_key")
        if opts is not None and opts.coverage is not None:  # `run --coverage`: wrap the calls
            opts.coverage.instrument(self)
            self._sort_key = None

    def _compute_batchable_plugins(self) -> None:
        """computeBatchablePlugins: signatures are on only without extenders and when every
        PreFilter, Filter, PreScore and Score plugin implements SignPod (a plugin written
        before v1.35 turns them off for the profile, and the pods are scheduled as without
        batching)."""
        # "Disabling signatures for profile because it has extenders configured."
        self.enable_signatures = not self.extenders
        seen: Set[str] = set()
        for pc in (list(self.pre_filter_plugins) + list(self.filter_plugins) + list(self.pre_score_plugins)
                   + list(self.score_plugins)):
            if pc.name in seen:
                continue
            seen.add(pc.name)
            if implements(pc.plugin, "sign_pod"):
                self._sign_order.append(len(self._sign_calls))
                self._sign_calls.append(PluginCall(pc.name, pc.plugin, "sign_pod"))
            else:
                self.enable_signatures = False

    def sign_pod(self, pod) -> Optional[str]:
        """SignPod: the pod's signature (two pods with the same one get the same feasibility and
        scores on the same nodes), or None when a plugin cannot sign it: its fragments, keyed,
        one per key (a later plugin's fragment replaces an earlier one's), with the scheduler
        name, as JSON with sorted keys (json.Marshal of a map).

        Computed once per pod spec (the pod's memo, which copies that change only the status or
        nodeName share): v1.35 signs in every cycle, v1.36 when the pod enters the queue or is
        updated, the same value as long as the spec is, which is all a signature may read."""
        if not self.enable_signatures:
            return None
        memo = getattr(pod, "_memo", None)
        if memo is None:
            return self._sign_pod(pod)
        try:
            return memo[self._sign_memo_key]
        except KeyError:
            pass
        sig = memo[self._sign_memo_key] = self._sign_pod(pod)
        return sig

    def _sign_pod(self, pod) -> Optional[str]:
        """The signature itself. Any refusal gives None whichever plugin it comes from, so the
        plugin that refused last is asked first (with the default profile PodTopologySpread
        refuses every pod); the fragments are merged in the plugins' order, as upstream's."""
        calls = self._sign_calls
        order = self._sign_order
        fragments: List[Any] = [None] * len(calls)
        for i in order:
            pc = calls[i]
            try:
                out = pc.fn(pod)
                if out.__class__ is tuple and len(out) == 2:
                    frags, st = out
                else:
                    frags, st = out, None
                if st is not None:
                    st = _status(pc.name, "SignPod", st)
            except Exception as e:
                st = _raised(e)
                frags = None
            if st is not None and not st.is_success():
                if order[0] != i:  # "SignPod can't sign pod due to plugin" (an Error is logged)
                    order.remove(i)
                    order.insert(0, i)
                return None
            fragments[i] = frags
        sig: Dict[str, Any] = {SCHEDULER_NAME_SIGNER_NAME: pod.scheduler_name}
        for frags in fragments:
            for frag in frags or ():
                key, value = frag if frag.__class__ is tuple else (
                    (frag.key, frag.value) if hasattr(frag, "key") else frag)
                sig[key if key.__class__ is str else str(key)] = value
        try:
            return json.dumps(sig, sort_keys=True, separators=(",", ":"), default=repr)
        except (TypeError, ValueError):
            return None  # "SignPod failed to marshal signature object"

    def _expand_multi_point(self, plugins: Mapping, source: str, where: str) -> None:
        """expandMultiPointPlugins."""
        mp = (plugins.get("multiPoint") or {}).get("enabled") or []
        for key, hook, iface in _EP_HOOKS:
            ep = plugins.get(key) or {}
            enabled = [p["name"] for p in ep.get("enabled") or []]
            disabled = {p["name"] for p in ep.get("disabled") or []}
            if "*" in disabled:
                continue
            mp_enabled: List[str] = []
            overrides: List[str] = []
            for p in mp:
                name = p["name"]
                pl = self.plugins_map.get(name)
                if pl is None:
                    raise ConfigError(f'{iface} "{name}" does not exist', file=source, key=where)
                if not implements(pl, hook):
                    continue
                if name in disabled:
                    continue
                if name in enabled:
                    if name not in overrides:
                        overrides.append(name)
                    continue
                if name in mp_enabled:
                    raise ConfigError(f'plugin "{name}" already registered as "{iface}"', file=source, key=where)
                mp_enabled.append(name)
            order = [n for n in enabled if n in overrides] + mp_enabled + [n for n in enabled if n not in overrides]
            self.ep_plugins[key] = [PluginCall(n, self.plugins_map[n], hook) for n in order]

    def _score_weights(self, entries: Sequence[Mapping], source: str, where: str) -> None:
        """getScoreWeights: the first entry for a plugin wins (score before multiPoint)."""
        total = 0
        for e in entries:
            pl = self.plugins_map.get(e["name"])
            if pl is None or not implements(pl, "score"):
                continue
            if e["name"] in self.score_plugin_weight:
                continue
            w = int(e.get("weight") or 0) or 1
            self.score_plugin_weight[e["name"]] = w
            if w * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
                raise ConfigError("total score of Score plugins could overflow", file=source, key=where)
            total += w * MAX_NODE_SCORE

    def _fill_enqueue_extensions(self, name: str, plugin: Any) -> None:
        """fillEnqueueExtensions: plugins that can reject a pod register events; without
        EventsToRegister they are requeued on every event."""
        if not any(implements(plugin, h) for h in ("pre_enqueue", "pre_filter", "filter", "reserve", "permit")):
            return
        if implements(plugin, "events_to_register"):
            try:
                events = list(plugin.events_to_register() or [])
            except Exception as e:
                raise ConfigError(f'plugin "{name}": events_to_register failed: {e}') from None
        else:
            events = [ClusterEventWithHint(ClusterEvent(r, ActionType.All))
                      for r in unrolled_wildcard_resources(self.feature_gates)]
        self.enqueue_extensions.append((name, events))

    # ------------------------------------------------------------------------------------------
    # Handle
    # ------------------------------------------------------------------------------------------
    def snapshot_shared_lister(self):
        return self.snapshot

    def dynamic_lister(self, kind_or_gvk: str) -> DynamicLister:
        """The lister of a custom resource the plugin packages declared (by its kind or its
        `<plural>.<version>.<group>`), as a dynamic informer's lister upstream."""
        cr = find_custom_resource(self.custom_resources, kind_or_gvk)
        if cr is None:
            raise KeyError(f"no custom resource {kind_or_gvk!r} is declared (declared: "
                           f"{', '.join(sorted(self.custom_resources)) or 'none'}); a plugin package "
                           f"declares its kinds with the schedharness_custom_resources hook")
        return DynamicLister(self.cluster, cr)

    def list_plugins(self) -> Dict[str, List[Dict[str, Any]]]:
        """ListPlugins: the effective plugins of each extension point, with score weights."""
        out: Dict[str, List[Dict[str, Any]]] = {}
        for key, _, _ in _EP_HOOKS:
            rows = []
            for pc in self.ep_plugins[key]:
                row: Dict[str, Any] = {"name": pc.name}
                if key == "score":
                    row["weight"] = self.score_plugin_weight[pc.name]
                rows.append(row)
            if rows:
                out[key] = rows
        return out

    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def nominated_pods_for_node(self, node_name: str) -> List[PodInfo]:
        if self.nominator is None:
            return []
        return self.nominator.nominated_pods_for_node(node_name)

    def get_waiting_pod(self, uid: str) -> Optional[WaitingPod]:
        return self.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], None]) -> None:
        for wp in list(self.waiting_pods.values()):
            callback(wp)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    def activate(self, pods) -> None:
        if self.activator is not None:
            self.activator(pods)

    # ------------------------------------------------------------------------------------------
    # queueing
    # ------------------------------------------------------------------------------------------
    def less(self, a, b) -> bool:
        return self.queue_sort_plugin.fn(a, b)

    def queue_sort_key(self) -> Optional[Callable]:
        """The QueueSort plugin's less as a key function (an in-tree plugin's fast path:
        less(a, b) is key(a) < key(b)), or None: the queue then calls less."""
        return self._sort_key if self.use_batch else None

    def run_pre_enqueue_plugins(self, pod) -> Optional[Status]:
        for pc in self.pre_enqueue_plugins:
            try:
                s = _status(pc.name, "PreEnqueue", pc.fn(pod))
            except Exception as e:
                s = _raised(e)
            if s is not None and not s.is_success():
                s.plugin = pc.name
                return s
        return None

    # ------------------------------------------------------------------------------------------
    # scheduling cycle
    # ------------------------------------------------------------------------------------------
    def run_pre_filter_plugins(self, state: CycleState, pod
                               ) -> Tuple[Optional[PreFilterResult], Optional[Status], Set[str]]:
        """RunPreFilterPlugins."""
        skip: Set[str] = set()
        nodes = self.snapshot.list()
        result: Optional[PreFilterResult] = None
        plugins_with_nodes: Set[str] = set()
        return_status: Optional[Status] = None
        try:
            for pc in self.pre_filter_plugins:
                try:
                    r, s = _pair(pc.name, "PreFilter", pc.fn(state, pod, nodes),
                                 "(PreFilterResult or None, Status or None)")
                except Exception as e:
                    r, s = None, _raised(e)
                if s is None:
                    if r is None:
                        continue  # Success and all nodes: nothing to merge
                elif s.code == Code.Skip:
                    skip.add(pc.name)
                    continue
                if s is not None and s.code != Code.Success:
                    s.plugin = pc.name
                    if s.code == Code.UnschedulableAndUnresolvable:
                        return None, s, set()
                    if s.code == Code.Unschedulable:
                        return_status = s
                        continue
                    return None, Status(Code.Error, err=RuntimeError(
                        f'running PreFilter plugin "{pc.name}": {s.as_error()}'), plugin=pc.name), set()
                if r is not None and not r.all_nodes():
                    plugins_with_nodes.add(pc.name)
                result = r if result is None else result.merge(r)
                if result is not None and not result.all_nodes() and not result.node_names:
                    names = sorted(plugins_with_nodes)
                    if len(names) == 1:
                        msg = f"node(s) didn't satisfy plugin {names[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    return result, Status(Code.UnschedulableAndUnresolvable, msg), plugins_with_nodes
            return result, return_status, plugins_with_nodes
        finally:
            state.skip_filter_plugins = skip

    def run_pre_filter_extension_add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info) -> Optional[Status]:
        """RunPreFilterExtensionAddPod."""
        return self._run_pre_filter_extension(self._add_pod_calls, "AddPod", state, pod_to_schedule,
                                              pod_info_to_add, node_info)

    def run_pre_filter_extension_remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info) -> Optional[Status]:
        """RunPreFilterExtensionRemovePod."""
        return self._run_pre_filter_extension(self._remove_pod_calls, "RemovePod", state, pod_to_schedule,
                                              pod_info_to_remove, node_info)

    @staticmethod
    def _run_pre_filter_extension(calls: List[PluginCall], what: str, state, pod_to_schedule, pod_info,
                                  node_info) -> Optional[Status]:
        """AddPod/RemovePod of the PreFilter plugins that did not Skip, in order."""
        for pc in calls:
            if pc.name in state.skip_filter_plugins:
                continue
            try:
                s = _status(pc.name, what, pc.fn(state, pod_to_schedule, pod_info, node_info))
            except Exception as e:
                s = _raised(e)
            if s is not None and not s.is_success():
                return Status(Code.Error, err=RuntimeError(
                    f'running {what} on PreFilter plugin "{pc.name}": {s.as_error()}'))
        return None

    def run_filter_plugins(self, state: CycleState, pod, node_info: NodeInfo) -> Optional[Status]:
        """RunFilterPlugins: the first rejecting plugin's status, with its name."""
        calls = state.filter_calls
        if calls is None or calls[0] is not self:
            skip = state.skip_filter_plugins
            calls = state.filter_calls = (self, [(pc.name, pc.fn) for pc in self.filter_plugins
                                                 if pc.name not in skip])
        for name, fn in calls[1]:
            try:
                s = fn(state, pod, node_info)
                if s is not None and s.__class__ is not Status and not isinstance(s, Status):
                    raise _bad_result(name, "Filter", s, "a Status or None")
            except Exception as e:
                s = _raised(e)
            if s is not None and s.code != 0:  # Code.Success
                return _filter_verdict(name, s)
        return None

    def run_filter_plugins_batch(self, state: CycleState, pod, nodes: List[NodeInfo]) -> List[Optional[Status]]:
        """RunFilterPlugins on each of `nodes`, plugin by plugin over the nodes still feasible:
        each node's status is what run_filter_plugins gives it (the same plugins are called on
        the same nodes, batch forms standing for their per-node calls)."""
        skip = state.skip_filter_plugins
        batch = self._filter_batch
        out: List[Optional[Status]] = [None] * len(nodes)
        alive = list(range(len(nodes)))
        for pc in self.filter_plugins:
            name = pc.name
            if name in skip:
                continue
            if len(alive) == len(nodes):
                sub = nodes
            elif nodes.__class__ is NodeRows:
                sub = nodes.take(alive)
            else:
                sub = [nodes[i] for i in alive]
            sts = self._batch_filter(batch, name, state, pod, sub)
            if sts.__class__ is StatusColumn:
                # a column: only its rejected nodes' statuses are made
                rejected = sts.rejected()
                if not rejected:
                    continue
                gone = set(rejected)
                for k in rejected:
                    out[alive[k]] = _filter_verdict(name, sts[k])
                alive = [i for k, i in enumerate(alive) if k not in gone]
                if not alive:
                    break
                continue
            if sts is None:
                sts = _filter_each(name, pc.fn, state, pod, sub)
            if not any(sts):  # all None (a Status is truthy): every node still feasible
                continue
            still = []
            for i, s in zip(alive, sts):
                if s is not None and s.code != 0:  # Code.Success
                    out[i] = _filter_verdict(name, s)
                else:
                    still.append(i)
            alive = still
            if not alive:
                break
        return out

    def _batch_filter(self, batch, name: str, state: CycleState, pod, sub):
        """The plugin's batch Filter form over sub, or None: it has none, the batch forms are
        off, or it raised (the per-node calls then give each node its own error)."""
        bfn = batch.get(name) if self.use_batch else None
        if bfn is None:
            return None
        try:
            return bfn(state, pod, sub)
        except Exception:
            return None

    def run_filter_plugins_batch_lazy(self, state: CycleState, pod, nodes: NodeRows) -> ChunkVerdicts:
        """run_filter_plugins_batch on rows of the node table, as ChunkVerdicts: what a batch
        form gives as a StatusColumn stays a column (its statuses made when read); any other
        status is kept as the plugin gave it, named as run_filter_plugins_batch names it."""
        np = numpy()
        skip = state.skip_filter_plugins
        batch = self._filter_batch
        n = len(nodes)
        out = ChunkVerdicts(n)
        alive = np.arange(n)
        for pc in self.filter_plugins:
            name = pc.name
            if name in skip:
                continue
            sub = nodes if len(alive) == n else nodes.take(alive.tolist())
            sts = self._batch_filter(batch, name, state, pod, sub)
            if sts.__class__ is StatusColumn:
                if sts.passes_all():
                    continue
                rejected = out.set_column(alive, sts, name)
                if rejected is not None:
                    if rejected.any():
                        alive = alive[~rejected]
                        if not len(alive):
                            break
                    continue
                sts = list(sts)  # a kind that is not a rejection: made one by one below
            if sts is None:
                sts = _filter_each(name, pc.fn, state, pod, sub)
            if not any(sts):  # all None (a Status is truthy): every node still feasible
                continue
            still = []
            for i, s in zip(alive.tolist(), sts):
                if s is not None and s.code != 0:  # Code.Success
                    out.set_status(i, _filter_verdict(name, s))
                else:
                    still.append(i)
            alive = np.array(still, dtype=np.int64)
            if not len(alive):
                break
        return out

    def run_filter_plugins_verbose(self, state: CycleState, pod, node_info: NodeInfo) -> List[Tuple[str, Optional[Status]]]:
        """Every Filter plugin's status on one node (for `explain`; the cycle stops at the first)."""
        out = []
        for pc in self.filter_plugins:
            if pc.name in state.skip_filter_plugins:
                out.append((pc.name, Status(Code.Skip)))
                continue
            try:
                s = _status(pc.name, "Filter", pc.fn(state, pod, node_info))
            except Exception as e:
                s = _error(pc.name, e)
            out.append((pc.name, s))
        return out

    def run_post_filter_plugins(self, state, pod, filtered_node_status_map: NodeToStatus
                                ) -> Tuple[Optional[PostFilterResult], Status]:
        """RunPostFilterPlugins."""
        if getattr(state, "skip_all_post_filter_plugins", False):
            return None, Status(Code.Unschedulable, "All PostFilter plugins are skipped")
        result: Optional[PostFilterResult] = None
        reasons: List[str] = []
        rejector = ""
        for pc in self.post_filter_plugins:
            try:
                r, s = _pair(pc.name, "PostFilter", pc.fn(state, pod, filtered_node_status_map),
                             "(PostFilterResult or None, Status)")
            except Exception as e:
                r, s = None, _raised(e)
            if s is None or s.is_success():
                return r, s if s is not None else Status(Code.Success)
            if s.code == Code.UnschedulableAndUnresolvable:
                s.plugin = pc.name
                return r, s
            if not s.is_rejected():
                return None, Status(Code.Error, err=s.as_error(), plugin=pc.name)
            if r is not None and r.nominating_mode != "ModeNoop":
                result = r
            reasons.extend(s.get_reasons())
            if not rejector:
                rejector = pc.name
        return result, Status(Code.Unschedulable, *reasons, plugin=rejector)

    # the walk over the node table hands its rejections to the diagnosis as columns
    # (lazy_status; off = one Status per rejected node as the walk meets it)
    lazy_statuses = True

    # remember RunFilterPluginsWithNominatedPods's answers where only node-local in-tree plugins
    # run (harness.framework.filter_memo; off = every call filters)
    memo_nominated_filters = True
    _nominated_filter_memo = None

    def run_filter_plugins_with_nominated_pods(self, state, pod, info: NodeInfo) -> Optional[Status]:
        """RunFilterPluginsWithNominatedPods, or its remembered answer (filter_memo)."""
        if not self.memo_nominated_filters:
            return self.run_filter_plugins_with_nominated_pods_uncached(state, pod, info)
        memo = self._nominated_filter_memo
        if memo is None:
            memo = self._nominated_filter_memo = NominatedFilterMemo(self)
        return memo.run(state, pod, info, self.run_filter_plugins_with_nominated_pods_uncached)

    def run_filter_plugins_with_nominated_pods_many(self, state, pod, infos: List[NodeInfo]) -> List[Optional[Status]]:
        """run_filter_plugins_with_nominated_pods on each of `infos` (one loop over the memo)."""
        if (not self.memo_nominated_filters or "run_filter_plugins_with_nominated_pods" in self.__dict__
                or type(self).run_filter_plugins_with_nominated_pods is not Framework.run_filter_plugins_with_nominated_pods):
            return [self.run_filter_plugins_with_nominated_pods(state, pod, info) for info in infos]
        memo = self._nominated_filter_memo
        if memo is None:
            memo = self._nominated_filter_memo = NominatedFilterMemo(self)
        return memo.run_many(state, pod, infos, self.run_filter_plugins_with_nominated_pods_uncached)

    def nominated_filter_rows(self, state, pod, table, rows):
        """run_filter_plugins_with_nominated_pods' remembered answers by row of the snapshot's
        node table (NominatedFilterMemo.lookup_rows), or None (ask node by node)."""
        if (not self.memo_nominated_filters or "run_filter_plugins_with_nominated_pods" in self.__dict__
                or type(self).run_filter_plugins_with_nominated_pods is not Framework.run_filter_plugins_with_nominated_pods):
            return None
        memo = self._nominated_filter_memo
        if memo is None:
            memo = self._nominated_filter_memo = NominatedFilterMemo(self)
        return memo.lookup_rows(state, pod, table, rows)

    def run_filter_plugins_with_nominated_pods_uncached(self, state, pod, info: NodeInfo) -> Optional[Status]:
        """RunFilterPluginsWithNominatedPods: filter twice, with and without the nominated pods of
        equal or higher priority."""
        status: Optional[Status] = None
        pods_added = False
        for i in range(2):
            state_to_use, node_info_to_use = state, info
            if i == 0:
                pods_added, state_to_use, node_info_to_use, err = self._add_ge_nominated_pods(pod, state, info)
                if err is not None:
                    return err
            elif not pods_added or not (status is None or status.is_success()):
                break
            status = self.run_filter_plugins(state_to_use, pod, node_info_to_use)
            if status is not None and not status.is_success() and not status.is_rejected():
                return status
        return status

    def _add_ge_nominated_pods(self, pod, state, node_info):
        nominated = self.nominated_pods_for_node(node_info.node.name)
        if not nominated:
            return False, state, node_info, None
        node_info_out = node_info.snapshot()
        state_out = state.clone()
        added = False
        for pi in nominated:
            if pi.pod.priority >= pod.priority and pi.pod.uid != pod.uid:
                node_info_out.add_pod_info(pi)
                s = self.run_pre_filter_extension_add_pod(state_out, pod, pi, node_info_out)
                if s is not None and not s.is_success():
                    return False, state, node_info, s
                added = True
        return added, state_out, node_info_out, None

    def run_pre_score_plugins(self, state, pod, nodes: List[NodeInfo]) -> Optional[Status]:
        skip: Set[str] = set()
        try:
            for pc in self.pre_score_plugins:
                try:
                    s = pc.fn(state, pod, nodes)
                    if s is None:
                        continue
                    if s.__class__ is not Status:
                        s = _status(pc.name, "PreScore", s)
                except Exception as e:
                    s = _raised(e)
                if s is not None and s.code == Code.Skip:
                    skip.add(pc.name)
                    continue
                if s is not None and not s.is_success():
                    return Status(Code.Error, err=RuntimeError(
                        f'running PreScore plugin "{pc.name}": {s.as_error()}'), plugin=pc.name)
            return None
        finally:
            state.skip_score_plugins = skip

    def run_score_plugins(self, state, pod, nodes: List[NodeInfo], detail: Optional[Dict[str, Any]] = None,
                          node_map: Optional[Callable] = None) -> Tuple[List[NodePluginScores], Optional[Status]]:
        """RunScorePlugins: raw scores, NormalizeScore, then weights. `detail`, when given,
        receives {plugin: (raw NodeScore list, normalized list, weight)} for `explain`.
        `node_map(plugin, fn, nodes)`, when given, calls a plugin's Score on each node (on the
        Parallelizer's threads, `--parallel`) instead of the batch form or a plain loop."""
        plugins = [pc for pc in self.score_plugins if pc.name not in state.skip_score_plugins]
        columns: List[Tuple[str, List[int]]] = []
        for pc in plugins:
            bfn = self._score_batch.get(pc.name) if (self.use_batch and node_map is None) else None
            scores = None
            if bfn is not None:
                try:
                    scores = bfn(state, pod, nodes)  # None: a node needs the per-node call
                except Exception:
                    scores = None
            if scores is None:
                fn = pc.fn
                try:
                    results = ([fn(state, pod, ni) for ni in nodes] if node_map is None else
                               node_map(pc.name, lambda ni, _fn=fn: _fn(state, pod, ni), nodes))
                    for out in results:
                        if (out.__class__ is not tuple or len(out) != 2 or out[0].__class__ is not int
                                or (out[1] is not None and not isinstance(out[1], Status))):
                            raise _bad_result(pc.name, "Score", out, "(int score, Status or None)")
                except Exception as e:
                    results = [(0, _raised(e))]
                for _, st in results:
                    if st is not None and st.code != Code.Success:
                        return [], Status(Code.Error, err=RuntimeError(
                            f'running Score plugins: plugin "{pc.name}" failed with: {st.as_error()}'), plugin=pc.name)
                scores = [sc for sc, _ in results]
            call = self._normalize_calls.get(pc.name)
            raw = None
            if call is not None and detail is None and self.use_batch:
                bnorm = self._normalize_batch.get(pc.name)
                if bnorm is not None:
                    normalized = bnorm(state, pod, scores)  # None: use NormalizeScore itself
                    if normalized is not None:
                        scores, call = normalized, None
            if call is not None or detail is not None:
                if scores.__class__ is not list:
                    scores = list(scores) if not hasattr(scores, "tolist") else scores.tolist()
                names = [ni.node.name for ni in nodes]
                node_scores = [NodeScore(name, sc) for name, sc in zip(names, scores)]
                if detail is not None:
                    raw = [NodeScore(name, sc) for name, sc in zip(names, scores)]
                if call is not None:
                    try:
                        st = _status(pc.name, "NormalizeScore", call.fn(state, pod, node_scores))
                    except Exception as e:
                        st = _raised(e)
                    if st is not None and not st.is_success():
                        return [], Status(Code.Error, err=RuntimeError(
                            f'running Normalize on Score plugins: plugin "{pc.name}" failed with: '
                            f'{st.as_error()}'), plugin=pc.name)
                    scores = [ns.score for ns in node_scores]
                if detail is not None:
                    detail[pc.name] = (raw, node_scores, self.score_plugin_weight[pc.name])
            columns.append((pc.name, scores))
        if columns and all(hasattr(sc, "dtype") for _, sc in columns):
            return self._weigh_columns(nodes, columns)
        columns = [(name, sc.tolist() if hasattr(sc, "dtype") else sc) for name, sc in columns]
        names = [ni.node.name for ni in nodes]
        totals = [0] * len(names)
        weighted: List[Tuple[str, List[int]]] = []
        for name, scores in columns:
            if scores and (max(scores) > MAX_NODE_SCORE or min(scores) < MIN_NODE_SCORE):
                bad = next(sc for sc in scores if sc > MAX_NODE_SCORE or sc < MIN_NODE_SCORE)
                return [], _invalid_score(name, bad)
            w = self.score_plugin_weight[name]
            col = scores if w == 1 else [sc * w for sc in scores]
            weighted.append((name, col))
            totals = list(map(add, totals, col))
        out = list(map(NodePluginScores, names, repeat(None), totals, repeat(weighted), range(len(names))))
        return out, None

    def _weigh_columns(self, nodes: List[NodeInfo], columns) -> Tuple[Any, Optional[Status]]:
        """The end of run_score_plugins when every plugin gave an int64 column (batch forms on
        the node table): the same range check and weighted totals, with the scores given as a
        NodeScoreColumns that builds its NodePluginScores (and weighs each column) only when
        they are read. The columns are checked and weighed as one matrix; a column out of range
        is then named in the plugins' order, as the loop over them does."""
        np = numpy()
        weights = [self.score_plugin_weight[name] for name, _ in columns]
        if len(nodes) == 0 or any(sc.dtype != np.int64 for _, sc in columns):
            return self._weigh_columns_one_by_one(nodes, columns)
        # (np.array of equal-length int64 columns is np.stack's matrix, without its Python checks)
        m = np.array([sc for _, sc in columns]) if len(columns) > 1 else columns[0][1].reshape(1, -1)
        if int(m.max()) > MAX_NODE_SCORE or int(m.min()) < MIN_NODE_SCORE:
            for name, scores in columns:
                if int(scores.max()) > MAX_NODE_SCORE or int(scores.min()) < MIN_NODE_SCORE:
                    bad = next(sc for sc in scores.tolist() if sc > MAX_NODE_SCORE or sc < MIN_NODE_SCORE)
                    return [], _invalid_score(name, bad)
        totals = np.asarray(weights, dtype=np.int64) @ m
        return NodeScoreColumns(nodes, totals, columns, weights), None

    def _weigh_columns_one_by_one(self, nodes: List[NodeInfo], columns) -> Tuple[Any, Optional[Status]]:
        """_weigh_columns column by column (no nodes, or a column that is not int64)."""
        weights = []
        totals = None
        for name, scores in columns:
            if len(scores) and (int(scores.max()) > MAX_NODE_SCORE or int(scores.min()) < MIN_NODE_SCORE):
                bad = next(sc for sc in scores.tolist() if sc > MAX_NODE_SCORE or sc < MIN_NODE_SCORE)
                return [], _invalid_score(name, bad)
            w = self.score_plugin_weight[name]
            weights.append(w)
            col = scores if w == 1 else scores * w
            totals = col if totals is None else totals + col
        return NodeScoreColumns(nodes, totals, columns, weights), None

    def run_reserve_plugins_reserve(self, state, pod, node_name: str) -> Optional[Status]:
        """RunReservePluginsReserve."""
        return self._run_node_plugins(self.reserve_plugins, "Reserve", state, pod, node_name)

    @staticmethod
    def _run_node_plugins(calls: List[PluginCall], point: str, state, pod, node_name: str,
                          skip: Set[str] = frozenset()) -> Optional[Status]:
        """Reserve and PreBind, with no time passing (see _run_node_plugins_task)."""
        return drive(Framework._run_node_plugins_task(calls, point, state, pod, node_name, skip))

    @staticmethod
    def _run_node_plugins_task(calls: List[PluginCall], point: str, state, pod, node_name: str,
                               skip: Set[str] = frozenset()) -> Task:
        """Reserve and PreBind: in order, stop at the first failure; a rejection keeps its
        code with the plugin's name, anything else becomes `running <point> plugin "X": ...`.
        A task (a hook that blocks, framework/blocking.py) is waited for in virtual time."""
        for pc in calls:
            if pc.name in skip:
                continue
            try:
                s = pc.fn(state, pod, node_name)
                if is_task(s):
                    s = yield from s
                s = _status(pc.name, point, s)
            except Exception as e:
                s = _raised(e)
            if s is not None and not s.is_success():
                if s.is_rejected():
                    s.plugin = pc.name
                    return s
                return Status(Code.Error, err=RuntimeError(
                    f'running {point} plugin "{pc.name}": {s.as_error()}'), plugin=pc.name)
        return None

    def run_reserve_plugins_unreserve(self, state, pod, node_name: str) -> None:
        for pc in reversed(self._unreserve_calls):
            try:
                pc.fn(state, pod, node_name)
            except Exception:
                pass  # Unreserve must not fail; upstream has no status to report either

    def run_permit_plugins(self, state, pod, node_name: str, add_waiting: bool = True) -> Optional[Status]:
        """RunPermitPlugins; a Wait adds the pod to the waiting pods (AddWaitingPod) unless
        `add_waiting` is False (v1.36's pod group cycle only checks Permit)."""
        waits: Dict[str, float] = {}
        for pc in self.permit_plugins:
            try:
                out = pc.fn(state, pod, node_name)
                if not (isinstance(out, tuple) and len(out) == 2 and (out[0] is None or isinstance(out[0], Status))
                        and (out[1] is None or (isinstance(out[1], (int, float)) and not isinstance(out[1], bool)))):
                    raise _bad_result(pc.name, "Permit", out, "(Status or None, timeout seconds)")
                s, timeout = out
            except Exception as e:
                s, timeout = _raised(e), 0
            if s is not None and not s.is_success():
                if s.is_rejected():
                    s.plugin = pc.name
                    return s
                if s.is_wait():
                    waits[pc.name] = min(float(timeout or 0), MAX_PERMIT_TIMEOUT)
                else:
                    return Status(Code.Error, err=RuntimeError(
                        f'running Permit plugin "{pc.name}": {s.as_error()}'), plugin=pc.name)
        if waits:
            now = self.clock.now() if self.clock is not None else 0.0
            if add_waiting:
                self.waiting_pods[pod.uid] = WaitingPod(pod, waits, now)
            return Status(Code.Wait, f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"')
        return None

    def will_wait_on_permit(self, pod) -> bool:
        return pod.uid in self.waiting_pods

    # ------------------------------------------------------------------------------------------
    # binding cycle
    # ------------------------------------------------------------------------------------------
    def run_pre_bind_pre_flights(self, state, pod, node_name: str) -> Optional[Status]:
        """RunPreBindPreFlights: Success when a plugin will work, Skip when none will, an Error
        at the first plugin that fails (or returns a code it may not). Records the skipped
        plugins and, from v1.36, those whose PreBindPreFlightResult allows parallel PreBind."""
        skip: Set[str] = set()
        parallel: Set[str] = set()
        parallel_groups = self.feature_gates.has("PreBindParallelGroups")
        returning: Optional[Status] = Status(Code.Skip)
        for name, call in self._pre_bind_pre_flight_calls:
            if call is None:
                # a PreBind plugin without PreBindPreFlight is assumed to have work to do
                returning = None
                continue
            try:
                out = call.fn(state, pod, node_name)
                if isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], PreBindPreFlightResult):
                    if out[0].allow_parallel and parallel_groups:
                        parallel.add(name)
                    out = out[1]
                s = _status(name, "PreBindPreFlight", out)
            except Exception as e:
                s = _raised(e)
            code = Code.Success if s is None else s.code
            if code == Code.Error:
                return Status(Code.Error, err=RuntimeError(f'running PreBindPreFlight "{name}": {s.as_error()}'))
            if code == Code.Success:
                returning = None
            elif code == Code.Skip:
                skip.add(name)
            else:
                return Status(Code.Error, err=RuntimeError(
                    f'PreBindPreFlight {name} returned "{code}", which is unsupported. It is supposed '
                    f'to return Success, Skip, or Error status'))
        state.skip_pre_bind_plugins = skip
        state.parallel_pre_bind_plugins = parallel
        return returning

    def run_pre_bind_plugins(self, state, pod, node_name: str) -> Optional[Status]:
        """RunPreBindPlugins (skipping those whose PreBindPreFlight returned Skip), with no
        time passing."""
        return drive(self.run_pre_bind_plugins_task(state, pod, node_name))

    def run_pre_bind_plugins_task(self, state, pod, node_name: str,
                                  ctx: Optional[PreBindContext] = None) -> Task:
        """RunPreBindPlugins as a task of the binding cycle (a PreBind hook may block): the
        plugins in groups (getPreBindPluginGroups; v1.36 runs consecutive plugins whose
        PreBindPreFlight allowed it together, earlier versions one by one), a group after the
        other, stopping at the first failure. `ctx` is the binding cycle's context (v1.36: the
        pod in PreBind that preemption may cancel)."""
        calls = self.pre_bind_plugins
        run_ctx = PreBindContext(parent=ctx)  # context.WithCancelCause(ctx)
        groups = pre_bind_plugin_groups([pc.name for pc in calls], state.skip_pre_bind_plugins,
                                        state.parallel_pre_bind_plugins)
        for group in groups:
            st = yield from self._run_pre_bind_group_task([calls[i] for i in group], state, pod,
                                                          node_name, run_ctx)
            if st is not None:
                return st
        return None

    def _run_pre_bind_group_task(self, calls: List[PluginCall], state, pod, node_name: str,
                                 ctx: PreBindContext) -> Task:
        """One group of RunPreBindPlugins: a single plugin runs on its own; the plugins of a
        parallel group all start at this instant (Parallelizer().Until, in plugin order; one
        that would start after another failed does not, as ParallelizeUntil stops handing out
        pieces), wait in virtual time side by side, and the first failure (earliest in virtual
        time, then in plugin order) is the group's: it cancels the others' context ("some other
        PreBind operation failed"), and the group ends when all of them returned. A failure
        is kept with its code and the plugin's name when it is a rejection, else
        ``running PreBind plugin "X": <error>`` (the context's cause when it was cancelled)."""
        parallel = len(calls) > 1
        clock = self.clock
        t = clock.now() if clock is not None else 0.0
        first: List[Optional[Status]] = [None]
        running: List[list] = []  # [due, order, name, task, thrown]

        def outcome(name: str, fn) -> Optional[Any]:
            """Run one step of a plugin: its next wait (a number), or its failure/None."""
            try:
                out = fn()
            except StopIteration as stop:
                return ("done", _pre_bind_failure(name, stop.value, None, ctx))
            except PreBindCanceled as e:
                return ("done", _pre_bind_failure(name, None, e, ctx))
            except Exception as e:
                return ("done", _pre_bind_failure(name, None, e, ctx))
            return ("wait", out)

        def settle(name: str, failure: Optional[Status]) -> None:
            if failure is not None and first[0] is None:
                first[0] = failure
                if parallel:
                    ctx.cancel(SOME_OTHER_PRE_BIND_FAILED)

        for order, pc in enumerate(calls):
            if parallel and first[0] is not None:
                break
            try:
                out = pc.fn(state, pod, node_name)
            except Exception as e:
                settle(pc.name, _pre_bind_failure(pc.name, None, e, ctx))
                continue
            if not is_task(out):
                settle(pc.name, _pre_bind_failure(pc.name, out, None, ctx))
                continue
            kind, v = outcome(pc.name, lambda out=out: next(out))
            if kind == "done":
                settle(pc.name, v)
            else:
                running.append([t + max(0.0, float(v)), order, pc.name, out, False])
        while running:
            cause = ctx.cause
            if cause is not None:
                for entry in sorted(running, key=lambda e: e[1]):
                    if entry[4]:
                        continue
                    entry[4] = True
                    kind, v = outcome(entry[2], lambda task=entry[3], c=cause: task.throw(PreBindCanceled(c)))
                    if kind == "done":
                        running.remove(entry)
                        settle(entry[2], v)
                    else:
                        entry[0] = t + max(0.0, float(v))
                if not running:
                    break
            running.sort(key=lambda e: (e[0], e[1]))
            due = running[0][0]
            if due > t:
                yield due - t
                # resumed when the wait is over, or at once when the context was cancelled
                # meanwhile (then the clock says when); driven without time, the wait is over
                t = clock.now() if clock is not None and ctx.cause is not None else due
                continue
            for entry in [e for e in running if e[0] <= t]:
                kind, v = outcome(entry[2], lambda task=entry[3]: next(task))
                if kind == "done":
                    running.remove(entry)
                    settle(entry[2], v)
                else:
                    entry[0] = t + max(0.0, float(v))
        return first[0]

    # pods in PreBind (v1.36): the scheduler's podsInPreBindMap, shared by its profiles
    def add_pod_in_pre_bind(self, uid: str, pod_in_pre_bind: PodInPreBind) -> None:
        """AddPodInPreBind."""
        self.pods_in_pre_bind[uid] = pod_in_pre_bind

    def get_pod_in_pre_bind(self, uid: str) -> Optional[PodInPreBind]:
        """GetPodInPreBind: a pod in its binding cycle that is not bound yet."""
        return self.pods_in_pre_bind.get(uid)

    def remove_pod_in_pre_bind(self, uid: str) -> None:
        """RemovePodInPreBind."""
        self.pods_in_pre_bind.pop(uid, None)

    def run_bind_plugins(self, state, pod, node_name: str) -> Optional[Status]:
        status: Optional[Status] = Status(Code.Skip, "")
        for pc in self.bind_plugins:
            try:
                status = _status(pc.name, "Bind", pc.fn(state, pod, node_name))
            except Exception as e:
                status = _raised(e)
            if status is not None and status.is_skip():
                continue
            if status is not None and not status.is_success():
                if status.is_rejected():
                    status.plugin = pc.name
                    return status
                return Status(Code.Error, err=RuntimeError(
                    f'running Bind plugin "{pc.name}": {status.as_error()}'), plugin=pc.name)
            return status
        return status

    def run_post_bind_plugins(self, state, pod, node_name: str) -> None:
        for pc in self.post_bind_plugins:
            try:
                pc.fn(state, pod, node_name)
            except Exception:
                pass


def _invalid_score(plugin: str, bad: int) -> Status:
    """RunScorePlugins' error for a score out of [MinNodeScore, MaxNodeScore] after normalizing."""
    return Status(Code.Error, err=RuntimeError(
        f'applying score defaultWeights on Score plugins: plugin "{plugin}" returns an invalid score {bad}, '
        f'it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing'), plugin=plugin)
