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
import tempfile
from typing import Any, Dict, List, Optional, Tuple

import yaml

from ..api.object_validation import SCHEDULING_KINDS
from .. import yamlfile
from ..errors import CaseError, UserError
from ..yamlfile import json_line, load_yaml_file
from .case_spool import CaseSpool, SpoolError

_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _flatten(doc: Any, where: str, out: List[Tuple[str, Dict[str, Any]]]) -> None:
    if doc is None:
        if where.endswith("]"):  # a null item of a List or of a list: kubectl's "Object 'Kind' is missing"
            raise UserError("an item is a Kubernetes object, got null", key=where)
        return  # an empty document
    if isinstance(doc, list):
        for i, item in enumerate(doc):
            _flatten(item, f"{where}[{i}]", out)
        return
    if not isinstance(doc, dict):
        raise UserError(f"expected Kubernetes objects, got {type(doc).__name__}", key=where or None)
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        items = doc["items"]
        if items is not None and not isinstance(items, list):
            raise UserError(f"must be a list of objects, got {type(items).__name__}",
                            key=f"{where + '.' if where else ''}items")
        for i, item in enumerate(items or []):
            _flatten(item, f"{where + '.' if where else ''}items[{i}]", out)
        return
    for field in ("metadata", "spec", "status"):  # what import reads of every object
        if doc.get(field) is not None and not isinstance(doc[field], dict):
            raise UserError(f"{field} must be a mapping, got {type(doc[field]).__name__}",
                            key=f"{where + '.' if where else ''}{field}")
    if not isinstance(kind, str) or not kind:
        raise UserError(f"an object has a kind (a string), got {type(kind).__name__}",
                        key=f"{where + '.' if where else ''}kind")
    mf = (doc.get("metadata") or {}).get("managedFields")
    if mf is not None and not (isinstance(mf, list) and all(isinstance(e, dict) for e in mf)):
        # dropped by import, but decoded first: ObjectMeta.managedFields is []ManagedFieldsEntry
        raise UserError(f"must be a list of mappings, got {type(mf).__name__}",
                        key=f"{where + '.' if where else ''}metadata.managedFields")
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
    """Before any work: `-o` names a file that can be written (not a folder, nor a device or a
    pipe, in a folder that exists and may be written)."""
    if not output:
        return
    if os.path.isdir(output):
        raise UserError("is a folder: give the path of the case file to write", file=output, key="-o")
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise UserError(f"cannot write: no folder {folder}", file=output, key="-o")
    if not os.access(folder, os.W_OK) or (os.path.exists(output) and not os.access(output, os.W_OK)):
        raise UserError("cannot write: permission denied", file=output, key="-o")
    if os.path.exists(output) and not os.path.isfile(output):
        # (the checked case takes the name of -o by a rename: it would replace a device or a pipe)
        raise UserError("not a regular file: give the path of the case file to write, or no -o for "
                        "standard output", file=output, key="-o")


def import_dump(path: str, output: Optional[str], name: Optional[str] = None, progress: bool = True) -> int:
    """The `import` command: the dump read item by item (iter_dump_items), each object checked
    as it is read (an error names the dump's own item: `items[1234].spec...`) and its line of
    the case kept on disk (case_spool: a 150,000-pod cluster is neither held as Python objects
    nor as text); the case written (to a file beside `-o`, renamed to it once checked; for
    standard output, to a temporary file copied out once checked), then loaded and checked as
    `run` loads it."""
    check_output(output)
    folder = os.path.dirname(os.path.abspath(output)) if output else None
    spool = CaseSpool(folder)
    try:
        return _import(path, output, name, progress, spool, folder)
    except SpoolError as e:
        raise UserError(f"cannot write: {e.args[0].strerror or e.args[0]}", file=output or "stdout",
                        key="-o") from None
    finally:
        spool.close()


