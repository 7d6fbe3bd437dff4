"""Long strings cost the regular expressions that check a dump's or a case's lines no more than a
few times their length: a string pattern written as `"(?:[^"\\]|\\.)*"` keeps one backtracking
entry per character (about 128 bytes each), which made `import` of a JSON dump whose item holds
2 MB of strings trace 287 MB (19 MB now) and reading its case 40 MB (13 MB); the unrolled `"[^"\\]*(?:\\.[^"\\]*)*"`
accepts the same strings with none."""

from __future__ import annotations

import json
import tracemalloc

import pytest
import yaml

from harness.case.importer import import_dump
from harness.errors import UserError
from harness.yamlfile import load_yaml_file

_STRINGS = 8 * 100_000  # eight container args of 100 KB, each with an escaped quote (a long key's test)


def _dump(tmp_path, form: str) -> str:
    big = "x" * 100_000 + '"y'
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "x", "args": [big] * 8}]}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}}}
    doc = {"apiVersion": "v1", "items": [node, pod], "kind": "List", "metadata": {"resourceVersion": ""}}
    path = tmp_path / f"dump.{form}"
    path.write_text(json.dumps(doc, indent=4) + "\n" if form == "json" else yaml.safe_dump(doc, width=1 << 30))
    return str(path)


def _traced_peak(call) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("form", ["json", "yaml"])
def test_long_strings_are_checked_without_memory_per_character(tmp_path, form, capsys):
    dump, case = _dump(tmp_path, form), str(tmp_path / "case.yaml")
    assert import_dump(dump, case, progress=False) == 0  # (the modules it imports, before tracing)
    assert _traced_peak(lambda: import_dump(dump, case, progress=False)) < 16 * _STRINGS
    data = load_yaml_file(case, UserError)
    pod = next(o for o in data["cluster"] if o["kind"] == "Pod")
    assert pod["spec"]["containers"][0]["args"] == ["x" * 100_000 + '"y'] * 8
    assert _traced_peak(lambda: load_yaml_file(case, UserError)) < 10 * _STRINGS
