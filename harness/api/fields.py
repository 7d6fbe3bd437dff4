"""Strict decoding: the fields each object kind has, and the apiVersions that serve it.

kubectl's default `--validate=strict` makes the API server decode a manifest strictly: a field the
Go type lacks is refused (`strict decoding error: unknown field "spec.toleration"`), and a
group/version that does not serve the kind is refused before that (`no matches for kind "Pod" in
version "apps/v1"`). This module is that check for the kinds the harness reads.

The field table is plain data, written for the harness from the Kubernetes API types
(k8s.io/api core/v1, storage/v1, scheduling/v1, policy/v1, apps/v1, coordination/v1,
resource/v1 and apimachinery's meta/v1): one line per Go struct,

    Struct: field field:Other field:[Other] field:{Other} field:* +Inlined

where a bare field is a value whose keys are not checked (a scalar, a list of strings, a string
map, a ResourceList), `:Other` a nested struct, `[Other]` a list of it, `{Other}` a map whose
values are it, `*` free-form JSON (managedFields' fieldsV1, opaque driver parameters), and
`+Inlined` the fields of an embedded struct (`json:",inline"`). `FIELDS_ADDED` holds, per
Kubernetes minor, the lines a newer release adds (same syntax; a struct's fields are added to
what the older minors have; `-field` is one it removed). Status and metadata are complete so that `kubectl get -o yaml` dumps
decode as they are.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import valid_memo

__all__ = ["KIND_VERSIONS", "FIELDS_ADDED", "check_api_version", "unknown_field"]

# kind -> the group/versions whose objects the harness reads (the API server serves them)
# the namespaced kinds the simulated API server serves itself
NAMESPACED_CORE_KINDS = {"Pod", "PersistentVolumeClaim", "Service", "ReplicaSet", "StatefulSet",
                         "ReplicationController", "PodDisruptionBudget", "ResourceClaim",
                         "ResourceClaimTemplate", "Deployment", "ConfigMap", "Secret", "Lease", "Workload",
                         "PodGroup"}

KIND_VERSIONS: Dict[str, Tuple[str, ...]] = {
    "Pod": ("v1",), "Node": ("v1",), "Namespace": ("v1",), "PersistentVolume": ("v1",),
    "PersistentVolumeClaim": ("v1",), "Service": ("v1",), "ReplicationController": ("v1",),
    "PriorityClass": ("scheduling.k8s.io/v1",),
    "StorageClass": ("storage.k8s.io/v1",), "CSINode": ("storage.k8s.io/v1",),
    "CSIDriver": ("storage.k8s.io/v1",), "CSIStorageCapacity": ("storage.k8s.io/v1",),
    "VolumeAttachment": ("storage.k8s.io/v1",),
    "PodDisruptionBudget": ("policy/v1",),
    "ReplicaSet": ("apps/v1",), "StatefulSet": ("apps/v1",),
    "Lease": ("coordination.k8s.io/v1",),
    "DeviceClass": ("resource.k8s.io/v1",), "ResourceSlice": ("resource.k8s.io/v1",),
    "ResourceClaim": ("resource.k8s.io/v1",), "ResourceClaimTemplate": ("resource.k8s.io/v1",),
    # the Workload API: served per version and gate (harness/api/workload.py checks the apiVersion)
    "Workload": ("scheduling.k8s.io/v1alpha1", "scheduling.k8s.io/v1alpha2"),
    "PodGroup": ("scheduling.k8s.io/v1alpha2",),
}
# versions an API server still serves for a kind, whose shape the harness does not read
_SERVED_NOT_READ: Dict[str, Tuple[str, ...]] = {
    "DeviceClass": ("resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2"),
    "ResourceSlice": ("resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2"),
    "ResourceClaim": ("resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2"),
    "ResourceClaimTemplate": ("resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2"),
    "CSIStorageCapacity": ("storage.k8s.io/v1beta1",),
}

_KINDS: Dict[str, str] = {  # kind -> its struct in the table
    k: k for k in KIND_VERSIONS}

_TABLE = """
TypeMeta: kind apiVersion
ObjectMeta: name generateName namespace selfLink uid resourceVersion generation creationTimestamp deletionTimestamp deletionGracePeriodSeconds labels annotations ownerReferences:[OwnerReference] finalizers managedFields:[ManagedFieldsEntry]
OwnerReference: apiVersion kind name uid controller blockOwnerDeletion
ManagedFieldsEntry: manager operation apiVersion time fieldsType fieldsV1:* subresource
LocalObjectReference: name
SecretReference: name namespace
ObjectReference: kind namespace name uid apiVersion resourceVersion fieldPath
TypedLocalObjectReference: apiGroup kind name
TypedObjectReference: apiGroup kind name namespace
LabelSelector: matchLabels matchExpressions:[LabelSelectorRequirement]
LabelSelectorRequirement: key operator values
NodeSelector: nodeSelectorTerms:[NodeSelectorTerm]
NodeSelectorTerm: matchExpressions:[NodeSelectorRequirement] matchFields:[NodeSelectorRequirement]
NodeSelectorRequirement: key operator values
Condition: type status observedGeneration lastTransitionTime reason message

