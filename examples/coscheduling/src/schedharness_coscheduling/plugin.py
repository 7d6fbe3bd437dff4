"""Coscheduling (gang scheduling), after scheduler-plugins' pkg/coscheduling/coscheduling.go (v0.34).

Pods that carry the label `scheduling.x-k8s.io/pod-group: <name>` belong to the PodGroup
`<name>` of their namespace (a `scheduling.x-k8s.io/v1alpha1` PodGroup in the case's `cluster`,
with `spec.minMember` and optionally `spec.scheduleTimeoutSeconds` and `spec.minResources`).
Written only against schedharness' public plugin API (`harness.framework`).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Dict, List, Tuple

from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, Code, EventResource,
                               Plugin, PostFilterResult, Status, hookimpl)

from . import core

NAME = "Coscheduling"
# the custom resource's GVK as upstream names it for EventsToRegister
POD_GROUP_GVK = "podgroups.v1alpha1.scheduling.x-k8s.io"

_DEFAULTS = {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 0,
             "podGroupRejectPercentage": 10}
_SCHEMA = None


def args_schema() -> Dict[str, Any]:
    """The JSON Schema of CoschedulingArgs shipped with the plugin (args.schema.json)."""
    global _SCHEMA
    if _SCHEMA is None:
        text = resources.files(__package__).joinpath("args.schema.json").read_text()
        _SCHEMA = json.loads(text)
    return _SCHEMA


def _json_path(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else ("." if out else "") + str(p)
    return out


class Coscheduling(Plugin):
    """QueueSort, PreFilter, PostFilter, Reserve/Unreserve, Permit and EnqueueExtensions."""

    name = NAME
    args_kind = "CoschedulingArgs"

    @classmethod
    def set_defaults(cls, args: Dict[str, Any]) -> Dict[str, Any]:
        """SetDefaults_CoschedulingArgs."""
        out = dict(args)
        for k, v in _DEFAULTS.items():
            if out.get(k) is None:
                out[k] = v
        return out

    @classmethod
    def validate_args(cls, args: Dict[str, Any]) -> List[Tuple[str, str]]:
        """The shipped JSON Schema (types, ranges, unknown keys), worded as field errors: the
        framework prefixes them with `initializing plugin "Coscheduling"` and the args' path."""
        import jsonschema

        validator = jsonschema.Draft7Validator(args_schema())
        errors = []
        for e in sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path)):
            path = _json_path(e.absolute_path)
            if e.validator == "additionalProperties":
                for k in sorted(set(e.instance) - set(e.schema.get("properties") or {})):
                    errors.append((k, f'unknown field "{k}"'))
                continue
            detail = e.schema.get("description") if e.validator in ("minimum", "maximum") else None
            errors.append((path, f"Invalid value: {json.dumps(e.instance)}: {detail or e.message}"))
        return errors

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        a = self.set_defaults(args or {})
        self.schedule_timeout = float(a["permitWaitingTimeSeconds"])
        backoff = int(a["podGroupBackoffSeconds"])
        self.pg_backoff = float(backoff) if backoff > 0 else None
        self.pg_reject_threshold = float(a["podGroupRejectPercentage"]) / 100.0
        self.mgr = core.PodGroupManager(handle, self.schedule_timeout)

    # -- EnqueueExtensions ---------------------------------------------------------------------
    @hookimpl
    def events_to_register(self):
        """Pod Add (a sibling arrives) and PodGroup Add|Update, without hints."""
        return [ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Add)),
                ClusterEventWithHint(ClusterEvent(POD_GROUP_GVK, ActionType.Add | ActionType.Update))]

    # -- QueueSort -----------------------------------------------------------------------------
    @hookimpl
    def less(self, pod_info1, pod_info2) -> bool:
        """Less: higher priority first; then the earlier of the groups' creation (or last
        failure) times, a pod without a group using its initial attempt time; then
        `namespace/name` of the pods."""
        p1, p2 = pod_info1.pod, pod_info2.pod
        if p1.priority != p2.priority:
            return p1.priority > p2.priority
        t1 = self.mgr.get_creation_timestamp(p1, _initial_attempt(pod_info1))
        t2 = self.mgr.get_creation_timestamp(p2, _initial_attempt(pod_info2))
        if t1 == t2:
            return f"{p1.namespace}/{p1.name}" < f"{p2.namespace}/{p2.name}"
        return t1 < t2

    # -- PreFilter -----------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state, pod, nodes):
        """PreFilter: UnschedulableAndUnresolvable (no preemption) while the group backs off,
        has fewer than minMember pods (or too many gated ones), or misses minResources."""
        err = self.mgr.pre_filter(pod, nodes)
        if err:
            return None, Status(Code.UnschedulableAndUnresolvable, err)
        return None, None

    # -- PostFilter ----------------------------------------------------------------------------
    @hookimpl
    def post_filter(self, state, pod, filtered_node_status_map):
        """PostFilter: unless the group already has minMember pods assigned, or the missing
        share is within podGroupRejectPercentage, reject the group's waiting pods."""
        noop = PostFilterResult(nominating_mode="ModeNoop")
        pg_name, pg = self.mgr.get_pod_group(pod)
        if pg is None:
            return noop, Status(Code.Unschedulable, "can not find pod group")
        assigned = self.mgr.get_assigned_pod_count(pg_name)
        members = core.min_member(pg)
        if assigned >= members:
            return noop, Status(Code.Unschedulable)
        if (members - assigned) / members <= self.pg_reject_threshold:
            return noop, Status(Code.Unschedulable)
        group = core.pod_group_label(pod)
        self.handle.iterate_over_waiting_pods(
            lambda wp: wp.reject(self.name, "optimistic rejection in PostFilter")
            if wp.pod.namespace == pod.namespace and core.pod_group_label(wp.pod) == pg.name else None)
        if self.pg_backoff is not None:
            if len(self.mgr.group_pods(pod.namespace, group)) >= members:
                self.mgr.backoff_pod_group(pg_name, self.pg_backoff)
        self.mgr.delete_permitted_pod_group(pg_name)
        self.mgr.mark_pod_group_schedule_failure(pg_name)
        return noop, Status(Code.Unschedulable,
                            f"PodGroup {pg_name} gets rejected due to Pod {pod.name} is "
                            f"unschedulable even after PostFilter")

    # -- Reserve -------------------------------------------------------------------------------
    @hookimpl
    def reserve(self, state, pod, node_name):
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        """Unreserve: the pod leaves its group's assigned set and every waiting pod of the group
        is rejected (one member's timeout or failure fails the gang)."""
        pg_name, pg = self.mgr.get_pod_group(pod)
        if pg is None:
            return
        self.mgr.unreserve(pod)
        self.handle.iterate_over_waiting_pods(
            lambda wp: wp.reject(self.name, "rejection in Unreserve")
            if wp.pod.namespace == pod.namespace and core.pod_group_label(wp.pod) == pg.name else None)
        self.mgr.delete_permitted_pod_group(pg_name)
        self.mgr.mark_pod_group_schedule_failure(pg_name)

    # -- Permit --------------------------------------------------------------------------------
    @hookimpl
    def permit(self, state, pod, node_name):
        """Permit: Wait (the group's scheduleTimeoutSeconds, else permitWaitingTimeSeconds)
        until minMember pods of the group are assumed; the pod that completes the group
        allows every waiting sibling."""
        s = self.mgr.permit(state, pod)
        if s == core.POD_GROUP_NOT_SPECIFIED:
            return None, 0
        if s == core.POD_GROUP_NOT_FOUND:
            return Status(Code.Unschedulable, "PodGroup not found"), 0
        if s == core.WAIT:
            _, pg = self.mgr.get_pod_group(pod)
            siblings = self.mgr.activate_siblings(pod, state)
            if siblings:
                self.handle.activate(siblings)
            wait = core.wait_time(pg, self.schedule_timeout)
            # `if wait := GetWaitTimeDuration(...); wait != 0 { waitTime = wait }`
            return Status(Code.Wait), wait if wait != 0 else self.schedule_timeout
        full = core.pod_group_full_name(pod)
        self.mgr.clear_pod_group_schedule_failure(full)
        self.handle.iterate_over_waiting_pods(
            lambda wp: wp.allow(self.name) if core.pod_group_full_name(wp.pod) == full else None)
        return None, 0


def _initial_attempt(pinfo) -> float:
    ts = getattr(pinfo, "initial_attempt_timestamp", None)
    return ts if ts is not None else pinfo.timestamp


PLUGINS = [Coscheduling]
