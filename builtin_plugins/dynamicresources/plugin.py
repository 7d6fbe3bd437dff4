"""DynamicResources (framework/plugins/dynamicresources/dynamicresources.go): device allocation
with structured parameters, as each modelled kube-scheduler version has it.

The plugin reads the run's feature gates through ``handle.feature_gates``: DRAPrioritizedList,
DRAAdminAccess, DRAResourceClaimDeviceStatus and DRASchedulerFilterTimeout (on in every modelled
version), DRADeviceTaints, DRAPartitionableDevices, DRADeviceBindingConditions,
DRAConsumableCapacity and DRAExtendedResource (on by default from v1.36). From v1.35 it is also
a Score plugin (scoring the prioritized-list choices) and takes ``bindingTimeout``.
It mirrors one upstream file (dynamicresources.go, about 1900 lines); the claim bookkeeping,
the fast Filter and the pod group claims are modules beside it.
filterTimeout is validated and defaulted as upstream but never fires: the harness has no wall
clock inside a Filter call.
"""

from __future__ import annotations

import copy
import random
from typing import Any, Dict, List, Optional, Tuple

from harness.api.nodeaffinity import NodeSelector, NodeSelectorError
from harness.apierrors import API_ERRORS
from harness.api.objects import KubeObject
from harness.framework.status import SKIP
from harness.framework import (PreBindPreFlightResult, ActionType, ClusterEvent, ClusterEventWithHint, Code, EventResource,
                               NotFoundError, Plugin, QueueingHint, Status, hookimpl)
from harness.framework.node_table import NodeRows, numpy

from .. import names
from harness.versions import DEFAULT as DEFAULT_GATES

from .. import helper
from .allocator import (AllocationError, Allocator, FailedOnNode, Features, explain_failure, index_slices,
                        kobj)
from . import batch_filter, extended
from harness.api.dra_cel import CELCache
from .consumable import new_share_id
from .fastpath import Deferred, FastFilter
from .claims import (FINALIZER, ClaimError, allocation_of, bind_to, claim_name, is_for_pod,
                     is_reserved_for_pod, pod_ref, tracker_for)
from . import podgroup_claims
from .claims import copy_with as _copy_with

STATE_KEY = names.DynamicResources
DEFAULT_FILTER_TIMEOUT = "10s"  # DynamicResourcesFilterTimeoutDefault
DEFAULT_BINDING_TIMEOUT = "10m0s"  # DynamicResourcesBindingTimeoutDefault (600 s), v1.35 on
FIRST_AVAILABLE_MAX_SIZE = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize
MAX_NODE_SCORE = 100
DEFAULT_BINDING_TIMEOUT_SECONDS = 600.0  # BindingTimeoutDefaultSeconds (v1.34) = the v1.35 default
BINDING_POLL_SECONDS = 5.0  # PreBind polls the binding conditions every 5 s


def status_unschedulable(reason: str) -> Status:
    """statusUnschedulable: UnschedulableAndUnresolvable."""
    return Status.unresolvable(reason)


def status_error(err) -> Status:
    """statusError: AsStatus(err)."""
    return Status.error(err if isinstance(err, BaseException) else RuntimeError(str(err)))


class _DetailedStatus(Status):
    """A Status with `detail`, a callable giving lines that `schedharness explain` prints under
    it (computed only when asked for; never part of the message, which is upstream's)."""

    __slots__ = ("detail",)


class _ClaimInfo:
    """informationForClaim."""

    __slots__ = ("available_on_nodes", "allocation")

    def __init__(self):
        self.available_on_nodes: Optional[NodeSelector] = None
        self.allocation: Optional[Dict[str, Any]] = None


class StateData:
    """stateData; Clone returns itself, as upstream."""

    def __init__(self):
        self.claims: List[KubeObject] = []
        self.allocator: Optional[Allocator] = None
        self.unavailable_claims: set = set()
        self.informations_for_claim: List[_ClaimInfo] = []
        self.node_allocations: Dict[str, Any] = {}  # node -> the allocator's successful run
        self.raw_to_allocate: List[Dict[str, Any]] = []
        self.fast: Optional[FastFilter] = None
        # the claims Filter checks per node before allocating: those allocated already
        self.checked_claims: List[int] = []
        # some claim has a firstAvailable request: only then can computeScore be non-zero
        self.scores_first_available = False
        # claimStore.numUserOwned: the claims after it are the special claim for extended
        # resources backed by DRA (DRAExtendedResource), with its state in `ext`
        self.num_user_owned = 0
        self.ext: Optional[extended.ExtendedState] = None
        self.ext_to_allocate_index: Optional[int] = None  # its index in raw_to_allocate
        # claimStore.bindTo (DRAWorkloadResourceClaims): per pod claim, the pod or its PodGroup
        self.bind_to: List[Dict[str, Any]] = []
        # the claims whose pending allocation (a pod of this pod group cycle reserved it) is
        # reused: their indexes into raw_to_allocate's claims are left out of the allocator
        self.pending_indexes: List[int] = []

    def get_binding(self, index: int, pod) -> Dict[str, Any]:
        """claimStore.getBinding: the pod, or what podResourceClaimBindings found."""
        return self.bind_to[index] if index < len(self.bind_to) else pod_ref(pod)

    def clone(self) -> "StateData":
        return self

    def extended_claim(self) -> Optional[KubeObject]:
        """claimStore.extendedResourceClaim."""
        return self.claims[self.num_user_owned] if len(self.claims) > self.num_user_owned else None

    def no_user_claim(self) -> bool:
        return self.num_user_owned == 0

    def to_allocate(self):
        """claimStore.toAllocate: (index, claim) of the claims without an allocation."""
        return [(i, c) for i, c in enumerate(self.claims) if allocation_of(c) is None]


