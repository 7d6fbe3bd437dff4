"""The API server's validation gives the same answer for every object whether the checks of
shared values are remembered (api/valid_memo.py, on while a case's cluster is built) or not."""

from __future__ import annotations

import copy

from hypothesis import given, settings, strategies as st

from harness.api.object_validation import validate_object
from harness.api.valid_memo import remembering

_CONTAINERS = [
    [{"name": "app", "image": "img", "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}}}],
    [{"name": "app", "image": "img", "ports": [{"containerPort": 80, "name": "http"}]}],
    [{"name": "Bad_Name", "image": "img"}],  # not a DNS label
    [{"name": "app", "image": ""}],  # image required
    [{"name": "app", "image": "img", "resoruces": {}}],  # unknown field
    [{"name": "app", "image": "img", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}],
    [],
]
_TOLERATIONS = [None, [{"key": "a", "operator": "Exists"}], [{"key": "a", "operator": "Equal", "value": "b c"}],
                [{"operator": "Equal", "value": "x"}]]
_AFFINITY = [None, {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}},
             {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                 {"weight": 5, "preference": {"matchExpressions": [{"key": "z", "operator": "In", "values": ["a"]}]}}]}}]
_SPREAD = [None, [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}],
           [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]]
_LABELS = [None, {"app": "a"}, {"app": "bad value!"}, {"-bad": "x"}]
_ANNOTATIONS = [None, {"a": "b"}, {"bad key!": "x"}]
_VOLUMES = [None, [{"name": "v", "emptyDir": {}}], [{"name": "v"}, {"name": "v"}]]


_NODE_NAMES = [None, "node-1", "node-2", "Bad_Node", 7]
_PRIORITIES = [None, 1, True, "1", 1.0]
_STATUS = [None, {}, {"phase": "Running"}, {"phase": 1}, {"phase": True}, {"nominatedNodeName": "bad name"},
           {"conditions": [{"type": "Ready"}]}, {"conditions": ["odd"]}, "odd"]


_NAMES = [None, "Bad_Name", 7, ""]
_UIDS = [None, "u1", 5]
_VERSIONS = [None, "12", "x", 3, True]


def _pod(i: int, c: int, t: int, a: int, s: int, lab: int, ann: int, v: int, n: int = 0, pr: int = 0,
         st: int = 0, name: int = 0, uid: int = 0, rv: int = 0) -> dict:
    """A pod whose values below metadata/spec are the pools' own objects (shared, as the case
    loader shares them), with a name and spec of its own (a node name, a priority and a status
    drawn too)."""
    spec = {"containers": _CONTAINERS[c], "tolerations": _TOLERATIONS[t], "affinity": _AFFINITY[a],
            "topologySpreadConstraints": _SPREAD[s], "volumes": _VOLUMES[v], "nodeName": _NODE_NAMES[n],
            "priority": _PRIORITIES[pr]}
    md = {"name": _NAMES[name] if name else f"p{i}", "namespace": "default", "labels": _LABELS[lab],
          "annotations": _ANNOTATIONS[ann], "uid": _UIDS[uid], "resourceVersion": _VERSIONS[rv]}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {k: x for k, x in md.items() if x is not None},
           "spec": {k: x for k, x in spec.items() if x is not None}}
    if _STATUS[st] is not None:
        pod["status"] = _STATUS[st]
    return pod


_PODS = st.lists(st.tuples(st.integers(0, len(_CONTAINERS) - 1), st.integers(0, len(_TOLERATIONS) - 1),
                           st.integers(0, len(_AFFINITY) - 1), st.integers(0, len(_SPREAD) - 1),
                           st.integers(0, len(_LABELS) - 1), st.integers(0, len(_ANNOTATIONS) - 1),
                           st.integers(0, len(_VOLUMES) - 1), st.integers(0, len(_NODE_NAMES) - 1),
                           st.integers(0, len(_PRIORITIES) - 1), st.integers(0, len(_STATUS) - 1)),
                 min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(_PODS)
def test_remembered_checks_give_the_same_answers(choices):
    pods = [_pod(i, *c) for i, c in enumerate(choices)]
    plain = [validate_object(copy.deepcopy(p)) for p in pods]  # nothing shared, nothing remembered
    with remembering():
        remembered = [validate_object(p) for p in pods]
        again = [validate_object(p) for p in pods]
    assert remembered == plain
    assert again == plain
    assert [validate_object(p) for p in pods] == plain  # and after: every check runs again


_REQUESTS = [[{"name": "app", "resources": {"requests": {"cpu": "100m"}}}], None,
             [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}, "restartPolicy": "Always"}],
             [{"name": "init", "resources": {"limits": {"cpu": "2"}}}]]
