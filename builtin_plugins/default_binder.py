"""DefaultBinder (framework/plugins/defaultbinder/default_binder.go)."""

from __future__ import annotations

from harness.apierrors import StatusError, Unreachable
from harness.framework import Plugin, Status, hookimpl

from . import names


class DefaultBinder(Plugin):
    name = names.DefaultBinder

    @hookimpl
    def bind(self, state, pod, node_name):
        """POST pods/binding: the API server sets spec.nodeName and PodScheduled=True."""
        try:
            self.handle.cluster.create_binding(pod, node_name)
        except (StatusError, Unreachable) as e:
            return Status.error(str(e))
        return None


PLUGINS = [DefaultBinder]
