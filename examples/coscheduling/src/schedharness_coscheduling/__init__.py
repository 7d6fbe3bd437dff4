"""schedharness-coscheduling: gang scheduling (scheduler-plugins' Coscheduling) as an out-of-tree
schedharness plugin, registered through the `schedharness.plugins` entry point."""

from __future__ import annotations

from typing import List

from harness.framework import hookimpl

from .plugin import Coscheduling

__all__ = ["Coscheduling", "schedharness_plugins"]


@hookimpl
def schedharness_plugins() -> List[type]:
    return [Coscheduling]
