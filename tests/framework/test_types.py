"""NodeInfo aggregation and PodInfo.CalculateResource (framework/types.go)."""

from harness.framework.types import NodeInfo, calculate_resource
from harness.testing import make_pod


def test_non_zero_requests_default_for_missing_cpu_and_memory():
    pr = calculate_resource(make_pod(requests={}))
    assert (pr.resource.milli_cpu, pr.resource.memory) == (0, 0)
    assert (pr.non0_cpu, pr.non0_mem) == (100, 200 * 1024 * 1024)


def test_init_container_max_and_sidecar_sum():
    spec = {"initContainers": [
        {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
        {"name": "init", "resources": {"requests": {"cpu": "2"}}}]}
    pr = calculate_resource(make_pod(requests={"cpu": "1"}, spec=spec))
    # containers 1 + sidecar 0.5 = 1.5; init 2 + sidecar before it 0.5 = 2.5 -> max 2.5
    assert pr.resource.milli_cpu == 2500


def test_status_resources_count_when_resized():
    """InPlacePodVerticalScaling (on in v1.34): max(spec, status requests, allocated)."""
    pod = make_pod(requests={"cpu": "1"}, node_name="n")
    pod.raw["status"] = {"containerStatuses": [
        {"name": "c", "resources": {"requests": {"cpu": "2"}}, "allocatedResources": {"cpu": "1500m"}}]}
    from harness.api.objects import Pod
    assert calculate_resource(Pod(pod.raw)).resource.milli_cpu == 2000


def test_status_resources_infeasible_resize_ignores_spec():
    pod = make_pod(requests={"cpu": "3"}, node_name="n")
    pod.raw["status"] = {
        "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
        "containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    from harness.api.objects import Pod
    assert calculate_resource(Pod(pod.raw)).resource.milli_cpu == 1000


def test_node_info_add_remove_pod_round_trip():
    ni = NodeInfo()
    p = make_pod(requests={"cpu": "1", "memory": "1Gi", "example.com/gpu": "2"},
                 spec={"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}],
                                       "resources": {"requests": {"cpu": "1", "memory": "1Gi",
                                                                  "example.com/gpu": "2"}}}]})
    ni.add_pod(p)
    assert ni.requested.milli_cpu == 1000 and ni.requested.scalar_resources == {"example.com/gpu": 2}
    assert ni.used_ports.check_conflict("", "TCP", 8080)
    ni.remove_pod(p)
    assert ni.requested.milli_cpu == 0 and not ni.pods
    assert not ni.used_ports.check_conflict("", "TCP", 8080)
