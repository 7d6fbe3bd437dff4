"""The pods waiting at Permit (framework/runtime/waiting_pods_map.go), in virtual time: each
plugin's deadline, allow / reject / preempt, the timeout's rejection."""

from __future__ import annotations

from typing import Dict, List, Optional

from ..api.duration import format_duration
from .status import Code, Status


def go_duration(seconds: float) -> str:
    """time.Duration.String() for a duration in seconds (e.g. 5s, 1m30s, 500ms)."""
    return format_duration(int(round(seconds * 1e9)))


class WaitingPod:
    """A pod held at Permit (runtime/waiting_pods_map.go), in virtual time."""

    def __init__(self, pod, plugins_wait_time: Dict[str, float], now: float):
        self.pod = pod
        self.wait_time = dict(plugins_wait_time)
        self.pending_plugins: Dict[str, float] = {p: now + t for p, t in plugins_wait_time.items()}
        self.result: Optional[Status] = None
        self.done = False

    def get_pending_plugins(self) -> List[str]:
        return sorted(self.pending_plugins)

    def allow(self, plugin: str) -> None:
        self.pending_plugins.pop(plugin, None)
        if not self.pending_plugins and not self.done:
            self.done = True
            self.result = None

    def reject(self, plugin: str, msg: str) -> bool:
        """Reject: the wait ends Unschedulable; False when it had already ended (v1.36 says
        so; earlier versions ignore the answer)."""
        return self._stop_with_status(Code.Unschedulable, plugin, msg)

    def preempt(self, plugin: str, msg: str) -> bool:
        """Preempt (v1.36): the wait ends with an Error, not a rejection, so the pod is retried
        after the error backoff instead of parked as unschedulable; False when it had already
        ended."""
        return self._stop_with_status(Code.Error, plugin, msg)

    def _stop_with_status(self, code: Code, plugin: str, msg: str) -> bool:
        """stopWithStatus."""
        if self.done:
            return False
        self.done = True
        self.result = Status(code, msg, plugin=plugin)
        return True

    def expire(self, now: float) -> None:
        for plugin, deadline in sorted(self.pending_plugins.items(), key=lambda kv: kv[1]):
            if deadline <= now:
                self.reject(plugin, f"rejected due to timeout after waiting "
                                    f"{go_duration(self.wait_time[plugin])} at plugin {plugin}")
                return

    def next_deadline(self) -> Optional[float]:
        return min(self.pending_plugins.values()) if self.pending_plugins and not self.done else None
