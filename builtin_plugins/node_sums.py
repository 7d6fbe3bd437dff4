"""Sums over the snapshot's nodes that in-tree plugins recompute every cycle (InterPodAffinity's
PreFilter and PreScore counts), kept across cycles: not an upstream type. Each node contributes
{key: value}; the result is, per key touched by at least one node, the sum of the values: what a
walk over every node that adds each contribution to a dict gives, up to the dict's order (the
callers only look keys up and test emptiness). The sums are kept with the signature of the pod
they were computed for (everything of the pod the contributions read) and the snapshot's node
list; the next pod with that signature on that list gets them brought up to date from the nodes
the snapshot's journal names (their old contribution out, the new one in)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Hashable, List, Optional, Set

# False: walk every node every cycle (the reference the property test compares against)
ENABLED = True

Contribution = Dict[Hashable, int]


class NodeSums:
    __slots__ = ("_prev",)

    def __init__(self) -> None:
        self._prev: Optional[tuple] = None

    def sums(self, snap: Any, sig: Optional[str], contrib: Callable[[Any], Contribution],
             only: Optional[Callable[[], Optional[Set[str]]]] = None) -> Dict[Hashable, int]:
        """The sums over snap.node_info_list of contrib(node_info). `sig` None: not cacheable.
        `only()`: the nodes whose contribution may be non-empty (node_index), or None; asked only
        when the sums are walked anew (not when kept ones are brought up to date), the others
        skipped."""
        nodes = snap.node_info_list
        journal = getattr(snap, "journal", None)
        if not ENABLED or sig is None or journal is None:
            return _walk(nodes, contrib)[0]
        prev = self._prev
        if prev is not None:
            psig, psnap, plist, epoch, pos, totals, per_node, values, partial = prev
            if psig == sig and psnap is snap and plist is nodes and epoch == snap.journal_epoch:
                ok = True
                for name in dict.fromkeys(journal[pos:]):
                    ni = snap.node_info_map.get(name)
                    if ni is None or ni.node is None or (name not in per_node and not partial):
                        ok = False
                        break
                    for k, v in per_node.get(name, _NOTHING).items():
                        t = totals[k]
                        t[0] -= v
                        t[1] -= 1
                        if t[1] == 0:
                            del totals[k]
                            del values[k]
                        else:
                            values[k] = t[0]
                    new = contrib(ni)
                    for k, v in new.items():
                        t = totals.get(k)
                        if t is None:
                            totals[k] = [v, 1]
                        else:
                            t[0] += v
                            t[1] += 1
                        values[k] = totals[k][0]
                    per_node[name] = new
                if ok:
                    self._prev = (sig, snap, nodes, epoch, len(journal), totals, per_node, values, partial)
                    return dict(values)
        names = only() if only is not None else None
        partial = names is not None
        if partial:
            nodes = [ni for ni in nodes if ni.node.name in names]
        values, totals, per_node = _walk(nodes, contrib)
        self._prev = (sig, snap, snap.node_info_list, snap.journal_epoch, len(journal), totals, per_node, values,
                      partial)
        return dict(values)


_NOTHING: Contribution = {}


def _walk(nodes: List[Any], contrib: Callable[[Any], Contribution]):
    totals: Dict[Hashable, List[int]] = {}
    per_node: Dict[str, Contribution] = {}
    for ni in nodes:
        c = contrib(ni)
        per_node[ni.node.name] = c
        for k, v in c.items():
            t = totals.get(k)
            if t is None:
                totals[k] = [v, 1]
            else:
                t[0] += v
                t[1] += 1
    return {k: t[0] for k, t in totals.items()}, totals, per_node
