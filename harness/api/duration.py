"""Go durations: time.ParseDuration (src/time/format.go) and time.Duration.String (src/time/time.go),
on int64 nanoseconds."""

from __future__ import annotations

import json
from typing import Tuple


def _quote(s: str) -> str:
    """Go's strconv.Quote, close enough (printable non-ASCII is kept, as Go does)."""
    return json.dumps(s, ensure_ascii=False)


_UNIT_NS = {"ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000,
            "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}
_MAX = 1 << 63


def parse_duration_ns(text: str) -> int:
    """time.ParseDuration: `1h30m`, `500ms`, `2.5s`, `0` in int64 nanoseconds, computed as Go
    does (overflow is an error). Raises ValueError with Go's message."""
    orig, s = text, text
    invalid = ValueError(f"time: invalid duration {_quote(orig)}")
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise invalid
    d = 0
    while s:
        i = 0
        while i < len(s) and s[i].isdigit() and s[i].isascii():
            i += 1
        pre = i > 0
        v = int(s[:i]) if pre else 0
        if v > _MAX:
            raise invalid
        s = s[i:]
        f, scale, post = 0, 1, False
        if s[:1] == ".":
            s = s[1:]
            i = 0
            overflow = False
            while i < len(s) and s[i].isdigit() and s[i].isascii():
                if not overflow:
                    if f > (_MAX - 1) // 10:
                        overflow = True  # leadingFraction ignores digits that would overflow
                    else:
                        f, scale = f * 10 + int(s[i]), scale * 10
                i += 1
            post = i > 0
            s = s[i:]
        if not pre and not post:
            raise invalid
        i = 0
        while i < len(s) and s[i] != "." and not (s[i].isdigit() and s[i].isascii()):
            i += 1
        if i == 0:
            raise ValueError(f"time: missing unit in duration {_quote(orig)}")
        unit_name, s = s[:i], s[i:]
        unit = _UNIT_NS.get(unit_name)
        if unit is None:
            raise ValueError(f"time: unknown unit {_quote(unit_name)} in duration {_quote(orig)}")
        if v > _MAX // unit:
            raise invalid
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > _MAX:
                raise invalid
        d += v
        if d > _MAX:
            raise invalid
    if not neg and d > _MAX - 1:
        raise invalid
    return -d if neg else d


def _fmt_frac(v: int, prec: int) -> Tuple[str, int]:
    digits = []
    printed = False
    for _ in range(prec):
        digit = v % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        v //= 10
    frac = "." + "".join(reversed(digits)) if printed else ""
    return frac, v


def format_duration(ns: int) -> str:
    """time.Duration.String()."""
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    if u < 1000000000:
        if u < 1000:
            out = f"{u}ns"
        elif u < 1000000:
            frac, whole = _fmt_frac(u, 3)
            out = f"{whole}{frac}\u00b5s"
        else:
            frac, whole = _fmt_frac(u, 6)
            out = f"{whole}{frac}ms"
    else:
        frac, secs = _fmt_frac(u, 9)
        out = f"{secs % 60}{frac}s"
        mins = secs // 60
        if mins > 0:
            out = f"{mins % 60}m" + out
            hours = mins // 60
            if hours > 0:
                out = f"{hours}h" + out
    return "-" + out if neg else out
