"""Which cluster events an update of a Node or a Pod is (framework/events.go:
NodeSchedulingPropertiesChange and PodSchedulingPropertiesChange)."""

from __future__ import annotations

from fractions import Fraction
from math import ceil
from typing import Any, Callable, Dict, List, Mapping, Optional

from ..api.objects import Node, Pod
from ..api.pod_resources import pod_requests, status_resources_spec
from ..api.quantity import parse_quantity
from ..framework.types import ActionType, ClusterEvent, EventResource

# ---------------------------------------------------------------------------------------------
# equality.Semantic.DeepEqual for the fields compared here: nil and empty maps/slices are equal,
# quantities compare by value.
# ---------------------------------------------------------------------------------------------


def _quantity(q: Any) -> Any:
    try:
        return parse_quantity(q)
    except Exception:
        return q


def _resource_lists_equal(a: Optional[Mapping], b: Optional[Mapping]) -> bool:
    a, b = a or {}, b or {}
    if a.keys() != b.keys():
        return False
    return all(_quantity(a[k]) == _quantity(b[k]) for k in a)


def _maps_equal(a: Optional[Mapping], b: Optional[Mapping]) -> bool:
    return dict(a or {}) == dict(b or {})


def _taint(t: Mapping) -> tuple:
    return (t.get("key") or "", t.get("value") or "", t.get("effect") or "", t.get("timeAdded"))


def _taints_equal(a: Optional[List[Mapping]], b: Optional[List[Mapping]]) -> bool:
    a, b = a or [], b or []
    return len(a) == len(b) and all(_taint(x) == _taint(y) for x, y in zip(a, b))


# ---------------------------------------------------------------------------------------------
# Nodes
# ---------------------------------------------------------------------------------------------
def _node_spec_unschedulable_change(new: Node, old: Node) -> ActionType:
    """Only a node becoming schedulable is an event (UpdateNodeTaint)."""
    if new.unschedulable != old.unschedulable and not new.unschedulable:
        return ActionType.UpdateNodeTaint
    return ActionType.NONE


def _node_allocatable_change(new: Node, old: Node) -> ActionType:
    if not _resource_lists_equal(old.status.get("allocatable"), new.status.get("allocatable")):
        return ActionType.UpdateNodeAllocatable
    return ActionType.NONE


def _node_labels_change(new: Node, old: Node) -> ActionType:
    if not _maps_equal(new.labels, old.labels):
        return ActionType.UpdateNodeLabel
    return ActionType.NONE


def _node_taints_change(new: Node, old: Node) -> ActionType:
    if not _taints_equal(new.spec.get("taints"), old.spec.get("taints")):
        return ActionType.UpdateNodeTaint
    return ActionType.NONE


def _condition_statuses(conditions: Optional[List[Mapping]]) -> Dict[str, Any]:
    return {c.get("type", ""): c.get("status", "") for c in conditions or []}


def _node_conditions_change(new: Node, old: Node) -> ActionType:
    """Only the type -> status of the conditions counts (not heartbeat times or messages)."""
    if _condition_statuses(old.status.get("conditions")) != _condition_statuses(new.status.get("conditions")):
        return ActionType.UpdateNodeCondition
    return ActionType.NONE


def _node_annotations_change(new: Node, old: Node) -> ActionType:
    if not _maps_equal(old.annotations, new.annotations):
        return ActionType.UpdateNodeAnnotation
    return ActionType.NONE


_NODE_CHANGE_EXTRACTORS: List[Callable[[Node, Node], ActionType]] = [
    _node_spec_unschedulable_change,
    _node_allocatable_change,
    _node_labels_change,
    _node_taints_change,
    _node_conditions_change,
    _node_annotations_change,
]


def _node_features_change(new: Node, old: Node) -> ActionType:
    """extractNodeFeaturesChange (v1.35 on, with NodeDeclaredFeatures): status.declaredFeatures
    (kept sorted by the kubelet) compared as lists."""
    if list(old.status.get("declaredFeatures") or []) != list(new.status.get("declaredFeatures") or []):
        return ActionType.UpdateNodeDeclaredFeature
    return ActionType.NONE


def node_scheduling_properties_change(new: Node, old: Node, features=None) -> List[ClusterEvent]:
    """NodeSchedulingPropertiesChange: one Node event per kind of change, in upstream's order
    (unschedulable, allocatable, labels, taints, conditions, annotations, then declared features
    when the NodeDeclaredFeatures gate is on); none when nothing the scheduler reads changed."""
    extractors = _NODE_CHANGE_EXTRACTORS
    if features is not None and features.get("NodeDeclaredFeatures", False):
        extractors = extractors + [_node_features_change]
    events = []
    for fn in extractors:
        action = fn(new, old)
        if action:
            events.append(ClusterEvent(EventResource.Node, action))
    return events


