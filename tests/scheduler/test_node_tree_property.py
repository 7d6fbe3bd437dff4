"""NodeTree with its per-zone name sets lists the nodes exactly as upstream's nodeTree
(backend/cache/node_tree.go, zones' slices walked for duplicates and removals): random adds
(some twice), removals (some of absent nodes) and zone changes give the same tree, zones and
round-robin list as a plain-list reference."""

from __future__ import annotations

from typing import Dict, List

from hypothesis import given, settings, strategies as st

from harness.api.objects import Node
from harness.scheduler.node_tree import NodeTree, get_zone_key


def _node(i: int, zone: int) -> Node:
    labels = {"topology.kubernetes.io/zone": f"z{zone}", "topology.kubernetes.io/region": "r"} if zone else {}
    return Node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": labels}})


class _Reference:
    def __init__(self) -> None:
        self.tree: Dict[str, List[str]] = {}
        self.zones: List[str] = []

    def add(self, n: Node) -> None:
        z = get_zone_key(n)
        if z in self.tree:
            if n.name not in self.tree[z]:
                self.tree[z].append(n.name)
        else:
            self.zones.append(z)
            self.tree[z] = [n.name]

    def remove(self, n: Node) -> bool:
        z = get_zone_key(n)
        if n.name in self.tree.get(z, []):
            self.tree[z].remove(n.name)
            if not self.tree[z]:
                del self.tree[z]
                self.zones.remove(z)
            return True
        return False

    def list(self) -> List[str]:
        out, i = [], 0
        while len(out) < sum(len(v) for v in self.tree.values()):
            out += [self.tree[z][i] for z in self.zones if i < len(self.tree[z])]
            i += 1
        return out


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "add", "remove", "update"]), st.integers(0, 40),
                          st.integers(0, 3), st.integers(0, 3)), max_size=200))
def test_node_tree_matches_the_plain_lists(ops):
    nt, ref = NodeTree(), _Reference()
    for op, i, z, z2 in ops:
        if op == "add":
            nt.add_node(_node(i, z))
            ref.add(_node(i, z))
        elif op == "remove":
            assert nt.remove_node(_node(i, z)) == ref.remove(_node(i, z))
        else:
            old, new = _node(i, z), _node(i, z2)
            nt.update_node(old, new)
            if get_zone_key(old) != get_zone_key(new):
                ref.remove(old)
                ref.add(new)
        assert nt.tree == ref.tree and nt.zones == ref.zones
        assert nt.num_nodes == sum(len(v) for v in ref.tree.values())
    assert nt.list() == ref.list()
