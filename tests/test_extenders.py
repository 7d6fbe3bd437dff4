"""Scheduler extenders (`extenders:` in KubeSchedulerConfiguration) as v1.34's HTTPExtender calls
them: against real HTTP servers the tests start on 127.0.0.1 (one that answers, one that never
answers, one that returns garbage, one that is down), and against a case's Python handler.

Outcomes only: the time an HTTP call takes is real (the timeout is a real one) but takes no
virtual time, and no assertion depends on how long it took."""

from __future__ import annotations

import json
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from harness.case.loader import load_case
from harness.case.runner import run_case
from harness.errors import UserError
from harness.scheduler.extender import (ExtenderError, HTTPExtender, MAX_EXTENDER_PRIORITY,
                                        new_http_extender)
from harness.testing import make_node, make_pod
from harness.framework.types import NodeInfo


# ---------------------------------------------------------------------------------------------
# servers
# ---------------------------------------------------------------------------------------------
class Recorder(BaseHTTPRequestHandler):
    """/filter keeps the nodes labelled gpu=true (the others fail), /prioritize gives node-b the
    top priority, /bind records the binding, /garbage answers 200 with a body that is no JSON,
    /error answers 500."""

    requests: list = []

    def log_message(self, *a):  # quiet
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append((self.path, self.headers["Content-Type"], body))
        verb = self.path.rsplit("/", 1)[-1]
        if verb == "garbage":
            return self._answer(200, b"garbage{")
        if verb == "error":
            return self._answer(500, b"{}")
        if verb == "filter":
            if "nodenames" in body:
                names = body["nodenames"]
                keep = [n for n in names if n != "node-c"]
                out = {"nodenames": keep, "failedNodes": {"node-c": "no gpu driver"}}
            else:
                items = body["nodes"]["items"]
                keep = [n for n in items if (n["metadata"].get("labels") or {}).get("gpu") == "true"]
                failed = {n["metadata"]["name"]: "no gpu driver" for n in items if n not in keep}
                out = {"nodes": {"metadata": {}, "items": keep}, "failedNodes": failed}
        elif verb == "prioritize":
            names = body.get("nodenames") or [n["metadata"]["name"] for n in body["nodes"]["items"]]
            out = [{"host": n, "score": MAX_EXTENDER_PRIORITY if n == "node-b" else 0} for n in names]
        elif verb == "bind":
            out = {}
        else:
            out = {"error": f"unknown verb {verb}"}
        self._answer(200, json.dumps(out).encode())

    def _answer(self, code, data):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server():
    Recorder.requests = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def silent():
    """A server that accepts connections (the kernel's backlog) and never answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    yield f"http://127.0.0.1:{s.getsockname()[1]}"
    s.close()


@pytest.fixture
def down():
    """A port nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def _nodes(*names, gpu=("node-a", "node-b")):
    out = []
    for n in names:
        ni = NodeInfo()
        ni.set_node(make_node(n, labels={"gpu": "true"} if n in gpu else {}))
        out.append(ni)
    return out


# ---------------------------------------------------------------------------------------------
# HTTPExtender against a real server
# ---------------------------------------------------------------------------------------------
def test_filter_sends_extender_args_and_reads_the_filter_result(server):
    ext = new_http_extender({"urlPrefix": server + "/", "filterVerb": "filter"}, None, "cfg", "extenders[0]")
    kept, failed, unresolvable = ext.filter(make_pod("web"), _nodes("node-a", "node-b", "node-c"))
    assert [ni.node.name for ni in kept] == ["node-a", "node-b"]
    assert failed == {"node-c": "no gpu driver"} and unresolvable == {}
    path, ctype, body = Recorder.requests[0]
    assert path == "/filter" and ctype == "application/json"
    assert set(body) == {"pod", "nodes"} and body["pod"]["metadata"]["name"] == "web"
    assert [n["metadata"]["name"] for n in body["nodes"]["items"]] == ["node-a", "node-b", "node-c"]
    # the nodes the extender returned are new NodeInfos (NewNodeInfo().SetNode): no pods
    assert all(not ni.pods for ni in kept)


