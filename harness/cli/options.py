"""What the commands share: the options several take (-p, --kubernetes-version, --nodes), the
command-line values checked when the command line is parsed (argparse types and checks run
before any case does: a bad value is one line naming the flag, exit 2), and the one-line error
output every command ends with (never a traceback).

Bounds (README, "Commands"): `-j/--jobs` 1 to 256; `explore --runs` 1 to 100,000; `bench
--nodes` and `--pods` 1 to 250,000, `--init-pods` 0 to 250,000 (a case's object limit, MAX_OBJECTS);
`sweep --weight` values 1 to 2147483647 (a Score weight is an int32; kube-scheduler makes 0 a 1 and
nothing in a profile means a negative one); text values (`--workload`, `--dask-scheduler`, a
`--param` name) not empty; an output file (`--html`, `--chart`) in a folder that exists and can be
written, and not itself a folder; no argument holds a NUL byte."""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Callable, Iterable, List, Optional

from ..errors import UserError

MAX_JOBS = 256
MAX_RUNS = 100_000
MAX_BENCH_OBJECTS = 250_000  # yamlfile.MAX_OBJECTS: what a case may hold
MAX_WEIGHT = 2 ** 31 - 1


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a decimal integer from `low` to `high` (checked before int() reads it,
    so a 5000-digit value is an error like any other)."""
    def parse(text: str) -> int:
        t = text.strip()
        digits = t[1:] if t[:1] in "+-" else t
        if not digits.isdigit() or not digits.isascii():
            raise argparse.ArgumentTypeError(f"must be an integer from {low} to {high}, got {text[:40]!r}")
        if len(digits) > 18 or not low <= int(t) <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {text[:40]}")
        return int(t)
    parse.__name__ = "integer"
    return parse


def non_empty(text: str) -> str:
    """An argparse type: any text but an empty (or blank) one."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def check_argv(argv: Iterable[str]) -> None:
    """No argument holds a NUL byte (no path, name or value can: the operating system would
    refuse it deep inside a run)."""
    for i, a in enumerate(argv):
        if "\0" in a:
            raise UserError(f"argument {i + 1} ({a.split(chr(0))[0][:60]!r}...) holds a NUL byte, which no "
                            f"path or value may hold")


def check_output_file(path: Optional[str], flag: str) -> None:
    """An output file the command writes at its end, checked before it starts: not a folder, in
    a folder that exists and that this user may write (an existing file must be writable too)."""
    if not path or path == "-":  # none asked for (`--chart ''` turns the chart off)
        return
    if os.path.isdir(path):
        raise UserError(f"{path} is a folder, not a file to write", key=flag)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UserError(f"cannot write {path}: the folder {folder} does not exist", key=flag)
    existed = os.path.exists(path)
    try:
        with open(path, "a", encoding="utf-8"):  # what the write at the end will meet
            pass
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}", key=flag) from None
    if not existed:
        try:
            os.remove(path)
        except OSError:
            pass


def check_plugin_modules(modules: Iterable[str], flag: str = "-p") -> None:
    """The `-p` modules import and register (before any case runs: otherwise every case would
    fail alike, one by one, or be skipped)."""
    modules = list(modules or [])
    if not modules:
        return
    from ..framework.registry import build_registry

    try:
        build_registry(modules)
    except UserError as e:
        raise UserError(e.detail, key=f"{flag} {e.file or ''}".strip() if not e.key else f"{flag}") from None


MAX_ERROR_LINE = 1000  # an error names a file, a key and a value cut short: never a whole object


def error(e: UserError) -> str:
    """Print a user error as its one `error: ...` line on stderr; returns the line."""
    line = " ".join(f"error: {e}".split())
    m = re.search(r'Plugin "([^"]+)" does not exist', line)
    if m:  # upstream's words name the first extension point checked; say what to do as well
        line += (f' (no plugin named "{m.group(1)}" is registered: install its package, or load its '
                 f"module with -p MODULE or the case's plugins:)")
    if len(line) > MAX_ERROR_LINE:
        line = line[:MAX_ERROR_LINE] + "..."
    print(line, file=sys.stderr)
    return line


