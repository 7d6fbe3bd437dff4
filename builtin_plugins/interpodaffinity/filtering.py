"""InterPodAffinity PreFilter / Filter and the PreFilter extensions AddPod / RemovePod
(framework/plugins/interpodaffinity/filtering.go).

A topology-pair count is a dict keyed by ``(topology_key, topology_value)``.
"""

from __future__ import annotations

from operator import or_
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from harness.framework import NotFoundError, PodInfo, Status, hookimpl
from harness.framework.status import SKIP
from harness.framework.types import AffinityTerm

from ..batch_status import UNRESOLVABLE, UNSCHEDULABLE, fill_rejections
from ..node_index import index_of, union
from ..node_sums import NodeSums
from ..topology_values import NodeColumns

if TYPE_CHECKING:  # pragma: no cover
    from harness.api.objects import Node, Pod

PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"

# Upstream's ErrReason* constants.
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

TopologyPair = Tuple[str, str]
TopologyToMatchedTermCount = Dict[TopologyPair, int]


# ---------------------------------------------------------------------------------------------
# topologyToMatchedTermCount
# ---------------------------------------------------------------------------------------------
def _update(m: TopologyToMatchedTermCount, node: "Node", tk: str, value: int) -> None:
    """topologyToMatchedTermCount.update: entries that drop to zero are deleted."""
    tv = node.labels.get(tk)
    if tv is None:
        return
    pair = (tk, tv)
    n = m.get(pair, 0) + value
    if n == 0:
        m.pop(pair, None)
    else:
        m[pair] = n


def _append(m: TopologyToMatchedTermCount, node: "Node", tk: str, value: int) -> None:
    """topologyToMatchedTermCountList.append followed by mergeWithList (zeros are kept)."""
    tv = node.labels.get(tk)
    if tv is None:
        return
    pair = (tk, tv)
    m[pair] = m.get(pair, 0) + value


def pod_matches_all_affinity_terms(terms: Sequence, pod: "Pod") -> bool:
    """podMatchesAllAffinityTerms: False for no terms; the namespace labels are never consulted
    (the incoming pod's namespaceSelector was merged into its namespaces)."""
    if not terms:
        return False
    for t in terms:
        if not t.matches(pod, None):
            return False
    return True


def update_with_affinity_terms(m: TopologyToMatchedTermCount, terms: Sequence, pod: "Pod",
                               node: "Node", value: int) -> None:
    """updateWithAffinityTerms: one count per term when the pod matches ALL terms."""
    if pod_matches_all_affinity_terms(terms, pod):
        for t in terms:
            _update(m, node, t.topology_key, value)


def update_with_anti_affinity_terms(m: TopologyToMatchedTermCount, terms: Sequence, pod: "Pod",
                                    ns_labels, node: "Node", value: int) -> None:
    """updateWithAntiAffinityTerms: one count per term the pod matches."""
    for t in terms:
        if t.matches(pod, ns_labels):
            _update(m, node, t.topology_key, value)


