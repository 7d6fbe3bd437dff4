"""The `schedharness` command (kube-scheduler's cmd/kube-scheduler/app, as it were): main()
builds the parser from one module per command and runs the one asked for.

Modules: run, explain, validate, import_ (`import`), bench, explore, diff, sweep, conformance,
each with add_parser(sub) and its cmd_*(args); options (the options and checks they share, the
one-line error output). Imports: everything below (reports, bench, compare, conformance, case,
...); nothing imports from harness.cli (the console script and `python -m harness` call main).
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from ..errors import UserError
from . import bench, conformance, diff, explain, explore, import_, run, sweep, validate
from .options import (apply_version_options, case_roots, check_argv, error, internal_error, interrupted)


def _version() -> str:
    from .. import version

    return version()


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its errors one line (`error: schedharness run: argument -j/--jobs: ...`),
    exit 2, as every other error the user can cause."""

    def error(self, message: str):
        self.exit(2, " ".join(f"error: {self.prog}: {message}".split()) + "\n")


def build_parser() -> argparse.ArgumentParser:
    from ..versions import MODELLED, NEWEST

    modelled = ", ".join(MODELLED.values())
    p = _Parser(prog="schedharness",
                description=f"Run kube-scheduler's scheduling ({modelled}; a case names its "
                            f"kubernetesVersion, else {MODELLED[NEWEST]}) on YAML cases.")
    p.add_argument("--version", action="version",
                   version=f"schedharness {_version()} (models kube-scheduler {modelled}; default {MODELLED[NEWEST]})")
    sub = p.add_subparsers(dest="command", required=True)
    for command in (run, explain, validate, import_, bench, conformance, explore, diff, sweep):
        command.add_parser(sub)
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
    try:
        check_argv(sys.argv[1:] if argv is None else argv)
    except UserError as e:
        error(e)
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cwd = os.getcwd()
    except OSError:  # the current folder was deleted: absolute paths still work
        cwd = None
    if cwd is not None and cwd not in sys.path:  # `-p module` and a case's `plugins:` can name local modules
        sys.path.append(cwd)
    from ..trust import restore_roots, set_roots
    from ..versions import restore_run_defaults, run_defaults

    saved = run_defaults()  # the options hold for this command only (main() may run in-process)
    saved_roots = set_roots(case_roots(args), getattr(args, "allow_outside_root", False))
    try:
        apply_version_options(args)
        return args.func(args)
    except UserError as e:
        error(e)
        return 2
    except KeyboardInterrupt:
        interrupted("stopped")
        return 130
    except BrokenPipeError:  # `schedharness run cases/ | head`: stop as a command killed by SIGPIPE
        _quiet_stdout()
        return 141
    except RecursionError as e:
        error(UserError(f"nested or recursive beyond Python's recursion limit ({e})"))
        return 2
    except Exception as e:  # noqa: BLE001 - never a traceback: one line, exit 2
        internal_error(e, getattr(args, "case", None) or getattr(args, "file", None)
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