Pod: +TypeMeta metadata:ObjectMeta spec:PodSpec status:PodStatus
PodTemplateSpec: metadata:ObjectMeta spec:PodSpec
PodSpec: volumes:[Volume] initContainers:[Container] containers:[Container] ephemeralContainers:[EphemeralContainer] restartPolicy terminationGracePeriodSeconds activeDeadlineSeconds dnsPolicy nodeSelector serviceAccountName serviceAccount automountServiceAccountToken nodeName hostNetwork hostPID hostIPC shareProcessNamespace securityContext:PodSecurityContext imagePullSecrets:[LocalObjectReference] hostname subdomain affinity:Affinity schedulerName tolerations:[Toleration] hostAliases:[HostAlias] priorityClassName priority dnsConfig:PodDNSConfig readinessGates:[PodReadinessGate] runtimeClassName enableServiceLinks preemptionPolicy overhead topologySpreadConstraints:[TopologySpreadConstraint] setHostnameAsFQDN os:PodOS hostUsers schedulingGates:[PodSchedulingGate] resourceClaims:[PodResourceClaim] resources:ResourceRequirements hostnameOverride
Container: name image command args workingDir ports:[ContainerPort] envFrom:[EnvFromSource] env:[EnvVar] resources:ResourceRequirements resizePolicy:[ContainerResizePolicy] restartPolicy restartPolicyRules:[ContainerRestartRule] volumeMounts:[VolumeMount] volumeDevices:[VolumeDevice] livenessProbe:Probe readinessProbe:Probe startupProbe:Probe lifecycle:Lifecycle terminationMessagePath terminationMessagePolicy imagePullPolicy securityContext:SecurityContext stdin stdinOnce tty
EphemeralContainer: +Container targetContainerName
ContainerPort: name hostPort containerPort protocol hostIP
EnvFromSource: prefix configMapRef:ConfigMapEnvSource secretRef:SecretEnvSource
ConfigMapEnvSource: name optional
SecretEnvSource: name optional
EnvVar: name value valueFrom:EnvVarSource
EnvVarSource: fieldRef:ObjectFieldSelector resourceFieldRef:ResourceFieldSelector configMapKeyRef:ConfigMapKeySelector secretKeyRef:SecretKeySelector fileKeyRef:FileKeySelector
ObjectFieldSelector: apiVersion fieldPath
ResourceFieldSelector: containerName resource divisor
ConfigMapKeySelector: name key optional
SecretKeySelector: name key optional
FileKeySelector: volumeName path key optional
ResourceRequirements: limits requests claims:[ContainerResourceClaim]
ContainerResourceClaim: name request
ContainerResizePolicy: resourceName restartPolicy
ContainerRestartRule: action exitCodes:ContainerRestartRuleOnExitCodes
ContainerRestartRuleOnExitCodes: operator values
VolumeMount: name readOnly recursiveReadOnly mountPath subPath mountPropagation subPathExpr
VolumeDevice: name devicePath
Probe: exec:ExecAction httpGet:HTTPGetAction tcpSocket:TCPSocketAction grpc:GRPCAction initialDelaySeconds timeoutSeconds periodSeconds successThreshold failureThreshold terminationGracePeriodSeconds
ExecAction: command
HTTPGetAction: path port host scheme httpHeaders:[HTTPHeader]
HTTPHeader: name value
TCPSocketAction: port host
GRPCAction: port service
SleepAction: seconds
Lifecycle: postStart:LifecycleHandler preStop:LifecycleHandler stopSignal
LifecycleHandler: exec:ExecAction httpGet:HTTPGetAction tcpSocket:TCPSocketAction sleep:SleepAction
SecurityContext: capabilities:Capabilities privileged seLinuxOptions:SELinuxOptions windowsOptions:WindowsSecurityContextOptions runAsUser runAsGroup runAsNonRoot readOnlyRootFilesystem allowPrivilegeEscalation procMount seccompProfile:SeccompProfile appArmorProfile:AppArmorProfile
PodSecurityContext: seLinuxOptions:SELinuxOptions windowsOptions:WindowsSecurityContextOptions runAsUser runAsGroup runAsNonRoot supplementalGroups supplementalGroupsPolicy fsGroup sysctls:[Sysctl] fsGroupChangePolicy seccompProfile:SeccompProfile appArmorProfile:AppArmorProfile seLinuxChangePolicy
Capabilities: add drop
SELinuxOptions: user role type level
WindowsSecurityContextOptions: gmsaCredentialSpecName gmsaCredentialSpec runAsUserName hostProcess
SeccompProfile: type localhostProfile
AppArmorProfile: type localhostProfile
Sysctl: name value
Affinity: nodeAffinity:NodeAffinity podAffinity:PodAffinity podAntiAffinity:PodAffinity
NodeAffinity: requiredDuringSchedulingIgnoredDuringExecution:NodeSelector preferredDuringSchedulingIgnoredDuringExecution:[PreferredSchedulingTerm]
PreferredSchedulingTerm: weight preference:NodeSelectorTerm
PodAffinity: requiredDuringSchedulingIgnoredDuringExecution:[PodAffinityTerm] preferredDuringSchedulingIgnoredDuringExecution:[WeightedPodAffinityTerm]
PodAffinityTerm: labelSelector:LabelSelector namespaces topologyKey namespaceSelector:LabelSelector matchLabelKeys mismatchLabelKeys
WeightedPodAffinityTerm: weight podAffinityTerm:PodAffinityTerm
Toleration: key operator value effect tolerationSeconds
HostAlias: ip hostnames
PodDNSConfig: nameservers searches options:[PodDNSConfigOption]
PodDNSConfigOption: name value
PodReadinessGate: conditionType
TopologySpreadConstraint: maxSkew topologyKey whenUnsatisfiable labelSelector:LabelSelector minDomains nodeAffinityPolicy nodeTaintsPolicy matchLabelKeys
PodOS: name
PodSchedulingGate: name
PodResourceClaim: name resourceClaimName resourceClaimTemplateName
PodStatus: observedGeneration phase conditions:[PodCondition] message reason nominatedNodeName hostIP hostIPs:[HostIP] podIP podIPs:[HostIP] startTime initContainerStatuses:[ContainerStatus] containerStatuses:[ContainerStatus] qosClass ephemeralContainerStatuses:[ContainerStatus] resize resourceClaimStatuses:[PodResourceClaimStatus] extendedResourceClaimStatus:PodExtendedResourceClaimStatus
PodCondition: type observedGeneration status lastProbeTime lastTransitionTime reason message
HostIP: ip
ContainerStatus: name state:ContainerState lastState:ContainerState ready restartCount image imageID containerID started allocatedResources resources:ResourceRequirements volumeMounts:[VolumeMountStatus] user:ContainerUser allocatedResourcesStatus:[ResourceStatus] stopSignal
ContainerState: waiting:ContainerStateWaiting running:ContainerStateRunning terminated:ContainerStateTerminated
ContainerStateWaiting: reason message
ContainerStateRunning: startedAt
ContainerStateTerminated: exitCode signal reason message startedAt finishedAt containerID
VolumeMountStatus: name mountPath readOnly recursiveReadOnly
ContainerUser: linux:LinuxContainerUser
LinuxContainerUser: uid gid supplementalGroups
ResourceStatus: name resources:[ResourceHealth]
ResourceHealth: resourceID health
PodResourceClaimStatus: name resourceClaimName
PodExtendedResourceClaimStatus: requestMappings:[ContainerExtendedResourceRequest] resourceClaimName
ContainerExtendedResourceRequest: containerName resourceName requestName

