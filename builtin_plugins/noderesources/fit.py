"""NodeResourcesFit (framework/plugins/noderesources/fit.go): does the node have room for the
pod's requests (PreFilter/Filter), and how full would it be (PreScore/Score, with the
LeastAllocated, MostAllocated or RequestedToCapacityRatio strategy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from harness.api.objects import Node, Pod
from harness.api.pod_resources import is_extended_resource_name, is_scalar_resource_name
from harness.framework import signers
from harness.framework import (ActionType, ClusterEvent, ClusterEventWithHint, Code, EventResource,
                               NodeInfo, Plugin, QueueingHint, Resource, Status,
                               hookimpl)

from harness.framework import node_table
from harness.framework.node_table import NodeRows, numpy

from .lazy_modules import dra_scoring as _dra_scoring, extended as _extended
from .. import names
from ..helper import features_of
from harness.framework.lazy_status import StatusColumn
from . import args as fitargs
from .least_allocated import least_resource_scorer, least_resource_scorer_cpu_memory
from .most_allocated import most_resource_scorer, most_resource_scorer_cpu_memory
from .requested_to_capacity_ratio import (requested_to_capacity_ratio_scorer,
                                          requested_to_capacity_ratio_scorer_cpu_memory)
from .resource_allocation import ResourceAllocationScorer, pod_requests_opts

NAME = names.NodeResourcesFit
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_TOO_MANY_PODS = "Too many pods"
ERR_REASON_SIDECARS_DISABLED = ("Pod has a restartable init container and the SidecarContainers "
                                "feature is disabled")


# ---------------------------------------------------------------------------------------------
# Cycle state
# ---------------------------------------------------------------------------------------------
class PreFilterState:
    """preFilterState: the pod's request as a framework.Resource (resource_to_device_class:
    v1.34's DRAExtendedResource mapping, None when the pod requests no extended resource). The
    request's cpu, memory and ephemeral
    storage are copied out for Filter's fast path, which `has_scalars` turns off."""

    __slots__ = ("resource", "resource_to_device_class", "milli_cpu", "memory",
                 "ephemeral_storage", "has_scalars", "delegate")

    def __init__(self, resource: Resource, resource_to_device_class: Optional[Any] = None):
        self.resource = resource
        self.resource_to_device_class = resource_to_device_class
        self.delegate: Optional[Delegate] = None  # shouldDelegateResourceToDRA, gate on
        self.milli_cpu = resource.milli_cpu
        self.memory = resource.memory
        self.ephemeral_storage = resource.ephemeral_storage
        self.has_scalars = bool(resource.scalar_resources)

    def clone(self) -> "PreFilterState":
        return self


class PreScoreState:
    """preScoreState: the pod's requests, in the order of the scoring strategy's resources, and
    the DRA data for scoring extended resources backed by DRA (draPreScoreState, v1.35 on)."""

    __slots__ = ("pod_requests", "dra")

    def __init__(self, pod_requests: List[int], dra: Any = None):
        self.pod_requests = pod_requests
        self.dra = dra

    def clone(self) -> "PreScoreState":
        return self


# ---------------------------------------------------------------------------------------------
# Requests and fitting
# ---------------------------------------------------------------------------------------------
def compute_pod_resource_request(pod: Pod, enable_pod_level_resources: bool = True) -> Resource:
    """computePodResourceRequest: PodRequests (containers summed, init containers and sidecars as
    the KEP says, pod-level requests when PodLevelResources is on, overhead added) taken into a
    framework.Resource with SetMaxResource. Cached on the pod; do not mutate the result."""

    def compute(p: Pod) -> Resource:
        reqs = pod_requests_opts(p, skip_pod_level=not enable_pod_level_resources)
        r = Resource()
        r.set_max_resource(reqs)
        return r

    return pod.resource_memo("noderesources.pod_request:%d" % enable_pod_level_resources, compute)


