"""DynamicResources (framework/plugins/dynamicresources): registered with its extension points so
the default profile loads and runs as v1.34 does for pods without resource claims (PreFilter
Skip, PostFilter "no new claims to deallocate"). Allocating claims is not implemented yet: a pod
with `spec.resourceClaims` gets an Error status saying so, never a silently wrong answer."""

from __future__ import annotations

from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                               NotFoundError, Plugin, Status, hookimpl)

from . import names

STATE_KEY = names.DynamicResources
NOT_IMPLEMENTED = "DynamicResources: not implemented yet (pods with resourceClaims)"


class _StateData:
    def __init__(self, has_claims: bool):
        self.has_claims = has_claims

    def clone(self) -> "_StateData":
        return self


class DynamicResources(Plugin):
    name = names.DynamicResources
    args_kind = "DynamicResourcesArgs"

    @classmethod
    def set_defaults(cls, args):
        # DRASchedulerFilterTimeout is beta and on in v1.34: filterTimeout defaults to 10s.
        args = dict(args or {})
        if args.get("filterTimeout") is None:
            args["filterTimeout"] = "10s"
        return args

    @hookimpl
    def events_to_register(self):
        node_actions = ActionType.Add | ActionType.UpdateNodeLabel | ActionType.UpdateNodeAllocatable
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Node, node_actions)),
            ClusterEventWithHint(ClusterEvent(EventResource.ResourceClaim, ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.UpdatePodGeneratedResourceClaim)),
            ClusterEventWithHint(ClusterEvent(EventResource.DeviceClass, ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(EventResource.ResourceSlice, ActionType.Add | ActionType.Update)),
        ]

    @hookimpl
    def pre_enqueue(self, pod):
        return None

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        claims = pod.spec.get("resourceClaims") or []
        state.write(STATE_KEY, _StateData(bool(claims)))
        if claims:
            return None, Status.error(NOT_IMPLEMENTED)
        return None, Status.skip()

    @hookimpl
    def filter(self, state, pod, node_info):
        return None

    @hookimpl
    def post_filter(self, state, pod, filtered_node_status_map):
        try:
            s = state.read(STATE_KEY)
        except NotFoundError:
            return None, Status.error("not found")
        if not s.has_claims:
            return None, Status.unschedulable("no new claims to deallocate")
        return None, Status.error(NOT_IMPLEMENTED)

    @hookimpl
    def reserve(self, state, pod, node_name):
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        return None

    @hookimpl
    def pre_bind_pre_flight(self, state, pod, node_name):
        return Status.skip()

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        return None


PLUGINS = [DynamicResources]
