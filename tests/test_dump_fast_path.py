"""`import` reads a dump in kubectl's own form with the fast reader (each item's text composed
by libyaml): on every dump, odd YAML forms included, it yields exactly what the event-by-event
reader yields, and raises exactly its error."""

from __future__ import annotations

import functools
import os
import tempfile

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import yamlfile
from harness.case import dumps
from harness.errors import UserError
from harness.case.importer import import_dump

HERE = os.path.dirname(__file__)


def _read(path: str, fast: bool):
    try:
        return ("ok", list(dumps.iter_dump_items(path, UserError, fast=fast)))
    except UserError as e:
        return ("error", str(e))


def _same(text, binary: bool = False):
    fd, path = tempfile.mkstemp(suffix=".yaml")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text if binary else text.encode("utf-8"))
        fast, slow = _read(path, True), _read(path, False)
        assert fast == slow
        return fast
    finally:
        os.unlink(path)


def _generated_dump(tmp_path, **sizes) -> str:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen", os.path.join(HERE, "dumps", "generate_big_dump.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = str(tmp_path / ("dump.json" if sizes.get("json") else "dump.yaml"))
    gen.main(["--nodes", str(sizes.get("nodes", 12)), "--pods", str(sizes.get("pods", 60)),
              "--pending", str(sizes.get("pending", 5)), "-o", out] + (["--json"] if sizes.get("json") else []))
    return out


def test_generated_json_dump_is_read_fast_as_its_yaml_twin(tmp_path):
    dump, js = _generated_dump(tmp_path), _generated_dump(tmp_path, json=True)
    assert list(dumps._fast_list_items(js)) == list(dumps.iter_dump_items(dump, UserError, fast=False))


def test_generated_dump_is_read_fast_and_imports_to_the_same_case(tmp_path, monkeypatch):
    dump = _generated_dump(tmp_path)
    items = list(dumps._fast_list_items(dump))  # kubectl's form: no fallback
    assert len(items) > 60
    assert items == list(dumps.iter_dump_items(dump, UserError, fast=False))
    assert import_dump(dump, str(tmp_path / "fast.yaml"), progress=False) == 0
    monkeypatch.setattr(dumps, "iter_dump_items", functools.partial(dumps.iter_dump_items, fast=False))
    assert import_dump(dump, str(tmp_path / "slow.yaml"), progress=False) == 0
    assert (tmp_path / "fast.yaml").read_text() == (tmp_path / "slow.yaml").read_text()


def test_shop_cluster_dump_reads_the_same():
    with open(os.path.join(HERE, "dumps", "shop-cluster.yaml"), "rb") as f:
        _same(f.read(), binary=True)


@pytest.mark.parametrize("text", [
    "apiVersion: v1\nkind: List\nitems:\n- &a {kind: Node, metadata: {name: n}}\n- *a\n",  # alias across items
    "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: \"a\n- b\"}\n",  # string over a cut
    "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  kind: Pod\n",  # duplicate key
    "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n- [unclosed\n",
    "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n---\n- kind: Pod\n",
    "---\napiVersion: v1\nkind: List\nitems:\n- kind: Node\n",
    "kind: List\nitems:\n- kind: Node\n  metadata:\n    name: " + "[" * 3000 + "]" * 3000 + "\n",
    "kind: List\nitems:\n- " + "- " * 300 + "x\n",
    "kind: List\nitems:\n- a:\n" + "".join(" " * (2 * k + 2) + "- b:\n" for k in range(150)),
    "kind: List\nitems:\n- !!set {a, b}\n- kind: Node\n  <<: {a: 1}\n",
    "kind: List\nitems:\n- kind: Node\n  1: one\n  true: yes\n  1.5: x\n  ~: null\n",
    "kind: List\nitems:\n- kind: Node\n\tbad: tab\n",
    "kind: List\r\nitems:\r\n- kind: Node\r\n  d: |\r\n    two\r\n    lines\r\n",
    "kind: List\nitems: []\n",
    "kind: List\nitems:\n- kind: Node\nkind: List\nextra: [1]\n",
    "kind: List\nitems:\n- n: 0x1f\n  o: 010\n  f: 1.5e+3\n  g: 1e3\n  s: 1_000\n  t: 2026-01-01\n",
])
def test_odd_forms_read_as_the_slow_reader_reads_them(text):
    _same(text)


def test_bom_and_utf16_are_left_to_the_slow_reader():
    text = "kind: List\nitems:\n- kind: Node\n"
    _same(b"\xef\xbb\xbf" + text.encode(), binary=True)
    _same(text.encode("utf-16"), binary=True)
    _same(b"kind: List\nitems:\n- kind: \xff\n", binary=True)


