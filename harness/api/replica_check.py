"""A replica's validation as "the pod found valid before, but these members" while a cluster is
built (not an upstream piece; api/valid_memo.py's remembering is on).

The 150,000 pods of a big cluster are replicas of a few Deployments: they hold the same values
(harness/sharing.py) but their name, uid, resourceVersion, nodeName and the status the kubelet
wrote (IPs, container IDs). validate_object's answer for a pod depends on the members it reads,
so a pod whose members are those of a pod found valid (the same objects, equal scalars), but
for some it may differ in, needs only the checks of those members:

- metadata: name, uid, resourceVersion (_object_meta's short path, in its order);
- spec: nodeName (a string, a DNS subdomain);
- status: any member but phase, nominatedNodeName and conditions (validation reads only those
  three), whose strict decoding (fields.member_walk) is then walked alone.

Every other member, the keys and their order must be the same (strict decoding depends on the
keys, validation on the values). A pod that differs in more, or whose own members do not pass,
is validated in full (its first problem is the plain one). Only answers "valid": a template is
a pod the full validation passed, its members as they were then (the API server's defaulting
writes into metadata and spec afterwards), kept while remembering and dropped with the record.
"""

from __future__ import annotations

from itertools import compress
from operator import is_not
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

from . import fields, valid_memo
from .field_checks import ObjectInvalid, _dns_subdomain, _str

if TYPE_CHECKING:
    from ..versions import Features

# values compared by type and value (equal ones are interchangeable); any other by identity
_BY_VALUE = (str, int, bool, float, type(None))
# the members a replica may hold of its own, per part of the pod
_OWN_META = frozenset(("name", "uid", "resourceVersion"))
_OWN_SPEC = frozenset(("nodeName",))
_READ_STATUS = frozenset(("phase", "nominatedNodeName", "conditions"))  # what validation reads
_PARTS = ("metadata", "spec", "status")
# valid_memo's key of the templates: (this module, the features, a pod's containers, labels
# and namespace) -> _Template
_TEMPLATES = "replica_check"


# what a member that differs from the template's needs (_Template.acts): to be an equal scalar,
# nothing (a part: metadata, spec or status, compared member by member; a status member that
# holds no struct), the checks of metadata's own members, of the nodeName; or a function (a
# status member's strict decoding, fields.member_walk)
_SAME, _NOTHING, _OWN_METADATA, _NODE_NAME = range(4)
_MAX_PLANS = 64  # (per template: replicas differ from it in a few ways)


class _Plan:
    """What a replica needs whose members differ from the template's at certain positions: the
    positions that must hold equal scalars (`same`, the template's values `want` and their
    types), the own members to check, the status members to walk."""

    __slots__ = ("same", "want", "types", "own_meta", "node_name", "walks")

    def __init__(self, t: "_Template", diff: Tuple[int, ...]):
        self.same = tuple(i for i in diff if t.acts[i] == _SAME)
        self.want = tuple(t.values[i] for i in self.same)
        self.types = tuple(map(type, self.want))
        self.own_meta = any(t.acts[i] == _OWN_METADATA for i in diff)
        self.node_name = any(t.acts[i] == _NODE_NAME for i in diff)
        self.walks = tuple((i, t.acts[i]) for i in diff if callable(t.acts[i]))


class _Template:
    """A pod found valid: the keys of its top level, metadata, spec and status (None: it has
    none), their values as validated (one after the other), what each needs when a replica's
    differs, and the plans of the differences seen."""

    __slots__ = ("features", "keys", "values", "acts", "plans")

    def __init__(self, features: Any, parts: Tuple[Dict[str, Any], ...], minor: int):
        self.features = features
        keys = tuple(tuple(d) for d in parts)
        self.keys = keys if len(keys) == 4 else keys + (None,)
        self.values = tuple(v for d in parts for v in d.values())
        acts: list = []
        for i, d in enumerate(parts):
            for k in d:
                if i == 0:
                    acts.append(_NOTHING if k in _PARTS else _SAME)
                elif i == 1:
                    acts.append(_OWN_METADATA if k in _OWN_META else _SAME)
                elif i == 2:
                    acts.append(_NODE_NAME if k in _OWN_SPEC else _SAME)
                elif k in _READ_STATUS:
                    acts.append(_SAME)
                else:  # a status member: its strict decoding walked alone (None: a leaf)
                    walk = fields.member_walk("Pod", "status", k, minor)
                    acts.append(_NOTHING if walk is None else walk)
        self.acts = tuple(acts)
        self.plans: Dict[Tuple[int, ...], Optional[_Plan]] = {}

    def plan(self, diff: Tuple[int, ...]) -> Optional[_Plan]:
        """The plan of these differences (None: a member that must be the template's very
        object, a mapping or a list, is another)."""
        plans = self.plans
        if diff in plans:
            return plans[diff]
        plan: Optional[_Plan] = _Plan(self, diff)
        if not all(t in _BY_VALUE for t in plan.types):
            plan = None
        if len(plans) < _MAX_PLANS:
            plans[diff] = plan
        return plan