_STATUSES = [None, [], [{"name": "app", "ready": True}], [{"name": "sidecar"}], [{"name": "app", "resources": {"requests": {"cpu": "1"}}}],
             [{"name": "app", "allocatedResources": {"cpu": "1"}}], ["odd"], [{"name": 1}]]
_OVERHEAD = [None, {"cpu": "10m"}]
_CONDITIONS = [None, [], [{"type": "Ready", "status": "True"}],
               [{"type": "PodResizePending", "reason": "Infeasible"}], [{"type": "PodResizePending"}], ["odd"]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, len(_STATUSES) - 1),
                          st.integers(0, len(_STATUSES) - 1), st.integers(0, len(_CONDITIONS) - 1),
                          st.integers(0, 1)), min_size=1, max_size=12))
def test_remembered_resource_keys_are_the_plain_ones(choices):
    """What a pod's resource requests are computed from (objects._resources_key), remembered
    per shared value while remembering, is the plain key."""
    from harness.api.objects import Pod, _resources_key

    def pod(c, i, cs, ics, cond, ovh):
        spec = {"containers": _REQUESTS[c], "initContainers": _REQUESTS[i],
                "overhead": _OVERHEAD[ovh]}
        status = {"containerStatuses": _STATUSES[cs], "initContainerStatuses": _STATUSES[ics],
                  "conditions": _CONDITIONS[cond]}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": {k: x for k, x in spec.items() if x is not None},
                "status": {k: x for k, x in status.items() if x is not None}}

    raws = [pod(*c) for c in choices]
    plain = [_resources_key(Pod(copy.deepcopy(r))) for r in raws]
    with remembering():
        remembered = [_resources_key(Pod(r)) for r in raws]
        again = [_resources_key(Pod(r)) for r in raws]
    assert remembered == plain
    assert again == plain


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, len(_NODE_NAMES) - 1), st.integers(0, len(_PRIORITIES) - 1),
                          st.integers(0, len(_STATUS) - 1), st.integers(0, len(_NAMES) - 1),
                          st.integers(0, len(_UIDS) - 1), st.integers(0, len(_VERSIONS) - 1), st.integers(0, 1)),
                min_size=1, max_size=12))
def test_replicas_differing_in_node_priority_status_or_names_give_the_plain_answers(choices):
    """Replicas (the same containers, volumes...) that differ in their node name, priority,
    status, name, uid or resourceVersion: a pod's checks but its nodeName are remembered per
    spec and status, its metadata's but the name, uid and resourceVersion per the rest of its
    metadata, never across a difference."""
    pods = [_pod(i, 0, 1, 0, 1, lab, 1, v, n, pr, s, name, uid, rv)
            for i, (v, n, pr, s, name, uid, rv, lab) in enumerate(choices)]
    plain = [validate_object(copy.deepcopy(p)) for p in pods]
    with remembering():
        remembered = [validate_object(p) for p in pods]
        again = [validate_object(p) for p in pods]
    assert remembered == plain
    assert again == plain


# -- replicas checked as "the pod found valid, but these members" (api/replica_check.py) ----------
_R_CONTAINERS = [_CONTAINERS[0], _CONTAINERS[2]]  # a valid list, a refused one (shared values)
_R_LABELS = [{"app": "a"}, {"app": "b"}]
_R_CONDITIONS = [[{"type": "Ready", "status": "True"}], [{"type": "Ready", "status": "True"}], ["odd"]]
_R_STATE = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
_R_STATUSES = [  # a container status of the replica's own (built anew per pod)
    lambda i: [{"name": "app", "containerID": f"c://{i}", "state": _R_STATE, "ready": True}],
    lambda i: [{"name": "app", "containerID": f"c://{i}", "state": _R_STATE, "ready": True, "readdy": 1}],
    lambda i: [{"name": "app", "containerID": f"c://{i}", "state": {"running": {"startedAt": "x", "oops": 1}}}],
    lambda i: [{"name": "app", "state": _R_STATE}, {"name": "side", "containerID": i}],
    lambda i: "odd",
    lambda i: None,
]
_R_IPS = [lambda i: [{"ip": f"10.0.0.{i}"}], lambda i: [{"ip": "1.2.3.4", "ipp": 1}], lambda i: [7],
          lambda i: f"10.0.{i}.1", lambda i: None]


