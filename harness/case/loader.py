"""Reading a case file and validating it against the case JSON Schema."""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Dict, List, Optional, Union

from ..errors import CaseError
from ..yamlfile import load_yaml_file

API_VERSION = "schedharness/v1alpha1"
_SCHEMA = None


def _schema() -> dict:
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = json.loads(resources.files("harness").joinpath("schemas/case.schema.json").read_text())
    return _SCHEMA


_VALIDATOR = None


def _validator():
    """The case schema's validator, built once (its checks are the same for every case)."""
    global _VALIDATOR
    if _VALIDATOR is None:
        import jsonschema
        _VALIDATOR = jsonschema.Draft7Validator(_schema())
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

    @property
    def config_path(self) -> Optional[str]:
        if isinstance(self.config, str):
            return os.path.normpath(os.path.join(os.path.dirname(self.path), self.config))
        return None


def _key_path(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else ("." if out else "") + str(p)
    return out or "<root>"


def is_case_document(data: Any) -> bool:
    return isinstance(data, dict) and data.get("apiVersion") == API_VERSION and data.get("kind") == "Case"


def load_case(path: str) -> Case:
    return case_from_data(load_yaml_file(path, CaseError), path)


def case_from_data(data: Any, path: str) -> Case:
    import jsonschema

    if not isinstance(data, dict):
        raise CaseError("a case must be a YAML mapping", file=path)
    validator = _validator()
    errors = sorted(validator.iter_errors(data), key=lambda e: len(list(e.absolute_path)))
    if errors:
        e = errors[0]
        msg = e.message
        if e.validator == "additionalProperties":
            extra = [k for k in e.instance if k not in (e.schema.get("properties") or {})]
            msg = ", ".join(f'unknown key "{k}"' for k in extra) or msg
        raise CaseError(msg, file=path, key=_key_path(e.absolute_path))
    md = data.get("metadata") or {}
    name = md.get("name") or os.path.splitext(os.path.basename(path))[0]
    cluster: List[Dict[str, Any]] = []
    for i, obj in enumerate(data.get("cluster") or []):
        if obj.get("kind") == "List":
            for j, item in enumerate(obj.get("items") or []):
                if not isinstance(item, dict) or "kind" not in item:
                    raise CaseError("a List item must be an object with a kind", file=path,
                                    key=f"cluster[{i}].items[{j}]")
                cluster.append(copy.deepcopy(item))
        else:
            cluster.append(copy.deepcopy(obj))
    return Case(path=path, name=name, description=md.get("description", ""), config=data.get("config"),
                seed=int(data.get("seed", 0)), cluster=cluster,
                pods=copy.deepcopy(data.get("pods") or []), expect=data.get("expect") or {},
                plugins=list(data.get("plugins") or []))


def find_cases(paths: List[str]) -> List[str]:
    """Case files under the given files or folders, in path order."""
    out: List[str] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for fn in sorted(files):
                    if fn.endswith((".yaml", ".yml")):
                        full = os.path.join(root, fn)
                        if _looks_like_case(full):
                            out.append(full)
        elif os.path.exists(p):
            out.append(p)
        else:
            raise CaseError("no such file or folder", file=p)
    return out


def _looks_like_case(path: str) -> bool:
    try:
        with open(path, "r", encoding="utf-8") as f:
            head = f.read(4096)
    except OSError:
        return False
    return API_VERSION in head
