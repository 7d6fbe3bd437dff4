"""The HTML report of `run --html`, rendered in a real headless Chromium: the page shows the
failing case open with its decision table, and needs nothing from outside the file."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib

import numpy as np

import pytest
import yaml

from harness.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PINNED = os.path.join(ROOT, "cases", "decisions", "image-locality-scores-pinned.yaml")
STEPS = os.path.join(ROOT, "cases", "decisions", "filter-verdicts-and-attempt-history.yaml")

PICKED_ROW = (0xE8, 0xF7, 0xE8)  # tr.picked background in report.html.j2
FAIL_BADGE = (0xD6, 0x27, 0x28)


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no chromium to render the report in (.ci/run installs Debian's chromium)")


def _headless(tmp_path, *args):
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run",
           f"--user-data-dir={tmp_path / 'chromium-profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def _png_pixels(path):
    """The RGB pixels (height x width x 3) of an 8-bit non-interlaced PNG (what Chromium's
    --screenshot writes)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, width * bpp + 1)
    prev = np.zeros(width * bpp, dtype=np.int64)
    rows = []
    for y in range(height):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int64)
        if f == 1:  # Sub: a running sum per channel
            line = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) & 255
        elif f == 2:  # Up
            line = (line + prev) & 255
        elif f in (3, 4):  # Average, Paeth: byte by byte
            out = line.tolist()
            up = prev.tolist()
            for i in range(len(out)):
                a = out[i - bpp] if i >= bpp else 0
                b, c = up[i], (up[i - bpp] if i >= bpp else 0)
                if f == 3:
                    out[i] = (out[i] + (a + b) // 2) & 255
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    out[i] = (out[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            line = np.array(out, dtype=np.int64)
        rows.append(line)
        prev = line
    return np.stack(rows).reshape(height, width, bpp)[:, :, :3]


def _shows(pixels, color) -> bool:
    return bool((pixels == np.array(color)).all(axis=2).any())


@pytest.fixture
def report(tmp_path):
    """The report of a run of three cases: the pinned-scores case failing (NodeResourcesFit's
    weight raised to 20 reverses its order), it passing, and a case with steps."""
    cases = tmp_path / "cases"
    cases.mkdir()
    data = yaml.safe_load(open(PINNED))
    data["metadata"]["name"] = "weight-20-reverses-the-order"
    data["config"] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                      "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                          "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 20}]}}}]}
    (cases / "a-failing.yaml").write_text(yaml.safe_dump(data))
    shutil.copy(STEPS, cases / "b-steps.yaml")
    path = tmp_path / "report.html"
    assert main(["run", "--html", str(path), str(cases)]) == 1
    return path


def test_report_is_self_contained(report):
    html = report.read_text()
    assert not re.search(r"\b(src|href)\s*=", html)
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", html)
    assert "<script" not in html


def test_failing_case_decision_table_renders_in_headless_chromium(report, tmp_path):
    dom = _headless(tmp_path, "--dump-dom", report.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    # the failing case is open, first, and holds the per-node, per-plugin table of web's attempt
    m = re.search(r'<details[^>]*data-case="weight-20-reverses-the-order"[^>]*>(.*?)</details>', dom.stdout, re.S)
    assert m and " open" in m.group(0)[:200]
    assert m.start() < dom.stdout.index('data-case="filter-verdicts-and-attempt-history"')
    table = re.search(r'<table class="decision".*?</table>', m.group(1), re.S).group(0)
    assert "<th>NodeResourcesFit</th>" in table
    picked = re.search(r'<tr class="feasible picked">(.*?)</tr>', table, re.S).group(1)
    assert "<td>node-c</td>" in picked and ">2140<" in picked
    # the case with steps draws its attempt timeline
    assert 'aria-label="attempt timeline"' in dom.stdout

    shot = tmp_path / "report.png"
    run = _headless(tmp_path, f"--screenshot={shot}", "--window-size=1000,800", report.as_uri())
    assert run.returncode == 0 and shot.exists(), run.stderr[-2000:]
    pixels = _png_pixels(shot)
    assert _shows(pixels, FAIL_BADGE)  # the FAIL badge
    assert _shows(pixels, PICKED_ROW)  # the decision table's picked row, on screen