# ---------------------------------------------------------------------------------------------
# preFilterState
# ---------------------------------------------------------------------------------------------
class PreFilterState:
    """preFilterState: the counts Filter reads, and the incoming pod's (merged) terms."""

    __slots__ = ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts",
                 "pod", "required_affinity_terms", "required_anti_affinity_terms", "namespace_labels",
                 "filter_plan", "existing_keys", "counts_positive")

    def __init__(self, pod: "Pod", required_affinity_terms: List, required_anti_affinity_terms: List,
                 namespace_labels) -> None:
        # existing pods' required anti-affinity terms that match the incoming pod
        self.existing_anti_affinity_counts: TopologyToMatchedTermCount = {}
        # existing pods that match ALL the incoming pod's required affinity terms
        self.affinity_counts: TopologyToMatchedTermCount = {}
        # existing pods that match one of the incoming pod's required anti-affinity terms
        self.anti_affinity_counts: TopologyToMatchedTermCount = {}
        self.pod = pod
        self.required_affinity_terms = required_affinity_terms
        self.required_anti_affinity_terms = required_anti_affinity_terms
        self.namespace_labels = namespace_labels
        # what filter_nodes derives from the counts (_FilterPlan), dropped when they change
        self.filter_plan = None
        # when known, the topology keys of existing_anti_affinity_counts' pairs (or more)
        self.existing_keys = None
        # every count above zero (so as PreFilter leaves them; AddPod/RemovePod may not)
        self.counts_positive = False

    def clone(self) -> "PreFilterState":
        c = PreFilterState.__new__(PreFilterState)
        c.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_affinity_counts = dict(self.anti_affinity_counts)
        # the pod and its terms do not change
        c.pod = self.pod
        c.required_affinity_terms = self.required_affinity_terms
        c.required_anti_affinity_terms = self.required_anti_affinity_terms
        c.namespace_labels = self.namespace_labels
        c.filter_plan = None
        c.existing_keys = None
        c.counts_positive = False
        return c

    def update_with_pod(self, p_info: PodInfo, node: "Node", multiplier: int) -> None:
        """preFilterState.updateWithPod."""
        self.filter_plan = None
        self.existing_keys = None
        self.counts_positive = False
        update_with_anti_affinity_terms(self.existing_anti_affinity_counts, p_info.required_anti_affinity_terms,
                                        self.pod, self.namespace_labels, node, multiplier)
        update_with_affinity_terms(self.affinity_counts, self.required_affinity_terms, p_info.pod, node,
                                   multiplier)
        update_with_anti_affinity_terms(self.anti_affinity_counts, self.required_anti_affinity_terms,
                                        p_info.pod, None, node, multiplier)

    def __repr__(self) -> str:
        return (f"PreFilterState(existing={self.existing_anti_affinity_counts}, "
                f"affinity={self.affinity_counts}, anti={self.anti_affinity_counts})")


