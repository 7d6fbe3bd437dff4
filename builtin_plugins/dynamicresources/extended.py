"""Extended resources backed by DRA (DRAExtendedResource): a pod requesting an extended resource
that a DeviceClass maps (its ``spec.extendedResourceName``, or the implicit
``deviceclass.resource.kubernetes.io/<class>``) gets its devices from DRA on nodes that do not
advertise the resource in their allocatable; nodes that do still use the device plugin path.

Mirrors dynamicresources/extendeddynamicresources.go (v1.35 on; in dynamicresources.go and
dynamicresources/extended/util.go in v1.34) and dynamic-resource-allocation's
deviceclass/extendedresourcecache (the DRA manager's DeviceClassResolver, v1.35 on).

The flow, per extension point of DynamicResources:

- PreFilter (:func:`pre_filter_extended_resources`): for a pod requesting a mapped extended
  resource, the claim a prior cycle created for it (annotation
  ``resource.kubernetes.io/extended-resource-claim: "true"``, owned by the pod), else an
  in-memory claim named ``<extended-resources>`` with no requests, last in the pod's claims.
- Filter (:func:`filter_extended_resources`): a claim from a prior cycle that has requests is
  Unschedulable ("cannot schedule extended resource claim", PostFilter deletes it); per node, the
  resources the node does not provide through its allocatable become the claim's requests
  (``container-<i>-request-<j>``), allocated with the pod's other claims.
- Reserve: the node's claim is the allocation in flight (under the in-memory claim's uid).
- PreBind (:func:`create_claim_in_api`, :func:`patch_pod_extended_resource_claim_status`):
  the claim is created (generateName ``<pod>-extended-resources-``), allocated and reserved as
  the other claims, and the pod's ``status.extendedResourceClaimStatus`` names it and maps each
  container's resource to its request.
- Unreserve (:func:`unreserve_extended_resource_claim`): the in-flight allocation dropped, and a
  claim already created deleted (its finalizer removed first).
"""

from __future__ import annotations

import copy
import itertools
import weakref
from fractions import Fraction
from typing import Any, Dict, List, Mapping, Optional, Tuple

from harness.api.objects import KubeObject, make_object
from harness.api.pod_resources import pod_requests
from harness.api.quantity import parse_quantity
from harness.api.validation import is_extended_resource_name
from harness.framework import Resource, Status

SPECIAL_CLAIM_IN_MEM_NAME = "<extended-resources>"  # specialClaimInMemName
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
RESOURCE_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"  # resourceapi.ResourceDeviceClassPrefix
# v1.35 on: the class cache (DeviceClassResolver), implicit names, zero allocatable counted as
# absent, init-container request reuse, mappings computed in Filter (CHANGES entry)
CHANGE = "DRAExtendedResourceClassCache"
_INT64_MAX = 2 ** 63 - 1


def enabled(gates) -> bool:
    return bool(gates.enabled("DRAExtendedResource"))


def is_dra_extended_resource_name(name: str, gates) -> bool:
    """schedutil.IsDRAExtendedResourceName (v1.35 on: an extended resource name or the implicit
    deviceclass.resource.kubernetes.io/ prefix); v1.34: v1helper.IsExtendedResourceName only."""
    if "/" not in name:
        return False
    if gates.has(CHANGE) and name.startswith(RESOURCE_DEVICE_CLASS_PREFIX):
        return True
    return is_extended_resource_name(name)


# ---- the device class for an extended resource name ------------------------------------------
def _creation_nanos(cls: KubeObject) -> int:
    """metav1.Time.UnixNano of the class's creationTimestamp (the zero time when unset)."""
    from harness.api.metatime import parse_time
    try:
        t = parse_time((cls.raw.get("metadata") or {}).get("creationTimestamp"))
    except ValueError:
        t = None
    return -(2 ** 62) if t is None else int(round(t * 1e9))


