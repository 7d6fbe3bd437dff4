"""DefaultBinder (framework/plugins/defaultbinder/default_binder.go)."""

from __future__ import annotations

from harness.api.objects import Pod
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
        raw = dict(current.raw)
        raw["spec"] = dict(current.spec)
        raw["spec"]["nodeName"] = node_name
        st = dict(raw.get("status") or {})
        conds = [c for c in (st.get("conditions") or []) if c.get("type") != "PodScheduled"]
        conds.append({"type": "PodScheduled", "status": "True"})
        st["conditions"] = conds
        raw["status"] = st
        bound = Pod(raw)
        bound._memo = current._memo
        cluster.update(bound)
        return None


PLUGINS = [DefaultBinder]
