"""What `schedharness sweep` runs (harness.cli.sweep is the command): one plugin weight or one plugin argument varied over a range (or a list
of configurations) across a set of cases; per value, the cases passing and the figures of the
cluster at the end, as a table and as an SVG chart."""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from .outcomes import CaseOutcome, Figures, Task, load_cases, run_tasks
from ..errors import UserError


@dataclass
class Point:
    """One value of the sweep and the outcomes of every case under it."""

    label: str
    value: Any
    config: Dict[str, Any]
    outcomes: Optional[List[CaseOutcome]] = None
    axis: str = ""  # what varies, for the chart's x axis
    # the value applied to a configuration (with_weight/with_arg); None: `config` is whole
    apply: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None

    @property
    def short(self) -> str:
        return os.path.basename(self.value) if self.axis == "configuration" else str(self.value)

    def row(self) -> Dict[str, Any]:
        outs = self.outcomes or []
        ok = [o for o in outs if not o.error]
        figs = Figures.total([o.figures for o in ok]).row()
        return {"value": self.label, "cases passing": sum(1 for o in ok if o.passed), "cases": len(outs),
                "errors": len(outs) - len(ok), **figs}


def parse_values(text: str, key: str) -> List[Any]:
    """`1,2,5` (a list, each item read as a YAML scalar) or `A:B[:STEP]` (integers A to B
    inclusive)."""
    import yaml

    if ":" in text and "," not in text:
        parts = text.split(":")
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            raise UserError(f"a range is START:STOP[:STEP] of integers, got {text!r}", key=key) from None
        if len(nums) not in (2, 3) or (len(nums) == 3 and nums[2] <= 0) or nums[1] < nums[0]:
            raise UserError(f"a range is START:STOP[:STEP] with START <= STOP and STEP > 0, got {text!r}", key=key)
        step = nums[2] if len(nums) == 3 else 1
        return list(range(nums[0], nums[1] + 1, step))
    vals = [yaml.safe_load(v) for v in text.split(",") if v.strip()]
    if not vals:
        raise UserError("no values", key=key)
    return vals


def _profiles(cfg: Dict[str, Any]) -> List[Dict[str, Any]]:
    profiles = cfg.setdefault("profiles", [])
    if not profiles:
        profiles.append({"schedulerName": "default-scheduler"})
    return profiles


def with_weight(base: Dict[str, Any], plugin: str, weight: int) -> Dict[str, Any]:
    """The configuration with `plugin`'s Score weight set in every profile (an entry under
    plugins.score.enabled, which takes precedence over multiPoint's)."""
    cfg = copy.deepcopy(base)
    for prof in _profiles(cfg):
        score = prof.setdefault("plugins", {}).setdefault("score", {})
        enabled = score.setdefault("enabled", [])
        for e in enabled:
            if e.get("name") == plugin:
                e["weight"] = weight
                break
        else:
            enabled.append({"name": plugin, "weight": weight})
    return cfg


def with_arg(base: Dict[str, Any], plugin: str, path: List[str], value: Any) -> Dict[str, Any]:
    """The configuration with one field of `plugin`'s args set in every profile's pluginConfig."""
    cfg = copy.deepcopy(base)
    for prof in _profiles(cfg):
        pcs = prof.setdefault("pluginConfig", [])
        entry = next((pc for pc in pcs if pc.get("name") == plugin), None)
        if entry is None:
            entry = {"name": plugin, "args": {}}
            pcs.append(entry)
        node = entry.setdefault("args", {})
        for k in path[:-1]:
            node = node.setdefault(k, {})
        node[path[-1]] = value
    return cfg


def score_disabled(profile: Dict[str, Any], plugin: str) -> bool:
    """The profile turns the plugin's Score off: named (or '*') under score.disabled or
    multiPoint.disabled and not enabled again under score.enabled (mergePlugins: a disabled
    default stays off unless listed as enabled)."""
    plugins = profile.get("plugins") or {}
    names = lambda point, key: {e.get("name") for e in ((plugins.get(point) or {}).get(key) or [])}  # noqa: E731
    off = (names("score", "disabled") | names("multiPoint", "disabled")) & {plugin, "*"}
    return bool(off) and plugin not in names("score", "enabled") | names("multiPoint", "enabled")


def weight_on(cfg: Dict[str, Any], name: str, weight: int) -> Dict[str, Any]:
    """with_weight on a case's own configuration, leaving a profile that turned the plugin's
    Score off as it is (a weight of a plugin that does not score changes nothing)."""
    cfg = copy.deepcopy(cfg)
    off = [(i, p) for i, p in enumerate(_profiles(cfg)) if score_disabled(p, name)]
    out = with_weight(cfg, name, weight)
    for i, p in off:
        out["profiles"][i] = p
    return out


def arg_on(cfg: Dict[str, Any], plugin: str, path: List[str], value: Any) -> Dict[str, Any]:
    return with_arg(cfg, plugin, path, value)


def own_config(case) -> Optional[Dict[str, Any]]:
    """The case's own configuration as a mapping (its file read), or None when it has none or
    its file cannot be read (the run then reports that)."""
    from ..yamlfile import load_yaml_file

    if case.config is None:
        return None
    if isinstance(case.config, dict):
        return copy.deepcopy(case.config)
    try:
        data = load_yaml_file(case.config_path, UserError)
    except UserError:
        return None
    return data if isinstance(data, dict) else None


def config_for(point: Point, case, on_own: bool) -> Dict[str, Any]:
    """The configuration a case runs with at this point: the value applied on top of the
    case's own configuration (`on_own`, for a case that has one), else the point's."""
    if on_own and point.apply is not None and case.config is not None:
        own = own_config(case)
        if own is not None:
            return point.apply(own)
    return point.config


def check_points(points: List[Point], plugins: List[str]) -> None:
    """Every configuration of the sweep is valid (exit 2 naming the value otherwise)."""
    from ..config.loader import load_config_data
    from ..framework.registry import build_registry, default_registry

    registry = build_registry(plugins) if plugins else default_registry()
    for p in points:
        load_config_data(copy.deepcopy(p.config), registry, source=f"sweep value {p.label}")


def run_sweep(paths: List[str], points: List[Point], plugins: List[str], jobs: int = 1,
              dask_scheduler: Optional[str] = None, on_own: bool = False) -> List[str]:
    """Fill each point's outcomes; returns the error lines of cases that could not be loaded.
    `on_own`: a case with a configuration of its own runs with the value applied on top of it."""
    cases, invalid = load_cases(paths, frozen=True)
    cwd = os.getcwd()
    tasks = [Task(c, config_for(p, c, on_own), tuple(plugins), None, cwd, explain=False)
             for p in points for c in cases]
    results = run_tasks(tasks, jobs, dask_scheduler, command="sweep")
    n = len(cases)
    for i, p in enumerate(points):
        p.outcomes = results[i * n:(i + 1) * n]
        for c, o in zip(cases, p.outcomes):
            o.own_config = c.config is not None
    return invalid


def flips(points: List[Point]) -> List[Dict[str, Any]]:
    """The cases whose result is not the same for every value: case -> PASS/FAIL/ERROR per value."""
    out = []
    if not points or not points[0].outcomes:
        return out
    for i, first in enumerate(points[0].outcomes):
        marks = [("ERROR" if p.outcomes[i].error else "PASS" if p.outcomes[i].passed else "FAIL") for p in points]
        if len(set(marks)) > 1:
            out.append({"case": first.name, **{p.short: m for p, m in zip(points, marks)}})
    return out