class ExtendedResourceCache:
    """extendedresourcecache.ExtendedResourceCache (v1.35 on): extended resource name -> device
    class, kept up to date from DeviceClass events. Each class maps its implicit name; a class
    with ``extendedResourceName`` maps that name too, and where two classes name the same one the
    newer class wins (equal creation times: the lower name). A deleted class takes its names with
    it (the other class naming the same resource is not put back), as upstream."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.resource_name_to_class: Dict[str, KubeObject] = {}
        for c in cluster.list("DeviceClass"):
            self.on_add(c)
        cluster.subscribe(self._on_event)

    def _on_event(self, kind, old, new) -> None:
        if kind != "DeviceClass":
            return
        if new is None:
            self.on_delete(old)
        elif old is None:
            self.on_add(new)
        else:
            self.on_update(old, new)

    def get_device_class(self, resource_name: str) -> Optional[Mapping[str, Any]]:
        """GetDeviceClass: the class's manifest, or None."""
        c = self.resource_name_to_class.get(resource_name)
        return c.raw if c is not None else None

    def on_add(self, cls: KubeObject) -> None:
        self._update(cls, None)

    def on_update(self, old: KubeObject, new: KubeObject) -> None:
        self._update(new, old)

    def on_delete(self, cls: KubeObject) -> None:
        """removeResourceName2class."""
        self.resource_name_to_class.pop(RESOURCE_DEVICE_CLASS_PREFIX + cls.name, None)
        ern = cls.spec.get("extendedResourceName")
        if ern is not None:
            self.resource_name_to_class.pop(ern, None)

    def _update(self, new: KubeObject, old: Optional[KubeObject]) -> None:
        """updateResourceName2class."""
        ern = new.spec.get("extendedResourceName")
        same = self.resource_name_to_class.get(ern) if ern is not None else None
        if same is not None:
            a, b = _creation_nanos(new), _creation_nanos(same)
            if a < b:
                return  # the new class is older: keep the more recent one
            if a == b and new.name >= same.name:
                return  # equal: the lower name
        if old is not None:
            self.resource_name_to_class.pop(RESOURCE_DEVICE_CLASS_PREFIX + old.name, None)
            old_ern = old.spec.get("extendedResourceName")
            if old_ern is not None:
                self.resource_name_to_class.pop(old_ern, None)
        if ern is not None:
            self.resource_name_to_class[ern] = new
        self.resource_name_to_class[RESOURCE_DEVICE_CLASS_PREFIX + new.name] = new


class DeviceClassMapping:
    """extended.DeviceClassMapping (v1.34): listed from the classes for each pod, each class's
    implicit name when it has no extendedResourceName, else that name (a later class in the list
    overrides an earlier one naming the same resource; upstream lists in informer order, the
    harness by name)."""

    def __init__(self, cluster):
        self.mapping: Dict[str, Mapping[str, Any]] = {}
        for c in cluster.list("DeviceClass"):
            ern = c.spec.get("extendedResourceName")
            self.mapping[ern if ern is not None else RESOURCE_DEVICE_CLASS_PREFIX + c.name] = c.raw

    def get_device_class(self, resource_name: str) -> Optional[Mapping[str, Any]]:
        return self.mapping.get(resource_name)

    def __contains__(self, resource_name: str) -> bool:
        return resource_name in self.mapping


# the cache of a cluster is an attribute of the cluster: in a WeakKeyDictionary its value (which
# holds the cluster) kept the key alive, and every run's cluster, objects and scheduler with it
_CACHE_ATTR = "_extended_resource_cache"


def class_resolver(cluster, gates):
    """The DRA manager's DeviceClassResolver (v1.35 on: one cache per scheduler, shared by
    NodeResourcesFit and DynamicResources); v1.34: the mapping listed now."""
    if not gates.has(CHANGE):
        return DeviceClassMapping(cluster)
    c = getattr(cluster, _CACHE_ATTR, None)
    if c is None:
        c = ExtendedResourceCache(cluster)
        setattr(cluster, _CACHE_ATTR, c)
    return c


def class_name(cls: Optional[Mapping[str, Any]]) -> str:
    return ((cls or {}).get("metadata") or {}).get("name", "")


# ---- PreFilter ---------------------------------------------------------------------------------
def pod_requests_of(pod) -> Dict[str, Fraction]:
    """resourcehelper.PodRequests(pod, PodResourcesOptions{}), kept with the pod."""
    return pod.resource_memo("dra.extended.requests", lambda p: pod_requests(p.spec))


