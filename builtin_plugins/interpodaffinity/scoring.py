"""InterPodAffinity PreScore / Score / NormalizeScore (framework/plugins/interpodaffinity/scoring.go).

The topology score is ``{topology_key: {topology_value: weight sum}}``: positive for preferred
affinity (and existing pods' required affinity, weighted by hardPodAffinityWeight), negative for
preferred anti-affinity, in both directions (the incoming pod's terms over the existing pods, and
the existing pods' terms over the incoming pod).
"""

from __future__ import annotations

from itertools import repeat
from typing import TYPE_CHECKING, Dict, Sequence

from harness.framework import MAX_NODE_SCORE, NotFoundError, PodInfo, Status, hookimpl
from harness.framework.status import SKIP

from ..node_index import index_of, union
from ..topology_values import NodeColumns
from .filtering import _sums, first_in, pod_label_pairs, terms_signature

if TYPE_CHECKING:  # pragma: no cover
    from harness.api.objects import Node, Pod

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"

ScoreMap = Dict[str, Dict[str, int]]

_MAX_INT64 = (1 << 63) - 1
_MIN_INT64 = -(1 << 63)


class PreScoreState:
    """preScoreState. Clone returns the state itself, as upstream (it is never mutated)."""

    __slots__ = ("topology_score", "pod", "preferred_affinity_terms", "preferred_anti_affinity_terms",
                 "namespace_labels")

    def __init__(self, pod: "Pod", preferred_affinity_terms, preferred_anti_affinity_terms,
                 namespace_labels) -> None:
        self.topology_score: ScoreMap = {}
        self.pod = pod
        self.preferred_affinity_terms = preferred_affinity_terms          # [(term, weight)]
        self.preferred_anti_affinity_terms = preferred_anti_affinity_terms  # [(term, weight)]
        self.namespace_labels = namespace_labels

    def clone(self) -> "PreScoreState":
        return self


def process_term(m: ScoreMap, term, weight: int, pod: "Pod", ns_labels, node: "Node", multiplier: int) -> None:
    """scoreMap.processTerm."""
    if term.matches(pod, ns_labels):
        tv = node.labels.get(term.topology_key)
        if tv is not None:
            scores = m.get(term.topology_key)
            if scores is None:
                scores = m[term.topology_key] = {}
            scores[tv] = scores.get(tv, 0) + weight * multiplier


def process_terms(m: ScoreMap, terms: Sequence, pod: "Pod", ns_labels, node: "Node", multiplier: int) -> None:
    """scoreMap.processTerms over (term, weight) pairs."""
    for term, weight in terms:
        process_term(m, term, weight, pod, ns_labels, node, multiplier)


_ANY_LABELS = ("", None)  # the key of a term the index cannot narrow down (no `In` requirement)


def _scored_term_keys(node_info) -> Dict[object, int]:
    """node_index keys of a node: for each term processExistingPod weighs against the incoming
    pod (required affinity, preferred affinity and anti-affinity) of its pods with affinity,
    the (label key, value) pairs of the first `In` requirement of its selector (an incoming pod
    the term matches has one of them), else _ANY_LABELS; a selector that matches nothing has none."""
    out: Dict[object, int] = {}
    for pi in node_info.pods_with_affinity:
        terms = [*pi.required_affinity_terms, *(wt.term for wt in pi.preferred_affinity_terms),
                 *(wt.term for wt in pi.preferred_anti_affinity_terms)]
        for t in terms:
            sel = t.selector
            if sel.is_nothing():
                continue
            first = first_in(sel)
            for k in [(first[0], v) for v in first[1]] if first is not None else (_ANY_LABELS,):
                out[k] = out.get(k, 0) + 1
    return out


