"""Issue 9: real clusters, real mistakes. Inputs users paste are accepted as the API server and
kube-scheduler accept them; wrong ones are refused on one line; nothing crashes."""

from __future__ import annotations

import codecs
import copy
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
import yaml

from harness.case.loader import case_from_data, classify_file, find_cases, load_case
from harness.case.runner import build_scheduler, run_case
from harness.cli import main
from harness.errors import CaseError, UserError
from harness.yamlfile import MAX_BYTES, MAX_VALUES, load_yaml_file

pytest_plugins = ["pytester"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "tests", "sample")
if SAMPLE not in sys.path:
    sys.path.insert(0, SAMPLE)



def _default_release() -> str:
    """The release cases without kubernetesVersion run on (tox's k8s13x factors change it)."""
    from harness.versions import parse_version, run_default_version

    return parse_version(run_default_version()).release

def node(name, cpu="4", taints=None, **labels):
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
         "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}
    if taints:
        n["spec"] = {"taints": taints}
    return n


def pod(name, cpu="1", node_name=None, phase=None, labels=None, **spec):
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
         "spec": dict({"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}, **spec)}
    if node_name:
        p["spec"]["nodeName"] = node_name
    if phase:
        p["status"] = {"phase": phase}
    return p


def case(cluster, pods, expect=None, **extra):
    return dict({"apiVersion": "schedharness/v1alpha1", "kind": "Case", "cluster": cluster, "pods": pods,
                 "expect": expect or {}}, **extra)


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return str(p)


# ---- 1. completed pods ---------------------------------------------------------------------------
def test_succeeded_and_failed_pods_use_no_resources_and_match_no_selector():
    cluster = [node("n1", cpu="2"), node("n2", cpu="2"),
               pod("job-done", cpu="2", node_name="n1", phase="Succeeded", labels={"app": "db"}),
               pod("job-failed", cpu="2", node_name="n2", phase="Failed", labels={"app": "db"})]
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "db"}}}]}}
    res = run_case(case_from_data(case(cluster, [pod("db-1", cpu="2", affinity=anti)],
                                       {"bindings": {"db-1": ["n1", "n2"]}}), "c.yaml"))
    assert res.passed, res.failures


def test_completed_pods_are_never_preemption_victims():
    cluster = [node("n1", cpu="2"), pod("done", cpu="2", node_name="n1", phase="Succeeded")]
    res = run_case(case_from_data(case(cluster, [pod("p", cpu="2")], {"bindings": {"p": "n1"}, "preempted": []}), "c.yaml"))
    assert res.passed, res.failures


def test_update_to_succeeded_is_a_delete_for_the_scheduler():
    cluster = [node("n1", cpu="2"), pod("running", cpu="2", node_name="n1", phase="Running")]
    sched = build_scheduler(case_from_data(case(cluster, [pod("p", cpu="2")]), "c.yaml"))
    sched.run_until_quiet()
    assert not sched.cluster.get("Pod", "default", "p").node_name
    running = sched.cluster.get("Pod", "default", "running")
    sched.cluster.update(running.with_status(lambda st: st.update(phase="Succeeded")))
    sched.run_until_quiet()
    assert sched.cluster.get("Pod", "default", "p").node_name == "n1"


# ---- 2. case detection ---------------------------------------------------------------------------
def test_folder_case_detected_by_parsing_not_by_the_first_4k(tmp_path):
    many = [node(f"node-{i:03d}") for i in range(60)]
    data = {"cluster": many, "pods": [pod("p")], "expect": {"bindings": {"p": [n["metadata"]["name"] for n in many]}},
            "apiVersion": "schedharness/v1alpha1", "kind": "Case"}
    text = yaml.safe_dump(data, sort_keys=False)
    assert text.index("schedharness/v1alpha1") > 4096
    path = write(tmp_path, "late.yaml", text)
    assert find_cases([str(tmp_path)]) == [path]


