"""Scheduler extenders: kube-scheduler's HTTPExtender (pkg/scheduler/extender.go, v1.34) over the
configuration's `extenders`, and the calls schedule_one.go and the preemption Evaluator make of
them.

Each extender speaks the exact JSON of k8s.io/kube-scheduler/extender/v1 (ExtenderArgs,
ExtenderFilterResult, HostPriorityList, ExtenderBindingArgs / ExtenderBindingResult,
ExtenderPreemptionArgs / ExtenderPreemptionResult), POSTed to `urlPrefix/verb` with the
configured `httpTimeout` (default 5s) and, with `enableHTTPS`, TLS per `tlsConfig`, through a
client that behaves as client-go's http.Client (one deadline, Go's redirects, a bound on the
answer) and answers decoded as encoding/json decodes them (gojson). A case may answer an
extender with a Python callable marked @extender instead (the case's `extenders:` key, README
"Keys the harness has added"): `handler(verb, args) -> result`, given and returning the same
JSON documents, so that cases stay hermetic.

HTTP calls take no virtual time (as every API call in the harness); the timeout is a real one.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..api.objects import Node, Pod
from ..errors import ConfigError, UserError
from ..config.extenders import timeout_seconds as _timeout_seconds, tls_config_for
from ..framework.extender_handler import ExtenderError
from ..framework.types import NodeInfo
from . import gojson

DEFAULT_EXTENDER_TIMEOUT = 5.0  # DefaultExtenderTimeout
MAX_EXTENDER_PRIORITY = 10  # extenderv1.MaxExtenderPriority
MAX_NODE_SCORE = 100
EXTENDER_NAME = "Extender"  # framework.ExtenderName: the "plugin" an extender's rejection names

Handler = Callable[[str, Any], Any]


# ---------------------------------------------------------------------------------------------
# transports
# ---------------------------------------------------------------------------------------------
MAX_ANSWER_BYTES = 64 << 20  # the harness's bound on an answer's body (Go's client has none)
MAX_REDIRECTS = 10  # net/http's defaultCheckRedirect
AWAITING_HEADERS = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
READING_BODY = "context deadline exceeded (Client.Timeout or context cancellation while reading body)"


class _TimedOut(Exception):
    """The exchange's deadline passed."""


def _go_dial_error(url: str, exc: BaseException) -> str:
    """http.Client.Do's error for a request that got no answer, worded as Go's url.Error."""
    parts = urllib.parse.urlsplit(url)
    hostport = parts.netloc
    if isinstance(exc, (socket.timeout, TimeoutError, _TimedOut)):
        return f'Post "{url}": {AWAITING_HEADERS}'
    if isinstance(exc, ConnectionRefusedError):
        return f'Post "{url}": dial tcp {hostport}: connect: connection refused'
    if isinstance(exc, ssl.SSLError):
        return f'Post "{url}": tls: {exc.reason or exc}'
    if isinstance(exc, socket.gaierror):
        return f'Post "{url}": dial tcp: lookup {parts.hostname}: no such host'
    return f'Post "{url}": {exc}'