def has_device_class_mapped_extended_resource(reqs: Mapping[str, Fraction], resolver, gates) -> bool:
    """hasDeviceClassMappedExtendedResource."""
    for name, q in reqs.items():
        if q == 0:
            continue
        if is_dra_extended_resource_name(name, gates) and resolver.get_device_class(name) is not None:
            return True
    return False


def find_extended_resource_claim(pod, claims: List[KubeObject]) -> Optional[KubeObject]:
    """findExtendedResourceClaim: the claim annotated as the pod's extended resource claim and
    controlled by the pod."""
    for c in claims:
        md = c.raw.get("metadata") or {}
        if (md.get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            continue
        for ref in md.get("ownerReferences") or []:
            if ref.get("name") == pod.name and ref.get("controller") and ref.get("uid") == pod.uid:
                return c
    return None


_TEMP_UIDS = itertools.count(1)


def special_claim(pod, gates) -> KubeObject:
    """The in-memory claim preFilterExtendedResources makes: no requests, a temporary uid (for
    SignalClaimPendingAllocation), generateName ``<pod>-extended-resources-``, owned by the pod
    (v1.34 also sets blockOwnerDeletion), annotated as the extended resource claim."""
    owner: Dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                             "controller": True}
    if not gates.has(CHANGE):
        owner["blockOwnerDeletion"] = True
    return make_object({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"namespace": pod.namespace, "name": SPECIAL_CLAIM_IN_MEM_NAME,
                     "uid": f"extended-resources-{next(_TEMP_UIDS)}",
                     "generateName": pod.name + "-extended-resources-",
                     "ownerReferences": [owner],
                     "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}},
        "spec": {}})


class ExtendedState:
    """draExtendedResource plus the claim store's view of the special claim (stateData)."""

    __slots__ = ("pod_scalar_resources", "resolver", "initial_uid", "node_claims", "by_node")

    def __init__(self, scalars: Dict[str, int], resolver, initial_uid: str):
        self.pod_scalar_resources = scalars
        self.resolver = resolver
        self.initial_uid = initial_uid  # claimStore.initialExtendedResourceClaimUID
        # the node-specific claims Filter built, one per distinct set of resources (so the
        # allocator's per-claim caches see one object per content)
        self.node_claims: Dict[Tuple, Tuple[Dict[str, Any], Optional[List[Dict[str, str]]]]] = {}
        # nodeAllocation.extendedResourceClaim and containerResourceRequestMappings, per node
        self.by_node: Dict[str, Tuple[Optional[Dict[str, Any]], Optional[List[Dict[str, str]]]]] = {}


def pre_filter_extended_resources(pl, pod) -> Tuple[Optional[KubeObject], Optional[ExtendedState], Optional[Status]]:
    """preFilterExtendedResources: (the special claim, its state, status); all None when the
    gate is off or the pod requests no extended resource a device class maps."""
    gates = pl.gates
    if not enabled(gates):
        return None, None, None
    resolver = class_resolver(pl.cluster, gates)
    reqs = pod_requests_of(pod)
    if not has_device_class_mapped_extended_resource(reqs, resolver, gates):
        return None, None, None
    scalars = Resource.from_list(reqs).scalar_resources
    claim = find_extended_resource_claim(pod, pl.cluster.list("ResourceClaim"))
    if claim is None:
        claim = special_claim(pod, gates)
    return claim, ExtendedState(scalars, resolver, claim.uid), None


# ---- Filter ------------------------------------------------------------------------------------
def _requests(claim_raw: Mapping[str, Any]) -> List[Any]:
    return ((claim_raw.get("spec") or {}).get("devices") or {}).get("requests") or []


def has_requests(claim: KubeObject) -> bool:
    """claim.Spec.Devices.Requests != nil (an empty list does not survive the API server)."""
    return bool(_requests(claim.raw))


