"""The simulated API server: the objects of the cluster, by kind, with watch events.

Plugins read it through their handle (`handle.cluster`), as kube-scheduler's plugins read their
informers' listers; the scheduler and plugins that write (binding, volume binding, preemption)
go through `create`, `update` and `delete`, which notify the subscribers (the event handlers).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Dict, Iterator, List, Optional

from .api.claim_status import check_resource_claim_status_update
from .api.group_kind import serves_builtin, store_kind
from .api.objects import KubeObject, make_object
from .api.status_update import prepare_status_update
from .apierrors import AlreadyExists, Conflict, NotFound, StatusError

Listener = Callable[[str, Optional[KubeObject], Optional[KubeObject]], None]


def object_key(obj: KubeObject) -> str:
    return f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name


class Cluster:
    """Objects by kind and group (harness.api.group_kind: a built-in kind of its own group under
    its name, any other as `Kind.group`) and `namespace/name` (or `name` for cluster-scoped
    kinds). Reads take a kind (a built-in kind: its own group; another: that kind in every
    group) or a `Kind.group`."""

    def __init__(self, features: Any = None) -> None:
        # the run's Features (harness.versions), for the API server's gates; None: the newest
        self.features = features
        self._objects: Dict[str, Dict[str, KubeObject]] = {}
        # a kind name -> the `Kind.group` keys it is stored under besides its built-in group
        self._groups: Dict[str, List[str]] = {}
        # a kind name -> whether a bare read of it means its built-in group (served_builtin)
        self._bare_builtin: Dict[str, bool] = {}
        self._listeners: List[Listener] = []
        self._rv = itertools.count(1)
        # kind -> its writes so far (create, update, delete): a reader's cheap test that a
        # kind's objects are the ones it last listed
        self._writes: Dict[str, int] = {}
        # store key -> (its creates and deletes so far, its object keys sorted then): list's
        # order, sorted again only when objects came or went (a 150,000-pod cluster is listed
        # several times while it is built, and every binding is an update)
        self._members: Dict[str, int] = {}
        self._sorted: Dict[str, Any] = {}
        # pod key -> how many of its next Binding requests fail (a case's `fail: {bind: [...]}`)
        self.failing_binds: Dict[str, int] = {}
        # pods whose latest Binding request failed by such an injection
        self.injected_failures: set = set()
        # pod keys a DELETE reached while their graceful deletion had already started (the
        # object is left as it is: the kubelet or the finalizers still have to finish it)
        self.terminating_deletes: List[str] = []

    def subscribe(self, listener: Listener) -> None:
        """listener(kind, old, new): old None on add, new None on delete."""
        self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _notify(self, kind: str, old, new) -> None:
        for fn in list(self._listeners):
            fn(kind, old, new)

    # reads -----------------------------------------------------------------------------------
    def read_keys(self, kind: str) -> List[str]:
        """The store keys a read of `kind` covers, resolved as kubectl resolves a name among
        the resources served (harness.api.group_kind): a `Kind.group`, or a built-in kind this
        version and its gates serve, itself; any other name, that kind in every group."""
        others = self._groups.get(kind)
        if not others or "." in kind:
            return [kind]
        builtin = self._bare_builtin.get(kind)
        if builtin is None:
            builtin = self._bare_builtin[kind] = serves_builtin(kind, self.features)
        return [kind] if builtin else [kind] + others

    def _bucket(self, obj: KubeObject) -> Dict[str, KubeObject]:
        """The objects stored with `obj` (its kind in its group), counting a write to them."""
        return self._store(obj)[1]

    def _store(self, obj: KubeObject):
        """(the store key of `obj`, the objects stored under it), counting a write to them."""
        key = store_kind(obj.kind, obj.api_version)
        self._writes[key] = self._writes.get(key, 0) + 1
        bucket = self._objects.get(key)
        if bucket is None:
            if key != obj.kind:
                self._groups[obj.kind] = sorted(self._groups.get(obj.kind, []) + [key])
            bucket = self._objects[key] = {}
        return key, bucket

    def list(self, kind: str, namespace: Optional[str] = None) -> List[KubeObject]:
        """Objects of a kind in namespace/name order, as an API server lists them (a kind
        stored in several groups: each name in group order)."""
        keys = self.read_keys(kind)
        if len(keys) == 1:
            objs = self._objects.get(kind, {})
            out = [objs[k] for k in self._sorted_keys(kind, objs)]
        else:
            pairs = [(k, i, o) for i, key in enumerate(keys) for k, o in self._objects.get(key, {}).items()]
            out = [o for _, _, o in sorted(pairs, key=lambda t: t[:2])]
        if namespace is not None:
            out = [o for o in out if o.namespace == namespace]
        return out

    def _sorted_keys(self, kind: str, objs: Dict[str, KubeObject]) -> List[str]:
        """sorted(objs), the objects of one store key."""
        members = self._members.get(kind, 0)
        got = self._sorted.get(kind)
        if got is None or got[0] != members or len(got[1]) != len(objs):
            got = self._sorted[kind] = (members, sorted(objs))
        return got[1]

    def get(self, kind: str, namespace: str, name: str) -> Optional[KubeObject]:
        key = f"{namespace}/{name}" if namespace else name
        got = self._objects.get(kind, {}).get(key)
        if got is None and kind in self._groups:
            for store in self.read_keys(kind)[1:]:
                got = self._objects[store].get(key)
                if got is not None:
                    break
        return got

    def kinds(self) -> Iterator[str]:
        """The store keys (a kind, or `Kind.group`) of the objects held."""
        return iter(self._objects)

    def kind_version(self, kind: str) -> int:
        """How many writes objects of `kind` have had: unchanged, `list(kind)` is unchanged."""
        keys = self.read_keys(kind)
        if len(keys) == 1:
            return self._writes.get(kind, 0)
        return sum(self._writes.get(k, 0) for k in keys)

    # writes ----------------------------------------------------------------------------------
    def create(self, obj, notify: bool = True) -> KubeObject:
        if isinstance(obj, dict):
            obj = make_object(obj)
        obj.resource_version = next(self._rv)
        store, bucket = self._store(obj)
        key = object_key(obj)
        if key not in bucket:
            self._members[store] = self._members.get(store, 0) + 1
        bucket[key] = obj
        if notify:
            self._notify(obj.kind, None, obj)
        return obj

    def _member_change(self, obj: KubeObject) -> None:
        """An object came into or left its store (list sorts its keys again)."""
        key = store_kind(obj.kind, obj.api_version)
        self._members[key] = self._members.get(key, 0) + 1

    def update(self, obj: KubeObject, notify: bool = True) -> KubeObject:
        bucket = self._bucket(obj)
        old = bucket.get(object_key(obj))
        if old is None:
            self._member_change(obj)
        obj.resource_version = next(self._rv)
        bucket[object_key(obj)] = obj
        if notify:
            self._notify(obj.kind, old, obj)
        return obj

    def delete(self, obj: KubeObject, notify: bool = True) -> None:
        old = self._bucket(obj).pop(object_key(obj), None)
        if old is not None:
            self._member_change(obj)
        if old is not None and notify:
            self._notify(obj.kind, old, None)

    def delete_terminating(self, obj: KubeObject) -> None:
        """A DELETE of an object whose `deletionTimestamp` is already set: the API server
        accepts it and changes nothing (no event); the request is remembered."""
        if obj.key not in self.terminating_deletes:
            self.terminating_deletes.append(obj.key)

    # writes with the API server's checks ---------------------------------------------------
    def create_exclusive(self, obj, notify: bool = True) -> KubeObject:
        """A create as the API server answers it: AlreadyExists when the name is taken."""
        if isinstance(obj, dict):
            obj = make_object(obj)
        if object_key(obj) in self._objects.get(store_kind(obj.kind, obj.api_version), {}):
            raise AlreadyExists(obj.kind, obj.name)
        return self.create(obj, notify)

    def update_if_version(self, obj: KubeObject, resource_version: int, notify: bool = True) -> KubeObject:
        """An update with optimistic concurrency: NotFound when the object is gone, Conflict (409)
        when `resource_version` is not the stored one. A resource_version of 0 (unset) updates
        unconditionally, as for kinds whose strategy AllowUnconditionalUpdate (Lease, Pod)."""
        stored = self._objects.get(store_kind(obj.kind, obj.api_version), {}).get(object_key(obj))
        if stored is None:
            raise NotFound(obj.kind, obj.name)
        if resource_version and stored.resource_version != resource_version:
            raise Conflict(obj.kind, obj.name)
        return self.update(obj, notify)

    # subresources -----------------------------------------------------------------------------
    def update_status(self, obj: KubeObject, notify: bool = True) -> KubeObject:
        """PUT .../status: only the status of `obj` is taken, the rest is the stored object's
        (harness.api.status_update, the kinds' status strategies); then the kind's status-update
        validation runs (a ResourceClaim's: harness.api.claim_status); a refused update
        (Invalid, 422) stores nothing. NotFound when no such object is stored."""
        stored = self._objects.get(store_kind(obj.kind, obj.api_version), {}).get(object_key(obj))
        if stored is None:
            raise NotFound(obj.kind, obj.name)
        obj = make_object(prepare_status_update(obj.raw, stored.raw))
        if obj.kind == "ResourceClaim":
            check_resource_claim_status_update(obj.name, obj.status)
        return self.update(obj, notify)

    def create_binding(self, pod, node_name: str) -> KubeObject:
        """POST pods/{name}/binding: the API server sets spec.nodeName and PodScheduled=True, or
        answers an error (the pod is gone or already assigned, or a case injected a failure)."""
        from .api.objects import update_pod_condition

        current = self.get("Pod", pod.namespace, pod.name)
        if current is None or current.uid != pod.uid:
            raise NotFound("Pod", pod.name)
        self.injected_failures.discard(current.key)
        if self.failing_binds.get(current.key):
            self.failing_binds[current.key] -= 1
            if not self.failing_binds[current.key]:
                del self.failing_binds[current.key]
            self.injected_failures.add(current.key)
            raise StatusError(f"Internal error occurred: binding of pod {current.key} to node "
                              f"{node_name} refused (injected by the case's fail step)")
        if current.node_name:
            # registry/core/pod/storage assignPod: NewConflict(pods/binding, name, err)
            raise Conflict("pods/binding", pod.name,
                           f'pod {pod.name} is already assigned to node "{current.node_name}"')
        clear_nnn = self.features is None or self.features.enabled("ClearingNominatedNodeNameAfterBinding")

        def bind_status(st):
            update_pod_condition(st, {"type": "PodScheduled", "status": "True"})
            if clear_nnn:  # assignPod, with ClearingNominatedNodeNameAfterBinding (v1.35 on)
                st.pop("nominatedNodeName", None)
        bound = current.with_status(bind_status, node_name)  # with_node(node_name).with_status(...)
        return self.update(bound)
