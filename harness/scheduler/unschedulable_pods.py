"""unschedulablePods (backend/queue/unschedulable_pods.go): the pool of pods waiting for an event,
filed by gating state so that an event skips at once the gated pods it can never move."""

from __future__ import annotations

import os
from typing import Callable, Dict, List, Optional, Set, Tuple

from ..framework.types import ClusterEvent, QueuedPodInfo

# A pod's file: None for a pod no PreEnqueue plugin gates, else (gating plugin, its events).
_Key = Optional[Tuple[str, Tuple[ClusterEvent, ...]]]
_MISSING = object()


def _key(pinfo: QueuedPodInfo) -> _Key:
    if not pinfo.gated():
        return None
    return (pinfo.gating_plugin, tuple(pinfo.gating_plugin_events))


def check_enabled() -> bool:
    """SCHEDHARNESS_CHECK_QUEUE_INDEX=1: every lookup is compared with the scan of the whole pool
    (the property tests set it)."""
    return os.environ.get("SCHEDHARNESS_CHECK_QUEUE_INDEX") == "1"


class UnschedulablePods(dict):
    """unschedulablePods.podInfoMap: uid -> QueuedPodInfo, iterated in insertion order (the
    harness's fixed stand-in for Go's map order; setting a pod already there keeps its place).

    movePodsToActiveOrBackoffQueue first drops each gated pod whose gating plugin registered no
    event matching the incoming one ("this event never moves this Pod to activeQ"). With 10000
    gated pods and an AssignedPod event per binding, weighing each of them costs more than the
    scheduling; so the pool also files its pods by (gating plugin, gating plugin events), and
    `movable(event)` hands back, in the pool's order, the pods of the files the event can move:
    the same pods, in the same order, that the per-pod check keeps. A pod's gating state changes
    only in PreEnqueue (SchedulingQueue._run_pre_enqueue) and Pop, which call `refile`."""

    def __init__(self) -> None:
        super().__init__()
        self._pos: Dict[str, int] = {}  # uid -> insertion position (the dict's own order)
        self._next = 0
        self._file_of: Dict[str, _Key] = {}
        self._files: Dict[_Key, Dict[str, QueuedPodInfo]] = {}
        self._unordered: Set[_Key] = set()  # files whose order may differ from the pool's
        self._matches: Dict[Tuple[_Key, ClusterEvent], bool] = {}
        self.check = check_enabled()
        # bumped by every change of the pool or of a pod's file: what was derived from the pool's
        # pods (SchedulingQueue's kept skip answers) holds while it is unchanged
        self.version = 0

    # -- the dict's writes keep the files -----------------------------------------------------
    def __setitem__(self, uid: str, pinfo: QueuedPodInfo) -> None:
        if uid not in self:
            self._pos[uid] = self._next
            self._next += 1
        super().__setitem__(uid, pinfo)
        self._file(uid, pinfo)

    def __delitem__(self, uid: str) -> None:
        super().__delitem__(uid)
        self._unfile(uid)

    def pop(self, uid, *default):  # type: ignore[override]
        if uid in self:
            self._unfile(uid)
        return super().pop(uid, *default)

    def popitem(self):  # type: ignore[override]
        uid, pinfo = super().popitem()
        self._unfile(uid)
        return uid, pinfo

    def setdefault(self, uid, pinfo=None):  # type: ignore[override]
        if uid not in self:
            self[uid] = pinfo
        return self[uid]

    def update(self, *args, **kwargs) -> None:  # type: ignore[override]
        for uid, pinfo in dict(*args, **kwargs).items():
            self[uid] = pinfo

    def clear(self) -> None:
        self.version += 1
        super().clear()
        self._pos.clear()
        self._file_of.clear()
        self._files.clear()
        self._unordered.clear()

    def refile(self, pinfo: QueuedPodInfo) -> None:
        """The pod's gating state changed (PreEnqueue ran, or Pop cleared it): file it again if
        it is in the pool."""
        uid = pinfo.pod.uid
        if self.get(uid) is pinfo:
            self._file(uid, pinfo)

    def _file(self, uid: str, pinfo: QueuedPodInfo) -> None:
        self.version += 1
        key = _key(pinfo)
        old = self._file_of.get(uid, _MISSING)
        if old == key:
            self._files[key][uid] = pinfo  # an existing key keeps its place, as in the pool
            return
        if old is not _MISSING:
            self._drop(old, uid)
        f = self._files.get(key)
        if f is None:
            f = self._files[key] = {}
        elif f and self._pos[next(reversed(f))] > self._pos[uid]:
            self._unordered.add(key)
        f[uid] = pinfo
        self._file_of[uid] = key

    def _unfile(self, uid: str) -> None:
        self.version += 1
        self._pos.pop(uid, None)
        key = self._file_of.pop(uid, _MISSING)
        if key is not _MISSING:
            self._drop(key, uid)

    def _drop(self, key: _Key, uid: str) -> None:
        f = self._files[key]
        del f[uid]
        if not f:
            del self._files[key]
            self._unordered.discard(key)

    # -- the lookup ---------------------------------------------------------------------------
    def _movable_file(self, key: _Key, event: ClusterEvent, match: Callable[[ClusterEvent, ClusterEvent], bool]) -> bool:
        if key is None:
            return True
        known = self._matches.get((key, event))
        if known is None:
            known = self._matches[(key, event)] = any(match(e, event) for e in key[1])
        return known

    def movable(self, event: ClusterEvent, match: Callable[[ClusterEvent, ClusterEvent], bool]) -> List[QueuedPodInfo]:
        """The pods of the pool, in its order, except the gated ones whose gating plugin's
        events do not match `event` (MatchAnyClusterEvent(event, pInfo.GatingPluginEvents))."""
        keys = [k for k in self._files if self._movable_file(k, event, match)]
        if not keys:
            out: List[QueuedPodInfo] = []
        elif len(keys) == 1 and keys[0] not in self._unordered:
            out = list(self._files[keys[0]].values())
        else:
            pos = self._pos
            items = sorted((item for k in keys for item in self._files[k].items()), key=lambda it: pos[it[0]])
            for k in keys:
                if k in self._unordered:  # put the file back in the pool's order once
                    f = self._files[k]
                    self._files[k] = {u: f[u] for u in sorted(f, key=pos.__getitem__)}
                    self._unordered.discard(k)
            out = [pinfo for _, pinfo in items]
        if self.check:
            want = [p for p in self.values()
                    if not (p.gated() and not any(match(e, event) for e in p.gating_plugin_events))]
            if [id(p) for p in out] != [id(p) for p in want]:
                raise AssertionError(f"unschedulable pods' index for {event.label()}: "
                                     f"{[p.pod.key for p in out]} != {[p.pod.key for p in want]}")
        return out