@dataclass
class InsufficientResource:
    """InsufficientResource: which resource the node lacks, and whether only a bigger node
    (not preemption) could help (Unresolvable: the request exceeds the node's allocatable)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


# (resource name, the node's allocatable scalar resources) -> leave the resource to DynamicResources
Delegate = Callable[[str, Dict[str, int]], bool]


def fits_request(pod_request: Resource, node_info: NodeInfo,
                 ignored_extended_resources: Optional[Set[str]] = None,
                 ignored_resource_groups: Optional[Set[str]] = None,
                 delegate: Optional[Delegate] = None) -> List[InsufficientResource]:
    """fitsRequest: the resources the node lacks for the pod (empty when it fits). Pods count
    against the node's pod capacity whatever the pod requests. With DRAExtendedResource,
    `delegate` says which scalar resources DynamicResources provides on this node
    (shouldDelegateResourceToDRA) : those are not checked here."""
    out: List[InsufficientResource] = []
    alloc = node_info.allocatable
    n_pods = len(node_info.pods)
    if n_pods + 1 > alloc.allowed_pod_number:
        out.append(InsufficientResource("pods", ERR_REASON_TOO_MANY_PODS, 1, n_pods, alloc.allowed_pod_number))
    r = pod_request
    if r.milli_cpu == 0 and r.memory == 0 and r.ephemeral_storage == 0 and not r.scalar_resources:
        return out
    used = node_info.requested
    if r.milli_cpu > 0 and r.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        out.append(InsufficientResource("cpu", "Insufficient cpu", r.milli_cpu, used.milli_cpu,
                                        alloc.milli_cpu, r.milli_cpu > alloc.milli_cpu))
    if r.memory > 0 and r.memory > alloc.memory - used.memory:
        out.append(InsufficientResource("memory", "Insufficient memory", r.memory, used.memory,
                                        alloc.memory, r.memory > alloc.memory))
    if r.ephemeral_storage > 0 and r.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage:
        out.append(InsufficientResource("ephemeral-storage", "Insufficient ephemeral-storage",
                                        r.ephemeral_storage, used.ephemeral_storage,
                                        alloc.ephemeral_storage, r.ephemeral_storage > alloc.ephemeral_storage))
    if r.scalar_resources:
        alloc_s = alloc.scalar_resources
        used_s = used.scalar_resources
        # Go ranges over a map in random order; sorted keeps runs repeatable.
        for name in sorted(r.scalar_resources):
            q = r.scalar_resources[name]
            if q == 0:
                continue
            if is_extended_resource_name(name):
                prefix = name.split("/")[0] if ignored_resource_groups else ""
                if ((ignored_extended_resources and name in ignored_extended_resources)
                        or (ignored_resource_groups and prefix in ignored_resource_groups)):
                    continue
            if delegate is not None and delegate(name, alloc_s):
                continue
            a = alloc_s.get(name, 0)
            u = used_s.get(name, 0)
            if q > a - u:
                out.append(InsufficientResource(name, f"Insufficient {name}", q, u, a, q > a))
    return out


def _insufficient_cpu_memory(cpu: int, mem: int, node_info: NodeInfo) -> Status:
    """Filter's status on a node that fails its fast test, for a pod requesting cpu > 0 and
    memory > 0 and nothing else: fitsRequest's reasons in its order (pods, cpu, memory)."""
    alloc = node_info.allocatable
    used = node_info.requested
    reasons = []
    code = Code.Unschedulable
    if len(node_info.pods) + 1 > alloc.allowed_pod_number:
        reasons.append(ERR_REASON_TOO_MANY_PODS)
    if cpu > alloc.milli_cpu - used.milli_cpu:
        reasons.append("Insufficient cpu")
        if cpu > alloc.milli_cpu:
            code = Code.UnschedulableAndUnresolvable
    if mem > alloc.memory - used.memory:
        reasons.append("Insufficient memory")
        if mem > alloc.memory:
            code = Code.UnschedulableAndUnresolvable
    return Status(code, *reasons)


_KEY_REASONS = ((1, ERR_REASON_TOO_MANY_PODS), (2, "Insufficient cpu"), (4, "Insufficient memory"),
                (8, "Insufficient ephemeral-storage"))
# key (bits of _KEY_REASONS, 16: some request exceeds the node's allocatable) -> (code, reasons);
# key 0: the node fits
_FIT_KINDS = [None] + [(Code.UnschedulableAndUnresolvable if key & 16 else Code.Unschedulable,
                        tuple(reason for bit, reason in _KEY_REASONS if key & bit))
                       for key in range(1, 32)]


def _fit_key(t, r, cpu: int, mem: int, eph: int):
    """_fit_rows' key over rows r of table t (bits of _KEY_REASONS, 16: unresolvable): from
    the table's derived column of these requests (the nodes' keys kept across cycles, only
    the rows refreshed since recomputed)."""
    key = t.derived(("NodeResourcesFit", cpu, mem, eph), lambda rows: _fit_key_at(t, rows, cpu, mem, eph),
                    lambda i: _fit_key_one(t, i, cpu, mem, eph))[r]
    return key.copy() if r.__class__ is slice else key  # (the caller's own: never a view of the table)


