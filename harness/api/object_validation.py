"""What the API server's validation would refuse, for the fields the harness reads.

Mirrors k8s.io/kubernetes/pkg/apis/core/validation (ValidatePodCreate, ValidateNode,
ValidateObjectMeta), pkg/apis/scheduling/validation (ValidatePriorityClass) and
pkg/apis/policy/validation (ValidatePodDisruptionBudget), plus the strict JSON decoding that
runs before them (a string where a string belongs, an integer where an integer belongs). Only
rules that upstream enforces are here: an input legal in Kubernetes is never refused. Fields
the harness does not read are not checked.

`validate_object(obj)` returns None or the first problem as (field path, message), worded as
field.Error words it: `Invalid value: "x": detail`, `Unsupported value: ...`, `Required value`.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Dict, Iterable, Mapping, Optional, Set, Tuple

from . import fields
if TYPE_CHECKING:
    from ..versions import Features
from .field_checks import (_bool, _child, _dns_label, _dns_subdomain, _duplicate, _fail, _int,
                           _invalid, _label_name, _label_selector, _labels, _list, _map, _maps,
                           _node_selector_term, ObjectInvalid, _port_name, _port_num, _quantity,
                           _required, short_value, _str, _str_map, _strs, _time, _unsupported,
                           _wrong_type)
from .dra_validation import BY_KIND as DRA_BY_KIND
from .replica_check import found_valid_pod, known_valid_pod
from .valid_memo import found_valid, found_valid_key, known_valid, known_valid_key, members_key, table
from .validation import (is_dns1123_subdomain, is_extended_resource_name, is_native_resource,
                         is_qualified_name, is_valid_label_value)
from .workload import BY_KIND as WORKLOAD_BY_KIND, api_version_problem, validate_pod_fields

__all__ = ["ObjectInvalid", "validate_object", "kind_typo", "SCHEDULING_KINDS", "short_value"]

# Kinds that matter to scheduling (CASE_FORMAT.md) and other kinds a dump commonly holds.
SCHEDULING_KINDS = (
    "Node", "Pod", "Namespace", "PriorityClass", "PersistentVolume", "PersistentVolumeClaim",
    "StorageClass", "CSINode", "CSIDriver", "Service", "ReplicaSet", "StatefulSet",
    "ReplicationController", "PodDisruptionBudget", "DeviceClass", "ResourceSlice", "ResourceClaim",
    "ResourceClaimTemplate", "VolumeAttachment", "CSIStorageCapacity", "Workload", "PodGroup",
)
_OTHER_KINDS = {
    "Deployment", "DaemonSet", "Job", "CronJob", "ConfigMap", "Secret", "ServiceAccount",
    "Endpoints", "EndpointSlice", "Event", "Ingress", "IngressClass", "NetworkPolicy", "Role",
    "RoleBinding", "ClusterRole", "ClusterRoleBinding", "LimitRange", "ResourceQuota",
    "HorizontalPodAutoscaler", "Lease", "CustomResourceDefinition", "ControllerRevision",
    "PodTemplate", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "APIService",
    "RuntimeClass", "VolumeAttributesClass", "PodSchedulingContext", "ComponentStatus", "Binding",
    "CertificateSigningRequest", "PriorityLevelConfiguration", "FlowSchema", "PodDisruptionBudgetList",
}

SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000

_PERCENT_RE = re.compile(r"^[0-9]+%$")


# -- ObjectMeta ---------------------------------------------------------------------------------
_NAME_RULE = {  # kind -> name validation (ValidateObjectMeta's nameFn)
    "Pod": _dns_subdomain, "Node": _dns_subdomain, "PriorityClass": _dns_subdomain,
    "Namespace": _dns_label, "PersistentVolume": _dns_subdomain,
    "PersistentVolumeClaim": _dns_subdomain, "StorageClass": _dns_subdomain,
    "PodDisruptionBudget": _dns_subdomain, "ReplicaSet": _dns_subdomain,
    "StatefulSet": _dns_subdomain, "ReplicationController": _dns_subdomain,
}


TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)  # apimachinery's TotalAnnotationSizeLimitB


def _no_rule(value: str, path: str) -> None:
    """Kinds the harness only stores (RBAC names may hold ':'): their names are not checked."""


def _name_prefix(value: str) -> str:
    """path.maskTrailingDash: a generateName may end with '-'."""
    return value[:-1] + "a" if len(value) > 1 and value.endswith("-") else value


def _object_meta_types(md: Mapping) -> None:
    """metav1.ObjectMeta as Go's encoding/json decodes it: each field of its Go type."""
    for key in ("name", "generateName", "namespace", "selfLink", "uid"):
        _str(md, key, "metadata")
    for key in ("generation", "deletionGracePeriodSeconds"):
        _int(md, key, "metadata", 64)
    for key in ("creationTimestamp", "deletionTimestamp"):
        _time(md, key, "metadata")
    _strs(md, "finalizers", "metadata")
    _maps(md, "managedFields", "metadata")


