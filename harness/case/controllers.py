"""Controllers of kube-controller-manager that the scheduler depends on, acting on the simulated
API server as they would: the resourceclaim controller (pkg/controller/resourceclaim), which
creates a pod's ResourceClaim from the ResourceClaimTemplate it names and records it in the
pod's `status.resourceClaimStatuses`, and releases the claims of deleted pods."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Set, Tuple

from ..api.names import generate_name
from ..api.objects import KubeObject, Pod, make_object

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"  # podResourceClaimAnnotation
_FINALIZER = "resource.kubernetes.io/delete-protection"  # resourceapi.Finalizer


def claim_generate_name(pod_name: str, claim_name: str) -> str:
    """The controller's generateName: `<pod>-<claim name>-`, both parts shortened in proportion
    when longer than 57 characters."""
    name = pod_name + "-" + claim_name + "-"
    max_base = 57
    if len(name) > max_base:
        name = (pod_name[:len(pod_name) * max_base // len(name)] + "-"
                + claim_name[:len(claim_name) * max_base // len(name)])
    return name


class ResourceClaimController:
    """The resourceclaim controller's syncPod for pending pods: for each `resourceClaims` entry
    naming a template, create the claim (owned by the pod) unless the pod's status already names
    one, then patch the pod's `resourceClaimStatuses`. A missing template leaves the pod as it is
    (the controller retries; the scheduler's PreEnqueue keeps the pod waiting)."""

    def __init__(self, cluster, uid_source=None):
        self.cluster = cluster
        self._uid = 0
        # the controller's claim informer indexes: pod uid -> keys of the claims it owns or is
        # reserved for (upstream's podResourceClaimIndex and the reservedFor lookups)
        self._by_pod: Dict[str, Set[Tuple[str, str]]] = {}

    def start(self) -> None:
        for c in self.cluster.list("ResourceClaim"):
            self._index(c, add=True)
        for pod in self.cluster.list("Pod"):
            self.sync_pod(pod)
        self.cluster.subscribe(self._on_event)

    @staticmethod
    def _pod_uids(claim: KubeObject) -> Set[str]:
        md = claim.raw.get("metadata") or {}
        uids = {r.get("uid") for r in md.get("ownerReferences") or [] if r.get("controller")}
        uids |= {r.get("uid") for r in claim.status.get("reservedFor") or []}
        return uids

    def _index(self, claim: KubeObject, add: bool) -> None:
        key = (claim.namespace, claim.name)
        for uid in self._pod_uids(claim):
            if add:
                self._by_pod.setdefault(uid, set()).add(key)
            else:
                keys = self._by_pod.get(uid)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._by_pod[uid]

    def _claims_of(self, pod: Pod) -> List[KubeObject]:
        """The claims of the pod's namespace that it owns or that are reserved for it, by name."""
        out = []
        for ns, name in sorted(self._by_pod.get(pod.uid, ())):
            c = self.cluster.get("ResourceClaim", ns, name)
            if c is not None and ns == pod.namespace:
                out.append(c)
        return out

    def _on_event(self, kind, old, new) -> None:
        if kind == "ResourceClaim":
            if old is not None:
                self._index(old, add=False)
            if new is not None:
                self._index(new, add=True)
            return
        if kind == "Pod" and new is not None and old is None:
            self.sync_pod(new)
        elif kind == "Pod" and new is None and old is not None:
            self.pod_gone(old)
        elif kind == "ResourceClaimTemplate" and new is not None:
            for pod in self.cluster.list("Pod", new.namespace):
                self.sync_pod(pod)

    def pod_gone(self, pod: Pod) -> None:
        """A deleted pod no longer uses its claims: syncClaim drops it from `reservedFor`, and
        a claim reserved for no pod any more that the scheduler allocated (it carries the
        delete-protection finalizer) is deallocated and loses the finalizer; a claim the pod
        owned (generated from a template) is deleted."""
        for c in self._claims_of(pod):
            md = c.raw.get("metadata") or {}
            if any(r.get("controller") and r.get("uid") == pod.uid for r in md.get("ownerReferences") or []):
                self.cluster.delete(c)
                continue
            reserved = c.status.get("reservedFor") or []
            if not any(r.get("uid") == pod.uid for r in reserved):
                continue
            raw = copy.deepcopy(c.raw)
            status = raw.setdefault("status", {})
            status["reservedFor"] = [r for r in reserved if r.get("uid") != pod.uid]
            finalizers = raw["metadata"].get("finalizers") or []
            if not status["reservedFor"]:
                del status["reservedFor"]
                if _FINALIZER in finalizers:
                    status.pop("allocation", None)
                    rest = [f for f in finalizers if f != _FINALIZER]
                    if rest:
                        raw["metadata"]["finalizers"] = rest
                    else:
                        raw["metadata"].pop("finalizers", None)
            if not status:
                del raw["status"]
            self.cluster.update(make_object(raw))

    def sync_pod(self, pod: Pod) -> None:
        if pod.node_name or (pod.raw.get("metadata") or {}).get("deletionTimestamp"):
            return
        statuses = list(pod.status.get("resourceClaimStatuses") or [])
        known = {s.get("name") for s in statuses}
        added = []
        for pc in pod.spec.get("resourceClaims") or []:
            tname = pc.get("resourceClaimTemplateName")
            if not tname or pc.get("name") in known:
                continue
            claim = self._find_claim(pod, pc.get("name", ""))
            if claim is None:
                template = self.cluster.get("ResourceClaimTemplate", pod.namespace, tname)
                if template is None:
                    continue
                claim = self._create_claim(pod, pc.get("name", ""), template)
            added.append({"name": pc.get("name", ""), "resourceClaimName": claim.name})
        if not added:
            return
        current = self.cluster.get("Pod", pod.namespace, pod.name)
        if current is None:
            return

        def mutate(status: Dict[str, Any]) -> None:
            status["resourceClaimStatuses"] = list(status.get("resourceClaimStatuses") or []) + added
        self.cluster.update(current.with_status(mutate))

    def _find_claim(self, pod: Pod, pod_claim_name: str) -> Optional[KubeObject]:
        """findPodResourceClaim: a claim owned by the pod for that entry (created before)."""
        for c in self._claims_of(pod):
            md = c.raw.get("metadata") or {}
            if (md.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) != pod_claim_name:
                continue
            if any(r.get("controller") and r.get("uid") == pod.uid for r in md.get("ownerReferences") or []):
                return c
        return None

    def _create_claim(self, pod: Pod, pod_claim_name: str, template: KubeObject) -> KubeObject:
        tspec = template.raw.get("spec") or {}
        tmeta = tspec.get("metadata") or {}
        annotations = dict(tmeta.get("annotations") or {})
        annotations[POD_CLAIM_NAME_ANNOTATION] = pod_claim_name
        base = claim_generate_name(pod.name, pod_claim_name)
        name = generate_name(base, f"{pod.namespace}/{pod.name}/{pod_claim_name}")
        self._uid += 1
        md: Dict[str, Any] = {
            "name": name, "namespace": pod.namespace, "generateName": base,
            "uid": f"00000000-0000-0000-cccc-{self._uid:012d}",
            "creationTimestamp": (pod.raw.get("metadata") or {}).get("creationTimestamp"),
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                 "controller": True, "blockOwnerDeletion": True}],
        }
        if tmeta.get("labels"):
            md["labels"] = dict(tmeta["labels"])
        raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": md,
               "spec": copy.deepcopy(tspec.get("spec") or {})}
        return self.cluster.create(make_object(raw))


