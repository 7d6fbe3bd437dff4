"""The plugin registry (framework/runtime/registry.go): plugin name -> plugin class, filled from
the `schedharness.plugins` entry point group through pluggy, the in-tree plugins included."""

from __future__ import annotations

import importlib
from typing import Dict, Iterable, Optional

import pluggy

from ..errors import UserError
from .hookspecs import PROJECT, RegistrySpecs

ENTRY_POINT_GROUP = "schedharness.plugins"

Registry = Dict[str, type]


def _plugin_manager(extra_modules: Iterable[str] = ()) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(RegistrySpecs)
    pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    if not any(getattr(p, "__name__", "") == "builtin_plugins" for p in pm.get_plugins()):
        # Running from a source tree that is not installed: register the in-tree plugins the
        # way their entry point would.
        pm.register(importlib.import_module("builtin_plugins"), name="builtin")
    for mod in extra_modules:
        try:
            module = importlib.import_module(mod)
        except ImportError as e:
            raise UserError(f"cannot import plugin module {mod!r}: {e}") from None
        if pm.is_registered(module):
            continue
        pm.register(module, name=mod)
    return pm


def build_registry(extra_modules: Iterable[str] = ()) -> Registry:
    """NewInTreeRegistry merged with the out-of-tree plugins."""
    pm = _plugin_manager(extra_modules)
    registry: Registry = {}
    owners: Dict[str, str] = {}
    for impl in pm.hook.schedharness_plugins.get_hookimpls():
        for cls in impl.function() or []:
            name = getattr(cls, "name", "")
            if not name:
                raise UserError(f"plugin class {cls!r} from {impl.plugin_name!r} has no name")
            if name in registry and registry[name] is not cls:
                raise UserError(f"a plugin named {name!r} already exists "
                                f"(from {owners[name]!r}; again from {impl.plugin_name!r})")
            registry[name] = cls
            owners[name] = impl.plugin_name
    return registry


_DEFAULT: Optional[Registry] = None


def default_registry() -> Registry:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = build_registry()
    return _DEFAULT
