"""The extender's HTTP client as client-go's http.Client (issue 25): one deadline for the whole
exchange, redirects as net/http follows them, a bound on the answer's size, TLS options checked
as client-go's TLSConfigFor, answers decoded as Go's encoding/json decodes them, and
configuration errors refused when the configuration is loaded. Servers listen on 127.0.0.1
only; no test measures time: a deadline is shown by its error and by the server seeing the client
leave before its slow answer was over."""

from __future__ import annotations

import json
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness.config.loader import load_config_data
from harness.errors import ConfigError
from harness.framework.registry import default_registry
from harness.scheduler.extender import ExtenderError, new_http_extender
from harness.framework.types import NodeInfo
from harness.testing import make_node, make_pod


class Handler(BaseHTTPRequestHandler):
    """Answers per the class attribute `route`: path -> function(handler) doing the answer."""

    route: dict = {}
    seen: list = []

    def log_message(self, *a):  # quiet
        pass

    def _do(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        Handler.seen.append((self.command, self.path, body))
        Handler.route.get(self.path, lambda h: h.answer(404, b""))(self)

    do_POST = do_GET = _do

    def answer(self, code, data=b"", headers=()):
        try:
            self.send_response(code)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (deadline)
            pass


@pytest.fixture
def server():
    Handler.route, Handler.seen = {}, []
    while not TRICKLED.empty():
        TRICKLED.get_nowait()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def _nodes(*names):
    infos = [NodeInfo() for _ in names]
    for ni, name in zip(infos, names):
        ni.set_node(make_node(name))
    return infos


TRICKLED: "queue.Queue[tuple]" = queue.Queue()  # (bytes written, bytes meant) per trickle


def _trickle(h, data, delay=0.1):
    """Write data one byte every `delay` seconds (each read quick, the whole slow), until the
    client goes away; then put how far it got in TRICKLED."""
    sent = 0
    try:
        for c in data:
            h.wfile.write(bytes([c]))
            h.wfile.flush()
            sent += 1
            time.sleep(delay)
    except OSError:
        pass
    finally:
        TRICKLED.put((sent, len(data)))


def _client_left_before_the_trickle_ended():
    """The server's account of the trickle (waited for: it ends once the client has gone, or
    after the whole trickle when a client waits for it)."""
    sent, meant = TRICKLED.get(timeout=120)
    return sent < meant


def _ext(url, **kw):
    return new_http_extender({"urlPrefix": url, "filterVerb": "filter", "nodeCacheCapable": True, **kw},
                             None, "cfg", "extenders[0]")


def _ok(doc):
    return lambda h: h.answer(200, json.dumps(doc).encode(), [("Content-Type", "application/json")])


# ---- one deadline ----------------------------------------------------------------------------
def test_a_server_trickling_its_body_fails_at_the_deadline(server):
    def trickle(h):
        h.send_response(200)
        h.send_header("Content-Length", "100000")
        h.end_headers()
        _trickle(h, b" " * 200)
    Handler.route = {"/filter": trickle}
    with pytest.raises(ExtenderError, match=r"^context deadline exceeded \(Client.Timeout or context "
                                            r"cancellation while reading body\)$"):
        _ext(server, httpTimeout="1s").filter(make_pod("p"), _nodes("a"))
    assert _client_left_before_the_trickle_ended()  # not after the 20 s the trickle would take


def test_a_server_trickling_its_headers_fails_awaiting_headers(server):
    Handler.route = {"/filter": lambda h: _trickle(h, b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 200)}
    with pytest.raises(ExtenderError) as e:
        _ext(server, httpTimeout="1s").filter(make_pod("p"), _nodes("a"))
    assert str(e.value) == (f'Post "{server}/filter": context deadline exceeded (Client.Timeout '
                            f'exceeded while awaiting headers)')
    assert _client_left_before_the_trickle_ended()


# ---- redirects -------------------------------------------------------------------------------
@pytest.mark.parametrize("code", [307, 308])
def test_307_and_308_are_followed_with_the_method_and_body(server, code):
    Handler.route = {"/filter": lambda h: h.answer(code, headers=[("Location", "/v2/filter")]),
                     "/v2/filter": _ok({"nodenames": ["a"]})}
    kept, _, _ = _ext(server).filter(make_pod("p"), _nodes("a", "b"))
    assert [ni.node.name for ni in kept] == ["a"]
    (m1, p1, b1), (m2, p2, b2) = Handler.seen
    assert (m1, p1, m2, p2) == ("POST", "/filter", "POST", "/v2/filter") and b1 == b2 and b2


@pytest.mark.parametrize("code", [301, 302, 303])
def test_301_302_303_turn_the_post_into_a_get_without_body(server, code):
    Handler.route = {"/filter": lambda h: h.answer(code, headers=[("Location", "/v2/filter")]),
                     "/v2/filter": _ok({"nodenames": ["a"]})}
    _ext(server).filter(make_pod("p"), _nodes("a"))
    assert [(m, p, b) for m, p, b in Handler.seen][1] == ("GET", "/v2/filter", b"")


def test_redirects_stop_after_ten(server):
    Handler.route = {f"/r{i}": (lambda i: lambda h: h.answer(307, headers=[("Location", f"/r{i + 1}")]))(i)
                     for i in range(20)}
    Handler.route["/filter"] = lambda h: h.answer(307, headers=[("Location", "/r0")])
    with pytest.raises(ExtenderError, match=r'^Post "/r9": stopped after 10 redirects$'):
        _ext(server).filter(make_pod("p"), _nodes("a"))
    assert len(Handler.seen) == 10


def test_a_redirect_without_location_is_the_answer(server):
    Handler.route = {"/filter": lambda h: h.answer(307)}
    with pytest.raises(ExtenderError, match=r"^failed filter with extender at URL .*/filter, code 307$"):
        _ext(server).filter(make_pod("p"), _nodes("a"))


# ---- size bound ------------------------------------------------------------------------------
def test_an_answer_larger_than_the_bound_is_refused_unread(server):
    Handler.route = {"/filter": _ok({"nodenames": ["a"], "pad": "x" * 5000})}
    ext = _ext(server)
    ext.transport.max_bytes = 1000
    with pytest.raises(ExtenderError, match="larger than"):
        ext.filter(make_pod("p"), _nodes("a"))


def test_a_streamed_answer_over_the_bound_is_cut(server):
    def stream(h):
        h.send_response(200)
        h.end_headers()  # no Content-Length: read to the close
        try:
            for _ in range(100):
                h.wfile.write(b" " * 1000)
        except OSError:
            pass
        h.close_connection = True
    Handler.route = {"/filter": stream}
    ext = _ext(server)
    ext.transport.max_bytes = 10_000
    with pytest.raises(ExtenderError, match="larger than"):
        ext.filter(make_pod("p"), _nodes("a"))


# ---- decoding as encoding/json -----------------------------------------------------------------
def test_field_names_match_case_insensitively(server):
    Handler.route = {"/filter": _ok({"NodeNames": ["a"], "FailedNodes": {"b": "full"}}),
                     "/prioritize": _ok([{"Host": "a", "SCORE": 7}])}
    ext = _ext(server, prioritizeVerb="prioritize", weight=1)
    kept, failed, _ = ext.filter(make_pod("p"), _nodes("a", "b"))
    assert [ni.node.name for ni in kept] == ["a"] and failed == {"b": "full"}
    assert ext.prioritize(make_pod("p"), _nodes("a"))[0] == [("a", 7)]


@pytest.mark.parametrize("doc,message", [
    ({"nodenames": "a"}, "json: cannot unmarshal string into Go struct field ExtenderFilterResult.nodenames "
                         "of type []string"),
    ("x", "json: cannot unmarshal string into Go value of type v1.ExtenderFilterResult"),
    ({"failedNodes": {"a": 1}}, "json: cannot unmarshal number into Go struct field "
                                "ExtenderFilterResult.failedNodes of type string"),
])
def test_a_wrong_type_is_gos_unmarshal_type_error(server, doc, message):
    Handler.route = {"/filter": _ok(doc)}
    with pytest.raises(ExtenderError) as e:
        _ext(server).filter(make_pod("p"), _nodes("a"))
    assert str(e.value) == message


def test_a_fractional_score_is_refused_as_go_does(server):
    Handler.route = {"/prioritize": _ok([{"host": "a", "score": 1.5}])}
    ext = new_http_extender({"urlPrefix": server, "prioritizeVerb": "prioritize", "weight": 1}, None,
                            "cfg", "extenders[0]")
    with pytest.raises(ExtenderError, match=r"cannot unmarshal number 1.5 into Go struct field "
                                            r"HostPriority.score of type int64"):
        ext.prioritize(make_pod("p"), _nodes("a"))


def test_a_case_with_capitalised_keys_binds_its_pods(tmp_path):
    """The issue's example: `{"NodeNames": ..., "FailedNodes": ...}` from a case's extender."""
    import yaml

    from harness.case.loader import load_case
    from harness.case.runner import run_case

    (tmp_path / "caps.py").write_text(
        "from harness.framework import extender\n"
        "@extender\n"
        "def handle(verb, args):\n"
        "    return {'NodeNames': [n for n in args['nodenames'] if n != 'node-a'],\n"
        "            'FailedNodes': {'node-a': 'no'}}\n")
    node = lambda n: {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n},  # noqa: E731
                      "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    case = {"apiVersion": "schedharness/v1alpha1", "kind": "Case",
            "config": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "extenders": [{"urlPrefix": "http://caps.example/", "filterVerb": "filter",
                                      "nodeCacheCapable": True}]},
            "extenders": [{"urlPrefix": "http://caps.example/", "python": "caps:handle"}],
            "cluster": [node("node-a"), node("node-b")],
            "pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                      "spec": {"containers": [{"name": "c", "image": "x"}]}}],
            "expect": {"bindings": {"web": "node-b"}}}
    (tmp_path / "case.yaml").write_text(yaml.safe_dump(case))
    res = run_case(load_case(str(tmp_path / "case.yaml")))
    assert res.passed, res.failures


