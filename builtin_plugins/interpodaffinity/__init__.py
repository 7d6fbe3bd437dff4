"""InterPodAffinity (framework/plugins/interpodaffinity): plugin.py holds the plugin, its args
and queueing hints (plugin.go), filtering.py PreFilter/Filter (filtering.go), scoring.py
PreScore/Score/NormalizeScore (scoring.go)."""

from __future__ import annotations

from .plugin import InterPodAffinity

PLUGINS = [InterPodAffinity]
