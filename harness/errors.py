"""Errors a user can cause. The CLI prints them as one line and exits with code 2."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user: a file, a key and what is wrong with it."""

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None):
        self.file = file
        self.key = key
        self.detail = message
        parts = []
        if file:
            parts.append(str(file))
        if key:
            parts.append(key)
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ConfigError(UserError):
    """An invalid KubeSchedulerConfiguration."""


class CaseError(UserError):
    """An invalid case file."""


_FIELD_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./$[]")


def shown_key(key: str) -> str:
    """A mapping key as an error may show it: a key that could be a field name (or a path of
    them) as it is; anything else, such as a line of a file that is not YAML read as a key,
    only by its length, so that an error never echoes a file's content beyond its key path."""
    if 0 < len(key) <= 200 and all(c in _FIELD_NAME_CHARS for c in key):
        return key
    return f"<a key of {len(key)} characters that is no field name>"
