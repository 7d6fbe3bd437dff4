"""`schedharness bench`: scheduler_perf's workloads (a workload file, or SchedulingBasic from
--nodes/--init-pods/--pods) and cases, each benchmarked in turn (harness.bench runs them); the
table of figures, or scheduler_perf's DataItems as JSON."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List

from ..errors import UserError
from .options import MAX_BENCH_OBJECTS, bounded_int, non_empty, version_options


def add_parser(sub) -> None:
    b = sub.add_parser("bench", help="scheduler_perf's workloads: pods per second, latency, memory")
    b.add_argument("files", nargs="*", metavar="FILE",
                   help="scheduler_perf workload files (performance-config.yaml) or cases (or folders of "
                        "cases), each benchmarked in turn")
    b.add_argument("--workload", type=non_empty, help="run only this workload (<test case>/<workload>, or a test case)")
    b.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="override a workload parameter (repeatable)")
    b.add_argument("--json", action="store_true", help="print scheduler_perf's DataItems as JSON")
    b.add_argument("--list", action="store_true",
                   help="list the file's workloads (<test case>/<workload> and their params) and exit")
    version_options(b)
    count = bounded_int(1, MAX_BENCH_OBJECTS)
    b.add_argument("--nodes", type=count, default=None, help="SchedulingBasic without a file: nodes (at most 250,000)")
    b.add_argument("--init-pods", type=bounded_int(0, MAX_BENCH_OBJECTS), default=None, help="SchedulingBasic: pods scheduled first (at most 250,000)")
    b.add_argument("--pods", type=count, default=None, help="SchedulingBasic: measured pods (at most 250,000)")
    b.set_defaults(func=cmd_bench)


def format_table(results: List[Dict[str, Any]]) -> str:
    head = ["workload", "pods", "sched", "secs", "pods/s", "thr avg", "p50", "p90", "p99",
            "lat p50 ms", "p90", "p99", "peak MiB"]
    rows = [head]
    for r in results:
        t, lat = r["SchedulingThroughput"], r["AttemptLatencyMs"]
        rows.append([r["name"], str(r["measuredPods"]), str(r["scheduledPods"]), f"{r['seconds']:.2f}",
                     f"{r['podsPerSecond']:.0f}", f"{t['Average']:.0f}", f"{t['Perc50']:.0f}",
                     f"{t['Perc90']:.0f}", f"{t['Perc99']:.0f}", f"{lat['Perc50']:.2f}",
                     f"{lat['Perc90']:.2f}", f"{lat['Perc99']:.2f}", f"{r['peakRSSMiB']:.0f}"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row))
                     for row in rows)


def data_items(results: List[Dict[str, Any]]) -> Dict[str, Any]:
    """scheduler_perf's JSON shape (DataItems), one item per metric and workload."""
    items = []
    for r in results:
        items.append({"data": r["SchedulingThroughput"], "unit": "pods/s",
                      "labels": {"Metric": "SchedulingThroughput", "Name": r["name"]}})
        items.append({"data": r["AttemptLatencyMs"], "unit": "ms",
                      "labels": {"Metric": "scheduler_scheduling_attempt_duration_seconds",
                                 "Name": r["name"], "result": "all"}})
        items.append({"data": {"Peak": r["peakRSSMiB"]}, "unit": "MiB",
                      "labels": {"Metric": "PeakRSS", "Name": r["name"]}})
    return {"version": "v1", "dataItems": items, "workloads": results}


def _shorthand(args):
    from ..bench.workloads import Op, Workload

    nodes = 500 if args.nodes is None else args.nodes
    init = 1000 if args.init_pods is None else args.init_pods
    pods = 1000 if args.pods is None else args.pods
    for flag, v, low in (("--nodes", nodes, 1), ("--init-pods", init, 0), ("--pods", pods, 1)):
        if v < low:
            raise UserError(f"{flag} must be at least {low}, got {v}")
    ops = [Op("createNodes", {}, 0, nodes), Op("createPods", {}, 1, init),
           Op("createPods", {"collectMetrics": True}, 2, pods)]
    if init == 0:
        ops = [ops[0], Op("createPods", {"collectMetrics": True}, 1, pods)]
    return Workload(f"SchedulingBasic/{nodes}Nodes_{init}Init_{pods}Pods",
                    {"initNodes": nodes, "initPods": init, "measurePods": pods}, ops, os.getcwd(), None, None)


