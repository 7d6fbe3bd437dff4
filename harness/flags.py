"""Command-line values checked when the command line is parsed (argparse types and checks run
before any case does): a bad value is one line naming the flag, exit 2.

Bounds (README, "Commands"): `-j/--jobs` 1 to 256; `explore --runs` 1 to 100,000; `bench
--nodes` and `--pods` 1 to 250,000, `--init-pods` 0 to 250,000 (a case's object limit, MAX_OBJECTS);
`sweep --weight` values 1 to 2147483647 (a Score weight is an int32; kube-scheduler makes 0 a 1 and
nothing in a profile means a negative one); text values (`--workload`, `--dask-scheduler`, a
`--param` name) not empty; an output file (`--html`, `--chart`) in a folder that exists and can be
written, and not itself a folder; no argument holds a NUL byte."""

from __future__ import annotations

import argparse
import os
from typing import Callable, Iterable, Optional

from .errors import UserError

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
    from .framework.registry import build_registry

    try:
        build_registry(modules)
    except UserError as e:
        raise UserError(e.detail, key=f"{flag} {e.file or ''}".strip() if not e.key else f"{flag}") from None


__all__ = ["check_plugin_modules", "MAX_JOBS", "MAX_RUNS", "MAX_BENCH_OBJECTS", "MAX_WEIGHT", "bounded_int", "non_empty",
           "check_argv", "check_output_file"]