def test_node_cache_capable_sends_node_names(server):
    ext = new_http_extender({"urlPrefix": server, "filterVerb": "filter", "prioritizeVerb": "prioritize",
                             "weight": 3, "nodeCacheCapable": True}, None, "cfg", "extenders[0]")
    nodes = _nodes("node-a", "node-b", "node-c")
    kept, failed, _ = ext.filter(make_pod("web"), nodes)
    assert kept == nodes[:2] and failed == {"node-c": "no gpu driver"}
    assert Recorder.requests[0][2]["nodenames"] == ["node-a", "node-b", "node-c"]
    assert "nodes" not in Recorder.requests[0][2]
    scores, weight = ext.prioritize(make_pod("web"), nodes)
    assert scores == [("node-a", 0), ("node-b", 10), ("node-c", 0)] and weight == 3


def test_bind_sends_extender_binding_args(server):
    ext = new_http_extender({"urlPrefix": server, "bindVerb": "bind"}, None, "cfg", "extenders[0]")
    pod = make_pod("web")
    ext.bind(pod, "node-b")
    assert Recorder.requests[0][2] == {"podName": "web", "podNamespace": "default", "podUID": pod.uid,
                                       "node": "node-b"}


def test_a_non_200_answer_is_upstreams_error(server):
    ext = new_http_extender({"urlPrefix": server, "filterVerb": "error"}, None, "cfg", "extenders[0]")
    with pytest.raises(ExtenderError, match=rf"^failed error with extender at URL {server}/error, code 500$"):
        ext.filter(make_pod("web"), _nodes("node-a"))


def test_garbage_is_a_decode_error(server):
    ext = new_http_extender({"urlPrefix": server, "filterVerb": "garbage"}, None, "cfg", "extenders[0]")
    with pytest.raises(ExtenderError, match="invalid character 'g' looking for beginning of value"):
        ext.filter(make_pod("web"), _nodes("node-a"))


def test_a_server_that_never_answers_times_out(silent):
    ext = new_http_extender({"urlPrefix": silent, "filterVerb": "filter", "httpTimeout": "200ms"}, None,
                            "cfg", "extenders[0]")
    with pytest.raises(ExtenderError, match=r"Client\.Timeout exceeded while awaiting headers"):
        ext.filter(make_pod("web"), _nodes("node-a"))


def test_a_server_that_is_down_is_connection_refused(down):
    ext = new_http_extender({"urlPrefix": down, "filterVerb": "filter"}, None, "cfg", "extenders[0]")
    with pytest.raises(ExtenderError, match=r'^Post "http://127\.0\.0\.1:\d+/filter": dial tcp 127\.0\.0\.1:\d+: '
                                            r'connect: connection refused$'):
        ext.filter(make_pod("web"), _nodes("node-a"))


def test_default_timeout_and_managed_resources():
    ext = new_http_extender({"urlPrefix": "http://x", "managedResources": [{"name": "example.com/gpu"}]},
                            None, "cfg", "extenders[0]")
    assert ext.transport.timeout == 5.0
    gpu = make_pod("gpu")
    gpu.spec["containers"][0].setdefault("resources", {})["limits"] = {"example.com/gpu": "1"}
    assert ext.is_interested(gpu) and not ext.is_interested(make_pod("plain"))
    assert HTTPExtender("http://y").is_interested(make_pod("plain"))


# ---------------------------------------------------------------------------------------------
# whole cases, the configuration naming an extender on 127.0.0.1
# ---------------------------------------------------------------------------------------------
def _case(tmp_path, extenders, expect, steps=None, pods=("web",), gpu=("node-a", "node-b")):
    nodes = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n, **({"gpu": "true"} if n in gpu else {})}},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
             for n in ("node-a", "node-b", "node-c")]
    case = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "ext"},
            "config": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler"}], "extenders": extenders},
            "cluster": nodes,
            "pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": p},
                      "spec": {"containers": [{"name": "c", "image": "pause",
                                               "resources": {"requests": {"cpu": "100m"}}}]}} for p in pods],
            "expect": expect}
    if steps:
        case["steps"] = steps
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(case))
    return load_case(str(path))


