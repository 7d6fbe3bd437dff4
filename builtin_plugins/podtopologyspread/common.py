"""Shared pieces of PodTopologySpread (framework/plugins/podtopologyspread/common.go) and the
default selector of the Services, ReplicationControllers, ReplicaSets and StatefulSets that
select a pod (framework/plugins/helper/spread.go)."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from harness.api import labels as labelsel
from harness.api.nodeaffinity import RequiredNodeAffinity
from harness.api.taints import do_not_schedule_taints_filter, find_matching_untolerated_taint

from ..node_index import index_of, union

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"

NODE_INCLUSION_POLICY_HONOR = "Honor"
NODE_INCLUSION_POLICY_IGNORE = "Ignore"

MAX_INT32 = (1 << 31) - 1


class TopologySpreadConstraint:
    """topologySpreadConstraint: a v1.TopologySpreadConstraint with its selector parsed and the
    optional fields defaulted (minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore)."""

    __slots__ = ("max_skew", "topology_key", "selector", "min_domains", "node_affinity_policy",
                 "node_taints_policy", "enable_comparison_operators")

    def __init__(self, max_skew: int, topology_key: str, selector: labelsel.Selector,
                 min_domains: int = 1, node_affinity_policy: str = NODE_INCLUSION_POLICY_HONOR,
                 node_taints_policy: str = NODE_INCLUSION_POLICY_IGNORE,
                 enable_comparison_operators: bool = False):
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.node_affinity_policy = node_affinity_policy
        self.node_taints_policy = node_taints_policy
        # TaintTolerationComparisonOperators (v1.35 on): the plugin's flag, which upstream passes
        # to matchNodeInclusionPolicies
        self.enable_comparison_operators = enable_comparison_operators

    def match_node_inclusion_policies(self, pod, node, require) -> bool:
        """matchNodeInclusionPolicies: `require` is the pod's RequiredNodeAffinity."""
        if self.node_affinity_policy == NODE_INCLUSION_POLICY_HONOR:
            # Parse errors are ignored (they make the node not match), as upstream does.
            if not required_affinity_match(require, node):
                return False
        if self.node_taints_policy == NODE_INCLUSION_POLICY_HONOR:
            if find_matching_untolerated_taint(node.taints, pod.tolerations, do_not_schedule_taints_filter,
                                               self.enable_comparison_operators) is not None:
                return False
        return True

    def _key(self):
        return (self.max_skew, self.topology_key, tuple(sorted(self.selector.requirements)),
                self.selector.is_nothing(), self.min_domains, self.node_affinity_policy,
                self.node_taints_policy, self.enable_comparison_operators)

    def __eq__(self, other) -> bool:
        if not isinstance(other, TopologySpreadConstraint):
            return NotImplemented
        return self._key() == other._key()

    def __repr__(self) -> str:
        return (f"TopologySpreadConstraint(max_skew={self.max_skew}, "
                f"topology_key={self.topology_key!r}, selector={self.selector!r}, "
                f"min_domains={self.min_domains}, node_affinity_policy={self.node_affinity_policy}, "
                f"node_taints_policy={self.node_taints_policy})")


def required_node_affinity(pod):
    """nodeaffinity.GetRequiredNodeAffinity(pod), computed once per pod."""
    return pod.memo("podtopologyspread.required_node_affinity", RequiredNodeAffinity)


def required_affinity_match(require, node) -> bool:
    """`match, _ := require.Match(node)`: a parse error counts as no match."""
    try:
        return bool(require.match(node))
    except Exception:
        return False


