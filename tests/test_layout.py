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
