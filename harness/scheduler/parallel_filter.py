"""findNodesThatPassFilters' and RunScorePlugins' parallel walks (schedule_one.go,
framework/runtime.go), for `run --parallel` and `explore` (see harness.framework.parallelize)."""

from __future__ import annotations

import threading
from typing import Any, Callable, List, Optional, Sequence, Tuple

from ..framework.parallelize import RunSettings, chunk_size_for, num_workers_for_chunk_size, until
from ..framework.status import Code, Status
from ..framework.types import NodeInfo
from ..versions.ties import feasible_order_breaks_ties

MISSING = object()  # a node no worker reached before the stop


def _key(st: Optional[Status]) -> Any:
    if st is None or st.code == Code.Success:
        return None
    err = st.as_error() if st.code == Code.Error else None
    return (int(st.code), tuple(st.get_reasons()), st.plugin, str(err) if err is not None else "")


def _show(st: Optional[Status]) -> str:
    if st is None or st.code == Code.Success:
        return "Success"
    return f"{st.code} {st.message()!r}" + (f" ({st.plugin})" if st.plugin else "")


def _blame(threaded: Optional[Status], sequential: Optional[Status], order: Sequence[str]) -> str:
    """The plugin whose result changed: of the two rejecting plugins, the one earlier in the
    Filter order (the later one was reached in one walk only because the earlier passed)."""
    names = [st.plugin for st in (threaded, sequential) if st is not None and st.plugin]
    if not names:
        return "?"
    return min(names, key=lambda n: order.index(n) if n in order else len(order))


def filter_statuses(settings: RunSettings, parallelism: int, state, pod, nodes: List[NodeInfo],
                    start: int, to_find: int, run: Callable, order: Sequence[str]) -> List[Any]:
    """checkNode on `parallelism` threads (Parallelizer.Until), stopping once `to_find` nodes
    passed or a node gave an Error; then every node reached is filtered again sequentially and
    a difference flags the plugin. Returns each node's status in walk order (MISSING: not
    reached)."""
    n = len(nodes)
    results: List[Any] = [MISSING] * n
    stop = threading.Event()
    lock = threading.Lock()
    found = [0]

    def check_node(i: int) -> None:
        st = run(state, pod, nodes[(start + i) % n])
        results[i] = st
        if st is None or st.code == Code.Success:
            with lock:
                found[0] += 1
                if found[0] >= to_find:
                    stop.set()
        elif st.code == Code.Error:
            stop.set()

    until(parallelism, n, check_node, stop)
    for i, st in enumerate(results):
        if st is MISSING:
            continue
        ni = nodes[(start + i) % n]
        again = run(state, pod, ni)
        if _key(again) != _key(st):
            plugin = _blame(st, again, order)
            settings.flag(plugin, f"Filter on node {ni.node.name} gave {_show(st)} under threads, "
                                  f"{_show(again)} sequentially")
    return results


def score_node_map(settings: RunSettings, parallelism: int) -> Callable:
    """RunScorePlugins' per-node loop on threads: (plugin, fn, nodes) -> fn(node) for each node,
    in node order; the first exception (in node order) is raised. Every node is scored again
    sequentially and a difference flags the plugin."""

    def node_map(plugin: str, fn: Callable, nodes: List[NodeInfo]) -> List[Any]:
        out: List[Any] = [None] * len(nodes)
        errs: List[Optional[BaseException]] = [None] * len(nodes)

        def piece(i: int) -> None:
            try:
                out[i] = fn(nodes[i])
            except Exception as e:  # noqa: BLE001 - reported as the plugin's error
                errs[i] = e

        until(parallelism, len(nodes), piece)
        for i, ni in enumerate(nodes):
            try:
                again: Any = fn(ni)
            except Exception as e:  # noqa: BLE001
                again = f"raised {type(e).__name__}: {e}"
            got = out[i] if errs[i] is None else f"raised {type(errs[i]).__name__}: {errs[i]}"
            if repr(got) != repr(again):
                settings.flag(plugin, f"Score on node {ni.node.name} gave {got!r} under threads, "
                                      f"{again!r} sequentially")
                break
        for e in errs:
            if e is not None:
                raise e
        return out

    return node_map


def feasible_order_drawn(features, parallelism: int) -> bool:
    """Whether `explore` draws the order of findNodesThatPassFilters' feasible list even when
    every node is filtered: from v1.35 that order decides ties between top-scored nodes
    (newSortedNodeScores' heap puts the first of equal nodes at its root), and with more than
    one worker it is the order the workers finished in (`feasibleNodes[length-1] = nodeInfo`
    after an atomic increment). v1.34's selectHost draws uniformly among the tied nodes
    whatever their order; one worker walks the nodes in order."""
    return feasible_order_breaks_ties(features, parallelism)


def explore_walk(rng, parallelism: int, state, pod, nodes: List[NodeInfo], start: int, to_find: int,
                 run: Callable) -> Tuple[List[int], List[int], List[Any]]:
    """One way upstream's workers may interleave (for `explore`): `workers` goroutines take
    chunks in order (one each as they start, the next when one is done) and process their
    pieces; at each step a random worker finishes its next piece. When the `to_find`-th node
    passes (or a node gives an Error) the context is cancelled: each other worker may still
    finish the piece it had started (a fair coin), feasible ones beyond `to_find` being dropped
    (`length > numNodesToFind`). Returns the feasible indices and the rejected indices reached,
    in completion order, and every status."""
    n = len(nodes)
    sts = [run(state, pod, nodes[(start + i) % n]) for i in range(n)]
    chunk = chunk_size_for(n, parallelism)
    workers = num_workers_for_chunk_size(parallelism, n, chunk)
    chunks = [list(range(c * chunk, min(c * chunk + chunk, n))) for c in range((n + chunk - 1) // chunk)]
    # every worker takes its first chunk as it starts (workqueue.ParallelizeUntil's goroutines
    # all read the chunk channel at once), the later ones as it finishes the one before
    queues: List[List[int]] = [chunks.pop(0) if chunks else [] for _ in range(workers)]
    feasible: List[int] = []
    rejected: List[int] = []

    def take(w: int) -> Optional[int]:
        if not queues[w] and chunks:
            queues[w] = chunks.pop(0)
        return queues[w].pop(0) if queues[w] else None

    def done(i: int) -> bool:
        st = sts[i]
        if st is None or st.code == Code.Success:
            if len(feasible) < to_find:
                feasible.append(i)
            return len(feasible) >= to_find
        rejected.append(i)
        return st.code == Code.Error

    live = list(range(workers))
    while live:
        w = rng.choice(live)
        i = take(w)
        if i is None:
            live.remove(w)
            continue
        if done(i):
            for other in live:
                if other != w and rng.random() < 0.5:
                    j = take(other)
                    if j is not None:
                        done(j)
            break
    return feasible, rejected, sts