def node_labels_match_spread_constraints(node_labels: Mapping[str, str],
                                         constraints: Sequence[TopologySpreadConstraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints: every topology key is a label of the node."""
    for c in constraints:
        if c.topology_key not in node_labels:
            return False
    return True


def merge_label_set_with_selector(match_labels: Mapping[str, str],
                                  s: labelsel.Selector) -> labelsel.Selector:
    """mergeLabelSetWithSelector: SelectorFromSet(matchLabels) plus the selector's requirements
    (a Nothing selector has no requirements and is returned unchanged)."""
    if s.is_nothing():
        return s
    merged = labelsel.from_set(match_labels)
    # internalSelector.Add keeps the requirements sorted by key (a stable sort).
    reqs = sorted(merged.requirements + s.requirements, key=lambda r: r[0])
    return labelsel.Selector(reqs)


def filter_topology_spread_constraints(constraints: Optional[Iterable[Mapping[str, Any]]],
                                       pod_labels: Mapping[str, str], action: str,
                                       enable_match_label_keys: bool = True,
                                       enable_node_inclusion_policy: bool = True,
                                       enable_comparison_operators: bool = False
                                       ) -> List[TopologySpreadConstraint]:
    """filterTopologySpreadConstraints: the constraints whose whenUnsatisfiable is `action`,
    parsed. Raises labels.SelectorError for an invalid labelSelector."""
    result: List[TopologySpreadConstraint] = []
    for c in constraints or ():
        if (c.get("whenUnsatisfiable") or "") != action:
            continue
        selector = labelsel.from_label_selector(c.get("labelSelector"))
        keys = c.get("matchLabelKeys") or []
        if enable_match_label_keys and keys:
            match_labels = {}
            for k in keys:
                if k in pod_labels:
                    match_labels[k] = pod_labels[k]
            if match_labels:
                selector = merge_label_set_with_selector(match_labels, selector)
        min_domains = c.get("minDomains")
        tsc = TopologySpreadConstraint(
            max_skew=int(c.get("maxSkew") or 0),
            topology_key=c.get("topologyKey") or "",
            selector=selector,
            min_domains=1 if min_domains is None else int(min_domains),
            enable_comparison_operators=enable_comparison_operators,
        )
        if enable_node_inclusion_policy:
            if c.get("nodeAffinityPolicy") is not None:
                tsc.node_affinity_policy = c["nodeAffinityPolicy"]
            if c.get("nodeTaintsPolicy") is not None:
                tsc.node_taints_policy = c["nodeTaintsPolicy"]
        result.append(tsc)
    return result


def count_pods_match_selector(pod_infos, selector: labelsel.Selector, ns: str) -> int:
    """countPodsMatchSelector: matching pods of the namespace, terminating pods excluded.
    An empty (match-everything) selector counts nothing."""
    if selector.empty():
        return 0
    count = 0
    matches = selector.matches
    for pi in pod_infos:
        p = pi.pod
        if p.deletion_timestamp is not None or p.namespace != ns:
            continue
        if matches(p.labels):
            count += 1
    return count


def pod_label_keys(node_info) -> Dict[tuple, int]:
    """node_index keys of a node: (namespace, label key, value) of each pod countPodsMatchSelector
    counts (terminating pods are not counted)."""
    out: Dict[tuple, int] = {}
    for pi in node_info.pods:
        p = pi.pod
        if p.deletion_timestamp is not None:
            continue
        ns = p.namespace
        for k, v in p.labels.items():
            key = (ns, k, v)
            out[key] = out.get(key, 0) + 1
    return out


def matching_nodes(pl, snap, constraints, ns):
    """The nodes with a pod of the namespace that a constraint's selector can match (by the
    selector's smallest `In` requirement; node_index), or None when a constraint has no such
    requirement or there is no index: on every other node countPodsMatchSelector is 0 for
    each constraint."""
    index = None
    out = set()
    for c in constraints:
        sel = c.selector
        if sel.is_nothing() or sel.empty():
            continue  # counts nothing anywhere
        best = None
        for key, op, values in sel.requirements:
            if op != "In":
                continue
            if index is None:
                index = index_of(pl, "_pod_label_index", pod_label_keys).of(snap)
                if index is None:
                    return None
            nodes = union(index, [(ns, key, v) for v in values])
            if best is None or len(nodes) < len(best):
                best = nodes
        if best is None:
            return None
        out |= best
    return out


def pod_labels_match_spread_constraints(constraints: Sequence[TopologySpreadConstraint],
                                        pod_labels: Mapping[str, str]) -> bool:
    """podLabelsMatchSpreadConstraints: does any constraint's selector match the labels?"""
    for c in constraints:
        if c.selector.matches(pod_labels):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# helper.DefaultSelector (framework/plugins/helper/spread.go)
# ---------------------------------------------------------------------------------------------
_RC_GVK = ("", "v1", "ReplicationController")
_RS_GVK = ("apps", "v1", "ReplicaSet")
_SS_GVK = ("apps", "v1", "StatefulSet")


def parse_group_version(gv: str):
    """schema.ParseGroupVersion: (group, version), or None when it does not parse."""
    if not gv or gv == "/":
        return ("", "")
    n = gv.count("/")
    if n == 0:
        return ("", gv)
    if n == 1:
        i = gv.index("/")
        return (gv[:i], gv[i + 1:])
    return None


def get_controller_of(obj) -> Optional[Mapping[str, Any]]:
    """metav1.GetControllerOfNoCopy: the owner reference with controller: true."""
    for ref in (obj.raw.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def get_pod_services(cluster, pod) -> List[Any]:
    """GetPodServices: the Services of the pod's namespace whose selector matches the pod.
    A Service without a selector matches nothing."""
    out = []
    for svc in cluster.list("Service", pod.namespace):
        sel = svc.spec.get("selector")
        if sel is None:
            continue
        if labelsel.from_set(sel).matches(pod.labels):
            out.append(svc)
    return out


def default_selector(pod, cluster) -> labelsel.Selector:
    """helper.DefaultSelector: the selectors of the Services selecting the pod merged, plus the
    selector of the ReplicationController, ReplicaSet or StatefulSet controlling it."""
    label_set = {}
    if cluster is not None:
        for svc in get_pod_services(cluster, pod):
            label_set.update({k: str(v) for k, v in (svc.spec.get("selector") or {}).items()})
    selector = labelsel.from_set(label_set)
    if cluster is None:
        return selector
    owner = get_controller_of(pod)
    if owner is None:
        return selector
    gv = parse_group_version(owner.get("apiVersion") or "")
    if gv is None:
        return selector
    gvk = (gv[0], gv[1], owner.get("kind") or "")
    name = owner.get("name") or ""
    if gvk == _RC_GVK:
        rc = cluster.get("ReplicationController", pod.namespace, name)
        if rc is not None:
            label_set.update({k: str(v) for k, v in (rc.spec.get("selector") or {}).items()})
            selector = labelsel.from_set(label_set)
    elif gvk in (_RS_GVK, _SS_GVK):
        obj = cluster.get(gvk[2], pod.namespace, name)
        if obj is not None:
            try:
                other = labelsel.from_label_selector(obj.spec.get("selector"))
            except labelsel.SelectorError:
                other = None
            if other is not None and not other.is_nothing():
                selector = labelsel.Selector(
                    sorted(selector.requirements + other.requirements, key=lambda r: r[0]))
    return selector
