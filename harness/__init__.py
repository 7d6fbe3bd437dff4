"""schedharness: kube-scheduler's scheduling (v1.34, v1.35, v1.36) run on YAML cases, without a
cluster.

Where to start: harness.cli (the `schedharness` command: `run` loads a case with
harness.case.loader and runs it with harness.case.runner), harness.scheduler.schedule_one (one
scheduling attempt, as schedule_one.go), harness.framework (the plugin API: hookspecs, Status,
NodeInfo; the framework runtime of a profile) and builtin_plugins (the in-tree plugins). The
packages are layered, each importing only from those below it (README "Layout", .importlinter):
cli > reports > compare | bench | conformance > case > scheduler | leaderelection > config >
builtin_plugins > framework > api > versions > the base modules at this root (errors, apierrors,
yamlfile, gcpause, progress, trust, cluster).
"""

__version__ = "0.1.0"


def version() -> str:
    """The installed distribution's version, else the source tree's."""
    try:
        from importlib.metadata import version as dist_version

        return dist_version("kube-scheduler-harness")
    except Exception:  # not installed: the source tree's version
        return __version__
