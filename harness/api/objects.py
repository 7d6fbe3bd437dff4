"""Pods, Nodes and other objects: their manifests, with the fields the scheduler reads on every
cycle pulled out once. Manifests are plain dicts as `kubectl get -o yaml` prints them.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

from . import quantity, valid_memo


class KubeObject:
    """Any object of the cluster: kind, metadata and the raw manifest."""

    __slots__ = ("raw", "kind", "api_version", "name", "namespace", "uid", "labels",
                 "annotations", "resource_version", "__weakref__")

    def __init__(self, raw: Dict[str, Any]):
        self.raw = raw
        md = raw.setdefault("metadata", {})
        self.kind: str = raw.get("kind", "")
        self.api_version: str = raw.get("apiVersion", "")
        self.name: str = md.get("name", "")
        self.namespace: str = md.get("namespace", "") or ""
        self.uid: str = md.get("uid", "")
        self.labels: Dict[str, str] = {k: str(v) for k, v in (md.get("labels") or {}).items()}
        self.annotations: Dict[str, str] = dict(md.get("annotations") or {})
        self.resource_version: int = int(md.get("resourceVersion") or 0)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def spec(self) -> Dict[str, Any]:
        return self.raw.get("spec") or {}

    @property
    def status(self) -> Dict[str, Any]:
        return self.raw.get("status") or {}

    def __repr__(self) -> str:
        return f"<{self.kind} {self.key}>"


class Pod(KubeObject):
    """v1.Pod. `spec` is the manifest's spec dict; read it, never write it (copy with `replace`)."""

    __slots__ = ("spec_", "node_name", "scheduler_name", "priority", "creation_index",
                 "nominated_node_name", "deletion_timestamp", "_memo", "pod_info")

    def __init__(self, raw: Dict[str, Any]):
        super().__init__(raw)
        self.spec_: Dict[str, Any] = raw.setdefault("spec", {})
        self.node_name: str = self.spec_.get("nodeName") or ""
        self.scheduler_name: str = self.spec_.get("schedulerName") or "default-scheduler"
        self.priority: int = int(self.spec_.get("priority") or 0)
        md = raw["metadata"]
        self.creation_index: int = int(md.get("x-creationIndex", 0) or 0)
        self.nominated_node_name: str = (raw.get("status") or {}).get("nominatedNodeName") or ""
        self.deletion_timestamp = md.get("deletionTimestamp")
        self._memo: Dict[str, Any] = {}  # derived from the spec: shared by copies of the pod
        self.pod_info = None  # framework.PodInfo of this very object (never shared)

    @property
    def spec(self) -> Dict[str, Any]:
        return self.spec_

    @property
    def containers(self) -> List[Dict[str, Any]]:
        return self.spec_.get("containers") or []

    @property
    def init_containers(self) -> List[Dict[str, Any]]:
        return self.spec_.get("initContainers") or []

    @property
    def affinity(self) -> Dict[str, Any]:
        return self.spec_.get("affinity") or {}

    @property
    def tolerations(self) -> List[Dict[str, Any]]:
        return self.spec_.get("tolerations") or []

    @property
    def volumes(self) -> List[Dict[str, Any]]:
        return self.spec_.get("volumes") or []

    def memo(self, key: str, compute):
        """Cache a value derived from this pod's spec (e.g. parsed requests). Copies made with
        `with_node` / `with_status` share it, so nothing that refers to the pod object itself
        may be stored here."""
        v = self._memo.get(key, _MISSING)
        if v is _MISSING:
            v = self._memo[key] = compute(self)
        return v

    def resource_memo(self, key: str, compute):
        """memo for a value derived only from what the pod's resource requests are computed
        from (requests, limits, overhead, pod-level resources, the container statuses and
        conditions that in-place resize reads): shared by every pod with the same such content,
        as a Deployment's replicas or a benchmark's pods are, so each shape is computed once."""
        v = self._memo.get(key, _MISSING)
        if v is not _MISSING:
            return v
        rkey = self._memo.get("_resources_key")
        if rkey is None:
            rkey = self._memo["_resources_key"] = _resources_key(self)
        shared = (key, rkey)
        v = _SHARED_RESOURCE_MEMO.get(shared, _MISSING)
        if v is _MISSING:
            v = compute(self)
            if len(_SHARED_RESOURCE_MEMO) >= 10_000:
                _SHARED_RESOURCE_MEMO.clear()
            _SHARED_RESOURCE_MEMO[shared] = v
        self._memo[key] = v
        return v

    def with_node(self, node_name: str) -> "Pod":
        """A copy bound to node_name (the assumed pod of the scheduling cycle)."""
        raw = dict(self.raw)
        raw["spec"] = dict(self.spec_)
        raw["spec"]["nodeName"] = node_name
        p = Pod(raw)
        p._memo = self._memo  # requests etc. do not depend on nodeName
        return p

    def with_status(self, mutate, node_name: Optional[str] = None) -> "Pod":
        """A copy whose status dict went through `mutate(status)` (a status patch). The copy
        shares the spec-derived memo unless the patch touched the container statuses (which
        in-place resize reads, the pod-level ones included). With `node_name`, the copy is
        also bound to it, as with_node(node_name).with_status(mutate) is, in one copy."""
        raw = dict(self.raw)
        if node_name is not None:
            raw["spec"] = dict(self.spec_)
            raw["spec"]["nodeName"] = node_name
        status = dict(raw.get("status") or {})
        status["conditions"] = [dict(c) for c in status.get("conditions") or []]
        mutate(status)
        if not status["conditions"]:
            del status["conditions"]
        raw["status"] = status
        p = Pod(raw)
        old = self.raw.get("status") or {}
        if all(status.get(k) is old.get(k) for k in ("containerStatuses", "initContainerStatuses",
                                                      "resources", "allocatedResources")):
            p._memo = self._memo
        return p

    def deep_copy(self) -> "Pod":
        return Pod(copy.deepcopy(self.raw))