def test_case_with_filter_prioritize_and_bind_on_a_real_server(tmp_path, server):
    c = _case(tmp_path, [{"urlPrefix": server, "filterVerb": "filter", "prioritizeVerb": "prioritize",
                          "bindVerb": "bind", "weight": 5}],
              {"bindings": {"web": "node-b"}})
    res = run_case(c)
    assert res.passed, res.failures
    verbs = [p for p, _, _ in Recorder.requests]
    assert verbs == ["/filter", "/prioritize", "/bind"]
    assert Recorder.requests[2][2]["node"] == "node-b"


def test_case_with_an_ignorable_extender_down(tmp_path, server, down):
    # the ignorable one (first in the configuration) goes to the tail and is skipped on error
    c = _case(tmp_path, [{"urlPrefix": down, "filterVerb": "filter", "bindVerb": "bind", "ignorable": True},
                         {"urlPrefix": server, "filterVerb": "filter", "prioritizeVerb": "prioritize",
                          "weight": 1}],
              {"bindings": {"web": "node-b"}})
    res = run_case(c)
    assert res.passed, res.failures
    assert [p for p, _, _ in Recorder.requests] == ["/filter", "/prioritize"]


def test_a_non_ignorable_extender_down_fails_the_attempt_with_upstreams_message(tmp_path, down):
    c = _case(tmp_path, [{"urlPrefix": down, "filterVerb": "filter"}],
              {"bindings": {"web": None}})
    res = run_case(c)
    assert res.passed, res.failures
    msg = res.messages["default/web"]
    assert msg.startswith(f'Post "{down}/filter": dial tcp ') and msg.endswith("connection refused")


def test_a_silent_extender_times_out_and_an_ignorable_one_is_skipped(tmp_path, silent):
    c = _case(tmp_path, [{"urlPrefix": silent, "filterVerb": "filter", "httpTimeout": "100ms",
                          "ignorable": True}], {"bindings": {"web": ["node-a", "node-b", "node-c"]}})
    res = run_case(c)
    assert res.passed, res.failures


def test_garbage_from_a_non_ignorable_prioritizer_is_ignored_as_upstream_does(tmp_path, server):
    # prioritizeNodes: "Prioritization errors from extender can be ignored"
    c = _case(tmp_path, [{"urlPrefix": server, "prioritizeVerb": "garbage", "weight": 1}],
              {"bindings": {"web": ["node-a", "node-b", "node-c"]}})
    res = run_case(c)
    assert res.passed, res.failures


def test_extender_rejection_is_requeued_by_any_event(tmp_path, server):
    # no node has the gpu label: the plugins pass all three, the extender fails all three, so
    # "Extender" is the pod's only unschedulable plugin; it registers every event
    # (defaultEnqueueExtension), so labelling node-a requeues the pod
    def node(name, gpu):
        labels = {"kubernetes.io/hostname": name, **({"gpu": "true"} if gpu else {})}
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    c = _case(tmp_path, [{"urlPrefix": server, "filterVerb": "filter"}], {"bindings": {"web": "node-a"}},
              steps=[{"expect": {"bindings": {"web": None}, "queue": {"web": "unschedulable"},
                                 "messages": {"web": "0/3 nodes are available: 3 no gpu driver."}}},
                     {"update": [node("node-a", True)]}],
              gpu=())
    res = run_case(c)
    assert res.passed, res.failures