Volume: name +VolumeSource
VolumeSource: hostPath:HostPathVolumeSource emptyDir:EmptyDirVolumeSource gcePersistentDisk:GCEPersistentDiskVolumeSource awsElasticBlockStore:AWSElasticBlockStoreVolumeSource gitRepo:GitRepoVolumeSource secret:SecretVolumeSource nfs:NFSVolumeSource iscsi:ISCSIVolumeSource glusterfs:GlusterfsVolumeSource persistentVolumeClaim:PersistentVolumeClaimVolumeSource rbd:RBDVolumeSource flexVolume:FlexVolumeSource cinder:CinderVolumeSource cephfs:CephFSVolumeSource flocker:FlockerVolumeSource downwardAPI:DownwardAPIVolumeSource fc:FCVolumeSource azureFile:AzureFileVolumeSource configMap:ConfigMapVolumeSource vsphereVolume:VsphereVirtualDiskVolumeSource quobyte:QuobyteVolumeSource azureDisk:AzureDiskVolumeSource photonPersistentDisk:PhotonPersistentDiskVolumeSource projected:ProjectedVolumeSource portworxVolume:PortworxVolumeSource scaleIO:ScaleIOVolumeSource storageos:StorageOSVolumeSource csi:CSIVolumeSource ephemeral:EphemeralVolumeSource image:ImageVolumeSource
HostPathVolumeSource: path type
EmptyDirVolumeSource: medium sizeLimit
GCEPersistentDiskVolumeSource: pdName fsType partition readOnly
AWSElasticBlockStoreVolumeSource: volumeID fsType partition readOnly
GitRepoVolumeSource: repository revision directory
SecretVolumeSource: secretName items:[KeyToPath] defaultMode optional
KeyToPath: key path mode
NFSVolumeSource: server path readOnly
ISCSIVolumeSource: targetPortal iqn lun iscsiInterface fsType readOnly portals chapAuthDiscovery chapAuthSession secretRef:LocalObjectReference initiatorName
GlusterfsVolumeSource: endpoints path readOnly
PersistentVolumeClaimVolumeSource: claimName readOnly
RBDVolumeSource: monitors image fsType pool user keyring secretRef:LocalObjectReference readOnly
FlexVolumeSource: driver fsType secretRef:LocalObjectReference readOnly options
CinderVolumeSource: volumeID fsType readOnly secretRef:LocalObjectReference
CephFSVolumeSource: monitors path user secretFile secretRef:LocalObjectReference readOnly
FlockerVolumeSource: datasetName datasetUUID
DownwardAPIVolumeSource: items:[DownwardAPIVolumeFile] defaultMode
DownwardAPIVolumeFile: path fieldRef:ObjectFieldSelector resourceFieldRef:ResourceFieldSelector mode
FCVolumeSource: targetWWNs lun fsType readOnly wwids
AzureFileVolumeSource: secretName shareName readOnly
ConfigMapVolumeSource: name items:[KeyToPath] defaultMode optional
VsphereVirtualDiskVolumeSource: volumePath fsType storagePolicyName storagePolicyID
QuobyteVolumeSource: registry volume readOnly user group tenant
AzureDiskVolumeSource: diskName diskURI cachingMode fsType readOnly kind
PhotonPersistentDiskVolumeSource: pdID fsType
ProjectedVolumeSource: sources:[VolumeProjection] defaultMode
VolumeProjection: secret:KeyProjection downwardAPI:DownwardAPIProjection configMap:KeyProjection serviceAccountToken:ServiceAccountTokenProjection clusterTrustBundle:ClusterTrustBundleProjection podCertificate:PodCertificateProjection
KeyProjection: name items:[KeyToPath] optional
DownwardAPIProjection: items:[DownwardAPIVolumeFile]
ServiceAccountTokenProjection: audience expirationSeconds path
ClusterTrustBundleProjection: name signerName labelSelector:LabelSelector optional path
PodCertificateProjection: signerName keyType maxExpirationSeconds credentialBundlePath keyPath certificateChainPath
PortworxVolumeSource: volumeID fsType readOnly
ScaleIOVolumeSource: gateway system secretRef:LocalObjectReference sslEnabled protectionDomain storagePool storageMode volumeName fsType readOnly
StorageOSVolumeSource: volumeName volumeNamespace fsType readOnly secretRef:LocalObjectReference
CSIVolumeSource: driver readOnly fsType volumeAttributes nodePublishSecretRef:LocalObjectReference
EphemeralVolumeSource: volumeClaimTemplate:PersistentVolumeClaimTemplate
PersistentVolumeClaimTemplate: metadata:ObjectMeta spec:PersistentVolumeClaimSpec
ImageVolumeSource: reference pullPolicy

