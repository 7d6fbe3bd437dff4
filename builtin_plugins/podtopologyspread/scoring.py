"""PreScore, Score and NormalizeScore of PodTopologySpread
(framework/plugins/podtopologyspread/scoring.go)."""

from __future__ import annotations

import math
from itertools import compress, repeat
from operator import is_, not_, or_
from typing import Dict, List, Optional, Set

from harness.framework import MAX_NODE_SCORE, CycleState, NotFoundError, Status
from harness.framework.status import SKIP

from harness.framework.node_table import NodeRows, numpy

from ..topology_values import NodeColumns
from . import filtering
from .common import (LABEL_HOSTNAME, TopologySpreadConstraint, count_pods_match_selector, matching_nodes,
                     node_labels_match_spread_constraints, required_affinity_match,
                     required_node_affinity)

NAME = "PodTopologySpread"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
INVALID_SCORE = -1
MAX_INT64 = (1 << 63) - 1


class PreScoreState:
    """preScoreState: the soft constraints, the nodes to ignore (missing a topology key), per
    constraint the matching pods per topology value of the candidate nodes (hostname
    constraints are counted in Score), and the per-constraint normalizing weights."""

    __slots__ = ("constraints", "ignored_nodes", "topology_value_to_pod_counts",
                 "topology_normalizing_weight")

    def __init__(self) -> None:
        self.constraints: List[TopologySpreadConstraint] = []
        self.ignored_nodes: Set[str] = set()
        self.topology_value_to_pod_counts: List[Dict[str, int]] = []
        self.topology_normalizing_weight: List[float] = []

    def clone(self) -> "PreScoreState":
        """Clone: not copied, it is never mutated after PreScore."""
        return self


def topology_normalizing_weight(size: int) -> float:
    """topologyNormalizingWeight: log(size + 2)."""
    return math.log(float(size + 2))


def score_for_count(cnt: int, max_skew: int, tp_weight: float) -> float:
    """scoreForCount: cnt * weight + (maxSkew - 1)."""
    return float(cnt) * tp_weight + float(max_skew - 1)


