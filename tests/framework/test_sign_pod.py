"""SignPod (OpportunisticBatching, v1.35 on): the shared signers (signers_test.go), each in-tree
plugin's SignPod (image_locality_test TestImageSignature, interpodaffinity TestPodAffinitySignature,
podtopologyspread TestPodTopoSignatures, noderesources TestFitSignPod /
TestBalancedAllocationSignPod) and what Framework.SignPod makes of them with the default
profile."""

from __future__ import annotations

import json

import pytest

from builtin_plugins.dynamicresources.plugin import DynamicResources
from builtin_plugins.image_locality import ImageLocality
from builtin_plugins.interpodaffinity import InterPodAffinity
from builtin_plugins.node_affinity import NodeAffinity
from builtin_plugins.node_name import NodeName
from builtin_plugins.node_ports import NodePorts
from builtin_plugins.noderesources import args as fitargs
from builtin_plugins.noderesources.balanced_allocation import BalancedAllocation
from builtin_plugins.noderesources.fit import Fit, compute_pod_resource_request
from builtin_plugins.podtopologyspread.plugin import PodTopologySpread
from builtin_plugins.taint_toleration import TaintToleration
from harness.cluster import Cluster
from harness.config import loader as config_loader
from harness.framework import signers
from harness.framework.registry import default_registry
from harness.scheduler.scheduler import Scheduler
from harness.testing import FakeHandle, make_pod
from harness.versions import resolve


def pod_spec(**spec):
    return make_pod("p", spec=spec)


# ---- signers.go -------------------------------------------------------------------------------
@pytest.mark.parametrize("spec,want", [
    ({"containers": []}, []),
    ({"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}, []),
    ({"containers": [{"name": "c", "ports": [{"hostPort": 8080}]}]}, [8080]),
    ({"initContainers": [{"name": "i", "ports": [{"hostPort": 9090}]}],
      "containers": [{"name": "a", "ports": [{"hostPort": 80}]},
                     {"name": "b", "ports": [{"hostPort": 443}, {"hostPort": 80}]}]}, [80, 443, 9090]),
], ids=["no containers", "no host ports", "one host port", "unsorted, duplicates, init containers"])
def test_host_ports_signer(spec, want):
    assert signers.host_ports_signer(pod_spec(**spec)) == want


@pytest.mark.parametrize("tolerations,want", [
    ([], []),
    ([{"key": "key1", "value": "value1", "effect": "NoSchedule"}],
     [{"key": "key1", "value": "value1", "effect": "NoSchedule"}]),
    ([{"key": "b", "value": "2"}, {"key": "a", "value": "1"}, {"key": "b", "value": "1"}],
     [{"key": "a", "value": "1"}, {"key": "b", "value": "1"}, {"key": "b", "value": "2"}]),
], ids=["no tolerations", "single", "unsorted"])
def test_tolerations_signer(tolerations, want):
    assert signers.tolerations_signer(pod_spec(tolerations=tolerations)) == want


def test_volumes_signer():
    host_path = {"hostPath": {"path": "/tmp"}}
    empty_dir = {"emptyDir": {}}
    config_map = {"configMap": {"name": "cm"}}
    secret = {"secret": {"secretName": "secret"}}
    assert signers.volumes_signer(pod_spec()) == []
    assert signers.volumes_signer(pod_spec(volumes=[dict(name="v1", **config_map),
                                                    dict(name="v2", **secret)])) == []
    got = signers.volumes_signer(pod_spec(volumes=[dict(name="v1", **host_path), dict(name="v2", **config_map),
                                                   dict(name="v3", **empty_dir)]))
    assert got == ['{"emptyDir":{}}', '{"hostPath":{"path":"/tmp"}}']
    # the volume's name is not signed; a field Go omits when empty is the same as none
    assert signers.volumes_signer(pod_spec(volumes=[{"name": "x", "hostPath": {"path": "/tmp", "type": ""}}])) == \
        signers.volumes_signer(pod_spec(volumes=[{"name": "y", "hostPath": {"path": "/tmp"}}]))


def test_node_affinity_signer():
    assert signers.node_affinity_signer(pod_spec()) is None
    empty = pod_spec(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}})
    assert signers.node_affinity_signer(empty) == {"Required": [], "Preferred": []}

    def req(key, values):
        return {"key": key, "operator": "In", "values": values}

    unsorted = pod_spec(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [req("kk3", ["v3", "kv4"]), req("kk2", ["kv1", "v2"])],
             "matchFields": [req("kk1", ["kv3", "v4"])]},
            {"matchExpressions": [req("k2", ["v1", "v2"])], "matchFields": [req("k1", ["v3", "v4"])]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 3, "preference": {"matchExpressions": [req("ppk2", ["ppv1", "v2"])],
                                         "matchFields": [req("ppk1", ["ppv3", "v4"])]}},
            {"weight": 1, "preference": {"matchExpressions": [req("pk2", ["pv1", "v2"])],
                                         "matchFields": [req("pk1", ["pv3", "v4"])]}}]}})
    # the strings upstream's test expects, byte for byte
    assert signers.node_affinity_signer(unsorted) == {
        "Required": [
            '{"MatchExpressions":["{\\"key\\":\\"k2\\",\\"operator\\":\\"In\\",\\"values\\":[\\"v1\\",\\"v2\\"]}"],'
            '"MatchFields":["{\\"key\\":\\"k1\\",\\"operator\\":\\"In\\",\\"values\\":[\\"v3\\",\\"v4\\"]}"]}',
            '{"MatchExpressions":["{\\"key\\":\\"kk2\\",\\"operator\\":\\"In\\",\\"values\\":[\\"kv1\\",\\"v2\\"]}",'
            '"{\\"key\\":\\"kk3\\",\\"operator\\":\\"In\\",\\"values\\":[\\"kv4\\",\\"v3\\"]}"],'
            '"MatchFields":["{\\"key\\":\\"kk1\\",\\"operator\\":\\"In\\",\\"values\\":[\\"kv3\\",\\"v4\\"]}"]}',
        ],
        "Preferred": [
            '{"Weight":1,"Preference":{"MatchExpressions":["{\\"key\\":\\"pk2\\",\\"operator\\":\\"In\\",'
            '\\"values\\":[\\"pv1\\",\\"v2\\"]}"],"MatchFields":["{\\"key\\":\\"pk1\\",\\"operator\\":\\"In\\",'
            '\\"values\\":[\\"pv3\\",\\"v4\\"]}"]}}',
            '{"Weight":3,"Preference":{"MatchExpressions":["{\\"key\\":\\"ppk2\\",\\"operator\\":\\"In\\",'
            '\\"values\\":[\\"ppv1\\",\\"v2\\"]}"],"MatchFields":["{\\"key\\":\\"ppk1\\",\\"operator\\":\\"In\\",'
            '\\"values\\":[\\"ppv3\\",\\"v4\\"]}"]}}',
        ]}


