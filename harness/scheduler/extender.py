"""Scheduler extenders: kube-scheduler's HTTPExtender (pkg/scheduler/extender.go, v1.34) over the
configuration's `extenders`, and the calls schedule_one.go and the preemption Evaluator make of
them.

Each extender speaks the exact JSON of k8s.io/kube-scheduler/extender/v1 (ExtenderArgs,
ExtenderFilterResult, HostPriorityList, ExtenderBindingArgs / ExtenderBindingResult,
ExtenderPreemptionArgs / ExtenderPreemptionResult), POSTed to `urlPrefix/verb` with the
configured `httpTimeout` (default 5s) and, with `enableHTTPS`, TLS per `tlsConfig`. A case may
answer an extender with a Python callable instead (the case's `extenders:` key, README "Keys the
harness has added"): `handler(verb, args) -> result`, given and returning the same JSON
documents, so that cases stay hermetic.

HTTP calls take no virtual time (as every API call in the harness); the timeout is a real one.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import sys
import tempfile
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..api.duration import parse_duration_ns
from ..api.objects import Node, Pod
from ..errors import ConfigError, UserError
from ..framework.types import NodeInfo

DEFAULT_EXTENDER_TIMEOUT = 5.0  # DefaultExtenderTimeout
MAX_EXTENDER_PRIORITY = 10  # extenderv1.MaxExtenderPriority
MAX_NODE_SCORE = 100
EXTENDER_NAME = "Extender"  # framework.ExtenderName: the "plugin" an extender's rejection names

Handler = Callable[[str, Any], Any]


class ExtenderError(Exception):
    """An extender call that failed: the error text kube-scheduler would have (its Go error)."""


# ---------------------------------------------------------------------------------------------
# transports
# ---------------------------------------------------------------------------------------------
def _go_dial_error(url: str, exc: BaseException) -> str:
    """http.Client.Do's error for a request that got no answer, worded as Go's url.Error."""
    parts = urllib.parse.urlsplit(url)
    hostport = parts.netloc
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return f'Post "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    if isinstance(exc, ConnectionRefusedError):
        return f'Post "{url}": dial tcp {hostport}: connect: connection refused'
    if isinstance(exc, ssl.SSLError):
        return f'Post "{url}": tls: {exc.reason or exc}'
    if isinstance(exc, socket.gaierror):
        return f'Post "{url}": dial tcp: lookup {parts.hostname}: no such host'
    return f'Post "{url}": {exc}'


def _tls_context(tls: Mapping[str, Any], enable_https: bool) -> ssl.SSLContext:
    """makeTransport: restclient.TLSConfigFor over the extender's tlsConfig; with enableHTTPS and
    no CA, the server's certificate is not verified (Insecure); otherwise the CA given, or the
    system's roots, verify it."""
    has_ca = bool(tls.get("caFile") or tls.get("caData"))
    ctx = ssl.create_default_context()
    if tls.get("serverName"):
        ctx.check_hostname = True
    if tls.get("insecure") or (enable_https and not has_ca):
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        if tls.get("caFile"):
            ctx.load_verify_locations(cafile=tls["caFile"])
        if tls.get("caData"):
            ctx.load_verify_locations(cadata=_pem(tls["caData"]))
    cert, key = tls.get("certFile"), tls.get("keyFile")
    tmp: List[str] = []
    try:
        if tls.get("certData"):
            cert = _temp_pem(_pem(tls["certData"]), tmp)
        if tls.get("keyData"):
            key = _temp_pem(_pem(tls["keyData"]), tmp)
        if cert:
            ctx.load_cert_chain(cert, key or None)
    finally:
        for p in tmp:
            os.unlink(p)
    return ctx


def _pem(data: Any) -> str:
    """certData / keyData / caData: []byte in the configuration (base64 in YAML), or PEM text."""
    import base64

    if isinstance(data, bytes):
        return data.decode()
    text = str(data)
    if "-----BEGIN" in text:
        return text
    return base64.b64decode(text).decode()


def _temp_pem(text: str, tmp: List[str]) -> str:
    fd, path = tempfile.mkstemp(suffix=".pem")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    tmp.append(path)
    return path


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


class HTTPTransport:
    """POST a JSON body to a URL with http.client (the extender's http.Client)."""

    def __init__(self, timeout: float, tls: Optional[ssl.SSLContext], server_name: str = ""):
        self.timeout = timeout
        self.tls = tls
        self.server_name = server_name

    def post(self, url: str, body: bytes) -> Tuple[int, bytes]:
        """The URL's scheme decides (the TLS settings apply to https URLs only, as Go's
        transport's TLSClientConfig)."""
        parts = urllib.parse.urlsplit(url)
        try:
            if parts.scheme == "https":
                conn: http.client.HTTPConnection = _HTTPSConnection(
                    parts.hostname, parts.port, timeout=self.timeout,
                    context=self.tls or ssl.create_default_context(), server_name=self.server_name)
            else:
                conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=self.timeout)
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
            try:
                conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                return resp.status, resp.read()
            finally:
                conn.close()
        except (OSError, http.client.HTTPException) as e:
            raise ExtenderError(_go_dial_error(url, e)) from None


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