_SHARED_RESOURCE_MEMO: Dict[tuple, Any] = {}
_MISSING = object()


def _resources_key(pod: Pod) -> str:
    """Everything of the pod that its resource requests are computed from, as one string
    (repr of plain YAML values: equal strings mean equal contents): of the container statuses
    only what in-place resize reads (name, resources, allocatedResources: a running pod's
    containerID and start times would make every replica's key its own), of the conditions only
    PodResizePending's reason (IsPodResizeInfeasible). While a cluster is built (valid_memo),
    once per set of the (shared) values it is made of: the replicas of a Deployment hold the
    same containers and conditions, and their container statuses differ in nothing it reads."""
    spec = pod.spec_
    status = pod.raw.get("status") or {}
    if valid_memo.table() is not None and _RESIZE_KEYS.isdisjoint(status):
        names = _status_names(status.get("containerStatuses"))
        init_names = _status_names(status.get("initContainerStatuses"))
        if names is not None and init_names is not None:
            # (the conditions held by identity: replicas share them, and what is read of them,
            # PodResizePending's reason, is read once per list)
            held = (spec.get("containers"), spec.get("initContainers"), spec.get("overhead"), spec.get("resources"),
                    status.get("conditions"))
            return valid_memo.derived(_resources_key, held, lambda: _resources_key_text(spec, status),
                                      (names, init_names))
    return _resources_key_text(spec, status)


# the status members whose presence makes _resources_key read the status in full
_RESIZE_KEYS = frozenset(("resize", "resources", "allocatedResources"))


def _status_names(statuses: Any) -> Any:
    """The names of container statuses that carry nothing else _resources_key reads (a tuple;
    None when one does, or is not a mapping named by a string; False: none given)."""
    if statuses is None:
        return False
    if type(statuses) is not list:
        return None
    names = []
    for cs in statuses:
        if type(cs) is not dict or "resources" in cs or "allocatedResources" in cs:
            return None
        name = cs.get("name", "")
        if type(name) is not str:
            return None
        names.append(name)
    return tuple(names)


def _resources_key_text(spec: Dict[str, Any], status: Dict[str, Any]) -> str:
    return repr((
        [(c.get("name"), c.get("resources"), c.get("restartPolicy")) for c in spec.get("containers") or ()],
        [(c.get("name"), c.get("resources"), c.get("restartPolicy")) for c in spec.get("initContainers") or ()],
        spec.get("overhead"), spec.get("resources"),
        _resize_part(status.get("containerStatuses")), _resize_part(status.get("initContainerStatuses")),
        [(c.get("type"), c.get("reason")) if isinstance(c, dict) else c for c in status.get("conditions") or ()
         if not isinstance(c, dict) or c.get("type") == "PodResizePending"],
        status.get("resize"), status.get("resources"), status.get("allocatedResources")))


def _resize_part(statuses: Any) -> Any:
    if not isinstance(statuses, list):
        return statuses
    return [(cs.get("name", ""), cs.get("resources"), cs.get("allocatedResources")) if isinstance(cs, dict) else cs
            for cs in statuses]


class Node(KubeObject):
    """v1.Node with allocatable, taints and images parsed once."""

    __slots__ = ("spec_", "taints", "unschedulable", "allocatable", "images")

    def __init__(self, raw: Dict[str, Any]):
        super().__init__(raw)
        self.spec_ = raw.get("spec") or {}
        self.taints: List[Dict[str, Any]] = list(self.spec_.get("taints") or [])
        self.unschedulable: bool = bool(self.spec_.get("unschedulable"))
        st = raw.get("status") or {}
        self.allocatable: Dict[str, Any] = dict(st.get("allocatable") or {})
        self.images: List[Dict[str, Any]] = list(st.get("images") or [])

    @property
    def spec(self) -> Dict[str, Any]:
        return self.spec_


def update_pod_condition(status: Dict[str, Any], condition: Dict[str, Any]) -> bool:
    """apipod.UpdatePodCondition on a status dict with a `conditions` list: add or replace the
    condition of that type; False when status, reason and message are unchanged."""
    conds = status.setdefault("conditions", [])
    for i, c in enumerate(conds):
        if c.get("type") == condition["type"]:
            if all((c.get(k) or "") == (condition.get(k) or "") for k in ("status", "reason", "message")):
                return False
            new = dict(condition)
            if c.get("status") == condition.get("status") and "lastTransitionTime" in c:
                new["lastTransitionTime"] = c["lastTransitionTime"]
            conds[i] = new
            return True
    conds.append(dict(condition))
    return True


def make_object(raw: Dict[str, Any]) -> KubeObject:
    kind = raw.get("kind")
    if kind == "Pod":
        return Pod(raw)
    if kind == "Node":
        return Node(raw)
    return KubeObject(raw)


__all__ = ["KubeObject", "Pod", "Node", "make_object", "quantity"]
