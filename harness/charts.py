"""SVG charts (rendered with jinja2 templates in harness/templates): the sweep chart and the
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

    return jinja2.Environment(loader=jinja2.PackageLoader("harness", "templates"),
                              autoescape=jinja2.select_autoescape(["html", "svg", "j2"]),
                              trim_blocks=True, lstrip_blocks=True)


def render(template: str, **kw) -> str:
    return _env().get_template(template).render(**kw)


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    for m in (1, 2, 4, 5, 10, 20, 25, 40, 50, 100, 200, 250, 400, 500, 1000, 2000, 2500, 4000, 5000, 10000):
        if v <= m:
            return float(m)
    return float(v)


def sweep_panels(rows: List[Dict[str, Any]], labels: List[str], width: int = 300,
                 height: int = 220) -> List[Dict[str, Any]]:
    """Geometry of each panel: x positions per value, y per series, axis ticks."""
    pad_l, pad_r, pad_t, pad_b = 44, 14, 24, 76
    n = len(rows)
    xs = [pad_l + (width - pad_l - pad_r) * (i / (n - 1) if n > 1 else 0.5) for i in range(n)]
    panels = []
    for title, keys in PANELS:
        top = max([float(r[k]) for r in rows for k in keys] + [0])
        if title == "cases passing":
            top = max(top, max(r["cases"] for r in rows))
        ymax = _nice_max(top)
        y = lambda v: pad_t + (height - pad_t - pad_b) * (1 - float(v) / ymax)  # noqa: E731
        series = []
        for j, k in enumerate(keys):
            pts = [(round(x, 1), round(y(r[k]), 1), r[k]) for x, r in zip(xs, rows)]
            series.append({"name": k, "color": COLORS[j % len(COLORS)], "points": pts,
                           "path": " ".join(f"{px},{py}" for px, py, _ in pts)})
        ticks = [(round(y(ymax * t / 4), 1), f"{ymax * t / 4:g}") for t in range(5)]
        panels.append({"title": title, "series": series, "ticks": ticks, "x0": pad_l, "x1": width - pad_r,
                       "y0": pad_t, "y1": height - pad_b,
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
