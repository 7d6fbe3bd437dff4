"""NodeResourcesFit and NodeResourcesBalancedAllocation: ports of the upstream table tests
(fit_test.go, least_allocated_test.go, most_allocated_test.go,
requested_to_capacity_ratio_test.go, balanced_allocation_test.go, resource_allocation_test.go).
Cases that need DRAExtendedResource (alpha, off in v1.34) are left out."""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any, Dict, List, Optional

import pytest

from builtin_plugins.noderesources import BalancedAllocation, Fit
from builtin_plugins.noderesources import args as nrargs
from builtin_plugins.noderesources._gomath import go_div, go_round
from builtin_plugins.noderesources.balanced_allocation import balanced_resource_scorer
from builtin_plugins.noderesources.fit import (InsufficientResource, compute_pod_resource_request,
                                               fits_request, have_any_requested_resources_increased,
                                               is_fit)
from builtin_plugins.noderesources.resource_allocation import ResourceAllocationScorer
from builtin_plugins.noderesources.shape_score import (FunctionShapePoint,
                                                       build_broken_linear_function)
from harness.api.objects import Node, Pod
from harness.framework import (ActionType, ClusterEvent, Code, CycleState, EventResource, NodeInfo,
                               QueueingHint, Status)
from harness.scheduler.snapshot import Snapshot
from harness.versions import resolve

_uid = itertools.count(1)

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
EXT_RES = "abc.com/xyz"

DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXTENDED_RESOURCE_SET = DEFAULT_RESOURCES + [{"name": EXT_RES, "weight": 1}]


# ---------------------------------------------------------------------------------------------
# Builders (st.MakePod / st.MakeNode / newResourcePod equivalents)
# ---------------------------------------------------------------------------------------------
def mk_pod(*containers: Optional[Dict[str, Any]], name: str = "", uid: str = "", node: str = "",
           init: Optional[List[Dict[str, Any]]] = None, overhead: Optional[Dict[str, Any]] = None,
           pod_level: Optional[Dict[str, Any]] = None, nominated: str = "") -> Pod:
    """A pod with one container per requests dict (None: a container without requests).
    `init` entries are whole container dicts."""
    n = next(_uid)
    spec: Dict[str, Any] = {"containers": [
        {"name": f"c{i}"} if r is None else {"name": f"c{i}", "resources": {"requests": dict(r)}}
        for i, r in enumerate(containers)]}
    if init:
        spec["initContainers"] = init
    if overhead:
        spec["overhead"] = overhead
    if pod_level is not None:
        spec["resources"] = {"requests": pod_level}
    if node:
        spec["nodeName"] = node
    raw = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name or f"pod-{n}", "namespace": "default", "uid": uid or f"uid-{n}"},
           "spec": spec}
    if nominated:
        raw["status"] = {"nominatedNodeName": nominated}
    return Pod(raw)


