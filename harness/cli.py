"""The `schedharness` command: run, explain, validate, bench, conformance."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import List, Optional

from .errors import UserError


MAX_ERROR_LINE = 1000  # an error names a file, a key and a value cut short: never a whole object


def _error(e: UserError) -> str:
    line = " ".join(f"error: {e}".split())
    m = re.search(r'Plugin "([^"]+)" does not exist', line)
    if m:  # upstream's words name the first extension point checked; say what to do as well
        line += (f' (no plugin named "{m.group(1)}" is registered: install its package, or load its '
                 f"module with -p MODULE or the case's plugins:)")
    if len(line) > MAX_ERROR_LINE:
        line = line[:MAX_ERROR_LINE] + "..."
    print(line, file=sys.stderr)
    return line


def _internal_error(exc: BaseException, file: Optional[str] = None) -> str:
    """An exception no check foresaw (a bug in the harness, or in a plugin outside its hooks):
    one error line naming the file, the exception and where it was raised; the other cases
    still run. SCHEDHARNESS_TRACEBACK=1 prints the traceback as well."""
    import os
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    text = str(exc)[:300]
    line = _error(UserError(f"internal error{where}: {type(exc).__name__}" + (f": {text}" if text else "")
                            + " (please report it; SCHEDHARNESS_TRACEBACK=1 shows the traceback)", file=file))
    if os.environ.get("SCHEDHARNESS_TRACEBACK"):
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    return line


def _attempt(file: Optional[str], fn):
    """(True, fn()) or, when fn raises (a UserError or anything else but an interrupt), the
    error line printed and (False, that line): one bad file never stops the others."""
    try:
        return True, fn()
    except BrokenPipeError:  # the reader of our output went away: main() stops quietly
        raise
    except UserError as e:
        return False, _error(e)
    except RecursionError as e:
        return False, _error(UserError(f"nested or recursive beyond Python's recursion limit ({e})", file=file))
    except Exception as e:  # noqa: BLE001 - the one place that turns the unforeseen into a line
        return False, _internal_error(e, file)


def _interrupted(what: str) -> None:
    print(f"interrupted: {what}", file=sys.stderr)


def _registry_for(case, args):
    """The registry for a case: installed plugins, `-p` modules and the case's own `plugins:`."""
    from .framework.registry import build_registry, default_registry

    modules = list(getattr(args, "plugin", None) or []) + [m for m in case.plugins
                                                            if m not in (getattr(args, "plugin", None) or [])]
    try:
        return build_registry(modules) if modules else default_registry()
    except UserError as e:
        if e.file:
            raise
        raise UserError(e.detail, file=case.path, key="plugins") from None


def _failing_pods(res) -> List[str]:
    return [f.split(":")[0] for f in res.failures if "/" in f.split(":")[0]]


def _print_failures(name: str, failures: List[str]) -> None:
    """`FAIL name: a; b` on one line, or, when a failure carries a table (decision
    assertions), one failure per line with its table under it."""
    if not any("\n" in f for f in failures):
        print(f"FAIL {name}: {'; '.join(failures)}")
        return
    print(f"FAIL {name}:")
    for f in failures:
        print("  " + f.replace("\n", "\n  "))


