"""check_cheap_keys reads a big case's top-level lines in chunks: the lines it finds are those
the regex finds over the whole text (equivalence with the plain path)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness.case.loader import _TOP_SCALAR, _top_scalar_lines

_piece = st.sampled_from(["apiVersion: schedharness/v1alpha1", "kind: Case", "seed: 3", " seed: 4",
                          "replicas : 2 ", "kubernetesVersion: v1.35", "kindx: 1", "- {\"seed\": 1}",
                          "seed:", "é: ü", "\r", "", "x", "\n"])


@settings(max_examples=400, deadline=None)
@given(pieces=st.lists(_piece, max_size=12), seps=st.lists(st.sampled_from(["\n", "\r\n", " ", ""]), max_size=12),
       chunk=st.integers(1, 40))
def test_the_chunked_scan_finds_what_the_regex_finds(tmp_path_factory, pieces, seps, chunk):
    text = "".join(p + (seps[i] if i < len(seps) else "\n") for i, p in enumerate(pieces))
    path = tmp_path_factory.mktemp("t") / "c.yaml"
    path.write_bytes(text.encode("utf-8"))
    want = [(m.group(1), m.group(2)) for m in _TOP_SCALAR.finditer(text)]
    assert _top_scalar_lines(str(path), chunk=chunk) == want


def test_a_file_that_is_not_utf8_raises(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"seed: 1\n\xff\n")
    with pytest.raises(UnicodeDecodeError):
        _top_scalar_lines(str(path), chunk=3)