def test_folder_run_skips_non_cases_with_a_reason_and_refuses_almost_cases(tmp_path, capsys):
    write(tmp_path, "a-good.yaml", case([node("n1")], [pod("p")], {"bindings": {"p": "n1"}}))
    write(tmp_path, "b-profile.yaml", {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
    write(tmp_path, "c-almost.yaml", {"apiVersion": "schedharness/v1alpha2", "kind": "Case", "cluster": []})
    write(tmp_path, "d-no-header.yaml", {"cluster": [node("n1")], "pods": []})
    rc = main(["run", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 2
    assert "PASS a-good" in out
    assert "SKIP" in out and "b-profile.yaml: not a case (kind KubeSchedulerConfiguration)" in out
    errs = err.strip().splitlines()
    assert len(errs) == 2 and "c-almost.yaml: apiVersion" in errs[0] and "d-no-header.yaml" in errs[1]
    assert classify_file(str(tmp_path / "b-profile.yaml"))[0] == "skip"


def test_pytest_collects_a_case_with_a_late_apiversion_and_fails_an_almost_case(pytester):
    many = [node(f"node-{i:03d}") for i in range(60)]
    data = {"cluster": many, "pods": [pod("p")], "expect": {"bindings": {"p": [n["metadata"]["name"] for n in many]}},
            "apiVersion": "schedharness/v1alpha1", "kind": "Case"}
    pytester.makefile(".yaml", late=yaml.safe_dump(data, sort_keys=False))
    pytester.makefile(".yaml", almost="kind: Case\napiVersion: schedharnes/v1alpha1\ncluster: []\n")
    pytester.makefile(".yaml", other="just: config\n")
    from test_pytest_plugin import _plugin_args

    pytester.makefile(".yaml", dump="apiVersion: v1\nkind: List\nitems: []\n# pods of the cluster\n")
    result = pytester.runpytest(*_plugin_args(), "--continue-on-collection-errors", "-vv")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*schedharness: YAML files that are not cases*", "*dump.yaml: not a case (kind List)"])


# ---- 3./9. the YAML loader -----------------------------------------------------------------------
GOOD = case([node("n1")], [pod("p")], {"bindings": {"p": "n1"}})


@pytest.mark.parametrize("encoding,bom", [("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE),
                                          ("utf-32-le", codecs.BOM_UTF32_LE), ("utf-8", codecs.BOM_UTF8)])
def test_utf16_and_utf32_with_bom_are_read(tmp_path, encoding, bom):
    p = tmp_path / "c.yaml"
    p.write_bytes(bom + yaml.safe_dump(GOOD).encode(encoding))
    assert run_case(load_case(str(p))).passed


def test_duplicate_keys_are_refused(tmp_path):
    p = write(tmp_path, "c.yaml", "a: 1\nb:\n  x: 1\n  x: 2\n")
    with pytest.raises(UserError, match=r'duplicate key "x" \(line 4'):
        load_yaml_file(p, UserError)


def test_merge_keys_are_not_duplicates(tmp_path):
    p = write(tmp_path, "c.yaml", "base: &b {x: 1}\nother: {<<: *b, x: 2}\n")
    assert load_yaml_file(p, UserError)["other"] == {"x": 2}


def test_file_over_20_mb_is_refused_without_reading_it(tmp_path):
    p = tmp_path / "big.yaml"
    with open(p, "wb") as f:
        f.truncate(MAX_BYTES + 1)
    with pytest.raises(UserError, match="too large"):
        load_yaml_file(str(p), UserError)


def test_alias_bomb_and_deep_nesting_are_refused_quickly(tmp_path):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    prev = "a"
    for n in "bcdefghij":
        bomb += f"{n}: &{n} [" + ", ".join([f"*{prev}"] * 10) + "]\n"
        prev = n
    with pytest.raises(UserError, match=f"more than {MAX_VALUES} YAML values"):
        load_yaml_file(write(tmp_path, "bomb.yaml", bomb), UserError)
    # refused by the harness's bound or by the parser's own (libyaml >= 0.2.5 stops flow nesting
    # with its words): the outcome, not the wording, is what counts
    for name, text in (("deep.yaml", "[" * 1000000 + "]" * 1000000),
                       ("deep-block.yaml", "".join(" " * i + "- \n" for i in range(0, 2000, 2)) + " " * 2000 + "x\n")):
        t0 = time.process_time()  # CPU time: other work on the machine does not count
        with pytest.raises(UserError) as info:
            load_yaml_file(write(tmp_path, name, text), UserError)
        assert str(info.value).startswith(str(tmp_path / name) + ": "), info.value
        assert time.process_time() - t0 < 10


# ---- 3./9. objects checked as the API server checks them -------------------------------------------
@pytest.mark.parametrize("cpu", ["1.5.5", "four", "4 cores"])
def test_bad_quantity_is_refused_by_validate_and_run(tmp_path, capsys, cpu):
    c = copy.deepcopy(GOOD)
    c["pods"][0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    path = write(tmp_path, "c.yaml", c)
    for cmd in ("validate", "run"):
        assert main([cmd, path]) == 2
        err = capsys.readouterr().err
        assert "pods[0].spec.containers[0].resources.requests[cpu]" in err and "Traceback" not in err


def test_label_value_null_is_refused_not_turned_into_none():
    c = copy.deepcopy(GOOD)
    c["cluster"][0]["metadata"]["labels"]["zone"] = None
    with pytest.raises(CaseError, match=r"cluster\[0\]\.metadata\.labels\.zone: must be a string, got null$"):
        build_scheduler(case_from_data(c, "c.yaml"))


def test_legal_kubernetes_inputs_are_accepted():
    """Legal in Kubernetes: empty label values, Exists tolerations without key, negative
    PriorityClass values, numeric quantities, zero requests, hugepages, an unknown kind."""
    cluster = [node("n1", taints=[{"key": "k", "effect": "NoExecute"}]),
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": -5},
               {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "b"}},
               {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}},
               {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}]
    p = pod("p", cpu=0.5, labels={"empty": ""}, priorityClassName="low",
            tolerations=[{"operator": "Exists"}, {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}])
    p["spec"]["containers"][0]["resources"]["limits"] = {"cpu": 1, "memory": "0", "hugepages-2Mi": "2Mi"}
    p["spec"]["containers"][0]["resources"]["requests"]["hugepages-2Mi"] = "2Mi"
    res = run_case(case_from_data(case(cluster, [p], {"bindings": {"p": None}}), "c.yaml"))
    assert res.bindings == {"default/p": None}  # n1 has no hugepages: refused by the scheduler, not the loader


def test_kind_typos_are_errors_but_other_kinds_are_kept():
    for kind in ("Nodes", "pod", "PersistentVolumeClam"):
        c = copy.deepcopy(GOOD)
        c["cluster"].append({"apiVersion": "v1", "kind": kind, "metadata": {"name": "x"}})
        with pytest.raises(CaseError, match="did you mean"):
            build_scheduler(case_from_data(c, "c.yaml"))


def test_error_messages_never_print_whole_objects():
    c = copy.deepcopy(GOOD)
    big = {"kind": "Node", "metadata": {"name": "n" * 50, "annotations": {f"a{i}": "x" * 100 for i in range(100)}}}
    c["cluster"] = big
    with pytest.raises(CaseError) as e:
        case_from_data(c, "c.yaml")
    assert len(str(e.value)) < 200


# ---- 3. plugin hooks of the wrong shape ------------------------------------------------------------
@pytest.mark.parametrize("point,plugin,hook", [("score", "BareScore", "Score"), ("filter", "TextFilter", "Filter")])
def test_hook_returning_the_wrong_shape_is_an_error_status_naming_plugin_and_hook(point, plugin, hook):
    entry = {"name": plugin, "weight": 1} if point == "score" else {"name": plugin}
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "plugins": {point: {"enabled": [entry]}}}]}
    data = case([node("n1"), node("n2")], [pod("p")], {"bindings": {"p": None}}, config=cfg,
                plugins=["schedharness_bad_shape_plugins"])
    res = run_case(case_from_data(data, os.path.join(SAMPLE, "c.yaml")))  # the module in its tree
    assert res.bindings == {"default/p": None}
    msg = res.messages["default/p"]
    assert f'plugin "{plugin}": {hook} returned' in msg, msg
    assert "Traceback" not in msg


# ---- 4./5. pasting a dump; one bad file among good ones ---------------------------------------------
def test_run_reports_every_invalid_file_and_runs_the_valid_ones(tmp_path, capsys):
    a = write(tmp_path, "a.yaml", GOOD)
    bad = copy.deepcopy(GOOD)
    bad["cluster"][0]["kind"] = "Nodes"
    b = write(tmp_path, "bad.yaml", bad)
    c = write(tmp_path, "c.yaml", GOOD)
    d = write(tmp_path, "d.yaml", "apiVersion: schedharness/v1alpha1\nkind: Case\ncluster: [\n")
    rc = main(["run", a, b, c, d])
    out, err = capsys.readouterr()
    assert rc == 2
    assert out.splitlines() == ["PASS a", "PASS c", f"2 passed, 0 failed, 2 invalid (kube-scheduler {_default_release()})"]
    assert [line.split(":")[0] for line in err.splitlines()] == ["error"] * 2
    assert "bad.yaml: cluster[0].kind" in err and "d.yaml: invalid YAML" in err


def test_run_json_gives_each_case_file(tmp_path, capsys):
    a = write(tmp_path, "a.yaml", GOOD)
    assert main(["run", "--json", a]) == 0
    assert json.loads(capsys.readouterr().out)[0]["file"] == a


# ---- 6. expectations and explain naming what does not exist ---------------------------------------
def test_validate_refuses_what_run_refuses(tmp_path, capsys):
    c = copy.deepcopy(GOOD)
    c["expect"]["messages"] = {"ghost": "Insufficient"}
    path = write(tmp_path, "c.yaml", c)
    assert main(["validate", path]) == 2
    assert main(["run", path]) == 2
    err = capsys.readouterr().err
    assert err.count("expect.messages.ghost: no pod default/ghost in the case") == 2


def test_explain_unknown_pod_exits_2(tmp_path, capsys):
    path = write(tmp_path, "c.yaml", GOOD)
    assert main(["explain", path, "nosuchpod"]) == 2
    assert "no pod default/nosuchpod" in capsys.readouterr().err


# ---- 7. plugins by path ----------------------------------------------------------------------------
PLUGIN_MODULE = textwrap.dedent("""\
    from harness.framework import Plugin, Status, hookimpl

    class OnlyN2(Plugin):
        name = "OnlyN2"

        @hookimpl
        def filter(self, state, pod, node_info):
            return None if node_info.node.name == "n2" else Status.unschedulable("not n2")

    @hookimpl
    def schedharness_plugins():
        return [OnlyN2]
    """)


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env)


