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


# ---- layout at 1400 px ----------------------------------------------------------------------------
# The report has no script; this test-only copy adds one that measures the laid-out page and
# writes what it found into the DOM, which --dump-dom prints.
LAYOUT_PROBE = """<script>
window.addEventListener("load", () => {
  const bad = [];
  const clips = (el) => getComputedStyle(el).overflowX !== "visible";
  const name = (el) => el.tagName.toLowerCase() + (el.className ? "." + String(el.className).split(" ").join(".") : "");
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("details:not([open]) > :not(summary)")) continue;
    let inScroller = false;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) if (clips(a)) inScroller = true;
    if (inScroller) continue;  // it scrolls inside its box
    const parent = el.parentElement, r = el.getBoundingClientRect(), p = parent.getBoundingClientRect();
    if (r.width && r.right > p.right + 1) bad.push("wider: " + name(el) + " in " + name(parent) + " " + Math.round(r.right) + " > " + Math.round(p.right));
  }
  if (document.documentElement.scrollWidth > window.innerWidth) bad.push("page scrolls sideways: " + document.documentElement.scrollWidth);
  for (const el of document.querySelectorAll(".name")) if (el.getClientRects().length > 1) bad.push("name broken: " + el.textContent);
  for (const el of document.querySelectorAll("p.caption")) {
    const cs = getComputedStyle(el.parentElement);
    const w = el.getBoundingClientRect().width;
    const p = el.parentElement.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    if (w < p - 2) bad.push("caption narrower than its box: " + Math.round(w) + " < " + Math.round(p));
  }
  let scrolled = 0;
  for (const el of document.querySelectorAll(".scroll")) if (el.scrollWidth > el.clientWidth) scrolled++;
  const out = document.createElement("pre");
  out.id = "layout-probe";
  out.textContent = JSON.stringify({bad, scrolled, width: window.innerWidth});
  document.body.appendChild(out);
});
</script>"""

LONG = "ip-10-0-{}-17.eu-west-1.compute.internal"


def _wide_case() -> dict:
    """A failing case whose decision table has a Filter column with long reasons, long node
    and pod names, and eight Score columns: wider than 1400 px."""
    nodes = []
    for i in range(4):
        name = LONG.format(100 + i)
        nodes.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                            "topology.kubernetes.io/zone": f"eu-west-1{'abc'[i % 3]}"}},
                      "spec": {"taints": [{"key": "dedicated-for-the-payments-team", "value": "true",
                                           "effect": "NoSchedule"}]} if i == 0 else {},
                      "status": {"allocatable": {"cpu": "1" if i == 1 else "8", "memory": "16Gi", "pods": "110"}}})
    labels = {"app": "checkout-service"}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "checkout-service-7d9f8b6c5d-x2kqp-with-a-long-name", "labels": labels},
           "spec": {"containers": [{"name": "c", "image": "registry.example/checkout:1.0",
                                    "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}],
                    "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 10, "preference": {"matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1b"]}]}}]},
                                 "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                                     {"weight": 5, "podAffinityTerm": {"labelSelector": {"matchLabels": labels},
                                                                       "topologyKey": "topology.kubernetes.io/zone"}}]}},
                    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                   "whenUnsatisfiable": "ScheduleAnyway",
                                                   "labelSelector": {"matchLabels": labels}}]}}
    return {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "a-wide-decision-table"},
            "kubernetesVersion": "v1.35", "cluster": nodes, "pods": [pod],
            "expect": {"bindings": {pod["metadata"]["name"]: None}}}


def test_report_fits_1400px_and_names_versions(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "a-wide.yaml").write_text(yaml.safe_dump(_wide_case()))
    data = yaml.safe_load(open(PINNED))  # v1.34
    (cases / "b-pinned.yaml").write_text(yaml.safe_dump(data))
    report = tmp_path / "report.html"
    assert main(["run", "--html", str(report), str(cases)]) == 1
    html = report.read_text()
    assert "<script" not in html
    # the header names the versions the cases ran on; each case its own
    header = re.search(r'<p class="muted" id="versions">(.*?)</p>', html).group(1)
    assert "v1.34.9: 1" in header and "v1.35.6: 1" in header and "v1.34)" not in header
    assert 'data-version="v1.35.6"' in html and 'data-version="v1.34.9"' in html
    probe = tmp_path / "probe.html"
    probe.write_text(html.replace("</body>", LAYOUT_PROBE + "</body>"))
    dom = _headless(tmp_path, "--window-size=1400,1000", "--dump-dom", probe.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    import json
    found = json.loads(re.search(r'<pre id="layout-probe">(.*?)</pre>', dom.stdout, re.S).group(1)
                       .replace("&quot;", '"').replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&"))
    assert found["width"] == 1400
    assert found["bad"] == []
    assert found["scrolled"] >= 1  # the wide table is wider than its box: it scrolls inside it
