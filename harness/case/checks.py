"""Checks of a case as a whole, run by `run` and `validate` alike (build_scheduler) before
anything is scheduled: what the API server would refuse across objects, and expectations that
name a pod or node the case never has."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

from ..api.object_validation import validate_object
from ..errors import CaseError

_TERMINAL = ("Succeeded", "Failed")


def _ref(ref: str) -> str:
    return ref if "/" in ref else f"default/{ref}"


def _meta(obj: Dict[str, Any]) -> Tuple[str, str]:
    md = obj.get("metadata") or {}
    return md.get("namespace") or "default", md.get("name") or ""


def _steps(case) -> Iterable[Tuple[str, str, Any]]:
    """(key, action, value) of each step (case.steps holds parsed Step objects)."""
    for i, step in enumerate(getattr(case, "steps", None) or []):
        if isinstance(step, dict):  # not parsed: {action: value}
            for action, value in step.items():
                yield f"steps[{i}].{action}", action, value
        else:
            yield step.key, step.action, step.value


def _step_objects(case) -> Iterable[Dict[str, Any]]:
    for _, action, value in _steps(case):
        if action in ("create", "update") and isinstance(value, list):
            for obj in value:
                if isinstance(obj, dict):
                    yield obj


def check_cluster(case, keys: List[str]) -> None:
    """Across the (defaulted) objects of `cluster` and `pods`: a pod bound to a node the case
    does not have (unless it completed: the scheduler never sees it), in `cluster` or created
    bound in `pods`; more than one global default PriorityClass (the Priority admission plugin
    refuses a second one)."""
    nodes = {(o.get("metadata") or {}).get("name") for o in case.cluster if o.get("kind") == "Node"}
    nodes.update((o.get("metadata") or {}).get("name") for o in _step_objects(case) if o.get("kind") == "Node")
    default_pc = None
    for obj, key in zip(case.cluster, keys):
        kind = obj.get("kind")
        if kind == "Pod":
            node = (obj.get("spec") or {}).get("nodeName")
            phase = (obj.get("status") or {}).get("phase")
            if node and node not in nodes and phase not in _TERMINAL:
                raise CaseError(f'Invalid value: "{node}": no Node "{node}" in the cluster '
                                f'(a bound pod runs on a node of the case)', file=case.path,
                                key=f"{key}.spec.nodeName")
        elif kind == "PriorityClass" and obj.get("globalDefault"):
            name = (obj.get("metadata") or {}).get("name")
            if default_pc is not None:
                raise CaseError(f"PriorityClass {default_pc} is already marked as default. Only one "
                                f"default can exist", file=case.path, key=f"{key}.globalDefault")
            default_pc = name
    for i, pod in enumerate(case.pods):
        # created already bound (legal: kube-scheduler never queues it, it counts on its node)
        node = (pod.get("spec") or {}).get("nodeName") if isinstance(pod, dict) else None
        phase = ((pod.get("status") or {}).get("phase")) if isinstance(pod, dict) else None
        if node and node not in nodes and phase not in _TERMINAL:
            raise CaseError(f'Invalid value: "{node}": no Node "{node}" in the cluster '
                            f'(a bound pod runs on a node of the case)', file=case.path,
                            key=f"pods[{i}].spec.nodeName")


def _names(case) -> Tuple[Set[str], Set[str]]:
    """The pods and nodes of the case (cluster, pods or steps)."""
    pods: Set[str] = set()
    nodes: Set[str] = set()
    for obj in list(case.cluster) + list(case.pods) + list(_step_objects(case)):
        if not isinstance(obj, dict):
            continue
        ns, name = _meta(obj)
        if obj.get("kind") == "Pod":
            pods.add(f"{ns}/{name}")
        elif obj.get("kind") == "Node":
            nodes.add(name)
    return pods, nodes


def _expects(case) -> List[Tuple[str, Dict[str, Any]]]:
    expects = [("expect", case.expect or {})]
    for key, action, value in _steps(case):
        if action == "expect" and isinstance(value, dict):
            expects.append((key, value))
    return expects


def check_expect(case) -> None:
    """Every pod and node an expectation names exists in the case (cluster, pods or steps)."""
    known: List[Tuple[Set[str], Set[str]]] = []

    def names() -> Tuple[Set[str], Set[str]]:
        # (the names of a 150,000-pod cluster are gathered only when an expectation names one)
        if not known:
            known.append(_names(case))
        return known[0]

    for where, exp in _expects(case):
        _check_one(case, where, exp, names)


def has_decisions(case) -> bool:
    """Whether an `expect` asserts decisions or history (the run then keeps explain's tables)."""
    return any("decisions" in exp or "history" in exp for _, exp in _expects(case))


def check_decision_names(case, frameworks, extenders: bool = False) -> None:
    """The pods, nodes and plugins `decisions` and `history` name exist in the case and in its
    profiles (harness/case/decisions.py); with filtering extenders, "Extender" is one of them
    (the name of the nodes they reject)."""
    from ..scheduler.extender import EXTENDER_NAME
    from .decisions import check_names

    if not has_decisions(case):
        return
    pods, nodes = _names(case)
    any_plugin: Set[str] = set()
    score: Set[str] = set()
    for fw in frameworks:
        for ext, pcs in fw.ep_plugins.items():
            any_plugin.update(pc.name for pc in pcs)
        score.update(pc.name for pc in fw.score_plugins)
    if extenders:
        any_plugin.add(EXTENDER_NAME)
    for where, exp in _expects(case):
        check_names(case.path, where, exp, pods, nodes, any_plugin, score)


def _check_one(case, where: str, exp: Dict[str, Any], names: Callable[[], Tuple[Set[str], Set[str]]]) -> None:
    """The pods and nodes `exp` names exist (`names`: the case's pods and nodes)."""
    def pod(ref: str, key: str) -> None:
        if _ref(ref) not in names()[0]:
            raise CaseError(f"no pod {_ref(ref)} in the case", file=case.path, key=key)

    def node(name: Any, key: str) -> None:
        if name is not None and name not in names()[1]:
            raise CaseError(f'no Node "{name}" in the case', file=case.path, key=key)

    for ref, want in (exp.get("bindings") or {}).items():
        key = f"{where}.bindings.{ref}"
        pod(ref, key)
        for n in (want if isinstance(want, list) else [want]):
            node(n, key)
    for i, ref in enumerate(exp.get("preempted") or []):
        pod(ref, f"{where}.preempted[{i}]")
    for ref in (exp.get("messages") or {}):
        pod(ref, f"{where}.messages.{ref}")
    for ref, want in (exp.get("nominated") or {}).items():
        pod(ref, f"{where}.nominated.{ref}")
        node(want, f"{where}.nominated.{ref}")
    for k in ("queue", "attempts", "boundBy"):
        for ref in (exp.get(k) or {}):
            pod(ref, f"{where}.{k}.{ref}")


def check_step_objects(case) -> None:
    """The objects that `create` and `update` steps send, checked as the API server checks them,
    before anything runs (so that `validate` refuses what `run` would refuse at that step)."""
    for key, action, value in _steps(case):
        if action not in ("create", "update") or not isinstance(value, list):
            continue
        for j, obj in enumerate(value):
            err = validate_object(obj, case.features)
            if err is not None:
                raise CaseError(err[1], file=case.path, key=f"{key}[{j}].{err[0]}" if err[0] else f"{key}[{j}]")


def check_step_changes(case) -> None:
    """What the API server refuses in the changes that steps make, found before anything runs
    (so that `validate` refuses what `run` would refuse at that step): an update of an immutable
    field (ValidatePriorityClassUpdate, ValidateStorageClassUpdate,
    ValidatePersistentVolume(Claim)Update; a Pod's update is checked when its step runs), a
    second globalDefault PriorityClass (the Priority admission plugin), deleting a built-in PriorityClass (the priorityclass registry's Delete)."""
    from ..api.object_update import validate_object_update
    from ..api.object_validation import SYSTEM_PRIORITY_CLASSES
    from .apiserver import NAMESPACED_KINDS
    from .steps import carry_over_update

    def ref(obj: Dict[str, Any]) -> Tuple[str, str, str]:
        md = obj.get("metadata") or {}
        ns = (md.get("namespace") or "default") if obj.get("kind") in NAMESPACED_KINDS else ""
        return obj.get("kind"), ns, md.get("name")

    if not any(action in ("create", "update", "delete") for _, action, _ in _steps(case)):
        return  # nothing changes (a big cluster's objects are not gathered for nothing)
    latest: Dict[Tuple[str, str, str], Dict[str, Any]] = {}
    for obj in list(case.cluster) + list(case.pods):
        if isinstance(obj, dict) and isinstance((obj.get("metadata") or {}).get("name"), str):
            try:
                latest[ref(obj)] = obj
            except TypeError:
                continue

    def default_pc() -> Optional[str]:
        names = sorted((o.get("value", 0), r[2]) for r, o in latest.items()
                       if r[0] == "PriorityClass" and o.get("globalDefault"))
        return names[0][1] if names else None

    for key, action, value in _steps(case):
        if action not in ("create", "update", "delete") or not isinstance(value, list):
            continue
        for j, obj in enumerate(value):
            if not isinstance(obj, dict):
                continue
            k = f"{key}[{j}]"
            if action == "delete":
                if obj.get("kind") == "PriorityClass" and obj.get("name") in SYSTEM_PRIORITY_CLASSES:
                    raise CaseError(f'priorityclasses.scheduling.k8s.io "{obj["name"]}" is forbidden: '
                                    f'this is a system priority class and cannot be deleted',
                                    file=case.path, key=k)
                ns = (obj.get("namespace") or "default") if obj.get("kind") in NAMESPACED_KINDS else ""
                latest.pop((obj.get("kind"), ns, obj.get("name")), None)
                continue
            try:
                r = ref(obj)
                old = latest.get(r)
            except TypeError:
                continue
            if obj.get("kind") == "PriorityClass" and obj.get("globalDefault"):
                dpc = default_pc()
                if dpc is not None and (action == "create" or dpc != r[2]):
                    raise CaseError(f'priorityclasses.scheduling.k8s.io "{r[2]}" is forbidden: PriorityClass '
                                    f'{dpc} is already marked as default. Only one default can exist',
                                    file=case.path, key=f"{k}.globalDefault")
            if action == "update" and old is not None:
                new = carry_over_update(obj, old)
                err = validate_object_update(new, old)  # a Pod's update is checked when it runs
                if err is not None:
                    raise CaseError(f"the API server refuses this update: {err[1]}", file=case.path,
                                    key=f"{k}.{err[0]}")
                latest[r] = new
            else:
                latest[r] = obj