def _decode(body: bytes) -> Any:
    """json.NewDecoder(resp.Body).Decode: the first JSON value of the body."""
    text = body.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    if not stripped:
        raise ExtenderError("EOF")
    try:
        value, _ = json.JSONDecoder().raw_decode(stripped)
    except json.JSONDecodeError as e:
        ch = stripped[e.pos] if e.pos < len(stripped) else ""
        if not ch:
            raise ExtenderError("unexpected EOF") from None
        raise ExtenderError(f"invalid character {ch!r} looking for beginning of value") from None
    return value


def _want(doc: Any, kind: type, go_type: str) -> Any:
    """A document of the wrong JSON type for the result struct (Go's UnmarshalTypeError)."""
    if doc is None:
        return kind()
    if not isinstance(doc, kind):
        t = {dict: "object", list: "array", str: "string", bool: "bool"}.get(type(doc), "number")
        raise ExtenderError(f"json: cannot unmarshal {t} into Go value of type {go_type}")
    return doc


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

    def send(self, verb: str, args: Any) -> Any:
        """send: POST the JSON, a non-200 answer is an error, the body is decoded."""
        url = self.url(verb)
        body = json.dumps(args).encode()
        self.calls.append((verb, args))
        code, data = self.transport.post(url, body)
        if code != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {code}")
        return _decode(data)

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
        result = _want(self.send(self.filter_verb, self._args(pod, nodes)), dict, "v1.ExtenderFilterResult")
        if result.get("error"):
            raise ExtenderError(str(result["error"]))
        kept: List[NodeInfo] = []
        names = result.get("nodenames")
        node_list = result.get("nodes")
        if self.node_cache_capable and names is not None:
            for name in _want(names, list, "[]string"):
                if name not in by_name:
                    raise ExtenderError(f'extender "{self.url_prefix}" claims a filtered node "{name}" '
                                        f'which is not found in the input node list')
                kept.append(by_name[name])
        elif node_list is not None:
            # NewNodeInfo().SetNode(&item): the returned Node, without the pods of the snapshot
            for item in _want(_want(node_list, dict, "v1.NodeList").get("items"), list, "[]v1.Node"):
                ni = NodeInfo()
                ni.set_node(Node(json.loads(json.dumps(item))))
                kept.append(ni)
        failed = {str(k): str(v) for k, v in _want(result.get("failedNodes"), dict, "v1.FailedNodesMap").items()}
        unresolvable = {str(k): str(v) for k, v in
                        _want(result.get("failedAndUnresolvableNodes"), dict, "v1.FailedNodesMap").items()}
        return kept, failed, unresolvable

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> Tuple[List[Tuple[str, int]], int]:
        """Prioritize: the HostPriorityList (host, score) and the extender's weight."""
        if not self.prioritize_verb:
            return [(ni.node.name, 0) for ni in nodes], 0
        result = _want(self.send(self.prioritize_verb, self._args(pod, nodes)), list, "v1.HostPriorityList")
        out = []
        for hp in result:
            hp = _want(hp, dict, "v1.HostPriority")
            score = hp.get("score", 0)
            if not isinstance(score, int) or isinstance(score, bool):
                raise ExtenderError("json: cannot unmarshal value into Go struct field "
                                    "HostPriority.score of type int64")
            out.append((str(hp.get("host", "")), score))
        return out, self.weight

    def bind(self, pod: Pod, node: str) -> None:
        """Bind: ExtenderBindingArgs; the answer's `error`, if any, is the error."""
        if not self.is_binder():
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = {"podName": pod.name, "podNamespace": pod.namespace, "podUID": pod.uid, "node": node}
        result = _want(self.send(self.bind_verb, args), dict, "v1.ExtenderBindingResult")
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
        result = _want(self.send(self.preempt_verb, args), dict, "v1.ExtenderPreemptionResult")
        out: Dict[str, Any] = {}
        metas = _want(result.get("nodeNameToMetaVictims"), dict, "map[string]*v1.MetaVictims")
        for node, meta in metas.items():
            try:
                ni = node_infos.get(node)
            except KeyError:
                raise ExtenderError(f'nodeinfo not found for node name "{node}"') from None
            if meta is None:
                out[node] = None
                continue
            meta = _want(meta, dict, "v1.MetaVictims")
            pods = []
            for mp in _want(meta.get("pods"), list, "[]*v1.MetaPod"):
                uid = str((mp or {}).get("uid", ""))
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
    enableHTTPS / tlsConfig (makeTransport)."""
    timeout = ext.get("httpTimeout")
    seconds = 0.0
    if timeout not in (None, "", 0):
        try:
            seconds = parse_duration_ns(timeout) / 1e9 if isinstance(timeout, str) else float(timeout)
        except ValueError as e:
            raise ConfigError(f"invalid httpTimeout {timeout!r}: {e}", file=source, key=f"{key}.httpTimeout") from None
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
        ctx = None
        if ext.get("enableHTTPS") or tls:
            try:
                ctx = _tls_context(tls, bool(ext.get("enableHTTPS")))
            except (OSError, ValueError, ssl.SSLError) as err:
                raise ConfigError(f"extender {e.url_prefix}: tlsConfig: {err}", file=source,
                                  key=f"{key}.tlsConfig") from None
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
