"""`schedharness explain CASE [POD]`: each attempt's Filter statuses, scores, preemption and pick."""

from __future__ import annotations

from ..errors import UserError
from .options import check_nodes, nodes_options, plugin_option, registry_for, version_options, view


def add_parser(sub) -> None:
    e = sub.add_parser("explain", help="show every node's filter statuses and scores for a pod",
                       description="Run a case and print, for each scheduling attempt of a pod, the "
                                   "filters kube-scheduler ran on each node, the scores, preemption and "
                                   "the pick.")
    e.add_argument("case", metavar="CASE", help="a case file")
    e.add_argument("pod", nargs="?", metavar="POD",
                   help="a pod reference, `name` (namespace default) or `namespace/name`; all pods "
                        "of the case when omitted")
    nodes_options(e)
    plugin_option(e)
    version_options(e)
    e.set_defaults(func=cmd_explain)


def cmd_explain(args) -> int:
    from ..case import load_case, run_case
    from ..case.record_columns import RecordColumnsHook
    from ..case.runner import pod_ref
    from ..progress import Progress
    from ..reports.text import explain

    check_nodes(args)
    progress = Progress("explain")
    with progress.heartbeat("reading the case"):
        case = load_case(args.case)
    progress.tick("case loaded, scheduling", force=True)
    # with a pod named, only its attempts are recorded node by node (a 5000-node case's 300
    # pending pods would each keep 5000 nodes' filter tables); each kept as columns once its
    # cycle ended (record_columns), made whole again while it is printed
    with progress.heartbeat("scheduling"):
        res = run_case(case, registry_for(case, args), explain={pod_ref(args.pod)} if args.pod else True,
                       hooks=RecordColumnsHook())
    progress.tick("scheduled, printing", force=True)
    known = set(res.bindings) | set(res.preempted) | {p.key for p in res.scheduler.cluster.list("Pod")}
    if args.pod and pod_ref(args.pod) not in known:  # before the header: the error is the one line
        raise UserError(f"no pod {pod_ref(args.pod)} in the case", file=args.case, key="pod")
    print(f"case {case.name}: kube-scheduler {case.features.describe()}")
    print(explain(res, args.pod, view(res, args)))
    return 0