def _import(path: str, output: Optional[str], name: Optional[str], progress: bool, spool,
            folder: Optional[str]) -> int:
    from ..api.object_validation import validate_object
    from ..progress import Progress
    from .dumps import iter_dump_items

    prog = Progress("import", progress)
    case_name = name or os.path.splitext(os.path.basename(path))[0]
    cluster: List[str] = []  # the dump's key of each object of `cluster` (an error names it)
    pending: List[Tuple[Tuple[str, str, str], str, Tuple[int, int]]] = []  # (creation order, key, spooled at)
    dropped: Dict[str, int] = {}
    first_ref = None
    workload_minor: Optional[int] = None  # the version whose Workload API the dump's objects use
    workload_gates: Dict[str, bool] = {}  # the v1.36 alpha gates whose fields the objects use
    n = 0
    size = _CaseSize(output)
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
            gang_minor = _workload_api_minor(obj)
            if gang_minor is not None:
                if workload_minor is not None and workload_minor != gang_minor:
                    raise UserError(f"the Workload API of v1.{gang_minor} after objects of v1.{workload_minor}'s "
                                    f"(a dump holds one version's objects)", file=path, key=f"{key}.apiVersion")
                workload_minor = gang_minor
                workload_gates.update(_workload_gates_used(obj))
            err = validate_object(obj, _gang_features(gang_minor, workload_gates) if gang_minor is not None else None)
            if err is not None:
                raise UserError(err[1], file=path, key=f"{key}.{err[0]}" if err[0] else key)
            if kind == "Pod":
                phase = (obj.get("status") or {}).get("phase")
                if phase in ("Succeeded", "Failed"):
                    dropped["completed pods"] = dropped.get("completed pods", 0) + 1
                    continue
                if not (obj.get("spec") or {}).get("nodeName"):
                    obj.pop("status", None)
                    md = obj.get("metadata") or {}
                    order = (str(md.get("creationTimestamp") or ""), str(md.get("namespace") or "default"),
                             str(md.get("name") or ""))
                    pending.append((order, key, spool.add_pod(size.add(_object_text(obj), an_object=True))))
                    continue
            spool.add_cluster(size.add(_object_text(obj), an_object=True))
            cluster.append(key)
        prog.tick(f"{n} objects read and checked")
    prog.tick(f"{n} objects read and checked", force=True)
    pending.sort(key=lambda p: p[0])
    head = {"apiVersion": "schedharness/v1alpha1", "kind": "Case",
            "metadata": {"name": case_name, "description": f"imported from {os.path.basename(path)}: "
                         f"{len(cluster)} cluster objects, {len(pending)} pending pods"}}
    if workload_minor is not None:
        # the Workload API exists only with its gates on: the case names them (and the version)
        head["kubernetesVersion"] = f"v1.{workload_minor}"
        head["featureGates"] = dict({"GenericWorkload": True, "GangScheduling": True}, **workload_gates)
    if pending:
        first_ref = "/".join(pending[0][0][1:])
    header = ("# Imported by `schedharness import`. Fill in `expect` with the outcome you expect, e.g.\n"
              "#   expect: {bindings: {" + (f"{first_ref}: <node>" if first_ref else "<pod>: <node>") + "}}\n")
    dumper = getattr(yaml, "CSafeDumper", None) or yaml.SafeDumper

    head_text = header + yaml.dump(head, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
    tail = "expect:\n  bindings: {}\n"
    size.add(head_text + ("cluster:\n" if cluster else "cluster: []\n") + ("pods:\n" if pending else "pods: []\n")
             + tail)  # all but the objects

    # the case must load as `run` loads it (objects defaulted, cross-object checks, profiles)
    prog.tick("writing", force=True)
    base = os.path.basename(output) if output else "import"
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=folder)
        if output:
            os.chmod(tmp, _new_file_mode(output))  # mkstemp's 0600 -> what open(output, "w") gives
        with os.fdopen(fd, "wb") as out:
            spool.write_case(out, head_text, [at for _, _, at in pending], tail)
        spool.close()  # (its files are let go before the case is loaded)
        _check_case(lambda values: load_yaml_file(tmp, CaseError, values=values), output or path, path, cluster,
                    [key for _, key, _ in pending], prog)
        if output:
            os.replace(tmp, output)
        else:
            _copy_out(tmp)
    except OSError as e:  # (a SpoolError goes to import_dump, which says the same)
        raise SpoolError(e) from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    summary = ", ".join(f"{n} {what}" for what, n in sorted(dropped.items()))
    print(f"imported {len(cluster)} cluster objects and {len(pending)} pending pods"
          + (f"; dropped {summary}" if summary else "") + (f" -> {output}" if output else ""),
          file=sys.stderr)
    return 0


def _copy_out(tmp: str) -> None:
    """The checked case, to standard output (as text: a test's captured stdout takes text)."""
    with open(tmp, encoding="utf-8") as f:
        while True:
            chunk = f.read(8 << 20)
            if not chunk:
                break
            sys.stdout.write(chunk)