def test_p_module_from_the_current_folder_with_the_case_plugins(tmp_path):
    (tmp_path / "onlyn2.py").write_text(PLUGIN_MODULE)
    shutil.copy(os.path.join(SAMPLE, "schedharness_bad_shape_plugins.py"), tmp_path)  # in the case's tree
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler",
                         "plugins": {"filter": {"enabled": [{"name": "OnlyN2"}]},
                                     "score": {"enabled": [{"name": "BareScore", "weight": 1}]}}}]}
    c = case([node("n1"), node("n2")], [pod("p")], {"bindings": {"p": None}}, config=cfg,
             plugins=["schedharness_bad_shape_plugins"])
    # the case's own plugin (BareScore) and -p onlyn2: both loaded; one feasible node skips scoring
    c["expect"] = {"bindings": {"p": "n2"}}
    path = write(tmp_path, "c.yaml", c)
    env_args = ("-p", "onlyn2")
    os.environ_backup = None
    for cmd in (("run",), ("validate",), ("explain",)):
        args = [*cmd, path, *env_args]
        proc = subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True,
                              cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep + SAMPLE))
        assert proc.returncode == 0, proc.stderr
    assert "scoring skipped: only one feasible node" in proc.stdout


def test_missing_score_plugin_named_with_its_extension_point(tmp_path, capsys):
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [{"name": "Nope", "weight": 1}]}}}]}
    path = write(tmp_path, "c.yaml", case([node("n1")], [pod("p")], config=cfg))
    assert main(["validate", path]) == 2
    assert 'ScorePlugin "Nope" does not exist' in capsys.readouterr().err


