"""The plugin registry (framework/runtime/registry.go): plugin name -> plugin class, filled from
the `schedharness.plugins` entry point group through pluggy, the in-tree plugins included.

Loading checks what kube-scheduler's Go compiler and registry would: two plugins with one name,
an `@hookimpl` method that is no extension point or takes a parameter its hookspec does not pass,
and (in the configuration's validation) a plugin enabled at an extension point it does not
implement. Each is one error naming the plugin and where it came from (:func:`origin`).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Dict, Iterable, List, Optional, Tuple, Union

import pluggy

from ..errors import UserError
from ..trust import ENTRY_POINT_GROUP, LocalModule, _raised, guarded_import, import_local
from .custom_resources import CustomResource
from .hookspecs import PROJECT, ExtensionPointSpecs, RegistrySpecs

IN_TREE = "the in-tree plugins (builtin_plugins)"



class Registry(dict):
    """plugin name -> plugin class, and `custom_resources`: kind -> CustomResource declared by
    the same packages (schedharness_custom_resources)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.custom_resources: Dict[str, CustomResource] = {}

# plugin class -> where it was loaded from, for error messages (see origin())
_ORIGINS: Dict[type, str] = {}


def origin(cls: type) -> str:
    """Where a plugin class came from: `distribution "x", entry point "y"`, `module "m"`
    (loaded with -p or a case's `plugins`) or the in-tree plugins."""
    return _ORIGINS.get(cls, f"module {getattr(cls, '__module__', '?')!r}")


def is_in_tree(cls: type) -> bool:
    return _ORIGINS.get(cls) == IN_TREE


def origin_suffix(name: str, cls: Optional[type]) -> str:
    """` (plugin "X" comes from ...)` for an out-of-tree plugin, "" for an in-tree one (whose
    errors keep upstream's exact wording) or one no registry loaded."""
    if cls is None or cls not in _ORIGINS or is_in_tree(cls):
        return ""
    return f' (plugin "{name}" is from {origin(cls)})'


def _dist_name(dist) -> str:
    try:
        return dist.metadata["Name"] or "?"
    except Exception:  # pragma: no cover - a broken dist-info
        return "?"


def _plugin_manager(extra_modules: Iterable[Union[str, LocalModule]] = ()) -> Tuple[pluggy.PluginManager, Dict[str, str]]:
    """The registry's plugin manager and, per registered plugin name, where it came from.
    Entry points are loaded as pluggy's load_setuptools_entrypoints does, but two distributions
    using one entry point name are both loaded, and an entry point that cannot be imported is
    one error naming its distribution."""
    import importlib.metadata

    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(RegistrySpecs)
    where: Dict[str, str] = {}
    seen = set()
    for dist in list(importlib.metadata.distributions()):
        for ep in dist.entry_points:
            if ep.group != ENTRY_POINT_GROUP:
                continue
            dname = _dist_name(dist)
            if (dname, ep.name, ep.value) in seen:
                continue  # the same distribution found twice on sys.path
            seen.add((dname, ep.name, ep.value))
            desc = f'distribution "{dname}", entry point "{ep.name}"'
            plugin = _guarded_import(ep.load, f"cannot load the schedharness plugins of {desc}")
            if pm.is_registered(plugin):
                continue
            reg_name = ep.name if not pm.has_plugin(ep.name) else f"{dname}:{ep.name}"
            _register(pm, plugin, reg_name, desc)
            where[reg_name] = IN_TREE if getattr(plugin, "__name__", "") == "builtin_plugins" else desc
    if not any(getattr(p, "__name__", "") == "builtin_plugins" for p in pm.get_plugins()):
        # Running from a source tree that is not installed: register the in-tree plugins the
        # way their entry point would.
        pm.register(importlib.import_module("builtin_plugins"), name="builtin")
        where["builtin"] = IN_TREE
    for mod in extra_modules:
        if isinstance(mod, LocalModule):  # a case's module, found in its tree (harness/trust.py)
            module = import_local(mod, f"cannot import plugin module {mod.name!r} ({mod.file})")
            mod = mod.name
        else:  # -p on the command line: the user's own choice, any importable module
            if not isinstance(mod, str) or not all(part.isidentifier() for part in mod.split(".")):
                raise UserError(f"cannot import plugin module {str(mod)[:80]!r}: a module name is dotted "
                                f"identifiers such as mypkg.myplugin (relative names and file paths are "
                                f"not modules)")
            module = _guarded_import(lambda: importlib.import_module(mod), f"cannot import plugin module {mod!r}")
        if pm.is_registered(module):
            continue
        _register(pm, module, mod, f'module "{mod}"')
        where[mod] = f'module "{mod}"'
    return pm, where


def _guarded_import(load, what: str):
    """load() (an import, which runs the module's code) isolated as trust.guarded_import does:
    a raise (even SystemExit, KeyboardInterrupt) or output becomes one UserError."""
    return guarded_import(load, what)




def _register(pm: pluggy.PluginManager, plugin, name: str, desc: str) -> None:
    """pm.register, whose validation (a hookimpl that is no hook of the registry, or takes an
    argument its hookspec does not pass) is one UserError naming where the plugin came from."""
    try:
        pm.register(plugin, name=name)
    except pluggy.PluginValidationError as e:
        raise UserError(f"the schedharness plugins of {desc} are invalid: {' '.join(str(e).split())}") from None