def res(cpu_m: int = 0, mem: int = 0, eph: int = 0, scalars: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """newResourcePod's requests: cpu, memory, pods and ephemeral-storage always set."""
    rl = {"cpu": f"{cpu_m}m", "memory": str(mem), "pods": "0", "ephemeral-storage": str(eph)}
    for k, v in (scalars or {}).items():
        rl[k] = str(v)
    return rl


def init_containers(*reqs: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [{"name": f"i{i}", "resources": {"requests": r}} for i, r in enumerate(reqs)]


def mk_node(name: str = "node", alloc: Optional[Dict[str, Any]] = None) -> Node:
    return Node({"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                 "status": {"capacity": dict(alloc or {}), "allocatable": dict(alloc or {})}})


def cap_node(name: str, **alloc: str) -> Node:
    return mk_node(name, {k.replace("_", "/"): v for k, v in alloc.items()})


def node_info(node: Node, *pods: Pod) -> NodeInfo:
    ni = NodeInfo(*pods)
    ni.set_node(node)
    return ni


def fit_args(strategy_type: str = "LeastAllocated", resources: Any = DEFAULT_RESOURCES,
             shape: Optional[List[Dict[str, int]]] = None, **extra: Any) -> Dict[str, Any]:
    ss: Dict[str, Any] = {"type": strategy_type, "resources": resources}
    if shape is not None:
        ss["requestedToCapacityRatio"] = {"shape": shape}
    out = {"scoringStrategy": ss}
    out.update(extra)
    return out


def run_filter(plugin: Fit, pod: Pod, ni: NodeInfo) -> Optional[Status]:
    state = CycleState()
    _, st = plugin.pre_filter(state, pod, [ni])
    assert st is None
    return plugin.filter(state, pod, ni)


def score_nodes(plugin, pod: Pod, nodes: List[Node], pods: List[Pod], run_pre_score: bool = True):
    snap = Snapshot.from_objects(pods, nodes)
    state = CycleState()
    if run_pre_score:
        st = plugin.pre_score(state, pod, snap.list())
        assert st is None or st.code == Code.Success
    out = []
    for n in nodes:
        s, st = plugin.score(state, pod, snap.get(n.name))
        out.append((n.name, s, st))
    return out


def scores_of(results) -> List[int]:
    for _, _, st in results:
        assert st is None
    return [s for _, s, _ in results]


# ---------------------------------------------------------------------------------------------
# fit_test.go: TestEnoughRequests
# ---------------------------------------------------------------------------------------------
FILTER_NODE_ALLOC = {"cpu": "10m", "memory": "20", "pods": "32", EXT_A: "5", "ephemeral-storage": "20",
                     HUGE_A: "5"}


def U(reason, name, requested, used, capacity, unresolvable=False):
    return InsufficientResource(name, reason, requested, used, capacity, unresolvable)


def ins(name, requested, used, capacity, unresolvable=False):
    return U(f"Insufficient {name}", name, requested, used, capacity, unresolvable)


UNSCHED, UNRES = Code.Unschedulable, Code.UnschedulableAndUnresolvable

ENOUGH_REQUESTS = [
    ("no resources requested always fits", mk_pod(), [mk_pod(res(10, 20))], {}, None, []),
    ("too many resources fails", mk_pod(res(1, 1)), [mk_pod(res(10, 20))], {},
     (UNSCHED, ["Insufficient cpu", "Insufficient memory"]), [ins("cpu", 1, 10, 10), ins("memory", 1, 20, 20)]),
    ("too many resources fails due to init container cpu",
     mk_pod(res(1, 1), init=init_containers(res(3, 1))), [mk_pod(res(8, 19))], {},
     (UNSCHED, ["Insufficient cpu"]), [ins("cpu", 3, 8, 10)]),
    ("too many resources fails due to highest init container cpu",
     mk_pod(res(1, 1), init=init_containers(res(3, 1), res(2, 1))), [mk_pod(res(8, 19))], {},
     (UNSCHED, ["Insufficient cpu"]), [ins("cpu", 3, 8, 10)]),
    ("too many resources fails due to init container memory",
     mk_pod(res(1, 1), init=init_containers(res(1, 3))), [mk_pod(res(9, 19))], {},
     (UNSCHED, ["Insufficient memory"]), [ins("memory", 3, 19, 20)]),
    ("too many resources fails due to highest init container memory",
     mk_pod(res(1, 1), init=init_containers(res(1, 3), res(1, 2))), [mk_pod(res(9, 19))], {},
     (UNSCHED, ["Insufficient memory"]), [ins("memory", 3, 19, 20)]),
    ("init container fits because it's the max, not sum, of containers and init containers",
     mk_pod(res(1, 1), init=init_containers(res(1, 1))), [mk_pod(res(9, 19))], {}, None, []),
    ("multiple init containers fit because it's the max, not sum, of containers and init containers",
     mk_pod(res(1, 1), init=init_containers(res(1, 1), res(1, 1))), [mk_pod(res(9, 19))], {}, None, []),
    ("both resources fit", mk_pod(res(1, 1)), [mk_pod(res(5, 5))], {}, None, []),
    ("one resource memory fits", mk_pod(res(2, 1)), [mk_pod(res(9, 5))], {},
     (UNSCHED, ["Insufficient cpu"]), [ins("cpu", 2, 9, 10)]),
    ("one resource cpu fits", mk_pod(res(1, 2)), [mk_pod(res(5, 19))], {},
     (UNSCHED, ["Insufficient memory"]), [ins("memory", 2, 19, 20)]),
    ("equal edge case", mk_pod(res(5, 1)), [mk_pod(res(5, 19))], {}, None, []),
    ("equal edge case for init container", mk_pod(res(4, 1), init=init_containers(res(5, 1))),
     [mk_pod(res(5, 19))], {}, None, []),
    ("extended resource fits", mk_pod(res(scalars={EXT_A: 1})), [mk_pod(res())], {}, None, []),
    ("extended resource fits for init container",
     mk_pod(res(), init=init_containers(res(scalars={EXT_A: 1}))), [mk_pod(res())], {}, None, []),
    ("extended resource capacity enforced", mk_pod(res(1, 1, scalars={EXT_A: 10})),
     [mk_pod(res(scalars={EXT_A: 0}))], {},
     (UNRES, [f"Insufficient {EXT_A}"]), [ins(EXT_A, 10, 0, 5, True)]),
    ("extended resource capacity enforced for init container",
     mk_pod(res(), init=init_containers(res(1, 1, scalars={EXT_A: 10}))), [mk_pod(res(scalars={EXT_A: 0}))], {},
     (UNRES, [f"Insufficient {EXT_A}"]), [ins(EXT_A, 10, 0, 5, True)]),
    ("extended resource allocatable enforced", mk_pod(res(1, 1, scalars={EXT_A: 1})),
     [mk_pod(res(scalars={EXT_A: 5}))], {},
     (UNSCHED, [f"Insufficient {EXT_A}"]), [ins(EXT_A, 1, 5, 5)]),
    ("extended resource allocatable enforced for init container",
     mk_pod(res(), init=init_containers(res(1, 1, scalars={EXT_A: 1}))), [mk_pod(res(scalars={EXT_A: 5}))], {},
     (UNSCHED, [f"Insufficient {EXT_A}"]), [ins(EXT_A, 1, 5, 5)]),
    ("extended resource allocatable enforced for multiple containers",
     mk_pod(res(1, 1, scalars={EXT_A: 3}), res(1, 1, scalars={EXT_A: 3})), [mk_pod(res(scalars={EXT_A: 2}))], {},
     (UNRES, [f"Insufficient {EXT_A}"]), [ins(EXT_A, 6, 2, 5, True)]),
    ("extended resource allocatable admits multiple init containers",
     mk_pod(res(), init=init_containers(res(1, 1, scalars={EXT_A: 3}), res(1, 1, scalars={EXT_A: 3}))),
     [mk_pod(res(scalars={EXT_A: 2}))], {}, None, []),
    ("extended resource allocatable enforced for multiple init containers",
     mk_pod(res(), init=init_containers(res(1, 1, scalars={EXT_A: 6}), res(1, 1, scalars={EXT_A: 3}))),
     [mk_pod(res(scalars={EXT_A: 2}))], {},
     (UNRES, [f"Insufficient {EXT_A}"]), [ins(EXT_A, 6, 2, 5, True)]),
    ("extended resource allocatable enforced for unknown resource", mk_pod(res(1, 1, scalars={EXT_B: 1})),
     [mk_pod(res())], {}, (UNRES, [f"Insufficient {EXT_B}"]), [ins(EXT_B, 1, 0, 0, True)]),
    ("extended resource allocatable enforced for unknown resource for init container",
     mk_pod(res(), init=init_containers(res(1, 1, scalars={EXT_B: 1}))), [mk_pod(res())], {},
     (UNRES, [f"Insufficient {EXT_B}"]), [ins(EXT_B, 1, 0, 0, True)]),
    ("kubernetes.io resource capacity enforced", mk_pod(res(1, 1, scalars={K8S_IO_A: 10})), [mk_pod(res())], {},
     (UNRES, [f"Insufficient {K8S_IO_A}"]), [ins(K8S_IO_A, 10, 0, 0, True)]),
    ("kubernetes.io resource capacity enforced for init container",
     mk_pod(res(), init=init_containers(res(1, 1, scalars={K8S_IO_B: 10}))), [mk_pod(res())], {},
     (UNRES, [f"Insufficient {K8S_IO_B}"]), [ins(K8S_IO_B, 10, 0, 0, True)]),
    ("hugepages resource capacity enforced", mk_pod(res(1, 1, scalars={HUGE_A: 10})),
     [mk_pod(res(scalars={HUGE_A: 0}))], {},
     (UNRES, [f"Insufficient {HUGE_A}"]), [ins(HUGE_A, 10, 0, 5, True)]),
    ("hugepages resource capacity enforced for init container",
     mk_pod(res(), init=init_containers(res(1, 1, scalars={HUGE_A: 10}))), [mk_pod(res(scalars={HUGE_A: 0}))], {},
     (UNRES, [f"Insufficient {HUGE_A}"]), [ins(HUGE_A, 10, 0, 5, True)]),
    ("hugepages resource allocatable enforced for multiple containers",
     mk_pod(res(1, 1, scalars={HUGE_A: 3}), res(1, 1, scalars={HUGE_A: 3})), [mk_pod(res(scalars={HUGE_A: 2}))], {},
     (UNRES, [f"Insufficient {HUGE_A}"]), [ins(HUGE_A, 6, 2, 5, True)]),
    ("skip checking ignored extended resource", mk_pod(res(1, 1, scalars={EXT_B: 1})), [mk_pod(res())],
     {"ignoredResources": ["example.com/bbb"]}, None, []),
    ("resources + pod overhead fits", mk_pod(res(1, 1), overhead={"cpu": "3m", "memory": "13"}),
     [mk_pod(res(5, 5))], {}, None, []),
    ("requests + overhead does not fit for memory", mk_pod(res(1, 1), overhead={"cpu": "1m", "memory": "15"}),
     [mk_pod(res(5, 5))], {}, (UNSCHED, ["Insufficient memory"]), [ins("memory", 16, 5, 20)]),
    ("skip checking ignored extended resource via resource groups",
     mk_pod(res(1, 1, scalars={EXT_B: 1, K8S_IO_A: 1})), [mk_pod(res())], {"ignoredResourceGroups": ["example.com"]},
     (UNRES, [f"Insufficient {K8S_IO_A}"]), [ins(K8S_IO_A, 1, 0, 0, True)]),
    ("skip checking extended resource request with quantity zero via resource groups",
     mk_pod(res(1, 1, scalars={EXT_A: 0})), [mk_pod(res(scalars={EXT_A: 6}))], {}, None, []),
    ("skip checking resource request with quantity zero", mk_pod(res(scalars={EXT_A: 1})),
     [mk_pod(res(20, 30, scalars={EXT_A: 1}))], {}, None, []),
    ("both pod-level and container-level resources fit",
     mk_pod(res(1, 1), pod_level={"cpu": "1m", "memory": "2"}), [mk_pod(res(5, 5))], {}, None, []),
    ("pod-level cpu resource not fit", mk_pod(res(1, 1), pod_level={"cpu": "7m", "memory": "2"}),
     [mk_pod(res(5, 5))], {}, (UNSCHED, ["Insufficient cpu"]), [ins("cpu", 7, 5, 10)]),
    ("pod-level memory resource not fit", mk_pod(res(1, 1), pod_level={"cpu": "3m", "memory": "2"}),
     [mk_pod(res(5, 19))], {}, (UNSCHED, ["Insufficient memory"]), [ins("memory", 2, 19, 20)]),
    ("pod-level hugepages resource fit", mk_pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}),
     [], {}, None, []),
    ("both pod-level and container-level hugepages resource fit",
     mk_pod(res(1, 1, scalars={HUGE_A: 3}), pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}),
     [], {}, None, []),
    ("pod-level hugepages resource not fit", mk_pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "10"}),
     [], {}, (UNRES, [f"Insufficient {HUGE_A}"]), [ins(HUGE_A, 10, 0, 5, True)]),
    ("one pod-level cpu resource fits and all init and non-init containers resources fit",
     mk_pod(res(1, 1), init=init_containers(res(1, 1)), pod_level={"cpu": "3m", "memory": "2"}),
     [mk_pod(res(5, 19))], {}, (UNSCHED, ["Insufficient memory"]), [ins("memory", 2, 19, 20)]),
    ("extended resource backed by DRA not enabled", mk_pod(res(1, 1, scalars={"extended.resource.dra.io/something": 1})),
     [mk_pod(res())], {}, (UNRES, ["Insufficient extended.resource.dra.io/something"]),
     [ins("extended.resource.dra.io/something", 1, 0, 0, True)]),
]


@pytest.mark.parametrize("name,pod,existing,extra_args,want_status,want_insufficient", ENOUGH_REQUESTS,
                         ids=[c[0] for c in ENOUGH_REQUESTS])
def test_enough_requests(name, pod, existing, extra_args, want_status, want_insufficient):
    ni = node_info(mk_node("n", FILTER_NODE_ALLOC), *existing)
    args = nrargs.set_defaults_node_resources_fit_args(extra_args)
    p = Fit(args)
    st = run_filter(p, pod, ni)
    if want_status is None:
        assert st is None
    else:
        assert st.code == want_status[0]
        assert st.reasons == want_status[1]
    got = fits_request(compute_pod_resource_request(pod), ni, p.ignored_resources, p.ignored_resource_groups)
    assert got == want_insufficient


