"""Several kube-scheduler processes over one simulated API server (CASE_FORMAT.md, "Replicas and
leader election"): each process has its own informers, cache, queue and clock; with
leaderElection.leaderElect (the default) they contend for the Lease as client-go's
leaderelection does (harness/leaderelection), and only the holder schedules
(cmd/kube-scheduler/app/server.go: OnStartedLeading runs sched.Run; losing the Lease ends the
process). With leaderElect false every process schedules from its own cache.

A process's informers and event handlers run from its start, leader or not (server.go starts
the informers before the election), so a new leader starts with the pending pods the API server
holds. A partitioned process can neither write (its calls fail as a client-go transport error)
nor watch: the events it misses reach it, as a relist would deliver them, when the partition ends.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from ..apierrors import Unreachable
from ..cluster import Cluster, object_key
from ..errors import UserError
from ..leaderelection.kube_scheduler import check_leader_elector_config, leader_elect
from ..leaderelection.sim import ElectionSim, Process, VirtualLoop
from ..scheduler.scheduler import Scheduler, never_quiet, quiet_wait_limit

REPLICA_PREFIX = "scheduler-"
# Kinds the processes write but kube-scheduler does not watch: its elector reads and writes the
# Lease with plain API calls (no informer), so Lease renewals are not events for its queue.
NOT_WATCHED = ("Lease",)
# timers one case may fire (Lease renewals every retryPeriod, retries, backoffs), so that a long
# `advance` or a fast clock ends in an error rather than running for hours: 2 replicas with the
# default timings fire about 2,900 per virtual hour (about 0.2 ms each, so at most ~40 s)
MAX_TIMERS = 200_000


def replica_names(n: int) -> List[str]:
    return [f"{REPLICA_PREFIX}{i}" for i in range(n)]


def rest_path(obj, subresource: str = "", collection: bool = False) -> str:
    """The request path client-go would use for an object (for the error of a cut-off call):
    /api/v1/namespaces/default/pods/web/binding, /apis/storage.k8s.io/v1/csinodes, ..."""
    api_version = str((getattr(obj, "raw", None) or {}).get("apiVersion") or "v1")
    kind = str(getattr(obj, "kind", "") or "object")
    plural = kind.lower() + ("es" if kind.lower().endswith(("s", "ch", "sh", "x")) else "s")
    if kind.lower().endswith("y") and not kind.lower().endswith(("ay", "ey", "oy")):
        plural = kind.lower()[:-1] + "ies"
    out = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    namespace = getattr(obj, "namespace", "") or ""
    if namespace:
        out += f"/namespaces/{namespace}"
    out += f"/{plural}"
    if not collection:
        out += f"/{getattr(obj, 'name', '')}"
        if subresource:
            out += f"/{subresource}"
    return out


class ProcessView:
    """One process's API client and informers over the shared Cluster: reads are its listers
    (the API server's objects, or, while it is partitioned, what its informers held when the
    watch broke), writes fail while the process is partitioned (and bindings are recorded with
    the process's name), watch events are held back during a partition and delivered as a
    relist's diff when it ends."""

    def __init__(self, world: "World", cluster: Cluster, replica: str):
        self.world = world
        self._cluster = cluster
        self.replica = replica
        self._listeners: List[Callable] = []
        self._seen: Optional[Dict[Tuple[str, str], Any]] = None  # what it saw before a partition
        cluster.subscribe(self._on_event)

    # the Cluster interface the scheduler and plugins use ------------------------------------
    # Reads are the process's listers: the API server's objects, except while the process is
    # cut off, when its informers still hold what they had when the watch broke.
    def list(self, kind: str, namespace: Optional[str] = None):
        if self._seen is None:
            return self._cluster.list(kind, namespace)
        keys = self._cluster.read_keys(kind)
        objs = sorted(((k[1], keys.index(k[0]), o) for k, o in self._seen.items() if k[0] in keys),
                      key=lambda x: x[:2])
        return [o for _, _, o in objs if namespace is None or o.namespace == namespace]

    def get(self, kind: str, namespace: str, name: str):
        if self._seen is None:
            return self._cluster.get(kind, namespace, name)
        key = f"{namespace}/{name}" if namespace else name
        for store in self._cluster.read_keys(kind):
            got = self._seen.get((store, key))
            if got is not None:
                return got
        return None

    def kinds(self):
        if self._seen is None:
            return self._cluster.kinds()
        return iter(dict.fromkeys(k for k, _ in self._seen))

    def kind_version(self, kind: str) -> Optional[int]:
        """Cluster.kind_version while the reads are the API server's; None (unknown: list and
        compare) while the process is cut off."""
        return self._cluster.kind_version(kind) if self._seen is None else None

    def subscribe(self, listener: Callable) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Callable) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _check(self, verb: str, obj, subresource: str = "", collection: bool = False) -> None:
        if not self.world.reachable(self.replica):
            raise Unreachable(verb, rest_path(obj, subresource, collection))

    def create(self, obj, notify: bool = True):
        self._check("Post", obj, collection=True)
        return self._cluster.create(obj, notify)

    def update(self, obj, notify: bool = True):
        self._check("Put", obj)
        return self._cluster.update(obj, notify)

    def update_status(self, obj, notify: bool = True):
        self._check("Put", obj, "status")
        return self._cluster.update_status(obj, notify)

    def delete(self, obj, notify: bool = True) -> None:
        self._check("Delete", obj)
        self._cluster.delete(obj, notify)

    def delete_terminating(self, obj) -> None:
        self._check("Delete", obj)
        self._cluster.delete_terminating(obj)

    def create_binding(self, pod, node_name: str):
        self._check("Post", pod, "binding")
        out = self._cluster.create_binding(pod, node_name)
        self.world.bound_by[out.key] = self.replica
        return out

    @property
    def failing_binds(self):
        return self._cluster.failing_binds

    @property
    def injected_failures(self):
        return self._cluster.injected_failures

    # watch ------------------------------------------------------------------------------------
    def _on_event(self, kind: str, old, new) -> None:
        if kind in NOT_WATCHED:
            return  # kube-scheduler has no informer for it
        if self._seen is not None:
            return  # cut off: the relist at the end of the partition delivers it
        for fn in list(self._listeners):
            fn(kind, old, new)

    def cut_off(self) -> None:
        """The watch breaks: remember what the informers hold."""
        if self._seen is None:
            self._seen = {(k, object_key(o)): o for k in list(self._cluster.kinds())
                          for o in self._cluster.list(k)}

    def reconnect(self) -> None:
        """The reflector relists: adds, updates and deletes since the watch broke, by kind."""
        seen, self._seen = self._seen, None
        if seen is None:
            return
        now = {(k, object_key(o)): o for k in list(self._cluster.kinds()) for o in self._cluster.list(k)}
        for key, obj in now.items():
            old = seen.get(key)
            if old is None or old is not obj:
                self._on_event(obj.kind, old, obj)  # (key[0]: the store's `Kind.group` for a custom kind)
        for key, old in seen.items():
            if key not in now:
                self._on_event(old.kind, old, None)

    def close(self) -> None:
        self._listeners.clear()
        self._cluster.unsubscribe(self._on_event)


