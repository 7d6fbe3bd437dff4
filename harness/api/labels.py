"""Label selectors (k8s.io/apimachinery/pkg/labels and metav1.LabelSelectorAsSelector)."""

from __future__ import annotations

from typing import List, Mapping, Optional, Sequence, Tuple

from .validation import is_qualified_name, is_valid_label_value

Requirement = Tuple[str, str, Tuple[str, ...]]  # (key, operator, values)


class Selector:
    """A parsed label selector. `Selector.nothing()` matches nothing, `Selector.everything()` all."""

    __slots__ = ("requirements", "_nothing")

    def __init__(self, requirements: Sequence[Requirement] = (), nothing: bool = False):
        self.requirements = tuple(requirements)
        self._nothing = nothing

    @classmethod
    def nothing(cls) -> "Selector":
        return cls((), nothing=True)

    @classmethod
    def everything(cls) -> "Selector":
        return cls(())

    def empty(self) -> bool:
        """labels.Selector.Empty(): true for the everything selector."""
        return not self._nothing and not self.requirements

    def is_nothing(self) -> bool:
        return self._nothing

    def matches(self, labels: Optional[Mapping[str, str]]) -> bool:
        if self._nothing:
            return False
        labels = labels or {}
        for key, op, values in self.requirements:
            if op == "In":
                if key not in labels or labels[key] not in values:
                    return False
            elif op == "NotIn":
                if key in labels and labels[key] in values:
                    return False
            elif op == "Exists":
                if key not in labels:
                    return False
            elif op == "DoesNotExist":
                if key in labels:
                    return False
            else:  # pragma: no cover - rejected at parse time
                return False
        return True

    def add(self, requirements: Sequence[Requirement]) -> "Selector":
        if self._nothing:
            return self
        return Selector(self.requirements + tuple(requirements))

    def __repr__(self) -> str:
        if self._nothing:
            return "Selector(<nothing>)"
        return f"Selector({self.requirements!r})"


class SelectorError(ValueError):
    pass


def _quote(v: str) -> str:
    import json
    return json.dumps(v, ensure_ascii=False)


def _requirement_errors(key: str, op: str, values: Sequence[str]) -> List[str]:
    """labels.NewRequirement's validation (key, values and operator), as field errors."""
    errs: List[str] = []
    key_errs = is_qualified_name(key)
    if key_errs:
        errs.append(f"key: Invalid value: {_quote(key)}: {'; '.join(key_errs)}")
    if op in ("In", "NotIn"):
        if not values:
            errs.append("values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(f"values: Invalid value: [{' '.join(values)}]: values set must be empty for "
                        f"exists and does not exist")
    else:
        errs.append(f'operator: Unsupported value: {_quote(op)}: supported values: "in", "notin", '
                    f'"=", "==", "!=", "gt", "lt", "exists", "!"')
    for i, v in enumerate(values):
        v_errs = is_valid_label_value(v)
        if v_errs:
            errs.append(f"values[{i}][{key}]: Invalid value: {_quote(v)}: {'; '.join(v_errs)}")
    return errs


def _aggregate(errs: List[str]) -> str:
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"


def from_label_selector(sel: Optional[Mapping]) -> Selector:
    """metav1.LabelSelectorAsSelector: None -> Nothing, {} -> Everything; invalid keys, values
    or operators raise SelectorError worded as labels.NewRequirement words them."""
    if sel is None:
        return Selector.nothing()
    reqs = []
    for key, val in sorted((sel.get("matchLabels") or {}).items()):
        val = str(val)
        errs = _requirement_errors(key, "In", (val,))
        if errs:
            raise SelectorError(_aggregate(errs))
        reqs.append((key, "In", (val,)))
    for expr in sel.get("matchExpressions") or []:
        op = expr.get("operator")
        values = tuple(str(v) for v in (expr.get("values") or []))
        key = expr.get("key", "")
        errs = _requirement_errors(key, op, values)
        if errs:
            raise SelectorError(_aggregate(errs))
        reqs.append((key, op, values))
    return Selector(reqs)


def from_set(labels: Optional[Mapping[str, str]]) -> Selector:
    """labels.SelectorFromSet: every key=value must match; an empty set matches everything."""
    return Selector([(k, "In", (str(v),)) for k, v in sorted((labels or {}).items())])
