"""InPlacePodLevelResourcesVerticalScaling (alpha off in v1.35, beta on in v1.36): the pod-level
requests of a resized pod as component-helpers' PodRequests counts them with
InPlacePodLevelResourcesVerticalScalingEnabled and UseStatusResources, read by
PodInfo.CalculateResource, extractPodScaleDown, NodeResourcesFit's scale-down hint and the
resource allocation scorer; and the API server's dropDisabledPodStatusFields."""

from types import SimpleNamespace

import pytest

from builtin_plugins.noderesources.balanced_allocation import BalancedAllocation
from builtin_plugins.noderesources.fit import Fit
from harness.api.objects import Pod
from harness.case.apiserver import ApiServerDefaults
from harness.framework.types import ActionType, ClusterEvent, EventResource, QueueingHint, calculate_resource
from harness.scheduler.events import pod_scheduling_properties_change
from harness.versions import resolve

CPU500, CPU700, MEM500, MEM800 = "500m", "700m", "500M", "800M"


def resize_pod(*, pod_level=None, pod_status=None, allocated=None, requests=None, status=None,
               conditions=(), uid="testpod", node="node-a"):
    """preparePodInfo of TestCalculatePodResourcesWithResize: pod-level requests and their
    status, one container c1 with its requests and status, resize conditions."""
    spec = {"nodeName": node, "containers": []}
    st = {"phase": "Running", "containerStatuses": []}
    if pod_level is not None:
        spec["resources"] = {"requests": dict(pod_level)}
    if pod_status is not None:
        st["resources"] = {"requests": dict(pod_status)}
    if allocated is not None:
        st["allocatedResources"] = dict(allocated)
    if requests is not None:
        spec["containers"].append({"name": "c1", "resources": {"requests": dict(requests)}})
    if status is not None:
        st["containerStatuses"].append({"name": "c1", "resources": {"requests": dict(status)}})
    if conditions:
        st["conditions"] = [dict(c) for c in conditions]
    return Pod({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "testpod", "namespace": "pod_resize_test", "uid": uid},
                "spec": spec, "status": st})


IN_PROGRESS = {"type": "PodResizeInProgress", "status": "True"}
DEFERRED = {"type": "PodResizePending", "status": "True", "reason": "Deferred"}
INFEASIBLE = {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}

# (name, pod, (milli cpu, memory) with the gate on, the same with the gate off)
CALCULATE = [
    # TestCalculatePodResourcesWithResize (types_test.go, v1.36), its pod-level cases
    ("Pod with pod-level resources no pending resize",
     resize_pod(pod_level={"cpu": CPU700, "memory": MEM500}, requests={"cpu": CPU500, "memory": MEM500},
                pod_status={"cpu": CPU500, "memory": MEM500}, status={"cpu": CPU700, "memory": MEM500}),
     (700, 500_000_000), (700, 500_000_000)),
    ("Pod with pod-level resources and resize in progress",
     resize_pod(pod_level={"cpu": CPU700, "memory": MEM500}, requests={"cpu": CPU500, "memory": MEM500},
                pod_status={"cpu": CPU500, "memory": MEM500}, status={"cpu": CPU700, "memory": MEM500},
                conditions=[IN_PROGRESS]),
     (700, 500_000_000), (700, 500_000_000)),
    ("Pod with pod-level resources and with deferred resize",
     resize_pod(pod_level={"cpu": CPU700, "memory": MEM800}, requests={"cpu": CPU500, "memory": MEM500},
                pod_status={"cpu": CPU500, "memory": MEM500}, status={"cpu": CPU500, "memory": MEM500},
                conditions=[DEFERRED]),
     (700, 800_000_000), (700, 800_000_000)),
    # where the gate shows: the status above the spec (a resize down not actuated yet)
    ("resize down in progress: max(spec, actuated, allocated)",
     resize_pod(pod_level={"cpu": CPU500, "memory": MEM500}, pod_status={"cpu": CPU700, "memory": MEM500},
                allocated={"cpu": CPU500, "memory": MEM800}, requests={}, conditions=[IN_PROGRESS]),
     (700, 800_000_000), (500, 500_000_000)),
    ("infeasible resize: max(actuated, allocated), the spec ignored",
     resize_pod(pod_level={"cpu": CPU700, "memory": MEM800}, pod_status={"cpu": CPU500, "memory": MEM500},
                requests={}, conditions=[INFEASIBLE]),
     (500, 500_000_000), (700, 800_000_000)),
    ("infeasible resize, a resource neither actuated nor allocated counts 0",
     resize_pod(pod_level={"cpu": CPU700, "memory": MEM800}, pod_status={"cpu": CPU500},
                requests={}, conditions=[INFEASIBLE]),
     (500, 0), (700, 800_000_000)),
    ("no status.resources: allocatedResources alone is not read",
     resize_pod(pod_level={"cpu": CPU500}, allocated={"cpu": CPU700}, requests={}),
     (500, 0), (500, 0)),
]


