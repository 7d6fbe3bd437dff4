"""The scheduler (pkg/scheduler): one scheduling attempt (schedule_one, schedule_one_podgroup),
the scheduling queue (queue, unschedulable_pods), the cache and snapshot (cache, snapshot,
node_tree), extenders, the event handlers and the run loop (scheduler, events), the records of
each attempt (cycle_records).

Imports: config, framework, api, versions, the simulated cluster and the base modules; never
the case, leaderelection or anything above (the case runs the scheduler).
"""
