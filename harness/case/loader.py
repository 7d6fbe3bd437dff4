"""Reading a case file and validating it against the case JSON Schema."""

from __future__ import annotations

import copy
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from ..errors import CaseError
from ..gcpause import collector_paused
from ..trust import LocalModule, Tree, resolve_module, resolve_path, tree_of
from ..versions import Features, case_features
from .apiserver import NAMESPACED_KINDS
from .schema import case_schema as _schema, describe as _describe, key_path as _key_path
from .schema import schema_message as _schema_message
from .steps import REPLICA_ACTIONS, Step, check_expect, check_references, check_replicas, parse_steps
from ..yamlfile import MAX_OBJECTS, load_yaml_file

API_VERSION = "schedharness/v1alpha1"
_VALIDATOR = None


def _validator():
    """The case schema's validator, built once (its checks are the same for every case)."""
    global _VALIDATOR
    if _VALIDATOR is None:
        import jsonschema
        schema = copy.deepcopy(_schema())
        # cluster as a kind: List or {files: [...]} is read into a list before validating
        schema["properties"]["cluster"] = schema["properties"]["cluster"]["anyOf"][0]
        _VALIDATOR = jsonschema.Draft7Validator(schema)
    return _VALIDATOR


@dataclass
class Case:
    path: str
    name: str
    description: str
    config: Union[None, str, Dict[str, Any]]
    seed: int
    cluster: List[Dict[str, Any]]
    pods: List[Dict[str, Any]]
    expect: Dict[str, Any]
    plugins: List[str] = field(default_factory=list)
    # urlPrefix -> "module:callable" answering that extender of the configuration (README,
    # "Keys the harness has added")
    extenders: List[Dict[str, str]] = field(default_factory=list)
    steps: List[Step] = field(default_factory=list)
    replicas: int = 1
    cluster_keys: List[str] = field(default_factory=list)  # each cluster object's key path in the file
    parallel: bool = False  # Filter and Score on the Parallelizer's threads (`run --parallel`)
    kubernetes_version: Optional[str] = None  # as the case names it (None: the run's default)
    feature_gates: Dict[str, Any] = field(default_factory=dict)  # as the case sets them
    features: Optional[Features] = None  # the version and gates the case runs with
    tree: Optional[Tree] = None  # the folder it may read files and modules from (harness/trust.py)

    def __post_init__(self) -> None:
        if self.features is None:
            self.features = case_features(self.kubernetes_version, self.feature_gates, file=self.path)
        if self.tree is None:
            self.tree = tree_of(self.path)

    @property
    def has_processes(self) -> bool:
        """Run as kube-scheduler processes with their leader election (replicas, steps on a
        process, or a step deleting a Lease: the leader creates it again at its next renewal)."""
        return self.replicas > 1 or any(
            s.action in REPLICA_ACTIONS
            or (s.action == "delete" and any(r.get("kind") == "Lease" for r in s.value))
            for s in self.steps)

    @property
    def config_path(self) -> Optional[str]:
        if isinstance(self.config, str):
            return os.path.normpath(os.path.join(os.path.dirname(self.path), self.config))
        return None


def is_case_document(data: Any) -> bool:
    return isinstance(data, dict) and data.get("apiVersion") == API_VERSION and data.get("kind") == "Case"


# a case file this big has its top-level scalar keys checked from its text before it is read
# whole (reading a 150,000-pod case takes half a minute; a bad `seed` should not wait for it)
EARLY_CHECK_BYTES = 1 << 20
_TOP_SCALAR = re.compile(r"^(apiVersion|kind|seed|replicas|kubernetesVersion)[ \t]*:[ \t]*([^\n]*?)[ \t]*\r?$",
                         re.M)
_CHEAP_KEYS = ("seed", "replicas", "kubernetesVersion")


