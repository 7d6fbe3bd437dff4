"""A helper shared by tests: the input the API server (or the case loader) refuses is one error
line naming the file and the key, exit code 2, under both `validate` and `run`."""

from __future__ import annotations

from harness.cli import main


def refused(path, capsys, fragment):
    for cmd in ("validate", "run"):
        rc = main([cmd, path])
        err = capsys.readouterr().err
        assert rc == 2, err
        assert fragment in err, err
        assert len([x for x in err.splitlines() if x.strip()]) == 1, err
