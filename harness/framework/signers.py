"""The pod signers of OpportunisticBatching (k8s.io/kube-scheduler/framework signers.go, v1.35
on): the keys the in-tree plugins sign under (`*SignerName`) and the signers they share.

A fragment's value only has to be equal for two pods exactly when upstream's JSON of it is
equal (signatures are compared, never read), so each signer builds a plain value whose
equality follows Go's `json.Marshal` of the same fields: a field Go leaves out when empty
(`omitempty`) is left out, a pointer that is set stays even when empty (`nodeAffinity: {}` is
not an absent one), and an empty map or list is the same as none (the scheduler reads pods
decoded from protobuf, where the two cannot be told apart).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence

DYNAMIC_RESOURCES_SIGNER_NAME = "v1.Pod.Spec.DynamicResources"
IMAGE_NAMES_SIGNER_NAME = "v1.Pod.Spec.CanonicalImageNames()"
LABELS_SIGNER_NAME = "v1.Pod.Labels"
NODE_NAME_SIGNER_NAME = "v1.Pod.Spec.NodeName"
NODE_AFFINITY_SIGNER_NAME = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR_SIGNER_NAME = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS_SIGNER_NAME = "v1.Pod.Spec.HostPorts()"
RESOURCES_SIGNER_NAME = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME_SIGNER_NAME = "v1.Pod.Spec.SchedulerName"
TOLERATIONS_SIGNER_NAME = "v1.Pod.Spec.Tolerations"
VOLUMES_SIGNER_NAME = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES_SIGNER_NAME = "v1.Pod.Spec.RequiredFeatures()"

_EMPTY = (None, "", False, [], ())


def _marshal(value: Any, sort_keys: bool = False) -> str:
    """json.Marshal: a struct's fields in the order given (Go's field order), or, for a
    manifest value whose Go field order the harness does not keep, keys sorted (the same
    equality)."""
    return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)


def _omitempty(value: Any) -> Any:
    """A manifest value with the fields Go's `omitempty` drops left out (strings, bools and
    lists that are empty; maps and set pointers are kept)."""
    if isinstance(value, Mapping):
        return {k: _omitempty(v) for k, v in value.items() if v not in _EMPTY}
    if isinstance(value, (list, tuple)):
        return [_omitempty(v) for v in value]
    return value


def _fields(obj: Mapping[str, Any], names: Sequence[str]) -> Dict[str, Any]:
    """The named fields of a manifest struct that Go would write (the struct's own fields)."""
    return {k: obj[k] for k in names if obj.get(k) not in _EMPTY}


def map_or_none(m: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    """A map fragment (labels, nodeSelector): empty and absent are the same (nil)."""
    return dict(m) if m else None


def host_ports_signer(pod) -> List[int]:
    """HostPortsSigner: the distinct non-zero host ports of the containers and init
    containers, ascending (protocol and host IP are not signed)."""
    ports = set()
    for c in pod.containers + pod.init_containers:
        for port in (c or {}).get("ports") or ():
            hp = int((port or {}).get("hostPort") or 0)
            if hp != 0:
                ports.add(hp)
    return sorted(ports)


def node_selector_requirements_signer(reqs: Sequence[Mapping[str, Any]]) -> List[str]:
    """NodeSelectorRequirementsSigner: each requirement with its values sorted, marshalled;
    the strings sorted."""
    out = []
    for r in reqs or ():
        t = _fields(r or {}, ("key", "operator", "values"))
        if "values" in t:
            t["values"] = sorted(str(v) for v in t["values"])
        out.append(_marshal(t))
    return sorted(out)


def node_selector_term_signer(term: Mapping[str, Any]) -> Dict[str, List[str]]:
    """NodeSelectorTermSigner."""
    term = term or {}
    return {"MatchExpressions": node_selector_requirements_signer(term.get("matchExpressions") or ()),
            "MatchFields": node_selector_requirements_signer(term.get("matchFields") or ())}


def preferred_scheduling_term_signer(terms: Sequence[Mapping[str, Any]]) -> List[str]:
    """PreferredSchedulingTermSigner."""
    return sorted(_marshal({"Weight": int((t or {}).get("weight") or 0),
                            "Preference": node_selector_term_signer((t or {}).get("preference") or {})})
                  for t in terms or ())


def node_selector_terms_signer(terms: Sequence[Mapping[str, Any]]) -> List[str]:
    """NodeSelectorTermsSigner."""
    return sorted(_marshal(node_selector_term_signer(t)) for t in terms or ())


def node_affinity_signer(pod) -> Optional[Dict[str, List[str]]]:
    """NodeAffinitySigner: None without spec.affinity.nodeAffinity; else its required terms
    and preferred terms, each signed and sorted."""
    n = pod.affinity.get("nodeAffinity")
    if n is None:
        return None
    pref = n.get("preferredDuringSchedulingIgnoredDuringExecution")
    req = n.get("requiredDuringSchedulingIgnoredDuringExecution")
    return {"Required": node_selector_terms_signer((req or {}).get("nodeSelectorTerms") or ()) if req is not None else [],
            "Preferred": preferred_scheduling_term_signer(pref) if pref is not None else []}


_TOLERATION_FIELDS = ("key", "operator", "value", "effect", "tolerationSeconds")


def tolerations_signer(pod) -> List[Dict[str, Any]]:
    """TolerationsSigner: the tolerations ordered by key, then value (sort.Slice, which is
    stable for the dozen or fewer tolerations a pod has: equal keys and values keep their
    order)."""
    tols = [_fields(t or {}, _TOLERATION_FIELDS) for t in pod.tolerations]
    tols.sort(key=lambda t: (str(t.get("key", "")), str(t.get("value", ""))))
    return tols


def volumes_signer(pod) -> List[str]:
    """VolumesSigner: the volume sources (not the names) of the volumes that are neither
    configMap nor secret ones, marshalled and sorted."""
    out = []
    for vol in pod.volumes:
        vol = vol or {}
        if vol.get("configMap") is not None or vol.get("secret") is not None:
            continue
        out.append(_marshal(_omitempty({k: v for k, v in vol.items() if k != "name"}), sort_keys=True))
    return sorted(out)


def resources_value(r) -> List[Any]:
    """The JSON of computePodResourceRequest's framework.Resource: its five fields."""
    return [r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number,
            sorted(r.scalar_resources.items())]