_scalar = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                    st.floats(allow_nan=False, allow_infinity=False, width=32),
                    st.text(st.characters(blacklist_categories=("Cs",)), max_size=12))
_value = st.recursive(_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text("abc:-# '\"", min_size=1, max_size=5), inner, max_size=4)),
    max_leaves=12)
_obj = st.fixed_dictionaries({"kind": st.sampled_from(["Node", "Pod"]), "metadata": st.fixed_dictionaries(
    {"name": st.text("abc-", min_size=1, max_size=5)})}, optional={"spec": _value, "data": _value})


@st.composite
def _dumps(draw):
    objs = draw(st.lists(_obj, max_size=5))
    if objs and draw(st.booleans()):  # one value shared: an anchor and alias inside an item
        shared = {"k": [1, 2]}
        objs[0]["spec"] = {"a": shared, "b": shared}
    flow = draw(st.sampled_from([False, None, True]))
    text = yaml.dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": objs},
                     Dumper=yaml.SafeDumper, default_flow_style=flow, sort_keys=False,
                     width=draw(st.sampled_from([20, 80, 1000])), allow_unicode=draw(st.booleans()))
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, 3))):  # comments, blank lines, tabs, a document marker, edits
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(st.sampled_from(["# comment", "  # indented comment", "", "\t", "---", "...",
                                               "- kind: Node", "  extra: 1", "-", "- |", "    text"])))
    text = "\n".join(lines)
    if draw(st.booleans()):
        text = "---\n" + text
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_dumps())
def test_fast_reader_reads_any_dump_as_the_slow_reader(text):
    _same(text)


def _json_dump(objs, **kw) -> str:
    import json

    return json.dumps({"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}},
                      indent=4, **kw) + "\n"


def test_kubectl_json_dump_is_read_fast_and_imports_to_the_same_case(tmp_path):
    dump = _generated_dump(tmp_path)
    with open(dump) as f:
        data = yaml.safe_load(f)
    js = tmp_path / "dump.json"
    js.write_text(_json_dump(data["items"]))
    assert list(dumps._fast_list_items(str(js))) == list(dumps.iter_dump_items(dump, UserError, fast=False))
    assert import_dump(dump, str(tmp_path / "from-yaml.yaml"), progress=False) == 0
    assert import_dump(str(js), str(tmp_path / "from-json.yaml"), name="dump", progress=False) == 0
    from_json = (tmp_path / "from-json.yaml").read_text().replace("from dump.json:", "from dump.yaml:")
    assert from_json == (tmp_path / "from-yaml.yaml").read_text()


_NODE = '        {\n            "kind": "Node",\n            "metadata": {\n                "name": "n"\n            }%s\n        }'


@pytest.mark.parametrize("extra", [
    ',\n            "f": 1e5', ',\n            "f": 1.5e+3', ',\n            "f": NaN', ',\n            "kind": "Pod"',
    ',\n            "s": "\\ud83d\\ude00"', ',\n            "s": "a\u2028b"', ',\n            "s": "\u0085"',
    ',\n\t\t\t"s": 1', ',\n            "' + "k" * 1100 + '": 1', ',\n            "s": "\\u00e9\\/\\n"',
    ',\n            "l": [\n                1,\n                {}\n            ]', '\n            "x": 1',
    ',\n            "d": ' + "[" * 250 + "]" * 250, ',\n            "n": -0, "m": 12345678901234567890',
])
def test_odd_json_reads_as_the_slow_reader_reads_it(extra):
    item = _NODE % extra
    text = '{\n    "apiVersion": "v1",\n    "items": [\n' + item + ",\n" + item + '\n    ],\n    "kind": "List"\n}\n'
    _same(text)


@pytest.mark.parametrize("text", [
    '{"apiVersion": "v1", "items": [{"kind": "Node"}], "kind": "List"}\n',
    '{\n    "items": [\n        {\n            "kind": "Node"\n        },\n    ],\n    "kind": "List"\n}\n',
    '{\n    "items": [\n        {\n            "kind": "Node"\n        }\n        {\n            "kind": "Pod"\n        }\n    ]\n}\n',
    '{\n    "items": [\n        {\n            "kind": "Node"\n        }\n    ]\n}\n{}\n',
    '{\n    "items": [\n        {\n            "kind": "Node"\n        }\n    ],\n    "items": []\n}\n',
    '{\n    "items": [],\n    "kind": "List"\n}\n',
    '{\n    "kind": "List",\n    "items": [\n        {\n            "kind": "Node"\n        }\n    ]\n}',
])
def test_json_forms_read_as_the_slow_reader_reads_them(text):
    _same(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_obj, max_size=4), st.booleans())
def test_json_dumps_read_as_the_slow_reader(objs, ascii_only):
    _same(_json_dump(objs, ensure_ascii=ascii_only))
