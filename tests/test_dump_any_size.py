"""`import` reads a dump of any size (item by item), bounding each item instead (bytes, values,
depth), and refuses, in one line naming the output, a case larger than `run` reads. The
bounds are lowered here (monkeypatch) so that no test writes a GiB file."""

from __future__ import annotations

import json
import os

import pytest

from harness import yamlfile
from harness.case import dumps
from harness.case.importer import import_dump
from harness.cli import main
from harness.errors import UserError

from test_dump_fast_path import _generated_dump  # tests/ is on sys.path (rootdir-less test modules)


def _same_case(tmp_path, dump: str, monkeypatch, limit: int) -> None:
    """The dump imports to the same case with the whole-file bound below its size as with the
    bound left alone."""
    assert import_dump(dump, str(tmp_path / "unbounded.yaml"), name="d", progress=False) == 0
    case = (tmp_path / "unbounded.yaml").read_bytes()
    items = list(dumps.iter_dump_items(dump, UserError))
    assert os.path.getsize(dump) > limit >= len(case)
    with monkeypatch.context() as m:
        m.setattr(yamlfile, "MAX_BYTES", limit)
        assert import_dump(dump, str(tmp_path / "bounded.yaml"), name="d", progress=False) == 0
        assert (tmp_path / "bounded.yaml").read_bytes() == case
        for fast in (True, False):  # both readers: no bound on the whole dump
            assert list(dumps.iter_dump_items(dump, UserError, fast=fast)) == items


@pytest.mark.parametrize("as_json", [False, True])
def test_dump_over_the_file_bound_imports_the_same_case(tmp_path, monkeypatch, as_json):
    dump = _generated_dump(tmp_path, json=as_json)
    # the case drops managedFields and the JSON's indentation: smaller than the dump
    assert import_dump(dump, str(tmp_path / "probe.yaml"), name="d", progress=False) == 0
    case_size = os.path.getsize(tmp_path / "probe.yaml")
    assert case_size < os.path.getsize(dump)
    _same_case(tmp_path, dump, monkeypatch, case_size)


def _dump_with_big_item(tmp_path, as_json: bool, big: int) -> str:
    objs = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}} for i in range(3)]
    objs[1]["metadata"]["annotations"] = {"a": "x" * big}
    if as_json:
        text = json.dumps({"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}},
                          indent=4) + "\n"
        path = tmp_path / "dump.json"
    else:
        import yaml

        text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                               "items": objs}, sort_keys=False, width=1 << 30)
        path = tmp_path / "dump.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("fast", [True, False])
def test_an_item_over_the_byte_bound_is_refused_naming_it(tmp_path, monkeypatch, as_json, fast):
    monkeypatch.setattr(dumps, "MAX_ITEM_BYTES", 5000)
    small = _dump_with_big_item(tmp_path, as_json, 100)
    assert len(list(dumps.iter_dump_items(small, UserError, fast=fast))) == 3
    dump = _dump_with_big_item(tmp_path, as_json, 6000)
    with pytest.raises(UserError) as e:
        list(dumps.iter_dump_items(dump, UserError, fast=fast))
    assert e.value.key == "items[1]"
    assert "too large: more than 5000 bytes in one object" in str(e.value)


