"""harness/json_pieces.py reads a one-line JSON object piece by piece, remembering pieces by
their text: whatever it returns is what the JSON decoder reads from the line, and it returns
something only for a line in canonical form (json_line's), which YAML reads the same."""

from __future__ import annotations

import json
import re

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


# --- templates (harness/json_templates.py): lines of one shape matched whole ------------------

_HOLE_TEXT = st.text(alphabet='ab-./:0é "\\\n\t\x7f\x85\u2028\ud7ff\U0001f600', max_size=8)
# what a scalar that varies between replicas becomes: mostly a value of its own kind, sometimes
# anything (an escape, a float, -0 written as a float, a nested value where a scalar was)
_OTHER = (_HOLE_TEXT | st.integers(-10**25, 10**25) | st.booleans() | st.none()
          | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([[], {}, ["x"], {"a": 1}, -0.0, 1e16]))
_TREE = st.recursive(st.sampled_from(["x", "", "é", 0, 7, -3, True, False, None])
                     | st.text(alphabet="ab:-", max_size=4) | st.integers(-1000, 1000),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
                     max_leaves=12)


def _scalar_paths(v, path=()):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _scalar_paths(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _scalar_paths(x, path + (i,))
    else:
        yield path


def _put(v, path, x):
    for k in path[:-1]:
        v = v[k]
    v[path[-1]] = x


def _like(draw, old, i):
    """A value of the kind of `old` (a string, an integer, true/false/null), one of its own
    for the i-th replica (but for true/false/null)."""
    if isinstance(old, str):  # (mostly text written as it is, sometimes escaped)
        text = draw(_HOLE_TEXT if draw(st.integers(0, 4)) == 0 else st.text(alphabet="abc-0é\U0001f600", max_size=12))
        return text + str(i)
    if isinstance(old, bool) or old is None:
        return draw(st.sampled_from([True, False, None]))
    return draw(st.integers(-10**25, 10**25) | st.integers(-3, 3)) + i


@st.composite
def _shaped_lines(draw):
    """Lines of objects of one shape (replicas) whose scalars at a few places vary, as a
    Deployment's pods are written; now and then a value of another kind where one varies."""
    base = {"apiVersion": "v1", "kind": draw(st.sampled_from(["Pod", "Node", "x"])),
            "metadata": draw(st.dictionaries(_KEYS, _TREE, min_size=1, max_size=4)),
            "spec": draw(st.dictionaries(_KEYS, _TREE, max_size=4)),
            "status": draw(_TREE)}
    paths = [p for p in _scalar_paths(base) if p[0] != "kind"]
    varying = draw(st.lists(st.sampled_from(paths), unique=True, min_size=1, max_size=5))
    objs = []
    for i in range(draw(st.integers(3, 14))):
        obj = json.loads(json.dumps(base))
        for path in varying:
            old = obj
            for k in path:
                old = old[k]
            _put(obj, path, _like(draw, old, i) if draw(st.integers(0, 19)) else draw(_OTHER))
        objs.append(obj)
    return objs


def _spoilt(draw, text):
    """The line with a small change: a character changed, left out or added (in a literal or a
    hole), a space or a separator changed, a key given twice."""
    i = draw(st.integers(1, len(text) - 2))
    how = draw(st.integers(0, 5))
    if how == 0:
        return text[:i] + draw(st.sampled_from([" ", ",", "\\", '"', "0", ".", "x", "{", "[", "é", "\t"])) + text[i + 1:]
    if how == 1:
        return text[:i] + text[i + 1:]
    if how == 2:
        return text[:i] + draw(st.sampled_from([" ", "0", "-", "e", ".5", '\\"', "\\u0041", "{}"])) + text[i:]
    if how == 3:
        return text.replace(", ", ",", 1) if draw(st.booleans()) else text.replace('": ', '":  ', 1)
    if how == 4:  # a member's key renamed to the key before it
        keys = [m for m in re.finditer(r'"([^"\\]*)": ', text)]
        if len(keys) >= 2:
            a, b = keys[:2] if draw(st.booleans()) else keys[-2:]
            return text[:b.start()] + a.group() + text[b.end():]
        return text
    return text.replace("0", "-0", 1) if draw(st.booleans()) else text.replace("1", "01", 1)


@settings(max_examples=600, deadline=None)
@given(_shaped_lines(), st.data())
def test_templates_read_what_json_reads(objs, data):
    """Lines of one shape (matched whole against a template once two of them were read piece by
    piece), canonical or spoilt (near misses of the template: a literal changed, a hole holding an
    escape, a float, a nested value or a space), read as the JSON decoder reads them and only
    when canonical; the values counted are YAML's; every line's object and parts are its own."""
    reader = _reader()
    own = set()
    kept = []  # (their ids stay theirs)
    for obj in objs:
        text = yamlfile._canonical(obj)
        texts = [text, text]
        if data.draw(st.booleans()):
            texts.append(_spoilt(data.draw, text))
        for t in texts:
            before = reader.count
            got = reader.read("- " + t, 2)
            if got is None:
                assert reader.count == before
                assert not (_canonical_text(t) and "\\" not in t and "." not in t and "e" not in t.lower()), t
                continue
            assert _canonical_text(t), t
            assert got == json.loads(t)
            assert yamlfile._canonical(got) == t
            assert reader.count - before == _yaml_values(got)
            mine = [id(got)] + [id(v) for v in got.values() if isinstance(v, dict)]
            assert not own.intersection(mine)
            own.update(mine)
            kept.append(got)


def test_replicas_are_matched_by_a_template_and_share_their_equal_values():
    """After two replicas read piece by piece, the others are matched by their template; a value
    with a hole equal in two lines is one object, and a changed literal is read piece by piece."""
    reader = _reader()

    def pod(i):
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"web-{i}", "labels": {"app": f"web-{i % 2}"}, "uid": str(i)},
                "spec": {"containers": [{"name": "c", "image": f"img:{i % 3}"}], "nodeName": f"n{i % 4}",
                         "priority": i, "tolerations": [{"key": "k", "operator": "Exists"}]},
                "status": {"podIPs": [{"ip": f"10.0.0.{i}"}], "ready": i % 2 == 0}}

    got = []
    for i in range(40):
        line = "- " + yamlfile._canonical(pod(i))
        got.append(reader.read(line, 2))
        assert got[-1] == pod(i)
    assert reader.templates.hits >= 36
    late = got[10:]
    for a in late:
        for b in late:
            for part, key in (("metadata", "labels"), ("spec", "containers"), ("spec", "tolerations")):
                assert (a[part][key] is b[part][key]) == (a[part][key] == b[part][key])
    hits = reader.templates.hits
    changed = "- " + yamlfile._canonical(pod(50)).replace('"Exists"', '"Equal"')
    assert reader.read(changed, 2) == json.loads(changed[2:])
    assert reader.templates.hits == hits  # (a literal of the template changed)
    escaped = "- " + yamlfile._canonical(pod(51)).replace("web-51", 'web-\\"51')
    assert reader.read(escaped, 2) is None


