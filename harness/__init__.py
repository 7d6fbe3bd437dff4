"""schedharness: run kube-scheduler v1.34's scheduling pipeline on YAML cases, without a cluster."""

__version__ = "0.1.0"


def version() -> str:
    """The installed distribution's version, else the source tree's."""
    try:
        from importlib.metadata import version as dist_version

        return dist_version("kube-scheduler-harness")
    except Exception:  # not installed: the source tree's version
        return __version__