def test_filter_without_pre_filter_is_error():
    p = Fit(nrargs.set_defaults_node_resources_fit_args({}))
    ni = node_info(mk_node("n", {}))
    st = p.filter(CycleState(), mk_pod(), ni)
    assert st.code == Code.Error
    assert st.message() == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'


NOT_ENOUGH_PODS = [
    ("even without specified resources, predicate fails when there's no space for additional pod",
     mk_pod(), [mk_pod(res(10, 20))]),
    ("even if both resources fit, predicate fails when there's no space for additional pod",
     mk_pod(res(1, 1)), [mk_pod(res(5, 5))]),
    ("even for equal edge case, predicate fails when there's no space for additional pod",
     mk_pod(res(5, 1)), [mk_pod(res(5, 19))]),
    ("even for equal edge case, predicate fails when there's no space for additional pod due to init container",
     mk_pod(res(5, 1), init=init_containers(res(5, 1))), [mk_pod(res(5, 19))]),
]


@pytest.mark.parametrize("name,pod,existing", NOT_ENOUGH_PODS, ids=[c[0] for c in NOT_ENOUGH_PODS])
def test_not_enough_requests(name, pod, existing):
    alloc = {"cpu": "10m", "memory": "20", "pods": "1", EXT_A: "0", "ephemeral-storage": "0", HUGE_A: "0"}
    ni = node_info(mk_node("n", alloc), *existing)
    st = run_filter(Fit(nrargs.set_defaults_node_resources_fit_args({})), pod, ni)
    assert st.code == Code.Unschedulable
    assert st.reasons == ["Too many pods"]


STORAGE = [
    ("empty storage requested, and pod fits", mk_pod(res(1, 1)), [mk_pod(res(2, 10))], None),
    ("storage ephemeral local storage request exceeds allocatable", mk_pod(res(eph=25)), [mk_pod(res(2, 2))],
     (UNRES, ["Insufficient ephemeral-storage"])),
    ("ephemeral local storage is sufficient", mk_pod(res(eph=5)), [mk_pod(res(2, 2, eph=10))], None),
    ("pod fits", mk_pod(res(eph=10)), [mk_pod(res(2, 2))], None),
]


@pytest.mark.parametrize("name,pod,existing,want", STORAGE, ids=[c[0] for c in STORAGE])
def test_storage_requests(name, pod, existing, want):
    ni = node_info(mk_node("n", FILTER_NODE_ALLOC), *existing)
    st = run_filter(Fit(nrargs.set_defaults_node_resources_fit_args({})), pod, ni)
    if want is None:
        assert st is None
    else:
        assert (st.code, st.reasons) == want


def _sidecar_pod(request=None, sidecar_request=None) -> Pod:
    c: Dict[str, Any] = {"name": "regular"}
    if request is not None:
        c["resources"] = {"requests": request}
    s: Dict[str, Any] = {"name": "restartable-init", "restartPolicy": "Always"}
    if sidecar_request is not None:
        s["resources"] = {"requests": sidecar_request}
    return Pod({"metadata": {"name": "p", "uid": f"u{next(_uid)}"}, "spec": {"containers": [c], "initContainers": [s]}})


RESTARTABLE = [
    ("allow pod without restartable init containers if sidecar containers is disabled",
     Pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "regular"}]}}), False, None, None),
    ("not allow pod with restartable init containers if sidecar containers is disabled",
     _sidecar_pod(), False,
     (UNRES, ["Pod has a restartable init container and the SidecarContainers feature is disabled"]), None),
    ("allow pod without restartable init containers if sidecar containers is enabled",
     Pod({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "regular"}]}}), True, None, None),
    ("allow pod with restartable init containers if sidecar containers is enabled", _sidecar_pod(), True, None, None),
    ("allow pod if the total requested resources do not exceed the node's allocatable resources",
     _sidecar_pod({"cpu": "1m"}, {"cpu": "1m"}), True, None, None),
    ("not allow pod if the total requested resources do exceed the node's allocatable resources",
     _sidecar_pod({"cpu": "1m"}, {"cpu": "2m"}), True, None, (UNRES, ["Insufficient cpu"])),
]


@pytest.mark.parametrize("name,pod,enable,want_pre,want_filter", RESTARTABLE, ids=[c[0] for c in RESTARTABLE])
def test_restartable_init_containers(name, pod, enable, want_pre, want_filter):
    alloc = {"cpu": "2m", "memory": "0", "pods": "1", EXT_A: "0", "ephemeral-storage": "0", HUGE_A: "0"}
    ni = node_info(mk_node("n", alloc))
    p = Fit(nrargs.set_defaults_node_resources_fit_args({}))
    p.enable_sidecar_containers = enable
    state = CycleState()
    _, st = p.pre_filter(state, pod, [ni])
    if want_pre is not None:
        assert (st.code, st.reasons) == want_pre
        return
    assert st is None
    st = p.filter(state, pod, ni)
    if want_filter is None:
        assert st is None
    else:
        assert (st.code, st.reasons) == want_filter


# ---------------------------------------------------------------------------------------------
# fit_test.go: TestFitScore
# ---------------------------------------------------------------------------------------------
def _fit_score_nodes(cpu2="6000"):
    return [cap_node("node1", cpu="4000", memory="10000"), cap_node("node2", cpu=cpu2, memory="10000")]


FIT_SCORE = [
    ("RequestedToCapacityRatio case1", mk_pod({"cpu": "3000", "memory": "5000"}), _fit_score_nodes(),
     [mk_pod({"cpu": "2000", "memory": "4000"}, node="node1"), mk_pod({"cpu": "1000", "memory": "2000"}, node="node2")],
     fit_args("RequestedToCapacityRatio", shape=[{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]),
     [10, 32]),
    ("RequestedToCapacityRatio case2", mk_pod({"cpu": "3000", "memory": "5000"}), _fit_score_nodes(),
     [mk_pod({"cpu": "2000", "memory": "4000"}, node="node1"), mk_pod({"cpu": "1000", "memory": "2000"}, node="node2")],
     fit_args("RequestedToCapacityRatio", shape=[{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]),
     [95, 68]),
    ("MostAllocated", mk_pod({"cpu": "1000", "memory": "2000"}), _fit_score_nodes(),
     [mk_pod({"cpu": "2000", "memory": "4000"}, node="node1"), mk_pod({"cpu": "1000", "memory": "2000"}, node="node2")],
     fit_args("MostAllocated"), [67, 36]),
    ("LeastAllocated", mk_pod({"cpu": "1000", "memory": "2000"}), _fit_score_nodes(),
     [mk_pod({"cpu": "2000", "memory": "4000"}, node="node1"), mk_pod({"cpu": "1000", "memory": "2000"}, node="node2")],
     fit_args("LeastAllocated"), [32, 63]),
    ("MostAllocated with sidecar container", mk_pod({"cpu": "1000", "memory": "2000"}), _fit_score_nodes("4000"),
     [mk_pod({"cpu": "1000", "memory": "2000"}, node="node1",
             init=[{"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1000", "memory": "2000"}}}]),
      mk_pod({"cpu": "1000", "memory": "2000"}, node="node2")],
     fit_args("MostAllocated"), [67, 45]),
    ("LeastAllocated with sidecar container", mk_pod({"cpu": "1000", "memory": "2000"}), _fit_score_nodes("4000"),
     [mk_pod({"cpu": "1000", "memory": "2000"}, node="node1",
             init=[{"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1000", "memory": "2000"}}}]),
      mk_pod({"cpu": "1000", "memory": "2000"}, node="node2")],
     fit_args("LeastAllocated"), [32, 55]),
]


@pytest.mark.parametrize("run_pre_score", [True, False])
@pytest.mark.parametrize("name,pod,nodes,existing,args,want", FIT_SCORE, ids=[c[0] for c in FIT_SCORE])
def test_fit_score(name, pod, nodes, existing, args, want, run_pre_score):
    p = Fit(args)
    assert scores_of(score_nodes(p, pod, nodes, existing, run_pre_score)) == want


# ---------------------------------------------------------------------------------------------
# least_allocated_test.go / most_allocated_test.go
# ---------------------------------------------------------------------------------------------
TWO_CONTAINERS = ({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})


