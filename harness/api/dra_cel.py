"""Device selectors in CEL (dynamic-resource-allocation/cel/compile.go) on cel-python (celpy).

One library for the API server's validation (the cost estimate, api/dra_validation.py) and the
DynamicResources plugin, as k8s.io/dynamic-resource-allocation/cel is upstream: so it sits in
harness.api, below both.

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
        celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(
            bool(device.get("allowMultipleAllocations"))),
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


# ---- cost: the worst-case estimate at validation, the budget at evaluation -------------------
#
# kube-scheduler and the API server give a device selector CELSelectorExpressionMaxCost
# (1,000,000) cost units: the API server refuses an expression whose *estimated* worst-case cost
# (cel-go's checker.Cost with the DRA size estimator: maps of attributes and capacities have at
# most 32 entries, strings at most 64 bytes) exceeds it ("too complex, exceeds cost limit"), and
# evaluation stops once the *actual* cost passes it (cel.CostLimit: "operation cancelled: actual
# cost limit exceeded"). The harness estimates statically with cel-go's unit costs for the
# constructs selectors use (estimate_cost) and bounds evaluation with the same units counted as
# nodes are evaluated (_CostedEvaluator), so no selector can run away.
COST_LIMIT = 1_000_000
COST_LIMIT_MESSAGE = "operation cancelled: actual cost limit exceeded"
_MAX_ENTRIES = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice
_MAX_STRING = 64  # DeviceAttributeMaxValueLength
_UNBOUNDED = 1 << 62  # a size cel-go cannot bound makes the estimate exceed any limit
_MACROS = ("all", "exists", "exists_one", "map", "filter")
_STRING_METHODS = {"contains", "startsWith", "endsWith", "matches", "indexOf", "lastIndexOf",
                   "lowerAscii", "upperAscii", "replace", "split", "substring", "trim", "join",
                   "charAt"}
_NODE_COST = {"ident": 1, "member_dot": 1, "member_index": 1, "member_dot_arg": 1, "ident_arg": 1,
              "dot_ident": 1, "dot_ident_arg": 1, "list_lit": 10, "map_lit": 30}


def _traversal(size: Optional[int]) -> int:
    """cel-go's string traversal cost: 0.1 per byte, rounded up."""
    return -(-(size or 0) // 10)


def _estimate(node: Any, scope: Dict[str, Optional[int]]) -> Tuple[int, Optional[int]]:
    """(worst-case cost, worst-case size of the value: string bytes or list/map entries, None
    for a scalar) of one parse-tree node."""
    if isinstance(node, lark.Token):
        return 0, None
    data, ch = node.data, node.children
    if data == "literal":
        text = str(ch[0]) if ch else ""
        return 0, (len(text) if text[:1] in "\"'" or text[:2].lower() in ("r\"", "r'", "b\"", "b'") else None)
    if data == "ident":
        name = str(ch[0])
        return 1, scope.get(name, _MAX_STRING if name != "device" else _MAX_ENTRIES)
    if data == "list_lit" or data == "map_lit":
        cost, n = 10 if data == "list_lit" else 30, 0
        for c in ch:
            if isinstance(c, lark.Tree):
                for item in (c.children if c.data in ("exprlist", "mapinits") else [c]):
                    ic, _ = _estimate(item, scope)
                    cost += ic
                    n += 1
        return cost, (n // 2 if data == "map_lit" else n)
    if data in ("member_dot", "member_index"):
        cost, size = 1, None
        for c in ch:
            c_cost, c_size = _estimate(c, scope)
            cost += c_cost
        # a map of domains, a map of attributes, or a value: each at most 32 entries or 64 bytes
        return cost, _MAX_ENTRIES if data == "member_dot" and str(ch[-1]) in ("attributes", "capacity") else _MAX_STRING
    if data == "member_dot_arg":
        method = str(ch[1])
        range_cost, n = _estimate(ch[0], scope)
        args = ch[2].children if len(ch) > 2 and isinstance(ch[2], lark.Tree) else []
        if method in _MACROS and len(args) >= 2:
            var = next((str(t) for t in args[0].scan_values(lambda v: isinstance(v, lark.Token))), "")
            inner = dict(scope)
            inner[var] = _MAX_STRING
            body = sum(_estimate(a, inner)[0] for a in args[1:])
            n = _UNBOUNDED if n is None else n
            return range_cost + 1 + n * (body + 2), (n if method in ("map", "filter") else None)
        cost = 1 + range_cost
        sizes = []
        for a in args:
            a_cost, a_size = _estimate(a, scope)
            cost += a_cost
            sizes.append(a_size or 0)
        if method in _STRING_METHODS:
            cost += _traversal(n)
            if method == "replace" and len(sizes) >= 2:
                return cost, (n or 0) * max(1, sizes[1])
            if method in ("lowerAscii", "upperAscii", "trim", "substring", "split"):
                return cost, n
            if method == "join":
                return cost, (n or 0) * _MAX_STRING
            return cost, None
        return cost, None
    if data == "ident_arg":
        cost, total = 1, 0
        for c in ch[1:]:
            for a in (c.children if isinstance(c, lark.Tree) and c.data == "exprlist" else [c]):
                a_cost, a_size = _estimate(a, scope)
                cost += a_cost + _traversal(a_size)
                total += a_size or 0
        return cost, (total or None)
    if data.startswith(("relation_", "addition_", "multiplication_", "unary_")) and data != "unary":
        cost, total = 1, 0
        sizes = []
        for c in ch:
            c_cost, c_size = _estimate(c, scope)
            cost += c_cost
            sizes.append(c_size)
        known = [x for x in sizes if x is not None]
        if data == "addition_add" and known:
            return cost + _traversal(sum(known)), sum(known)
        if data.startswith("relation_") and known:
            cost += _traversal(min(known))
        return cost, None
    cost, size = 0, None
    subtrees = [c for c in ch if isinstance(c, lark.Tree)]
    if data == "expr" and len(subtrees) == 3:  # c ? a : b
        c0 = _estimate(subtrees[0], scope)[0]
        (a, sa), (b, sb) = _estimate(subtrees[1], scope), _estimate(subtrees[2], scope)
        return c0 + max(a, b), max(x for x in (sa, sb, 0) if x is not None) or None
    for c in subtrees:
        c_cost, size = _estimate(c, scope)
        cost += c_cost
    return cost, size


def estimate_cost(expression: str) -> int:
    """The worst-case cost of a device selector, in cel-go's cost units (see above); an
    expression that does not parse costs 0 here (its compile error is reported instead)."""
    try:
        tree = _env().compile(expression)
    except Exception:
        return 0
    try:
        return _estimate(tree, {})[0]
    except RecursionError:
        return _UNBOUNDED


class _Budget:
    __slots__ = ("left",)

    def __init__(self, limit: int):
        self.left = limit


def _node_cost(data: str) -> int:
    cost = _NODE_COST.get(data)
    if cost is None:
        cost = 1 if data.startswith(("relation_", "addition_", "multiplication_", "unary_")) else 0
    return cost


_COST_OF: Dict[str, int] = {}
_VARIABLE_NODES = ("ident", "ident_arg", "member_dot", "member_dot_arg", "member_index", "dot_ident",
                   "dot_ident_arg")


def _constant_literals(tree: "lark.Tree") -> Dict[int, list]:
    """The list and map literals made of constants only: evaluated once per evaluation (cel-go
    plans a constant literal once too), so a selector's loops over a literal list cost what
    they cost in kube-scheduler and not a parse tree walk per element per iteration."""
    out: Dict[int, list] = {}
    for node in tree.iter_subtrees():
        if node.data in ("list_lit", "map_lit") and not any(
                n.data in _VARIABLE_NODES for n in node.iter_subtrees()):
            out[id(node)] = []
    return out


class _CostedEvaluator(celpy.evaluation.Evaluator):
    """celpy's Evaluator charging each evaluated node its cel-go unit cost against a shared
    budget (macro bodies run in sub-evaluators sharing it); past the limit, evaluation stops
    with cel-go's error."""

    def __init__(self, *args, budget: "_Budget", constants: Dict[int, list], **kwargs):
        super().__init__(*args, **kwargs)
        self.budget = budget
        self.constants = constants

    def _visit_tree(self, tree):
        data = tree.data
        cost = _COST_OF.get(data)
        if cost is None:
            cost = _COST_OF[data] = _node_cost(data)
        if cost:
            self.budget.left -= cost
            if self.budget.left < 0:
                raise CELRuntimeError(COST_LIMIT_MESSAGE)
            kept = self.constants.get(id(tree))
            if kept is not None:
                if not kept:
                    kept.append(super()._visit_tree(tree))
                return kept[0]
        return super()._visit_tree(tree)

    def sub_evaluator(self, ast):
        return _CostedEvaluator(ast, activation=self.activation, budget=self.budget,
                                constants=self.constants)


class _CostedRunner(celpy.InterpretedRunner):
    def evaluate(self, context):
        e = _CostedEvaluator(ast=self.ast, activation=self.new_activation(), budget=_Budget(COST_LIMIT),
                             constants=_constant_literals(self.ast))
        return e.evaluate(context)


_ENV: Optional[celpy.Environment] = None


def _env() -> celpy.Environment:
    """The CEL environment, built when first needed (its grammar takes a tenth of a second to
    build: every case would pay it at start, most have no device selector)."""
    global _ENV
    if _ENV is None:
        _ENV = celpy.Environment(runner_class=_CostedRunner)
    return _ENV


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


_PASS_THROUGH = ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
                 "unary", "member", "primary", "paren_expr")
_BOOL_METHODS = {"all", "exists", "exists_one", "startsWith", "endsWith", "contains", "matches",
                 "isGreaterThan", "isLessThan", "isSorted", "semver", "isSemver"}
_TYPED_FUNCTIONS = {"size": "int", "int": "int", "uint": "uint", "double": "double", "string": "string",
                    "bytes": "bytes", "bool": "bool", "has": "bool", "matches": "bool"}


def _literal_type(text: str) -> Optional[str]:
    if text in ("true", "false"):
        return "bool"
    if text == "null":
        return "null_type"
    low = text.lower()
    if low.startswith(("b\"", "b'", "br", "rb")):
        return "bytes"
    if text[:1] in "\"'" or low.startswith(("r\"", "r'")):
        return "string"
    if low.endswith("u"):
        return "uint"
    if any(c in low for c in ".e") and not low.startswith(("0x", "-0x")):
        return "double"
    return "int"


def _output_type(node: Any) -> Optional[str]:
    """The type cel-go's checker gives the expression, where it is certain from the syntax
    alone (a literal, an operator's result, a known method); None where the harness does not
    know it (a device attribute: dyn), which the compiler accepts."""
    while isinstance(node, lark.Tree):
        kids = node.children
        data = node.data
        if data == "expr" and len(kids) == 3:
            a, b = _output_type(kids[1]), _output_type(kids[2])
            return a if a == b else None
        if data in ("conditionalor", "conditionaland") and len(kids) > 1:
            return "bool"
        if data.startswith("relation_") or data in ("unary_not",):
            return "bool"
        if data in ("relation", "addition", "multiplication") and len(kids) == 2 and isinstance(kids[0], lark.Tree):
            if data == "relation":
                return "bool"
            t = _output_type(kids[0].children[0]) if kids[0].children else None
            return t if t in ("int", "uint", "double", "string", "bytes") else None
        if data in ("addition_add", "addition_sub", "multiplication_mul", "multiplication_div",
                    "multiplication_mod"):
            t = _output_type(kids[0])
            return t if t in ("int", "uint", "double", "string", "bytes") else None
        if data == "unary" and len(kids) == 2:
            op = kids[0]
            return "bool" if isinstance(op, lark.Tree) and op.data == "unary_not" else _output_type(kids[1])
        if data == "literal":
            return _literal_type(str(kids[0]))
        if data == "list_lit":
            return "list(dyn)"
        if data == "map_lit":
            return "map(dyn, dyn)"
        if data == "member_dot" and len(kids) == 2:
            inner = kids[0]
            if (isinstance(inner, lark.Tree) and inner.data == "member" and len(inner.children) == 1
                    and str(kids[1]) == "driver" and "device" in [str(t) for t in inner.scan_values(lambda v: isinstance(v, lark.Token))]):
                return "string"
            return None
        if data == "member_dot_arg" and len(kids) >= 2:
            name = str(kids[1])
            return "bool" if name in _BOOL_METHODS else ("int" if name == "size" else None)
        if data == "ident_arg" and kids:
            return _TYPED_FUNCTIONS.get(str(kids[0]))
        if data in _PASS_THROUGH and len(kids) == 1:
            node = kids[0]
            continue
        return None
    return None


def compile_expression(expression: str) -> CompilationResult:
    """compiler.CompileCELExpression for a device selector."""
    try:
        tree = _env().compile(expression)
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
    out = _output_type(tree)
    if out is not None and out != "bool":
        return CompilationResult(expression, error=f"must evaluate to bool or the unknown type, not {out}")
    return CompilationResult(expression, program=_env().program(tree, functions=FUNCTIONS))


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
