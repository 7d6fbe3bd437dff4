"""`bench`'s library: scheduler_perf's workload files (workloads), the runner of their ops
(runner), the benchmark of a case (bench_case), what is measured (measure) and the forked child
each benchmark runs in (isolated). harness.cli.bench is the command.

Imports: case, scheduler, config, builtin_plugins (the DRA allocator the DRA workloads use),
framework, api, versions and the base modules; never harness.cli, reports or compare.
"""