# ---- explain ---------------------------------------------------------------------------------------
def test_explain_shows_only_the_filters_that_ran_and_preemption(tmp_path, capsys):
    cluster = [node("n1", cpu="2"), node("n2", cpu="2", taints=[{"key": "k", "effect": "NoSchedule"}]),
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
               pod("low", cpu="2", node_name="n1")]
    c = case(cluster, [pod("urgent", cpu="2", priorityClassName="high")],
             {"bindings": {"urgent": "n1"}, "preempted": ["low"], "nominated": {"urgent": "n1"}})
    path = write(tmp_path, "c.yaml", c)
    assert main(["explain", path, "urgent"]) == 0
    out = capsys.readouterr().out
    first = out.split("attempt 2")[0]
    assert "node n2: rejected by TaintToleration" in first
    n2 = first.split("node n2:")[1].split("node ")[0]
    assert "filter TaintToleration: UnschedulableAndUnresolvable" in n2 and "NodeResourcesFit" not in n2
    assert "n1: evict default/low (priority 0, started " in first
    assert "n2: not a candidate" not in first  # UnschedulableAndUnresolvable nodes are not dry-run
    assert "preemption picked: n1" in first and "nominated node: n1" in first
    assert out.count("pod default/urgent") == 1


def test_run_verbose_prints_the_table_of_a_failing_pod_once(tmp_path, capsys):
    c = case([node("n1", cpu="1")], [pod("p", cpu="2")], {"bindings": {"p": "n1"}, "messages": {"p": "nope"}})
    path = write(tmp_path, "c.yaml", c)
    assert main(["run", "-v", path]) == 1
    out = capsys.readouterr().out
    assert out.count("pod default/p: not bound") == 1
    assert "filter NodeResourcesFit: UnschedulableAndUnresolvable: Insufficient cpu" in out


