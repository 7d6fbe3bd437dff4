"""A gang case written for one version's Workload API, rewritten for the other, so that
`diff --kubernetes-version v1.35 --kubernetes-version v1.36` can run it on both.

v1.35 (``scheduling.k8s.io/v1alpha1``): a Workload lists its pod groups with their policy; a pod
names ``spec.workloadRef {name, podGroup, podGroupReplicaKey}``. v1.36 (``v1alpha2``): the
Workload lists pod group templates; each pod group is a PodGroup object (``spec.podGroupTemplateRef``,
``schedulingPolicy``); a pod names ``spec.schedulingGroup.podGroupName``. The PodGroup of a
workload's group is named ``<workload>-<group>`` (``-<replicaKey>`` appended for a replica), as
the verified cases name them; a PodGroup without a template becomes a Workload of its own with
one group. Fields one API has and the other lacks (v1.36's schedulingConstraints, priority,
disruptionMode, resourceClaims) are dropped going to v1.35. The case's own objects are not changed (copies).
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Tuple

V1ALPHA1 = "scheduling.k8s.io/v1alpha1"
V1ALPHA2 = "scheduling.k8s.io/v1alpha2"


def _minor(version: Optional[str]) -> Optional[int]:
    from ..versions import parse_version

    try:
        return parse_version(version).minor if version is not None else None
    except Exception:
        return None


def _is(obj: Any, kind: str, api: str) -> bool:
    return isinstance(obj, dict) and obj.get("kind") == kind and obj.get("apiVersion") == api


def _pg_name(workload: str, group: str, replica: str = "") -> str:
    return f"{workload}-{group}" + (f"-{replica}" if replica else "")


def _to_v136(objs: List[Any]) -> List[Any]:
    out: List[Any] = []
    for obj in objs:
        if _is(obj, "Workload", V1ALPHA1):
            md = obj.get("metadata") or {}
            ns = md.get("namespace")
            templates = []
            for g in (obj.get("spec") or {}).get("podGroups") or []:
                templates.append({"name": g.get("name"), "schedulingPolicy": copy.deepcopy(g.get("policy"))})
            wl = {"apiVersion": V1ALPHA2, "kind": "Workload", "metadata": copy.deepcopy(md),
                  "spec": {"podGroupTemplates": templates}}
            if (obj.get("spec") or {}).get("controllerRef") is not None:
                wl["spec"]["controllerRef"] = copy.deepcopy(obj["spec"]["controllerRef"])
            out.append(wl)
            for t in templates:
                name = _pg_name(md.get("name", ""), t["name"])
                pg_md = {"name": name}
                if ns:
                    pg_md["namespace"] = ns
                out.append({"apiVersion": V1ALPHA2, "kind": "PodGroup", "metadata": pg_md,
                            "spec": {"podGroupTemplateRef": {"workload": {"workloadName": md.get("name"),
                                                                           "podGroupTemplateName": t["name"]}},
                                     "schedulingPolicy": copy.deepcopy(t["schedulingPolicy"])}})
        elif isinstance(obj, dict) and obj.get("kind") == "Pod" and \
                isinstance((obj.get("spec") or {}).get("workloadRef"), dict):
            pod = copy.deepcopy(obj)
            ref = pod["spec"].pop("workloadRef")
            pod["spec"]["schedulingGroup"] = {"podGroupName": _pg_name(
                str(ref.get("name") or ""), str(ref.get("podGroup") or ""), str(ref.get("podGroupReplicaKey") or ""))}
            out.append(pod)
        else:
            out.append(obj)
    return out


def _to_v135(objs: List[Any]) -> List[Any]:
    groups: Dict[Tuple[str, str], Tuple[str, str]] = {}  # PodGroup (ns, name) -> (workload, group)
    untemplated = set()
    for obj in objs:
        if _is(obj, "PodGroup", V1ALPHA2):
            md = obj.get("metadata") or {}
            ref = ((obj.get("spec") or {}).get("podGroupTemplateRef") or {}).get("workload") or {}
            if ref.get("workloadName") and ref.get("podGroupTemplateName"):
                groups[(md.get("namespace") or "default", md.get("name"))] = (ref["workloadName"],
                                                                              ref["podGroupTemplateName"])
            else:
                groups[(md.get("namespace") or "default", md.get("name"))] = (md.get("name"), "group")
                untemplated.add((md.get("namespace") or "default", md.get("name")))
    out: List[Any] = []
    for obj in objs:
        if _is(obj, "Workload", V1ALPHA2):
            spec = obj.get("spec") or {}
            wl = {"apiVersion": V1ALPHA1, "kind": "Workload", "metadata": copy.deepcopy(obj.get("metadata") or {}),
                  "spec": {"podGroups": [{"name": t.get("name"), "policy": copy.deepcopy(t.get("schedulingPolicy"))}
                                         for t in spec.get("podGroupTemplates") or []]}}
            if spec.get("controllerRef") is not None:
                wl["spec"]["controllerRef"] = copy.deepcopy(spec["controllerRef"])
            out.append(wl)
        elif _is(obj, "PodGroup", V1ALPHA2):
            md = obj.get("metadata") or {}
            if (md.get("namespace") or "default", md.get("name")) in untemplated:
                # a PodGroup of no template: a Workload of its own
                out.append({"apiVersion": V1ALPHA1, "kind": "Workload", "metadata": copy.deepcopy(md),
                            "spec": {"podGroups": [{"name": "group", "policy": copy.deepcopy(
                                (obj.get("spec") or {}).get("schedulingPolicy"))}]}})
        elif isinstance(obj, dict) and obj.get("kind") == "Pod" and \
                isinstance((obj.get("spec") or {}).get("schedulingGroup"), dict):
            pod = copy.deepcopy(obj)
            name = pod["spec"].pop("schedulingGroup").get("podGroupName")
            ns = (pod.get("metadata") or {}).get("namespace") or "default"
            wl_name, group = groups.get((ns, name), (name, "group"))
            pod["spec"]["workloadRef"] = {"name": wl_name, "podGroup": group}
            out.append(pod)
        else:
            out.append(obj)
    return out


def _uses_workload_api(case) -> bool:
    objs = list(case.cluster) + list(case.pods)
    for s in case.steps:
        if isinstance(s.value, list):
            objs.extend(s.value)
    for o in objs:
        if not isinstance(o, dict):
            continue
        if o.get("kind") in ("Workload", "PodGroup") and str(o.get("apiVersion", "")).startswith("scheduling.k8s.io/"):
            return True
        spec = o.get("spec") or {}
        if o.get("kind") == "Pod" and ("workloadRef" in spec or "schedulingGroup" in spec):
            return True
    return False


def for_version(case, version: Optional[str]):
    """The case rewritten for `version`'s Workload API (the case itself when it uses none, or
    already that version's)."""
    import dataclasses

    target, own = _minor(version), case.features.version.minor
    if target is None or target == own or target < 35 or own < 35 or not _uses_workload_api(case):
        return case

    def convert(objs: List[Any]) -> List[Any]:
        return _to_v136(objs) if target >= 36 else _to_v135(objs)

    steps = [dataclasses.replace(s, value=convert(s.value)) if s.action in ("create", "update")
             and isinstance(s.value, list) else s for s in case.steps]
    return dataclasses.replace(case, cluster=convert(list(case.cluster)), pods=convert(list(case.pods)),
                               steps=steps, cluster_keys=[])
