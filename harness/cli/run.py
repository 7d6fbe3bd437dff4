"""`schedharness run PATH...`: run cases and compare each outcome with its `expect`."""

from __future__ import annotations

import json
import sys
from typing import List, Optional, Union

from ..errors import UserError
from .options import (attempt, check_nodes, check_output_file, error, interrupted, nodes_options, plugin_option,
                      registry_for, version_options, view)


def add_parser(sub) -> None:
    r = sub.add_parser("run", help="run cases (files or folders)",
                       description="Run cases and compare each outcome with its `expect`. Exit 0: all "
                                   "passed; 1: a case failed; 2: a file was invalid (each reported on "
                                   "one line; the valid cases still run).")
    r.add_argument("paths", nargs="+", metavar="PATH",
                   help="case files, or folders searched for case files (other YAML files are skipped, "
                        "with the reason)")
    r.add_argument("--json", action="store_true",
                   help="print the outcome of each case as JSON (with its file path)")
    r.add_argument("-v", "--verbose", action="store_true",
                   help="for a failing case, print the filter/score table of the pods that went wrong")
    r.add_argument("--parallel", action="store_true",
                   help="run Filter and Score on `parallelism` threads as kube-scheduler does (results "
                        "merged in node order); a plugin whose results differ from the sequential run's "
                        "is reported as not safe for parallel filtering")
    r.add_argument("--coverage", action="store_true",
                   help="print which plugins were called at which extension points (per case and in "
                        "total), and the enabled ones never called; with --json, a `coverage` key per case")
    r.add_argument("--html", metavar="REPORT.html", default=None,
                   help="also write a self-contained HTML report: per case pass/fail, bindings, each "
                        "pod's decision table per attempt, the attempt timeline of cases with steps")
    nodes_options(r)
    plugin_option(r)
    version_options(r)
    r.set_defaults(func=cmd_run)


def _failing_pods(res) -> List[str]:
    return [f.split(":")[0] for f in res.failures if "/" in f.split(":")[0]]


def _print_failures(name: str, failures: List[str]) -> None:
    """`FAIL name: what` for one failure; with several, or one that carries a table (decision
    assertions), `FAIL name:` and each failure on its own line, its table under it."""
    if len(failures) == 1 and "\n" not in failures[0]:
        print(f"FAIL {name}: {failures[0]}")
        return
    print(f"FAIL {name}:")
    for f in failures:
        print("  " + f.replace("\n", "\n  "))


