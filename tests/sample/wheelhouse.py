"""A wheelhouse made from the distributions installed in the running environment, for pip to
install from with no index (PIP_NO_INDEX, PIP_FIND_LINKS): tests that build real environments
(tox) then need no network and get the very versions the suite runs with.

Each distribution a set of requirements needs (with their extras and environment markers,
transitively) is packed back into a wheel from the files its RECORD lists (its dist-info's
WHEEL gives the tag; scripts outside site-packages are left out, as pip writes the entry
points' scripts itself); virtualenv's embedded wheels (pip, setuptools) are copied beside
them, for build backends."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as metadata
import os
import shutil
import zipfile
from typing import Dict, Iterable, Set

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

_SKIPPED = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")


def needed(requirements: Iterable[str]) -> Dict[str, Set[str]]:
    """Installed distribution name -> the extras asked of it, for `requirements` and all they
    require in this environment."""
    env = default_environment()
    want: Dict[str, Set[str]] = {}
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        extras = set(req.extras)
        if name in want and extras <= want[name]:
            continue
        want.setdefault(name, set()).update(extras)
        dist = metadata.distribution(name)
        for line in dist.requires or []:
            sub = Requirement(line)
            if sub.marker is None or any(sub.marker.evaluate(dict(env, extra=e)) for e in want[name] | {""}):
                todo.append(sub)
    return want


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def pack(name: str, out_dir: str) -> str:
    """The installed distribution `name` as a wheel in out_dir; its path."""
    dist = metadata.distribution(name)
    tags = [line.split(":", 1)[1].strip() for line in (dist.read_text("WHEEL") or "").splitlines()
            if line.startswith("Tag:")]
    # the compressed tag set (`py2.py3-none-any`), as the wheel was named
    parts = [list(dict.fromkeys(t.split("-")[i] for t in tags)) for i in range(3)] if tags else [["py3"], ["none"], ["any"]]
    tag = "-".join(".".join(p) for p in parts)
    stem = f"{canonicalize_name(dist.metadata['Name']).replace('-', '_')}-{dist.version}"
    path = os.path.join(out_dir, f"{stem}-{tag}.whl")
    info_dir = next(str(f).split("/")[0] for f in dist.files or [] if str(f).split("/")[0].endswith(".dist-info"))
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for f in dist.files or []:
            arcname = str(f)
            if arcname.startswith("..") or "__pycache__" in arcname:
                continue
            if arcname.startswith(info_dir + "/") and arcname.split("/", 1)[1] in _SKIPPED:
                continue
            src = f.locate()
            if not os.path.isfile(src):
                continue
            with open(src, "rb") as fh:
                data = fh.read()
            zf.writestr(arcname, data)
            record.append(_record_line(arcname, data))
        record.append(f"{info_dir}/RECORD,,")
        zf.writestr(f"{info_dir}/RECORD", "\n".join(record) + "\n")
    return path


def build(requirements: Iterable[str], out_dir: str, leave_out: Iterable[str] = ()) -> str:
    """A wheelhouse in out_dir for `requirements` (less the distributions named in
    `leave_out`, which pip builds from their paths), with virtualenv's embedded wheels."""
    os.makedirs(out_dir, exist_ok=True)
    skip = {canonicalize_name(n) for n in leave_out}
    for name in needed(requirements):
        if name not in skip:
            pack(name, out_dir)
    import virtualenv.seed.wheels.embed as embed

    embedded = os.path.dirname(embed.__file__)
    for whl in os.listdir(embedded):
        if whl.endswith(".whl"):
            shutil.copy(os.path.join(embedded, whl), out_dir)
    return out_dir
