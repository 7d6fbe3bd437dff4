"""Custom resources a plugin package declares (its CRDs), as kube-scheduler meets them: objects
the API server serves at one group/version, listed through a dynamic informer, whose events reach
the queue under the GVK resource `<plural>.<version>.<group>` a plugin registers in
EventsToRegister (pkg/scheduler/eventhandlers.go, addAllEventHandlers' default branch, and
framework/types.go's EventResource for GVKs).

A package declares them with the registry hook `schedharness_custom_resources`:

    @hookimpl
    def schedharness_custom_resources():
        return [CustomResource("scheduling.x-k8s.io", "v1alpha1", "PodGroup", namespaced=True)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional


@dataclass(frozen=True)
class CustomResource:
    """One kind of a CustomResourceDefinition: served at `group/version`, namespaced or
    cluster-scoped, with its plural resource name (default: the kind in lower case plus "s",
    as `kubectl` guesses it; give `plural` when the CRD says otherwise)."""

    group: str
    version: str
    kind: str
    namespaced: bool = True
    plural: str = ""

    @property
    def resource(self) -> str:
        return self.plural or self.kind.lower() + "s"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def store_kind(self) -> str:
        """What the simulated API server files its objects under: `Kind.group`
        (harness.api.group_kind), apart from a built-in kind of the same name."""
        from ..api.group_kind import store_kind
        return store_kind(self.kind, self.api_version)

    @property
    def event_resource(self) -> str:
        """The fwk.EventResource of this GVK, `<plural>.<version>.<group>`, as a plugin
        registers it and the dynamic informer's handlers deliver it."""
        return f"{self.resource}.{self.version}.{self.group}"


def custom_resources(registry: Any) -> Dict[str, CustomResource]:
    """kind -> CustomResource declared by the packages of a registry (none for a plain dict)."""
    return dict(getattr(registry, "custom_resources", None) or {})


class DynamicLister:
    """A dynamic informer's lister for one custom resource (dynamiclister.Lister over the
    simulated API server): what a plugin reads its own objects with."""

    def __init__(self, cluster: Any, cr: CustomResource):
        self.cluster = cluster
        self.cr = cr

    def list(self, namespace: Optional[str] = None) -> List[Any]:
        return list(self.cluster.list(self.cr.store_kind, namespace)) if self.cluster is not None else []

    def get(self, namespace: str, name: str) -> Optional[Any]:
        if self.cluster is None:
            return None
        return self.cluster.get(self.cr.store_kind, namespace if self.cr.namespaced else "", name)


def find(crs: Mapping[str, CustomResource], what: str) -> Optional[CustomResource]:
    """The custom resource named by its kind or its GVK resource (`podgroups.v1alpha1.x.io`)."""
    if what in crs:
        return crs[what]
    return next((cr for cr in crs.values() if cr.event_resource == what), None)


__all__ = ["CustomResource", "DynamicLister", "custom_resources", "find"]
