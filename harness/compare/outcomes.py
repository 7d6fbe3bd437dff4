"""Cases run under another configuration: what each pod's outcome is, why (its last attempt),
and the figures of the cluster at the end. `schedharness diff` and `schedharness sweep` read
these; the unit of work (`run_under`) is a plain function of picklable arguments so that it runs
in worker processes (`-j N`) and on Dask workers alike.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import statistics
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..errors import UserError


@dataclass
class PodOutcome:
    node: Optional[str]
    message: str = ""
    nominated: Optional[str] = None
    preempted: bool = False  # deleted by preemption (a victim)
    victims: List[str] = field(default_factory=list)  # pods its own preemption evicted

    def text(self) -> str:
        if self.preempted:
            return "preempted"
        s = self.node or "unbound"
        if self.victims:
            s += f" (preempting {', '.join(self.victims)})"
        return s


@dataclass
class Figures:
    """The cluster at the end of a case: nodes hosting pods and their requested share."""

    nodes_used: int = 0
    cpu: List[float] = field(default_factory=list)  # requested / allocatable of each used node
    memory: List[float] = field(default_factory=list)
    unbound: int = 0  # pods of the case left without a node
    preemptions: int = 0  # pods deleted by preemption
    pods: int = 0

    @staticmethod
    def total(figs: List["Figures"]) -> "Figures":
        out = Figures()
        for f in figs:
            out.nodes_used += f.nodes_used
            out.cpu += f.cpu
            out.memory += f.memory
            out.unbound += f.unbound
            out.preemptions += f.preemptions
            out.pods += f.pods
        return out

    def row(self) -> Dict[str, Any]:
        def pct(xs, fn):
            return round(100 * fn(xs), 1) if xs else 0.0
        return {"nodes used": self.nodes_used, "cpu mean %": pct(self.cpu, statistics.fmean),
                "cpu max %": pct(self.cpu, max), "memory mean %": pct(self.memory, statistics.fmean),
                "memory max %": pct(self.memory, max), "pods unbound": self.unbound,
                "preemptions": self.preemptions}


@dataclass
class CaseOutcome:
    """One case run under one configuration (picklable: no scheduler inside)."""

    path: str
    name: str
    passed: bool = False
    failures: List[str] = field(default_factory=list)
    pods: Dict[str, PodOutcome] = field(default_factory=dict)
    attempts: Dict[str, Any] = field(default_factory=dict)  # pod -> its last Attempt
    figures: Figures = field(default_factory=Figures)
    error: str = ""  # the one-line error of an invalid case or configuration
    order: Dict[str, int] = field(default_factory=dict)  # pod -> when its last attempt started (a rank)
    ties_random: bool = True  # equal top scores are broken at random (harness.versions.ties)
    tie_rule: str = ""  # how this version and configuration break them, one sentence
    own_config: bool = False  # the case has a configuration of its own (sweep says which it replaced)
    plugin_args: Dict[str, List[Any]] = field(default_factory=dict)  # plugin -> its args per profile
    version: str = ""  # the minor it ran on (v1.35)


def figures(res) -> Figures:
    """Figures of a CaseResult: used nodes are the nodes with a pod bound at the end."""
    from fractions import Fraction

    from ..api.pod_resources import pod_requests
    from ..api.quantity import parse_quantity
    from ..scheduler.scheduler import terminated

    cluster = res.scheduler.cluster
    nodes = {n.name: n for n in cluster.list("Node")}
    req: Dict[str, Dict[str, Fraction]] = {}
    for p in cluster.list("Pod"):
        if p.node_name and p.node_name in nodes and not terminated(p):
            r = pod_requests(p.raw.get("spec") or {})
            acc = req.setdefault(p.node_name, {"cpu": Fraction(0), "memory": Fraction(0)})
            for k in ("cpu", "memory"):
                acc[k] += r.get(k, 0)
    f = Figures(nodes_used=len(req), preemptions=len(res.preempted), pods=len(res.bindings),
                unbound=sum(1 for v in res.bindings.values() if v is None))
    for name, acc in sorted(req.items()):
        alloc = nodes[name].allocatable
        for k, out in (("cpu", f.cpu), ("memory", f.memory)):
            a = parse_quantity(alloc[k]) if k in alloc else 0
            if a > 0:
                out.append(float(acc[k] / a))
    return f


def _victims_by_preemptor(res) -> Dict[str, List[str]]:
    """Pods each pod's preemption picked as victims (from its attempts' records)."""
    out: Dict[str, List[str]] = {}
    records = res.scheduler.records
    for key, recs in records.items():
        for rec in recs:
            pre = rec.preemption
            if pre and pre.get("picked"):
                for c in pre.get("candidates") or []:
                    if c.name == pre["picked"]:
                        out.setdefault(key, []).extend(p.key for p in c.victims.pods)
    return out


def outcome_of(res) -> CaseOutcome:
    from ..case.decisions import attempt_of
    from ..versions.ties import config_tie_break

    case = res.case
    out = CaseOutcome(case.path, case.name, res.passed, list(res.failures))
    victims = _victims_by_preemptor(res)
    for key, node in res.bindings.items():
        out.pods[key] = PodOutcome(node, res.messages.get(key, ""), res.nominated.get(key),
                                   key in res.preempted, sorted(set(victims.get(key, []))))
    for key in res.preempted:
        if key not in out.pods:
            out.pods[key] = PodOutcome(None, preempted=True)
    records = res.scheduler.records
    for key in res.bindings:
        recs = records.get(key) or []
        if recs:
            out.attempts[key] = attempt_of(recs[-1])
            out.order[key] = recs[-1].seq
    cfg = res.scheduler.config
    out.version = case.features.version.name
    out.ties_random, out.tie_rule = config_tie_break(case.features, cfg)
    profiles = cfg.get("profiles") or []
    for i, prof in enumerate(profiles):
        for pc in prof.get("pluginConfig") or []:
            out.plugin_args.setdefault(pc.get("name"), [None] * len(profiles))[i] = pc.get("args")
    out.figures = figures(res)
    return out


@dataclass
class Task:
    """One case under one configuration: what a worker needs, all picklable and loaded
    beforehand (a Dask worker need not see the files)."""

    case: Any  # a loaded Case, or a FrozenCase (each run thaws its own copy)
    config: Optional[Dict[str, Any]]  # a KubeSchedulerConfiguration mapping; None: the case's own
    plugins: Tuple[str, ...] = ()
    kubernetes_version: Optional[str] = None  # replaces the case's own (diff --kubernetes-version)
    cwd: str = ""
    explain: bool = True  # keep explain's per-node tables (diff's "why"; sweep reads figures only)


@dataclass
class FrozenCase:
    """A loaded case kept pickled, as diff and sweep hold their cases (a tenth of the memory
    of its objects: 87 MB for a 30,000-pod case whose objects take 850 MB). Each run thaws a
    deep copy of its own, as a worker process receives one: running a case defaults and drops
    fields of its objects in place (the API server's admission), and what one side's run
    changed must not reach the other side."""

    path: str
    name: str
    config: Any  # the case's own `config`: None, a file name or a mapping
    config_path: Optional[str]  # that file, from the case's folder
    blob: bytes

    @staticmethod
    def of(case: Any) -> "FrozenCase":
        return FrozenCase(case.path, case.name, case.config, case.config_path,
                          pickle.dumps(case, protocol=pickle.HIGHEST_PROTOCOL))

    def thaw(self) -> Any:
        return pickle.loads(self.blob)


def run_under(task: Task) -> CaseOutcome:
    """Run the case under the task's configuration (with explain's tables unless the task says
    not) and return its outcome (an invalid case or configuration: an outcome with `error` set)."""
    import sys

    from ..case.attempt_columns import ColumnsHook
    from ..case.runner import run_case
    from ..framework.registry import build_registry, default_registry

    if task.cwd and task.cwd not in sys.path:  # plugin modules of the current folder, in workers
        sys.path.append(task.cwd)
    frozen = task.case if isinstance(task.case, FrozenCase) else FrozenCase.of(task.case)
    case = frozen.thaw()
    try:
        if task.config is not None:
            case = dataclasses.replace(case, config=copy.deepcopy(task.config))
        if task.kubernetes_version is not None:  # the case's own featureGates checked anew
            from ..case.workload_upgrade import for_version

            case = for_version(case, task.kubernetes_version)  # a gang case in that version's API
            case = dataclasses.replace(case, kubernetes_version=task.kubernetes_version, features=None)
        from ..case.loader import plugin_modules

        modules = list(task.plugins) + [m for m in plugin_modules(case.plugins, case.path, case.tree)
                                        if m.name not in task.plugins]
        registry = build_registry(modules) if modules else default_registry()
        # explain's tables as columns (attempt_columns), of each pod's last attempt only: diff's why
        hooks = ColumnsHook(last_only=True) if task.explain else None
        res = run_case(case, registry, explain=task.explain, hooks=hooks)
    except UserError as e:
        line = " ".join(f"error: {e}".split())
        return CaseOutcome(case.path, case.name, error=line[:1000])
    out = outcome_of(res)
    del res, case
    collect_run()
    return out


def collect_run() -> None:
    """Free a finished run's objects before the next run builds its own: its scheduler and
    cluster hold reference cycles, which only the cyclic collector frees, and the next run
    pauses the collector while it builds (gcpause); without this a second run of a
    150,000-pod case peaked with the first one's garbage still held (sweep: 1.59 GB, not 1.1)."""
    import gc

    gc.collect()


