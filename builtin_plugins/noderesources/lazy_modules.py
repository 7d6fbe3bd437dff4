"""Modules NodeResourcesFit and BalancedAllocation call into on every cycle but import only on
first use (dynamicresources pulls in the allocator and CEL): a function-level import statement
went through the import system's lookup on every call, these return the module kept here."""

from __future__ import annotations

from types import ModuleType
from typing import Dict

_LOADED: Dict[str, ModuleType] = {}


def extended() -> ModuleType:
    """builtin_plugins.dynamicresources.extended."""
    mod = _LOADED.get("extended")
    if mod is None:
        from builtin_plugins.dynamicresources import extended as mod
        _LOADED["extended"] = mod
    return mod


def dra_scoring() -> ModuleType:
    """builtin_plugins.noderesources.dra_scoring."""
    mod = _LOADED.get("dra_scoring")
    if mod is None:
        from . import dra_scoring as mod
        _LOADED["dra_scoring"] = mod
    return mod
