"""DynamicResources: the plugin lives in the `dynamicresources` package; this module keeps the
registered module path (`_MODULES`) working."""

from .dynamicresources.plugin import PLUGINS, DynamicResources  # noqa: F401