class DynamicResources(Plugin):
    name = names.DynamicResources
    args_kind = "DynamicResourcesArgs"

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.gates = getattr(handle, "feature_gates", None) or DEFAULT_GATES
        self.features = Features.from_gates(self.gates)
        self.enable_prioritized_list = self.features.prioritized_list
        # which structured allocator NewAllocator picks with these gates (for explain/docs: the
        # port follows the picked implementation where they differ)
        self.allocator_implementation = self.features.implementation(self.gates.version.minor)
        from harness.api.duration import parse_duration_ns as parse_duration
        timeout = (args or {}).get("bindingTimeout")
        # v1.34: BindingTimeoutDefaultSeconds (600); v1.35 on: the bindingTimeout argument
        self.binding_timeout = (parse_duration(timeout) / 1e9 if isinstance(timeout, str) else
                                DEFAULT_BINDING_TIMEOUT_SECONDS)
        if not self.gates.has("DynamicResourcesScore"):
            # v1.34: not a Score plugin (an instance attribute hides the hookimpls)
            self.score = None
            self.normalize_score = None
        self.cel_cache = CELCache()
        self.workload_claims = self.gates.get("DRAWorkloadResourceClaims", False)
        if extended.enabled(self.gates) and getattr(handle, "cluster", None) is not None:
            extended.class_resolver(handle.cluster, self.gates)  # the DRA manager's, from the start
        self._match_cache: Dict[Any, Any] = {}
        self._pool_cache: Dict[Any, Any] = {}
        # the ResourceSlices as last listed (at cluster.kind_version _slices_version), indexed
        self._slices: List[KubeObject] = []
        self._slice_index: Any = None
        self._slices_version: Any = None
        self._slices_signature: Any = None
        self._fast_cache: Dict[Any, Any] = {}  # fastpath.FastFilter's, emptied with _pool_cache
        self._cel_outcomes: Dict[Any, Any] = {}  # fastpath.FastFilter's, by device content

    @classmethod
    def set_defaults(cls, args, features=None):
        """SetDefaults_DynamicResourcesArgs: filterTimeout (DRASchedulerFilterTimeout); from
        v1.35 bindingTimeout (DRADeviceBindingConditions and DRAResourceClaimDeviceStatus)."""
        features = features or DEFAULT_GATES
        args = dict(args or {})
        if args.get("filterTimeout") is None and features.enabled("DRASchedulerFilterTimeout"):
            args["filterTimeout"] = DEFAULT_FILTER_TIMEOUT
        if (features.has("DynamicResourcesBindingTimeout") and args.get("bindingTimeout") is None
                and features.enabled("DRADeviceBindingConditions")
                and features.enabled("DRAResourceClaimDeviceStatus")):
            args["bindingTimeout"] = DEFAULT_BINDING_TIMEOUT
        return args

    @classmethod
    def validate_args(cls, args, features=None):
        """ValidateDynamicResourcesArgs: the bad value is the metav1.Duration as field.Invalid
        prints it (JSON, i.e. Duration.String())."""
        from harness.api.duration import format_duration, parse_duration_ns as parse_duration
        features = features or DEFAULT_GATES
        args = args or {}
        errs = []

        def duration(key):
            v = args.get(key)
            try:
                return (parse_duration(v) if isinstance(v, str) else int(v)), None
            except ValueError as e:
                return None, (key, str(e))
        if args.get("filterTimeout") is not None:
            if not features.enabled("DRASchedulerFilterTimeout"):
                errs.append(("filterTimeout", "Forbidden: DRASchedulingFilterTimeout feature gate is disabled"))
            else:
                ns, err = duration("filterTimeout")
                if err is not None:
                    errs.append(err)
                elif ns < 0:
                    errs.append(("filterTimeout", f'Invalid value: "{format_duration(ns)}": must be zero or positive'))
        if features.has("DynamicResourcesBindingTimeout") and args.get("bindingTimeout") is not None:
            if not (features.enabled("DRADeviceBindingConditions")
                    and features.enabled("DRAResourceClaimDeviceStatus")):
                errs.append(("bindingTimeout", "Forbidden: DRADeviceBindingConditions or "
                                               "DRAResourceClaimDeviceStatus feature gate is disabled"))
            else:
                ns, err = duration("bindingTimeout")
                if err is not None:
                    errs.append(err)
                elif ns < 1_000_000_000:
                    errs.append(("bindingTimeout", f'Invalid value: "{format_duration(ns)}": must be at least 1 second'))
        return errs

    # ---- the DRA manager ------------------------------------------------------------------------
    @property
    def cluster(self):
        return self.handle.cluster

    def claim_tracker(self):
        """The scheduler's DRA manager (claims, allocated devices, in-flight allocations).
        A method, not a property: pluggy reads every attribute when registering a plugin."""
        return tracker_for(self.cluster, getattr(self.handle, "snapshot", None))

    def get_pod_group(self, pod):
        """getPodGroup: the pod's PodGroup with DRAWorkloadResourceClaims on (ClaimError when
        it does not exist), else None."""
        return podgroup_claims.get_pod_group(self, pod)

    def pod_resource_claim_bindings(self, pod) -> List[Dict[str, Any]]:
        """podResourceClaimBindings: per pod claim the object it is bound to (BindTo)."""
        if not self.workload_claims:
            return []
        pod_group = self.get_pod_group(pod)
        return [bind_to(pod, pod_group, pc) for pc in pod.spec.get("resourceClaims") or []]

    def get_class(self, name: str):
        c = self.cluster.get("DeviceClass", "", name)
        return c.raw if c is not None else None

    # ---- EnqueueExtensions ------------------------------------------------------------------------
    @hookimpl
    def sign_pod(self, pod):
        """SignPod: a pod with resource claims cannot be signed (kubernetes#134986)."""
        if pod.spec.get("resourceClaims"):
            return None, Status.unschedulable("pods with dra resource claims are not signable")
        return None, None

    @hookimpl
    def events_to_register(self):
        node_actions = ActionType.Add | ActionType.UpdateNodeLabel | ActionType.UpdateNodeAllocatable
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.Node, node_actions)),
            ClusterEventWithHint(ClusterEvent(EventResource.ResourceClaim, ActionType.Add | ActionType.Update),
                                 self.is_schedulable_after_claim_change),
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.UpdatePodGeneratedResourceClaim),
                                 self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent(EventResource.DeviceClass, ActionType.Add | ActionType.Update)),
            ClusterEventWithHint(ClusterEvent(EventResource.ResourceSlice, ActionType.Add | ActionType.Update)),
        ]

    def is_schedulable_after_claim_change(self, pod, old_obj, new_obj) -> QueueingHint:
        """isSchedulableAfterClaimChange."""
        uses_claim = False
        try:
            for _, claim in self.foreach_pod_resource_claim(pod):
                if claim.uid == new_obj.uid:
                    uses_claim = True
        except ClaimError:
            return QueueingHint.QueueSkip
        if old_obj is not None and allocation_of(old_obj) is not None and allocation_of(new_obj) is None:
            return QueueingHint.Queue
        if not uses_claim:
            return QueueingHint.QueueSkip
        if old_obj is None:
            return QueueingHint.Queue
        if (old_obj.raw.get("status") or {}) == (new_obj.raw.get("status") or {}):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_pod_change(self, pod, old_obj, new_obj) -> QueueingHint:
        """isSchedulableAfterPodChange."""
        if pod.uid != new_obj.uid:
            return QueueingHint.QueueSkip
        try:
            self.foreach_pod_resource_claim(new_obj)
        except ClaimError:
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def foreach_pod_resource_claim(self, pod) -> List[Tuple[str, KubeObject]]:
        """foreachPodResourceClaim: (pod claim name, claim) of the pod's claims; ClaimError for
        a claim that does not exist (yet), is being deleted or is not the pod's."""
        out = []
        for res in pod.spec.get("resourceClaims") or []:
            name, must_check_owner = claim_name(pod, res)
            if name is None:
                continue
            claim = self.claim_tracker().get(pod.namespace, name)
            if (claim.raw.get("metadata") or {}).get("deletionTimestamp") is not None:
                raise ClaimError(f'resourceclaim "{claim.name}" is being deleted')
            if must_check_owner:
                is_for_pod(pod, claim, self.workload_claims, self.gates.version.minor)
            out.append((res.get("name", ""), claim))
        return out

    # ---- PreEnqueue ------------------------------------------------------------------------------
    @hookimpl
    def pre_enqueue(self, pod):
        try:
            self.foreach_pod_resource_claim(pod)
        except ClaimError as e:
            return status_unschedulable(str(e))
        return None

    # ---- PreFilter -------------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state, pod, nodes):
        s = StateData()
        state.write(STATE_KEY, s)
        pg_state = podgroup_claims.pod_group_state(state)
        try:
            claims = [c for _, c in self.foreach_pod_resource_claim(pod)]
        except ClaimError as e:
            return None, status_unschedulable(str(e))
        ext_claim, ext, st = extended.pre_filter_extended_resources(self, pod)
        if st is not None:
            return None, st
        try:
            s.bind_to = self.pod_resource_claim_bindings(pod)
        except ClaimError as e:
            return None, status_unschedulable(str(e))
        s.num_user_owned = len(claims)
        if ext_claim is not None:
            claims = claims + [ext_claim]  # newClaimStore: the special claim comes last
            s.ext = ext
        if not claims:
            return None, SKIP
        num_to_allocate = 0
        s.informations_for_claim = [_ClaimInfo() for _ in claims]
        for index, claim in enumerate(claims):
            alloc = allocation_of(claim)
            if alloc is not None:
                if alloc.get("nodeSelector") is not None:
                    try:
                        s.informations_for_claim[index].available_on_nodes = NodeSelector(alloc["nodeSelector"])
                    except NodeSelectorError as e:
                        return None, status_error(e)
                continue
            num_to_allocate += 1
            if pg_state is not None and claim.uid in pg_state.pending_allocations:
                # a pod of this pod group cycle reserved the claim: its allocation is reused
                pending = self.claim_tracker().get_pending_allocation(claim.uid)
                if pending is not None:
                    s.informations_for_claim[index].allocation = pending
                    continue
            if self.claim_tracker().claim_has_pending_allocation(claim.uid):
                return None, status_unschedulable(
                    f"resource claim {claim.namespace}/{claim.name} is in the process of being allocated")
            if claim is ext_claim:
                continue  # the special claim has no requests yet; Filter checks one from a prior cycle
            for req in ((claim.spec.get("devices") or {}).get("requests") or []):
                if req.get("exactly") is not None:
                    st = self.validate_device_class(req["exactly"].get("deviceClassName") or "", req.get("name", ""))
                    if st is not None:
                        return None, st
                elif req.get("firstAvailable"):
                    if not self.enable_prioritized_list:
                        return None, status_unschedulable(
                            f"resource claim {claim.namespace}/{claim.name}, request {req.get('name', '')}: "
                            f"has subrequests, but the DRAPrioritizedList feature is disabled")
                    for sub in req["firstAvailable"]:
                        st = self.validate_device_class(sub.get("deviceClassName") or "",
                                                        f"{req.get('name', '')}/{sub.get('name', '')}")
                        if st is not None:
                            return None, st
                else:
                    return None, status_unschedulable(
                        f"resource claim {claim.namespace}/{claim.name}, request {req.get('name', '')}: "
                        f"unknown request type")
        if num_to_allocate > 0:
            kind_version = getattr(self.cluster, "kind_version", None)
            version = kind_version("ResourceSlice") if kind_version is not None else None
            if version is None or version != self._slices_version:
                # the slices may have changed: list them again; if they did, forget each
                # node's pools
                slices = self.cluster.list("ResourceSlice")
                signature = tuple((x.key, x.resource_version) for x in slices)
                if signature != self._slices_signature:
                    self._slices, self._slices_signature = slices, signature
                    self._slice_index = index_slices(slices)
                    self._pool_cache, self._fast_cache = {}, {}
                self._slices_version = version
            if self.features.consumable_capacity:
                # GatherAllocatedState: shares and their consumed capacity too
                state = self.claim_tracker().gather_allocated_state(self.features.shared_devices_consume_counters)
                s.allocator = Allocator(self.features, state.allocated_devices, self.get_class, self._slices,
                                        self.cel_cache, self._match_cache, self._pool_cache, allocated_state=state,
                                        slice_index=self._slice_index)
            else:
                s.allocator = Allocator(self.features, self.claim_tracker().list_all_allocated_devices(),
                                        self.get_class, self._slices, self.cel_cache, self._match_cache,
                                        self._pool_cache, slice_index=self._slice_index)
            s.node_allocations = {}
        s.claims = claims
        s.scores_first_available = any(req.get("firstAvailable") for c in claims
                                       for req in ((c.spec.get("devices") or {}).get("requests") or []))
        s.pending_indexes = [i for i, _ in s.to_allocate() if s.informations_for_claim[i].allocation is not None]
        s.raw_to_allocate = [c.raw for i, c in s.to_allocate() if s.informations_for_claim[i].allocation is None]
        if ext_claim is not None and allocation_of(ext_claim) is None:
            s.ext_to_allocate_index = len(s.raw_to_allocate) - 1
        s.checked_claims = [i for i, c in enumerate(claims) if allocation_of(c) is not None]
        if s.allocator is not None:
            s.fast = FastFilter(s.allocator, s.raw_to_allocate, self._fast_cache, self._cel_outcomes)
        return None, None

    def validate_device_class(self, class_name: str, request_name: str) -> Optional[Status]:
        """validateDeviceClass."""
        if not class_name:
            return status_error(f"request {request_name}: unsupported request type")
        if self.cluster.get("DeviceClass", "", class_name) is None:
            return status_unschedulable(f"request {request_name}: device class {class_name} does not exist")
        return None

    # ---- Filter ----------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state, pod, node_info):
        try:
            s: StateData = state.read(STATE_KEY)
        except NotFoundError as e:
            return status_error(e)
        if not s.claims:
            return None
        node = node_info.node
        ext_claim = s.extended_claim()
        node_ext_claim, ext_mappings, st = extended.filter_extended_resources(
            ext_claim, s.ext, s.no_user_claim(), pod, node_info, self.gates)
        if st is not None:
            return st
        if node_ext_claim is None and s.no_user_claim():
            return None  # only extended resources, all through the node's device plugins
        unavailable = []
        for index in s.checked_claims:
            claim = s.claims[index]
            sel = s.informations_for_claim[index].available_on_nodes
            if sel is not None and not sel.match(node):
                unavailable.append(index)
                continue
            if allocation_of(claim) is not None and self.binding_conditions_enabled():
                # allocated: if binding failed, or timed out waiting, PostFilter may deallocate it
                try:
                    ready = self.is_claim_ready_for_binding(claim)
                except ClaimError:
                    unavailable.append(index)
                    continue
                if not ready and self.is_claim_timeout(claim):
                    unavailable.append(index)
        allocations = None
        if s.allocator is not None:
            to_allocate = s.raw_to_allocate
            fits = None
            if s.ext_to_allocate_index is not None:
                if node_ext_claim is not None:
                    # the special claim replaced by the node's variant
                    to_allocate = list(to_allocate)
                    to_allocate[s.ext_to_allocate_index] = node_ext_claim
            else:
                fits = s.fast.fits(node)  # the allocator's answer for plain claims, or None
            if fits is not None:
                a = Deferred(s.allocator, node, to_allocate) if fits else None
            elif not to_allocate:
                a = podgroup_claims.NO_ALLOCATIONS  # only pending allocations: nothing to allocate
            else:
                try:
                    a = s.allocator.allocate_lazy(node, to_allocate)
                except FailedOnNode as e:
                    return status_unschedulable(str(e))
                except AllocationError as e:
                    return status_error(e)
            if a is None:
                st = _DetailedStatus(Code.UnschedulableAndUnresolvable, "cannot allocate all claims")
                st.detail = lambda: explain_failure(s.allocator, node, to_allocate)
                return st
            allocations = a
            if s.pending_indexes:
                # allocations = append(allocationResult, pendingResult...)
                allocations = podgroup_claims.WithPending(
                    a, [s.informations_for_claim[i].allocation for i in s.pending_indexes])
        if unavailable:
            s.unavailable_claims.update(unavailable)
            return status_unschedulable("resourceclaim not available on the node")
        if s.allocator is not None:
            s.node_allocations[node.name] = allocations  # results built at Reserve
            if s.ext is not None:
                s.ext.by_node[node.name] = (node_ext_claim, ext_mappings)
        return None

    def filter_nodes(self, state, pod, nodes):
        """filter on each node (the batch form the framework calls): batch_filter.filter_nodes,
        or None (the per-node calls)."""
        return batch_filter.filter_nodes(STATE_KEY, state, pod, nodes, self.claim_tracker())

    # ---- PostFilter ------------------------------------------------------------------------------
    @hookimpl
    def post_filter(self, state, pod, filtered_node_status_map):
        try:
            s: StateData = state.read(STATE_KEY)
        except NotFoundError as e:
            return None, status_error(e)
        if not s.claims:
            return None, Status.unschedulable("no new claims to deallocate")
        ext_claim = s.extended_claim()
        stale_ext = ext_claim is not None and ext_claim.name != extended.SPECIAL_CLAIM_IN_MEM_NAME
        for index in sorted(s.unavailable_claims):
            claim = s.claims[index]
            if claim is ext_claim:
                if stale_ext:
                    break  # handled below
                continue
            reserved = claim.status.get("reservedFor") or []
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod.uid):
                latest = self.cluster.get("ResourceClaim", claim.namespace, claim.name) or claim

                def clear(raw, status):
                    for k in ("reservedFor", "allocation", "devices"):
                        status.pop(k, None)
                try:
                    self.cluster.update_status(_copy_with(latest, clear))  # UpdateStatus
                except API_ERRORS as e:
                    return None, status_error(e)
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        if stale_ext:
            # the extended resource claim of a prior cycle: deleted, the next attempt starts anew
            extended.delete_claim(self, ext_claim)
            return None, Status.unschedulable("deletion of ResourceClaim completed")
        if self.workload_claims:
            st = podgroup_claims.unreserve_pod_group_claims(self, state, pod)
            if st is not None:
                return None, st
        return None, Status.unschedulable("still not schedulable")

    # ---- Score (v1.35 on) -------------------------------------------------------------------------
    @hookimpl
    def score(self, state, pod, node_info):
        """Score: the prioritized-list choices of the allocation Filter found for the node."""
        if not self.enable_prioritized_list:
            return 0, None
        try:
            s: StateData = state.read(STATE_KEY)
        except NotFoundError as e:
            return 0, status_error(e)
        if not s.claims or not s.scores_first_available:
            return 0, None
        found = s.node_allocations.get(node_info.node.name)
        if found is None:
            return 0, None
        try:
            return compute_score(s.claims, found.results()), None
        except ClaimError as e:
            return 0, status_error(e)

    def score_nodes(self, state, pod, nodes):
        """score on each node (the batch form the framework calls): 0 everywhere when no claim
        of the pod has a firstAvailable request (computeScore counts only the subrequests
        chosen), which is every pod without claims; otherwise None (the per-node calls)."""
        s = state.get(STATE_KEY)
        if s is None or (s.claims and s.scores_first_available and self.enable_prioritized_list):
            return None
        if nodes.__class__ is NodeRows:
            np = numpy()
            return np.zeros(len(nodes), dtype=np.int64)
        return [0] * len(nodes)

    @hookimpl
    def normalize_score(self, state, pod, scores):
        """NormalizeScore: helper.DefaultNormalizeScore(MaxNodeScore, false, scores)."""
        return helper.default_normalize_score(MAX_NODE_SCORE, False, scores)

    def normalize_scores(self, state, pod, scores):
        """normalize_score on plain scores (the batch form the framework calls)."""
        return helper.default_normalize_ints(MAX_NODE_SCORE, False, scores)

    # ---- Reserve / Unreserve ----------------------------------------------------------------------
    @hookimpl
    def reserve(self, state, pod, node_name):
        try:
            s: StateData = state.read(STATE_KEY)
        except NotFoundError as e:
            return status_error(e)
        if not s.claims:
            return None
        pg_state = podgroup_claims.pod_group_state(state)
        to_allocate = s.to_allocate()
        if not to_allocate:
            return None
        ext_claim = s.extended_claim()
        if s.allocator is not None:
            found = s.node_allocations.get(node_name)
            allocations = found.results(self.new_share_id) if found is not None else None
            if not allocations:
                if not any(c is not ext_claim for _, c in to_allocate):
                    # only the special claim, and the node's device plugins provide its resources
                    return None
                return status_error("claim allocation not found for node")
            if len(allocations) != len(to_allocate):
                return status_error(f"internal error, have {len(allocations)} allocations, "
                                    f"{len(to_allocate)} claims to allocate, want {len(to_allocate)} claims")
            for alloc_index, (index, claim) in enumerate(to_allocate):
                allocation = allocations[alloc_index]
                s.informations_for_claim[index].allocation = allocation
                if claim is ext_claim and (s.ext.by_node.get(node_name) or (None,))[0] is not None:
                    # the special claim replaced by the node's variant Filter built
                    claim = KubeObject(copy.deepcopy(s.ext.by_node[node_name][0]))

                def put(raw, status, allocation=allocation):
                    fin = raw["metadata"].setdefault("finalizers", [])
                    if FINALIZER not in fin:
                        fin.append(FINALIZER)
                    status["allocation"] = allocation
                self.claim_tracker().signal_claim_pending_allocation(claim.uid, _copy_with(claim, put))
                if pg_state is not None:
                    pg_state.pending_allocations.add(claim.uid)
        return None

    def new_share_id(self) -> str:
        """GenerateShareID, on the scheduler's seeded share-ID stream (consumable.py)."""
        rng = getattr(self.handle, "share_id_rng", None)
        if rng is None:
            rng = self._share_id_rng = getattr(self, "_share_id_rng", None) or random.Random(0)
        return new_share_id(rng)

    @hookimpl
    def unreserve(self, state, pod, node_name):
        try:
            s: StateData = state.read(STATE_KEY)
        except NotFoundError:
            return None
        pg_state = podgroup_claims.pod_group_state(state)
        for claim in s.claims[:s.num_user_owned]:
            # the allocation leaves the in-flight set with the last pod sharing it
            if self.claim_tracker().maybe_remove_claim_pending_allocation(claim.uid, False) and pg_state is not None:
                pg_state.pending_allocations.discard(claim.uid)
            # a claim reserved for the PodGroup stays so: other pods of the group may need it
            if allocation_of(claim) is not None and is_reserved_for_pod(pod, claim, False):
                latest = self.cluster.get("ResourceClaim", claim.namespace, claim.name)
                if latest is None or latest.uid != claim.uid:
                    continue

                def drop(raw, status):
                    status["reservedFor"] = [r for r in status.get("reservedFor") or [] if r.get("uid") != pod.uid]
                    if not status["reservedFor"]:
                        del status["reservedFor"]
                try:
                    # the strategic-merge patch of the status subresource deleting the pod's entry
                    self.cluster.update_status(_copy_with(latest, drop))
                except API_ERRORS:
                    pass  # logged upstream: "we will get here again when pod scheduling is retried"
        extended.unreserve_extended_resource_claim(self, s.extended_claim(), s.ext)
        return None

    # ---- PreBind -------------------------------------------------------------------------------
    @hookimpl
    def pre_bind_pre_flight(self, state, pod, node_name):
        """PreBindPreFlight: Skip without claims; PreBind may run in parallel with the adjacent
        plugins that allow it (v1.36's AllowParallel, on every path)."""
        result = PreBindPreFlightResult(allow_parallel=True)
        try:
            s: StateData = state.read(STATE_KEY)
        except NotFoundError as e:
            return result, status_error(e)
        if not s.claims:
            return result, SKIP
        return result, None

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        try:
            s: StateData = state.read(STATE_KEY)
        except NotFoundError as e:
            return status_error(e)
        if not s.claims:
            return None
        for index, claim in enumerate(s.claims):
            if not is_reserved_for_pod(pod, claim, self.workload_claims):
                try:
                    s.claims[index] = self.bind_claim(s, index, pod, node_name)
                except ClaimError as e:
                    return status_error(e)
        if not self.binding_conditions_enabled() or not _has_binding_conditions(s.claims):
            return None
        return self._wait_for_binding_conditions(s)

    # ---- binding conditions (DRADeviceBindingConditions and DRAResourceClaimDeviceStatus) ---------
    def binding_conditions_enabled(self) -> bool:
        return self.gates.enabled("DRADeviceBindingConditions") and self.gates.enabled("DRAResourceClaimDeviceStatus")

    def now(self) -> float:
        clock = getattr(self.handle, "clock", None)
        return clock.now() if clock is not None else 0.0

    def _wait_for_binding_conditions(self, s: StateData):
        """PreBind's wait.PollUntilContextTimeout(5s, bindingTimeout, immediate): the claims are
        re-read and checked now and after each 5 s of virtual time, until every binding condition
        is true, a binding failure condition is true (an error), or the timeout passes (an error:
        the next attempt's Filter sees the timed-out claim and PostFilter deallocates it)."""
        wrapped = self.gates.has("DRABindingErrorsWrapped")
        waited = 0.0
        while True:
            try:
                if self.is_pod_ready_for_binding(s):
                    return None
            except ClaimError as e:
                return status_error(e)
            if waited + BINDING_POLL_SECONDS > self.binding_timeout:
                return status_error("device binding timeout: context deadline exceeded" if wrapped
                                    else "device binding timeout")
            yield BINDING_POLL_SECONDS
            waited += BINDING_POLL_SECONDS

    def is_pod_ready_for_binding(self, s: StateData) -> bool:
        """isPodReadyForBinding."""
        for index, claim in enumerate(s.claims):
            latest = self.claim_tracker().get(claim.namespace, claim.name)
            s.claims[index] = latest
            if not self.is_claim_ready_for_binding(latest):
                if self.is_claim_timeout(latest):
                    if self.gates.has("DRABindingErrorsWrapped"):
                        raise ClaimError(f"device binding timeout: claim={latest.name}")
                    raise ClaimError(f"claim {latest.name} binding timeout")
                return False
        return True

    def is_claim_ready_for_binding(self, claim: KubeObject) -> bool:
        """isClaimReadyForBinding: every binding condition of the allocated devices is true in
        the claim's device status; a true binding failure condition is an error (ClaimError)."""
        alloc = allocation_of(claim)
        if alloc is None:
            return False
        for res in ((alloc.get("devices") or {}).get("results") or []):
            if not res.get("bindingConditions"):
                continue
            status = next((d for d in claim.status.get("devices") or []
                           if (d.get("driver"), d.get("pool"), d.get("device")) ==
                           (res.get("driver"), res.get("pool"), res.get("device"))), None)
            if status is None:
                return False
            conds = {c.get("type"): c for c in status.get("conditions") or []}
            for name in res.get("bindingFailureConditions") or []:
                c = conds.get(name)
                if c is not None and c.get("status") == "True":
                    if self.gates.has("DRABindingErrorsWrapped"):
                        raise ClaimError(f"device binding failed: claim={claim.name}, reason={c.get('reason', '')}, "
                                         f"message={_go_quote(c.get('message', ''))}")
                    raise ClaimError(f"claim {claim.name} binding failed: reason={c.get('reason', '')}, "
                                     f"message={_go_quote(c.get('message', ''))}")
            for name in res.get("bindingConditions") or []:
                if (conds.get(name) or {}).get("status") != "True":
                    return False
        return True

    def is_claim_timeout(self, claim: KubeObject) -> bool:
        """isClaimTimeout: allocationTimestamp + bindingTimeout is before now, for a claim with
        binding conditions."""
        from harness.api.metatime import parse_time
        if not self.binding_conditions_enabled():
            return False
        alloc = allocation_of(claim)
        if alloc is None or not alloc.get("allocationTimestamp"):
            return False
        try:
            started = parse_time(alloc["allocationTimestamp"])
        except ValueError:
            return False
        for res in ((alloc.get("devices") or {}).get("results") or []):
            if res.get("bindingConditions") is None:
                continue
            if started + self.binding_timeout < self.now():
                return True
        return False

    def bind_claim(self, s: StateData, index: int, pod, node_name: str = "") -> KubeObject:
        """bindClaim: the allocation (if this cycle made one) and the reservation for the pod,
        written to the claim's status in the API server. The special claim for extended
        resources is created first (and the pod's status then names it); without an allocation
        and requests (the node's device plugins serve the pod) there is nothing to do."""
        claim = s.claims[index]
        binding = s.get_binding(index, pod)
        allocation = s.informations_for_claim[index].allocation
        in_flight_uid = claim.uid
        modified = False
        is_extended = False
        if claim is s.extended_claim():
            if allocation is None and not extended.has_requests(claim):
                return claim
            is_extended = True
        try:
            if is_extended and claim.name == extended.SPECIAL_CLAIM_IN_MEM_NAME:
                claim = extended.create_claim_in_api(self, pod, node_name, s.ext)
                s.claims[index] = claim  # claimStore.updateExtendedResourceClaim
            latest = self.cluster.get("ResourceClaim", claim.namespace, claim.name)
            if latest is None:
                raise ClaimError(f"get updated claim {claim.namespace}/{claim.name} after conflict: "
                                 f'resourceclaims.resource.k8s.io "{claim.name}" not found')
            if (latest.raw.get("metadata") or {}).get("deletionTimestamp") is not None:
                raise ClaimError(f"claim {claim.namespace}/{claim.name} got deleted in the meantime")
            if allocation is not None and allocation_of(latest) is not None:
                raise ClaimError(f"claim {claim.namespace}/{claim.name} got allocated elsewhere in the meantime")

            if allocation is not None and FINALIZER not in (latest.raw["metadata"].get("finalizers") or []):
                # the finalizer goes in with a plain Update first (the status subresource
                # leaves metadata alone); one set before an interruption is kept as it is
                def add_finalizer(raw, status):
                    raw["metadata"]["finalizers"] = list(raw["metadata"].get("finalizers") or []) + [FINALIZER]
                try:
                    latest = self.cluster.update(_copy_with(latest, add_finalizer))
                except API_ERRORS as e:
                    raise ClaimError(f"add finalizer to claim {claim.namespace}/{claim.name}: {e}") from None

            def put(raw, status):
                if allocation is not None:
                    status["allocation"] = copy.deepcopy(allocation)
                status.setdefault("reservedFor", []).append(dict(binding))
                if self.binding_conditions_enabled() and status.get("allocation") is not None \
                        and not status["allocation"].get("allocationTimestamp"):
                    from harness.api.metatime import format_time
                    status["allocation"]["allocationTimestamp"] = format_time(self.now())
            try:
                # UpdateStatus: the API server refuses more than 256 reservedFor entries
                # (harness.api.claim_status); upstream adds the pod without checking first
                updated = self.cluster.update_status(_copy_with(latest, put))
            except API_ERRORS as e:
                what = ("add allocation and reservation to claim" if allocation is not None
                        else "add reservation to claim")
                raise ClaimError(f"{what} {claim.namespace}/{claim.name}: {e}") from None
            modified = True
            if is_extended:
                s.claims[index] = updated
                extended.patch_pod_extended_resource_claim_status(self, pod, updated, node_name, s.ext)
            return updated
        finally:
            if allocation is not None:
                # stored in the API server: no longer in flight, even if still shared; a
                # failure only drops this pod's share
                self.claim_tracker().maybe_remove_claim_pending_allocation(in_flight_uid, modified)


