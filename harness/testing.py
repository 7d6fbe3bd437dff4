"""Helpers for unit-testing a plugin without the whole scheduler: objects from short manifests
and a handle over a fixed snapshot. Whole-scheduler behaviour is tested with YAML cases."""

from __future__ import annotations

import itertools
from typing import Any, Dict, Iterable, List, Optional

from .api.objects import KubeObject, Node, Pod, make_object
from .cluster import Cluster
from .framework.cycle_state import CycleState
from .scheduler.snapshot import Snapshot

_uid = itertools.count(1)


def make_pod(name: str = "p", namespace: str = "default", *, node_name: str = "",
             labels: Optional[Dict[str, str]] = None, requests: Optional[Dict[str, Any]] = None,
             spec: Optional[Dict[str, Any]] = None, priority: int = 0, uid: str = "") -> Pod:
    """A Pod; `requests` gives one container with those requests, `spec` is merged in."""
    sp: Dict[str, Any] = {"containers": [{"name": "c", "image": "pause",
                                          "resources": {"requests": dict(requests or {})}}]}
    sp.update(spec or {})
    if node_name:
        sp["nodeName"] = node_name
    sp.setdefault("schedulerName", "default-scheduler")
    sp.setdefault("priority", priority)
    raw = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {}),
                        "uid": uid or f"uid-{next(_uid)}"},
           "spec": sp}
    return Pod(raw)


def make_node(name: str = "n", *, labels: Optional[Dict[str, str]] = None,
              allocatable: Optional[Dict[str, Any]] = None, taints: Optional[List[dict]] = None,
              spec: Optional[Dict[str, Any]] = None, images: Optional[List[dict]] = None) -> Node:
    sp: Dict[str, Any] = dict(spec or {})
    if taints:
        sp["taints"] = taints
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    alloc.update(allocatable or {})
    raw = {"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": name, "labels": dict(labels or {"kubernetes.io/hostname": name}),
                        "uid": f"uid-{next(_uid)}"},
           "spec": sp, "status": {"allocatable": alloc, "images": list(images or [])}}
    return Node(raw)


class FakeHandle:
    """The parts of the framework handle a plugin reads: `snapshot`, `cluster`, `parallelism`."""

    def __init__(self, nodes: Iterable[Node] = (), pods: Iterable[Pod] = (),
                 objects: Iterable[Any] = (), parallelism: int = 16):
        self.cluster = Cluster()
        nodes, pods = list(nodes), list(pods)
        for o in list(nodes) + list(pods):
            self.cluster.create(o, notify=False)
        for o in objects:
            self.cluster.create(o if isinstance(o, KubeObject) else make_object(o), notify=False)
        self.snapshot = Snapshot.from_objects(pods, nodes)
        self.parallelism = parallelism

    def snapshot_shared_lister(self) -> Snapshot:
        return self.snapshot


def new_state() -> CycleState:
    return CycleState()
