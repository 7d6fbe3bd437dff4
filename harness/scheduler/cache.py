"""The scheduler cache (backend/cache/cache.go): node infos kept up to date from cluster events
and assumed pods, and the incremental UpdateSnapshot."""

from __future__ import annotations

from typing import Dict, Optional, Set

from ..api.objects import Node, Pod
from ..framework.types import NodeInfo
from .node_tree import NodeTree
from .snapshot import Snapshot, image_states_of


class Cache:
    def __init__(self) -> None:
        self.nodes: Dict[str, NodeInfo] = {}
        self.node_tree = NodeTree()
        self.pod_states: Dict[str, Pod] = {}  # uid -> pod (as placed on its node)
        self.assumed_pods: Set[str] = set()
        self._dirty: Set[str] = set()
        self._structure_changed = True
        self._images_changed = True
        self._pvc_nodes: Set[str] = set()

    # nodes ------------------------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        ni = self.nodes.get(node.name)
        if ni is None:
            ni = self.nodes[node.name] = NodeInfo()
        self.node_tree.add_node(node)
        ni.set_node(node)
        self._dirty.add(node.name)
        self._structure_changed = True
        self._images_changed = True

    def update_node(self, old: Optional[Node], new: Node) -> None:
        ni = self.nodes.get(new.name)
        if ni is None:
            self.add_node(new)
            return
        self.node_tree.update_node(old, new)
        ni.set_node(new)
        self._dirty.add(new.name)
        self._structure_changed = True
        self._images_changed = True

    def remove_node(self, node: Node) -> None:
        ni = self.nodes.get(node.name)
        if ni is None:
            return
        ni.remove_node()
        if not ni.pods:
            del self.nodes[node.name]
        self.node_tree.remove_node(node)
        self._dirty.add(node.name)
        self._structure_changed = True
        self._images_changed = True

    # pods -------------------------------------------------------------------------------------
    def _add_pod_to_node(self, pod: Pod) -> None:
        ni = self.nodes.get(pod.node_name)
        if ni is None:
            ni = self.nodes[pod.node_name] = NodeInfo()
        had_aff = bool(ni.pods_with_affinity)
        had_anti = bool(ni.pods_with_required_anti_affinity)
        ni.add_pod(pod)
        if had_aff != bool(ni.pods_with_affinity) or had_anti != bool(ni.pods_with_required_anti_affinity):
            self._structure_changed = True
        self.pod_states[pod.uid] = pod
        self._dirty.add(pod.node_name)

    def _remove_pod_from_node(self, pod: Pod) -> None:
        ni = self.nodes.get(pod.node_name)
        if ni is not None:
            had_aff = bool(ni.pods_with_affinity)
            had_anti = bool(ni.pods_with_required_anti_affinity)
            try:
                ni.remove_pod(pod)
            except KeyError:
                pass
            if had_aff != bool(ni.pods_with_affinity) or had_anti != bool(ni.pods_with_required_anti_affinity):
                self._structure_changed = True
            if ni.node is None and not ni.pods:
                del self.nodes[pod.node_name]
            self._dirty.add(pod.node_name)
        self.pod_states.pop(pod.uid, None)

    def assume_pod(self, pod: Pod) -> None:
        """AssumePod: the pod counts on its node before it is bound."""
        if pod.uid in self.pod_states:
            raise RuntimeError(f"pod {pod.key} is in the cache, so can't be assumed")
        self._add_pod_to_node(pod)
        self.assumed_pods.add(pod.uid)

    def forget_pod(self, pod: Pod) -> None:
        if pod.uid in self.assumed_pods:
            current = self.pod_states.get(pod.uid)
            if current is not None:
                self._remove_pod_from_node(current)
            self.assumed_pods.discard(pod.uid)

    def is_assumed_pod(self, pod: Pod) -> bool:
        return pod.uid in self.assumed_pods

    def add_pod(self, pod: Pod) -> None:
        """AddPod from the informer: confirms an assumed pod or adds a bound one."""
        current = self.pod_states.get(pod.uid)
        if current is not None and pod.uid in self.assumed_pods:
            if current.node_name != pod.node_name:
                self._remove_pod_from_node(current)
                self._add_pod_to_node(pod)
            else:
                self._replace(current, pod)
            self.assumed_pods.discard(pod.uid)
            return
        if current is None:
            self._add_pod_to_node(pod)

    def _replace(self, old: Pod, new: Pod) -> None:
        self._remove_pod_from_node(old)
        self._add_pod_to_node(new)

    def update_pod(self, old: Pod, new: Pod) -> None:
        current = self.pod_states.get(new.uid)
        if current is None:
            self._add_pod_to_node(new)
            return
        self._replace(current, new)

    def remove_pod(self, pod: Pod) -> None:
        current = self.pod_states.get(pod.uid)
        if current is not None:
            self._remove_pod_from_node(current)
        self.assumed_pods.discard(pod.uid)

    def node_count(self) -> int:
        return self.node_tree.num_nodes

    # snapshot ---------------------------------------------------------------------------------
    def update_snapshot(self, snap: Snapshot) -> None:
        """UpdateSnapshot: copy the node infos that changed since the last call."""
        if self._images_changed:
            image_nodes: Dict[str, Set[str]] = {}
            for ni in self.nodes.values():
                if ni.node is None:
                    continue
                for img in ni.node.images:
                    for name in img.get("names") or []:
                        image_nodes.setdefault(name, set()).add(ni.node.name)
            for ni in self.nodes.values():
                if ni.node is not None:
                    ni.image_states = image_states_of(ni.node, image_nodes)
                    self._dirty.add(ni.node.name)
            self._images_changed = False
        for name in self._dirty:
            ni = self.nodes.get(name)
            if ni is None:
                snap.node_info_map.pop(name, None)
                continue
            existing = snap.node_info_map.get(name)
            clone = ni.snapshot()
            if existing is None:
                snap.node_info_map[name] = clone
            else:
                for attr in NodeInfo.__slots__:
                    if attr != "__weakref__":
                        setattr(existing, attr, getattr(clone, attr))
        pvc_changed = any(self.nodes[n].pvc_ref_counts or n in self._pvc_nodes
                          for n in self._dirty if n in self.nodes)
        self._dirty.clear()
        if self._structure_changed:
            for name in [n for n in snap.node_info_map if n not in self.nodes]:
                del snap.node_info_map[name]
            snap.node_info_list = [snap.node_info_map[n] for n in self.node_tree.list()
                                   if n in snap.node_info_map]
            snap.have_pods_with_affinity_node_info_list = [
                ni for ni in snap.node_info_list if ni.pods_with_affinity]
            snap.have_pods_with_required_anti_affinity_node_info_list = [
                ni for ni in snap.node_info_list if ni.pods_with_required_anti_affinity]
            self._structure_changed = False
            pvc_changed = True
        if pvc_changed:
            used: Set[str] = set()
            self._pvc_nodes = set()
            for name, ni in self.nodes.items():
                if ni.pvc_ref_counts:
                    used.update(ni.pvc_ref_counts)
                    self._pvc_nodes.add(name)
            snap.used_pvc_set = used