def _has_binding_conditions(claims: List[KubeObject]) -> bool:
    """hasBindingConditions."""
    for claim in claims:
        for res in (((allocation_of(claim) or {}).get("devices") or {}).get("results") or []):
            if res.get("bindingConditions"):
                return True
    return False


def _go_quote(text: str) -> str:
    """fmt's %q for the texts conditions carry."""
    import json
    return json.dumps(str(text), ensure_ascii=False)


def compute_score(claims: List[KubeObject], allocations: List[Dict[str, Any]]) -> int:
    """computeScore: per claim, for each subrequest of a firstAvailable request that the
    allocation used, FirstAvailableDeviceRequestMaxSize (8) minus its index: the earlier the
    choice, the higher. Claims allocated before this cycle score by their own allocation."""
    score = 0
    unallocated = 0
    for claim in claims:
        allocation = allocation_of(claim)
        if allocation is None:
            if unallocated >= len(allocations):
                raise ClaimError(f"number of allocations {len(allocations)} is smaller than number of "
                                 f"claims needing allocation")
            allocation = allocations[unallocated]
            unallocated += 1
        used = {r.get("request", "") for r in ((allocation.get("devices") or {}).get("results") or [])
                if "/" in (r.get("request") or "")}
        for req in ((claim.spec.get("devices") or {}).get("requests") or []):
            if req.get("exactly") is not None:
                continue
            for i, sub in enumerate(req.get("firstAvailable") or []):
                if f"{req.get('name', '')}/{sub.get('name', '')}" in used:
                    score += FIRST_AVAILABLE_MAX_SIZE - i
    return score


PLUGINS = [DynamicResources]
