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

    from .case.loader import plugin_modules

    given = list(getattr(args, "plugin", None) or [])
    modules = given + [m for m in plugin_modules(case.plugins, case.path, case.tree) if m.name not in given]
    try:
        return build_registry(modules) if modules else default_registry()
    except UserError as e:
        if e.file:
            raise
        raise UserError(e.detail, file=case.path, key="plugins") from None


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


def _cmd_run(args) -> int:
    """Every valid case runs; every invalid file (or path, or case that raises) is one error
    line and the others still run; exit 2 if any was invalid. Each file is loaded when its turn
    comes (a big file later in the list does not delay the first results); over 5 s, progress
    on stderr. Ctrl-C stops at once and prints the summary (and --json) of what finished, exit
    130."""
    from .case.loader import count_case_files, iter_case_files, load_case
    from .progress import Progress

    from .flags import check_output_file

    check_output_file(args.html, "--html")  # before the run, not after it
    results = []  # kept for --html only (each holds its scheduler)
    versions: List[str] = []  # the release each case ran on, for the summary
    coverages: List = []
    entries: List[dict] = []  # --json: each case's result, or the error line of an invalid file, in order
    passed = failed = invalid = 0
    interrupted = False
    _check_nodes(args)
    opts = None
    if getattr(args, "parallel", False) or getattr(args, "coverage", False):
        from .framework.coverage import Coverage
        from .framework.parallelize import RunSettings
        opts = RunSettings(parallel=args.parallel, coverage=Coverage() if args.coverage else None)
    explain = bool(args.verbose or args.html)  # the report's decision tables need explain's records
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
                entries.append(_error_entry(detail.file or "", _error(detail)))
                invalid += 1
            else:
                with progress.heartbeat(f"{seen} of {total} files, {done} case(s) run; reading {path}"):
                    ok, case = _attempt(path, lambda: load_case(path))
                if not ok:
                    invalid += 1
                    entries.append(_error_entry(path, case))
                else:
                    with progress.heartbeat(f"{seen} of {total} files, {done} case(s) run; running {case.name}"):
                        ok, res = _attempt(case.path, lambda: _run_with(opts, case, _registry_for(case, args),
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
                    results.append(res)
                res = None
            progress.tick(f"{seen} of {total} files, {done} case(s) run")
        if not done and not invalid:
            raise UserError("no case files found", file=" ".join(args.paths))
        if opts is not None and opts.coverage is not None and not args.json:
            from .framework.coverage import format_lines, merge
            print(f"coverage of extension points over {len(coverages)} case(s):")
            print("\n".join(format_lines(merge(coverages))))
    except KeyboardInterrupt:
        interrupted = True
        _interrupted("the cases that finished are reported below")
    if args.json:
        print(json.dumps(entries, indent=2))
    else:
        from .report import scheduler_versions

        print(f"{passed} passed, {failed} failed" + (f", {invalid} invalid" if invalid else "")
              + (f" ({scheduler_versions(versions)})" if versions else "") + (" (interrupted)" if interrupted else ""))
    if args.html:
        from .html import write_run_report

        write_run_report(args.html, results)
    if interrupted:
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
            from .report import explain_pods
            text = explain_pods(res, _failing_pods(res), _view(res, args))
            print("\n".join("    " + line for line in text.splitlines()))
    if res.coverage is not None:
        from .framework.coverage import format_lines
        print("\n".join(format_lines(res.coverage)))


def _error_entry(path: str, line: str, name: Optional[str] = None) -> dict:
    """An invalid file in `run --json`: the error line `run` printed (without "error: "), as `error`."""
    import os
    return {"case": name or os.path.splitext(os.path.basename(path))[0], "file": path, "passed": False,
            "error": line[len("error: "):] if line.startswith("error: ") else line}


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

    from .progress import Progress

    _check_nodes(args)
    progress = Progress("explain")
    with progress.heartbeat("reading the case"):
        case = load_case(args.case)
    progress.tick("case loaded, scheduling", force=True)
    # with a pod named, only its attempts are recorded node by node (a 5000-node case's 300
    # pending pods would each keep 5000 nodes' filter tables)
    with progress.heartbeat("scheduling"):
        res = run_case(case, _registry_for(case, args), explain={pod_ref(args.pod)} if args.pod else True)
    progress.tick("scheduled, printing", force=True)
    known = set(res.bindings) | set(res.preempted) | {p.key for p in res.scheduler.cluster.list("Pod")}
    if args.pod and pod_ref(args.pod) not in known:  # before the header: the error is the one line
        raise UserError(f"no pod {pod_ref(args.pod)} in the case", file=args.case, key="pod")
    print(f"case {case.name}: kube-scheduler {case.features.describe()}")
    print(explain(res, args.pod, _view(res, args)))
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
    from .case.loader import check_cheap_keys, classify_data, classify_file
    from .yamlfile import load_yaml_file

    verdict, why = classify_file(path) if in_folder else ("", "")
    if verdict in ("case", "invalid"):
        return _validate_case(path, args)
    check_cheap_keys(path)  # a big case's bad seed before its objects are read
    data = load_yaml_file(path, UserError)
    verdict, why = classify_data(data)
    if verdict in ("case", "invalid"):
        return _validate_case(path, args, data)  # (read once: a big case twice would not fit)
    if in_folder and not (isinstance(data, dict) and data.get("kind") == "KubeSchedulerConfiguration"):
        return f"{path}: skipped: {why}"
    return _validate_config(path, data, args)


def _cmd_validate(args) -> int:
    import os

    from .progress import Progress

    invalid = 0
    todo = []
    for top in args.paths:
        if os.path.isdir(top):
            found = []
            for root, dirs, names in os.walk(top):
                dirs.sort()
                found += [(os.path.join(root, n), True) for n in sorted(names) if n.endswith((".yaml", ".yml"))]
            if not found:  # as `run` says of a folder without cases
                _error(UserError("no YAML files found (cases or KubeSchedulerConfiguration files)", file=top))
                invalid += 1
            todo += found
        elif os.path.exists(top):
            todo.append((top, False))
        else:
            todo.append((top, None))
    progress = Progress("validate")
    for i, (path, in_folder) in enumerate(todo, 1):
        if in_folder is None:
            _error(UserError("no such file or folder", file=path))
            invalid += 1
            continue
        try:
            ok, msg = _attempt(path, lambda: _validate_path(path, args, in_folder))
        except KeyboardInterrupt:
            _interrupted(f"not validated from {path} on")
            return 130
        if not ok:
            invalid += 1
        elif msg:
            print(msg)
        progress.tick(f"{i} of {len(todo)} files")
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
    """-p MODULE and --allow-outside-root: the options of every command that reads cases."""
    parser.add_argument("-p", "--plugin", action="append", default=[], metavar="MODULE",
                        help="a Python module to load as a plugin, besides installed entry points and "
                             "a case's own `plugins:` (repeatable; the current folder is importable; "
                             "any importable module: this is your choice, not the case's)")
    parser.add_argument("--allow-outside-root", action="store_true", default=False,
                        help="let cases read files (config, cluster.files) and plugin modules outside "
                             "their tree (the folder given on the command line, or the case's own "
                             "folder); by default a case reaches nothing outside it")


def _case_roots(args) -> List[str]:
    """The folders (or files) given on the command line that hold cases: the cases' trees."""
    out: List[str] = []
    for name in ("paths", "case"):
        v = getattr(args, name, None)
        out += [v] if isinstance(v, str) else [p for p in (v or []) if isinstance(p, str)]
    return out


def _nodes_options(parser) -> None:
    from .report import DEFAULT_NODES

    parser.add_argument("--nodes", type=int, default=None, metavar="N",
                        help=f"show up to N nodes one by one (default {DEFAULT_NODES}): with more, nodes "
                             f"with the same Filter verdict are grouped and only the N top-scored nodes "
                             f"and preemption candidates are shown")
    parser.add_argument("--all-nodes", action="store_true", help="show every node one by one")


def _check_nodes(args) -> None:
    n = getattr(args, "nodes", None)
    if n is not None and n < 1:
        raise UserError(f"must be at least 1, not {n}", key="--nodes")


def _view(res, args):
    """The report View of a case for --nodes/--all-nodes."""
    from .report import view_of

    return view_of(res, nodes=getattr(args, "nodes", None), all_nodes=bool(getattr(args, "all_nodes", False)))


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its errors one line (`error: schedharness run: argument -j/--jobs: ...`),
    exit 2, as every other error the user can cause."""

    def error(self, message: str):
        self.exit(2, " ".join(f"error: {self.prog}: {message}".split()) + "\n")


def build_parser() -> argparse.ArgumentParser:
    from .flags import MAX_BENCH_OBJECTS, bounded_int, non_empty
    from .versions import MODELLED, NEWEST

    modelled = ", ".join(MODELLED.values())
    p = _Parser(prog="schedharness",
                description=f"Run kube-scheduler's scheduling ({modelled}; a case names its "
                            f"kubernetesVersion, else {MODELLED[NEWEST]}) on YAML cases.")
    p.add_argument("--version", action="version",
                   version=f"schedharness {_version()} (models kube-scheduler {modelled}; default {MODELLED[NEWEST]})")
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
    _nodes_options(r)
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
    _nodes_options(e)
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
    from .flags import check_argv

    try:
        check_argv(sys.argv[1:] if argv is None else argv)
    except UserError as e:
        _error(e)
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cwd = os.getcwd()
    except OSError:  # the current folder was deleted: absolute paths still work
        cwd = None
    if cwd is not None and cwd not in sys.path:  # `-p module` and a case's `plugins:` can name local modules
        sys.path.append(cwd)
    from .trust import restore_roots, set_roots
    from .versions import restore_run_defaults, run_defaults

    saved = run_defaults()  # the options hold for this command only (main() may run in-process)
    saved_roots = set_roots(_case_roots(args), getattr(args, "allow_outside_root", False))
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
        restore_roots(saved_roots)


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
