"""pytest plugin (entry point `pytest11`): every `*.yaml` case file is a test item. On failure the
report shows expected vs actual for each pod and the filter/score table of the pods that went
wrong. It also provides the conformance kit's fixtures (`conformance`, `conformance_world`)."""

from __future__ import annotations

import pytest

from .case.loader import _looks_like_case, load_case
from .conformance.fixtures import conformance, conformance_world  # noqa: F401 (fixtures for plugin tests)
from .errors import UserError


def pytest_addoption(parser):
    group = parser.getgroup("schedharness")
    group.addoption("--schedharness-no-cases", action="store_true", default=False,
                    help="do not collect schedharness YAML cases")
    group.addoption("--kubernetes-version", default=None, metavar="VERSION",
                    help="kube-scheduler version of the cases without kubernetesVersion (v1.34, v1.35, "
                         "v1.36; default: the ini setting kubernetes_version, then "
                         "$SCHEDHARNESS_KUBERNETES_VERSION, then the newest modelled)")
    parser.addini("kubernetes_version", default=None,
                  help="schedharness: kube-scheduler version of the cases without kubernetesVersion")
    group.addoption("--schedharness-allow-outside-root", action="store_true", default=False,
                    help="let cases read files and plugin modules outside pytest's rootdir (their "
                         "tree; default: refused, as `schedharness run` refuses them)")
    parser.addini("schedharness_allow_outside_root", type="bool", default=False,
                  help="schedharness: let cases read files and plugin modules outside the rootdir")


def pytest_configure(config):
    """The run's default Kubernetes version: --kubernetes-version, else the ini setting, else
    $SCHEDHARNESS_KUBERNETES_VERSION (tox's k8s13x factors), else the newest modelled."""
    from .versions import set_run_defaults

    from .trust import set_roots

    # a case's tree under pytest is the rootdir (as conftest.py files come from it down)
    config._schedharness_saved_roots = set_roots(  # restored at unconfigure (pytester runs in-process)
        [str(config.rootpath)], bool(config.getoption("schedharness_allow_outside_root", False)
                                     or config.getini("schedharness_allow_outside_root")))
    version = config.getoption("kubernetes_version", None) or config.getini("kubernetes_version") or None
    try:
        set_run_defaults(version)
    except UserError as e:
        raise pytest.UsageError(str(e)) from None


def pytest_unconfigure(config):
    from .trust import restore_roots

    saved = getattr(config, "_schedharness_saved_roots", None)
    if saved is not None:
        restore_roots(saved)


def pytest_report_header(config):
    from .versions import parse_version, run_default_version

    return f"schedharness: cases without kubernetesVersion run on kube-scheduler " \
           f"{parse_version(run_default_version()).release}"


def pytest_collect_file(file_path, parent):
    """A CaseFile for every YAML file that may hold a case, decided from its first bytes only:
    pytest calls this for every file of a folder even when one file is named (`pytest
    one-case.yaml`), so nothing is parsed here; CaseFile.collect parses (and yields nothing for
    a YAML file that is not a case)."""
    if parent.config.getoption("schedharness_no_cases", False):
        return None
    if file_path.suffix in (".yaml", ".yml") and _may_be_case(str(file_path)):
        return CaseFile.from_parent(parent, path=file_path)
    return None


def pytest_terminal_summary(terminalreporter, config):
    """With -v: the YAML files that mention case keys but are not cases, and why."""
    skipped = config.__dict__.get("_schedharness_skipped") or []
    if skipped and config.getoption("verbose", 0) > 0:
        terminalreporter.section("schedharness: YAML files that are not cases")
        for path, why in skipped:
            terminalreporter.write_line(f"{path}: {why}")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Remember each collection error, and whether it is an invalid case file."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        errors = collector.config.__dict__.setdefault("_schedharness_collect_errors", {})
        errors[report.nodeid] = isinstance(collector, CaseFile)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    """An invalid case file is a collection error that does not stop the others: pytest
    interrupts the session on any collection error (unless --continue-on-collection-errors);
    when every collection error is an invalid case, the valid cases run all the same (and the
    errors are still reported and fail the session). Other collection errors keep pytest's rule."""
    errors = session.config.__dict__.get("_schedharness_collect_errors") or {}
    if session.testsfailed and errors and all(errors.values()):
        session.config.option.continue_on_collection_errors = True


def _may_be_case(path: str) -> bool:
    """From the first 64 kB and without parsing: a regular file that mentions a case key (or is
    UTF-16/32, whose bytes a text search cannot read)."""
    import os
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open below
            return False
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    return any(k in head for k in (b"schedharness", b"Case", b"cluster", b"pods", b"expect")) \
        or head.startswith((b"\xff\xfe", b"\xfe\xff", b"\0", b"\xef\xbb\xbf"))


class CaseFile(pytest.File):
    def collect(self):
        skipped = self.config.__dict__.setdefault("_schedharness_skipped", [])
        if not _looks_like_case(str(self.path), skipped):
            return
        try:
            case = load_case(str(self.path))
        except UserError as e:
            raise self.CollectError(str(e)) from None
        yield CaseItem.from_parent(self, name=case.name, case=case)


class CaseFailure(Exception):
    def __init__(self, result, explain_text: str):
        self.result = result
        self.explain_text = explain_text


class CaseItem(pytest.Item):
    def __init__(self, *, case, **kwargs):
        super().__init__(**kwargs)
        self.case = case

    def runtest(self):
        from .case.runner import run_case
        from .reports.text import explain_pods

        res = run_case(self.case)
        if not res.passed:
            res2 = run_case(self.case, explain=True)
            bad = [f.split(":")[0] for f in res.failures if "/" in f.split(":")[0]]
            text = explain_pods(res2, bad)
            raise CaseFailure(res, text)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CaseFailure):
            res = excinfo.value.result
            lines = [f"case {self.case.name} ({self.case.path}) failed:"]
            lines += ["  " + f.replace("\n", "\n  ") for f in res.failures]
            lines.append("actual outcome:")
            for key, node in res.bindings.items():
                extra = f"  [{res.messages[key]}]" if key in res.messages else ""
                lines.append(f"  {key}: {node or 'unbound'}{extra}")
            if res.preempted:
                lines.append(f"  preempted: {', '.join(res.preempted)}")
            lines.append("how the scheduler decided:")
            lines.append(excinfo.value.explain_text)
            return "\n".join(lines)
        if isinstance(excinfo.value, UserError):
            return f"invalid case: {excinfo.value}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"case: {self.case.name} (kube-scheduler {self.case.features.describe()})"
