"""The `schedharness` command: run, explain, validate, bench."""

from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from .errors import UserError


def _cmd_run(args) -> int:
    from .case import find_cases, load_case, run_case
    from .framework.registry import build_registry

    registry = build_registry(args.plugin) if args.plugin else None
    paths = find_cases(args.paths)
    if not paths:
        raise UserError("no case files found", file=" ".join(args.paths))
    cases = [load_case(p) for p in paths]  # every case is valid before any runs
    results = []
    passed = failed = 0
    for case in cases:
        res = run_case(case, registry)
        results.append(res)
        if res.passed:
            passed += 1
            if not args.json:
                print(f"PASS {case.name}")
        else:
            failed += 1
            if not args.json:
                print(f"FAIL {case.name}: {'; '.join(res.failures)}")
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
    else:
        print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def _cmd_explain(args) -> int:
    from .case import load_case, run_case
    from .report import explain

    case = load_case(args.case)
    res = run_case(case, explain=True)
    print(explain(res, args.pod))
    return 0


def _cmd_validate(args) -> int:
    from .case.loader import case_from_data, is_case_document
    from .case.runner import build_scheduler
    from .config.loader import load_config_data
    from .framework.registry import default_registry
    from .yamlfile import load_yaml_file

    for path in args.paths:
        data = load_yaml_file(path, UserError)
        if is_case_document(data):
            case = case_from_data(data, path)
            build_scheduler(case)  # config, objects and frameworks, without scheduling
            print(f"{path}: valid case")
        else:
            cfg = load_config_data(data, default_registry(), source=path)
            from .framework.runtime import Framework
            for prof in cfg["profiles"]:
                Framework(prof, default_registry(), source=path)
            print(f"{path}: valid KubeSchedulerConfiguration")
    return 0


def _cmd_bench(args) -> int:
    from .bench import main as bench_main

    return bench_main(args)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="schedharness",
                                description="Run kube-scheduler v1.34's scheduling on YAML cases.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run cases (files or folders)")
    r.add_argument("paths", nargs="+")
    r.add_argument("--json", action="store_true", help="print the outcome of each case as JSON")
    r.add_argument("-p", "--plugin", action="append", default=[],
                   help="a Python module to load as a plugin (besides installed entry points)")
    r.set_defaults(func=_cmd_run)
    e = sub.add_parser("explain", help="show every node's filter statuses and scores for a pod")
    e.add_argument("case")
    e.add_argument("pod", nargs="?")
    e.set_defaults(func=_cmd_explain)
    v = sub.add_parser("validate", help="validate KubeSchedulerConfiguration or case files")
    v.add_argument("paths", nargs="+")
    v.set_defaults(func=_cmd_validate)
    b = sub.add_parser("bench", help="scheduler_perf's workloads: pods per second, latency, memory")
    b.add_argument("file", nargs="?", help="a scheduler_perf workload file (performance-config.yaml)")
    b.add_argument("--workload", help="run only this workload (<test case>/<workload>, or a test case)")
    b.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="override a workload parameter (repeatable)")
    b.add_argument("--json", action="store_true", help="print scheduler_perf's DataItems as JSON")
    b.add_argument("--nodes", type=int, default=None, help="SchedulingBasic without a file: nodes")
    b.add_argument("--init-pods", type=int, default=None, help="SchedulingBasic: pods scheduled first")
    b.add_argument("--pods", type=int, default=None, help="SchedulingBasic: measured pods")
    b.set_defaults(func=_cmd_bench)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        return 130


if __name__ == "__main__":
    sys.exit(main())
