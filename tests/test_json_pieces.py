"""harness/json_pieces.py reads a one-line JSON object piece by piece, remembering pieces by
their text: whatever it returns is what the JSON decoder reads from the line, and it returns
something only for a line in canonical form (json_line's), which YAML reads the same."""

from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

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
    return PieceReader(values, yamlfile._decoder(values).scan_once, yamlfile._canonical)


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
        got = reader.read(t) if yamlfile._plain_text(t) else None
        if got is not None:
            assert _canonical_text(t), t
            assert got == json.loads(t)
            assert yamlfile._canonical(got) == t  # types too (1 and True, 0 and 0.0 differ in text)
        elif yamlfile._plain_text(t) and _canonical_text(t) and "." not in t and "e" not in t.lower():
            # a canonical line without floats is always read here
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
