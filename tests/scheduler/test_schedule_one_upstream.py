"""The table tests of kube-scheduler's pkg/scheduler/schedule_one_test.go, ported to the harness:
schedulePod (node sets, FitErrors with their NodeToStatus, PreFilterResult restrictions),
findNodesThatFitPod (all / some errors, filter call counts with nominated pods and nominated
nodes, nextStartNodeIndex rotation), numFeasibleNodesToFind, prioritizeNodes, selectHost, and
ScheduleOne's failure paths (Reserve / Permit / PreBind / Bind errors, unreserve and forget, the
queue a failed pod lands in, the nominatedNodeName it keeps).

The fake plugins are in tests/sample/schedule_one_fakes.py. Each test builds a profile holding
only the plugins the upstream test registers (tf.NewFramework), plus PrioritySort and
DefaultBinder, the way upstream's tests do.

Where upstream is non-deterministic the harness picks one valid answer, and the tests accept any
valid one:
- findNodesThatPassFilters checks nodes on 16 goroutines and stops once numNodesToFind fit, so
  which nodes (and how many rejected nodes) end up in the result depends on the goroutines'
  timing; the harness checks them one after the other from nextStartNodeIndex.
- nodes of a PreFilterResult come from ranging over a Go map (random order); the harness keeps
  the snapshot's order.
- selectHost breaks ties between the highest scores uniformly at random (reservoir sampling); the
  harness samples uniformly with the case's seed.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional, Sequence

import pytest

from harness.cluster import Cluster
from harness.config import loader as config_loader
from harness.framework import Code, FitError, Status
from harness.framework.types import NodePluginScores
from harness.framework.cycle_state import CycleState
from harness.framework.registry import default_registry
from harness.scheduler.schedule_one import (CycleRecord, NoNodesAvailable, _CycleError,
                                            num_feasible_nodes_to_find, select_host)
from harness.scheduler.scheduler import Scheduler
from harness.testing import make_node, make_pod
from harness.versions import resolve

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)

import schedule_one_fakes as fk  # noqa: E402

ERR = fk.ERR_REASON_FAKE
MB = 1024 * 1024
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * MB
LOW, MID, HIGH = 0, 100, 1000  # lowPriority, midPriority, highPriority
V134, V135, V136 = resolve("v1.34"), resolve("v1.35"), resolve("v1.36")


# ------------------------------------------------------------------------------------------------
# helpers: a scheduler whose only profile holds the given plugins (tf.NewFramework)
# ------------------------------------------------------------------------------------------------

def registry(extra: Sequence[type] = ()) -> Dict[str, type]:
    reg = dict(default_registry())
    for cls in list(fk.FIXED_PLUGINS) + list(extra):
        reg[cls.name] = cls
    return reg


def profile(points: Dict[str, List[Any]], name: str = "default-scheduler",
            plugin_config: Optional[List[Dict[str, Any]]] = None) -> Dict[str, Any]:
    """`points`: extension point -> plugin names (or {"name":, "weight":} dicts), in order."""
    plugins: Dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}]},
                               "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                               "bind": {"enabled": [{"name": "DefaultBinder"}]}}
    for ep, names in points.items():
        plugins[ep] = {"enabled": [n if isinstance(n, dict) else {"name": n} for n in names]}
    prof: Dict[str, Any] = {"schedulerName": name, "plugins": plugins}
    if plugin_config:
        prof["pluginConfig"] = plugin_config
    return prof


def new_scheduler(nodes, pods=(), points: Optional[Dict[str, List[Any]]] = None,
                  extra: Sequence[type] = (), objects=(), percentage: Optional[int] = None,
                  profiles: Optional[List[Dict[str, Any]]] = None, seed: int = 0,
                  features: Any = None) -> Scheduler:
    """A scheduler as v1.34 runs (the tables here are v1.34's) unless `features` says
    otherwise."""
    features = features if features is not None else V134
    reg = registry(extra)
    cfg: Dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1",
                           "kind": "KubeSchedulerConfiguration",
                           "profiles": profiles or [profile(points or {})]}
    if percentage is not None:
        cfg["percentageOfNodesToScore"] = percentage
    cfg = config_loader.load_config_data(cfg, reg, features=features)
    cluster = Cluster(features)
    for o in list(objects) + list(nodes) + list(pods):
        cluster.create(o, notify=False)
    s = Scheduler(cfg, reg, cluster, seed=seed, features=features)
    s.start()
    s.cache.update_snapshot(s.snapshot)
    return s


def with_node_order(s: Scheduler, nodes) -> Scheduler:
    """Rebuild the cache adding the nodes in this order (upstream's makeScheduler calls
    cache.AddNode in the list's order; the harness's informer start lists nodes by name)."""
    from harness.scheduler.cache import Cache
    from harness.scheduler.snapshot import Snapshot
    s.cache = Cache()
    for n in nodes:
        s.cache.add_node(n)
    s.snapshot = Snapshot()
    for fw in s.profiles.values():
        fw.snapshot = s.snapshot
    s.cache.update_snapshot(s.snapshot)
    return s


def fw_of(s: Scheduler, name: str = "default-scheduler"):
    return s.profiles[name]


def schedule_pod(s: Scheduler, pod):
    """sched.SchedulePod: (result, error); error is a FitError, NoNodesAvailable or the Status
    of an Error."""
    try:
        return s.cycles.schedule_pod(fw_of(s, pod.scheduler_name), CycleState(), pod,
                                     CycleRecord(pod.key, 1)), None
    except (FitError, NoNodesAvailable) as e:
        return None, e
    except _CycleError as e:
        return None, e.status


def find_nodes_that_fit_pod(s: Scheduler, pod, state: Optional[CycleState] = None):
    s.cache.update_snapshot(s.snapshot)
    return s.cycles.find_nodes_that_fit_pod(fw_of(s), state or CycleState(), pod,
                                            CycleRecord(pod.key, 1))


def st(status: Optional[Status]):
    """A status as (code name, reasons, plugin)."""
    if status is None:
        return ("Success", [], "")
    return (status.code.name, status.get_reasons(), status.plugin)


def diagnosis_of(err: FitError) -> Dict[str, Any]:
    d = err.diagnosis
    return {"num_all_nodes": err.num_all_nodes,
            "node_to_status": {n: st(x) for n, x in d.node_to_status.items()},
            "absent": st(d.node_to_status.absent_nodes_status),
            "unschedulable_plugins": sorted(d.unschedulable_plugins),
            "pre_filter_msg": d.pre_filter_msg}


def nodes_named(*names: str, labelled: bool = True):
    return [make_node(n, labels={"kubernetes.io/hostname": n} if labelled else {}) for n in names]


def pod_named(name: str, **kw):
    return make_pod(name, uid=name, **kw)


def pvc_volume(claim: str) -> Dict[str, Any]:
    return {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]}


def unsched(*reasons: str, plugin: str = ""):
    return ("Unschedulable", list(reasons), plugin)


def unresolvable(*reasons: str, plugin: str = ""):
    return ("UnschedulableAndUnresolvable", list(reasons), plugin)


ABSENT_DEFAULT = unresolvable()  # NewDefaultNodeToStatus: UnschedulableAndUnresolvable, no reasons


# ------------------------------------------------------------------------------------------------
# TestSchedulerSchedulePod
# ------------------------------------------------------------------------------------------------

def _spread_pod(max_skew: int):
    return make_pod("p", uid="p", labels={"foo": ""}, spec={"topologySpreadConstraints": [{
        "maxSkew": max_skew, "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}]})


def _running(name: str, node: str, **labels):
    p = make_pod(name, uid=name, node_name=node, labels=labels)
    p.raw["status"] = {"phase": "Running"}
    return p


def _pvc(name: str, volume: str = "", deleting: bool = False) -> Dict[str, Any]:
    md: Dict[str, Any] = {"name": name, "namespace": "default", "uid": name,
                          "annotations": {"pv.kubernetes.io/bind-completed": "true"}}
    if deleting:
        md["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: Dict[str, Any] = {"accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}}}
    if volume:
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md, "spec": spec,
            "status": {"phase": "Bound"} if volume else {}}


def _pv(name: str, node_affinity: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    spec: Dict[str, Any] = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                            "hostPath": {"path": "/tmp"}}
    if node_affinity:
        spec["nodeAffinity"] = node_affinity
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "uid": name},
            "spec": spec, "status": {"phase": "Bound"}}


def _objects(*manifests):
    from harness.api.objects import make_object
    return [make_object(m) for m in manifests]


SCHEDULE_POD_CASES = [
    dict(name="test 1",
         points={"filter": ["FalseFilter"]},
         nodes=["node1", "node2"], pod="2",
         fit_error=dict(num_all_nodes=2,
                        node_to_status={"node1": unsched(ERR, plugin="FalseFilter"),
                                        "node2": unsched(ERR, plugin="FalseFilter")},
                        absent=ABSENT_DEFAULT, unschedulable_plugins=["FalseFilter"],
                        pre_filter_msg=""),
         message="0/2 nodes are available: 2 Nodes failed the fake plugin."),
    dict(name="test 2",
         points={"filter": ["TrueFilter"], "score": ["EqualPrioritizerPlugin"]},
         nodes=["node1", "node2"], pod="ignore", want_nodes={"node1", "node2"}),
    dict(name="test 3 (fits on the node named like the pod)",
         points={"filter": ["MatchFilter"]},
         nodes=["node1", "node2"], pod="node2", want_nodes={"node2"}),
    dict(name="test 4",
         points={"filter": ["TrueFilter"], "score": ["NumericMap"]},
         nodes=["3", "2", "1"], pod="ignore", want_nodes={"3"}),
    dict(name="test 5",
         points={"filter": ["MatchFilter"], "score": ["NumericMap"]},
         nodes=["3", "2", "1"], pod="2", want_nodes={"2"}),
    dict(name="test 6 (NumericMap 3,2,1 + 2 x ReverseNumericMap 1,2,3 -> 5,6,7)",
         points={"filter": ["TrueFilter"],
                 "score": [{"name": "NumericMap", "weight": 1}, {"name": "ReverseNumericMap", "weight": 2}]},
         nodes=["3", "2", "1"], pod="2", want_nodes={"1"}),
    dict(name="test 7",
         points={"filter": ["TrueFilter", "FalseFilter"], "score": ["NumericMap"]},
         nodes=["3", "2", "1"], pod="2",
         fit_error=dict(num_all_nodes=3,
                        node_to_status={n: unsched(ERR, plugin="FalseFilter") for n in ("3", "2", "1")},
                        absent=ABSENT_DEFAULT, unschedulable_plugins=["FalseFilter"],
                        pre_filter_msg=""),
         message="0/3 nodes are available: 3 Nodes failed the fake plugin."),
    dict(name="test 8",
         points={"filter": ["NoPodsFilter", "MatchFilter"], "score": ["NumericMap"]},
         pods=[("2", "2")], nodes=["1", "2"], pod="2",
         fit_error=dict(num_all_nodes=2,
                        node_to_status={"1": unsched(ERR, plugin="MatchFilter"),
                                        "2": unsched(ERR, plugin="NoPodsFilter")},
                        absent=ABSENT_DEFAULT, unschedulable_plugins=["MatchFilter", "NoPodsFilter"],
                        pre_filter_msg=""),
         message="0/2 nodes are available: 2 Nodes failed the fake plugin."),
    dict(name="existing PVC",
         points={"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"],
                 "score": ["EqualPrioritizerPlugin"]},
         nodes=["node1", "node2"], pod="ignore", pod_spec=pvc_volume("existingPVC"),
         objects=[_pvc("existingPVC", "existingPV"), _pv("existingPV")],
         want_nodes={"node1", "node2"}),
    dict(name="unknown PVC",
         points={"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"]},
         nodes=["node1", "node2"], pod="ignore", pod_spec=pvc_volume("unknownPVC"),
         fit_error=dict(num_all_nodes=2, node_to_status={},
                        absent=unresolvable('persistentvolumeclaim "unknownPVC" not found',
                                            plugin="VolumeBinding"),
                        unschedulable_plugins=["VolumeBinding"],
                        pre_filter_msg='persistentvolumeclaim "unknownPVC" not found'),
         message='0/2 nodes are available: persistentvolumeclaim "unknownPVC" not found.'),
    dict(name="deleted PVC",
         points={"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"]},
         nodes=["node1", "node2"], pod="ignore", pod_spec=pvc_volume("existingPVC"),
         objects=[_pvc("existingPVC", deleting=True)],
         fit_error=dict(num_all_nodes=2, node_to_status={},
                        absent=unresolvable('persistentvolumeclaim "existingPVC" is being deleted',
                                            plugin="VolumeBinding"),
                        unschedulable_plugins=["VolumeBinding"],
                        pre_filter_msg='persistentvolumeclaim "existingPVC" is being deleted'),
         message='0/2 nodes are available: persistentvolumeclaim "existingPVC" is being deleted.'),
    dict(name="test error with priority map",
         points={"filter": ["TrueFilter"],
                 "score": [{"name": "FalseMap", "weight": 1}, {"name": "TrueMap", "weight": 2}]},
         nodes=["2", "1"], pod="2",
         error='running Score plugins: plugin "FalseMap" failed with: priority map encounters an error'),
    dict(name="test podtopologyspread plugin - 2 nodes with maxskew=1",
         points={"preFilter": ["PodTopologySpread"], "filter": ["PodTopologySpread"]},
         nodes=["node1", "node2"], pod=_spread_pod(1),
         pods=[_running("pod1", "node1", foo="")], want_nodes={"node2"}),
    dict(name="test podtopologyspread plugin - 3 nodes with maxskew=2",
         points={"preFilter": ["PodTopologySpread"], "filter": ["PodTopologySpread"],
                 "score": ["EqualPrioritizerPlugin"]},
         nodes=["node1", "node2", "node3"], pod=_spread_pod(2),
         pods=[_running("pod1a", "node1", foo=""), _running("pod1b", "node1", foo=""),
               _running("pod2", "node2", foo="")],
         want_nodes={"node2", "node3"}),
    dict(name="test with filter plugin returning Unschedulable status",
         extra=[fk.fake_filter({"3": Code.Unschedulable})],
         points={"filter": ["FakeFilter"], "score": ["NumericMap"]},
         nodes=["3"], pod="test-filter",
         fit_error=dict(num_all_nodes=1,
                        node_to_status={"3": unsched("injecting failure for pod test-filter",
                                                     plugin="FakeFilter")},
                        absent=ABSENT_DEFAULT, unschedulable_plugins=["FakeFilter"], pre_filter_msg=""),
         message="0/1 nodes are available: 1 injecting failure for pod test-filter."),
    dict(name="test with filter plugin returning UnschedulableAndUnresolvable status",
         extra=[fk.fake_filter({"3": Code.UnschedulableAndUnresolvable})],
         points={"filter": ["FakeFilter"], "score": ["NumericMap"]},
         nodes=["3"], pod="test-filter",
         fit_error=dict(num_all_nodes=1,
                        node_to_status={"3": unresolvable("injecting failure for pod test-filter",
                                                          plugin="FakeFilter")},
                        absent=ABSENT_DEFAULT, unschedulable_plugins=["FakeFilter"], pre_filter_msg=""),
         message="0/1 nodes are available: 1 injecting failure for pod test-filter."),
    dict(name="test with partial failed filter plugin",
         extra=[fk.fake_filter({"1": Code.Unschedulable})],
         points={"filter": ["FakeFilter"], "score": ["NumericMap"]},
         nodes=["1", "2"], pod="test-filter", want_nodes={"2"}),
    dict(name="test prefilter plugin returning Unschedulable status",
         extra=[fk.fake_pre_filter("FakePreFilter", None, Status(Code.UnschedulableAndUnresolvable,
                                                                 "injected unschedulable status"))],
         points={"preFilter": ["FakePreFilter"]},
         nodes=["1", "2"], pod="test-prefilter",
         fit_error=dict(num_all_nodes=2, node_to_status={},
                        absent=unresolvable("injected unschedulable status", plugin="FakePreFilter"),
                        unschedulable_plugins=["FakePreFilter"],
                        pre_filter_msg="injected unschedulable status"),
         message="0/2 nodes are available: injected unschedulable status."),
    dict(name="test prefilter plugin returning error status",
         extra=[fk.fake_pre_filter("FakePreFilter", None, Status(Code.Error, "injected error status"))],
         points={"preFilter": ["FakePreFilter"]},
         nodes=["1", "2"], pod="test-prefilter",
         error='running PreFilter plugin "FakePreFilter": injected error status'),
    dict(name="test prefilter plugin returning node",
         extra=[fk.fake_pre_filter("FakePreFilter1"),
                fk.fake_pre_filter("FakePreFilter2", {"node2"}),
                fk.fake_pre_filter("FakePreFilter3", {"node1", "node2"})],
         points={"preFilter": ["FakePreFilter1", "FakePreFilter2", "FakePreFilter3"]},
         nodes=["node1", "node2", "node3"], pod="test-prefilter",
         want_nodes={"node2"},
         # no score plugin: the Filter stage looks for one node only
         evaluated=1),
    dict(name="test prefilter plugin returning non-intersecting nodes",
         extra=[fk.fake_pre_filter("FakePreFilter1"),
                fk.fake_pre_filter("FakePreFilter2", {"node2"}),
                fk.fake_pre_filter("FakePreFilter3", {"node1"})],
         points={"preFilter": ["FakePreFilter1", "FakePreFilter2", "FakePreFilter3"]},
         nodes=["node1", "node2", "node3"], pod="test-prefilter",
         fit_error=dict(num_all_nodes=3, node_to_status={},
                        absent=unresolvable("node(s) didn't satisfy plugin(s) [FakePreFilter2 "
                                            "FakePreFilter3] simultaneously"),
                        unschedulable_plugins=["FakePreFilter2", "FakePreFilter3"],
                        pre_filter_msg="node(s) didn't satisfy plugin(s) [FakePreFilter2 "
                                       "FakePreFilter3] simultaneously"),
         message="0/3 nodes are available: node(s) didn't satisfy plugin(s) [FakePreFilter2 "
                 "FakePreFilter3] simultaneously."),
    dict(name="test prefilter plugin returning empty node set",
         extra=[fk.fake_pre_filter("FakePreFilter1"),
                fk.fake_pre_filter("FakePreFilter2", set())],
         points={"preFilter": ["FakePreFilter1", "FakePreFilter2"]},
         nodes=["node1"], pod="test-prefilter",
         fit_error=dict(num_all_nodes=1, node_to_status={},
                        absent=unresolvable("node(s) didn't satisfy plugin FakePreFilter2"),
                        unschedulable_plugins=["FakePreFilter2"],
                        pre_filter_msg="node(s) didn't satisfy plugin FakePreFilter2"),
         message="0/1 nodes are available: node(s) didn't satisfy plugin FakePreFilter2."),
    dict(name="test some nodes are filtered out by prefilter plugin and other are filtered out by "
              "filter plugin",
         extra=[fk.fake_pre_filter("FakePreFilter", {"node2"}),
                fk.fake_filter({"node2": Code.Unschedulable})],
         points={"preFilter": ["FakePreFilter"], "filter": ["FakeFilter"]},
         nodes=["node1", "node2"], pod="test-prefilter",
         fit_error=dict(num_all_nodes=2,
                        node_to_status={"node2": unsched("injecting failure for pod test-prefilter",
                                                         plugin="FakeFilter")},
                        absent=unresolvable("node(s) didn't satisfy plugin(s) [FakePreFilter]"),
                        unschedulable_plugins=["FakeFilter", "FakePreFilter"], pre_filter_msg=""),
         message="0/2 nodes are available: 1 injecting failure for pod test-prefilter, "
                 "1 node(s) didn't satisfy plugin(s) [FakePreFilter]."),
    dict(name="test prefilter plugin returning skip",
         extra=[fk.fake_pre_filter("FakePreFilter1"),
                fk.fake_filter({"node1": Code.Unschedulable}, name="FakeFilter1"),
                # its Filter must not run (PreFilter said Skip): it would be an Error everywhere
                fk.fake_pre_filter_and_filter("FakeFilter2", Status(Code.Skip),
                                              {"node1": Code.Error, "node2": Code.Error,
                                               "node3": Code.Error})],
         points={"preFilter": ["FakePreFilter1", "FakeFilter2"],
                 "filter": ["FakeFilter1", "FakeFilter2"], "score": ["EqualPrioritizerPlugin"]},
         nodes=["node1", "node2", "node3"], pod="test-prefilter",
         want_nodes={"node2", "node3"}, evaluated=3),
    dict(name="test all prescore plugins return skip",
         extra=[fk.fake_pre_score_and_score(
             "FakePreScoreAndScorePlugin", 0, Status(Code.Skip, "fake skip"),
             Status(Code.Error, "this score function shouldn't be executed because this plugin "
                                "returned Skip in the PreScore"))],
         points={"filter": ["TrueFilter"], "preScore": ["FakePreScoreAndScorePlugin"],
                 "score": ["FakePreScoreAndScorePlugin"]},
         nodes=["node1", "node2"], pod="ignore", want_nodes={"node1", "node2"}),
    dict(name="test without score plugin no extra nodes are evaluated",
         points={"filter": ["TrueFilter"]},
         nodes=["node1", "node2", "node3"], pod="pod1",
         want_nodes={"node1", "node2", "node3"}, evaluated=1),
    dict(name="test no score plugin, prefilter plugin returning 2 nodes",
         extra=[fk.fake_pre_filter("FakePreFilter", {"node1", "node2"})],
         points={"preFilter": ["FakePreFilter"]},
         nodes=["node1", "node2", "node3"], pod="test-prefilter",
         want_nodes={"node1", "node2"}, evaluated=1),
    dict(name="test prefilter plugin returned an invalid node",
         extra=[fk.fake_pre_filter("FakePreFilter", {"invalid-node"})],
         points={"preFilter": ["FakePreFilter"], "filter": ["TrueFilter"]},
         nodes=["1", "2"], pod="test-prefilter",
         fit_error=dict(num_all_nodes=2, node_to_status={},
                        absent=unresolvable("node(s) didn't satisfy plugin(s) [FakePreFilter]"),
                        unschedulable_plugins=["FakePreFilter"], pre_filter_msg=""),
         message="0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [FakePreFilter]."),
    dict(name="hostname and nodename of the node do not match",
         points={"preFilter": ["VolumeBinding"], "filter": ["TrueFilter"],
                 "score": ["EqualPrioritizerPlugin"]},
         node_objs=[make_node("node1", labels={"kubernetes.io/hostname": "host1"})],
         pod="pod1", pod_spec=pvc_volume("PVC1"),
         objects=[_pvc("PVC1", "PV1"),
                  _pv("PV1", {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                      {"key": "kubernetes.io/hostname", "operator": "In", "values": ["host1"]}]}]}})],
         want_nodes={"node1"}),
]


@pytest.mark.parametrize("case", SCHEDULE_POD_CASES, ids=[c["name"] for c in SCHEDULE_POD_CASES])
def test_scheduler_schedule_pod(case):
    """TestSchedulerSchedulePod (the extender cases are left out: the harness has no extenders)."""
    nodes = case.get("node_objs") or nodes_named(*case["nodes"])
    pods = [p if not isinstance(p, tuple) else _running(p[0], p[1]) for p in case.get("pods", [])]
    s = new_scheduler(nodes, pods, case["points"], extra=case.get("extra", ()),
                      objects=_objects(*case.get("objects", [])))
    pod = case["pod"]
    if isinstance(pod, str):
        pod = pod_named(pod, spec=case.get("pod_spec"))
    result, err = schedule_pod(s, pod)
    if "fit_error" in case:
        assert isinstance(err, FitError), err
        assert diagnosis_of(err) == case["fit_error"]
        assert str(err) == case["message"]
        return
    if "error" in case:
        assert isinstance(err, Status) and err.code == Code.Error, err
        assert err.message() == case["error"]
        return
    assert err is None, err
    assert result.suggested_host in case["want_nodes"]
    assert result.evaluated_nodes == case.get("evaluated", len(nodes))


def test_schedule_pod_without_nodes():
    """schedulePod: ErrNoNodesAvailable, an UnschedulableAndUnresolvable status with that error."""
    s = new_scheduler([], [], {"filter": ["TrueFilter"]})
    _, err = schedule_pod(s, pod_named("p"))
    assert isinstance(err, NoNodesAvailable)
    assert str(err) == "no nodes available to schedule pods"
    pinfo = s.queue.new_queued_pod_info(pod_named("p"))
    _, _, status = s.cycles.scheduling_cycle(CycleState(), fw_of(s), pinfo, CycleRecord("default/p", 1))
    assert status.code == Code.UnschedulableAndUnresolvable
    assert status.message() == "no nodes available to schedule pods"


def test_schedule_pod_single_feasible_node_skips_scoring():
    """schedulePod: one feasible node is used without running PreScore/Score; EvaluatedNodes is
    1 + the rejected nodes."""
    scorer = fk.fake_pre_score_and_score("Boom", 0, Status(Code.Error, "prescore must not run"), None)
    s = new_scheduler(nodes_named("a", "b", "c"), [], {
        "filter": ["MatchFilter"], "preScore": ["Boom"], "score": ["Boom"]}, extra=[scorer])
    result, err = schedule_pod(s, pod_named("b"))
    assert err is None
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == ("b", 3, 1)


# ------------------------------------------------------------------------------------------------
# TestFindFitAllError, TestFindFitSomeError
# ------------------------------------------------------------------------------------------------

def test_find_fit_all_error():
    nodes = nodes_named("3", "2", "1", labelled=False)
    s = with_node_order(new_scheduler(nodes, [], {"filter": ["TrueFilter", "MatchFilter"]}), nodes)
    feasible, diagnosis = find_nodes_that_fit_pod(s, make_pod("", uid="empty"))
    assert feasible == []
    assert {n: st(x) for n, x in diagnosis.node_to_status.items()} == {
        n: unsched(ERR, plugin="MatchFilter") for n in ("1", "2", "3")}
    assert st(diagnosis.node_to_status.absent_nodes_status) == ABSENT_DEFAULT
    assert diagnosis.unschedulable_plugins == {"MatchFilter"}


def test_find_fit_some_error():
    """Nodes 3, 2, 1 in that order and no score plugin: one feasible node is enough, and the two
    nodes before it are rejected."""
    nodes = nodes_named("3", "2", "1", labelled=False)
    s = with_node_order(new_scheduler(nodes, [], {"filter": ["TrueFilter", "MatchFilter"]}), nodes)
    assert [ni.node.name for ni in s.snapshot.list()] == ["3", "2", "1"]
    pod = pod_named("1")
    feasible, diagnosis = find_nodes_that_fit_pod(s, pod)
    assert [ni.node.name for ni in feasible] == ["1"]
    assert diagnosis.node_to_status.length() == 2
    assert diagnosis.unschedulable_plugins == {"MatchFilter"}
    for name in ("2", "3"):
        assert diagnosis.node_to_status.get(name).get_reasons() == [ERR]


# ------------------------------------------------------------------------------------------------
# TestFindFitPredicateCallCounts, TestPreferNominatedNodeFilterCallCounts
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("priority,want", [
    (HIGH, 1),  # nominated pods have lower priority, predicate is called once
    (LOW, 2),   # nominated pods have higher priority, predicate is called twice
])
def test_find_fit_predicate_call_counts(priority, want):
    fake = fk.fake_filter()
    s = new_scheduler(nodes_named("1", labelled=False), [], {"filter": ["FakeFilter"]}, extra=[fake])
    nominated = make_pod("", uid="nominated", priority=MID)
    s.cluster.create(nominated, notify=False)  # the nominator looks the pod up in the informer
    s.queue.nominator.add(_pod_info(nominated), "1")
    assert s.queue.nominator.nominated_pods_for_node("1")
    find_nodes_that_fit_pod(s, make_pod("1", uid="1", priority=priority))
    assert fake.num_filter_called == want


def _pod_info(pod):
    from harness.framework.types import PodInfo
    return PodInfo.of(pod)


@pytest.mark.parametrize("nominated,codes,want", [
    ("node1", {}, 1),                          # the nominated node fits: only it is filtered
    ("", {}, 3),                               # no nominated node: every node
    ("node1", {"node1": Code.Unschedulable}, 4),  # nominated node fails: it, then every node
])
def test_prefer_nominated_node_filter_call_counts(nominated, codes, want):
    fake = fk.fake_filter(codes)
    s = new_scheduler(nodes_named("node1", "node2", "node3", labelled=False), [],
                      {"filter": ["FakeFilter"], "score": ["EqualPrioritizerPlugin"]}, extra=[fake])
    pod = make_pod("p", uid="p", priority=HIGH)
    if nominated:
        pod.raw["status"] = {"nominatedNodeName": nominated}
        pod = type(pod)(pod.raw)
    find_nodes_that_fit_pod(s, pod)
    assert fake.num_filter_called == want


def test_nominated_node_that_fails_is_evaluated_again_with_the_others():
    """evaluateNominatedNode records the nominated node's status in the same NodeToStatus; the
    pass over all nodes sets it again, so it counts once."""
    fake = fk.fake_filter({"node1": Code.Unschedulable})
    s = new_scheduler(nodes_named("node1", "node2", labelled=False), [],
                      {"filter": ["FakeFilter"], "score": ["EqualPrioritizerPlugin"]}, extra=[fake])
    raw = make_pod("p", uid="p").raw
    raw["status"] = {"nominatedNodeName": "node1"}
    pod = type(make_pod())(raw)
    result, err = schedule_pod(s, pod)
    assert err is None
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == ("node2", 2, 1)


def _nominated(name: str, node: str, **kw):
    raw = make_pod(name, uid=name, **kw).raw
    raw["status"] = {"nominatedNodeName": node}
    return type(make_pod())(raw)


def test_nominated_node_is_tried_before_the_pre_filter_result_restriction():
    """findNodesThatFitPod evaluates the nominated node before restricting the nodes to the
    PreFilterResult, so a nominated node outside the result can still be chosen."""
    s = new_scheduler(nodes_named("a", "b"), [], {"preFilter": ["FakePreFilter"], "filter": ["TrueFilter"]},
                      extra=[fk.fake_pre_filter("FakePreFilter", {"a"})])
    result, err = schedule_pod(s, _nominated("p", "b"))
    assert err is None
    assert (result.suggested_host, result.evaluated_nodes) == ("b", 1)


def test_error_on_the_nominated_node_falls_back_to_all_nodes():
    """evaluateNominatedNode's error is only logged ("Evaluation failed on nominated node"); the
    cycle goes on with the other nodes (here the PreFilterResult keeps the failing node out of
    the second pass, so upstream's outcome does not depend on goroutine timing)."""
    s = new_scheduler(nodes_named("a", "b"), [], {"preFilter": ["FakePreFilter"], "filter": ["FakeFilter"]},
                      extra=[fk.fake_pre_filter("FakePreFilter", {"a"}),
                             fk.fake_filter({"b": Code.Error})])
    result, err = schedule_pod(s, _nominated("p", "b"))
    assert err is None
    assert (result.suggested_host, result.evaluated_nodes) == ("a", 1)


def test_nominated_node_missing_from_the_snapshot_is_ignored():
    s = new_scheduler(nodes_named("node1", labelled=False), [], {"filter": ["TrueFilter"]})
    raw = make_pod("p", uid="p").raw
    raw["status"] = {"nominatedNodeName": "gone"}
    result, err = schedule_pod(s, type(make_pod())(raw))
    assert err is None and result.suggested_host == "node1"


# ------------------------------------------------------------------------------------------------
# TestNumFeasibleNodesToFind, TestFairEvaluationForNodes
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("global_pct,profile_pct,nodes,want", [
    (0, None, 10, 10),      # not set percentageOfNodesToScore and nodes number not more than 50
    (0, 40, 10, 10),        # set profile percentageOfNodesToScore and nodes number not more than 50
    (0, None, 1000, 420),   # not set percentageOfNodesToScore and nodes number more than 50
    (0, 40, 1000, 400),     # set profile percentageOfNodesToScore and nodes number more than 50
    (100, 40, 1000, 400),   # set global and profile percentageOfNodesToScore
    (40, None, 1000, 400),  # set global percentageOfNodesToScore
    (0, None, 6000, 300),   # not set profile percentageOfNodesToScore, more than 50*125 nodes
    (0, 40, 6000, 2400),    # set profile percentageOfNodesToScore, more than 50*125 nodes
])
def test_num_feasible_nodes_to_find_table(global_pct, profile_pct, nodes, want):
    assert num_feasible_nodes_to_find(profile_pct, global_pct, nodes) == want


def test_num_feasible_nodes_to_find_profile_setting_wins():
    """The profile's percentageOfNodesToScore, read from the configuration, overrides the global
    one (and 0 in the profile means the adaptive formula, not 'unset')."""
    prof = profile({"filter": ["TrueFilter"], "score": ["EqualPrioritizerPlugin"]})
    prof["percentageOfNodesToScore"] = 40
    s = new_scheduler(nodes_named("1", labelled=False), [], profiles=[prof], percentage=100)
    assert fw_of(s).percentage_of_nodes_to_score == 40
    assert num_feasible_nodes_to_find(fw_of(s).percentage_of_nodes_to_score,
                                      s.percentage_of_nodes_to_score, 1000) == 400


def test_fair_evaluation_for_nodes():
    """TestFairEvaluationForNodes: 500 nodes, 30% -> 150 per cycle; nextStartNodeIndex moves on by
    150 each cycle, wrapping around."""
    n = 500
    s = new_scheduler(nodes_named(*[str(i) for i in range(n)], labelled=False), [],
                      {"filter": ["TrueFilter"], "score": ["EqualPrioritizerPlugin"]}, percentage=30)
    to_find = num_feasible_nodes_to_find(fw_of(s).percentage_of_nodes_to_score,
                                         s.percentage_of_nodes_to_score, n)
    assert to_find == 150
    order = [ni.node.name for ni in s.snapshot.list()]
    for i in range(2 * (n // to_find + 1)):
        start = s.next_start_node_index
        feasible, _ = find_nodes_that_fit_pod(s, make_pod("", uid=f"p{i}"))
        assert len(feasible) == to_find
        assert [ni.node.name for ni in feasible] == [order[(start + k) % n] for k in range(to_find)]
        assert s.next_start_node_index == (i + 1) * to_find % n


def test_next_start_node_index_counts_rejected_nodes():
    """processedNodes = feasible + NodeToStatus.Len(): rejected nodes move the start on too."""
    fake = fk.fake_filter({"a": Code.Unschedulable, "b": Code.Unschedulable})
    s = new_scheduler(nodes_named("a", "b", "c", "d", labelled=False), [],
                      {"filter": ["FakeFilter"]}, extra=[fake])
    feasible, diagnosis = find_nodes_that_fit_pod(s, pod_named("p"))
    # no score plugin: one feasible node is enough; a, b rejected, c fits
    assert [ni.node.name for ni in feasible] == ["c"]
    assert s.next_start_node_index == 3
    feasible, diagnosis = find_nodes_that_fit_pod(s, pod_named("q"))
    assert [ni.node.name for ni in feasible] == ["d"]
    assert s.next_start_node_index == 0


def test_next_start_node_index_moves_on_when_a_filter_errors():
    """findNodesThatFitPod updates nextStartNodeIndex "regardless of whether an error has
    occurred": the nodes processed before the Error (fitting or rejected) count."""
    fake = fk.fake_filter({"a": Code.Unschedulable, "c": Code.Error})
    s = new_scheduler(nodes_named("a", "b", "c", "d", labelled=False), [],
                      {"filter": ["FakeFilter"], "score": ["EqualPrioritizerPlugin"]}, extra=[fake])
    result, err = schedule_pod(s, pod_named("p"))
    assert isinstance(err, Status) and err.code == Code.Error
    assert err.message() == 'running "FakeFilter" filter plugin: injecting failure for pod p'
    # sequentially from 0: a rejected, b fits, c errors -> 2 nodes processed
    assert s.next_start_node_index == 2


def test_no_filter_plugins_takes_nodes_from_the_start_index():
    s = new_scheduler(nodes_named("a", "b", "c", labelled=False), [], {"score": ["EqualPrioritizerPlugin"]})
    s.next_start_node_index = 2
    feasible, _ = find_nodes_that_fit_pod(s, pod_named("p"))
    assert [ni.node.name for ni in feasible] == ["c", "a", "b"]
    assert s.next_start_node_index == (2 + 3) % 3


# ------------------------------------------------------------------------------------------------
# Test_prioritizeNodes, TestZeroRequest
# ------------------------------------------------------------------------------------------------

IMAGES_1 = [{"names": ["gcr.io/40:latest", "gcr.io/40:v1"], "sizeBytes": 80 * MB},
            {"names": ["gcr.io/300:latest", "gcr.io/300:v1"], "sizeBytes": 300 * MB}]
IMAGES_2 = [{"names": ["gcr.io/300:latest"], "sizeBytes": 300 * MB},
            {"names": ["gcr.io/40:latest", "gcr.io/40:v1"], "sizeBytes": 80 * MB}]
IMAGES_3 = [{"names": ["gcr.io/600:latest"], "sizeBytes": 600 * MB},
            {"names": ["gcr.io/40:latest"], "sizeBytes": 80 * MB},
            {"names": ["gcr.io/900:latest"], "sizeBytes": 900 * MB}]


def _res_node(name: str, images=None):
    """makeNode(node, 1000, DefaultMemoryRequest*10, images...)."""
    return make_node(name, labels={}, allocatable={"cpu": "1000m", "memory": str(DEFAULT_MEMORY_REQUEST * 10),
                                                    "pods": "100"}, images=images)


def _image_pod(image: str):
    return make_pod("", uid="img", spec={"containers": [{"name": "c", "image": image}]})


PRIORITIZE_CASES = [
    dict(name="the score from all plugins should be recorded in PluginToNodeScores",
         nodes=[_res_node("node1"), _res_node("node2")],
         score=["NodeResourcesBalancedAllocation", "Node2Prioritizer"],
         want={"node1": ({"Node2Prioritizer": 10, "NodeResourcesBalancedAllocation": 0}, 10),
               "node2": ({"Node2Prioritizer": 100, "NodeResourcesBalancedAllocation": 0}, 100)}),
    dict(name="plugin which returned skip in preScore shouldn't be executed in the score phase",
         nodes=[_res_node("node1"), _res_node("node2")],
         extra=[fk.fake_pre_score_and_score(
             "FakePreScoreAndScorePlugin", 0, Status(Code.Skip, "fake skip"),
             Status(Code.Error, "this score function shouldn't be executed because this plugin "
                                "returned Skip in the PreScore"))],
         pre_score=["FakePreScoreAndScorePlugin"],
         score=["NodeResourcesBalancedAllocation", "Node2Prioritizer", "FakePreScoreAndScorePlugin"],
         want={"node1": ({"Node2Prioritizer": 10, "NodeResourcesBalancedAllocation": 0}, 10),
               "node2": ({"Node2Prioritizer": 100, "NodeResourcesBalancedAllocation": 0}, 100)}),
    dict(name="all score plugins are skipped",
         nodes=[_res_node("node1"), _res_node("node2")],
         extra=[fk.fake_pre_score_and_score(
             "FakePreScoreAndScorePlugin", 0, Status(Code.Skip, "fake skip"),
             Status(Code.Error, "this score function shouldn't be executed because this plugin "
                                "returned Skip in the PreScore"))],
         pre_score=["FakePreScoreAndScorePlugin"], score=["FakePreScoreAndScorePlugin"],
         want={"node1": ({}, 0), "node2": ({}, 0)}),
    dict(name="the score from Image Locality plugin with image in all nodes",
         nodes=[_res_node("node1", IMAGES_1), _res_node("node2", IMAGES_2), _res_node("node3", IMAGES_3)],
         pod=_image_pod("gcr.io/40"), score=["ImageLocality"],
         want={"node1": ({"ImageLocality": 5}, 5), "node2": ({"ImageLocality": 5}, 5),
               "node3": ({"ImageLocality": 5}, 5)}),
    dict(name="the score from Image Locality plugin with image in partial nodes",
         nodes=[_res_node("node1", IMAGES_1), _res_node("node2", IMAGES_2), _res_node("node3", IMAGES_3)],
         pod=_image_pod("gcr.io/300"), score=["ImageLocality"],
         want={"node1": ({"ImageLocality": 18}, 18), "node2": ({"ImageLocality": 18}, 18),
               "node3": ({"ImageLocality": 0}, 0)}),
]


@pytest.mark.parametrize("case", PRIORITIZE_CASES, ids=[c["name"] for c in PRIORITIZE_CASES])
def test_prioritize_nodes(case):
    """Test_prioritizeNodes (the extender case is left out). BalancedAllocation is enabled at
    Score only, as upstream registers it, so its PreScore never runs and Score falls back to
    computing the (best-effort: 0) score itself."""
    points: Dict[str, List[Any]] = {"score": case["score"]}
    if case.get("pre_score"):
        points["preScore"] = case["pre_score"]
    s = new_scheduler(case["nodes"], [], points, extra=case.get("extra", ()))
    pod = case.get("pod") or make_pod("", uid="empty", spec={"containers": [{"name": "c", "image": "x"}]})
    scores = s.cycles.prioritize_nodes(fw_of(s), CycleState(), pod, s.snapshot.list())
    got = {ns.name: (dict(ns.scores), ns.total_score) for ns in scores}
    assert got == case["want"]


def test_prioritize_nodes_without_score_plugins_scores_one():
    s = new_scheduler(nodes_named("a", "b"), [], {"filter": ["TrueFilter"]})
    scores = s.cycles.prioritize_nodes(fw_of(s), CycleState(), pod_named("p"), s.snapshot.list())
    assert [(ns.name, ns.scores, ns.total_score) for ns in scores] == [("a", [], 1), ("b", [], 1)]


def test_prioritize_nodes_pre_score_error():
    boom = fk.fake_pre_score_and_score("Boom", 0, Status(Code.Error, "no prescore"), None)
    s = new_scheduler(nodes_named("a", "b"), [], {"filter": ["TrueFilter"], "preScore": ["Boom"],
                                                  "score": ["Boom"]}, extra=[boom])
    _, err = schedule_pod(s, pod_named("p"))
    assert isinstance(err, Status) and err.message() == 'running PreScore plugin "Boom": no prescore'


def _zero_request_cluster():
    def placed(name, node, cpu=None, mem=None):
        req = {} if cpu is None else {"cpu": f"{cpu}m", "memory": str(mem)}
        return make_pod(name, uid=name, node_name=node, requests=req)
    d_cpu, d_mem = DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST
    pods = [placed("large1", "node1", 3 * d_cpu, 3 * d_mem), placed("none1", "node1"),
            placed("large2", "node2", 3 * d_cpu, 3 * d_mem), placed("small2", "node2", d_cpu, d_mem)]
    return [_res_node("node1"), _res_node("node2")], pods


@pytest.mark.parametrize("req,want", [
    (None, 50),       # a zero-request pod counts as 100m / 200Mi: (1000-500)/1000 -> 50
    ((1, 1), 50),     # the same as a pod requesting 100m / 200Mi
    ((3, 3), 30),     # a larger pod does not get the same score: (1000-700)/1000 -> 30
])
def test_zero_request(req, want):
    """TestZeroRequest, without the SelectorSpread plugin it used (gone in v1.34): with
    NodeResourcesFit (LeastAllocated) a zero-request pod, on the node or being scheduled, counts
    with the default requests; both nodes hold 400m / 800Mi of non-zero requests."""
    nodes, pods = _zero_request_cluster()
    s = new_scheduler(nodes, pods, {"preScore": ["NodeResourcesFit"], "score": ["NodeResourcesFit"]})
    requests = {} if req is None else {"cpu": f"{req[0] * DEFAULT_MILLI_CPU_REQUEST}m",
                                       "memory": str(req[1] * DEFAULT_MEMORY_REQUEST)}
    pod = make_pod("p", uid="p", requests=requests)
    state = CycleState()
    fw_of(s).run_pre_score_plugins(state, pod, s.snapshot.list())
    scores = s.cycles.prioritize_nodes(fw_of(s), state, pod, s.snapshot.list())
    assert [ns.total_score for ns in scores] == [want, want]


# ------------------------------------------------------------------------------------------------
# Test_SelectHost
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scores,possible", [
    ([("node1", 1), ("node2", 2)], {"node2"}),                                  # unique scores
    ([("node2.1", 2), ("node2.2", 2), ("node2.3", 2)], {"node2.1", "node2.2", "node2.3"}),
    ([("node3.1", 3), ("node2.1", 2), ("node1.1", 1), ("node3.2", 3)], {"node3.1", "node3.2"}),
])
def test_select_host(scores, possible):
    import random
    rng = random.Random(7)
    lst = [NodePluginScores(n, [], t) for n, t in scores]
    picks = {select_host(lst, rng) for _ in range(200)}
    assert picks == possible  # only top-scored nodes, and (over 200 draws) every one of them


def test_select_host_empty_priority_list():
    import random
    with pytest.raises(RuntimeError, match="empty priorityList"):
        select_host([], random.Random(0))


# ------------------------------------------------------------------------------------------------
# TestSchedulerScheduleOne, TestScheduleOneMarksPodAsProcessedBeforePreBind
# ------------------------------------------------------------------------------------------------

def _one_node_scheduler(points, extra=(), pod=None, monkeypatch=None, features=None):
    pod = pod or make_pod("foo", uid="foo")
    s = new_scheduler([make_node("node1")], [pod], points, extra=extra, features=features)
    return s, pod


def _queue_of(s: Scheduler, uid: str) -> Optional[str]:
    return s.queue.in_queue.get(uid)


def _condition(s: Scheduler, name: str = "foo"):
    p = s.cluster.get("Pod", "default", name)
    for c in (p.status.get("conditions") or []):
        if c.get("type") == "PodScheduled":
            return c.get("reason"), c.get("message")
    return None


def _watch_failures(s: Scheduler):
    """Wrap FailureHandler: record (status message, nominating info, pod in flight?)."""
    seen = []
    orig = s.cycles.handle_scheduling_failure

    def handler(fw, pinfo, status, nominating_info, record):
        seen.append((status.message(), nominating_info, pinfo.pod.uid in s.queue.in_flight,
                     pinfo.pod.node_name))
        return orig(fw, pinfo, status, nominating_info, record)
    s.cycles.handle_scheduling_failure = handler
    return seen


OVERRIDE_CLEAR = ("ModeOverride", "")


def test_schedule_one_schedule_pod_failed():
    """"schedule pod failed": an error from SchedulePod; the pod goes to backoffQ, its
    nomination is cleared (ModeOverride "")."""
    s, pod = _one_node_scheduler({"filter": ["TrueFilter"]})
    failures = _watch_failures(s)

    def boom(*a, **k):
        raise _CycleError(Status.error(RuntimeError("scheduler")))
    s.cycles.schedule_pod = boom
    s.cycles.schedule_one()
    assert failures == [("scheduler", OVERRIDE_CLEAR, True, "")]
    assert _queue_of(s, "foo") == "backoff"
    assert _condition(s) == ("SchedulerError", "scheduler")
    assert not s.cache.assumed_pods
    assert not s.queue.in_flight


@pytest.mark.parametrize("status,message,reason,queue", [
    (Status.error(RuntimeError("reserve error")), 'running Reserve plugin "FakeReserve": reserve error',
     "SchedulerError", "backoff"),
    (Status(Code.UnschedulableAndUnresolvable, "rejected on reserve"),
     "0/1 nodes are available: 1 rejected on reserve.", "Unschedulable", "backoff"),
])
def test_schedule_one_reserve_failed(status, message, reason, queue):
    """"reserve failed with status code error / rejected": unreserve, forget the assumed pod; an
    Error goes to backoffQ, a rejection to the unschedulable pool with a one-node FitError. (The
    upstream unit test stops there; in a running kube-scheduler the PodScheduled=False patch
    comes back as an UnscheduledPod/Update event, and FakeReserve, which registers no events,
    is requeued on every Pod event: the rejected pod moves on to backoffQ.)"""
    reserve = fk.fake_reserve(status)
    s, pod = _one_node_scheduler({"reserve": ["FakeReserve"]}, extra=[reserve])
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    # the failure handler gets the assumed pod (nodeName set), as upstream's expectErrorPod
    assert failures == [(message, OVERRIDE_CLEAR, True, "node1")]
    assert reserve.unreserved == [("foo", "node1")]
    assert not s.cache.assumed_pods and not s.cache.is_assumed_pod(pod)
    assert _queue_of(s, "foo") == queue
    assert _condition(s) == (reason, message)
    assert s.cluster.get("Pod", "default", "foo").node_name == ""
    if queue == "unschedulable":
        assert s.queue.unschedulable["foo"].unschedulable_plugins == {"FakeReserve"}


@pytest.mark.parametrize("status,message,reason,queue", [
    (Status.error(RuntimeError("permit error")), 'running Permit plugin "FakePermit": permit error',
     "SchedulerError", "backoff"),
    # the rejected pod moves on to backoffQ when its PodScheduled=False patch comes back as an
    # UnscheduledPod/Update event (FakePermit registers no events, so every Pod event requeues)
    (Status(Code.Unschedulable, "rejected on permit"),
     "0/1 nodes are available: 1 rejected on permit.", "Unschedulable", "backoff"),
])
def test_schedule_one_permit_failed(status, message, reason, queue):
    permit = fk.fake_permit(status)
    reserve = fk.fake_reserve(None)
    s, pod = _one_node_scheduler({"reserve": ["FakeReserve"], "permit": ["FakePermit"]},
                                 extra=[permit, reserve])
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    assert failures == [(message, OVERRIDE_CLEAR, True, "node1")]
    assert reserve.unreserved == [("foo", "node1")]
    assert not s.cache.assumed_pods
    assert _queue_of(s, "foo") == queue
    assert _condition(s) == (reason, message)


def test_schedule_one_permit_wait_then_allowed():
    """"nominated node name is not set, permit plugin is working, but the feature gate
    NominatedNodeNameForExpectation is disabled" (its v1.34 default): the pod waits at Permit,
    stays in flight, and is bound once allowed; no nominatedNodeName is written."""
    permit = fk.fake_permit(Status(Code.Wait, "rejected on permit"), timeout=60.0)
    s, pod = _one_node_scheduler({"permit": ["FakePermit"]}, extra=[permit])
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    assert s.cache.is_assumed_pod(pod)
    assert "foo" in s.queue.in_flight  # WaitOnPermit runs with the pod in flight
    wp = fw_of(s).get_waiting_pod("foo")
    assert wp is not None
    wp.allow("FakePermit")
    s._resolve_waiting()
    bound = s.cluster.get("Pod", "default", "foo")
    assert bound.node_name == "node1"
    assert not bound.nominated_node_name
    assert failures == []
    assert not s.queue.in_flight


def test_schedule_one_permit_wait_then_rejected():
    """"pod rejected while wait on permit": a one-node FitError naming the rejecting plugin; the
    pod is unreserved, forgotten and parked as unschedulable."""
    permit = fk.fake_permit(Status(Code.Wait), timeout=60.0)
    reserve = fk.fake_reserve(None)
    s, pod = _one_node_scheduler({"reserve": ["FakeReserve"], "permit": ["FakePermit"]},
                                 extra=[permit, reserve])
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    fw_of(s).get_waiting_pod("foo").reject("FakePermit", "wait on permit")
    s._resolve_waiting()
    assert failures == [("0/1 nodes are available: 1 wait on permit.", OVERRIDE_CLEAR, True, "node1")]
    assert reserve.unreserved == [("foo", "node1")]
    assert not s.cache.assumed_pods
    # parked as unschedulable, then moved on to backoffQ by the UnscheduledPod/Update event of
    # its own PodScheduled=False patch (FakePermit registers no events)
    assert _queue_of(s, "foo") == "backoff"
    assert [pi.unschedulable_plugins for pi in s.queue.pending_pods() if pi.pod.uid == "foo"] == [{"FakePermit"}]


def test_schedule_one_prebind_failed():
    """"prebind failed with status code error": unreserve + forget, backoffQ; the pod is no
    longer in flight when the failure handler runs (Done is called before PreBind)."""
    prebind = fk.fake_pre_bind(None, Status.error(RuntimeError("on PreBind")))
    reserve = fk.fake_reserve(None)
    s, pod = _one_node_scheduler({"reserve": ["FakeReserve"], "preBind": ["FakePreBind"]},
                                 extra=[prebind, reserve])
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    msg = 'running PreBind plugin "FakePreBind": on PreBind'
    assert failures == [(msg, OVERRIDE_CLEAR, False, "node1")]
    assert reserve.unreserved == [("foo", "node1")]
    assert not s.cache.assumed_pods
    assert _queue_of(s, "foo") == "backoff"
    assert _condition(s) == ("SchedulerError", msg)


def test_schedule_one_prebind_rejected():
    """"error prebind pod" with an Unschedulable status: still a binding-cycle failure, so the
    status is passed on as it is (no FitError), reason Unschedulable."""
    prebind = fk.fake_pre_bind(None, Status(Code.Unschedulable, "on PreBind"))
    s, pod = _one_node_scheduler({"preBind": ["FakePreBind"]}, extra=[prebind])
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    assert failures == [("on PreBind", OVERRIDE_CLEAR, False, "node1")]
    assert _condition(s) == ("Unschedulable", "on PreBind")
    assert not s.cache.assumed_pods


def test_prebind_runs_although_pre_flight_says_skip_with_the_feature_gate_off():
    """PreBindPreFlight only runs when NominatedNodeNameForExpectation is on (alpha, off in
    v1.34): with it off, a PreBind plugin runs even if its PreBindPreFlight would return Skip
    (upstream's "prebind isn't called ... if preflight returns skip" needs the gate on)."""
    prebind = fk.fake_pre_bind(Status(Code.Skip), Status(Code.Error, "rejected on prebind"))
    s, pod = _one_node_scheduler({"preBind": ["FakePreBind"]}, extra=[prebind])
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    assert prebind.pre_flight_calls == 0 and prebind.pre_bind_calls == 1
    assert failures == [('running PreBind plugin "FakePreBind": rejected on prebind',
                         OVERRIDE_CLEAR, False, "node1")]


def test_pre_flight_error_is_not_seen_with_the_feature_gate_off():
    """"prebindpreflight failed with status code error" needs the gate on; off (v1.34's default)
    the pod is bound."""
    prebind = fk.fake_pre_bind(Status.error(RuntimeError("on PreBindPreFlight")), None)
    s, pod = _one_node_scheduler({"preBind": ["FakePreBind"]}, extra=[prebind])
    s.cycles.schedule_one()
    assert prebind.pre_flight_calls == 0 and prebind.pre_bind_calls == 1
    assert s.cluster.get("Pod", "default", "foo").node_name == "node1"


def test_schedule_one_binding_failed():
    """"binding failed": 'running Bind plugin "<name>": binder', unreserve + forget, backoffQ."""
    binder = fk.fake_binder(Status.error(RuntimeError("binder")))
    reserve = fk.fake_reserve(None)
    s, pod = _one_node_scheduler({"reserve": ["FakeReserve"], "bind": ["FakeBinder"]},
                                 extra=[binder, reserve])
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    msg = 'running Bind plugin "FakeBinder": binder'
    assert failures == [(msg, OVERRIDE_CLEAR, False, "node1")]
    assert reserve.unreserved == [("foo", "node1")]
    assert not s.cache.assumed_pods
    assert _queue_of(s, "foo") == "backoff"
    assert s.cluster.get("Pod", "default", "foo").node_name == ""


def test_schedule_one_every_binder_skips():
    """RunBindPlugins returns the last Skip when every Bind plugin skips: the binding cycle fails
    (unreserve, forget, backoffQ), but a Skip carries no error, so handleSchedulingFailure returns
    before updatePod: no PodScheduled condition, the nominatedNodeName in the API untouched."""
    binder = fk.fake_binder(Status(Code.Skip))
    reserve = fk.fake_reserve(None)
    s, pod = _one_node_scheduler({"reserve": ["FakeReserve"], "bind": ["FakeBinder"]},
                                 extra=[binder, reserve], pod=_nominated("foo", "node1"))
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    assert failures == [("", OVERRIDE_CLEAR, False, "node1")]
    assert reserve.unreserved == [("foo", "node1")]
    assert not s.cache.assumed_pods
    assert _queue_of(s, "foo") == "backoff"
    assert _condition(s) is None
    assert s.cluster.get("Pod", "default", "foo").nominated_node_name == "node1"
    assert "foo" not in s.queue.nominator.pod_to_node  # ModeOverride "" in the nominator


def test_schedule_one_bind_assumed_pod_scheduled():
    reserve = fk.fake_reserve(None)
    s, pod = _one_node_scheduler({"reserve": ["FakeReserve"]}, extra=[reserve])
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    assert failures == [] and reserve.unreserved == []
    assert s.cluster.get("Pod", "default", "foo").node_name == "node1"
    assert not s.queue.in_flight
    assert _queue_of(s, "foo") is None


def test_schedule_one_deleting_pod():
    """"deleting pod": skipPodSchedule; no scheduling attempt, Done called."""
    raw = make_pod("foo", uid="foo").raw
    raw["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    pod = type(make_pod())(raw)
    s, _ = _one_node_scheduler({"filter": ["TrueFilter"]}, pod=pod)
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    assert failures == []
    assert not s.records.get("default/foo")
    assert not s.queue.in_flight and _queue_of(s, "foo") is None
    assert s.cluster.get("Pod", "default", "foo").node_name == ""


def test_schedule_one_clears_existing_nomination_on_scheduling_error():
    """"pod with existing nominated node name on scheduling error clears nomination"."""
    raw = make_pod("foo", uid="foo").raw
    raw["status"] = {"nominatedNodeName": "existing-node"}
    pod = type(make_pod())(raw)
    fake = fk.fake_filter({"node1": Code.Error})
    s, _ = _one_node_scheduler({"filter": ["FakeFilter"]}, extra=[fake], pod=pod)
    assert s.queue.nominator.pod_to_node.get("foo") == "existing-node"
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    assert failures == [('running "FakeFilter" filter plugin: injecting failure for pod foo',
                         OVERRIDE_CLEAR, True, "")]
    assert s.cluster.get("Pod", "default", "foo").nominated_node_name == ""
    assert "foo" not in s.queue.nominator.pod_to_node
    assert _queue_of(s, "foo") == "backoff"


def test_fit_error_without_post_filter_keeps_the_nomination():
    """schedulingCycle: a FitError with no PostFilter plugin returns ScheduleResult{} (no
    nominating info), so an existing nominatedNodeName is kept."""
    raw = make_pod("foo", uid="foo").raw
    raw["status"] = {"nominatedNodeName": "node1"}
    pod = type(make_pod())(raw)
    s, _ = _one_node_scheduler({"filter": ["FalseFilter"]}, pod=pod)
    failures = _watch_failures(s)
    s.cycles.schedule_one()
    assert failures == [("0/1 nodes are available: 1 Nodes failed the fake plugin.", None, True, "")]
    assert s.cluster.get("Pod", "default", "foo").nominated_node_name == "node1"
    assert s.queue.nominator.pod_to_node.get("foo") == "node1"
    # FalseFilter registers no events: its own status patch's Pod/Update event requeues it
    assert _queue_of(s, "foo") == "backoff"


# ------------------------------------------------------------------------------------------------
# TestSchedulerMultipleProfilesScheduling, TestSchedulerNoPhantomPodAfterDelete,
# TestSchedulerFailedSchedulingReasons
# ------------------------------------------------------------------------------------------------

def test_scheduler_multiple_profiles_scheduling():
    def prof(name, node):
        return profile({"filter": ["FakeNodeSelector"]}, name=name,
                       plugin_config=[{"name": "FakeNodeSelector", "args": {"nodeName": node}}])
    pods = [make_pod("pod1", uid="pod1", spec={"schedulerName": "match-node3"}),
            make_pod("pod2", uid="pod2", spec={"schedulerName": "match-node2"}),
            make_pod("pod3", uid="pod3", spec={"schedulerName": "match-node2"}),
            make_pod("pod4", uid="pod4", spec={"schedulerName": "match-node3"})]
    s = new_scheduler(nodes_named("node1", "node2", "node3"), pods,
                      profiles=[prof("match-node2", "node2"), prof("match-node3", "node3")])
    s.run_until_quiet()
    got = {p.name: p.node_name for p in s.cluster.list("Pod")}
    assert got == {"pod1": "node3", "pod2": "node2", "pod3": "node2", "pod4": "node3"}


def _port_pod(name: str, port: int = 8080):
    return make_pod(name, uid=name, spec={"containers": [
        {"name": "ctr", "image": "x", "ports": [{"containerPort": port, "hostPort": port}]}]})


def test_scheduler_no_phantom_pod_after_delete():
    """A pod whose host port is taken by a pod on the only node fails with NodePorts' reason; once
    that pod is deleted it schedules there."""
    s = new_scheduler([make_node("node1")], [_port_pod("foo")],
                      {"preFilter": ["NodePorts"], "filter": ["NodePorts"]})
    s.compact_records = False  # the records keep every node's status (read below)
    s.run_until_quiet()
    assert s.cluster.get("Pod", "default", "foo").node_name == "node1"
    s.cluster.create(_port_pod("bar"))
    failures = _watch_failures(s)
    s.run_until_quiet()
    assert failures[0][0] == "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."
    rec = s.records["default/bar"][-1]
    assert {n: st(x) for n, x in rec.node_statuses.items()} == {
        "node1": unsched("node(s) didn't have free ports for the requested pod ports", plugin="NodePorts")}
    assert s.cluster.get("Pod", "default", "bar").node_name == ""
    s.cluster.delete(s.cluster.get("Pod", "default", "foo"))
    s.run_until_quiet()
    assert s.cluster.get("Pod", "default", "bar").node_name == "node1"


def test_scheduler_failed_scheduling_reasons():
    """100 nodes too small for the pod: one FitError whose message stays short."""
    nodes = [make_node(f"node{i}", allocatable={"cpu": "2", "memory": "100", "pods": "10"})
             for i in range(100)]
    pod = make_pod("bar", uid="bar", requests={"cpu": "4", "memory": "500"})
    s = new_scheduler(nodes, [], {"preFilter": ["NodeResourcesFit"], "filter": ["NodeResourcesFit"]})
    _, err = schedule_pod(s, pod)
    assert isinstance(err, FitError)
    d = diagnosis_of(err)
    assert d["num_all_nodes"] == 100
    assert d["node_to_status"] == {f"node{i}": unresolvable("Insufficient cpu", "Insufficient memory",
                                                            plugin="NodeResourcesFit")
                                   for i in range(100)}
    assert d["unschedulable_plugins"] == ["NodeResourcesFit"]
    assert str(err) == "0/100 nodes are available: 100 Insufficient cpu, 100 Insufficient memory."
    assert len(str(err)) <= 150


# ------------------------------------------------------------------------------------------------
# Per version: NominatedNodeNameForExpectation's binding-cycle step (TestSchedulerScheduleOne of
# v1.35), clearNominatedNode on every failure (v1.35), the recreated pod (v1.34.9)
# ------------------------------------------------------------------------------------------------

def _nnn_writes(s: Scheduler, name: str = "foo") -> List[str]:
    """The pod's status.nominatedNodeName after each API write that changed it (the upstream
    tests read the fake client's patches; the harness's API server clears the field when it
    binds, from v1.35 on)."""
    seen: List[str] = []

    def listener(kind, old, new):
        if kind == "Pod" and new is not None and new.name == name and old is not None \
                and (old.nominated_node_name or "") != (new.nominated_node_name or ""):
            seen.append(new.nominated_node_name or "")
    s.cluster.subscribe(listener)
    return seen


@pytest.mark.parametrize("features,want_nnn", [(V134, []), (V135, ["node1", ""]), (V136, ["node1", ""])],
                         ids=["v1.34", "v1.35", "v1.36"])
def test_permit_wait_sets_the_nominated_node_before_waiting(features, want_nnn):
    """"nominated node name is set, permit plugin is working in wait on permit phase" (gate on,
    v1.35's default) against "... but the feature gate NominatedNodeNameForExpectation is
    disabled" (v1.34): with the gate the pod's nominatedNodeName is patched to the node when
    the binding cycle starts, before WaitOnPermit; the binding clears it again (the API
    server's ClearingNominatedNodeNameAfterBinding, on from v1.35)."""
    permit = fk.fake_permit(Status(Code.Wait, "rejected on permit"), timeout=60.0)
    s, pod = _one_node_scheduler({"permit": ["FakePermit"]}, extra=[permit], features=features)
    writes = _nnn_writes(s)
    s.cycles.schedule_one()
    got = s.cluster.get("Pod", "default", "foo").nominated_node_name or ""
    assert got == ("node1" if want_nnn else "")  # while it waits
    fw_of(s).get_waiting_pod("foo").allow("FakePermit")
    s._resolve_waiting()
    assert s.cluster.get("Pod", "default", "foo").node_name == "node1"
    assert writes == want_nnn


@pytest.mark.parametrize("features", [V135, V136], ids=["v1.35", "v1.36"])
@pytest.mark.parametrize("pre_flight,message", [
    (Status.error(RuntimeError("on PreBindPreFlight")), 'running PreBindPreFlight "FakePreBind": on PreBindPreFlight'),
    (Status(Code.Unschedulable, "rejected on prebindpreflight"),
     'PreBindPreFlight FakePreBind returned "Unschedulable", which is unsupported. It is supposed to return '
     'Success, Skip, or Error status'),
], ids=["error", "unschedulable"])
def test_pre_flight_failure_fails_the_binding_cycle(features, pre_flight, message):
    """"prebindpreflight failed with status code error / unschedulable" (gate on): unreserve,
    forget, backoffQ, no nominatedNodeName written; PreBind never runs."""
    prebind = fk.fake_pre_bind(pre_flight, None)
    reserve = fk.fake_reserve(None)
    s, pod = _one_node_scheduler({"reserve": ["FakeReserve"], "preBind": ["FakePreBind"]},
                                 extra=[prebind, reserve], features=features)
    failures = _watch_failures(s)
    writes = _nnn_writes(s)
    s.cycles.schedule_one()
    assert failures == [(message, OVERRIDE_CLEAR, True, "node1")]
    assert prebind.pre_bind_calls == 0
    assert reserve.unreserved == [("foo", "node1")]
    assert not s.cache.assumed_pods
    assert _queue_of(s, "foo") == "backoff"
    assert writes == []


@pytest.mark.parametrize("features", [V135, V136], ids=["v1.35", "v1.36"])
def test_pre_flight_skip_skips_pre_bind_and_sets_no_nomination(features):
    """"prebind isn't called and nominated node name isn't set, if preflight returns skip"."""
    prebind = fk.fake_pre_bind(Status(Code.Skip), Status(Code.Error, "rejected on prebind"))
    s, pod = _one_node_scheduler({"preBind": ["FakePreBind"]}, extra=[prebind], features=features)
    writes = _nnn_writes(s)
    s.cycles.schedule_one()
    assert prebind.pre_flight_calls == 1 and prebind.pre_bind_calls == 0
    assert s.cluster.get("Pod", "default", "foo").node_name == "node1"
    assert writes == []


@pytest.mark.parametrize("features,want", [(V134, []), (V135, ["node1", ""]), (V136, ["node1", ""])],
                         ids=["v1.34", "v1.35", "v1.36"])
def test_pre_flight_success_sets_the_nomination_before_pre_bind(features, want):
    """"prebind is called and nominated node name is set, if preflight returns success"; v1.34
    (gate off) neither calls PreBindPreFlight nor patches."""
    prebind = fk.fake_pre_bind(None, None)
    s, pod = _one_node_scheduler({"preBind": ["FakePreBind"]}, extra=[prebind], features=features)
    writes = _nnn_writes(s)
    s.cycles.schedule_one()
    assert prebind.pre_flight_calls == (0 if features is V134 else 1)
    assert prebind.pre_bind_calls == 1
    assert s.cluster.get("Pod", "default", "foo").node_name == "node1"
    assert writes == want


def test_pre_bind_failure_leaves_the_binding_cycles_nomination():
    """"prebind failed with status code error" (gate on): the nomination was written before
    PreBind (expectNominatedNodeName). The failure passes clearNominatedNode, but updatePod
    judges what changed on the pod the attempt popped, whose nominatedNodeName was empty: the
    patch carries the PodScheduled condition only, and the nomination stays in the API (and,
    through the informer's update, in the nominator)."""
    prebind = fk.fake_pre_bind(None, Status.error(RuntimeError("on PreBind")))
    s, pod = _one_node_scheduler({"preBind": ["FakePreBind"]}, extra=[prebind], features=V135)
    failures = _watch_failures(s)
    writes = _nnn_writes(s)
    s.cycles.schedule_one()
    assert failures == [('running PreBind plugin "FakePreBind": on PreBind', OVERRIDE_CLEAR, False, "node1")]
    assert writes == ["node1"]
    assert s.cluster.get("Pod", "default", "foo").nominated_node_name == "node1"
    assert _condition(s) == ("SchedulerError", 'running PreBind plugin "FakePreBind": on PreBind')
    assert _queue_of(s, "foo") == "backoff"


def test_v134_with_the_gate_on_keeps_the_nomination_on_failures():
    """v1.34's newFailureNominatingInfo: with NominatedNodeNameForExpectation turned on (alpha)
    a failure passes no nominating info, so an existing nomination stays; v1.35 dropped it."""
    raw = make_pod("foo", uid="foo").raw
    raw["status"] = {"nominatedNodeName": "existing-node"}
    pod = type(make_pod())(raw)
    gate_on = resolve("v1.34", {"NominatedNodeNameForExpectation": True})
    for features, want in ((gate_on, "existing-node"), (V135, "")):
        fake = fk.fake_filter({"node1": Code.Error})
        s, _ = _one_node_scheduler({"filter": ["FakeFilter"]}, extra=[fake], pod=pod, features=features)
        s.cycles.schedule_one()
        assert (s.cluster.get("Pod", "default", "foo").nominated_node_name or "") == want, features


@pytest.mark.parametrize("features,want", [(V134, "node1"), (V135, ""), (V136, "")],
                         ids=["v1.34", "v1.35", "v1.36"])
def test_fit_error_without_post_filter_per_version(features, want):
    """schedulingCycle without PostFilter plugins: v1.34 returns ScheduleResult{} (the
    nomination kept), v1.35 clearNominatedNode."""
    raw = make_pod("foo", uid="foo").raw
    raw["status"] = {"nominatedNodeName": "node1"}
    pod = type(make_pod())(raw)
    s, _ = _one_node_scheduler({"filter": ["FalseFilter"]}, pod=pod, features=features)
    s.cycles.schedule_one()
    assert (s.cluster.get("Pod", "default", "foo").nominated_node_name or "") == want
    assert s.queue.nominator.pod_to_node.get("foo", "") == want


def test_failure_of_a_recreated_pod_is_not_requeued():
    """handleSchedulingFailure (v1.34.9 on): when the pod in the informer cache has another UID
    (deleted and created again during the cycle), the old attempt neither requeues nor patches
    anything: the new pod has its own place in the queue."""
    s, pod = _one_node_scheduler({"filter": ["FalseFilter"]})
    orig = s.cycles.schedule_pod

    def recreate_then_fail(fw, state, p, record):
        s.cluster.delete(s.cluster.get("Pod", "default", "foo"))
        s.cluster.create(make_pod("foo", uid="foo-2"))
        return orig(fw, state, p, record)
    s.cycles.schedule_pod = recreate_then_fail
    s.cycles.schedule_one()
    new = s.cluster.get("Pod", "default", "foo")
    assert new.uid == "foo-2" and _condition(s) is None
    assert _queue_of(s, "foo") is None and _queue_of(s, "foo-2") == "active"
    assert not s.queue.in_flight


def test_pre_filter_result_nodes_keep_the_snapshot_order_looked_up_or_scanned():
    """_pre_filter_nodes: a few names are looked up, many scanned; both give the snapshot's
    order and leave out names of no node."""
    from harness.scheduler.schedule_one import _pre_filter_nodes

    s = new_scheduler(nodes_named(*[f"n{i}" for i in range(20)]))
    all_nodes = s.snapshot.list()
    order = [ni.node.name for ni in all_nodes]
    for names in ({"n7", "n3", "ghost"}, {f"n{i}" for i in range(0, 20, 2)} | {"ghost"}, set()):
        got = [ni.node.name for ni in _pre_filter_nodes(s.snapshot, all_nodes, names)]
        assert got == [n for n in order if n in names]
