"""helper/normalize_score_test.go: TestDefaultNormalizeScore."""

from __future__ import annotations

import pytest

from builtin_plugins.helper import default_normalize_score
from harness.framework import NodeScore


@pytest.mark.parametrize("reverse,scores,want", [
    (False, [1, 2, 3, 4, 5], [20, 40, 60, 80, 100]),
    (True, [1, 2, 3, 4, 5], [80, 60, 40, 20, 0]),
    (False, [1000, 10, 20, 30, 40], [100, 1, 2, 3, 4]),
    (True, [1000, 10, 20, 30, 40], [0, 99, 98, 97, 96]),
    (False, [1, 1, 1, 1], [100, 100, 100, 100]),
    (True, [1, 1, 1, 1], [0, 0, 0, 0]),
    (False, [0, 0, 0, 0], [0, 0, 0, 0]),
    (True, [0, 0, 0, 0], [100, 100, 100, 100]),
    (False, [50, 80, 0], [62, 100, 0]),   # truncating division: 100*50/80 = 62
    (True, [1, 5, 0], [80, 0, 100]),
])
def test_default_normalize_score(reverse, scores, want):
    ns = [NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    assert default_normalize_score(100, reverse, ns) is None
    assert [n.score for n in ns] == want
