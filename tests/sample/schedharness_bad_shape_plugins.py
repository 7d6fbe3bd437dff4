"""Out-of-tree plugins whose hooks return values of the wrong shape (tests/test_robustness.py)."""

from __future__ import annotations

from harness.framework import Plugin, hookimpl


class BareScore(Plugin):
    """Score returns 50 instead of (50, None)."""

    name = "BareScore"

    @hookimpl
    def score(self, state, pod, node_info):
        return 50


class TextFilter(Plugin):
    """Filter returns a string instead of a Status or None."""

    name = "TextFilter"

    @hookimpl
    def filter(self, state, pod, node_info):
        return "fits"


@hookimpl
def schedharness_plugins():
    return [BareScore, TextFilter]