def _cmd_run(args) -> int:
    """Every valid case runs; every invalid file (or path, or case that raises) is one error
    line and the others still run; exit 2 if any was invalid. Ctrl-C stops at once and prints
    the summary (and --json) of what finished, exit 130."""
    from .case import find_cases, load_case

    skipped: List = []
    missing: List[UserError] = []
    results = []
    entries: List[dict] = []  # --json: each case's result, or the error line of an invalid file, in order
    passed = failed = invalid = 0
    interrupted = False
    try:
        paths = find_cases(args.paths, skipped, missing)
        for path, why in skipped:
            print(f"SKIP {path}: {why}", file=sys.stderr if args.json else sys.stdout)
        for e in missing:
            entries.append(_error_entry(e.file or "", _error(e)))
            invalid += 1
        if not paths and not missing:
            raise UserError("no case files found", file=" ".join(args.paths))
        cases = []
        for p in paths:  # every case is loaded before any runs
            ok, case = _attempt(p, lambda: load_case(p))
            if ok:
                cases.append(case)
            else:
                invalid += 1
                entries.append(_error_entry(p, case))
        opts = None
        if getattr(args, "parallel", False) or getattr(args, "coverage", False):
            from .framework.coverage import Coverage
            from .framework.parallelize import RunSettings
            opts = RunSettings(parallel=args.parallel, coverage=Coverage() if args.coverage else None)
        explain = bool(args.verbose or args.html)  # the report's decision tables need explain's records
        for case in cases:
            ok, res = _attempt(case.path, lambda: _run_with(opts, case, _registry_for(case, args), explain))
            if not ok:
                invalid += 1
                entries.append(_error_entry(case.path, res, case.name))
                continue
            results.append(res)
            if args.json:  # (the history of a big case's attempts is costly to build)
                entries.append(res.to_json())
            if res.passed:
                passed += 1
                if not args.json:
                    print(f"PASS {case.name}")
            else:
                failed += 1
                if not args.json:
                    _print_failures(case.name, res.failures)
                    if args.verbose:
                        from .report import explain_pods
                        text = explain_pods(res, _failing_pods(res))
                        print("\n".join("    " + line for line in text.splitlines()))
            if res.coverage is not None and not args.json:
                from .framework.coverage import format_lines
                print("\n".join(format_lines(res.coverage)))
        if opts is not None and opts.coverage is not None and not args.json:
            from .framework.coverage import format_lines, merge
            print(f"coverage of extension points over {len(results)} case(s):")
            print("\n".join(format_lines(merge([r.coverage for r in results if r.coverage is not None]))))
    except KeyboardInterrupt:
        interrupted = True
        _interrupted("the cases that finished are reported below")
    if args.json:
        print(json.dumps(entries, indent=2))
    else:
        print(f"{passed} passed, {failed} failed" + (f", {invalid} invalid" if invalid else "")
              + _versions_used([r.case for r in results]) + (" (interrupted)" if interrupted else ""))
    if args.html:
        from .html import write_run_report

        write_run_report(args.html, results)
    if interrupted:
        return 130
    if invalid:
        return 2
    return 0 if failed == 0 else 1


def _error_entry(path: str, line: str, name: Optional[str] = None) -> dict:
    """An invalid file in `run --json`: the error line `run` printed (without "error: "), as `error`."""
    import os
    return {"case": name or os.path.splitext(os.path.basename(path))[0], "file": path, "passed": False,
            "error": line[len("error: "):] if line.startswith("error: ") else line}


def _versions_used(cases) -> str:
    """` (kube-scheduler v1.36.3)`, or per version how many cases ran on it."""
    counts: dict = {}
    for c in cases:
        d = c.features.describe()
        counts[d] = counts.get(d, 0) + 1
    if not counts:
        return ""
    if len(counts) == 1:
        return f" (kube-scheduler {next(iter(counts))})"
    return " (kube-scheduler " + ", ".join(f"{d}: {n}" for d, n in sorted(counts.items())) + ")"


def _run_with(opts, case, registry, explain: bool):
    """run_case under the run's --parallel/--coverage settings (each case gets its own copy)."""
    from .case import run_case
    from .framework.parallelize import using

    if opts is None:
        return run_case(case, registry, explain=explain)
    with using(opts):
        return run_case(case, registry, explain=explain)


def _cmd_explain(args) -> int:
    from .case import load_case, run_case
    from .case.runner import pod_ref
    from .report import explain

    case = load_case(args.case)
    # with a pod named, only its attempts are recorded node by node (a 5000-node case's 300
    # pending pods would each keep 5000 nodes' filter tables)
    res = run_case(case, _registry_for(case, args), explain={pod_ref(args.pod)} if args.pod else True)
    print(f"case {case.name}: kube-scheduler {case.features.describe()}")
    known = set(res.bindings) | set(res.preempted) | {p.key for p in res.scheduler.cluster.list("Pod")}
    if args.pod and pod_ref(args.pod) not in known:
        raise UserError(f"no pod {pod_ref(args.pod)} in the case", file=args.case, key="pod")
    print(explain(res, args.pod))
    return 0


def _validate_case(path: str, args, data=None) -> str:
    """Exactly what `run` does before scheduling: load, default and check every object, build
    the profiles, check the expectations. `data`: the file's document, already read."""
    from .case.loader import case_from_data, load_case
    from .case.runner import build_scheduler

    case = load_case(path) if data is None else case_from_data(data, path, copy_objects=False)
    build_scheduler(case, _registry_for(case, args))
    return f"{path}: valid case"


def _validate_config(path: str, data, args) -> str:
    from .config.loader import load_config_data
    from .framework.registry import build_registry, default_registry
    from .framework.runtime import Framework

    from .versions import case_features

    registry = build_registry(args.plugin) if args.plugin else default_registry()
    features = case_features(None, None)
    cfg = load_config_data(data, registry, source=path, features=features)
    for prof in cfg["profiles"]:
        Framework(prof, registry, source=path, features=features)
    return f"{path}: valid KubeSchedulerConfiguration"


