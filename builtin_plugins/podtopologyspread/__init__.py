"""PodTopologySpread (framework/plugins/podtopologyspread): spreading pods over topology
domains, as filtering (DoNotSchedule) and scoring (ScheduleAnyway)."""

from __future__ import annotations

from .plugin import PodTopologySpread

PLUGINS = [PodTopologySpread]
