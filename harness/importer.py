"""`schedharness import DUMP.yaml -o case.yaml`: a `kubectl get nodes,pods,pv,pvc,sc,... -A -o yaml`
dump turned into a case that reproduces the scheduling question.

- objects of the kinds that matter to scheduling go to `cluster` (other kinds, e.g. Secrets and
  ConfigMaps, are dropped and counted);
- pods without `spec.nodeName` that have not completed become the `pods` to schedule, in
  creation order, without their status (a new pod has none);
- completed pods (phase Succeeded/Failed: kube-scheduler never sees them) are dropped, and so are
  `metadata.managedFields` and the last-applied-configuration annotation (noise for the scheduler).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional, Tuple

import yaml

from .api.object_validation import SCHEDULING_KINDS
from .errors import CaseError, UserError
from .yamlfile import load_yaml_file

_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _flatten(doc: Any, where: str, out: List[Tuple[str, Dict[str, Any]]]) -> None:
    if doc is None:
        return
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            _flatten(item, f"{where}[{i}]", out)
        return
    if not isinstance(doc, dict):
        raise UserError(f"expected Kubernetes objects, got {type(doc).__name__}", key=where or None)
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
        for i, item in enumerate(doc["items"]):
            _flatten(item, f"{where + '.' if where else ''}items[{i}]", out)
        return
    for field in ("metadata", "spec", "status"):  # what import reads of every object
        if doc.get(field) is not None and not isinstance(doc[field], dict):
            raise UserError(f"{field} must be a mapping, got {type(doc[field]).__name__}",
                            key=f"{where + '.' if where else ''}{field}")
    if not isinstance(kind, str) or not kind:
        raise UserError(f"an object has a kind (a string), got {type(kind).__name__}",
                        key=f"{where + '.' if where else ''}kind")
    out.append((where, doc))


def _clean(obj: Dict[str, Any]) -> Dict[str, Any]:
    obj = dict(obj)
    md = dict(obj.get("metadata") or {})
    md.pop("managedFields", None)
    ann = md.get("annotations")
    if isinstance(ann, dict) and _LAST_APPLIED in ann:
        ann = {k: v for k, v in ann.items() if k != _LAST_APPLIED}
        if ann:
            md["annotations"] = ann
        else:
            del md["annotations"]
    obj["metadata"] = md
    return obj


def dump_to_case(docs: List[Any], name: str, source: str = "dump") -> Tuple[Dict[str, Any], Dict[str, int]]:
    """The case (as a mapping) for a dump's documents, and counts of what was dropped."""
    objs: List[Tuple[str, Dict[str, Any]]] = []
    try:
        _flatten(docs, "", objs)
    except UserError as e:
        raise UserError(e.detail, file=source, key=e.key) from None
    cluster: List[Dict[str, Any]] = []
    pending: List[Dict[str, Any]] = []
    dropped: Dict[str, int] = {}
    for _, obj in objs:
        kind = obj.get("kind")
        if kind not in SCHEDULING_KINDS:
            dropped[f"kind {kind}"] = dropped.get(f"kind {kind}", 0) + 1
            continue
        obj = _clean(obj)
        if kind == "Pod":
            phase = (obj.get("status") or {}).get("phase")
            if phase in ("Succeeded", "Failed"):
                dropped["completed pods"] = dropped.get("completed pods", 0) + 1
                continue
            if not (obj.get("spec") or {}).get("nodeName"):
                obj.pop("status", None)
                pending.append(obj)
                continue
        cluster.append(obj)
    pending.sort(key=lambda p: (str((p.get("metadata") or {}).get("creationTimestamp") or ""),
                                str((p.get("metadata") or {}).get("namespace") or "default"),
                                str((p.get("metadata") or {}).get("name") or "")))
    case = {"apiVersion": "schedharness/v1alpha1", "kind": "Case",
            "metadata": {"name": name, "description": f"imported from {os.path.basename(source)}: "
                         f"{len(cluster)} cluster objects, {len(pending)} pending pods"},
            "cluster": cluster, "pods": pending,
            "expect": {"bindings": {}}}
    return case, dropped


def check_output(output: Optional[str]) -> None:
    """Before any work: `-o` names a file that can be written (not a folder, in a folder that
    exists and may be written)."""
    if not output:
        return
    if os.path.isdir(output):
        raise UserError("is a folder: give the path of the case file to write", file=output, key="-o")
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise UserError(f"cannot write: no folder {folder}", file=output, key="-o")
    if not os.access(folder, os.W_OK) or (os.path.exists(output) and not os.access(output, os.W_OK)):
        raise UserError("cannot write: permission denied", file=output, key="-o")


def import_dump(path: str, output: Optional[str], name: Optional[str] = None) -> int:
    """The `import` command: write the case, check it loads as `run` would load it."""
    from .case.loader import case_from_data
    from .case.runner import build_scheduler

    check_output(output)
    docs = load_yaml_file(path, UserError, all_documents=True, streams=True)
    case_name = name or os.path.splitext(os.path.basename(path))[0]
    case, dropped = dump_to_case(docs, case_name, source=path)
    refs = [f"{(p['metadata'].get('namespace') or 'default')}/{p['metadata'].get('name')}" for p in case["pods"]]
    header = ("# Imported by `schedharness import`. Fill in `expect` with the outcome you expect, e.g.\n"
              "#   expect: {bindings: {" + (f"{refs[0]}: <node>" if refs else "<pod>: <node>") + "}}\n")
    text = header + yaml.safe_dump(case, sort_keys=False, default_flow_style=False, allow_unicode=True)
    # the case must load as `run` loads it (objects checked, profiles built)
    import copy

    try:
        build_scheduler(case_from_data(copy.deepcopy(case), output or path))
    except CaseError as e:
        raise UserError(f"the dump does not make a valid case: {e.key or ''}: {e.detail}", file=path) from None
    if output:
        try:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise UserError(f"cannot write: {e.strerror or e}", file=output, key="-o") from None
    else:
        sys.stdout.write(text)
    summary = ", ".join(f"{n} {what}" for what, n in sorted(dropped.items()))
    print(f"imported {len(case['cluster'])} cluster objects and {len(case['pods'])} pending pods"
          + (f"; dropped {summary}" if summary else "") + (f" -> {output}" if output else ""),
          file=sys.stderr)
    return 0
