"""Opportunistic batching (framework/runtime/batch.go, KEP-5598; the OpportunisticBatching gate,
beta and on from v1.35).

A scheduling cycle that scored its nodes keeps the rest of them, best first (the heap
newSortedNodeScores built, popped on demand), with the pod's signature (Framework.sign_pod). The next cycle, when it is the very next one of this profile,
the previous one succeeded, its pod has the same signature, the batch is young enough and the
node the previous pod took no longer passes the Filter plugins for this pod (the
"one pod per node" case), takes the next node of that list as a hint: the hint is evaluated
the way a nominated node is, and if it passes the filters it is chosen without scoring.

The batch's age limit, 500 ms, is measured on the wall clock upstream; here it is measured on
the virtual clock: every cycle at one virtual instant is "at once", and a batch created before
an `advance` of more than 500 ms is stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol

MAX_BATCH_AGE = 0.5  # maxBatchAge, seconds (of virtual time here)


class SortedScoredNodes(Protocol):
    """framework.SortedScoredNodes: the nodes of a cycle left after its pick, best first. The
    scheduler hands over schedule_one.ScoreHeap, newSortedNodeScores' container/heap after its
    first Pop: each pop is heap.Pop, so the order is the heap's (higher TotalScore first; equal
    totals in the order Go's heap gives them: the Randomizer is 0 without extenders, and a
    profile with extenders signs no pod)."""

    def pop(self) -> str: ...

    def __len__(self) -> int: ...


@dataclass
class _BatchState:
    signature: str
    sorted_nodes: SortedScoredNodes
    creation_time: float


@dataclass
class _Cycle:
    cycle_count: int = -2
    chosen_node: str = ""
    succeeded: bool = False


class OpportunisticBatch:
    """runtime.OpportunisticBatch for one profile (framework)."""

    def __init__(self, handle: Any):
        self.handle = handle
        self.state: Optional[_BatchState] = None
        self.last_cycle = _Cycle()
        self.batched_pods = 0  # pods scheduled on a hint (upstream's test counter)

    def _now(self) -> float:
        clock = getattr(self.handle, "clock", None)
        return clock.now() if clock is not None else 0.0

    def get_node_hint(self, state, pod, signature: Optional[str], cycle_count: int) -> str:
        """GetNodeHint: the next node of the batch, or "" when it cannot be used."""
        if not self._compatible(state, pod, signature, cycle_count):
            return ""
        return self.state.sorted_nodes.pop()

    def store_schedule_results(self, signature: Optional[str], hinted_node: str, chosen_node: str,
                               other_nodes: Optional[SortedScoredNodes], cycle_count: int) -> None:
        """StoreScheduleResults."""
        self.last_cycle = _Cycle(cycle_count, chosen_node, True)
        if hinted_node and hinted_node == chosen_node:
            self.batched_pods += 1
            return
        if signature is not None and other_nodes is not None and len(other_nodes) > 0:
            self.state = _BatchState(signature, other_nodes, self._now())
        else:
            self.state = None

    def _state_empty(self) -> bool:
        return self.state is None or len(self.state.sorted_nodes) == 0

    def _compatible(self, state, pod, signature: Optional[str], cycle_count: int) -> bool:
        """batchStateCompatible."""
        if self._state_empty():
            return False
        if cycle_count != self.last_cycle.cycle_count + 1:
            return False  # another profile's pod, or a pod not scheduled, came in between
        if not self.last_cycle.succeeded:
            return False
        if signature is None or signature != self.state.signature:
            return False
        if self._now() > self.state.creation_time + MAX_BATCH_AGE:
            return False
        try:
            last = self.handle.snapshot.get(self.last_cycle.chosen_node)
        except KeyError:
            last = None
        if last is None:
            return False
        st = self.handle.run_filter_plugins(state, pod, last)
        # the previous pod's node must no longer fit this pod (one pod per node)
        return st is not None and st.is_rejected()
