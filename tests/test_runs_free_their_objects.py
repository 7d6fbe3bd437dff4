"""A finished run leaves nothing of itself behind (diff, sweep and explore run a case several
times in one process: what one run kept alive added to the next run's peak)."""

from __future__ import annotations

import gc
import glob
import os

from harness.case import load_case, run_case
from harness.cluster import Cluster
from harness.scheduler.scheduler import Scheduler

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _alive(kind) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, kind))


def test_a_run_of_a_dra_case_frees_its_cluster_and_scheduler():
    """DynamicResources' extended-resource cache (v1.35 on) was held in a WeakKeyDictionary
    keyed by the cluster it refers to, so every run's cluster stayed alive."""
    before = (_alive(Cluster), _alive(Scheduler))
    for path in sorted(glob.glob(os.path.join(ROOT, "cases", "dra", "*.yaml")))[:3]:
        case = load_case(path)
        for version in ("v1.35", "v1.36"):
            import dataclasses
            res = run_case(dataclasses.replace(case, kubernetes_version=version, features=None))
            assert res.scheduler is not None
            del res
    assert (_alive(Cluster), _alive(Scheduler)) == before
