"""Property test (hypothesis): random mutations of the valid cases under cases/ (a value replaced
by one of another type or an extreme one, a key dropped or added, an item duplicated, a value
wrapped in a list) given to `validate` and `run` as a user would give them. Whatever the input:
exit 0, 1 or 2 only, no traceback, no internal error, no hang (each command bounded by an alarm),
and no value below a Pod's or a Node's metadata/spec/status written in place while it runs
(sharing's rule, harness/sharing.py; tests/sample/shared_values.py).
Derandomized, so CI sees the same examples every time; 200 examples, about 25 s on the development machine."""

from __future__ import annotations

import copy
import glob
import math
import os
import signal
import sys

import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness.cli import main  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "tests", "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)
from shared_values import every_run_watched  # noqa: E402


def _seed_cases():
    """Small valid cases (a few kB) of every folder, parsed once."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "cases", "**", "*.yaml"), recursive=True)):
        if os.path.getsize(path) > 3000:
            continue
        with open(path) as f:
            data = yaml.safe_load(f)
        if isinstance(data, dict) and data.get("kind") == "Case" and not data.get("plugins") \
                and not isinstance(data.get("config"), str) and not _has_dra_objects(data):
            out.append((os.path.relpath(path, ROOT), data))
    return out


DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")


def _has_dra_objects(data) -> bool:
    """DynamicResources objects are left out until they are validated as the API server
    validates them (issue 15's other half: pkg/apis/resource/validation); until then a malformed
    one is an internal error line, which this test counts as a failure."""
    objects = list(data.get("cluster") or []) + [o for st in data.get("steps") or [] if isinstance(st, dict)
                                                 for o in (st.get("create") or st.get("update") or [])]
    return any(isinstance(o, dict) and o.get("kind") in DRA_KINDS for o in objects)


SEEDS = _seed_cases()

# values that once crashed or hung something, and plain ones of every YAML type
ODD_VALUES = [None, True, False, 0, -1, 1, 2 ** 31, 2 ** 63, -(2 ** 63) - 1, 10 ** 4000, 1.5, -0.0,
              math.inf, -math.inf, math.nan, "", " ", "x", "-", "default", "node-a", "kube-system",
              "Node", "Pod", "1", "1e400", "1e99999999", "100Gi", "-1", "0.001", "\u00e9t\u00e9", "a" * 300, "\0",
              [], [None], ["x"], [1, 2], {}, {"a": 1}, {"": None}, {1: "x"}, {"kind": "Pod"},
              {"name": "x"}, {"namespace": ["a"]}]
KEYS = ["kind", "apiVersion", "metadata", "name", "namespace", "spec", "status", "replicas", "seed",
        "steps", "expect", "bindings", "rate", "clock", "advance", "delete", "create", "update",
        "priority", "nodeName", "containers", "resources", "requests", "cpu", "labels", 1, None]

values = st.sampled_from(ODD_VALUES).map(copy.deepcopy)


def _paths(obj, prefix=()):
    """Every path into a document (mappings by key, lists by index)."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _get(obj, path):
    for p in path:
        obj = obj[p]
    return obj


@st.composite
def mutated_cases(draw):
    name, data = draw(st.sampled_from(SEEDS))
    data = copy.deepcopy(data)
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(data))
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["replace", "replace", "drop", "add", "duplicate", "wrap"]))
        if not path:
            if op == "add" and isinstance(data, dict):
                data[draw(st.sampled_from(KEYS))] = draw(values)
            continue
        parent, last = _get(data, path[:-1]), path[-1]
        if op == "replace":
            parent[last] = draw(values)
        elif op == "drop":
            del parent[last]
        elif op == "add":
            target = parent[last]
            if isinstance(target, dict):
                target[draw(st.sampled_from(KEYS))] = draw(values)
            elif isinstance(target, list):
                target.append(draw(values))
            else:
                parent[last] = draw(values)
        elif op == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
        elif op == "wrap":
            parent[last] = [parent[last]]
    return name, data


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def _command(argv, capsys, seconds=60):
    """main(argv) bounded by an alarm (a hang fails the example); (exit code, stdout, stderr)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        rc = main(argv)
    except _Hang:
        pytest.fail(f"{' '.join(argv)} did not end within {seconds}s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="bounds each command with SIGALRM")
@settings(max_examples=200, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(mutated_cases())
def test_mutated_case_ends_cleanly(tmp_path_factory, capsys, mutated):
    name, data = mutated
    folder = tmp_path_factory.mktemp("mutated")
    path = str(folder / os.path.basename(name))
    old_limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    if old_limit is not None:  # writing a 4000-digit value is the test's business, not the case's
        sys.set_int_max_str_digits(0)
    try:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    finally:
        if old_limit is not None:
            sys.set_int_max_str_digits(old_limit)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    for command in ("validate", "run"):
        with every_run_watched() as watches:
            rc, out, err = _command([command, path], capsys)
        where = f"{command} of a mutation of {name}:\n{text[:3000]}\n---\n{err}"
        assert rc in (0, 1, 2), where
        assert "Traceback" not in err and "internal error" not in err, where
        if rc == 2:
            assert err.startswith("error: "), where
        for w in watches:  # sharing's rule (harness/sharing.py): no shared value written in place
            written = w.written()
            assert not written, f"{where}\nwritten in place: {written[0][:300]}"
