"""The harness's memo of RunFilterPluginsWithNominatedPods for node-local Filter plugins (no
upstream counterpart: kube-scheduler re-runs the filters on every node of every cycle).

With only in-tree node-local Filter and PreFilter plugins running (NODE_LOCAL_FILTER_PLUGINS:
their PreFilter state and Filter verdict on a node are functions of the pod's namespace and spec,
the plugin's args and that node's NodeInfo, and none has PreFilter extensions), the status
RunFilterPluginsWithNominatedPods gives on a node of the snapshot is a function of:

- the NodeInfo's generation (every change to a NodeInfo takes a new, never reused generation;
  the snapshot's copy of a cache NodeInfo keeps the cache's generation),
- what the plugins read of the pod (`pod_filter_shape`) and which Filter plugins run,
- the nominated pods of equal or higher priority on the node (by identity: a nominated pod's
  update makes a new PodInfo) that addGENominatedPods adds.

The memo is keyed by these; anything else (other plugins, a NodeInfo that is not the
snapshot's, e.g. a dry-run copy) goes the straightforward way. Errors are not remembered.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .status import Status

# In-tree Filter plugins whose PreFilter state and Filter verdict on a node depend only on the
# pod's namespace and spec (and status resources), the plugin's args and that node (its NodeInfo)
NODE_LOCAL_FILTER_PLUGINS = frozenset(["NodeUnschedulable", "NodeName", "TaintToleration",
                                       "NodeAffinity", "NodePorts", "NodeResourcesFit"])
MEMO_SHAPES_LIMIT = 1_000  # (pod shape, filters) pairs; a memo starts afresh beyond them


def pod_filter_shape(pod) -> str:
    """What a node-local plugin may read of the pod: its namespace and spec, and its whole status
    when a container status, or the pod's own (InPlacePodLevelResourcesVerticalScaling), reports
    resources (UseStatusResources then reads it)."""
    st = pod.status or {}
    css = list(st.get("containerStatuses") or []) + list(st.get("initContainerStatuses") or [])
    extra = st if (st.get("resources") is not None
                   or any(cs.get("resources") is not None for cs in css)) else None
    return json.dumps([pod.namespace, pod.spec, extra], sort_keys=True, default=str)


def node_local_filters(fw, state) -> Optional[Tuple[str, ...]]:
    """The names of the Filter plugins that run (sorted), when every Filter and PreFilter plugin
    of `fw` that runs (not skipped in `state`) is an in-tree node-local one; else None."""
    skip = state.skip_filter_plugins
    fit = state.get("PreFilterNodeResourcesFit")
    if fit is not None and fit.has_scalars and _dra_extended_resources(fw) and _dra_may_delegate(fit):
        return None  # DRAExtendedResource: Fit's verdict also reads the DeviceClasses
    for ep in ("filter_plugins", "pre_filter_plugins"):
        for pc in getattr(fw, ep, None) or []:
            if pc.name in skip:
                continue
            if (pc.name not in NODE_LOCAL_FILTER_PLUGINS
                    or not type(pc.plugin).__module__.startswith("builtin_plugins.")):
                return None
    return tuple(sorted(pc.name for pc in fw.filter_plugins if pc.name not in skip))


def _dra_may_delegate(fit) -> bool:
    """Whether NodeResourcesFit's Filter may leave one of the pod's scalar requests to DRA
    (its delegate maps one of them to a DeviceClass); when none is, its verdict reads only the
    node. A delegate that cannot say is taken to map them."""
    delegate = getattr(fit, "delegate", None)
    if delegate is None:
        return False
    maps = getattr(delegate, "maps", None)
    return maps is None or any(maps(name) for name, q in fit.resource.scalar_resources.items() if q != 0)


def _dra_extended_resources(fw) -> bool:
    """Whether DRAExtendedResource is on: NodeResourcesFit may then leave a scalar resource to
    DRA according to the DeviceClasses (v1.34: as they were at PreFilter, even with no mapping
    yet), which no NodeInfo generation tracks."""
    gates = getattr(fw, "feature_gates", None)
    return gates is None or gates.enabled("DRAExtendedResource")


def queue_nominations(fw) -> Optional[Dict[str, Sequence[Any]]]:
    """The scheduling queue's own map node name -> PodInfos nominated to it (no empty lists),
    when fw.nominated_pods_for_node reads exactly that map; else None."""
    nominator = getattr(fw, "nominator", None)
    nominated = getattr(nominator, "nominated", None)
    method = getattr(type(nominator), "nominated_pods_for_node", None)
    if (type(nominated) is dict and "nominated_pods_for_node" not in getattr(fw, "__dict__", {})
            and _is_framework_lister(getattr(type(fw), "nominated_pods_for_node", None))
            and getattr(method, "__module__", "") == "harness.scheduler.queue"
            and getattr(method, "__qualname__", "") == "Nominator.nominated_pods_for_node"):
        return nominated
    return None


def nominated_lister(fw) -> Callable[[str], Sequence[Any]]:
    """node name -> the PodInfos nominated to it, as fw.nominated_pods_for_node gives them, read
    without a copy from the scheduling queue's nominator when the framework has one."""
    nominated = queue_nominations(fw)
    if nominated is not None:
        get = nominated.get
        return lambda name: get(name, ())
    return fw.nominated_pods_for_node


