"""Objects written one per line as JSON (yamlfile.json_line, what `import` writes for a big
cluster) read back as YAML reads them: the JSON fast path never changes a value or an error."""

import yaml
from hypothesis import given, settings, strategies as st

from harness.errors import UserError
from harness.yamlfile import _COMPACT, _StrictLoader, _canonical, _check_bounds, _json_values_bound, json_line, load_yaml_text

_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
_scalar = st.one_of(st.none(), st.booleans(), st.integers(), _text,
                    st.floats(allow_nan=True, allow_infinity=True))
_value = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(_text, inner, max_size=4)),
                      max_leaves=20)
_obj = st.dictionaries(_text, _value, max_size=5)


def _yaml(text):
    return yaml.load(text, Loader=_StrictLoader)


def _reads_as_yaml(text):
    """load_yaml_text gives YAML's value, or an error where YAML gives one."""
    try:
        want = _yaml(text)
    except yaml.YAMLError:
        want = UserError
    try:
        got = load_yaml_text(text, "t.yaml", UserError)
    except UserError:
        got = UserError
    assert got == want


@settings(max_examples=200, deadline=None)
@given(_obj)
def test_a_json_line_reads_back_as_yaml_reads_it(obj):
    line = json_line(obj)
    if line is None:
        return
    assert "\n" not in line
    assert _yaml("- " + line) == [obj]
    assert load_yaml_text("x: 1\nitems:\n- " + line + "\n", "t.yaml", UserError) == {"x": 1, "items": [obj]}


def compact_line(obj):
    """`obj` in JSON's compact form (separators "," and ":", as a generator may write it), or
    "{}" when json_line has no line for it."""
    return _canonical(obj, _COMPACT) if json_line(obj) else "{}"


@settings(max_examples=200, deadline=None)
@given(_obj)
def test_a_compact_json_line_reads_as_yaml_reads_it(obj):
    """A line in JSON's compact form is read by the JSON decoder (not left to YAML) and gives
    YAML's value, with the value table or without."""
    from harness import yamlfile
    from harness.sharing import ValueTable

    line = json_line(obj)
    if line is None:
        return
    compact = _canonical(obj, _COMPACT)
    assert _yaml("- " + compact) == [obj]
    text = "x: 1\nitems:\n- " + compact + "\n"
    for values in (None, ValueTable()):
        split = yamlfile._split_json_lines(text, values)
        assert split is not None and split[1] == [obj]
        assert load_yaml_text(text, "t.yaml", UserError, values=values) == {"x": 1, "items": [obj]}
    assert _json_values_bound(compact) >= _yaml_values(obj)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_obj.map(lambda o: json_line(o) or "{}"), _obj.map(compact_line),
                          st.text(alphabet='{}[]":, 0123456789.eE+-\\u"nultrefa\t\x85', max_size=30)
                          .map(lambda t: "{" + t + "}")), min_size=1, max_size=6))
def test_any_lines_read_as_yaml_reads_them(bodies):
    """Canonical or not, valid or not: the result (or the error) is YAML's."""
    text = "kind: K\ncluster:\n" + "".join(f"- {b}\n" for b in bodies) + "pods: []\n"
    _reads_as_yaml(text)


def _yaml_values(value) -> int:
    """What _check_bounds counts: every container, key and scalar."""
    if isinstance(value, dict):
        return 1 + len(value) + sum(_yaml_values(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_yaml_values(v) for v in value)
    return 1


@settings(max_examples=500, deadline=None)
@given(_obj)
def test_the_values_bound_of_a_json_line_is_never_below_yamls_count(obj):
    """The fast path refuses nothing YAML would accept: its bound is at least YAML's count."""
    line = json_line(obj)
    if line is None:
        return
    bound = _json_values_bound(line)
    assert bound >= _yaml_values(obj)
    assert _check_bounds(line, max_values=bound) is None


def test_objects_that_have_no_json_line():
    assert json_line({"d": 1e16}) is None  # json writes 1e+16: a string in YAML 1.1
    assert json_line({"x": float("nan")}) is None
    assert json_line({None: 1}) is None  # json would write the key "null"
    assert json_line({"k" * 2000: 1}) is None  # longer than a YAML simple key may be
    assert json_line({"a": ["x\u2028y\x7f"], "b": 1.5}) is not None


def test_a_placeholder_lookalike_in_a_quoted_scalar_is_yaml_read():
    # a `- {` line inside a multi-line quoted scalar belongs to the scalar, not to a sequence
    text = 'a: "one\n- {"b": 1}\n"\nc:\n- {"d": 2}\n'
    _reads_as_yaml(text)


def test_keys_as_long_as_yaml_allows():
    for key in ("k" * 880, '"' * 430, "k" * 1100, '"' * 600, "\u2028" * 200):
        line = json_line({key: 1})
        try:
            want = _yaml("- " + (line or "{}"))
        except yaml.YAMLError:
            want = None
        assert line is None or want == [{key: 1}]
        for sep in ((", ", ": "), _COMPACT):  # a line YAML refuses is left to YAML, which says so
            _reads_as_yaml("items:\n- " + _canonical({"a": 1, key: 1}, sep) + "\n")


_ENTRY = st.one_of(_obj.map(lambda o: "- " + (json_line(o) or "{}")), _obj.map(lambda o: "- " + compact_line(o)),
                   st.just("- plain"), st.just("- {a: 1}"),
                   st.just("# a comment"), st.just(""), st.just("-   {}"), st.just('  - {"nested": 1}'))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["cluster", "pods", "extra", "cluster"]),
                          st.lists(_ENTRY, max_size=6)), min_size=1, max_size=4),
       st.booleans(), st.booleans())
def test_runs_of_json_lines_in_several_sequences_read_as_yaml_reads_them(parts, top_list, table):
    """JSON lines in runs, in several sequences and the document's own, between YAML entries,
    comments and blank lines (a run of placeholders stands for its lines): YAML's value or
    error, with the value table (the piece reader) or without."""
    from harness.sharing import ValueTable

    if top_list:
        text = "\n".join(e for _, entries in parts for e in entries) + "\n"
    else:
        text = "".join(f"{k}:\n" + "".join(e + "\n" for e in entries) for k, entries in parts)
    try:
        want = _yaml(text)
    except yaml.YAMLError:
        want = UserError
    try:
        got = load_yaml_text(text, "t.yaml", UserError, values=ValueTable() if table else None)
    except UserError:
        got = UserError
    assert got == want


def test_runs_of_json_lines_take_the_fast_path():
    from harness import yamlfile
    from harness.sharing import ValueTable

    text = ('kind: K\ncluster:\n- {"a": 1}\n- {"a": 2}\n- {"a": 3}\n- plain\n- {"a": 4}\n'
            'pods:\n# c\n- {"b": 1}\n\n- {"b": 2}\n')
    for values in (None, ValueTable()):
        split = yamlfile._split_json_lines(text, values)
        assert split[4] == [3, 1, 1, 1]  # (a comment or a blank line ends a run)
        assert yamlfile._load_split(split) == _yaml(text)
