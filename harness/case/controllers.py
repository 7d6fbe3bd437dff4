"""Controllers of kube-controller-manager that the scheduler depends on, acting on the simulated
API server as they would: the resourceclaim controller (pkg/controller/resourceclaim), which
creates a pod's ResourceClaim from the ResourceClaimTemplate it names and records it in the
pod's `status.resourceClaimStatuses`, and releases the claims of deleted pods; with
DRAWorkloadResourceClaims (v1.36) also a PodGroup's claims (syncPodGroup: created from the
templates its `spec.resourceClaims` names, owned by the PodGroup, recorded in its
`status.resourceClaimStatuses`), which a pod's matching claim entry resolves to."""

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
        features = getattr(cluster, "features", None)
        self.workload_claims = features is not None and features.get("DRAWorkloadResourceClaims", False)
        # the controller's claim informer indexes: pod uid -> keys of the claims it owns or is
        # reserved for (upstream's podResourceClaimIndex and the reservedFor lookups)
        self._by_pod: Dict[str, Set[Tuple[str, str]]] = {}

    def start(self) -> None:
        for c in self.cluster.list("ResourceClaim"):
            self._index(c, add=True)
        if self.workload_claims:
            for pg in self.cluster.list("PodGroup"):
                self.sync_pod_group(pg)
        for pod in self.cluster.list("Pod"):
            if not pod.node_name:  # (sync_pod leaves a bound pod alone: 150,000 of them, at once)
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
                owner = _pod_group_owner(new) if self.workload_claims and old is None else None
                if owner is not None:  # enqueueResourceClaim -> enqueuePodGroup -> its pods
                    for pod in self.cluster.list("Pod", new.namespace):
                        if _pod_group_name(pod) == owner:
                            self.sync_pod(pod)
            return
        if kind == "PodGroup" and self.workload_claims and _is_pod_group(new or old):
            if new is None:
                self.pod_group_gone(old)
                return
            self.sync_pod_group(new)
            for pod in self.cluster.list("Pod", new.namespace):
                if _pod_group_name(pod) == new.name:
                    self.sync_pod(pod)
            return
        if kind == "Pod" and new is not None and old is None:
            self.sync_pod(new)
        elif kind == "Pod" and new is None and old is not None:
            self.pod_gone(old)
        elif kind == "ResourceClaimTemplate" and new is not None:
            if self.workload_claims:
                for pg in self.cluster.list("PodGroup", new.namespace):
                    if _is_pod_group(pg):
                        self.sync_pod_group(pg)
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
            self._release(c, lambda r: r.get("uid") == pod.uid)

    def _release(self, c: KubeObject, gone) -> None:
        """syncClaim: the consumers `gone` leave reservedFor; with none left, a claim the
        scheduler allocated (it carries the delete-protection finalizer) is deallocated and
        loses the finalizer."""
        reserved = c.status.get("reservedFor") or []
        raw = copy.deepcopy(c.raw)
        status = raw.setdefault("status", {})
        status["reservedFor"] = [r for r in reserved if not gone(r)]
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
        pod_group = self._pod_group_of(pod)
        for pc in pod.spec.get("resourceClaims") or []:
            tname = pc.get("resourceClaimTemplateName")
            if not tname or pc.get("name") in known:
                continue
            if pod_group is not None and _matches_pod_group_claim(pod_group, pc):
                # BindTo gives the PodGroup: the pod shares the PodGroup's claim, once created
                claim = self._find_pod_group_claim(pod_group, pc.get("name", ""))
                if claim is not None:
                    added.append({"name": pc.get("name", ""), "resourceClaimName": claim.name})
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

    # ---- PodGroups (DRAWorkloadResourceClaims) -----------------------------------------------
    def _pod_group_of(self, pod: Pod) -> Optional[KubeObject]:
        """getPodGroup: the pod's PodGroup with the gate on (None when it does not exist yet:
        the controller retries, here a PodGroup event syncs the pod again)."""
        name = _pod_group_name(pod)
        if not self.workload_claims or name is None:
            return None
        pg = self.cluster.get("PodGroup", pod.namespace, name)
        return pg if pg is not None and _is_pod_group(pg) else None

    def _find_pod_group_claim(self, pg: KubeObject, claim_name: str) -> Optional[KubeObject]:
        """findPodGroupResourceClaim: a claim controlled by the PodGroup, annotated with the
        PodGroup's claim name."""
        for c in self.cluster.list("ResourceClaim", pg.namespace):
            md = c.raw.get("metadata") or {}
            if (md.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) != claim_name:
                continue
            if any(r.get("controller") and r.get("uid") == pg.uid for r in md.get("ownerReferences") or []):
                return c
        return None

    def sync_pod_group(self, pg: KubeObject) -> None:
        """syncPodGroup: for each `spec.resourceClaims` entry naming a template and not yet in
        `status.resourceClaimStatuses`, the claim (an orphan found first, else created as
        `<podgroup>-<claim name>-<5 chars>`, owned by the PodGroup), then the status."""
        if (pg.raw.get("metadata") or {}).get("deletionTimestamp"):
            return
        known = {st.get("name") for st in (pg.raw.get("status") or {}).get("resourceClaimStatuses") or []}
        added = []
        for pgc in (pg.raw.get("spec") or {}).get("resourceClaims") or []:
            tname = pgc.get("resourceClaimTemplateName")
            if not tname or pgc.get("name") in known:
                continue
            claim = self._find_pod_group_claim(pg, pgc.get("name", ""))
            if claim is None:
                template = self.cluster.get("ResourceClaimTemplate", pg.namespace, tname)
                if template is None:
                    continue  # "resource claim template ...: not found": retried
                claim = self._create_claim(pg, pgc.get("name", ""), template)
            added.append({"name": pgc.get("name", ""), "resourceClaimName": claim.name})
        if not added:
            return
        current = self.cluster.get("PodGroup", pg.namespace, pg.name)
        if current is None:
            return
        raw = copy.deepcopy(current.raw)
        status = raw.setdefault("status", {})
        status["resourceClaimStatuses"] = list(status.get("resourceClaimStatuses") or []) + added
        self.cluster.update(make_object(raw))

    def pod_group_gone(self, pg: KubeObject) -> None:
        """A deleted PodGroup: the claims it controls go with it (the garbage collector), and
        syncClaim removes it from the reservedFor of the others, deallocating a claim the
        scheduler allocated once no consumer is left."""
        for c in self.cluster.list("ResourceClaim", pg.namespace):
            md = c.raw.get("metadata") or {}
            if any(r.get("controller") and r.get("uid") == pg.uid for r in md.get("ownerReferences") or []):
                self.cluster.delete(c)
                continue
            reserved = c.status.get("reservedFor") or []
            if not any(r.get("uid") == pg.uid and r.get("resource") == "podgroups" for r in reserved):
                continue
            self._release(c, lambda r: r.get("uid") == pg.uid)

    def _find_claim(self, pod: Pod, pod_claim_name: str) -> Optional[KubeObject]:
        """findPodResourceClaim: a claim owned by the pod for that entry (created before)."""
        for c in self._claims_of(pod):
            md = c.raw.get("metadata") or {}
            if (md.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) != pod_claim_name:
                continue
            if any(r.get("controller") and r.get("uid") == pod.uid for r in md.get("ownerReferences") or []):
                return c
        return None

    def _create_claim(self, pod, pod_claim_name: str, template: KubeObject) -> KubeObject:
        """The claim for a pod's (or a PodGroup's) claim entry, owned by it."""
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
                                 "controller": True, "blockOwnerDeletion": True}
                                if pod.kind != "PodGroup" else
                                {"apiVersion": pod.api_version, "kind": "PodGroup", "name": pod.name,
                                 "uid": pod.uid, "controller": True}],
        }
        if tmeta.get("labels"):
            md["labels"] = dict(tmeta["labels"])
        raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": md,
               "spec": copy.deepcopy(tspec.get("spec") or {})}
        return self.cluster.create(make_object(raw))


def _pod_group_name(pod) -> Optional[str]:
    ref = pod.spec.get("schedulingGroup")
    return ref.get("podGroupName") if isinstance(ref, dict) else None


def _is_pod_group(obj) -> bool:
    return obj is not None and str(obj.api_version or "").startswith("scheduling.k8s.io/")


def _pod_group_owner(claim: KubeObject) -> Optional[str]:
    """The name of the PodGroup controlling the claim, or None."""
    for r in (claim.raw.get("metadata") or {}).get("ownerReferences") or []:
        if r.get("controller") and r.get("kind") == "PodGroup":
            return r.get("name")
    return None


def _matches_pod_group_claim(pg: KubeObject, pod_claim: Dict[str, Any]) -> bool:
    """resourceclaim.BindTo's match: a PodGroup claim equal in name, resourceClaimName and
    resourceClaimTemplateName."""
    return any(all(pgc.get(k) == pod_claim.get(k) for k in ("name", "resourceClaimName", "resourceClaimTemplateName"))
               for pgc in (pg.raw.get("spec") or {}).get("resourceClaims") or [])


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
