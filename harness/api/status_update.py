"""What a PUT of an object's status subresource keeps of the object sent: its status only.

The API server's status strategies take the rest from the stored object before they validate:
- every kind: `rest.BeforeUpdate` keeps the stored generation, creationTimestamp and (when set)
  deletionTimestamp, and the stored uid when the request has none;
- ResourceClaim, PodGroup (`resourceclaimStatusStrategy`, `podGroupStatusStrategy`
  PrepareForUpdate): the stored spec, and `metav1.ResetObjectMetaForStatus`: the stored labels,
  annotations, finalizers, ownerReferences, deletionTimestamp and generation;
- Pod (`podStatusStrategy.PrepareForUpdate`): the stored spec, deletionTimestamp and
  ownerReferences (labels and annotations may change through pods/status), and the stored
  qosClass when the request has none;
- any other kind: the stored spec (what every status strategy in pkg/registry does).
Mirrors pkg/registry/{core/pod,resource/resourceclaim,scheduling/podgroup}/strategy.go and
staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go of v1.34-v1.36.
"""

from __future__ import annotations

from typing import Any, Dict

# metav1.ResetObjectMetaForStatus: the metadata a status write cannot change
_RESET_FOR_STATUS = ("deletionTimestamp", "generation", "labels", "annotations", "finalizers",
                     "ownerReferences")
_RESETS_META = {"ResourceClaim", "PodGroup"}


def _take(meta: Dict[str, Any], old_meta: Dict[str, Any], key: str) -> None:
    """meta[key] = old_meta[key], absent when it is absent there."""
    if key in old_meta:
        meta[key] = old_meta[key]
    else:
        meta.pop(key, None)


def prepare_status_update(new: Dict[str, Any], old: Dict[str, Any]) -> Dict[str, Any]:
    """The manifest a status write of `new` over the stored `old` stores (before the kind's
    status validation); `new` itself is not changed."""
    kind = new.get("kind")
    out = dict(new)
    meta = dict(new.get("metadata") or {})
    old_meta = old.get("metadata") or {}
    if "spec" in old:
        out["spec"] = old["spec"]
    else:
        out.pop("spec", None)
    if kind in _RESETS_META:
        for key in _RESET_FOR_STATUS:
            _take(meta, old_meta, key)
    elif kind == "Pod":
        for key in ("deletionTimestamp", "ownerReferences"):
            _take(meta, old_meta, key)
        old_qos = (old.get("status") or {}).get("qosClass")
        status = new.get("status") or {}
        if not status.get("qosClass") and old_qos:
            out["status"] = {**status, "qosClass": old_qos}
    # rest.BeforeUpdate, for every kind
    _take(meta, old_meta, "generation")
    if old_meta.get("creationTimestamp"):
        meta["creationTimestamp"] = old_meta["creationTimestamp"]
    if old_meta.get("deletionTimestamp"):
        meta["deletionTimestamp"] = old_meta["deletionTimestamp"]
    if not meta.get("uid") and old_meta.get("uid"):
        meta["uid"] = old_meta["uid"]
    out["metadata"] = meta
    return out