def check_cheap_keys(path: str) -> None:
    """For a big case file: its top-level `seed`, `replicas` and `kubernetesVersion` lines
    (`key: value` at column 0, a plain or quoted scalar) checked as the case schema and the
    version parser check them, before the file is read whole: a wrong one is the same error,
    in a moment instead of after reading every object. Anything unusual (no such line, a key
    twice, a value that is no plain scalar, not a case) is left to the full read."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode) or os.path.getsize(path) < EARLY_CHECK_BYTES:
            return
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return
    found: Dict[str, str] = {}
    for m in _TOP_SCALAR.finditer(text):
        if m.group(1) in found:
            return  # a duplicate key: the loader says so
        found[m.group(1)] = m.group(2)
    if found.get("apiVersion", "").strip("'\"") != API_VERSION or found.get("kind", "").strip("'\"") != "Case":
        return
    from ..yamlfile import load_yaml_text

    doc: Dict[str, Any] = {"apiVersion": API_VERSION, "kind": "Case"}
    for k in _CHEAP_KEYS:
        raw = found.get(k)
        if not raw or raw[0] in "[{&*!|>%@`#" or " #" in raw:
            continue
        try:
            doc[k] = load_yaml_text(f"{k}: {raw}\n", path, CaseError)[k]
        except (CaseError, TypeError, KeyError):
            continue
    errors = [e for e in _validator().iter_errors(doc)
              if list(e.absolute_path)[:1] and e.absolute_path[0] in _CHEAP_KEYS]
    if errors:
        raise CaseError(_schema_message(errors[0]), file=path, key=_key_path(errors[0].absolute_path))
    if "kubernetesVersion" in doc:
        case_features(doc["kubernetesVersion"], None, file=path)


@collector_paused(freeze=True)  # its objects stay out of the collector's passes until run_case thaws them
def load_case(path: str) -> Case:
    data = _take_classified(path)
    if data is _NOT_KEPT:
        check_cheap_keys(path)
        data = load_yaml_file(path, CaseError)
    return case_from_data(data, path, copy_objects=False)  # the document is the case's own


# Documents classify_file parsed, kept for the load_case that follows (a directory run reads
# each file once): path -> (mtime_ns, size, data). load_case takes an entry out; a file changed
# since is read again.
_CLASSIFIED: Dict[str, Tuple[int, int, Any]] = {}
_NOT_KEPT = object()


def _file_stamp(path: str) -> Optional[Tuple[int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _keep_classified(path: str, data: Any) -> None:
    stamp = _file_stamp(path)
    if stamp is None:
        return
    if len(_CLASSIFIED) >= 2000:
        _CLASSIFIED.clear()
    _CLASSIFIED[os.path.abspath(path)] = (stamp[0], stamp[1], data)


def _take_classified(path: str) -> Any:
    kept = _CLASSIFIED.pop(os.path.abspath(path), None)
    if kept is None or _file_stamp(path) != (kept[0], kept[1]):
        return _NOT_KEPT
    return kept[2]


def _check_config_ref(ref: Any, path: str) -> None:
    """`config:` naming a file: not empty, not a folder (the error names the case and the key,
    not the folder a read would fail on)."""
    if not isinstance(ref, str):
        return
    if not ref.strip():
        raise CaseError("must name a KubeSchedulerConfiguration file or hold one, got an empty string",
                        file=path, key="config")
    if os.path.isdir(os.path.join(os.path.dirname(os.path.abspath(path)), ref)):
        raise CaseError(f"names a folder, not a KubeSchedulerConfiguration file: {ref[:80]!r}",
                        file=path, key="config")


def _is_list_kind(obj: Any) -> bool:
    """`kind: List` (what kubectl prints) or a typed list (`PodList`) holding `items`."""
    return (isinstance(obj, dict) and isinstance(obj.get("kind"), str)
            and (obj["kind"] == "List" or obj["kind"].endswith("List")) and "items" in obj)


def _schema_object_ok(o: Any) -> bool:
    """Does the object pass the case schema's definitions/object (kind a non-empty string,
    apiVersion a string, metadata a mapping)?"""
    if not isinstance(o, dict):
        return False
    kind, api, md = o.get("kind"), o.get("apiVersion", ""), o.get("metadata", {})
    return isinstance(kind, str) and kind != "" and isinstance(api, str) and isinstance(md, dict)


def _schema_pod_ok(o: Any) -> bool:
    """Does the pod pass the case schema's definitions/pod (kind Pod, metadata.name a
    non-empty string, spec.containers a list)?"""
    if not isinstance(o, dict) or o.get("kind") != "Pod" or not isinstance(o.get("apiVersion", ""), str):
        return False
    md, spec = o.get("metadata"), o.get("spec")
    return (isinstance(md, dict) and isinstance(md.get("name"), str) and md["name"] != ""
            and isinstance(spec, dict) and isinstance(spec.get("containers"), list))


def _objects_valid(data: Dict[str, Any]) -> bool:
    """Do all of `cluster` and `pods` pass their schema (checked here in a loop, as
    jsonschema would per object, 20x slower: what a 150,000-pod case spent most of its
    validation on)? False sends them through jsonschema, which words the problem."""
    cluster, pods = data.get("cluster", []), data.get("pods", [])
    return (isinstance(cluster, list) and isinstance(pods, list)
            and all(_schema_object_ok(o) for o in cluster) and all(_schema_pod_ok(p) for p in pods))


@collector_paused()
def case_from_data(data: Any, path: str, copy_objects: bool = True) -> Case:
    """The case of a parsed case document. Running a case defaults its objects in place, so
    the case holds copies of the document's objects; `copy_objects=False` when the document is
    the case's own (just read from its file): a 150,000-pod cluster is then not copied."""
    import jsonschema

    if not isinstance(data, dict):
        raise CaseError(f"a case must be a YAML mapping, got {_describe(data)}", file=path)
    cluster_prefix = "cluster"
    file_keys: List[str] = []
    if isinstance(data.get("cluster"), dict) and "files" in data["cluster"] and "kind" not in data["cluster"]:
        data = dict(data)
        data["cluster"], file_keys = _cluster_files(data["cluster"], path)
    elif isinstance(data.get("cluster"), dict):
        # one `kind: List` mapping, as `kubectl get nodes,pods -A -o yaml` prints it
        if not _is_list_kind(data["cluster"]):
            raise CaseError("must be a list of objects or one kind: List mapping with items, got a "
                            f"mapping with kind {str(data['cluster'].get('kind'))[:40]!r}", file=path,
                            key="cluster")
        data = dict(data)
        data["cluster"] = [data["cluster"]]
        cluster_prefix = None
    validator = _validator()
    checked = data
    if _objects_valid(data):  # the schema has nothing to say of them: it checks the rest alone
        checked = {k: [] if k in ("cluster", "pods") else v for k, v in data.items()}
    # the shallowest problem first; a wrong kind/apiVersion says more than what it then lacks
    errors = sorted(validator.iter_errors(checked),
                    key=lambda e: (len(list(e.absolute_path)) - (1.5 if e.validator == "const" else 0)))
    if errors:
        e = errors[0]
        key = _key_path(e.absolute_path)
        if cluster_prefix is None and key.startswith("cluster[0]"):
            key = "cluster" + key[len("cluster[0]"):]
        elif file_keys and key.startswith("cluster["):
            index, _, rest = key[len("cluster["):].partition("]")
            key = file_keys[int(index)] + rest
        raise CaseError(_schema_message(e), file=path, key=key)
    check_expect(data.get("expect") or {}, path, "expect", in_step=False)
    _check_config_ref(data.get("config"), path)
    md = data.get("metadata") or {}
    name = md.get("name") or os.path.splitext(os.path.basename(path))[0]
    n_objects = len(data.get("pods") or []) + sum(
        len(o.get("items") or []) if _is_list_kind(o) and isinstance(o.get("items"), list) else 1
        for o in data.get("cluster") or [])
    if n_objects > MAX_OBJECTS:  # before anything is copied
        raise CaseError(f"too large: {n_objects} objects in cluster and pods (the limit is "
                        f"{MAX_OBJECTS})", file=path, key="cluster")
    cluster: List[Dict[str, Any]] = []
    keys: List[str] = []
    for i, obj in enumerate(data.get("cluster") or []):
        base = file_keys[i] if file_keys else (f"cluster[{i}]" if cluster_prefix else "cluster")
        if _is_list_kind(obj):
            items = obj.get("items") or []
            if not isinstance(items, list):
                raise CaseError(f"must be a list, got {_describe(items)}", file=path, key=f"{base}.items")
            for j, item in enumerate(items):
                if not isinstance(item, dict) or "kind" not in item:
                    raise CaseError("a List item must be an object with a kind", file=path,
                                    key=f"{base}.items[{j}]")
                cluster.append(copy.deepcopy(item) if copy_objects else item)
                keys.append(f"{base}.items[{j}]")
        else:
            cluster.append(copy.deepcopy(obj) if copy_objects else obj)
            keys.append(base)
    if isinstance(data.get("expect"), dict):
        from .decisions import check_relations

        check_relations(path, "expect", data["expect"])
    replicas = int(data.get("replicas", 1))
    features = case_features(data.get("kubernetesVersion"), data.get("featureGates"), file=path)
    steps = parse_steps(copy.deepcopy(data.get("steps")), path)
    check_references(steps, cluster, data.get("pods") or [], NAMESPACED_KINDS, path)
    check_replicas(steps, replicas, path, data.get("expect"))
    tree = tree_of(path)
    if isinstance(data.get("config"), str) and data["config"]:
        resolve_path(data["config"], path, tree, path, "config")
    plugin_modules(data.get("plugins") or [], path, tree)
    for i, e in enumerate(data.get("extenders") or []):
        extender_module(e, i, path, tree)
    return Case(path=path, name=name, description=md.get("description", ""), config=data.get("config"),
                seed=int(data.get("seed", 0)), cluster=cluster,
                pods=(copy.deepcopy if copy_objects else list)(data.get("pods") or []), expect=data.get("expect") or {},
                plugins=list(data.get("plugins") or []), steps=steps, replicas=replicas,
                extenders=[dict(e) for e in data.get("extenders") or []],
                cluster_keys=keys, parallel=bool(data.get("parallel", False)),
                kubernetes_version=data.get("kubernetesVersion"),
                feature_gates=dict(data.get("featureGates") or {}), features=features, tree=tree)