def get_pre_filter_state(cycle_state) -> PreFilterState:
    try:
        return cycle_state.read(PRE_FILTER_STATE_KEY)
    except NotFoundError:
        raise RuntimeError(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found') from None


# ---------------------------------------------------------------------------------------------
# counting
# ---------------------------------------------------------------------------------------------
def get_existing_anti_affinity_counts(pod: "Pod", ns_labels, nodes) -> TopologyToMatchedTermCount:
    """getExistingAntiAffinityCounts: over the nodes with pods with required anti-affinity."""
    result: TopologyToMatchedTermCount = {}
    for node_info in nodes:
        node = node_info.node
        for existing in node_info.pods_with_required_anti_affinity:
            for t in existing.required_anti_affinity_terms:
                if t.matches(pod, ns_labels):
                    _append(result, node, t.topology_key, 1)
    return result


def get_incoming_affinity_anti_affinity_counts(affinity_terms: Sequence, anti_affinity_terms: Sequence,
                                               all_nodes) -> Tuple[TopologyToMatchedTermCount,
                                                                   TopologyToMatchedTermCount]:
    """getIncomingAffinityAntiAffinityCounts."""
    affinity_counts: TopologyToMatchedTermCount = {}
    anti_affinity_counts: TopologyToMatchedTermCount = {}
    if not affinity_terms and not anti_affinity_terms:
        return affinity_counts, anti_affinity_counts
    for node_info in all_nodes:
        node = node_info.node
        for existing in node_info.pods:
            ep = existing.pod
            if pod_matches_all_affinity_terms(affinity_terms, ep):
                for t in affinity_terms:
                    _append(affinity_counts, node, t.topology_key, 1)
            for t in anti_affinity_terms:
                if t.matches(ep, None):
                    _append(anti_affinity_counts, node, t.topology_key, 1)
    return affinity_counts, anti_affinity_counts


def _existing_contribution(pod: "Pod", ns_labels, node_info) -> Dict:
    """One node's part of getExistingAntiAffinityCounts."""
    out: Dict = {}
    node = node_info.node
    for existing in node_info.pods_with_required_anti_affinity:
        for t in existing.required_anti_affinity_terms:
            if t.matches(pod, ns_labels):
                _append(out, node, t.topology_key, 1)
    return out


def _incoming_contribution(affinity_terms, anti_affinity_terms, node_info) -> Tuple[Dict, Dict]:
    """One node's part of getIncomingAffinityAntiAffinityCounts: (affinity, anti-affinity)."""
    aff: Dict = {}
    anti: Dict = {}
    node = node_info.node
    for existing in node_info.pods:
        ep = existing.pod
        if pod_matches_all_affinity_terms(affinity_terms, ep):
            for t in affinity_terms:
                _append(aff, node, t.topology_key, 1)
        for t in anti_affinity_terms:
            if t.matches(ep, None):
                _append(anti, node, t.topology_key, 1)
    return aff, anti


def pod_label_pairs(node_info) -> Dict[object, int]:
    """node_index keys of a node: the (label key, value) pairs of its pods (all of them, as
    PreFilter's and PreScore's walks over the incoming pod's terms read them)."""
    out: Dict[object, int] = {}
    for pi in node_info.pods:
        for kv in pi.pod.labels.items():
            out[kv] = out.get(kv, 0) + 1
    return out


def first_in(selector):
    """The (key, values) of the selector's first `In` requirement, or None."""
    for key, op, values in selector.requirements:
        if op == "In":
            return key, values
    return None


def _nodes_a_term_can_count(pl, snap, terms, every: bool):
    """The nodes with a pod whose labels the terms can match (node_index): by each term's first
    `In` requirement, or with `every` (a pod counts only if it matches every term) by the first
    term that has one; None (every node) when a term (with `every`: each) has none."""
    keys = []
    for t in terms:
        if t.selector.is_nothing():
            if every:
                return set()  # no pod matches every term
            continue
        first = first_in(t.selector)
        if first is None:
            if every:
                continue
            return None
        keys.extend((first[0], v) for v in first[1])
        if every:
            break
    else:
        if every:
            return None  # no term with an `In` requirement
    index = index_of(pl, "_score_label_index", pod_label_pairs).of(snap)
    return None if index is None else union(index, keys)


def terms_signature(term_lists) -> Optional[str]:
    """What matching reads of a pod's terms; None when a term's namespaces depend on the
    cluster's namespaces (a merged namespaceSelector): such counts are not kept."""
    out = []
    for terms in term_lists:
        row = []
        for t in terms:
            if isinstance(t, tuple):  # (term, weight)
                t, w = t
            else:
                w = None
            if type(t) is not AffinityTerm:
                return None
            row.append((sorted(t.namespaces), repr(t.selector), t.topology_key, repr(t.namespace_selector), w))
        out.append(row)
    return repr(out)


def _sums(plugin, attr: str) -> NodeSums:
    s = getattr(plugin, attr, None)
    if s is None:
        s = NodeSums()
        setattr(plugin, attr, s)
    return s


# ---------------------------------------------------------------------------------------------
# Filter predicates
# ---------------------------------------------------------------------------------------------
def satisfy_existing_pods_anti_affinity(state: PreFilterState, node_info) -> bool:
    counts = state.existing_anti_affinity_counts
    if counts:
        for pair in node_info.node.labels.items():
            if counts.get(pair, 0) > 0:
                return False
    return True


def satisfy_pod_anti_affinity(state: PreFilterState, node_info) -> bool:
    counts = state.anti_affinity_counts
    if counts:
        labels = node_info.node.labels
        for term in state.required_anti_affinity_terms:
            tv = labels.get(term.topology_key)
            if tv is not None and counts.get((term.topology_key, tv), 0) > 0:
                return False
    return True


def satisfy_pod_affinity(state: PreFilterState, node_info) -> bool:
    pods_exist = True
    labels = node_info.node.labels
    counts = state.affinity_counts
    for term in state.required_affinity_terms:
        tv = labels.get(term.topology_key)
        if tv is None:
            # All topology labels must exist on the node.
            return False
        if counts.get((term.topology_key, tv), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # The first pod of a group with affinity to itself: allowed when no pod in the cluster
        # matches and the pod matches its own terms (and the node has every topology key).
        if not counts and pod_matches_all_affinity_terms(state.required_affinity_terms, state.pod):
            return True
        return False
    return True


class FilteringMixin:
    """The PreFilter, PreFilterExtensions and Filter methods of InterPodAffinity."""

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        """PreFilter: count, per topology pair, the existing pods whose required anti-affinity the
        pod violates and the existing pods matching the pod's required (anti-)affinity terms."""
        nodes_with_required_anti_affinity_pods = self.handle.snapshot.have_pods_with_required_anti_affinity_list()
        pod_info = PodInfo.of(pod)
        if pod_info.parse_error is not None:
            return None, Status.unresolvable(f"parsing pod: {self.pod_info_error(pod)}")
        affinity_terms = self.merge_affinity_term_namespaces_if_not_empty(pod_info.required_affinity_terms)
        anti_affinity_terms = self.merge_affinity_term_namespaces_if_not_empty(
            pod_info.required_anti_affinity_terms)
        if not nodes_with_required_anti_affinity_pods and not affinity_terms and not anti_affinity_terms:
            # no existing pod's anti-affinity to count and no term of the pod's own: the counts
            # below would all be empty, and PreFilter skips
            return None, SKIP
        s = PreFilterState(pod, affinity_terms, anti_affinity_terms,
                           self.get_namespace_labels_snapshot(pod.namespace))
        snap = self.handle.snapshot
        if getattr(snap, "journal", None) is not None and nodes is snap.node_info_list:
            # the same counts, kept across pods of the same shape (node_sums)
            ns_labels = s.namespace_labels
            if nodes_with_required_anti_affinity_pods:
                sig = repr((pod.namespace, pod.labels, ns_labels))
                # (only the nodes with such pods contribute)
                def holders():
                    return {ni.node.name for ni in nodes_with_required_anti_affinity_pods}

                s.existing_anti_affinity_counts = _sums(self, "_existing_sums").sums(
                    snap, sig, lambda ni: _existing_contribution(pod, ns_labels, ni), holders)
                # the topology keys of those pairs, for filter_nodes
                s.existing_keys = _sums(self, "_existing_key_sums").sums(
                    snap, sig, lambda ni: dict.fromkeys([k for k, _ in _existing_contribution(pod, ns_labels, ni)], 1),
                    holders)
            if affinity_terms or anti_affinity_terms:
                sig = terms_signature([affinity_terms, anti_affinity_terms])
                # only nodes with a pod the terms can match contribute (node_index)
                if affinity_terms:
                    s.affinity_counts = _sums(self, "_affinity_sums").sums(
                        snap, sig, lambda ni: _incoming_contribution(affinity_terms, (), ni)[0],
                        lambda: _nodes_a_term_can_count(self, snap, affinity_terms, every=True))
                if anti_affinity_terms:
                    s.anti_affinity_counts = _sums(self, "_anti_affinity_sums").sums(
                        snap, sig, lambda ni: _incoming_contribution((), anti_affinity_terms, ni)[1],
                        lambda: _nodes_a_term_can_count(self, snap, anti_affinity_terms, every=False))
        else:
            s.existing_anti_affinity_counts = get_existing_anti_affinity_counts(
                pod, s.namespace_labels, nodes_with_required_anti_affinity_pods)
            s.affinity_counts, s.anti_affinity_counts = get_incoming_affinity_anti_affinity_counts(
                affinity_terms, anti_affinity_terms, nodes)
        if not s.existing_anti_affinity_counts and not affinity_terms and not anti_affinity_terms:
            return None, SKIP
        s.counts_positive = True  # sums of +1 per matching pod and term
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    @hookimpl
    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info):
        try:
            s = get_pre_filter_state(state)
        except RuntimeError as e:
            return Status.error(e)
        s.update_with_pod(pod_info_to_add, node_info.node, 1)
        return None

    @hookimpl
    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info):
        try:
            s = get_pre_filter_state(state)
        except RuntimeError as e:
            return Status.error(e)
        s.update_with_pod(pod_info_to_remove, node_info.node, -1)
        return None

    @hookimpl
    def filter(self, state, pod, node_info):
        try:
            s = get_pre_filter_state(state)
        except RuntimeError as e:
            return Status.error(e)
        if not satisfy_pod_affinity(s, node_info):
            return Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if not satisfy_pod_anti_affinity(s, node_info):
            return Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if not satisfy_existing_pods_anti_affinity(s, node_info):
            return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    def filter_nodes(self, state, pod, nodes):
        """filter on each node (the batch form the framework calls)."""
        return _filter_nodes(self, state, pod, nodes)