Node: +TypeMeta metadata:ObjectMeta spec:NodeSpec status:NodeStatus
NodeSpec: podCIDR podCIDRs providerID unschedulable taints:[Taint] configSource:NodeConfigSource externalID
Taint: key value effect timeAdded
NodeConfigSource: configMap:ConfigMapNodeConfigSource
ConfigMapNodeConfigSource: namespace name uid resourceVersion kubeletConfigKey
NodeStatus: capacity allocatable phase conditions:[NodeCondition] addresses:[NodeAddress] daemonEndpoints:NodeDaemonEndpoints nodeInfo:NodeSystemInfo images:[ContainerImage] volumesInUse volumesAttached:[AttachedVolume] config:NodeConfigStatus runtimeHandlers:[NodeRuntimeHandler] features:NodeFeatures
NodeCondition: type status lastHeartbeatTime lastTransitionTime reason message
NodeAddress: type address
NodeDaemonEndpoints: kubeletEndpoint:DaemonEndpoint
DaemonEndpoint: Port
NodeSystemInfo: machineID systemUUID bootID kernelVersion osImage containerRuntimeVersion kubeletVersion kubeProxyVersion operatingSystem architecture swap:NodeSwapStatus
NodeSwapStatus: capacity
ContainerImage: names sizeBytes
AttachedVolume: name devicePath
NodeConfigStatus: assigned:NodeConfigSource active:NodeConfigSource lastKnownGood:NodeConfigSource error
NodeRuntimeHandler: name features:NodeRuntimeHandlerFeatures
NodeRuntimeHandlerFeatures: recursiveReadOnlyMounts userNamespaces
NodeFeatures: supplementalGroupsPolicy

PersistentVolume: +TypeMeta metadata:ObjectMeta spec:PersistentVolumeSpec status:PersistentVolumeStatus
PersistentVolumeSpec: capacity +PersistentVolumeSource accessModes claimRef:ObjectReference persistentVolumeReclaimPolicy storageClassName mountOptions volumeMode nodeAffinity:VolumeNodeAffinity volumeAttributesClassName
PersistentVolumeSource: gcePersistentDisk:GCEPersistentDiskVolumeSource awsElasticBlockStore:AWSElasticBlockStoreVolumeSource hostPath:HostPathVolumeSource glusterfs:GlusterfsPersistentVolumeSource nfs:NFSVolumeSource rbd:RBDPersistentVolumeSource iscsi:ISCSIPersistentVolumeSource cinder:CinderPersistentVolumeSource cephfs:CephFSPersistentVolumeSource fc:FCVolumeSource flocker:FlockerVolumeSource flexVolume:FlexPersistentVolumeSource azureFile:AzureFilePersistentVolumeSource vsphereVolume:VsphereVirtualDiskVolumeSource quobyte:QuobyteVolumeSource azureDisk:AzureDiskVolumeSource photonPersistentDisk:PhotonPersistentDiskVolumeSource portworxVolume:PortworxVolumeSource scaleIO:ScaleIOPersistentVolumeSource local:LocalVolumeSource storageos:StorageOSPersistentVolumeSource csi:CSIPersistentVolumeSource
GlusterfsPersistentVolumeSource: endpoints path readOnly endpointsNamespace
RBDPersistentVolumeSource: monitors image fsType pool user keyring secretRef:SecretReference readOnly
ISCSIPersistentVolumeSource: targetPortal iqn lun iscsiInterface fsType readOnly portals chapAuthDiscovery chapAuthSession secretRef:SecretReference initiatorName
CinderPersistentVolumeSource: volumeID fsType readOnly secretRef:SecretReference
CephFSPersistentVolumeSource: monitors path user secretFile secretRef:SecretReference readOnly
FlexPersistentVolumeSource: driver fsType secretRef:SecretReference readOnly options
AzureFilePersistentVolumeSource: secretName shareName readOnly secretNamespace
ScaleIOPersistentVolumeSource: gateway system secretRef:SecretReference sslEnabled protectionDomain storagePool storageMode volumeName fsType readOnly
LocalVolumeSource: path fsType
StorageOSPersistentVolumeSource: volumeName volumeNamespace fsType readOnly secretRef:ObjectReference
CSIPersistentVolumeSource: driver volumeHandle readOnly fsType volumeAttributes controllerPublishSecretRef:SecretReference nodeStageSecretRef:SecretReference nodePublishSecretRef:SecretReference controllerExpandSecretRef:SecretReference nodeExpandSecretRef:SecretReference
VolumeNodeAffinity: required:NodeSelector
PersistentVolumeStatus: phase message reason lastPhaseTransitionTime

