"""NodeDeclaredFeatures (framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures.go, new in
v1.35: alpha, off; beta and on, in the default plugins, in v1.36), with the inference of
k8s.io/component-helpers/nodedeclaredfeatures it calls.

A node lists the features it has in ``status.declaredFeatures``; the plugin infers from a pod's
spec the features it needs (``Framework.InferForPodScheduling`` over the library's registry) and
filters out nodes that do not declare all of them. Only some registered features can be inferred
for scheduling (the others matter to pod updates, which the scheduler does not check):

- ``RestartAllContainersOnContainerExits`` (v1.35 on): a container or init container with a
  ``restartPolicyRules`` entry whose action is ``RestartAllContainers``;
- ``UserNamespacesHostNetworkSupport`` (v1.36 on, CHANGES "NodeDeclaredFeaturesHostNetwork"):
  ``hostNetwork: true`` with ``hostUsers: false``.
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, Mapping, Optional

from harness.framework import signers
from harness.framework.status import SKIP
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               NotFoundError, Plugin, QueueingHint, Status, hookimpl)

from . import names
from .helper import features_of

NAME = names.NodeDeclaredFeatures
GATE = "NodeDeclaredFeatures"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
# v1.36's reason; v1.35 names the missing features (ERR_REASON_V135 % "A, B")
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"
ERR_REASON_V135 = "node declared features check failed - unsatisfied requirements: %s"

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"


def _restarts_all_containers(spec: Mapping[str, Any]) -> bool:
    """restartAllContainersFeature.InferForScheduling."""
    for group in ("containers", "initContainers"):
        for c in spec.get(group) or ():
            for rule in (c or {}).get("restartPolicyRules") or ():
                if (rule or {}).get("action") == "RestartAllContainers":
                    return True
    return False


def _user_namespaces_host_network(spec: Mapping[str, Any]) -> bool:
    """userNamespacesHostNetworkFeature.InferForScheduling."""
    return bool(spec.get("hostNetwork")) and spec.get("hostUsers") is False


def infer_for_pod_scheduling(spec: Mapping[str, Any], features) -> FrozenSet[str]:
    """Framework.InferForPodScheduling over the registry of the version's library (no feature
    has a MaxVersion yet)."""
    out = set()
    if _restarts_all_containers(spec):
        out.add(RESTART_ALL_CONTAINERS)
    if features.has("NodeDeclaredFeaturesHostNetwork") and _user_namespaces_host_network(spec):
        out.add(USER_NAMESPACES_HOST_NETWORK)
    return frozenset(out)


class _PreFilterState:
    __slots__ = ("reqs",)

    def __init__(self, reqs: FrozenSet[str]):
        self.reqs = reqs

    def clone(self) -> "_PreFilterState":
        return self


class NodeDeclaredFeatures(Plugin):
    """Filters out nodes that do not declare every feature the pod needs. With the gate off it
    is registered but does nothing (PreFilter Skip, no events), as upstream's New returns."""

    name = NAME

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        fts = features_of(handle)
        if GATE not in fts:
            raise ValueError(f"plugin {NAME} does not exist in kube-scheduler {fts.version} (added in v1.35)")
        super().__init__(args, handle)
        self.features = fts
        self.enabled = fts[GATE]
        self.plain_reason = fts.has("NodeDeclaredFeaturesPlainReason")

    def _requirements(self, pod) -> FrozenSet[str]:
        return pod.memo("nodedeclaredfeatures.reqs:%d" % self.features.version.minor,
                        lambda p: infer_for_pod_scheduling(p.spec, self.features))

    @hookimpl
    def sign_pod(self, pod):
        """SignPod: the features inferred from the pod's spec, sorted (v1.36 writes them as
        FeatureSet.String(): the same set, the same equality)."""
        return [(signers.FEATURES_SIGNER_NAME, sorted(self._requirements(pod)))], None

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        if not self.enabled:
            return None, SKIP
        reqs = self._requirements(pod)
        if not reqs:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(reqs))
        return None, None

    @hookimpl
    def filter(self, state, pod, node_info):
        if not self.enabled:
            return None
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except NotFoundError:
            return Status.error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state: not found')
        declared = set(node_info.node.status.get("declaredFeatures") or ())
        missing = [f for f in sorted(s.reqs) if f not in declared]
        if not missing:
            return None
        if self.plain_reason:
            return Status.unresolvable(ERR_REASON_UNSATISFIED_REQUIREMENTS)
        # v1.35's MatchNodeFeatureSet walks a map: the order of several missing features is
        # random upstream (one feature can be inferred in v1.35, so it never shows)
        return Status.unresolvable(ERR_REASON_V135 % ", ".join(missing))

    @hookimpl
    def events_to_register(self):
        if not self.enabled:
            return []
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeDeclaredFeature),
                                 self.is_schedulable_after_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Update),
                                 self.is_schedulable_after_pod_update),
        ]

    def is_schedulable_after_pod_update(self, pod, old_obj, new_obj):
        """isSchedulableAfterPodUpdate: the pod's own update changing what it needs."""
        if new_obj is None or pod.uid != new_obj.uid:
            return QueueingHint.QueueSkip
        old_reqs = infer_for_pod_scheduling(old_obj.spec, self.features) if old_obj is not None else frozenset()
        if infer_for_pod_scheduling(new_obj.spec, self.features) == old_reqs:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_node_change(self, pod, old_obj, new_obj):
        """isSchedulableAfterNodeChange: a new node, or a change of a node's declared features."""
        if old_obj is not None and list(old_obj.status.get("declaredFeatures") or []) == \
                list(new_obj.status.get("declaredFeatures") or []):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue


PLUGINS = [NodeDeclaredFeatures]
