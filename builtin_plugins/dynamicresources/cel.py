"""Device selectors in CEL (dynamic-resource-allocation/cel/compile.go) on cel-python (celpy).

The `device` variable is what compile.go's DeviceMatches builds: `driver`, `attributes` and
`capacity`, the latter two maps from domain to maps from id to value; an unknown domain reads
as an empty map (compile.go's mapper with a default value), an unknown id inside a domain is
the runtime error "no such key". Kubernetes' CEL libraries that device selectors use are added
as custom functions: quantity (apiserver/pkg/cel/library/quantity.go) and semver (semverlib.go),
and the heterogeneous equality of cel-go (`"a" == 1` is false, `1 == 1.0` is true).

Also added: the strings extension (charAt, indexOf, lastIndexOf, lowerAscii, replace, split,
substring, trim, upperAscii, join) and the lists library's indexOf/lastIndexOf. Known gaps
(failing loudly: a compile error saying schedharness does not implement the function): the rest
of the lists library, sets, regex find/findAll, URL/IP/CIDR libraries, format/quote, optional
types, two-variable comprehensions and `cel.bind`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import total_ordering
from typing import Any, Dict, Mapping, Optional, Tuple

import celpy
import lark
from celpy import celtypes

from harness.api.quantity import QuantityError, parse_quantity

__all__ = ["CompilationResult", "CELCache", "compile_expression", "Quantity", "Semver"]


# ---- Kubernetes CEL types -------------------------------------------------------------------

@total_ordering
class Quantity:
    """apiservercel.Quantity: compared by value (Quantity.Cmp)."""

    __slots__ = ("text", "value")

    def __init__(self, text: str):
        self.text = text
        self.value: Fraction = parse_quantity(text)

    def __eq__(self, other):
        return isinstance(other, Quantity) and self.value == other.value

    def __lt__(self, other):
        return self.value < other.value

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return f"quantity({self.text!r})"


_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
                     r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
                     r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


class Semver:
    """apiservercel.Semver over blang/semver v4 (Parse: strict semver 2.0.0)."""

    __slots__ = ("text", "major", "minor", "patch", "pre")

    def __init__(self, text: str):
        m = _SEMVER.match(text)
        if not m:
            raise ValueError(f"No Major.Minor.Patch elements found" if text.count(".") < 2
                             else f"Invalid semantic version")
        self.text = text
        self.major, self.minor, self.patch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        self.pre = tuple(m.group(4).split(".")) if m.group(4) else ()

    def compare(self, other: "Semver") -> int:
        """semver.Version.Compare: build metadata ignored; a prerelease sorts before the release."""
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if not self.pre and not other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for x, y in zip(self.pre, other.pre):
            if x == y:
                continue
            xn, yn = x.isdigit(), y.isdigit()
            if xn and yn:
                return -1 if int(x) < int(y) else 1
            if xn != yn:
                return -1 if xn else 1
            return -1 if x < y else 1
        if len(self.pre) == len(other.pre):
            return 0
        return -1 if len(self.pre) < len(other.pre) else 1

    def __eq__(self, other):
        return isinstance(other, Semver) and self.compare(other) == 0

    def __hash__(self):
        return hash((self.major, self.minor, self.patch, self.pre))

    def __repr__(self):
        return f"semver({self.text!r})"


class CELRuntimeError(Exception):
    pass


def _err(msg: str):
    raise CELRuntimeError(msg)


def _quantity(s):
    try:
        return Quantity(str(s))
    except (QuantityError, ValueError, ZeroDivisionError):
        _err("quantities must match the regular expression "
             "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def _is_quantity(s):
    try:
        Quantity(str(s))
        return celtypes.BoolType(True)
    except (QuantityError, ValueError, ZeroDivisionError):
        return celtypes.BoolType(False)


def _semver(s, normalize=None):
    try:
        return Semver(str(s))
    except ValueError as e:
        _err(f"error parsing semver: {e}")


def _is_semver(s, normalize=None):
    try:
        Semver(str(s))
        return celtypes.BoolType(True)
    except ValueError:
        return celtypes.BoolType(False)


def _cmp(a, b) -> int:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return (a.value > b.value) - (a.value < b.value)
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.compare(b)
    _err(f"no such overload")


def _compare_to(a, b):
    return celtypes.IntType(_cmp(a, b))


def _is_less_than(a, b):
    return celtypes.BoolType(_cmp(a, b) < 0)


def _is_greater_than(a, b):
    return celtypes.BoolType(_cmp(a, b) > 0)


def _sign(q):
    if not isinstance(q, Quantity):
        _err("no such overload")
    return celtypes.IntType((q.value > 0) - (q.value < 0))


def _is_integer(q):
    if not isinstance(q, Quantity):
        _err("no such overload")
    return celtypes.BoolType(q.value.denominator == 1 and -(2 ** 63) <= q.value <= 2 ** 63 - 1)


def _as_integer(q):
    if not isinstance(q, Quantity):
        _err("no such overload")
    if q.value.denominator != 1 or not -(2 ** 63) <= q.value <= 2 ** 63 - 1:
        _err("cannot convert value to integer")
    return celtypes.IntType(int(q.value))


def _as_approximate_float(q):
    if not isinstance(q, Quantity):
        _err("no such overload")
    return celtypes.DoubleType(float(q.value))


def _q_arith(sign):
    def fn(a, b):
        if not isinstance(a, Quantity):
            _err("no such overload")
        v = b.value if isinstance(b, Quantity) else Fraction(int(b))
        out = Quantity.__new__(Quantity)
        out.value = a.value + sign * v
        out.text = str(out.value)
        return out
    return fn


def _semver_part(attr):
    def fn(s):
        if not isinstance(s, Semver):
            _err("no such overload")
        return celtypes.IntType(getattr(s, attr))
    return fn


_NUMERIC = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)


def _hetero_eq(a, b) -> bool:
    """cel-go's heterogeneous equality: numbers compare by value across int, uint and double;
    values of other different types are not equal (no error)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and bool(a) == bool(b)
    if isinstance(a, _NUMERIC) and isinstance(b, _NUMERIC):
        return a == b if type(a) is type(b) else float(a) == float(b) if (
            isinstance(a, celtypes.DoubleType) or isinstance(b, celtypes.DoubleType)) else int(a) == int(b)
    if isinstance(a, (Quantity, Semver)) or isinstance(b, (Quantity, Semver)):
        return type(a) is type(b) and a == b
    if isinstance(a, celtypes.ListType) and isinstance(b, celtypes.ListType):
        return len(a) == len(b) and all(_hetero_eq(x, y) for x, y in zip(a, b))
    if isinstance(a, celtypes.MapType) and isinstance(b, celtypes.MapType):
        return len(a) == len(b) and all(k in b and _hetero_eq(v, b[k]) for k, v in a.items())
    if type(a) is not type(b) and not (isinstance(a, type(b)) or isinstance(b, type(a))):
        return False
    return a == b