def filter_extended_resources(ext_claim: Optional[KubeObject], ext: Optional[ExtendedState], no_user_claim: bool,
                              pod, node_info, gates):
    """filterExtendedResources: (the node's claim or None, its request mappings, status)."""
    if ext_claim is None:
        return None, None, None
    if has_requests(ext_claim):
        # from a prior cycle: PostFilter deletes it and the pod tries anew
        return None, None, Status.unresolvable("cannot schedule extended resource claim")
    v135 = gates.has(CHANGE)
    alloc_s = node_info.allocatable.scalar_resources
    resources: Dict[str, int] = {}
    has_extended = False
    for name in sorted(ext.pod_scalar_resources):
        q = ext.pod_scalar_resources[name]
        if not is_dra_extended_resource_name(name, gates) or q == 0:
            continue
        ok_scalar = name in alloc_s
        if v135:
            if ext.resolver.get_device_class(name) is not None and alloc_s.get(name, 0) == 0:
                resources[name] = q  # the node provides it through DRA
                has_extended = True
            elif not ok_scalar:
                return None, None, Status.unresolvable("cannot fit resource")
        elif name in ext.resolver:
            if ok_scalar:
                resources[name] = 0  # the device plugin provides it
            else:
                resources[name] = q
                has_extended = True
        elif not ok_scalar:
            return None, None, Status.unresolvable("cannot fit resource")
    if no_user_claim and not has_extended:
        return None, None, None  # all through device plugins: NodeResourcesFit checked them
    if v135 and ext_claim.status.get("allocation") is not None:
        return None, None, None
    key = tuple(sorted(resources.items()))
    known = ext.node_claims.get(key)
    if known is None:
        raw = copy.deepcopy(ext_claim.raw)
        if v135:
            reqs, mappings = create_requests_and_mappings(pod, resources, ext.resolver)
        else:
            reqs, mappings = create_device_requests(pod, resources, ext.resolver), None
        devices = raw.setdefault("spec", {}).setdefault("devices", {})
        if reqs:
            devices["requests"] = reqs
        else:
            devices.pop("requests", None)
        known = ext.node_claims[key] = (raw, mappings)
    if not v135 and ext_claim.status.get("allocation") is not None:
        return None, None, None
    return known[0], known[1], None


def _as_int64(value: Any) -> Optional[int]:
    """resource.Quantity.AsInt64: the value when it is an integer that fits, else None."""
    try:
        q = parse_quantity(value)
    except Exception:
        return None
    if q.denominator != 1 or abs(q.numerator) > _INT64_MAX:
        return None
    return int(q)


def _containers(pod) -> List[Mapping[str, Any]]:
    return list(pod.init_containers) + list(pod.containers)


def _request_index(creqs: Mapping[str, Any], name: str) -> int:
    """The resource's index among the container's requests, sorted by name."""
    keys = sorted(creqs)
    return keys.index(name) if name in keys else 0


def partition_container_indices(containers: List[Mapping[str, Any]], num_init: int) -> Tuple[List[int], List[int]]:
    """partitionContainerIndices: (long-lived: sidecars and regular containers, short-lived:
    the other init containers)."""
    long_lived, short_lived = [], []
    for i, c in enumerate(containers):
        if i < num_init and c.get("restartPolicy") != "Always":
            short_lived.append(i)
        else:
            long_lived.append(i)
    return long_lived, short_lived


def create_resource_request_and_mappings(index: int, container: Mapping[str, Any], resource: str, cls: str,
                                         reusable: List[Optional[Dict[str, Any]]]):
    """createResourceRequestAndMappings: the container's request for the resource (None when the
    reusable requests of later long-lived containers already cover it) and its mappings."""
    mappings: List[Dict[str, str]] = []
    creqs = (container.get("resources") or {}).get("requests")
    if creqs is None or resource not in creqs:
        return None, []
    crq = _as_int64(creqs[resource])
    if crq is None or crq == 0:
        return None, []
    total = 0
    cname = container.get("name", "")
    for r in reusable:
        if r is not None:
            total += r["exactly"]["count"]
            mappings.append({"containerName": cname, "resourceName": resource, "requestName": r["name"]})
            if total >= crq:
                return None, mappings
    name = f"container-{index}-request-{_request_index(creqs, resource)}"
    req = {"name": name, "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": crq - total}}
    mappings.append({"containerName": cname, "resourceName": resource, "requestName": name})
    return req, mappings


