"""`schedharness import DUMP.yaml`: turn a `kubectl get ... -o yaml` dump into a case
(harness.case.importer does the work)."""

from __future__ import annotations


def add_parser(sub) -> None:
    im = sub.add_parser("import", help="turn a `kubectl get ... -o yaml` dump into a case",
                        description="Turn a dump (kubectl get nodes,pods,pv,pvc,sc,... -A -o yaml) "
                                    "into a case: objects the scheduler reads in `cluster`, pending "
                                    "pods in `pods`, completed pods and managedFields dropped.")
    im.add_argument("dump", metavar="DUMP.yaml", help="the dump (a kind: List, or several documents)")
    im.add_argument("-o", "--output", metavar="CASE.yaml", default=None,
                    help="where to write the case (default: standard output)")
    im.add_argument("--name", default=None, help="the case's metadata.name (default: from the file name)")
    im.set_defaults(func=cmd_import)


def cmd_import(args) -> int:
    from ..case.importer import import_dump

    return import_dump(args.dump, args.output, name=args.name)
