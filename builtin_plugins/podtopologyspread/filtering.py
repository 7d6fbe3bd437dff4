"""PreFilter, AddPod/RemovePod and Filter of PodTopologySpread
(framework/plugins/podtopologyspread/filtering.go)."""

from __future__ import annotations

from typing import Dict, List, Optional

from harness.framework import CycleState, NotFoundError, Status
from harness.framework.status import SKIP

from harness.framework.lazy_status import StatusColumn
from harness.framework.node_table import NodeRows, numpy

from ..batch_status import UNRESOLVABLE, UNSCHEDULABLE, rejection
from ..topology_values import NodeColumns
from .common import (MAX_INT32, TopologySpreadConstraint,
                     count_pods_match_selector, matching_nodes, node_labels_match_spread_constraints,
                     required_affinity_match, required_node_affinity)

NAME = "PodTopologySpread"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

# calPreFilterState reuses a node's counts while neither the node nor the pod's shape changes
# (False: recounted every cycle, as the property test compares)
USE_NODE_COUNTS_CACHE = True

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"


class CriticalPaths:
    """criticalPaths: the two topology values with the fewest matching pods of a constraint.
    paths[0][1] always holds the minimum; paths[1][1] is >= it but not necessarily the 2nd
    minimum. Each path is a [topology value, match num] pair."""

    __slots__ = ("paths",)

    def __init__(self, paths=None):
        self.paths = paths if paths is not None else [["", MAX_INT32], ["", MAX_INT32]]

    def update(self, tp_val: str, num: int) -> None:
        """criticalPaths.update."""
        p = self.paths
        i = -1
        if tp_val == p[0][0]:
            i = 0
        elif tp_val == p[1][0]:
            i = 1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        else:
            if num < p[0][1]:
                p[1] = p[0]
                p[0] = [tp_val, num]
            elif num < p[1][1]:
                p[1] = [tp_val, num]

    def clone(self) -> "CriticalPaths":
        return CriticalPaths([list(self.paths[0]), list(self.paths[1])])

    def as_tuples(self):
        return (tuple(self.paths[0]), tuple(self.paths[1]))

    def __repr__(self) -> str:
        return f"CriticalPaths({self.paths!r})"


class PreFilterState:
    """preFilterState: the DoNotSchedule constraints, per constraint the critical paths and the
    number of matching pods per topology value. `self_match[i]` caches whether the incoming pod
    matches constraint i's selector (a pure function of the pod, used by Filter)."""

    __slots__ = ("constraints", "critical_paths", "tp_value_to_match_num", "self_match")

    def __init__(self, constraints: Optional[List[TopologySpreadConstraint]] = None,
                 critical_paths: Optional[List[CriticalPaths]] = None,
                 tp_value_to_match_num: Optional[List[Dict[str, int]]] = None,
                 self_match: Optional[List[int]] = None):
        self.constraints = constraints or []
        self.critical_paths = critical_paths or []
        self.tp_value_to_match_num = tp_value_to_match_num or []
        self.self_match = self_match

    def min_match_num(self, constraint_id: int, min_domains: int) -> int:
        """minMatchNum: the global minimum, 0 when there are fewer domains than minDomains."""
        min_match = self.critical_paths[constraint_id].paths[0][1]
        if len(self.tp_value_to_match_num[constraint_id]) < min_domains:
            min_match = 0
        return min_match

    def clone(self) -> "PreFilterState":
        """Clone: the constraints are shared, paths and counts copied."""
        return PreFilterState(self.constraints, [p.clone() for p in self.critical_paths],
                              [dict(m) for m in self.tp_value_to_match_num], self.self_match)