def create_requests_and_mappings(pod, resources: Mapping[str, int], resolver):
    """createRequestsAndMappings (v1.35 on): per resource (by name), one request per long-lived
    container asking for it; the short-lived init containers first reuse the requests of the
    long-lived containers after them, and the largest of what they still need is one request
    they all map to. Requests sorted by name."""
    containers = _containers(pod)
    long_lived, short_lived = partition_container_indices(containers, len(pod.init_containers))
    device_requests: List[Dict[str, Any]] = []
    mappings: List[Dict[str, str]] = []
    for resource in sorted(resources):
        cls = resolver.get_device_class(resource)
        if cls is None:
            continue
        cname = class_name(cls)
        long_requests: List[Optional[Dict[str, Any]]] = [None] * len(containers)
        long_mappings: List[Dict[str, str]] = []
        for i in long_lived:
            req, m = create_resource_request_and_mappings(i, containers[i], resource, cname, [])
            long_requests[i] = req
            long_mappings.extend(m)
        max_short: Optional[Dict[str, Any]] = None
        short_names = set()
        short_mappings: List[Dict[str, str]] = []
        for i in short_lived:
            req, m = create_resource_request_and_mappings(i, containers[i], resource, cname, long_requests[i:])
            if req is not None:
                short_names.add(req["name"])
                if max_short is None or max_short["exactly"]["count"] < req["exactly"]["count"]:
                    max_short = req
            short_mappings.extend(m)
        if max_short is not None and len(short_names) > 1:
            short_names.discard(max_short["name"])
            for m in short_mappings:
                if m["requestName"] in short_names:
                    m["requestName"] = max_short["name"]
        if max_short is not None:
            device_requests.append(max_short)
        device_requests.extend(r for r in long_requests if r is not None)
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    device_requests.sort(key=lambda r: r["name"])
    return device_requests, mappings


def create_device_requests(pod, resources: Mapping[str, int], mapping: DeviceClassMapping) -> List[Dict[str, Any]]:
    """createDeviceRequests (v1.34): per resource (Go ranges over a map; the harness goes by
    name), per container requesting it (init containers first), a request for the container's
    whole quantity, also for resources the node's device plugin provides when some other one
    needs DRA."""
    out: List[Dict[str, Any]] = []
    containers = _containers(pod)
    for resource in sorted(resources):
        for i, c in enumerate(containers):
            creqs = (c.get("resources") or {}).get("requests")
            if creqs is None or resource not in creqs:
                continue
            crq = _as_int64(creqs[resource])
            if crq is None or crq == 0:
                continue
            cname = class_name(mapping.get_device_class(resource))
            if not cname:
                continue
            out.append({"name": f"container-{i}-request-{_request_index(creqs, resource)}",
                        "exactly": {"deviceClassName": cname, "allocationMode": "ExactCount", "count": crq}})
    return out


def create_request_mappings(claim: KubeObject, pod) -> List[Dict[str, str]]:
    """createRequestMappings (v1.34, in PreBind): for each container and each of its requests
    (Go ranges over the map; the harness goes by name), the claim's request named after them."""
    names = [r.get("name", "") for r in _requests(claim.raw)]
    out: List[Dict[str, str]] = []
    for i, c in enumerate(_containers(pod)):
        creqs = (c.get("resources") or {}).get("requests") or {}
        for resource in sorted(creqs):
            want = f"container-{i}-request-{_request_index(creqs, resource)}"
            for n in names:
                if n == want:
                    out.append({"containerName": c.get("name", ""), "resourceName": resource, "requestName": n})
    return out


# ---- PreBind -----------------------------------------------------------------------------------
_CREATED: "weakref.WeakKeyDictionary[Any, itertools.count]" = weakref.WeakKeyDictionary()


