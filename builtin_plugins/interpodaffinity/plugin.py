"""InterPodAffinity: the plugin, its args, namespace handling and queueing hints
(framework/plugins/interpodaffinity/plugin.go; args defaults and validation from
apis/config/v1/defaults.go and apis/config/validation/validation_pluginargs.go).
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from harness.api import labels as labelsel
from harness.framework import Status, signers
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource, Plugin,
                               PodInfo, QueueingHint, hookimpl)
from harness.framework.types import get_affinity_terms

from .. import names
from ..helper import features_of
from .filtering import FilteringMixin, pod_matches_all_affinity_terms
from .scoring import ScoringMixin

ARGS_KIND = "InterPodAffinityArgs"
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100

# The API server labels every namespace with its name (NamespaceDefaultLabelName).
LABEL_METADATA_NAME = "kubernetes.io/metadata.name"


# ---------------------------------------------------------------------------------------------
# Namespaces
# ---------------------------------------------------------------------------------------------
class MergedAffinityTerm:
    """An incoming pod's AffinityTerm after mergeAffinityTermNamespacesIfNotEmpty: the namespaces
    its (non-empty) namespaceSelector selects count as listed in `namespaces`.

    Upstream inserts the selected namespaces' names into the term's namespace set at PreFilter /
    PreScore time; here membership is decided on demand (and cached) from the same namespace
    labels, which is the same set for every pod of the snapshot. As upstream (the term is merged
    through a copy, so only the shared namespace set changes), the term keeps its original
    namespaceSelector too, so ``matches(pod, None)`` still evaluates it against empty labels.
    """

    __slots__ = ("namespaces", "selector", "topology_key", "namespace_selector", "_merged_selector",
                 "_ns_labels", "_cache")

    def __init__(self, term, merged_selector: labelsel.Selector, ns_labels) -> None:
        self.namespaces: FrozenSet[str] = term.namespaces
        self.selector = term.selector
        self.topology_key = term.topology_key
        self.namespace_selector = term.namespace_selector
        self._merged_selector = merged_selector
        self._ns_labels = ns_labels  # fn(namespace) -> labels of the namespace
        self._cache: Dict[str, bool] = {}

    def _in_merged(self, ns: str) -> bool:
        hit = self._cache.get(ns)
        if hit is None:
            hit = self._cache[ns] = self._merged_selector.matches(self._ns_labels(ns))
        return hit

    def matches(self, pod, ns_labels) -> bool:
        """AffinityTerm.Matches."""
        ns = pod.namespace
        if ns in self.namespaces or self.namespace_selector.matches(ns_labels) or self._in_merged(ns):
            return self.selector.matches(pod.labels)
        return False


def _aggregate(msgs: Sequence[str]) -> str:
    """utilerrors.NewAggregate(...).Error()."""
    if len(msgs) == 1:
        return msgs[0]
    seen: List[str] = []
    for m in msgs:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def pod_info_error(pod) -> str:
    """The error of framework.NewPodInfo for a pod whose affinity terms do not parse."""
    aff = pod.affinity
    pa = aff.get("podAffinity") or {}
    paa = aff.get("podAntiAffinity") or {}
    lists = [
        ("requiredAffinityTerms", pa.get("requiredDuringSchedulingIgnoredDuringExecution"), False),
        ("requiredAntiAffinityTerms", paa.get("requiredDuringSchedulingIgnoredDuringExecution"), False),
        ("preferredAffinityTerms", pa.get("preferredDuringSchedulingIgnoredDuringExecution"), True),
        ("preferredAntiAffinityTerms", paa.get("preferredDuringSchedulingIgnoredDuringExecution"), True),
    ]
    errs: List[str] = []
    for what, terms, weighted in lists:
        try:
            get_affinity_terms(pod, [(t.get("podAffinityTerm") or {}) for t in terms or []] if weighted
                               else terms)
        except labelsel.SelectorError as e:
            errs.append(f"{what}: {e}")
    if not errs:
        return PodInfo.of(pod).parse_error or ""
    return _aggregate(errs)


# ---------------------------------------------------------------------------------------------
# The plugin
# ---------------------------------------------------------------------------------------------
class InterPodAffinity(FilteringMixin, ScoringMixin, Plugin):
    """InterPodAffinity: required pod (anti-)affinity as a filter, preferred (and, symmetrically,
    existing pods' required) affinity as a score."""

    name = names.InterPodAffinity
    args_kind = ARGS_KIND

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        args = self.set_defaults(dict(args or {}))
        errs = self.validate_args(args)
        if errs:
            raise ValueError(_aggregate([f"{path}: {msg}" for path, msg in errs]))
        super().__init__(args, handle)
        self.hard_pod_affinity_weight: int = int(args["hardPodAffinityWeight"])
        self.ignore_preferred_terms_of_existing_pods: bool = bool(args["ignorePreferredTermsOfExistingPods"])
        fts = features_of(handle)
        self.hint_counts_nominated = fts.has("PodHintsCountNominatedPods")
        self.hint_both_ways = fts.has("InterPodAffinityHintsBothWays")

    # ---- args ---------------------------------------------------------------------------------
    @classmethod
    def set_defaults(cls, args: Dict[str, Any]) -> Dict[str, Any]:
        """SetDefaults_InterPodAffinityArgs (the bool decodes to false when absent)."""
        if args.get("hardPodAffinityWeight") is None:
            args["hardPodAffinityWeight"] = DEFAULT_HARD_POD_AFFINITY_WEIGHT
        if args.get("ignorePreferredTermsOfExistingPods") is None:
            args["ignorePreferredTermsOfExistingPods"] = False
        return args

    @classmethod
    def validate_args(cls, args: Dict[str, Any]) -> List[Tuple[str, str]]:
        """ValidateInterPodAffinityArgs: hardPodAffinityWeight in [0, 100]."""
        w = args.get("hardPodAffinityWeight", DEFAULT_HARD_POD_AFFINITY_WEIGHT)
        if isinstance(w, bool) or not isinstance(w, int):
            return [("hardPodAffinityWeight", f"Invalid value: {w!r}: must be an integer")]
        if w < MIN_HARD_POD_AFFINITY_WEIGHT or w > MAX_HARD_POD_AFFINITY_WEIGHT:
            return [("hardPodAffinityWeight",
                     f"Invalid value: {w}: not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}, "
                     f"{MAX_HARD_POD_AFFINITY_WEIGHT}]")]
        return []

    # ---- namespaces ---------------------------------------------------------------------------
    def namespace_labels(self, ns: str) -> Dict[str, str]:
        """The labels of namespace `ns`: its Namespace object's labels, plus the
        kubernetes.io/metadata.name label the API server puts on every namespace. A namespace
        that some pod lives in exists even without a Namespace object in the case."""
        out: Dict[str, str] = {}
        cluster = getattr(self.handle, "cluster", None)
        if cluster is not None:
            obj = cluster.get("Namespace", "", ns)
            if obj is not None:
                out.update(obj.labels)
        out.setdefault(LABEL_METADATA_NAME, ns)
        return out

    def get_namespace_labels_snapshot(self, ns: str) -> Dict[str, str]:
        """GetNamespaceLabelsSnapshot: a copy of the labels of the pod's namespace."""
        return self.namespace_labels(ns)

    def merge_affinity_term_namespaces_if_not_empty(self, terms: Sequence) -> List:
        """mergeAffinityTermNamespacesIfNotEmpty over an incoming pod's terms: a term with a
        namespaceSelector that is neither empty ({}: all namespaces) nor nil is extended to the
        namespaces it selects."""
        out = []
        for t in terms:
            sel = t.namespace_selector
            if sel.empty() or sel.is_nothing():
                # Empty: matches everything as is. Nothing: lists no namespace, changes nothing.
                out.append(t)
            else:
                out.append(MergedAffinityTerm(t, sel, self.namespace_labels))
        return out

    def pod_info_error(self, pod) -> str:
        return pod_info_error(pod)

    # ---- queueing hints ----------------------------------------------------------------------
    @hookimpl
    def sign_pod(self, pod):
        """SignPod: a pod with pod (anti-)affinity cannot be signed; otherwise its labels are
        signed (other pods' terms may select them) unless ignorePreferredTermsOfExistingPods."""
        aff = pod.affinity
        if aff.get("podAffinity") is not None or aff.get("podAntiAffinity") is not None:
            return None, Status.unschedulable("pods with InterPodAffinity are not signable")
        if self.ignore_preferred_terms_of_existing_pods:
            return None, None
        return [(signers.LABELS_SIGNER_NAME, signers.map_or_none(pod.labels))], None

    @hookimpl
    def events_to_register(self):
        # SchedulerQueueingHints is on in v1.34: Node/Add|UpdateNodeLabel (no UpdateNodeTaint).
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod,
                                              ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete),
                                 self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                                 self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_pod_change(self, pod, old_obj, new_obj) -> QueueingHint:
        """isSchedulableAfterPodChange. v1.36: the target pod's own (label) update queues; a pod
        with a nominated node counts as placed; a deleted pod whose anti-affinity the target pod
        matches queues too."""
        original, modified = old_obj, new_obj
        if self.hint_both_ways and modified is not None and original is not None and pod.uid == modified.uid:
            return QueueingHint.Queue
        nominated = self.hint_counts_nominated
        if ((modified is not None and not modified.node_name and not (nominated and modified.nominated_node_name))
                or (original is not None and not original.node_name
                    and not (nominated and original.nominated_node_name))):
            return QueueingHint.QueueSkip
        try:
            terms = _required_terms(pod, "podAffinity")
            anti_terms = _required_terms(pod, "podAntiAffinity")
        except labelsel.SelectorError:
            return QueueingHint.Queue
        if modified is not None and original is not None:
            # updated: matches the affinity now, or no longer matches the anti-affinity
            if not pod_matches_all_affinity_terms(terms, original) and pod_matches_all_affinity_terms(terms, modified):
                return QueueingHint.Queue
            if pod_matches_all_affinity_terms(anti_terms, original) and \
                    not pod_matches_all_affinity_terms(anti_terms, modified):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if modified is not None:
            # added: matches the affinity
            return QueueingHint.Queue if pod_matches_all_affinity_terms(terms, modified) else QueueingHint.QueueSkip
        # deleted: matched the anti-affinity (v1.36: or the target matches its anti-affinity)
        if pod_matches_all_affinity_terms(anti_terms, original):
            return QueueingHint.Queue
        if self.hint_both_ways:
            try:
                original_anti_terms = _required_terms(original, "podAntiAffinity")
            except labelsel.SelectorError:
                return QueueingHint.Queue
            if pod_matches_all_affinity_terms(original_anti_terms, pod):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod, old_obj, new_obj) -> QueueingHint:
        """isSchedulableAfterNodeChange."""
        original, modified = old_obj, new_obj
        try:
            terms = _required_terms(pod, "podAffinity")
        except labelsel.SelectorError:
            return QueueingHint.Queue
        for term in terms:
            tk = term.topology_key
            if original is None:
                if tk in modified.labels:
                    return QueueingHint.Queue
                continue
            o_has, m_has = tk in original.labels, tk in modified.labels
            if not o_has and m_has:
                return QueueingHint.Queue
            if o_has and m_has and original.labels[tk] != modified.labels[tk]:
                return QueueingHint.Queue
        try:
            anti_terms = _required_terms(pod, "podAntiAffinity")
        except labelsel.SelectorError:
            return QueueingHint.Queue
        for term in anti_terms:
            if original is None:
                return QueueingHint.Queue
            tk = term.topology_key
            o_has, m_has = tk in original.labels, tk in modified.labels
            if o_has and not m_has:
                return QueueingHint.Queue
            if o_has and m_has and original.labels[tk] != modified.labels[tk]:
                return QueueingHint.Queue
        return QueueingHint.QueueSkip


def _required_terms(pod, kind: str):
    """GetAffinityTerms(pod, GetPod(Anti)AffinityTerms(pod.Spec.Affinity)), not merged."""
    return get_affinity_terms(pod, (pod.affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution"))


__all__ = ["InterPodAffinity", "MergedAffinityTerm", "ARGS_KIND", "DEFAULT_HARD_POD_AFFINITY_WEIGHT"]
