"""A case's equal values held once (harness/sharing.py): the objects are equal to those read
without sharing, each object's top levels are its own, and every run's outcome is the same as
with nothing shared."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from harness.case.loader import load_case
from harness.case.runner import run_case
from harness.errors import CaseError
from harness.sharing import SHARED_KINDS, ValueTable, private
from harness.yamlfile import json_line, load_yaml_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "tests", "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)
from shared_values import SharedValuesWatch  # noqa: E402

_text = st.sampled_from(["a", "b", "1", "true", "x y", ""])
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, -0.0, 1.0, 2.5]), _text)
_value = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(_text, inner, max_size=3)),
                      max_leaves=12)


def _same(a, b) -> bool:
    """Equal, with the same types all the way down (1, 1.0 and True are equal in Python)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return a == b


def _containers(v, out, depth=0, top=2):
    """id -> (depth) of the dicts and lists of v."""
    if isinstance(v, (dict, list)):
        out.setdefault(id(v), []).append(depth)
        for x in (v.values() if isinstance(v, dict) else v):
            _containers(x, out, depth + 1, top)
    return out


_object = st.builds(
    lambda kind, name, labels, spec, status: {"apiVersion": "v1", "kind": kind,
                                              "metadata": {"name": name, "labels": labels},
                                              "spec": spec, "status": status},
    st.sampled_from(["Pod", "Node", "ConfigMap"]), st.sampled_from(["n1", "n2"]),
    st.dictionaries(_text, _text, max_size=2), st.dictionaries(_text, _value, max_size=3),
    st.dictionaries(_text, _value, max_size=3))


@settings(max_examples=300, deadline=None)
@given(st.lists(_object, max_size=6), st.booleans())
def test_shared_objects_equal_the_plain_ones_and_own_their_top_levels(objs, as_json):
    """Read as JSON lines (the decoder's hook) or built by YAML (share), each object the case
    holds is the one read without sharing, type for type; no two objects hold the same object,
    metadata, spec or status mapping; objects of other kinds than Pod and Node share nothing."""
    values = ValueTable()
    if as_json:
        import harness.yamlfile as yf

        lines = [json_line(o) for o in objs]
        if any(line is None for line in lines):
            return
        text = "cluster:\n" + "".join(f"- {line}\n" for line in lines) if lines else "cluster: []\n"
        data = yf.load_yaml_text(text, "c.yaml", CaseError, values=values)
        got = [values.own(o, False) for o in data["cluster"]]
    else:
        got = [values.own(copy.deepcopy(o), False) for o in objs]
    assert len(got) == len(objs) and all(_same(g, o) for g, o in zip(got, objs))
    seen = {}
    for i, g in enumerate(got):
        for cid, depths in _containers(g, {}).items():
            seen.setdefault(cid, []).extend((i, d) for d in depths)
    for cid, where in seen.items():
        holders = {i for i, _ in where}
        if len(where) > 1:
            assert all(d >= 2 for _, d in where), "a top level held twice"
            assert all(got[i]["kind"] in SHARED_KINDS for i in holders)


@settings(max_examples=300, deadline=None)
@given(_value)
def test_share_and_private_keep_every_value_and_type(v):
    values = ValueTable()
    assert _same(values.share(v), v)
    assert _same(values.share(copy.deepcopy(v), depth=2), v)
    p = private(v)
    assert _same(p, v)
    assert not (set(_containers(p, {})) & set(_containers(v, {})))


def _run_all(paths, shared: bool, monkeypatch):
    """Each case's --json result, read line by line with sharing, or whole with every value its
    own."""
    import harness.yamlfile as yf

    if shared:
        monkeypatch.setattr(yf, "STREAM_FROM", 0)
    else:
        monkeypatch.setattr(ValueTable, "pairs_hook", lambda self, pairs: dict(pairs))
        monkeypatch.setattr(ValueTable, "shared_list", lambda self, v: v)
        monkeypatch.setattr(ValueTable, "own", lambda self, obj, copy_objects: private(obj))
    out = {}
    for p in paths:
        res = run_case(load_case(p))
        out[p] = json.dumps(res.to_json(), sort_keys=True, default=str)
    monkeypatch.undo()
    return out


