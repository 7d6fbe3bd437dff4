"""metav1.Time and metav1.MicroTime on the wire, in the harness's virtual time: seconds (a
float) counted from VIRTUAL_EPOCH (the harness's time 0, the creationTimestamp the case loader
gives every object), RFC 3339 on the wire, truncated as the API server stores them (Time to the
second, MicroTime to the microsecond). Leases (leaderelection) and DRA's binding conditions use
them."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Optional

VIRTUAL_EPOCH = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)  # = harness/case/apiserver._EPOCH


def _micros(seconds: float) -> int:
    """The instant truncated to the microsecond (MicroTime's wire precision)."""
    return round(seconds * 1e9) // 1000


def format_micro_time(seconds: Optional[float]) -> Optional[str]:
    """metav1.MicroTime.MarshalJSON (RFC3339 with 6 fraction digits, UTC); None for the zero time."""
    if seconds is None:
        return None
    t = VIRTUAL_EPOCH + _dt.timedelta(microseconds=_micros(seconds))
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def format_time(seconds: Optional[float]) -> Optional[str]:
    """metav1.Time.MarshalJSON: RFC3339 to the second (the fraction is dropped, not rounded)."""
    if seconds is None:
        return None
    t = VIRTUAL_EPOCH + _dt.timedelta(seconds=_micros(seconds) // 1000000)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Any) -> Optional[float]:
    """An RFC3339 (Micro)Time from a Lease spec back to seconds of virtual time."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).replace("Z", "+00:00")
    t = _dt.datetime.fromisoformat(text) if "." not in text else _parse_fraction(text)
    delta = t - VIRTUAL_EPOCH
    return (delta.days * 86400 + delta.seconds) + delta.microseconds / 1e6


def _parse_fraction(text: str) -> _dt.datetime:
    # Python 3.9's fromisoformat wants exactly 3 or 6 fraction digits.
    head, rest = text.split(".", 1)
    digits = ""
    while rest and rest[0].isdigit():
        digits, rest = digits + rest[0], rest[1:]
    digits = (digits + "000000")[:6]
    return _dt.datetime.fromisoformat(f"{head}.{digits}{rest}")
