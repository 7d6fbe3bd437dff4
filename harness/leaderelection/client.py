"""A replica's Lease client on the simulated API server (harness.cluster.Cluster).

Each call takes no virtual time. The API server keeps its own copy of each object: a client gets
copies and sends copies, as over the wire. While `reachable()` is false (the replica is
partitioned) every call fails at once with `Unreachable`.
"""

from __future__ import annotations

import copy
from typing import Callable, List, Optional, Tuple

from ..api.objects import KubeObject, make_object
from ..apierrors import NotFound, Unreachable
from ..cluster import Cluster

_LEASES_PATH = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"


def _copy(obj: KubeObject) -> KubeObject:
    out = make_object(copy.deepcopy(obj.raw))
    out.resource_version = obj.resource_version
    out.raw["metadata"]["resourceVersion"] = str(obj.resource_version)
    return out


class LeaseClient:
    """coordinationv1client.LeaseInterface over a Cluster, failing while its replica is cut off.

    `calls` records (verb, namespace/name, outcome) for a trace: outcome is "ok" or the error's
    reason ("NotFound", "AlreadyExists", "Conflict", "Unreachable")."""

    def __init__(self, cluster: Cluster, reachable: Optional[Callable[[], bool]] = None):
        self.cluster = cluster
        self.reachable = reachable or (lambda: True)
        self.calls: List[Tuple[str, str, str]] = []

    def _check(self, verb: str, namespace: str, name: str = "") -> None:
        if not self.reachable():
            self.calls.append((verb, f"{namespace}/{name}", "Unreachable"))
            path = _LEASES_PATH.format(ns=namespace) + (f"/{name}" if name else "")
            raise Unreachable({"get": "Get", "create": "Post", "update": "Put"}[verb], path)

    def _record(self, verb: str, key: str, fn):
        try:
            out = fn()
        except Exception as e:
            self.calls.append((verb, key, getattr(e, "reason", type(e).__name__)))
            raise
        self.calls.append((verb, key, "ok"))
        return out

    def get(self, namespace: str, name: str) -> KubeObject:
        self._check("get", namespace, name)

        def do():
            obj = self.cluster.get("Lease", namespace, name)
            if obj is None:
                raise NotFound("Lease", name)
            return _copy(obj)
        return self._record("get", f"{namespace}/{name}", do)

    def create(self, lease: KubeObject) -> KubeObject:
        self._check("create", lease.namespace)
        return self._record("create", lease.key,
                            lambda: _copy(self.cluster.create_exclusive(_copy(lease))))

    def update(self, lease: KubeObject) -> KubeObject:
        self._check("update", lease.namespace, lease.name)
        return self._record("update", lease.key,
                            lambda: _copy(self.cluster.update_if_version(_copy(lease), lease.resource_version)))