def _validate_path(path: str, args, in_folder: bool) -> Optional[str]:
    from .gcpause import collector_paused, thaw

    try:
        with collector_paused(freeze=True):  # as load_case: a big case's objects (gcpause)
            return _validate_read(path, args, in_folder)
    finally:
        thaw()


def _validate_read(path: str, args, in_folder: bool) -> Optional[str]:
    from .case.loader import classify_data, classify_file
    from .yamlfile import load_yaml_file

    verdict, why = classify_file(path) if in_folder else ("", "")
    if verdict in ("case", "invalid"):
        return _validate_case(path, args)
    data = load_yaml_file(path, UserError)
    verdict, why = classify_data(data)
    if verdict in ("case", "invalid"):
        return _validate_case(path, args, data)  # (read once: a big case twice would not fit)
    if in_folder and not (isinstance(data, dict) and data.get("kind") == "KubeSchedulerConfiguration"):
        return f"{path}: skipped: {why}"
    return _validate_config(path, data, args)


def _cmd_validate(args) -> int:
    import os

    invalid = 0
    for top in args.paths:
        if os.path.isdir(top):
            files = []
            for root, dirs, names in os.walk(top):
                dirs.sort()
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith((".yaml", ".yml"))]
            todo = [(f, True) for f in files]
        elif os.path.exists(top):
            todo = [(top, False)]
        else:
            _error(UserError("no such file or folder", file=top))
            invalid += 1
            continue
        for path, in_folder in todo:
            try:
                ok, msg = _attempt(path, lambda: _validate_path(path, args, in_folder))
            except KeyboardInterrupt:
                _interrupted(f"not validated from {path} on")
                return 130
            if not ok:
                invalid += 1
            elif msg:
                print(msg)
    return 2 if invalid else 0


def _cmd_import(args) -> int:
    from .importer import import_dump

    return import_dump(args.dump, args.output, name=args.name)


def _cmd_bench(args) -> int:
    from .bench import main as bench_main

    return bench_main(args)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("kube-scheduler-harness")
    except Exception:  # not installed: the source tree's version
        from . import __version__

        return __version__


def version_options(parser) -> None:
    """--kubernetes-version and --feature-gates: the version and gates of the cases (and
    configuration files) that do not name their own."""
    parser.add_argument("--kubernetes-version", metavar="VERSION", default=None,
                        help="the kube-scheduler version of cases without kubernetesVersion: "
                             "v1.34, v1.35 or v1.36 (default: the newest modelled, v1.36)")
    parser.add_argument("--feature-gates", metavar="A=true,B=false", default=None,
                        help="feature gates as kube-scheduler's --feature-gates takes them, under "
                             "each case's own featureGates")


def apply_version_options(args) -> None:
    """Set the run's default version and gates from the options (checked: exit 2 if wrong)."""
    from .versions import parse_gate_flag, set_run_defaults

    version = getattr(args, "kubernetes_version", None)
    text = getattr(args, "feature_gates", None)
    if version is None and text is None:
        return  # the defaults stand (pytest's option, $SCHEDHARNESS_KUBERNETES_VERSION, the newest)
    gates = parse_gate_flag(text, file="--feature-gates") if text else {}
    set_run_defaults(version, gates)