class World:
    """The replicas of a case on one virtual time (the election's VirtualLoop)."""

    def __init__(self, config, registry, cluster: Cluster, replicas: int, seed: int, source: str,
                 features=None):
        le = dict(config.get("leaderElection") or {})
        self.features = features
        check_leader_elector_config(le, source)
        self.config, self.registry, self.cluster = config, registry, cluster
        self.seed, self.source = seed, source
        self.elect = leader_elect(le)
        # delayCacheUntilActive: a candidate starts its informers only once it leads
        self.delay_cache = self.elect and bool(config.get("delayCacheUntilActive"))
        self.lease_ns = str(le.get("resourceNamespace") or "kube-system")
        self.lease_name = str(le.get("resourceName") or "kube-scheduler")
        self.loop = VirtualLoop(max_callbacks=MAX_TIMERS)
        self.sim = ElectionSim(le, seed=seed, cluster=cluster, loop=self.loop)
        self.sim.on_process_start = self._process_start
        self.sim.on_started_leading = self._started_leading
        self.sim.on_process_end = self._process_end
        self.sim.wait_for_sync = self._cannot_sync
        self._unsynced: Dict[str, Scheduler] = {}  # started while cut off: informers not synced
        self.names = replica_names(replicas)
        self.schedulers: Dict[str, Scheduler] = {}  # running processes
        self.leading: Dict[str, Scheduler] = {}  # the processes that schedule
        self.views: Dict[str, ProcessView] = {}
        self.bound_by: Dict[str, str] = {}
        self.all_schedulers: List[Scheduler] = []  # every process that ran (for reports)
        self.tracked_pods: List[str] = []
        self.explain = False
        self.attempt_timer = None  # each process's Scheduler.attempt_timer (bench)
        self.case_path: Optional[str] = None  # for errors a step causes

    # processes -------------------------------------------------------------------------------
    def start_all(self) -> None:
        for name in self.names:  # in name order at virtual time 0
            self.sim.start(name)

    def _process_start(self, proc: Process) -> None:
        view = ProcessView(self, self.cluster, proc.replica)
        sched = Scheduler(self.config, self.registry, view, seed=self.seed, source=self.source,
                          clock=proc.clock, name=proc.replica, features=self.features,
                          extender_handlers=getattr(self, "extender_handlers", None))
        sched.tracked_pods = self.tracked_pods
        sched.explain = self.explain
        sched.attempt_timer = self.attempt_timer
        if self.delay_cache:
            pass  # its informers start when it leads
        elif not self.reachable(proc.replica):
            self._unsynced[proc.replica] = sched  # the initial list waits for the partition's end
        else:
            sched.start()  # server.go: the informers start (and sync) before the election
        self.views[proc.replica] = view
        self.schedulers[proc.replica] = sched
        self.all_schedulers.append(sched)

    def _started_leading(self, proc: Process) -> None:
        sched = self.schedulers.get(proc.replica)
        if sched is not None:
            if self.delay_cache:
                sched.start()  # OnStartedLeading: startInformersAndWaitForSync, then sched.Run
            sched.start_queue()
            self.leading[proc.replica] = sched

    def _cannot_sync(self, proc: Process) -> bool:
        """server.go waits for its caches before the election: a process started while its
        replica is cut off waits for the partition's end (its informers cannot list)."""
        return proc.replica in self._unsynced

    def _process_end(self, proc: Process) -> None:
        self._unsynced.pop(proc.replica, None)
        self.leading.pop(proc.replica, None)
        self.schedulers.pop(proc.replica, None)
        view = self.views.pop(proc.replica, None)
        if view is not None:
            view.close()

    def reachable(self, replica: str) -> bool:
        return self.sim.reachable(replica)

    # steps -------------------------------------------------------------------------------------
    def _process(self, replica: str, key: str, running: bool) -> None:
        if replica not in self.names:
            raise UserError(f"no replica {replica} (the case has {', '.join(self.names)})", file=self.case_path, key=key)
        proc = self.sim.processes.get(replica)
        alive = proc is not None and proc.alive
        if running and not alive:
            raise UserError(f"{replica} is not running", file=self.case_path, key=key)
        if not running and alive:
            raise UserError(f"{replica} is running: crash or stop it before starting it",
                            file=self.case_path, key=key)

    def crash(self, replica: str, key: str) -> None:
        self._process(replica, key, running=True)
        self.sim.crash(replica)

    def stop(self, replica: str, key: str) -> None:
        self._process(replica, key, running=True)
        self.sim.stop(replica)

    def start(self, replica: str, key: str) -> None:
        self._process(replica, key, running=False)
        self.sim.start(replica)

    def partition(self, replica: str, seconds: float, key: str) -> None:
        self._process(replica, key, running=True)
        self.sim.partition(replica, seconds)
        view = self.views.get(replica)
        if view is not None:
            view.cut_off()
            until = self.sim.partitioned_until[replica]
            self.loop.call_at(until, lambda: self._reconnect(replica, until))

    def _reconnect(self, replica: str, until: float) -> None:
        if self.sim.partitioned_until.get(replica) != until:
            return
        view = self.views.get(replica)
        if view is not None:
            view.reconnect()
        sched = self._unsynced.pop(replica, None)
        if sched is not None:
            sched.start()  # the initial list, then the election (or scheduling)
            self.sim.synced(replica)

    def set_rate(self, replica: str, rate: float, key: str) -> None:
        self._process(replica, key, running=True)
        self.sim.set_rate(replica, rate)

    # the loop ----------------------------------------------------------------------------------
    def now(self) -> float:
        return self.loop.now

    def run(self, until: Optional[float] = None) -> None:
        """All processes on one virtual time: every scheduling process runs what is due (one
        cycle each in turn); then time passes to the next timer some scheduler waits for
        (`until` None: until quiet, as a single scheduler's run does) or, with `until`, through
        every timer up to it, the election's included."""
        rounds = 0
        limit = 50 * (len(self.cluster.list("Pod")) + 10)
        waits, wait_limit = 0, (quiet_wait_limit(self.cluster) if until is None else None)
        while True:
            if self._run_due():
                rounds += 1
                if rounds > limit:
                    raise UserError(f"the schedulers did not become quiet after {limit} rounds of "
                                    f"scheduling cycles at virtual time {self.loop.now:g}s")
                continue
            needs = [s.clock._global_of(t) for s in self.leading.values()
                     for t in [s.next_timer(quiet=until is None)] if t is not None]
            if until is None:
                if not needs:
                    break
                target = min(needs)
            else:
                if self.loop.now >= until:
                    break
                loop_next = self.loop.next_time()
                target = min(needs + [until] + ([loop_next] if loop_next is not None else []))
            ticks = [s.clock._global_of(s.next_flush_tick) for s in self.leading.values()]
            if ticks and min(ticks) < target:
                target = min(ticks)
            if target <= self.loop.now:
                target = self.loop.now + 1e-6  # a timer rounded just short of its instant
            waits += 1
            if wait_limit is not None and waits > wait_limit:
                raise never_quiet(list(self.leading.values()), wait_limit)
            self.loop.run_until(target)
            rounds = 0

    def _run_due(self) -> bool:
        """One round at the current instant: a scheduling cycle (and what is due before it) in
        each scheduling process, in name order, and their due flush ticks."""
        progressed = False
        for name in list(self.leading):
            sched = self.leading.get(name)
            if sched is not None and sched.schedule_ready():
                progressed = True
        for sched in list(self.leading.values()):
            if sched.next_flush_tick <= sched.clock.now() + 1e-9:
                sched.fire_flush_tick()
                progressed = True
        return progressed

    def advance(self, seconds: float) -> None:
        self.run(self.loop.now + seconds)
        self.run(None)

    # what the case reads -------------------------------------------------------------------------
    def lease(self) -> Dict[str, Any]:
        lease = self.cluster.get("Lease", self.lease_ns, self.lease_name)
        if lease is None:
            return {"holder": None, "transitions": 0}
        spec = lease.raw.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        return {"holder": holder.rsplit("_", 1)[0] if holder else None,
                "transitions": int(spec.get("leaseTransitions") or 0)}

    def lease_history(self) -> List[Dict[str, Any]]:
        """Who the Lease record named, from when to when (virtual seconds; `to` None: still)."""
        out: List[Dict[str, Any]] = []
        for w in self.sim.trace.lease_writes:
            holder = w.holder.rsplit("_", 1)[0] if w.holder else None
            if out and out[-1]["holder"] == holder and out[-1]["identity"] == w.holder:
                continue
            if out:
                out[-1]["to"] = w.time
            out.append({"holder": holder, "identity": w.holder, "from": w.time, "to": None,
                        "transitions": w.transitions})
        return out

    def queue_state(self, pod) -> str:
        """The pod's place in the scheduler that schedules (the leader; the first replica's when
        several schedule or none does)."""
        scheds = list(self.leading.values()) or list(self.schedulers.values())
        if pod.node_name or not scheds:
            return "bound" if pod.node_name else "none"
        states = [s.queue_state(pod) for s in scheds]
        for want in ("waiting", "active", "backoff", "gated", "unschedulable"):
            if want in states:
                return want
        return states[0]

    def attempts(self, pod) -> int:
        """Scheduling attempts of the pod in every process that ran."""
        return sum(s.attempts.get(pod.uid, 0) for s in self.all_schedulers)

    @property
    def records(self) -> Dict[str, list]:
        """Every process's cycle records of each pod, in virtual-time order."""
        out: Dict[str, list] = {}
        for s in self.all_schedulers:
            for key, recs in s.records.items():
                out.setdefault(key, []).extend(recs)
        for recs in out.values():
            recs.sort(key=lambda r: r.time)
        return out