def _cluster_files(spec: Dict[str, Any], path: str) -> Tuple[List[Any], List[str]]:
    """`cluster: {files: [a.yaml, ...]}` (a key the harness adds): the cluster's objects read
    from separate YAML files, paths relative to the case; each file holds a list of objects, a
    `kind: List` (what kubectl prints) or a stream of documents. Returns the objects and, for
    each, the key that names it in errors (`cluster.files[1] nodes.yaml: items[3]`)."""
    extra = [k for k in spec if k != "files"]
    if extra:
        raise CaseError(f'unknown key "{str(extra[0])[:60]}" (cluster as a mapping takes files)',
                        file=path, key="cluster")
    files = spec["files"]
    if not isinstance(files, list) or not files or not all(isinstance(f, str) and f for f in files):
        raise CaseError(f"must be a non-empty list of file paths, got {_describe(files)}", file=path,
                        key="cluster.files")
    objs: List[Any] = []
    keys: List[str] = []
    for k, name in enumerate(files):
        full = resolve_path(name, path, tree_of(path), path, f"cluster.files[{k}]")
        try:
            docs = load_yaml_file(full, CaseError, all_documents=True)
        except CaseError as e:
            raise CaseError(e.detail, file=path, key=f"cluster.files[{k}] {name}") from None
        items: List[Tuple[str, Any]] = []
        for d, doc in enumerate(docs):
            where = "" if len(docs) == 1 else f"document {d + 1}: "
            if doc is None:
                continue
            if _is_list_kind(doc):
                items.extend((f"{where}items[{j}]", it) for j, it in enumerate(doc.get("items") or []))
            elif isinstance(doc, list):
                items.extend((f"{where}[{j}]", it) for j, it in enumerate(doc))
            else:
                items.append((where.rstrip(": ") or "document", doc))
        for key, item in items:
            if not isinstance(item, dict) or "kind" not in item:
                raise CaseError("an object with a kind", file=path, key=f"cluster.files[{k}] {name}: {key}")
            objs.append(item)
            keys.append(f"cluster.files[{k}] {name}: {key}")
    return objs, keys


