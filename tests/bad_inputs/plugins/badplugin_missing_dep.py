import no_such_dependency_anywhere  # noqa: F401