def _replica(i: int, c: int, lab: int, ns: int, name: int, uid: int, rv: int, n: int, pr: int, phase: int,
             cond: int, cs: int, ips: int, extra: int, order: int) -> dict:
    """A pod built as the case loader builds a Deployment's replica: the shared values are the
    pools' own objects, its name, uid, resourceVersion, nodeName and status of its own; drawn
    among them, the differences validation must see (wrong types, unknown fields, other keys)."""
    md = {"name": _NAMES[name] if name else f"r{i}", "namespace": ("default", "other", 7)[ns],
          "labels": _R_LABELS[lab], "uid": _UIDS[uid] if uid else f"u{i}",
          "resourceVersion": _VERSIONS[rv] if rv else str(i)}
    spec = {"containers": _R_CONTAINERS[c], "tolerations": _TOLERATIONS[1], "nodeName": _NODE_NAMES[n],
            "priority": (1, 2000, True, "1", 1.0)[pr]}
    status = {"phase": ("Running", "Pending", 3)[phase], "conditions": _R_CONDITIONS[cond],
              "containerStatuses": _R_STATUSES[cs](i), "podIPs": _R_IPS[ips](i), "podIP": f"10.1.{i}.1"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {k: x for k, x in md.items() if x is not None},
           "spec": {k: x for k, x in spec.items() if x is not None},
           "status": {k: x for k, x in status.items() if x is not None}}
    if extra == 1:
        pod["spec"]["toleration"] = []  # an unknown field
    elif extra == 2:
        pod["metadata"]["generateName"] = "r-"
    elif extra == 3:
        del pod["status"]
    elif extra == 4:  # the same values, a key misspelt (an unknown field)
        pod["spec"] = {("toleration" if k == "tolerations" else k): x for k, x in pod["spec"].items()}
    if order:
        pod["status" if order == 1 and "status" in pod else "metadata"] = dict(
            reversed(list(pod["status" if order == 1 and "status" in pod else "metadata"].items())))
    return pod


# each dimension of _replica: how many values it draws from; a replica is the base pod (every
# dimension 0 but the node name, 1: a valid pod) with at most two of them drawn otherwise
_R_SIZES = (2, 2, 3, len(_NAMES), len(_UIDS), len(_VERSIONS), len(_NODE_NAMES), 5, 3, 3, len(_R_STATUSES),
            len(_R_IPS), 5, 3)
_R_BASE = (0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0)
_REPLICAS = st.lists(st.lists(st.tuples(st.integers(0, len(_R_SIZES) - 1), st.integers(0, 5)), max_size=2),
                     min_size=1, max_size=16)


def _drawn(changes) -> tuple:
    out = list(_R_BASE)
    for dim, value in changes:
        out[dim] = value % _R_SIZES[dim]
    return tuple(out)


def _admit_all(pods, features):
    """Each pod admitted as CaseRun._admit does (default_object: validation, then defaulting,
    which writes into metadata and spec): the objects afterwards, or the error."""
    from harness.case.apiserver import ApiServerDefaults
    from harness.errors import CaseError

    api = ApiServerDefaults([], "case.yaml", features)
    out = []
    for i, p in enumerate(pods):
        try:
            out.append(api.default_object(p, f"cluster[{i}]", i))
        except CaseError as e:
            out.append(str(e))
    return out


@settings(max_examples=500, deadline=None)
@given(_REPLICAS, st.sampled_from(("v1.34", "v1.35", "v1.36")))
def test_replicas_checked_against_a_valid_pod_give_the_plain_answers(choices, version):
    """A replica that differs from a pod found valid only in its own members (name, uid,
    resourceVersion, nodeName, a status member validation does not read) has those checked
    alone: the objects and errors of the API server's admission are the plain ones, whatever
    else differs (a value, a type, a key, the keys' order, an unknown field)."""
    from harness.versions import resolve

    features = resolve(version)
    pods = [_replica(i, *_drawn(c)) for i, c in enumerate(choices)]
    plain = _admit_all([copy.deepcopy(p) for p in pods], features)  # nothing shared, nothing remembered
    with remembering():
        remembered = _admit_all(pods, features)
    assert remembered == plain
