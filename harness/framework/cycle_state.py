"""CycleState (k8s.io/kube-scheduler/framework cycle_state.go): per-cycle data of the plugins."""

from __future__ import annotations

from typing import Any, Dict, Set


# the pod uids of a v1.36 pod group cycle, in that cycle's own CycleState (harness-only: what
# the live pod group state upstream's plugins read does not count as assumed yet)
POD_GROUP_MEMBERS_KEY = "harness/pod-group-cycle-members"


class NotFoundError(KeyError):
    """ErrNotFound: no data under that key. Its text is upstream's (`errors.New("not found")`),
    so a plugin's Error status reads as kube-scheduler's; the key stays in args[0]."""

    def __str__(self) -> str:
        return "not found"


class CycleState:
    """Plugins store their PreFilter/PreScore results here, keyed by a string of their own.
    Values stored should offer `clone()` when they are mutated by AddPod/RemovePod."""

    __slots__ = ("_storage", "skip_score_plugins",
                 "skip_pre_bind_plugins", "parallel_pre_bind_plugins", "pre_bind_will_work",
                 "record_plugin_metrics", "get", "_skip_filter_plugins",
                 "filter_calls", "filter_memo_key", "pod_group_cycle",
                 "pod_group_state", "skip_all_post_filter_plugins")

    def __init__(self) -> None:
        self._storage: Dict[str, Any] = {}
        # get(key, default=None): the storage's own dict.get (it is on the per-node hot path)
        self.get = self._storage.get
        self._skip_filter_plugins: Set[str] = set()
        # the framework's Filter plugins minus the skipped ones, computed once per cycle
        self.filter_calls = None
        # (memo, this cycle's part) of harness.framework.filter_memo, computed once per cycle
        self.filter_memo_key = None
        self.skip_score_plugins: Set[str] = set()
        self.skip_pre_bind_plugins: Set[str] = set()
        # PreBind plugins whose PreBindPreFlight allowed running them in parallel (v1.36)
        self.parallel_pre_bind_plugins: Set[str] = set()
        # PreBindPreFlights said Success (or did not run): the binding cycle is a pod in PreBind
        self.pre_bind_will_work = True
        self.record_plugin_metrics = False
        # IsPodGroupSchedulingCycle (v1.36): this pod is placed in its pod group's cycle
        self.pod_group_cycle = False
        # GetPodGroupSchedulingCycle (v1.36): the pod group cycle's own CycleState, shared by the
        # pods of that cycle (None outside one, and in the binding cycle)
        self.pod_group_state = None
        # SetSkipAllPostFilterPlugins (v1.36): the pod group algorithm run by workload-aware
        # preemption (runWithoutPostFilters)
        self.skip_all_post_filter_plugins = False

    @property
    def skip_filter_plugins(self) -> Set[str]:
        return self._skip_filter_plugins

    @skip_filter_plugins.setter
    def skip_filter_plugins(self, value: Set[str]) -> None:
        self._skip_filter_plugins = value
        self.filter_calls = None
        self.filter_memo_key = None

    def read(self, key: str) -> Any:
        try:
            return self._storage[key]
        except KeyError:
            raise NotFoundError(key) from None

    def write(self, key: str, value: Any) -> None:
        self._storage[key] = value

    def delete(self, key: str) -> None:
        self._storage.pop(key, None)

    def clone(self) -> "CycleState":
        """CycleState.Clone: values with a clone() method are cloned, others shared."""
        c = CycleState()
        for k, v in self._storage.items():
            cl = getattr(v, "clone", None)
            c._storage[k] = cl() if cl is not None else v
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.parallel_pre_bind_plugins = set(self.parallel_pre_bind_plugins)
        c.pre_bind_will_work = self.pre_bind_will_work
        c.pod_group_cycle = self.pod_group_cycle
        c.pod_group_state = self.pod_group_state
        c.skip_all_post_filter_plugins = self.skip_all_post_filter_plugins
        return c