def test_a_template_is_tried_on_lines_of_new_lengths_and_templates_of_many_shapes():
    """Lines of several shapes, interleaved, of lengths each template has not met: read as the
    JSON decoder reads them."""
    reader = _reader()
    shapes = [lambda i, k=k: {"kind": "K", "metadata": {"name": "n" * (i % 7) + str(i)}, "spec": {f"f{k}": [k, {"v": i}]}}
              for k in range(10)]
    for i in range(300):
        obj = shapes[i % len(shapes)](i)
        assert reader.read(yamlfile._canonical(obj)) == obj
    assert reader.templates.hits >= 150


def test_reading_makes_no_reference_cycle():
    """A load's objects are read while the collector is paused and frozen afterwards
    (harness/gcpause.py): a cycle made while reading (a template's tables held by one) would be
    kept until the run ends."""
    import gc

    gc.collect()
    gc.disable()
    try:
        reader = _reader()
        for i in range(30):
            obj = {"kind": "Pod", "metadata": {"name": f"p{i}"}, "spec": {"c": [{"image": f"i{i % 3}"}]},
                   "status": {"ips": [{"ip": f"10.0.0.{i}"}]}}
            assert reader.read(yamlfile._canonical(obj)) == obj
        assert reader.templates.hits > 20
        del reader
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_an_integer_too_long_to_convert_in_a_hole_is_not_read():
    """int() refuses more than sys.get_int_max_str_digits() digits (as the JSON decoder does):
    such a line is not read here, and nothing is raised."""
    reader = _reader()
    for i in range(5):
        obj = {"kind": "K", "metadata": {"name": f"n{i}"}, "spec": {"n": i + 10}}
        assert reader.read(yamlfile._canonical(obj)) == obj
    assert reader.templates.hits >= 2
    line = yamlfile._canonical({"kind": "K", "metadata": {"name": "n9"}, "spec": {"n": 1}}).replace('"n": 1', '"n": ' + "7" * 5000)
    assert reader.read(line) is None