def _contributing_nodes(pl, snapshot, pod, has_constraints: bool, own_terms):
    """The nodes whose processExistingPod calls can add to the score map (node_index): those
    with a pod whose term can match the incoming pod's labels and, when the incoming pod has
    preferred terms of its own (own_terms), those with a pod its terms can match; None (every
    node) when a term of its own has no `In` requirement or there is no index."""
    index = index_of(pl, "_score_term_index", _scored_term_keys).of(snapshot)
    if index is None:
        return None
    only = union(index, [_ANY_LABELS, *pod.labels.items()])
    if has_constraints:
        keys = []
        for term, _ in own_terms:
            if term.selector.is_nothing():
                continue
            first = first_in(term.selector)
            if first is None:
                return None
            keys.extend((first[0], v) for v in first[1])
        only |= union(index_of(pl, "_score_label_index", pod_label_pairs).of(snapshot), keys)
    return only


def get_pre_score_state(cycle_state) -> PreScoreState:
    try:
        return cycle_state.read(PRE_SCORE_STATE_KEY)
    except NotFoundError:
        raise RuntimeError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found') from None


def has_preferred_constraints(pod: "Pod") -> bool:
    aff = pod.affinity
    pa = aff.get("podAffinity") or {}
    paa = aff.get("podAntiAffinity") or {}
    return bool(pa.get("preferredDuringSchedulingIgnoredDuringExecution")
                or paa.get("preferredDuringSchedulingIgnoredDuringExecution"))


def normalize_scores(scores) -> None:
    """NormalizeScore's min-max normalisation: float64 arithmetic truncated to int64."""
    min_count = _MAX_INT64
    max_count = _MIN_INT64
    for ns in scores:
        if ns.score > max_count:
            max_count = ns.score
        if ns.score < min_count:
            min_count = ns.score
    diff = max_count - min_count
    for ns in scores:
        f = 0.0
        if diff > 0:
            f = float(MAX_NODE_SCORE) * (float(ns.score - min_count) / float(diff))
        ns.score = int(f)


