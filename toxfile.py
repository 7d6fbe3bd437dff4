"""tox's inline hook file (loaded by tox 4 from the project root, nothing to install): lets
`tox -e py39,...,py313` find pyenv's interpreters without `pyenv global`. The interpreters under
$PYENV_ROOT/versions (default ~/.pyenv/versions) are tried first during Python discovery, as
`tox --discover` would; whatever else is on PATH still counts."""

from __future__ import annotations

import glob
import os

from tox.plugin import impl


def pyenv_pythons():
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = []
    for d in sorted(glob.glob(os.path.join(root, "versions", "*", "bin"))):
        exes = sorted(glob.glob(os.path.join(d, "python3.[0-9]*")))
        exes = [e for e in exes if os.path.basename(e).replace("python", "").replace(".", "").isdigit()]
        if exes:
            found.append(exes[0])
    return found


@impl
def tox_add_core_config(core_conf, state) -> None:
    options = state.conf.options
    options.discover = list(getattr(options, "discover", None) or []) + pyenv_pythons()
