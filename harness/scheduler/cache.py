"""The scheduler cache (backend/cache/cache.go): node infos kept up to date from cluster events
and assumed pods, and the incremental UpdateSnapshot."""

from __future__ import annotations

from typing import Dict, List, Optional, Set

from ..api.objects import Node, Pod
from ..framework.types import ImageStateSummary, NodeInfo
from .node_tree import NodeTree, get_zone_key
from .snapshot import Snapshot


def _image_states_of(ni: NodeInfo) -> dict:
    """The node's image states as a snapshot holds them (each ImageState copied)."""
    return {name: (s.snapshot() if isinstance(s, ImageState) else s) for name, s in ni.image_states.items()}


class CacheError(RuntimeError):
    """An error cache.go returns (the event handlers log it and go on)."""


class ImageState:
    """fwk.ImageStateSummary as the cache keeps it: the size and the nodes with the image. One
    object per image name, shared by the NodeInfos of all those nodes; a snapshot copy of a
    NodeInfo gets ImageStateSummary(size, len(nodes)) as they are when it is copied."""

    __slots__ = ("size", "nodes")

    def __init__(self, size: int, nodes: Set[str]):
        self.size = size
        self.nodes = nodes

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)

    def snapshot(self) -> ImageStateSummary:
        return ImageStateSummary(self.size, len(self.nodes))

    def __repr__(self) -> str:
        return f"ImageState(size={self.size}, nodes={sorted(self.nodes)})"


