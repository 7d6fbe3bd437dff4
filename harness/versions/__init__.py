"""Kubernetes versions as data: which releases the harness models, their feature gates, and the
behaviour changes between them that no gate guards.

Everything version-dependent reads a :class:`Features` (a run's version plus its gates): the
framework hands it to plugins as ``handle.feature_gates``; configuration defaulting, the simulated
API server and the scheduler read the same object. Nothing else compares version numbers.

Imports: the base modules only (errors); every other package may import this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from ..errors import UserError
from .gates import DEPENDENCIES_SINCE, GATES, GA

# per minor, the patch release modelled: the newest the harness was verified against
MODELLED: Dict[str, str] = {"v1.34": "v1.34.9", "v1.35": "v1.35.6", "v1.36": "v1.36.3"}
NEWEST = "v1.36"

# behaviour that changed between the modelled releases without a feature gate guarding it:
# name -> the first minor with the new behaviour, and the upstream change it names
CHANGES: Dict[str, int] = {
    # preemption's prepareCandidate[Async] skips victims already being deleted (v1.35 on;
    # v1.34.9 calls PreemptPod for every victim: v1.34.1's skip was reverted in the patch line)
    "PreemptionSkipsTerminatingVictims": 35,
    # schedulingCycle clears the nominated node on every failure (clearNominatedNode), also
    # when no PostFilter plugin ran; v1.34 leaves the nomination as it is there, and with
    # NominatedNodeNameForExpectation on, on every failure (newFailureNominatingInfo)
    "ClearNominatedNodeOnFailure": 35,
    # the pod event handlers (eventhandlers.go updatePod/deletePod): a binding no longer runs
    # the queue's delete handling (no AssignedPodDelete move for a nominated pod), and an
    # assumed pod that is deleted, or whose deletion starts, is forgotten at once
    # (handleAssumedPodDeletion) with an AssignedPodDelete move
    "AssumedPodDeletionHandling": 35,
    # handleSchedulingFailure judges its status patch on the informer's copy of the pod, the one
    # it requeues (`pod = podInfo.Pod` after the refresh): a nomination the binding cycle wrote
    # is seen, and clearNominatedNode clears it (v1.34/v1.35 judge on the pod as popped: the
    # nomination stays on the object and the informer's update nominates the pod again)
    "FailurePatchJudgedOnInformerPod": 36,
    # schedulePod picks newSortedNodeScores(priorityList).Pop() instead of selectHost's
    # reservoir sampling: ties go by Randomizer, set (rand.Int()) only for nodes an extender
    # scored, else by container/heap's order over the feasible nodes, so equal nodes no longer
    # draw at random
    "SelectHostFromScoreHeap": 35,
    # PriorityQueue.moveToActiveQ skips PreEnqueue for every pod moving straight from the
    # backoffQ (Activate included); v1.34 skipped it only on BackoffComplete
    "ActivateFromBackoffSkipsPreEnqueue": 35,
    # NodeResourcesBalancedAllocation scores the change in balance the pod makes
    # before and after placing it (balancedResourceScorer(requested, allocated, allocatable),
    # kubernetes #135573)
    "BalancedAllocationScoresChange": 36,
    # component-helpers/nodedeclaredfeatures registers UserNamespacesHostNetworkSupport, which
    # pods with hostNetwork and hostUsers: false need (features/usernamespaceshostnetwork)
    "NodeDeclaredFeaturesHostNetwork": 36,
    # NodeDeclaredFeatures.Filter's reason no longer lists the missing features
    # ("node(s) didn't match Pod's required features")
    "NodeDeclaredFeaturesPlainReason": 36,
    # ImageLocality's sumImageScores adds the images of the pod's image volumes
    "ImageLocalityImageVolumes": 36,
    # InterPodAffinity's and PodTopologySpread's pod hints count a pod with a nominated node
    # like a scheduled one (isSchedulableAfterPodChange, involvedInTopologySpreading)
    "PodHintsCountNominatedPods": 36,
    # InterPodAffinity's pod hint queues the target pod's own label update, and a deleted pod
    # whose required anti-affinity the target pod matches
    "InterPodAffinityHintsBothWays": 36,
    # ValidateNodeResourcesFitArgs: requestedToCapacityRatio required with its type, forbidden
    # with the others, its shape's errors under requestedToCapacityRatio.shape
    "FitArgsRequestedToCapacityRatioChecks": 36,
    # NodeVolumeLimits' isCSIMigrationOn: with CSIMigrationPortworx gone, Portworx counts as
    # migrated without the CSINode's storage.alpha.kubernetes.io/migrated-plugins annotation
    "PortworxMigratedWithoutAnnotation": 36,
    # RunPreBindPlugins runs consecutive PreBind plugins whose PreBindPreFlight returned
    # PreBindPreFlightResult{AllowParallel: true} together (getPreBindPluginGroups); the first
    # failure of a group cancels the others ("some other PreBind operation failed")
    "PreBindParallelGroups": 36,
    # bindingCycle registers a pod whose PreBind will work in podsInPreBind, and preemption's
    # PreemptPod cancels such a victim's binding cycle (CancelPod: no DisruptionTarget patch,
    # no DELETE; the victim's binding cycle fails and it is requeued) until PreBind finished
    "PreemptionCancelsPodInPreBind": 36,
    # PreemptPod preempts a victim waiting at Permit with an Error status (waitingPod.Preempt:
    # "waiting on permit for pod: preempted", the error backoffQ) instead of rejecting it
    # (Unschedulable); a wait already over falls back to the DisruptionTarget patch and DELETE
    "PreemptionPreemptsWaitingPod": 36,
    # DynamicResources is a Score plugin (scores prioritized-list choices) and the default
    # plugins give it weight 2 (kubernetes #134058, v1.35)
    "DynamicResourcesScore": 35,
    # DynamicResourcesArgs.bindingTimeout (the PreBind wait for device binding conditions)
    "DynamicResourcesBindingTimeout": 35,
    # the structured allocator skips incomplete and invalid pools instead of failing, and a
    # node whose only candidates were in invalid pools is Unschedulable ("invalid resource
    # pools were encountered"); allocation results carry the request's tolerations
    "DRAAllocatorSkipsInvalidPools": 35,
    # GatherPools: slices with sharedCounters (their own slices from v1.35) always belong to
    # the pool, completeness counts the pool's slices for all nodes, a newer generation elsewhere
    # makes the pool obsolete; counters are per pool
    "DRAPoolsAcrossNodes": 35,
    # only NoSchedule and NoExecute device taints prevent allocation (others, None, ignored)
    "DRATaintEffectsKnownOnly": 35,
    # GatherPools sorts a pool's slices by name and puts pools with binding conditions last
    "DRAPoolsSortedByName": 36,
    # allocateDevice gives a rejected device's counters back (rollbackDevice)
    "DRARollbackCountersOnReject": 36,
    # PreBind's binding-conditions errors wrap ErrDeviceBindingTimeout / ErrDeviceBindingFailed
    # ("device binding timeout: ...", "device binding failed: claim=...")
    "DRABindingErrorsWrapped": 36,
    # consumable capacity (DRAConsumableCapacity on; builtin_plugins/dynamicresources/consumable.py):
    # allocateDevice skips the counter check of a device allowing multiple allocations whose
    # capacity is already in use (skipCounterCheck)
    "DRASharedDeviceSkipsCounterCheck": 35,
    # allocateDevice's CmpRequestOverCapacity checks the candidate device (v1.34.9 checks
    # slice.Spec.Devices[r.deviceIndex], the request's device counter used as a slice index)
    "DRACapacityCheckOwnDevice": 35,
    # distinctAttributeConstraint compares attribute values (v1.34.9 compares their pointers:
    # only the same device is a duplicate)
    "DRADistinctAttributeByValue": 35,
    # checkAvailableCounters counts the counters of shared allocations as consumed
    # (internal.IsDeviceAllocated; before, AllocatedDevices only)
    "DRASharedDevicesConsumeCounters": 36,
    # allocateOne's startLocation: a request's next device is searched after the previous one
    # (combinations of devices, not permutations; one shared device once per request), in the
    # incubating and experimental allocators (stable, picked with DRAConsumableCapacity and
    # DRADeviceBindingConditions off, does not)
    "DRAAllocatorCombinations": 36,
    # extended resources backed by DRA (DRAExtendedResource) as extendeddynamicresources.go has
    # them: the DRA manager's DeviceClassResolver (extendedresourcecache: newest class wins a
    # shared extendedResourceName, implicit deviceclass.resource.kubernetes.io/<class> names
    # count, IsDRAExtendedResourceName), a node allocatable of 0 counts as absent
    # (shouldDelegateResourceToDRA), init containers reuse later containers' requests
    # (createRequestsAndMappings), request mappings computed in Filter, no blockOwnerDeletion on
    # the claim; NodeResourcesFit queues pods on DeviceClass events
    "DRAExtendedResourceClassCache": 35,
    # validatePodExtendedResourceClaimStatus: two request mappings are duplicates when their
    # container, resource and request match (v1.34: container and resource)
    "PodExtendedClaimStatusDuplicateByRequest": 35,
    # NewBalancedAllocation gives its scorer the DRA manager (v1.35 leaves it nil: a DRA extended
    # resource among its resources crashes PreScore with the gate on)
    "BalancedAllocationDRAManager": 36,
    # NodeResourcesFit/BalancedAllocation.SignPod with DRAExtendedResource on: v1.35 signs no
    # pod; v1.36 refuses only a pod requesting an extended resource a DeviceClass provides
    # (shouldDelegateResourceToDRA without a node)
    "SignPodDRAExtendedResources": 36,
}

# gates the harness models at their default only: setting one against its version's default is an
# error naming what is missing, never a silent no-op (gate -> the behaviour not modelled). A gate
# leaves this table when both of its settings are modelled.
NOT_MODELLED: Dict[str, str] = {
    # the Workload API (alpha): GenericWorkload, GangScheduling, TopologyAwareWorkloadScheduling,
    # WorkloadAwarePreemption and DRAWorkloadResourceClaims are modelled both ways
    # (docs/versions/workload.md)
    # DynamicResources
    "DynamicResourceAllocation": "kube-scheduler without DynamicResources",
    "DRADeviceTaintRules": "DeviceTaintRule objects",
    "DRAListTypeAttributes": "list-typed device attributes",
    "DRANodeAllocatableResources": "node-allocatable DRA resources",
    # the scheduler
    "SchedulerAsyncAPICalls": "the asynchronous API call dispatcher",
    "SchedulerPopFromBackoffQ": "the queue without popping from backoffQ",
    # (SchedulerAsyncPreemption, NominatedNodeNameForExpectation, OpportunisticBatching and
    # InPlacePodLevelResourcesVerticalScaling are modelled both ways: docs/versions/)
    # pods and plugins
    "PodLevelResources": "pods without pod-level resources",
    "InPlacePodVerticalScaling": "pods without in-place resize",
    "MatchLabelKeysInPodTopologySpread": "PodTopologySpread without matchLabelKeys",
    "VolumeLimitScaling": "NodeVolumeLimits' scaling",
}


class VersionError(UserError):
    """A kubernetesVersion or featureGates value the harness cannot run."""


# v1.MINOR or v1.MINOR.PATCH as written: no space, no zero-prefixed number (ParseGeneric refuses a
# zero-prefixed major only; a case names the release as CASE_FORMAT.md writes it)
_VERSION_RE = re.compile(r"v(1)\.(0|[1-9][0-9]{0,5})(?:\.(0|[1-9][0-9]{0,5}))?")


@dataclass(frozen=True)
class KubeVersion:
    """One modelled kube-scheduler release."""

    minor: int
    patch: int

    @property
    def name(self) -> str:
        """The minor as cases name it: ``v1.35``."""
        return f"v1.{self.minor}"

    @property
    def release(self) -> str:
        """The patch release modelled: ``v1.35.6``."""
        return f"v1.{self.minor}.{self.patch}"

    def __str__(self) -> str:
        return self.release


def parse_version(value: Any, *, file: Optional[str] = None, key: Optional[str] = None) -> KubeVersion:
    """A `kubernetesVersion` value (``v1.35``, ``v1.35.6``) as the release modelled for
    it; another patch of a modelled minor, or an unmodelled minor, is an error."""
    text = value if isinstance(value, str) else None
    m = _VERSION_RE.fullmatch(text) if text else None
    modelled = ", ".join(MODELLED)
    if m is None:
        raise VersionError(f"must be a Kubernetes version written v1.MINOR or v1.MINOR.PATCH, such as "
                           f"{NEWEST} (no spaces, no zero-prefixed number), got {str(value)[:40]!r}",
                           file=file, key=key)
    minor = f"v1.{int(m.group(2))}"
    if minor not in MODELLED:
        raise VersionError(f"Kubernetes {minor} is not modelled (modelled: {modelled})", file=file, key=key)
    release = MODELLED[minor]
    patch = int(release.rsplit(".", 1)[1])
    if m.group(3) is not None and int(m.group(3)) != patch:
        raise VersionError(f"v1.{int(m.group(2))}.{int(m.group(3))} is not modelled: the harness models "
                           f"{release} for {minor}", file=file, key=key)
    return KubeVersion(int(m.group(2)), patch)


def _gate_value(v: Any, name: str, file: Optional[str], key: Optional[str]) -> bool:
    """strconv.ParseBool, as --feature-gates reads each value (a YAML boolean as is)."""
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip() in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if isinstance(v, str) and v.strip() in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise VersionError(f"invalid value of {name}={str(v)[:40]}: must be true or false", file=file, key=key)


def parse_gate_flag(text: str, *, file: Optional[str] = None, key: Optional[str] = None) -> Dict[str, bool]:
    """featureGate.Set: ``A=true,B=false`` as --feature-gates takes it."""
    out: Dict[str, bool] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise VersionError(f"missing bool value for {part.strip()}", file=file, key=key)
        k, v = part.split("=", 1)
        out[k.strip()] = _gate_value(v.strip(), k.strip(), file, key)
    return out


class Features(Mapping[str, bool]):
    """A run's kube-scheduler version and the state of every gate it knows (featuregate's
    ``Enabled``), plus the ungated behaviour changes of that version (:data:`CHANGES`).

    A read-only mapping of gate name to enabled, so ``features["PodLevelResources"]`` and
    ``features.enabled("PodLevelResources")`` both work; a gate the version does not know is
    an error, as ``featureGate.Enabled`` panics on an unregistered one."""

    def __init__(self, version: KubeVersion, overrides: Optional[Mapping[str, bool]] = None):
        self.version = version
        self.overrides: Dict[str, bool] = dict(overrides or {})
        self._state: Dict[str, bool] = {}
        for name, gate in GATES.items():
            spec = gate.spec_at(version.minor)
            if spec is not None:
                self._state[name] = self.overrides.get(name, spec.default)

    def enabled(self, name: str) -> bool:
        try:
            return self._state[name]
        except KeyError:
            raise KeyError(f"feature {name!r} is not registered in kube-scheduler {self.version}") from None

    def has(self, change: str) -> bool:
        """Whether this version has an ungated behaviour change listed in :data:`CHANGES`."""
        return self.version.minor >= CHANGES[change]

    def __getitem__(self, name: str) -> bool:
        return self.enabled(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._state)

    def __len__(self) -> int:
        return len(self._state)

    def __repr__(self) -> str:
        return f"Features({self.version}, {self.overrides})"

    def describe(self) -> str:
        """``v1.35.6`` or ``v1.35.6 (GateA=true, GateB=false)``."""
        if not self.overrides:
            return self.version.release
        gates = ", ".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(self.overrides.items()))
        return f"{self.version.release} ({gates})"


def check_gates(version: KubeVersion, gates: Mapping[str, Any], *, file: Optional[str] = None,
                key: Optional[str] = None) -> Dict[str, bool]:
    """featureGate.SetFromMap's checks for one version: a gate that version knows, a value that
    parses, not against a locked default; then the dependencies of the enabled gates (v1.35 on);
    and the harness's own: a gate whose behaviour it does not model may not be turned on."""
    out: Dict[str, bool] = {}
    for name, raw in gates.items():
        name = str(name)
        where = f"{key}.{name}" if key else name
        gate = GATES.get(name)
        spec = gate.spec_at(version.minor) if gate is not None else None
        if spec is None:
            raise VersionError(f"unrecognized feature gate: {name} (kube-scheduler {version} does not know it)",
                               file=file, key=where)
        value = _gate_value(raw, name, file, where)
        if spec.locked and value != spec.default:
            raise VersionError(f"cannot set feature gate {name} to {str(value).lower()}, feature is locked "
                               f"to {str(spec.default).lower()}", file=file, key=where)
        out[name] = value
    features = Features(version, out)
    if version.minor >= DEPENDENCIES_SINCE:
        for name, gate in GATES.items():
            if name not in features._state or not features[name]:
                continue
            off = [d for d in gate.depends_on if d in features._state and not features[d]]
            if off:
                raise VersionError(f"{name} is enabled, but depends on features that are disabled: "
                                   f"[{' '.join(off)}]", file=file, key=key)
    for name in sorted(out):
        default = GATES[name].spec_at(version.minor).default
        if name in NOT_MODELLED and out[name] != default:
            raise VersionError(f"feature gate {name}={str(out[name]).lower()} is not modelled by schedharness "
                               f"({NOT_MODELLED[name]}: not implemented); it runs only with {version}'s "
                               f"default, {str(default).lower()}", file=file, key=f"{key}.{name}" if key else name)
    return out