PersistentVolumeClaim: +TypeMeta metadata:ObjectMeta spec:PersistentVolumeClaimSpec status:PersistentVolumeClaimStatus
PersistentVolumeClaimSpec: accessModes selector:LabelSelector resources:VolumeResourceRequirements volumeName storageClassName volumeMode dataSource:TypedLocalObjectReference dataSourceRef:TypedObjectReference volumeAttributesClassName
VolumeResourceRequirements: limits requests
PersistentVolumeClaimStatus: phase accessModes capacity conditions:[PersistentVolumeClaimCondition] allocatedResources allocatedResourceStatuses currentVolumeAttributesClassName modifyVolumeStatus:ModifyVolumeStatus
PersistentVolumeClaimCondition: type status lastProbeTime lastTransitionTime reason message
ModifyVolumeStatus: targetVolumeAttributesClassName status

Namespace: +TypeMeta metadata:ObjectMeta spec:NamespaceSpec status:NamespaceStatus
NamespaceSpec: finalizers
NamespaceStatus: phase conditions:[NamespaceCondition]
NamespaceCondition: type status lastTransitionTime reason message

Service: +TypeMeta metadata:ObjectMeta spec:ServiceSpec status:ServiceStatus
ServiceSpec: ports:[ServicePort] selector clusterIP clusterIPs type externalIPs sessionAffinity loadBalancerIP loadBalancerSourceRanges externalName externalTrafficPolicy healthCheckNodePort publishNotReadyAddresses sessionAffinityConfig:SessionAffinityConfig ipFamilies ipFamilyPolicy allocateLoadBalancerNodePorts loadBalancerClass internalTrafficPolicy trafficDistribution
ServicePort: name protocol appProtocol port targetPort nodePort
SessionAffinityConfig: clientIP:ClientIPConfig
ClientIPConfig: timeoutSeconds
ServiceStatus: loadBalancer:LoadBalancerStatus conditions:[Condition]
LoadBalancerStatus: ingress:[LoadBalancerIngress]
LoadBalancerIngress: ip hostname ipMode ports:[PortStatus]
PortStatus: port protocol error

ReplicationController: +TypeMeta metadata:ObjectMeta spec:ReplicationControllerSpec status:ReplicationControllerStatus
ReplicationControllerSpec: replicas minReadySeconds selector template:PodTemplateSpec
ReplicationControllerStatus: replicas fullyLabeledReplicas readyReplicas availableReplicas observedGeneration conditions:[WorkloadCondition]
WorkloadCondition: type status lastTransitionTime reason message
ReplicaSet: +TypeMeta metadata:ObjectMeta spec:ReplicaSetSpec status:ReplicaSetStatus
ReplicaSetSpec: replicas minReadySeconds selector:LabelSelector template:PodTemplateSpec
ReplicaSetStatus: replicas fullyLabeledReplicas readyReplicas availableReplicas terminatingReplicas observedGeneration conditions:[WorkloadCondition]
StatefulSet: +TypeMeta metadata:ObjectMeta spec:StatefulSetSpec status:StatefulSetStatus
StatefulSetSpec: replicas selector:LabelSelector template:PodTemplateSpec volumeClaimTemplates:[PersistentVolumeClaim] serviceName podManagementPolicy updateStrategy:StatefulSetUpdateStrategy revisionHistoryLimit minReadySeconds persistentVolumeClaimRetentionPolicy:StatefulSetPersistentVolumeClaimRetentionPolicy ordinals:StatefulSetOrdinals
StatefulSetUpdateStrategy: type rollingUpdate:RollingUpdateStatefulSetStrategy
RollingUpdateStatefulSetStrategy: partition maxUnavailable
StatefulSetPersistentVolumeClaimRetentionPolicy: whenDeleted whenScaled
StatefulSetOrdinals: start
StatefulSetStatus: observedGeneration replicas readyReplicas currentReplicas updatedReplicas currentRevision updateRevision collisionCount conditions:[WorkloadCondition] availableReplicas

StorageClass: +TypeMeta metadata:ObjectMeta provisioner parameters reclaimPolicy mountOptions allowVolumeExpansion volumeBindingMode allowedTopologies:[TopologySelectorTerm]
TopologySelectorTerm: matchLabelExpressions:[TopologySelectorLabelRequirement]
TopologySelectorLabelRequirement: key values
CSINode: +TypeMeta metadata:ObjectMeta spec:CSINodeSpec
CSINodeSpec: drivers:[CSINodeDriver]
CSINodeDriver: name nodeID topologyKeys allocatable:VolumeNodeResources
VolumeNodeResources: count
CSIDriver: +TypeMeta metadata:ObjectMeta spec:CSIDriverSpec
CSIDriverSpec: attachRequired podInfoOnMount volumeLifecycleModes storageCapacity fsGroupPolicy tokenRequests:[TokenRequest] requiresRepublish seLinuxMount nodeAllocatableUpdatePeriodSeconds
TokenRequest: audience expirationSeconds
CSIStorageCapacity: +TypeMeta metadata:ObjectMeta nodeTopology:LabelSelector storageClassName capacity maximumVolumeSize
VolumeAttachment: +TypeMeta metadata:ObjectMeta spec:VolumeAttachmentSpec status:VolumeAttachmentStatus
VolumeAttachmentSpec: attacher source:VolumeAttachmentSource nodeName
VolumeAttachmentSource: persistentVolumeName inlineVolumeSpec:PersistentVolumeSpec
VolumeAttachmentStatus: attached attachmentMetadata attachError:VolumeError detachError:VolumeError
VolumeError: time message errorCode

