"""The Workload API's objects as the API server serves and validates them: Workload
(``scheduling.k8s.io/v1alpha1`` in v1.35, ``v1alpha2`` in v1.36) and PodGroup (``v1alpha2``,
v1.36), and the pod fields that name them (``spec.workloadRef`` in v1.35,
``spec.schedulingGroup`` in v1.36).

Mirrors pkg/registry/scheduling/rest (the storage exists only with the GenericWorkload gate on),
pkg/apis/scheduling/validation (ValidateWorkload, ValidatePodGroup) and pkg/api/pod's
dropDisabledWorkloadRef / dropDisabledSchedulingGroup, for each version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Tuple

if TYPE_CHECKING:
    from ..versions import Features

GATE = "GenericWorkload"
GROUP = "scheduling.k8s.io"
# per minor: the kinds of the Workload API and the one group/version serving each
SERVED: Dict[int, Dict[str, str]] = {
    35: {"Workload": f"{GROUP}/v1alpha1"},
    36: {"Workload": f"{GROUP}/v1alpha2", "PodGroup": f"{GROUP}/v1alpha2"},
}
KINDS = ("Workload", "PodGroup")
WORKLOAD_MAX_POD_GROUPS = 8  # WorkloadMaxPodGroups (v1alpha1), WorkloadMaxPodGroupTemplates (v1alpha2)

# a pod group's identity: (namespace, workload name, pod group, replica key) in v1.35 (the
# workloadmanager's podGroupKey), (namespace, pod group name) in v1.36
GroupKey = Tuple[str, ...]


def _minor(features: Optional["Features"]) -> int:
    if features is None:
        from ..versions import DEFAULT as features
    return features.version.minor


def served(kind: str, features: Optional["Features"]) -> Optional[str]:
    """The group/version the API server serves `kind` at with these gates, or None (the kind
    does not exist in this version, or GenericWorkload is off: the storage is not installed)."""
    if features is None:
        from ..versions import DEFAULT as features
    if not features.get(GATE, False):
        return None
    return SERVED.get(features.version.minor, {}).get(kind)


def api_version_problem(kind: str, api_version: Any, features: Optional["Features"]) -> Optional[str]:
    """Why the API server would not take a Workload API object at this apiVersion, or None."""
    want = served(kind, features)
    if want is not None and api_version == want:
        return None
    if want is None and features is not None and not features.get(GATE, False) and \
            kind in SERVED.get(features.version.minor, {}):
        return (f'no matches for kind "{kind}" in version "{str(api_version)[:60]}" (the Workload API '
                f'is served only with the {GATE} feature gate on)')
    return f'no matches for kind "{kind}" in version "{str(api_version)[:60]}"'


# ------------------------------------------------------------------------------------------------
# pods
# ------------------------------------------------------------------------------------------------
def pod_ref_field(features: Optional["Features"]) -> Optional[str]:
    """The pod field naming its group in this version: workloadRef (v1.35), schedulingGroup
    (v1.36), None (v1.34)."""
    m = _minor(features)
    return "workloadRef" if m == 35 else "schedulingGroup" if m >= 36 else None


def drop_disabled_pod_fields(spec: Dict[str, Any], old_spec: Optional[Mapping[str, Any]],
                             features: Optional["Features"]) -> None:
    """dropDisabledWorkloadRef (v1.35) / dropDisabledSchedulingGroup (v1.36): without
    GenericWorkload the field is dropped, unless the old pod already has it."""
    field = pod_ref_field(features)
    if field is None or (features is not None and features.get(GATE, False)):
        return
    if old_spec is not None and old_spec.get(field) is not None:
        return
    spec.pop(field, None)


def pod_group_key(pod, features: Optional["Features"]) -> Optional[GroupKey]:
    """The pod group a pod belongs to, or None."""
    field = pod_ref_field(features)
    if field is None:
        return None
    ref = pod.spec.get(field)
    if not isinstance(ref, Mapping):
        return None
    if field == "workloadRef":
        return (pod.namespace, str(ref.get("name") or ""), str(ref.get("podGroup") or ""),
                str(ref.get("podGroupReplicaKey") or ""))
    name = ref.get("podGroupName")
    return None if name is None else (pod.namespace, str(name))


# ------------------------------------------------------------------------------------------------
# the pod group's policy, as the scheduler reads it
# ------------------------------------------------------------------------------------------------
def policy_of(cluster, key: GroupKey, features: Optional["Features"]) -> Tuple[Optional[str], Optional[Mapping]]:
    """(error, policy) for a pod group: v1.35 looks the policy up in the Workload's podGroups,
    v1.36 in the PodGroup's schedulingPolicy. The error is the PreEnqueue message upstream gives
    when the object is missing (its Permit wraps it as an Error)."""
    if len(key) == 4:
        ns, wl_name, group, _ = key
        wl = cluster.get("Workload", ns, wl_name)
        if wl is None or not wl.api_version.startswith(GROUP + "/"):
            return f'waiting for pods\'s workload "{wl_name}" to appear in scheduling queue', None
        for pg in (wl.raw.get("spec") or {}).get("podGroups") or ():
            if (pg or {}).get("name") == group:
                return None, (pg.get("policy") or {})
        return f'pod group "{group}" doesn\'t exist for a workload "{wl_name}"', None
    ns, name = key
    pg = cluster.get("PodGroup", ns, name)
    if pg is None or not pg.api_version.startswith(GROUP + "/"):
        return f'waiting for pods\'s pod group "{name}" to appear in scheduling queue', None
    return None, ((pg.raw.get("spec") or {}).get("schedulingPolicy") or {})


def gang_min_count(policy: Optional[Mapping]) -> Optional[int]:
    """policy.Gang.MinCount, or None for a basic policy."""
    gang = (policy or {}).get("gang")
    if gang is None:
        return None
    return int((gang or {}).get("minCount") or 0)


# ------------------------------------------------------------------------------------------------
# validation (pkg/apis/scheduling/validation)
# ------------------------------------------------------------------------------------------------
def _policy(policy: Any, path: str, declarative: bool = False) -> None:
    """validatePodGroupPolicy (v1alpha1, handwritten) / Validate_PodGroupSchedulingPolicy
    (v1alpha2, declarative: +union, minCount +k8s:required +k8s:minimum=1)."""
    from .field_checks import _int, _invalid, _required, _wrong_type

    if policy is None:
        policy = {}
    if not isinstance(policy, Mapping):
        _wrong_type(path, "an object", policy)
    set_fields = [f"`{k}`" for k in ("basic", "gang") if policy.get(k) is not None]
    if declarative:
        if not set_fields:
            _invalid(path, "", "must specify one of: `basic`, `gang`")
        if len(set_fields) > 1:
            _invalid(path, "{" + ", ".join(set_fields) + "}", "must specify exactly one of: `basic`, `gang`")
    else:
        if not set_fields:
            _required(path, "exactly one of `basic`, `gang` is required")
        if len(set_fields) > 1:
            _invalid(path, "{" + ", ".join(set_fields) + "}",
                     "exactly one of `basic`, `gang` is required, but multiple fields are set")
    gang = policy.get("gang")
    if gang is not None:
        if not isinstance(gang, Mapping):
            _wrong_type(f"{path}.gang", "an object", gang)
        n = _int(gang, "minCount", f"{path}.gang", 32) or 0
        if declarative:
            if n == 0:  # RequiredValue
                _required(f"{path}.gang.minCount", "")
            if n < 1:  # Minimum
                _invalid(f"{path}.gang.minCount", n, "must be greater than or equal to 1")
        elif n <= 0:  # ValidatePositiveField
            _invalid(f"{path}.gang.minCount", n, "must be greater than zero")


def _group_name(name: Any, path: str, seen: set) -> None:
    """ValidatePodGroupName (a DNS label) and the duplicate check."""
    from .field_checks import _dns_label, _duplicate, _required

    if not isinstance(name, str) or not name:
        _required(path, "")
    _dns_label(name, path)
    if name in seen:
        _duplicate(path, name)
    seen.add(name)


def validate_workload(obj: Mapping, features: Optional["Features"] = None) -> None:
    """ValidateWorkload: podGroups (v1alpha1) / podGroupTemplates (v1alpha2), at least one and
    at most 8, each with a unique DNS-label name and exactly one policy."""
    from .field_checks import _map, _required, _fail

    spec = _map(obj, "spec", "")
    v1alpha1 = _minor(features) == 35
    key = "podGroups" if v1alpha1 else "podGroupTemplates"
    groups = spec.get(key)
    path = f"spec.{key}"
    if not groups:
        _required(path, "must have at least one item")
    if not isinstance(groups, list):
        from .field_checks import _wrong_type
        _wrong_type(path, "a list", groups)
    if len(groups) > WORKLOAD_MAX_POD_GROUPS:
        _fail(path, f"Too many: {len(groups)}: must have at most {WORKLOAD_MAX_POD_GROUPS} items")
    seen: set = set()
    for i, g in enumerate(groups):
        gp = f"{path}[{i}]"
        if not isinstance(g, Mapping):
            from .field_checks import _wrong_type
            _wrong_type(gp, "an object", g)
        _group_name(g.get("name"), f"{gp}.name", seen)
        if v1alpha1:
            _policy(g.get("policy"), f"{gp}.policy")
        else:
            _policy(g.get("schedulingPolicy"), f"{gp}.schedulingPolicy", declarative=True)
            _constraints(g.get("schedulingConstraints"), f"{gp}.schedulingConstraints")
            _resource_claims(g.get("resourceClaims"), f"{gp}.resourceClaims")
            _template_priority(g, gp)


def _constraints(c: Any, path: str) -> None:
    """validatePodGroupSchedulingConstraints: topology keys are qualified names."""
    from .field_checks import _invalid, _required, _wrong_type
    from .validation import is_qualified_name

    if not isinstance(c, Mapping):
        return
    topology = c.get("topology") or ()
    if not isinstance(topology, list):
        _wrong_type(f"{path}.topology", "a list", topology)
    for i, t in enumerate(topology):
        k = (t or {}).get("key") if isinstance(t, Mapping) else None
        if not k:
            _required(f"{path}.topology[{i}].key", "")
        if not isinstance(k, str):
            _wrong_type(f"{path}.topology[{i}].key", "a string", k)
        for msg in is_qualified_name(k):
            _invalid(f"{path}.topology[{i}].key", k, msg)


# the v1alpha2 fields behind a gate: PrepareForCreate / PrepareForUpdate drop them with the gate
# off unless the stored object uses them (dropDisabledPodGroupSpecFields,
# dropDisabledPodGroupTemplatesFields); their +k8s:ifDisabled=+k8s:forbidden never sees them then
GATED_FIELDS = (("schedulingConstraints", "TopologyAwareWorkloadScheduling"),
                ("resourceClaims", "DRAWorkloadResourceClaims"),
                ("disruptionMode", "WorkloadAwarePreemption"),
                ("priorityClassName", "WorkloadAwarePreemption"),
                ("priority", "WorkloadAwarePreemption"))
MAX_RESOURCE_CLAIMS = 4  # +k8s:maxItems=4 on spec.resourceClaims
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000  # +k8s:maximum on priority


def _drop_gated(spec: Dict[str, Any], old: Optional[Mapping[str, Any]], features: Optional["Features"]) -> None:
    for key, gate in GATED_FIELDS:
        if features is not None and features.get(gate, False):
            continue
        if old is not None and old.get(key) not in (None, "", []):
            continue  # ...InUse(old)
        spec.pop(key, None)


def drop_disabled_fields(obj: Dict[str, Any], old: Optional[Mapping[str, Any]],
                         features: Optional["Features"]) -> None:
    """dropDisabledPodGroupFields (a v1alpha2 PodGroup's spec) and dropDisabledWorkloadFields
    (each v1alpha2 Workload's podGroupTemplates[i], against the old one at that index), before
    validation as the registry's PrepareForCreate/PrepareForUpdate run."""
    if not str(obj.get("apiVersion", "")).startswith(GROUP + "/v1alpha2"):
        return
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    old_spec = (old or {}).get("spec") or {}
    if obj.get("kind") == "PodGroup":
        _drop_gated(spec, old_spec if old is not None else None, features)
    elif obj.get("kind") == "Workload" and isinstance(spec.get("podGroupTemplates"), list):
        olds = old_spec.get("podGroupTemplates") or [] if old is not None else []
        for i, t in enumerate(spec["podGroupTemplates"]):
            if isinstance(t, dict):
                _drop_gated(t, olds[i] if i < len(olds) and isinstance(olds[i], Mapping) else None, features)


def _resource_claims(claims: Any, path: str) -> None:
    """Validate_PodGroupResourceClaim over spec.resourceClaims (DRAWorkloadResourceClaims,
    declarative): at most 4, a list map keyed by name (k8s-short-name, required), exactly one
    of resourceClaimName / resourceClaimTemplateName (+union), each a k8s-long-name."""
    from .field_checks import _dns_label, _dns_subdomain, _duplicate, _fail, _invalid, _required, _wrong_type

    if claims is None:
        return
    if not isinstance(claims, list):
        _wrong_type(path, "a list", claims)
    if len(claims) > MAX_RESOURCE_CLAIMS:
        _fail(path, f"Too many: {len(claims)}: must have at most {MAX_RESOURCE_CLAIMS} items")
    seen: set = set()
    for i, c in enumerate(claims):
        cp = f"{path}[{i}]"
        if not isinstance(c, Mapping):
            _wrong_type(cp, "an object", c)
        name = c.get("name")
        if not name:
            _required(f"{cp}.name", "")
        if not isinstance(name, str):
            _wrong_type(f"{cp}.name", "a string", name)
        _dns_label(name, f"{cp}.name")
        if name in seen:
            _duplicate(f"{cp}", "{" + f'"name":"{name}"' + "}")
        seen.add(name)
        members = [f"`{k}`" for k in ("resourceClaimName", "resourceClaimTemplateName") if c.get(k) is not None]
        if not members:
            _invalid(cp, "", "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
        if len(members) > 1:
            _invalid(cp, "{" + ", ".join(members) + "}",
                     "must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`")
        for k in ("resourceClaimName", "resourceClaimTemplateName"):
            v = c.get(k)
            if v is None:
                continue
            if not isinstance(v, str):
                _wrong_type(f"{cp}.{k}", "a string", v)
            _dns_subdomain(v, f"{cp}.{k}")


def check_priority(value: Any, path: str) -> None:
    """priority's +k8s:maximum=1000000000 (HighestUserDefinablePriority); its minimum is
    int32's."""
    from .field_checks import _invalid

    if isinstance(value, int) and not isinstance(value, bool) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        _invalid(path, value, f"must be less than or equal to {HIGHEST_USER_DEFINABLE_PRIORITY}")


def _template_priority(template: Mapping, path: str) -> None:
    """A v1alpha2 pod group template's priorityClassName (+k8s:format=k8s-long-name) and
    priority (+k8s:maximum): no admission plugin resolves a template's class, so validation
    sees them as written (with WorkloadAwarePreemption on; dropped with it off)."""
    from .field_checks import _dns_subdomain

    pcn = template.get("priorityClassName")
    if isinstance(pcn, str) and pcn:
        _dns_subdomain(pcn, f"{path}.priorityClassName")
    check_priority(template.get("priority"), f"{path}.priority")


def validate_pod_group(obj: Mapping, features: Optional["Features"] = None) -> None:
    """ValidatePodGroup (v1alpha2): a policy, the template reference's names, the constraints."""
    from .field_checks import _map, _required

    spec = _map(obj, "spec", "")
    ref = spec.get("podGroupTemplateRef")
    if isinstance(ref, Mapping) and isinstance(ref.get("workload"), Mapping):
        w = ref["workload"]
        for k in ("workloadName", "podGroupTemplateName"):
            if not w.get(k):
                _required(f"spec.podGroupTemplateRef.workload.{k}", "")
    _policy(spec.get("schedulingPolicy"), "spec.schedulingPolicy", declarative=True)
    _constraints(spec.get("schedulingConstraints"), "spec.schedulingConstraints")
    _resource_claims(spec.get("resourceClaims"), "spec.resourceClaims")
    dm = spec.get("disruptionMode")
    if dm is not None and dm not in ("Pod", "PodGroup"):
        from .field_checks import _unsupported
        _unsupported("spec.disruptionMode", dm, ["Pod", "PodGroup"])


def validate_pod_fields(obj: Mapping, features: Optional["Features"] = None) -> None:
    """The pod's reference to its group: v1.35's validateWorkloadReference (name a DNS
    subdomain, podGroup and podGroupReplicaKey DNS labels), v1.36's validateSchedulingGroup
    (podGroupName present, a DNS subdomain)."""
    if features is None or not features.get(GATE, False):
        return  # without the gate the field is dropped before validation (PrepareForCreate)
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return
    from .field_checks import _dns_label, _dns_subdomain, _fail, _wrong_type

    for field, children in (("workloadRef", (("name", _dns_subdomain), ("podGroup", _dns_label),
                                             ("podGroupReplicaKey", _dns_label))),
                            ("schedulingGroup", (("podGroupName", _dns_subdomain),))):
        ref = spec.get(field)
        if ref is None:
            continue
        path = f"spec.{field}"
        if not isinstance(ref, Mapping):
            _wrong_type(path, "an object", ref)
        if field == "schedulingGroup" and ref.get("podGroupName") is None:
            _fail(f"{path}.podGroupName", "Invalid value: null: must specify one of: `podGroupName`")
        for key, check in children:
            v = ref.get(key)
            if key == "podGroupReplicaKey" and not v:
                continue
            if v is None:
                v = ""
            if not isinstance(v, str):
                _wrong_type(f"{path}.{key}", "a string", v)
            check(v, f"{path}.{key}")


BY_KIND = {"Workload": validate_workload, "PodGroup": validate_pod_group}
