"""SVG charts (rendered with jinja2 templates in harness/reports/templates): the sweep chart and the
attempt timeline of a case with steps. Plain SVG, no script, so that a file or an HTML report
shows it without a server."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

PANELS = [("cases passing", ["cases passing"]), ("nodes used", ["nodes used"]),
          ("requested share of used nodes (%)", ["cpu mean %", "memory mean %", "cpu max %"]),
          ("pods unbound / preemptions", ["pods unbound", "preemptions"])]
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]


def _env():
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("harness.reports", "templates"),
                              autoescape=jinja2.select_autoescape(["html", "svg", "j2"]),
                              trim_blocks=True, lstrip_blocks=True)


def render(template: str, **kw) -> str:
    return _env().get_template(template).render(**kw)


def nice_axis(lo: float, hi: float, n: int = 4, integer: bool = False) -> List[float]:
    """Ticks of an axis that fits the data range [lo, hi] (not from 0: 236 -> 227 of 267 cases
    stays visible): about n steps of 1, 2, 2.5 or 5 times a power of ten (whole steps of 1, 2
    or 5 times one for counts), the first tick at or below lo and the last at or above hi."""
    import math

    lo, hi = min(lo, hi), max(lo, hi)
    if hi - lo < 1e-9 * max(1.0, abs(hi)):  # one value (figures are rounded to 0.1)
        lo, hi = (lo - 1, hi + 1) if lo >= 1 else (lo, hi + 1)
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    if integer:
        mag = max(mag, 1)
    step = next(m * mag for m in ((1, 2, 5, 10) if integer else (1, 2, 2.5, 5, 10)) if m * mag >= raw - 1e-12)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    first -= round(first * step, 10) > lo  # a value a rounding error below a tick
    last += round(last * step, 10) < hi
    return [round(k * step, 10) for k in range(first, max(last, first + 1) + 1)]


def sweep_panels(rows: List[Dict[str, Any]], labels: List[str], width: int = 300,
                 height: int = 220) -> List[Dict[str, Any]]:
    """Geometry of each panel: x positions per value, y per series, axis ticks (the y axis
    fits the panel's data range)."""
    pad_l, pad_r, pad_t, pad_b = 44, 14, 24, 76
    n = len(rows)
    xs = [pad_l + (width - pad_l - pad_r) * (i / (n - 1) if n > 1 else 0.5) for i in range(n)]
    panels = []
    for title, keys in PANELS:
        values = [float(r[k]) for r in rows for k in keys]
        ticks = nice_axis(min(values), max(values), integer=all(isinstance(r[k], int) for r in rows for k in keys))
        lo, hi = ticks[0], ticks[-1]
        y = lambda v: pad_t + (height - pad_t - pad_b) * (1 - (float(v) - lo) / (hi - lo))  # noqa: E731
        series = []
        for j, k in enumerate(keys):
            pts = [(round(x, 1), round(y(r[k]), 1), r[k]) for x, r in zip(xs, rows)]
            series.append({"name": k, "color": COLORS[j % len(COLORS)], "points": pts,
                           "path": " ".join(f"{px},{py}" for px, py, _ in pts)})
        panels.append({"title": title, "series": series, "ticks": [(round(y(t), 1), f"{t:g}") for t in ticks],
                       "x0": pad_l, "x1": width - pad_r, "y0": pad_t, "y1": height - pad_b,
                       "labels": [(round(x, 1), label) for x, label in zip(xs, labels)]})
    return panels


def sweep_chart_svg(rows: List[Dict[str, Any]], labels: Optional[List[str]] = None,
                    axis: str = "") -> str:
    """The sweep's figures per value, one small panel per figure (x: the values swept)."""
    width, height = 300, 220
    labels = labels if labels is not None else [str(r["value"]) for r in rows]
    panels = sweep_panels(rows, labels, width, height)
    return render("sweep.svg.j2", panels=panels, width=width, height=height, title=axis or "sweep",
                  axis=axis, total_width=width * len(panels))


SLOT = 22  # px between two attempts on the timeline


def timeline_svg(attempts: Dict[str, List[Dict[str, Any]]], steps: List[Dict[str, Any]],
                 groups: Optional[Dict[str, str]] = None) -> str:
    """The attempt history of a case with steps as a picture: a lane per pod, a dot per attempt
    (colour: its result; tooltip: time, event, node, rejecting plugins), in the order things
    happened: the attempts made by the end of each step (its observation's attempt counts), then
    a dashed line for that step with its virtual time. Steps without attempts in between share
    a line. `steps`: {index, action, time, attempts: {pod: count}}. `groups`: pod -> the
    description of its pod group (the Workload API): a group's lanes are drawn together, in a
    shaded band named after it."""
    pods = list(attempts)
    if groups:
        order = list(dict.fromkeys(groups.get(p, "") or p for p in pods))
        pods.sort(key=lambda p: order.index(groups.get(p, "") or p))
    lane, left, top = 26, 170, 30
    placed = {pod: 0 for pod in pods}  # attempts of each pod drawn so far
    x = left + SLOT / 2
    marks: Dict[str, List[Dict[str, Any]]] = {pod: [] for pod in pods}
    step_lines: List[Dict[str, Any]] = []
    for s in steps + [{"index": None, "attempts": {p: len(h) for p, h in attempts.items()}}]:
        due = []
        for pod in pods:
            upto = min(int((s.get("attempts") or {}).get(pod, placed[pod])), len(attempts[pod]))
            due += [(a["time"], pods.index(pod), pod, a) for a in attempts[pod][placed[pod]:upto]]
            placed[pod] = max(placed[pod], upto)
        for _, _, pod, a in sorted(due, key=lambda d: d[:2]):
            marks[pod].append({"x": round(x, 1), "color": COLORS_BY_RESULT.get(a["result"], "#7f7f7f"),
                               "title": _attempt_title(a)})
            x += SLOT
        if s["index"] is None:
            break
        name = f"{s['index']}: {s['action']} at {s['time']:g}s"
        if step_lines and not due:
            step_lines[-1]["names"].append(name)
            continue
        step_lines.append({"x": round(x - SLOT / 2 + 4, 1), "names": [name]})
        x += 8
    for line in step_lines:
        first, last = line["names"][0], line["names"][-1]
        line["title"] = "; ".join(line["names"])
        line["label"] = first if len(line["names"]) == 1 else \
            f"steps {first.split(':')[0]}-{last.split(':')[0]}{last[last.index(' at '):]}"
    width = max(int(x) + 170, 600)
    lanes = [{"pod": pod, "y": top + lane * i + lane / 2, "marks": marks[pod]} for i, pod in enumerate(pods)]
    height = top + lane * max(1, len(pods)) + 60
    bands = []
    for name in dict.fromkeys((groups or {}).get(p) for p in pods):
        rows = [i for i, p in enumerate(pods) if name and (groups or {}).get(p) == name]
        if rows:
            bands.append({"y": top + lane * rows[0] + 2, "h": lane * len(rows) - 4, "title": name})
    return render("timeline.svg.j2", lanes=lanes, steps=step_lines, width=width, height=height, bands=bands,
                  left=left, right=width - 10, top=top, bottom=height - 40,
                  legend=list(COLORS_BY_RESULT.items()))


COLORS_BY_RESULT = {"scheduled": "#2ca02c", "unschedulable": "#d62728", "error": "#ff7f0e",
                    "in-flight": "#7f7f7f"}


def _attempt_title(a: Dict[str, Any]) -> str:
    s = f"attempt {a['attempt']} at {a['time']:g}s: {a['result']}"
    if a.get("node"):
        s += f" on {a['node']}"
    if a.get("event"):
        s += f" (after {a['event']})"
    if a.get("rejected"):
        s += "; rejected by " + ", ".join(f"{p} ({n})" for p, n in a["rejected"].items())
    if a.get("nominated"):
        s += f"; nominated {a['nominated']}"
    return s
