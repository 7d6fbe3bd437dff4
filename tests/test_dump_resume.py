"""A dump whose fast reading falls back late (an item not in kubectl's layout near its end) is
not read again from the start: the event-by-event reader resumes at the last item the fast
reader gave (harness/case/dumps.py, _ResumePoint), with the same items, and the same errors
(keys, line numbers, byte positions), as reading the whole dump event by event."""

from __future__ import annotations

import json

import pytest
import yaml

from harness.case import dumps
from harness.errors import UserError

from test_dump_fast_path import _generated_dump  # tests/ is on sys.path (rootdir-less test modules)


def _read(path: str, fast: bool):
    try:
        return ("ok", list(dumps.iter_dump_items(path, UserError, fast=fast)))
    except UserError as e:
        return ("error", str(e), e.key)


def _built_items(monkeypatch, path: str):
    """The fast read of `path` and how many items the event-by-event reader built for it."""
    built = []
    real = dumps._construct_item

    def spy(loader, where, *a, **kw):
        built.append(where)
        return real(loader, where, *a, **kw)

    with monkeypatch.context() as m:
        m.setattr(dumps, "_construct_item", spy)
        return _read(path, True), built


def _with_last_item(dump: str, text: str, as_json: bool) -> None:
    """The dump with one more item, `text` as its lines (YAML) or the object (JSON)."""
    with open(dump) as f:
        body = f.read()
    if as_json:
        mark = '\n    ],\n    "kind": "List"'
        assert mark in body
        body = body.replace(mark, ",\n" + text + mark)
    else:  # kubectl's YAML ends with the items
        assert body.endswith("\n")
        body += text
    with open(dump, "w") as f:
        f.write(body)


DEEP = ("- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: deep\n    namespace: default\n"
        "  data:\n    a: |\n" + " " * 210 + "text indented past the fast reader's bound\n")
JSON_ODD = ('        {\n            "apiVersion": "v1", "kind": "ConfigMap",\n'
            '            "metadata": {"name": "odd", "namespace": "default"}\n        }')


@pytest.mark.parametrize("as_json", [False, True])
def test_a_late_fallback_resumes_at_the_last_item(tmp_path, monkeypatch, as_json):
    dump = _generated_dump(tmp_path, json=as_json)
    n = len(_read(dump, False)[1])
    _with_last_item(dump, JSON_ODD if as_json else DEEP, as_json)
    fast, built = _built_items(monkeypatch, dump)
    assert fast == _read(dump, False)
    assert len(fast[1]) == n + 1 and fast[1][-1][0] == f"items[{n}]"
    # the item before the odd one read again, then the odd one, then the top-level values after them
    assert [w for w in built if w.startswith("items")] == [f"items[{n - 1}]", f"items[{n}]"]


@pytest.mark.parametrize("as_json", [False, True])
def test_an_error_after_a_late_fallback_is_the_one_reading_from_the_start_gives(tmp_path, as_json):
    dump = _generated_dump(tmp_path, json=as_json)
    bad = ('        {\n            "kind": [\n        }' if as_json else
           "- apiVersion: v1\n  kind: [ConfigMap\n")
    _with_last_item(dump, bad, as_json)
    fast = _read(dump, True)
    assert fast[0] == "error" and "(line " in fast[1]
    assert fast == _read(dump, False)


def test_a_control_character_names_its_byte_position_as_from_the_start(tmp_path, monkeypatch):
    """The reader's error names the byte offset in the file: the resumed stream puts the item
    at its own offset. (A short path: the message is cut at 160 characters.)"""
    monkeypatch.chdir(tmp_path)
    objs = [{"kind": "Node", "metadata": {"name": f"n{i}", "annotations": {"a": "é€😀" * i}}} for i in range(4)]
    objs.append({"kind": "Node", "spec": "\x7f"})
    with open("d.json", "w", encoding="utf-8") as f:
        f.write(json.dumps({"apiVersion": "v1", "items": objs, "kind": "List"}, indent=4, ensure_ascii=False) + "\n")
    fast = _read("d.json", True)
    assert fast[0] == "error" and "position" in fast[1]
    assert fast == _read("d.json", False)


@pytest.mark.parametrize("other_break", ["\r\n", "\u2028"])
def test_other_line_breaks_before_the_item_read_from_the_start(tmp_path, monkeypatch, other_break):
    """A line break YAML counts but a count of newlines does not (CR, LS...) before the resume
    point: the whole dump read event by event, as before."""
    items = "".join(f"- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n{i}\n" for i in range(4))
    if other_break == "\r\n":
        items = items.replace("name: n1\n", "name: n1\r\n")
    else:
        items = items.replace("name: n1\n", "name: n1\n    annotations: {a: \"x\u2028y\"}\n")
    path = tmp_path / "dump.yaml"
    path.write_text("apiVersion: v1\nkind: List\nitems:\n" + items + "- apiVersion: v1\n  kind: [Node\n",
                    encoding="utf-8", newline="")
    fast, built = _built_items(monkeypatch, str(path))
    assert fast == _read(str(path), False) and fast[0] == "error"
    assert "items[0]" in built


def test_a_repeated_top_level_key_after_the_items_is_yamls_error(tmp_path):
    """`kind:` again after the items: the fast reader used to take it; the event reader says
    duplicate key."""
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}]}, sort_keys=False) + "kind: List\n")
    fast = _read(str(path), True)
    assert fast[0] == "error" and "duplicate key" in fast[1]
    assert fast == _read(str(path), False)