# ---- the plugins' SignPod -------------------------------------------------------------------
@pytest.mark.parametrize("containers,want", [
    ([], []),
    ([{"name": "c", "image": "myimage"}], ["myimage:latest"]),
    ([{"name": "c", "image": "zmyimage"}, {"name": "c2", "image": "myimage"}], ["myimage:latest", "zmyimage:latest"]),
], ids=["no images", "one image", "two images unsorted"])
def test_image_locality_sign_pod(containers, want):
    frags, st = ImageLocality(None, FakeHandle()).sign_pod(pod_spec(containers=containers))
    assert st is None and frags == [(signers.IMAGE_NAMES_SIGNER_NAME, want)]


@pytest.mark.parametrize("args,spec,want", [
    ({}, {}, [(signers.LABELS_SIGNER_NAME, {"foo": "bar"})]),
    ({"ignorePreferredTermsOfExistingPods": True}, {}, None),
    ({}, {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}}}, "unsignable"),
    ({}, {"affinity": {"podAntiAffinity": {}}}, "unsignable"),
], ids=["no affinity, default settings", "no affinity, ignore setting set", "affinity set", "anti-affinity set"])
def test_inter_pod_affinity_sign_pod(args, spec, want):
    pl = InterPodAffinity(args, FakeHandle())
    frags, st = pl.sign_pod(make_pod("p", labels={"foo": "bar"}, spec=spec))
    if want == "unsignable":
        assert st is not None and st.is_rejected()
    else:
        assert (st is None or st.is_success()) and frags == want