def _case_files(top):
    found = []
    for root, dirs, names in os.walk(top):
        dirs.sort()
        found += [os.path.join(root, n) for n in sorted(names) if n.endswith(".yaml")]
    return found


@pytest.mark.parametrize("top", ["cases", "../shared/verified-versions"])
def test_every_case_runs_the_same_with_values_shared(top, monkeypatch):
    """Equivalence with the plain path: every case of cases/ and every verified case gives the
    same result (bindings, events, attempts, statuses) with its values shared as without."""
    folder = os.path.join(ROOT, top)
    if not os.path.isdir(folder):
        pytest.skip(f"no {top}")
    from harness.case.loader import classify_file

    paths = [p for p in _case_files(folder) if classify_file(p)[0] == "case"]
    assert paths
    assert _run_all(paths, True, monkeypatch) == _run_all(paths, False, monkeypatch)


def test_an_imported_dump_runs_the_same_with_values_shared(tmp_path, monkeypatch):
    """A generated dump (replicas of the same shapes: most values shared), imported and run."""
    dump, case = tmp_path / "dump.yaml", tmp_path / "case.yaml"
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "dumps", "generate_big_dump.py"),
                    "--nodes", "30", "--pods", "600", "--pending", "40", "-o", str(dump)], check=True)
    from harness.case.importer import import_dump

    assert import_dump(str(dump), str(case), progress=False) == 0
    values = ValueTable()
    data = load_yaml_file(str(case), CaseError, values=values)
    pods = [values.own(o, False) for o in data["cluster"] if o.get("kind") == "Pod"]
    # replicas share their containers, volumes and tolerations
    assert len({id(p["spec"]["volumes"]) for p in pods}) < len(pods) // 10
    assert _run_all([str(case)], True, monkeypatch) == _run_all([str(case)], False, monkeypatch)


_line = st.one_of(
    st.dictionaries(_text, _value, max_size=4).map(lambda o: "- " + (json_line(o) or "{}")),
    st.text(alphabet='{}[]":, 0123456789.eE+-\\u"nultrefa\t\x85\u2028', max_size=20).map(lambda t: "- {" + t + "}"),
    st.sampled_from(["cluster:", "pods:", "- a", "  b: 1", "x: [1, 2]", "# c", "", "seed: 1", "- {a: 1}"]))


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_line, max_size=8), nl=st.sampled_from(["\n", "\r\n"]), final_nl=st.booleans(),
       head=st.sampled_from([b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\x80"]))
def test_a_file_read_line_by_line_reads_as_the_whole_text(tmp_path_factory, lines, nl, final_nl, head):
    """load_yaml_file with a ValueTable reads a file line by line (yamlfile._stream_json_lines)
    when it is large: the value, or the error, is that of the file read whole and unshared."""
    import harness.yamlfile as yf

    body = nl.join(lines) + (nl if final_nl else "")
    path = tmp_path_factory.mktemp("s") / "c.yaml"
    if head == b"\xff\xfe":
        path.write_bytes(head + body.encode("utf-16-le"))
    else:
        path.write_bytes(head + body.encode("utf-8"))

    def read(values, stream_from):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(yf, "STREAM_FROM", stream_from)
            try:
                return load_yaml_file(str(path), CaseError, values=values)
            except CaseError as e:
                return ("error", str(e))

    want = read(None, 1 << 40)
    got = read(ValueTable(), 0)
    assert _same(got, want) if not isinstance(want, tuple) else got == want


def test_a_large_case_is_never_held_whole(tmp_path, monkeypatch):
    """A case of JSON lines is read line by line: its whole text is never decoded."""
    import harness.yamlfile as yf

    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
             "spec": {"containers": [{"name": "c", "image": "i"}]}} for i in range(5000)]
    path = tmp_path / "c.yaml"
    path.write_text("pods:\n" + "".join(f"- {json_line(p)}\n" for p in pods) + "expect: {}\n")
    monkeypatch.setattr(yf, "STREAM_FROM", 0)

    def whole(data):
        raise AssertionError("read whole")

    monkeypatch.setattr(yf, "decode_yaml_bytes", whole)
    values = ValueTable()
    data = load_yaml_file(str(path), CaseError, values=values)
    got = [values.own(p, False) for p in data["pods"]]
    assert got == pods and len({id(p["spec"]["containers"]) for p in got}) == 1


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab\n\r\x85\u2028\u2029\x0b\x0c\x1cé\U0001f600", max_size=30), chunk=st.integers(1, 8))
def test_a_file_read_in_chunks_gives_the_lines_of_its_text(tmp_path_factory, text, chunk):
    import io

    import harness.yamlfile as yf

    try:
        got = list(yf._file_lines(io.BytesIO(text.encode("utf-8")), chunk=chunk))
    except yf._NotStreamed:
        got = None
    split_whole = not any(c in text for c in "\r\x85\u2028\u2029")
    assert got == (text.split("\n") if split_whole else None)


