"""`schedharness conformance PLUGIN`: the conformance kit from the command line."""

from __future__ import annotations

from ..errors import UserError


def add_parser(sub) -> None:
    c = sub.add_parser("conformance", help="check a plugin against the framework's contract")
    c.add_argument("plugin", nargs="?", help="the plugin's registered name")
    c.add_argument("--case", action="append", default=[],
                   help="check on this case's cluster and pods (repeatable; default: a built-in world)")
    c.add_argument("--rule", action="append", default=None, help="only this rule (repeatable)")
    c.add_argument("--args", default=None, help="a YAML file with the plugin's args")
    c.add_argument("-p", "--plugin-module", action="append", default=[],
                   help="a Python module to load as a plugin (besides installed entry points)")
    c.add_argument("--no-grow", action="store_true",
                   help="run on the world as given (default: first add nodes and pods carrying the "
                        "labels and annotations the plugin reads)")
    c.add_argument("--list-rules", action="store_true", help="list the rules and exit")
    c.add_argument("--allow-outside-root", action="store_true", default=False,
                   help="let a --case read files outside its folder (see `run --help`)")
    from .options import version_options
    version_options(c)
    c.set_defaults(func=cmd_conformance)


def cmd_conformance(args) -> int:
    from ..yamlfile import load_yaml_file
    from ..conformance import RULES, World, check_plugin

    if args.list_rules:
        for name, (_, text) in RULES.items():
            print(f"{name}: {text}")
        return 0
    if not args.plugin:
        raise UserError("conformance: name the plugin to check (schedharness conformance PLUGIN)")
    plugin_args = None
    if args.args:
        plugin_args = load_yaml_file(args.args, UserError)
        if not isinstance(plugin_args, dict):
            raise UserError("plugin args must be a mapping", file=args.args)
    worlds = [World.from_case(p) for p in args.case] or [None]
    failed = False
    for world in worlds:
        try:
            report = check_plugin(args.plugin, world=world, args=plugin_args, rules=args.rule,
                                  modules=args.plugin_module, grow=not args.no_grow)
        except UserError as e:
            raise _args_error(e, args.args) from None
        print(report.format())
        failed = failed or not report.passed
    return 1 if failed else 0


def _args_error(e: UserError, args_file) -> UserError:
    """An error in the --args file's args names that file and the key in it (not the world's
    configuration they were put in)."""
    import re

    m = re.search(r"pluginConfig\[0\]\.args(?:\.|: )(.*)", str(e)) if args_file else None
    if m is None:
        return e
    key, _, detail = m.group(1).partition(": ")
    return UserError(detail or m.group(1), file=args_file, key=key if detail else None)
