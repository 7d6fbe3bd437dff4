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
