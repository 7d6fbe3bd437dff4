"""PrioritySort (framework/plugins/queuesort/priority_sort.go)."""

from __future__ import annotations

from harness.framework import Plugin, hookimpl

from . import names


class PrioritySort(Plugin):
    name = names.PrioritySort

    @hookimpl
    def less(self, pod_info1, pod_info2) -> bool:
        """Higher priority first, then the one queued earlier."""
        p1, p2 = pod_info1.pod.priority, pod_info2.pod.priority
        return p1 > p2 or (p1 == p2 and (pod_info1.timestamp, pod_info1.seq) < (pod_info2.timestamp, pod_info2.seq))

    def sort_key(self, pod_info) -> tuple:
        """less as a key (the in-tree fast path the queue's heap compares without a call):
        less(a, b) is sort_key(a) < sort_key(b)."""
        return (-pod_info.pod.priority, pod_info.timestamp, pod_info.seq)


PLUGINS = [PrioritySort]