@pytest.mark.parametrize("data", [b"a\n\xff\n", b"a\n\xc3", b"\xed\xa0\x80\n", "é\n".encode("utf-16")])
def test_a_file_not_in_utf8_is_not_read_line_by_line(data):
    import io

    import harness.yamlfile as yf

    with pytest.raises(yf._NotStreamed):
        list(yf._file_lines(io.BytesIO(data), chunk=2))


def test_pod_level_requests_are_defaulted_per_pod_when_their_resources_are_shared(tmp_path):
    """Two pods with the same spec.resources (shared) but other containers: each pod's
    pod-level requests come from its own containers (defaultPodRequests), as unshared."""
    from harness.case.runner import CaseRun

    def pod(name, cpu):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                "spec": {"resources": {"limits": {"cpu": "4", "memory": "1Gi"}},
                         "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}
    path = tmp_path / "c.yaml"
    path.write_text("apiVersion: schedharness/v1alpha1\nkind: Case\nmetadata: {name: c}\ncluster:\n"
                    + "".join(f"- {json_line(o)}\n" for o in (node, pod("a", "1"), pod("b", "2")))
                    + "expect: {}\n")
    run = CaseRun(load_case(str(path)))
    got = {p.name: p.spec["resources"]["requests"]["cpu"] for p in run.cluster.list("Pod")}
    assert got == {"a": "1", "b": "2"}


@pytest.mark.parametrize("top", ["cases", "../shared/verified-versions", "../shared/verified-next"])
def test_no_shared_value_is_ever_written(top, monkeypatch):
    """Every case of cases/ and every verified case: after the API server admitted a Pod or a
    Node (built with the case, or written later by a step, the scheduler or a controller), no
    value below its metadata/spec/status (where sharing puts values several objects hold)
    changes while the case runs, and what was admitted is what the API server admits when
    nothing is shared. The random cases of test_property_mutated_cases.py and
    tests/case/test_steps_properties.py are held to the same rule (tests/sample/shared_values.py)."""
    folder = os.path.join(ROOT, top)
    if not os.path.isdir(folder):
        pytest.skip(f"no {top}")
    from harness.case.loader import classify_file

    paths = [p for p in _case_files(folder) if classify_file(p)[0] == "case"]
    assert paths
    for p in paths:
        shared = SharedValuesWatch()
        run_case(load_case(p), hooks=shared)
        written = shared.written()
        assert not written, (p, written[:1])
        with monkeypatch.context() as mp:
            mp.setattr(ValueTable, "pairs_hook", lambda self, pairs: dict(pairs))
            mp.setattr(ValueTable, "shared_list", lambda self, v: v)
            mp.setattr(ValueTable, "own", lambda self, obj, copy_objects: private(obj))
            plain = SharedValuesWatch()
            run_case(load_case(p), hooks=plain)
        assert shared.admitted == plain.admitted, p