# ---------------------------------------------------------------------------------------------
# Pods
# ---------------------------------------------------------------------------------------------
def _milli(q: Fraction) -> int:
    return int(ceil(q * 1000))


def _pod_requests_with_status(pod: Pod, pod_level_resize: bool) -> Dict[str, Fraction]:
    """resource.PodRequests with UseStatusResources (InPlacePodVerticalScaling, on in every
    modelled version) and InPlacePodLevelResourcesVerticalScalingEnabled (`pod_level_resize`)."""
    return pod_requests(status_resources_spec(pod, pod_level_resize))


def _pod_labels_change(new: Pod, old: Pod) -> ActionType:
    if not _maps_equal(new.labels, old.labels):
        return ActionType.UpdatePodLabel
    return ActionType.NONE


def _pod_scale_down(new: Pod, old: Pod, features=None) -> ActionType:
    """extractPodScaleDown: a resource request removed or lowered (compared as MilliValue); the
    pod-level requests of a resized pod as InPlacePodLevelResourcesVerticalScaling says."""
    pod_level = features is None or features.get("InPlacePodLevelResourcesVerticalScaling", False)
    new_reqs = _pod_requests_with_status(new, pod_level)
    for name, old_req in _pod_requests_with_status(old, pod_level).items():
        new_req = new_reqs.get(name)
        if new_req is None:
            return ActionType.UpdatePodScaleDown
        if _milli(old_req) > _milli(new_req):
            return ActionType.UpdatePodScaleDown
    return ActionType.NONE


def _pod_scheduling_gates_eliminated(new: Pod, old: Pod) -> ActionType:
    if not new.spec.get("schedulingGates") and old.spec.get("schedulingGates"):
        return ActionType.UpdatePodSchedulingGatesEliminated
    return ActionType.NONE


def _pod_toleration_change(new: Pod, old: Pod) -> ActionType:
    """Tolerations can only be added, so a different count is the change."""
    if len(new.tolerations) != len(old.tolerations):
        return ActionType.UpdatePodToleration
    return ActionType.NONE


def _claim_statuses_equal(a: Optional[List[Mapping]], b: Optional[List[Mapping]]) -> bool:
    """resourceclaim.PodStatusEqual: same length, same name and resourceClaimName in order."""
    a, b = a or [], b or []
    if len(a) != len(b):
        return False
    return all(x.get("name") == y.get("name") and x.get("resourceClaimName") == y.get("resourceClaimName")
               for x, y in zip(a, b))


def _mapping(m: Mapping) -> tuple:
    return (m.get("containerName") or "", m.get("resourceName") or "", m.get("requestName") or "")


def _extended_claim_status_equal(a: Optional[Mapping], b: Optional[Mapping]) -> bool:
    """resourceclaim.PodExtendedStatusEqual."""
    if a is None and b is None:
        return True
    if (a is None) != (b is None):
        return False
    if (a.get("resourceClaimName") or "") != (b.get("resourceClaimName") or ""):
        return False
    ma, mb = a.get("requestMappings") or [], b.get("requestMappings") or []
    return len(ma) == len(mb) and all(_mapping(x) == _mapping(y) for x, y in zip(ma, mb))


def _pod_generated_resource_claim_change(new: Pod, old: Pod) -> ActionType:
    """DynamicResourceAllocation is on in v1.34."""
    if (not _claim_statuses_equal(new.status.get("resourceClaimStatuses"),
                                  old.status.get("resourceClaimStatuses"))
            or not _extended_claim_status_equal(new.status.get("extendedResourceClaimStatus"),
                                                old.status.get("extendedResourceClaimStatus"))):
        return ActionType.UpdatePodGeneratedResourceClaim
    return ActionType.NONE


_POD_CHANGE_EXTRACTORS: List[Callable[..., ActionType]] = [
    _pod_labels_change,
    _pod_scale_down,
    _pod_scheduling_gates_eliminated,
    _pod_toleration_change,
    _pod_generated_resource_claim_change,
]


def pod_scheduling_properties_change(new: Pod, old: Pod, features=None) -> List[ClusterEvent]:
    """PodSchedulingPropertiesChange: AssignedPod or UnscheduledPod events (by the new pod's
    nodeName), one per kind of change in upstream's order (labels, scale-down, scheduling gates
    eliminated, tolerations, generated resource claims); a general Update when none applies."""
    resource = EventResource.AssignedPod if new.node_name else EventResource.UnscheduledPod
    events = []
    for fn in _POD_CHANGE_EXTRACTORS:
        action = fn(new, old, features) if fn is _pod_scale_down else fn(new, old)
        if action:
            events.append(ClusterEvent(resource, action))
    if not events:
        events.append(ClusterEvent(resource, ActionType.Update))
    return events
