"""resource.Quantity parsing (k8s.io/apimachinery/pkg/api/resource), exact with Fractions.

`value` and `milli_value` round up, as Quantity.Value() and Quantity.MilliValue() do.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

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