def internal_error(exc: BaseException, file: Optional[str] = None) -> str:
    """An exception no check foresaw (a bug in the harness, or in a plugin outside its hooks):
    one error line naming the file, the exception and where it was raised; the other cases
    still run. SCHEDHARNESS_TRACEBACK=1 prints the traceback as well."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    text = str(exc)[:300]
    line = error(UserError(f"internal error{where}: {type(exc).__name__}" + (f": {text}" if text else "")
                           + " (please report it; SCHEDHARNESS_TRACEBACK=1 shows the traceback)", file=file))
    if os.environ.get("SCHEDHARNESS_TRACEBACK"):
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    return line


def attempt(file: Optional[str], fn):
    """(True, fn()) or, when fn raises (a UserError or anything else but an interrupt), the
    error line printed and (False, that line): one bad file never stops the others."""
    try:
        return True, fn()
    except BrokenPipeError:  # the reader of our output went away: main() stops quietly
        raise
    except UserError as e:
        return False, error(e)
    except RecursionError as e:
        return False, error(UserError(f"nested or recursive beyond Python's recursion limit ({e})", file=file))
    except Exception as e:  # noqa: BLE001 - the one place that turns the unforeseen into a line
        return False, internal_error(e, file)


def interrupted(what: str) -> None:
    print(f"interrupted: {what}", file=sys.stderr)


def registry_for(case, args):
    """The registry for a case: installed plugins, `-p` modules and the case's own `plugins:`."""
    from ..case.loader import plugin_modules
    from ..framework.registry import build_registry, default_registry

    given = list(getattr(args, "plugin", None) or [])
    modules = given + [m for m in plugin_modules(case.plugins, case.path, case.tree) if m.name not in given]
    try:
        return build_registry(modules) if modules else default_registry()
    except UserError as e:
        if e.file:
            raise
        raise UserError(e.detail, file=case.path, key="plugins") from None


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
    from ..versions import parse_gate_flag, set_run_defaults

    version = getattr(args, "kubernetes_version", None)
    text = getattr(args, "feature_gates", None)
    if version is None and text is None:
        return  # the defaults stand (pytest's option, $SCHEDHARNESS_KUBERNETES_VERSION, the newest)
    gates = parse_gate_flag(text, file="--feature-gates") if text else {}
    set_run_defaults(version, gates)


def plugin_option(parser) -> None:
    """-p MODULE and --allow-outside-root: the options of every command that reads cases."""
    parser.add_argument("-p", "--plugin", action="append", default=[], metavar="MODULE",
                        help="a Python module to load as a plugin, besides installed entry points and "
                             "a case's own `plugins:` (repeatable; the current folder is importable; "
                             "any importable module: this is your choice, not the case's)")
    parser.add_argument("--allow-outside-root", action="store_true", default=False,
                        help="let cases read files (config, cluster.files) and plugin modules outside "
                             "their tree (the folder given on the command line, or the case's own "
                             "folder); by default a case reaches nothing outside it")


def jobs_options(parser) -> None:
    """-j/--jobs N and --dask-scheduler ADDRESS: where `diff` and `sweep` run their cases."""
    parser.add_argument("-j", "--jobs", type=bounded_int(1, MAX_JOBS), default=1, metavar="N",
                        help="run the cases on N processes (1 to 256)")
    parser.add_argument("--dask-scheduler", metavar="ADDRESS", default=None, type=non_empty,
                        help="run the cases on a Dask cluster (the `dask` extra)")


def case_roots(args) -> List[str]:
    """The folders (or files) given on the command line that hold cases: the cases' trees."""
    out: List[str] = []
    for name in ("paths", "case"):
        v = getattr(args, name, None)
        out += [v] if isinstance(v, str) else [p for p in (v or []) if isinstance(p, str)]
    return out


def nodes_options(parser) -> None:
    """--nodes N and --all-nodes: how many nodes a decision table shows one by one."""
    from ..reports.text import DEFAULT_NODES

    parser.add_argument("--nodes", type=int, default=None, metavar="N",
                        help=f"show up to N nodes one by one (default {DEFAULT_NODES}): with more, nodes "
                             f"with the same Filter verdict are grouped and only the N top-scored nodes "
                             f"and preemption candidates are shown")
    parser.add_argument("--all-nodes", action="store_true", help="show every node one by one")


def check_nodes(args) -> None:
    n = getattr(args, "nodes", None)
    if n is not None and n < 1:
        raise UserError(f"must be at least 1, not {n}", key="--nodes")


def view(res, args):
    """The report View of a case for --nodes/--all-nodes."""
    from ..reports.text import view_of

    return view_of(res, nodes=getattr(args, "nodes", None), all_nodes=bool(getattr(args, "all_nodes", False)))
