"""What reading a file costs in memory: outcomes (traced bytes), never timings."""

from __future__ import annotations

import os
import threading
import tracemalloc

from harness.errors import CaseError
from harness.yamlfile import load_yaml_file


def test_reading_a_small_file_allocates_about_its_size(tmp_path):
    p = tmp_path / "small.yaml"
    p.write_text("a: 1\nb: [x, y]\n")
    tracemalloc.start()
    try:
        assert load_yaml_file(str(p), CaseError) == {"a": 1, "b": ["x", "y"]}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024  # not a buffer of the 1 GiB limit


def test_a_stream_is_read_to_its_end(tmp_path):
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    text = "items:\n" + "".join(f"- {{name: n{i}}}\n" for i in range(20000))

    def write():
        with open(fifo, "w") as f:
            f.write(text)

    t = threading.Thread(target=write)
    t.start()
    try:
        data = load_yaml_file(fifo, CaseError, streams=True)
    finally:
        t.join()
    assert len(data["items"]) == 20000 and data["items"][-1] == {"name": "n19999"}