def test_a_case_handler_answers_an_extender_of_the_configuration(tmp_path):
    (tmp_path / "my_extender.py").write_text(
        "from harness.framework import extender\n"
        "CALLS = []\n"
        "@extender\n"
        "def handle(verb, args):\n"
        "    CALLS.append(verb)\n"
        "    if verb == 'filter':\n"
        "        return {'nodenames': [n for n in args['nodenames'] if n != 'node-a'],\n"
        "                'failedAndUnresolvableNodes': {'node-a': 'reserved'}}\n"
        "    if verb == 'prioritize':\n"
        "        return [{'host': n, 'score': 10 if n == 'node-c' else 0} for n in args['nodenames']]\n"
        "    return {}\n")
    c = _case(tmp_path, [{"urlPrefix": "http://gpu-extender.example:8888/", "filterVerb": "filter",
                          "prioritizeVerb": "prioritize", "bindVerb": "bind", "weight": 1,
                          "nodeCacheCapable": True}],
              {"bindings": {"web": "node-c"}})
    c.extenders = [{"urlPrefix": "http://gpu-extender.example:8888/", "python": "my_extender:handle"}]
    res = run_case(c)
    assert res.passed, res.failures
    import my_extender
    assert my_extender.CALLS == ["filter", "prioritize", "bind"]


def test_a_case_handler_for_no_configured_extender_is_an_error(tmp_path):
    (tmp_path / "noop_extender.py").write_text("from harness.framework import extender\n"
                                                "@extender\ndef handle(verb, args):\n    return {}\n")
    c = _case(tmp_path, [], {})
    c.extenders = [{"urlPrefix": "http://nowhere/", "python": "noop_extender:handle"}]
    with pytest.raises(UserError, match="no extender with that urlPrefix"):
        run_case(c)


# ---------------------------------------------------------------------------------------------
# preemption (callExtenders)
# ---------------------------------------------------------------------------------------------
def _preemption_case(tmp_path, answer: str, ignorable: bool = False):
    (tmp_path / "preempt_extender.py").write_text(
        "from harness.framework import extender\n"
        "SEEN = []\n"
        "@extender\n"
        "def handle(verb, args):\n"
        "    SEEN.append((verb, args))\n"
        f"    mode = {answer!r}\n"
        "    victims = args['nodeNameToVictims']\n"
        "    if mode == 'keep':\n"
        "        return {'nodeNameToMetaVictims': {n: {'pods': [{'uid': p['metadata']['uid']} for p in v['pods']],\n"
        "                                              'numPDBViolations': v['numPDBViolations']}\n"
        "                                          for n, v in victims.items()}}\n"
        "    if mode == 'none':\n"
        "        return {'nodeNameToMetaVictims': {}}\n"
        "    if mode == 'novictims':\n"
        "        return {'nodeNameToMetaVictims': {n: {'pods': [], 'numPDBViolations': 0} for n in victims}}\n"
        "    return 'garbage'\n")
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
            "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}}

    def pod(name, cpu, prio, node_name=""):
        spec = {"priority": prio, "containers": [{"name": "c", "image": "pause",
                                                   "resources": {"requests": {"cpu": cpu}}}]}
        if node_name:
            spec["nodeName"] = node_name
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
    case = {"apiVersion": "schedharness/v1alpha1", "kind": "Case", "metadata": {"name": "preempt"},
            "config": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                       "profiles": [{"schedulerName": "default-scheduler"}],
                       "extenders": [{"urlPrefix": "http://preempt.example/", "preemptVerb": "preempt",
                                      "ignorable": ignorable}]},
            "extenders": [{"urlPrefix": "http://preempt.example/", "python": "preempt_extender:handle"}],
            "cluster": [node, pod("low", "2", 0, "node-a")],
            "pods": [pod("high", "2", 100)],
            "expect": {}}
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(case))
    sys_modules_drop("preempt_extender")
    return load_case(str(path))


def sys_modules_drop(name):
    import sys
    sys.modules.pop(name, None)


