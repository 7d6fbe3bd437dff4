"""Workload-aware preemption (v1.36, WorkloadAwarePreemption): the pod group evaluator of
pkg/scheduler/framework/preemption/podgrouppreemption.go and its types (types.go), run by
DefaultPreemption's PodGroupPostFilter from the pod group cycle (runWorkloadAwarePreemption).

The preemptor is a pod group, the domain the whole cluster. Every pod of the cluster is a victim
of its own, except the pods of a PodGroup whose ``spec.disruptionMode`` is ``PodGroup``: those
are one victim with the group's priority. All victims of lower priority than the group
(``PodGroup.spec.priority``, 0 when unset) are removed, the pod group algorithm must then pass
(else its status is returned), and the victims are reprieved one by one, the most important
first, PDB-violating ones before the others, keeping each whose return still lets the group
pass. The rest are evicted by the executor (Evaluator.prepare_candidate[_async]) on the
candidate "cluster".

Deterministic stand-ins: upstream collects the victims from a Go map and sorts them with
sort.Slice (not stable), so victims tied in priority and start time are tried in a random
order; here they keep the snapshot's node order and each node's pod order, and the sort is
stable. Upstream removes the victims from the snapshot's NodeInfos; here from the cache's
(the harness's pod group algorithm re-reads the snapshot from the cache for each pod), and the
NodeInfos are restored exactly afterwards (BackupSnapshot's restore function).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .preemption import Candidate, PDBBudgets, Victims, get_pod_start_time, sort_by_importance
from .status import Code, Status

# the candidate's name (actuatePodGroupPreemption)
CLUSTER_CANDIDATE = "cluster"
ERR_NO_VICTIMS = "No preemption victims found for incoming preemptor"
ERR_PREEMPT_NEVER = "not eligible due to preemptionPolicy=Never."


def pod_group_priority(pg: Any) -> int:
    """util.PodGroupPriority: spec.priority, else 0."""
    p = ((pg.raw.get("spec") if pg is not None else None) or {}).get("priority")
    return int(p) if p is not None else 0


@dataclass
class PodGroupPreemptor:
    """podGroupPreemptor / podGroupExecutorPreemptor: the group as the executor sees it."""

    pod_group: Any
    pods: List[Any]
    priority: int
    preemption_policy: str = "PreemptLowerPriority"
    preemptor_type: str = "podgroup"

    @classmethod
    def of(cls, pg: Any, pods: Sequence[Any]) -> "PodGroupPreemptor":
        """newPodGroupPreemptor: Never when any member says Never."""
        policy = "PreemptLowerPriority"
        for p in pods:
            if p.spec.get("preemptionPolicy") == "Never":
                policy = "Never"
        return cls(pg, list(pods), pod_group_priority(pg), policy)

    @property
    def uid(self) -> str:
        return self.pod_group.uid

    @property
    def name(self) -> str:
        return self.pod_group.name

    @property
    def namespace(self) -> str:
        return self.pod_group.namespace

    @property
    def scheduler_name(self) -> str:
        """podGroupExecutorPreemptor.SchedulerName: its first pod's."""
        return self.pods[0].scheduler_name if self.pods else ""


@dataclass
class Victim:
    """victim: a pod, or the pods of a PodGroup with disruptionMode PodGroup, evicted together."""

    pods: List[Any]  # PodInfo
    priority: int
    affected_nodes: Dict[str, Any] = field(default_factory=dict)

    def is_pod_group(self) -> bool:
        return bool(self.pods[0].pod.spec.get("schedulingGroup"))

    def earliest_start_time(self) -> Tuple[int, int]:
        return min(get_pod_start_time(pi.pod) for pi in self.pods)


def is_pod_group_preemptible_pod(pod: Any, cluster: Any) -> Optional[Any]:
    """isPodGroupPreemptiblePod: the pod's PodGroup when its disruptionMode is PodGroup."""
    sg = pod.spec.get("schedulingGroup")
    if not sg or cluster is None:
        return None
    pg = cluster.get("PodGroup", pod.namespace, sg.get("podGroupName"))
    if pg is None or (pg.raw.get("spec") or {}).get("disruptionMode") != "PodGroup":
        return None
    return pg


def victims_of_domain(nodes: Sequence[Any], cluster: Any) -> List[Victim]:
    """newDomainForWorkloadPreemption's victims, in node order then pod order."""
    by_key: Dict[str, Victim] = {}
    for ni in nodes:
        for pi in ni.pods:
            pg = is_pod_group_preemptible_pod(pi.pod, cluster)
            if pg is None:
                by_key[pi.pod.uid] = Victim([pi], pi.pod.priority, {ni.name: ni})
                continue
            v = by_key.get(pg.uid)
            if v is not None:
                v.pods.append(pi)
                v.affected_nodes[ni.name] = ni
                continue
            by_key[pg.uid] = Victim([pi], pod_group_priority(pg), {ni.name: ni})
    return list(by_key.values())


def more_important_victim(v1: Victim, v2: Victim) -> bool:
    """moreImportantVictim: priority; a pod group before a pod; pods by start time; groups by
    size, then start time."""
    if v1.priority != v2.priority:
        return v1.priority > v2.priority
    if v1.is_pod_group() != v2.is_pod_group():
        return v1.is_pod_group()
    if not v1.is_pod_group():
        return v1.earliest_start_time() < v2.earliest_start_time()
    if len(v1.pods) != len(v2.pods):
        return len(v1.pods) > len(v2.pods)
    return v1.earliest_start_time() < v2.earliest_start_time()


