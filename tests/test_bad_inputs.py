"""The bad-input corpus (tests/bad_inputs/, written by its generate.py): every file is refused by
`run` and by `validate` alike with exit code 2 and one line naming the file and the key, no
traceback, in under a second."""

from __future__ import annotations

import json
import os
import time

import pytest

from harness.cli import main

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad_inputs")
with open(os.path.join(HERE, "EXPECTED.json")) as f:
    EXPECTED = json.load(f)


def test_corpus_is_large_and_complete():
    assert len(EXPECTED) >= 300
    on_disk = {fn for fn in os.listdir(HERE) if fn.endswith(".yaml")}
    assert on_disk == set(EXPECTED)


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input_is_refused_on_one_line(name, command, capsys):
    path = os.path.join(HERE, name)
    t0 = time.process_time()
    rc = main([command, path])
    elapsed = time.process_time() - t0
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2, out + err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith(f"error: {path}"), lines[0]
    assert EXPECTED[name] in lines[0], lines[0]
    assert len(lines[0]) < 800, lines[0]
    # refused without hanging (an unbounded alias expansion or nesting would take minutes of CPU);
    # not a speed measure: CPU time of this process, so other work on the machine does not count,
    # and the first call also pays imports and the registry
    assert elapsed < 10.0, f"{name}: {elapsed:.2f}s"