def go_round(x: float) -> int:
    """math.Round: half away from zero."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return int(t)


def init_pre_score_state(pl, s: PreScoreState, pod, filtered_nodes, require_all_topologies: bool) -> None:
    """initPreScoreState: the soft constraints, the ignored nodes, the topology values of the
    candidate nodes and the normalizing weights."""
    if pod.spec.get("topologySpreadConstraints"):
        try:
            s.constraints = pl.filter_topology_spread_constraints(
                pod.spec.get("topologySpreadConstraints"), pod.labels, "ScheduleAnyway")
        except Exception as e:
            raise RuntimeError(f"obtaining pod's soft topology spread constraints: {e}") from None
    else:
        try:
            s.constraints = pl.build_default_constraints(pod, "ScheduleAnyway")
        except Exception as e:
            raise RuntimeError(f"setting default soft topology spread constraints: {e}") from None
    if not s.constraints:
        return
    n = len(s.constraints)
    s.topology_value_to_pod_counts = [{} for _ in range(n)]
    topo_size = [0] * n
    # one pass per constraint over the nodes' labels; each map gets its values in the order
    # in which the nodes first show them, as the walk node by node gives
    cols = NodeColumns(pl, filtered_nodes)
    keep = None
    if require_all_topologies:
        missing = None
        for c in s.constraints:
            m = list(map(is_, cols.get(c.topology_key), repeat(None)))
            missing = m if missing is None else list(map(or_, missing, m))
        if True in missing:
            # Nodes without every topology key are ignored when scoring.
            s.ignored_nodes.update([ni.node.name for ni in compress(filtered_nodes, missing)])
            keep = list(map(not_, missing))
    for i, c in enumerate(s.constraints):
        if c.topology_key == LABEL_HOSTNAME:
            continue  # per-node counts are calculated during Score
        values = cols.get(c.topology_key)
        if keep is not None:
            values = list(compress(values, keep))
        elif None in values:  # (only without require_all: a missing label counts as "")
            values = ["" if v is None else v for v in values]
        m = s.topology_value_to_pod_counts[i] = dict.fromkeys(values, 0)
        topo_size[i] = len(m)
    s.topology_normalizing_weight = []
    for i, c in enumerate(s.constraints):
        sz = topo_size[i]
        if c.topology_key == LABEL_HOSTNAME:
            sz = len(filtered_nodes) - len(s.ignored_nodes)
        s.topology_normalizing_weight.append(topology_normalizing_weight(sz))


def pre_score(pl, cycle_state: CycleState, pod, filtered_nodes):
    """PreScore: count the matching pods per topology value over all nodes of the snapshot.
    Skip when there are no nodes or the pod has no soft constraints."""
    all_nodes = pl.handle.snapshot.list()
    if not all_nodes:
        return SKIP
    state = PreScoreState()
    # Only non-system-default spreading requires nodes to carry every topology key, so that
    # nodes without a zone label still get hostname spreading.
    require_all = bool(pod.spec.get("topologySpreadConstraints")) or not pl.system_defaulted
    try:
        init_pre_score_state(pl, state, pod, filtered_nodes, require_all)
    except RuntimeError as e:
        return Status.error(RuntimeError(f"calculating preScoreState: {e}"))
    if not state.constraints:
        return SKIP

    require = required_node_affinity(pod)
    inclusion = pl.enable_node_inclusion_policy
    ns = pod.namespace
    constraints = state.constraints
    counts = state.topology_value_to_pod_counts
    snap = pl.handle.snapshot
    if filtering.USE_NODE_COUNTS_CACHE and getattr(snap, "journal", None) is not None and all_nodes is snap.node_info_list:
        # the matching pods per topology value over all nodes, brought up to date from the
        # nodes that changed since the previous pod of the same shape (sums: order-free)
        sig = filtering.pod_signature(pod, constraints, inclusion) + str(require_all)
        totals = _score_totals(pl, snap, sig, pod, constraints, require, inclusion, require_all, ns)
        for i, m in enumerate(counts):
            t = totals[i]
            for value in m:
                m[value] += t.get(value, 0)
        cycle_state.write(PRE_SCORE_STATE_KEY, state)
        return None
    for node_info in all_nodes:
        node = node_info.node
        if not inclusion:
            if not required_affinity_match(require, node):
                continue
        node_labels = node.labels
        if require_all and not node_labels_match_spread_constraints(node_labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if inclusion and not c.match_node_inclusion_policies(pod, node, require):
                continue
            value = node_labels.get(c.topology_key, "")
            m = counts[i]
            # Topology values of no candidate node (and hostname constraints) are skipped.
            if value not in m:
                continue
            m[value] += count_pods_match_selector(node_info.pods, c.selector, ns)
    cycle_state.write(PRE_SCORE_STATE_KEY, state)
    return None


def _score_node_counts(node_info, pod, constraints, require, inclusion, require_all, ns):
    """One node's part of PreScore's walk: (constraint index, topology value, matching pods)."""
    node = node_info.node
    out = []
    if not inclusion:
        if not required_affinity_match(require, node):
            return out
    node_labels = node.labels
    if require_all and not node_labels_match_spread_constraints(node_labels, constraints):
        return out
    for i, c in enumerate(constraints):
        if inclusion and not c.match_node_inclusion_policies(pod, node, require):
            continue
        out.append((i, node_labels.get(c.topology_key, ""), count_pods_match_selector(node_info.pods, c.selector, ns)))
    return out


def _score_totals(pl, snap, sig, pod, constraints, require, inclusion, require_all, ns):
    """Per constraint, topology value -> matching pods over all nodes: the previous totals of
    this signature on this node list with the changed nodes' counts replaced, else a full walk."""
    prev = getattr(pl, "_score_totals", None)
    nodes = snap.node_info_list
    if prev is not None:
        psig, psnap, plist, epoch, pos, totals, per_node, partial = prev
        if psig == sig and psnap is snap and plist is nodes and epoch == snap.journal_epoch:
            changed = snap.journal[pos:]
            if changed:
                totals = [dict(m) for m in totals]
                for name in dict.fromkeys(changed):
                    ni = snap.node_info_map.get(name)
                    if ni is None or ni.node is None or (name not in per_node and not partial):
                        break
                    for i, v, c in per_node.get(name, ()):
                        totals[i][v] -= c
                    new = _score_node_counts(ni, pod, constraints, require, inclusion, require_all, ns)
                    for i, v, c in new:
                        totals[i][v] = totals[i].get(v, 0) + c
                    per_node[name] = new
                else:
                    pl._score_totals = (sig, snap, nodes, epoch, len(snap.journal), totals, per_node, partial)
                    return totals
            else:
                return totals
    totals = [{} for _ in constraints]
    per_node = {}
    walk = nodes
    only = matching_nodes(pl, snap, constraints, ns)
    if only is not None:  # the other nodes count 0 for every constraint
        walk = [ni for ni in nodes if ni.node.name in only]
    for ni in walk:
        counts = _score_node_counts(ni, pod, constraints, require, inclusion, require_all, ns)
        per_node[ni.node.name] = counts
        for i, v, c in counts:
            totals[i][v] = totals[i].get(v, 0) + c
    pl._score_totals = (sig, snap, nodes, snap.journal_epoch, len(snap.journal), totals, per_node, only is not None)
    return totals


