"""The conformance kit: checks a plugin against the framework's contract (the way kube-scheduler's
integration tests exercise plugins) on a world of nodes, running pods and probe pods.

    from harness.conformance import check_plugin
    report = check_plugin("Coscheduling", world=World.from_case("cases/gang.yaml"))
    assert report.passed, report.format()

Also `schedharness conformance PLUGIN [--case FILE]` and, under pytest, the `conformance`
fixture. The rules are listed in :data:`RULES`.

Imports: case, scheduler, framework, api and the base modules; never harness.cli or reports
(harness.cli.conformance is the command).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional

from ..errors import UserError
from .reach import reach
from .rules import RULES, Context, Finding
from .world import Mutation, World, default_world

__all__ = ["RULES", "Finding", "Mutation", "Report", "World", "check_plugin", "default_world"]


@dataclass
class Report:
    plugin: str
    origin: str
    world: str
    findings: List[Finding] = field(default_factory=list)
    skipped: Dict[str, str] = field(default_factory=dict)  # rule -> why it does not apply
    rules: List[str] = field(default_factory=list)
    shown: int = 3  # findings shown per rule by format()
    checks: Dict[str, int] = field(default_factory=dict)  # rule -> situations checked
    grown_by: List[str] = field(default_factory=list)  # objects added for what the plugin reads

    @property
    def passed(self) -> bool:
        return not self.failures()

    def failures(self, rule: Optional[str] = None) -> List[Finding]:
        return [f for f in self.findings if f.severity == "error" and (rule is None or f.rule == rule)]

    def not_exercised(self) -> List[str]:
        """Rules that apply to the plugin but found nothing to check on this world (no pod it
        rejects, no node it accepts, ...): shown as NOT EXERCISED, never as a pass. They do not
        fail the check (`passed`), since the world, not the plugin, is short; give the kit a
        case (World.from_case / --case) whose pods exercise them."""
        return [r for r in self.rules if r not in self.skipped and not self.failures(r)
                and not self.checks.get(r, 0)]

    def format(self) -> str:
        lines = [f"conformance of plugin {self.plugin} ({self.origin}) on the {self.world}:"]
        if self.grown_by:
            lines.append(f"  (the world grew by a node or a pod per label or annotation the plugin "
                         f"reads: {', '.join(self.grown_by)})")
        idle = set(self.not_exercised())
        for rule in self.rules:
            if rule in self.skipped:
                lines.append(f"  SKIP {rule}: {self.skipped[rule]}")
                continue
            if rule in idle:
                lines.append(f"  NOT EXERCISED {rule}: nothing on the {self.world} to check it on "
                             f"(0 situations)")
                continue
            errs = self.failures(rule)
            notes = [f for f in self.findings if f.rule == rule and f.severity != "error"]
            n = self.checks.get(rule, 0)
            lines.append(f"  {'FAIL' if errs else 'PASS'} {rule} ({n} situation{'s' if n != 1 else ''} checked)")
            lines += [f"       {f.message}" for f in errs[:self.shown]]
            if len(errs) > self.shown:
                lines.append(f"       ... and {len(errs) - self.shown} more")
            lines += [f"       note: {f.message}" for f in notes[:self.shown]]
            if len(notes) > self.shown:
                lines.append(f"       ... and {len(notes) - self.shown} more notes")
        n_fail = sum(1 for r in self.rules if r not in self.skipped and self.failures(r))
        n_pass = sum(1 for r in self.rules if r not in self.skipped and r not in idle and not self.failures(r))
        lines.append(f"{n_pass} passed, {n_fail} failed, {len(idle)} not exercised, "
                     f"{len(self.skipped)} not applicable")
        return "\n".join(lines)


def check_plugin(name: str, *, registry=None, world: Optional[World] = None,
                 args: Optional[Dict[str, Any]] = None, rules: Optional[Iterable[str]] = None,
                 modules: Iterable[str] = (), grow: bool = True) -> Report:
    """Check one plugin (by its registered name) against the rules (all by default). `world`:
    the objects to run on (default_world(), or World.from_case(path)); `args`: the plugin's
    args (default: the world's case config's pluginConfig for it, else its defaults);
    `modules`: plugin modules to load besides the installed entry points; `grow`: first add to
    the world nodes and pods carrying the labels and annotations the plugin reads (reach.reach)."""
    from ..framework.registry import build_registry, default_registry, origin
    from .subject import args_from_case_config

    modules = list(modules)
    registry = registry or (build_registry(modules) if modules else default_registry())
    if name not in registry:
        raise UserError(f'no plugin named "{name}" is registered (installed: '
                        f'{", ".join(sorted(registry))})')
    world = world or default_world()
    if args is None and world.config is not None:
        import os
        args = args_from_case_config(world.config, name, os.path.dirname(world.path))
    if grow:
        world = reach(name, registry, world, args)
    selected = list(rules) if rules is not None else list(RULES)
    for r in selected:
        if r not in RULES:
            raise UserError(f"no conformance rule {r!r} (rules: {', '.join(RULES)})")
    report = Report(name, origin(registry[name]), world.name, rules=selected, grown_by=list(world.grown_by))
    ctx = Context(name, registry, world, args)
    done: Dict[Any, Optional[str]] = {}
    for r in selected:
        fn = RULES[r][0]
        if fn not in done:
            try:
                done[fn] = fn(ctx)
            except UserError:
                raise
            except Exception as e:  # the kit must not hide a crash as a pass
                ctx.fail(r, f'plugin "{name}": the check could not go on: {type(e).__name__}: {e}')
                done[fn] = None
        if done[fn] is not None:
            report.skipped[r] = done[fn]
    report.findings = [f for f in ctx.findings if f.rule in selected]
    report.checks = dict(ctx.checks)
    return report