def _eq(a, b):
    return celtypes.BoolType(_hetero_eq(a, b))


def _ne(a, b):
    return celtypes.BoolType(not _hetero_eq(a, b))


def _lower_ascii(s):
    return celtypes.StringType(str(s).lower())


def _upper_ascii(s):
    return celtypes.StringType(str(s).upper())


def _str(x) -> str:
    if not isinstance(x, celtypes.StringType):
        _err("no such overload")
    return str(x)


def _char_at(s, i):
    t = _str(s)
    i = int(i)
    if i < 0 or i > len(t):
        _err(f"index out of range: {i}")
    return celtypes.StringType(t[i:i + 1])


def _index_of(x, sub, start=None):
    if isinstance(x, celtypes.ListType):  # the Kubernetes lists library
        for i, v in enumerate(x):
            if _hetero_eq(v, sub):
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    t, u = _str(x), _str(sub)
    b = 0 if start is None else int(start)
    if b < 0 or b > len(t):
        _err(f"index out of range: {b}")
    return celtypes.IntType(t.find(u, b))


def _last_index_of(x, sub, end=None):
    if isinstance(x, celtypes.ListType):
        for i in range(len(x) - 1, -1, -1):
            if _hetero_eq(x[i], sub):
                return celtypes.IntType(i)
        return celtypes.IntType(-1)
    t, u = _str(x), _str(sub)
    e = len(t) if end is None else int(end)
    if e < 0 or e > len(t):
        _err(f"index out of range: {e}")
    return celtypes.IntType(t.rfind(u, 0, e + len(u)))