def get_pre_score_state(cycle_state: CycleState) -> PreScoreState:
    try:
        c = cycle_state.read(PRE_SCORE_STATE_KEY)
    except NotFoundError:
        raise RuntimeError(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found') from None
    if not isinstance(c, PreScoreState):
        raise RuntimeError(f"{c!r}  convert to podtopologyspread.preScoreState error")
    return c


def score(cycle_state: CycleState, pod, node_info):
    """Score: the sum over the soft constraints of cnt * weight + (maxSkew - 1), rounded; the
    lower, the better (NormalizeScore inverts it)."""
    try:
        s = get_pre_score_state(cycle_state)
    except RuntimeError as e:
        return 0, Status.error(e)
    node = node_info.node
    if node.name in s.ignored_nodes:
        return 0, None
    total = 0.0
    node_labels = node.labels
    for i, c in enumerate(s.constraints):
        tp_val = node_labels.get(c.topology_key)
        if tp_val is None:
            continue
        if c.topology_key == LABEL_HOSTNAME:
            cnt = count_pods_match_selector(node_info.pods, c.selector, pod.namespace)
        else:
            cnt = s.topology_value_to_pod_counts[i][tp_val]
        total += score_for_count(cnt, c.max_skew, s.topology_normalizing_weight[i])
    return go_round(total), None


def normalize_score(cycle_state: CycleState, pod, scores) -> Optional[Status]:
    """NormalizeScore: MaxNodeScore * (max + min - score) / max (integer division); ignored
    nodes get 0, and every node 100 when the maximum is 0."""
    try:
        s = get_pre_score_state(cycle_state)
    except RuntimeError as e:
        return Status.error(e)
    if s is None:
        return None
    min_score = MAX_INT64
    max_score = 0
    for ns in scores:
        if ns.name in s.ignored_nodes:
            ns.score = INVALID_SCORE
            continue
        if ns.score < min_score:
            min_score = ns.score
        if ns.score > max_score:
            max_score = ns.score
    for ns in scores:
        if ns.score == INVALID_SCORE:
            ns.score = 0
            continue
        if max_score == 0:
            ns.score = MAX_NODE_SCORE
            continue
        ns.score = _go_div(MAX_NODE_SCORE * (max_score + min_score - ns.score), max_score)
    return None


def score_nodes(cycle_state: CycleState, pod, nodes, plugin=None):
    """score on each node (the batch form): the same float64 sums in constraint order. Without
    a hostname constraint a node's score depends only on its topology values, so it is computed
    once per distinct tuple of values. None when the state cannot be read."""
    try:
        s = get_pre_score_state(cycle_state)
    except RuntimeError:
        return None
    ignored = s.ignored_nodes
    parts = [(c.topology_key, c.topology_key == LABEL_HOSTNAME, c.selector, s.topology_value_to_pod_counts[i],
              c.max_skew, s.topology_normalizing_weight[i], {}) for i, c in enumerate(s.constraints)]
    ns = pod.namespace
    if not any(p[1] for p in parts):
        if not ignored and nodes.__class__ is NodeRows:
            out = _score_rows(plugin, parts, nodes)
            if out is not None:
                return out
        scored = [ni for ni in nodes if ni.node.name not in ignored] if ignored else nodes
        values = NodeColumns(plugin, scored).tuples([p[0] for p in parts])
        one = len(parts) == 1
        by_values: Dict = {}
        for vs in set(values):
            total = 0.0
            for (_, _, _, counts, max_skew, weight, _), tp_val in zip(parts, (vs,) if one else vs):
                if tp_val is not None:
                    total += score_for_count(counts[tp_val], max_skew, weight)
            by_values[vs] = go_round(total)
        out = list(map(by_values.__getitem__, values))
        if scored is not nodes:
            it = iter(out)
            out = [0 if ni.node.name in ignored else next(it) for ni in nodes]
        return out
    out = []
    append = out.append
    for ni in nodes:
        node = ni.node
        if node.name in ignored:
            append(0)
            continue
        total = 0.0
        labels = node.labels
        for key, hostname, selector, counts, max_skew, weight, memo in parts:
            tp_val = labels.get(key)
            if tp_val is None:
                continue
            if hostname:
                total += score_for_count(count_pods_match_selector(ni.pods, selector, ns), max_skew, weight)
            else:
                term = memo.get(tp_val)
                if term is None:
                    term = memo[tp_val] = score_for_count(counts[tp_val], max_skew, weight)
                total += term
        append(go_round(total))
    return out


def _score_rows(plugin, parts, nodes):
    """score_nodes on rows of the node table with no hostname constraint and no ignored node:
    per constraint, the term of each topology value (code) once, then each node's sum taken in
    constraint order from 0.0 (float64, as score's loop adds them; a node without the label
    adds nothing) and rounded half away from zero; an int64 column. None when the values are
    not at hand as codes."""
    cols = NodeColumns(plugin, nodes)
    np = numpy()
    total = None
    for key, _, _, counts, max_skew, weight, _ in parts:
        at = cols.codes(key)
        if at is None:
            return None
        codes, values = at
        terms = np.array([0.0 if v is None else (score_for_count(counts[v], max_skew, weight) if v in counts
                                                 else np.nan) for v in values], dtype=np.float64)
        col = terms[codes]
        total = col if total is None else total + col
    if total is None:
        return np.zeros(len(nodes), dtype=np.int64)
    if np.isnan(total).any():  # a value PreScore did not count: score's own lookup decides
        return None
    t = np.trunc(total)
    t += np.copysign(1.0, total) * (np.abs(total - t) >= 0.5)
    return t.astype(np.int64)


def normalize_scores(cycle_state: CycleState, pod, scores):
    """normalize_score on plain scores (the batch form), when no node is ignored (ignored nodes
    are known by name: None lets the framework call normalize_score); the formula once per
    distinct score."""
    try:
        s = get_pre_score_state(cycle_state)
    except RuntimeError:
        return None
    if s is None or s.ignored_nodes:
        return None
    if hasattr(scores, "dtype"):
        return _normalize_column(scores)
    if not scores:
        return []
    min_score = min(MAX_INT64, min(scores))
    max_score = max(0, max(scores))
    memo = {}
    for sc in set(scores):
        if sc == INVALID_SCORE:
            memo[sc] = 0
        elif max_score == 0:
            memo[sc] = MAX_NODE_SCORE
        else:
            memo[sc] = _go_div(MAX_NODE_SCORE * (max_score + min_score - sc), max_score)
    return [memo[sc] for sc in scores]


def _normalize_column(scores):
    """normalize_scores on an int64 column (score_nodes' own, small numbers): the same formula
    with Go's truncating division."""
    np = numpy()
    if not len(scores):
        return scores
    min_score = min(MAX_INT64, int(scores.min()))
    max_score = max(0, int(scores.max()))
    if max_score == 0:
        out = np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
    else:
        a = MAX_NODE_SCORE * (max_score + min_score - scores)
        out = np.where(a >= 0, a // max_score, -((-a) // max_score))
    out[scores == INVALID_SCORE] = 0
    return out


def _go_div(a: int, b: int) -> int:
    """Go's integer division truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q
