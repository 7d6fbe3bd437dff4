"""The in-tree plugins of kube-scheduler v1.34, one module (or package) each, written on the same
hooks a third-party plugin uses and registered through the same entry point group
(`schedharness.plugins`, see pyproject.toml).

Imports: harness.framework, harness.api, harness.versions and the base modules (errors,
apierrors) only, as a third-party plugin would; never the scheduler, config, the case or the
commands (.importlinter).
"""

from __future__ import annotations

import importlib
from typing import List

from harness.framework.hookspecs import hookimpl

# registry.go's table, as module paths; each module lists its plugin classes in PLUGINS.
_MODULES = [
    "queuesort",
    "scheduling_gates",
    "node_unschedulable",
    "node_name",
    "taint_toleration",
    "node_affinity",
    "node_declared_features",
    "node_ports",
    "noderesources",
    "volume_restrictions",
    "nodevolumelimits",
    "volumebinding",
    "volume_zone",
    "podtopologyspread",
    "interpodaffinity",
    "dynamic_resources",
    "default_preemption",
    "gang_scheduling",
    "topology_aware",
    "image_locality",
    "default_binder",
]


def plugin_classes() -> List[type]:
    out: List[type] = []
    for mod in _MODULES:
        m = importlib.import_module(f"{__name__}.{mod}")
        out.extend(m.PLUGINS)
    return out


@hookimpl
def schedharness_plugins() -> List[type]:
    return plugin_classes()
