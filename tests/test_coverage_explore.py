"""`run --coverage` (which plugins were called at which extension points) and `explore` (every
distinct outcome of a case under upstream's random choices)."""

from __future__ import annotations

import pytest

import json
import os
import random
import sys

import yaml
from hypothesis import given, settings, strategies as st

from harness.cli import main
from harness.framework.status import Status
from harness.scheduler.parallel_filter import explore_walk

SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}


def write_case(tmp_path, name, nodes, expect, config=None):
    data = {"apiVersion": "schedharness/v1alpha1", "kind": "Case",
            "metadata": {"name": name, "description": "two equal empty nodes, one pod: a tie"},
            "cluster": [node(n) for n in nodes], "pods": [pod("p")], "expect": expect}
    if config is not None:
        data["config"] = config  # its plugin module is given with -p (tests/sample is not the case's tree)
    f = tmp_path / f"{name}.yaml"
    f.write_text(yaml.safe_dump(data))
    return str(f)


LEDGER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "default-scheduler",
                        "plugins": {"reserve": {"enabled": [{"name": "Ledger"}]}}}]}


def test_coverage_reports_called_and_never_called_points(tmp_path, capsys):
    f = write_case(tmp_path, "ledger", ["n1", "n2"], {"bindings": {"p": "n1"}}, LEDGER)
    # the tie goes either way; the case's outcome does not matter here
    main(["run", "--coverage", f, "-p", "schedharness_parallel_plugins"])
    out = capsys.readouterr().out
    fit = next(line for line in out.splitlines() if line.startswith("  called: NodeResourcesFit:"))
    assert "Filter" in fit and "Score" in fit
    assert "  never called: Ledger: Unreserve" in out
    assert "coverage of extension points over 1 case(s):" in out
    main(["run", "--coverage", "--json", f, "-p", "schedharness_parallel_plugins"])
    data = json.loads(capsys.readouterr().out)
    cov = data[0]["coverage"]
    assert "Filter" in cov["called"]["NodeResourcesFit"] and "Score" in cov["called"]["NodeResourcesFit"]
    assert cov["called"]["Ledger"] == ["Reserve"]
    assert cov["neverCalled"]["Ledger"] == ["Unreserve"]


def test_json_without_coverage_has_no_coverage_key(tmp_path, capsys):
    f = write_case(tmp_path, "plain", ["n1"], {"bindings": {"p": "n1"}})
    assert main(["run", "--json", f]) == 0
    assert "coverage" not in json.loads(capsys.readouterr().out)[0]


def test_explore_shows_both_outcomes_of_a_tie(tmp_path, capsys):
    f = write_case(tmp_path, "tie", ["node-a", "node-b"], {"bindings": {"p": "node-a"}})
    # v1.35 on, a tie goes to the heap's root, the first node of the feasible list, which is in
    # the order the filter workers finished in: both outcomes
    for version in ("v1.35", "v1.36"):
        assert main(["explore", f, "--runs", "20", "--seed", "1", "--kubernetes-version", version]) == 0
        out = capsys.readouterr().out
        assert out.splitlines()[0] == "explore tie: 20 run(s), 2 distinct outcome(s)"
        assert "[expect fails] bindings: default/p=node-b; preempted: -" in out
    # ... but with one worker (parallelism: 1) the list is in node order: one outcome
    one = write_case(tmp_path, "tie-one-worker", ["node-a", "node-b"], {"bindings": {"p": "node-a"}},
                     {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                      "parallelism": 1})
    assert main(["explore", one, "--runs", "20", "--seed", "1", "--kubernetes-version", "v1.36"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("  20/20 (100%) [expect passes]")
    # v1.34's selectHost samples the tied nodes at random
    assert main(["explore", f, "--runs", "20", "--seed", "1", "--kubernetes-version", "v1.34"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "explore tie: 20 run(s), 2 distinct outcome(s)"
    assert "[expect passes] bindings: default/p=node-a; preempted: -" in out
    assert "[expect fails] bindings: default/p=node-b; preempted: -" in out
    # the same explore seed gives the same report
    assert main(["explore", f, "--runs", "20", "--seed", "1", "--kubernetes-version", "v1.34"]) == 0
    assert capsys.readouterr().out == out


def test_explore_rejects_zero_runs(tmp_path, capsys):
    f = write_case(tmp_path, "tie", ["node-a"], {})
    with pytest.raises(SystemExit) as e:  # refused as the command line is read
        main(["explore", f, "--runs", "0"])
    assert e.value.code == 2
    assert "--runs" in capsys.readouterr().err


def test_explore_walk_keeps_to_find_nodes_from_varying_sets():
    """200 nodes, every even one feasible, numFeasibleNodesToFind 10 (say): each interleaving
    keeps exactly 10 feasible nodes; different interleavings keep different sets, drawn from the
    chunks the 16 workers had taken (chunk size min(sqrt 200, 200/16+1) = 13)."""
    nodes = [object() for _ in range(200)]
    bad = Status.unschedulable("odd")

    def run(state, pod, ni):
        return None if nodes.index(ni) % 2 == 0 else bad

    seen = set()
    for seed in range(10):
        feasible, rejected, _ = explore_walk(random.Random(seed), 16, None, None, nodes, 0, 10, run)
        assert len(feasible) == 10 and all(i % 2 == 0 for i in feasible)
        assert all(i % 2 == 1 for i in rejected)
        assert max(feasible) < 16 * 13 + 13
        seen.add(tuple(sorted(feasible)))
    assert len(seen) > 1


def test_explore_draws_the_preemption_dry_run_offset():
    """GetOffsetAndNumCandidates: rand.Int31n(numNodes) upstream; 0 in `run`, drawn in `explore`."""
    from builtin_plugins.default_preemption import DefaultPreemption
    from harness.framework.parallelize import RunSettings, using

    class Fake:
        def calculate_num_candidates(self, n):
            return min(n, 100)

    get = DefaultPreemption.get_offset_and_num_candidates
    assert get(Fake(), 500) == (0, 100)
    with using(RunSettings(explore_rng=random.Random(3))):
        offsets = {get(Fake(), 500)[0] for _ in range(20)}
    assert len(offsets) > 1 and all(0 <= o < 500 for o in offsets)


@settings(max_examples=300, deadline=None)
@given(fits=st.lists(st.booleans(), min_size=1, max_size=60), parallelism=st.integers(1, 20),
       to_find=st.integers(1, 70), seed=st.integers(0, 2**32))
def test_explore_walk_invariants(fits, parallelism, to_find, seed):
    """Any interleaving keeps distinct feasible nodes only, as many as the walk wanted (all of
    them when there are fewer); one worker walks in node order."""
    nodes = list(range(len(fits)))
    bad = Status.unschedulable("no")
    feasible, rejected, _ = explore_walk(random.Random(seed), parallelism, None, None, nodes, 0, to_find,
                                         lambda state, pod, ni: None if fits[ni] else bad)
    assert len(set(feasible)) == len(feasible) and all(fits[i] for i in feasible)
    assert all(not fits[i] for i in rejected) and not set(feasible) & set(rejected)
    assert len(feasible) == min(to_find, sum(fits))
    if parallelism == 1:
        assert feasible == sorted(feasible) and feasible == [i for i in nodes if fits[i]][:to_find]


def test_explore_walk_puts_any_node_first_with_many_workers():
    """Three feasible nodes, three workers of one node each: each node comes first in some
    interleaving (the feasible list's order decides v1.35+'s ties)."""
    nodes = [0, 1, 2]
    firsts = {explore_walk(random.Random(seed), 16, None, None, nodes, 0, 3, lambda s, p, ni: None)[0][0]
              for seed in range(30)}
    assert firsts == {0, 1, 2}


CASES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cases", "versions", "framework")


def test_explore_of_the_tie_cases_per_version(capsys):
    """cases/versions/framework/tie-feasible-order-*: every version's explore gives both tied
    nodes (v1.34 by selectHost's draw, v1.35/v1.36 by the filter workers' order), and all pass
    their widened expect; with one worker v1.36 gives node-a only."""
    for version in ("v134", "v135", "v136"):
        assert main(["explore", os.path.join(CASES, f"tie-feasible-order-{version}.yaml"), "--runs", "30"]) == 0
        out = capsys.readouterr().out
        assert "2 distinct outcome(s)" in out.splitlines()[0]
        assert "[expect fails]" not in out
        assert "web-1=node-a" in out and "web-1=node-b" in out
    assert main(["explore", os.path.join(CASES, "tie-feasible-order-one-worker-v136.yaml"), "--runs", "30"]) == 0
    out = capsys.readouterr().out
    assert "1 distinct outcome(s)" in out.splitlines()[0] and "web-1=node-a" in out