class ScoringMixin:
    """The PreScore, Score and NormalizeScore methods of InterPodAffinity."""

    def process_existing_pod(self, state: PreScoreState, existing: PodInfo, existing_node_info,
                             incoming: "Pod", topo_score: ScoreMap) -> None:
        """processExistingPod."""
        node = existing_node_info.node
        if not node.labels:
            return
        ep = existing.pod
        # the incoming pod's preferred terms (namespaceSelector merged: no namespace labels)
        process_terms(topo_score, state.preferred_affinity_terms, ep, None, node, 1)
        process_terms(topo_score, state.preferred_anti_affinity_terms, ep, None, node, -1)
        # the existing pod's required affinity terms, weighted by hardPodAffinityWeight
        hard = self.hard_pod_affinity_weight
        ns_labels = state.namespace_labels
        if hard > 0:
            for t in existing.required_affinity_terms:
                process_term(topo_score, t, hard, incoming, ns_labels, node, 1)
        # the existing pod's preferred terms
        for wt in existing.preferred_affinity_terms:
            process_term(topo_score, wt.term, wt.weight, incoming, ns_labels, node, 1)
        for wt in existing.preferred_anti_affinity_terms:
            process_term(topo_score, wt.term, wt.weight, incoming, ns_labels, node, -1)

    @hookimpl
    def pre_score(self, state, pod, nodes):
        snapshot = self.handle.snapshot
        if snapshot is None:
            return Status(1, "empty shared lister in InterPodAffinity PreScore")
        has_constraints = has_preferred_constraints(pod)
        # Optionally ignore the existing pods' preferred terms when the pod has none of its own.
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP
        # Unless the pod has preferred terms, only nodes with pods with affinity matter.
        all_nodes = snapshot.list() if has_constraints else snapshot.have_pods_with_affinity_list()

        pod_info = PodInfo.of(pod)
        if pod_info.parse_error is not None:
            return Status.error(f"failed to parse pod: {self.pod_info_error(pod)}")
        if not all_nodes:
            return SKIP  # no node to process: the score map stays empty
        preferred_affinity = [(t, wt.weight) for t, wt in zip(
            self.merge_affinity_term_namespaces_if_not_empty([wt.term for wt in pod_info.preferred_affinity_terms]),
            pod_info.preferred_affinity_terms)]
        preferred_anti_affinity = [(t, wt.weight) for t, wt in zip(
            self.merge_affinity_term_namespaces_if_not_empty(
                [wt.term for wt in pod_info.preferred_anti_affinity_terms]),
            pod_info.preferred_anti_affinity_terms)]
        s = PreScoreState(pod, preferred_affinity, preferred_anti_affinity,
                          self.get_namespace_labels_snapshot(pod.namespace))

        # The per-node score maps are summed; the sum is empty iff every node's map was empty.
        topo_score: ScoreMap = {}
        sig = None
        if getattr(snapshot, "journal", None) is not None:
            terms_sig = terms_signature([preferred_affinity, preferred_anti_affinity])
            if terms_sig is not None:
                sig = repr((pod.namespace, pod.labels, s.namespace_labels, has_constraints, terms_sig))
        if sig is not None:
            # the same sums, kept across pods of the same shape (node_sums)
            def contribution(node_info):
                m: ScoreMap = {}
                for existing in (node_info.pods if has_constraints else node_info.pods_with_affinity):
                    self.process_existing_pod(s, existing, node_info, pod, m)
                return {(k, v): n for k, vals in m.items() for v, n in vals.items()}

            def only():
                return _contributing_nodes(self, snapshot, pod, has_constraints,
                                           preferred_affinity + preferred_anti_affinity)

            for (k, v), n in _sums(self, "_score_sums").sums(snapshot, sig, contribution, only).items():
                vals = topo_score.get(k)
                if vals is None:
                    vals = topo_score[k] = {}
                vals[v] = n
            all_nodes = ()
        for node_info in all_nodes:
            pods = node_info.pods if has_constraints else node_info.pods_with_affinity
            for existing in pods:
                self.process_existing_pod(s, existing, node_info, pod, topo_score)
        if not topo_score:
            return SKIP
        s.topology_score = topo_score
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    @hookimpl
    def score(self, state, pod, node_info):
        try:
            s = get_pre_score_state(state)
        except RuntimeError as e:
            return 0, Status.error(e)
        labels = node_info.node.labels
        score = 0
        for tp_key, tp_values in s.topology_score.items():
            v = labels.get(tp_key)
            if v is not None:
                score += tp_values.get(v, 0)
        return score, None

    def score_nodes(self, state, pod, nodes):
        """score on each node (the batch form the framework calls): a node's score depends only
        on its values of the topology keys, so it is summed once per distinct tuple of values.
        None when the state cannot be read (score reports the error)."""
        try:
            s = get_pre_score_state(state)
        except RuntimeError:
            return None
        items = list(s.topology_score.items())
        cols = NodeColumns(self, nodes)
        if len(items) == 1:
            key, tp_values = items[0]
            return list(map(tp_values.get, cols.get(key), repeat(0)))
        values = cols.tuples([k for k, _ in items])
        memo = {}
        for vs in set(values):
            score = 0
            for (_, tp_values), v in zip(items, vs):
                if v is not None:
                    score += tp_values.get(v, 0)
            memo[vs] = score
        return list(map(memo.__getitem__, values))

    def normalize_scores(self, state, pod, scores):
        """normalize_score on plain scores (the batch form the framework calls): the same
        float64 formula, once per distinct score. None when the state cannot be read."""
        try:
            s = get_pre_score_state(state)
        except RuntimeError:
            return None
        if not s.topology_score or not scores:
            return list(scores)
        min_count = min(scores)
        diff = max(scores) - min_count
        if diff <= 0:
            return [0] * len(scores)
        fmax = float(MAX_NODE_SCORE)
        fdiff = float(diff)
        memo = {sc: int(fmax * (float(sc - min_count) / fdiff)) for sc in set(scores)}
        return [memo[sc] for sc in scores]

    @hookimpl
    def normalize_score(self, state, pod, scores):
        try:
            s = get_pre_score_state(state)
        except RuntimeError as e:
            return Status.error(e)
        if not s.topology_score:
            return None
        normalize_scores(scores)
        return None


__all__ = ["PRE_SCORE_STATE_KEY", "PreScoreState", "ScoringMixin", "normalize_scores",
           "has_preferred_constraints"]
