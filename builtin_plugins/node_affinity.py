"""NodeAffinity (framework/plugins/nodeaffinity/node_affinity.go) and its NodeAffinityArgs
(apis/config: addedAffinity, validated by ValidateNodeAffinityArgs; no v1 defaulting)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from harness.api.nodeaffinity import (NodeSelector, NodeSelectorError, PreferredSchedulingTerms,
                                      RequiredNodeAffinity, aggregate_error)
from harness.framework import signers
from harness.framework.status import SKIP
from harness.framework import (MAX_NODE_SCORE, ActionType, ClusterEvent, ClusterEventWithHint,
                               EventResource, NotFoundError, Plugin, PreFilterResult, QueueingHint,
                               Status, hookimpl)

from harness.framework import Code, node_table
from harness.framework.lazy_status import StatusColumn
from harness.framework.node_table import NodeRows, numpy

from . import names, node_sums
from .helper import default_normalize_ints, default_normalize_score

PRE_SCORE_STATE_KEY = "PreScore" + names.NodeAffinity
PRE_FILTER_STATE_KEY = "PreFilter" + names.NodeAffinity

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_REQ = "requiredDuringSchedulingIgnoredDuringExecution"
_PREF = "preferredDuringSchedulingIgnoredDuringExecution"
_ADDED_REQ_PATH = "addedAffinity." + _REQ
_ADDED_PREF_PATH = "addedAffinity." + _PREF


def _required_node_affinity_of(pod) -> Optional[Dict[str, Any]]:
    na = (pod.spec.get("affinity") or {}).get("nodeAffinity") or {}
    return na.get(_REQ)


def _parse_preferred(pod) -> Tuple[Optional[PreferredSchedulingTerms], Optional[str]]:
    na = (pod.spec.get("affinity") or {}).get("nodeAffinity") or {}
    terms = na.get(_PREF)
    if not terms:  # nil (an empty list does not survive the API server)
        return None, None
    try:
        return PreferredSchedulingTerms(terms), None
    except NodeSelectorError as e:
        return None, str(e)


def get_pod_preferred_node_affinity(pod) -> Tuple[Optional[PreferredSchedulingTerms], Optional[str]]:
    """getPodPreferredNodeAffinity: (terms or None, parse error or None), parsed once per pod."""
    return pod.memo("preferred_node_affinity", _parse_preferred)


def _validate(args: Optional[Dict[str, Any]]) -> List[Tuple[str, str]]:
    """ValidateNodeAffinityArgs as (field path, error body) pairs."""
    added = (args or {}).get("addedAffinity")
    if not added:
        return []
    errs: List[Tuple[str, str]] = []
    ns = added.get(_REQ)
    if ns is not None:
        try:
            NodeSelector(ns, _ADDED_REQ_PATH)
        except NodeSelectorError as e:
            errs.extend(_pairs(e))
    terms = added.get(_PREF)
    if terms:
        try:
            PreferredSchedulingTerms(terms, _ADDED_PREF_PATH)
        except NodeSelectorError as e:
            errs.extend(_pairs(e))
    return errs


def _pairs(e: NodeSelectorError) -> List[Tuple[str, str]]:
    out = []
    for fe in e.errors:
        path = getattr(fe, "path", None)
        if path is None:
            path, _, body = str(fe).partition(": ")
        else:
            body = fe.body
        out.append((path, body))
    return out


class _PreFilterState:
    __slots__ = ("required_node_selector_and_affinity",)

    def __init__(self, rna: RequiredNodeAffinity):
        self.required_node_selector_and_affinity = rna

    def clone(self):
        return self


class _PreScoreState:
    __slots__ = ("preferred_node_affinity",)

    def __init__(self, pref: Optional[PreferredSchedulingTerms]):
        self.preferred_node_affinity = pref

    def clone(self):
        return self


class NodeAffinity(Plugin):
    name = names.NodeAffinity
    args_kind = "NodeAffinityArgs"

    @classmethod
    def set_defaults(cls, args: Dict[str, Any]) -> Dict[str, Any]:
        return args  # NodeAffinityArgs has no v1 defaults

    @classmethod
    def validate_args(cls, args: Dict[str, Any]) -> List[Tuple[str, str]]:
        return _validate(args)

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        super().__init__(args, handle)
        errs = _validate(args)
        if errs:
            raise ValueError(aggregate_error([f"{p}: {b}" for p, b in errs]))
        self.added_node_selector: Optional[NodeSelector] = None
        self.added_pref_sched_terms: Optional[PreferredSchedulingTerms] = None
        added = (args or {}).get("addedAffinity") or {}
        ns = added.get(_REQ)
        if ns is not None:
            self.added_node_selector = NodeSelector(ns)
        terms = added.get(_PREF)
        if terms:
            self.added_pref_sched_terms = PreferredSchedulingTerms(terms)

    # ---- queueing -----------------------------------------------------------------------------
    @hookimpl
    def sign_pod(self, pod):
        """SignPod: node affinity filtering and scoring depend on the pod's node affinity and
        node selector."""
        return [(signers.NODE_AFFINITY_SIGNER_NAME, signers.node_affinity_signer(pod)),
                (signers.NODE_SELECTOR_SIGNER_NAME, signers.map_or_none(pod.spec.get("nodeSelector")))], None

    @hookimpl
    def events_to_register(self):
        # SchedulerQueueingHints is on in v1.34: Add | UpdateNodeLabel.
        return [ClusterEventWithHint(
            ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
            self.is_schedulable_after_node_change)]

    def is_schedulable_after_node_change(self, pod, old_obj, new_obj):
        if self.added_node_selector is not None and not self.added_node_selector.match(new_obj):
            return QueueingHint.QueueSkip
        rna = RequiredNodeAffinity(pod)
        matched, err = rna.match_err(new_obj)
        if err is not None:
            return QueueingHint.Queue
        if not matched:
            return QueueingHint.QueueSkip
        if old_obj is None:
            return QueueingHint.Queue
        was_matched, err = rna.match_err(old_obj)
        if err is not None:
            return QueueingHint.Queue
        if was_matched:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    # ---- filtering ----------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state, pod, nodes):
        required = _required_node_affinity_of(pod)
        no_node_affinity = required is None
        if no_node_affinity and self.added_node_selector is None and not pod.spec.get("nodeSelector"):
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(RequiredNodeAffinity(pod)))
        terms = [] if no_node_affinity else (required.get("nodeSelectorTerms") or [])
        if not terms:
            return None, None
        # Affinity to specific node names (matchFields metadata.name In): terms are ORed, the
        # requirements of a term ANDed.
        node_names = None
        for t in terms:
            term_names = None
            for r in (t or {}).get("matchFields") or []:
                if r.get("key") == "metadata.name" and r.get("operator") == "In":
                    s = {str(v) for v in (r.get("values") or [])}
                    term_names = s if term_names is None else (term_names & s)
            if term_names is None:
                # A term without a node name constraint: every node is eligible.
                return None, None
            node_names = set(term_names) if node_names is None else (node_names | term_names)
        if node_names is not None and not node_names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(node_names), None
        return None, None

    @hookimpl
    def filter(self, state, pod, node_info):
        node = node_info.node
        if self.added_node_selector is not None and not self.added_node_selector.match(node):
            return Status.unresolvable(ERR_REASON_ENFORCED)
        s = state.get(PRE_FILTER_STATE_KEY)
        rna = s.required_node_selector_and_affinity if s is not None else RequiredNodeAffinity(pod)
        # Parse errors are ignored for backwards compatibility.
        if not rna.match(node):
            return Status.unresolvable(ERR_REASON_POD)
        return None

    def filter_nodes(self, state, pod, nodes):
        """filter on each node (the batch form the framework calls). Whether a node matches the
        pod's nodeSelector and required affinity is kept per node while neither the node object
        nor the pod's shape (_required_signature) changes."""
        if self.added_node_selector is not None:
            return None
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return None
        rna = s.required_node_selector_and_affinity
        sig = pod.memo("node_affinity.required_signature", _required_signature)
        if nodes.__class__ is NodeRows and node_sums.ENABLED:
            return self._filter_rows(nodes, rna, sig)
        cache = self.__dict__.setdefault("_match_cache", {}) if node_sums.ENABLED else {}
        out = []
        append = out.append
        for ni in nodes:
            node = ni.node
            e = cache.get(node.name)
            if e is not None and e[0] is node and e[1] == sig:
                matched = e[2]
            else:
                matched = rna.match(node)
                cache[node.name] = (node, sig, matched)
            append(None if matched else Status.unresolvable(ERR_REASON_POD))
        return out

    def _filter_rows(self, nodes, rna, sig):
        """filter_nodes on rows of the node table: per pod shape, a column of whether each row's
        node matches, filled for the rows visited and refilled for rows whose Node object was
        replaced since (the table's node_version); the statuses as a StatusColumn."""
        np = numpy()
        t = nodes.table
        kept = self.__dict__.get("_match_columns")
        if kept is None or kept[0] is not t:
            kept = self._match_columns = (t, {})
        columns = kept[1]
        entry = columns.get(sig)
        if entry is None:
            if len(columns) >= 64:
                columns.clear()
            # version -1: not known yet
            entry = columns[sig] = (np.zeros(len(t.nodes), dtype=bool), np.full(len(t.nodes), -1, dtype=np.int64))
        matched, known = entry
        rows = node_table.row_index(nodes.rows)
        stale = rows[known[rows] != t.node_version[rows]]
        if len(stale):
            tnodes = t.nodes
            for i in stale.tolist():
                matched[i] = rna.match(tnodes[i].node)
            known[stale] = t.node_version[stale]
        return StatusColumn((~matched[rows]).astype(np.int64), _MATCH_KINDS)

    # ---- scoring ------------------------------------------------------------------------------
    @hookimpl
    def pre_score(self, state, pod, nodes):
        pref, err = get_pod_preferred_node_affinity(pod)
        if err is not None:
            return Status.error(err)
        if pref is None and self.added_pref_sched_terms is None:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(pref))
        return None

    @hookimpl
    def score(self, state, pod, node_info):
        node = node_info.node
        count = 0
        if self.added_pref_sched_terms is not None:
            count += self.added_pref_sched_terms.score(node)
        try:
            s = state.read(PRE_SCORE_STATE_KEY)
            pref = s.preferred_node_affinity
        except NotFoundError:
            pref, err = get_pod_preferred_node_affinity(pod)
            if err is not None:
                return 0, Status.error(err)
        if pref is not None:
            count += pref.score(node)
        return count, None

    @hookimpl
    def normalize_score(self, state, pod, scores):
        return default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_scores(self, state, pod, scores):
        """normalize_score on plain scores (the batch form the framework calls)."""
        return default_normalize_ints(MAX_NODE_SCORE, False, scores)


# StatusColumn kinds of _filter_rows: 0 the node matches, 1 it does not
_MATCH_KINDS = (None, (Code.UnschedulableAndUnresolvable, (ERR_REASON_POD,)))


def _required_signature(pod) -> str:
    """What RequiredNodeAffinity(pod) reads: spec.nodeSelector and the required node affinity."""
    spec = pod.spec
    aff = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    return json.dumps([spec.get("nodeSelector"), aff.get("requiredDuringSchedulingIgnoredDuringExecution")],
                      sort_keys=True, default=repr)


PLUGINS = [NodeAffinity]
