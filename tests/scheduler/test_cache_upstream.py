"""The scheduler cache, its snapshot and the node tree, ported from kubernetes
pkg/scheduler/backend/cache/{cache_test.go, snapshot_test.go, node_tree_test.go}.

Upstream's cache errors (e.g. assuming a pod twice) are exceptions or no-ops here; the node list
order (the cache's linked list, most recently updated first) is Cache.nodes_by_recency().
Snapshot.AssumePod/ForgetPod (newer than v1.34) are not ported."""

from __future__ import annotations

import os
import sys

import pytest

from harness.framework.types import NodeInfo
from harness.scheduler.cache import Cache, CacheError, ImageState
from harness.scheduler.node_tree import NodeTree
from harness.scheduler.snapshot import (Snapshot, create_image_existence_map, create_used_pvc_set,
                                        image_states_of)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample"))

from cache_fakes import (MB, expected_node_info, make_base_pod, make_node, make_pod,  # noqa: E402
                         node_info_summary)

DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"


def port(ip, port_, protocol=""):
    p = {"hostPort": port_}
    if ip:
        p["hostIP"] = ip
    if protocol:
        p["protocol"] = protocol
    return p


def tcp(ip, p):
    return port(ip, p, "TCP")


# =============================================================================================
# cache_test.go
# =============================================================================================
NODE = "node"
ASSUME_PODS = [
    make_base_pod(NODE, "test-resource-request-and-port-0", "100m", "500", "", [tcp("127.0.0.1", 80)]),
    make_base_pod(NODE, "test-resource-request-and-port-1", "100m", "500", "", [tcp("127.0.0.1", 80)]),
    make_base_pod(NODE, "test-resource-request-and-port-2", "200m", "1Ki", "", [tcp("127.0.0.1", 8080)]),
    make_base_pod(NODE, "test-nonzero-request", "", "", "", [tcp("127.0.0.1", 80)]),
    make_base_pod(NODE, "test-extended-resource-1", "100m", "500", "example.com/foo:3", [tcp("127.0.0.1", 80)]),
    make_base_pod(NODE, "test-extended-resource-2", "200m", "1Ki", "example.com/foo:5", [tcp("127.0.0.1", 8080)]),
    make_base_pod(NODE, "test-extended-key", "100m", "500", "random-invalid-extended-key:100", [{}]),
]