def _fit_key_at(t, r, cpu: int, mem: int, eph: int):
    """_fit_key computed at rows r."""
    key = (t.num_pods[r] + 1 > t.alloc_pods[r]).astype(numpy().int64)
    for bit, req, alloc, used in ((2, cpu, t.alloc_cpu, t.req_cpu), (4, mem, t.alloc_mem, t.req_mem),
                                  (8, eph, t.alloc_eph, t.req_eph)):
        if req > 0:
            a = alloc[r]
            short = req > a - used[r]
            key |= short * bit
            key |= (short & (req > a)) * 16
    return key


def _fit_key_one(t, i: int, cpu: int, mem: int, eph: int) -> int:
    """_fit_key_at at row i, in Python."""
    key = 1 if int(t.num_pods[i]) + 1 > int(t.alloc_pods[i]) else 0
    for bit, req, alloc, used in ((2, cpu, t.alloc_cpu, t.req_cpu), (4, mem, t.alloc_mem, t.req_mem),
                                  (8, eph, t.alloc_eph, t.req_eph)):
        if req > 0:
            a = int(alloc[i])
            if req > a - int(used[i]):
                key |= bit
                if req > a:
                    key |= 16
    return key


def _fit_rows(nodes, cpu: int, mem: int, eph: int) -> StatusColumn:
    """Filter over rows of the node table for a pod without scalar requests: fitsRequest's
    tests on the columns (pods, then cpu, memory and ephemeral storage the pod requests; a
    request above the allocatable is unresolvable), as a StatusColumn: each rejected node's
    Status has its reasons in fitsRequest's order."""
    return StatusColumn(_fit_key(nodes.table, nodes.rows, cpu, mem, eph), _FIT_KINDS)


def _fit_rows_scalars(nodes, s: "PreFilterState", ignored: Set[str], ignored_groups: Set[str]
                      ) -> Optional[StatusColumn]:
    """_fit_rows for a pod with scalar requests: fitsRequest's scalar loop (sorted names, zero
    requests, ignored extended resources and groups, the DRA delegation by its `rows` form) on
    the table's scalar columns, each checked resource one more bit of the key after
    _KEY_REASONS' and the unresolvable one. None when a request or a column is out of the
    table's range, or the delegation has no column form."""
    t, r = nodes.table, nodes.rows
    req = s.resource
    scalars = req.scalar_resources
    if max(map(abs, scalars.values())) >= node_table.LIMIT:
        return None
    np = numpy()
    key = _fit_key(t, r, s.milli_cpu, s.memory, s.ephemeral_storage)
    delegate = s.delegate
    checked: List[str] = []
    for name in sorted(scalars):
        q = scalars[name]
        if q == 0:
            continue
        if is_extended_resource_name(name):
            prefix = name.split("/")[0] if ignored_groups else ""
            if (ignored and name in ignored) or (ignored_groups and prefix in ignored_groups):
                continue
        if len(checked) >= 58:
            return None  # the key's bits would not fit in an int64
        alloc, used, has = t.scalar(name)
        if not t.safe:
            return None
        a = alloc[r]
        short = q > a - used[r]
        if delegate is not None:
            rows_form = getattr(delegate, "rows", None)
            if rows_form is None:
                return None
            delegated = rows_form(name, a, has[r])
            if delegated is not None:
                short &= ~delegated
        bit = 32 << len(checked)
        checked.append(f"Insufficient {name}")
        key |= short * bit
        key |= (short & (q > a)) * 16
    if not checked:
        return StatusColumn(key, _FIT_KINDS)
    uniq, inv = np.unique(key, return_inverse=True)
    kinds = []
    for k in uniq.tolist():
        if k == 0:
            kinds.append(None)
            continue
        code, reasons = _FIT_KINDS[k & 31] if k & 15 else (
            Code.UnschedulableAndUnresolvable if k & 16 else Code.Unschedulable, ())
        reasons = reasons + tuple(reason for j, reason in enumerate(checked) if k & (32 << j))
        kinds.append((code, reasons))
    return StatusColumn(inv.reshape(-1).astype(np.int64), kinds)


