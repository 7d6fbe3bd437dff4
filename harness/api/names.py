"""names.SimpleNameGenerator (k8s.io/apiserver/pkg/storage/names): a generateName's name, its 5
random characters derived from a seed so that a case runs the same every time."""

from __future__ import annotations

import hashlib

_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # utilrand's alphabet
_MAX_NAME_LENGTH = 63
_RANDOM_LENGTH = 5


def generate_name(base: str, seed: str) -> str:
    """names.SimpleNameGenerator.GenerateName, with the 5 random characters derived from seed
    (so a case runs the same every time)."""
    max_generated = _MAX_NAME_LENGTH - _RANDOM_LENGTH
    if len(base) > max_generated:
        base = base[:max_generated]
    digest = hashlib.sha256(seed.encode()).digest()
    return base + "".join(_ALPHANUMS[b % len(_ALPHANUMS)] for b in digest[:_RANDOM_LENGTH])