def _replace(s, old, new, n=None):
    t = _str(s)
    return celtypes.StringType(t.replace(_str(old), _str(new)) if n is None or int(n) < 0
                               else t.replace(_str(old), _str(new), int(n)))


def _split(s, sep, n=None):
    t, p = _str(s), _str(sep)
    if n is not None and int(n) == 0:
        return celtypes.ListType([])
    parts = t.split(p, int(n) - 1) if n is not None and int(n) > 0 else (list(t) if p == "" else t.split(p))
    return celtypes.ListType([celtypes.StringType(x) for x in parts])


def _substring(s, start, end=None):
    t = _str(s)
    b, e = int(start), (len(t) if end is None else int(end))
    if b < 0 or b > len(t) or e < b or e > len(t):
        _err(f"index out of range: {b if b < 0 or b > len(t) else e}")
    return celtypes.StringType(t[b:e])


def _trim(s):
    return celtypes.StringType(_str(s).strip())


def _join(lst, sep=None):
    if not isinstance(lst, celtypes.ListType):
        _err("no such overload")
    return celtypes.StringType(("" if sep is None else _str(sep)).join(_str(x) for x in lst))


def _propagating(fn):
    """A custom function receives an argument that failed as a CELEvalError: pass it on."""
    def wrapped(*args):
        for a in args:
            if isinstance(a, celpy.CELEvalError):
                return a
        try:
            return fn(*args)
        except CELRuntimeError as e:
            return celpy.CELEvalError(str(e), CELRuntimeError, None)
    wrapped.__name__ = getattr(fn, "__name__", "fn")
    return wrapped


FUNCTIONS: Dict[str, Any] = {
    "quantity": _quantity, "isQuantity": _is_quantity,
    "semver": _semver, "isSemver": _is_semver,
    "compareTo": _compare_to, "isLessThan": _is_less_than, "isGreaterThan": _is_greater_than,
    "sign": _sign, "isInteger": _is_integer, "asInteger": _as_integer,
    "asApproximateFloat": _as_approximate_float, "add": _q_arith(1), "sub": _q_arith(-1),
    "major": _semver_part("major"), "minor": _semver_part("minor"), "patch": _semver_part("patch"),
    "lowerAscii": _lower_ascii, "upperAscii": _upper_ascii,
    "charAt": _char_at, "indexOf": _index_of, "lastIndexOf": _last_index_of, "replace": _replace,
    "split": _split, "substring": _substring, "trim": _trim, "join": _join,
    "_==_": _eq, "_!=_": _ne,
}
FUNCTIONS = {k: _propagating(v) for k, v in FUNCTIONS.items()}

_MACROS = {"has", "all", "exists", "exists_one", "map", "filter", "dyn"}
_KNOWN_FUNCTIONS = set(FUNCTIONS) | set(celpy.evaluation.base_functions) | _MACROS
_DECLARED = {"device"}
# Functions of the CEL environment kube-scheduler v1.34 compiles device selectors in (cel-go's
# ext.Bindings, ext.Sets, ext.TwoVarComprehensions, optional types, and the Kubernetes lists,
# regex, URL, IP, CIDR and format libraries) that the harness does not implement: a selector
# using one fails loudly, naming it, rather than with an error v1.34 would not give.
_NOT_IMPLEMENTED = {
    "bind", "contains_all", "equivalent", "intersects", "isSorted", "sum", "min", "max", "slice",
    "flatten", "reverse", "distinct", "sort", "sortBy", "find", "findAll", "url", "isURL",
    "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery", "ip",
    "isIP", "cidr", "isCIDR", "containsIP", "containsCIDR", "prefixLength", "masked",
    "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
    "isGlobalUnicast", "format", "quote", "transformList", "transformMap", "transformMapEntry",
    "existsOne", "of", "ofNonZeroValue", "none", "orValue", "hasValue", "value", "or",
}