def _object_meta(obj: Mapping, kind: str) -> Dict[str, Any]:
    """ValidateObjectMetaAccessor (apimachinery/pkg/api/validation/objectmeta.go), after the
    fields were decoded to their Go types; a kind not in _NAME_RULE (a custom resource's) is
    named as apiextensions names them, NameIsDNSSubdomain. While a cluster is built
    (api/valid_memo.py), metadata that differs from metadata found valid only in its name, uid
    and resourceVersion (a Deployment's replicas) has those checked alone, in their order."""
    md = obj.get("metadata")
    key = None
    if type(md) is dict:
        key = members_key(md, _OWN_META)
        if key is not None:
            key = ((kind, key[0]), key[1])
            if known_valid_key(_object_meta, key):
                name = _str(md, "name", "metadata")  # the types first, as _object_meta_types
                _str(md, "uid", "metadata")
                if not name:
                    _required("metadata.name", "name or generateName is required")
                _NAME_RULE.get(kind, _no_rule if kind in _OTHER_KINDS else _dns_subdomain)(name, "metadata.name")
                _resource_version(md)
                return md
    out = _object_meta_fields(obj, kind)
    found_valid_key(_object_meta, key)
    return out


# the members of an object's metadata that are its own (_object_meta checks them apart)
_OWN_META = ("name", "uid", "resourceVersion")


def _resource_version(md: Mapping) -> None:
    rv = md.get("resourceVersion")
    if rv is not None and not (isinstance(rv, int) and not isinstance(rv, bool)) and not (
            isinstance(rv, str) and rv.isdigit()):
        _invalid("metadata.resourceVersion", rv, "must be an integer string, as the API server sets it")


def _object_meta_fields(obj: Mapping, kind: str) -> Dict[str, Any]:
    """_object_meta's checks, in order."""
    md = _map(obj, "metadata", "")
    _object_meta_types(md)
    rule = _NAME_RULE.get(kind, _no_rule if kind in _OTHER_KINDS else _dns_subdomain)
    gen = _str(md, "generateName", "metadata")
    if gen:
        try:
            rule(_name_prefix(gen), "metadata.generateName")
        except ObjectInvalid as e:
            _fail(e.path, e.message.replace(short_value(_name_prefix(gen)), short_value(gen), 1))
    name = _str(md, "name", "metadata")
    if not name:
        _required("metadata.name", "name or generateName is required")
    rule(name, "metadata.name")
    gen_n = md.get("generation")
    if gen_n is not None and gen_n < 0:
        _invalid("metadata.generation", gen_n, "must be greater than or equal to 0")
    for i, f in enumerate(md.get("finalizers") or []):
        for msg in is_qualified_name(f):
            _invalid(f"metadata.finalizers[{i}]", f, msg)
    ns = _str(md, "namespace", "metadata")
    if ns:
        _dns_label(ns, "metadata.namespace")
    labels, annotations = md.get("labels"), md.get("annotations")
    if not known_valid(_labels, labels, annotations):  # (shared values: api/valid_memo.py)
        _labels(md, "labels", "metadata")
        _annotations(md)
        found_valid(_labels, labels, annotations)
    controllers = 0
    for p, ref in _maps(md, "ownerReferences", "metadata"):
        for field in ("apiVersion", "kind", "name", "uid"):
            if not _str(ref, field, p):
                _required(_child(p, field), "")
        if _bool(ref, "controller", p):
            controllers += 1
            if controllers > 1:
                _invalid("metadata.ownerReferences", "", "Only one reference can have Controller set to true")
    _resource_version(md)
    return md


def _annotations(md: Mapping) -> None:
    """ValidateAnnotations: keys are qualified names, the total size is bounded."""
    annotations = _str_map(md, "annotations", "metadata")
    for k in annotations:
        _label_name(k.lower(), "metadata.annotations")
    size = sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        _fail("metadata.annotations", f"Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT_B} bytes")


def _pod_affinity_term(term: Mapping, path: str) -> None:
    """validatePodAffinityTerm."""
    _label_selector(term, "labelSelector", path)
    _label_selector(term, "namespaceSelector", path)
    for ns in _strs(term, "namespaces", path):
        _dns_label(ns, _child(path, "namespace"))
    match = _strs(term, "matchLabelKeys", path)
    mismatch = _strs(term, "mismatchLabelKeys", path)
    for i, k in enumerate(match):
        _label_name(k, f"{_child(path, 'matchLabelKeys')}[{i}]")
    for i, k in enumerate(mismatch):
        _label_name(k, f"{_child(path, 'mismatchLabelKeys')}[{i}]")
        if k in match:
            _invalid(f"{_child(path, 'mismatchLabelKeys')}[{i}]", k, "exists in both matchLabelKeys and mismatchLabelKeys")
    tk = _str(term, "topologyKey", path)
    if not tk:
        _required(_child(path, "topologyKey"), "can not be empty")
    _label_name(tk, _child(path, "topologyKey"))


def _weight(obj: Mapping, path: str) -> None:
    w = _int(obj, "weight", path)
    if w is None or not 1 <= w <= 100:
        _invalid(_child(path, "weight"), w or 0, "must be in the range 1-100")