class _HTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection whose TLS server name may differ from the host dialled (tlsConfig's
    serverName)."""

    def __init__(self, host, port, timeout, context, server_name=""):
        super().__init__(host, port, timeout=timeout, context=context)
        self._server_name = server_name or host
        self._ctx = context

    def connect(self):
        http.client.HTTPConnection.connect(self)
        self.sock = self._ctx.wrap_socket(self.sock, server_hostname=self._server_name)


class _Deadline:
    """Client.Timeout: one deadline for the whole exchange (connect, every redirect, headers,
    body). A watchdog shuts the connection's socket down when it passes, so that no read, however
    slowly the server trickles its bytes, outlives it."""

    def __init__(self, seconds: float):
        self.at = time.monotonic() + seconds
        self.expired = False
        self._lock = threading.Lock()
        self._sock: Optional[socket.socket] = None
        self._timer = threading.Timer(max(seconds, 0.0), self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            self.expired = True
            raise _TimedOut()
        return left

    def watch(self, sock: Optional[socket.socket]) -> None:
        with self._lock:
            self._sock = sock
            if self.expired and sock is not None:
                self._shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            if self._sock is not None:
                self._shut(self._sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the descriptor's, under TLS too
        except OSError:
            pass

    def cancel(self) -> None:
        self._timer.cancel()


class HTTPTransport:
    """The extender's http.Client: POST a JSON body, follow redirects as net/http does (301,
    302, 303: GET without the body; 307, 308: the same method and body; at most 10), all under
    one deadline (httpTimeout); the answer's body is read only for a 200, up to
    MAX_ANSWER_BYTES."""

    def __init__(self, timeout: float, tls: Optional[ssl.SSLContext], server_name: str = "",
                 max_bytes: int = MAX_ANSWER_BYTES):
        self.timeout = timeout
        self.tls = tls
        self.server_name = server_name
        self.max_bytes = max_bytes

    def post(self, url: str, body: bytes) -> Tuple[int, bytes]:
        deadline = _Deadline(self.timeout)
        try:
            return self._exchange(url, body, deadline)
        finally:
            deadline.cancel()

    def _exchange(self, url: str, body: bytes, deadline: _Deadline) -> Tuple[int, bytes]:
        method, payload, via = "POST", body, 0
        while True:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme not in ("http", "https"):
                raise ExtenderError(f'Post "{url}": unsupported protocol scheme "{parts.scheme}"')
            conn = None
            try:
                conn = self._connect(parts, deadline)
                path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
                headers = {"Content-Type": "application/json"} if payload is not None else {}
                conn.request(method, path, body=payload, headers=headers)
                resp = conn.getresponse()
            except (OSError, http.client.HTTPException, _TimedOut, ValueError) as e:
                if conn is not None:
                    conn.close()
                raise ExtenderError(_go_dial_error(url, _TimedOut() if deadline.expired else e)) from None
            try:
                code = resp.status
                loc = resp.getheader("Location")
                if code in (301, 302, 303, 307, 308) and loc:
                    # redirectBehavior, then defaultCheckRedirect on the request it would send
                    nxt = urllib.parse.urljoin(url, loc)
                    via += 1
                    if via >= MAX_REDIRECTS:
                        raise ExtenderError(f'Post "{loc}": stopped after {MAX_REDIRECTS} redirects')
                    if code in (301, 302, 303) and method not in ("GET", "HEAD"):
                        method, payload = "GET", None
                    url = nxt
                    continue
                if code != 200:
                    return code, b""  # send reads no body of an error answer
                return code, self._read_body(resp, deadline)
            finally:
                conn.close()

    def _connect(self, parts, deadline: _Deadline) -> http.client.HTTPConnection:
        left = deadline.remaining()
        if parts.scheme == "https":
            conn: http.client.HTTPConnection = _HTTPSConnection(
                parts.hostname, parts.port, timeout=left,
                context=self.tls or ssl.create_default_context(), server_name=self.server_name)
        else:
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=left)
        conn.connect()
        deadline.watch(conn.sock)
        return conn

    def _read_body(self, resp, deadline: _Deadline) -> bytes:
        length = resp.getheader("Content-Length")
        if length and length.isdigit() and int(length) > self.max_bytes:
            raise ExtenderError(self._too_large())
        chunks: List[bytes] = []
        size = 0
        try:
            while True:
                deadline.remaining()
                chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
                if not chunk:
                    if deadline.expired:
                        raise _TimedOut()
                    break
                size += len(chunk)
                if size > self.max_bytes:
                    raise ExtenderError(self._too_large())
                chunks.append(chunk)
        except (OSError, http.client.HTTPException, _TimedOut, ValueError) as e:
            if deadline.expired or isinstance(e, (_TimedOut, socket.timeout)):
                raise ExtenderError(READING_BODY) from None
            raise ExtenderError(f"unexpected EOF ({e})") from None
        return b"".join(chunks)

    def _too_large(self) -> str:
        return (f"the extender's answer is larger than {self.max_bytes >> 20} MiB (the harness's "
                f"bound on an answer; kube-scheduler reads any size)")


class PythonTransport:
    """A case's Python callable standing for the extender: `handler(verb, args)` gets the JSON
    document kube-scheduler would POST (decoded) and returns the one the extender answers. A
    raise is a call that got no answer (ConnectionRefusedError, TimeoutError give Go's texts)."""

    def __init__(self, handler: Handler, verb_of: Callable[[str], str]):
        self.handler = handler
        self.verb_of = verb_of

    def post(self, url: str, body: bytes) -> Tuple[int, bytes]:
        try:
            out = self.handler(self.verb_of(url), json.loads(body))
        except Exception as e:
            raise ExtenderError(_go_dial_error(url, e)) from None
        if isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], int):
            code, doc = out
        else:
            code, doc = 200, out
        if isinstance(doc, (bytes, str)):
            return code, doc.encode() if isinstance(doc, str) else doc
        return code, json.dumps(doc).encode()


