"""Which objects the simulated API server stores together: objects of one kind in one API group
(schema.GroupKind), as the API server keys its storage by resource and group. Two kinds of the
same name in different groups (the Workload API's scheduling.k8s.io PodGroup and
scheduler-plugins' scheduling.x-k8s.io PodGroup custom resource; two undeclared `Foo` kinds of
two vendors) are two kinds: neither replaces, lists or hides the other.

The store key of an object is its kind alone for the group the harness serves that kind in (a
built-in kind: `Pod`, `PriorityClass`, `PodGroup` of scheduling.k8s.io; or any kind with no
apiVersion group), else `Kind.group` (GroupKind.String()). A bare kind name resolves as kubectl
resolves one, among the resources the API server serves: a built-in kind the run's version and
gates serve reads its built-in group (`serves_builtin`: the Workload API's Workload and PodGroup
only with GenericWorkload on, from the version that has them); any other bare name reads that
kind in every group (a plugin's own custom resource, by its kind); `Kind.group` reads that group.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Tuple

from .fields import KIND_VERSIONS, NAMESPACED_CORE_KINDS


def api_group(api_version: str) -> str:
    """The group of an apiVersion (`""` for the core group's `v1`)."""
    group, slash, _ = (api_version or "").rpartition("/")
    return group if slash else ""


def _owned_by_kubernetes(group: str) -> bool:
    """The legacy and unsuffixed groups (apps, batch, policy) and *.k8s.io: Kubernetes' own."""
    return "." not in group or group.endswith(".k8s.io")


@lru_cache(maxsize=None)
def builtin_groups(kind: str) -> Tuple[str, ...]:
    """The groups the harness serves `kind` in itself (none for a kind it does not serve)."""
    versions = KIND_VERSIONS.get(kind)
    if versions:
        return tuple(sorted({api_group(v) for v in versions}))
    return ("*",) if kind in NAMESPACED_CORE_KINDS else ()


def is_builtin_kind(kind: str) -> bool:
    return bool(builtin_groups(kind))


def serves_builtin(kind: str, features) -> bool:
    """Whether the API server serves the built-in `kind` with these Features (None: the newest
    version's defaults): always, but for the Workload API's kinds (harness.api.workload.served)."""
    if not is_builtin_kind(kind):
        return False
    from . import workload
    if kind in workload.KINDS:
        return workload.served(kind, features) is not None
    return True


@lru_cache(maxsize=4096)
def store_kind(kind: str, api_version: str) -> str:
    """The key the store files an object of `kind` at `api_version` under."""
    group = api_group(api_version)
    if not group:
        return kind
    served = builtin_groups(kind)
    if group in served or ("*" in served and _owned_by_kubernetes(group)):
        return kind
    return f"{kind}.{group}"


def split_store_kind(key: str) -> Tuple[str, str]:
    """(kind, group) of a store key (group "" for a kind stored under its name alone)."""
    kind, dot, group = key.partition(".")
    return kind, group if dot else ""


__all__ = ["api_group", "builtin_groups", "is_builtin_kind", "serves_builtin", "split_store_kind", "store_kind"]