@pytest.mark.parametrize("name,idx,requested,non_zero,ports", [
    ("assumed one pod with resource request and used ports", [0],
     dict(milli_cpu=100, memory=500), dict(milli_cpu=100, memory=500), [("TCP", "127.0.0.1", 80)]),
    ("node requested resource are equal to the sum of the assumed pods requested resource, node "
     "contains host ports defined by pods", [1, 2],
     dict(milli_cpu=300, memory=1524), dict(milli_cpu=300, memory=1524),
     [("TCP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 8080)]),
    ("assumed pod without resource request", [3],
     dict(), dict(milli_cpu=DEFAULT_MILLI_CPU, memory=DEFAULT_MEMORY), [("TCP", "127.0.0.1", 80)]),
    ("assumed one pod with extended resource", [4],
     dict(milli_cpu=100, memory=500, scalar={"example.com/foo": 3}), dict(milli_cpu=100, memory=500),
     [("TCP", "127.0.0.1", 80)]),
    ("assumed two pods with extended resources", [4, 5],
     dict(milli_cpu=300, memory=1524, scalar={"example.com/foo": 8}), dict(milli_cpu=300, memory=1524),
     [("TCP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 8080)]),
    ("assumed pod with random invalid extended resource key", [6],
     dict(milli_cpu=100, memory=500), dict(milli_cpu=100, memory=500), []),
])
def test_assume_pod_scheduled(name, idx, requested, non_zero, ports):
    """TestAssumePodScheduled: an assumed pod counts on its node; it can't be assumed twice;
    forgetting it removes it."""
    pods = [ASSUME_PODS[i] for i in idx]
    cache = Cache()
    for pod in pods:
        cache.assume_pod(pod)
        with pytest.raises(CacheError):
            cache.assume_pod(pod)  # already in the cache
    assert node_info_summary(cache.nodes[NODE]) == expected_node_info(requested, non_zero, pods, ports)
    for pod in pods:
        cache.forget_pod(pod)
        assert not cache.is_assumed_pod(pod)
        assert cache.get_pod(pod) is None
    assert NODE not in cache.nodes  # no pods and no node left


def test_add_pod_will_confirm():
    """TestAddPodWillConfirm: two pods assumed, one confirmed by Add; forgetting the other one
    leaves the confirmed pod."""
    p0 = make_base_pod(NODE, "test-1", "100m", "500", "", [tcp("127.0.0.1", 80)])
    p1 = make_base_pod(NODE, "test-2", "200m", "1Ki", "", [tcp("127.0.0.1", 8080)])
    cache = Cache()
    cache.assume_pod(p0)
    cache.assume_pod(p1)
    cache.add_pod(p0)
    cache.add_pod(p0)  # already added: an error upstream, no change here
    assert not cache.is_assumed_pod(p0) and cache.is_assumed_pod(p1)
    for p in (p0, p1):
        if cache.is_assumed_pod(p):
            cache.forget_pod(p)
    assert node_info_summary(cache.nodes[NODE]) == expected_node_info(
        dict(milli_cpu=100, memory=500), dict(milli_cpu=100, memory=500), [p0], [("TCP", "127.0.0.1", 80)])


def test_dump_like_state_after_confirm():
    """TestDump: after assuming two pods and confirming one, the cache holds both, one assumed."""
    p0 = make_base_pod(NODE, "test-1", "100m", "500", "", [tcp("127.0.0.1", 80)])
    p1 = make_base_pod(NODE, "test-2", "200m", "1Ki", "", [tcp("127.0.0.1", 80)])
    cache = Cache()
    cache.assume_pod(p0)
    cache.assume_pod(p1)
    cache.add_pod(p0)
    assert cache.assumed_pods == {p1.uid}
    # confirming re-adds test-1: removed, then appended
    assert [pi.pod.uid for pi in cache.nodes[NODE].pods] == ["test-2", "test-1"]


def test_add_pod_always_updates_pod_info_in_node_info():
    """TestAddPodAlwaysUpdatesPodInfoInNodeInfo: confirming an assumed pod stores the pod as
    the informer has it."""
    p1 = make_base_pod("node1", "test-1", "100m", "500", "", [port("", 80)])
    raw = dict(p1.raw)
    raw["status"] = {"conditions": [{"type": "PodScheduled", "status": "True"}]}
    from harness.api.objects import Pod
    p2 = Pod(raw)
    cache = Cache()
    cache.assume_pod(p1)
    cache.add_pod(p2)
    ni = cache.nodes["node1"]
    assert ni.pods[0].pod is p2
    assert cache.get_pod(p1) is p2
    assert node_info_summary(ni) == expected_node_info(
        dict(milli_cpu=100, memory=500), dict(milli_cpu=100, memory=500), [p2], [("TCP", "0.0.0.0", 80)])


def test_add_pod_will_replace_assumed():
    """TestAddPodWillReplaceAssumed: the Add of a pod bound elsewhere moves it off the node it
    was assumed on; a later Update applies to the node it is bound to."""
    assumed = make_base_pod("assumed-node-1", "test-1", "100m", "500", "", [port("", 80)])
    added = make_base_pod("actual-node", "test-1", "100m", "500", "", [port("", 80)])
    updated = make_base_pod("actual-node", "test-1", "200m", "500", "", [port("", 90)])
    cache = Cache()
    cache.assume_pod(assumed)
    cache.add_pod(added)
    cache.update_pod(added, updated)
    assert "assumed-node-1" not in cache.nodes
    assert node_info_summary(cache.nodes["actual-node"]) == expected_node_info(
        dict(milli_cpu=200, memory=500), dict(milli_cpu=200, memory=500), [updated], [("TCP", "0.0.0.0", 90)])


def test_update_pod():
    """TestUpdatePod: a pod added and then updated twice."""
    p0 = make_base_pod(NODE, "test", "100m", "500", "", [tcp("127.0.0.1", 80)])
    p1 = make_base_pod(NODE, "test", "200m", "1Ki", "", [tcp("127.0.0.1", 8080)])
    cache = Cache()
    cache.add_pod(p0)
    steps = [(p0, p1), (p1, p0)]
    wants = [expected_node_info(dict(milli_cpu=200, memory=1024), dict(milli_cpu=200, memory=1024), [p1],
                                [("TCP", "127.0.0.1", 8080)]),
             expected_node_info(dict(milli_cpu=100, memory=500), dict(milli_cpu=100, memory=500), [p0],
                                [("TCP", "127.0.0.1", 80)])]
    for (old, new), want in zip(steps, wants):
        cache.update_pod(old, new)
        assert node_info_summary(cache.nodes[NODE]) == want


@pytest.mark.parametrize("assume", [True, False])
def test_update_pod_and_get(assume):
    """TestUpdatePodAndGet: unknown pods can't be got or updated; an assumed pod isn't updated;
    an added one is."""
    p0 = make_base_pod(NODE, "test", "100m", "500", "", [tcp("127.0.0.1", 80)])
    p1 = make_base_pod(NODE, "test", "200m", "1Ki", "", [tcp("127.0.0.1", 8080)])
    to_update = p0 if assume else p1
    cache = Cache()
    assert cache.get_pod(to_update) is None
    cache.update_pod(p0, to_update)  # not in the cache: an error upstream, nothing happens
    assert cache.get_pod(p0) is None and not cache.nodes
    if assume:
        cache.assume_pod(p0)
    else:
        cache.add_pod(p0)
        cache.update_pod(p0, to_update)
    assert cache.get_pod(p0) is to_update


def test_update_of_assumed_pod_is_ignored():
    """UpdatePod: "assumed pod should not be updated" (it needs its Add first)."""
    p0 = make_base_pod(NODE, "test", "100m", "500", "", [])
    p1 = make_base_pod(NODE, "test", "200m", "1Ki", "", [])
    cache = Cache()
    cache.assume_pod(p0)
    cache.update_pod(p0, p1)
    assert cache.get_pod(p0) is p0 and cache.is_assumed_pod(p0)
    assert cache.nodes[NODE].requested.milli_cpu == 100


def test_ephemeral_storage_resource():
    """TestEphemeralStorageResource."""
    pod = (make_pod().name("pod-with-ephemeral-storage").namespace("default-namespace")
           .uid("pod-with-ephemeral-storage").req({"ephemeral-storage": "500"}).node(NODE).obj())
    cache = Cache()
    cache.add_pod(pod)
    assert node_info_summary(cache.nodes[NODE]) == expected_node_info(
        dict(ephemeral_storage=500), dict(milli_cpu=DEFAULT_MILLI_CPU, memory=DEFAULT_MEMORY), [pod], [])
    cache.remove_pod(pod)
    assert cache.get_pod(pod) is None


@pytest.mark.parametrize("assume", [False, True])
def test_remove_pod(assume):
    """TestRemovePod: a pod added (or assumed) before its node; removing it leaves its node at
    the head of the list; removing it twice changes nothing."""
    pod = make_base_pod("node-1", "test", "100m", "500", "", [tcp("127.0.0.1", 80)])
    nodes = [make_node().name("node-1").obj(), make_node().name("node-2").obj()]
    cache = Cache()
    if assume:
        cache.assume_pod(pod)
    else:
        cache.add_pod(pod)
    assert node_info_summary(cache.nodes["node-1"]) == expected_node_info(
        dict(milli_cpu=100, memory=500), dict(milli_cpu=100, memory=500), [pod], [("TCP", "127.0.0.1", 80)])
    for n in nodes:
        cache.add_node(n)
    cache.remove_pod(pod)
    assert cache.get_pod(pod) is None
    cache.remove_pod(pod)  # "not found in scheduler cache": nothing happens
    assert cache.nodes_by_recency()[0] == "node-1"
    assert cache.nodes["node-1"].pods == []


def test_forget_pod():
    """TestForgetPod."""
    pod = make_base_pod(NODE, "test", "100m", "500", "", [tcp("127.0.0.1", 80)])
    cache = Cache()
    cache.assume_pod(pod)
    assert cache.is_assumed_pod(pod)
    got = cache.get_pod(pod)
    assert (got.namespace, got.name) == (pod.namespace, pod.name)
    cache.forget_pod(pod)
    assert not cache.is_assumed_pod(pod) and cache.get_pod(pod) is None
    cache.forget_pod(pod)  # forgetting a forgotten pod: fine


def test_forget_pod_only_forgets_assumed_pods_on_their_node():
    """ForgetPod: a pod that was added (not assumed), or that is asked to be forgotten on
    another node, stays."""
    pod = make_base_pod(NODE, "test", "100m", "500", "", [])
    cache = Cache()
    cache.add_pod(pod)
    cache.forget_pod(pod)
    assert cache.get_pod(pod) is pod
    other = make_base_pod(NODE, "other", "100m", "500", "", [])
    cache.assume_pod(other)
    cache.forget_pod(make_base_pod("elsewhere", "other", "100m", "500", "", []))
    assert cache.is_assumed_pod(other)


RESOURCE_LIST_1 = {"cpu": "1000m", "memory": "100m", "example.com/foo": "1"}
RESOURCE_LIST_2 = {"cpu": "500m", "memory": "50m", "example.com/foo": "2"}
TAINTS = [{"key": "test-key", "value": "test-value", "effect": "PreferNoSchedule"}]
IMAGE_STATUS_1 = {"gcr.io/80:latest": 80 * MB, "gcr.io/80:v1": 80 * MB,
                  "gcr.io/300:latest": 300 * MB, "gcr.io/300:v1": 300 * MB}
IMAGE_STATUS_2 = {"gcr.io/600:latest": 600 * MB, "gcr.io/80:latest": 80 * MB, "gcr.io/900:latest": 900 * MB}


def _op_node(name, resources, images):
    return make_node().name(name).capacity(resources).taints(TAINTS).images(images).obj()


def _op_pod(name, with_port):
    c = {"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "50m"}}}
    if with_port:
        c["ports"] = [{"name": "http", "hostPort": 80, "containerPort": 80}]
    return make_pod().name(name).uid(name).node("test-node-1").containers([c]).obj()


def _build_image_states(nodes):
    """buildImageStates: each image's size as first seen, and the nodes with it."""
    states = {}
    for n in nodes:
        for img in n.images:
            for name in img["names"]:
                if name not in states:
                    states[name] = [img["sizeBytes"], set()]
                states[name][1].add(n.name)
    return {k: (v[0], len(v[1])) for k, v in states.items()}


def _check_image_state_summary(infos, *images):
    """checkImageStateSummary: every node with the image sees the same summary."""
    for image in images:
        seen = {(s.size, s.num_nodes) for ni in infos for name, s in ni.image_states.items() if name == image}
        assert len(seen) <= 1, (image, seen)


@pytest.mark.parametrize("nodes,pod_names", [
    ([_op_node("test-node-1", RESOURCE_LIST_1, IMAGE_STATUS_1), _op_node("test-node-2", RESOURCE_LIST_2, IMAGE_STATUS_2),
      _op_node("test-node-3", RESOURCE_LIST_1, IMAGE_STATUS_1), _op_node("test-node-4", RESOURCE_LIST_2, IMAGE_STATUS_2)],
     [("pod1", True)]),
    ([_op_node("test-node-1", RESOURCE_LIST_1, IMAGE_STATUS_1), _op_node("test-node-2", RESOURCE_LIST_2, IMAGE_STATUS_2),
      _op_node("test-node-3", RESOURCE_LIST_1, IMAGE_STATUS_1)],
     [("pod1", False), ("pod2", False)]),
], ids=["operate the node with one pod", "operate the node with two pods"])
def test_node_operators(nodes, pod_names):
    """TestNodeOperators: add, snapshot, update and remove a node with pods."""
    pods = [_op_pod(n, with_port) for n, with_port in pod_names]
    node = nodes[0]
    states = _build_image_states(nodes)
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for p in pods:
        cache.add_pod(p)
    infos = [cache.nodes[name] for name in cache.nodes_by_recency()]

    # Step 1: the node was added into the cache
    assert node.name in cache.nodes
    assert cache.node_tree.num_nodes == len(nodes) == len(cache.node_tree.list())
    want = expected_node_info(
        dict(milli_cpu=500 * len(pods), memory=len(pods)), dict(milli_cpu=500 * len(pods), memory=len(pods)),
        pods, [("TCP", "0.0.0.0", 80)] if len(pods) == 1 else [], node=node,
        image_states={name: states[name] for name in IMAGE_STATUS_1})
    want["allocatable"] = (1000, 1, 0, 0, (("example.com/foo", 1),))  # 100m of memory: 1 byte
    assert node_info_summary(cache.nodes[node.name]) == want
    # the cache's image states are shared by the nodes with the image
    assert isinstance(cache.nodes[node.name].image_states["gcr.io/80:latest"], ImageState)
    assert cache.nodes[node.name].image_states["gcr.io/80:latest"] is cache.nodes["test-node-2"].image_states["gcr.io/80:latest"]
    _check_image_state_summary(infos, "gcr.io/80:latest", "gcr.io/300:latest")

    # Step 2: a new snapshot gets copies of every node
    snap = Snapshot()
    assert cache.update_snapshot(snap) is None
    assert node.name in snap.node_info_map and len(snap.node_info_map) == len(nodes)
    copied = snap.node_info_map[node.name]
    assert copied is not cache.nodes[node.name]
    assert node_info_summary(copied) == want
    assert not any(isinstance(s, ImageState) for s in copied.image_states.values())
    _check_image_state_summary(list(snap.node_info_map.values()), "gcr.io/80:latest", "gcr.io/300:latest")

    # Step 3: update the node's allocatable (UpdateNode with no old node)
    before = cache.nodes[node.name].generation
    raw = dict(node.raw)
    raw["status"] = dict(node.raw["status"])
    raw["status"]["allocatable"] = dict(node.raw["status"]["allocatable"], memory="50m")
    from harness.api.objects import Node
    updated = Node(raw)
    cache.update_node(None, updated)
    assert cache.nodes[node.name].generation > before
    want["allocatable"] = (1000, 1, 0, 0, (("example.com/foo", 1),))  # 50m of memory is 1 byte too
    assert node_info_summary(cache.nodes[node.name]) == want
    _check_image_state_summary(infos, "gcr.io/80:latest", "gcr.io/300:latest")
    assert cache.node_tree.num_nodes == len(nodes) == len(cache.node_tree.list())

    # Step 4: the node can be removed even if it still has pods: a ghost is left
    cache.remove_node(updated)
    assert node.name in cache.nodes and cache.nodes[node.name].node is None
    with pytest.raises(CacheError):
        cache.remove_node(updated)  # already removed
    assert cache.node_tree.num_nodes == len(nodes) - 1 == len(cache.node_tree.list())
    _check_image_state_summary(infos, "gcr.io/80:latest", "gcr.io/300:latest")
    assert cache.image_states["gcr.io/80:latest"].nodes == {n.name for n in nodes[1:]
                                                             if "gcr.io/80:latest" in [i["names"][0] for i in n.images]}
    for p in pods:
        assert cache.get_pod(p) is p

    # Step 5: removing the pods of the removed node still works, and drops the ghost
    for p in pods:
        cache.remove_pod(p)
        assert cache.get_pod(p) is None
    assert node.name not in cache.nodes


# ---------------------------------------------------------------------------------------------
# TestSchedulerCache_UpdateSnapshot
# ---------------------------------------------------------------------------------------------
def _snapshot_fixtures():
    nodes = [make_node().name(f"test-node{i}").allocatable({"cpu": "1000m", "memory": "100m"}).obj()
             for i in range(10)]
    updated_nodes = [make_node().name(f"test-node{i}").allocatable({"cpu": "2000m", "memory": "500m"}).obj()
                     for i in range(10)]
    pods = [make_pod().name(f"test-pod{i}").namespace("test-ns").uid(f"test-puid{i}").node(f"test-node{i % 10}").obj()
            for i in range(20)]
    updated_pods = [make_pod().name(f"test-pod{i}").namespace("test-ns").uid(f"test-puid{i}")
                    .node(f"test-node{i % 10}").priority(1000).obj() for i in range(20)]
    with_affinity = [make_pod().name(f"p-affinity-{i}").namespace("test-ns").uid(f"puid-affinity-{i}")
                     .pod_affinity_exists("foo", "").node(f"test-node{i}").obj() for i in range(2)]
    with_pvc = [make_pod().name(f"p-pvc-{i}").namespace("test-ns").uid(f"puid-pvc-{i}")
                .pvc(f"test-pvc{i % 4}").node(f"test-node{i % 2}").obj() for i in range(8)]
    return nodes, updated_nodes, pods, updated_pods, with_affinity, with_pvc


NODES, UPDATED_NODES, PODS, UPDATED_PODS, PODS_WITH_AFFINITY, PODS_WITH_PVC = _snapshot_fixtures()


def compare_cache_with_snapshot(cache: Cache, snap: Snapshot) -> None:
    """compareCacheWithNodeInfoSnapshot."""
    assert len(snap.node_info_map) == cache.node_tree.num_nodes
    for name, ni in cache.nodes.items():
        want = ni if ni.node is not None else None
        got = snap.node_info_map.get(name)
        assert node_info_summary(got) == node_info_summary(want), name
    assert len(snap.node_info_list) == cache.node_tree.num_nodes
    want_list, want_aff, want_pvcs = [], [], set()
    for name in cache.node_tree.list():
        n = snap.node_info_map.get(name)
        assert n is not None, f"node {name} exists in nodeTree but not in NodeInfoMap"
        want_list.append(n)
        if n.pods_with_affinity:
            want_aff.append(n)
        want_pvcs.update(n.pvc_ref_counts)
    for want, got in zip(want_list, snap.node_info_list):
        assert want is got
    for want, got in zip(want_aff, snap.have_pods_with_affinity_node_info_list):
        assert want is got
    assert want_pvcs <= snap.used_pvc_set


def add_node(i):
    return lambda c, s: c.add_node(NODES[i])


def remove_node(i):
    return lambda c, s: c.remove_node(NODES[i])


def update_node(i):
    return lambda c, s: c.update_node(NODES[i], UPDATED_NODES[i])


def add_pod(i):
    return lambda c, s: c.add_pod(PODS[i])


def assume_pod(i):
    return lambda c, s: c.assume_pod(PODS[i])


def forget_pod(i):
    return lambda c, s: c.forget_pod(PODS[i])


def add_pod_with_affinity(i):
    return lambda c, s: c.add_pod(PODS_WITH_AFFINITY[i])


def add_pod_with_pvc(i):
    return lambda c, s: c.add_pod(PODS_WITH_PVC[i])


def remove_pod(i):
    return lambda c, s: c.remove_pod(PODS[i])


def remove_pod_with_affinity(i):
    return lambda c, s: c.remove_pod(PODS_WITH_AFFINITY[i])


def remove_pod_with_pvc(i):
    return lambda c, s: c.remove_pod(PODS_WITH_PVC[i])


def update_pod(i):
    return lambda c, s: c.update_pod(PODS[i], UPDATED_PODS[i])


def update_snapshot():
    def op(c, s):
        assert c.update_snapshot(s) is None
        compare_cache_with_snapshot(c, s)
    return op


UPDATE_SNAPSHOT_CASES = [
    ("Empty cache", [], [], 0, set()),
    ("Single node", [add_node(1)], [1], 0, set()),
    ("Add node, remove it, add it again", [add_node(1), update_snapshot(), remove_node(1), add_node(1)], [1], 0, set()),
    ("Add node and remove it in the same cycle, add it again",
     [add_node(1), update_snapshot(), add_node(2), remove_node(1)], [2], 0, set()),
    ("Add a few nodes, and snapshot in the middle",
     [add_node(0), update_snapshot(), add_node(1), update_snapshot(), add_node(2), update_snapshot(), add_node(3)],
     [3, 2, 1, 0], 0, set()),
    ("Add a few nodes, and snapshot in the end", [add_node(0), add_node(2), add_node(5), add_node(6)],
     [6, 5, 2, 0], 0, set()),
    ("Update some nodes", [add_node(0), add_node(1), add_node(5), update_snapshot(), update_node(1)],
     [1, 5, 0], 0, set()),
    ("Add a few nodes, and remove all of them",
     [add_node(0), add_node(2), add_node(5), add_node(6), update_snapshot(),
      remove_node(0), remove_node(2), remove_node(5), remove_node(6)], [], 0, set()),
    ("Add a few nodes, and remove some of them",
     [add_node(0), add_node(2), add_node(5), add_node(6), update_snapshot(), remove_node(0), remove_node(6)],
     [5, 2], 0, set()),
    ("Add a few nodes, remove all of them, and add more",
     [add_node(2), add_node(5), add_node(6), update_snapshot(), remove_node(2), remove_node(5), remove_node(6),
      update_snapshot(), add_node(7), add_node(9)], [9, 7], 0, set()),
    ("Update nodes in particular order",
     [add_node(8), update_node(2), update_node(8), update_snapshot(), add_node(1)], [1, 8, 2], 0, set()),
    ("Add some nodes and some pods",
     [add_node(0), add_node(2), add_node(8), update_snapshot(), add_pod(8), add_pod(2)], [2, 8, 0], 0, set()),
    ("Updating a pod moves its node to the head",
     [add_node(0), add_pod(0), add_node(2), add_node(4), update_pod(0)], [0, 4, 2], 0, set()),
    ("Add pod before its node", [add_node(0), add_pod(1), update_pod(1), add_node(1)], [1, 0], 0, set()),
    ("Remove node before its pods",
     [add_node(0), add_node(1), add_pod(1), add_pod(11), update_snapshot(), remove_node(1), update_snapshot(),
      update_pod(1), update_pod(11), remove_pod(1), remove_pod(11)], [0], 0, set()),
    ("Add Pods with affinity", [add_node(0), add_pod_with_affinity(0), update_snapshot(), add_node(1)],
     [1, 0], 1, set()),
    ("Add Pods with PVC", [add_node(0), add_pod_with_pvc(0), update_snapshot(), add_node(1)],
     [1, 0], 0, {"test-ns/test-pvc0"}),
    ("Add multiple nodes with pods with affinity",
     [add_node(0), add_pod_with_affinity(0), update_snapshot(), add_node(1), add_pod_with_affinity(1),
      update_snapshot()], [1, 0], 2, set()),
    ("Add multiple nodes with pods with PVC",
     [add_node(0), add_pod_with_pvc(0), update_snapshot(), add_node(1), add_pod_with_pvc(1), update_snapshot()],
     [1, 0], 0, {"test-ns/test-pvc0", "test-ns/test-pvc1"}),
    ("Add then Remove pods with affinity",
     [add_node(0), add_node(1), add_pod_with_affinity(0), update_snapshot(), remove_pod_with_affinity(0),
      update_snapshot()], [0, 1], 0, set()),
    ("Add then Remove pod with PVC",
     [add_node(0), add_pod_with_pvc(0), update_snapshot(), remove_pod_with_pvc(0), add_pod_with_pvc(2),
      update_snapshot()], [0], 0, {"test-ns/test-pvc2"}),
    ("Add then Remove pod with PVC and add same pod again",
     [add_node(0), add_pod_with_pvc(0), update_snapshot(), remove_pod_with_pvc(0), add_pod_with_pvc(0),
      update_snapshot()], [0], 0, {"test-ns/test-pvc0"}),
    ("Add and Remove multiple pods with PVC with same ref count length different content",
     [add_node(0), add_node(1), add_pod_with_pvc(0), add_pod_with_pvc(1), update_snapshot(),
      remove_pod_with_pvc(0), remove_pod_with_pvc(1), add_pod_with_pvc(2), add_pod_with_pvc(3), update_snapshot()],
     [1, 0], 0, {"test-ns/test-pvc2", "test-ns/test-pvc3"}),
    ("Add and Remove multiple pods with PVC",
     [add_node(0), add_node(1), add_pod_with_pvc(0), add_pod_with_pvc(1), add_pod_with_pvc(2), update_snapshot(),
      remove_pod_with_pvc(0), remove_pod_with_pvc(1), update_snapshot(), add_pod_with_pvc(0), update_snapshot(),
      add_pod_with_pvc(3), add_pod_with_pvc(4), add_pod_with_pvc(5), update_snapshot(),
      remove_pod_with_pvc(0), remove_pod_with_pvc(3), remove_pod_with_pvc(4), update_snapshot()],
     [0, 1], 0, {"test-ns/test-pvc1", "test-ns/test-pvc2"}),
    # upstream's case also assumes/forgets in the snapshot (newer than v1.34): the cache part
    ("Assume and forget in cache",
     [add_node(0), add_node(2), add_node(4), add_node(8), update_snapshot(),
      assume_pod(8), assume_pod(0), forget_pod(0), update_snapshot()], [0, 8, 4, 2], 0, set()),
]


@pytest.mark.parametrize("name,ops,expected,have_affinity,used_pvcs", UPDATE_SNAPSHOT_CASES,
                         ids=[c[0] for c in UPDATE_SNAPSHOT_CASES])
def test_scheduler_cache_update_snapshot(name, ops, expected, have_affinity, used_pvcs):
    """TestSchedulerCache_UpdateSnapshot."""
    cache = Cache()
    snap = Snapshot()
    for op in ops:
        op(cache, snap)
    assert len(cache.nodes) == len(expected)
    order = cache.nodes_by_recency()
    for i, name_ in enumerate(order):
        if cache.nodes[name_].node is not None:
            assert name_ == f"test-node{expected[i]}", (i, order)
    assert len(snap.have_pods_with_affinity_node_info_list) == have_affinity
    assert snap.used_pvc_set == used_pvcs
    assert cache.update_snapshot(snap) is None
    compare_cache_with_snapshot(cache, snap)


def _zone_nodes():
    nodes = []
    i = 0
    for zone, nb in enumerate([2, 6]):
        for _ in range(nb):
            nodes.append(make_node().name(f"node-{i}").labels(
                {LABEL_REGION: f"region-{zone}", LABEL_ZONE: f"zone-{zone}"}).obj())
            i += 1
    return nodes


ZONE_NODES = _zone_nodes()


@pytest.mark.parametrize("name,ops,expected", [
    ("Empty cache", [], []),
    ("Single node", [0], ["node-0"]),
    ("Two nodes", [0, "snap", 1], ["node-0", "node-1"]),
    ("bug 91601, two nodes, update the snapshot and add two nodes in different zones",
     [2, 3, "snap", 4, 0], ["node-2", "node-0", "node-3", "node-4"]),
    ("bug 91601, 6 nodes, one in a different zone",
     [2, 3, 4, 5, "snap", 6, 0], ["node-2", "node-0", "node-3", "node-4", "node-5", "node-6"]),
    ("bug 91601, 7 nodes, two in a different zone",
     [2, "snap", 3, 4, "snap", 5, 6, 0, 1], ["node-2", "node-0", "node-3", "node-1", "node-4", "node-5", "node-6"]),
    ("bug 91601, 7 nodes, two in a different zone, different zone order",
     [2, 1, "snap", 3, 4, "snap", 5, 6, 0], ["node-2", "node-1", "node-3", "node-0", "node-4", "node-5", "node-6"]),
])
def test_scheduler_cache_update_node_info_snapshot_list(name, ops, expected):
    """TestSchedulerCache_updateNodeInfoSnapshotList: the node list follows the node tree's
    round-robin over zones."""
    cache = Cache()
    snap = Snapshot()

    def snapshot_list():
        cache._update_node_info_snapshot_list(snap, True)
        compare_cache_with_snapshot(cache, snap)

    for op in ops:
        if op == "snap":
            snapshot_list()
            continue
        n = ZONE_NODES[op]
        cache.add_node(n)
        snap.node_info_map.setdefault(n.name, cache.nodes[n.name])
    snapshot_list()
    assert [ni.node.name for ni in snap.node_info_list] == expected


# ---------------------------------------------------------------------------------------------
# UpdateSnapshot details read from cache.go
# ---------------------------------------------------------------------------------------------
def test_image_size_is_the_first_size_seen_and_num_nodes_is_taken_at_copy_time():
    """addNodeImageStates keeps one ImageStateSummary per image name: its size is the one of the
    first node reporting it; a snapshot copy of a node takes NumNodes when the node is copied,
    so nodes not updated since keep the count they were copied with."""
    a = make_node().name("a").images({"img": 100}).obj()
    b = make_node().name("b").images({"img": 200}).obj()
    c = make_node().name("c").images({"img": 300, "other": 5}).obj()
    cache = Cache()
    snap = Snapshot()
    cache.add_node(a)
    cache.add_node(b)
    cache.update_snapshot(snap)
    assert {n: (ni.image_states["img"].size, ni.image_states["img"].num_nodes)
            for n, ni in snap.node_info_map.items()} == {"a": (100, 2), "b": (100, 2)}
    cache.add_node(c)
    cache.update_snapshot(snap)
    got = {n: (ni.image_states["img"].size, ni.image_states["img"].num_nodes) for n, ni in snap.node_info_map.items()}
    assert got == {"a": (100, 2), "b": (100, 2), "c": (100, 3)}
    a2 = make_node().name("a").images({"img": 100}).label("x", "y").obj()
    cache.update_node(a, a2)
    cache.update_snapshot(snap)
    assert snap.node_info_map["a"].image_states["img"].num_nodes == 3
    assert snap.node_info_map["b"].image_states["img"].num_nodes == 2
    # the image leaves every node: a later node reporting it sets the size again
    for old, new in ((a2, make_node().name("a").obj()), (b, make_node().name("b").obj()),
                     (c, make_node().name("c").obj())):
        cache.update_node(old, new)
    assert "img" not in cache.image_states
    cache.add_node(make_node().name("d").images({"img": 42}).obj())
    cache.update_snapshot(snap)
    assert (snap.node_info_map["d"].image_states["img"].size,
            snap.node_info_map["d"].image_states["img"].num_nodes) == (42, 1)


def test_fresh_snapshot_gets_every_node():
    """A snapshot with generation 0 copies every node of the cache."""
    cache = Cache()
    for n in NODES[:3]:
        cache.add_node(n)
    s1, s2 = Snapshot(), Snapshot()
    cache.update_snapshot(s1)
    cache.add_pod(PODS[0])
    cache.update_snapshot(s2)
    assert sorted(s2.node_info_map) == ["test-node0", "test-node1", "test-node2"]
    assert len(s2.node_info_map["test-node0"].pods) == 1
    assert len(s1.node_info_map["test-node0"].pods) == 0
    cache.update_snapshot(s1)
    assert len(s1.node_info_map["test-node0"].pods) == 1


def test_node_order_is_kept_when_no_node_is_added_or_removed():
    """updateNodeInfoSnapshotList re-reads the node tree only when a node was added to or removed
    from the snapshot: a node moving to another zone keeps its place in the snapshot's list, as
    does a node removed and added back between two snapshots."""
    za = {LABEL_ZONE: "a"}
    zb = {LABEL_ZONE: "b"}
    n1, n2, n3 = (make_node().name("n1").labels(za).obj(), make_node().name("n2").labels(za).obj(),
                  make_node().name("n3").labels(zb).obj())
    cache = Cache()
    snap = Snapshot()
    for n in (n1, n2, n3):
        cache.add_node(n)
    cache.update_snapshot(snap)
    assert [ni.node.name for ni in snap.list()] == ["n1", "n3", "n2"]
    n1b = make_node().name("n1").labels(zb).obj()
    cache.update_node(n1, n1b)
    assert cache.node_tree.list() == ["n2", "n3", "n1"]
    cache.update_snapshot(snap)
    assert [ni.node.name for ni in snap.list()] == ["n1", "n3", "n2"]
    assert snap.get("n1").node is n1b
    # removed and added back before the next snapshot: same NodeInfo object, same place
    cache.remove_node(n3)
    cache.add_node(n3)
    cache.update_snapshot(snap)
    assert [ni.node.name for ni in snap.list()] == ["n1", "n3", "n2"]
    # a node added: the list follows the tree again
    cache.add_node(make_node().name("n4").labels(za).obj())
    cache.update_snapshot(snap)
    assert [ni.node.name for ni in snap.list()] == ["n2", "n1", "n4", "n3"]


def test_snapshot_node_info_objects_are_kept():
    """UpdateSnapshot updates the snapshot's NodeInfo in place (*existing = *clone)."""
    cache = Cache()
    snap = Snapshot()
    cache.add_node(NODES[0])
    cache.update_snapshot(snap)
    ni = snap.get("test-node0")
    cache.add_pod(PODS[0])
    cache.update_snapshot(snap)
    assert snap.get("test-node0") is ni and snap.list()[0] is ni
    assert [pi.pod.uid for pi in ni.pods] == ["test-puid0"]
    assert cache.nodes["test-node0"] is not ni


def test_ghost_node_pods_are_not_in_the_snapshot():
    """A removed node with pods stays in the cache but leaves the snapshot (and its PVCs the
    used PVC set)."""
    cache = Cache()
    snap = Snapshot()
    cache.add_node(NODES[0])
    cache.add_node(NODES[1])
    cache.add_pod(PODS_WITH_PVC[0])
    cache.add_pod(PODS_WITH_AFFINITY[0])
    cache.update_snapshot(snap)
    assert snap.used_pvc_set == {"test-ns/test-pvc0"}
    assert len(snap.have_pods_with_affinity_list()) == 1
    cache.remove_node(NODES[0])
    cache.update_snapshot(snap)
    assert sorted(snap.node_info_map) == ["test-node1"]
    assert snap.used_pvc_set == set()
    assert snap.have_pods_with_affinity_list() == []
    with pytest.raises(KeyError):
        snap.get("test-node0")
    compare_cache_with_snapshot(cache, snap)


def test_pod_with_anti_affinity_list_follows_its_node():
    cache = Cache()
    snap = Snapshot()
    cache.add_node(NODES[0])
    cache.add_node(NODES[1])
    cache.update_snapshot(snap)
    anti = (make_pod().name("anti").namespace("ns").uid("anti")
            .pod_affinity("kubernetes.io/hostname", {"matchLabels": {"a": "b"}}, anti=True).node("test-node1").obj())
    cache.add_pod(anti)
    cache.update_snapshot(snap)
    assert [ni.node.name for ni in snap.have_pods_with_required_anti_affinity_list()] == ["test-node1"]
    # podWithAffinity: pod affinity or anti-affinity
    assert [ni.node.name for ni in snap.have_pods_with_affinity_list()] == ["test-node1"]
    cache.remove_pod(anti)
    cache.update_snapshot(snap)
    assert snap.have_pods_with_required_anti_affinity_list() == []
    assert snap.have_pods_with_affinity_list() == []


def test_removing_a_pod_moves_the_last_pod_into_its_place():
    """removeFromSlice: s[i] = s[len(s)-1]. The order of NodeInfo.Pods is the order in which
    preemption looks at potential victims (a stable sort when there are at most 12)."""
    cache = Cache()
    pods = [make_base_pod(NODE, n, "100m", "500", "", []) for n in ("a", "b", "c", "d")]
    for p in pods:
        cache.add_pod(p)
    cache.remove_pod(pods[0])
    assert [pi.pod.uid for pi in cache.nodes[NODE].pods] == ["d", "b", "c"]
    cache.update_pod(pods[1], make_base_pod(NODE, "b", "200m", "500", "", []))
    assert [pi.pod.uid for pi in cache.nodes[NODE].pods] == ["d", "c", "b"]


# =============================================================================================
# snapshot_test.go
# =============================================================================================
@pytest.mark.parametrize("images,existence,expected", [
    ({"gcr.io/10:v1": 10 * MB, "gcr.io/200:v1": 200 * MB},
     {"gcr.io/10:v1": {"node-0", "node-1"}, "gcr.io/200:v1": {"node-0"}},
     {"gcr.io/10:v1": (10 * MB, 2), "gcr.io/200:v1": (200 * MB, 1)}),
    (None, {"gcr.io/10:v1": {"node-1"}, "gcr.io/200:v1": set()}, {}),
])
def test_get_node_image_states(images, existence, expected):
    """TestGetNodeImageStates."""
    w = make_node().name("node-0")
    if images:
        w = w.images(images)
    got = image_states_of(w.obj(), existence)
    assert {k: (v.size, v.num_nodes) for k, v in got.items()} == expected


def test_create_image_existence_map():
    """TestCreateImageExistenceMap."""
    n0 = make_node().name("node-0").images({"gcr.io/10:v1": 10 * MB}).obj()
    n1 = make_node().name("node-1").images({"gcr.io/10:v1": 10 * MB, "gcr.io/200:v1": 200 * MB}).obj()
    assert create_image_existence_map([n0, n1]) == {"gcr.io/10:v1": {"node-0", "node-1"},
                                                     "gcr.io/200:v1": {"node-1"}}
    assert create_image_existence_map([make_node().name("node-0").obj(), n1]) == {
        "gcr.io/10:v1": {"node-1"}, "gcr.io/200:v1": {"node-1"}}


@pytest.mark.parametrize("pods,expected", [
    ([], set()),
    ([make_pod().name("foo").namespace("foo").obj(), make_pod().name("bar").namespace("bar").obj()], set()),
    ([make_pod().name("foo").namespace("foo").node("node-1").obj(),
      make_pod().name("bar").namespace("bar").node("node-2").obj()], set()),
    ([make_pod().name("foo").namespace("foo").node("node-1").pvc("pvc1").obj(),
      make_pod().name("bar").namespace("bar").node("node-2").pvc("pvc2").obj()], {"foo/pvc1", "bar/pvc2"}),
], ids=["empty pods list", "pods not scheduled", "scheduled pods that do not use any PVC",
        "scheduled pods that use PVC"])
def test_create_used_pvc_set(pods, expected):
    """TestCreateUsedPVCSet."""
    assert create_used_pvc_set(pods) == expected


def _new_snapshot_cases():
    with_annotations = make_pod().name("foo").namespace("ns").uid("a").node("node-1").annotation("custom", "annotation").obj()
    with_port = make_pod().name("foo").namespace("foo").uid("b").node("node-0").host_port(8080).obj()
    with_anti = (make_pod().name("baz").namespace("ns").uid("c")
                 .pod_affinity("another", {"matchLabels": {"another": "label"}}, anti=True).node("node-0").obj())
    with_aff = [make_pod().name("bar").namespace("ns").uid("d")
                .pod_affinity("baz", {"matchLabels": {"baz": "qux"}}).node("node-2").obj(),
                make_pod().name("bar").namespace("ns").uid("e")
                .pod_affinity("key", {"matchLabels": {"key": "value"}}).node("node-0").obj()]
    with_pvcs = [make_pod().name("foo").namespace("foo").uid("f").node("node-0").pvc("pvc0").obj(),
                 make_pod().name("bar").namespace("bar").uid("g").node("node-1").pvc("pvc1").obj(),
                 make_pod().name("baz").namespace("baz").uid("h").node("node-2").pvc("pvc2").obj()]
    n = lambda name, **labels: make_node().name(name).labels(labels).obj()  # noqa: E731
    return [
        ("no pods no nodes", [], [], [], 0, 0, 0, set()),
        ("single pod single node", [with_port], [n("node-0")], [[with_port]], 1, 0, 0, set()),
        ("multiple nodes, pods with PVCs", with_pvcs, [n("node-0"), n("node-1"), n("node-2")],
         [[with_pvcs[0]], [with_pvcs[1]], [with_pvcs[2]]], 3, 0, 0, {"foo/pvc0", "bar/pvc1", "baz/pvc2"}),
        ("multiple nodes, pod with affinity", [with_annotations, with_aff[0]],
         [n("node-0"), n("node-1"), n("node-2", baz="qux")], [[], [with_annotations], [with_aff[0]]], 3, 1, 0, set()),
        ("multiple nodes, pod with affinity, pod with anti-affinity", [with_aff[1], with_anti],
         [n("node-0", key="value"), n("node-1", another="label")], [[with_aff[1], with_anti], []], 2, 1, 1, set()),
    ]


@pytest.mark.parametrize("name,pods,nodes,pods_per_node,num_nodes,with_affinity,with_anti,used_pvcs",
                         _new_snapshot_cases(), ids=[c[0] for c in _new_snapshot_cases()])
def test_new_snapshot(name, pods, nodes, pods_per_node, num_nodes, with_affinity, with_anti, used_pvcs):
    """TestNewSnapshot."""
    snap = Snapshot.from_objects(pods, nodes)
    assert snap.num_nodes() == num_nodes
    for node, want_pods in zip(nodes, pods_per_node):
        info = snap.get(node.name)
        assert [pi.pod for pi in info.pods] == want_pods
    assert len(snap.have_pods_with_affinity_list()) == with_affinity
    assert len(snap.have_pods_with_required_anti_affinity_list()) == with_anti
    for key in used_pvcs:
        assert snap.is_pvc_used_by_pods(key)
    assert snap.used_pvc_set == used_pvcs


def test_new_snapshot_required_affinity_terms():
    """TestNewSnapshot: the PodInfos carry the parsed required (anti-)affinity terms."""
    aff = (make_pod().name("bar").namespace("ns").uid("d")
           .pod_affinity("baz", {"matchLabels": {"baz": "qux"}}).node("node-2").obj())
    anti = (make_pod().name("baz").namespace("ns").uid("c")
            .pod_affinity("another", {"matchLabels": {"another": "label"}}, anti=True).node("node-2").obj())
    snap = Snapshot.from_objects([aff, anti], [make_node().name("node-2").obj()])
    pis = snap.get("node-2").pods
    t = pis[0].required_affinity_terms[0]
    assert t.topology_key == "baz" and t.namespaces == {"ns"} and t.selector.matches({"baz": "qux"})
    t = pis[1].required_anti_affinity_terms[0]
    assert t.topology_key == "another" and t.namespaces == {"ns"} and t.selector.matches({"another": "label"})


# =============================================================================================
# node_tree_test.go
# =============================================================================================
def _all_nodes():
    m = make_node
    return [
        m().name("node-0").obj(),
        m().name("node-1").labels({LABEL_REGION: "region-1"}).obj(),
        m().name("node-2").labels({LABEL_ZONE: "zone-2"}).obj(),
        m().name("node-3").labels({LABEL_REGION: "region-1", LABEL_ZONE: "zone-2"}).obj(),
        m().name("node-4").labels({LABEL_REGION: "region-1", LABEL_ZONE: "zone-2"}).obj(),
        m().name("node-5").labels({LABEL_REGION: "region-1", LABEL_ZONE: "zone-3"}).obj(),
        m().name("node-6").labels({LABEL_REGION: "region-2", LABEL_ZONE: "zone-2"}).obj(),
        m().name("node-7").labels({LABEL_REGION: "region-2", LABEL_ZONE: "zone-2"}).obj(),
        m().name("node-8").labels({LABEL_REGION: "region-2", LABEL_ZONE: "zone-2"}).obj(),
        m().name("node-9").labels({LABEL_REGION: "region-2", LABEL_ZONE: "zone-2",
                                   LABEL_REGION_BETA: "region-2", LABEL_ZONE_BETA: "zone-2"}).obj(),
        m().name("node-10").labels({LABEL_REGION_BETA: "region-2", LABEL_ZONE_BETA: "zone-3"}).obj(),
    ]


ALL_NODES = _all_nodes()


def new_node_tree(nodes):
    nt = NodeTree()
    for n in nodes or []:
        nt.add_node(n)
    return nt


def verify_node_tree(nt, expected):
    assert nt.num_nodes == sum(len(v) for v in expected.values())
    assert nt.tree == expected
    assert len(nt.zones) == len(expected)
    assert set(nt.zones) == set(expected)


@pytest.mark.parametrize("name,nodes,expected", [
    ("single node no labels", ALL_NODES[:1], {"": ["node-0"]}),
    ("same node specified twice", [ALL_NODES[0], ALL_NODES[0]], {"": ["node-0"]}),
    ("mix of nodes with and without proper labels", ALL_NODES[:4],
     {"": ["node-0"], "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"], "region-1:\x00:zone-2": ["node-3"]}),
    ("mix of nodes with and without proper labels and some zones with multiple nodes", ALL_NODES[:7],
     {"": ["node-0"], "region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
      "region-1:\x00:zone-2": ["node-3", "node-4"], "region-1:\x00:zone-3": ["node-5"],
      "region-2:\x00:zone-2": ["node-6"]}),
    ("nodes also using deprecated zone/region label", ALL_NODES[9:],
     {"region-2:\x00:zone-2": ["node-9"], "region-2:\x00:zone-3": ["node-10"]}),
])
def test_node_tree_add_node(name, nodes, expected):
    """TestNodeTree_AddNode."""
    verify_node_tree(new_node_tree(nodes), expected)


@pytest.mark.parametrize("name,existing,to_remove,expected,expect_error", [
    ("remove a single node with no labels", ALL_NODES[:7], ALL_NODES[:1],
     {"region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"], "region-1:\x00:zone-2": ["node-3", "node-4"],
      "region-1:\x00:zone-3": ["node-5"], "region-2:\x00:zone-2": ["node-6"]}, False),
    ("remove a few nodes including one from a zone with multiple nodes", ALL_NODES[:7], ALL_NODES[1:4],
     {"": ["node-0"], "region-1:\x00:zone-2": ["node-4"], "region-1:\x00:zone-3": ["node-5"],
      "region-2:\x00:zone-2": ["node-6"]}, False),
    ("remove all nodes", ALL_NODES[:7], ALL_NODES[:7], {}, False),
    ("remove non-existing node", None, ALL_NODES[:5], {}, True),
])
def test_node_tree_remove_node(name, existing, to_remove, expected, expect_error):
    """TestNodeTree_RemoveNode."""
    nt = new_node_tree(existing)
    for n in to_remove:
        assert nt.remove_node(n) is (not expect_error)
    verify_node_tree(nt, expected)


@pytest.mark.parametrize("name,existing,to_update,expected", [
    ("update a node without label", ALL_NODES[:7],
     make_node().name("node-0").labels({LABEL_REGION: "region-1", LABEL_ZONE: "zone-2"}).obj(),
     {"region-1:\x00:": ["node-1"], ":\x00:zone-2": ["node-2"],
      "region-1:\x00:zone-2": ["node-3", "node-4", "node-0"], "region-1:\x00:zone-3": ["node-5"],
      "region-2:\x00:zone-2": ["node-6"]}),
    ("update the only existing node", ALL_NODES[:1],
     make_node().name("node-0").labels({LABEL_REGION: "region-1", LABEL_ZONE: "zone-2"}).obj(),
     {"region-1:\x00:zone-2": ["node-0"]}),
    ("update non-existing node", ALL_NODES[:1],
     make_node().name("node-new").labels({LABEL_REGION: "region-1", LABEL_ZONE: "zone-2"}).obj(),
     {"": ["node-0"], "region-1:\x00:zone-2": ["node-new"]}),
])
def test_node_tree_update_node(name, existing, to_update, expected):
    """TestNodeTree_UpdateNode."""
    nt = new_node_tree(existing)
    old = next((n for n in ALL_NODES if n.name == to_update.name), None)
    if old is None:
        old = make_node().name("nonexisting-node").obj()
    nt.update_node(old, to_update)
    verify_node_tree(nt, expected)


def test_node_tree_update_with_nil_old_node_and_no_zone_is_a_no_op():
    """updateNode(nil, n): the old zone counts as "", so a node without zone labels stays out."""
    nt = NodeTree()
    nt.update_node(None, ALL_NODES[0])
    assert nt.num_nodes == 0 and nt.tree == {}


@pytest.mark.parametrize("name,nodes,expected", [
    ("empty tree", None, []),
    ("one node", ALL_NODES[:1], ["node-0"]),
    ("four nodes", ALL_NODES[:4], ["node-0", "node-1", "node-2", "node-3"]),
    ("all nodes", ALL_NODES[:9], ["node-0", "node-1", "node-2", "node-3", "node-5", "node-6", "node-4", "node-7",
                                  "node-8"]),
])
def test_node_tree_list(name, nodes, expected):
    """TestNodeTree_List."""
    assert new_node_tree(nodes).list() == expected


def test_node_tree_list_exhausted():
    """TestNodeTree_List_Exhausted: a count larger than the nodes (upstream: an error) stops
    once every zone is exhausted."""
    nt = new_node_tree(ALL_NODES[:9])
    nt.num_nodes += 1
    assert len(nt.list()) == 9


@pytest.mark.parametrize("name,to_add,to_remove,ops,expected", [
    ("add and remove all nodes", ALL_NODES[2:9], ALL_NODES[2:9], ["add"] * 3 + ["remove"] * 3, []),
    ("add and remove some nodes", ALL_NODES[2:9], ALL_NODES[2:9], ["add"] * 3 + ["remove"], ["node-3", "node-4"]),
    ("remove three nodes", ALL_NODES[2:9], ALL_NODES[2:9], ["add"] * 3 + ["remove"] * 3 + ["add"], ["node-5"]),
    ("add more nodes to an exhausted zone", ALL_NODES[4:9] + [ALL_NODES[3]], [], ["add"] * 6,
     ["node-4", "node-5", "node-6", "node-3", "node-7", "node-8"]),
    ("remove zone and add new", ALL_NODES[3:5] + ALL_NODES[6:8], ALL_NODES[3:5],
     ["add", "add", "remove", "add", "add", "remove"], ["node-6", "node-7"]),
])
def test_node_tree_multi_operations(name, to_add, to_remove, ops, expected):
    """TestNodeTreeMultiOperations."""
    nt = NodeTree()
    ai = ri = 0
    for op in ops:
        if op == "add":
            nt.add_node(to_add[ai])
            ai += 1
        else:
            nt.remove_node(to_remove[ri])
            ri += 1
    assert nt.list() == expected


def test_zone_key_prefers_the_deprecated_labels():
    """GetZoneKey reads failure-domain.beta.kubernetes.io/{zone,region} first, then the
    topology.kubernetes.io ones; a present beta label wins even when empty."""
    from harness.scheduler.node_tree import get_zone_key
    n = make_node().name("n").labels({LABEL_ZONE: "ga", LABEL_ZONE_BETA: "beta",
                                      LABEL_REGION: "r-ga", LABEL_REGION_BETA: "r-beta"}).obj()
    assert get_zone_key(n) == "r-beta:\x00:beta"
    n = make_node().name("n").labels({LABEL_ZONE: "ga", LABEL_ZONE_BETA: ""}).obj()
    assert get_zone_key(n) == ""
    n = make_node().name("n").labels({LABEL_ZONE: "ga"}).obj()
    assert get_zone_key(n) == ":\x00:ga"


def test_nodeinfo_stays_consistent_with_new_nodeinfo():
    """The summary helper agrees with NodeInfo(*pods) (newNodeInfo)."""
    p = make_base_pod(NODE, "x", "100m", "500", "", [tcp("127.0.0.1", 80)])
    assert node_info_summary(NodeInfo(p))["requested"][:2] == (100, 500)