def cmd_run(args) -> int:
    """Every valid case runs; every invalid file (or path, or case that raises) is one error
    line and the others still run; exit 2 if any was invalid. Each file is loaded when its turn
    comes (a big file later in the list does not delay the first results); over 5 s, progress
    on stderr. Ctrl-C stops at once and prints the summary (and --json) of what finished, exit
    130."""
    from ..case.loader import count_case_files, iter_case_files, load_case
    from ..progress import Progress

    check_output_file(args.html, "--html")  # before the run, not after it
    views = []  # --html: what the report shows of each case, made once it ran (reports.html.case_view)
    versions: List[str] = []  # the release each case ran on, for the summary
    coverages: List = []
    entries: List[dict] = []  # --json: each case's result, or the error line of an invalid file, in order
    passed = failed = invalid = 0
    stopped = False
    check_nodes(args)
    opts = None
    if getattr(args, "parallel", False) or getattr(args, "coverage", False):
        from ..framework.coverage import Coverage
        from ..framework.parallelize import RunSettings
        opts = RunSettings(parallel=args.parallel, coverage=Coverage() if args.coverage else None)
    # the report's decision tables need explain's records: with --html alone, kept as columns
    # of what an Attempt holds (attempt_columns); with -v, as columns of the whole records
    # (record_columns: its text reads them)
    explain: Union[bool, str] = "columns" if args.html and not args.verbose else bool(args.verbose)
    try:
        total = count_case_files(args.paths)
        progress = Progress("run")
        seen = done = 0
        for verdict, path, detail in iter_case_files(args.paths):
            seen += 1
            res = None
            if verdict == "skip":
                print(f"SKIP {path}: {detail}", file=sys.stderr if args.json else sys.stdout)
            elif verdict == "missing":
                entries.append(_error_entry(detail.file or "", error(detail)))
                invalid += 1
            else:
                with progress.heartbeat(f"{seen} of {total} files, {done} case(s) run; reading {path}"):
                    ok, case = attempt(path, lambda: load_case(path))
                if not ok:
                    invalid += 1
                    entries.append(_error_entry(path, case))
                else:
                    with progress.heartbeat(f"{seen} of {total} files, {done} case(s) run; running {case.name}"):
                        ok, res = attempt(case.path, lambda: _run_with(opts, case, registry_for(case, args),
                                                                       explain))
                    if not ok:
                        invalid += 1
                        entries.append(_error_entry(case.path, res, case.name))
                        res = None
                case = None
            if res is not None:
                done += 1
                _report_case(args, res, entries)
                versions.append(res.case.features.describe())
                if res.passed:
                    passed += 1
                else:
                    failed += 1
                if res.coverage is not None:
                    coverages.append(res.coverage)
                if args.html:
                    from ..reports.html import case_view

                    views.append(case_view(res))
                res = None
            progress.tick(f"{seen} of {total} files, {done} case(s) run")
        if not done and not invalid:
            raise UserError("no case files found", file=" ".join(args.paths))
        if opts is not None and opts.coverage is not None and not args.json:
            from ..framework.coverage import format_lines, merge
            print(f"coverage of extension points over {len(coverages)} case(s):")
            print("\n".join(format_lines(merge(coverages))))
    except KeyboardInterrupt:
        stopped = True
        interrupted("the cases that finished are reported below")
    if args.json:
        print(json.dumps(entries, indent=2))
    else:
        from ..reports.text import scheduler_versions

        print(f"{passed} passed, {failed} failed" + (f", {invalid} invalid" if invalid else "")
              + (f" ({scheduler_versions(versions)})" if versions else "") + (" (interrupted)" if stopped else ""))
    if args.html:
        from ..reports.html import write_run_views

        write_run_views(args.html, views)
    if stopped:
        return 130
    if invalid:
        return 2
    return 0 if failed == 0 else 1


def _report_case(args, res, entries: List[dict]) -> None:
    """A case's PASS/FAIL lines (with -v the decision tables of the pods it got wrong, with
    --coverage its extension points), or its --json entry."""
    if args.json:  # (the history of a big case's attempts is costly to build)
        entries.append(res.to_json())
        return
    if res.passed:
        print(f"PASS {res.case.name}")
    else:
        _print_failures(res.case.name, res.failures)
        if args.verbose:
            from ..reports.text import explain_pods
            text = explain_pods(res, _failing_pods(res), view(res, args))
            print("\n".join("    " + line for line in text.splitlines()))
    if res.coverage is not None:
        from ..framework.coverage import format_lines
        print("\n".join(format_lines(res.coverage)))


def _error_entry(path: str, line: str, name: Optional[str] = None) -> dict:
    """An invalid file in `run --json`: the error line `run` printed (without "error: "), as `error`."""
    import os
    return {"case": name or os.path.splitext(os.path.basename(path))[0], "file": path, "passed": False,
            "error": line[len("error: "):] if line.startswith("error: ") else line}


def _run_with(opts, case, registry, explain: Union[bool, str]):
    """run_case under the run's --parallel/--coverage settings (each case gets its own copy);
    explain "columns": explain's records kept as columns (harness.case.attempt_columns), True:
    as columns of the whole records (harness.case.record_columns)."""
    from ..case import run_case
    from ..case.attempt_columns import ColumnsHook
    from ..case.record_columns import RecordColumnsHook
    from ..framework.parallelize import using

    hooks = ColumnsHook() if explain == "columns" else RecordColumnsHook() if explain else None
    explain = bool(explain)
    if opts is None:
        return run_case(case, registry, explain=explain, hooks=hooks)
    with using(opts):
        return run_case(case, registry, explain=explain, hooks=hooks)
