"""Shared test set-up.

pytester's in-process runs (`pytester.runpytest`) drop from sys.modules every module first
imported inside them. numpy's C extension cannot be loaded twice in one process, so a numpy
first imported inside such a run (a case with a float map key, a node table) would break every
later test of the worker that needs it: numpy is imported here, before any of them.

Progress lines follow the wall clock (one after 5 s of a long command), so on a loaded machine a
test could see one it did not ask for: every test starts with the progress clock stopped, and the
tests of progress lines drive their own clock (`ticking_clock`) or interval.
"""

import numpy  # noqa: F401
import pytest

from harness import progress


@pytest.fixture(autouse=True)
def _no_wall_clock_progress(monkeypatch):
    monkeypatch.setattr(progress, "CLOCK", lambda: 0.0)