@pytest.mark.parametrize("args,spec,signable", [
    ({"defaultingType": "System"}, {"topologySpreadConstraints": [{"topologyKey": "test", "maxSkew": 1,
                                                                    "whenUnsatisfiable": "DoNotSchedule"}]}, False),
    ({"defaultingType": "System"}, {}, False),
    ({"defaultingType": "List", "defaultConstraints": []}, {}, True),
    ({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]}, {}, False),
], ids=["pod w constraints", "pod no constraints but default", "pod no constraints no default",
        "default constraints listed"])
def test_pod_topology_spread_sign_pod(args, spec, signable):
    frags, st = PodTopologySpread(args, FakeHandle()).sign_pod(pod_spec(**spec))
    assert frags is None
    assert (st is None) == signable


@pytest.mark.parametrize("cls", [Fit, BalancedAllocation])
@pytest.mark.parametrize("pod", [
    make_pod("p", requests={"cpu": "1", "memory": "2Gi"}),
    make_pod("p"),
    make_pod("p", spec={"containers": [{"name": "c1", "resources": {"requests": {"cpu": "1"}}}],
                        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "3"}}}],
                        "overhead": {"cpu": "500m"}}),
    make_pod("p", requests={"cpu": "1", "example.com/gpu": "2"}),
], ids=["requests", "no requests", "init containers and overhead", "extended resource"])
def test_resources_sign_pod(cls, pod):
    """TestFitSignPod / TestBalancedAllocationSignPod: computePodResourceRequest, under one key
    (DRAExtendedResource is on in v1.36, but no DeviceClass backs an extended resource in the
    harness, so the pod is signed)."""
    pl = cls(fitargs.set_defaults_node_resources_fit_args({}) if cls is Fit else None, FakeHandle())
    frags, st = pl.sign_pod(pod)
    assert st is None
    assert frags == [(signers.RESOURCES_SIGNER_NAME, signers.resources_value(compute_pod_resource_request(pod)))]


def test_resources_value_is_the_max_of_init_containers_and_the_sum_of_containers():
    pod = make_pod("p", spec={"containers": [{"name": "c1", "resources": {"requests": {"cpu": "2", "memory": "1G"}}},
                                             {"name": "c2", "resources": {"requests": {"cpu": "1", "memory": "1G"}}}],
                              "initContainers": [{"name": "i1", "resources": {"requests": {"cpu": "2", "memory": "1G"}}},
                                                 {"name": "i2", "resources": {"requests": {"cpu": "2", "memory": "3G"}}}]})
    assert signers.resources_value(compute_pod_resource_request(pod))[:2] == [3000, 3 * 10 ** 9]


def test_the_other_plugins_sign_their_fields():
    pod = make_pod("p", spec={"nodeSelector": {"a": "b"}, "tolerations": [{"key": "k", "operator": "Exists"}],
                              "containers": [{"name": "c", "ports": [{"hostPort": 80}]}]})
    h = FakeHandle()
    assert NodeName(None, h).sign_pod(pod) == ([(signers.NODE_NAME_SIGNER_NAME, "")], None)
    assert NodePorts(None, h).sign_pod(pod) == ([(signers.HOST_PORTS_SIGNER_NAME, [80])], None)
    assert TaintToleration(None, h).sign_pod(pod) == (
        [(signers.TOLERATIONS_SIGNER_NAME, [{"key": "k", "operator": "Exists"}])], None)
    assert NodeAffinity(None, h).sign_pod(pod) == ([(signers.NODE_AFFINITY_SIGNER_NAME, None),
                                                   (signers.NODE_SELECTOR_SIGNER_NAME, {"a": "b"})], None)
    dra = DynamicResources(None, h)
    assert dra.sign_pod(pod) == (None, None)
    frags, st = dra.sign_pod(make_pod("q", spec={"resourceClaims": [{"name": "c", "resourceClaimName": "x"}]}))
    assert frags is None and st.is_rejected()


# ---- Framework.SignPod with the in-tree plugins ---------------------------------------------
def framework(version, pts_args=None):
    prof = {"schedulerName": "default-scheduler"}
    if pts_args is not None:
        prof["pluginConfig"] = [{"name": "PodTopologySpread", "args": pts_args}]
    features = resolve(version)
    reg = default_registry()
    cfg = config_loader.load_config_data({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                          "kind": "KubeSchedulerConfiguration", "profiles": [prof]},
                                         reg, features=features)
    return Scheduler(cfg, reg, Cluster(features), features=features).profiles["default-scheduler"]