# ---- the device variable ----------------------------------------------------------------------

class _DefaultingMap(celtypes.MapType):
    """compile.go's mapper: a missing domain reads as an empty map."""

    def __getitem__(self, key):
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType({})



def _parse_qualified_name(name: str, default_domain: str) -> Tuple[str, str]:
    """parseQualifiedName."""
    i = name.find("/")
    if i < 0:
        return default_domain, name
    return name[:i], name[i + 1:]


def attribute_value(attr: Mapping[str, Any]):
    """getAttributeValue: int, bool, string or version (a semver)."""
    if attr.get("int") is not None:
        return celtypes.IntType(int(attr["int"]))
    if attr.get("bool") is not None:
        return celtypes.BoolType(bool(attr["bool"]))
    if attr.get("string") is not None:
        return celtypes.StringType(str(attr["string"]))
    if attr.get("version") is not None:
        try:
            return Semver(str(attr["version"]))
        except ValueError as e:
            raise CELRuntimeError(f"parse semantic version: {e}")
    raise CELRuntimeError("unsupported attribute value")


def device_variable(driver: str, device: Mapping[str, Any]) -> celtypes.MapType:
    """The `device` variable of DeviceMatches for one device of a slice."""
    attributes: Dict[str, Dict[Any, Any]] = {}
    for name, attr in (device.get("attributes") or {}).items():
        try:
            v = attribute_value(attr or {})
        except CELRuntimeError as e:
            raise CELRuntimeError(f"attribute {name}: {e}")
        domain, ident = _parse_qualified_name(name, driver)
        attributes.setdefault(domain, {})[celtypes.StringType(ident)] = v
    capacity: Dict[str, Dict[Any, Any]] = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = _parse_qualified_name(name, driver)
        capacity.setdefault(domain, {})[celtypes.StringType(ident)] = Quantity(str((cap or {}).get("value", "0")))
    return celtypes.MapType({
        celtypes.StringType("driver"): celtypes.StringType(driver),
        celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(False),
        celtypes.StringType("attributes"): _DefaultingMap(
            {celtypes.StringType(d): celtypes.MapType(m) for d, m in attributes.items()}),
        celtypes.StringType("capacity"): _DefaultingMap(
            {celtypes.StringType(d): celtypes.MapType(m) for d, m in capacity.items()}),
    })


# ---- compiling and evaluating -----------------------------------------------------------------

@dataclass
class CompilationResult:
    """cel.CompilationResult: a program, or the compile error (`error`, worded as
    `compilation failed: ...`)."""

    expression: str
    program: Any = None
    error: Optional[str] = None

    def device_matches(self, variable: celtypes.MapType) -> bool:
        """CompilationResult.DeviceMatches: the boolean result, or CELRuntimeError."""
        try:
            result = self.program.evaluate({"device": variable})
        except CELRuntimeError:
            raise
        except celpy.CELEvalError as e:
            raise CELRuntimeError(_runtime_message(e))
        except Exception as e:  # celpy surfaces some evaluation errors as Python exceptions
            raise CELRuntimeError(str(e))
        if isinstance(result, celpy.CELEvalError):
            raise CELRuntimeError(_runtime_message(result))
        if not isinstance(result, celtypes.BoolType):
            raise CELRuntimeError(f"CEL result of type {type(result).__name__} could not be converted to bool")
        return bool(result)


