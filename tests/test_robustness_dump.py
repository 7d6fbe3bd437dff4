"""A real-world dump (tests/dumps/shop-cluster.yaml: managedFields, status, ownerReferences,
projected volumes, completed and failed Job pods, a ConfigMap and a Job) pasted as `cluster:` or
turned into a case by `schedharness import`, gives the binding kube-scheduler would give.

Arithmetic: every node has 3920m cpu allocatable. node-a runs 2 x 1500m = 3000m; node-b runs
500m, plus Job pods that completed (2 x 1500m Succeeded) or failed (2 cpu): kube-scheduler's pod
informer never lists those, so node-b has 3420m free. node-c is a control plane node (NoSchedule
taint the pods do not tolerate). The pending api pod (2 cpu) fits only node-b (node-a would need
5000m); one feasible node, so no scoring. A 1-cpu pod created after it fits only node-b as well
(node-a: 4000m > 3920m; node-b: 500m + 2000m + 1000m = 3500m)."""

from __future__ import annotations

import os

import yaml

from harness.case.loader import case_from_data, load_case
from harness.case.runner import run_case
from harness.cli import main
from harness.yamlfile import load_yaml_file
from harness.errors import UserError

DUMP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dumps", "shop-cluster.yaml")
PENDING = "shop/api-7d9f8c6b5-pqrst"


def test_dump_pasted_as_cluster_gives_kube_schedulers_binding():
    dump = load_yaml_file(DUMP, UserError)
    new = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}}
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "cluster": dump, "pods": [new],
            "expect": {"bindings": {PENDING: "node-b", "shop/web": "node-b"}}}
    res = run_case(case_from_data(data, DUMP))
    assert res.passed, res.failures
    assert res.preempted == []


def test_import_turns_the_dump_into_a_case(tmp_path, capsys):
    out = str(tmp_path / "case.yaml")
    assert main(["import", DUMP, "-o", out]) == 0
    summary = capsys.readouterr().err
    assert "1 pending pods" in summary and "4 completed pods" in summary and "kind ConfigMap" in summary
    text = open(out).read()
    assert "managedFields" not in text and "report-28471234" not in text
    data = yaml.safe_load(text)
    assert sorted({o["kind"] for o in data["cluster"]}) == ["Namespace", "Node", "Pod"]
    assert [p["metadata"]["name"] for p in data["pods"]] == ["api-7d9f8c6b5-pqrst"]
    assert "status" not in data["pods"][0]
    data["expect"] = {"bindings": {PENDING: "node-b"}}
    with open(out, "w") as f:
        yaml.safe_dump(data, f)
    res = run_case(load_case(out))
    assert res.passed, res.failures


def test_import_reads_several_documents_and_refuses_an_incomplete_dump(tmp_path, capsys):
    docs = tmp_path / "dump.yaml"
    docs.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '2'}}\n---\n"
                    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n---\n")
    out = tmp_path / "case.yaml"
    assert main(["import", str(docs), "-o", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    assert [o["kind"] for o in data["cluster"]] == ["Node"] and data["pods"][0]["metadata"]["name"] == "p"
    capsys.readouterr()
    pods_only = tmp_path / "pods.yaml"
    pods_only.write_text("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: r}, "
                         "spec: {nodeName: gone, containers: [{name: c, image: x}]}}\n")
    assert main(["import", str(pods_only), "-o", str(tmp_path / "x.yaml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'no Node "gone"' in err[0]
    # the case is checked before it takes its name: nothing is left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case.yaml", "dump.yaml", "pods.yaml"]


def test_import_refuses_an_output_that_is_not_a_regular_file(tmp_path, capsys):
    """The checked case takes -o's name by a rename, which would replace a pipe or a device
    (as root, /dev/null itself): such a -o is refused in one line before any work."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    assert main(["import", DUMP, "-o", str(pipe)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(pipe) in err[0] and "-o" in err[0] and "not a regular file" in err[0]
    assert not os.path.isfile(pipe) and os.path.exists(pipe)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]
