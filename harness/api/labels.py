"""Label selectors (k8s.io/apimachinery/pkg/labels and metav1.LabelSelectorAsSelector)."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Tuple

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


def from_label_selector(sel: Optional[Mapping]) -> Selector:
    """metav1.LabelSelectorAsSelector: None -> Nothing, {} -> Everything."""
    if sel is None:
        return Selector.nothing()
    reqs = []
    for key, val in sorted((sel.get("matchLabels") or {}).items()):
        reqs.append((key, "In", (str(val),)))
    for expr in sel.get("matchExpressions") or []:
        op = expr.get("operator")
        values = tuple(str(v) for v in (expr.get("values") or []))
        if op in ("In", "NotIn"):
            if not values:
                raise SelectorError(f"for 'in', 'notin' operators, values set can't be empty")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                raise SelectorError("values set must be empty for exists and does not exist")
        else:
            raise SelectorError(f"{op!r} is not a valid label selector operator")
        reqs.append((expr.get("key", ""), op, values))
    return Selector(reqs)


def from_set(labels: Optional[Mapping[str, str]]) -> Selector:
    """labels.SelectorFromSet: every key=value must match; an empty set matches everything."""
    return Selector([(k, "In", (str(v),)) for k, v in sorted((labels or {}).items())])
