"""Helpers shared by tests that write case files: write one, and check that an input the API
server (or the case loader) refuses is one error line naming the file and the key, exit code 2,
under both `validate` and `run`."""

from __future__ import annotations

import yaml

from harness.cli import main


def write_case(tmp_path, name, data, **extra):
    """The case `data` (with `extra` on top) as tmp_path/<name>.yaml; its path."""
    data = dict(data, **extra)
    p = tmp_path / f"{name}.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(p)


def refused(path, capsys, fragment):
    for cmd in ("validate", "run"):
        rc = main([cmd, path])
        err = capsys.readouterr().err
        assert rc == 2, err
        assert fragment in err, err
        assert len([x for x in err.splitlines() if x.strip()]) == 1, err
