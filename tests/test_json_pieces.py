"""harness/json_pieces.py reads a one-line JSON object piece by piece, remembering pieces by
their text: whatever it returns is what the JSON decoder reads from the line, and it returns
something only for a line in canonical form (json_line's), which YAML reads the same."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st
from test_json_lines import _yaml_values  # what yamlfile._check_bounds counts

from harness import yamlfile
from harness.json_pieces import PieceReader
from harness.sharing import ValueTable

_KEYS = st.sampled_from(["a", "b", "name", "spec", "x y", "k:v", "", "é", "{", "[1]", "true"])
_SCALARS = (st.text(alphabet="ab :,{}[]\"\\\n\té\u2028\x7f-0.1", max_size=6) | st.integers(-10**20, 10**20)
            | st.booleans() | st.none() | st.floats(allow_nan=False, allow_infinity=False)
            | st.sampled_from([0, -1, 10, "0", "-0", "true", "null", "1.5"]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
                       max_leaves=25)
_OBJECTS = st.dictionaries(_KEYS, _VALUES, max_size=6)


def _reader() -> PieceReader:
    values = ValueTable()
    return PieceReader(values, yamlfile._canonical)


def _canonical_text(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return yamlfile.json_line(value) == text


@settings(max_examples=500, deadline=None)
@given(st.lists(_OBJECTS, min_size=1, max_size=6), st.data())
def test_reads_what_json_reads_and_only_canonical_lines(objs, data):
    reader = _reader()
    texts = [yamlfile._canonical(o) for o in objs]
    # the same lines again (their pieces remembered), and lines spoilt in small ways
    for t in list(texts):
        texts.append(t)
        if len(t) > 2:
            i = data.draw(st.integers(1, len(t) - 2))
            texts.append(t[:i] + t[i + 1:])  # a character left out
            texts.append(t[:i] + data.draw(st.sampled_from([" ", ",", "\\", '"', "0", ".", "}", "-"])) + t[i:])
            texts.append(t.replace(", ", ",", 1))
            texts.append(t.replace('": ', '":', 1))
    texts.append(texts[0])
    for t in texts:
        got = reader.read(t)
        if got is not None:
            assert _canonical_text(t), t
            assert got == json.loads(t)
            assert yamlfile._canonical(got) == t  # types too (1 and True, 0 and 0.0 differ in text)
        elif _canonical_text(t) and "\\" not in t and "." not in t and "e" not in t.lower():
            # a canonical line without floats or escapes is always read here
            assert False, t


@settings(max_examples=200, deadline=None)
@given(st.lists(_OBJECTS, min_size=1, max_size=8))
def test_split_lines_gives_the_plain_path_values(objs):
    """A case's lines read with a value table (pieces) and without (the JSON decoder) give
    equal objects, and leave the same lines to YAML."""
    lines = ["cluster:"] + ["- " + yamlfile._canonical(o) for o in objs + objs]
    with_table = yamlfile._split_lines(list(lines), ValueTable())
    plain = yamlfile._split_lines(list(lines))
    assert (with_table is None) == (plain is None)
    if plain is not None:
        assert with_table[1] == plain[1]
        assert with_table[0].replace(with_table[3], "M") == plain[0].replace(plain[3], "M")


_PARTS = ("metadata", "spec", "status")
_MEMBER_KEYS = ("a", "b", "c", "d", "e", "kind")
_SMALL = st.sampled_from(["x", "y", "", "é", 0, 1, -7, True, False, None, [], {}, ["x"], {"a": 1},
                          [{"a": [1, "x"]}], {"b": {"c": []}}])


@st.composite
def _replicas(draw):
    """Lines of objects alike (replicas: the same members, a few of them changed, left out or
    added), as a Deployment's pods are written."""
    def mapping():
        keys = draw(st.lists(st.sampled_from(_MEMBER_KEYS), unique=True, max_size=6))
        return {k: draw(_SMALL) for k in keys}

    base = {"apiVersion": "v1", "kind": draw(st.sampled_from(["Pod", "Node", "x"])), **{p: mapping() for p in _PARTS}}
    objs = []
    for _ in range(draw(st.integers(2, 12))):
        obj = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
        for _ in range(draw(st.integers(0, 3))):
            part = obj[draw(st.sampled_from(_PARTS))]
            key = draw(st.sampled_from(_MEMBER_KEYS))
            if draw(st.booleans()):
                part[key] = draw(_SMALL)
            else:
                part.pop(key, None)
        if draw(st.booleans()):
            base = obj  # (the next replicas change this one)
        objs.append(obj)
    return objs


@settings(max_examples=400, deadline=None)
@given(_replicas(), st.data())
def test_runs_of_members_read_what_json_reads(objs, data):
    """Lines that repeat most of the line before (the members taken as runs of text) read as
    the JSON decoder reads them, a run spoilt by a key given twice or a changed character is not
    taken, and the reader counts the values YAML would."""
    reader = _reader()
    for obj in objs:
        text = yamlfile._canonical(obj)
        texts = [text]
        if data.draw(st.booleans()):  # a key of one part renamed to another of its keys
            part = obj[data.draw(st.sampled_from(_PARTS))]
            if len(part) >= 2:
                a, b = list(part)[:2]
                texts.append(text.replace(f'"{a}": ', f'"{b}": ', 1))
        if data.draw(st.booleans()) and len(text) > 2:
            i = data.draw(st.integers(1, len(text) - 2))
            texts.append(text[:i] + data.draw(st.sampled_from([" ", ",", "\\", '"', "0", ".", "x"])) + text[i + 1:])
        for t in texts:
            before = reader.count
            got = reader.read("- " + t, 2)
            if got is None:
                assert reader.count == before
                assert t != text, t  # (a canonical line without floats or escapes is read)
                continue
            assert _canonical_text(t), t
            assert got == json.loads(t)
            assert yamlfile._canonical(got) == t
            assert reader.count - before == _yaml_values(got)


def test_lines_nested_too_deep_are_left_to_yaml():
    reader = _reader()
    inner = "[" * 90 + "]" * 90
    assert reader.read('{"a": ' + inner + "}") == {"a": json.loads(inner)}
    assert reader.read('{"a": ' + inner + "}") is not None  # (remembered)
    deeper = "[" * 20 + inner + "]" * 20  # the remembered piece nested deeper
    assert reader.read('{"a": ' + deeper + "}") is None
    assert reader.read('{"b": ' + "{\"c\": " * 120 + "1" + "}" * 120 + "}") is None