def _is_framework_lister(method: Any) -> bool:
    """Whether `method` is the runtime's own Framework.nominated_pods_for_node (not a subclass's
    or a test double's override), told by its module and name: runtime imports this module."""
    return (getattr(method, "__module__", "") == "harness.framework.runtime"
            and getattr(method, "__qualname__", "") == "Framework.nominated_pods_for_node")


def same_pods(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two sequences hold the very same objects in the same order."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is not y:
            return False
    return True


def copy_status(s: Optional[Status]) -> Optional[Status]:
    """A fresh Status equal to s (callers set .plugin and keep it)."""
    if s is None:
        return None
    c = Status.__new__(Status)
    c.code = s.code
    c.reasons = list(s.reasons)
    c.err = s.err
    c.plugin = s.plugin
    return c


class ShapeIds:
    """Small ints for pod shapes (keys stay short)."""

    def __init__(self) -> None:
        self._ids: Dict[str, int] = {}

    def of(self, pod) -> int:
        shape = pod_filter_shape(pod)
        return self._ids.setdefault(shape, len(self._ids))


class NominatedFilterMemo:
    """One framework's memo of RunFilterPluginsWithNominatedPods (see the module docstring): per
    (pod shape, filters that run), per node, the answer for one generation and one set of
    nominated pods (a newer one replaces it)."""

    def __init__(self, fw) -> None:
        self.fw = fw
        self.shapes = ShapeIds()
        self.memo: Dict[Any, Dict[str, Any]] = {}

    def _cycle(self, state, pod) -> Any:
        """(per-node memo, priority, uid, nominated lister, snapshot's node map) for this
        cycle's state, or None when the memo does not apply; computed once per CycleState."""
        cached = state.filter_memo_key
        if cached is not None and cached[0] is self:
            return cached[1]
        ran = node_local_filters(self.fw, state)
        node_map = getattr(self.fw.snapshot, "node_info_map", None)
        cycle = None
        if ran is not None and type(node_map) is dict:
            memo = self.memo
            if len(memo) >= MEMO_SHAPES_LIMIT:
                memo.clear()
            per_node = memo.setdefault((self.shapes.of(pod), ran), {})
            cycle = (per_node, pod.priority, pod.uid, nominated_lister(self.fw), node_map)
        state.filter_memo_key = (self, cycle)
        return cycle

    def run(self, state, pod, info, slow: Callable[[Any, Any, Any], Optional[Status]]) -> Optional[Status]:
        """slow(state, pod, info), or its remembered answer."""
        cycle = self._cycle(state, pod)
        if cycle is None:
            return slow(state, pod, info)
        per_node, priority, uid, nominated_on, node_map = cycle
        node = info.node
        name = node.name if node is not None else ""
        if node is None or node_map.get(name) is not info:  # e.g. a dry run's copy
            return slow(state, pod, info)
        noms = nominated_on(name)
        nominated = [pi for pi in noms if pi.pod.priority >= priority and pi.pod.uid != uid] if noms else []
        hit = per_node.get(name)
        if hit is not None and hit[0] == info.generation and same_pods(hit[1], nominated):
            return copy_status(hit[2])
        status = slow(state, pod, info)
        if status is None or status.code != 1:  # Code.Error: not remembered
            per_node[name] = (info.generation, nominated, copy_status(status))
        return status

    def run_many(self, state, pod, infos: Sequence[Any],
                 slow: Callable[[Any, Any, Any], Optional[Status]]) -> List[Optional[Status]]:
        """[run(state, pod, info, slow) for info in infos], in one loop."""
        cycle = self._cycle(state, pod)
        if cycle is None:
            return [slow(state, pod, info) for info in infos]
        per_node, priority, uid, nominated_on, node_map = cycle
        get_hit = per_node.get
        out: List[Optional[Status]] = []
        append = out.append
        for info in infos:
            node = info.node
            name = node.name if node is not None else ""
            if node is None or node_map.get(name) is not info:
                append(slow(state, pod, info))
                continue
            noms = nominated_on(name)
            nominated = [pi for pi in noms if pi.pod.priority >= priority and pi.pod.uid != uid] if noms else []
            hit = get_hit(name)
            if hit is not None and hit[0] == info.generation and same_pods(hit[1], nominated):
                append(copy_status(hit[2]))
                continue
            status = slow(state, pod, info)
            if status is None or status.code != 1:  # Code.Error: not remembered
                per_node[name] = (info.generation, nominated, copy_status(status))
            append(status)
        return out