def load_handler(module: Any, attr: str, source: str, key: str) -> Handler:
    """The callable `attr` of `module` (a trust.LocalModule found in the case's tree, or the name
    of an installed entry point's module), imported in isolation; it must be marked @extender
    (harness.framework.extender), so that a case names no other callable."""
    import importlib

    from ..framework.extender_handler import is_extender
    from ..trust import LocalModule, guarded_import, import_local

    name = module.name if isinstance(module, LocalModule) else str(module)
    what = f"cannot import extender module {name!r}"
    try:
        if isinstance(module, LocalModule):
            fn = import_local(module, what + f" ({module.file})")
        else:
            fn = guarded_import(lambda: importlib.import_module(name), what)
    except UserError as e:
        raise UserError(e.detail, file=source, key=key) from None
    for part in attr.split("."):
        fn = getattr(fn, part, None)
        if fn is None:
            raise UserError(f"module {name!r} has no {attr!r}", file=source, key=key)
    if not is_extender(fn):
        raise UserError(f"{name}:{attr} is not marked as an extender: a case may name only callables "
                        f"marked @extender (from harness.framework import extender)", file=source, key=key)
    return fn


# ---------------------------------------------------------------------------------------------
# JSON documents (k8s.io/kube-scheduler/extender/v1)
# ---------------------------------------------------------------------------------------------
def object_json(raw: Mapping[str, Any]) -> Dict[str, Any]:
    """An object as kube-scheduler's informer holds it, marshalled: the manifest without the
    harness's own bookkeeping (metadata keys `x-...`)."""
    out = dict(raw)
    md = {k: v for k, v in (raw.get("metadata") or {}).items() if not str(k).startswith("x-")}
    out["metadata"] = md
    return out


def _node_list(nodes: Sequence[NodeInfo]) -> Dict[str, Any]:
    return {"metadata": {}, "items": [object_json(ni.node.raw) for ni in nodes]}


def _decode(body: bytes, into: Tuple) -> Any:
    """json.NewDecoder(resp.Body).Decode(result): the first JSON value of the body decoded into
    the result struct as Go's encoding/json does (harness/scheduler/gojson.py)."""
    text = body.decode("utf-8", errors="replace")
    try:
        value, found = gojson.first_value(text)
    except json.JSONDecodeError as e:
        stripped = text.lstrip(" \t\r\n")
        pos = e.pos
        ch = stripped[pos] if pos < len(stripped) else ""
        if not ch:
            raise ExtenderError("unexpected EOF") from None
        raise ExtenderError(f"invalid character {ch!r} looking for beginning of value") from None
    if not found:
        raise ExtenderError("EOF")
    out, err = gojson.unmarshal(value, into)
    if err:
        raise ExtenderError(err)
    return out