def plugin_modules(names: List[Any], path: str, tree: Tree) -> List[LocalModule]:
    """A case's `plugins:`: the modules found in its tree (installed entry points, which every
    registry loads, are left out); anything else is refused (harness/trust.py)."""
    out = []
    for i, name in enumerate(names):
        found = resolve_module(name, path, tree, path, f"plugins[{i}]")
        if found is not None:
            out.append(found)
    return out


def extender_module(entry: Dict[str, Any], i: int, path: str, tree: Tree) -> Tuple[str, Union[str, LocalModule]]:
    """(callable path, module) of the case's `extenders[i].python: module:callable`: the module
    in the case's tree (a LocalModule), or an installed entry point's module (its name)."""
    key = f"extenders[{i}].python"
    spec = entry.get("python") if isinstance(entry, dict) else None
    mod_name, sep, attr = spec.partition(":") if isinstance(spec, str) else ("", "", "")
    if not sep or not mod_name or not attr or not all(p.isidentifier() for p in attr.split(".")):
        raise CaseError(f"{str(spec)[:80]!r} is not of the form module:callable", file=path, key=key)
    found = resolve_module(mod_name, path, tree, path, key)
    return attr, mod_name if found is None else found


def find_cases(paths: List[str], skipped: Optional[List[Tuple[str, str]]] = None,
               missing: Optional[List[CaseError]] = None) -> List[str]:
    """Case files under the given files or folders, in path order. A YAML file in a folder is a
    case when it parses to a case (or almost one: it is then listed, and loading it says what is
    wrong); any other YAML file is left out, with the reason appended to `skipped`. A path that
    does not exist raises, or with `missing` is appended to it (the other paths still count)."""
    out: List[str] = []
    for verdict, path, detail in iter_case_files(paths):
        if verdict == "skip":
            if skipped is not None:
                skipped.append((path, detail))
        elif verdict == "missing":
            if missing is None:
                raise detail
            missing.append(detail)
        else:
            out.append(path)
    return out