def sort_victims(victims: List[Victim]) -> None:
    """sort.Slice(victims, moreImportantVictim), stable."""
    sort_by_importance(victims, more_important_victim)


def filter_victims_with_pdb_violation(victims: Sequence[Victim], pdbs: Sequence[Any]
                                      ) -> Tuple[List[Victim], List[Victim]]:
    """filterVictimsWithPDBViolation: a victim violates when one of its pods does; a pod stops
    at the first PDB it takes below zero, a victim at its first violating pod."""
    budgets = PDBBudgets(pdbs)

    def violating(pod) -> bool:
        return any(budgets.take(pod))  # stops at the first PDB taken below zero

    out_v: List[Victim] = []
    out_n: List[Victim] = []
    for v in victims:
        (out_v if any(violating(pi.pod) for pi in v.pods) else out_n).append(v)
    return out_v, out_n


def group_preemption_event(preemptor: PodGroupPreemptor, victims: Sequence[Any], cluster: Any) -> Dict[str, Any]:
    """What one workload-aware preemption did, as kube-scheduler tells it (for reports): the
    preemptor PodGroup, its members, each victim pod with its node and, for the pods of a
    PodGroup with disruptionMode PodGroup, that group (evicted as one victim); each victim's
    event (`Preempted`, "Preempted by podgroup <uid> on node cluster": Executor.PreemptPod with
    the candidate `cluster`) and its DisruptionTarget condition message."""
    scheduler = preemptor.pods[0].scheduler_name if preemptor.pods else "default-scheduler"
    groups: Dict[str, List[str]] = {}
    for p in victims:
        pg = is_pod_group_preemptible_pod(p, cluster) if cluster is not None else None
        if pg is not None:
            groups.setdefault(f"{pg.namespace}/{pg.name}", []).append(p.key)
    return {
        "podGroup": f"{preemptor.namespace}/{preemptor.name}",
        "priority": preemptor.priority,
        "members": [p.key for p in preemptor.pods],
        "victims": {p.key: p.node_name for p in victims},
        "victimGroups": groups,
        "event": f"Preempted by podgroup {preemptor.uid} on node {CLUSTER_CANDIDATE}",
        "condition": f"{scheduler}: preempting to accommodate a higher priority podgroup",
    }


class PodGroupEvaluator:
    """PodGroupEvaluator: Preempt for a pod group over the whole cluster. `nodes` gives the
    NodeInfos the pod group algorithm reads (and the removals change), `scheduling_func` runs
    that algorithm without PostFilter, `touched(node)` is called before a node changes; the
    caller restores the nodes afterwards."""

    def __init__(self, handle: Any, executor: Any, plugin_name: str):
        self.handle = handle
        self.executor = executor  # preemption.Evaluator (prepare_candidate[_async])
        self.plugin_name = plugin_name
        # the last successful selection's group_preemption_event (reports), else None
        self.last_preemption: Optional[Dict[str, Any]] = None

    def preempt(self, pg: Any, pods: Sequence[Any], nodes: Sequence[Any],
                scheduling_func: Callable[[], Optional[Status]],
                touched: Callable[[str], None] = lambda name: None) -> Status:
        """Preempt: victims selected on the cluster domain, then actuatePodGroupPreemption."""
        cluster = getattr(self.handle, "cluster", None)
        preemptor = PodGroupPreemptor.of(pg, pods)
        self.last_preemption = None
        pdbs = list(cluster.list("PodDisruptionBudget")) if cluster is not None else []
        victims, status = self.select_victims_on_domain(preemptor, nodes, cluster, pdbs, scheduling_func, touched)
        if victims is None:
            return status
        self.last_preemption = group_preemption_event(preemptor, victims, cluster)
        c = Candidate(CLUSTER_CANDIDATE, Victims(victims))
        if self.executor.enable_async_preemption:
            self.executor.prepare_candidate_async(c, preemptor, self.plugin_name)
            return Status(Code.Success)
        st = self.executor.prepare_candidate(c, preemptor, self.plugin_name)
        return st if st is not None else Status(Code.Success)

    def select_victims_on_domain(self, preemptor: PodGroupPreemptor, nodes: Sequence[Any], cluster: Any,
                                 pdbs: Sequence[Any], scheduling_func: Callable[[], Optional[Status]],
                                 touched: Callable[[str], None]) -> Tuple[Optional[List[Any]], Status]:
        """selectVictimsOnDomain."""
        if preemptor.preemption_policy == "Never":
            return None, Status(Code.Unschedulable, ERR_PREEMPT_NEVER)
        potential = [v for v in victims_of_domain(nodes, cluster) if v.priority < preemptor.priority]
        if not potential:
            return None, Status(Code.UnschedulableAndUnresolvable, ERR_NO_VICTIMS)

        def remove(v: Victim) -> None:
            for pi in v.pods:
                touched(pi.pod.node_name)
                v.affected_nodes[pi.pod.node_name].remove_pod(pi.pod)

        def add(v: Victim) -> None:
            for pi in v.pods:
                touched(pi.pod.node_name)
                v.affected_nodes[pi.pod.node_name].add_pod_info(pi)

        for v in potential:
            remove(v)
        st = scheduling_func()
        if st is not None and not st.is_success():
            return None, st
        sort_victims(potential)
        violating, non_violating = filter_victims_with_pdb_violation(potential, pdbs)
        to_preempt: List[Victim] = []
        for v in violating + non_violating:
            add(v)
            st = scheduling_func()
            if st is not None and not st.is_success():
                remove(v)
                to_preempt.append(v)
        sort_victims(to_preempt)
        return [pi.pod for v in to_preempt for pi in v.pods], Status(Code.Success)