def _entries(args) -> List[tuple]:
    """What to run, in the order the files are given: ("workload", Workload) for each workload
    of a workload file, ("case", path) for each case file (or case under a folder)."""
    from ..bench.workloads import check_templates, is_workload_file, load_workloads, parse_param_overrides
    from ..case.loader import find_cases

    files = list(args.files or [])
    overrides = parse_param_overrides(args.param)
    out: List[tuple] = []
    any_workload_file = False
    for path in files:
        if os.path.isdir(path) or not is_workload_file(path):
            out.extend(("case", p) for p in find_cases([path]))
            continue
        any_workload_file = True
        workloads = load_workloads(path, args.workload, overrides)
        for wl in workloads:  # every template is read and checked before anything runs
            check_templates(wl)
        out.extend(("workload", wl) for wl in workloads)
    if (args.workload or args.param) and not any_workload_file:
        raise UserError("--workload and --param need a workload file (a case is benchmarked as it is)")
    return out


def cmd_bench(args) -> int:
    from ..bench.bench_case import bench_case
    from ..bench.isolated import run_isolated, terminate_as_interrupt
    from ..bench.runner import WorkloadRun

    files = list(getattr(args, "files", None) or [])
    if getattr(args, "list", False):
        if not files:
            raise UserError("--list needs a workload file")
        for kind, what in _entries(args):
            if kind == "case":
                print(f"{what}  (a case)")
                continue
            params = " ".join(f"{k}={v}" for k, v in what.params.items())
            print(f"{what.name}" + (f"  {params}" if params else ""))
        return 0
    if files:
        if args.nodes is not None or args.init_pods is not None or args.pods is not None:
            raise UserError("--nodes/--init-pods/--pods run SchedulingBasic: give them without a workload file "
                            "(use --param with a file)")
        entries = _entries(args)
        if not entries:
            raise UserError("no workload or case to run", file=" ".join(files))
    else:
        if args.workload or args.param:
            raise UserError("--workload and --param need a workload file")
        entries = [("workload", _shorthand(args))]
    results = []
    previous = terminate_as_interrupt()
    try:
        for kind, what in entries:
            if kind == "case":
                fn = (lambda p=what: bench_case(p, quiet=args.json))
                name = what
            else:
                fn = (lambda wl=what: WorkloadRun(wl, args.json).run())
                name = what.name
            results.append(run_isolated(fn, name) if len(entries) > 1 else fn())
    finally:
        if previous is not None:
            import signal
            signal.signal(signal.SIGTERM, previous)
    failed = [r for r in results if r.get("unscheduledPods", 0) > 0]
    case_failed = [r for r in results if r.get("passed") is False]
    if args.json:
        print(json.dumps(data_items(results), indent=2))
    else:
        print(format_table(results))
        for r in results:
            print(f"{r['name']}: {r['scheduledPods']}/{r['measuredPods']} {'pods bound' if 'passed' in r else 'measured pods scheduled'} in "
                  f"{r['seconds']:.2f}s = {r['podsPerSecond']:.1f} pods/s ({r.get('cpuSeconds', 0.0):.2f}s CPU = "
                  f"{r.get('podsPerCPUSecond', 0.0):.1f} pods per CPU second), peak RSS {r['peakRSSMiB']:.0f} MiB"
                  + (_case_tail(r) if "passed" in r else ""))
    sys.stdout.flush()
    for r in failed:
        sys.stderr.write(f"WARNING: {r['name']}: {r['unscheduledPods']} of {r['measuredPods']} measured pods were "
                         f"not scheduled (scheduler_perf fails a collectMetrics createPods op whose pods are not all "
                         f"scheduled); its figures do not measure what they claim\n")
    return 1 if failed or case_failed else 0


def _case_tail(r: Dict[str, Any]) -> str:
    """The end of a case's last line: reading and building it, and its expectations."""
    verdict = "passed" if r["passed"] else "FAILED: " + "; ".join(r["failures"])
    return (f"; read and built in {r['loadSeconds']:.2f}s ({r['loadCPUSeconds']:.2f}s CPU); "
            f"{r['params']['nodes']} nodes; case {verdict}")
