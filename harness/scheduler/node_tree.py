"""nodeTree (backend/cache/node_tree.go): nodes grouped by zone, listed round-robin over zones."""

from __future__ import annotations

from typing import Dict, List, Optional, Set

from ..api.objects import Node

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"


def get_zone_key(node: Node) -> str:
    """component-helpers/node/topology.GetZoneKey: the deprecated failure-domain.beta labels win
    when present (even empty), the topology.kubernetes.io ones are the fallback."""
    labels = node.labels
    zone = labels[LABEL_ZONE_BETA] if LABEL_ZONE_BETA in labels else labels.get(LABEL_ZONE, "")
    region = labels[LABEL_REGION_BETA] if LABEL_REGION_BETA in labels else labels.get(LABEL_REGION, "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


class NodeTree:
    """nodeTree: `tree` maps a zone key to its node names in the order they were added, `zones`
    lists the zones in the order they appeared. `_members` holds each zone's names as a set, so
    that addNode's "already exists" check is not a walk of the zone (15000 nodes in one zone
    made adding them quadratic)."""

    def __init__(self) -> None:
        self.tree: Dict[str, List[str]] = {}
        self.zones: List[str] = []
        self.num_nodes = 0
        self._members: Dict[str, Set[str]] = {}

    def add_node(self, node: Node) -> None:
        """addNode: appended to its zone's names, once."""
        zone = get_zone_key(node)
        names = self.tree.get(zone)
        if names is not None:
            members = self._members[zone]
            if node.name in members:
                return
            names.append(node.name)
            members.add(node.name)
        else:
            self.zones.append(zone)
            self.tree[zone] = [node.name]
            self._members[zone] = {node.name}
        self.num_nodes += 1

    def remove_node(self, node: Node) -> bool:
        """removeNode; False (upstream: an error) when the node is not in its zone."""
        zone = get_zone_key(node)
        names = self.tree.get(zone)
        if names and node.name in self._members[zone]:
            names.remove(node.name)
            self._members[zone].discard(node.name)
            if not names:
                del self.tree[zone]
                del self._members[zone]
                self.zones.remove(zone)
            self.num_nodes -= 1
            return True
        return False

    def update_node(self, old: Optional[Node], new: Node) -> None:
        """updateNode: move the node when its zone key changed (a nil old node has zone "")."""
        old_zone = get_zone_key(old) if old is not None else ""
        if old_zone == get_zone_key(new):
            return
        if old is not None:
            self.remove_node(old)  # upstream ignores whether the old node was there
        self.add_node(new)

    def list(self) -> List[str]:
        """nodeTree.list: one node of each zone in turn."""
        out: List[str] = []
        idx = 0
        while len(out) < self.num_nodes:
            progressed = False
            for zone in self.zones:
                names = self.tree[zone]
                if idx < len(names):
                    out.append(names[idx])
                    progressed = True
            if not progressed:
                break
            idx += 1
        return out