PriorityClass: +TypeMeta metadata:ObjectMeta value globalDefault description preemptionPolicy
PodDisruptionBudget: +TypeMeta metadata:ObjectMeta spec:PodDisruptionBudgetSpec status:PodDisruptionBudgetStatus
PodDisruptionBudgetSpec: minAvailable selector:LabelSelector maxUnavailable unhealthyPodEvictionPolicy
PodDisruptionBudgetStatus: observedGeneration disruptedPods disruptionsAllowed currentHealthy desiredHealthy expectedPods conditions:[Condition]
Lease: +TypeMeta metadata:ObjectMeta spec:LeaseSpec
LeaseSpec: holderIdentity leaseDurationSeconds acquireTime renewTime leaseTransitions strategy preferredHolder

DeviceClass: +TypeMeta metadata:ObjectMeta spec:DeviceClassSpec
DeviceClassSpec: selectors:[DeviceSelector] config:[DeviceClassConfiguration] extendedResourceName
DeviceClassConfiguration: +DeviceConfiguration
DeviceConfiguration: opaque:OpaqueDeviceConfiguration
OpaqueDeviceConfiguration: driver parameters:*
DeviceSelector: cel:CELDeviceSelector
CELDeviceSelector: expression
ResourceSlice: +TypeMeta metadata:ObjectMeta spec:ResourceSliceSpec
ResourceSliceSpec: driver pool:ResourcePool nodeName nodeSelector:NodeSelector allNodes devices:[Device] perDeviceNodeSelection sharedCounters:[CounterSet]
ResourcePool: name generation resourceSliceCount
Device: name attributes:{DeviceAttribute} capacity:{DeviceCapacity} consumesCounters:[DeviceCounterConsumption] nodeName nodeSelector:NodeSelector allNodes taints:[DeviceTaint] bindsToNode bindingConditions bindingFailureConditions allowMultipleAllocations
DeviceAttribute: int bool string version
DeviceCapacity: value requestPolicy:CapacityRequestPolicy
CapacityRequestPolicy: default validValues validRange:CapacityRequestPolicyRange
CapacityRequestPolicyRange: min max step
DeviceCounterConsumption: counterSet counters:{Counter}
Counter: value
DeviceTaint: key value effect timeAdded
CounterSet: name counters:{Counter}
ResourceClaim: +TypeMeta metadata:ObjectMeta spec:ResourceClaimSpec status:ResourceClaimStatus
ResourceClaimTemplate: +TypeMeta metadata:ObjectMeta spec:ResourceClaimTemplateSpec
ResourceClaimTemplateSpec: metadata:ObjectMeta spec:ResourceClaimSpec
ResourceClaimSpec: devices:DeviceClaim
DeviceClaim: requests:[DeviceRequest] constraints:[DeviceConstraint] config:[DeviceClaimConfiguration]
DeviceRequest: name exactly:ExactDeviceRequest firstAvailable:[DeviceSubRequest]
ExactDeviceRequest: deviceClassName selectors:[DeviceSelector] allocationMode count adminAccess tolerations:[DeviceToleration] capacity:CapacityRequirements
DeviceSubRequest: name deviceClassName selectors:[DeviceSelector] allocationMode count tolerations:[DeviceToleration] capacity:CapacityRequirements
DeviceToleration: key operator value effect tolerationSeconds
CapacityRequirements: requests
DeviceConstraint: requests matchAttribute distinctAttribute
DeviceClaimConfiguration: requests +DeviceConfiguration
ResourceClaimStatus: allocation:AllocationResult reservedFor:[ResourceClaimConsumerReference] devices:[AllocatedDeviceStatus]
AllocationResult: devices:DeviceAllocationResult nodeSelector:NodeSelector allocationTimestamp
DeviceAllocationResult: results:[DeviceRequestAllocationResult] config:[DeviceAllocationConfiguration]
DeviceRequestAllocationResult: request driver pool device adminAccess tolerations:[DeviceToleration] bindingConditions bindingFailureConditions shareID consumedCapacity
DeviceAllocationConfiguration: source requests +DeviceConfiguration
ResourceClaimConsumerReference: apiGroup resource name uid
AllocatedDeviceStatus: driver pool device shareID conditions:[Condition] data:* networkData:NetworkDeviceData
NetworkDeviceData: interfaceName ips hardwareAddress
"""

# per Kubernetes minor, the fields a newer release adds (same syntax as _TABLE); a minor has the
# fields of every entry at or below it
FIELDS_ADDED: Dict[int, str] = {
    # v1.35 (staging/src/k8s.io/api at v1.35.6)
    35: """