@pytest.mark.parametrize("name,pod,on,off", CALCULATE, ids=[c[0] for c in CALCULATE])
def test_calculate_resource_with_pod_level_resize(name, pod, on, off):
    for gate, want in ((True, on), (False, off)):
        pr = calculate_resource(pod, gate)
        assert (pr.resource.milli_cpu, pr.resource.memory) == want, (name, gate)
        # PodInfo.CalculateResource's non-zero requests read the same pod-level values
        assert pr.non0_cpu == want[0], (name, gate)


def test_pod_scale_down_event_reads_pod_level_status_with_the_gate():
    """extractPodScaleDown: the resize actuated (status 700m -> 500m, spec 500m all along) is a
    scale-down only where the pod-level status counts (v1.36); in v1.35 both read 500m."""
    old = resize_pod(pod_level={"cpu": CPU500}, pod_status={"cpu": CPU700}, requests={})
    new = resize_pod(pod_level={"cpu": CPU500}, pod_status={"cpu": CPU500}, requests={})
    assert pod_scheduling_properties_change(new, old, resolve("v1.36")) == [
        ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodScaleDown)]
    assert pod_scheduling_properties_change(new, old, resolve("v1.35")) == [
        ClusterEvent(EventResource.AssignedPod, ActionType.Update)]
    on35 = resolve("v1.35", {"InPlacePodLevelResourcesVerticalScaling": True, "NodeDeclaredFeatures": True})
    assert pod_scheduling_properties_change(new, old, on35)[0].action_type == ActionType.UpdatePodScaleDown


@pytest.mark.parametrize("version,want", [("v1.36", QueueingHint.Queue), ("v1.35", QueueingHint.QueueSkip),
                                          ("v1.34", QueueingHint.QueueSkip)])
def test_fit_scale_down_hint_reads_pod_level_status_with_the_gate(version, want):
    """isSchedulableAfterPodScaleDown with the Fit's InPlacePodLevelResourcesVerticalScaling."""
    fit = Fit(None, SimpleNamespace(feature_gates=resolve(version)))
    target = Pod({"metadata": {"name": "t", "uid": "t"},
                  "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})
    old = resize_pod(pod_level={"cpu": "1"}, pod_status={"cpu": "3"}, requests={}, uid="other")
    new = resize_pod(pod_level={"cpu": "1"}, pod_status={"cpu": "1"}, requests={}, uid="other")
    assert fit.is_schedulable_after_pod_event(target, old, new) == want


@pytest.mark.parametrize("version,want", [("v1.36", [700, 104857600]), ("v1.35", [500, 104857600])])
def test_balanced_allocation_reads_pod_level_status_with_the_gate(version, want):
    """resourceAllocationScorer.calculatePodResourceRequest with the gate from the handle."""
    ba = BalancedAllocation(None, SimpleNamespace(feature_gates=resolve(version)))
    pod = resize_pod(pod_level={"cpu": CPU500, "memory": "100Mi"}, pod_status={"cpu": CPU700}, requests={})
    assert ba.scorer.calculate_pod_resource_request_list(pod) == want


@pytest.mark.parametrize("version,gates,kept", [
    ("v1.36", {}, True),
    ("v1.36", {"InPlacePodLevelResourcesVerticalScaling": False}, False),
    ("v1.35", {}, False),
])
def test_api_server_drops_pod_level_status_resources_with_the_gate_off(version, gates, kept):
    """dropDisabledPodStatusFields: status.resources and status.allocatedResources stay only
    with the gate on, or when the stored status already has one."""
    api = ApiServerDefaults([], "case.yaml", features=resolve(version, gates))

    def pod():
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"resources": {"requests": {"cpu": "1"}}, "containers": [{"name": "c", "image": "i"}]},
                "status": {"resources": {"requests": {"cpu": "2"}}, "allocatedResources": {"cpu": "2"}}}

    created = api.default_object(pod(), "pods[0]", 0)
    assert ("resources" in created["status"]) == kept
    assert ("allocatedResources" in created["status"]) == kept
    # an update keeps them when the stored status has them (podLevelStatusResourcesInUse)
    updated = api.default_object(pod(), "steps[0].update[0]", 0, old=pod())
    assert "resources" in updated["status"] and "allocatedResources" in updated["status"]
