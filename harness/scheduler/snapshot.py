"""Snapshot (backend/cache/snapshot.go): the node infos a scheduling cycle reads."""

from __future__ import annotations

from typing import Dict, Iterable, List, Set

from ..api.objects import Node, Pod
from ..framework.types import ImageStateSummary, NodeInfo
from .node_tree import NodeTree


class Snapshot:
    """framework.SharedLister: `list()` is in the node tree's order (zones round-robin)."""

    def __init__(self) -> None:
        self.node_info_map: Dict[str, NodeInfo] = {}
        self.node_info_list: List[NodeInfo] = []
        self.have_pods_with_affinity_node_info_list: List[NodeInfo] = []
        self.have_pods_with_required_anti_affinity_node_info_list: List[NodeInfo] = []
        self.used_pvc_set: Set[str] = set()
        self.generation = 0
        # The names of the nodes whose NodeInfo UpdateSnapshot changed in place, in order, for
        # plugins that keep per-node results across cycles (new_journal starts it afresh).
        self.journal: List[str] = []
        self.journal_epoch = 0
        self.node_table = None  # node_table.NodeTable, built by the batch Filter/Score path
        # AssumePlacement (v1.36): the nodes of the placement a pod group cycle tries, or None
        self.placement = None

    def note_changed(self, name: str) -> None:
        if len(self.journal) >= 100_000:
            self.journal = []
            self.journal_epoch += 1
        self.journal.append(name)

    # SharedLister / NodeInfoLister -------------------------------------------------------------
    def list(self) -> List[NodeInfo]:
        p = self.placement
        return self.node_info_list if p is None else p

    def num_nodes(self) -> int:
        """NumNodesInPlacement (v1.36): the nodes of the assumed placement, else all."""
        p = self.placement
        return len(self.node_info_list if p is None else p)

    def assume_placement(self, names) -> None:
        """AssumePlacement: the cycle sees only these nodes (in the snapshot's order)."""
        self.placement = [ni for ni in self.node_info_list if ni.node is not None and ni.node.name in names]

    def forget_placement(self) -> None:
        """ForgetPlacement."""
        self.placement = None

    def have_pods_with_affinity_list(self) -> List[NodeInfo]:
        return self.have_pods_with_affinity_node_info_list

    def have_pods_with_required_anti_affinity_list(self) -> List[NodeInfo]:
        return self.have_pods_with_required_anti_affinity_node_info_list

    def get(self, node_name: str) -> NodeInfo:
        ni = self.node_info_map.get(node_name)
        if ni is None or ni.node is None:
            raise KeyError(f'nodeinfo not found for node name "{node_name}"')
        return ni

    # StorageInfoLister ------------------------------------------------------------------------
    def is_pvc_used_by_pods(self, key: str) -> bool:
        return key in self.used_pvc_set

    @classmethod
    def from_objects(cls, pods: Iterable[Pod], nodes: Iterable[Node]) -> "Snapshot":
        """NewSnapshot (used by tests), listing nodes in node-tree order as the cache does
        (upstream lists them in map order) and leaving out pods without a node (upstream puts
        them on a NodeInfo of node "" that no lister returns)."""
        nodes = list(nodes)
        pods = list(pods)
        s = cls()
        for p in pods:
            if not p.node_name:
                continue
            s.node_info_map.setdefault(p.node_name, NodeInfo()).add_pod(p)
        image_nodes = create_image_existence_map(nodes)
        tree = NodeTree()
        for n in nodes:
            ni = s.node_info_map.setdefault(n.name, NodeInfo())
            ni.set_node(n)
            ni.image_states = image_states_of(n, image_nodes)
            tree.add_node(n)
        s.node_info_list = [s.node_info_map[name] for name in tree.list()]
        s.have_pods_with_affinity_node_info_list = [ni for ni in s.node_info_list if ni.pods_with_affinity]
        s.have_pods_with_required_anti_affinity_node_info_list = [
            ni for ni in s.node_info_list if ni.pods_with_required_anti_affinity]
        s.used_pvc_set = create_used_pvc_set(pods)
        return s


def create_used_pvc_set(pods: Iterable[Pod]) -> Set[str]:
    """createUsedPVCSet: namespace/claimName of the PVCs of pods that have a node."""
    used: Set[str] = set()
    for p in pods:
        if not p.node_name:
            continue
        for v in p.volumes:
            pvc = v.get("persistentVolumeClaim")
            if pvc is not None:
                used.add(f"{p.namespace}/{pvc.get('claimName', '')}")
    return used


def create_image_existence_map(nodes: Iterable[Node]) -> Dict[str, Set[str]]:
    """createImageExistenceMap: image name -> names of the nodes that have it."""
    image_nodes: Dict[str, Set[str]] = {}
    for n in nodes:
        for img in n.images:
            for name in img.get("names") or []:
                image_nodes.setdefault(name, set()).add(n.name)
    return image_nodes


def image_states_of(node: Node, image_nodes: Dict[str, Set[str]]) -> Dict[str, ImageStateSummary]:
    """getNodeImageStates: each image's own size on this node and how many nodes have it."""
    out: Dict[str, ImageStateSummary] = {}
    for img in node.images:
        for name in img.get("names") or []:
            out[name] = ImageStateSummary(int(img.get("sizeBytes") or 0), len(image_nodes.get(name, ())))
    return out
