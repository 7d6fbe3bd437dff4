"""`schedharness validate PATH...`: check cases and configurations exactly as `run` would,
without scheduling."""

from __future__ import annotations

import os
from typing import Optional

from ..errors import UserError
from .options import attempt, error, interrupted, plugin_option, registry_for, version_options


def add_parser(sub) -> None:
    v = sub.add_parser("validate", help="validate KubeSchedulerConfiguration or case files",
                       description="Check cases and configurations exactly as `run` would, without "
                                   "scheduling. Exit 2 if any file is invalid.")
    v.add_argument("paths", nargs="+", metavar="PATH",
                   help="case or KubeSchedulerConfiguration files, or folders of them")
    plugin_option(v)
    version_options(v)
    v.set_defaults(func=cmd_validate)


def _validate_case(path: str, args, data=None) -> str:
    """Exactly what `run` does before scheduling: load, default and check every object, build
    the profiles, check the expectations. `data`: the file's document, already read."""
    from ..case.loader import case_from_data, load_case
    from ..case.runner import build_scheduler

    case = load_case(path) if data is None else case_from_data(data, path, copy_objects=False)
    build_scheduler(case, registry_for(case, args))
    return f"{path}: valid case"


def _validate_config(path: str, data, args) -> str:
    from ..config.loader import load_config_data
    from ..framework.registry import build_registry, default_registry
    from ..framework.runtime import Framework
    from ..versions import case_features

    registry = build_registry(args.plugin) if args.plugin else default_registry()
    features = case_features(None, None)
    cfg = load_config_data(data, registry, source=path, features=features)
    for prof in cfg["profiles"]:
        Framework(prof, registry, source=path, features=features)
    return f"{path}: valid KubeSchedulerConfiguration"


def _validate_path(path: str, args, in_folder: bool) -> Optional[str]:
    from ..gcpause import collector_paused, thaw

    try:
        with collector_paused(freeze=True):  # as load_case: a big case's objects (gcpause)
            return _validate_read(path, args, in_folder)
    finally:
        thaw()


def _validate_read(path: str, args, in_folder: bool) -> Optional[str]:
    from ..case.loader import check_cheap_keys, classify_data, classify_file
    from ..yamlfile import load_yaml_file

    verdict, why = classify_file(path) if in_folder else ("", "")
    if verdict in ("case", "invalid"):
        return _validate_case(path, args)
    check_cheap_keys(path)  # a big case's bad seed before its objects are read
    data = load_yaml_file(path, UserError)
    verdict, why = classify_data(data)
    if verdict in ("case", "invalid"):
        return _validate_case(path, args, data)  # (read once: a big case twice would not fit)
    if in_folder and not (isinstance(data, dict) and data.get("kind") == "KubeSchedulerConfiguration"):
        return f"{path}: skipped: {why}"
    return _validate_config(path, data, args)


def cmd_validate(args) -> int:
    from ..progress import Progress

    invalid = 0
    todo = []
    for top in args.paths:
        if os.path.isdir(top):
            found = []
            for root, dirs, names in os.walk(top):
                dirs.sort()
                found += [(os.path.join(root, n), True) for n in sorted(names) if n.endswith((".yaml", ".yml"))]
            if not found:  # as `run` says of a folder without cases
                error(UserError("no YAML files found (cases or KubeSchedulerConfiguration files)", file=top))
                invalid += 1
            todo += found
        elif os.path.exists(top):
            todo.append((top, False))
        else:
            todo.append((top, None))
    progress = Progress("validate")
    for i, (path, in_folder) in enumerate(todo, 1):
        if in_folder is None:
            error(UserError("no such file or folder", file=path))
            invalid += 1
            continue
        try:
            ok, msg = attempt(path, lambda: _validate_path(path, args, in_folder))
        except KeyboardInterrupt:
            interrupted(f"not validated from {path} on")
            return 130
        if not ok:
            invalid += 1
        elif msg:
            print(msg)
        progress.tick(f"{i} of {len(todo)} files")
    return 2 if invalid else 0