def _runtime_message(e: Exception) -> str:
    args = getattr(e, "args", ())
    cause = e.__cause__
    if isinstance(cause, CELRuntimeError):
        return str(cause)
    text = args[0] if args else str(e)
    m = re.match(r"no such member in mapping: '(.*)'", str(text))
    if m:
        return f"no such key: {m.group(1)}"
    if len(args) >= 3 and args[1] is KeyError and args[2]:
        key = args[2][0] if isinstance(args[2], tuple) and args[2] else args[2]
        return f"no such key: {key}"
    m = re.match(r"no such member in mapping: '(.*)'", str(text))
    if m:
        return f"no such key: {m.group(1)}"
    return str(text)


_ENV = celpy.Environment()


def _static_check(tree: "lark.Tree", expression: str) -> Optional[str]:
    """The part of cel-go's type check that celpy leaves to run time: references to undeclared
    variables and unknown functions are compile errors."""
    bound = set()
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg" and len(node.children) >= 3:
            name = node.children[1]
            if str(name) in ("all", "exists", "exists_one", "map", "filter"):
                args = node.children[2]
                first = args.children[0] if isinstance(args, lark.Tree) and args.children else None
                for t in (first.scan_values(lambda v: isinstance(v, lark.Token)) if isinstance(first, lark.Tree) else []):
                    if t.type == "IDENT":
                        bound.add(str(t))
    for node in tree.iter_subtrees():
        if node.data in ("ident_arg", "member_dot_arg") and len(node.children) >= 1:
            tok = node.children[0] if node.data == "ident_arg" else node.children[1]
            if str(tok) in _NOT_IMPLEMENTED:
                return (f"schedharness does not implement the Kubernetes CEL function '{tok}' "
                        f"(kube-scheduler v1.34 accepts it); rewrite the selector without it")
    for node in tree.iter_subtrees():
        if node.data == "ident" and node.children:
            name = str(node.children[0])
            if name not in _DECLARED and name not in bound:
                return _compile_error(expression, node.children[0],
                                      f"undeclared reference to '{name}' (in container '')")
        if node.data in ("ident_arg", "member_dot_arg") and len(node.children) >= 1:
            tok = node.children[0] if node.data == "ident_arg" else node.children[1]
            name = str(tok)
            if name not in _KNOWN_FUNCTIONS:
                if node.data == "ident_arg":
                    return _compile_error(expression, tok, f"undeclared reference to '{name}' (in container '')")
                return _compile_error(expression, tok, f"undeclared reference to '{name}' (in container '')")
    return None


def _compile_error(expression: str, token, detail: str) -> str:
    line = getattr(token, "line", 1) or 1
    col = getattr(token, "column", 1) or 1
    src = expression.splitlines()[line - 1] if expression.splitlines() else ""
    return (f"compilation failed: ERROR: <input>:{line}:{col}: {detail}\n | {src}\n | "
            + "." * (col - 1) + "^")


def compile_expression(expression: str) -> CompilationResult:
    """compiler.CompileCELExpression for a device selector."""
    try:
        tree = _ENV.compile(expression)
    except celpy.CELParseError as e:
        line = getattr(e, "line", None) or 1
        col = getattr(e, "column", None) or 1
        src = expression.splitlines()[line - 1] if expression.splitlines() else ""
        return CompilationResult(expression, error=(
            f"compilation failed: ERROR: <input>:{line}:{col}: Syntax error: unexpected input"
            f"\n | {src}\n | " + "." * (max(col, 1) - 1) + "^"))
    err = _static_check(tree, expression)
    if err:
        return CompilationResult(expression, error=err)
    return CompilationResult(expression, program=_ENV.program(tree, functions=FUNCTIONS))


class CELCache:
    """cel.Cache: compiled expressions by their text (upstream keeps the last 10; compiling is
    deterministic, so keeping all of them gives the same results), and, as a harness speed-up
    with the same results, each (expression, device) outcome: a selector is a pure function
    of the device's driver, attributes and capacity."""

    def __init__(self):
        self._compiled: Dict[str, CompilationResult] = {}
        self._matches: Dict[Tuple[str, int], Tuple[bool, Optional[str]]] = {}

    def get_or_compile(self, expression: str) -> CompilationResult:
        r = self._compiled.get(expression)
        if r is None:
            r = self._compiled[expression] = compile_expression(expression)
        return r
