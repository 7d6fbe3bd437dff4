"""InterPodAffinity PreFilter / Filter and the PreFilter extensions AddPod / RemovePod
(framework/plugins/interpodaffinity/filtering.go).

A topology-pair count is a dict keyed by ``(topology_key, topology_value)``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from harness.framework import NotFoundError, PodInfo, Status, hookimpl
from harness.framework.types import AffinityTerm

from ..node_sums import NodeSums

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
                 "pod", "required_affinity_terms", "required_anti_affinity_terms", "namespace_labels")

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
        return c

    def update_with_pod(self, p_info: PodInfo, node: "Node", multiplier: int) -> None:
        """preFilterState.updateWithPod."""
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


def _incoming_contribution(affinity_terms, anti_affinity_terms, node_info) -> Dict:
    """One node's part of getIncomingAffinityAntiAffinityCounts: keys (0, pair) for affinity,
    (1, pair) for anti-affinity."""
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
    out = {(0, k): v for k, v in aff.items()}
    out.update({(1, k): v for k, v in anti.items()})
    return out


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
            row.append([sorted(t.namespaces), repr(t.selector), t.topology_key, repr(t.namespace_selector), w])
        out.append(row)
    return json.dumps(out)


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
        s = PreFilterState(pod, affinity_terms, anti_affinity_terms,
                           self.get_namespace_labels_snapshot(pod.namespace))
        snap = self.handle.snapshot
        if getattr(snap, "journal", None) is not None and nodes is snap.node_info_list:
            # the same counts, kept across pods of the same shape (node_sums)
            ns_labels = s.namespace_labels
            s.existing_anti_affinity_counts = _sums(self, "_existing_sums").sums(
                snap, json.dumps([pod.namespace, pod.labels, ns_labels], sort_keys=True),
                lambda ni: _existing_contribution(pod, ns_labels, ni))
            if affinity_terms or anti_affinity_terms:
                both = _sums(self, "_incoming_sums").sums(
                    snap, terms_signature([affinity_terms, anti_affinity_terms]),
                    lambda ni: _incoming_contribution(affinity_terms, anti_affinity_terms, ni))
                s.affinity_counts = {k[1]: v for k, v in both.items() if k[0] == 0}
                s.anti_affinity_counts = {k[1]: v for k, v in both.items() if k[0] == 1}
        else:
            s.existing_anti_affinity_counts = get_existing_anti_affinity_counts(
                pod, s.namespace_labels, nodes_with_required_anti_affinity_pods)
            s.affinity_counts, s.anti_affinity_counts = get_incoming_affinity_anti_affinity_counts(
                affinity_terms, anti_affinity_terms, nodes)
        if not s.existing_anti_affinity_counts and not affinity_terms and not anti_affinity_terms:
            return None, Status.skip()
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


def _filter_nodes(plugin, state, pod, nodes):
    """filter on each node (the batch form): the same three predicates in the same order."""
    try:
        s = get_pre_filter_state(state)
    except RuntimeError:
        return None
    out = []
    append = out.append
    check_affinity = bool(s.required_affinity_terms)
    for ni in nodes:
        if check_affinity and not satisfy_pod_affinity(s, ni):
            append(Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH))
        elif s.anti_affinity_counts and not satisfy_pod_anti_affinity(s, ni):
            append(Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH))
        elif s.existing_anti_affinity_counts and not satisfy_existing_pods_anti_affinity(s, ni):
            append(Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH))
        else:
            append(None)
    return out


__all__ = [
    "PRE_FILTER_STATE_KEY", "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH", "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "PreFilterState", "FilteringMixin", "pod_matches_all_affinity_terms",
    "get_existing_anti_affinity_counts", "get_incoming_affinity_anti_affinity_counts",
]