# ---- configuration errors, at load ------------------------------------------------------------
def _load(ext):
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "extenders": [ext]}
    return load_config_data(cfg, default_registry(), source="cfg.yaml")


@pytest.mark.parametrize("ext,key,fragment", [
    ({"urlPrefix": "http://[::1", "filterVerb": "f"}, "extenders[0].urlPrefix", "missing ']' in host"),
    ({"urlPrefix": "http://a:port/x", "filterVerb": "f"}, "extenders[0].urlPrefix", 'invalid port ":port"'),
    ({"urlPrefix": "ftp://a/", "filterVerb": "f"}, "extenders[0].urlPrefix", 'unsupported protocol scheme "ftp"'),
    ({"urlPrefix": "http://a/", "filterVerb": "f", "httpTimeout": "-1s"}, "extenders[0].httpTimeout",
     "must not be negative"),
    ({"urlPrefix": "https://a/", "filterVerb": "f", "tlsConfig": {"insecure": True, "caData": "eA=="}},
     "extenders[0].tlsConfig", "specifying a root certificates file with the insecure flag is not allowed"),
    ({"urlPrefix": "https://a/", "filterVerb": "f", "enableHTTPS": True, "tlsConfig": {"caData": "eA=="}},
     "extenders[0].tlsConfig", "unable to load root certificates"),
])
def test_configuration_errors_are_refused_when_it_loads(ext, key, fragment):
    with pytest.raises(ConfigError) as e:
        _load(ext)
    assert e.value.key == key and fragment in str(e.value), str(e.value)


def test_a_ca_file_that_cannot_be_read_names_the_path_only(tmp_path):
    with pytest.raises(ConfigError, match=r"couldn't build extenders: open .*nope.pem: no such file"):
        _load({"urlPrefix": "https://a/", "filterVerb": "f", "tlsConfig": {"caFile": str(tmp_path / "nope.pem")}})