class _FilterPlan:
    """What filter_nodes derives once a cycle from a PreFilterState: the three predicates as
    tests on a node's labels, with satisfyPodAffinity decided once per topology value."""

    __slots__ = ("aff_keys", "aff_memo", "aff_counts_empty", "aff_self_match", "terms", "pod",
                 "counts", "anti_keys", "anti_pos", "existing_pos", "existing_keys")

    def __init__(self, s: PreFilterState) -> None:
        self.terms = s.required_affinity_terms
        self.pod = s.pod
        self.aff_keys = tuple(t.topology_key for t in self.terms)
        self.aff_memo: Dict = {}
        self.counts = s.affinity_counts
        self.aff_counts_empty = not s.affinity_counts
        self.aff_self_match: Optional[bool] = None
        # satisfyPodAntiAffinity: only with counts; a node is rejected when one of its values
        # of the terms' topology keys has a positive count
        self.anti_keys = tuple(dict.fromkeys(t.topology_key for t in s.required_anti_affinity_terms)) \
            if s.anti_affinity_counts else ()
        self.anti_pos = _positive_pairs(s.anti_affinity_counts, s.counts_positive) if self.anti_keys else None
        # satisfyExistingPodsAntiAffinity: a node is rejected when one of its labels has a
        # positive count
        self.existing_pos = _positive_pairs(s.existing_anti_affinity_counts, s.counts_positive) \
            if s.existing_anti_affinity_counts else None
        self.existing_keys = tuple(s.existing_keys) if s.existing_keys is not None else None

    def affinity_ok(self, values: tuple) -> bool:
        """satisfyPodAffinity on a node whose values of the terms' topology keys are `values`
        (None: the node lacks the key)."""
        pods_exist = True
        counts = self.counts
        for key, tv in zip(self.aff_keys, values):
            if tv is None:
                return False
            if counts.get((key, tv), 0) <= 0:
                pods_exist = False
        if not pods_exist:
            if self.aff_counts_empty:
                if self.aff_self_match is None:
                    self.aff_self_match = pod_matches_all_affinity_terms(self.terms, self.pod)
                return self.aff_self_match
            return False
        return True