def fits(pod: Pod, node_info: NodeInfo, enable_pod_level_resources: bool = True,
         delegate: Optional[Delegate] = None) -> List[InsufficientResource]:
    """Fits: fitsRequest with nothing ignored."""
    return fits_request(compute_pod_resource_request(pod, enable_pod_level_resources), node_info,
                        delegate=delegate)


def _node_info_of(node: Node) -> NodeInfo:
    ni = NodeInfo()
    ni.set_node(node)
    return ni


def is_fit(pod: Pod, node: Optional[Node], enable_pod_level_resources: bool = True,
           delegate: Optional[Delegate] = None) -> bool:
    """isFit: would the pod fit on the node if it were empty? False for no node."""
    if node is None:
        return False
    return not fits(pod, _node_info_of(node), enable_pod_level_resources, delegate)


def have_any_requested_resources_increased(pod: Pod, original_node: Node, modified_node: Node,
                                           enable_pod_level_resources: bool = True,
                                           delegate: Optional[Delegate] = None) -> bool:
    """haveAnyRequestedResourcesIncreased: did the pod capacity, or the allocatable of a resource
    the pod requests, grow? With DRAExtendedResource, also a resource DynamicResources would
    provide on the modified node."""
    pod_request = compute_pod_resource_request(pod, enable_pod_level_resources)
    orig = Resource.from_list(original_node.allocatable)
    mod = Resource.from_list(modified_node.allocatable)
    if mod.allowed_pod_number > orig.allowed_pod_number:
        return True
    if (pod_request.milli_cpu == 0 and pod_request.memory == 0 and pod_request.ephemeral_storage == 0
            and not pod_request.scalar_resources):
        return False
    if ((pod_request.milli_cpu > 0 and mod.milli_cpu > orig.milli_cpu)
            or (pod_request.memory > 0 and mod.memory > orig.memory)
            or (pod_request.ephemeral_storage > 0 and mod.ephemeral_storage > orig.ephemeral_storage)):
        return True
    for name, q in pod_request.scalar_resources.items():
        if q == 0:
            continue
        if mod.scalar_resources.get(name, 0) > orig.scalar_resources.get(name, 0):
            return True
        if delegate is not None and delegate(name, mod.scalar_resources):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Extended resources backed by DRA (DRAExtendedResource)
# ---------------------------------------------------------------------------------------------
def delegate_v135(resolver) -> Delegate:
    """shouldDelegateResourceToDRA (v1.35 on): the node's allocatable of the resource is 0 (or
    absent) and the DRA manager's class cache maps the resource to a device class."""
    def delegate(name: str, allocatable: Dict[str, int]) -> bool:
        if allocatable.get(name, 0) > 0:
            return False
        return resolver.get_device_class(name) is not None

    def maps(name: str) -> bool:
        """Whether delegate may answer True for the resource on some node."""
        return resolver.get_device_class(name) is not None

    def rows(name: str, alloc, has):
        """delegate over columns of the node table (None: on no node)."""
        return (alloc <= 0) if maps(name) else None
    delegate.rows = rows  # type: ignore[attr-defined]
    delegate.maps = maps  # type: ignore[attr-defined]
    return delegate


def delegate_v134(mapping: Optional[Any]) -> Delegate:
    """fitsRequest's test in v1.34: the resource is not in the node's allocatable, and a device
    class maps it or no mapping was taken (the pod requests no extended resource, or the check
    is a queueing hint's)."""
    def delegate(name: str, allocatable: Dict[str, int]) -> bool:
        return (mapping is None or name in mapping) and name not in allocatable

    def maps(name: str) -> bool:
        """Whether delegate may answer True for the resource on some node."""
        return mapping is None or name in mapping

    def rows(name: str, alloc, has):
        """delegate over columns of the node table (None: on no node)."""
        return ~has if maps(name) else None
    delegate.rows = rows  # type: ignore[attr-defined]
    delegate.maps = maps  # type: ignore[attr-defined]
    return delegate


def with_device_class(resource: Resource, cluster, gates) -> Optional[Any]:
    """withDeviceClass (v1.34): the extended resource -> device class mapping when the pod
    requests some extended resource, else None."""
    extended = _extended()
    if any(q != 0 and is_extended_resource_name(n) for n, q in resource.scalar_resources.items()):
        return extended.class_resolver(cluster, gates) if cluster is not None else {}
    return None