def resolve(version: Any = None, gates: Optional[Mapping[str, Any]] = None, *,
            file: Optional[str] = None) -> Features:
    """The Features of a version named (or the newest modelled) with these gates set."""
    v = parse_version(version, file=file, key="kubernetesVersion") if version is not None else parse_version(NEWEST)
    return Features(v, check_gates(v, gates or {}, file=file, key="featureGates"))


# the run's defaults for cases that name no version or gates: a tool option (--kubernetes-version,
# --feature-gates, pytest's --kubernetes-version) or SCHEDHARNESS_KUBERNETES_VERSION (tox's k8s
# factors) sets them; absent everywhere, the newest version modelled with its default gates
ENV_VERSION = "SCHEDHARNESS_KUBERNETES_VERSION"
_run_version: Optional[str] = None
_run_gates: Dict[str, Any] = {}


def set_run_defaults(version: Optional[str] = None, gates: Optional[Mapping[str, Any]] = None,
                     *, source: str = "--kubernetes-version") -> None:
    """Set (and check) the version and gates of cases that do not name their own."""
    global _run_version, _run_gates
    if version is not None:
        parse_version(version, file=source)
    _run_version = version
    _run_gates = dict(gates or {})
    check_gates(parse_version(run_default_version()), _run_gates, file="--feature-gates")


