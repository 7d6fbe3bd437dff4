"""Helpers shared by tests/framework's equivalence tests, which run the same cluster through a
fast path and through the per-node reference and compare what came out: the scheduler run
until quiet, what each compares (each pod's cycles, or each pod's outcome), and the spy on
preemption's dry runs."""

from __future__ import annotations

from typing import Any, Callable, Iterable, List, Optional, Tuple

import pytest

from builtin_plugins import node_sums
from builtin_plugins.default_preemption import DefaultPreemption
from builtin_plugins.podtopologyspread import filtering as pts_filtering
from harness.framework import node_table
from harness.framework.preemption import Evaluator
from harness.framework.runtime import Framework
from harness.scheduler import schedule_one


def fast_and_reference(run: Callable[[bool, Any], Any], min_nodes: Optional[int] = None) -> Tuple[Any, Any]:
    """(run(True, mp), run(False, mp)): the fast paths, then the per-node reference, each with a
    MonkeyPatch of its own; the node table read however small the cluster (each row checked on
    use) and numFeasibleNodesToFind's floor at `min_nodes` (a small one: the search stops early,
    in several chunks). Every switch is restored after."""
    saved = schedule_one.MIN_FEASIBLE_NODES_TO_FIND, node_table.MIN_NODES, node_table.CHECK
    if min_nodes is not None:
        schedule_one.MIN_FEASIBLE_NODES_TO_FIND = min_nodes
    node_table.MIN_NODES, node_table.CHECK = 0, True
    try:
        with pytest.MonkeyPatch.context() as mp:
            fast = run(True, mp)
        with pytest.MonkeyPatch.context() as mp:
            reference = run(False, mp)
    finally:
        schedule_one.MIN_FEASIBLE_NODES_TO_FIND, node_table.MIN_NODES, node_table.CHECK = saved
        pts_filtering.USE_NODE_COUNTS_CACHE = True
        node_sums.ENABLED = True
    return fast, reference


def status_key(s) -> Optional[Tuple[int, Tuple[str, ...], str]]:
    """A Status as (code, reasons, plugin), None for None."""
    return None if s is None else (int(s.code), tuple(s.get_reasons()), s.plugin)


def observed(sched, cluster) -> Tuple[dict, dict]:
    """Each pod's cycles (statuses per node, feasible nodes, scores, pick, message) and its
    binding."""
    records = {key: [(r.attempt, {n: status_key(s) for n, s in r.node_statuses.items()}, r.feasible,
                      [(s.name, s.scores, s.total_score) for s in r.scores], r.picked, r.message)
                     for r in recs] for key, recs in sched.records.items()}
    return records, {p.key: p.node_name for p in cluster.list("Pod")}


def pod_outcomes(cluster) -> List[Any]:
    """Each pod's binding, nomination and conditions (type, status, reason, message), by key."""
    return sorted((p.key, p.node_name, p.nominated_node_name,
                   [(c.get("type"), c.get("status"), c.get("reason"), c.get("message"))
                    for c in p.status.get("conditions") or []])
                  for p in cluster.list("Pod"))


def run_until_quiet(sched, cluster, pending: Iterable[Any], batch: Optional[bool] = None) -> None:
    """Start the scheduler (its profiles on the batch forms or not, when `batch` says), create
    the pending pods and run until quiet."""
    if batch is not None:
        for fw in sched.profiles.values():
            fw.use_batch = batch
    sched.start()
    for p in pending:
        cluster.create(p)
    sched.run_until_quiet()


def run_observed(sched, cluster, pending: Iterable[Any], batch: bool) -> Tuple[dict, dict]:
    """run_until_quiet, then observed()."""
    run_until_quiet(sched, cluster, pending, batch)
    return observed(sched, cluster)


def preemption_fast_paths(mp, seen: list, fast: bool, read: str = "after") -> None:
    """The walk's rejections as columns, the remembered filter answers and the dry run's memo
    all on (`fast`) or all off (the reference); each PostFilter's NodeToStatus and each dry run
    appended to `seen`. The NodeToStatus is read before DefaultPreemption (`read` "before": node
    by node, as a third-party plugin might), after it ("after": every entry in order, and each
    node's) or not at all ("none": FitError's message then counts the columns' reasons)."""
    orig_pf = Framework.run_post_filter_plugins

    def spy_pf(self, state, pod, m):
        names = [ni.node.name for ni in self.snapshot.list()]
        before = [(n, status_key(m.get(n))) for n in names] if read == "before" else None
        r, s = orig_pf(self, state, pod, m)
        after = None
        if read != "none":
            after = ([(n, status_key(x)) for n, x in m.items()], [(n, status_key(m.get(n))) for n in names])
        seen.append(("postfilter", pod.key, before, after, m.length(), status_key(m.absent_nodes_status),
                     None if r is None else r.nominated_node_name, status_key(s)))
        return r, s

    mp.setattr(Framework, "run_post_filter_plugins", spy_pf)
    spy_dry_runs(mp, seen)
    mp.setattr(Framework, "lazy_statuses", fast)
    mp.setattr(Framework, "memo_nominated_filters", fast)
    mp.setattr(DefaultPreemption, "memo_dry_run", fast)


def spy_dry_runs(mp, seen: list) -> None:
    """Append each dry run of preemption to `seen`: ("dryrun", pod, potential nodes,
    candidates with their victims and PDB violations, every status in order, their count,
    the error)."""
    orig = Evaluator.dry_run_preemption

    def spy(self, state, pod, potential, pdbs, offset, num):
        cands, statuses, err = orig(self, state, pod, potential, pdbs, offset, num)
        seen.append(("dryrun", pod.key, [ni.node.name for ni in potential],
                     [(c.name, [p.key for p in c.victims.pods], c.victims.num_pdb_violations) for c in cands],
                     [(n, status_key(x)) for n, x in statuses.items()], statuses.length(), str(err)))
        return cands, statuses, err

    mp.setattr(Evaluator, "dry_run_preemption", spy)


class TableSnapshot:
    """What NodeTable reads of a snapshot: a node list and a journal (tests append the names
    of the nodes they change, then call the table's catch_up)."""

    def __init__(self, infos):
        self.node_info_list = infos
        self.journal = []
        self.journal_epoch = 0


def plugin_on_its_own(registry, version: str, cls_name: str, args):
    """An in-tree plugin made outside a scheduler: the version's feature gates and a cluster of
    its own, no snapshot."""
    from harness.cluster import Cluster
    from harness.versions import case_features
    features = case_features(version, None)
    handle = type("H", (), {"feature_gates": features, "cluster": Cluster(features), "snapshot": None})()
    return registry[cls_name](args, handle)