class _CaseSize:
    """The bytes and objects of the case `import` writes, counted as its objects are read: `run`
    reads a case of at most yamlfile.MAX_BYTES (1 GiB) and yamlfile.MAX_OBJECTS objects
    (250,000), so `import` stops as soon as its case passes either, before writing anything (a
    dump has no size bound: harness/case/dumps.py)."""

    def __init__(self, output: Optional[str]):
        self.output = output or "stdout"
        self.bytes = 0
        self.objects = 0

    def add(self, text: str, an_object: bool = False) -> str:
        """`text` counted (an_object: one object of `cluster` or `pods`); UserError naming `-o`
        once the case passes a bound."""
        self.bytes += len(text) if text.isascii() else len(text.encode("utf-8"))
        limit = yamlfile.MAX_BYTES
        if self.bytes > limit:
            raise UserError(f"the case would be over {limit // (1024 * 1024)} MB ({limit} bytes), the most "
                            f"`run` reads: import a part of the cluster (e.g. fewer namespaces)",
                            file=self.output, key="-o")
        if an_object:
            self.objects += 1
            most = yamlfile.MAX_OBJECTS
            if self.objects > most:  # the case loader's count: the objects of cluster and pods
                raise UserError(f"the case would hold more than {most} objects in cluster and pods (the limit "
                                f"is {most}), the most `run` reads: import a part of the cluster (e.g. fewer "
                                f"namespaces)", file=self.output, key="-o")
        return text


def _new_file_mode(path: str) -> int:
    """The mode open(path, "w") leaves: an existing file's own, else 0666 less the umask."""
    import stat

    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _workload_api_minor(obj: Dict[str, Any]) -> Optional[int]:
    """The Kubernetes minor whose Workload API an object uses: a Workload or PodGroup of
    scheduling.k8s.io/v1alpha1 (v1.35) or v1alpha2 (v1.36), a pod with spec.workloadRef (v1.35)
    or spec.schedulingGroup (v1.36); None for any other object."""
    kind, api = obj.get("kind"), str(obj.get("apiVersion") or "")
    if kind in ("Workload", "PodGroup") and api.startswith("scheduling.k8s.io/"):
        return 35 if api.endswith("/v1alpha1") else 36
    if kind == "Pod":
        spec = obj.get("spec") or {}
        if spec.get("workloadRef") is not None:
            return 35
        if spec.get("schedulingGroup") is not None:
            return 36
    return None


def _gang_features(minor: int, extra: Optional[Dict[str, bool]] = None):
    """The version and gates a dump's Workload API objects are checked with."""
    from ..versions import resolve

    return resolve(f"v1.{minor}", dict({"GenericWorkload": True, "GangScheduling": True}, **(extra or {})))


def _workload_gates_used(obj: Dict[str, Any]) -> Dict[str, bool]:
    """The gates a v1alpha2 PodGroup or Workload's fields need (the API server drops a gated field
    whose gate is off): a dump from a cluster that had them on keeps them in the case."""
    from ..api.workload import GATED_FIELDS

    if not str(obj.get("apiVersion") or "").endswith("/v1alpha2"):
        return {}
    spec = obj.get("spec") or {}
    specs = [spec] if obj.get("kind") == "PodGroup" else [t for t in spec.get("podGroupTemplates") or []
                                                            if isinstance(t, dict)]
    return {gate: True for s in specs if isinstance(s, dict) for key, gate in GATED_FIELDS
            if s.get(key) not in (None, "", [])}


def _object_text(obj: Dict[str, Any]) -> str:
    """An object as the entry of a case's list that holds it: one line of JSON (a YAML flow
    mapping, yamlfile.json_line: the case loader reads such lines with the C JSON decoder,
    50x faster than YAML, and json_line only writes a line YAML reads back as the same object),
    else a block of YAML."""
    line = json_line(obj)
    if line is not None:
        return f"- {line}\n"
    dumper = getattr(yaml, "CSafeDumper", None) or yaml.SafeDumper
    return yaml.dump([obj], Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)


def _check_case(load, case_path: str, path: str, cluster: List[str], pending: List[str], prog) -> None:
    """The written case loaded (`load(values)`: its document, read with a ValueTable) and built
    as `run` builds it; an error names the dump's own item (`cluster`, `pending`: the dump keys
    of the case's objects, in the case's order)."""
    from ..sharing import ValueTable
    from .loader import case_from_data
    from .runner import build_scheduler

    prog.tick("checking as a case", force=True)
    try:
        values = ValueTable()  # as load_case reads it: equal values held once (harness/sharing.py)
        build_scheduler(case_from_data(load(values), case_path, copy_objects=False, values=values))
    except CaseError as e:
        raise UserError(f"the dump does not make a valid case: {e.detail}", file=path,
                        key=_dump_key(e.key, cluster, pending)) from None


def _dump_key(key: Optional[str], cluster, pending) -> Optional[str]:
    """A case key (`cluster[3].spec.nodeName`, `pods[0]...`) as the dump's own item key."""
    import re

    m = re.match(r"(cluster|pods)\[(\d+)\](.*)", key or "")
    if not m:
        return key
    table = cluster if m.group(1) == "cluster" else pending
    i = int(m.group(2))
    return table[i] + m.group(3) if i < len(table) else key