def run_defaults() -> Tuple[Optional[str], Dict[str, Any]]:
    """The run's defaults as set_run_defaults left them (to restore them later)."""
    return _run_version, dict(_run_gates)


def restore_run_defaults(saved: Tuple[Optional[str], Dict[str, Any]]) -> None:
    global _run_version, _run_gates
    _run_version, _run_gates = saved[0], dict(saved[1])


def run_default_version() -> str:
    import os

    return _run_version or os.environ.get(ENV_VERSION) or NEWEST


def case_features(version: Any, gates: Optional[Mapping[str, Any]], *, file: Optional[str] = None) -> Features:
    """A case's Features: its kubernetesVersion (else the run's default) and the run's gates
    with its featureGates on top."""
    v = parse_version(version, file=file, key="kubernetesVersion") if version is not None else \
        parse_version(run_default_version(), file=ENV_VERSION)
    merged = dict(_run_gates)
    merged.update(gates or {})
    return Features(v, check_gates(v, merged, file=file, key="featureGates"))


def stage_of(name: str, version: KubeVersion) -> str:
    """ALPHA, BETA, GA (empty) or DEPRECATED for a gate the version knows."""
    spec = GATES[name].spec_at(version.minor)
    return "GA" if spec.stage == GA else spec.stage


DEFAULT = resolve()


def gate_table() -> List[str]:
    """The README's gate table: per gate, its state in each modelled version (on/off by default,
    its stage, locked) — kept in step with the registry by a test."""
    rows = []
    for name in sorted(GATES):
        cells = []
        for release in MODELLED.values():
            v = parse_version(release)
            spec = GATES[name].spec_at(v.minor)
            if spec is None:
                cells.append("–")
                continue
            state = "on" if spec.default else "off"
            stage = "GA" if spec.stage == GA else spec.stage.lower()
            if spec.locked:
                fixed = ", locked"
            else:
                fixed = ", only this" if name in NOT_MODELLED else ""
            cells.append(f"{state} ({stage}{fixed})")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows
