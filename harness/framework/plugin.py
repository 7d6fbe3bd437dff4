"""The base class of a scheduler plugin (upstream: framework.Plugin plus its args type)."""

from __future__ import annotations

from typing import Any, ClassVar, Dict, List, Optional, Tuple


class Plugin:
    """Subclass it (optional but convenient), set `name`, and mark extension-point methods with
    ``@hookimpl`` (see ``harness.framework.hookspecs``).

    - ``args_kind``: the args kind (e.g. ``"NodeResourcesFitArgs"``); None when the plugin takes
      no args. A plugin with an args kind gets its defaulted args even when the profile's
      pluginConfig does not mention it, as kube-scheduler's defaulting does.
    - ``set_defaults(args)``: fill in v1 defaults (mirrors ``SetDefaults_<Kind>``).
    - ``validate_args(args)``: a list of (field path, message) pairs (mirrors
      ``Validate<Kind>``); the path is relative to the args, e.g. ``"scoringStrategy.type"``.

    Both may take a keyword argument ``features`` (a :class:`harness.versions.Features`): the
    Kubernetes version and feature gates the configuration is defaulted and validated for. At run
    time a plugin reads them as ``handle.feature_gates``.
    """

    name: ClassVar[str] = ""
    args_kind: ClassVar[Optional[str]] = None

    def __init__(self, args: Optional[Dict[str, Any]] = None, handle: Any = None):
        self.args = args
        self.handle = handle

    @classmethod
    def set_defaults(cls, args: Dict[str, Any]) -> Dict[str, Any]:
        return args

    @classmethod
    def validate_args(cls, args: Dict[str, Any]) -> List[Tuple[str, str]]:
        return []

    def __repr__(self) -> str:
        return f"<plugin {self.name}>"


def call_with_features(fn, args: Any, features: Any) -> Any:
    """``fn(args, features=features)`` when ``fn`` (a plugin's set_defaults/validate_args) takes
    a ``features`` keyword, else ``fn(args)``: plugins written before versions keep working."""
    import inspect

    try:
        takes = "features" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        takes = False
    return fn(args, features=features) if takes else fn(args)
