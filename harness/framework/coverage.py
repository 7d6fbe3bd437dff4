"""Coverage of extension points (`run --coverage`): which plugins were called at which extension
point, and which enabled plugin/extension-point pairs never were.

Only when asked: a Framework built inside a run with coverage gets its plugin calls wrapped
(instrument), so the default run pays nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Set, Tuple

# configuration key -> the extension point's name in reports (framework.go's interfaces)
POINTS = {
    "preEnqueue": "PreEnqueue", "queueSort": "QueueSort", "preFilter": "PreFilter", "filter": "Filter",
    "postFilter": "PostFilter", "preScore": "PreScore", "score": "Score", "reserve": "Reserve",
    "permit": "Permit", "preBind": "PreBind", "bind": "Bind", "postBind": "PostBind",
}


class Coverage:
    """(plugin, extension point) pairs enabled in some profile, and those called."""

    def __init__(self) -> None:
        self.enabled: Set[Tuple[str, str]] = set()
        self.called: Set[Tuple[str, str]] = set()

    def _wrap(self, plugin: str, point: str, fn: Callable) -> Callable:
        self.enabled.add((plugin, point))
        key = (plugin, point)
        called = self.called

        def wrapper(*args: Any, **kw: Any) -> Any:
            called.add(key)  # set.add is atomic: safe on the Parallelizer's threads
            return fn(*args, **kw)

        return wrapper

    def instrument(self, fw: Any) -> None:
        """Wrap every plugin call of a freshly built Framework (PluginCall.fn, the batch forms,
        the PreFilter extensions, NormalizeScore, Unreserve, PreBindPreFlight, queueing hints)."""
        for key, calls in fw.ep_plugins.items():
            for pc in calls:
                pc.fn = self._wrap(pc.name, POINTS.get(key, key), pc.fn)
        for attr, point in (("_filter_batch", "Filter"), ("_score_batch", "Score"),
                            ("_normalize_batch", "NormalizeScore")):
            table = getattr(fw, attr)
            for name, bfn in list(table.items()):
                if bfn is not None:
                    table[name] = self._wrap(name, point, bfn)
        for attr, point in (("_add_pod_calls", "PreFilterExtensions.AddPod"),
                            ("_remove_pod_calls", "PreFilterExtensions.RemovePod"),
                            ("_unreserve_calls", "Unreserve")):
            for pc in getattr(fw, attr):
                pc.fn = self._wrap(pc.name, point, pc.fn)
        for pc in fw._normalize_calls.values():
            pc.fn = self._wrap(pc.name, "NormalizeScore", pc.fn)
        for _, pc in fw._pre_bind_pre_flight_calls:
            if pc is not None:
                pc.fn = self._wrap(pc.name, "PreBindPreFlight", pc.fn)
        for i, (name, events) in enumerate(fw.enqueue_extensions):
            wrapped = [dataclasses.replace(ev, queueing_hint_fn=self._wrap(name, "QueueingHint", ev.queueing_hint_fn))
                       if ev.queueing_hint_fn is not None else ev for ev in events]
            fw.enqueue_extensions[i] = (name, wrapped)

    def to_json(self) -> Dict[str, Any]:
        """{"called": {plugin: [points]}, "neverCalled": {plugin: [points]}}."""
        called: Dict[str, List[str]] = {}
        never: Dict[str, List[str]] = {}
        for plugin, point in sorted(self.enabled | self.called):
            (called if (plugin, point) in self.called else never).setdefault(plugin, []).append(point)
        return {"called": called, "neverCalled": never}


def merge(reports: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The total over cases: a pair is called if some case called it."""
    called: Set[Tuple[str, str]] = set()
    enabled: Set[Tuple[str, str]] = set()
    for r in reports:
        for key in ("called", "neverCalled"):
            for plugin, points in r[key].items():
                enabled.update((plugin, p) for p in points)
                if key == "called":
                    called.update((plugin, p) for p in points)
    total = Coverage()
    total.enabled, total.called = enabled, called
    return total.to_json()


def format_lines(report: Dict[str, Any]) -> List[str]:
    """Lines for the text report: each plugin's points called, then the pairs never called."""
    lines = [f"  called: {plugin}: {', '.join(points)}" for plugin, points in report["called"].items()]
    lines += [f"  never called: {plugin}: {', '.join(points)}" for plugin, points in report["neverCalled"].items()]
    return lines
