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


class _Progress:
    """`import: ...` lines on stderr, at most one per PROGRESS_SECONDS of wall time, none for an
    import shorter than that (so a small import prints its summary or its error alone)."""

    PROGRESS_SECONDS = 5.0

    def __init__(self, enabled: bool):
        import time

        self.enabled = enabled
        self.clock = time.monotonic
        self.start = self.last = self.clock()

    def tick(self, text: str, force: bool = False) -> None:
        now = self.clock()
        if self.enabled and now - (self.start if force else self.last) >= self.PROGRESS_SECONDS:
            self.last = now
            print(f"import: {text} ({now - self.start:.0f}s)", file=sys.stderr, flush=True)


def import_dump(path: str, output: Optional[str], name: Optional[str] = None, progress: bool = True) -> int:
    """The `import` command: the dump read item by item (iter_dump_items), each object checked
    as it is read (an error names the dump's own item: `items[1234].spec...`), the case written
    with libyaml's C emitter when present, then checked as `run` loads it."""
    from .api.object_validation import validate_object
    from .case.loader import case_from_data
    from .case.runner import build_scheduler
    from .yamlfile import iter_dump_items

    check_output(output)
    prog = _Progress(progress)
    case_name = name or os.path.splitext(os.path.basename(path))[0]
    cluster: List[Tuple[str, Dict[str, Any]]] = []
    pending: List[Tuple[str, Dict[str, Any]]] = []
    dropped: Dict[str, int] = {}
    n = 0
    for where, item in iter_dump_items(path, UserError):
        objs: List[Tuple[str, Dict[str, Any]]] = []
        try:
            _flatten(item, where, objs)
        except UserError as e:
            raise UserError(e.detail, file=path, key=e.key) from None
        for key, obj in objs:
            n += 1
            kind = obj.get("kind")
            if kind not in SCHEDULING_KINDS:
                dropped[f"kind {kind}"] = dropped.get(f"kind {kind}", 0) + 1
                continue
            obj = _clean(obj)
            err = validate_object(obj)
            if err is not None:
                raise UserError(err[1], file=path, key=f"{key}.{err[0]}" if err[0] else key)
            if kind == "Pod":
                phase = (obj.get("status") or {}).get("phase")
                if phase in ("Succeeded", "Failed"):
                    dropped["completed pods"] = dropped.get("completed pods", 0) + 1
                    continue
                if not (obj.get("spec") or {}).get("nodeName"):
                    obj.pop("status", None)
                    pending.append((key, obj))
                    continue
            cluster.append((key, obj))
        prog.tick(f"{n} objects read and checked")
    prog.tick(f"{n} objects read and checked", force=True)
    pending.sort(key=lambda kp: (str((kp[1].get("metadata") or {}).get("creationTimestamp") or ""),
                                 str((kp[1].get("metadata") or {}).get("namespace") or "default"),
                                 str((kp[1].get("metadata") or {}).get("name") or "")))
    case = {"apiVersion": "schedharness/v1alpha1", "kind": "Case",
            "metadata": {"name": case_name, "description": f"imported from {os.path.basename(path)}: "
                         f"{len(cluster)} cluster objects, {len(pending)} pending pods"},
            "cluster": [o for _, o in cluster], "pods": [o for _, o in pending],
            "expect": {"bindings": {}}}
    # the case must load as `run` loads it (objects defaulted, cross-object checks, profiles);
    # case_from_data works on copies of the objects
    try:
        build_scheduler(case_from_data(case, output or path))
    except CaseError as e:
        raise UserError(f"the dump does not make a valid case: {e.detail}", file=path,
                        key=_dump_key(e.key, cluster, pending)) from None
    prog.tick("checked as a case; writing", force=True)
    refs = [f"{(p['metadata'].get('namespace') or 'default')}/{p['metadata'].get('name')}" for p in case["pods"]]
    header = ("# Imported by `schedharness import`. Fill in `expect` with the outcome you expect, e.g.\n"
              "#   expect: {bindings: {" + (f"{refs[0]}: <node>" if refs else "<pod>: <node>") + "}}\n")
    dumper = getattr(yaml, "CSafeDumper", None) or yaml.SafeDumper
    try:
        out = open(output, "w", encoding="utf-8") if output else sys.stdout
    except OSError as e:
        raise UserError(f"cannot write: {e.strerror or e}", file=output, key="-o") from None
    try:
        out.write(header)
        _write_case(case, out, dumper)
    except OSError as e:
        raise UserError(f"cannot write: {e.strerror or e}", file=output, key="-o") from None
    finally:
        if output:
            out.close()
    summary = ", ".join(f"{n} {what}" for what, n in sorted(dropped.items()))
    print(f"imported {len(case['cluster'])} cluster objects and {len(case['pods'])} pending pods"
          + (f"; dropped {summary}" if summary else "") + (f" -> {output}" if output else ""),
          file=sys.stderr)
    return 0


def _write_case(case: Dict[str, Any], out, dumper) -> None:
    """The case as YAML, its object lists emitted a chunk at a time: PyYAML represents a whole
    document before emitting it, which would hold a second, larger copy of a big cluster."""
    def dump(data: Any) -> str:
        return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)

    head = {k: v for k, v in case.items() if k not in ("cluster", "pods", "expect")}
    out.write(dump(head))
    for key in ("cluster", "pods"):
        items = case[key]
        if not items:
            out.write(f"{key}: []\n")
            continue
        out.write(f"{key}:\n")
        for k in range(0, len(items), 500):
            out.write(dump(items[k:k + 500]))
    out.write(dump({"expect": case["expect"]}))


def _dump_key(key: Optional[str], cluster, pending) -> Optional[str]:
    """A case key (`cluster[3].spec.nodeName`, `pods[0]...`) as the dump's own item key."""
    import re

    m = re.match(r"(cluster|pods)\[(\d+)\](.*)", key or "")
    if not m:
        return key
    table = cluster if m.group(1) == "cluster" else pending
    i = int(m.group(2))
    return table[i][0] + m.group(3) if i < len(table) else key
