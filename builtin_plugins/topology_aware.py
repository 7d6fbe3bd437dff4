"""The TopologyAwareWorkloadScheduling plugins of v1.36 (added to the default plugins with its
gate on, applyTopologyAwareWorkloadScheduling):

- TopologyPlacementGenerator (framework/plugins/topologyaware/topology_placement.go): a
  PlacementGenerate plugin; for a PodGroup with ``spec.schedulingConstraints.topology``, one
  placement per value of the first constraint's key among the nodes (only the domain of the
  group's already scheduled pods, when it has some); without constraints, the parent placement.
- PodGroupPodsCount (framework/plugins/podgrouppodscount/podgroup_pods_count.go): a
  PlacementScore plugin; the group's scheduled pods plus the pods a placement would place,
  normalized to 0-100 by the highest.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from harness.framework import Placement, Plugin, Status, hookimpl

from .helper import features_of

GATE = "TopologyAwareWorkloadScheduling"


def _require_v136(name: str, handle: Any) -> None:
    fts = features_of(handle)
    if GATE not in fts:
        raise ValueError(f"plugin {name} does not exist in kube-scheduler {fts.version} (added in v1.36)")


def _group_state(handle, namespace: str, name: str):
    """The pod group's state (the workload manager's podGroupInfo), or None."""
    m = getattr(handle, "workload_manager", None)
    return None if m is None else m.infos.get((namespace, name))


def _scheduled(info):
    """ScheduledPods: assumed or assigned."""
    if info is None:
        return []
    uids = list(dict.fromkeys(list(info.assumed) + list(info.assigned)))
    return [info.all_pods[u] for u in uids if u in info.all_pods]


class TopologyPlacementGenerator(Plugin):
    name = "TopologyPlacementGenerator"

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        _require_v136(self.name, handle)
        super().__init__(args, handle)

    @hookimpl
    def generate_placements(self, state, pod_group, parent_placement):
        pg = self.handle.cluster.get("PodGroup", pod_group.namespace, pod_group.name)
        if pg is None:
            return None, Status.error(RuntimeError(
                f'podgroups.scheduling.k8s.io "{pod_group.name}" not found'))
        topology = ((pg.raw.get("spec") or {}).get("schedulingConstraints") or {}).get("topology") or []
        if not topology:
            return [parent_placement], None
        key = (topology[0] or {}).get("key")
        required = None
        scheduled = _scheduled(_group_state(self.handle, pod_group.namespace, pod_group.name))
        for pod in scheduled:
            try:
                ni = self.handle.snapshot.get(pod.node_name)
            except KeyError as e:
                return None, Status.error(RuntimeError(
                    f"cannot determine domain for already scheduled pods: getting node for pod "
                    f"{pod.key}: {e.args[0] if e.args else e}"))
            domain = ni.node.labels.get(key)
            if domain is None:
                return None, Status.error(RuntimeError(
                    f"cannot determine domain for already scheduled pods: no topology domain found for pod {pod.key}"))
            if required is not None and required != domain:
                return None, Status.error(RuntimeError(
                    f"cannot determine domain for already scheduled pods: more than 1 domain found for pod "
                    f"group: {required}, {domain}"))
            required = domain
        per_domain: Dict[str, list] = {}
        for ni in parent_placement.nodes:
            domain = ni.node.labels.get(key) if ni.node is not None else None
            if domain is not None and (required is None or required == domain):
                per_domain.setdefault(domain, []).append(ni)
        return [Placement(d, nodes) for d, nodes in per_domain.items() if nodes], None


class PodGroupPodsCount(Plugin):
    name = "PodGroupPodsCount"

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        _require_v136(self.name, handle)
        super().__init__(args, handle)

    @hookimpl
    def score_placement(self, state, pod_group, placement):
        info = _group_state(self.handle, pod_group.namespace, pod_group.name)
        if info is None:
            return 0, Status.error(RuntimeError("pod group state not found"))
        return len(_scheduled(info)) + len(placement.proposed_assignments), None

    @hookimpl
    def normalize_placement_score(self, state, pod_group, scores):
        top = max((s.score for s in scores), default=0)
        if top == 0:
            return Status.error(RuntimeError("no pods from pod group are assigned to any of the candidate placements"))
        for s in scores:
            s.score = 0 + s.score * (100 - 0) // top
        return None


PLUGINS = [TopologyPlacementGenerator, PodGroupPodsCount]
