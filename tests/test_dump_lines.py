"""A dump item in kubectl's own form is read line by line (harness/case/dump_lines.py): what it
reads is what YAML reads, and anything it does not read is left to YAML."""

from __future__ import annotations

import os
import tempfile

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.case import dumps
from harness.case.dump_lines import read_item
from harness.errors import UserError
from harness.yamlfile import _StrictLoader

HERE = os.path.dirname(__file__)

# scalars YAML 1.1 reads as something else than their text, or that end a plain scalar
_TRICKY = ["yes", "No", "on", "~", "null", "0x1f", "010", "1:20", "1_000", ".inf", "-.5", "1e3", "2026-01-01",
           "2026-01-01T00:00:00Z", "<<", "=", "-", "?", ":", "a: b", "a:", "#x", "a #b", "a# b", " lead", "trail ",
           "", "é", "a'b", 'a"b', "a\\b", "k:{\"name\":\"app\"}", "f:metadata", ".", "{}", "[]", "- x", "*a", "&a",
           "!t", "|", ">", "@x", "`x", "%x", "a\tb", "a\nb", "\u2028", "\x85", "-1", "+1", "0", "00", "1.0",
           "true", "True", "ON"]
_text = st.one_of(st.sampled_from(_TRICKY), st.text("ab -:#'\"{}[]0.1", max_size=6))
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False, width=32), _text)
_value = st.recursive(_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)), max_leaves=10)
_obj = st.fixed_dictionaries({"kind": st.sampled_from(["Node", "Pod"]), "metadata": st.fixed_dictionaries(
    {"name": _text})}, optional={"spec": _value, "status": _value})

_EDITS = ["  ", " ", "- ", "# c", " # c", ":", " :", "\t", "", "---", "  x: 1", "    - y", "-", "*a", "&a ", "!!str "]


def _read(path: str, fast: bool):
    try:
        return ("ok", list(dumps.iter_dump_items(path, UserError, fast=fast)))
    except UserError as e:
        return ("error", str(e))


@st.composite
def _dump(draw):
    objs = draw(st.lists(_obj, min_size=1, max_size=3))
    text = yaml.dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": objs},
                     Dumper=yaml.SafeDumper, default_flow_style=False, sort_keys=False, width=10_000,
                     allow_unicode=draw(st.booleans()))
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, 2))):  # an edit: a line indented otherwise, cut, added to
        at = draw(st.integers(4, max(4, len(lines) - 1)))
        edit = draw(st.sampled_from(_EDITS))
        how = draw(st.sampled_from(["prefix", "suffix", "insert"]))
        if at < len(lines):
            lines[at] = edit + lines[at] if how == "prefix" else lines[at] + edit if how == "suffix" else lines[at]
            if how == "insert":
                lines.insert(at, edit)
    return "\n".join(lines)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_dump())
def test_the_line_reader_reads_what_yaml_reads(text):
    fd, path = tempfile.mkstemp(suffix=".yaml")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8", "surrogatepass"))
        assert _read(path, True) == _read(path, False)
    finally:
        os.unlink(path)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_obj)
def test_an_item_read_by_lines_is_the_item_yaml_reads(obj):
    text = yaml.dump([obj], Dumper=yaml.SafeDumper, default_flow_style=False, sort_keys=False, width=10_000,
                     allow_unicode=True)
    got = read_item(text)
    if got is not None:
        assert got == yaml.load(text, Loader=_StrictLoader)[0]


def test_kubectl_form_is_read_by_lines(tmp_path):
    """Every item of a generated kubectl dump (the shapes of a real one) is read by lines."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen", os.path.join(HERE, "dumps", "generate_big_dump.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = str(tmp_path / "dump.yaml")
    gen.main(["--nodes", "6", "--pods", "30", "--pending", "4", "-o", out])
    with open(out, encoding="utf-8") as f:
        text = f.read()
    items = ["- " + part + "\n" for part in text.split("\nitems:\n- ", 1)[1].rstrip("\n").split("\n- ")]
    slow = [obj for _, obj in dumps.iter_dump_items(out, UserError, fast=False)]
    assert [read_item(t) for t in items] == slow
    with open(os.path.join(HERE, "dumps", "shop-cluster.yaml"), encoding="utf-8") as f:
        shop = f.read()
    if "\nitems:\n- " in shop:
        parts = ["- " + p + "\n" for p in shop.split("\nitems:\n- ", 1)[1].rstrip("\n").split("\n- ")]
        assert any(read_item(p) is not None for p in parts)


def _json_dump_text(items) -> str:
    import json

    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
                      indent=4) + "\n"


def test_json_items_checked_line_by_line_read_as_the_slow_reader(tmp_path):
    """A `kubectl get -o json` entry's checks are made line by line (lines met before pass at
    once): deep entries, long lines, tabs, refused characters and floats read as before."""
    deep: object = "x"
    for _ in range(MAX_DEPTH_PLUS):
        deep = {"a": deep}
    cases = [[{"kind": "Node", "metadata": {"name": "n"}, "d": deep}],
             [{"kind": "Node", "metadata": {"name": "n"}, "s": "x" * 1000}],
             [{"kind": "Node", "metadata": {"name": "n\u0085"}}],
             [{"kind": "Node", "metadata": {"name": "n"}, "f": 1e5}],
             [{"kind": "Node", "metadata": {"name": "n"}}] * 3]
    for items in cases:
        path = tmp_path / "d.json"
        path.write_text(_json_dump_text(items), encoding="utf-8")
        assert _read(str(path), True) == _read(str(path), False)


MAX_DEPTH_PLUS = 205
