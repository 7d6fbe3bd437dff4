"""NodeVolumeLimits (framework/plugins/nodevolumelimits): upstream's CSILimits, with the parts of
csi-translation-lib it needs in `builtin_plugins.csitranslation`."""

from __future__ import annotations

from .csi import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, CSILimits, NodeVolumeLimits

__all__ = ["CSILimits", "NodeVolumeLimits", "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "PLUGINS"]

PLUGINS = [CSILimits]
