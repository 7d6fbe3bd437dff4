"""The plugin API: one pluggy hookspec per kube-scheduler extension point (v1.34's, plus v1.35's
SignPod; PreBindPreFlight runs from v1.35, or with its gate). A plugin written for v1.34 runs
unchanged on every version: the newer hooks are optional.

This module is the whole contract between schedharness and a scheduler plugin, the way
`framework/interface.go` is for kube-scheduler. A plugin is a class with a `name` and methods
marked with `@hookimpl`, named after the extension points below; the framework calls them in the
order, and with the weights, that the KubeSchedulerConfiguration gives. Plugins never call each
other. A hook may take any subset of its parameters (pluggy matches them by name).

Return conventions mirror Go's: `None` stands for a Success status; where Go returns two values,
the hook returns a tuple. A plugin that raises is reported as an Error status naming the plugin.

Plugins are discovered through the `schedharness.plugins` entry point group: each entry point is a
module (or object) implementing :func:`RegistrySpecs.schedharness_plugins`. The in-tree plugins in
`builtin_plugins/` are registered the same way.

Status codes (``harness.framework.Code``): Success, Error, Unschedulable,
UnschedulableAndUnresolvable, Wait, Skip, Pending.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import pluggy

PROJECT = "schedharness"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

__all__ = [
    "hookspec", "hookimpl", "RegistrySpecs", "ExtensionPointSpecs", "EXTENSION_POINTS",
]


class RegistrySpecs:
    """Hooks of the plugin registry (`framework/plugins/registry.go`)."""

    @hookspec
    def schedharness_plugins(self) -> List[type]:
        """Return the plugin classes this module provides.

        Each class has a class attribute `name` (the name used in a KubeSchedulerConfiguration)
        and is constructed as ``cls(args, handle)`` (upstream's PluginFactory), where `args` is the
        plugin's defaulted arguments (a dict, or None when the plugin takes none) and `handle` is
        the profile's framework (``harness.framework.runtime.Framework``). Optional class
        attributes and classmethods:

        - ``args_kind``: the args kind, e.g. ``"NodeResourcesFitArgs"``.
        - ``set_defaults(args: dict) -> dict``: v1 defaulting of the args a user gave.
        - ``validate_args(args: dict) -> list[tuple[str, str]]``: (field path, message) errors.
        """

    @hookspec
    def schedharness_custom_resources(self) -> List[Any]:
        """Return the custom resources (``harness.framework.CustomResource(group, version, kind,
        namespaced, plural="")``) this module's plugins read: the kinds of its CRDs.

        Objects of these kinds in a case's `cluster` and steps go through the simulated API
        server (a namespaced kind's namespace defaults to "default"; an object at another
        apiVersion is refused), plugins read them with ``handle.cluster`` or
        ``handle.dynamic_lister(kind)``, and their Add / Update / Delete reach the scheduling
        queue as the GVK event ``<plural>.<version>.<group>`` when some plugin registers it in
        ``events_to_register`` (as kube-scheduler's dynamic informers deliver them).
        """


class ExtensionPointSpecs:
    """The extension points, in the order a pod goes through them."""

    # ---- queueing ---------------------------------------------------------------------------
    @hookspec
    def pre_enqueue(self, pod) -> Optional[Any]:
        """PreEnqueue: called before a pod enters activeQ. A non-Success status keeps it out
        (gated, in the unschedulable pool) until an event this plugin registered for arrives."""

    @hookspec
    def less(self, pod_info1, pod_info2) -> bool:
        """QueueSort: True when pod_info1 (a QueuedPodInfo) goes before pod_info2 in activeQ.
        Exactly one QueueSort plugin is enabled, and all profiles must use the same one."""

    @hookspec
    def events_to_register(self) -> List[Any]:
        """EnqueueExtensions: the ClusterEventWithHint list that may make a pod this plugin
        rejected schedulable. A hint fn ``(pod, old_obj, new_obj) -> QueueingHint`` decides
        Queue or QueueSkip for one event. Plugins that do not implement it are requeued on
        every event."""

    # ---- scheduling cycle -------------------------------------------------------------------
    @hookspec
    def pre_filter(self, state, pod, nodes) -> Tuple[Optional[Any], Optional[Any]]:
        """PreFilter: returns (PreFilterResult or None, Status or None). Unschedulable rejects the
        pod for all nodes; Skip disables this plugin's Filter (and AddPod/RemovePod) for the cycle.
        `nodes` is the list of NodeInfo of the snapshot."""

    @hookspec
    def add_pod(self, state, pod_to_schedule, pod_info_to_add, node_info) -> Optional[Any]:
        """PreFilterExtensions.AddPod: update the PreFilter state as if pod_info_to_add ran on
        node_info (used for nominated pods and preemption)."""

    @hookspec
    def remove_pod(self, state, pod_to_schedule, pod_info_to_remove, node_info) -> Optional[Any]:
        """PreFilterExtensions.RemovePod: update the PreFilter state as if pod_info_to_remove were
        gone from node_info (used by preemption)."""

    @hookspec
    def filter(self, state, pod, node_info) -> Optional[Any]:
        """Filter: can the pod run on this node? Unschedulable / UnschedulableAndUnresolvable with
        reasons (they make the FitError message) reject the node; Error aborts the cycle."""

    @hookspec
    def post_filter(self, state, pod, filtered_node_status_map) -> Tuple[Optional[Any], Any]:
        """PostFilter: runs when no node fits; returns (PostFilterResult or None, Status). Success
        (e.g. preemption nominated a node) stops the remaining PostFilter plugins; the messages of
        the rejecting ones are joined into the FitError's tail."""

    @hookspec
    def pre_score(self, state, pod, nodes) -> Optional[Any]:
        """PreScore: prepare scoring over the feasible nodes; Skip disables this plugin's Score."""

    @hookspec
    def score(self, state, pod, node_info) -> Tuple[int, Optional[Any]]:
        """Score: returns (score, Status). After NormalizeScore every score must be in
        [0, 100] (MaxNodeScore); the framework then multiplies it by the plugin's weight."""

    @hookspec
    def normalize_score(self, state, pod, scores) -> Optional[Any]:
        """ScoreExtensions.NormalizeScore: rewrite `scores` (a list of NodeScore) in place."""

    @hookspec
    def reserve(self, state, pod, node_name) -> Optional[Any]:
        """Reserve: claim resources for the assumed pod; a failure unreserves all plugins."""

    @hookspec
    def unreserve(self, state, pod, node_name) -> None:
        """Unreserve: undo Reserve; called in reverse order, must be idempotent."""

    @hookspec
    def permit(self, state, pod, node_name) -> Tuple[Optional[Any], float]:
        """Permit: returns (Status, timeout seconds). Wait holds the pod before binding until
        allowed, rejected or timed out (virtual time)."""

    @hookspec
    def sign_pod(self, pod) -> Tuple[List[Any], Optional[Any]]:
        """SignPlugin.SignPod (v1.35 on, OpportunisticBatching): returns (fragments, Status).
        Each fragment is a ``(key, value)`` pair (or an object with ``key`` and ``value``) of the
        pod's fields this plugin's PreFilter/Filter/PreScore/Score read; two pods with equal
        fragments from every plugin must get the same feasibility and scores on the same nodes.
        Unschedulable: the pod cannot be signed (no batching for it). Optional: when a
        PreFilter, Filter, PreScore or Score plugin of a profile does not implement it, that
        profile schedules every pod without batching, as upstream does. The framework signs a
        pod once per spec (v1.36 signs it as it enters the queue), so read only the pod's
        spec and metadata, never its status or the cluster; values must be JSON-able (others
        are compared by repr). harness.framework.signers has the in-tree plugins' keys and
        signers."""

    # ---- pod group cycle (v1.36, TopologyAwareWorkloadScheduling) ---------------------------
    @hookspec
    def generate_placements(self, state, pod_group, parent_placement) -> Tuple[List[Any], Optional[Any]]:
        """PlacementGenerate (v1.36): split `parent_placement` (a ``harness.framework.Placement``
        with ``name`` and ``nodes``, the NodeInfos it allows) into the placements the pod group
        (``harness.framework.PodGroupInfo``: ``namespace``, ``name``, ``pods``) may be tried in;
        returns (placements, Status). The pod group cycle runs its algorithm once per
        placement, the snapshot restricted to that placement's nodes. Only the first enabled
        PlacementGenerate plugin runs (RunPlacementGeneratePlugins); an empty list is
        Unschedulable "no feasible placements found". Called with TopologyAwareWorkloadScheduling
        on, for pods with ``spec.schedulingGroup``."""

    @hookspec
    def score_placement(self, state, pod_group, placement) -> Tuple[int, Optional[Any]]:
        """PlacementScore (v1.36): score one feasible placement (a
        ``harness.framework.PodGroupAssignments``: ``placement`` and ``proposed_assignments``,
        the (pod, node name) pairs the algorithm found in it); returns (score, Status). After
        NormalizePlacementScore every score must be in [0, 100]; the framework weighs it with
        the plugin's weight and the highest total wins (ties at random)."""

    @hookspec
    def normalize_placement_score(self, state, pod_group, scores) -> Optional[Any]:
        """PlacementScoreExtensions.NormalizePlacementScore: rewrite `scores` (a list of
        ``harness.framework.PlacementScore``: ``placement`` and ``score``) in place."""

    # ---- binding cycle ----------------------------------------------------------------------
    @hookspec
    def pre_bind_pre_flight(self, state, pod, node_name) -> Optional[Any]:
        """PreBindPreFlight: Success means PreBind will do work; Skip means it will not (and
        this plugin's PreBind is skipped). The binding cycle calls it first, with the
        NominatedNodeNameForExpectation feature gate (beta, on from v1.35; alpha, off in v1.34):
        when any plugin returns Success (or the pod waits at Permit) the pod's
        status.nominatedNodeName is set to the node before PreBind. Without the gate it is not
        called and every PreBind runs. A PreBind plugin that does not implement it counts as
        Success. It may return ``(PreBindPreFlightResult(allow_parallel=True), status)``
        (v1.36's PreBindPreFlightResult): from v1.36 consecutive PreBind plugins that allow it
        run side by side (their waits overlap in virtual time; the first failure cancels the
        others); earlier versions ignore it."""

    @hookspec
    def pre_bind(self, state, pod, node_name) -> Optional[Any]:
        """PreBind: work before binding (e.g. volume binding); a failure unreserves the pod.
        May return a task (framework/blocking.py) that waits in virtual time. When the binding
        cycle's context is cancelled while it waits (v1.36: preemption cancels a victim in
        PreBind; another plugin of its parallel group failed), ``PreBindCanceled`` is thrown at
        its ``yield``: not catching it fails the plugin with ``running PreBind plugin "X":
        <cause>``."""

    @hookspec
    def bind(self, state, pod, node_name) -> Optional[Any]:
        """Bind: bind the pod; Skip hands over to the next Bind plugin."""

    @hookspec
    def post_bind(self, state, pod, node_name) -> None:
        """PostBind: informational, after a successful bind."""


# Extension point name (as in the configuration's `plugins` keys) -> hook names it covers.
EXTENSION_POINTS: Dict[str, Sequence[str]] = {
    "preEnqueue": ("pre_enqueue",),
    "queueSort": ("less",),
    "preFilter": ("pre_filter",),
    "filter": ("filter",),
    "postFilter": ("post_filter",),
    "preScore": ("pre_score",),
    "score": ("score",),
    "reserve": ("reserve", "unreserve"),
    "permit": ("permit",),
    "preBind": ("pre_bind",),
    "bind": ("bind",),
    "postBind": ("post_bind",),
    "placementGenerate": ("generate_placements",),  # v1.36
    "placementScore": ("score_placement", "normalize_placement_score"),  # v1.36
}
