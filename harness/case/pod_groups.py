"""Per pod group outcome of a run (``--json``'s ``podGroups``): the Workload API's groups (v1.35:
a Workload's pod group, named ``namespace/workload/podGroup``; v1.36: a PodGroup,
``namespace/name``), their policy, their members and where each went, and for v1.36 the
PodGroupScheduled condition the scheduler wrote on the PodGroup."""

from __future__ import annotations

from typing import Any, Dict, List

from ..api.workload import gang_min_count, pod_group_key, policy_of


def _name(key) -> str:
    if len(key) == 4:
        ns, workload, group, replica = key
        return f"{ns}/{workload}/{group}" + (f"/{replica}" if replica else "")
    return f"{key[0]}/{key[1]}"


def _preemption(e: Dict[str, Any]) -> Dict[str, Any]:
    return {"time": e.get("time"), "victims": dict(e.get("victims") or {}),
            "victimGroups": {k: list(v) for k, v in (e.get("victimGroups") or {}).items()},
            "event": e.get("event"), "condition": e.get("condition")}


def pod_group_outcomes(cluster, features, queue_state=None, preemptions=()) -> Dict[str, Any]:
    """namespace/name of each pod group some pod names -> its outcome: policy, minCount,
    members with their node (or null), how many are bound, the members left unbound with
    their PodScheduled message (why the group failed: the member and the plugin that
    rejected it), the PodGroupScheduled condition (v1.36), and the workload-aware preemptions
    the group made (v1.36: at what time, which victims on which nodes, the victim PodGroups
    evicted whole, each victim's event and DisruptionTarget message)."""
    if not features.get("GenericWorkload", False):
        return {}
    groups: Dict[Any, List[Any]] = {}
    for pod in cluster.list("Pod"):
        key = pod_group_key(pod, features)
        if key is not None:
            groups.setdefault(key, []).append(pod)
    out: Dict[str, Any] = {}
    for key in sorted(groups):
        pods = groups[key]
        err, policy = policy_of(cluster, key, features)
        min_count = gang_min_count(policy) if err is None else None
        entry: Dict[str, Any] = {
            "policy": None if err is not None else ("gang" if min_count is not None else "basic"),
            "minCount": min_count,
            "members": {p.key: (p.node_name or None) for p in pods},
            "bound": sum(1 for p in pods if p.node_name),
        }
        if err is not None:
            entry["missing"] = err
        unbound = {}
        for p in pods:
            if p.node_name:
                continue
            cond = next((c for c in p.status.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
            unbound[p.key] = {"queue": queue_state(p) if queue_state is not None else None,
                              "message": (cond or {}).get("message", "")}
        if unbound:
            entry["unbound"] = unbound
        if len(key) == 2:
            pg = cluster.get("PodGroup", key[0], key[1])
            conds = ((pg.raw.get("status") or {}).get("conditions") or []) if pg is not None else []
            cond = next((c for c in conds if c.get("type") == "PodGroupScheduled"), None)
            if cond is not None:
                entry["condition"] = {k: cond.get(k) for k in ("status", "reason", "message")}
            made = [_preemption(e) for e in preemptions if e.get("podGroup") == _name(key)]
            if made:
                entry["preemptions"] = made
        out[_name(key)] = entry
    return out