# ---------------------------------------------------------------------------------------------
# the extender
# ---------------------------------------------------------------------------------------------
@dataclass
class HTTPExtender:
    """HTTPExtender: one entry of the configuration's `extenders`."""

    url_prefix: str
    filter_verb: str = ""
    prioritize_verb: str = ""
    preempt_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    node_cache_capable: bool = False
    managed_resources: frozenset = frozenset()
    ignorable: bool = False
    transport: Any = None
    calls: List[Tuple[str, Any]] = field(default_factory=list)  # (verb, args) sent, for reports

    # -- identity and capabilities ------------------------------------------------------------
    def name(self) -> str:
        return self.url_prefix

    def is_ignorable(self) -> bool:
        return self.ignorable

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    def is_interested(self, pod: Pod) -> bool:
        """IsInterested: no managed resources, or a container (or init container) requesting or
        limiting one of them."""
        if not self.managed_resources:
            return True
        for group in ("containers", "initContainers"):
            for c in pod.spec.get(group) or []:
                res = c.get("resources") or {}
                for k in list((res.get("requests") or {})) + list((res.get("limits") or {})):
                    if k in self.managed_resources:
                        return True
        return False

    # -- the calls ------------------------------------------------------------------------------
    def url(self, verb: str) -> str:
        return self.url_prefix.rstrip("/") + "/" + verb

    def send(self, verb: str, args: Any, into: Tuple) -> Any:
        """send: POST the JSON, a non-200 answer is an error, the body is decoded into `into`."""
        url = self.url(verb)
        body = json.dumps(args).encode()
        self.calls.append((verb, args))
        code, data = self.transport.post(url, body)
        if code != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {code}")
        return _decode(data, into)

    def _args(self, pod: Pod, nodes: Sequence[NodeInfo]) -> Dict[str, Any]:
        args: Dict[str, Any] = {"pod": object_json(pod.raw)}
        if self.node_cache_capable:
            args["nodenames"] = [ni.node.name for ni in nodes]
        else:
            args["nodes"] = _node_list(nodes)
        return args

    def filter(self, pod: Pod, nodes: Sequence[NodeInfo]
               ) -> Tuple[List[NodeInfo], Dict[str, str], Dict[str, str]]:
        """Filter: (the nodes the extender keeps, failedNodes, failedAndUnresolvableNodes)."""
        if not self.filter_verb:
            return list(nodes), {}, {}
        by_name = {ni.node.name: ni for ni in nodes}
        result = self.send(self.filter_verb, self._args(pod, nodes), gojson.EXTENDER_FILTER_RESULT) or {}
        if result.get("error"):
            raise ExtenderError(str(result["error"]))
        kept: List[NodeInfo] = []
        names = result.get("nodenames")
        node_list = result.get("nodes")
        if self.node_cache_capable and names is not None:
            for name in names:
                name = name or ""
                if name not in by_name:
                    raise ExtenderError(f'extender "{self.url_prefix}" claims a filtered node "{name}" '
                                        f'which is not found in the input node list')
                kept.append(by_name[name])
        elif node_list is not None:
            # NewNodeInfo().SetNode(&item): the returned Node, without the pods of the snapshot
            for item in node_list.get("items") or []:
                if not isinstance(item, dict):
                    raise ExtenderError("json: cannot unmarshal value into Go struct field "
                                        "ExtenderFilterResult.nodes.items of type v1.Node")
                ni = NodeInfo()
                ni.set_node(Node(json.loads(json.dumps(item))))
                kept.append(ni)
        failed = {k: v or "" for k, v in (result.get("failedNodes") or {}).items()}
        unresolvable = {k: v or "" for k, v in (result.get("failedAndUnresolvableNodes") or {}).items()}
        return kept, failed, unresolvable

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> Tuple[List[Tuple[str, int]], int]:
        """Prioritize: the HostPriorityList (host, score) and the extender's weight."""
        if not self.prioritize_verb:
            return [(ni.node.name, 0) for ni in nodes], 0
        result = self.send(self.prioritize_verb, self._args(pod, nodes), gojson.HOST_PRIORITY_LIST) or []
        out = [((hp or {}).get("host") or "", (hp or {}).get("score") or 0) for hp in result]
        return out, self.weight

    def bind(self, pod: Pod, node: str) -> None:
        """Bind: ExtenderBindingArgs; the answer's `error`, if any, is the error."""
        if not self.is_binder():
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = {"podName": pod.name, "podNamespace": pod.namespace, "podUID": pod.uid, "node": node}
        result = self.send(self.bind_verb, args, gojson.EXTENDER_BINDING_RESULT) or {}
        if result.get("error"):
            raise ExtenderError(str(result["error"]))

    def process_preemption(self, pod: Pod, victims_map: Mapping[str, Any], node_infos) -> Dict[str, Any]:
        """ProcessPreemption: node -> Victims the extender keeps (its MetaVictims turned back
        into the pods of the snapshot's NodeInfos)."""
        from ..framework.preemption import Victims

        if not self.supports_preemption():
            raise ExtenderError(f"preempt verb is not defined for extender {self.url_prefix} but run "
                                f"into ProcessPreemption")
        args: Dict[str, Any] = {"pod": object_json(pod.raw)}
        if self.node_cache_capable:
            args["nodeNameToMetaVictims"] = {
                node: {"pods": [{"uid": p.uid} for p in v.pods], "numPDBViolations": v.num_pdb_violations}
                for node, v in victims_map.items()}
        else:
            args["nodeNameToVictims"] = {
                node: {"pods": [object_json(p.raw) for p in v.pods], "numPDBViolations": v.num_pdb_violations}
                for node, v in victims_map.items()}
        result = self.send(self.preempt_verb, args, gojson.EXTENDER_PREEMPTION_RESULT) or {}
        out: Dict[str, Any] = {}
        for node, meta in (result.get("nodeNameToMetaVictims") or {}).items():
            try:
                ni = node_infos.get(node)
            except KeyError:
                raise ExtenderError(f'nodeinfo not found for node name "{node}"') from None
            if meta is None:
                out[node] = None
                continue
            pods = []
            for mp in meta.get("pods") or []:
                uid = (mp or {}).get("uid") or ""
                found = next((pi.pod for pi in ni.pods if pi.pod.uid == uid), None)
                if found is None:
                    raise ExtenderError(f"extender: {self.url_prefix} claims to preempt pod (UID: {uid}) "
                                        f"on node: {node}, but the pod is not found on that node")
                pods.append(found)
            out[node] = Victims(pods, int(meta.get("numPDBViolations") or 0))
        return out


