"""What the API server would have done to the case's objects (CASE_FORMAT.md, "What the API
server would have done"): defaulting and priority admission, and nothing more."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Dict, List, Mapping, Optional

from ..api.fields import KIND_VERSIONS, NAMESPACED_CORE_KINDS
from ..api.object_validation import SYSTEM_PRIORITY_CLASSES, ObjectInvalid, validate_object
from ..api.workload import check_priority, drop_disabled_fields, drop_disabled_pod_fields
from ..api.pod_resources import (aggregate_container_requests, is_hugepage_resource_name,
                                 is_overcommit_allowed as overcommit_allowed,
                                 is_supported_pod_level_resource)
from ..errors import CaseError
from ..framework.custom_resources import CustomResource
from ..versions import DEFAULT as DEFAULT_FEATURES, Features
from . import dra_fields

_EPOCH = "2026-01-01T00:00:00Z"


def system_priority_classes() -> Dict[str, Dict[str, Any]]:
    """The PriorityClasses every API server creates at startup (schedulingapiv1.SystemPriorityClasses,
    created by the AddSystemPriorityClasses post-start hook), as stored: v1 defaulting gives them
    preemptionPolicy PreemptLowerPriority."""
    return {name: {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                   "metadata": {"name": name}, "value": value, "globalDefault": False,
                   "preemptionPolicy": "PreemptLowerPriority"}
            for name, value in SYSTEM_PRIORITY_CLASSES.items()}


def format_quantity(q: Fraction) -> str:
    """A quantity as a manifest string ("2", "500m", "250n")."""
    for scale, suffix in ((1, ""), (1000, "m"), (10 ** 9, "n")):
        if (q * scale).denominator == 1:
            return f"{int(q * scale)}{suffix}"
    return f"{int(-(-q * 10 ** 9 // 1))}n"


class ApiServerDefaults:
    def __init__(self, cluster_objects: List[Dict[str, Any]], path: str, features: Optional[Features] = None,
                 custom_resources: Optional[Mapping[str, CustomResource]] = None):
        self.path = path
        # kind -> CustomResource: the CRDs the plugin packages declared (served at one version)
        self.custom_resources: Dict[str, CustomResource] = dict(custom_resources or {})
        # the version whose API server defaults and validates the objects
        self.features: Features = features if features is not None else DEFAULT_FEATURES
        self.priority_classes: Dict[str, Dict[str, Any]] = system_priority_classes()
        self.global_default: Optional[Dict[str, Any]] = None
        for obj in cluster_objects:
            if obj.get("kind") == "PriorityClass":
                self.add_priority_class(obj)
        self._uid = 0

    def add_priority_class(self, obj: Dict[str, Any]) -> None:
        """A PriorityClass the priority admission of later pods sees."""
        md = obj.get("metadata")
        name = md.get("name", "") if isinstance(md, dict) else None
        if not isinstance(name, str) or not _is_int(obj.get("value", 0)):
            return  # refused by check_object when the class itself is defaulted
        if name in SYSTEM_PRIORITY_CLASSES and (
                obj.get("value") != SYSTEM_PRIORITY_CLASSES[name] or obj.get("globalDefault")
                or (obj.get("preemptionPolicy") or "PreemptLowerPriority") != "PreemptLowerPriority"):
            return  # not the built-in one: refused when the class itself is defaulted
        self.priority_classes[name] = obj
        if obj.get("globalDefault"):
            if self.global_default is None or int(obj.get("value", 0)) < int(self.global_default.get("value", 0)):
                self.global_default = obj

    def check_builtin(self, obj: Dict[str, Any], key: str) -> None:
        """A case may list a built-in PriorityClass (a dump of `kubectl get priorityclasses`
        does): it is then the object the API server created at startup. ValidatePriorityClass
        already refuses another value or globalDefault; its preemptionPolicy is immutable
        (ValidatePriorityClassUpdate) and the class cannot be deleted and created again (the
        registry forbids deleting it), so a different one is refused too."""
        name = (obj.get("metadata") or {}).get("name")
        if name not in SYSTEM_PRIORITY_CLASSES:
            return
        got = obj.get("preemptionPolicy") or "PreemptLowerPriority"
        if got != "PreemptLowerPriority":
            raise CaseError(f'Invalid value: "{got}": field is immutable (the built-in PriorityClass '
                            f'{name} exists from the API server\'s start with preemptionPolicy '
                            f'PreemptLowerPriority)', file=self.path, key=f"{key}.preemptionPolicy")

    def admit_priority_class(self, obj: Dict[str, Any], key: str, existing: Optional[Dict[str, Any]]) -> None:
        """The Priority admission plugin's validatePriorityClass on a create (`existing` None)
        or an update: a second globalDefault class is forbidden."""
        if not obj.get("globalDefault") or self.global_default is None:
            return
        dname = (self.global_default.get("metadata") or {}).get("name")
        name = (obj.get("metadata") or {}).get("name")
        if existing is None or dname != name:
            raise CaseError(f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: PriorityClass '
                            f'{dname} is already marked as default. Only one default can exist',
                            file=self.path, key=f"{key}.globalDefault")

    def forget_priority_class(self, name: str) -> None:
        """A deleted PriorityClass (never a built-in one: the registry forbids that)."""
        obj = self.priority_classes.pop(name, None)
        if obj is not None and obj is self.global_default:
            self.global_default = None
            for pc in self.priority_classes.values():
                if pc.get("globalDefault") and (self.global_default is None or int(pc.get("value", 0))
                                                < int(self.global_default.get("value", 0))):
                    self.global_default = pc

    def default_object(self, obj: Dict[str, Any], key: str, index: int,
                       old: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        if obj.get("kind") in ("PodGroup", "Workload") and builtin_workload_kind(obj):
            drop_disabled_group_fields(obj, old, self.features)  # PrepareForCreate / PrepareForUpdate
        check_object(obj, key, self.path, self.features)
        if obj.get("kind") == "PriorityClass":
            self.check_builtin(obj, key)
        dra_fields.apply(obj, self.features, self.path, key)
        md = obj.setdefault("metadata", {})
        if not md.get("name"):
            raise CaseError("metadata.name is required", file=self.path, key=f"{key}.metadata.name")
        self._uid += 1  # every object counts; the uid is written where none is given
        if "uid" not in md:
            md["uid"] = f"00000000-0000-0000-0000-{self._uid:012d}"
        md.setdefault("creationTimestamp", _EPOCH)
        md["x-creationIndex"] = index
        kind = obj.get("kind")
        if kind == "Pod":
            self._default_pod(obj, key)
            self._drop_disabled_pod_status_fields(obj, old)
            drop_disabled_workload_fields(obj.setdefault("spec", {}), (old or {}).get("spec"), self.features)
        elif kind == "Node":
            self._default_node(obj)
            self._drop_disabled_node_fields(obj)
        elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
            self._default_claim(obj)
        elif kind == "PodGroup" and builtin_workload_kind(obj) and self.features.get("WorkloadAwarePreemption", False):
            self._default_pod_group(obj, key)
        cr = self.custom_resources.get(kind)
        if cr is not None and not builtin_workload_kind(obj):
            self._admit_custom(obj, cr, key)
        if kind in _NAMESPACED and not md.get("namespace"):
            md["namespace"] = "default"
        return obj

    def namespaced(self, kind: str) -> bool:
        """Is the kind namespaced (a built-in kind, or a declared custom resource)?"""
        cr = self.custom_resources.get(kind)
        return cr.namespaced if cr is not None else kind in _NAMESPACED

    def reference_namespace(self, kind: str, written: Optional[str]) -> str:
        """The namespace a step's update or delete names, as the object was stored: a namespaced
        kind's, else "default"; a cluster-scoped kind's none; a kind no package declares and the
        harness does not serve, what the step wrote (the store kept it as written)."""
        if self.custom_resources.get(kind) is None and kind not in KIND_VERSIONS and kind not in _NAMESPACED:
            return written or ""
        return (written or "default") if self.namespaced(kind) else ""

    def _admit_custom(self, obj: Dict[str, Any], cr: CustomResource, key: str) -> None:
        """A custom resource's object: served only at its CRD's group/version (the RESTMapper's
        "no matches for kind" otherwise); a namespaced one lands in "default" when it names no
        namespace, a cluster-scoped one loses any namespace (rest.BeforeCreate)."""
        api = obj.get("apiVersion")
        if api != cr.api_version:
            raise CaseError(f'no matches for kind "{cr.kind}" in version "{api}" (the custom resource '
                            f'is served at {cr.api_version})', file=self.path, key=f"{key}.apiVersion")
        md = obj["metadata"]
        if cr.namespaced:
            if not md.get("namespace"):
                md["namespace"] = "default"
        else:
            md.pop("namespace", None)

    def _default_pod_group(self, obj: Dict[str, Any], key: str) -> None:
        """WorkloadAwarePreemption on: SetObjectDefaults_PodGroup (disruptionMode "Pod") and the
        Priority admission plugin's admitPodGroup (establishPriority: the class named, else the
        global default class, else "" and 0; a spec.priority differing from it is Forbidden)."""
        spec = obj.setdefault("spec", {})
        if spec.get("disruptionMode") is None:
            spec["disruptionMode"] = "Pod"
        pc_name = spec.get("priorityClassName")
        if pc_name:
            pc = self.priority_classes.get(pc_name)
            if pc is None:  # resolvePriorityClass: admission.NewForbidden
                name = (obj.get("metadata") or {}).get("name", "")
                raise CaseError(f'podgroups.scheduling.k8s.io "{name}" is forbidden: no PriorityClass with name '
                                f'{pc_name} was found', file=self.path, key=f"{key}.spec.priorityClassName")
            value = int(pc.get("value", 0))
        elif self.global_default is not None:
            pc_name = (self.global_default.get("metadata") or {}).get("name", "")
            value = int(self.global_default.get("value", 0))
        else:
            pc_name, value = "", 0
        if spec.get("priority") is not None and spec.get("priority") != value:
            name = (obj.get("metadata") or {}).get("name", "")
            raise CaseError(f'podgroups.scheduling.k8s.io "{name}" is forbidden: '
                            f"priority set in the pod group ({spec.get('priority')}) must match the priority "
                            f"computed ({value}) based on the priority class set in the spec", file=self.path,
                            key=f"{key}.spec.priority")
        spec["priority"] = value
        if pc_name:
            spec["priorityClassName"] = pc_name
        # validation runs after admission: a class above HighestUserDefinablePriority (the
        # system-* classes) gives a priority Validate_PodGroupSpec refuses
        try:
            check_priority(value, "spec.priority")
        except ObjectInvalid as e:
            raise CaseError(e.message, file=self.path, key=f"{key}.spec.priority") from None

    def _default_pod(self, pod: Dict[str, Any], key: str) -> None:
        md = pod["metadata"]
        if not md.get("namespace"):
            md["namespace"] = "default"
        spec = pod.setdefault("spec", {})
        if not spec.get("schedulerName"):
            spec["schedulerName"] = "default-scheduler"
        for group in ("initContainers", "containers", "ephemeralContainers"):
            for c in spec.get(group) or []:
                res = c.get("resources")
                if not res or not res.get("limits"):
                    continue
                got = res.get("requests")
                if type(got) is dict and type(res["limits"]) is dict and got.keys() >= res["limits"].keys():
                    continue  # (nothing to add: a replica's shared container, defaulted already)
                reqs = dict(res.get("requests") or {})
                for k, v in res["limits"].items():
                    reqs.setdefault(k, v)
                res["requests"] = reqs
        if self.features.enabled("PodLevelResources"):
            _default_pod_level_resources(spec)
        pc_name = spec.get("priorityClassName")
        pc = None
        if pc_name:
            pc = self.priority_classes.get(pc_name)
            if pc is None and not _admitted(spec):
                raise CaseError(f'no PriorityClass with name {pc_name} was found', file=self.path,
                                key=f"{key}.spec.priorityClassName")
        elif self.global_default is not None:
            pc = self.global_default
            spec["priorityClassName"] = (pc.get("metadata") or {}).get("name", "")
        if spec.get("priority") is None:
            spec["priority"] = int(pc.get("value", 0)) if pc is not None else 0
        if not spec.get("preemptionPolicy"):
            spec["preemptionPolicy"] = (pc or {}).get("preemptionPolicy") or "PreemptLowerPriority"

    @staticmethod
    def _default_node(node: Dict[str, Any]) -> None:
        st = node.get("status") or {}  # `status: null` is an omitted status
        node["status"] = st
        if not st.get("allocatable"):
            st["allocatable"] = dict(st.get("capacity") or {})
        st["allocatable"].setdefault("pods", "110")

    def _drop_disabled_node_fields(self, node: Dict[str, Any]) -> None:
        """dropDisabledFields (registry/core/node/strategy.go): status.declaredFeatures only with
        the NodeDeclaredFeatures gate on (v1.35 alpha, v1.36 beta on); v1.34 has no such field."""
        if not self.features.get("NodeDeclaredFeatures", False):
            node["status"].pop("declaredFeatures", None)

    def _drop_disabled_pod_status_fields(self, pod: Dict[str, Any], old: Optional[Dict[str, Any]]) -> None:
        """dropDisabledPodStatusFields (pkg/api/pod/util.go): the pod-level ``status.resources``
        and ``status.allocatedResources`` only with InPlacePodLevelResourcesVerticalScaling on
        (alpha off in v1.35, beta on in v1.36), or when the stored status already has one
        (podLevelStatusResourcesInUse); v1.34 has no such fields."""
        st = pod.get("status")
        if not isinstance(st, dict) or self.features.get("InPlacePodLevelResourcesVerticalScaling", False):
            return
        old_st = (old or {}).get("status") or {}
        if old_st.get("resources") is not None or old_st.get("allocatedResources") is not None:
            return
        st.pop("resources", None)
        st.pop("allocatedResources", None)

    @staticmethod
    def _default_claim(obj: Dict[str, Any]) -> None:
        spec = obj.get("spec") or {}
        if obj.get("kind") == "ResourceClaimTemplate":
            spec = spec.get("spec") or {}
        for req in ((spec.get("devices") or {}).get("requests") or []):
            entries = []
            if req.get("exactly") is not None:
                entries.append(req["exactly"])
            entries.extend(req.get("firstAvailable") or [])
            for e in entries:
                e.setdefault("allocationMode", "ExactCount")
                if e["allocationMode"] == "ExactCount":
                    e.setdefault("count", 1)


def _default_pod_level_resources(spec: Dict[str, Any]) -> None:
    """defaultHugePagePodLimits then defaultPodRequests (pkg/apis/core/v1/defaults.go, with
    PodLevelResources, beta and on in v1.34), after the containers' requests were defaulted:
    a pod-level request missing for a supported resource comes from the containers' aggregated
    requests (overcommittable resources), else from the pod-level limit."""
    res = spec.get("resources")
    if not isinstance(res, dict) or not isinstance(res.get("limits") or {}, dict) \
            or not isinstance(res.get("requests") or {}, dict):
        return
    # the pod's own copy: equal spec.resources of pods are one value (harness/sharing.py), and
    # what is written here depends on the pod's containers too
    res = spec["resources"] = dict(res)
    limits = dict(res.get("limits") or {})
    requests = dict(res.get("requests") or {})
    if limits or requests:  # defaultHugePagePodLimits
        ctr_limits: Dict[str, Fraction] = aggregate_container_requests(_limits_as_requests(spec))
        for k, v in ctr_limits.items():
            if is_hugepage_resource_name(k) and k not in requests and k not in limits:
                limits[k] = format_quantity(v)
        if limits:
            res["limits"] = limits
    if not limits:
        return
    for k, v in aggregate_container_requests(spec).items():
        if k not in requests and is_supported_pod_level_resource(k) and overcommit_allowed(k):
            requests[k] = format_quantity(v)
    for k, v in limits.items():
        if k not in requests and is_supported_pod_level_resource(k):
            requests[k] = v
    if requests:
        res["requests"] = requests


def _limits_as_requests(spec: Dict[str, Any]) -> Dict[str, Any]:
    """The spec with each container's limits in place of its requests (AggregateContainerLimits
    is AggregateContainerRequests over limits)."""
    def swap(c: Any) -> Any:
        if not isinstance(c, dict):
            return c
        return {**c, "resources": {"requests": (c.get("resources") or {}).get("limits") or {}}}
    return {"containers": [swap(c) for c in spec.get("containers") or []],
            "initContainers": [swap(c) for c in spec.get("initContainers") or []]}


def _admitted(spec: Dict[str, Any]) -> bool:
    """Does the pod carry the priority the Priority admission plugin set when a cluster admitted
    it (a pod of a dump: `kubectl get pods -o yaml` has spec.priority, not the PriorityClasses)?
    Its priority is then used as is and its class need not be in the case; a pod without one is
    admitted here, as the API server admits a pod the case creates (steps: check_references)."""
    return _is_int(spec.get("priority"))


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def builtin_workload_kind(obj: Dict[str, Any]) -> bool:
    """A Workload or PodGroup of the built-in scheduling.k8s.io group (a plugin package may
    declare a custom resource of the same kind in its own group, as the coscheduling example's
    scheduling.x-k8s.io PodGroup)."""
    return obj.get("kind") in ("Workload", "PodGroup") and \
        str(obj.get("apiVersion") or "").startswith("scheduling.k8s.io/")


# dropDisabledPodGroupFields / dropDisabledWorkloadFields, dropDisabledWorkloadRef /
# dropDisabledSchedulingGroup (harness/api/workload.py)
drop_disabled_group_fields = drop_disabled_fields
drop_disabled_workload_fields = drop_disabled_pod_fields


def check_object(obj: Any, key: str, path: str, features: Features = DEFAULT_FEATURES) -> None:
    """The API server's validation of one manifest (api.object_validation) as a CaseError."""
    err = validate_object(obj, features)
    if err is not None:
        raise CaseError(err[1], file=path, key=f"{key}.{err[0]}" if err[0] else key)


NAMESPACED_KINDS = _NAMESPACED = NAMESPACED_CORE_KINDS  # (harness/api/fields.py)
