"""The scorer shared by NodeResourcesFit's strategies and NodeResourcesBalancedAllocation
(framework/plugins/noderesources/resource_allocation.go), and the pod-request arithmetic it uses.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from harness.api.pod_resources import (DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST,
                                       is_scalar_resource_name, pod_requests, status_resources_spec)
from harness.framework import Code, Status
from harness.framework import node_table
from harness.framework.node_table import NodeRows

# One entry of the args' resources: (resource name, weight).
ResourceSpec = Tuple[str, int]
Scorer = Callable[[List[int], List[int]], int]
# A strategy's scorer specialised to resources == [cpu, memory] on a node that has both:
# (requested cpu, allocatable cpu, requested memory, allocatable memory) -> the same score the
# list scorer gives for ([requested cpu, requested memory], [allocatable cpu, allocatable memory]).
# It is only called with both allocatables > 0. A scorer of the change (with_allocated) also takes
# the node's requested cpu and memory before the pod: (..., allocated cpu, allocated memory).
CpuMemoryScorer = Callable[..., int]

# schedutil.DefaultMilliCPURequest / DefaultMemoryRequest as the NonMissingContainerRequests
# that resourceAllocationScorer.calculatePodResourceRequest passes to PodRequests.
NON_MISSING_DEFAULTS: Dict[str, Fraction] = {
    "cpu": Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    "memory": Fraction(DEFAULT_MEMORY_REQUEST),
}

# How calculateResourceAllocatableRequest treats a resource name (its switch, decided once).
_CPU, _MEMORY, _EPHEMERAL, _SCALAR, _OTHER = range(5)



def _kind(name: str) -> int:
    if name == "cpu":
        return _CPU
    if name == "memory":
        return _MEMORY
    if name == "ephemeral-storage":
        return _EPHEMERAL
    if is_scalar_resource_name(name):
        return _SCALAR
    return _OTHER


def cpu_memory_weights(resources: Optional[Sequence[ResourceSpec]]) -> Optional[Tuple[int, int]]:
    """(cpu weight, memory weight) when the resources are exactly [cpu, memory] with positive
    weights (the default, and what validation enforces), else None: the case the strategies'
    CpuMemoryScorers specialise."""
    if resources is None or len(resources) != 2:
        return None
    (n0, w0), (n1, w1) = resources
    if n0 != "cpu" or n1 != "memory" or w0 <= 0 or w1 <= 0:
        return None
    return w0, w1


def weighted_score_columns(weights: Sequence[int], requested, allocatable, resource_score):
    """leastResourceScorer's and mostResourceScorer's weighted average over int64 columns, one
    per resource: resource_score(requested, allocatable, allocatable with 1 for 0) per node,
    entries whose allocatable is 0 left out, the sum divided by the weights counted (0 when
    none is), in Go's integer division."""
    from ._gomath import go_div_columns
    np = node_table.numpy()
    node_score = weight_sum = 0
    for w, req, alloc in zip(weights, requested, allocatable):
        present = alloc != 0
        sc = resource_score(req, alloc, np.where(present, alloc, 1))
        node_score = node_score + np.where(present, sc * w, 0)
        weight_sum = weight_sum + np.where(present, w, 0)
    return np.where(weight_sum == 0, 0, go_div_columns(node_score, np.where(weight_sum == 0, 1, weight_sum)))


