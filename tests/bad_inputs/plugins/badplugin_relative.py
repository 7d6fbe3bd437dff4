from . import sibling  # noqa: F401
