"""The PV and PVC assume caches (volumebinding/assume_cache.go over
scheduler/util/assumecache): the API objects of the simulated API server, with in-memory
"assumed" versions laid over them between Reserve and PreBind.

An assumed object keeps the resourceVersion of the API object it was derived from; as in
upstream, an API object with a newer resourceVersion replaces it (informer update), and
Restore drops it.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional

from harness.api.objects import KubeObject

from .pv_helpers import VolumeError, get_persistent_volume_class


class NotFoundError(VolumeError):
    """assumecache.NotFoundError (errors.Is(err, ErrNotFound))."""

    def __init__(self, type_name: str, key: str):
        super().__init__(f'could not find {type_name} "{key}"')


class AssumeCache:
    """assumecache.AssumeCache over one kind of the cluster."""

    def __init__(self, cluster, kind: str, description: str, namespaced: bool,
                 index_fn: Optional[Callable[[KubeObject], str]] = None):
        self.cluster = cluster
        self.kind = kind
        self.description = description
        self.namespaced = namespaced
        self.index_fn = index_fn
        self._assumed: Dict[str, KubeObject] = {}

    def _api(self, key: str) -> Optional[KubeObject]:
        if self.namespaced:
            ns, _, name = key.partition("/")
            return self.cluster.get(self.kind, ns, name)
        return self.cluster.get(self.kind, "", key)

    def _latest(self, key: str, api: KubeObject) -> KubeObject:
        assumed = self._assumed.get(key)
        if assumed is None:
            return api
        if api.resource_version > assumed.resource_version:
            # The informer delivered a newer object: it replaces the assumed one.
            del self._assumed[key]
            return api
        return assumed

    def get(self, key: str) -> KubeObject:
        """Get: the latest (possibly assumed) object."""
        api = self._api(key)
        if api is None:
            self._assumed.pop(key, None)
            raise NotFoundError(self.description, key)
        return self._latest(key, api)

    def get_api_obj(self, key: str) -> KubeObject:
        """GetAPIObj: the informer's version."""
        api = self._api(key)
        if api is None:
            self._assumed.pop(key, None)
            raise NotFoundError(self.description, key)
        return api

    def list(self, index_value: Optional[str] = None) -> List[KubeObject]:
        """List (by the index when one is set), in name order."""
        out = []
        for api in self.cluster.list(self.kind):
            if self.index_fn is not None and index_value is not None:
                if self.index_fn(api) != index_value:
                    continue
            key = api.key if self.namespaced else api.name
            out.append(self._latest(key, api))
        return out

    def assume(self, obj: KubeObject) -> None:
        """Assume: keep obj in memory only; its version must not be older than the stored one."""
        key = f"{obj.namespace}/{obj.name}" if self.namespaced else obj.name
        stored = self.get(key)
        if obj.resource_version < stored.resource_version:
            raise VolumeError(f'{self.description} "{key}" is out of sync '
                              f'(stored: {stored.resource_version}, assume: {obj.resource_version})')
        self._assumed[key] = obj

    def restore(self, key: str) -> None:
        """Restore the informer's version."""
        self._assumed.pop(key, None)

    def is_assumed(self, key: str) -> bool:
        try:
            return self.get(key) is not self.get_api_obj(key)
        except NotFoundError:
            return False


class PVAssumeCache(AssumeCache):
    def __init__(self, cluster):
        super().__init__(cluster, "PersistentVolume", "v1.PersistentVolume", False,
                         get_persistent_volume_class)

    def get_pv(self, name: str) -> KubeObject:
        return self.get(name)

    def get_api_pv(self, name: str) -> KubeObject:
        return self.get_api_obj(name)

    def list_pvs(self, storage_class_name: str) -> List[KubeObject]:
        return self.list(storage_class_name)


class PVCAssumeCache(AssumeCache):
    def __init__(self, cluster):
        super().__init__(cluster, "PersistentVolumeClaim", "v1.PersistentVolumeClaim", True)

    def get_pvc(self, key: str) -> KubeObject:
        return self.get(key)

    def get_api_pvc(self, key: str) -> KubeObject:
        return self.get_api_obj(key)