def start_controllers(cluster) -> None:
    """Start the controllers a case's cluster runs alongside the scheduler."""
    ResourceClaimController(cluster).start()


def claim_outcomes(cluster) -> Dict[str, Any]:
    """Each ResourceClaim's outcome for `run --json`: the node its allocation pins it to, the
    devices per request (`driver/pool/device`), the capacity each shared device gives it, and the
    pods it is reserved for."""
    out: Dict[str, Any] = {}
    for c in cluster.list("ResourceClaim"):
        alloc = c.status.get("allocation")
        entry: Dict[str, Any] = {"allocated": alloc is not None}
        if alloc is not None:
            devices: Dict[str, list] = {}
            consumed: Dict[str, Any] = {}
            for r in (alloc.get("devices") or {}).get("results") or []:
                device = f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}"
                devices.setdefault(r.get("request", ""), []).append(device)
                if r.get("consumedCapacity"):  # a share of a device (DRAConsumableCapacity)
                    consumed[device] = dict(r["consumedCapacity"])
            entry["devices"] = devices
            if consumed:
                entry["consumedCapacity"] = consumed
            entry["node"] = _allocation_node(alloc.get("nodeSelector"))
        entry["reservedFor"] = [f"{c.namespace}/{r.get('name')}" for r in c.status.get("reservedFor") or []]
        out[c.key] = entry
    return out


def _allocation_node(selector) -> Optional[str]:
    """The node named by an allocation's nodeSelector (matchFields metadata.name In [node]);
    None for devices available on all nodes or on a label-selected set."""
    if not selector:
        return None
    for term in selector.get("nodeSelectorTerms") or []:
        for f in term.get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(f.get("values") or []) == 1:
                return f["values"][0]
    return None
