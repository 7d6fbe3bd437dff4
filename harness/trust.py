"""What a case may reach (README "What a case may cause"): a case is data. The files it names
(`config`, `cluster.files`, TLS files of its extenders) resolve inside its tree, as kustomize's
load restrictor (LoadRestrictionsRootOnly) keeps a kustomization inside its root; the Python
modules it names (`plugins`, the modules of `extenders[].python`) are installed
`schedharness.plugins` entry points or files inside that tree, as pytest's conftest.py files
come from the rootdir down. `--allow-outside-root` lifts the restriction on paths and files
(the user's choice, on the command line); `-p MODULE` on the command line may import any module.

A case's tree is its root folder: the rootdir pytest would pick for the folder given on the
command line that holds the case (its nearest ancestor with a pytest.ini, pyproject.toml, tox.ini
or setup.cfg: the project it belongs to), else that folder itself (`run cases/`: `cases/`; `run
cases/a.yaml`: `cases/`); for a case no folder on the command line holds, its own folder; under
pytest, the rootdir. Paths are compared with symlinks resolved on both sides, as kustomize does.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import os
import sys
from dataclasses import dataclass
from typing import FrozenSet, Iterable, List, Optional, Tuple

from .errors import CaseError, UserError

ENTRY_POINT_GROUP = "schedharness.plugins"  # the entry points plugin packages declare

ALLOW_OUTSIDE_ROOT_FLAG = "--allow-outside-root"

# the roots of this run (the folders given on the command line, the pytest rootdir) and the
# --allow-outside-root choice; set by the CLI and the pytest plugin, read when a case loads
_ROOTS: Tuple[str, ...] = ()
_ALLOW_OUTSIDE = False


@dataclass(frozen=True)
class Tree:
    """The tree a case may reach: its root folder (real path) and whether the run allows paths
    outside it."""

    root: str
    allow_outside: bool = False


@dataclass(frozen=True)
class LocalModule:
    """A module a case names, found as a file inside its tree: imported from that file only."""

    name: str
    file: str  # the module's .py file (a package's __init__.py)
    base: str  # the folder its top-level name is imported from

    def __str__(self) -> str:
        return self.name


def set_roots(paths: Iterable[str], allow_outside: bool = False) -> Tuple[Tuple[str, ...], bool]:
    """Set the run's roots (folders given on the command line; a file stands for its folder) and
    --allow-outside-root; returns the previous setting for restore_roots."""
    global _ROOTS, _ALLOW_OUTSIDE
    saved = (_ROOTS, _ALLOW_OUTSIDE)
    roots = []
    for p in paths:
        if not isinstance(p, str) or not p or "\0" in p:
            continue
        folder = _real(p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)))
        roots.append(project_root(folder) or folder)
    _ROOTS, _ALLOW_OUTSIDE = tuple(roots), bool(allow_outside)
    return saved


PROJECT_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def project_root(folder: str) -> Optional[str]:
    """The folder, or its nearest ancestor, holding one of pytest's ini files (pytest.ini,
    pyproject.toml, tox.ini, setup.cfg): the rootdir pytest would pick for it; None if none."""
    here = folder
    while True:
        if any(os.path.isfile(os.path.join(here, f)) for f in PROJECT_FILES):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def restore_roots(saved: Tuple[Tuple[str, ...], bool]) -> None:
    global _ROOTS, _ALLOW_OUTSIDE
    _ROOTS, _ALLOW_OUTSIDE = saved


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def tree_of(case_path: str) -> Tree:
    """The tree of the case at `case_path`: the deepest root of the run that holds it, else its
    own folder."""
    own = _real(os.path.dirname(os.path.abspath(case_path)))
    holding = [r for r in _ROOTS if _inside(own, r)]
    return Tree(max(holding, key=len) if holding else own, _ALLOW_OUTSIDE)


def _outside(what: str, tree: Tree) -> str:
    return (f"{what} is outside the case's tree {tree.root} (a case reads only files inside the "
            f"folder given on the command line, or its own folder; {ALLOW_OUTSIDE_ROOT_FLAG} lifts this)")


def resolve_path(name: str, case_path: str, tree: Tree, file: str, key: str) -> str:
    """The path `name` (relative to the case's folder) if it lies inside the tree, symlinks
    resolved (kustomize's RestrictionRootOnly), else a CaseError naming the case and the key.
    The message repeats the name as the case wrote it, never anything read from the file."""
    full = os.path.normpath(os.path.join(os.path.dirname(case_path), name))
    if tree.allow_outside:
        return full
    if not _inside(_real(full), tree.root):
        raise CaseError(_outside(f"{name[:200]!r}", tree), file=file, key=key)
    return full


# the case whose configuration is being loaded: files its extenders' tlsConfig names are opened
# only inside its tree (check_open)
_READING: "contextvars.ContextVar[Optional[Tuple[Tree, str, str]]]" = contextvars.ContextVar(
    "schedharness_reading_for", default=None)


@contextlib.contextmanager
def reading_for(tree: Optional[Tree], case_path: str, key: str = "config"):
    """While loading the configuration of the case at case_path (its `config` key): the files
    it names are checked by check_open."""
    token = _READING.set((tree, case_path, key) if tree is not None else None)
    try:
        yield
    finally:
        _READING.reset(token)


def check_open(path: str, key: str) -> None:
    """Before a file a configuration names is opened (Go opens it relative to the current
    folder): inside the tree of the case being loaded, if any, or a CaseError."""
    cur = _READING.get()
    if cur is None or cur[0].allow_outside:
        return
    tree, case_path, config_key = cur
    if not _inside(_real(path), tree.root):
        raise CaseError(_outside(f"{path[:200]!r}", tree), file=case_path, key=f"{config_key}: {key}")


# ---------------------------------------------------------------------------------------------
# modules
# ---------------------------------------------------------------------------------------------
_EP_MODULES: Optional[Tuple[FrozenSet[str], FrozenSet[str]]] = None


def entry_points() -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """(entry point names, their modules) of the installed `schedharness.plugins` group."""
    global _EP_MODULES
    if _EP_MODULES is None:
        import importlib.metadata

        names, modules = {"builtin"}, {"builtin_plugins"}
        for dist in importlib.metadata.distributions():
            try:
                eps = list(dist.entry_points)
            except Exception:  # noqa: BLE001 - a broken dist-info names nothing
                continue
            for ep in eps:
                if ep.group == ENTRY_POINT_GROUP:
                    names.add(ep.name)
                    modules.add(ep.value.split(":")[0].strip())
        _EP_MODULES = (frozenset(names), frozenset(modules))
    return _EP_MODULES


def is_entry_point_module(name: str) -> bool:
    """An installed `schedharness.plugins` entry point (its name), its module or a submodule."""
    names, modules = entry_points()
    return name in names or any(name == m or name.startswith(m + ".") for m in modules)


def _search_folders(case_path: str, tree: Tree) -> List[str]:
    """Where a case's modules are looked for: the case's folder and its `plugins/`, then each
    folder above it up to the tree's root and its `plugins/` (conftest.py's way)."""
    out: List[str] = []
    here = os.path.dirname(os.path.abspath(case_path))
    while True:
        out += [here, os.path.join(here, "plugins")]
        if _real(here) == tree.root or not _inside(_real(here), tree.root):
            break
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return out


def resolve_module(name: str, case_path: str, tree: Tree, file: str, key: str) -> Optional[LocalModule]:
    """A module a case names: None for an installed schedharness.plugins entry point (loaded with
    every registry already), a LocalModule for a file inside the case's tree, else a CaseError
    (the standard library, site-packages, a file outside the tree)."""
    if not isinstance(name, str) or not name or not all(p.isidentifier() for p in name.split(".")):
        raise CaseError(f"{str(name)[:80]!r} is no module name (dotted identifiers such as "
                        f"my_plugins; relative names and file paths are not modules)", file=file, key=key)
    if is_entry_point_module(name):
        return None
    rel = os.path.join(*name.split("."))
    for folder in _search_folders(case_path, tree):
        for cand in (rel + ".py", os.path.join(rel, "__init__.py")):
            path = os.path.join(folder, cand)
            if os.path.isfile(path):
                if not tree.allow_outside and not _inside(_real(path), tree.root):
                    raise CaseError(_outside(f"module {name!r} ({os.path.join(folder, cand)})", tree),
                                    file=file, key=key)
                depth = name.count(".") + (1 if cand.endswith("__init__.py") else 0)
                base = os.path.dirname(path)
                for _ in range(depth):
                    base = os.path.dirname(base)
                return LocalModule(name, _real(path), base)
    raise CaseError(f"module {name!r} is neither a file in the case's tree ({tree.root}, its "
                    f"plugins/ folders) nor an installed schedharness.plugins entry point: a case "
                    f"may not import other modules (the command line's -p may)", file=file, key=key)


def import_local(mod: LocalModule, what: str) -> object:
    """Import a LocalModule from its file (isolated: see guarded_import). A module of that name
    already imported from elsewhere (the standard library's, another tree's) is an error, not
    a silent substitute."""
    import importlib

    have = sys.modules.get(mod.name)
    if have is not None:
        if _module_file(have) == mod.file:
            return have
        raise UserError(f"{what}: the name {mod.name!r} is taken by a module already imported "
                        f"from {_module_file(have) or 'the interpreter'}; rename {mod.file}")
    sys.path.insert(0, mod.base)
    try:
        module = guarded_import(lambda: importlib.import_module(mod.name), what)
    finally:
        try:
            sys.path.remove(mod.base)
        except ValueError:  # the module removed it itself
            pass
    if _module_file(module) != mod.file:
        raise UserError(f"{what}: the name {mod.name!r} is taken by a module already imported from "
                        f"{_module_file(module) or 'the interpreter'}; rename {mod.file}")
    return module


def _module_file(module) -> str:
    f = getattr(module, "__file__", None)
    return _real(f) if isinstance(f, str) else ""


def guarded_import(load, what: str):
    """load() (an import, which runs the module's code) isolated: whatever it raises, even
    SystemExit or KeyboardInterrupt, and anything it prints, becomes one UserError saying `what`
    and where it was raised, so that one broken plugin module never ends the run, stops the
    other cases or writes into the run's output."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result = load()
    except (Exception, SystemExit, KeyboardInterrupt) as e:  # noqa: BLE001 - foreign code at import
        raise UserError(f"{what}: {_raised(e)}") from None
    for stream, text in (("standard output", out.getvalue()), ("standard error", err.getvalue())):
        if text:
            raise UserError(f"{what}: the module wrote {len(text)} characters to {stream} when "
                            f"imported (a plugin module must not print)")
    return result


__all__ = ["ALLOW_OUTSIDE_ROOT_FLAG", "check_open", "reading_for", "LocalModule", "Tree", "guarded_import", "import_local",
           "is_entry_point_module", "resolve_module", "resolve_path", "restore_roots", "set_roots",
           "tree_of"]

def _raised(e: BaseException) -> str:
    """`Type: message (file:line)` of an exception from a plugin's code."""
    import os
    import traceback

    if isinstance(e, SyntaxError) and e.filename:
        return f"SyntaxError: {e.msg} ({os.path.basename(e.filename)}:{e.lineno})"
    if isinstance(e, SystemExit):
        text = f"the module called sys.exit({e.code!r})"
    elif isinstance(e, KeyboardInterrupt):
        text = "the module raised KeyboardInterrupt"
    elif isinstance(e, RecursionError):
        text = "RecursionError: endless recursion"
    else:
        text = f"{type(e).__name__}: {str(e)[:300]}" if str(e) else type(e).__name__
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "importlib" not in f.filename]
    return text + (f" ({os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else "")