def get_pre_filter_state(cycle_state: CycleState) -> PreFilterState:
    try:
        c = cycle_state.read(PRE_FILTER_STATE_KEY)
    except NotFoundError:
        raise RuntimeError(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found') from None
    if not isinstance(c, PreFilterState):
        raise RuntimeError(f"{c!r} convert to podtopologyspread.preFilterState error")
    return c


def cal_pre_filter_state(pl, pod, all_nodes) -> PreFilterState:
    """calPreFilterState: count the matching pods per topology value of each hard constraint,
    over the nodes that carry every topology key and pass the node inclusion policies."""
    constraints = pl.get_constraints(pod)
    if not constraints:
        return PreFilterState()
    n = len(constraints)
    s = PreFilterState(constraints, [None] * n, [{} for _ in range(n)])
    require = required_node_affinity(pod)
    inclusion = pl.enable_node_inclusion_policy
    ns = pod.namespace
    tp_maps = s.tp_value_to_match_num
    # Each node's counts depend on the node (its labels, taints and pods: its NodeInfo's
    # generation) and on what the pod brings (pod_signature); pods of the same shape (a
    # Deployment's replicas) reuse them while the node does not change.
    sig = pod_signature(pod, constraints, inclusion)
    cache = _node_counts_cache(pl)
    snap = getattr(getattr(pl, "handle", None), "snapshot", None)
    incremental = (USE_NODE_COUNTS_CACHE and snap is not None and getattr(snap, "journal", None) is not None
                   and all_nodes is snap.node_info_list)
    only = None
    if incremental:
        totals = _incremental_totals(pl, snap, sig, pod, constraints, require, inclusion, ns)
        if totals is not None:
            s.tp_value_to_match_num = tp_maps = [dict(m) for m in totals]
            return _finish(s, tp_maps, constraints, pod)
        # a node no constraint's selector can count on still gives its topology values (with
        # 0): they are domains of the critical paths, in the order the walk meets them
        only = matching_nodes(pl, snap, constraints, ns)
    for node_info in all_nodes:
        node = node_info.node
        entry = cache.get(node.name) if USE_NODE_COUNTS_CACHE else None
        if entry is not None and entry[0] == node_info.generation and entry[1] is node and entry[2] == sig:
            counts = entry[3]
        else:
            counts = _node_counts(node_info, pod, constraints, require, inclusion, ns,
                                  count=only is None or node.name in only)
            cache[node.name] = (node_info.generation, node, sig, counts)
        for i, value, count in counts:
            m = tp_maps[i]
            m[value] = m.get(value, 0) + count
    if incremental:
        pl._totals = (sig, snap, all_nodes, snap.journal_epoch, len(snap.journal), [dict(m) for m in tp_maps])
    return _finish(s, tp_maps, constraints, pod)


def _finish(s: PreFilterState, tp_maps, constraints, pod) -> PreFilterState:
    n = len(constraints)
    for i in range(n):
        paths = CriticalPaths()
        for value, num in tp_maps[i].items():
            paths.update(value, num)
        s.critical_paths[i] = paths
    s.self_match = [1 if c.selector.matches(pod.labels) else 0 for c in constraints]
    return s


def _node_counts(node_info, pod, constraints, require, inclusion: bool, ns: str, count: bool = True):
    """One node's part of calPreFilterState: (constraint index, topology value, matching pods).
    `count` False: the node has no pod the selectors can match (node_index), 0 for each."""
    node = node_info.node
    out = []
    if not inclusion:
        if not required_affinity_match(require, node):
            return out
    node_labels = node.labels
    if not node_labels_match_spread_constraints(node_labels, constraints):
        return out
    for i, c in enumerate(constraints):
        if inclusion and not c.match_node_inclusion_policies(pod, node, require):
            continue
        out.append((i, node_labels[c.topology_key],
                    count_pods_match_selector(node_info.pods, c.selector, ns) if count else 0))
    return out


def _incremental_totals(pl, snap, sig, pod, constraints, require, inclusion, ns):
    """The previous pod's totals (same signature, same node list) brought up to date with the
    nodes UpdateSnapshot changed since: each changed node's old counts out, its new ones in.
    None when that cannot give what a full walk gives (another shape, the node list rebuilt,
    or a changed node whose topology values or constraint coverage changed: the order in which
    values first appear could change)."""
    prev = getattr(pl, "_totals", None)
    if prev is None:
        return None
    psig, psnap, plist, epoch, pos, totals = prev
    if psig != sig or psnap is not snap or plist is not snap.node_info_list or epoch != snap.journal_epoch:
        return None
    cache = _node_counts_cache(pl)
    changed = snap.journal[pos:]
    if changed:
        totals = [dict(m) for m in totals]
        for name in dict.fromkeys(changed):
            ni = snap.node_info_map.get(name)
            entry = cache.get(name)
            if ni is None or ni.node is None or entry is None or entry[2] != sig:
                return None
            new = _node_counts(ni, pod, constraints, require, inclusion, ns)
            old = entry[3]
            if [(i, v) for i, v, _ in old] != [(i, v) for i, v, _ in new]:
                return None
            for (i, v, c_old), (_, _, c_new) in zip(old, new):
                totals[i][v] += c_new - c_old
            cache[name] = (ni.generation, ni.node, sig, new)
    pl._totals = (sig, snap, plist, epoch, len(snap.journal), totals)
    return totals


def _node_counts_cache(pl) -> Dict[str, tuple]:
    cache = getattr(pl, "_node_counts", None)
    if cache is None:
        cache = pl._node_counts = {}
    return cache


def pod_signature(pod, constraints, inclusion: bool) -> str:
    """Everything of the pod that calPreFilterState reads besides its constraints' parsed form:
    namespace, nodeSelector, required node affinity, tolerations."""
    spec = pod.spec
    aff = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    # repr: equal for equal specs written in the same order (a different order only costs a
    # recount); the values are YAML scalars, lists and maps, whose repr tells them apart
    return repr((pod.namespace, inclusion, [c._key() for c in constraints],
                 spec.get("nodeSelector"), aff.get("requiredDuringSchedulingIgnoredDuringExecution"),
                 spec.get("tolerations")))


def pre_filter(pl, cycle_state: CycleState, pod, nodes):
    """PreFilter: Skip when the pod has no hard constraints."""
    try:
        s = cal_pre_filter_state(pl, pod, nodes)
    except Exception as e:
        return None, Status.error(RuntimeError(f"get constraints from pod: {e}"))
    if not s.constraints:
        return None, SKIP
    cycle_state.write(PRE_FILTER_STATE_KEY, s)
    return None, None


def update_with_pod(pl, s: Optional[PreFilterState], updated_pod, preemptor_pod, node,
                    delta: int) -> None:
    """updateWithPod: AddPod (+1) / RemovePod (-1) of an existing pod on `node`."""
    if s is None or updated_pod.namespace != preemptor_pod.namespace or node is None:
        return
    if not node_labels_match_spread_constraints(node.labels, s.constraints):
        return
    require = required_node_affinity(preemptor_pod)
    inclusion = pl.enable_node_inclusion_policy
    if not inclusion:
        if not required_affinity_match(require, node):
            return
    pod_labels = updated_pod.labels
    for i, c in enumerate(s.constraints):
        if not c.selector.matches(pod_labels):
            continue
        if inclusion and not c.match_node_inclusion_policies(preemptor_pod, node, require):
            continue
        v = node.labels[c.topology_key]
        m = s.tp_value_to_match_num[i]
        m[v] = m.get(v, 0) + delta
        s.critical_paths[i].update(v, m[v])


def add_pod(pl, cycle_state, pod_to_schedule, pod_info_to_add, node_info):
    try:
        s = get_pre_filter_state(cycle_state)
    except RuntimeError as e:
        return Status.error(e)
    update_with_pod(pl, s, pod_info_to_add.pod, pod_to_schedule, node_info.node, 1)
    return None


def remove_pod(pl, cycle_state, pod_to_schedule, pod_info_to_remove, node_info):
    try:
        s = get_pre_filter_state(cycle_state)
    except RuntimeError as e:
        return Status.error(e)
    update_with_pod(pl, s, pod_info_to_remove.pod, pod_to_schedule, node_info.node, -1)
    return None


def filter_node(cycle_state, pod, node_info):
    """Filter: 'existing matching num' + 'self match (1 or 0)' - 'global minimum' <= maxSkew
    for every hard constraint; a node without a topology key is rejected as unresolvable."""
    try:
        s = get_pre_filter_state(cycle_state)
    except RuntimeError as e:
        return Status.error(e)
    constraints = s.constraints
    if not constraints:
        return None
    node_labels = node_info.node.labels
    self_match = s.self_match
    for i, c in enumerate(constraints):
        tp_val = node_labels.get(c.topology_key)
        if tp_val is None:
            return Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
        min_match_num = s.min_match_num(i, c.min_domains)
        if self_match is not None:
            self_match_num = self_match[i]
        else:
            self_match_num = 1 if c.selector.matches(pod.labels) else 0
        match_num = s.tp_value_to_match_num[i].get(tp_val, 0)
        skew = match_num + self_match_num - min_match_num
        if skew > c.max_skew:
            return Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
    return None



def filter_nodes(cycle_state, pod, nodes, plugin=None):
    """filter_node on each node (the batch form): a node's status depends only on its values of
    the constraints' topology keys, so it is decided once per distinct tuple of values. None
    when the state cannot be read (filter_node reports the error)."""
    try:
        s = get_pre_filter_state(cycle_state)
    except RuntimeError:
        return None
    constraints = s.constraints
    if not constraints:
        return [None] * len(nodes)
    checks = []
    for i, c in enumerate(constraints):
        if s.self_match is not None:
            self_match_num = s.self_match[i]
        else:
            self_match_num = 1 if c.selector.matches(pod.labels) else 0
        checks.append((c.topology_key, s.tp_value_to_match_num[i],
                       self_match_num - s.min_match_num(i, c.min_domains), c.max_skew))
    cols = NodeColumns(plugin, nodes)
    if nodes.__class__ is NodeRows:
        out = _filter_rows(cols, checks)
        if out is not None:
            return out
    values = cols.tuples([ch[0] for ch in checks])
    memo = {}
    rejected = False
    for vs in set(values):
        r = None
        for (_, m, delta, max_skew), v in zip(checks, vs if len(checks) > 1 else (vs,)):
            if v is None:
                r = (UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
                break
            if m.get(v, 0) + delta > max_skew:
                r = (UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
                break
        memo[vs] = r
        if r is not None:
            rejected = True
    if not rejected:
        return [None] * len(nodes)
    return [None if r is None else rejection(*r) for r in map(memo.__getitem__, values)]


# StatusColumn kinds of _filter_rows: 0 the node passes, then filter_node's two rejections
_ROW_KINDS = (None, (UNRESOLVABLE, (ERR_REASON_NODE_LABEL_NOT_MATCH,)),
              (UNSCHEDULABLE, (ERR_REASON_CONSTRAINTS_NOT_MATCH,)))


def _filter_rows(cols: NodeColumns, checks) -> Optional[StatusColumn]:
    """filter_nodes on rows of the node table, as a StatusColumn: per constraint, each topology
    value's verdict (code) once (1: the node lacks the key, 2: the skew would pass maxSkew),
    a node's verdict that of its first constraint that rejects it, as filter_node's loop. None
    when the values are not at hand as codes."""
    np = numpy()
    out = None
    for key, m, delta, max_skew in checks:
        at = cols.codes(key)
        if at is None:
            return None
        codes, values = at
        verdicts = np.array([1 if v is None else (2 if m.get(v, 0) + delta > max_skew else 0) for v in values],
                            dtype=np.int64)
        col = verdicts[codes]
        out = col if out is None else np.where(out == 0, col, out)
    return StatusColumn(out, _ROW_KINDS)