def two_nodes(c1, m1, c2, m2, ext1=None, ext2=None):
    a1 = {"cpu": c1, "memory": m1}
    a2 = {"cpu": c2, "memory": m2}
    if ext1:
        a1[EXT_RES] = ext1
    if ext2:
        a2[EXT_RES] = ext2
    return [mk_node("node1", a1), mk_node("node2", a2)]


LEAST = [
    ("nothing scheduled, nothing requested", mk_pod(), two_nodes("4000", "10000", "4000", "10000"), [],
     DEFAULT_RESOURCES, [100, 100], None),
    ("nothing scheduled, resources requested, differently sized nodes", mk_pod(*TWO_CONTAINERS),
     two_nodes("4000", "10000", "6000", "10000"), [], DEFAULT_RESOURCES, [37, 50], None),
    ("Resources not set, pods scheduled with error", mk_pod(*TWO_CONTAINERS),
     two_nodes("4000", "10000", "6000", "10000"), [], None, [0, 0], Code.Error),
    ("no resources requested, pods scheduled", mk_pod(), two_nodes("4000", "10000", "4000", "10000"),
     [mk_pod(node="node1"), mk_pod(node="node1"), mk_pod(node="node2"), mk_pod(node="node2")],
     DEFAULT_RESOURCES, [100, 100], None),
    ("no resources requested, pods scheduled with resources", mk_pod(), two_nodes("10000", "20000", "10000", "20000"),
     [mk_pod({"cpu": "3000", "memory": "0"}, node="node1"), mk_pod({"cpu": "3000", "memory": "0"}, node="node1"),
      mk_pod({"cpu": "3000", "memory": "0"}, node="node2"), mk_pod({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT_RESOURCES, [70, 57], None),
    ("resources requested, pods scheduled with resources", mk_pod(*TWO_CONTAINERS),
     two_nodes("10000", "20000", "10000", "20000"),
     [mk_pod({"cpu": "3000", "memory": "0"}, node="node1"), mk_pod({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT_RESOURCES, [57, 45], None),
    ("resources requested, pods scheduled with resources, differently sized nodes", mk_pod(*TWO_CONTAINERS),
     two_nodes("10000", "20000", "10000", "50000"),
     [mk_pod({"cpu": "3000", "memory": "0"}, node="node1"), mk_pod({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT_RESOURCES, [57, 60], None),
    ("requested resources exceed node capacity", mk_pod({"cpu": "3000", "memory": "0"}),
     two_nodes("4000", "10000", "4000", "10000"),
     [mk_pod({"cpu": "3000", "memory": "0"}, node="node1"), mk_pod({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT_RESOURCES, [50, 25], None),
    ("zero node resources, pods scheduled with resources", mk_pod(), [mk_node("node1"), mk_node("node2")],
     [mk_pod({"cpu": "3000", "memory": "0"}, node="node1"), mk_pod({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT_RESOURCES, [0, 0], None),
    ("nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
     mk_pod(*TWO_CONTAINERS, node="node1"), two_nodes("4000", "10000", "6000", "10000"), [],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [41, 50], None),
    ("bypass extended resource if the pod does not request", mk_pod(*TWO_CONTAINERS, node="node1"),
     two_nodes("6000", "10000", "6000", "10000", ext2="4"), [], EXTENDED_RESOURCE_SET, [50, 50], None),
    ("honor extended resource if the pod requests", mk_pod({"cpu": "3000", "memory": "5000", EXT_RES: "2"}, node="node1"),
     two_nodes("6000", "10000", "6000", "10000", ext1="4", ext2="10"), [], EXTENDED_RESOURCE_SET, [50, 60], None),
    ("if the node doesn't have a resource", mk_pod({"cpu": "3000", "memory": "4000"}, node="node1"),
     two_nodes("6000", "10000", "6000", "10000", ext2="4"), [],
     [{"name": EXT_RES, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}], [55, 55], None),
]

MOST = [
    ("nothing scheduled, nothing requested", mk_pod(), two_nodes("4000", "10000", "4000", "10000"), [],
     DEFAULT_RESOURCES, [0, 0], None),
    ("nothing scheduled, resources requested, differently sized nodes", mk_pod(*TWO_CONTAINERS),
     two_nodes("4000", "10000", "6000", "10000"), [], DEFAULT_RESOURCES, [62, 50], None),
    ("Resources not set, pods scheduled with error", mk_pod(*TWO_CONTAINERS),
     two_nodes("4000", "10000", "6000", "10000"), [], None, [0, 0], Code.Error),
    ("no resources requested, pods scheduled with resources", mk_pod(), two_nodes("10000", "20000", "10000", "20000"),
     [mk_pod({"cpu": "3000", "memory": "0"}, node="node1"), mk_pod({"cpu": "3000", "memory": "0"}, node="node1"),
      mk_pod({"cpu": "3000", "memory": "0"}, node="node2"), mk_pod({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT_RESOURCES, [30, 42], None),
    ("resources requested, pods scheduled with resources", mk_pod(*TWO_CONTAINERS),
     two_nodes("10000", "20000", "10000", "20000"),
     [mk_pod({"cpu": "3000", "memory": "0"}, node="node1"), mk_pod({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT_RESOURCES, [42, 55], None),
    ("resources requested equal node capacity",
     mk_pod({"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}),
     two_nodes("5000", "10000", "10000", "9000"), [], DEFAULT_RESOURCES, [95, 75], None),
    ("nothing scheduled, resources requested, differently sized nodes (weights)", mk_pod(*TWO_CONTAINERS),
     two_nodes("4000", "10000", "6000", "10000"), [],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [58, 50], None),
    ("no resources requested, pods scheduled, nonzero request for resource", mk_pod(None),
     two_nodes("250m", "1000Mi", "250m", "1000Mi"), [mk_pod(None, node="node1"), mk_pod(None, node="node1")],
     DEFAULT_RESOURCES, [80, 30], None),
    ("bypass extended resource if the pod does not request", mk_pod(*TWO_CONTAINERS),
     two_nodes("6000", "10000", "6000", "10000", ext2="4"), [], EXTENDED_RESOURCE_SET, [50, 50], None),
    ("honor extended resource if the pod request", mk_pod({"cpu": "3000", "memory": "5000", EXT_RES: "2"}, node="node1"),
     two_nodes("6000", "10000", "6000", "10000", ext1="4", ext2="10"), [], EXTENDED_RESOURCE_SET, [50, 40], None),
    ("if the node doesn't have a resource", mk_pod({"cpu": "3000", "memory": "4000"}, node="node1"),
     two_nodes("6000", "10000", "6000", "10000", ext2="4"), [],
     [{"name": EXT_RES, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}], [45, 45], None),
]


def _run_strategy(strategy, pod, nodes, existing, resources, want, want_code):
    p = Fit({"scoringStrategy": {"type": strategy, "resources": resources}})
    results = score_nodes(p, pod, nodes, existing)
    assert [s for _, s, _ in results] == want
    for _, _, st in results:
        assert (st.code if st is not None else Code.Success) == (want_code or Code.Success)
        if st is not None:
            assert st.reasons == ["resources not found"]


@pytest.mark.parametrize("name,pod,nodes,existing,resources,want,want_code", LEAST, ids=[c[0] for c in LEAST])
def test_least_allocated(name, pod, nodes, existing, resources, want, want_code):
    _run_strategy("LeastAllocated", pod, nodes, existing, resources, want, want_code)


@pytest.mark.parametrize("name,pod,nodes,existing,resources,want,want_code", MOST, ids=[c[0] for c in MOST])
def test_most_allocated(name, pod, nodes, existing, resources, want, want_code):
    _run_strategy("MostAllocated", pod, nodes, existing, resources, want, want_code)


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
@pytest.mark.parametrize("resources,path", [
    ([{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}], "scoringStrategy.resources[0].weight"),
    ([{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 0}], "scoringStrategy.resources[1].weight"),
    ([{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}], "scoringStrategy.resources[1].weight"),
])
def test_invalid_weights(strategy, resources, path):
    args = {"scoringStrategy": {"type": strategy, "resources": resources}}
    errs = Fit.validate_args(args)
    assert [p for p, _ in errs] == [path]
    assert errs[0][1].startswith("Invalid value: ")
    with pytest.raises(ValueError, match=r"scoringStrategy\.resources\[\d\]\.weight: Invalid value"):
        Fit(args)


# ---------------------------------------------------------------------------------------------
# requested_to_capacity_ratio_test.go
# ---------------------------------------------------------------------------------------------
RTCR_SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
RTCR = [
    ("nothing scheduled, nothing requested (default - least requested nodes have priority)", mk_pod(),
     two_nodes("4000", "10000", "4000", "10000"), [mk_pod(node="node1"), mk_pod(node="node1")], [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)",
     mk_pod(*TWO_CONTAINERS), two_nodes("4000", "10000", "6000", "10000"),
     [mk_pod(node="node1"), mk_pod(node="node1")], [38, 50]),
    ("no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
     mk_pod(), two_nodes("4000", "10000", "6000", "10000"),
     [mk_pod({"cpu": "3000", "memory": "5000"}, node="node1"), mk_pod({"cpu": "3000", "memory": "5000"}, node="node2")],
     [38, 50]),
]


@pytest.mark.parametrize("name,pod,nodes,existing,want", RTCR, ids=[c[0] for c in RTCR])
def test_requested_to_capacity_ratio(name, pod, nodes, existing, want):
    p = Fit(fit_args("RequestedToCapacityRatio", shape=RTCR_SHAPE))
    assert scores_of(score_nodes(p, pod, nodes, existing)) == want


@pytest.mark.parametrize("points,assertions", [
    ([(10, 1), (90, 9)], [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9),
                          (99, 9), (100, 9), (110, 9)]),
    ([(0, 2), (40, 10), (100, 0)], [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
    ([(0, 2), (40, 2), (100, 2)], [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
])
def test_broken_linear_function(points, assertions):
    fn = build_broken_linear_function([FunctionShapePoint(u, s) for u, s in points])
    for p, want in assertions:
        assert abs(fn(p) - want) <= 0.1, (points, p)


def test_broken_linear_function_truncates_toward_zero():
    # A decreasing segment: Go's -100*1/30 is -3 (Python's floor division would give -4).
    fn = build_broken_linear_function([FunctionShapePoint(0, 100), FunctionShapePoint(30, 0)])
    assert fn(1) == 97
    assert go_div(-100, 30) == -3 and go_div(100, -30) == -3 and go_div(7, 2) == 3
    assert go_round(2.5) == 3 and go_round(3.5) == 4 and go_round(-2.5) == -3 and go_round(0.49999999999999994) == 0


def _ext_nodes(ext1: Dict[str, str], ext2: Dict[str, str]):
    mem = str(10000 * 1024 * 1024)
    return [mk_node("node1", {"cpu": "4", "memory": mem, **ext1}), mk_node("node2", {"cpu": "4", "memory": mem, **ext2})]


BIN_PACKING_SINGLE = [
    ("nothing scheduled, nothing requested", mk_pod(), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", mk_pod({"intel.com/foo": "2"}), [mk_pod()], [2, 5]),
    ("resources requested, pods scheduled with resources, on node with existing pod running",
     mk_pod({"intel.com/foo": "2"}), [mk_pod({"intel.com/foo": "2"}, node="node2")], [2, 10]),
    ("resources requested, pods scheduled with more resources", mk_pod({"intel.com/foo": "4"}), [mk_pod()], [5, 10]),
]


@pytest.mark.parametrize("name,pod,existing,want", BIN_PACKING_SINGLE, ids=[c[0] for c in BIN_PACKING_SINGLE])
def test_resource_bin_packing_single_extended(name, pod, existing, want):
    nodes = _ext_nodes({"intel.com/foo": "8"}, {"intel.com/foo": "4"})
    p = Fit(fit_args("RequestedToCapacityRatio", resources=[{"name": "intel.com/foo", "weight": 1}],
                     shape=[{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]))
    assert scores_of(score_nodes(p, pod, nodes, existing)) == want


BIN_PACKING_MULTIPLE = [
    ("nothing scheduled, nothing requested", mk_pod(), [mk_pod()], [0, 0]),
    ("resources requested, pods scheduled with less resources", mk_pod({"intel.com/foo": "2", "intel.com/bar": "2"}),
     [mk_pod()], [4, 3]),
    ("resources requested, pods scheduled with resources, on node with existing pod running",
     mk_pod({"intel.com/foo": "2", "intel.com/bar": "2"}),
     [mk_pod({"intel.com/foo": "4", "intel.com/bar": "2"}, node="node2")], [4, 7]),
    ("resources requested, pods scheduled with more resources", mk_pod({"intel.com/foo": "4", "intel.com/bar": "2"}),
     [mk_pod()], [5, 5]),
]


@pytest.mark.parametrize("name,pod,existing,want", BIN_PACKING_MULTIPLE, ids=[c[0] for c in BIN_PACKING_MULTIPLE])
def test_resource_bin_packing_multiple_extended(name, pod, existing, want):
    nodes = _ext_nodes({"intel.com/foo": "8", "intel.com/bar": "4"}, {"intel.com/foo": "4", "intel.com/bar": "8"})
    p = Fit(fit_args("RequestedToCapacityRatio",
                     resources=[{"name": "intel.com/foo", "weight": 3}, {"name": "intel.com/bar", "weight": 5}],
                     shape=[{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]))
    assert scores_of(score_nodes(p, pod, nodes, existing)) == want


# ---------------------------------------------------------------------------------------------
# balanced_allocation_test.go
# ---------------------------------------------------------------------------------------------
CPU_AND_MEMORY_AND_GPU = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"})
CPU_ONLY = ({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})
CPU_AND_MEMORY = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})


def make_node(name: str, milli_cpu: int, memory: int, ext: Optional[Dict[str, int]] = None) -> Node:
    """test_util.go makeNode."""
    alloc = {"cpu": f"{milli_cpu}m", "memory": str(memory)}
    for k, v in (ext or {}).items():
        alloc[k] = str(v)
    return mk_node(name, alloc)


GPU8 = {"nvidia.com/gpu": 8}
GPU_RESOURCES = DEFAULT_RESOURCES + [{"name": "nvidia.com/gpu", "weight": 1}]


def _balanced_cases():
    return [
        ("nothing scheduled, resources requested, differently sized nodes", mk_pod(*CPU_AND_MEMORY),
         [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)], [], DEFAULT_RESOURCES, [87, 100], True),
        ("resources requested, pods scheduled with resources", mk_pod(*CPU_AND_MEMORY),
         [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
         [mk_pod(*CPU_ONLY, node="node1"), mk_pod(*CPU_AND_MEMORY, node="node2")], DEFAULT_RESOURCES, [82, 95], True),
        ("resources requested, pods scheduled with resources, differently sized nodes", mk_pod(*CPU_AND_MEMORY),
         [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
         [mk_pod(*CPU_ONLY, node="node1"), mk_pod(*CPU_AND_MEMORY, node="node2")], DEFAULT_RESOURCES, [82, 80], True),
        ("requested resources at node capacity", mk_pod(*CPU_ONLY),
         [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
         [mk_pod(*CPU_ONLY, node="node1"), mk_pod(*CPU_AND_MEMORY, node="node2")], DEFAULT_RESOURCES, [50, 75], True),
        ("include scalar resource on a node for balanced resource allocation",
         mk_pod({"memory": "0", "nvidia.com/gpu": "1"}),
         [make_node("node1", 3500, 40000, GPU8), make_node("node2", 3500, 40000, GPU8)],
         [mk_pod(*CPU_AND_MEMORY, node="node2"), mk_pod(*CPU_AND_MEMORY_AND_GPU, node="node1")],
         GPU_RESOURCES, [70, 65], True),
        ("node without the scalar resource should skip the scalar resource", mk_pod(*CPU_AND_MEMORY),
         [make_node("node1", 3500, 40000, GPU8), make_node("node2", 3500, 40000)], [], GPU_RESOURCES, [63, 63], True),
        ("resources requested, pods scheduled with resources if PreScore not called", mk_pod(*CPU_AND_MEMORY),
         [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
         [mk_pod(*CPU_ONLY, node="node1"), mk_pod(*CPU_AND_MEMORY, node="node2")], DEFAULT_RESOURCES, [82, 95], False),
    ]


BALANCED = _balanced_cases()


def with_version(version: str):
    """A handle carrying only the version's feature gates."""
    return SimpleNamespace(feature_gates=resolve(version))


@pytest.mark.parametrize("name,pod,nodes,existing,resources,want,run_pre_score", BALANCED, ids=[c[0] for c in BALANCED])
def test_balanced_allocation(name, pod, nodes, existing, resources, want, run_pre_score):
    # v1.34/v1.35: the balance after placing the pod
    for version in ("v1.34", "v1.35"):
        p = BalancedAllocation({"resources": resources}, with_version(version))
        assert scores_of(score_nodes(p, pod, nodes, existing, run_pre_score)) == want, version


CPU_ONLY_36 = ({"cpu": "1000m"}, {"cpu": "2000m"})
MEMORY_ONLY = ({"memory": "2000"}, {"memory": "3000"})
GPU_ONLY = {"cpu": "0", "memory": "0", "nvidia.com/gpu": "1"}


def _balanced_cases_v136():
    """balanced_allocation_test.go (v1.36.3): the score of the change in balance,
    50 + (50 + with the pod - without it) / 2; each case's arithmetic as upstream comments it."""
    return [
        # node1 100 -> 87: 68; node2 100 -> 100: 75
        ("nothing scheduled, resources requested, differently sized nodes", mk_pod(*CPU_AND_MEMORY),
         [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)], [], DEFAULT_RESOURCES, [68, 75], True),
        # node1 85 -> 82: 73; node2 97 -> 95: 74
        ("resources requested, pods scheduled with resources", mk_pod(*CPU_AND_MEMORY),
         [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
         [mk_pod(*CPU_ONLY_36, node="node1"), mk_pod(*CPU_AND_MEMORY, node="node2")], DEFAULT_RESOURCES, [73, 74], True),
        # node1 85 -> 82: 73; node2 90 -> 80: 70
        ("resources requested, pods scheduled with resources, differently sized nodes", mk_pod(*CPU_AND_MEMORY),
         [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
         [mk_pod(*CPU_ONLY_36, node="node1"), mk_pod(*CPU_AND_MEMORY, node="node2")], DEFAULT_RESOURCES, [73, 70], True),
        # node1 50 -> 100: 100; node2 100 -> 50: 50
        ("resources requested, pods scheduled with resources, nodes to reach min/max score", mk_pod(*MEMORY_ONLY),
         [make_node("node1", 3000, 5000), make_node("node2", 3000, 5000)],
         [mk_pod(*CPU_ONLY_36, node="node1")], DEFAULT_RESOURCES, [100, 50], True),
        # node1 75 -> 50: 62; node2 100 -> 75: 62
        ("requested resources at node capacity", mk_pod(*CPU_ONLY_36),
         [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
         [mk_pod(*CPU_ONLY_36, node="node1"), mk_pod(*CPU_AND_MEMORY, node="node2")], DEFAULT_RESOURCES, [62, 62], True),
        # node1 69 -> 70: 75; node2 62 -> 65: 76
        ("scalar resource is included in the score computation if pod requests the scalar resource", mk_pod(GPU_ONLY),
         [make_node("node1", 3500, 40000, GPU8), make_node("node2", 3500, 40000, GPU8)],
         [mk_pod(*CPU_AND_MEMORY_AND_GPU, node="node1"), mk_pod(*CPU_AND_MEMORY, node="node2")],
         GPU_RESOURCES, [75, 76], True),
        # 100 -> 63 on both: 56
        ("scalar resource is not included in the score computation if pod doesn't request the scalar resource",
         mk_pod(*CPU_AND_MEMORY), [make_node("node1", 3500, 40000, GPU8), make_node("node2", 3500, 40000)], [],
         GPU_RESOURCES, [56, 56], True),
        ("resources requested, pods scheduled with resources if PreScore not called", mk_pod(*CPU_AND_MEMORY),
         [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
         [mk_pod(*CPU_ONLY_36, node="node1"), mk_pod(*CPU_AND_MEMORY, node="node2")], DEFAULT_RESOURCES, [73, 74], False),
    ]


BALANCED_V136 = _balanced_cases_v136()


@pytest.mark.parametrize("name,pod,nodes,existing,resources,want,run_pre_score", BALANCED_V136,
                         ids=[c[0] for c in BALANCED_V136])
def test_balanced_allocation_v136(name, pod, nodes, existing, resources, want, run_pre_score):
    p = BalancedAllocation({"resources": resources}, with_version("v1.36"))
    assert scores_of(score_nodes(p, pod, nodes, existing, run_pre_score)) == want
    # the batch form gives the same scores
    snap = Snapshot.from_objects(existing, nodes)
    state = CycleState()
    p.pre_score(state, pod, snap.list())
    assert list(p.score_nodes(state, pod, snap.list())) == want


def test_balanced_allocation_skips_best_effort_pod():
    p = BalancedAllocation({"resources": DEFAULT_RESOURCES})
    nodes = [make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)]
    snap = Snapshot.from_objects([], nodes)
    state = CycleState()
    st = p.pre_score(state, mk_pod(), snap.list())
    assert st.code == Code.Skip
    # Without PreScore, Score returns 0 for a best-effort pod.
    assert p.score(CycleState(), mk_pod(), snap.get("node1")) == (0, None)


def test_balanced_resource_scorer_floats():
    # 0.5/0.5/0.25: mean 0.41666.., std sqrt((2*0.0069444 + 0.0277777)/3) = 0.11785 -> 88
    assert balanced_resource_scorer([2, 4, 1], [4, 8, 4]) == 88
    assert balanced_resource_scorer([1], [4]) == 100
    assert balanced_resource_scorer([8, 0], [4, 4]) == 50  # fraction capped at 1
    assert balanced_resource_scorer([0, 0], [0, 0]) == 100


def test_balanced_uses_pod_level_requests_and_requested():
    # The incoming pod's pod-level requests count; the node's Requested (not the non-zero
    # defaults of its best-effort pods) is used.
    pod = mk_pod({"cpu": "100m", "memory": "100"}, pod_level={"cpu": "2", "memory": "4000"})
    nodes = [make_node("node1", 4000, 8000)]
    for version, want in (("v1.34", 100), ("v1.36", 75)):
        p = BalancedAllocation(None, with_version(version))
        assert p.scorer.calculate_pod_resource_request_list(pod) == [2000, 4000]
        results = score_nodes(p, pod, nodes, [mk_pod(None, node="node1")])
        # 0.5 and 0.5 (100); v1.36: balanced before too (0 and 0: 100), 50 + (50 + 0) / 2
        assert scores_of(results) == [want], version


def test_fit_scoring_ignores_pod_level_requests():
    # NewFit builds the scorer without enablePodLevelResources: container requests (with the
    # non-zero defaults) are scored, not spec.resources.
    p = Fit(None)
    pod = mk_pod({"cpu": "100m", "memory": "100"}, pod_level={"cpu": "2", "memory": "4000"})
    assert p.scorer.calculate_pod_resource_request_list(pod) == [100, 100]
    assert compute_pod_resource_request(pod).milli_cpu == 2000


# ---------------------------------------------------------------------------------------------
# resource_allocation_test.go: TestResourceAllocationScorerCalculateRequests
# ---------------------------------------------------------------------------------------------
ONE_MI = 1048576
DEF_CPU, DEF_MEM = 100, 200 * 1024 * 1024


def _spec_pod(spec: Dict[str, Any]) -> Pod:
    return Pod({"metadata": {"name": "p", "uid": f"u{next(_uid)}"}, "spec": spec})


CALC_REQUESTS = [
    ("overhead only", {"overhead": {"cpu": "1", "memory": "1Mi"}}, 1000, ONE_MI),
    ("1x requestless container", {"containers": [{}]}, DEF_CPU, DEF_MEM),
    ("2x requestless container", {"containers": [{}, {}]}, 2 * DEF_CPU, 2 * DEF_MEM),
    ("request container + requestless container",
     {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Mi"}}}, {}]}, 1000 + DEF_CPU, ONE_MI + DEF_MEM),
    ("container + requestless container + overhead",
     {"overhead": {"cpu": "1", "memory": "1Mi"},
      "containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Mi"}}}, {}]}, 2000 + DEF_CPU, 2 * ONE_MI + DEF_MEM),
    ("init container + container + requestless container + overhead",
     {"overhead": {"cpu": "1", "memory": "1Mi"}, "initContainers": [{"resources": {"requests": {"cpu": "3"}}}],
      "containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Mi"}}}, {}]}, 4000, 2 * ONE_MI + DEF_MEM),
    ("requestless init container + small init container + small container",
     {"initContainers": [{}, {"resources": {"requests": {"cpu": "1m", "memory": "1"}}}],
      "containers": [{"resources": {"requests": {"cpu": "3m", "memory": "3"}}}]}, DEF_CPU, DEF_MEM),
    ("requestless init container + small init container + small container + requestless container",
     {"initContainers": [{}, {"resources": {"requests": {"cpu": "1m", "memory": "1"}}}],
      "containers": [{"resources": {"requests": {"cpu": "3m", "memory": "3"}}}, {}]}, 3 + DEF_CPU, 3 + DEF_MEM),
]


@pytest.mark.parametrize("name,spec,cpu,mem", CALC_REQUESTS, ids=[c[0] for c in CALC_REQUESTS])
def test_calculate_pod_resource_request(name, spec, cpu, mem):
    scorer = ResourceAllocationScorer("x", lambda r, a: 0, [])
    pod = _spec_pod(spec)
    assert scorer.calculate_pod_resource_request(pod, "cpu") == cpu
    assert scorer.calculate_pod_resource_request(pod, "memory") == mem


def test_calculate_resource_allocatable_request():
    node = mk_node("n", {EXT_RES: "4", "cpu": "2", "memory": "1000"})
    ni = node_info(node, mk_pod({EXT_RES: "1"}), mk_pod(None))
    scorer = ResourceAllocationScorer("x", lambda r, a: 0, [])
    assert scorer.calculate_resource_allocatable_request(ni, EXT_RES, 1) == (4, 2)
    assert scorer.calculate_resource_allocatable_request(ni, EXT_RES, 0) == (0, 0)
    assert scorer.calculate_resource_allocatable_request(ni, "example.com/none", 1) == (0, 0)
    # cpu uses the non-zero requests unless use_requested
    assert scorer.calculate_resource_allocatable_request(ni, "cpu", 10) == (2000, 210)
    scorer.use_requested = True
    assert scorer.calculate_resource_allocatable_request(ni, "cpu", 10) == (2000, 10)


def test_status_resources_are_used_when_in_place_resize_is_on():
    pod = Pod({"metadata": {"name": "p", "uid": "u-status"},
               "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "100"}}}]},
               "status": {"containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "2"}},
                                                  "allocatedResources": {"memory": "50"}}]}})
    ba = BalancedAllocation(None)
    assert ba.scorer.calculate_pod_resource_request_list(pod) == [2000, 100]


# ---------------------------------------------------------------------------------------------
# fit_test.go: events and queueing hints
# ---------------------------------------------------------------------------------------------
def test_events_to_register():
    p = Fit(None)  # v1.36: DRAExtendedResource on, a pod may wait for a DeviceClass
    evs = p.events_to_register()
    assert [e.event for e in evs] == [
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown | ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable),
        ClusterEvent(EventResource.DeviceClass, ActionType.Add | ActionType.Update),
    ]
    assert all(e.queueing_hint_fn is not None for e in evs)
    p.enable_dra_extended_resource = False
    p.enable_scheduling_queue_hint = False
    p.enable_in_place_pod_vertical_scaling = False
    assert [e.event for e in p.events_to_register()] == [
        ClusterEvent(EventResource.Pod, ActionType.Delete),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeAllocatable
                     | ActionType.UpdateNodeTaint | ActionType.UpdateNodeLabel),
    ]


def _p(name, uid, reqs=None, node="", pod_level=None):
    return mk_pod(reqs, name=name, uid=uid, node=node, pod_level=pod_level) if reqs is not None else \
        mk_pod(name=name, uid=uid, node=node, pod_level=pod_level)


POD_HINTS = [
    ("backoff-wrong-old-object", mk_pod(), "not-a-pod", None, True, QueueingHint.Queue),
    ("backoff-wrong-new-object", mk_pod(), None, "not-a-pod", True, QueueingHint.Queue),
    ("queue-on-other-pod-deleted", _p("pod1", "pod1", {"cpu": "1"}), _p("pod2", "pod2", {"cpu": "1"}, node="fake"),
     None, True, QueueingHint.Queue),
    ("skip-queue-on-unscheduled-pod-deleted", mk_pod(), mk_pod(), None, True, QueueingHint.QueueSkip),
    ("skip-queue-on-disable-inplace-pod-vertical-scaling", _p("pod1", "pod1", {"cpu": "1"}),
     _p("pod2", "pod2", {"cpu": "2"}, node="fake"), _p("pod2", "pod2", {"cpu": "1"}, node="fake"), False,
     QueueingHint.QueueSkip),
    ("skip-queue-on-other-unscheduled-pod", _p("pod1", "uid0", {"cpu": "1"}), _p("pod2", "uid1", {"cpu": "2"}),
     _p("pod2", "uid1", {"cpu": "1"}), True, QueueingHint.QueueSkip),
    ("skip-queue-on-other-pod-unrelated-resource-scaled-down", _p("pod1", "pod1", {"cpu": "1"}),
     _p("pod2", "pod2", {"memory": "2"}, node="fake"), _p("pod2", "pod2", {"memory": "1"}, node="fake"), True,
     QueueingHint.QueueSkip),
    ("skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down", _p("pod1", "pod1", pod_level={"cpu": "1"}),
     _p("pod2", "pod2", node="fake", pod_level={"memory": "2"}), _p("pod2", "pod2", node="fake", pod_level={"memory": "1"}),
     True, QueueingHint.QueueSkip),
    ("queue-on-other-pod-some-resource-scale-down", _p("pod1", "pod1", {"cpu": "1"}),
     _p("pod2", "pod2", {"cpu": "2"}, node="fake"), _p("pod2", "pod2", {"cpu": "1"}, node="fake"), True,
     QueueingHint.Queue),
    ("queue-on-other-pod-some-pod-level-resource-scale-down", _p("pod1", "pod1", pod_level={"cpu": "1"}),
     _p("pod2", "pod2", node="fake", pod_level={"cpu": "2"}), _p("pod2", "pod2", node="fake", pod_level={"cpu": "1"}),
     True, QueueingHint.Queue),
    ("queue-on-target-pod-some-resource-scale-down", _p("pod1", "pod1", {"cpu": "1"}), _p("pod1", "pod1", {"cpu": "2"}),
     _p("pod1", "pod1", {"cpu": "1"}), True, QueueingHint.Queue),
    ("queue-on-target-pod-some-pod-level-resource-scale-down", _p("pod1", "pod1", pod_level={"cpu": "1"}),
     _p("pod1", "pod1", pod_level={"cpu": "2"}), _p("pod1", "pod1", pod_level={"cpu": "1"}), True, QueueingHint.Queue),
    ("queue-on-nominated-pod-deleted", mk_pod(), mk_pod(nominated="fake"), None, True, QueueingHint.Queue),
]


@pytest.mark.parametrize("name,pod,old,new,in_place,want", POD_HINTS, ids=[c[0] for c in POD_HINTS])
def test_is_schedulable_after_pod_change(name, pod, old, new, in_place, want):
    p = Fit(None)
    p.enable_in_place_pod_vertical_scaling = in_place
    assert p.is_schedulable_after_pod_event(pod, old, new) == want


def N(alloc: Dict[str, str]) -> Node:
    """st.MakeNode().Capacity(alloc): pods default to 32."""
    return mk_node("n", {"pods": "32", **alloc})


NODE_HINTS = [
    ("backoff-wrong-new-object", mk_pod(), None, "not-a-node", QueueingHint.Queue),
    ("backoff-wrong-old-object", mk_pod(), "not-a-node", N({}), QueueingHint.Queue),
    ("skip-queue-on-node-add-without-sufficient-resources", mk_pod(res(mem=2)), None, N({"memory": "1"}),
     QueueingHint.QueueSkip),
    ("skip-queue-on-node-add-without-required-resource-type", mk_pod(res(scalars={EXT_A: 1})), None,
     N({EXT_B: "1"}), QueueingHint.QueueSkip),
    ("queue-on-node-add-with-sufficient-resources", mk_pod(res(mem=2, scalars={EXT_A: 1})), None,
     N({"memory": "4", EXT_A: "2"}), QueueingHint.Queue),
    ("skip-queue-on-node-unrelated-changes", mk_pod(res(mem=2, scalars={EXT_A: 1})),
     N({"memory": "2", EXT_A: "2"}), N({"memory": "2", EXT_A: "1", EXT_B: "2"}),
     QueueingHint.QueueSkip),
    ("queue-on-pod-requested-resources-increase", mk_pod(res(mem=2, scalars={EXT_A: 1})),
     N({"memory": "2", EXT_A: "1"}), N({"memory": "2", EXT_A: "2"}), QueueingHint.Queue),
    ("skip-queue-on-node-changes-from-suitable-to-unsuitable", mk_pod(res(mem=2, scalars={EXT_A: 1})),
     N({"memory": "4", EXT_A: "2"}), N({"memory": "1", EXT_A: "2"}),
     QueueingHint.QueueSkip),
    ("queue-on-node-changes-from-unsuitable-to-suitable", mk_pod(res(mem=2, scalars={EXT_A: 1})),
     N({"memory": "1", EXT_A: "2"}), N({"memory": "4", EXT_A: "2"}), QueueingHint.Queue),
]


@pytest.mark.parametrize("name,pod,old,new,want", NODE_HINTS, ids=[c[0] for c in NODE_HINTS])
def test_is_schedulable_after_node_change(name, pod, old, new, want):
    assert Fit(None).is_schedulable_after_node_change(pod, old, new) == want


IS_FIT = [
    ("nil node", mk_pod(), None, False),
    ("insufficient resource", mk_pod({"cpu": "2"}), N({"cpu": "1"}), False),
    ("sufficient resource", mk_pod({"cpu": "1"}), N({"cpu": "2"}), True),
    ("insufficient pod-level resource", mk_pod(pod_level={"cpu": "2"}), N({"cpu": "1"}), False),
    ("sufficient pod-level resource", mk_pod(pod_level={"cpu": "2"}), N({"cpu": "2"}), True),
    ("sufficient pod-level resource hugepages", mk_pod(pod_level={HUGE_A: "2Mi"}), N({HUGE_A: "2Mi"}), True),
    ("insufficient pod-level resource hugepages", mk_pod(pod_level={HUGE_A: "4Mi"}), N({HUGE_A: "2Mi"}), False),
    ("no pod slots", mk_pod(), mk_node("n", {}), False),
]


@pytest.mark.parametrize("name,pod,node,want", IS_FIT, ids=[c[0] for c in IS_FIT])
def test_is_fit(name, pod, node, want):
    assert is_fit(pod, node) == want


def _full(cpu, mem, eph, ext=None, pods=None):
    d = {"cpu": cpu, "memory": mem, "ephemeral-storage": eph}
    if ext is not None:
        d[EXT_A] = ext
    if pods is not None:
        d["pods"] = pods
    return N(d)


INCREASED = [
    ("no-requested-resources", mk_pod(res()), _full("1", "1", "1", "1", "1"), _full("2", "2", "2", "2", "1"), False),
    ("no-requested-resources-pods-increased", mk_pod(res()), _full("1", "1", "1", "1", "1"), _full("1", "1", "1", "1", "2"), True),
    ("scalar-resources-not-in-node", mk_pod(res(2, 2, 2, {EXT_A: 2})), _full("1", "2", "3"), _full("1", "2", "1"), False),
    ("requested-resources-decreased", mk_pod(res(2, 2, 2, {EXT_A: 2})), _full("1", "2", "3", "4"), _full("1", "2", "1", "1"), False),
    ("requested-resources-increased", mk_pod(res(2, 2, 2, {EXT_A: 2})), _full("1", "2", "3", "4"), _full("3", "4", "3", "4"), True),
    ("non-requested-resources-decreased", mk_pod(res(2, 2)), _full("1", "2", "3", "4"), _full("1", "2", "1", "1"), False),
    ("non-requested-resources-increased", mk_pod(res(2, 2)), _full("1", "2", "3", "4"), _full("1", "2", "5", "6"), False),
]


@pytest.mark.parametrize("name,pod,orig,mod,want", INCREASED, ids=[c[0] for c in INCREASED])
def test_have_any_requested_resources_increased(name, pod, orig, mod, want):
    assert have_any_requested_resources_increased(pod, orig, mod) == want


# ---------------------------------------------------------------------------------------------
# Args: defaults and validation
# ---------------------------------------------------------------------------------------------
def test_fit_args_defaults():
    assert Fit.set_defaults({}) == {"scoringStrategy": {"type": "LeastAllocated", "resources": DEFAULT_RESOURCES}}
    assert Fit.set_defaults({"scoringStrategy": {"type": "MostAllocated"}}) == {
        "scoringStrategy": {"type": "MostAllocated", "resources": DEFAULT_RESOURCES}}
    got = Fit.set_defaults({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"},
                                                                                        {"name": "x.com/y", "weight": 0}]}})
    assert got["scoringStrategy"]["resources"] == [{"name": "cpu", "weight": 1}, {"name": "x.com/y", "weight": 1}]
    # A given but empty strategy keeps its empty type (then fails validation), as upstream.
    got = Fit.set_defaults({"scoringStrategy": {}})
    assert got == {"scoringStrategy": {"resources": DEFAULT_RESOURCES}}
    assert Fit.validate_args(got) == [("scoringStrategy.type", 'Unsupported value: "": supported values: '
                                       '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"')]


def test_balanced_args_defaults_and_validation():
    assert BalancedAllocation.set_defaults({}) == {"resources": DEFAULT_RESOURCES}
    assert BalancedAllocation.set_defaults({"resources": [{"name": "cpu"}, {"name": "x.com/y", "weight": 0}]}) == {
        "resources": [{"name": "cpu", "weight": 1}, {"name": "x.com/y", "weight": 1}]}
    errs = BalancedAllocation.validate_args({"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 2}]})
    assert errs == [("resources[1].name", 'Duplicate value: "cpu"'),
                    ("resources[1].weight", "Invalid value: 2: must be 1")]
    with pytest.raises(ValueError, match=r'^\[resources\[1\]\.name: Duplicate value: "cpu", '):
        BalancedAllocation({"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 2}]})


def test_fit_args_validation():
    args = {"ignoredResources": ["example.com/aaa", "Bad Name"], "ignoredResourceGroups": ["example.com/x"],
            "scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 101}],
                                "requestedToCapacityRatio": {"shape": [{"utilization": 50, "score": 5},
                                                                       {"utilization": 50, "score": 11},
                                                                       {"utilization": 101, "score": -1}]}}}
    v134 = resolve("v1.34")
    errs = Fit.validate_args(args, features=v134)
    paths = [p for p, _ in errs]
    assert paths == ["ignoredResources[1]", "ignoredResourceGroups[0]", "scoringStrategy.resources[0].weight",
                     "scoringStrategy.shape[1].utilization", "scoringStrategy.shape[1].score",
                     "scoringStrategy.shape[2].utilization", "scoringStrategy.shape[2].score"]
    # v1.36: the shape's errors under requestedToCapacityRatio.shape
    assert [p for p, _ in Fit.validate_args(args, features=resolve("v1.36"))] == [
        "ignoredResources[1]", "ignoredResourceGroups[0]", "scoringStrategy.resources[0].weight",
        "scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
        "scoringStrategy.requestedToCapacityRatio.shape[1].score",
        "scoringStrategy.requestedToCapacityRatio.shape[2].utilization",
        "scoringStrategy.requestedToCapacityRatio.shape[2].score"]
    assert errs[1] == ("ignoredResourceGroups[0]", "Invalid value: \"example.com/x\": resource group name can't contain '/'")
    assert errs[2][1] == "Invalid value: 101: resource weight of cpu not in valid range (0, 100]"
    assert errs[3][1] == "Invalid value: 50: values must be sorted in increasing order"
    assert errs[4][1] == "Invalid value: 11: not in valid range [0, 10]"
    assert errs[5][1] == "Invalid value: 101: not in valid range [0, 100]"
    assert errs[0][1].startswith('Invalid value: "Bad Name": name part must consist of alphanumeric characters')
    assert Fit.validate_args({"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": DEFAULT_RESOURCES,
                                                  "requestedToCapacityRatio": {}}}, features=v134) == [
        ("scoringStrategy.shape", "Required value: at least one point must be specified")]
    # A shape without requestedToCapacityRatio is fine for validation, but NewFit would panic.
    rtcr_without_shape = {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": DEFAULT_RESOURCES}}
    assert Fit.validate_args(rtcr_without_shape, features=v134) == []
    with pytest.raises(ValueError):
        Fit(rtcr_without_shape, SimpleNamespace(feature_gates=v134))


def test_fit_args_validation_v136():
    """validation_pluginargs_test.go TestValidateFitArgs (v1.36): requestedToCapacityRatio is
    required with its type and forbidden with the others."""
    v136 = resolve("v1.36")
    rtcr = {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}
    assert Fit.validate_args({"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                                  "resources": DEFAULT_RESOURCES}}, features=v136) == [
        ("scoringStrategy.requestedToCapacityRatio",
         "Required value: must be specified when type is RequestedToCapacityRatio")]
    assert Fit.validate_args({"scoringStrategy": {"type": "LeastAllocated", "resources": DEFAULT_RESOURCES,
                                                  "requestedToCapacityRatio": rtcr}}, features=v136) == [
        ("scoringStrategy.requestedToCapacityRatio", "Forbidden: must be nil when type is not RequestedToCapacityRatio")]
    assert Fit.validate_args({"scoringStrategy": {"type": "LeastAllocated", "resources": DEFAULT_RESOURCES,
                                                  "requestedToCapacityRatio": rtcr}}, features=resolve("v1.35")) == []
    assert Fit.validate_args({}, features=v136) == [("scoringStrategy",
                                                     "Required value: ScoringStrategy field is required")]


def test_plugin_module_lists_both_plugins():
    import builtin_plugins.noderesources as m
    assert m.PLUGINS == [Fit, BalancedAllocation]
    assert Fit.name == "NodeResourcesFit" and BalancedAllocation.name == "NodeResourcesBalancedAllocation"