NodeStatus: declaredFeatures
PodSpec: workloadRef:WorkloadReference
WorkloadReference: name podGroup podGroupReplicaKey
PodStatus: allocatedResources resources:ResourceRequirements
PodCertificateProjection: userAnnotations
CSIDriverSpec: serviceAccountTokenInSecrets
Workload: +TypeMeta metadata:ObjectMeta spec:WorkloadSpec
WorkloadSpec: controllerRef:WorkloadControllerRef podGroups:[WorkloadPodGroup]
WorkloadControllerRef: apiGroup kind name
WorkloadPodGroup: name policy:PodGroupSchedulingPolicy
PodGroupSchedulingPolicy: basic:BasicSchedulingPolicy gang:GangSchedulingPolicy
BasicSchedulingPolicy:
GangSchedulingPolicy: minCount
""",
    # v1.36 (v1.36.3): the Workload API's v1alpha2 replaces workloadRef with schedulingGroup
    36: """
PodSpec: -workloadRef schedulingGroup:PodSchedulingGroup
PodSchedulingGroup: podGroupName
WorkloadSpec: -podGroups podGroupTemplates:[PodGroupTemplate]
PodGroupTemplate: name schedulingPolicy:PodGroupSchedulingPolicy schedulingConstraints:PodGroupSchedulingConstraints resourceClaims:[PodGroupResourceClaim] disruptionMode priorityClassName priority
PodGroupSchedulingConstraints: topology:[TopologyConstraint]
TopologyConstraint: key
PodGroupResourceClaim: name resourceClaimName resourceClaimTemplateName
PodGroup: +TypeMeta metadata:ObjectMeta spec:PodGroupSpec status:PodGroupStatus
PodGroupSpec: podGroupTemplateRef:PodGroupTemplateReference schedulingPolicy:PodGroupSchedulingPolicy schedulingConstraints:PodGroupSchedulingConstraints resourceClaims:[PodGroupResourceClaim] disruptionMode priorityClassName priority
PodGroupTemplateReference: workload:WorkloadPodGroupTemplateReference
WorkloadPodGroupTemplateReference: workloadName podGroupTemplateName
PodGroupStatus: conditions:[Condition] resourceClaimStatuses:[PodGroupResourceClaimStatus]
PodGroupResourceClaimStatus: name resourceClaimName
PodStatus: nodeAllocatableResourceClaimStatuses:[NodeAllocatableResourceClaimStatus]
NodeAllocatableResourceClaimStatus: resourceClaimName containers resources
ResourceHealth: message
VolumeMountStatus: volumeStatus:VolumeStatus
VolumeStatus: image:ImageVolumeStatus
ImageVolumeStatus: imageRef
CSIDriverSpec: preventPodSchedulingIfMissing
Device: nodeAllocatableResourceMappings:{NodeAllocatableResourceMapping}
NodeAllocatableResourceMapping: capacityKey allocationMultiplier
DeviceAttribute: ints bools strings versions
""",
}

_FREE = "*"  # free-form JSON below this field
_LEAF = ""  # a value whose keys (if any) are not fields


def _parse(text: str, into: Dict[str, Dict[str, Any]]) -> None:
    for line in text.strip().splitlines():
        line = line.strip()
        if not line:
            continue
        name, _, rest = line.partition(":")
        fields = into.setdefault(name.strip(), {})
        for tok in rest.split():
            if tok.startswith("+"):
                fields.setdefault("+", []).append(tok[1:])
                continue
            if tok.startswith("-"):  # a field a newer release removed
                fields.pop(tok[1:], None)
                continue
            field, _, typ = tok.partition(":")
            fields[field] = typ


@lru_cache(maxsize=None)
def _table(minor: int) -> Dict[str, Dict[str, Any]]:
    """The struct table of one Kubernetes minor, embedded structs flattened."""
    raw: Dict[str, Dict[str, Any]] = {}
    _parse(_TABLE, raw)
    for m in sorted(FIELDS_ADDED):
        if m <= minor:
            _parse(FIELDS_ADDED[m], raw)

    def flat(name: str, depth: int = 0) -> Dict[str, str]:
        out: Dict[str, str] = {}
        for inl in raw[name].get("+", []):
            out.update(flat(inl, depth + 1))
        out.update({k: v for k, v in raw[name].items() if k != "+"})
        return out

    return {name: flat(name) for name in raw}


def check_api_version(kind: str, api_version: Any) -> Optional[str]:
    """Why the API server would not take this kind at this apiVersion, or None (a kind the
    harness does not read is not checked)."""
    want = KIND_VERSIONS.get(kind)
    if want is None or api_version in want:
        return None
    if api_version is None or api_version == "":
        return f"Required value: apiVersion not set (the {kind} apiVersion is {want[0]})"
    if api_version in _SERVED_NOT_READ.get(kind, ()):
        return (f'Unsupported value: "{api_version}": the harness reads {kind} objects of '
                f'{want[0]} (convert the manifest to that version)')
    return f'no matches for kind "{kind}" in version "{str(api_version)[:60]}"'




def unknown_field(obj: Dict[str, Any], kind: str, minor: int = 34) -> Optional[str]:
    """The path of the first field (in document order) that the kind's Go type lacks, as
    strict decoding names it (`spec.containers[0].resoruces`), or None."""
    struct = _KINDS.get(kind)
    if struct is None:
        return None
    table = _compiled(minor)
    if struct not in table:
        return None  # a kind this minor does not have (the Workload API: v1.35 on)
    bad = _find(obj, table[struct], table, True, valid_memo.table())
    return None if bad is None else _path(bad)


# A struct compiled for the walk: field -> None (a leaf or free-form value) or (shape, struct),
# shape "." (a struct), "[" (a list of it) or "{" (a map of it).
_Compiled = Dict[str, Optional[Tuple[str, str]]]


@lru_cache(maxsize=None)
def _compiled(minor: int) -> Dict[str, _Compiled]:
    out: Dict[str, _Compiled] = {}
    for name, fields in _table(minor).items():
        c: _Compiled = {}
        for k, typ in fields.items():
            if typ == _LEAF or typ == _FREE:
                c[k] = None
            elif typ.startswith("[") or typ.startswith("{"):
                c[k] = (typ[0], typ[1:-1])
            else:
                c[k] = (".", typ)
        out[name] = c
    return out


def _find(value: Any, fields: _Compiled, table: Dict[str, _Compiled], top: bool,
          memo: Optional[Dict[Any, Any]] = None) -> Optional[list]:
    """The first unknown field below value (a struct), as its path's segments in reverse, or
    None; no path is built on the way (what made the walk cost most). `memo`: the values below
    metadata/spec/status found free of unknown fields (shared values: api/valid_memo.py)."""
    if not isinstance(value, dict):
        return None  # a wrong type is the type check's to report
    pk = (id(fields), tuple(value))
    plan = _PLANS.get(pk)
    if plan is None:
        plan = _plan(value, fields, table, pk)
    for k, shape, inner, sub in plan:
        if shape is _UNKNOWN:
            return [k]
        v = value[k]
        if v is None:
            continue
        if memo is not None and not top:  # below metadata/spec/status: maybe shared
            mkey = (shape, inner, id(v))
            if memo.get(mkey) is v:
                continue
        if shape == ".":
            internal = top and k == "metadata"
            if internal and isinstance(v, dict) and "x-creationIndex" in v:
                v = {mk: mv for mk, mv in v.items() if mk != "x-creationIndex"}
            bad = _find(v, sub, table, False, memo)
            if bad is not None:
                bad.append(k)
                return bad
        elif shape == "[":
            if isinstance(v, list):
                for i, item in enumerate(v):
                    bad = _find(item, sub, table, False, memo)
                    if bad is not None:
                        bad.append(f"{k}[{i}]")
                        return bad
        elif isinstance(v, dict):
            for mk, item in v.items():
                bad = _find(item, sub, table, False, memo)
                if bad is not None:
                    bad.append(mk)
                    bad.append(k)
                    return bad
        if memo is not None and not top:
            memo[mkey] = v
    return None


def member_walk(kind: str, part: str, member: str, minor: int) -> Optional[Callable[[Any], bool]]:
    """For the member `member` of the kind's `part` (a field of its struct, as metadata, spec or
    status are): a function telling whether a value of it is free of unknown fields, or None
    when the member holds no struct (nothing to walk). unknown_field's walk of that member
    alone (api/replica_check.py: a replica's own members); the member's value itself is not
    remembered (it is a pod's own), what is below it is."""
    table = _compiled(minor)
    got = table[_KINDS[kind]][part]
    spec = table[got[1]].get(member) if got is not None else None
    if spec is None:
        return None
    shape, inner = spec
    sub = table[inner]

    def free(value: Any) -> bool:
        if value is None:
            return True
        memo = valid_memo.table()
        if memo is not None and memo.get((shape, inner, id(value))) is value:
            return True
        if shape == ".":
            return _find(value, sub, table, False, memo) is None
        if shape == "[":
            if not isinstance(value, list):
                return True
            for item in value:
                if _find(item, sub, table, False, memo) is not None:
                    return False
            return True
        if not isinstance(value, dict):
            return True
        for item in value.values():
            if _find(item, sub, table, False, memo) is not None:
                return False
        return True

    return free


_UNKNOWN: Any = object()
# (a struct's compiled fields, a value's keys in order) -> _plan's steps (the keys of replicas'
# metadata/spec/status repeat)
_PLANS: Dict[Tuple[int, Tuple[Any, ...]], List[Tuple[Any, Any, str, Any]]] = {}


def _plan(value: Dict[Any, Any], fields: _Compiled, table: Dict[str, _Compiled],
          pk: Tuple[int, Tuple[Any, ...]]) -> List[Tuple[Any, Any, str, Any]]:
    """What _find does with a value's keys, in order: walk a field that holds structs (key,
    shape, struct, its compiled fields; leaves are skipped), or stop at the first key that is no
    field (key, _UNKNOWN, "", None). Remembered for keys that are all strings (a tuple of them
    equals no other tuple of keys)."""
    steps: List[Tuple[Any, Any, str, Any]] = []
    plain = True
    for k in value:
        spec = fields.get(k, _UNKNOWN) if isinstance(k, str) else _UNKNOWN
        plain = plain and isinstance(k, str)
        if spec is _UNKNOWN:
            steps.append((k, _UNKNOWN, "", None))
            break
        if spec is not None:
            steps.append((k, spec[0], spec[1], table[spec[1]]))
    if plain and len(_PLANS) < 100_000:
        _PLANS[pk] = steps
    return steps


def _path(reversed_segments: list) -> str:
    return ".".join(str(seg) for seg in reversed(reversed_segments))
