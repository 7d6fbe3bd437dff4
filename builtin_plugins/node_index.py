"""Which nodes of the snapshot can contribute to a sum that an in-tree plugin recomputes every
cycle over all nodes (PodTopologySpread's and InterPodAffinity's PreScore counts): not an
upstream type. Each node has keys (the labels of its pods, the label values its pods' terms
ask for) and the index maps each key to the nodes that have it, kept across cycles and brought
up to date from the nodes the snapshot's journal names, as node_sums keeps its sums. A walk
over the nodes the index names gives the same sums as a walk over every node, because every
other node contributes nothing; a pod of a new shape then costs the nodes holding pods it can
match instead of the whole cluster (300 pods of new shapes on a 5000-node / 150,000-pod
cluster: README "Real clusters")."""

from __future__ import annotations

from typing import Any, Callable, Dict, Hashable, Iterable, Optional, Set

# False: no index (the callers walk every node: the reference the property tests compare with)
ENABLED = True

Keys = Dict[Hashable, int]


class NodeKeyIndex:
    __slots__ = ("_keys_of", "_state")

    def __init__(self, keys_of: Callable[[Any], Keys]) -> None:
        self._keys_of = keys_of
        self._state: Optional[tuple] = None

    def of(self, snap: Any) -> Optional[Dict[Hashable, Dict[str, int]]]:
        """key -> {node name: count} over snap.node_info_list, or None (no index: the snapshot
        keeps no journal, or the index is off)."""
        journal = getattr(snap, "journal", None)
        if not ENABLED or journal is None:
            return None
        nodes = snap.node_info_list
        st = self._state
        if st is not None:
            psnap, plist, epoch, pos, index, per_node = st
            if psnap is snap and plist is nodes and epoch == snap.journal_epoch:
                if pos == len(journal):
                    return index
                keys_of = self._keys_of
                for name in dict.fromkeys(journal[pos:]):
                    ni = snap.node_info_map.get(name)
                    if ni is None or ni.node is None or name not in per_node:
                        break  # not a node of the list it was built for: built again
                    for k in per_node[name]:
                        where = index[k]
                        del where[name]
                        if not where:
                            del index[k]
                    per_node[name] = _add(index, name, keys_of(ni))
                else:
                    self._state = (snap, nodes, epoch, len(journal), index, per_node)
                    return index
        index: Dict[Hashable, Dict[str, int]] = {}
        per_node: Dict[str, Keys] = {}
        keys_of = self._keys_of
        for ni in nodes:
            name = ni.node.name
            per_node[name] = _add(index, name, keys_of(ni))
        self._state = (snap, nodes, snap.journal_epoch, len(journal), index, per_node)
        return index


def _add(index: Dict[Hashable, Dict[str, int]], name: str, keys: Keys) -> Keys:
    """The node's keys entered in the index; returns them."""
    for k, n in keys.items():
        where = index.get(k)
        if where is None:
            index[k] = {name: n}
        else:
            where[name] = n
    return keys


def union(index: Dict[Hashable, Dict[str, int]], keys: Iterable[Hashable]) -> Set[str]:
    """The nodes that have at least one of the keys."""
    out: Set[str] = set()
    for k in keys:
        where = index.get(k)
        if where:
            out.update(where)
    return out


def index_of(plugin: Any, attr: str, keys_of: Callable[[Any], Keys]) -> NodeKeyIndex:
    """The plugin's index named attr (made on first use)."""
    idx = getattr(plugin, attr, None)
    if idx is None:
        idx = NodeKeyIndex(keys_of)
        setattr(plugin, attr, idx)
    return idx