@pytest.mark.parametrize("version", ["v1.35", "v1.36"])
def test_the_default_profile_signs_no_pod(version):
    """Every default plugin implements SignPod, so signatures are on; but PodTopologySpread's
    System defaulting gives it default constraints, and it signs no pod: the default profile
    never batches, in v1.35 as in v1.36."""
    fw = framework(version)
    assert fw.enable_signatures
    assert fw.sign_pod(make_pod("p", requests={"cpu": "1"})) is None


@pytest.mark.parametrize("version", ["v1.35", "v1.36"])
def test_without_default_constraints_equal_pods_share_a_signature(version):
    fw = framework(version, {"defaultingType": "List"})
    a = fw.sign_pod(make_pod("a", labels={"app": "x"}, requests={"cpu": "1"}))
    b = fw.sign_pod(make_pod("b", labels={"app": "x"}, requests={"cpu": "1"}))
    assert a is not None and a == b
    sig = json.loads(a)
    assert sig[signers.SCHEDULER_NAME_SIGNER_NAME] == "default-scheduler"
    assert sig[signers.LABELS_SIGNER_NAME] == {"app": "x"}
    # labels (InterPodAffinity), requests, tolerations, images each tell pods apart
    assert fw.sign_pod(make_pod("c", labels={"app": "y"}, requests={"cpu": "1"})) != a
    assert fw.sign_pod(make_pod("d", labels={"app": "x"}, requests={"cpu": "2"})) != a
    assert fw.sign_pod(make_pod("e", labels={"app": "x"}, requests={"cpu": "1"},
                                spec={"tolerations": [{"key": "k", "operator": "Exists"}]})) != a
    # a pod with its own spread constraints, pod affinity or claims cannot be signed
    assert fw.sign_pod(make_pod("f", spec={"topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]})) is None
    assert fw.sign_pod(make_pod("g", spec={"affinity": {"podAntiAffinity": {}}})) is None


# ---- DRAExtendedResource (TestFitSignPod / TestBalancedAllocationSignPod, v1.36) -------------
ERN = "example.com/gpu"
DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                "metadata": {"name": "gpu", "creationTimestamp": "2026-01-01T00:00:00Z"},
                "spec": {"selectors": [{"cel": {"expression": 'device.driver == "d"'}}],
                         "extendedResourceName": ERN}}


def _resources_plugin(cls, features, objects=()):
    from harness.api.objects import make_object
    h = FakeHandle([], objects=[make_object(dict(o)) for o in objects])
    h.feature_gates = features
    return cls(fitargs.set_defaults_node_resources_fit_args({}) if cls is Fit else None, h)


@pytest.mark.parametrize("cls", [Fit, BalancedAllocation])
@pytest.mark.parametrize("features,requests,signable", [
    (resolve("v1.36"), {"cpu": "1", ERN: "1"}, False),  # a DeviceClass provides example.com/gpu
    (resolve("v1.36"), {"cpu": "1", "example.com/other": "1"}, True),  # none provides this one
    (resolve("v1.36"), {"cpu": "1"}, True),
    (resolve("v1.36", {"DRAExtendedResource": False}), {"cpu": "1", ERN: "1"}, True),
    (resolve("v1.35", {"DRAExtendedResource": True}), {"cpu": "1"}, False),  # v1.35: no pod at all
    (resolve("v1.35"), {"cpu": "1", ERN: "1"}, True),
], ids=["v1.36 DRA extended resource requested", "v1.36 another extended resource", "v1.36 none",
        "v1.36 gate off", "v1.35 gate on", "v1.35 gate off"])
def test_resources_sign_pod_with_dra_extended_resources(cls, features, requests, signable):
    pl = _resources_plugin(cls, features, [DEVICE_CLASS])
    frags, st = pl.sign_pod(make_pod("p", requests=requests))
    if signable:
        assert st is None and frags[0][0] == signers.RESOURCES_SIGNER_NAME
    else:
        assert frags is None and st.is_rejected()