def _affinity(spec: Mapping, path: str) -> None:
    """validateAffinity."""
    aff = _map(spec, "affinity", path)
    ap = _child(path, "affinity")
    na = _map(aff, "nodeAffinity", ap)
    nap = _child(ap, "nodeAffinity")
    if na.get("requiredDuringSchedulingIgnoredDuringExecution") is not None:
        req = _map(na, "requiredDuringSchedulingIgnoredDuringExecution", nap)
        rp = _child(nap, "requiredDuringSchedulingIgnoredDuringExecution")
        terms = _maps(req, "nodeSelectorTerms", rp)
        if not terms:
            _required(_child(rp, "nodeSelectorTerms"), "must have at least one node selector term")
        for tp, term in terms:
            _node_selector_term(term, tp, False)
    for tp, term in _maps(na, "preferredDuringSchedulingIgnoredDuringExecution", nap):
        _weight(term, tp)
        _node_selector_term(_map(term, "preference", tp), _child(tp, "preference"), True)
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = _map(aff, kind, ap)
        pp = _child(ap, kind)
        for tp, term in _maps(pa, "requiredDuringSchedulingIgnoredDuringExecution", pp):
            _pod_affinity_term(term, tp)
        for tp, wt in _maps(pa, "preferredDuringSchedulingIgnoredDuringExecution", pp):
            _weight(wt, tp)
            _pod_affinity_term(_map(wt, "podAffinityTerm", tp), _child(tp, "podAffinityTerm"))