class Cache:
    """cacheImpl without the assumed-pod expiry (bindings finish in the harness, so assumed pods
    are confirmed by their Add event or forgotten, never expired)."""

    def __init__(self) -> None:
        self.nodes: Dict[str, NodeInfo] = {}
        self.node_tree = NodeTree()
        self.pod_states: Dict[str, Pod] = {}  # uid -> pod (as placed on its node)
        self.assumed_pods: Set[str] = set()
        self.image_states: Dict[str, ImageState] = {}
        # The nodes in least- to most-recently-updated order: upstream's doubly linked list read
        # from its tail (the head is the last key). UpdateSnapshot walks it from the most recent
        # node while the node's generation is newer than the snapshot's.
        self._recent: Dict[str, None] = {}

    # the linked list ---------------------------------------------------------------------------
    def _move_to_head(self, name: str) -> None:
        self._recent.pop(name, None)
        self._recent[name] = None

    def nodes_by_recency(self) -> List[str]:
        """The node names from the most recently updated one (upstream's list from its head)."""
        return list(reversed(self._recent))

    def _remove_from_list(self, name: str) -> None:
        self._recent.pop(name, None)
        self.nodes.pop(name, None)

    # images -------------------------------------------------------------------------------------
    def _add_node_image_states(self, node: Node, ni: NodeInfo) -> None:
        """addNodeImageStates: a new image takes the size this node reports; an image already
        known keeps the size it was first seen with."""
        summary: Dict[str, ImageState] = {}
        for img in node.images:
            for name in img.get("names") or []:
                state = self.image_states.get(name)
                if state is None:
                    state = self.image_states[name] = ImageState(int(img.get("sizeBytes") or 0), {node.name})
                else:
                    state.nodes.add(node.name)
                summary.setdefault(name, state)
        ni.image_states = summary

    def _remove_node_image_states(self, node: Optional[Node]) -> None:
        if node is None:
            return
        for img in node.images:
            for name in img.get("names") or []:
                state = self.image_states.get(name)
                if state is not None:
                    state.nodes.discard(node.name)
                    if not state.nodes:
                        del self.image_states[name]

    # nodes --------------------------------------------------------------------------------------
    def add_node(self, node: Node) -> NodeInfo:
        ni = self.nodes.get(node.name)
        if ni is None:
            ni = self.nodes[node.name] = NodeInfo()
        else:
            self._remove_node_image_states(ni.node)
        self._move_to_head(node.name)
        self.node_tree.add_node(node)
        self._add_node_image_states(node, ni)
        ni.set_node(node)
        return ni

    def update_node(self, old: Optional[Node], new: Node) -> NodeInfo:
        ni = self.nodes.get(new.name)
        if ni is None:
            ni = self.nodes[new.name] = NodeInfo()
            self.node_tree.add_node(new)
        else:
            self._remove_node_image_states(ni.node)
        self._move_to_head(new.name)
        self.node_tree.update_node(old, new)
        self._add_node_image_states(new, ni)
        ni.set_node(new)
        return ni

    def remove_node(self, node: Node) -> None:
        """RemoveNode: a node that still has pods stays as a ghost (no Node object) until their
        delete events arrive; snapshots skip it."""
        ni = self.nodes.get(node.name)
        if ni is None:
            raise CacheError(f"node {node.name} is not found")
        ni.remove_node()
        if not ni.pods:
            self._remove_from_list(node.name)
        else:
            self._move_to_head(node.name)
        if not self.node_tree.remove_node(node):
            raise CacheError(f'node "{node.name}" in group "{get_zone_key(node)}" was not found')
        self._remove_node_image_states(node)

    def node_count(self) -> int:
        """NodeCount: nodes in the cache, ghosts included."""
        return len(self.nodes)

    def pod_count(self) -> int:
        return sum(len(ni.pods) for ni in self.nodes.values())

    # pods ---------------------------------------------------------------------------------------
    def _add_pod(self, pod: Pod, assume: bool) -> None:
        ni = self.nodes.get(pod.node_name)
        if ni is None:
            ni = self.nodes[pod.node_name] = NodeInfo()
        ni.add_pod(pod)
        self._move_to_head(pod.node_name)
        self.pod_states[pod.uid] = pod
        if assume:
            self.assumed_pods.add(pod.uid)

    def _remove_pod(self, pod: Pod) -> None:
        ni = self.nodes.get(pod.node_name)
        if ni is not None:
            ni.remove_pod(pod)  # KeyError when the pod is not on the node (upstream: an error)
            if not ni.pods and ni.node is None:
                self._remove_from_list(pod.node_name)
            else:
                self._move_to_head(pod.node_name)
        self.pod_states.pop(pod.uid, None)
        self.assumed_pods.discard(pod.uid)

    def _update_pod(self, old: Pod, new: Pod) -> None:
        self._remove_pod(old)
        self._add_pod(new, False)

    # v1.36: the pod group states the cache keeps (a WorkloadManager, GenericWorkload on): an
    # assumed pod counts as scheduled in its group (podGroupState.assumePod / forgetPod)
    pod_groups = None

    def assume_pod(self, pod: Pod) -> None:
        """AssumePod: the pod counts on its node before it is bound."""
        if pod.uid in self.pod_states:
            raise CacheError(f"pod {pod.key} is in the cache, so can't be assumed")
        self._add_pod(pod, True)
        if self.pod_groups is not None:
            info = self.pod_groups.pod_group_info(pod)
            if info is not None:
                info.assume_pod(pod.uid)

    def forget_pod(self, pod: Pod) -> bool:
        """ForgetPod: only an assumed pod can be forgotten; False where upstream returns an
        error (which the callers log)."""
        current = self.pod_states.get(pod.uid)
        if current is not None and current.node_name != pod.node_name:
            return False  # "was assumed on X but assigned to Y"
        if current is not None and pod.uid in self.assumed_pods:
            self._remove_pod(pod)
            if self.pod_groups is not None:
                info = self.pod_groups.pod_group_info(pod)
                if info is not None:
                    info.forget_pod(pod.uid)
            return True
        return False

    def is_assumed_pod(self, pod: Pod) -> bool:
        return pod.uid in self.assumed_pods

    def get_pod(self, pod: Pod) -> Optional[Pod]:
        """GetPod: the cached version of the pod (None when it is not in the cache)."""
        return self.pod_states.get(pod.uid)

    def add_pod(self, pod: Pod) -> None:
        """AddPod from the informer: confirms an assumed pod (with the pod as the API server has
        it, on whichever node it was bound to) or adds a bound one."""
        current = self.pod_states.get(pod.uid)
        if current is not None and pod.uid in self.assumed_pods:
            self._update_pod(current, pod)
        elif current is None:
            self._add_pod(pod, False)
        # else: "pod was already in added state" (an error upstream; nothing changes)

    def update_pod(self, old: Pod, new: Pod) -> None:
        """UpdatePod: only for a pod added (not merely assumed) before."""
        if old.uid not in self.pod_states or old.uid in self.assumed_pods:
            return  # "is not added to scheduler cache" / "assumed pod should not be updated"
        self._update_pod(old, new)

    def remove_pod(self, pod: Pod) -> None:
        current = self.pod_states.get(pod.uid)
        if current is None:
            return  # "is not found in scheduler cache, so cannot be removed from it"
        self._remove_pod(current)

    # snapshot -----------------------------------------------------------------------------------
    def update_snapshot(self, snap: Snapshot) -> Optional[str]:
        """UpdateSnapshot: copy into the snapshot the node infos updated since its generation
        (existing snapshot NodeInfo objects are updated in place), and rebuild its lists only
        when a node was added to or removed from it, or when a node gained or lost pods with
        (anti-)affinity or changed its PVCs. Returns upstream's error message, or None."""
        generation = snap.generation
        update_all_lists = False
        update_affinity = False
        update_anti_affinity = False
        update_pvcs = False
        info_map = snap.node_info_map
        for name in reversed(self._recent):
            ni = self.nodes[name]
            if ni.generation <= generation:
                break
            node = ni.node
            if node is None:
                continue
            existing = info_map.get(node.name)
            if existing is None:
                update_all_lists = True
                existing = info_map[node.name] = NodeInfo()
            # (the copies below hold what ni holds: compared with ni itself)
            if bool(existing.pods_with_affinity) != bool(ni.pods_with_affinity):
                update_affinity = True
            if bool(existing.pods_with_required_anti_affinity) != bool(ni.pods_with_required_anti_affinity):
                update_anti_affinity = True
            if not update_pvcs:
                if len(existing.pvc_ref_counts) != len(ni.pvc_ref_counts):
                    update_pvcs = True
                else:
                    update_pvcs = any(k not in existing.pvc_ref_counts for k in ni.pvc_ref_counts)
            # keep the NodeInfo object: the snapshot's lists may point to it (NodeInfo.Snapshot's
            # copies, written into it)
            ni.snapshot_into(existing)
            existing.image_states = _image_states_of(ni)
            note = getattr(snap, "note_changed", None)
            if note is not None:
                note(node.name)
        if self._recent:
            snap.generation = self.nodes[next(reversed(self._recent))].generation

        # Deleted nodes leave the tree, but may stay in the cache while they still have pods.
        if len(info_map) > self.node_tree.num_nodes:
            self._remove_deleted_nodes_from_snapshot(snap)
            update_all_lists = True

        if update_all_lists or update_affinity or update_anti_affinity or update_pvcs:
            self._update_node_info_snapshot_list(snap, update_all_lists)

        if len(snap.node_info_list) != self.node_tree.num_nodes:
            msg = (f"snapshot state is not consistent, length of NodeInfoList={len(snap.node_info_list)} "
                   f"not equal to length of nodes in tree={self.node_tree.num_nodes} , length of "
                   f"NodeInfoMap={len(info_map)}, length of nodes in cache={len(self.nodes)}, "
                   f"trying to recover")
            self._update_node_info_snapshot_list(snap, True)
            return msg
        return None

    def _update_node_info_snapshot_list(self, snap: Snapshot, update_all: bool) -> None:
        """updateNodeInfoSnapshotList: with update_all the node list is re-read from the node
        tree (zones round-robin); otherwise the existing order is kept."""
        affinity = []
        anti_affinity = []
        used_pvcs: Set[str] = set()
        if update_all:
            lst = []
            info_map = snap.node_info_map
            for name in self.node_tree.list():
                ni = info_map.get(name)
                if ni is not None:
                    lst.append(ni)
            snap.node_info_list = lst
        lst = snap.node_info_list
        affinity = [ni for ni in lst if ni.pods_with_affinity]
        anti_affinity = [ni for ni in lst if ni.pods_with_required_anti_affinity]
        for refs in [ni.pvc_ref_counts for ni in lst]:
            if refs:
                used_pvcs.update(refs)
        snap.have_pods_with_affinity_node_info_list = affinity
        snap.have_pods_with_required_anti_affinity_node_info_list = anti_affinity
        snap.used_pvc_set = used_pvcs

    def _remove_deleted_nodes_from_snapshot(self, snap: Snapshot) -> None:
        to_delete = len(snap.node_info_map) - self.node_tree.num_nodes
        for name in list(snap.node_info_map):
            if to_delete <= 0:
                break
            ni = self.nodes.get(name)
            if ni is None or ni.node is None:
                del snap.node_info_map[name]
                to_delete -= 1
