"""`schedharness import` of malformed dumps (issue 25): each refused with one line naming the
dump and its item, exit 2, and no output file left; and a dump of a cluster with its own
PriorityClasses (which `kubectl get nodes,pods -A -o yaml` does not list) imports and runs on
the priorities its pods were admitted with."""

from __future__ import annotations

import codecs
import json
import os

import pytest
import yaml

from harness.cli import main

HEAD = "apiVersion: v1\nkind: List\n"
NODE = "- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n  status: {allocatable: {cpu: '4', pods: '10'}}\n"


def bomb() -> str:
    text = HEAD + "metadata:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    prev = "a"
    for n in "bcdefghi":
        text += f"  {n}: &{n} [" + ", ".join([f"*{prev}"] * 10) + "]\n"
        prev = n
    return text + "items: []\n"


DUMPS = {
    "items-mapping": (HEAD + "items:\n  a: 1\n", "items: must be a list"),
    "items-flow-mapping": (HEAD + "items: {a: 1}\n", "items: must be a list"),
    "items-string": (HEAD + "items: hello\n", "items: must be a list"),
    "items-int": (HEAD + "items: 5\n", "items: must be a list"),
    "items-bool": (HEAD + "items: true\n", "items: must be a list"),
    "kind-int": ("apiVersion: v1\nkind: 5\nitems: []\n", "kind: must be a string"),
    "kind-list": ("apiVersion: v1\nkind: [List]\nitems: []\n", "kind: must be a string"),
    "duplicate-items": (HEAD + "items: []\nitems: []\n", 'items: duplicate key "items"'),
    "duplicate-items-after-entries": (HEAD + "items:\n" + NODE + "items: []\n", 'duplicate key "items"'),
    "duplicate-kind": ("apiVersion: v1\nkind: List\nkind: List\nitems: []\n", 'kind: duplicate key "kind"'),
    "duplicate-apiversion": ("apiVersion: v1\napiVersion: v1\nkind: List\nitems: []\n", 'duplicate key "apiVersion"'),
    "alias-bomb-in-metadata": (bomb(), "metadata: too large"),
    "null-item": (HEAD + "items:\n- null\n", "items[0]: an item is a Kubernetes object, got null"),
    "empty-item": (HEAD + "items:\n-\n" + NODE, "items[0]: an item is a Kubernetes object, got null"),
    "null-item-after-node": (HEAD + "items:\n" + NODE + "- ~\n", "items[1]: an item is a Kubernetes object"),
    "managedfields-int": (HEAD + "items:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n    managedFields: 5\n",
                          "items[0].metadata.managedFields"),
    "managedfields-mapping": (HEAD + "items:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n    managedFields: {a: 1}\n",
                              "items[0].metadata.managedFields"),
    "managedfields-strings": (HEAD + "items:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n    managedFields: [a]\n",
                              "items[0].metadata.managedFields"),
    "json-items-mapping": ('{\n    "apiVersion": "v1",\n    "items": {"a": 1},\n    "kind": "List"\n}\n', "items: must be a list"),
    "json-duplicate-items": ('{\n    "apiVersion": "v1",\n    "items": [],\n    "items": [],\n    "kind": "List"\n}\n', 'duplicate key "items"'),
    "json-null-item": ('{\n    "apiVersion": "v1",\n    "items": [\n        null\n    ],\n    "kind": "List"\n}\n', "items[0]"),
}


@pytest.mark.parametrize("name", sorted(DUMPS))
def test_a_malformed_dump_is_one_line_and_leaves_no_output(name, tmp_path, capsys):
    text, fragment = DUMPS[name]
    dump = tmp_path / f"{name}.yaml"
    dump.write_text(text)
    out = tmp_path / "case.yaml"
    assert main(["import", str(dump), "-o", str(out)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith(f"error: {dump}: "), err
    assert fragment in err[0], err[0]
    assert sorted(os.listdir(tmp_path)) == [dump.name]  # no case, no temporary file


def test_a_utf16_dump_with_items_a_mapping_is_refused(tmp_path, capsys):
    dump = tmp_path / "d.yaml"
    dump.write_bytes(codecs.BOM_UTF16_LE + (HEAD + "items: {a: 1}\n").encode("utf-16-le"))
    assert main(["import", str(dump), "-o", str(tmp_path / "c.yaml")]) == 2
    assert "items: must be a list" in capsys.readouterr().err
    assert not (tmp_path / "c.yaml").exists()


def test_items_null_is_an_empty_list(tmp_path, capsys):
    dump = tmp_path / "d.yaml"
    dump.write_text(HEAD + "items: null\n")
    assert main(["import", str(dump), "-o", str(tmp_path / "c.yaml")]) == 0


def pod(name, priority, cls, cpu, node=None, ns="prod"):
    spec = {"priorityClassName": cls, "priority": priority, "preemptionPolicy": "PreemptLowerPriority",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def dump_with_priority_classes(tmp_path):
    """A `kubectl get nodes,pods -A -o yaml` of a cluster whose pods use PriorityClasses
    prod-high and prod-low, which the dump does not hold."""
    items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
             pod("batch", 10, "prod-low", "3", node="node-a"),
             pod("web", 100000, "prod-high", "2")]
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}, sort_keys=False))
    return path


def test_a_dump_whose_pods_name_priorityclasses_it_lacks_imports_and_runs_on_their_priorities(tmp_path, capsys):
    out = tmp_path / "case.yaml"
    assert main(["import", str(dump_with_priority_classes(tmp_path)), "-o", str(out)]) == 0
    capsys.readouterr()
    case = yaml.safe_load(out.read_text())
    assert not [o for o in case["cluster"] if o["kind"] == "PriorityClass"]
    assert case["pods"][0]["spec"]["priority"] == 100000
    # the admitted priorities are used as they are: web (100000) preempts batch (10), then binds
    case["expect"] = {"bindings": {"prod/web": "node-a"}, "preempted": ["prod/batch"]}
    out.write_text(yaml.safe_dump(case, sort_keys=False))
    assert main(["run", str(out)]) == 0, capsys.readouterr()


def test_a_pod_the_case_creates_still_needs_its_priorityclass(tmp_path, capsys):
    """The Priority admission plugin admits what the case creates: a step's pod naming a
    PriorityClass the case lacks is refused before anything runs (and so is a pod of `pods`
    without spec.priority)."""
    base = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "c"},
            "cluster": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
                         "status": {"allocatable": {"cpu": "4", "pods": "10"}}}],
            "pods": [], "expect": {}}
    late = pod("late", 5, "prod-high", "1")
    late.pop("status")
    c = dict(base, steps=[{"create": [late]}])
    path = tmp_path / "c.yaml"
    path.write_text(json.dumps(c))
    assert main(["validate", str(path)]) == 2
    assert "steps[0].create[0].spec.priorityClassName: no PriorityClass with name prod-high" in capsys.readouterr().err
    unadmitted = pod("p", 5, "prod-high", "1")
    unadmitted["spec"].pop("priority")
    path.write_text(json.dumps(dict(base, pods=[unadmitted])))
    assert main(["validate", str(path)]) == 2
    assert "pods[0].spec.priorityClassName: no PriorityClass with name prod-high" in capsys.readouterr().err