def run_tasks(tasks: List[Task], jobs: int = 1, dask_scheduler: Optional[str] = None,
              command: str = "") -> List[CaseOutcome]:
    """run_under over the tasks, in order: here (jobs 1), on a process pool (jobs > 1), or on
    the Dask cluster at `dask_scheduler` (the `dask` extra). command: print `command: N of M
    case runs` progress on stderr (over 5 s, here and on the pool)."""
    from ..progress import Progress

    progress = Progress(command, enabled=bool(command))

    def collect(outcomes) -> List[CaseOutcome]:
        out = []
        for o in outcomes:
            out.append(o)
            progress.tick(f"{len(out)} of {len(tasks)} case runs")
        return out
    if dask_scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise UserError("--dask-scheduler needs the dask extra: pip install "
                            "'kube-scheduler-harness[dask]'", key="--dask-scheduler") from None
        try:
            client = Client(dask_scheduler, timeout=30)
        except (OSError, TimeoutError) as e:
            raise UserError(f"cannot reach the Dask scheduler: {e}", key="--dask-scheduler") from None
        try:
            return run_on_dask(client, tasks)
        finally:
            client.close()
    if jobs > 1 and len(tasks) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            return collect(pool.map(run_under, tasks, chunksize=max(1, len(tasks) // (4 * jobs))))
    return collect(run_under(t) for t in tasks)


def run_on_dask(client, tasks: List[Task]) -> List[CaseOutcome]:
    """The tasks on a dask.distributed Client's workers, results in task order."""
    futures = client.map(run_under, tasks, pure=False)
    return client.gather(futures)


def load_cases(paths: List[str], skipped: Optional[List] = None,
               frozen: bool = False) -> Tuple[List[Any], List[str]]:
    """The cases under the paths (diff and sweep run each several times; `frozen`: each as a
    FrozenCase as soon as it is loaded), and the error line of each file that does not load;
    no case file at all is a UserError."""
    from ..case import find_cases, load_case
    from ..errors import UserError

    files = find_cases(paths, skipped if skipped is not None else [])
    if not files:
        raise UserError("no case files found", file=" ".join(paths))
    cases, invalid = [], []
    for p in files:
        try:
            case = load_case(p)
            cases.append(FrozenCase.of(case) if frozen else case)
        except UserError as e:
            invalid.append(" ".join(f"error: {e}".split()))
    return cases, invalid