def _template_key(obj: Dict[str, Any], features: Any) -> Optional[Tuple[Any, ...]]:
    """What the template of a pod is looked up by (the values replicas of one Deployment share;
    which template is found only decides whether the comparison can succeed)."""
    md, spec = obj.get("metadata"), obj.get("spec")
    if type(md) is not dict or type(spec) is not dict:
        return None
    ns = md.get("namespace")
    return (_TEMPLATES, id(features), id(spec.get("containers")), id(md.get("labels")),
            ns if type(ns) is str else None)


def _parts(obj: Dict[str, Any]) -> Optional[Tuple[Dict[str, Any], ...]]:
    """The pod's mappings compared with a template's: itself, its metadata, spec and status (if
    it has one); None when one is not a mapping."""
    md, spec, status = obj.get("metadata"), obj.get("spec"), obj.get("status")
    if type(md) is not dict or type(spec) is not dict:
        return None
    if status is None:
        return obj, md, spec
    if type(status) is not dict:
        return None
    return obj, md, spec, status


def known_valid_pod(obj: Dict[str, Any], features: Optional["Features"]) -> bool:
    """Is this pod (a dict of kind Pod) valid because it differs from a pod found valid only in
    members it may hold of its own, and those pass their checks? False: validate it in full."""
    memo = valid_memo.table()
    if memo is None:
        return False
    key = _template_key(obj, features)
    if key is None:
        return False
    t = memo.get(key)
    if t is None or t.features is not features:
        return False
    md, spec, status = obj["metadata"], obj["spec"], obj.get("status")
    keys = t.keys
    if tuple(obj) != keys[0] or tuple(md) != keys[1] or tuple(spec) != keys[2]:
        return False  # other keys, or in another order
    if status is None:
        if keys[3] is not None:
            return False
        mine = (*obj.values(), *md.values(), *spec.values())
    else:
        if type(status) is not dict or tuple(status) != keys[3]:
            return False
        mine = (*obj.values(), *md.values(), *spec.values(), *status.values())
    values = t.values
    # the positions of the members that are not the template's very objects (at C speed)
    plan = t.plan(tuple(compress(range(len(values)), map(is_not, mine, values))))
    if plan is None:
        return False
    if plan.same:  # scalars decoded apart (an integer): equal, of the same type
        got = tuple(map(mine.__getitem__, plan.same))
        if tuple(map(type, got)) != plan.types or got != plan.want:
            return False
    try:
        if plan.own_meta:  # _object_meta's short path: the types first, then the values
            name = _str(md, "name", "metadata")
            _str(md, "uid", "metadata")
            if not name:
                return False
            _dns_subdomain(name, "metadata.name")
            rv = md.get("resourceVersion")
            if rv is not None and not (type(rv) is int or (type(rv) is str and rv.isdigit())):
                return False
        if plan.node_name:
            nn = _str(spec, "nodeName", "spec")
            if nn:
                _dns_subdomain(nn, "spec.nodeName")
    except ObjectInvalid:
        return False
    for i, walk in plan.walks:  # the status members' strict decoding
        if not walk(mine[i]):
            return False
    return True


def found_valid_pod(obj: Dict[str, Any], features: Optional["Features"]) -> None:
    """The full validation passed this pod: the template of pods like it (while remembering)."""
    memo = valid_memo.table()
    if memo is None:
        return
    key = _template_key(obj, features)
    parts = _parts(obj)
    if key is None or parts is None:
        return
    for d in parts:
        for k in d:
            if type(k) is not str:
                return
    if features is None:
        from ..versions import DEFAULT
        minor = DEFAULT.version.minor
    else:
        minor = features.version.minor
    memo[key] = _Template(features, parts, minor)