def test_an_item_over_the_byte_bound_ends_import_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(dumps, "MAX_ITEM_BYTES", 5000)
    dump = _dump_with_big_item(tmp_path, False, 6000)
    out = tmp_path / "case.yaml"
    assert main(["import", dump, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {dump}: items[1]: too large") and "Traceback" not in err[0]
    assert not out.exists()


def test_an_item_of_one_line_over_the_bound_is_not_read_whole(tmp_path, monkeypatch):
    """A line longer than an item is read up to the bound only (and refused)."""
    monkeypatch.setattr(dumps, "MAX_ITEM_BYTES", 5000)
    path = tmp_path / "dump.yaml"
    path.write_text("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n, "
                    "annotations: {a: " + "x" * 20000 + "}}}\n")
    with pytest.raises(UserError) as e:
        list(dumps.iter_dump_items(str(path), UserError))
    assert e.value.key == "items[0]"


@pytest.mark.parametrize("to_stdout", [False, True])
def test_a_case_over_what_run_reads_is_refused_before_it_is_written(tmp_path, monkeypatch, capsys, to_stdout):
    dump = _generated_dump(tmp_path)
    assert import_dump(dump, str(tmp_path / "probe.yaml"), progress=False) == 0
    size = os.path.getsize(tmp_path / "probe.yaml")
    capsys.readouterr()
    out = tmp_path / "case.yaml"
    # exactly the case's size: imported (the count is exact); one byte less: refused
    monkeypatch.setattr(yamlfile, "MAX_BYTES", size)
    assert main(["import", dump, "-o", str(out)]) == 0
    out.unlink()
    capsys.readouterr()
    monkeypatch.setattr(yamlfile, "MAX_BYTES", size - 1)
    assert main(["import", dump] + ([] if to_stdout else ["-o", str(out)])) == 2
    err = _refused(capsys, tmp_path, out)
    shown = "stdout" if to_stdout else str(out)
    assert err.startswith(f"error: {shown}: -o: the case would be over ") and f"({size - 1} bytes)" in err


def _refused(capsys, tmp_path, out) -> str:
    """The one error line of a refused import: nothing written, no temporary file left."""
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1, err
    assert not out.exists() and captured.out == ""
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    return err[0]


@pytest.mark.parametrize("bound, value, message", [("MAX_BYTES", 20_000, "the case would be over"),
                                                   ("MAX_OBJECTS", 30, "more than 30 objects")])
def test_a_case_far_over_a_bound_stops_early(tmp_path, monkeypatch, bound, value, message):
    """import stops as soon as the case passes a bound (its bytes, its objects), not after
    reading the whole dump."""
    dump = _generated_dump(tmp_path, pods=400)
    read = []
    real = dumps.iter_dump_items

    def counting(*a, **kw):
        for item in real(*a, **kw):
            read.append(item[0])
            yield item

    monkeypatch.setattr(dumps, "iter_dump_items", counting)
    monkeypatch.setattr(yamlfile, bound, value)
    with pytest.raises(UserError, match=message):
        import_dump(dump, str(tmp_path / "case.yaml"), progress=False)
    assert 0 < len(read) < 100


@pytest.mark.parametrize("as_json", [False, True])
def test_an_item_of_megabytes_in_few_values_stays_on_the_fast_path(tmp_path, as_json):
    """An item longer than MAX_ITEM_VALUES bytes but of few values (a 2 MB annotation) is read
    by the fast reader (the event-by-event one would read the whole dump again), as the slow
    reader reads it."""
    dump = _dump_with_big_item(tmp_path, as_json, 2_000_000)
    fast = list(dumps._fast_list_items(dump))  # no _Fallback
    assert fast == list(dumps.iter_dump_items(dump, UserError, fast=False))
    assert len(fast[1][1]["metadata"]["annotations"]["a"]) == 2_000_000


@pytest.mark.parametrize("to_stdout", [False, True])
def test_a_case_of_more_objects_than_run_reads_is_refused_before_it_is_written(tmp_path, monkeypatch, capsys,
                                                                               to_stdout):
    """yamlfile.MAX_OBJECTS (the case loader's bound on cluster and pods) is checked as the
    dump is read: exactly that many objects import; one more is one line naming `-o`, exit 2,
    nothing written."""
    import yaml

    from harness.case import loader

    dump = _generated_dump(tmp_path)
    assert import_dump(dump, str(tmp_path / "probe.yaml"), progress=False) == 0
    case = yaml.safe_load((tmp_path / "probe.yaml").read_text())
    n = len(case["cluster"]) + len(case["pods"])
    capsys.readouterr()
    out = tmp_path / "case.yaml"
    monkeypatch.setattr(yamlfile, "MAX_OBJECTS", n)
    monkeypatch.setattr(loader, "MAX_OBJECTS", n)
    assert main(["import", dump, "-o", str(out)]) == 0
    out.unlink()
    capsys.readouterr()
    monkeypatch.setattr(yamlfile, "MAX_OBJECTS", n - 1)
    monkeypatch.setattr(loader, "MAX_OBJECTS", n - 1)
    assert main(["import", dump] + ([] if to_stdout else ["-o", str(out)])) == 2
    shown = "stdout" if to_stdout else str(out)
    assert _refused(capsys, tmp_path, out) == (
        f"error: {shown}: -o: the case would hold more than {n - 1} objects in cluster and pods (the limit is "
        f"{n - 1}), the most `run` reads: import a part of the cluster (e.g. fewer namespaces)")


def test_import_holds_no_line_of_the_case_while_it_reads(tmp_path, monkeypatch, capsys):
    """The case's lines go to temporary files as the dump is read (harness/case/case_spool.py):
    what import holds once the dump is read (traced bytes) is well under the case's size (here
    200 pods of a 20 KB annotation each, a line too long for the JSON reader to remember); the
    case is the same to a file and to standard output, and no temporary file stays."""
    import tracemalloc

    from harness.case import case_spool

    pods = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"p{i}", "namespace": "default", "annotations": {"a": f"{i:05d}" * 4000}},
             "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "x"}]}} for i in range(200)]
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "300"}}}
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "items": [node] + pods, "kind": "List",
                                "metadata": {"resourceVersion": ""}}, indent=4) + "\n")
    seen = {}
    real = case_spool.CaseSpool.write_case

    def spy(self, *a, **kw):
        seen["held"] = tracemalloc.get_traced_memory()[0]
        return real(self, *a, **kw)

    assert import_dump(str(dump), None, progress=False) == 0  # (the modules it imports, before tracing)
    to_stdout = capsys.readouterr().out
    monkeypatch.setattr(case_spool.CaseSpool, "write_case", spy)
    out = tmp_path / "case.yaml"
    tracemalloc.start()
    try:
        assert import_dump(str(dump), str(out), progress=False) == 0
    finally:
        tracemalloc.stop()
    assert os.path.getsize(out) > 4_000_000 and seen["held"] < os.path.getsize(out) / 8
    assert to_stdout == out.read_text()
    assert sorted(os.listdir(tmp_path)) == ["case.yaml", "dump.json"]