def _ceil(f) -> int:
    return -((-f.numerator) // f.denominator)


def pod_requests_opts(pod, *, use_status_resources: bool = False, skip_pod_level: bool = False,
                      non_missing: Optional[Mapping[str, Fraction]] = None,
                      pod_level_resize: bool = False) -> Dict[str, Fraction]:
    """resourcehelper.PodRequests(pod, PodResourcesOptions{...}) for the options the scheduler's
    resource plugins use (`pod_level_resize`: InPlacePodLevelResourcesVerticalScalingEnabled,
    read only with UseStatusResources)."""
    spec = status_resources_spec(pod, pod_level_resize) if use_status_resources else pod.spec
    return pod_requests(spec, non_missing=non_missing, skip_pod_level=skip_pod_level)


def _allocatable_request(node_info, kind: int, name: str, pod_request: int,
                         use_requested: bool) -> Tuple[int, int]:
    """calculateResourceAllocatableRequest with the resource's switch case decided beforehand."""
    if pod_request == 0 and kind == _SCALAR:
        # An extended resource the pod does not request is left out of the score.
        return 0, 0
    if kind == _CPU:
        requested = node_info.requested if use_requested else node_info.non_zero_requested
        return node_info.allocatable.milli_cpu, requested.milli_cpu + pod_request
    if kind == _MEMORY:
        requested = node_info.requested if use_requested else node_info.non_zero_requested
        return node_info.allocatable.memory, requested.memory + pod_request
    if kind == _EPHEMERAL:
        return node_info.allocatable.ephemeral_storage, node_info.requested.ephemeral_storage + pod_request
    scalars = node_info.allocatable.scalar_resources
    if name in scalars:
        return scalars[name], node_info.requested.scalar_resources.get(name, 0) + pod_request
    return 0, 0


# ---------------------------------------------------------------------------------------------
# resourceAllocationScorer
# ---------------------------------------------------------------------------------------------
class ResourceAllocationScorer:
    """resourceAllocationScorer: `resources` are (name, weight) pairs; `use_requested` picks the
    node's Requested (True) or NonZeroRequested (False) cpu and memory. `cpu_memory_scorer`, the
    strategy's scorer specialised to resources == [cpu, memory], is a shortcut of `scorer` that
    score uses on nodes with positive cpu and memory allocatable (ignored for other resources).

    `with_allocated` (v1.36's scorer signature, which BalancedAllocation's scorer of the change
    in balance reads): `scorer(requested, allocated, allocatable)` with `allocated` the node's
    requests before the pod (calculateNodeAllocatableRequest), and the cpu/memory scorer gets the
    node's cpu and memory before the pod as two more arguments."""

    def __init__(self, name: str, scorer: Scorer, resources: Optional[Sequence[ResourceSpec]], *,
                 use_requested: bool = False, enable_pod_level_resources: bool = False,
                 enable_in_place_pod_vertical_scaling: bool = False,
                 enable_in_place_pod_level_resources_vertical_scaling: bool = False,
                 cpu_memory_scorer: Optional[CpuMemoryScorer] = None, with_allocated: bool = False):
        self.name = name
        self.with_allocated = with_allocated
        self.scorer = scorer
        self.resources: List[ResourceSpec] = list(resources or [])
        self.cpu_memory_scorer: Optional[CpuMemoryScorer] = (
            cpu_memory_scorer if [n for n, _ in self.resources] == ["cpu", "memory"] else None)
        self.use_requested = use_requested
        self.enable_pod_level_resources = enable_pod_level_resources
        self.enable_in_place_pod_vertical_scaling = enable_in_place_pod_vertical_scaling
        self.enable_in_place_pod_level_resources_vertical_scaling = \
            enable_in_place_pod_level_resources_vertical_scaling
        self._kinds = [_kind(n) for n, _ in self.resources]
        self._names = [n for n, _ in self.resources]
        self._memo_key = "noderesources.requests:%d%d%d%d:%s" % (
            use_requested, enable_pod_level_resources, enable_in_place_pod_vertical_scaling,
            enable_in_place_pod_level_resources_vertical_scaling,
            "\x00".join(n for n, _ in self.resources))

    def score(self, pod, node_info, pod_request_list: Sequence[int]) -> Tuple[int, Optional[Status]]:
        """resourceAllocationScorer.score."""
        fast = self.cpu_memory_scorer
        if fast is not None:
            # resources == [cpu, memory] (the default): calculateResourceAllocatableRequest of
            # both without building the lists; when the node has both, no entry is skipped and
            # the specialised scorer gives what the list scorer would.
            alloc = node_info.allocatable
            alloc_cpu = alloc.milli_cpu
            alloc_mem = alloc.memory
            if alloc_cpu > 0 and alloc_mem > 0:
                requested = node_info.requested if self.use_requested else node_info.non_zero_requested
                if self.with_allocated:
                    return fast(requested.milli_cpu + pod_request_list[0], alloc_cpu,
                                requested.memory + pod_request_list[1], alloc_mem,
                                requested.milli_cpu, requested.memory), None
                return fast(requested.milli_cpu + pod_request_list[0], alloc_cpu,
                            requested.memory + pod_request_list[1], alloc_mem), None
        if not self.resources:
            return 0, Status(Code.Error, "resources not found")
        n = len(self.resources)
        requested = [0] * n
        allocatable = [0] * n
        kinds, names = self._kinds, self._names
        for i in range(n):
            alloc, req = _allocatable_request(node_info, kinds[i], names[i], pod_request_list[i],
                                              self.use_requested)
            # Only fill the extended resource entry when it's non-zero.
            if alloc == 0:
                continue
            allocatable[i] = alloc
            requested[i] = req
        if self.with_allocated:
            # calculateNodeAllocatableRequest (v1.36): allocated is what requested adds the pod to
            allocated = [requested[i] - pod_request_list[i] if allocatable[i] else 0 for i in range(n)]
            return self.scorer(requested, allocated, allocatable), None
        return self.scorer(requested, allocatable), None

    def score_nodes(self, pod, nodes, pod_request_list: Sequence[int]) -> Optional[List[int]]:
        """score on each node (its batch form); None when a node's score is an error status."""
        fast = self.cpu_memory_scorer
        score = self.score
        out: List[int] = []
        append = out.append
        use_requested = self.use_requested
        with_allocated = self.with_allocated
        if fast is not None:
            pc, pm = pod_request_list[0], pod_request_list[1]
            columns = getattr(fast, "columns", None)
            if (columns is not None and nodes.__class__ is NodeRows and nodes
                    and -node_table.LIMIT < pc < node_table.LIMIT and -node_table.LIMIT < pm < node_table.LIMIT):
                t, r = nodes.table, nodes.rows
                col = t.derived((columns, use_requested, with_allocated, pc, pm),
                                lambda rows: _cpu_memory_at(t, rows, columns, use_requested, with_allocated, pc, pm),
                                lambda i: _cpu_memory_one(t, i, fast, use_requested, with_allocated, pc, pm))[r]
                if col.min() > _NO_SCORE:  # every node has both allocatables
                    return col.copy() if r.__class__ is slice else col  # (never a view of the table)
        if nodes.__class__ is NodeRows and nodes:
            col = self._score_rows(nodes, pod_request_list)
            if col is not None:
                return col
        if fast is None:
            for ni in nodes:
                sc, st = score(pod, ni, pod_request_list)
                if st is not None and st.code != Code.Success:
                    return None
                append(sc)
            return out
        pc, pm = pod_request_list[0], pod_request_list[1]
        many = getattr(fast, "many", None)
        if many is not None:
            allocs = [ni.allocatable for ni in nodes]
            acpu = [a.milli_cpu for a in allocs]
            amem = [a.memory for a in allocs]
            if nodes and min(acpu) > 0 and min(amem) > 0:
                reqs = ([ni.requested for ni in nodes] if use_requested
                        else [ni.non_zero_requested for ni in nodes])
                if with_allocated:
                    return many([r.milli_cpu + pc for r in reqs], acpu, [r.memory + pm for r in reqs], amem,
                                [r.milli_cpu for r in reqs], [r.memory for r in reqs])
                return many([r.milli_cpu + pc for r in reqs], acpu, [r.memory + pm for r in reqs], amem)
        for ni in nodes:
            alloc = ni.allocatable
            ac = alloc.milli_cpu
            am = alloc.memory
            if ac > 0 and am > 0:
                r = ni.requested if use_requested else ni.non_zero_requested
                if with_allocated:
                    append(fast(r.milli_cpu + pc, ac, r.memory + pm, am, r.milli_cpu, r.memory))
                else:
                    append(fast(r.milli_cpu + pc, ac, r.memory + pm, am))
            else:
                sc, st = score(pod, ni, pod_request_list)
                if st is not None and st.code != Code.Success:
                    return None
                append(sc)
        return out

    def _score_rows(self, nodes: NodeRows, pod_request_list: Sequence[int]):
        """score's general path (every resource of the list, calculateResourceAllocatableRequest
        on the table's columns, scalar resources included) over rows of the node table, with the
        strategy's scorer over columns (its `columns` form: lists of int64 columns, an entry
        whose allocatable is 0 left out as score leaves it out). None when the scorer has no
        such form, there are no resources, a request is negative or out of the table's range."""
        columns = getattr(self.scorer, "columns", None)
        if columns is None or not self.resources:
            return None
        limit = node_table.LIMIT
        for pr in pod_request_list:
            if not 0 <= pr < limit:
                return None
        t, r = nodes.table, nodes.rows
        np = node_table.numpy()
        use_requested = self.use_requested
        requested, allocatable = [], []
        for kind, name, pr in zip(self._kinds, self._names, pod_request_list):
            if kind == _CPU:
                alloc, req = t.alloc_cpu[r], (t.req_cpu if use_requested else t.nz_cpu)[r] + pr
            elif kind == _MEMORY:
                alloc, req = t.alloc_mem[r], (t.req_mem if use_requested else t.nz_mem)[r] + pr
            elif kind == _EPHEMERAL:
                alloc, req = t.alloc_eph[r], t.req_eph[r] + pr
            elif pr == 0 and kind == _SCALAR:
                # an extended resource the pod does not request is left out of the score
                alloc = req = np.zeros(len(nodes), dtype=np.int64)
            else:
                alloc_col, req_col, _ = t.scalar(name)
                if not t.safe:
                    return None
                alloc, req = alloc_col[r], req_col[r] + pr
            if len(req) and int(req.min()) < 0:
                return None
            requested.append(req)
            allocatable.append(alloc)
        if self.with_allocated:
            # calculateNodeAllocatableRequest (v1.36): allocated is what requested adds the pod to
            allocated = [np.where(a != 0, q - pr, 0) for q, a, pr in zip(requested, allocatable, pod_request_list)]
            return columns(requested, allocated, allocatable)
        return columns(requested, allocatable)

    def calculate_resource_allocatable_request(self, node_info, resource: str,
                                               pod_request: int) -> Tuple[int, int]:
        """calculateResourceAllocatableRequest: (the node's allocatable, the node's requested plus
        the pod's request) of one resource; (0, 0) for an extended resource the pod does not
        request or a resource the node does not have."""
        return _allocatable_request(node_info, _kind(resource), resource, pod_request,
                                    self.use_requested)

    def calculate_pod_resource_request(self, pod, resource: str) -> int:
        """calculatePodResourceRequest: the pod's (non-zero unless use_requested) request of one
        resource, overhead included; milli-units for cpu."""
        reqs = pod_requests_opts(
            pod, use_status_resources=self.enable_in_place_pod_vertical_scaling,
            skip_pod_level=not self.enable_pod_level_resources,
            pod_level_resize=self.enable_in_place_pod_level_resources_vertical_scaling,
            non_missing=None if self.use_requested else NON_MISSING_DEFAULTS)
        q = reqs.get(resource)
        if q is None:
            return 0
        return _ceil(q * 1000) if resource == "cpu" else _ceil(q)

    def calculate_pod_resource_request_list(self, pod) -> List[int]:
        """calculatePodResourceRequestList over the configured resources (cached on the pod)."""

        def compute(p) -> List[int]:
            reqs = pod_requests_opts(
                p, use_status_resources=self.enable_in_place_pod_vertical_scaling,
                skip_pod_level=not self.enable_pod_level_resources,
                pod_level_resize=self.enable_in_place_pod_level_resources_vertical_scaling,
                non_missing=None if self.use_requested else NON_MISSING_DEFAULTS)
            out = []
            for name, _ in self.resources:
                q = reqs.get(name)
                out.append(0 if q is None else (_ceil(q * 1000) if name == "cpu" else _ceil(q)))
            return out

        return list(pod.resource_memo(self._memo_key, compute))

    @staticmethod
    def is_best_effort_pod(pod_request_list: Sequence[int]) -> bool:
        """isBestEffortPod: no configured resource is requested."""
        return all(r == 0 for r in pod_request_list)


# a derived column's entry for a node lacking a positive cpu or memory allocatable
_NO_SCORE = -(1 << 63)


def _cpu_memory_at(t, r, columns, use_requested: bool, with_allocated: bool, pc: int, pm: int):
    """The cpu/memory scorer's `columns` form at rows r of table t, for a pod requesting pc and
    pm; _NO_SCORE where the node's cpu or memory allocatable is not positive (score's general
    path decides there)."""
    np = node_table.numpy()
    acpu = t.alloc_cpu[r]
    amem = t.alloc_mem[r]
    bcpu = (t.req_cpu if use_requested else t.nz_cpu)[r]
    bmem = (t.req_mem if use_requested else t.nz_mem)[r]
    ok = (acpu > 0) & (amem > 0)
    if not ok.all():  # (the scorer's divisions kept away from them)
        acpu = np.where(ok, acpu, 1)
        amem = np.where(ok, amem, 1)
    if with_allocated:
        out = columns(bcpu + pc, acpu, bmem + pm, amem, bcpu, bmem)
    else:
        out = columns(bcpu + pc, acpu, bmem + pm, amem)
    return np.where(ok, out, _NO_SCORE)


def _cpu_memory_one(t, i: int, fast, use_requested: bool, with_allocated: bool, pc: int, pm: int) -> int:
    """_cpu_memory_at at row i, with the cpu/memory scorer itself (in Python)."""
    acpu = int(t.alloc_cpu[i])
    amem = int(t.alloc_mem[i])
    if acpu <= 0 or amem <= 0:
        return _NO_SCORE
    bcpu = int((t.req_cpu if use_requested else t.nz_cpu)[i])
    bmem = int((t.req_mem if use_requested else t.nz_mem)[i])
    if with_allocated:
        return fast(bcpu + pc, acpu, bmem + pm, amem, bcpu, bmem)
    return fast(bcpu + pc, acpu, bmem + pm, amem)