def create_claim_in_api(pl, pod, node_name: str, ext: ExtendedState) -> KubeObject:
    """createExtendedResourceClaimInAPI: the node's claim without name, uid and allocation,
    created; the API server names it from generateName (5 characters derived from the pod, so a
    case runs the same every time) and gives it a uid."""
    from harness.api.names import generate_name
    from harness.api.metatime import format_time
    from .claims import ClaimError

    found = ext.by_node.get(node_name)
    if found is None or found[0] is None:
        raise ClaimError(f"extended resource claim not found for node {node_name}")
    raw = copy.deepcopy(found[0])
    raw.pop("status", None)
    md = raw["metadata"]
    counter = _CREATED.get(pl.cluster)
    if counter is None:
        counter = _CREATED[pl.cluster] = itertools.count(1)  # per API server: runs repeat
    n = next(counter)
    md["name"] = generate_name(md.get("generateName", ""), f"{pod.namespace}/{pod.name}/{pod.uid}/{n}")
    md["uid"] = f"00000000-0000-0000-eeee-{n:012d}"
    md["creationTimestamp"] = format_time(pl.now())
    return pl.cluster.create(make_object(raw))


def patch_pod_extended_resource_claim_status(pl, pod, claim: KubeObject, node_name: str, ext: ExtendedState) -> None:
    """patchPodExtendedResourceClaimStatus (v1.35 on: the mappings Filter computed; v1.34
    createRequestMappings of the created claim): the pod's status.extendedResourceClaimStatus."""
    from .claims import ClaimError

    if pl.gates.has(CHANGE):
        mappings = (ext.by_node.get(node_name) or (None, None))[1] or []
        if not mappings:
            raise ClaimError(f"nil or empty request mappings, no update of pod {pod.namespace}/{pod.name} "
                             f"ExtendedResourceClaimStatus")
    else:
        mappings = create_request_mappings(claim, pod)
    current = pl.cluster.get("Pod", pod.namespace, pod.name)
    if current is None or current.uid != pod.uid:
        raise ClaimError(f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: "
                         f'pods "{pod.name}" not found')
    status = {"requestMappings": copy.deepcopy(mappings), "resourceClaimName": claim.name}
    problem = _validate_status(status, current, pl.gates)
    if problem is not None:
        raise ClaimError(f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: "
                         f'Pod "{pod.name}" is invalid: {problem}')

    def put(st):
        st["extendedResourceClaimStatus"] = status
    new = current.with_status(put)
    if new.status != current.status:
        pl.cluster.update(new)


def _validate_status(status: Dict[str, Any], pod, gates) -> Optional[str]:
    """The API server's validatePodExtendedResourceClaimStatus on the patched status: its first
    error as "path: message", or None."""
    from harness.api.object_validation import ObjectInvalid
    from harness.api.extended_claim_status import extended_resource_claim_status
    try:
        extended_resource_claim_status(status, pod.spec, gates)
    except ObjectInvalid as e:
        return f"{e.path}: {e.message}"
    return None


# ---- Unreserve / PostFilter ---------------------------------------------------------------------
def delete_claim(pl, claim: KubeObject) -> None:
    """deleteClaim: the delete-protection finalizer removed (an update), then the delete."""
    from .claims import FINALIZER

    latest = pl.cluster.get("ResourceClaim", claim.namespace, claim.name)
    if latest is None:
        return
    fin = (latest.raw.get("metadata") or {}).get("finalizers") or []
    if FINALIZER in fin:
        raw = copy.deepcopy(latest.raw)
        rest = [f for f in fin if f != FINALIZER]
        if rest:
            raw["metadata"]["finalizers"] = rest
        else:
            raw["metadata"].pop("finalizers", None)
        latest = pl.cluster.update(make_object(raw))
    pl.cluster.delete(latest)


def unreserve_extended_resource_claim(pl, ext_claim: Optional[KubeObject], ext: Optional[ExtendedState]) -> None:
    """unreserveExtendedResourceClaim."""
    if ext_claim is None or ext is None:
        return
    pl.claim_tracker().remove_claim_pending_allocation(ext.initial_uid)
    if ext_claim.name == SPECIAL_CLAIM_IN_MEM_NAME:
        return  # only in memory: nothing to delete
    delete_claim(pl, ext_claim)
