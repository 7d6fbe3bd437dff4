"""One plugin's implementation of one hook called as the framework calls it: its parameters in
the hook's order (PluginCall), its batch form (batch_form), a raise or a result of the wrong shape
turned into an Error status naming the plugin and the hook (as a Go plugin cannot return the
wrong type). Not an upstream file: the framework runtime (runtime.py) builds on it."""

from __future__ import annotations

import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import pluggy

from .hookspecs import PROJECT, ExtensionPointSpecs
from .prebind import PreBindCanceled, PreBindContext
from .status import REJECTED_CODES, Code, Status

_SPEC_ARGS: Dict[str, Tuple[str, ...]] = {}


def _spec_args(hook: str) -> Tuple[str, ...]:
    if not _SPEC_ARGS:
        import inspect
        for name in dir(ExtensionPointSpecs):
            fn = getattr(ExtensionPointSpecs, name)
            if callable(fn) and not name.startswith("_"):
                _SPEC_ARGS[name] = tuple(p for p in inspect.signature(fn).parameters if p != "self")
    return _SPEC_ARGS[hook]


def implements(plugin: Any, hook: str) -> bool:
    """Does the plugin extend the extension point whose hook is `hook`?"""
    fn = getattr(plugin, hook, None)
    return fn is not None and hasattr(fn, PROJECT + "_impl")


# (plugin function, hook) -> the positions of its parameters among the hook's ((): the same)
_ARG_ORDER: Dict[Tuple[Any, str], Tuple[int, ...]] = {}
# plugin classes pluggy has validated once (registration checks only the class's hookimpls)
_VALIDATED_CLASSES: "weakref.WeakSet[type]" = weakref.WeakSet()


class PluginCall:
    """One plugin's implementation of one hook, callable with the hook's full positional args."""

    __slots__ = ("name", "fn", "plugin")

    def __init__(self, name: str, plugin: Any, hook: str):
        self.name = name
        self.plugin = plugin
        fn = getattr(plugin, hook)
        func = getattr(fn, "__func__", None)
        key = (func, hook) if func is not None else None
        idx = _ARG_ORDER.get(key) if key is not None else None
        if idx is None:
            spec = _spec_args(hook)
            import inspect
            params = [p for p in inspect.signature(fn).parameters]
            idx = () if tuple(params) == spec else tuple(spec.index(p) for p in params)
            if key is not None:
                _ARG_ORDER[key] = idx
        if not idx:
            self.fn = fn
        else:
            self.fn = lambda *a, _f=fn, _i=idx: _f(*[a[i] for i in _i])


def batch_form(plugin: Any, hook: str, batch: str) -> Optional[Callable]:
    """The plugin's batch form of `hook` (e.g. filter_nodes for filter): a plain method of
    in-tree plugins that gives, for a list of nodes, exactly what calling the hook on each node
    gives. Used only when the class that defines the hook also defines the batch form, so a
    subclass that overrides the hook is called per node."""
    for cls in type(plugin).__mro__:
        if hook in cls.__dict__:
            return getattr(plugin, batch) if batch in cls.__dict__ else None
    return None


def _filter_each(name: str, fn, state, pod, nodes) -> List[Optional[Status]]:
    """One Filter plugin's per-node calls over a batch's nodes: each node its own Status, a
    raise or a result that is no Status an Error for that node."""
    sts: List[Optional[Status]] = []
    for ni in nodes:
        try:
            st = fn(state, pod, ni)
            if st is not None and st.__class__ is not Status and not isinstance(st, Status):
                raise _bad_result(name, "Filter", st, "a Status or None")
            sts.append(st)
        except Exception as e:
            sts.append(_raised(e))
    return sts


def _filter_verdict(name: str, st: Status) -> Status:
    """A Filter plugin's non-success status as RunFilterPlugins returns it: a rejection named
    after the plugin, anything else an Error "running "X" filter plugin: ..."."""
    if st.code not in REJECTED_CODES:
        st = Status(Code.Error, err=RuntimeError(f'running "{name}" filter plugin: {st.as_error()}'))
    st.plugin = name
    return st


def _raised(exc: BaseException) -> Status:
    """A plugin that raises is treated as one that returned an Error status with that error."""
    if isinstance(exc, PluginResultError):
        return Status(Code.Error, err=RuntimeError(str(exc)))
    return Status(Code.Error, err=RuntimeError(f"{type(exc).__name__}: {exc}"))


class _PluginManager(pluggy.PluginManager):
    """pluggy's PluginManager with its hookimpl lookup cached per plugin class and attribute:
    pluggy inspects every attribute of a plugin with inspect.getattr_static on each register,
    which was most of the cost of building a framework (once per profile per case). Hooks set
    on an instance (its __dict__) are looked up every time, as pluggy does."""

    _opts_cache: Dict[Tuple[type, str], Any] = {}

    def parse_hookimpl_opts(self, plugin, name):
        if name in getattr(plugin, "__dict__", ()):
            return super().parse_hookimpl_opts(plugin, name)
        key = (type(plugin), name)
        try:
            opts = self._opts_cache[key]
        except KeyError:
            opts = self._opts_cache[key] = super().parse_hookimpl_opts(plugin, name)
        return dict(opts) if opts is not None else None


class PluginResultError(Exception):
    """A hook returned a value of the wrong shape (e.g. a score of 50 instead of (50, None)):
    it becomes an Error status naming the plugin and the hook, as a raising plugin does."""


def _bad_result(plugin: str, hook: str, value: Any, want: str) -> PluginResultError:
    text = repr(value)
    text = text if len(text) <= 60 else text[:60] + "..."
    return PluginResultError(f'plugin "{plugin}": {hook} returned {text}, expected {want}')


def _status(plugin: str, hook: str, s: Any) -> Optional[Status]:
    """The Status a hook returned, or PluginResultError."""
    if s is None or isinstance(s, Status):
        return s
    raise _bad_result(plugin, hook, s, "a Status or None")


def _pair(plugin: str, hook: str, out: Any, want: str) -> Tuple[Any, Optional[Status]]:
    """The (result, Status) a hook returned, or PluginResultError."""
    if isinstance(out, tuple) and len(out) == 2 and (out[1] is None or isinstance(out[1], Status)):
        return out
    raise _bad_result(plugin, hook, out, want)


def _pre_bind_failure(name: str, returned: Any, exc: Optional[BaseException],
                      ctx: PreBindContext) -> Optional[Status]:
    """What RunPreBindPlugins' `run` makes of a plugin's PreBind: None on success; a
    rejection with the plugin's name; else an Error ``running PreBind plugin "X": ...``,
    whose error is the context's cause when the plugin returned the cancelled context's
    error (errors.Is(err, context.Canceled))."""
    if exc is None:
        try:
            s = _status(name, "PreBind", returned)
        except Exception as e:
            exc = e
    if exc is not None:
        if isinstance(exc, PreBindCanceled):
            return Status(Code.Error, err=RuntimeError(
                f'running PreBind plugin "{name}": {ctx.cause or exc.cause}'), plugin=name)
        s = _raised(exc)
    if s is None or s.is_success():
        return None
    if s.is_rejected():
        s.plugin = name
        return s
    err = s.as_error()
    if isinstance(err, PreBindCanceled):
        err = ctx.cause or err.cause
    return Status(Code.Error, err=RuntimeError(f'running PreBind plugin "{name}": {err}'), plugin=name)


def _error(plugin: str, exc: BaseException) -> Status:
    return _raised(exc).with_plugin(plugin)
