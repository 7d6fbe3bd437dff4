"""DynamicResources' Filter over a chunk of nodes at once (filter_nodes, the batch form the
framework calls; a harness speed-up, not an upstream function: the same outcomes as Filter on
each node).

The common pod of a DRA cluster has claims whose requests are one plain request shape
(fastpath.FastFilter: ExactCount of one device class, CEL selectors, nothing the allocator's
search decides), none allocated yet, and no extended-resource claim. FastFilter.fits then
answers, per node, "are `count` of the node's eligible devices not allocated?". Asked of 500
nodes a cycle, one call each, that is most of the cycle. Here the answer for a chunk is one
count per table row: the eligible device IDs of every row of the node table (FastFilter's own
per-node entries, so the same eligibility) are numbered once, while the slices and the rows'
Node objects are the same; each cycle, the allocated devices among them are found with one set
intersection, and numpy counts each row's free ones. A node that fits gets the Deferred
allocation Filter keeps for it; one that does not gets Filter's rejection,
UnschedulableAndUnresolvable "cannot allocate all claims" (`explain` still runs Filter per node
and shows its detail).

Anything else -- several request shapes, claims already allocated, the extended-resource claim,
pending allocations of a pod group, a node whose devices need the allocator or whose eligible
IDs repeat, a chunk that is not rows of the node table -- answers None: the framework calls
Filter on each node. tests/dra/test_batch_filter_property.py compares both on random clusters."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from harness.framework import Code, NotFoundError
from harness.framework.lazy_status import StatusColumn
from harness.framework.node_table import NodeRows, NodeTable, numpy, row_index

from . import podgroup_claims
from .fastpath import _DECLINE, Deferred, FastFilter, _Shape

ENABLED = True  # False: Filter on each node (the property tests' reference)

CANNOT_ALLOCATE = (Code.UnschedulableAndUnresolvable, ("cannot allocate all claims",))


class RowDevices:
    """One request shape's eligible devices over the rows of a node table: device IDs numbered
    (`index`), the (row, device number) pairs of every row, and the rows that need Filter on
    the node (devices the allocator must decide on, or eligible IDs that repeat)."""

    __slots__ = ("table", "versions", "index", "union", "entry_rows", "entry_devs", "declined", "last", "base")

    def __init__(self, fast: FastFilter, shape: _Shape, table: NodeTable):
        np = numpy()
        self.table = table
        self.versions = table.node_version.copy()
        index: Dict[Any, int] = {}
        rows: List[int] = []
        devs: List[int] = []
        declined = np.zeros(len(table.nodes), dtype=bool)
        for i, ni in enumerate(table.nodes):
            eligible, distinct = fast.entry(ni.node, shape)
            if eligible is _DECLINE or distinct is None:
                declined[i] = True
                continue
            for did in eligible:
                k = index.get(did)
                if k is None:
                    k = index[did] = len(index)
                rows.append(i)
                devs.append(k)
        self.index = index
        self.union = frozenset(index)
        self.entry_rows = np.array(rows, dtype=np.intp)
        self.entry_devs = np.array(devs, dtype=np.intp)
        self.declined = declined
        self.last: Optional[tuple] = None  # (allocated set, its size, free counts)
        # (claim tracker, its log epoch and position, which devices its claims hold then)
        self.base: Optional[tuple] = None

    def current(self, table: NodeTable) -> bool:
        """Whether this still describes `table` (the same table, no Node object replaced)."""
        return self.table is table and bool((self.versions == table.node_version).all())

    def free_counts(self, allocated, tracker) -> Any:
        """Per table row, how many of its eligible devices are not in `allocated` (a set no
        one changes during a cycle: kept from one chunk of the cycle to the next)."""
        last = self.last
        if last is not None and last[0] is allocated and last[1] == len(allocated):
            return last[2]
        np = numpy()
        used = self._used(allocated, tracker)
        if used is None:
            used = self._used_of_set(allocated)
        counts = np.bincount(self.entry_rows, weights=(1 - used)[self.entry_devs], minlength=len(self.versions))
        self.last = (allocated, len(allocated), counts)
        return counts

    def _used_of_set(self, allocated) -> Any:
        """Per device number, 1 when the device is in `allocated`: set operations over all of
        them."""
        np = numpy()
        index = self.index
        n = len(index)
        if 2 * len(allocated) <= n:
            hit = self.union.intersection(allocated)  # walks `allocated`, in C
            used = np.zeros(n, dtype=np.intp)
            if hit:
                used[np.fromiter((index[d] for d in hit), dtype=np.intp, count=len(hit))] = 1
        else:
            left = self.union.difference(allocated)  # walks the eligible devices, in C
            used = np.ones(n, dtype=np.intp)
            if left:
                used[np.fromiter((index[d] for d in left), dtype=np.intp, count=len(left))] = 0
        return used

    def _used(self, allocated, tracker) -> Any:
        """_used_of_set(allocated) when the claim tracker built `allocated` as the devices of
        its claims plus a few more (ClaimTracker.last_parts): the claims' devices followed
        through the tracker's log of them since the last cycle; else None."""
        parts = getattr(tracker, "last_parts", None)
        if parts is None or parts[0] is not allocated:
            return None
        _, epoch, pos, extra = parts
        base = self.base
        if base is None or base[0] is not tracker or base[1] != epoch or base[2] > pos:
            if epoch != tracker.device_log_epoch or pos != len(tracker.device_log):
                return None
            claimed = self._used_of_set(tracker.allocated_keys())
        else:
            claimed = base[3]
            index = self.index
            for d, delta in tracker.device_log[base[2]:pos]:
                k = index.get(d)
                if k is not None:
                    claimed[k] = 1 if delta > 0 else 0
        self.base = (tracker, epoch, pos, claimed)
        if not extra:
            return claimed
        used = claimed.copy()
        index = self.index
        for d in extra:
            k = index.get(d)
            if k is not None:
                used[k] = 1
        return used