# ---------------------------------------------------------------------------------------------
# building them from the configuration (scheduler.go buildExtenders, NewHTTPExtender)
# ---------------------------------------------------------------------------------------------
def build_extenders(config: Mapping[str, Any], handlers: Optional[Mapping[str, Handler]] = None,
                    source: str = "config") -> List[HTTPExtender]:
    """buildExtenders: one HTTPExtender per entry, the ignorable ones moved to the tail. A
    `handlers` entry (urlPrefix -> callable) answers that extender instead of HTTP."""
    handlers = dict(handlers or {})
    plain: List[HTTPExtender] = []
    ignorable: List[HTTPExtender] = []
    for i, ext in enumerate(config.get("extenders") or []):
        e = new_http_extender(ext, handlers.pop(ext.get("urlPrefix") or "", None), source, f"extenders[{i}]")
        (ignorable if e.ignorable else plain).append(e)
    if handlers:
        url = sorted(handlers)[0]
        raise UserError(f'the case answers an extender at urlPrefix "{url}", but the configuration has '
                        f'no extender with that urlPrefix', key="extenders")
    return plain + ignorable


def new_http_extender(ext: Mapping[str, Any], handler: Optional[Handler], source: str, key: str) -> HTTPExtender:
    """NewHTTPExtender: httpTimeout 0 is DefaultExtenderTimeout; the transport per
    enableHTTPS / tlsConfig (makeTransport). The configuration's loading checked what could
    fail here (extender_config_errors)."""
    try:
        seconds = _timeout_seconds(ext.get("httpTimeout"))
    except ValueError as e:
        raise ConfigError(f"invalid httpTimeout {ext.get('httpTimeout')!r}: {e}", file=source,
                          key=f"{key}.httpTimeout") from None
    if seconds == 0:
        seconds = DEFAULT_EXTENDER_TIMEOUT
    e = HTTPExtender(
        url_prefix=str(ext.get("urlPrefix") or ""),
        filter_verb=str(ext.get("filterVerb") or ""),
        prioritize_verb=str(ext.get("prioritizeVerb") or ""),
        preempt_verb=str(ext.get("preemptVerb") or ""),
        bind_verb=str(ext.get("bindVerb") or ""),
        weight=int(ext.get("weight") or 0),
        node_cache_capable=bool(ext.get("nodeCacheCapable")),
        managed_resources=frozenset(str(r.get("name") or "") for r in ext.get("managedResources") or []),
        ignorable=bool(ext.get("ignorable")),
    )
    if handler is not None:
        prefix = e.url_prefix.rstrip("/") + "/"
        e.transport = PythonTransport(handler, lambda url: url[len(prefix):] if url.startswith(prefix) else url)
    else:
        tls = ext.get("tlsConfig") or {}
        try:
            ctx = tls_config_for(tls, bool(ext.get("enableHTTPS")), f"{key}.tlsConfig")
        except (OSError, ValueError, ssl.SSLError) as err:
            raise ConfigError(f"couldn't build extenders: {err}", file=source, key=f"{key}.tlsConfig") from None
        e.transport = HTTPTransport(seconds, ctx, str(tls.get("serverName") or ""))
    return e


def ignored_extended_resources(config: Mapping[str, Any]) -> List[str]:
    """The managedResources with ignoredByScheduler, in order (buildExtenders)."""
    out = []
    for ext in config.get("extenders") or []:
        for r in ext.get("managedResources") or []:
            if r.get("ignoredByScheduler"):
                out.append(r.get("name") or "")
    return out


def apply_ignored_resources(config: Dict[str, Any], source: str = "config") -> None:
    """buildExtenders' last part: the extenders' ignoredByScheduler resources become every
    profile's NodeResourcesFit ignoredResources (replacing what the args said)."""
    ignored = ignored_extended_resources(config)
    if not ignored:
        return
    for prof in config.get("profiles") or []:
        for pc in prof.get("pluginConfig") or []:
            if pc.get("name") == "NodeResourcesFit":
                pc["args"] = dict(pc.get("args") or {})
                pc["args"]["ignoredResources"] = list(ignored)
                break
        else:
            raise ConfigError("can't find NodeResourcesFitArgs in plugin config", file=source, key="extenders")


__all__ = ["DEFAULT_EXTENDER_TIMEOUT", "EXTENDER_NAME", "MAX_EXTENDER_PRIORITY", "ExtenderError",
           "HTTPExtender", "build_extenders", "new_http_extender", "load_handler", "apply_ignored_resources"]
