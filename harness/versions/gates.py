"""The scheduler-relevant feature gates and their versioned specs, as each release's
``pkg/features/kube_features.go`` declares them (``defaultVersionedKubernetesFeatureGates`` and
``defaultKubernetesFeatureGateDependencies``).

Each gate lists its transitions: from a minor version on, its default, its stage and whether it is
locked to that default (featuregate.VersionedSpecs). A gate not in a version's table is unknown
there: not yet added (``since`` later than the version) or removed (``removed`` at or before it).
Only gates kube-scheduler's code paths, or the API server's handling of the objects it reads,
consult are listed; the others change nothing the harness models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

ALPHA, BETA, GA, DEPRECATED = "ALPHA", "BETA", "", "DEPRECATED"


@dataclass(frozen=True)
class Spec:
    """featuregate.FeatureSpec from one minor version on."""

    since: int  # minor version of Kubernetes 1.x
    default: bool
    stage: str
    locked: bool = False


@dataclass(frozen=True)
class Gate:
    name: str
    specs: Tuple[Spec, ...]
    depends_on: Tuple[str, ...] = ()  # dependencies declared from v1.35 on
    removed: Optional[int] = None  # the first minor whose table no longer lists it

    def spec_at(self, minor: int) -> Optional[Spec]:
        """featureSpecAtEmulationVersion: the last transition at or before the version."""
        if self.removed is not None and minor >= self.removed:
            return None
        found = None
        for s in self.specs:
            if s.since <= minor:
                found = s
        return found


def _g(name: str, *specs: Tuple, deps: Tuple[str, ...] = (), removed: Optional[int] = None) -> Gate:
    return Gate(name, tuple(Spec(*s) for s in specs), deps, removed)


DRA = "DynamicResourceAllocation"

# name: (since, default, stage[, locked]) transitions, as kube_features.go of v1.34.9, v1.35.6,
# v1.36.3 list them
GATES: Dict[str, Gate] = {g.name: g for g in [
    # the API server's: a binding clears status.nominatedNodeName (pod storage's assignPod)
    _g("ClearingNominatedNodeNameAfterBinding", (34, False, ALPHA), (35, True, BETA)),
    _g("CSIMigrationPortworx", (23, False, ALPHA), (25, False, BETA), (31, True, BETA),
       (33, True, GA, True), removed=36),
    _g("DRAAdminAccess", (32, False, ALPHA), (34, True, BETA), (36, True, GA, True), deps=(DRA,)),
    _g("DRAConsumableCapacity", (34, False, ALPHA), (36, True, BETA), deps=(DRA,)),
    _g("DRADeviceBindingConditions", (34, False, ALPHA), (36, True, BETA),
       deps=(DRA, "DRAResourceClaimDeviceStatus")),
    _g("DRADeviceTaintRules", (35, False, ALPHA), (36, False, BETA), deps=("DRADeviceTaints",)),
    _g("DRADeviceTaints", (33, False, ALPHA), (36, True, BETA), deps=(DRA,)),
    _g("DRAExtendedResource", (34, False, ALPHA), (36, True, BETA), deps=(DRA,)),
    _g("DRAListTypeAttributes", (36, False, ALPHA), deps=(DRA,)),
    _g("DRANodeAllocatableResources", (36, False, ALPHA), deps=(DRA,)),
    _g("DRAPartitionableDevices", (33, False, ALPHA), (36, True, BETA), deps=(DRA,)),
    _g("DRAPrioritizedList", (33, False, ALPHA), (34, True, BETA), (36, True, GA), deps=(DRA,)),
    _g("DRAResourceClaimDeviceStatus", (32, False, ALPHA), (33, True, BETA)),
    _g("DRASchedulerFilterTimeout", (34, True, BETA), deps=(DRA,)),
    _g("DRAWorkloadResourceClaims", (36, False, ALPHA), deps=(DRA, "GenericWorkload")),
    _g(DRA, (26, False, ALPHA), (32, False, BETA), (34, True, GA), (35, True, GA, True)),
    _g("GangScheduling", (35, False, ALPHA), deps=("GenericWorkload",)),
    _g("GenericWorkload", (35, False, ALPHA)),
    _g("InPlacePodLevelResourcesVerticalScaling", (35, False, ALPHA), (36, True, BETA),
       deps=("InPlacePodVerticalScaling", "PodLevelResources", "NodeDeclaredFeatures")),
    _g("InPlacePodVerticalScaling", (27, False, ALPHA), (33, True, BETA), (35, True, GA, True)),
    _g("MatchLabelKeysInPodTopologySpread", (25, False, ALPHA), (27, True, BETA)),
    _g("NodeDeclaredFeatures", (35, False, ALPHA), (36, True, BETA)),
    _g("NodeInclusionPolicyInPodTopologySpread", (25, False, ALPHA), (26, True, BETA),
       (33, True, GA, True)),
    _g("NominatedNodeNameForExpectation", (34, False, ALPHA), (35, True, BETA)),
    _g("OpportunisticBatching", (35, True, BETA)),
    _g("PodLevelResources", (32, False, ALPHA), (34, True, BETA)),
    _g("PodSchedulingReadiness", (26, False, ALPHA), (27, True, BETA), (30, True, GA, True)),
    _g("SchedulerAsyncAPICalls", (34, False, BETA)),
    _g("SchedulerAsyncPreemption", (32, False, ALPHA), (33, True, BETA)),
    _g("SchedulerPopFromBackoffQ", (33, True, BETA)),
    _g("SchedulerQueueingHints", (28, False, BETA), (32, True, BETA), (34, True, GA, True)),
    _g("SidecarContainers", (28, False, ALPHA), (29, True, BETA), (33, True, GA, True)),
    _g("StorageCapacityScoring", (33, False, ALPHA)),
    _g("TaintTolerationComparisonOperators", (35, False, ALPHA)),
    _g("TopologyAwareWorkloadScheduling", (36, False, ALPHA), deps=("GenericWorkload",)),
    _g("VolumeAttributesClass", (29, False, ALPHA), (31, False, BETA), (34, True, GA),
       (36, True, GA, True)),
    _g("VolumeLimitScaling", (35, False, ALPHA)),
    _g("WorkloadAwarePreemption", (36, False, ALPHA), deps=("GangScheduling",)),
]}

# kube_features.go declares dependencies from v1.35 on (featureGate.AddDependencies); v1.34's
# gates have none
DEPENDENCIES_SINCE = 35
