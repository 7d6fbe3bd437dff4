"""The README's "Layout" is the tree's map: every package under harness/ (and every module at its
root) is listed there, and nothing listed there is gone."""

from __future__ import annotations

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def layout_section() -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index("\n## Layout\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def listed_paths(section: str):
    return set(re.findall(r"`((?:harness|builtin_plugins)/[\w./]*)`", section))


def test_every_package_and_root_module_is_on_the_map():
    listed = listed_paths(layout_section())
    harness = os.path.join(ROOT, "harness")
    packages = {f"harness/{d}/" for d in os.listdir(harness)
                if os.path.isdir(os.path.join(harness, d)) and not d.startswith(("_", "."))}
    modules = {f"harness/{m}" for m in os.listdir(harness) if m.endswith(".py") and m != "__init__.py"}
    assert packages | modules <= listed, f"not on the README's map: {sorted((packages | modules) - listed)}"
    assert "builtin_plugins/" in listed


def test_nothing_on_the_map_is_gone():
    gone = [p for p in listed_paths(layout_section()) if not os.path.exists(os.path.join(ROOT, p))]
    assert not gone, f"on the README's map but not in the tree: {gone}"


def strongly_connected(graph, modules):
    """Tarjan's strongly connected components of the import graph, the ones of two or more."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for m in sorted(modules):
        if m not in index:
            visit(m)
    return out


def test_no_import_cycle():
    """No module imports, however indirectly, one that imports it back (function-level imports
    count too): the layers of .importlinter say which way each package imports."""
    import sys

    grimp = __import__("pytest").importorskip("grimp")
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    graph = grimp.build_graph("harness", "builtin_plugins", cache_dir=None)
    cycles = strongly_connected(graph, graph.modules)
    assert not cycles, f"import cycles: {cycles}"


def test_each_package_says_what_it_holds_and_which_way_it_imports():
    """Each package's __init__ docstring: what it holds, and an `Imports:` paragraph."""
    import ast

    folders = [os.path.join(ROOT, "harness", d) for d in sorted(os.listdir(os.path.join(ROOT, "harness")))]
    folders = [ROOT + "/harness", ROOT + "/builtin_plugins"] + folders
    missing = []
    for folder in folders:
        init = os.path.join(folder, "__init__.py")
        if not os.path.isfile(init):
            continue
        with open(init, encoding="utf-8") as f:
            doc = ast.get_docstring(ast.parse(f.read())) or ""
        if "Imports:" not in doc and "layered" not in doc:
            missing.append(os.path.relpath(init, ROOT))
    assert not missing, f"no `Imports:` paragraph in the docstring of {missing}"
