"""NodeResourcesFit and NodeResourcesBalancedAllocation (framework/plugins/noderesources)."""

from __future__ import annotations

from .balanced_allocation import BalancedAllocation
from .fit import Fit

PLUGINS = [Fit, BalancedAllocation]
