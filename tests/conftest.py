"""Shared test set-up.

pytester's in-process runs (`pytester.runpytest`) drop from sys.modules every module first
imported inside them. numpy's C extension cannot be loaded twice in one process, so a numpy
first imported inside such a run (a case with a float map key, a node table) would break every
later test of the worker that needs it: numpy is imported here, before any of them.
"""

import numpy  # noqa: F401
