"""The check of sharing's rule (harness/sharing.py, docs/conventions.md): values below a Pod's or
a Node's metadata/spec/status, which several objects may hold at once, are never written in
place. A watch remembers the text of every such value of every Pod and Node the API server
admitted (those built with the case, and every one a step, the scheduler or a controller writes
later, through the cluster's events); `written()` lists those whose text changed since."""

from __future__ import annotations

import contextlib
import json
from typing import Any, Dict, Iterator, List, Tuple

WATCHED_KINDS = ("Pod", "Node")


def _text(v: Any) -> str:
    try:
        return json.dumps(v, default=str)
    except (TypeError, ValueError):  # a key JSON has no form for, a number too long to print
        return repr(v)


class SharedValuesWatch:
    """run_case hooks (built, ran; `inner`'s too, if given), or `watch(run)` for a CaseRun driven
    by hand. `admitted`: each Pod's and Node's manifest as the case built it."""

    def __init__(self, inner: Any = None) -> None:
        self.inner = inner
        self.admitted: Dict[Tuple[str, str], str] = {}
        self.values: Dict[int, Tuple[Any, str]] = {}

    def _below_top(self, v: Any, depth: int) -> None:
        if isinstance(v, (dict, list)):
            if depth >= 2:
                if id(v) in self.values:
                    return  # seen whole before (a copy's shared part)
                self.values[id(v)] = (v, _text(v))
            for x in (v.values() if isinstance(v, dict) else v):
                self._below_top(x, depth + 1)

    def _on_event(self, kind: str, old: Any, new: Any) -> None:
        if kind in WATCHED_KINDS and new is not None:
            self._below_top(new.raw, 0)

    def watch(self, run: Any) -> None:
        """Watch every Pod and Node the cluster holds now and every one it is given later."""
        for kind in WATCHED_KINDS:
            for o in run.cluster.list(kind):
                self.admitted.setdefault((kind, o.key), _text(o.raw))
                self._below_top(o.raw, 0)
        run.cluster.subscribe(self._on_event)

    def built(self, run: Any) -> None:
        self.watch(run)
        if self.inner is not None:
            self.inner.built(run)

    def ran(self, run: Any) -> None:
        if self.inner is not None:
            self.inner.ran(run)

    def written(self) -> List[str]:
        """The watched values (as first seen) whose text is not what it was."""
        return [text for v, text in self.values.values() if _text(v) != text]


@contextlib.contextmanager
def every_run_watched() -> Iterator[List[SharedValuesWatch]]:
    """Every run_case inside the block (the CLI's `run` too) watched: yields the list of their
    watches, one per case run."""
    import pytest

    from harness.case import runner

    watches: List[SharedValuesWatch] = []
    plain = runner._run_case

    def watched(case, registry, explain, hooks=None):
        w = SharedValuesWatch(hooks)
        watches.append(w)
        return plain(case, registry, explain, w)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runner, "_run_case", watched)
        yield watches
