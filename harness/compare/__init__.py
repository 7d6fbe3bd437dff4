"""Cases run under variations and their outcomes compared: a case under another configuration
or version as a picklable task for processes and Dask (outcomes), two configurations or
versions side by side (diff), a weight or argument swept over values (sweep), kube-scheduler's
random choices drawn at random (explore). The commands are in harness.cli.

Imports: case, scheduler, config, framework, api, versions and the base modules; never
harness.cli, reports or bench.
"""