def _topology_spread(spec: Mapping, path: str) -> None:
    """validateTopologySpreadConstraints."""
    cs = _maps(spec, "topologySpreadConstraints", path)
    seen: Set[Tuple[str, str]] = set()
    for cp, c in cs:
        skew = _int(c, "maxSkew", cp)
        if skew is None or skew <= 0:
            _invalid(_child(cp, "maxSkew"), skew or 0, "must be greater than zero")
        tk = _str(c, "topologyKey", cp)
        if not tk:
            _required(_child(cp, "topologyKey"), "can not be empty")
        wu = _str(c, "whenUnsatisfiable", cp)
        if wu not in ("DoNotSchedule", "ScheduleAnyway"):
            _unsupported(_child(cp, "whenUnsatisfiable"), wu, ["DoNotSchedule", "ScheduleAnyway"])
        if (tk, wu) in seen:
            _duplicate(_child(cp, "{topologyKey, whenUnsatisfiable}"), f"{{{tk}, {wu}}}")
        seen.add((tk, wu))
        md = _int(c, "minDomains", cp)
        if md is not None:
            if md <= 0:
                _invalid(_child(cp, "minDomains"), md, "must be greater than zero")
            if wu != "DoNotSchedule":
                _invalid(_child(cp, "minDomains"), md,
                         f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {wu}")
        for pol in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            v = c.get(pol)
            if v is not None and v not in ("Honor", "Ignore"):
                _unsupported(_child(cp, pol), v, ["Honor", "Ignore"])
        for i, k in enumerate(_strs(c, "matchLabelKeys", cp)):
            _label_name(k, f"{_child(cp, 'matchLabelKeys')}[{i}]")
        _label_selector(c, "labelSelector", cp)


TOLERATION_COMPARISON_GATE = "TaintTolerationComparisonOperators"


def toleration_operator_options(features: Optional["Features"], old_spec: Optional[Mapping] = None) -> Tuple[bool, bool]:
    """(whether the version's ValidateTolerations has the Lt/Gt case at all (v1.35 on),
    PodValidationOptions.AllowTaintTolerationComparisonOperators): the gate on, or the old pod
    of an update already using Lt/Gt (allowTaintTolerationComparisonOperators)."""
    if features is None:
        from ..versions import DEFAULT as features
    known = TOLERATION_COMPARISON_GATE in features
    allow = known and (features[TOLERATION_COMPARISON_GATE] or any(
        isinstance(t, Mapping) and t.get("operator") in ("Lt", "Gt") for t in (old_spec or {}).get("tolerations") or ()))
    return known, allow


def _parse_int64_error(value: str) -> Optional[str]:
    """strconv.ParseInt(value, 10, 64)'s error text, or None."""
    if re.fullmatch(r"[+-]?[0-9]+", value or ""):
        v = int(value)
        return None if -(1 << 63) <= v < (1 << 63) else f'strconv.ParseInt: parsing "{value}": value out of range'
    return f'strconv.ParseInt: parsing "{value}": invalid syntax'


def _tolerations(spec: Mapping, path: str, comparison: Tuple[bool, bool] = (True, False)) -> None:
    """ValidateTolerations. `comparison`: toleration_operator_options (v1.35 added the Lt/Gt
    operators, allowed with TaintTolerationComparisonOperators)."""
    from .taints import is_decimal_integer
    known, allow = comparison
    for tp, t in _maps(spec, "tolerations", path):
        key = _str(t, "key", tp)
        op = _str(t, "operator", tp)
        value = _str(t, "value", tp)
        effect = _str(t, "effect", tp)
        if key:
            _label_name(key, _child(tp, "key"))
        if not key and op != "Exists":
            _invalid(_child(tp, "operator"), op,
                     "operator must be Exists when `key` is empty, which means \"match all values and all keys\"")
        if _int(t, "tolerationSeconds", tp, 64) is not None and effect != "NoExecute":
            _invalid(_child(tp, "effect"), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
        if op in ("Equal", ""):
            errs = is_valid_label_value(value)
            if errs:
                _invalid(_child(tp, "operator"), value, ";".join(errs))
        elif op == "Exists":
            if value:
                _invalid(_child(tp, "operator"), value, "value must be empty when `operator` is 'Exists'")
        elif op in ("Lt", "Gt") and known:
            if not allow:
                _unsupported(_child(tp, "operator"), op, ["Equal", "Exists", "Lt", "Gt"])
            if not is_decimal_integer(value):
                _invalid(_child(tp, "value"), value,
                         "must be non-empty" if not value else "must be a valid decimal integer in canonical form")
            err = _parse_int64_error(value)
            if err:
                _invalid(_child(tp, "value"), value, err)
        else:
            _unsupported(_child(tp, "operator"), op, ["Equal", "Exists"])
        if effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            _unsupported(_child(tp, "effect"), effect, ["NoExecute", "NoSchedule", "PreferNoSchedule"])


# -- resources ----------------------------------------------------------------------------------
_STANDARD_CONTAINER_RESOURCES = {"cpu", "memory", "ephemeral-storage"}


def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed."""
    return is_native_resource(name) and not _is_hugepages(name)


def _container_resource_name(name: Any, path: str) -> None:
    """validateContainerResourceName."""
    if not isinstance(name, str):
        _wrong_type(path, "a resource name (string)", name)
    for msg in is_qualified_name(name):
        _invalid(path, name, msg)
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not _is_hugepages(name):
            _invalid(path, name, "must be a standard resource for containers")
    elif not is_native_resource(name) and not is_extended_resource_name(name):
        _invalid(path, name, "doesn't follow extended resource name standard")


def _resource_list(obj: Mapping, key: str, path: str, name_fn) -> Dict[str, Any]:
    out = {}
    for name, v in _map(obj, key, path).items():
        p = f"{_child(path, key)}[{name}]"
        name_fn(name, p)
        q = _quantity(v, p)
        if q < 0:
            _invalid(p, v, "must be greater than or equal to 0")
        if (is_extended_resource_name(name) or name == "pods") and q.denominator != 1:
            _invalid(p, v, "must be an integer")
        out[name] = q
    return out


def _resource_requirements(ctr: Mapping, path: str) -> None:
    """validateResourceRequirements (requests defaulted from limits, as the API server does
    before validating)."""
    res = _map(ctr, "resources", path)
    rp = _child(path, "resources")
    limits = _resource_list(res, "limits", rp, _container_resource_name)
    requests = _resource_list(res, "requests", rp, _container_resource_name)
    for name, q in requests.items():
        lim = limits.get(name)
        if lim is not None:
            if q != lim and not _overcommit_allowed(name):
                _invalid(_child(rp, "requests"), str(res["requests"][name]),
                         f"must be equal to {name} limit of {res['limits'][name]}")
            elif q > lim:
                _invalid(_child(rp, "requests"), str(res["requests"][name]),
                         f"must be less than or equal to {name} limit of {res['limits'][name]}")
        elif not _overcommit_allowed(name):
            _required(_child(rp, "limits"), "Limit must be set for non overcommitable resources")


_CONTAINER_RESTART_POLICIES = ["Always", "Never", "OnFailure"]


def _container_restart_policy(ctr: Mapping, cp: str, init: bool, rules: bool) -> None:
    """validateInitContainerRestartPolicy / validateContainerRestartPolicy; `rules`: the
    ContainerRestartRules gate (beta and on from v1.35: AllowContainerRestartPolicyRules)."""
    policy = ctr.get("restartPolicy")
    if policy is None:
        return
    policy = _str(ctr, "restartPolicy", cp)
    p = _child(cp, "restartPolicy")
    if init and not rules:
        if policy != "Always":
            _unsupported(p, policy, ["Always"])
    elif rules:
        if policy not in _CONTAINER_RESTART_POLICIES:
            _unsupported(p, policy, _CONTAINER_RESTART_POLICIES)
    else:
        _fail(p, "Forbidden: may not be set for non-init containers")


def _containers(spec: Mapping, path: str, restart_rules: bool = True) -> None:
    """validateContainers / validateInitContainers: the fields the harness reads."""
    names: Set[str] = set()
    regular = _maps(spec, "containers", path)
    if not regular:
        _required(_child(path, "containers"), "")
    for group in ("containers", "initContainers"):
        host_ports: Set[str] = set()
        for cp, ctr in (regular if group == "containers" else _maps(spec, group, path)):
            name = _str(ctr, "name", cp)
            if not name:
                _required(_child(cp, "name"), "")
            _dns_label(name, _child(cp, "name"))
            if name in names:
                _duplicate(_child(cp, "name"), name)
            names.add(name)
            if not _str(ctr, "image", cp):
                _required(_child(cp, "image"), "")
            _container_restart_policy(ctr, cp, group == "initContainers", restart_rules)
            _resource_requirements(ctr, cp)
            port_names: Set[str] = set()
            for pp, port in _maps(ctr, "ports", cp):
                pname = _str(port, "name", pp)
                if pname:
                    _port_name(pname, _child(pp, "name"))
                    if pname in port_names:
                        _duplicate(_child(pp, "name"), pname)
                    port_names.add(pname)
                cport = _int(port, "containerPort", pp)
                if not cport:
                    _required(_child(pp, "containerPort"), "")
                _port_num(cport, _child(pp, "containerPort"))
                hport = _int(port, "hostPort", pp) or 0
                if hport:
                    _port_num(hport, _child(pp, "hostPort"))
                proto = _str(port, "protocol", pp) or "TCP"
                if proto not in ("SCTP", "TCP", "UDP"):
                    _unsupported(_child(pp, "protocol"), proto, ["SCTP", "TCP", "UDP"])
                host_ip = _str(port, "hostIP", pp)
                if hport and group == "containers":
                    k = f"{proto}/{host_ip}/{hport}"
                    if k in host_ports:
                        _duplicate(_child(pp, "hostPort"), k)
                    host_ports.add(k)


def _resource_claims(spec: Mapping) -> None:
    """validatePodResourceClaims, then each container's resources.claims as
    validateResourceClaimNames checks them against the pod's claim names."""
    names: Set[str] = set()
    for cp, claim in _maps(spec, "resourceClaims", "spec"):
        name = _str(claim, "name", cp)
        if not name:
            _required(_child(cp, "name"), "")
        if name in names:
            _duplicate(_child(cp, "name"), name)
        _dns_label(name, _child(cp, "name"))
        names.add(name)
        given = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if claim.get(k) is not None]
        if len(given) == 2:
            _invalid(cp, claim, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified")
        if not given:
            _invalid(cp, claim, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        _dns_subdomain(_str(claim, given[0], cp), _child(cp, given[0]))
    for group in ("initContainers", "containers"):
        for cp, ctr in _maps(spec, group, "spec"):
            rp = _child(cp, "resources")
            res = _map(ctr, "resources", cp)
            refs: Set[str] = set()
            for i, ref in enumerate(_list(res, "claims", rp)):
                ip = f"{_child(rp, 'claims')}[{i}]"
                if not isinstance(ref, dict):
                    _wrong_type(ip, "a mapping", ref)
                name = _str(ref, "name", ip)
                if not name:
                    _required(ip, "")
                request = _str(ref, "request", ip)
                if request:
                    _dns_label(request, _child(ip, "request"))
                key = f"{name}/{request}" if request else name
                if name in refs or key in refs or (not request and any(r.startswith(name + "/") for r in refs)):
                    _duplicate(ip, name if name in refs or not request else key)
                refs.add(key)
                if name not in names:
                    detail = "must be one of the names in pod.spec.resourceClaims"
                    detail += ": " + ", ".join(sorted(names)) if names else " which is empty"
                    _fail(ip, f"Not found: {short_value(name)}: {detail}")


def _volume_source(vol: Mapping, vp: str) -> None:
    """validateVolumeSource: at most one volume type (none is an emptyDir, SetDefaults_Volume);
    a persistentVolumeClaim names its claim (validatePersistentClaimVolumeSource)."""
    types = [k for k in vol if k != "name" and vol[k] is not None]
    if len(types) > 1:
        _fail(_child(vp, types[1]), "Forbidden: may not specify more than 1 volume type")
    if vol.get("persistentVolumeClaim") is not None:
        pp = _child(vp, "persistentVolumeClaim")
        claim = _map(vol, "persistentVolumeClaim", vp)
        if not _str(claim, "claimName", pp):
            _required(_child(pp, "claimName"), "")
        _bool(claim, "readOnly", pp)


def _volumes(spec: Mapping, p: str) -> None:
    """The pod's volumes: names (DNS labels, unique) and sources (validateVolumes)."""
    seen_volumes: Set[str] = set()
    for vp, vol in _maps(spec, "volumes", p):
        name = _str(vol, "name", vp)
        if not name:
            _required(_child(vp, "name"), "")
        _dns_label(name, _child(vp, "name"))
        if name in seen_volumes:
            _duplicate(_child(vp, "name"), name)
        seen_volumes.add(name)
        _volume_source(vol, vp)


# -- kinds --------------------------------------------------------------------------------------
_SCALARS = (str, int, bool, type(None))


def _pod(obj: Mapping, features: Optional["Features"] = None) -> None:
    """ValidatePodCreate: ValidatePodSpec's fields the harness reads. While a cluster is built
    (api/valid_memo.py), a pod whose spec but nodeName and whose status are those of a pod found
    valid (the same values: a Deployment's replicas) has its nodeName checked alone."""
    if features is None:
        from ..versions import DEFAULT as features
    spec, st = obj.get("spec"), obj.get("status")
    key = None
    if type(spec) is dict and (st is None or type(st) is dict):
        key = members_key(spec, ("nodeName",))
        # of the status, what _pod_fields reads
        phase, nnn, conds = (None, None, None) if st is None else (
            st.get("phase"), st.get("nominatedNodeName"), st.get("conditions"))
        if key is not None and type(phase) in _SCALARS and type(nnn) in _SCALARS:
            key = ((id(features), st is None, phase, nnn, id(conds), key[0]), key[1] + (features, conds))
            if known_valid_key(_pod, key):
                nn = _str(spec, "nodeName", "spec")
                if nn:
                    _dns_subdomain(nn, "spec.nodeName")
                return
        else:
            key = None
    _pod_fields(obj, features)
    found_valid_key(_pod, key)


def _pod_fields(obj: Mapping, features: "Features") -> None:
    """_pod's checks, in order."""
    spec = _map(obj, "spec", "")
    if obj.get("spec") is None:
        _required("spec", "")
    p = "spec"
    # the checks of values a big cluster's pods share, once per shared value (api/valid_memo.py)
    restart_rules = features.version.minor >= 35
    ctrs, inits = spec.get("containers"), spec.get("initContainers")
    if not known_valid(_containers, ctrs, inits, restart_rules):
        _containers(spec, p, restart_rules=restart_rules)
        found_valid(_containers, ctrs, inits, restart_rules)
    vols = spec.get("volumes")
    if not known_valid(_volumes, vols):
        _volumes(spec, p)
        found_valid(_volumes, vols)
    _resource_claims(spec)
    nn = _str(spec, "nodeName", p)
    if nn:
        _dns_subdomain(nn, "spec.nodeName")
    sn = _str(spec, "schedulerName", p)
    if sn:
        _dns_subdomain(sn, "spec.schedulerName")
    pcn = _str(spec, "priorityClassName", p)
    if pcn:
        _dns_subdomain(pcn, "spec.priorityClassName")
    _int(spec, "priority", p)
    pp = _str(spec, "preemptionPolicy", p)
    if pp and pp not in ("Never", "PreemptLowerPriority"):
        _unsupported("spec.preemptionPolicy", pp, ["Never", "PreemptLowerPriority"])
    ns = _map(spec, "nodeSelector", p)
    if ns:
        _labels(spec, "nodeSelector", p)
    known, allow = toleration_operator_options(features)
    tols = spec.get("tolerations")
    if not known_valid(_tolerations, tols, known, allow):
        _tolerations(spec, p, (known, allow))
        found_valid(_tolerations, tols, known, allow)
    for check, key in ((_affinity, "affinity"), (_topology_spread, "topologySpreadConstraints")):
        value = spec.get(key)
        if not known_valid(check, value):
            check(spec, p)
            found_valid(check, value)
    _resource_list(spec, "overhead", p, _container_resource_name)
    _resource_requirements(spec, p)  # pod-level spec.resources (PodLevelResources)
    gates: Set[str] = set()
    for gp, gate in _maps(spec, "schedulingGates", p):
        g = _str(gate, "name", gp)
        for msg in is_qualified_name(g):
            _invalid(_child(gp, "name"), g, msg)
        if g in gates:
            _duplicate(_child(gp, "name"), g)
        gates.add(g)
    st = _map(obj, "status", "")
    _str(st, "phase", "status")
    nnn = _str(st, "nominatedNodeName", "status")
    if nnn:
        _dns_subdomain(nnn, "status.nominatedNodeName")
    _maps(st, "conditions", "status")


_NODE_DECLARED_FEATURE_RE = re.compile(r"[A-Z][a-zA-Z0-9]*(/[a-zA-Z][a-zA-Z0-9]*)*")


def _node_declared_features(st: Mapping, features: Optional["Features"]) -> None:
    """validateNodeDeclaredFeatures (v1.35 on; the field is dropped with the gate off, before
    validation): names of UpperCamelCase segments, at most 253 characters, sorted, no duplicate."""
    if features is None:
        from ..versions import DEFAULT as features
    if not features.get("NodeDeclaredFeatures", False):
        return
    path = "status.declaredFeatures"
    names = _strs(st, "declaredFeatures", "status")
    for i, name in enumerate(names):
        if len(name) > 253:
            _invalid(f"{path}[{i}]", name, f"invalid feature name {json.dumps(name)}: must be no more than 253 characters")
        if not _NODE_DECLARED_FEATURE_RE.fullmatch(name):
            _invalid(f"{path}[{i}]", name, f"invalid feature name {json.dumps(name)}: must start with an UpperCamelCase "
                     "segment, with subsequent segments separated by '/' (e.g., MyFeature or MyFeature/mySubFeature), "
                     "and contain only alphanumeric characters and slashes")
        if i + 1 < len(names):
            nxt = names[i + 1]
            if name == nxt:
                _duplicate(f"{path}[{i + 1}]", nxt)
            elif name > nxt:
                _invalid(f"{path}[{i + 1}]", nxt, "list must be sorted alphabetically")


def _node(obj: Mapping, features: Optional["Features"] = None) -> None:
    """ValidateNode: taints, unschedulable, capacity, allocatable and declared features."""
    spec = _map(obj, "spec", "")
    _bool(spec, "unschedulable", "spec")
    seen: Set[Tuple[str, str]] = set()
    for tp, taint in _maps(spec, "taints", "spec"):
        key = _str(taint, "key", tp)
        _label_name(key, _child(tp, "key"))
        value = _str(taint, "value", tp)
        errs = is_valid_label_value(value)
        if errs:
            _invalid(_child(tp, "value"), value, ";".join(errs))
        effect = _str(taint, "effect", tp)
        if not effect:
            _required(_child(tp, "effect"), "")
        if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            _unsupported(_child(tp, "effect"), effect, ["NoExecute", "NoSchedule", "PreferNoSchedule"])
        if (key, effect) in seen:
            _fail(tp, f"Duplicate value: {short_value({'key': key, 'effect': effect})}: "
                  "taints must be unique by key and effect pair")
        seen.add((key, effect))
    st = _map(obj, "status", "")

    def name_fn(name: Any, path: str) -> None:  # validateResourceName, lenient on unprefixed names
        if not isinstance(name, str):
            _wrong_type(path, "a resource name (string)", name)
        for msg in is_qualified_name(name):
            _invalid(path, name, msg)

    _resource_list(st, "capacity", "status", name_fn)
    _resource_list(st, "allocatable", "status", name_fn)
    for ip, image in _maps(st, "images", "status"):
        _strs(image, "names", ip)
        _int(image, "sizeBytes", ip, 64)
    _node_declared_features(st, features)


def _priority_class(obj: Mapping) -> None:
    """ValidatePriorityClass (pkg/apis/scheduling/validation)."""
    name = (obj.get("metadata") or {}).get("name", "")
    value = _int(obj, "value", "") or 0
    global_default = bool(_bool(obj, "globalDefault", ""))
    if name.startswith("system-"):
        want = SYSTEM_PRIORITY_CLASSES.get(name)
        if want is None:
            _fail("metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved "
                  f"for system use only. error: {name} is not a known system priority class")
        if value != want:
            _fail("metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved "
                  f"for system use only. error: value of {name} PriorityClass must be {want}")
        if global_default:  # IsKnownSystemPriorityClass: the built-ins are not the global default
            _fail("metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved "
                  f"for system use only. error: globalDefault of {name} PriorityClass must be false")
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        _fail("value", f"Forbidden: maximum allowed value of a user defined priority is "
              f"{HIGHEST_USER_DEFINABLE_PRIORITY}")
    pp = _str(obj, "preemptionPolicy", "")
    if pp and pp not in ("Never", "PreemptLowerPriority"):
        _unsupported("preemptionPolicy", pp, ["Never", "PreemptLowerPriority"])


def _int_or_percent(spec: Mapping, key: str, path: str) -> None:
    """ValidateNonnegativeIntOrPercent."""
    v = spec.get(key)
    p = _child(path, key)
    if v is None:
        return
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        _wrong_type(p, "an integer or a percentage string", v)
    if isinstance(v, int):
        if v < 0:
            _invalid(p, v, "must be greater than or equal to 0")
    elif not _PERCENT_RE.match(v):
        _invalid(p, v, "a valid percent string must be a numeric string followed by an ending '%' "
                 "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")
    elif int(v[:-1]) > 100:
        _invalid(p, v, "must not be greater than 100%")


def _pdb(obj: Mapping) -> None:
    """ValidatePodDisruptionBudgetSpec (pkg/apis/policy/validation)."""
    spec = _map(obj, "spec", "")
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        _invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set")
    _int_or_percent(spec, "minAvailable", "spec")
    _int_or_percent(spec, "maxUnavailable", "spec")
    _label_selector(spec, "selector", "spec", allow_invalid_values=False)
    pol = spec.get("unhealthyPodEvictionPolicy")
    if pol is not None and pol not in ("AlwaysAllow", "IfHealthyBudget"):
        _unsupported("spec.unhealthyPodEvictionPolicy", pol, ["AlwaysAllow", "IfHealthyBudget"])


def _workload(obj: Mapping) -> None:
    """Selectors of Services, ReplicaSets, StatefulSets, ReplicationControllers (PodTopologySpread's
    default constraints read them)."""
    spec = _map(obj, "spec", "")
    if obj.get("kind") in ("Service", "ReplicationController"):
        _labels(spec, "selector", "spec")
    else:
        _label_selector(spec, "selector", "spec")
    _int(spec, "replicas", "spec")


def _storage(obj: Mapping) -> None:
    kind = obj.get("kind")
    spec = _map(obj, "spec", "")
    if kind == "PersistentVolume":
        _resource_list(spec, "capacity", "spec", lambda n, p: None)
    elif kind == "PersistentVolumeClaim":
        _resource_list(_map(spec, "resources", "spec"), "requests", "spec.resources", lambda n, p: None)
    elif kind == "CSINode":
        _csi_node(spec)
    elif kind == "StorageClass":
        mode = obj.get("volumeBindingMode")
        if mode is not None and mode not in ("Immediate", "WaitForFirstConsumer"):
            _unsupported("volumeBindingMode", mode, ["Immediate", "WaitForFirstConsumer"])


def _csi_node(spec: Mapping) -> None:
    """validateCSINodeDrivers (storage/validation): a driver's name, its nodeID (at most 256
    characters), a count of volumes not negative, no driver twice, topology keys not empty nor
    twice."""
    names: Set[str] = set()
    for dp, drv in _maps(spec, "drivers", "spec"):
        name = _str(drv, "name", dp)
        if not name:
            _required(_child(dp, "name"), "")
        if len(name) > 63:
            _fail(_child(dp, "name"), "Too long: may not be more than 63 bytes")
        for msg in is_dns1123_subdomain(name.lower()):
            _invalid(_child(dp, "name"), name, msg)
        node_id = _str(drv, "nodeID", dp)
        if not node_id:
            _required(_child(dp, "nodeID"), "")
        if len(node_id) > 256:
            _invalid(_child(dp, "nodeID"), node_id, "must be 256 characters or less")
        alloc = _map(drv, "allocatable", dp)
        count = _int(alloc, "count", _child(dp, "allocatable"))
        if count is not None and count < 0:
            _invalid(_child(_child(dp, "allocatable"), "count"), count, "must be greater than or equal to 0")
        if name in names:
            _duplicate(_child(dp, "name"), name)
        names.add(name)
        keys: Set[str] = set()
        for key in _strs(drv, "topologyKeys", dp):
            if not key:
                _required(dp, "")
            if key in keys:
                _duplicate(dp, key)
            keys.add(key)


_BY_KIND = {"Pod": _pod, "Node": _node, "PriorityClass": _priority_class, "PodDisruptionBudget": _pdb,
            "Service": _workload, "ReplicaSet": _workload, "StatefulSet": _workload,
            "ReplicationController": _workload, "PersistentVolume": _storage,
            "PersistentVolumeClaim": _storage, "StorageClass": _storage, "CSINode": _storage}


def _dra(obj: Mapping, features: Optional["Features"] = None) -> None:
    """pkg/apis/resource/validation (harness/api/dra_validation.py)."""
    DRA_BY_KIND[obj["kind"]](obj, features)


for _kind in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"):
    _BY_KIND[_kind] = _dra


def _workload_api(obj: Mapping, features: Optional["Features"] = None) -> None:
    """pkg/apis/scheduling/validation's Workload and PodGroup (harness/api/workload.py)."""
    WORKLOAD_BY_KIND[obj["kind"]](obj, features)


for _kind in ("Workload", "PodGroup"):
    _BY_KIND[_kind] = _workload_api


def _edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def kind_typo(kind: str) -> Optional[str]:
    """The scheduling kind that `kind` looks like a misspelling of (`Nodes`, `pod`), or None."""
    if kind in SCHEDULING_KINDS or kind in _OTHER_KINDS:
        return None
    low = kind.lower()
    for k in SCHEDULING_KINDS:
        kl = k.lower()
        if low in (kl, kl + "s", kl + "es") or (len(kind) >= 5 and _edit_distance(low, kl) <= 2):
            return k
    return None


def _strict_decoding(obj: Mapping, kind: str, features: Optional["Features"]) -> None:
    """What the API server's strict decoding refuses before validating (kubectl's default
    --validate=strict): a group/version that does not serve the kind, a field its type lacks."""
    if features is None:
        from ..versions import DEFAULT as features
    if kind in ("Workload", "PodGroup"):
        why = api_version_problem(kind, obj.get("apiVersion"), features)
    else:
        why = fields.check_api_version(kind, obj.get("apiVersion"))
    if why is not None:
        _fail("apiVersion", why)
    minor = features.version.minor
    bad = fields.unknown_field(obj, kind, minor)
    if bad is not None:
        _fail(bad, f'strict decoding error: unknown field "{bad}"')


def validate_object(obj: Any, features: Optional["Features"] = None) -> Optional[Tuple[str, str]]:
    """The first problem the API server of ``features``' version (default: the newest modelled)
    would report for this manifest, as (field path, message), or None. While a cluster is built,
    a pod that differs from a pod found valid only in its own members has those checked alone
    (api/replica_check.py)."""
    replica = type(obj) is dict and obj.get("kind") == "Pod" and table() is not None
    if replica and known_valid_pod(obj, features):
        return None
    err = _validate_object(obj, features)
    if replica and err is None:
        found_valid_pod(obj, features)
    return err


def _validate_object(obj: Any, features: Optional["Features"]) -> Optional[Tuple[str, str]]:
    """validate_object's checks, in order."""
    try:
        if not isinstance(obj, dict):
            _wrong_type("", "a Kubernetes object (a mapping)", obj)
        kind = obj.get("kind")
        if not isinstance(kind, str) or not kind:
            _required("kind", "")
        typo = kind_typo(kind)
        if typo:
            _invalid("kind", kind, f"unknown kind; did you mean {typo}?")
        _str(obj, "apiVersion", "")
        if kind in ("Workload", "PodGroup") and not str(obj.get("apiVersion") or "").startswith("scheduling.k8s.io/"):
            return None  # a plugin's custom resource of that kind (the coscheduling PodGroup)
        _strict_decoding(obj, kind, features)
        _object_meta(obj, kind)
        check = _BY_KIND.get(kind)
        if check is _pod:
            validate_pod_fields(obj, features)  # spec.workloadRef / spec.schedulingGroup
        if check is _pod or check is _node or check is _dra or check is _workload_api:
            check(obj, features)
        elif check is not None:
            check(obj)
    except ObjectInvalid as e:
        return e.path, e.message
    return None


def first_problem(objs: Iterable[Tuple[str, Any]]) -> Optional[Tuple[str, str]]:
    for key, obj in objs:
        err = validate_object(obj)
        if err:
            return f"{key}.{err[0]}" if err[0] else key, err[1]
    return None
