"""Node selectors and node affinity (k8s.io/component-helpers/scheduling/corev1/nodeaffinity,
with the label requirement rules of k8s.io/apimachinery/pkg/labels).

A v1.NodeSelector is ORed nodeSelectorTerms; a term ANDs its matchExpressions (on node labels:
In, NotIn, Exists, DoesNotExist, Gt, Lt) and its matchFields (only `metadata.name` exists as a
node field; In / NotIn with exactly one value). A term with neither is skipped ("selects no
objects"). A term that does not parse (bad operator, bad key, In without values, Gt with a
non-integer...) never matches; its errors are reported only when no other term matches
(LazyErrorNodeSelector), or up front by :class:`NodeSelector` (NewNodeSelector).

Public API (fixed, other plugins import it):

- ``node_selector_matches(node_selector, node) -> bool``
- ``RequiredNodeAffinity(pod)`` with ``.match(node) -> bool`` (and ``.match_err(node)``)
- ``preferred_scheduling_terms_score(terms, node) -> int``
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .validation import is_qualified_name, is_valid_label_value  # noqa: F401 (re-exported)

__all__ = [
    "NodeSelectorError", "NodeSelector", "LazyErrorNodeSelector", "PreferredSchedulingTerms",
    "RequiredNodeAffinity", "node_selector_matches", "match_node_selector_terms",
    "preferred_scheduling_terms_score", "get_required_node_affinity", "node_fields",
    "aggregate_error", "FieldError",
]

OBJECT_NAME_FIELD = "metadata.name"

_VALID_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_VALID_FIELD_SELECTOR_OPERATORS = ("In", "NotIn")


class NodeSelectorError(ValueError):
    """A node selector that does not parse; str() is the aggregated error as Go prints it."""

    def __init__(self, errors: Sequence[str]):
        self.errors = list(errors)
        super().__init__(aggregate_error(self.errors))


def aggregate_error(errs: Sequence[str]) -> str:
    """utilerrors.NewAggregate(errs).Error() (errors already flattened): deduplicated, joined
    with ", " and bracketed when more than one distinct message remains."""
    seen: List[str] = []
    for e in errs:
        if e not in seen:
            seen.append(e)
    if not seen:
        return ""
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


# ---------------------------------------------------------------------------------------------
# field.Error formatting (only what the selectors report)
# ---------------------------------------------------------------------------------------------
def _go_str(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _json(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


class FieldError(str):
    """A field.Error: str() is Error() ("<path>: <body>"); `.path` and `.body` (ErrorBody())."""

    path: str
    body: str

    def __new__(cls, path: str, body: str) -> "FieldError":
        s = super().__new__(cls, f"{path}: {body}")
        s.path = path
        s.body = body
        return s


def _invalid(path: str, value: Any, detail: str) -> FieldError:
    body = f"Invalid value: {_json(value)}"
    return FieldError(path, f"{body}: {detail}" if detail else body)


def _not_supported(path: str, value: str, valid: Sequence[str]) -> FieldError:
    detail = "supported values: " + ", ".join(_json(v) for v in valid)
    return FieldError(path, f"Unsupported value: {_json(value)}: {detail}")


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


_INT_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def parse_int64(s: str) -> Optional[int]:
    """strconv.ParseInt(s, 10, 64), None on error."""
    if not _INT_RE.fullmatch(s):
        return None
    v = int(s)
    if v < _INT64_MIN or v > _INT64_MAX:
        return None
    return v


# ---------------------------------------------------------------------------------------------
# Parsed terms
# ---------------------------------------------------------------------------------------------
# A label requirement: (key, op, values, int_value) with op in In/NotIn/Exists/DoesNotExist/Gt/Lt.
_LabelReq = Tuple[str, str, Tuple[str, ...], Optional[int]]
# A field requirement: (key, equal?, value).
_FieldReq = Tuple[str, bool, str]


def _label_requirement(expr: Mapping[str, Any], path: str) -> Tuple[Optional[_LabelReq], List[str]]:
    """nodeSelectorRequirementsAsSelector for one expression, with labels.NewRequirement."""
    op = _go_str(expr.get("operator"))
    key = _go_str(expr.get("key"))
    raw_values = expr.get("values")
    values = tuple(_go_str(v) for v in (raw_values or []))
    if op not in _VALID_SELECTOR_OPERATORS:
        return None, [_not_supported(_child(path, "operator"), op, _VALID_SELECTOR_OPERATORS)]
    errs: List[str] = []
    kerrs = is_qualified_name(key)
    if kerrs:
        errs.append(_invalid(_child(path, "key"), key, "; ".join(kerrs)))
    vpath = _child(path, "values")
    jvals = list(values) if raw_values is not None else None
    ival: Optional[int] = None
    if op in ("In", "NotIn"):
        if not values:
            errs.append(_invalid(vpath, jvals, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(_invalid(vpath, jvals, "values set must be empty for exists and does not exist"))
    else:  # Gt, Lt
        if len(values) != 1:
            errs.append(_invalid(vpath, jvals, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(values):
            iv = parse_int64(v)
            if iv is None:
                errs.append(_invalid(f"{vpath}[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
            else:
                ival = iv
    for i, v in enumerate(values):
        verrs = is_valid_label_value(v)
        if verrs:
            errs.append(_invalid(f"{vpath}[{i}][{key}]", v, "; ".join(verrs)))
    if errs:
        return None, errs
    return (key, op, values, ival), []


def _field_requirement(expr: Mapping[str, Any], path: str) -> Tuple[Optional[_FieldReq], List[str]]:
    """nodeSelectorRequirementsAsFieldSelector for one expression."""
    op = _go_str(expr.get("operator"))
    key = _go_str(expr.get("key"))
    raw_values = expr.get("values")
    values = [_go_str(v) for v in (raw_values or [])]
    if op in ("In", "NotIn"):
        if len(values) != 1:
            jvals = values if raw_values is not None else None
            return None, [_invalid(_child(path, "values"), jvals, "must have one element")]
        return (key, op == "In", values[0]), []
    return None, [_not_supported(_child(path, "operator"), op, _VALID_FIELD_SELECTOR_OPERATORS)]


def _label_req_matches(req: _LabelReq, labels: Mapping[str, str]) -> bool:
    key, op, values, ival = req
    if op == "In":
        v = labels.get(key)
        return v is not None and v in values
    if op == "NotIn":
        v = labels.get(key)
        return v is None or v not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    # Gt / Lt
    v = labels.get(key)
    if v is None:
        return False
    lv = parse_int64(v)
    if lv is None or ival is None:
        return False
    return lv > ival if op == "Gt" else lv < ival


class _Term:
    """nodeSelectorTerm: parsed matchExpressions (labels) and matchFields."""

    __slots__ = ("label_reqs", "field_reqs", "parse_errs")

    def __init__(self, term: Mapping[str, Any], path: str):
        self.label_reqs: Optional[List[_LabelReq]] = None
        self.field_reqs: Optional[List[_FieldReq]] = None
        self.parse_errs: List[str] = []
        exprs = term.get("matchExpressions") or []
        if exprs:
            p = _child(path, "matchExpressions")
            reqs: List[_LabelReq] = []
            errs: List[str] = []
            for i, e in enumerate(exprs):
                r, es = _label_requirement(e or {}, f"{p}[{i}]")
                if es:
                    errs.extend(es)
                elif r is not None:
                    reqs.append(r)
            if errs:
                self.parse_errs.extend(errs)
            else:
                self.label_reqs = reqs
        fields = term.get("matchFields") or []
        if fields:
            p = _child(path, "matchFields")
            freqs: List[_FieldReq] = []
            errs = []
            for i, e in enumerate(fields):
                r, es = _field_requirement(e or {}, f"{p}[{i}]")
                if es:
                    errs.extend(es)
                elif r is not None:
                    freqs.append(r)
            if errs:
                self.parse_errs.extend(errs)
            else:
                self.field_reqs = freqs

    def match(self, labels: Mapping[str, str], fields: Mapping[str, str]) -> Tuple[bool, List[str]]:
        if self.parse_errs:
            return False, self.parse_errs
        if self.label_reqs is not None:
            for r in self.label_reqs:
                if not _label_req_matches(r, labels):
                    return False, []
        if self.field_reqs is not None and fields:
            for key, equal, value in self.field_reqs:
                got = fields.get(key, "")
                if (got == value) != equal:
                    return False, []
        return True, []


def _is_empty_term(term: Optional[Mapping[str, Any]]) -> bool:
    term = term or {}
    return not term.get("matchExpressions") and not term.get("matchFields")


def node_fields(node) -> Dict[str, str]:
    """extractNodeFields."""
    return {OBJECT_NAME_FIELD: node.name} if node.name else {}


def _labels_of(node) -> Mapping[str, str]:
    return node.labels or {}


# ---------------------------------------------------------------------------------------------
# Selectors
# ---------------------------------------------------------------------------------------------
class LazyErrorNodeSelector:
    """NewLazyErrorNodeSelector: parse errors are reported only when no term matches."""

    __slots__ = ("terms",)

    def __init__(self, node_selector: Optional[Mapping[str, Any]], path: str = ""):
        self.terms: List[_Term] = []
        p = _child(path, "nodeSelectorTerms")
        for i, term in enumerate((node_selector or {}).get("nodeSelectorTerms") or []):
            if _is_empty_term(term):
                continue  # nil or empty term selects no objects
            self.terms.append(_Term(term, f"{p}[{i}]"))

    def match_err(self, node) -> Tuple[bool, Optional[str]]:
        """LazyErrorNodeSelector.Match: (matched, aggregated error or None)."""
        if node is None:
            return False, None
        labels = _labels_of(node)
        fields = node_fields(node)
        errs: List[str] = []
        for t in self.terms:
            ok, terrs = t.match(labels, fields)
            if terrs:
                errs.extend(terrs)
                continue
            if ok:
                return True, None
        return False, (aggregate_error(errs) if errs else None)

    def match(self, node) -> bool:
        return self.match_err(node)[0]


class NodeSelector:
    """NewNodeSelector: raises NodeSelectorError if any term does not parse."""

    __slots__ = ("lazy",)

    def __init__(self, node_selector: Optional[Mapping[str, Any]], path: str = ""):
        self.lazy = LazyErrorNodeSelector(node_selector, path)
        errs: List[str] = []
        for t in self.lazy.terms:
            errs.extend(t.parse_errs)
        if errs:
            raise NodeSelectorError(errs)

    def match(self, node) -> bool:
        return self.lazy.match_err(node)[0]


class PreferredSchedulingTerms:
    """NewPreferredSchedulingTerms: terms with weight 0 or no requirements are skipped; raises
    NodeSelectorError if a term does not parse."""

    __slots__ = ("terms",)

    def __init__(self, terms: Optional[Sequence[Mapping[str, Any]]], path: str = ""):
        self.terms: List[Tuple[_Term, int]] = []
        errs: List[str] = []
        for i, term in enumerate(terms or []):
            term = term or {}
            weight = int(term.get("weight") or 0)
            pref = term.get("preference") or {}
            if weight == 0 or _is_empty_term(pref):
                continue
            t = _Term(pref, f"{path}[{i}]")
            if t.parse_errs:
                errs.extend(t.parse_errs)
            else:
                self.terms.append((t, weight))
        if errs:
            raise NodeSelectorError(errs)

    def score(self, node) -> int:
        """The sum of the weights of the terms the node matches."""
        labels = _labels_of(node)
        fields = node_fields(node)
        total = 0
        for t, w in self.terms:
            if t.match(labels, fields)[0]:
                total += w
        return total


_PARSED: Dict[int, Tuple[Any, LazyErrorNodeSelector]] = {}


def _parsed_selector(node_selector: Mapping[str, Any]) -> LazyErrorNodeSelector:
    """Parse a v1.NodeSelector once per dict object (manifests are never mutated in place)."""
    hit = _PARSED.get(id(node_selector))
    if hit is not None and hit[0] is node_selector:
        return hit[1]
    if len(_PARSED) > 4096:
        _PARSED.clear()
    sel = LazyErrorNodeSelector(node_selector)
    _PARSED[id(node_selector)] = (node_selector, sel)
    return sel


def node_selector_matches(node_selector: Optional[Mapping[str, Any]], node) -> bool:
    """MatchNodeSelectorTerms / LazyErrorNodeSelector(ns).Match(node), errors ignored: ORed
    terms; an empty or missing term list matches nothing; a nil node matches nothing."""
    if node is None or node_selector is None:
        return False
    return _parsed_selector(node_selector).match_err(node)[0]


def match_node_selector_terms(node, node_selector: Optional[Mapping[str, Any]]) -> Tuple[bool, Optional[str]]:
    """corev1.MatchNodeSelectorTerms with its error."""
    if node is None or node_selector is None:
        return False, None
    return _parsed_selector(node_selector).match_err(node)


def preferred_scheduling_terms_score(terms: Optional[Sequence[Mapping[str, Any]]], node) -> int:
    """PreferredSchedulingTerms.Score; terms that do not parse raise NodeSelectorError."""
    return PreferredSchedulingTerms(terms).score(node)


# ---------------------------------------------------------------------------------------------
# The pod's required node affinity
# ---------------------------------------------------------------------------------------------
def _required_parts(pod) -> Tuple[Optional[Dict[str, str]], Optional[LazyErrorNodeSelector]]:
    spec = pod.spec
    ns = spec.get("nodeSelector") or {}
    selector = {str(k): _go_str(v) for k, v in ns.items()} if ns else None
    na = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    affinity = LazyErrorNodeSelector(req) if req is not None else None
    return selector, affinity


class RequiredNodeAffinity:
    """GetRequiredNodeAffinity(pod): the pod's spec.nodeSelector AND its required node affinity
    (parsed lazily, once per pod)."""

    __slots__ = ("label_selector", "node_selector")

    def __init__(self, pod):
        if hasattr(pod, "memo"):
            parts = pod.memo("required_node_affinity", _required_parts)
        else:
            parts = _required_parts(pod)
        self.label_selector: Optional[Dict[str, str]] = parts[0]
        self.node_selector: Optional[LazyErrorNodeSelector] = parts[1]

    def match_err(self, node) -> Tuple[bool, Optional[str]]:
        """RequiredNodeAffinity.Match: (matched, error)."""
        if self.label_selector is not None:
            labels = _labels_of(node)
            for k, v in self.label_selector.items():
                if labels.get(k) != v:
                    return False, None
        if self.node_selector is not None:
            return self.node_selector.match_err(node)
        return True, None

    def match(self, node) -> bool:
        return self.match_err(node)[0]


def get_required_node_affinity(pod) -> RequiredNodeAffinity:
    return RequiredNodeAffinity(pod)