# ---- CLI surface -----------------------------------------------------------------------------------
def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and "schedharness" in out
    from harness.versions import MODELLED
    with pytest.raises(SystemExit):
        main(["--help"])
    top = " ".join(capsys.readouterr().out.split())
    for release in MODELLED.values():  # the modelled versions, not one
        assert release in out and release in top
    for cmd in ("run", "explain", "validate", "import"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        out = capsys.readouterr().out
        assert "PATH" in out or "CASE" in out or "DUMP" in out


def test_validate_accepts_folders(tmp_path, capsys):
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "sched.yaml", {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
    write(tmp_path, "other.yaml", {"some": "thing"})
    assert main(["validate", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "a.yaml: valid case" in out and "sched.yaml: valid KubeSchedulerConfiguration" in out
    assert "other.yaml: skipped" in out


def test_null_status_and_spec_are_omitted_fields():
    c = case([dict(node("n1"), spec=None), dict(node("n2"), status=None)], [dict(pod("p"), status=None)],
             {"bindings": {"p": "n1"}})
    assert run_case(case_from_data(c, "c.yaml")).passed


def test_config_nulls_are_go_zero_values():
    """kube-scheduler decodes null as the zero value: a null pluginConfig entry or args field is
    accepted (and defaulted), not a crash."""
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler",
                         "pluginConfig": [None, {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": None}},
                                          {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": None}]}}}]}]}
    c = dict(GOOD, config=cfg)
    assert run_case(case_from_data(copy.deepcopy(c), "c.yaml")).passed


def test_more_than_max_objects_are_refused(tmp_path, capsys):
    from harness.yamlfile import MAX_OBJECTS

    text = ("apiVersion: schedharness/v1alpha1\nkind: Case\ncluster:\n- &n {apiVersion: v1, kind: Node, metadata: {name: n}}\n"
            + "- *n\n" * MAX_OBJECTS)
    path = write(tmp_path, "many.yaml", text)
    assert main(["validate", path]) == 2
    assert f"too large: {MAX_OBJECTS + 1} objects in cluster and pods (the limit is {MAX_OBJECTS})" in capsys.readouterr().err