def _positive_pairs(counts: TopologyToMatchedTermCount, positive: bool):
    """The topology pairs with a count above zero (the dict's own keys when all are)."""
    if positive or min(counts.values()) > 0:
        return counts.keys()
    return {pair for pair, n in counts.items() if n > 0}


def _any_pair_in(pos, keys, cols: NodeColumns) -> List[bool]:
    """Per node: is one of its (key, value) pairs of `keys` in `pos`?"""
    contains = pos.__contains__
    bad = None
    for k in keys:
        b = list(map(contains, cols.pairs(k)))
        bad = b if bad is None else list(map(or_, bad, b))
    return bad


def _filter_nodes(plugin, state, pod, nodes):
    """filter on each node (the batch form): the same three predicates in the same order, each
    as one pass over the nodes' topology values. None when the state cannot be read (filter
    reports the error on each node)."""
    try:
        s = get_pre_filter_state(state)
    except RuntimeError:
        return None
    plan = s.filter_plan
    if plan is None:
        plan = s.filter_plan = _FilterPlan(s)
    n = len(nodes)
    cols = NodeColumns(plugin, nodes)
    stages = []
    pos = plan.existing_pos
    if pos is not None:
        keys = plan.existing_keys
        if keys and len(keys) <= 4:
            # a pair of a node's labels can only be counted under one of these keys
            bad = _any_pair_in(pos, keys, cols)
        else:
            bad = [not pos.isdisjoint(lb.items()) for lb in cols.labels()]
        if True in bad:
            stages.append((bad, UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH))
    keys = plan.anti_keys
    if keys:
        bad = _any_pair_in(plan.anti_pos, keys, cols)
        if True in bad:
            stages.append((bad, UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH))
    keys = plan.aff_keys
    if keys:
        memo = plan.aff_memo  # topology value (tuple of values for several terms) -> rejected
        values = cols.tuples(keys)
        one = len(keys) == 1
        for v in set(values).difference(memo):
            memo[v] = not plan.affinity_ok((v,) if one else v)
        if True in memo.values():
            bad = list(map(memo.__getitem__, values))
            if True in bad:
                stages.append((bad, UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH))
    out = [None] * n
    # a node gets the first predicate (in Filter's order) it fails
    for bad, code, msg in reversed(stages):
        fill_rejections(out, bad, code, msg)
    return out


__all__ = [
    "PRE_FILTER_STATE_KEY", "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH", "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "PreFilterState", "FilteringMixin", "pod_matches_all_affinity_terms",
    "get_existing_anti_affinity_counts", "get_incoming_affinity_anti_affinity_counts",
]
