"""schedharness-coscheduling: gang scheduling (scheduler-plugins' Coscheduling) as an out-of-tree
schedharness plugin, registered through the `schedharness.plugins` entry point."""

from __future__ import annotations

from typing import List

from harness.framework import CustomResource, hookimpl

from .plugin import Coscheduling

__all__ = ["Coscheduling", "POD_GROUP", "schedharness_custom_resources", "schedharness_plugins"]

# scheduler-plugins' CRD podgroups.scheduling.x-k8s.io (config/crd/bases), served at v1alpha1
POD_GROUP = CustomResource("scheduling.x-k8s.io", "v1alpha1", "PodGroup", namespaced=True, plural="podgroups")


@hookimpl
def schedharness_plugins() -> List[type]:
    return [Coscheduling]


@hookimpl
def schedharness_custom_resources() -> List[CustomResource]:
    """The PodGroup kind: its objects reach the plugin through the API server, and their Add and
    Update events (podgroups.v1alpha1.scheduling.x-k8s.io, which Coscheduling registers) requeue
    the gang."""
    return [POD_GROUP]
