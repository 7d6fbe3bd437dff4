"""DefaultBinder (framework/plugins/defaultbinder/default_binder.go)."""

from __future__ import annotations

from harness.api.objects import update_pod_condition
from harness.framework import Plugin, Status, hookimpl

from . import names


class DefaultBinder(Plugin):
    name = names.DefaultBinder

    @hookimpl
    def bind(self, state, pod, node_name):
        """POST pods/binding: the API server sets spec.nodeName and PodScheduled=True."""
        cluster = self.handle.cluster
        current = cluster.get("Pod", pod.namespace, pod.name)
        if current is None or current.uid != pod.uid:
            return Status.error(f'pods "{pod.name}" not found')
        if current.node_name:
            return Status.error(f'pod {pod.name} is already assigned to node "{current.node_name}"')
        bound = current.with_node(node_name).with_status(
            lambda st: update_pod_condition(st, {"type": "PodScheduled", "status": "True"}))
        cluster.update(bound)
        return None


PLUGINS = [DefaultBinder]
