"""Object timestamps on the scheduler's virtual clock.

The harness's API server stamps every object of a case that has no `metadata.creationTimestamp`
with CLUSTER_START, and the scheduler starts at that instant: virtual time 0 (`handle.clock.now()`,
`QueuedPodInfo.timestamp`, `initial_attempt_timestamp`) is CLUSTER_START. A plugin that compares an
object's creationTimestamp with a queue time (as scheduler-plugins' Coscheduling does in its
QueueSort) converts it with :func:`virtual_seconds`.
"""

from __future__ import annotations

import datetime
from typing import Optional

CLUSTER_START = "2026-01-01T00:00:00Z"


def _parse(ts: str) -> Optional[datetime.datetime]:
    text = str(ts).strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.timezone.utc)
    return dt


_START = _parse(CLUSTER_START)


def virtual_seconds(ts: Optional[str]) -> Optional[float]:
    """An RFC 3339 timestamp (metav1.Time) as seconds of virtual time (negative: before the
    scheduler started); None when absent or unparsable."""
    if not ts:
        return None
    dt = _parse(ts)
    if dt is None:
        return None
    return (dt - _START).total_seconds()