def test_preemption_goes_through_the_extenders_preempt_verb(tmp_path):
    c = _preemption_case(tmp_path, "keep")
    c.expect = {"preempted": ["default/low"], "bindings": {"high": "node-a"}}
    res = run_case(c)
    assert res.passed, res.failures
    import preempt_extender
    verb, args = preempt_extender.SEEN[0]
    assert verb == "preempt" and args["pod"]["metadata"]["name"] == "high"
    assert [p["metadata"]["name"] for p in args["nodeNameToVictims"]["node-a"]["pods"]] == ["low"]


def test_an_extender_that_keeps_no_candidate_stops_preemption(tmp_path):
    c = _preemption_case(tmp_path, "none")
    c.expect = {"preempted": [], "bindings": {"high": None}, "messages": {"high": "no candidate node for preemption"}}
    res = run_case(c)
    assert res.passed, res.failures


def test_a_node_without_victims_is_an_error_unless_ignorable(tmp_path):
    c = _preemption_case(tmp_path, "novictims")
    c.expect = {"preempted": [], "bindings": {"high": None},
                "messages": {"high": 'expected at least one victim pod on node "node-a"'}}
    res = run_case(c)
    assert res.passed, res.failures
    c = _preemption_case(tmp_path, "novictims", ignorable=True)
    c.expect = {"preempted": [], "bindings": {"high": None}, "messages": {"high": "no candidate node for preemption"}}
    res = run_case(c)
    assert res.passed, res.failures


# ---------------------------------------------------------------------------------------------
# enableHTTPS / tlsConfig against an HTTPS server on 127.0.0.1
# ---------------------------------------------------------------------------------------------
def _self_signed(tmp_path, name):
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make a test certificate")
    cert, key = tmp_path / f"{name}.crt", tmp_path / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


@pytest.fixture
def https_server(tmp_path):
    import ssl

    cert, key = _self_signed(tmp_path, "server")
    Recorder.requests = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(cert), str(key))
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"https://127.0.0.1:{srv.server_address[1]}", cert
    srv.shutdown()
    srv.server_close()


def test_enable_https_without_a_ca_does_not_verify_the_server(https_server):
    url, _ = https_server
    ext = new_http_extender({"urlPrefix": url, "filterVerb": "filter", "enableHTTPS": True}, None,
                            "cfg", "extenders[0]")
    kept, _, _ = ext.filter(make_pod("web"), _nodes("node-a", "node-c"))
    assert [ni.node.name for ni in kept] == ["node-a"]


def test_tls_config_ca_verifies_the_server(https_server, tmp_path):
    import base64

    url, cert = https_server
    ok = new_http_extender({"urlPrefix": url, "filterVerb": "filter", "enableHTTPS": True,
                            "tlsConfig": {"caFile": str(cert)}}, None, "cfg", "extenders[0]")
    assert [ni.node.name for ni in ok.filter(make_pod("web"), _nodes("node-a"))[0]] == ["node-a"]
    other, _ = _self_signed(tmp_path, "other")
    wrong = new_http_extender({"urlPrefix": url, "filterVerb": "filter", "enableHTTPS": True,
                               "tlsConfig": {"caData": base64.b64encode(other.read_bytes()).decode()}},
                              None, "cfg", "extenders[0]")
    with pytest.raises(ExtenderError, match=rf'^Post "{url}/filter": '):
        wrong.filter(make_pod("web"), _nodes("node-a"))


def test_explain_shows_each_extenders_verdict_and_score(capsys):
    """explain: the node an extender filtered out names it and its message, the nodes it kept
    say so, and its score is in the breakdown (score x weight x MaxNodeScore/MaxExtenderPriority)."""
    from harness.cli import main

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    assert main(["explain", os.path.join(root, "cases/extenders/filter-prioritize-bind.yaml")]) == 0
    out = capsys.readouterr().out
    ext = "http://gpu-extender.example:8888/scheduler"
    assert f"node node-a: rejected by extender {ext}" in out
    assert f"extender {ext}: Unschedulable: node is draining" in out
    assert out.count(f"extender {ext}: kept") == 2
    assert f"extender {ext} 10x2x10=200" in out and f"extender {ext} 5x2x10=100" in out
