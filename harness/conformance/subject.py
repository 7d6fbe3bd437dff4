"""The plugin under check, alone in a profile (plus PrioritySort and DefaultBinder when it is no
QueueSort or Bind plugin) over a world, and direct calls of its hooks that watch for mutation of
the pod and NodeInfo they are given."""

from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..api.objects import Pod
from ..case.loader import Case
from ..case.runner import build_scheduler
from ..framework.cycle_state import CycleState
from ..framework.hookspecs import EXTENSION_POINTS
from ..framework.runtime import PluginCall, implements
from ..framework.status import Code, Status
from ..framework.types import NodeInfo, NodeScore
from .guard import Guard, guard_framework
from .world import World

PROFILE = "default-scheduler"


def plugin_config(name: str, cls: type, args: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """A KubeSchedulerConfiguration with only this plugin, enabled through multiPoint: at every
    extension point it implements in the run's version (DynamicResources is no Score plugin in
    v1.34), as expandMultiPointPlugins decides (the framework needs one QueueSort and one Bind
    plugin: PrioritySort and DefaultBinder when it is neither)."""
    plugins: Dict[str, Any] = {"multiPoint": {"enabled": [{"name": name, "weight": 1}],
                                              "disabled": [{"name": "*"}]}}
    for point, fallback in (("queueSort", "PrioritySort"), ("bind", "DefaultBinder")):
        if not any(callable(getattr(cls, h, None)) and implements(cls, h) for h in EXTENSION_POINTS[point]):
            plugins[point] = {"enabled": [{"name": fallback}]}
    prof: Dict[str, Any] = {"schedulerName": PROFILE, "plugins": plugins}
    if args is not None:
        prof["pluginConfig"] = [{"name": name, "args": args}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [prof]}


def args_from_case_config(config: Any, name: str, base_dir: str) -> Optional[Dict[str, Any]]:
    """The plugin's args in a case's configuration (inline or a file), if any."""
    if config is None:
        return None
    if isinstance(config, str):
        import os

        from ..yamlfile import load_yaml_file
        from ..errors import UserError
        config = load_yaml_file(os.path.join(base_dir, config), UserError)
    for prof in (config or {}).get("profiles") or []:
        for pc in prof.get("pluginConfig") or []:
            if pc.get("name") == name:
                return pc.get("args")
    return None


class Subject:
    """One plugin, configured, over one world."""

    def __init__(self, name: str, registry, world: World, args: Optional[Dict[str, Any]] = None,
                 report: Optional[Callable[[str, str], None]] = None):
        self.name = name
        self.registry = registry
        self.world = world
        self.args = args
        self.cls = registry[name]
        cfg = plugin_config(name, self.cls, args)
        case = Case(path=world.path, name=world.name, description="", config=cfg, seed=0,
                    cluster=copy.deepcopy(world.cluster), pods=copy.deepcopy(world.pods), expect={})
        self.sched = build_scheduler(case, registry)
        self.fw = self.sched.profiles[PROFILE]
        self.plugin = self.fw.plugins_map[name]
        self.sched.cache.update_snapshot(self.sched.snapshot)
        self.problems: List[Tuple[str, str]] = []  # (rule, message) when no `report` is given
        self.guard = Guard(name, report or (lambda rule, msg: self.problems.append((rule, msg))))
        guard_framework(self.fw, name, self.guard)

    # -- objects -------------------------------------------------------------------------------
    def implements(self, hook: str) -> bool:
        return implements(self.plugin, hook)

    def probe_pods(self) -> List[Pod]:
        names = [(p["metadata"].get("namespace") or "default", p["metadata"]["name"]) for p in self.world.pods]
        return [self.sched.cluster.get("Pod", ns, n) for ns, n in names]

    def nodes(self) -> List[NodeInfo]:
        return list(self.sched.snapshot.list())

    # -- guarded direct calls ------------------------------------------------------------------
    def call(self, hook: str, *args: Any) -> Any:
        """The plugin's hook with the hook's full arguments, guarded (guard.Guard): a raise or a
        malformed result is reported and becomes an Error status (as the framework treats it);
        a change to any input is reported."""
        return self.guard.call(hook, PluginCall(self.name, self.plugin, hook).fn, *args)

    # -- a cycle, as the framework would run this plugin alone ---------------------------------
    def pre_enqueue(self, pod: Pod) -> Optional[Status]:
        if not self.implements("pre_enqueue"):
            return None
        return self.call("pre_enqueue", pod)

    def pre_filter(self, state: CycleState, pod: Pod) -> Tuple[Any, Optional[Status]]:
        if not self.implements("pre_filter"):
            return None, None
        r = self.call("pre_filter", state, pod, self.nodes())
        res, st = r if isinstance(r, tuple) else (None, r)
        if st is not None and st.code == Code.Skip:
            state.skip_filter_plugins = set(state.skip_filter_plugins) | {self.name}
        return res, st

    def filter(self, state: CycleState, pod: Pod, ni: NodeInfo) -> Optional[Status]:
        if not self.implements("filter") or self.name in state.skip_filter_plugins:
            return None
        return self.call("filter", state, pod, ni)

    def verdict(self, pod: Pod) -> Dict[str, str]:
        """What this plugin says about the pod: `preEnqueue` / `preFilter` rejection, else per
        node "ok" or the Filter status."""
        st = self.pre_enqueue(pod)
        if st is not None and not st.is_success():
            return {"preEnqueue": _fmt(st)}
        state = CycleState()
        res, st = self.pre_filter(state, pod)
        if st is not None and st.code not in (Code.Success, Code.Skip):
            return {"preFilter": _fmt(st)}
        out = {}
        for ni in self.nodes():
            if res is not None and res.node_names is not None and ni.name not in res.node_names:
                out[ni.name] = "not in PreFilterResult"
                continue
            s = self.filter(state, pod, ni)
            out[ni.name] = "ok" if s is None or s.is_success() else _fmt(s)
        return out

    def prepared_state(self, pod: Pod) -> Tuple[CycleState, List[NodeInfo]]:
        """A CycleState after PreFilter, and the nodes this plugin's Filter accepts."""
        state = CycleState()
        res, st = self.pre_filter(state, pod)
        if st is not None and st.code not in (Code.Success, Code.Skip):
            return state, []
        feasible = []
        for ni in self.nodes():
            if res is not None and res.node_names is not None and ni.name not in res.node_names:
                continue
            s = self.filter(state, pod, ni)
            if s is None or s.is_success():
                feasible.append(ni)
        return state, feasible

    def scores(self, pod: Pod, nodes: List[NodeInfo]) -> Optional[Dict[str, Any]]:
        """PreScore, Score and NormalizeScore over the nodes: node -> final score (None when
        PreScore skipped), or a status string on failure."""
        state, _ = self.prepared_state(pod)
        if self.implements("pre_score"):
            st = self.call("pre_score", state, pod, nodes)
            if st is not None and st.code == Code.Skip:
                return None
            if st is not None and not st.is_success():
                return {"<prescore>": _fmt(st)}
        raw = []
        for ni in nodes:
            sc, st = self.call("score", state, pod, ni)
            if st is not None and not st.is_success():
                return {ni.name: _fmt(st)}
            raw.append(NodeScore(ni.name, sc))
        if self.implements("normalize_score"):
            st = self.call("normalize_score", state, pod, raw)
            if st is not None and not st.is_success():
                return {"<normalize>": _fmt(st)}
        return {ns.name: ns.score for ns in raw}


def _fmt(st: Status) -> str:
    return f"{st.code.name}: {st.message()}" if hasattr(st.code, "name") else str(st)