def sign_resources(pod: Pod, enable_pod_level_resources: bool, gates, cluster):
    """Fit.SignPod and BalancedAllocation.SignPod: the pod's computePodResourceRequest. With
    DRAExtendedResource on, v1.35 cannot sign any pod; v1.36 cannot sign one that requests
    (non-zero) an extended resource the DRA manager's class cache maps to a DeviceClass
    (shouldDelegateResourceToDRA without a node). v1.36 signs as the pod enters the queue, the
    harness in its first cycle (a DeviceClass created in between is seen here, not there)."""
    r = compute_pod_resource_request(pod, enable_pod_level_resources)
    if gates.enabled("DRAExtendedResource"):
        if not gates.has("SignPodDRAExtendedResources"):
            return None, Status.unschedulable("signature disabled when dra extended resources enabled")
        if cluster is not None:
            extended = _extended()
            resolver = extended.class_resolver(cluster, gates)
            for name, q in r.scalar_resources.items():
                if q != 0 and resolver.get_device_class(name) is not None:
                    return None, Status.unschedulable(
                        "signature disabled when dra extended resources are used in the cluster")
    return [(signers.RESOURCES_SIGNER_NAME, signers.resources_value(r))], None


def has_restartable_init_container(pod: Pod) -> bool:
    return any(c.get("restartPolicy") == "Always" for c in pod.init_containers)


# ---------------------------------------------------------------------------------------------
# Scoring strategies
# ---------------------------------------------------------------------------------------------
def _resources_of(strategy: Dict[str, Any]) -> List[Tuple[str, int]]:
    return [(r.get("name", ""), int(r.get("weight") or 0)) for r in strategy.get("resources") or []]


def _least_allocated(strategy: Dict[str, Any]) -> ResourceAllocationScorer:
    res = _resources_of(strategy)
    return ResourceAllocationScorer(fitargs.LEAST_ALLOCATED, least_resource_scorer(res), res,
                                    cpu_memory_scorer=least_resource_scorer_cpu_memory(res))


def _most_allocated(strategy: Dict[str, Any]) -> ResourceAllocationScorer:
    res = _resources_of(strategy)
    return ResourceAllocationScorer(fitargs.MOST_ALLOCATED, most_resource_scorer(res), res,
                                    cpu_memory_scorer=most_resource_scorer_cpu_memory(res))


def _requested_to_capacity_ratio(strategy: Dict[str, Any]) -> ResourceAllocationScorer:
    res = _resources_of(strategy)
    rtcr = strategy.get("requestedToCapacityRatio")
    if rtcr is None:
        # Upstream dereferences a nil RequestedToCapacityRatio here and kube-scheduler panics.
        raise ValueError("scoring strategy RequestedToCapacityRatio needs requestedToCapacityRatio "
                         "(kube-scheduler v1.34 panics without it)")
    shape = [(int(p.get("utilization") or 0), int(p.get("score") or 0)) for p in rtcr.get("shape") or []]
    return ResourceAllocationScorer(fitargs.REQUESTED_TO_CAPACITY_RATIO,
                                    requested_to_capacity_ratio_scorer(res, shape), res,
                                    cpu_memory_scorer=requested_to_capacity_ratio_scorer_cpu_memory(res, shape))


# nodeResourceStrategyTypeMap. The scorers leave use_requested, enable_pod_level_resources and
# enable_in_place_pod_vertical_scaling unset (False), as NewFit does: Fit scores the pod's
# container requests with the non-zero defaults, ignoring pod-level requests.
NODE_RESOURCE_STRATEGY_TYPE_MAP: Dict[str, Callable[[Dict[str, Any]], ResourceAllocationScorer]] = {
    fitargs.LEAST_ALLOCATED: _least_allocated,
    fitargs.MOST_ALLOCATED: _most_allocated,
    fitargs.REQUESTED_TO_CAPACITY_RATIO: _requested_to_capacity_ratio,
}


