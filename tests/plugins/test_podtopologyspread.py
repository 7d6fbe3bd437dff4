"""PodTopologySpread: the table tests of upstream's filtering_test.go, scoring_test.go and
plugin_test.go (kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread),
plus helper/spread_test.go (GetPodServices), the common helpers and the args validation."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from builtin_plugins.podtopologyspread import PodTopologySpread
from builtin_plugins.podtopologyspread.common import (TopologySpreadConstraint,
                                                      count_pods_match_selector, default_selector,
                                                      get_pod_services,
                                                      merge_label_set_with_selector)
from builtin_plugins.podtopologyspread.filtering import (ERR_REASON_CONSTRAINTS_NOT_MATCH,
                                                         ERR_REASON_NODE_LABEL_NOT_MATCH,
                                                         PRE_FILTER_STATE_KEY, CriticalPaths,
                                                         get_pre_filter_state)
from builtin_plugins.podtopologyspread.scoring import (PRE_SCORE_STATE_KEY, go_round,
                                                       topology_normalizing_weight)
from harness.api import labels as labelsel
from harness.api.objects import Node, Pod
from harness.framework import Code, NodeScore, PodInfo, QueueingHint
from harness.testing import FakeHandle, new_state
from harness.versions import resolve

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
MAX_INT32 = (1 << 31) - 1

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
TAINTS = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]
HONOR, IGNORE = "Honor", "Ignore"
DNS, SA = "DoNotSchedule", "ScheduleAnyway"


def ml(**kv) -> Dict[str, Any]:
    return {"matchLabels": dict(kv)}


def lbl(spec) -> Dict[str, str]:
    """'foo bar' -> {foo: '', bar: ''}; a dict is taken as is."""
    if spec is None:
        return {}
    if isinstance(spec, dict):
        return dict(spec)
    return {k: "" for k in spec.split()}


def sc(max_skew, key, when, selector, min_domains=None, naff=None, ntaint=None, mlk=None):
    """st.PodWrapper.SpreadConstraint."""
    c: Dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        c["labelSelector"] = selector
    if min_domains is not None:
        c["minDomains"] = min_domains
    if naff is not None:
        c["nodeAffinityPolicy"] = naff
    if ntaint is not None:
        c["nodeTaintsPolicy"] = ntaint
    if mlk is not None:
        c["matchLabelKeys"] = list(mlk)
    return c


_uid = [0]


def P(name="p", node="", ns="default", labels=None, c=(), node_selector=None, aff_in=None,
      aff_not_in=None, tolerations=None, terminating=False, owner=None, uid=None) -> Pod:
    _uid[0] += 1
    spec: Dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if node:
        spec["nodeName"] = node
    if c:
        spec["topologySpreadConstraints"] = list(c)
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    exprs = []
    if aff_in is not None:
        exprs.append({"key": aff_in[0], "operator": "In", "values": list(aff_in[1])})
    if aff_not_in is not None:
        exprs.append({"key": aff_not_in[0], "operator": "NotIn", "values": list(aff_not_in[1])})
    if exprs:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": exprs}]}}}
    if tolerations is not None:
        spec["tolerations"] = [{"key": k, "operator": "Exists", "effect": "NoSchedule"} for k in tolerations]
    md: Dict[str, Any] = {"name": name, "namespace": ns, "labels": lbl(labels),
                          "uid": uid or f"uid-{name}-{_uid[0]}"}
    if terminating:
        md["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if owner is not None:
        md["ownerReferences"] = [dict(owner, controller=True)]
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec})


def N(name, labels=None, taints=None, **kw) -> Node:
    lb = dict(labels or {})
    lb.update(kw)
    spec = {"taints": list(taints)} if taints else {}
    return Node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lb},
                 "spec": spec, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


def ZN(name, zone, **kw) -> Node:
    """A node labelled zone=<zone>, node=<name>."""
    return N(name, {"zone": zone, "node": name}, **kw)


def HN(name, **kw) -> Node:
    return N(name, {HOST: name}, **kw)


def service(selector, ns="default", name="svc"):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": selector}}


def replicaset(name, selector, ns="default"):
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": selector}}


RS_OWNER = lambda name: {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name}  # noqa: E731


def make_plugin(nodes=(), pods=(), objs=(), args=None, inclusion=False, match_label_keys=False):
    """The plugin over a snapshot, with the feature flags as the upstream test sets them (its
    table leaves them false unless a row says otherwise)."""
    handle = FakeHandle(nodes, pods, objs)
    pl = PodTopologySpread(args if args is not None else {"defaultingType": "List"}, handle)
    pl.enable_node_inclusion_policy = inclusion
    pl.enable_match_label_keys = match_label_keys
    return pl, handle


def C(max_skew, key, selector, min_domains=1, naff=HONOR, ntaint=IGNORE):
    sel = selector if isinstance(selector, labelsel.Selector) else labelsel.from_label_selector(selector)
    return TopologySpreadConstraint(max_skew, key, sel, min_domains, naff, ntaint)


def sorted_paths(p):
    """The upstream comparator: topology values paired with equal MatchNums sorted."""
    (v0, n0), (v1, n1) = p
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return ((v0, n0), (v1, n1))


def check_state(got, want_constraints, want_paths, want_counts):
    assert got.constraints == want_constraints
    assert [sorted_paths(p.as_tuples()) for p in got.critical_paths] == \
        [sorted_paths(tuple(tuple(x) for x in p)) for p in want_paths]
    assert got.tp_value_to_match_num == want_counts


MAXP = ("", MAX_INT32)
NEW_PATHS = (MAXP, MAXP)

# =============================================================================================
# filtering_test.go: TestPreFilterState
# =============================================================================================
ABXY = lambda: [ZN("node-a", "zone1"), ZN("node-b", "zone1"), ZN("node-x", "zone2"), ZN("node-y", "zone2")]  # noqa: E731
ABY = lambda: [ZN("node-a", "zone1"), ZN("node-b", "zone1"), ZN("node-y", "zone2")]  # noqa: E731


def _pods(spec: str, ns_of=None):
    """'p-a1@node-a:foo p-b1@node-b:foo,bar' -> pods; ':' labels optional."""
    out = []
    for item in spec.split():
        name, _, rest = item.partition("@")
        node, _, labels = rest.partition(":")
        ns = (ns_of or {}).get(name, "default")
        out.append(P(name, node=node, ns=ns, labels=" ".join(labels.split(",")) if labels else None))
    return out


PREFILTER_CASES = [
    dict(name="clean cluster with one spreadConstraint",
         pod=P(labels="foo", c=[sc(5, "zone", DNS, ml(foo="bar"))]), nodes=ABXY(),
         want=([C(5, "zone", ml(foo="bar"))], [(("zone1", 0), ("zone2", 0))], [{"zone1": 0, "zone2": 0}])),
    dict(name="normal case with one spreadConstraint",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-y1@node-y:foo p-y2@node-y:foo",
         want=([C(1, "zone", FOO)], [(("zone2", 2), ("zone1", 3))], [{"zone1": 3, "zone2": 2}])),
    dict(name="normal case with null label selector",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, None)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-y1@node-y:foo p-y2@node-y:foo",
         want=([C(1, "zone", labelsel.Selector.nothing())], [(("zone2", 0), ("zone1", 0))],
               [{"zone1": 0, "zone2": 0}])),
    dict(name="normal case with one spreadConstraint, on a 3-zone cluster",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]),
         nodes=ABXY() + [ZN("node-o", "zone3"), ZN("node-p", "zone3")],
         existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-y1@node-y:foo p-y2@node-y:foo",
         want=([C(1, "zone", FOO)], [(("zone3", 0), ("zone2", 2))], [{"zone1": 3, "zone2": 2, "zone3": 0}])),
    dict(name="namespace mismatch doesn't count",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-y1@node-y:foo p-y2@node-y:foo",
         ns_of={"p-a2": "ns1", "p-y1": "ns2"},
         want=([C(1, "zone", FOO)], [(("zone2", 1), ("zone1", 2))], [{"zone1": 2, "zone2": 1}])),
    dict(name="normal case with two spreadConstraints",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-y1@node-y:foo p-y2@node-y:foo "
                  "p-y3@node-y:foo p-y4@node-y:foo",
         want=([C(1, "zone", FOO), C(1, "node", FOO)],
               [(("zone1", 3), ("zone2", 4)), (("node-x", 0), ("node-b", 1))],
               [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}])),
    dict(name="soft spreadConstraints should be bypassed",
         pod=P(labels="foo", c=[sc(1, "zone", SA, FOO), sc(1, "zone", DNS, FOO), sc(1, "node", SA, FOO),
                                sc(1, "node", DNS, FOO)]), nodes=ABY(),
         existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-y1@node-y:foo p-y2@node-y:foo "
                  "p-y3@node-y:foo p-y4@node-y:foo",
         want=([C(1, "zone", FOO), C(1, "node", FOO)],
               [(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
               [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}])),
    dict(name="different labelSelectors - simple version",
         pod=P(labels="foo bar", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR)]), nodes=ABY(),
         existing="p-a@node-a:foo p-b@node-b:bar",
         want=([C(1, "zone", FOO), C(1, "node", BAR)],
               [(("zone2", 0), ("zone1", 1)), (("node-a", 0), ("node-y", 0))],
               [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}])),
    dict(name="different labelSelectors - complex pods",
         pod=P(labels="foo bar", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR)]), nodes=ABY(),
         existing="p-a1@node-a:foo p-a2@node-a:foo,bar p-b1@node-b:foo p-y1@node-y:foo "
                  "p-y2@node-y:foo,bar p-y3@node-y:foo p-y4@node-y:foo,bar",
         want=([C(1, "zone", FOO), C(1, "node", BAR)],
               [(("zone1", 3), ("zone2", 4)), (("node-b", 0), ("node-a", 1))],
               [{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}])),
    dict(name="two spreadConstraints, and with podAffinity",
         pod=P(labels="foo", aff_not_in=("node", ["node-x"]),
               c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-y1@node-y:foo p-y2@node-y:foo "
                  "p-y3@node-y:foo p-y4@node-y:foo",
         want=([C(1, "zone", FOO), C(1, "node", FOO)],
               [(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
               [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}])),
    dict(name="default constraints and a service",
         pod=P(labels={"foo": "bar", "baz": "kar"}),
         default_constraints=[sc(3, "node", DNS, None), sc(2, "node", SA, None), sc(5, "rack", DNS, None)],
         objs=[service({"foo": "bar"})],
         want=([C(3, "node", ml(foo="bar")), C(5, "rack", ml(foo="bar"))], [NEW_PATHS, NEW_PATHS], [{}, {}])),
    dict(name="default constraints and a service that doesn't match",
         pod=P(labels={"foo": "bar"}), default_constraints=[sc(3, "node", DNS, None)],
         objs=[service({"baz": "kep"})], want_status=Code.Skip),
    dict(name="default constraints and a service, but pod has constraints",
         pod=P(labels={"foo": "bar", "baz": "tar"},
               c=[sc(1, "zone", DNS, ml(baz="tar")), sc(2, "planet", SA, ml(fot="rok"))]),
         default_constraints=[sc(2, "node", DNS, None)], objs=[service({"foo": "bar"})],
         want=([C(1, "zone", ml(baz="tar"))], [NEW_PATHS], [{}])),
    dict(name="default soft constraints and a service",
         pod=P(labels={"foo": "bar"}), default_constraints=[sc(2, "node", SA, None)],
         objs=[service({"foo": "bar"})], want_status=Code.Skip),
    dict(name="TpKeyToDomainsNum is calculated when MinDomains is enabled",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-y1@node-y:foo p-y2@node-y:foo "
                  "p-y3@node-y:foo p-y4@node-y:foo",
         want=([C(1, "zone", FOO), C(1, "node", FOO)],
               [(("zone1", 3), ("zone2", 4)), (("node-x", 0), ("node-b", 1))],
               [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}])),
]

_NA = lambda: [N("node-a", {"node": "node-a", "foo": ""}), N("node-b", {"node": "node-b", "foo": ""}),  # noqa: E731
               N("node-c", {"node": "node-c", "bar": ""})]
_NT = lambda: [N("node-a", {"node": "node-a"}), N("node-b", {"node": "node-b"}),  # noqa: E731
               N("node-c", {"node": "node-c", "bar": ""}, taints=TAINTS)]
_NA_PODS = "p-a@node-a:bar p-b@node-b:bar p-c@node-b:bar p-d@node-c"

PREFILTER_CASES += [
    dict(name="feature gate disabled with NodeAffinityPolicy",
         pod=P(labels="foo", node_selector={"foo": ""}, c=[sc(1, "node", DNS, BAR)]), nodes=_NA(),
         existing=_NA_PODS, inclusion=False,
         want=([C(1, "node", BAR)], [(("node-a", 1), ("node-b", 2))], [{"node-a": 1, "node-b": 2}])),
    dict(name="NodeAffinityPolicy honored with labelSelectors",
         pod=P(labels="foo", node_selector={"foo": ""}, c=[sc(1, "node", DNS, BAR)]), nodes=_NA(),
         existing=_NA_PODS, inclusion=True,
         want=([C(1, "node", BAR)], [(("node-a", 1), ("node-b", 2))], [{"node-a": 1, "node-b": 2}])),
    dict(name="NodeAffinityPolicy ignored with labelSelectors",
         pod=P(labels="foo", node_selector={"foo": ""}, c=[sc(1, "node", DNS, BAR, naff=IGNORE)]),
         nodes=_NA(), existing=_NA_PODS, inclusion=True,
         want=([C(1, "node", BAR, naff=IGNORE)], [(("node-c", 0), ("node-a", 1))],
               [{"node-a": 1, "node-b": 2, "node-c": 0}])),
    dict(name="NodeAffinityPolicy honored with nodeAffinity",
         pod=P(labels="foo", aff_in=("foo", [""]), c=[sc(1, "node", DNS, BAR)]), nodes=_NA(),
         existing="p-a@node-a:bar p-c@node-b:bar p-d@node-b:bar p-e@node-c", inclusion=True,
         want=([C(1, "node", BAR)], [(("node-a", 1), ("node-b", 2))], [{"node-a": 1, "node-b": 2}])),
    dict(name="NodeAffinityPolicy ignored with nodeAffinity",
         pod=P(labels="foo", aff_in=("foo", [""]), c=[sc(1, "node", DNS, BAR, naff=IGNORE)]),
         nodes=_NA(), existing=_NA_PODS, inclusion=True,
         want=([C(1, "node", BAR, naff=IGNORE)], [(("node-c", 0), ("node-a", 1))],
               [{"node-a": 1, "node-b": 2, "node-c": 0}])),
    dict(name="feature gate disabled with NodeTaintsPolicy",
         pod=P(labels="foo", c=[sc(1, "node", DNS, BAR)]), nodes=_NT(), existing=_NA_PODS, inclusion=False,
         want=([C(1, "node", BAR)], [(("node-c", 0), ("node-a", 1))],
               [{"node-a": 1, "node-b": 2, "node-c": 0}])),
    dict(name="NodeTaintsPolicy ignored",
         pod=P(labels="foo", c=[sc(1, "node", DNS, BAR)]), nodes=_NT(), existing=_NA_PODS, inclusion=True,
         want=([C(1, "node", BAR)], [(("node-c", 0), ("node-a", 1))],
               [{"node-a": 1, "node-b": 2, "node-c": 0}])),
    dict(name="NodeTaintsPolicy honored",
         pod=P(labels="foo", c=[sc(1, "node", DNS, BAR, ntaint=HONOR)]), nodes=_NT(), existing=_NA_PODS,
         inclusion=True,
         want=([C(1, "node", BAR, ntaint=HONOR)], [(("node-a", 1), ("node-b", 2))],
               [{"node-a": 1, "node-b": 2}])),
    dict(name="NodeTaintsPolicy honored with tolerated taints",
         pod=P(labels="foo", tolerations=["node.kubernetes.io/unschedulable"],
               c=[sc(1, "node", DNS, BAR, ntaint=HONOR)]), nodes=_NT(), existing=_NA_PODS, inclusion=True,
         want=([C(1, "node", BAR, ntaint=HONOR)], [(("node-c", 0), ("node-a", 1))],
               [{"node-a": 1, "node-b": 2, "node-c": 0}])),
    dict(name="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
         pod=P(labels="foo", node_selector={"foo": ""},
               c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO, naff=IGNORE)]),
         nodes=[N("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
                N("node-b", {"zone": "zone1", "node": "node-b"}),
                N("node-x", {"zone": "zone2", "node": "node-x", "foo": ""})],
         existing="p-b1@node-b:foo p-b2@node-b:foo p-x1@node-x:foo", inclusion=True,
         want=([C(1, "zone", FOO), C(1, "node", FOO, naff=IGNORE)],
               [(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
               [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}])),
    dict(name="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO, ntaint=HONOR), sc(1, "node", DNS, FOO)]),
         nodes=[N("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
                N("node-b", {"zone": "zone1", "node": "node-b"}, taints=TAINTS),
                N("node-x", {"zone": "zone2", "node": "node-x", "foo": ""})],
         existing="p-b1@node-b:foo p-b2@node-b:foo p-x1@node-x:foo", inclusion=True,
         want=([C(1, "zone", FOO, ntaint=HONOR), C(1, "node", FOO)],
               [(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
               [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}])),
    dict(name="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore (2)",
         pod=P(labels="foo", node_selector={"foo": ""}, c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]),
         nodes=[N("node-a", {"zone": "zone1", "node": "node-a"}),
                N("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}, taints=TAINTS),
                N("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
                N("node-y", {"zone": "zone2", "node": "node-y"})],
         existing="p-a1@node-a:foo p-a2@node-a:foo p-x1@node-x:foo p-y1@node-y:foo", inclusion=True,
         want=([C(1, "zone", FOO), C(1, "node", FOO)],
               [(("zone1", 0), ("zone2", 1)), (("node-b", 0), ("node-x", 1))],
               [{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}])),
    dict(name="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
         pod=P(labels="foo", node_selector={"foo": ""},
               c=[sc(1, "zone", DNS, FOO, naff=IGNORE), sc(1, "node", DNS, FOO, ntaint=HONOR)]),
         nodes=[N("node-a", {"zone": "zone1", "node": "node-a"}),
                N("node-b", {"zone": "zone1", "node": "node-b", "foo": ""}, taints=TAINTS),
                N("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
                N("node-y", {"zone": "zone2", "node": "node-y", "foo": ""})],
         existing="p-a1@node-a:foo p-a2@node-a:foo p-x1@node-x:foo p-x2@node-x:foo p-y1@node-y:foo",
         inclusion=True,
         want=([C(1, "zone", FOO, naff=IGNORE), C(1, "node", FOO, ntaint=HONOR)],
               [(("zone1", 2), ("zone2", 3)), (("node-y", 1), ("node-x", 2))],
               [{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}])),
]

_MLK_PODS = "p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-y1@node-y:foo p-y2@node-y:foo"


def _fooa_pods():
    return [P("p-a1", node="node-a", labels={"foo": "a"}), P("p-a2", node="node-a", labels={"foo": "a"}),
            P("p-b1", node="node-b", labels={"foo": "a"}), P("p-y1", node="node-y", labels={"foo": "a"}),
            P("p-y2", node="node-y", labels={"foo": "a"})]


PREFILTER_CASES += [
    dict(name="matchLabelKeys ignored when feature gate disabled",
         pod=P(labels="foo bar", c=[sc(1, "zone", DNS, FOO, mlk=["bar"])]), nodes=ABXY(), existing=_MLK_PODS,
         match_label_keys=False,
         want=([C(1, "zone", FOO)], [(("zone2", 2), ("zone1", 3))], [{"zone1": 3, "zone2": 2}])),
    dict(name="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
         pod=P(labels={"foo": "", "bar": "a"}, c=[sc(1, "zone", DNS, FOO, mlk=["bar"])]), nodes=ABXY(),
         existing_pods=lambda: [P("p-a1", node="node-a", labels={"foo": ""}),
                                P("p-a2", node="node-a", labels={"foo": "", "bar": "a"}),
                                P("p-b1", node="node-b", labels={"foo": ""}),
                                P("p-y1", node="node-y", labels={"foo": "", "bar": "a"}),
                                P("p-y2", node="node-y", labels={"bar": ""})],
         match_label_keys=True,
         want=([C(1, "zone", {"matchLabels": {"bar": "a"}, "matchExpressions": FOO["matchExpressions"]})],
               [(("zone2", 1), ("zone1", 1))], [{"zone1": 1, "zone2": 1}])),
    dict(name="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
         pod=P(labels={"foo": "a"}, c=[sc(1, "zone", DNS, {}, mlk=["foo"])]), nodes=ABXY(),
         existing_pods=_fooa_pods, match_label_keys=True,
         want=([C(1, "zone", ml(foo="a"))], [(("zone2", 2), ("zone1", 3))], [{"zone1": 3, "zone2": 2}])),
    dict(name="key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, None, mlk=["bar"])]), nodes=ABXY(),
         existing_pods=_fooa_pods, match_label_keys=True,
         want=([C(1, "zone", labelsel.Selector.nothing())], [(("zone2", 0), ("zone1", 0))],
               [{"zone1": 0, "zone2": 0}])),
    dict(name="no pod is matched when LabelSelector is nil when feature gate disabled",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, None, mlk=["bar"])]), nodes=ABXY(),
         existing_pods=_fooa_pods,
         want=([C(1, "zone", labelsel.Selector.nothing())], [(("zone2", 0), ("zone1", 0))],
               [{"zone1": 0, "zone2": 0}])),
    dict(name="key in matchLabelKeys is ignored when it isn't exist in pod.labels",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO, mlk=["bar"])]), nodes=ABXY(),
         existing_pods=_fooa_pods, match_label_keys=True,
         want=([C(1, "zone", FOO)], [(("zone2", 2), ("zone1", 3))], [{"zone1": 3, "zone2": 2}])),
    dict(name="two spreadConstraints with the same topologyKey",
         pod=P(labels="foo bar", c=[sc(1, "zone", DNS, FOO), sc(1, "zone", DNS, BAR)]), nodes=ABXY(),
         existing="p-a1@node-a:foo,bar p-b1@node-b:foo p-x1@node-x:bar p-y1@node-y:foo,bar p-y2@node-y:bar",
         want=([C(1, "zone", FOO), C(1, "zone", BAR)],
               [(("zone2", 1), ("zone1", 2)), (("zone1", 1), ("zone2", 3))],
               [{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}])),
    dict(name="skip if not specified", pod=P(labels="foo"), nodes=[ZN("node-a", "zone1")],
         want_status=Code.Skip),
]


@pytest.mark.parametrize("tt", PREFILTER_CASES, ids=lambda tt: tt["name"])
def test_pre_filter_state(tt):
    existing = tt["existing_pods"]() if "existing_pods" in tt else _pods(tt.get("existing", ""), tt.get("ns_of"))
    args = {"defaultingType": "List", "defaultConstraints": tt.get("default_constraints", [])}
    pl, handle = make_plugin(tt.get("nodes", []), existing, tt.get("objs", []), args,
                             inclusion=tt.get("inclusion", False),
                             match_label_keys=tt.get("match_label_keys", False))
    cs = new_state()
    _, st = pl.pre_filter(cs, tt["pod"], handle.snapshot.list())
    if "want_status" in tt:
        assert st is not None and st.code == tt["want_status"]
        return
    assert st is None
    check_state(get_pre_filter_state(cs), *tt["want"])


# =============================================================================================
# filtering_test.go: TestPreFilterStateAddPod / TestPreFilterStateRemovePod
# =============================================================================================
NODE_C = C(1, "node", FOO)
ZONE_C = C(1, "zone", FOO)
_AFF = lambda: [N("node-a", {"zone": "zone1", "node": "node-a", "foo": "bar"}),  # noqa: E731
                N("node-b", {"zone": "zone2", "node": "node-b", "foo": ""})]
_TNT = lambda: [N("node-a", {"zone": "zone1", "node": "node-a"}, taints=TAINTS),  # noqa: E731
                N("node-b", {"zone": "zone2", "node": "node-b"})]


def _zp(name, node, zone):
    return P(name, node=node, labels={"foo": "", "zone": zone})


ADD_CASES = [
    dict(name="node a and b both impact current min match",
         preemptor=P(labels="foo", c=[sc(1, "node", DNS, FOO)]), added=P("p-a1", node="node-a", labels="foo"),
         existing="", node_idx=0, nodes=[ZN("node-a", "zone1"), ZN("node-b", "zone1")],
         want=([NODE_C], [(("node-b", 0), ("node-a", 1))], [{"node-a": 1, "node-b": 0}])),
    dict(name="only node a impacts current min match",
         preemptor=P(labels="foo", c=[sc(1, "node", DNS, FOO)]), added=P("p-a1", node="node-a", labels="foo"),
         existing="p-b1@node-b:foo", node_idx=0, nodes=[ZN("node-a", "zone1"), ZN("node-b", "zone1")],
         want=([NODE_C], [(("node-a", 1), ("node-b", 1))], [{"node-a": 1, "node-b": 1}])),
    dict(name="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
         preemptor=P(labels="foo", c=[sc(1, "node", DNS, FOO)]),
         added=P("p-a1", ns="ns1", node="node-a", labels="foo"),
         existing="p-b1@node-b:foo", node_idx=0, nodes=[ZN("node-a", "zone1"), ZN("node-b", "zone1")],
         want=([NODE_C], [(("node-a", 0), ("node-b", 1))], [{"node-a": 0, "node-b": 1}])),
    dict(name="add pod on non-critical node won't trigger re-calculation",
         preemptor=P(labels="foo", c=[sc(1, "node", DNS, FOO)]), added=P("p-b2", node="node-b", labels="foo"),
         existing="p-b1@node-b:foo", node_idx=1, nodes=[ZN("node-a", "zone1"), ZN("node-b", "zone1")],
         want=([NODE_C], [(("node-a", 0), ("node-b", 2))], [{"node-a": 0, "node-b": 2}])),
    dict(name="node a and x both impact topologyKeyToMinPodsMap on zone and node",
         preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]),
         added=P("p-a1", node="node-a", labels="foo"), existing="", node_idx=0,
         nodes=[ZN("node-a", "zone1"), ZN("node-x", "zone2")],
         want=([ZONE_C, NODE_C], [(("zone2", 0), ("zone1", 1)), (("node-x", 0), ("node-a", 1))],
               [{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}])),
    dict(name="only node a impacts topologyKeyToMinPodsMap on zone and node",
         preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]),
         added=P("p-a1", node="node-a", labels="foo"), existing="p-x1@node-x:foo", node_idx=0,
         nodes=[ZN("node-a", "zone1"), ZN("node-x", "zone2")],
         want=([ZONE_C, NODE_C], [(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-x", 1))],
               [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}])),
    dict(name="node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
         preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]),
         added=P("p-a1", node="node-a", labels="foo"),
         existing="p-b1@node-b:foo p-b2@node-b:foo p-x1@node-x:foo", node_idx=0,
         nodes=[ZN("node-a", "zone1"), ZN("node-b", "zone1"), ZN("node-x", "zone2")],
         want=([ZONE_C, NODE_C], [(("zone2", 1), ("zone1", 3)), (("node-a", 1), ("node-x", 1))],
               [{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}])),
    dict(name="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
         preemptor=P(labels="foo bar", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR)]),
         added=P("p-a1", node="node-a", labels="foo"),
         existing="p-b1@node-b:foo,bar p-x1@node-x:foo,bar p-x2@node-x:bar", node_idx=0,
         nodes=[ZN("node-a", "zone1"), ZN("node-b", "zone1"), ZN("node-x", "zone2")],
         want=([ZONE_C, C(1, "node", BAR)], [(("zone2", 1), ("zone1", 2)), (("node-a", 0), ("node-b", 1))],
               [{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}])),
    dict(name="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
         preemptor=P(labels="foo bar", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR)]),
         added=P("p-a1", node="node-a", labels="foo bar"),
         existing="p-b1@node-b:bar p-x1@node-x:foo,bar p-x2@node-x:bar", node_idx=0,
         nodes=[ZN("node-a", "zone1"), ZN("node-b", "zone1"), ZN("node-x", "zone2")],
         want=([ZONE_C, C(1, "node", BAR)], [(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-b", 1))],
               [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}])),
]
for _incl in (False, True):
    ADD_CASES += [
        dict(name=f"add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy {_incl}",
             preemptor=P(labels="foo", aff_not_in=("foo", ["bar"]), c=[sc(1, "zone", DNS, FOO)]),
             node_idx=0, added=_zp("p-a1", "node-a", "zone1"),
             existing_pods=lambda: [_zp("p-a2", "node-a", "zone1"), _zp("p-b1", "node-b", "zone2")],
             nodes=_AFF(), inclusion=_incl,
             want=([ZONE_C], [(("zone2", 1), MAXP)], [{"zone2": 1}])),
        dict(name=f"add a pod when scheduling node affinity matched pod with NodeInclusionPolicy {_incl}",
             preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), node_idx=1,
             added=_zp("p-b1", "node-b", "zone2"),
             existing_pods=lambda: [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
             nodes=_AFF(), inclusion=_incl,
             want=([ZONE_C], [(("zone1", 1), ("zone2", 2))], [{"zone1": 1, "zone2": 2}])),
    ]
ADD_CASES += [
    dict(name="add a label selector not matched pod when with NodeInclusionPolicy enabled",
         preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), node_idx=1,
         added=P("p-b1", node="node-b", labels={"zone": "zone2"}),
         existing_pods=lambda: [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
         nodes=_AFF(), inclusion=True,
         want=([ZONE_C], [(("zone1", 1), ("zone2", 1))], [{"zone1": 1, "zone2": 1}])),
    dict(name="add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled",
         preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), node_idx=1,
         added=_zp("p-b1", "node-b", "zone2"),
         existing_pods=lambda: [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
         nodes=_TNT(), inclusion=False,
         want=([ZONE_C], [(("zone1", 1), ("zone2", 2))], [{"zone2": 2, "zone1": 1}])),
    dict(name="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
         preemptor=P(labels="foo", tolerations=["node.kubernetes.io/unschedulable"],
                     c=[sc(1, "zone", DNS, FOO)]), node_idx=1,
         added=_zp("p-b1", "node-b", "zone2"),
         existing_pods=lambda: [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
         nodes=_TNT(), inclusion=True,
         want=([ZONE_C], [(("zone1", 1), ("zone2", 2))], [{"zone2": 2, "zone1": 1}])),
]


@pytest.mark.parametrize("tt", ADD_CASES, ids=lambda tt: tt["name"])
def test_pre_filter_state_add_pod(tt):
    existing = tt["existing_pods"]() if "existing_pods" in tt else _pods(tt.get("existing", ""))
    pl, handle = make_plugin(tt["nodes"], existing, inclusion=tt.get("inclusion", False))
    cs = new_state()
    _, st = pl.pre_filter(cs, tt["preemptor"], handle.snapshot.list())
    assert st is None
    ni = handle.snapshot.get(tt["nodes"][tt["node_idx"]].name)
    assert pl.add_pod(cs, tt["preemptor"], PodInfo(tt["added"]), ni) is None
    check_state(get_pre_filter_state(cs), *tt["want"])


REMOVE_CASES = [
    dict(name="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
         preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]),
         nodes=[ZN("node-a", "zone1"), ZN("node-b", "zone1"), ZN("node-x", "zone2")],
         existing="p-a1@node-a:foo p-b1@node-b:foo p-x1@node-x:foo", deleted_idx=0, node_idx=0,
         want=([ZONE_C], [(("zone1", 1), ("zone2", 1))], [{"zone1": 1, "zone2": 1}])),
    dict(name="one spreadConstraint on node, topologyKeyToMinPodsMap changed",
         preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-b1@node-b:foo p-x1@node-x:foo p-y1@node-y:foo", deleted_idx=0, node_idx=0,
         want=([ZONE_C], [(("zone1", 1), ("zone2", 2))], [{"zone1": 1, "zone2": 2}])),
    dict(name="delete an irrelevant pod won't help",
         preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), nodes=ABXY(),
         existing="p-a0@node-a:bar p-a1@node-a:foo p-b1@node-b:foo p-x1@node-x:foo p-y1@node-y:foo",
         deleted_idx=0, node_idx=0,
         want=([ZONE_C], [(("zone1", 2), ("zone2", 2))], [{"zone1": 2, "zone2": 2}])),
    dict(name="delete a non-existing pod won't help",
         preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-b1@node-b:foo p-x1@node-x:foo p-y1@node-y:foo",
         deleted_idx=-1, deleted=P("p-a0", node="node-a", labels="bar"), node_idx=0,
         want=([ZONE_C], [(("zone1", 2), ("zone2", 2))], [{"zone1": 2, "zone2": 2}])),
    dict(name="two spreadConstraints",
         preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]),
         nodes=[ZN("node-a", "zone1"), ZN("node-b", "zone1"), ZN("node-x", "zone2")],
         existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-x1@node-x:foo p-x2@node-x:foo",
         deleted_idx=3, node_idx=2,
         want=([ZONE_C, NODE_C], [(("zone2", 1), ("zone1", 3)), (("node-b", 1), ("node-x", 1))],
               [{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}])),
]
for _incl in (False, True):
    REMOVE_CASES += [
        dict(name=f"remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy {_incl}",
             preemptor=P(labels="foo", aff_not_in=("foo", ["bar"]), c=[sc(1, "zone", DNS, FOO)]),
             node_idx=0, deleted_idx=-1, deleted=_zp("p-a1", "node-a", "zone1"),
             existing_pods=lambda: [_zp("p-a2", "node-a", "zone1"), _zp("p-b1", "node-b", "zone2")],
             nodes=_AFF(), inclusion=_incl,
             want=([ZONE_C], [(("zone2", 1), MAXP)], [{"zone2": 1}])),
        dict(name=f"remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy {_incl}",
             preemptor=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), node_idx=1, deleted_idx=-1,
             deleted=_zp("p-b1", "node-b", "zone2"),
             existing_pods=lambda: [_zp("p-a1", "node-a", "zone1"), _zp("p-b2", "node-b", "zone2")],
             nodes=_AFF(), inclusion=_incl,
             want=([ZONE_C], [(("zone2", 0), ("zone1", 1))], [{"zone2": 0, "zone1": 1}])),
    ]


@pytest.mark.parametrize("tt", REMOVE_CASES, ids=lambda tt: tt["name"])
def test_pre_filter_state_remove_pod(tt):
    existing = tt["existing_pods"]() if "existing_pods" in tt else _pods(tt.get("existing", ""))
    pl, handle = make_plugin(tt["nodes"], existing, inclusion=tt.get("inclusion", False))
    cs = new_state()
    _, st = pl.pre_filter(cs, tt["preemptor"], handle.snapshot.list())
    assert st is None
    deleted = tt.get("deleted")
    if 0 <= tt["deleted_idx"] < len(existing):
        deleted = existing[tt["deleted_idx"]]
    ni = handle.snapshot.get(tt["nodes"][tt["node_idx"]].name)
    assert pl.remove_pod(cs, tt["preemptor"], PodInfo(deleted), ni) is None
    check_state(get_pre_filter_state(cs), *tt["want"])


# =============================================================================================
# filtering_test.go: TestSingleConstraint / TestMultipleConstraints
# =============================================================================================
S, U, UR = Code.Success, Code.Unschedulable, Code.UnschedulableAndUnresolvable
_P2103 = "p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-y1@node-y:foo p-y2@node-y:foo p-y3@node-y:foo"
_NABC = lambda: [N("node-a", {"node": "node-a"}), N("node-b", {"node": "node-b"}), N("node-c", {"node": "node-c"})]  # noqa: E731
_P221 = "p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-b2@node-b:foo p-c1@node-c:foo"
_NF = lambda: [N("node-a", {"node": "node-a", "foo": ""}), N("node-b", {"node": "node-b", "foo": ""}),  # noqa: E731
               N("node-x", {"node": "node-x", "foo": ""}), N("node-y", {"node": "node-y"})]
_NFT = lambda: [N("node-a", {"node": "node-a", "foo": ""}), N("node-b", {"node": "node-b", "foo": ""}),  # noqa: E731
                N("node-x", {"node": "node-x", "foo": ""}), N("node-y", {"node": "node-y"}, taints=TAINTS)]
_P11_1 = "p-b1@node-a:foo p-b2@node-b:foo p-y1@node-y:foo"

SINGLE_CASES = [
    dict(name="no existing pods", pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), nodes=ABXY(),
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    dict(name="no existing pods, incoming pod doesn't match itself",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, BAR)]), nodes=ABXY(),
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    dict(name="existing pods in a different namespace do not count",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-b1@node-a:foo p-x1@node-x:foo p-y1@node-y:foo",
         ns_of={"p-a1": "ns1", "p-b1": "ns2"},
         want={"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    dict(name="existing pods do not match null selector",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, None)]), nodes=ABXY(),
         existing="p-x1@node-x:foo p-y1@node-y:foo",
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    dict(name="pods spread across zones as 3/3, all nodes fit",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]), nodes=ABXY(), existing=_P2103,
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    dict(name="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO)]),
         nodes=[ZN("node-a", "zone1"), N("node-b", {"zon": "zone1", "node": "node-b"}),
                ZN("node-x", "zone2"), ZN("node-y", "zone2")],
         existing="p-a1@node-a:foo p-b1@node-b:foo p-x1@node-x:foo p-y1@node-y:foo",
         want={"node-a": S, "node-b": UR, "node-x": U, "node-y": U}),
    dict(name="pod cannot be scheduled as all nodes don't have label 'rack'",
         pod=P(labels="foo", c=[sc(1, "rack", DNS, FOO)]), nodes=[ZN("node-a", "zone1"), ZN("node-x", "zone2")],
         want={"node-a": UR, "node-x": UR}),
    dict(name="pods spread across nodes as 2/1/0/3, only node-x fits",
         pod=P(labels="foo", c=[sc(1, "node", DNS, FOO)]), nodes=ABXY(), existing=_P2103,
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
         pod=P(labels="foo", c=[sc(2, "node", DNS, FOO)]), nodes=ABXY(), existing=_P2103,
         want={"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    dict(name="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
         pod=P(labels="bar", c=[sc(1, "node", DNS, FOO)]), nodes=ABXY(), existing=_P2103,
         want={"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    dict(name="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
         pod=P(labels="foo", aff_in=("node", ["node-a", "node-y"]), c=[sc(1, "node", DNS, FOO)]),
         nodes=ABXY(), existing=_P2103,
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": U}),
    dict(name="terminating Pods should be excluded",
         pod=P(labels="foo", c=[sc(1, "node", DNS, FOO)]),
         nodes=[N("node-a", {"node": "node-a"}), N("node-b", {"node": "node-b"})],
         existing_pods=lambda: [P("p-a", node="node-a", labels="foo", terminating=True),
                                P("p-b", node="node-b", labels="foo")],
         want={"node-a": S, "node-b": U}),
    dict(name="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
         pod=P(labels="foo", aff_not_in=("node", ["node-b"]), c=[sc(1, "zone", DNS, FOO)]), nodes=ABXY(),
         existing="p-b1@node-b:foo p-b2@node-b:foo p-y1@node-y:foo",
         want={"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    dict(name="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
              "then the third node fits",
         pod=P(labels="foo", c=[sc(2, "node", DNS, FOO, min_domains=4)]), nodes=_NABC(), existing=_P221,
         want={"node-a": U, "node-b": U, "node-c": S}),
    dict(name="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
              "then the all nodes fit",
         pod=P(labels="foo", c=[sc(2, "node", DNS, FOO, min_domains=2)]), nodes=_NABC(), existing=_P221,
         want={"node-a": S, "node-b": S, "node-c": S}),
    dict(name="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
              "then the third and fourth nodes fit",
         pod=P(labels="foo", c=[sc(2, "zone", DNS, FOO, min_domains=3)]), nodes=ABXY(),
         existing="p-b1@node-a:foo p-b2@node-b:foo p-y1@node-y:foo",
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    dict(name="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
              "then the all nodes fit",
         pod=P(labels="foo", c=[sc(2, "zone", DNS, FOO, min_domains=1)]), nodes=ABXY(),
         existing="p-b1@node-a:foo p-b2@node-b:foo p-y1@node-y:foo",
         want={"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    dict(name="NodeAffinityPolicy honored with labelSelectors",
         pod=P(labels="foo", node_selector={"foo": ""}, c=[sc(1, "node", DNS, FOO)]), nodes=_NF(),
         existing=_P11_1, inclusion=True, want={"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    dict(name="NodeAffinityPolicy ignored with labelSelectors",
         pod=P(labels="foo", node_selector={"foo": ""}, c=[sc(1, "node", DNS, FOO, naff=IGNORE)]), nodes=_NF(),
         existing=_P11_1, inclusion=True, want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="NodeAffinityPolicy honored with nodeAffinity",
         pod=P(labels="foo", aff_in=("foo", [""]), c=[sc(1, "node", DNS, FOO)]), nodes=_NF(),
         existing=_P11_1, inclusion=True, want={"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    dict(name="NodeAffinityPolicy ignored with nodeAffinity",
         pod=P(labels="foo", aff_in=("foo", [""]), c=[sc(1, "node", DNS, FOO, naff=IGNORE)]), nodes=_NF(),
         existing=_P11_1, inclusion=True, want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="NodeTaintsPolicy honored",
         pod=P(labels="foo", c=[sc(1, "node", DNS, FOO, ntaint=HONOR)]), nodes=_NFT(),
         existing=_P11_1, inclusion=True, want={"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    dict(name="NodeTaintsPolicy ignored",
         pod=P(labels="foo", c=[sc(1, "node", DNS, FOO)]), nodes=_NFT(),
         existing=_P11_1, inclusion=True, want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
]

_N4F = lambda taint_y=False, foo_b=True, foo_y=False: [  # noqa: E731
    N("node-a", {"zone": "zone1", "node": "node-a", "foo": ""}),
    N("node-b", dict({"zone": "zone1", "node": "node-b"}, **({"foo": ""} if foo_b else {}))),
    N("node-x", {"zone": "zone2", "node": "node-x", "foo": ""}),
    N("node-y", dict({"zone": "zone2", "node": "node-y"}, **({"foo": ""} if foo_y else {})),
      taints=TAINTS if taint_y else None)]
_P_AB_Y = "p-a1@node-a:foo p-b1@node-b:foo p-y1@node-y:foo"

MULTI_CASES = [
    dict(name="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]), nodes=ABXY(), existing=_P2103,
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]), nodes=ABXY(),
         existing=_P2103 + " p-y4@node-y:foo", want={"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
    dict(name="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
         pod=P(labels="foo bar", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-y1@node-y:bar", want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
         pod=P(labels="foo bar", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-x1@node-x:bar p-y1@node-y:bar",
         want={"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
    dict(name="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
         pod=P(labels="foo bar", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-a2@node-a:foo,bar p-y1@node-y:foo p-y2@node-y:foo,bar p-y3@node-y:foo",
         want={"node-a": U, "node-b": S, "node-x": U, "node-y": U}),
    dict(name="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
         pod=P(labels="bar", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR)]), nodes=ABXY(),
         existing="p-a1@node-a:foo p-x1@node-x:bar p-y1@node-y:bar",
         want={"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    dict(name="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]),
         nodes=[ZN("node-a", "zone1"), ZN("node-b", "zone1"), N("node-x", {"zone": "zone2"}), ZN("node-y", "zone2")],
         existing="p-a1@node-a:foo p-y3@node-y:foo", want={"node-a": U, "node-b": S, "node-x": UR, "node-y": U}),
    dict(name="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
         pod=P(labels="foo", node_selector={"foo": ""},
               c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO, naff=IGNORE)]),
         nodes=_N4F(), existing=_P_AB_Y, inclusion=True, want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
         pod=P(labels="foo", c=[sc(1, "zone", DNS, FOO, ntaint=HONOR), sc(1, "node", DNS, FOO)]),
         nodes=_N4F(taint_y=True), existing=_P_AB_Y, inclusion=True,
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
         pod=P(labels="foo", node_selector={"foo": ""}, c=[sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)]),
         nodes=_N4F(taint_y=True, foo_b=False, foo_y=True), existing=_P_AB_Y, inclusion=True,
         want={"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    dict(name="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
         pod=P(labels="foo", node_selector={"foo": ""},
               c=[sc(1, "zone", DNS, FOO, ntaint=HONOR), sc(1, "node", DNS, FOO, naff=IGNORE)]),
         nodes=_N4F(taint_y=True, foo_b=False, foo_y=True), existing=_P_AB_Y, inclusion=True,
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    dict(name="two Constraints on zone, spreads = [3/3, 2/1]",
         pod=P(labels="foo bar", c=[sc(1, "zone", DNS, BAR), sc(1, "zone", DNS, FOO)]), nodes=ABXY(),
         existing="p-a1@node-a:foo,bar p-a2@node-a:foo p-b1@node-b:foo,bar p-y1@node-y:foo "
                  "p-y2@node-y:foo,bar p-y3@node-y:foo",
         want={"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    dict(name="two Constraints on zone, spreads = [3/4, 2/1]",
         pod=P(labels="foo bar", c=[sc(1, "zone", DNS, BAR), sc(1, "zone", DNS, FOO)]), nodes=ABXY(),
         existing="p-a1@node-a:foo,bar p-a2@node-a:foo p-b1@node-b:foo,bar p-y1@node-y:foo "
                  "p-y2@node-y:foo,bar p-y3@node-y:foo p-y4@node-y:foo",
         want={"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
]


@pytest.mark.parametrize("tt", SINGLE_CASES + MULTI_CASES, ids=lambda tt: tt["name"])
def test_filter(tt):
    existing = tt["existing_pods"]() if "existing_pods" in tt else _pods(tt.get("existing", ""), tt.get("ns_of"))
    pl, handle = make_plugin(tt["nodes"], existing, inclusion=tt.get("inclusion", False))
    cs = new_state()
    _, st = pl.pre_filter(cs, tt["pod"], handle.snapshot.list())
    assert st is None
    for node in tt["nodes"]:
        got = pl.filter(cs, tt["pod"], handle.snapshot.get(node.name))
        code = Code.Success if got is None else got.code
        assert code == tt["want"][node.name], node.name
        if code == Code.Unschedulable:
            assert got.reasons == [ERR_REASON_CONSTRAINTS_NOT_MATCH]
        elif code == Code.UnschedulableAndUnresolvable:
            assert got.reasons == [ERR_REASON_NODE_LABEL_NOT_MATCH]


def test_filter_reasons_wording():
    assert ERR_REASON_CONSTRAINTS_NOT_MATCH == "node(s) didn't match pod topology spread constraints"
    assert ERR_REASON_NODE_LABEL_NOT_MATCH == \
        "node(s) didn't match pod topology spread constraints (missing required label)"


def test_pre_filter_disabled():
    """TestPreFilterDisabled: Filter without PreFilter state is an error."""
    pl, _ = make_plugin()
    ni_node = N("n", {})
    from harness.framework import NodeInfo
    ni = NodeInfo()
    ni.set_node(ni_node)
    st = pl.filter(new_state(), P(), ni)
    assert st.code == Code.Error
    assert st.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


def test_pre_filter_state_clone_is_independent():
    pl, handle = make_plugin(ABXY(), _pods(_P2103))
    cs = new_state()
    pod = P(labels="foo", c=[sc(1, "zone", DNS, FOO)])
    pl.pre_filter(cs, pod, handle.snapshot.list())
    cs2 = cs.clone()
    pl.add_pod(cs2, pod, PodInfo(P("extra", node="node-x", labels="foo")), handle.snapshot.get("node-x"))
    assert cs.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"zone1": 3, "zone2": 3}]
    assert cs2.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"zone1": 3, "zone2": 4}]


# =============================================================================================
# scoring_test.go: TestPreScoreSkip / TestPreScoreStateEmptyNodes
# =============================================================================================
def test_pre_score_skip_without_soft_constraints():
    nodes = [HN("node-a"), HN("node-b")]
    pl, handle = make_plugin(nodes, args={"defaultingType": "List"})
    st = pl.pre_score(new_state(), P(), handle.snapshot.list())
    assert st is not None and st.code == Code.Skip


def test_pre_score_skip_default_constraints_replicaset_doesnt_match():
    nodes = [N("node-a", {"planet": "mars"})]
    pod = P(labels={"foo": "bar", "baz": "sup"}, owner=RS_OWNER("rs2"))
    pl, handle = make_plugin(nodes, objs=[replicaset("rs1", {"matchExpressions": [{"key": "tar", "operator": "Exists"}]})],
                             args={"defaultingType": "List",
                                   "defaultConstraints": [sc(2, "planet", SA, None)]})
    st = pl.pre_score(new_state(), pod, handle.snapshot.list())
    assert st is not None and st.code == Code.Skip


W = topology_normalizing_weight
_NH3 = lambda: [N("node-a", {"zone": "zone1", HOST: "node-a"}), N("node-b", {"zone": "zone1", HOST: "node-b"}),  # noqa: E731
                N("node-x", {"zone": "zone2", HOST: "node-x"})]
_NHF = lambda taint_x=False: [  # noqa: E731
    N("node-a", {"zone": "zone1", "foo": "", HOST: "node-a"}),
    N("node-b", {"zone": "zone1", "foo": "", HOST: "node-b"}),
    N("node-x", {"zone": "zone2", HOST: "node-x"}, taints=TAINTS if taint_x else None)]

PRESCORE_CASES = [
    dict(name="normal case",
         pod=P(labels="foo", c=[sc(1, "zone", SA, FOO), sc(1, HOST, SA, FOO)]), nodes=_NH3(),
         want=([C(1, "zone", FOO), C(1, HOST, FOO)], set(), [{"zone1": 0, "zone2": 0}, {}], [W(2), W(3)])),
    dict(name="null selector",
         pod=P(labels="foo", c=[sc(1, "zone", SA, None)]), nodes=_NH3(),
         want=([C(1, "zone", labelsel.Selector.nothing())], set(), [{"zone1": 0, "zone2": 0}], [W(2)])),
    dict(name="node-x doesn't have label zone",
         pod=P(labels="foo", c=[sc(1, "zone", SA, FOO), sc(1, HOST, SA, BAR)]),
         nodes=[N("node-a", {"zone": "zone1", HOST: "node-a"}), N("node-b", {"zone": "zone1", HOST: "node-b"}),
                N("node-x", {HOST: "node-x"})],
         want=([C(1, "zone", FOO), C(1, HOST, BAR)], {"node-x"}, [{"zone1": 0}, {}], [W(1), W(2)])),
    dict(name="system default constraints and a replicaset",
         pod=P(labels={"foo": "tar", "baz": "sup"}, owner=RS_OWNER("rs1")), args={"defaultingType": "System"},
         nodes=[N("node-a", {HOST: "node-a", ZONE: "mars"}), N("node-b", {HOST: "node-b", ZONE: "mars"}),
                N("node-c", {HOST: "node-c"}), N("node-d", {HOST: "node-d"})],
         objs=[replicaset("rs1", FOO)],
         want=([C(3, HOST, FOO), C(5, ZONE, FOO)], set(), [{}, {"mars": 0, "": 0}], [W(4), W(2)])),
    dict(name="default constraints and a replicaset",
         pod=P(labels={"foo": "tar", "baz": "sup"}, owner=RS_OWNER("rs1")),
         args={"defaultingType": "List", "defaultConstraints": [sc(1, HOST, SA, None), sc(2, "rack", DNS, None),
                                                                sc(2, "planet", SA, None)]},
         nodes=[N("node-a", {"rack": "rack1", HOST: "node-a", "planet": "mars"})],
         objs=[replicaset("rs1", FOO)],
         want=([C(1, HOST, FOO), C(2, "planet", FOO)], set(), [{}, {"mars": 0}], [W(1), W(1)])),
    dict(name="default constraints and a replicaset, but pod has constraints",
         pod=P(labels={"foo": "bar", "baz": "sup"}, owner=RS_OWNER("rs1"),
               c=[sc(1, "zone", DNS, BAR), sc(2, "planet", SA, ml(baz="sup"))]),
         args={"defaultingType": "List", "defaultConstraints": [sc(2, "galaxy", SA, None)]},
         nodes=[N("node-a", {"planet": "mars", "galaxy": "andromeda"})],
         objs=[replicaset("rs1", FOO)],
         want=([C(2, "planet", ml(baz="sup"))], set(), [{"mars": 0}], [W(1)])),
    dict(name="NodeAffinityPolicy honored with labelSelectors",
         pod=P(labels="foo", node_selector={"foo": ""}, c=[sc(1, "zone", SA, BAR)]), nodes=_NHF(), inclusion=True,
         want=([C(1, "zone", BAR)], set(), [{"zone1": 0, "zone2": 0}], [W(2)])),
    dict(name="NodeAffinityPolicy ignored with labelSelectors",
         pod=P(labels="foo", node_selector={"foo": ""}, c=[sc(1, "zone", SA, BAR, naff=IGNORE)]), nodes=_NHF(),
         inclusion=True,
         want=([C(1, "zone", BAR, naff=IGNORE)], set(), [{"zone1": 0, "zone2": 0}], [W(2)])),
    dict(name="NodeAffinityPolicy honored with nodeAffinity",
         pod=P(labels="foo", aff_in=("foo", [""]), c=[sc(1, "zone", SA, BAR)]), nodes=_NHF(), inclusion=True,
         want=([C(1, "zone", BAR)], set(), [{"zone1": 0, "zone2": 0}], [W(2)])),
    dict(name="NodeAffinityPolicy ignored with nodeAffinity",
         pod=P(labels="foo", aff_in=("foo", [""]), c=[sc(1, "zone", SA, BAR, naff=IGNORE)]), nodes=_NHF(),
         inclusion=True,
         want=([C(1, "zone", BAR, naff=IGNORE)], set(), [{"zone1": 0, "zone2": 0}], [W(2)])),
    dict(name="NodeTaintsPolicy honored",
         pod=P(labels="foo", c=[sc(1, "zone", SA, BAR, ntaint=HONOR)]), nodes=_NHF(taint_x=True), inclusion=True,
         want=([C(1, "zone", BAR, ntaint=HONOR)], set(), [{"zone1": 0, "zone2": 0}], [W(2)])),
    dict(name="NodeTaintsPolicy ignored",
         pod=P(labels="foo", c=[sc(1, "zone", SA, BAR)]), nodes=_NHF(taint_x=True), inclusion=True,
         want=([C(1, "zone", BAR)], set(), [{"zone1": 0, "zone2": 0}], [W(2)])),
]


@pytest.mark.parametrize("tt", PRESCORE_CASES, ids=lambda tt: tt["name"])
def test_pre_score_state_empty_nodes(tt):
    """TestPreScoreStateEmptyNodes: the snapshot has the nodes but no pods."""
    pl, handle = make_plugin(tt["nodes"], (), tt.get("objs", []), tt.get("args", {"defaultingType": "List"}),
                             inclusion=tt.get("inclusion", False))
    cs = new_state()
    assert pl.pre_score(cs, tt["pod"], handle.snapshot.list()) is None
    got = cs.read(PRE_SCORE_STATE_KEY)
    constraints, ignored, counts, weights = tt["want"]
    assert got.constraints == constraints
    assert got.ignored_nodes == ignored
    assert got.topology_value_to_pod_counts == counts
    assert got.topology_normalizing_weight == weights


# =============================================================================================
# scoring_test.go: TestPodTopologySpreadScore
# =============================================================================================
_P_2103 = "p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-d1@node-d:foo p-d2@node-d:foo p-d3@node-d:foo"
_P_4321 = ("p-a1@node-a:foo p-a2@node-a:foo p-a3@node-a:foo p-a4@node-a:foo p-b1@node-b:foo p-b2@node-b:foo "
           "p-b3@node-b:foo p-c1@node-c:foo p-c2@node-c:foo p-d1@node-d:foo")
_P_4213 = ("p-a1@node-a:foo p-a2@node-a:foo p-a3@node-a:foo p-a4@node-a:foo p-b1@node-b:foo p-b2@node-b:foo "
           "p-x1@node-x:foo p-y1@node-y:foo p-y2@node-y:foo p-y3@node-y:foo")
_HN4 = lambda: [HN("node-a"), HN("node-b"), HN("node-c"), HN("node-d")]  # noqa: E731
_ZH = lambda name, zone: N(name, {"zone": zone, HOST: name})  # noqa: E731
_NN3 = lambda foo_ab=False, taint_c=False: [  # noqa: E731
    N("node-a", dict({"node": "node-a"}, **({"foo": ""} if foo_ab else {}))),
    N("node-b", dict({"node": "node-b"}, **({"foo": ""} if foo_ab else {}))),
    N("node-c", {"node": "node-c"}, taints=TAINTS if taint_c else None)]
_P_2_1_1 = "p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-c1@node-c:foo"
_ZH4 = lambda: [_ZH("node-a", "zone1"), _ZH("node-b", "zone1"), _ZH("node-c", "zone2"), _ZH("node-d", "zone2")]  # noqa: E731

SCORE_CASES = [
    dict(name="one constraint on node, no existing pods",
         pod=P(labels="foo", c=[sc(1, HOST, SA, FOO)]), nodes=[HN("node-a"), HN("node-b")],
         want={"node-a": 100, "node-b": 100}),
    dict(name="one constraint on node, only one node is candidate",
         pod=P(labels="foo", c=[sc(1, HOST, SA, FOO)]), existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo",
         nodes=[HN("node-a")], failed=[HN("node-b")], want={"node-a": 100}),
    dict(name="one constraint on node, all nodes have the same number of matching pods",
         pod=P(labels="foo", c=[sc(1, HOST, SA, FOO)]), existing="p-a1@node-a:foo p-b1@node-b:foo",
         nodes=[HN("node-a"), HN("node-b")], want={"node-a": 100, "node-b": 100}),
    dict(name="one constraint on node, all 4 nodes are candidates",
         pod=P(labels="foo", c=[sc(1, HOST, SA, FOO)]), existing=_P_2103, nodes=_HN4(),
         want={"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}),
    dict(name="one constraint on node, null selector",
         pod=P(labels="foo", c=[sc(1, HOST, SA, None)]), existing=_P_2103, nodes=_HN4(),
         want={"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}),
    dict(name="one constraint on node, all 4 nodes are candidates, maxSkew=2",
         pod=P(labels="foo", c=[sc(2, HOST, SA, FOO)]), existing=_P_2103, nodes=_HN4(),
         want={"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    dict(name="one constraint on node, all 4 nodes are candidates, maxSkew=3",
         pod=P(labels="foo", c=[sc(3, HOST, SA, FOO)]), existing=_P_4321, nodes=_HN4(),
         want={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    dict(name="system defaulting, nodes don't have zone, pods match service",
         pod=P(labels="foo"), existing=_P_4321, nodes=_HN4(), objs=[service({"foo": ""})],
         want={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    dict(name="one constraint on node, 3 out of 4 nodes are candidates",
         pod=P(labels="foo", c=[sc(1, HOST, SA, FOO)]), existing=_P_4213,
         nodes=[HN("node-a"), HN("node-b"), HN("node-x")], failed=[HN("node-y")],
         want={"node-a": 33, "node-b": 83, "node-x": 100}),
    dict(name="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
         pod=P(labels="foo", c=[sc(1, HOST, SA, FOO)]), existing=_P_4213,
         nodes=[HN("node-a"), N("node-b", {"n": "node-b"}), HN("node-x")], failed=[HN("node-y")],
         want={"node-a": 16, "node-b": 0, "node-x": 100}),
    dict(name="one constraint on zone, 3 out of 4 nodes are candidates",
         pod=P(labels="foo", c=[sc(1, "zone", SA, FOO)]), existing=_P_4213,
         nodes=[_ZH("node-a", "zone1"), _ZH("node-b", "zone1"), _ZH("node-x", "zone2")],
         failed=[_ZH("node-y", "zone2")], want={"node-a": 75, "node-b": 75, "node-x": 100}),
    dict(name="two Constraints on zone and node, 2 out of 4 nodes are candidates",
         pod=P(labels="foo", c=[sc(1, "zone", SA, FOO), sc(1, HOST, SA, FOO)]),
         existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-x1@node-x:foo p-x2@node-x:foo "
                  "p-y1@node-y:foo p-y2@node-y:foo p-y3@node-y:foo p-y4@node-y:foo",
         nodes=[_ZH("node-a", "zone1"), _ZH("node-x", "zone2")],
         failed=[_ZH("node-b", "zone1"), _ZH("node-y", "zone2")], want={"node-a": 100, "node-x": 63}),
    dict(name="two Constraints on zone, 2 out of 4 nodes are candidates",
         pod=P(labels="foo bar", c=[sc(1, "zone", SA, FOO), sc(1, "zone", SA, BAR)]),
         existing="p-a1@node-a:foo,bar p-a2@node-a:foo p-b1@node-b:foo,bar p-y1@node-y:foo "
                  "p-y2@node-y:foo,bar p-y3@node-y:foo",
         nodes=[N("node-a", {"zone": "zone1"}), N("node-x", {"zone": "zone2"})],
         failed=[N("node-b", {"zone": "zone1"}), N("node-y", {"zone": "zone2"})],
         want={"node-a": 85, "node-x": 100}),
    dict(name="two Constraints on zone and node, with different labelSelectors",
         pod=P(labels="foo bar", c=[sc(1, "zone", SA, FOO), sc(1, HOST, SA, BAR)]),
         existing="p-a1@node-a:foo p-b1@node-b:foo,bar p-y1@node-y:foo p-y2@node-y:bar",
         nodes=[_ZH("node-a", "zone1"), _ZH("node-b", "zone1"), _ZH("node-x", "zone2"), _ZH("node-y", "zone2")],
         want={"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}),
    dict(name="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
         pod=P(labels="foo bar", c=[sc(1, "zone", SA, FOO), sc(1, HOST, SA, BAR)]),
         existing="p-b1@node-b:bar p-x1@node-x:foo p-y1@node-y:foo,bar",
         nodes=[_ZH("node-a", "zone1"), _ZH("node-b", "zone1"), _ZH("node-x", "zone2"), _ZH("node-y", "zone2")],
         want={"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}),
    dict(name="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
         pod=P(labels="foo bar", c=[sc(1, "zone", SA, FOO), sc(1, HOST, SA, BAR)]),
         existing="p-a1@node-a:foo p-b1@node-b:foo,bar p-y1@node-y:foo p-y2@node-y:bar",
         nodes=[_ZH("node-a", "zone1"), _ZH("node-b", "zone1"), _ZH("node-x", "zone2")],
         failed=[_ZH("node-y", "zone2")], want={"node-a": 50, "node-b": 25, "node-x": 100}),
    dict(name="existing pods in a different namespace do not count",
         pod=P(labels="foo", c=[sc(1, HOST, SA, FOO)]),
         existing="p-a1@node-a:foo p-a2@node-a:foo p-b1@node-b:foo p-b2@node-b:foo", ns_of={"p-a1": "ns1"},
         nodes=[HN("node-a"), HN("node-b")], want={"node-a": 100, "node-b": 33}),
    dict(name="terminating Pods should be excluded",
         pod=P(labels="foo", c=[sc(1, HOST, SA, FOO)]), nodes=[HN("node-a"), HN("node-b")],
         existing_pods=lambda: [P("p-a", node="node-a", labels="foo", terminating=True),
                                P("p-b", node="node-b", labels="foo")],
         want={"node-a": 100, "node-b": 0}),
    dict(name="minDomains has no effect when ScheduleAnyway",
         pod=P(labels="foo", c=[sc(2, "node", SA, FOO, min_domains=10)]), nodes=_NN3(), existing=_P221,
         want={"node-a": 75, "node-b": 75, "node-c": 100}),
    dict(name="NodeAffinityPolicy honoed with labelSelectors",
         pod=P(labels="foo", node_selector={"foo": ""}, c=[sc(1, "node", SA, FOO)]), nodes=_NN3(foo_ab=True),
         existing=_P_2_1_1, inclusion=True, want={"node-a": 0, "node-b": 33, "node-c": 100}),
    dict(name="NodeAffinityPolicy ignored with labelSelectors",
         pod=P(labels="foo", node_selector={"foo": ""}, c=[sc(1, "node", SA, FOO, naff=IGNORE)]),
         nodes=_NN3(foo_ab=True), existing=_P_2_1_1, inclusion=True,
         want={"node-a": 66, "node-b": 100, "node-c": 100}),
    dict(name="NodeAffinityPolicy honoed with nodeAffinity",
         pod=P(labels="foo", aff_in=("foo", [""]), c=[sc(1, "node", SA, FOO)]), nodes=_NN3(foo_ab=True),
         existing=_P_2_1_1, inclusion=True, want={"node-a": 0, "node-b": 33, "node-c": 100}),
    dict(name="NodeAffinityPolicy ignored with nodeAffinity",
         pod=P(labels="foo", aff_in=("foo", [""]), c=[sc(1, "node", SA, FOO, naff=IGNORE)]),
         nodes=_NN3(foo_ab=True), existing=_P_2_1_1, inclusion=True,
         want={"node-a": 66, "node-b": 100, "node-c": 100}),
    dict(name="NodeTaintsPolicy honored",
         pod=P(labels="foo", c=[sc(1, "node", SA, FOO, ntaint=HONOR)]), nodes=_NN3(taint_c=True),
         existing=_P_2_1_1, inclusion=True, want={"node-a": 0, "node-b": 33, "node-c": 100}),
    dict(name="NodeTaintsPolicy ignored",
         pod=P(labels="foo", c=[sc(1, "node", SA, FOO)]), nodes=_NN3(taint_c=True),
         existing=_P_2_1_1, inclusion=True, want={"node-a": 66, "node-b": 100, "node-c": 100}),
    dict(name="matchLabelKeys ignored when feature gate disabled",
         pod=P(labels="foo bar baz", c=[sc(1, "zone", SA, FOO, mlk=["baz"]), sc(1, HOST, SA, BAR, mlk=["baz"])]),
         existing="p-a1@node-a:foo p-b1@node-b:foo,bar p-y1@node-c:foo p-y2@node-c:bar", nodes=_ZH4(),
         match_label_keys=False, want={"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
    dict(name="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
         pod=P(labels="foo bar", c=[sc(1, "zone", SA, {}, mlk=["foo"]), sc(1, HOST, SA, {}, mlk=["bar"])]),
         existing="p-a1@node-a:foo p-b1@node-b:foo,bar p-y1@node-c:foo p-y2@node-c:bar", nodes=_ZH4(),
         match_label_keys=True, want={"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
    dict(name="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
         pod=P(labels="foo bar baz", c=[sc(1, "zone", SA, FOO), sc(1, HOST, SA, BAR, mlk=["baz"])]),
         existing="p-a1@node-a:foo p-b1@node-b:foo,bar,baz p-c1@node-c:foo p-c2@node-c:bar p-d3@node-c:bar,baz",
         nodes=_ZH4(), match_label_keys=True, want={"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
]


@pytest.mark.parametrize("tt", SCORE_CASES, ids=lambda tt: tt["name"])
def test_pod_topology_spread_score(tt):
    existing = tt["existing_pods"]() if "existing_pods" in tt else _pods(tt.get("existing", ""), tt.get("ns_of"))
    all_nodes = list(tt["nodes"]) + list(tt.get("failed", []))
    pl, handle = make_plugin(all_nodes, existing, tt.get("objs", []), {"defaultingType": "System"},
                             inclusion=tt.get("inclusion", False),
                             match_label_keys=tt.get("match_label_keys", False))
    cs = new_state()
    filtered = [handle.snapshot.get(n.name) for n in tt["nodes"]]
    assert pl.pre_score(cs, tt["pod"], filtered) is None
    got = []
    for ni in filtered:
        s, st = pl.score(cs, tt["pod"], ni)
        assert st is None
        got.append(NodeScore(ni.node.name, s))
    assert pl.normalize_score(cs, tt["pod"], got) is None
    assert {ns.name: ns.score for ns in got} == tt["want"]


def test_raw_scores_all_4_nodes():
    """Raw Score before normalizing (2/1/0/3, maxSkew 1, 4 candidates): cnt * log(4+2)
    rounded: 2*1.7918=3.58->4, 1.79->2, 0, 5.38->5; normalized 100*(5+0-s)/5 = 20/60/100/0."""
    pl, handle = make_plugin(_HN4(), _pods(_P_2103), args={"defaultingType": "System"})
    pod = P(labels="foo", c=[sc(1, HOST, SA, FOO)])
    cs = new_state()
    pl.pre_score(cs, pod, handle.snapshot.list())
    raw = [pl.score(cs, pod, handle.snapshot.get(n))[0] for n in ("node-a", "node-b", "node-c", "node-d")]
    assert raw == [4, 2, 0, 5]


def test_go_round_half_away_from_zero():
    assert [go_round(x) for x in (0.5, 1.5, 2.5, 2.4999, 3.5000001, 0.0)] == [1, 2, 3, 2, 4, 0]


def test_normalize_score_ignored_nodes_and_zero_max():
    from builtin_plugins.podtopologyspread.scoring import PreScoreState
    cs = new_state()
    s = PreScoreState()
    s.ignored_nodes = {"b"}
    cs.write(PRE_SCORE_STATE_KEY, s)
    pl, _ = make_plugin()
    scores = [NodeScore("a", 0), NodeScore("b", 7), NodeScore("c", 0)]
    pl.normalize_score(cs, P(), scores)
    assert [x.score for x in scores] == [100, 0, 100]
    scores = [NodeScore("a", 3), NodeScore("b", 7), NodeScore("c", 7)]
    pl.normalize_score(cs, P(), scores)
    # max 7, min 3: a = 100*(7+3-3)/7 = 100, c = 100*3/7 = 42
    assert [x.score for x in scores] == [100, 0, 42]


# =============================================================================================
# plugin_test.go: queueing hints
# =============================================================================================
NODE_HINT_CASES = [
    ("node updates label which matches topologyKey", [sc(1, "zone", DNS, FOO)],
     N("node-a", {"zone": "zone1"}), N("node-a", {"zone": "zone2"}), QueueingHint.Queue),
    ("node that doesn't match topologySpreadConstraints updates non-related label", [sc(1, "zone", DNS, FOO)],
     N("node-a", {"foo": "bar1"}), N("node-a", {"foo": "bar2"}), QueueingHint.QueueSkip),
    # (An older plugin_test.go expected Queue; the v1.34 one, like v1.34's code, QueueSkip.)
    ("node that match topologySpreadConstraints adds non-related label",
     [sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)],
     N("node-a", {"zone": "zone1", "node": "node1", "foo": "bar"}), N("node-a", {"zone": "zone1", "node": "node1"}),
     QueueingHint.QueueSkip),
    ("create node with non-related labels", [sc(1, "zone", DNS, FOO)], None, N("node-a", {"foo": "bar"}),
     QueueingHint.QueueSkip),
    ("create node with related labels", [sc(1, "zone", DNS, FOO)], None, N("node-a", {"zone": "zone1"}),
     QueueingHint.Queue),
    ("delete node with non-related labels", [sc(1, "zone", DNS, FOO)], N("node-a", {"foo": "bar"}), None,
     QueueingHint.QueueSkip),
    ("delete node with related labels", [sc(1, "zone", DNS, FOO)], N("node-a", {"zone": "zone1"}), None,
     QueueingHint.Queue),
    ("add node with related labels that only match one of topologySpreadConstraints",
     [sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)], None, N("node-a", {"zone": "zone1"}),
     QueueingHint.QueueSkip),
    ("add node with related labels that match all topologySpreadConstraints",
     [sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)], None, N("node-a", {"zone": "zone1", "node": "node1"}),
     QueueingHint.Queue),
    ("update node with related labels that only match one of topologySpreadConstraints",
     [sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)], N("node-a", {"zone": "zone1"}),
     N("node-a", {"zone": "zone1"}), QueueingHint.QueueSkip),
    ("update node with related labels that match all topologySpreadConstraints",
     [sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)], N("node-a", {"zone": "zone1", "node": "node1"}),
     N("node-a", {"zone": "zone1", "node": "node2"}), QueueingHint.Queue),
    ("update node with different taints that match all topologySpreadConstraints",
     [sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)],
     N("node-a", {"zone": "zone1", "node": "node1"}, taints=[{"key": "aaa", "value": "bbb", "effect": "NoSchedule"}]),
     N("node-a", {"zone": "zone1", "node": "node1"}, taints=[{"key": "ccc", "value": "bbb", "effect": "NoSchedule"}]),
     QueueingHint.Queue),
    ("update node with different taints that only match one of topologySpreadConstraints",
     [sc(1, "zone", DNS, FOO), sc(1, "node", DNS, FOO)],
     N("node-a", {"node": "node1"}, taints=[{"key": "aaa", "value": "bbb", "effect": "NoSchedule"}]),
     N("node-a", {"node": "node1"}, taints=[{"key": "ccc", "value": "bbb", "effect": "NoSchedule"}]),
     QueueingHint.QueueSkip),
]


@pytest.mark.parametrize("name,constraints,old,new,want", NODE_HINT_CASES, ids=[c[0] for c in NODE_HINT_CASES])
def test_is_schedulable_after_node_change(name, constraints, old, new, want):
    pl, _ = make_plugin()
    assert pl.is_schedulable_after_node_change(P(c=constraints), old, new) == want


_C1 = [sc(1, "zone", DNS, FOO)]
_C2 = [sc(1, "zone", DNS, FOO), sc(1, "node", DNS, BAR)]
POD_HINT_CASES = [
    ("add pod with labels match topologySpreadConstraints selector", _C1, None,
     P("x", node="fake-node", labels="foo"), QueueingHint.Queue),
    ("add un-scheduled pod", _C1, None, P("x", labels="foo"), QueueingHint.QueueSkip),
    ("update un-scheduled pod", _C1, P("x", labels="bar"), P("x", labels="foo"), QueueingHint.QueueSkip),
    ("delete un-scheduled pod", _C1, P("x", labels="foo"), None, QueueingHint.QueueSkip),
    ("add pod with different namespace", _C1, None, P("x", node="fake-node", ns="fake-namespace", labels="foo"),
     QueueingHint.QueueSkip),
    ("add pod with labels don't match topologySpreadConstraints selector", _C1, None,
     P("x", node="fake-node", labels="bar"), QueueingHint.QueueSkip),
    ("delete pod with labels that match topologySpreadConstraints selector", _C1,
     P("x", node="fake-node", labels="foo"), None, QueueingHint.Queue),
    ("delete pod with labels that don't match topologySpreadConstraints selector", _C1,
     P("x", node="fake-node", labels="bar"), None, QueueingHint.QueueSkip),
    ("update pod's non-related label", _C1, P("x", node="fake-node", labels={"foo": "", "bar": "bar1"}),
     P("x", node="fake-node", labels={"foo": "", "bar": "bar2"}), QueueingHint.QueueSkip),
    ("add pod's label that matches topologySpreadConstraints selector", _C1, P("x", node="fake-node"),
     P("x", node="fake-node", labels="foo"), QueueingHint.Queue),
    ("delete pod label that matches topologySpreadConstraints selector", _C1,
     P("x", node="fake-node", labels="foo"), P("x", node="fake-node"), QueueingHint.Queue),
    ("change pod's label that matches topologySpreadConstraints selector", _C1,
     P("x", node="fake-node", labels={"foo": "foo1"}), P("x", node="fake-node", labels={"foo": "foo2"}),
     QueueingHint.QueueSkip),
    ("change pod's label that doesn't match topologySpreadConstraints selector", _C1,
     P("x", node="fake-node", labels={"foo": "", "bar": "bar1"}),
     P("x", node="fake-node", labels={"foo": "", "bar": "bar2"}), QueueingHint.QueueSkip),
    ("add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints", _C2,
     P("x", node="fake-node", labels="foo"), P("x", node="fake-node", labels={"foo": "", "bar": "bar2"}),
     QueueingHint.Queue),
    ("change pod's label that doesn't match topologySpreadConstraints selector with multi "
     "topologySpreadConstraints", _C2, P("x", node="fake-node", labels="foo"),
     P("x", node="fake-node", labels="foo baz"), QueueingHint.QueueSkip),
    ("change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints", _C2,
     P("x", node="fake-node", labels="foo bar"), P("x", node="fake-node", labels={"foo": "", "bar": "bar2"}),
     QueueingHint.QueueSkip),
]


@pytest.mark.parametrize("name,constraints,old,new,want", POD_HINT_CASES, ids=[c[0] for c in POD_HINT_CASES])
def test_is_schedulable_after_pod_change(name, constraints, old, new, want):
    pl, _ = make_plugin()
    pod = P("p", labels="foo", c=constraints)
    assert pl.is_schedulable_after_pod_change(pod, old, new) == want


def test_nominated_pod_counts_from_v136():
    """plugin_test.go TestPodTopologySpreadIsSchedulableAfterPodChange (v1.36):
    involvedInTopologySpreading counts a pod with a nominated node like a scheduled one."""
    raw = dict(P("x", labels="foo").raw)
    raw["status"] = {"nominatedNodeName": "fake-node"}
    nominated = Pod(raw)
    pod = P("p", labels="foo", c=_C1)
    for version, want in (("v1.34", QueueingHint.QueueSkip), ("v1.35", QueueingHint.QueueSkip),
                          ("v1.36", QueueingHint.Queue)):
        h = FakeHandle()
        h.feature_gates = resolve(version)
        pl = PodTopologySpread({"defaultingType": "List"}, h)
        assert pl.is_schedulable_after_pod_change(pod, None, nominated) == want, version


_C3 = lambda taints_policy: [sc(1, "zone", DNS, FOO, ntaint=taints_policy), sc(1, "node", DNS, BAR)]  # noqa: E731
SELF_POD_HINT_CASES = [
    ("the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got a new toleration",
     HONOR, dict(labels="foo"), dict(labels="foo", tolerations=["node.kubernetes.io/unschedulable"]), True,
     QueueingHint.Queue),
    ("the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has got a new "
     "toleration", IGNORE, dict(labels="foo"), dict(labels="foo", tolerations=["node.kubernetes.io/unschedulable"]),
     False, QueueingHint.QueueSkip),
    ("the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector of the "
     "constraint", IGNORE, dict(), dict(labels="foo"), False, QueueingHint.Queue),
    ("the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label",
     IGNORE, dict(), dict(labels="unrelated"), False, QueueingHint.QueueSkip),
]


@pytest.mark.parametrize("name,policy,old,new,inclusion,want", SELF_POD_HINT_CASES,
                         ids=[c[0] for c in SELF_POD_HINT_CASES])
def test_is_schedulable_after_own_pod_change(name, policy, old, new, inclusion, want):
    pl, _ = make_plugin(inclusion=inclusion)
    pod = P("p", labels="foo", c=_C3(policy), uid="p")
    assert pl.is_schedulable_after_pod_change(pod, P("p", uid="p", **old), P("p", uid="p", **new)) == want


def test_events_to_register():
    from harness.framework import ActionType, EventResource
    pl, _ = make_plugin()
    ev = pl.events_to_register()
    assert [(e.event.resource, e.event.action_type) for e in ev] == [
        (EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel | ActionType.UpdatePodToleration
         | ActionType.Delete),
        (EventResource.Node, ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel
         | ActionType.UpdateNodeTaint),
    ]
    assert all(e.queueing_hint_fn is not None for e in ev)


# =============================================================================================
# common.go / helper/spread.go
# =============================================================================================
def test_critical_paths_update():
    p = CriticalPaths()
    for v, n in [("a", 2), ("b", 1), ("x", 0), ("y", 4)]:
        p.update(v, n)
    assert p.as_tuples() == (("x", 0), ("b", 1))
    p.update("x", 3)  # existing value grows past the 2nd: swapped
    assert p.as_tuples() == (("b", 1), ("x", 3))


def test_merge_label_set_with_selector():
    sel = labelsel.from_label_selector(FOO)
    merged = merge_label_set_with_selector({"bar": "a"}, sel)
    assert merged.matches({"foo": "", "bar": "a"})
    assert not merged.matches({"foo": ""})
    assert not merged.matches({"bar": "a"})
    nothing = labelsel.Selector.nothing()
    assert merge_label_set_with_selector({"bar": "a"}, nothing) is nothing


def test_count_pods_match_selector_empty_selector_counts_nothing():
    pods = [PodInfo(P("a", node="n", labels="foo")), PodInfo(P("b", node="n", labels="foo"))]
    assert count_pods_match_selector(pods, labelsel.Selector.everything(), "default") == 0
    assert count_pods_match_selector(pods, labelsel.from_label_selector(FOO), "default") == 2
    assert count_pods_match_selector(pods, labelsel.from_label_selector(FOO), "other") == 0


def test_get_pod_services():
    """helper/spread_test.go TestGetPodServices."""
    objs = [service({"app": f"test-{i}"}, ns="test", name=f"service-{i}") for i in range(3)]
    handle = FakeHandle(objects=objs)
    for i in range(5):
        pod = P(f"test-pod-{i}", ns="test", labels={"app": f"test-{i}", "label": f"label-{i}"})
        got = [s.name for s in get_pod_services(handle.cluster, pod)]
        assert got == ([f"service-{i}"] if i < 3 else [])


def test_default_selector_services_and_controllers():
    objs = [service({"app": "web"}), service({"tier": "fe"}, name="svc2"),
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "nosel", "namespace": "default"},
             "spec": {}},
            replicaset("rs1", {"matchLabels": {"rs": "1"}}),
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "ss", "namespace": "default"},
             "spec": {"selector": {"matchLabels": {"ss": "1"}}}},
            {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc", "namespace": "default"},
             "spec": {"selector": {"rc": "1"}}}]
    handle = FakeHandle(objects=objs)
    pod = P(labels={"app": "web", "tier": "fe", "rs": "1", "ss": "1", "rc": "1"}, owner=RS_OWNER("rs1"))
    sel = default_selector(pod, handle.cluster)
    assert sorted(r[0] for r in sel.requirements) == ["app", "rs", "tier"]
    pod = P(labels={"app": "web", "ss": "1"},
            owner={"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "ss"})
    assert sorted(r[0] for r in default_selector(pod, handle.cluster).requirements) == ["app", "ss"]
    pod = P(labels={"rc": "1"}, owner={"apiVersion": "v1", "kind": "ReplicationController", "name": "rc"})
    assert sorted(r[0] for r in default_selector(pod, handle.cluster).requirements) == ["rc"]
    # a ReplicaSet of another API version is not a supported controller
    pod = P(labels={"rs": "1"}, owner={"apiVersion": "apps/v1beta2", "kind": "ReplicaSet", "name": "rs1"})
    assert default_selector(pod, handle.cluster).empty()


def test_system_default_constraints():
    pl, _ = make_plugin(args={})
    assert pl.system_defaulted
    assert [(c["topologyKey"], c["maxSkew"], c["whenUnsatisfiable"]) for c in pl.default_constraints] == [
        (HOST, 3, SA), (ZONE, 5, SA)]


# =============================================================================================
# PodTopologySpreadArgs: SetDefaults / ValidatePodTopologySpreadArgs
# =============================================================================================
def test_set_defaults():
    assert PodTopologySpread.set_defaults({}) == {"defaultingType": "System"}
    assert PodTopologySpread.set_defaults({"defaultingType": "List"}) == {"defaultingType": "List"}


VALIDATION_CASES = [
    ("valid config", {"defaultConstraints": [sc(1, "node", DNS, None), sc(2, "zone", SA, None)],
                      "defaultingType": "List"}, []),
    ("maxSkew less than zero", {"defaultConstraints": [sc(-1, "node", DNS, None)], "defaultingType": "List"},
     [("defaultConstraints[0].maxSkew", "Invalid value: -1: not in valid range (0, inf)")]),
    ("empty topology key", {"defaultConstraints": [sc(1, "", DNS, None)], "defaultingType": "List"},
     [("defaultConstraints[0].topologyKey", "Required value: can not be empty")]),
    ("whenUnsatisfiable is empty", {"defaultConstraints": [sc(1, "node", "", None)], "defaultingType": "List"},
     [("defaultConstraints[0].whenUnsatisfiable", "Required value: can not be empty")]),
    ("whenUnsatisfiable contains unsupported action",
     {"defaultConstraints": [sc(1, "node", "unknown action", None)], "defaultingType": "List"},
     [("defaultConstraints[0].whenUnsatisfiable",
       'Unsupported value: "unknown action": supported values: "DoNotSchedule", "ScheduleAnyway"')]),
    ("duplicated constraints",
     {"defaultConstraints": [sc(1, "node", DNS, None), sc(2, "node", DNS, None)], "defaultingType": "List"},
     [("defaultConstraints[1]", 'Duplicate value: "{node, DoNotSchedule}"')]),
    ("label selector present",
     {"defaultConstraints": [sc(1, "key", DNS, ml(a="b"))], "defaultingType": "List"},
     [("defaultConstraints[0].labelSelector",
       "Forbidden: constraint must not define a selector, as they deduced for each pod")]),
    ("list default constraints, no constraints", {"defaultingType": "List"}, []),
    ("system default constraints", {"defaultingType": "System"}, []),
    ("wrong constraints", {"defaultConstraints": [sc(1, "", DNS, None)], "defaultingType": "System"},
     [("defaultingType", 'Invalid value: "System": when .defaultConstraints are not empty'),
      ("defaultConstraints[0].topologyKey", "Required value: can not be empty")]),
    ("unsupported defaultingType", {"defaultingType": "Foo"},
     [("defaultingType", 'Unsupported value: "Foo": supported values: "System", "List"')]),
    ("invalid topology key", {"defaultConstraints": [sc(1, "a b", DNS, None)], "defaultingType": "List"},
     [("defaultConstraints[0].topologyKey",
       "Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must "
       "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
       "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]),
]


@pytest.mark.parametrize("name,args,want", VALIDATION_CASES, ids=[c[0] for c in VALIDATION_CASES])
def test_validate_args(name, args, want):
    assert PodTopologySpread.validate_args(args) == want


def test_invalid_args_fail_construction():
    with pytest.raises(ValueError, match="defaultingType"):
        PodTopologySpread({"defaultingType": "Foo"}, FakeHandle())
