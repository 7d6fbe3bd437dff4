"""pytest fixtures of the conformance kit, registered through schedharness' pytest11 plugin:

    def test_my_plugin_conforms(conformance):
        conformance.assert_conforms("MyPlugin", world=conformance.world_from_case("cases/a.yaml"))
"""

from __future__ import annotations

import pytest

from . import Report, World, check_plugin, default_world


class ConformanceKit:
    """`check` returns the Report; `assert_conforms` fails the test with the report's text."""

    world_from_case = staticmethod(World.from_case)
    default_world = staticmethod(default_world)

    def check(self, plugin: str, **kwargs) -> Report:
        return check_plugin(plugin, **kwargs)

    def assert_conforms(self, plugin: str, **kwargs) -> Report:
        report = check_plugin(plugin, **kwargs)
        if not report.passed:
            pytest.fail(report.format(), pytrace=False)
        return report


@pytest.fixture
def conformance() -> ConformanceKit:
    """The conformance kit (harness.conformance) for plugin tests."""
    return ConformanceKit()


@pytest.fixture
def conformance_world() -> World:
    """A fresh copy of the kit's default world, to extend with a plugin's own objects."""
    return default_world()
