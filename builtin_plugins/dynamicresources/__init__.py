"""DynamicResources (framework/plugins/dynamicresources) with the structured allocator
(dynamic-resource-allocation/structured) and device selectors in CEL."""

from .plugin import PLUGINS, DynamicResources

__all__ = ["PLUGINS", "DynamicResources"]
