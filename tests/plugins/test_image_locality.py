"""imagelocality/image_locality_test.go: TestImageLocalityPriority, TestNormalizedImageName."""

from __future__ import annotations

import hashlib

import pytest

from builtin_plugins.image_locality import ImageLocality, normalized_image_name
from harness.api.objects import Node, Pod
from harness.testing import FakeHandle, new_state
from harness.versions import resolve

MB = 1024 * 1024


def image_node(name, images):
    return Node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}},
                 "status": {"images": [{"names": n, "sizeBytes": s} for n, s in images]}})


def pod(containers, init=()):
    spec = {"containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(containers)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": spec})


N403002000 = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
              (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
              (["gcr.io/2000:latest"], 2000 * MB)]
N25010 = [(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)]
N60040900 = [(["gcr.io/600:latest"], 600 * MB), (["gcr.io/40:latest"], 40 * MB), (["gcr.io/900:latest"], 900 * MB)]
N300600900 = [(["gcr.io/300:latest"], 300 * MB), (["gcr.io/600:latest"], 600 * MB), (["gcr.io/900:latest"], 900 * MB)]
N400030 = [(["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB)]
N203040 = [(["gcr.io/20:latest"], 20 * MB), (["gcr.io/30:latest"], 30 * MB), (["gcr.io/40:latest"], 40 * MB)]

CASES = [
    ("two images spread on two nodes, prefer the larger image one", pod(["gcr.io/40", "gcr.io/250"]),
     [("node1", N403002000), ("node2", N25010)], [0, 5]),
    ("two images on one node, prefer this node", pod(["gcr.io/40", "gcr.io/300"]),
     [("node1", N403002000), ("node2", N25010)], [7, 0]),
    ("if exceed limit, use limit", pod(["gcr.io/10", "gcr.io/4000"]),
     [("node1", N400030), ("node2", N25010)], [100, 0]),
    ("if exceed limit, use limit (with node which has no images present)", pod(["gcr.io/10", "gcr.io/4000"]),
     [("node1", N400030), ("node2", N25010), ("node3", [])], [66, 0, 0]),
    ("pod with multiple large images, node2 is preferred", pod(["gcr.io/300", "gcr.io/600", "gcr.io/900"]),
     [("node1", N60040900), ("node2", N300600900), ("node3", [])], [32, 36, 0]),
    ("pod with multiple small images", pod(["gcr.io/30", "gcr.io/40"]),
     [("node1", N203040), ("node2", N400030)], [1, 0]),
    ("include InitContainers", pod(["gcr.io/30"], init=["gcr.io/300"]),
     [("node1", N403002000), ("node2", N203040)], [6, 0]),
]


@pytest.mark.parametrize("name,p,nodes,want", CASES, ids=[c[0] for c in CASES])
def test_image_locality_priority(name, p, nodes, want):
    ns = [image_node(n, imgs) for n, imgs in nodes]
    h = FakeHandle(ns)
    pl = ImageLocality(None, h)
    got = []
    for n in ns:
        s, st = pl.score(new_state(), p, h.snapshot.get(n.name))
        assert st is None
        got.append(s)
    assert got == want


def test_image_volume_per_version():
    """TestImageLocalityPriority (v1.36) "pod with ImageVolume": gcr.io/300 as an image volume
    counts from v1.36: node1 100 * (300M * 1/2 - 23M) / (1000M - 23M) = 12; node2 30M -> 0.
    Before v1.36 only the container's gcr.io/30 counts: 0 on both."""
    p = pod(["gcr.io/30"])
    p.spec["volumes"] = [{"name": "imageVolume", "image": {"reference": "gcr.io/300"}}]
    ns = [image_node("node1", N300600900), image_node("node2", N400030)]
    for version, want in (("v1.34", [0, 0]), ("v1.35", [0, 0]), ("v1.36", [12, 0])):
        h = FakeHandle(ns)
        h.feature_gates = resolve(version)
        pl = ImageLocality(None, h)
        assert [pl.score(new_state(), p, h.snapshot.get(n.name))[0] for n in ns] == want, version
        assert list(pl.score_nodes(new_state(), p, h.snapshot.list())) == want, version


def test_normalized_image_name():
    digest = "sha256:" + hashlib.sha256(b"root").hexdigest()
    assert normalized_image_name("root") == "root:latest"
    assert normalized_image_name("gcr.io:5000/root") == "gcr.io:5000/root:latest"
    assert normalized_image_name("root:tag") == "root:tag"
    assert normalized_image_name("root@" + digest) == "root@" + digest
