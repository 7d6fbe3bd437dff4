"""resource.Quantity parsing (k8s.io/apimachinery/pkg/api/resource), exact with Fractions.

`value` and `milli_value` round up, as Quantity.Value() and Quantity.MilliValue() do.
"""

from __future__ import annotations

import re
from fractions import Fraction
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Tuple

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
            "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_RE = re.compile(r"^([+-]?[0-9]*\.?[0-9]*)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$")


# decimal exponents beyond 10**99999 are refused: upstream keeps them as a scale, exact
# Fractions here would build the number (no node or request is ever that large)
MAX_EXPONENT_DIGITS = 5


class QuantityError(ValueError):
    pass


@lru_cache(maxsize=4096)
def parse_quantity(text) -> Fraction:
    """Parse a quantity string ("500m", "1Gi", "2", 1.5) into an exact Fraction."""
    if isinstance(text, bool):
        raise QuantityError(f"quantities must match the regular expression, got {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        if text != text or text in (float("inf"), float("-inf")):  # YAML .nan/.inf: no JSON number
            raise QuantityError(f"quantities must match the regular expression, got {text!r}")
        return Fraction(str(text))
    s = str(text).strip()
    m = _RE.match(s)
    if not s or not m or m.group(1) in ("", "+", "-", "."):
        raise QuantityError(f"quantities must match the regular expression "
                            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {text!r}")
    number = Fraction(m.group(1))
    if m.group(2):
        exp = m.group(2)[1:].lstrip("+-").lstrip("0")
        if len(exp) > MAX_EXPONENT_DIGITS:  # 10**exp would not fit in memory (nor in int64)
            raise QuantityError(f"quantity exponent too large: {str(text)[:40]!r}")
        return number * Fraction(10) ** int(m.group(2)[1:])
    suffix = m.group(3) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    return number * _DECIMAL[suffix]


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


@lru_cache(maxsize=4096)
def value(text) -> int:
    """Quantity.Value(): the integer value, rounded up."""
    return _ceil(parse_quantity(text))


@lru_cache(maxsize=4096)
def milli_value(text) -> int:
    """Quantity.MilliValue(): the value in thousandths, rounded up."""
    return _ceil(parse_quantity(text) * 1000)


# ---- a quantity with its format, and Quantity.String ---------------------------------------------

@dataclass(frozen=True)
class Q:
    """A resource.Quantity: its value and the format ParseQuantity gave it."""

    value: Fraction
    fmt: str = "DecimalSI"  # DecimalSI, BinarySI, DecimalExponent

    def __str__(self) -> str:
        return quantity_string(self.value, self.fmt)


_EXPONENT = re.compile(r"^[+-]?[0-9.]*[eE][+-]?[0-9]+$")


def parse_q(raw: Any) -> Q:
    """ParseQuantity (or a JSON number): the value and its format."""
    v = parse_quantity(raw)
    if isinstance(raw, str):
        s = raw.strip()
        if s.endswith(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")):
            return Q(v, "BinarySI")
        if _EXPONENT.match(s):
            return Q(v, "DecimalExponent")
    return Q(v, "DecimalSI")


def _round_up_nano(v: Fraction) -> Fraction:
    """Quantities keep nine decimals, rounded up (away from zero for the magnitude)."""
    scaled = v * 10 ** 9
    if scaled.denominator == 1:
        return v
    n = -((-scaled.numerator) // scaled.denominator) if v > 0 else scaled.numerator // scaled.denominator
    return Fraction(n, 10 ** 9)


_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = {0: "", 10: "Ki", 20: "Mi", 30: "Gi", 40: "Ti", 50: "Pi", 60: "Ei"}


def quantity_string(value: Fraction, fmt: str = "DecimalSI") -> str:
    """Quantity.String (CanonicalizeBytes): BinarySI only for integers outside (-1024, 1024),
    else DecimalSI; the largest suffix that keeps the mantissa an integer."""
    v = _round_up_nano(Fraction(value))
    if v == 0:
        return "0"
    sign = "-" if v < 0 else ""
    a = abs(v)
    if fmt == "BinarySI" and a >= 1024 and a.denominator == 1:
        n, e = int(a), 0
        while n % 1024 == 0 and e < 60:
            n //= 1024
            e += 10
        return f"{sign}{n}{_BINARY_SUFFIX[e]}"
    # decimal: mantissa * 10**exp, exp a multiple of 3, mantissa an integer
    exp = -9
    n = int(a * 10 ** 9)
    while n % 1000 == 0 and exp < 18:
        n //= 1000
        exp += 3
    if fmt == "DecimalExponent":
        return f"{sign}{n}" + (f"e{exp}" if exp else "")
    return f"{sign}{n}{_DECIMAL_SUFFIX[exp]}"