def _yaml_files(paths: List[str]) -> Iterator[Tuple[str, bool]]:
    """(path, found in a folder) of every YAML file under the folders and every other path
    given, in path order, without reading any."""
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for fn in sorted(files):
                    if fn.endswith((".yaml", ".yml")):
                        yield os.path.join(root, fn), True
        else:
            yield p, False


def count_case_files(paths: List[str]) -> int:
    """How many files iter_case_files will look at (a folder's YAML files, the other paths)."""
    return sum(1 for _ in _yaml_files(paths))


def iter_case_files(paths: List[str]) -> Iterator[Tuple[str, str, Any]]:
    """find_cases one file at a time, each classified when its turn comes (`run` streams: a big
    file later in the list does not delay the first results): ("case", path, None), ("skip",
    path, why) or ("missing", path, the CaseError)."""
    for path, in_folder in _yaml_files(paths):
        if in_folder:
            verdict, reason = classify_file(path)
            yield ("skip", path, reason) if verdict == "skip" else ("case", path, None)
        elif os.path.exists(path):
            yield "case", path, None
        else:
            yield "missing", path, CaseError("no such file or folder", file=path)


_CASE_KEYS = ("cluster", "pods", "expect")


def classify_data(data: Any) -> Tuple[str, str]:
    """("case", ""), ("invalid", why: almost a case) or ("skip", why not a case) for a parsed
    YAML document."""
    if not isinstance(data, dict):
        return "skip", "not a case (not a YAML mapping)"
    api, kind = data.get("apiVersion"), data.get("kind")
    if api == API_VERSION:
        return ("case", "") if kind == "Case" else ("invalid", f"kind must be Case, got {str(kind)[:40]!r}")
    if kind == "Case":
        return "invalid", f"apiVersion must be {API_VERSION}, got {str(api)[:60]!r}"
    if isinstance(api, str) and api.startswith("schedharness"):
        return "invalid", f"apiVersion must be {API_VERSION}, got {api[:60]!r}"
    present = [k for k in _CASE_KEYS if k in data]
    if present:
        return "invalid", f"has {', '.join(present)} but no apiVersion {API_VERSION} / kind Case"
    what = f"kind {str(kind)[:40]}" if kind else "no apiVersion/kind"
    return "skip", f"not a case ({what})"


def classify_file(path: str) -> Tuple[str, str]:
    """classify_data for a file. A file that cannot be read as YAML is invalid when its text
    looks like a case (mentions the case apiVersion or `kind: Case`), else skipped."""
    try:
        check_cheap_keys(path)
    except CaseError as e:
        return "invalid", e.detail
    try:
        data = load_yaml_file(path, CaseError)
    except CaseError as e:
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO: never opened
                return "invalid", e.detail
            with open(path, "rb") as f:
                head = f.read(1 << 20)
        except OSError:
            head = b""
        if API_VERSION.encode() in head or re.search(rb"kind:\s*Case\b", head):
            return "invalid", e.detail
        return "skip", f"not a case ({e.detail})"
    verdict = classify_data(data)
    if verdict[0] == "case":
        _keep_classified(path, data)
    return verdict


def _looks_like_case(path: str, skipped: Optional[List[Tuple[str, str]]] = None) -> bool:
    """For the pytest collector: a case or almost a case (parsed, not guessed from the text).
    Files that cannot hold any case key are not parsed; those parsed and found not to be cases
    are appended to `skipped` with the reason."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # opening a FIFO would wait for a writer
            return False
        with open(path, "rb") as f:
            head = f.read(1 << 20)
    except OSError:
        return False
    if not any(k in head for k in (b"schedharness", b"Case", b"cluster", b"pods", b"expect")) \
            and not head.startswith((b"\xff\xfe", b"\xfe\xff", b"\0")):
        return False
    verdict, why = classify_file(path)
    if verdict == "skip" and skipped is not None:
        skipped.append((path, why))
    return verdict != "skip"