def _spec_params() -> Dict[str, Tuple[str, ...]]:
    out: Dict[str, Tuple[str, ...]] = {}
    for name, fn in inspect.getmembers(ExtensionPointSpecs, inspect.isfunction):
        if not name.startswith("_"):
            out[name] = tuple(p for p in inspect.signature(fn).parameters if p != "self")
    return out


def check_hookimpls(cls: type, name: str, where: str) -> None:
    """Every `@hookimpl` method of a plugin class names an extension point and takes only
    parameters its hookspec passes (pluggy's rule: any subset, matched by name)."""
    specs = _spec_params()
    marker = PROJECT + "_impl"
    for attr in sorted(dir(cls)):
        try:
            fn = inspect.getattr_static(cls, attr)
        except AttributeError:  # pragma: no cover
            continue
        func = getattr(fn, "__func__", fn)
        if not callable(func) or not hasattr(func, marker):
            continue
        if attr not in specs:
            raise UserError(f'plugin "{name}" from {where}: method {attr}() is marked @hookimpl '
                            f'but is no extension point (known: {", ".join(sorted(specs))})')
        params = list(inspect.signature(func).parameters.values())
        if params and not isinstance(fn, staticmethod):
            params = params[1:]  # self (or cls)
        required = [p.name for p in params
                    if p.default is inspect.Parameter.empty
                    and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        extra = [p for p in required if p not in specs[attr]]
        if extra:
            raise UserError(f'plugin "{name}" from {where}: {attr}({", ".join(required)}) takes '
                            f'{", ".join(repr(p) for p in extra)}, which the {attr} hookspec does '
                            f'not pass (it passes {", ".join(specs[attr]) or "nothing"})')


def build_registry(extra_modules: Iterable[Union[str, LocalModule]] = ()) -> Registry:
    """NewInTreeRegistry merged with the out-of-tree plugins."""
    pm, where = _plugin_manager(extra_modules)
    registry = Registry()
    owners: Dict[str, str] = {}
    for impl in pm.hook.schedharness_plugins.get_hookimpls():
        src = where.get(impl.plugin_name, f'module "{impl.plugin_name}"')
        classes = _guarded_import(impl.function, f"schedharness_plugins() of {src} failed") or []
        if not isinstance(classes, (list, tuple)):
            raise UserError(f"schedharness_plugins() of {src} must return a list of plugin classes, "
                            f"got {type(classes).__name__}")
        for cls in classes:
            if not isinstance(cls, type):
                raise UserError(f"schedharness_plugins() of {src} must return plugin classes, got "
                                f"{type(cls).__name__} {str(cls)[:60]!r}")
            name = getattr(cls, "name", "")
            if not name:
                raise UserError(f"plugin class {cls!r} from {src} has no name")
            if name in registry and registry[name] is not cls:
                raise UserError(f'a plugin named "{name}" already exists: from {owners[name]}, '
                                f'and again from {src}')
            if cls not in _ORIGINS or _ORIGINS[cls] != src:
                if src != IN_TREE:
                    check_hookimpls(cls, name, src)
                _ORIGINS[cls] = src
            registry[name] = cls
            owners[name] = src
    kind_owners: Dict[str, str] = {}
    for impl in pm.hook.schedharness_custom_resources.get_hookimpls():
        src = where.get(impl.plugin_name, f'module "{impl.plugin_name}"')
        for cr in impl.function() or []:
            if not isinstance(cr, CustomResource):
                raise UserError(f"schedharness_custom_resources of {src} returned {cr!r}, not a "
                                f"harness.framework.CustomResource")
            if not (cr.group and cr.version and cr.kind):
                raise UserError(f"custom resource {cr!r} from {src}: group, version and kind are required")
            if cr.kind in _core_kinds():
                raise UserError(f'custom resource {cr.api_version} {cr.kind} from {src}: the kind '
                                f'"{cr.kind}" is a core kind the harness serves; a custom resource '
                                f'may not shadow it (name the kind differently)')
            known = registry.custom_resources.get(cr.kind)
            if known is not None and known != cr:
                raise UserError(f'the custom resource kind "{cr.kind}" is declared twice: '
                                f'{known.api_version} from {kind_owners[cr.kind]}, and '
                                f'{cr.api_version} from {src}')
            registry.custom_resources[cr.kind] = cr
            kind_owners[cr.kind] = src
    return registry


def _core_kinds() -> frozenset:
    """The kinds the simulated API server serves itself, which no custom resource may take. A
    kind served only at alpha versions (the Workload API's Workload, PodGroup behind their gates)
    is left out: scheduler-plugins' Coscheduling declares its own PodGroup (another group), as
    examples/coscheduling does (the store keeps the two apart: harness.api.group_kind)."""
    from ..api.fields import KIND_VERSIONS, NAMESPACED_CORE_KINDS as NAMESPACED_KINDS

    alpha_only = {k for k, versions in KIND_VERSIONS.items()
                  if versions and all("alpha" in v for v in versions)}
    return (frozenset(KIND_VERSIONS) | frozenset(NAMESPACED_KINDS) | {"List", "Binding", "Event"}) - alpha_only


_DEFAULT: Optional[Registry] = None


def default_registry() -> Registry:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = build_registry()
    return _DEFAULT


__all__: List[str] = ["ENTRY_POINT_GROUP", "CustomResource", "Registry", "build_registry", "check_hookimpls",
                      "default_registry", "origin", "origin_suffix"]