def _plugin_option(parser) -> None:
    parser.add_argument("-p", "--plugin", action="append", default=[], metavar="MODULE",
                        help="a Python module to load as a plugin, besides installed entry points and "
                             "a case's own `plugins:` (repeatable; the current folder is importable)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="schedharness",
                                description="Run kube-scheduler v1.34's scheduling on YAML cases.")
    p.add_argument("--version", action="version",
                   version=f"schedharness {_version()} (kube-scheduler v1.34)")
    sub = p.add_subparsers(dest="command", required=True)
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
    _plugin_option(r)
    version_options(r)
    r.set_defaults(func=_cmd_run)
    e = sub.add_parser("explain", help="show every node's filter statuses and scores for a pod",
                       description="Run a case and print, for each scheduling attempt of a pod, the "
                                   "filters kube-scheduler ran on each node, the scores, preemption and "
                                   "the pick.")
    e.add_argument("case", metavar="CASE", help="a case file")
    e.add_argument("pod", nargs="?", metavar="POD",
                   help="a pod reference, `name` (namespace default) or `namespace/name`; all pods "
                        "of the case when omitted")
    _plugin_option(e)
    version_options(e)
    e.set_defaults(func=_cmd_explain)
    v = sub.add_parser("validate", help="validate KubeSchedulerConfiguration or case files",
                       description="Check cases and configurations exactly as `run` would, without "
                                   "scheduling. Exit 2 if any file is invalid.")
    v.add_argument("paths", nargs="+", metavar="PATH",
                   help="case or KubeSchedulerConfiguration files, or folders of them")
    _plugin_option(v)
    version_options(v)
    v.set_defaults(func=_cmd_validate)
    im = sub.add_parser("import", help="turn a `kubectl get ... -o yaml` dump into a case",
                        description="Turn a dump (kubectl get nodes,pods,pv,pvc,sc,... -A -o yaml) "
                                    "into a case: objects the scheduler reads in `cluster`, pending "
                                    "pods in `pods`, completed pods and managedFields dropped.")
    im.add_argument("dump", metavar="DUMP.yaml", help="the dump (a kind: List, or several documents)")
    im.add_argument("-o", "--output", metavar="CASE.yaml", default=None,
                    help="where to write the case (default: standard output)")
    im.add_argument("--name", default=None, help="the case's metadata.name (default: from the file name)")
    im.set_defaults(func=_cmd_import)
    b = sub.add_parser("bench", help="scheduler_perf's workloads: pods per second, latency, memory")
    b.add_argument("files", nargs="*", metavar="FILE",
                   help="scheduler_perf workload files (performance-config.yaml) or cases (or folders of "
                        "cases), each benchmarked in turn")
    b.add_argument("--workload", help="run only this workload (<test case>/<workload>, or a test case)")
    b.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="override a workload parameter (repeatable)")
    b.add_argument("--json", action="store_true", help="print scheduler_perf's DataItems as JSON")
    b.add_argument("--list", action="store_true",
                   help="list the file's workloads (<test case>/<workload> and their params) and exit")
    version_options(b)
    b.add_argument("--nodes", type=int, default=None, help="SchedulingBasic without a file: nodes")
    b.add_argument("--init-pods", type=int, default=None, help="SchedulingBasic: pods scheduled first")
    b.add_argument("--pods", type=int, default=None, help="SchedulingBasic: measured pods")
    b.set_defaults(func=_cmd_bench)
    from .conformance.cli import add_parser as add_conformance_parser
    add_conformance_parser(sub)
    from .explore import add_parser as add_explore_parser
    add_explore_parser(sub, _plugin_option)
    from .diff import add_parser as add_diff_parser
    add_diff_parser(sub, _plugin_option)
    from .sweep import add_parser as add_sweep_parser
    add_sweep_parser(sub, _plugin_option)
    return p


def _tolerant_output() -> None:
    """Characters the terminal's encoding lacks (PYTHONIOENCODING=ascii, a C locale) are
    printed as backslash escapes instead of ending the run with UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "") == "strict":
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a stream that cannot change
                pass


def _quiet_stdout() -> None:
    """What is still buffered for a closed pipe goes nowhere (instead of a second error when
    the interpreter flushes it at exit)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout (in-process callers)
        pass


def main(argv: Optional[List[str]] = None) -> int:
    import os

    _tolerant_output()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cwd = os.getcwd()
    except OSError:  # the current folder was deleted: absolute paths still work
        cwd = None
    if cwd is not None and cwd not in sys.path:  # `-p module` and a case's `plugins:` can name local modules
        sys.path.append(cwd)
    from .versions import restore_run_defaults, run_defaults

    saved = run_defaults()  # the options hold for this command only (main() may run in-process)
    try:
        apply_version_options(args)
        return args.func(args)
    except UserError as e:
        _error(e)
        return 2
    except KeyboardInterrupt:
        _interrupted("stopped")
        return 130
    except BrokenPipeError:  # `schedharness run cases/ | head`: stop as a command killed by SIGPIPE
        _quiet_stdout()
        return 141
    except RecursionError as e:
        _error(UserError(f"nested or recursive beyond Python's recursion limit ({e})"))
        return 2
    except Exception as e:  # noqa: BLE001 - never a traceback: one line, exit 2
        _internal_error(e, getattr(args, "case", None) or getattr(args, "file", None)
                        or getattr(args, "dump", None))
        return 2
    finally:
        restore_run_defaults(saved)


def console_main() -> None:
    """The `schedharness` command: main(), then the process ends without freeing its objects one
    by one (the 50 million objects of a 150,000-pod case take about 17 s of CPU to free). Exit
    handlers still run; with another thread still alive, the usual interpreter exit joins it."""
    import atexit
    import os
    import threading

    try:
        code = main()
    except SystemExit as e:  # argparse's errors and --help
        code = e.code
    if not isinstance(code, int):
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: what could be written was
            pass
    os._exit(code)


if __name__ == "__main__":
    console_main()