# ---------------------------------------------------------------------------------------------
# The plugin
# ---------------------------------------------------------------------------------------------
class Fit(Plugin):
    """NodeResourcesFit. Feature gates as in v1.34 (class attributes, so tests can flip them)."""

    name = NAME
    args_kind = "NodeResourcesFitArgs"

    enable_in_place_pod_vertical_scaling = True  # InPlacePodVerticalScaling: beta, on
    enable_sidecar_containers = True  # SidecarContainers: GA
    enable_scheduling_queue_hint = True  # SchedulerQueueingHints: GA
    enable_pod_level_resources = True  # PodLevelResources: beta, on
    enable_dra_extended_resource = False  # DRAExtendedResource: from the handle's gates

    @classmethod
    def set_defaults(cls, args: Dict[str, Any]) -> Dict[str, Any]:
        return fitargs.set_defaults_node_resources_fit_args(args)

    @classmethod
    def validate_args(cls, args: Dict[str, Any], features=None) -> List[Tuple[str, str]]:
        return fitargs.validate_node_resources_fit_args(args, features=features)

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        """NewFit."""
        if args is None:
            args = self.set_defaults({})
        super().__init__(args, handle)
        errs = fitargs.validate_node_resources_fit_args(args, features=features_of(handle))
        if errs:
            raise ValueError(fitargs.aggregate(errs))
        strategy = args.get("scoringStrategy")
        if strategy is None:
            raise ValueError("scoring strategy not specified")
        factory = NODE_RESOURCE_STRATEGY_TYPE_MAP.get(strategy.get("type") or "")
        if factory is None:
            raise ValueError(f"scoring strategy {strategy.get('type') or ''} is not supported")
        self.ignored_resources: Set[str] = set(args.get("ignoredResources") or [])
        self.ignored_resource_groups: Set[str] = set(args.get("ignoredResourceGroups") or [])
        self.scorer: ResourceAllocationScorer = factory(strategy)
        self.gates = features_of(handle)
        self.enable_dra_extended_resource = self.gates.enabled("DRAExtendedResource")
        self._cluster = getattr(handle, "cluster", None)
        if self.enable_dra_extended_resource and self._cluster is not None:
            extended = _extended()
            extended.class_resolver(self._cluster, self.gates)  # the DRA manager's, from the start
        # InPlacePodLevelResourcesVerticalScaling (alpha off in v1.35, beta on in v1.36; unknown
        # in v1.34): the scale-down hint reads a resized pod's pod-level status resources
        self.enable_in_place_pod_level_resources_vertical_scaling: bool = self.gates.get(
            "InPlacePodLevelResourcesVerticalScaling", False)

    def _delegate(self, mapping: Any = None, hint: bool = False) -> Optional[Delegate]:
        """The DRA test of fitsRequest (None with DRAExtendedResource off): v1.35 on the class
        cache; v1.34 the PreFilter's mapping (a queueing hint has none)."""
        if not self.enable_dra_extended_resource:
            return None
        extended = _extended()
        if self.gates.has(extended.CHANGE):
            if self._cluster is None:
                return None
            return delegate_v135(extended.class_resolver(self._cluster, self.gates))
        return delegate_v134(None if hint else mapping)

    @property
    def resources(self) -> List[Tuple[str, int]]:
        return self.scorer.resources

    # ---- PreFilter / Filter -----------------------------------------------------------------
    @hookimpl
    def sign_pod(self, pod):
        """SignPod: the pod's requests as PreFilter computes them (containers, init containers,
        overhead, pod-level resources); DRAExtendedResource as sign_resources says."""
        return sign_resources(pod, self.enable_pod_level_resources, self.gates, self._cluster)

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        if not self.enable_sidecar_containers and has_restartable_init_container(pod):
            return None, Status.unresolvable(ERR_REASON_SIDECARS_DISABLED)
        result = PreFilterState(compute_pod_resource_request(pod, self.enable_pod_level_resources))
        if self.enable_dra_extended_resource:
            extended = _extended()
            if not self.gates.has(extended.CHANGE):
                result.resource_to_device_class = with_device_class(result.resource, self._cluster, self.gates)
            result.delegate = self._delegate(result.resource_to_device_class)
        state.write(PRE_FILTER_STATE_KEY, result)
        return None, None

    @hookimpl
    def filter(self, state, pod, node_info):
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.error(RuntimeError(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'))
        if not s.has_scalars:
            # Fast path: fitsRequest finds nothing missing (the usual answer) when the node has
            # room for one more pod and for each of cpu, memory and ephemeral storage that the
            # pod requests. Anything else takes fitsRequest for the reasons.
            alloc = node_info.allocatable
            if len(node_info.pods) < alloc.allowed_pod_number:
                used = node_info.requested
                cpu, mem, eph = s.milli_cpu, s.memory, s.ephemeral_storage
                if ((cpu <= 0 or cpu <= alloc.milli_cpu - used.milli_cpu)
                        and (mem <= 0 or mem <= alloc.memory - used.memory)
                        and (eph <= 0 or eph <= alloc.ephemeral_storage - used.ephemeral_storage)):
                    return None
        insufficient = fits_request(s.resource, node_info, self.ignored_resources, self.ignored_resource_groups,
                                    s.delegate)
        if not insufficient:
            return None
        code = Code.Unschedulable
        for ir in insufficient:
            if ir.unresolvable:
                code = Code.UnschedulableAndUnresolvable
        return Status(code, *[ir.reason for ir in insufficient])

    def filter_nodes(self, state, pod, nodes):
        """filter on each node (the batch form the framework calls)."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return None
        if s.has_scalars:
            if nodes.__class__ is NodeRows and max(abs(s.milli_cpu), abs(s.memory),
                                                   abs(s.ephemeral_storage)) < node_table.LIMIT:
                return _fit_rows_scalars(nodes, s, self.ignored_resources, self.ignored_resource_groups)
            return None
        cpu, mem, eph = s.milli_cpu, s.memory, s.ephemeral_storage
        flt = self.filter
        if nodes.__class__ is NodeRows and max(cpu, mem, eph) < node_table.LIMIT:
            return _fit_rows(nodes, cpu, mem, eph)
        if cpu > 0 and mem > 0 and eph <= 0:
            # the usual pod: the fast path's test in one comprehension, filter for the others
            ok = [len(ni.pods) < (a := ni.allocatable).allowed_pod_number
                  and cpu <= a.milli_cpu - (u := ni.requested).milli_cpu and mem <= a.memory - u.memory
                  for ni in nodes]
            if all(ok):
                return [None] * len(nodes)
            return [None if k else _insufficient_cpu_memory(cpu, mem, ni) for k, ni in zip(ok, nodes)]
        out = []
        append = out.append
        for ni in nodes:
            alloc = ni.allocatable
            used = ni.requested
            if (len(ni.pods) < alloc.allowed_pod_number
                    and (cpu <= 0 or cpu <= alloc.milli_cpu - used.milli_cpu)
                    and (mem <= 0 or mem <= alloc.memory - used.memory)
                    and (eph <= 0 or eph <= alloc.ephemeral_storage - used.ephemeral_storage)):
                append(None)
            else:
                append(flt(state, pod, ni))
        return out

    # ---- Queueing hints ---------------------------------------------------------------------
    @hookimpl
    def events_to_register(self):
        pod_action = ActionType.Delete
        if self.enable_in_place_pod_vertical_scaling:
            # A pod scaled down in place may free room.
            pod_action |= ActionType.UpdatePodScaleDown
        node_action = (ActionType.Add | ActionType.UpdateNodeAllocatable | ActionType.UpdateNodeTaint
                       | ActionType.UpdateNodeLabel)
        if self.enable_scheduling_queue_hint:
            node_action = ActionType.Add | ActionType.UpdateNodeAllocatable
        events = [
            ClusterEventWithHint(ClusterEvent(EventResource.Pod, pod_action), self.is_schedulable_after_pod_event),
            ClusterEventWithHint(ClusterEvent(EventResource.Node, node_action), self.is_schedulable_after_node_change),
        ]
        extended = _extended()
        if self.enable_dra_extended_resource and self.gates.has(extended.CHANGE):
            # v1.35 on: a pod might wait for a class mapping its extended resource
            events.append(ClusterEventWithHint(ClusterEvent(EventResource.DeviceClass, ActionType.Add | ActionType.Update),
                                               self.is_schedulable_after_device_class_event))
        return events

    def is_schedulable_after_device_class_event(self, pod, old_obj, new_obj) -> QueueingHint:
        """isSchedulableAfterDeviceClassEvent: a class added whose implicit name the pod
        requests, or whose extendedResourceName (added, or changed by an update) the pod
        requests."""
        extended = _extended()
        from harness.api.pod_resources import pod_requests
        from harness.api.objects import KubeObject
        if not isinstance(new_obj, KubeObject) or (old_obj is not None and not isinstance(old_obj, KubeObject)):
            return QueueingHint.Queue  # not a DeviceClass: an error upstream, which queues
        new_ern = new_obj.spec.get("extendedResourceName")
        reqs = pod_requests(pod.spec)
        if old_obj is not None:
            if (old_obj.spec.get("extendedResourceName") or "") == (new_ern or ""):
                return QueueingHint.QueueSkip
        elif extended.RESOURCE_DEVICE_CLASS_PREFIX + new_obj.name in reqs:
            return QueueingHint.Queue
        if new_ern is not None and new_ern in reqs:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_event(self, pod, old_obj, new_obj) -> QueueingHint:
        """isSchedulableAfterPodEvent: a scheduled (or nominated) pod deleted, or a pod scaled
        down in a resource the pod requests."""
        if (old_obj is not None and not isinstance(old_obj, Pod)) or (
                new_obj is not None and not isinstance(new_obj, Pod)):
            return QueueingHint.Queue
        original, modified = old_obj, new_obj
        if modified is None:
            if original is None or (not original.node_name and not original.nominated_node_name):
                return QueueingHint.QueueSkip
            return QueueingHint.Queue
        if not self.enable_in_place_pod_vertical_scaling:
            return QueueingHint.QueueSkip
        if original is None:  # not an update; only the pod's own scale-down counts then
            return QueueingHint.Queue if modified.uid == pod.uid else QueueingHint.QueueSkip
        if not self.is_schedulable_after_pod_scale_down(pod, original, modified):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    def is_schedulable_after_pod_scale_down(self, target: Pod, original: Pod, modified: Pod) -> bool:
        """isSchedulableAfterPodScaleDown."""
        if modified.uid == target.uid:
            return True
        if not modified.node_name:
            return False
        opts = dict(use_status_resources=self.enable_in_place_pod_vertical_scaling,
                    pod_level_resize=self.enable_in_place_pod_level_resources_vertical_scaling)
        orig_max, mod_max = Resource(), Resource()
        orig_max.set_max_resource(pod_requests_opts(original, **opts))
        mod_max.set_max_resource(pod_requests_opts(modified, **opts))
        for name, value in pod_requests_opts(target, **opts).items():
            if value == 0:
                continue
            if name == "cpu":
                if orig_max.milli_cpu > mod_max.milli_cpu:
                    return True
            elif name == "memory":
                if orig_max.memory > mod_max.memory:
                    return True
            elif name == "ephemeral-storage":
                if orig_max.ephemeral_storage > mod_max.ephemeral_storage:
                    return True
            elif is_scalar_resource_name(name):
                if orig_max.scalar_resources.get(name, 0) > mod_max.scalar_resources.get(name, 0):
                    return True
        return False

    def is_schedulable_after_node_change(self, pod, old_obj, new_obj) -> QueueingHint:
        """isSchedulableAfterNodeChange: a node added that the pod fits on, or a node whose
        allocatable grew in what the pod requests and that the pod now fits on."""
        if (old_obj is not None and not isinstance(old_obj, Node)) or (
                new_obj is not None and not isinstance(new_obj, Node)):
            return QueueingHint.Queue
        original, modified = old_obj, new_obj
        delegate = self._delegate(hint=True)
        if not is_fit(pod, modified, self.enable_pod_level_resources, delegate):
            return QueueingHint.QueueSkip
        if original is None:
            return QueueingHint.Queue
        if not have_any_requested_resources_increased(pod, original, modified, self.enable_pod_level_resources,
                                                      delegate):
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    # ---- PreScore / Score -------------------------------------------------------------------
    def _dra_pre_score(self):
        """getDRAPreScoredParams (DRAExtendedResource, v1.35 on), else None."""
        if not self.enable_dra_extended_resource:
            return None
        dra_scoring = _dra_scoring()
        if not hasattr(self, "_dra_caches"):
            from harness.api.dra_cel import CELCache
            self._dra_caches = (CELCache(), {})
        return dra_scoring.get_dra_pre_scored_params(self.handle, self.gates, self.scorer.resources,
                                                     *self._dra_caches)

    @hookimpl
    def pre_score(self, state, pod, nodes):
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(self.scorer.calculate_pod_resource_request_list(pod),
                                                       self._dra_pre_score()))
        return None

    @hookimpl
    def score(self, state, pod, node_info):
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            s = PreScoreState(self.scorer.calculate_pod_resource_request_list(pod), self._dra_pre_score())
        if s.dra is not None:
            dra_scoring = _dra_scoring()
            return dra_scoring.score(self.scorer, NAME, node_info, s.pod_requests, s.dra)
        return self.scorer.score(pod, node_info, s.pod_requests)

    def score_nodes(self, state, pod, nodes):
        """score on each node (the batch form the framework calls)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None or s.dra is not None:
            return None
        return self.scorer.score_nodes(pod, nodes, s.pod_requests)
