"""The resourceclaim controller (harness/case/controllers.py): claims generated from templates."""

from __future__ import annotations

from harness.api.objects import make_object
from harness.case.controllers import ResourceClaimController, claim_generate_name, generate_name
from harness.cluster import Cluster
from harness.testing import make_pod


def test_generate_name_shortens_both_parts():
    assert claim_generate_name("my-pod", "gpu") == "my-pod-gpu-"
    long_pod, long_claim = "p" * 40, "c" * 30
    name = claim_generate_name(long_pod, long_claim)
    # 40*57//72 = 31 pod characters, "-", 30*57//72 = 23 claim characters (no trailing "-").
    assert name == "p" * 31 + "-" + "c" * 23
    full = generate_name(name, "seed")
    assert len(full) == len(name) + 5 and full.startswith(name)
    assert generate_name(name, "seed") == full


def test_claim_created_and_recorded():
    cluster = Cluster()
    cluster.create(make_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                "metadata": {"name": "tmpl", "namespace": "default"},
                                "spec": {"metadata": {"labels": {"a": "b"}},
                                         "spec": {"devices": {"requests": [{"name": "r"}]}}}}), notify=False)
    ResourceClaimController(cluster).start()
    pod = make_pod("web", uid="pod-uid", spec={"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "tmpl"}]})
    cluster.create(pod)
    claims = cluster.list("ResourceClaim")
    assert len(claims) == 1
    c = claims[0]
    assert c.name.startswith("web-gpu-") and len(c.name) == len("web-gpu-") + 5
    assert c.labels == {"a": "b"}
    assert c.annotations == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert c.raw["metadata"]["ownerReferences"][0]["uid"] == "pod-uid"
    assert c.spec == {"devices": {"requests": [{"name": "r"}]}}
    got = cluster.get("Pod", "default", "web")
    assert got.status["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": c.name}]


def test_missing_template_leaves_pod():
    cluster = Cluster()
    ResourceClaimController(cluster).start()
    cluster.create(make_pod("web", spec={"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "none"}]}))
    assert cluster.list("ResourceClaim") == []
    assert "resourceClaimStatuses" not in cluster.get("Pod", "default", "web").status


def _claim(name, reserved, finalizer=True, owner=None):
    md = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if finalizer:
        md["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    if owner:
        md["ownerReferences"] = [{"kind": "Pod", "name": "x", "uid": owner, "controller": True}]
    return make_object({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": md, "spec": {},
                        "status": {"allocation": {"devices": {"results": []}},
                                   "reservedFor": [{"resource": "pods", "name": n, "uid": u} for n, u in reserved]}})


def test_deleted_pod_releases_its_claims():
    cluster = Cluster()
    a = make_pod("a", uid="uid-a", node_name="n")
    b = make_pod("b", uid="uid-b", node_name="n")
    for o in (a, b, _claim("shared", [("a", "uid-a"), ("b", "uid-b")]), _claim("alone", [("a", "uid-a")]),
              _claim("foreign", [("a", "uid-a")], finalizer=False), _claim("owned", [("a", "uid-a")], owner="uid-a")):
        cluster.create(o, notify=False)
    ResourceClaimController(cluster).start()
    cluster.delete(a)
    shared = cluster.get("ResourceClaim", "default", "shared")
    assert shared.status["reservedFor"] == [{"resource": "pods", "name": "b", "uid": "uid-b"}]
    assert "allocation" in shared.status
    alone = cluster.get("ResourceClaim", "default", "alone")
    assert "allocation" not in alone.status and "reservedFor" not in alone.status
    assert "finalizers" not in alone.raw["metadata"]
    foreign = cluster.get("ResourceClaim", "default", "foreign")
    assert "allocation" in foreign.status and "reservedFor" not in foreign.status
    assert cluster.get("ResourceClaim", "default", "owned") is None