def row_devices(fast: FastFilter, shape: _Shape, table: NodeTable) -> RowDevices:
    """The shape's RowDevices for table, kept in FastFilter's cache (emptied when the slices
    change) while current."""
    key = ("rows", shape.key)
    rd = fast.cache.get(key)
    if rd is None or not rd.current(table):
        rd = fast.cache[key] = RowDevices(fast, shape, table)
    return rd


def filter_nodes(state_key: str, state, pod, nodes, tracker=None) -> Optional[StatusColumn]:
    """Filter on each of `nodes` (see the module docstring), or None: call Filter per node."""
    if not ENABLED or nodes.__class__ is not NodeRows:
        return None
    try:
        s = state.read(state_key)
    except NotFoundError:
        return None
    fast = s.fast
    if (not s.claims or s.allocator is None or fast is None or s.ext is not None or s.checked_claims
            or s.ext_to_allocate_index is not None or s.extended_claim() is not None):
        return None
    shapes = fast.shapes
    if shapes is None or len(shapes) != 1:
        return None
    np = numpy()
    rd = row_devices(fast, shapes[0], nodes.table)
    rows = row_index(nodes.rows)
    if rd.declined[rows].any():
        return None
    ok = rd.free_counts(s.allocator.allocated_devices, tracker)[rows] >= shapes[0].count
    # the allocations Filter keeps for the nodes that fit (results built at Reserve)
    allocator, to_allocate = s.allocator, s.raw_to_allocate
    pending = [s.informations_for_claim[i].allocation for i in s.pending_indexes]
    node_allocations = s.node_allocations
    for k in ok.nonzero()[0].tolist():
        node = nodes[k].node
        a: Any = Deferred(allocator, node, to_allocate)
        if pending:
            a = podgroup_claims.WithPending(a, pending)
        node_allocations[node.name] = a
    return StatusColumn((~ok).astype(np.int64), (None, CANNOT_ALLOCATE))
