/**
 * core/v1's PodSpec as protobuf carries it, with every message it holds: the field numbers of
 * Kubernetes 1.32's generated.proto (k8s.io/api v0.32.0) and, for each field, the flags its Go
 * JSON tag gives it (the same `omitempty` table the JSON decoding keeps, {@link OmitEmptyFields}).
 * An embedded Go struct (`json:",inline"`: a Volume's source, a Probe's handler, an ephemeral
 * container's common part, a key selector's reference) joins its parent's fields.
 */
import * as ProtobufFields from "./ProtobufFields.ts"
import type * as Protobuf from "./Protobuf.ts"

type Message = Protobuf.Message
const { always, bool, inline, int, ints, labelSelector, msg, msgs, nullable, objectMeta, ptr, str, strs } = ProtobufFields

const coreHostPathVolumeSource: Message = {
  1: str("path", always),
  2: str("type", ptr)
}

const coreEmptyDirVolumeSource: Message = {
  1: str("medium"),
  2: { type: "quantity", name: "sizeLimit", ...ptr }
}

const coreGCEPersistentDiskVolumeSource: Message = {
  1: str("pdName", always),
  2: str("fsType"),
  3: int("partition"),
  4: bool("readOnly")
}

const coreAWSElasticBlockStoreVolumeSource: Message = {
  1: str("volumeID", always),
  2: str("fsType"),
  3: int("partition"),
  4: bool("readOnly")
}

const coreGitRepoVolumeSource: Message = {
  1: str("repository", always),
  2: str("revision"),
  3: str("directory")
}

const coreKeyToPath: Message = {
  1: str("key", always),
  2: str("path", always),
  3: int("mode", ptr)
}

const coreSecretVolumeSource: Message = {
  1: str("secretName"),
  2: msgs("items", coreKeyToPath),
  3: int("defaultMode", ptr),
  4: bool("optional", ptr)
}

const coreNFSVolumeSource: Message = {
  1: str("server", always),
  2: str("path", always),
  3: bool("readOnly")
}

const coreLocalObjectReference: Message = {
  1: str("name")
}

const coreISCSIVolumeSource: Message = {
  1: str("targetPortal", always),
  2: str("iqn", always),
  3: int("lun", always),
  4: str("iscsiInterface"),
  5: str("fsType"),
  6: bool("readOnly"),
  7: strs("portals"),
  8: bool("chapAuthDiscovery"),
  10: msg("secretRef", coreLocalObjectReference, ptr),
  11: bool("chapAuthSession"),
  12: str("initiatorName", ptr)
}

const coreGlusterfsVolumeSource: Message = {
  1: str("endpoints", always),
  2: str("path", always),
  3: bool("readOnly")
}

const corePersistentVolumeClaimVolumeSource: Message = {
  1: str("claimName", always),
  2: bool("readOnly")
}

const coreRBDVolumeSource: Message = {
  1: strs("monitors", always),
  2: str("image", always),
  3: str("fsType"),
  4: str("pool"),
  5: str("user"),
  6: str("keyring"),
  7: msg("secretRef", coreLocalObjectReference, ptr),
  8: bool("readOnly")
}

const coreFlexVolumeSource: Message = {
  1: str("driver", always),
  2: str("fsType"),
  3: msg("secretRef", coreLocalObjectReference, ptr),
  4: bool("readOnly"),
  5: { name: "options", type: "map", value: "string" }
}

const coreCinderVolumeSource: Message = {
  1: str("volumeID", always),
  2: str("fsType"),
  3: bool("readOnly"),
  4: msg("secretRef", coreLocalObjectReference, ptr)
}

const coreCephFSVolumeSource: Message = {
  1: strs("monitors", always),
  2: str("path"),
  3: str("user"),
  4: str("secretFile"),
  5: msg("secretRef", coreLocalObjectReference, ptr),
  6: bool("readOnly")
}

const coreFlockerVolumeSource: Message = {
  1: str("datasetName"),
  2: str("datasetUUID")
}

const coreObjectFieldSelector: Message = {
  1: str("apiVersion"),
  2: str("fieldPath", always)
}

const coreResourceFieldSelector: Message = {
  1: str("containerName"),
  2: str("resource", always),
  3: { type: "quantity", name: "divisor" }
}

const coreDownwardAPIVolumeFile: Message = {
  1: str("path", always),
  2: msg("fieldRef", coreObjectFieldSelector, ptr),
  3: msg("resourceFieldRef", coreResourceFieldSelector, ptr),
  4: int("mode", ptr)
}

const coreDownwardAPIVolumeSource: Message = {
  1: msgs("items", coreDownwardAPIVolumeFile),
  2: int("defaultMode", ptr)
}

const coreFCVolumeSource: Message = {
  1: strs("targetWWNs"),
  2: int("lun", ptr),
  3: str("fsType"),
  4: bool("readOnly"),
  5: strs("wwids")
}

const coreAzureFileVolumeSource: Message = {
  1: str("secretName", always),
  2: str("shareName", always),
  3: bool("readOnly")
}

const coreConfigMapVolumeSource: Message = {
  1: inline(coreLocalObjectReference),
  2: msgs("items", coreKeyToPath),
  3: int("defaultMode", ptr),
  4: bool("optional", ptr)
}

const coreVsphereVirtualDiskVolumeSource: Message = {
  1: str("volumePath", always),
  2: str("fsType"),
  3: str("storagePolicyName"),
  4: str("storagePolicyID")
}

const coreQuobyteVolumeSource: Message = {
  1: str("registry", always),
  2: str("volume", always),
  3: bool("readOnly"),
  4: str("user"),
  5: str("group"),
  6: str("tenant")
}

const coreAzureDiskVolumeSource: Message = {
  1: str("diskName", always),
  2: str("diskURI", always),
  3: str("cachingMode", ptr),
  4: str("fsType", ptr),
  5: bool("readOnly", ptr),
  6: str("kind", ptr)
}

const corePhotonPersistentDiskVolumeSource: Message = {
  1: str("pdID", always),
  2: str("fsType")
}

const coreSecretProjection: Message = {
  1: inline(coreLocalObjectReference),
  2: msgs("items", coreKeyToPath),
  4: bool("optional", ptr)
}

const coreDownwardAPIProjection: Message = {
  1: msgs("items", coreDownwardAPIVolumeFile)
}

const coreConfigMapProjection: Message = {
  1: inline(coreLocalObjectReference),
  2: msgs("items", coreKeyToPath),
  4: bool("optional", ptr)
}

const coreServiceAccountTokenProjection: Message = {
  1: str("audience"),
  2: int("expirationSeconds", ptr),
  3: str("path", always)
}

const coreClusterTrustBundleProjection: Message = {
  1: str("name", ptr),
  2: str("signerName", ptr),
  3: msg("labelSelector", labelSelector, ptr),
  4: str("path", always),
  5: bool("optional", ptr)
}

const coreVolumeProjection: Message = {
  1: msg("secret", coreSecretProjection, ptr),
  2: msg("downwardAPI", coreDownwardAPIProjection, ptr),
  3: msg("configMap", coreConfigMapProjection, ptr),
  4: msg("serviceAccountToken", coreServiceAccountTokenProjection, ptr),
  5: msg("clusterTrustBundle", coreClusterTrustBundleProjection, ptr)
}

const coreProjectedVolumeSource: Message = {
  1: msgs("sources", coreVolumeProjection, always),
  2: int("defaultMode", ptr)
}

const corePortworxVolumeSource: Message = {
  1: str("volumeID", always),
  2: str("fsType"),
  3: bool("readOnly")
}

const coreScaleIOVolumeSource: Message = {
  1: str("gateway", always),
  2: str("system", always),
  3: msg("secretRef", coreLocalObjectReference, nullable),
  4: bool("sslEnabled"),
  5: str("protectionDomain"),
  6: str("storagePool"),
  7: str("storageMode"),
  8: str("volumeName"),
  9: str("fsType"),
  10: bool("readOnly")
}

const coreStorageOSVolumeSource: Message = {
  1: str("volumeName"),
  2: str("volumeNamespace"),
  3: str("fsType"),
  4: bool("readOnly"),
  5: msg("secretRef", coreLocalObjectReference, ptr)
}

const coreCSIVolumeSource: Message = {
  1: str("driver", always),
  2: bool("readOnly", ptr),
  3: str("fsType", ptr),
  4: { name: "volumeAttributes", type: "map", value: "string" },
  5: msg("nodePublishSecretRef", coreLocalObjectReference, ptr)
}

const coreVolumeResourceRequirements: Message = {
  1: { name: "limits", type: "map", value: "quantity" },
  2: { name: "requests", type: "map", value: "quantity" }
}

const coreTypedLocalObjectReference: Message = {
  1: str("apiGroup", nullable),
  2: str("kind", always),
  3: str("name", always)
}

const coreTypedObjectReference: Message = {
  1: str("apiGroup", nullable),
  2: str("kind", always),
  3: str("name", always),
  4: str("namespace", ptr)
}

const corePersistentVolumeClaimSpec: Message = {
  1: strs("accessModes"),
  2: msg("resources", coreVolumeResourceRequirements),
  3: str("volumeName"),
  4: msg("selector", labelSelector, ptr),
  5: str("storageClassName", ptr),
  6: str("volumeMode", ptr),
  7: msg("dataSource", coreTypedLocalObjectReference, ptr),
  8: msg("dataSourceRef", coreTypedObjectReference, ptr),
  9: str("volumeAttributesClassName", ptr)
}

const corePersistentVolumeClaimTemplate: Message = {
  1: msg("metadata", objectMeta, always),
  2: msg("spec", corePersistentVolumeClaimSpec, always)
}

const coreEphemeralVolumeSource: Message = {
  1: msg("volumeClaimTemplate", corePersistentVolumeClaimTemplate, ptr)
}

const coreImageVolumeSource: Message = {
  1: str("reference"),
  2: str("pullPolicy")
}

const coreVolumeSource: Message = {
  1: msg("hostPath", coreHostPathVolumeSource, ptr),
  2: msg("emptyDir", coreEmptyDirVolumeSource, ptr),
  3: msg("gcePersistentDisk", coreGCEPersistentDiskVolumeSource, ptr),
  4: msg("awsElasticBlockStore", coreAWSElasticBlockStoreVolumeSource, ptr),
  5: msg("gitRepo", coreGitRepoVolumeSource, ptr),
  6: msg("secret", coreSecretVolumeSource, ptr),
  7: msg("nfs", coreNFSVolumeSource, ptr),
  8: msg("iscsi", coreISCSIVolumeSource, ptr),
  9: msg("glusterfs", coreGlusterfsVolumeSource, ptr),
  10: msg("persistentVolumeClaim", corePersistentVolumeClaimVolumeSource, ptr),
  11: msg("rbd", coreRBDVolumeSource, ptr),
  12: msg("flexVolume", coreFlexVolumeSource, ptr),
  13: msg("cinder", coreCinderVolumeSource, ptr),
  14: msg("cephfs", coreCephFSVolumeSource, ptr),
  15: msg("flocker", coreFlockerVolumeSource, ptr),
  16: msg("downwardAPI", coreDownwardAPIVolumeSource, ptr),
  17: msg("fc", coreFCVolumeSource, ptr),
  18: msg("azureFile", coreAzureFileVolumeSource, ptr),
  19: msg("configMap", coreConfigMapVolumeSource, ptr),
  20: msg("vsphereVolume", coreVsphereVirtualDiskVolumeSource, ptr),
  21: msg("quobyte", coreQuobyteVolumeSource, ptr),
  22: msg("azureDisk", coreAzureDiskVolumeSource, ptr),
  23: msg("photonPersistentDisk", corePhotonPersistentDiskVolumeSource, ptr),
  24: msg("portworxVolume", corePortworxVolumeSource, ptr),
  25: msg("scaleIO", coreScaleIOVolumeSource, ptr),
  26: msg("projected", coreProjectedVolumeSource, ptr),
  27: msg("storageos", coreStorageOSVolumeSource, ptr),
  28: msg("csi", coreCSIVolumeSource, ptr),
  29: msg("ephemeral", coreEphemeralVolumeSource, ptr),
  30: msg("image", coreImageVolumeSource, ptr)
}

const coreVolume: Message = {
  1: str("name", always),
  2: inline(coreVolumeSource)
}

const coreContainerPort: Message = {
  1: str("name"),
  2: int("hostPort"),
  3: int("containerPort", always),
  4: str("protocol"),
  5: str("hostIP")
}

const coreConfigMapEnvSource: Message = {
  1: inline(coreLocalObjectReference),
  2: bool("optional", ptr)
}

const coreSecretEnvSource: Message = {
  1: inline(coreLocalObjectReference),
  2: bool("optional", ptr)
}

const coreEnvFromSource: Message = {
  1: str("prefix"),
  2: msg("configMapRef", coreConfigMapEnvSource, ptr),
  3: msg("secretRef", coreSecretEnvSource, ptr)
}

const coreConfigMapKeySelector: Message = {
  1: inline(coreLocalObjectReference),
  2: str("key", always),
  3: bool("optional", ptr)
}

const coreSecretKeySelector: Message = {
  1: inline(coreLocalObjectReference),
  2: str("key", always),
  3: bool("optional", ptr)
}

const coreEnvVarSource: Message = {
  1: msg("fieldRef", coreObjectFieldSelector, ptr),
  2: msg("resourceFieldRef", coreResourceFieldSelector, ptr),
  3: msg("configMapKeyRef", coreConfigMapKeySelector, ptr),
  4: msg("secretKeyRef", coreSecretKeySelector, ptr)
}

const coreEnvVar: Message = {
  1: str("name", always),
  2: str("value"),
  3: msg("valueFrom", coreEnvVarSource, ptr)
}

const coreResourceClaim: Message = {
  1: str("name", always),
  2: str("request", always)
}

const coreResourceRequirements: Message = {
  1: { name: "limits", type: "map", value: "quantity" },
  2: { name: "requests", type: "map", value: "quantity" },
  3: msgs("claims", coreResourceClaim)
}

const coreContainerResizePolicy: Message = {
  1: str("resourceName", always),
  2: str("restartPolicy", always)
}

const coreVolumeMount: Message = {
  1: str("name", always),
  2: bool("readOnly"),
  3: str("mountPath", always),
  4: str("subPath"),
  5: str("mountPropagation", ptr),
  6: str("subPathExpr"),
  7: str("recursiveReadOnly", ptr)
}

const coreVolumeDevice: Message = {
  1: str("name", always),
  2: str("devicePath", always)
}

const coreExecAction: Message = {
  1: strs("command")
}

const coreHTTPHeader: Message = {
  1: str("name", always),
  2: str("value", always)
}

const coreHTTPGetAction: Message = {
  1: str("path"),
  2: { type: "intOrString", name: "port", ...always },
  3: str("host"),
  4: str("scheme"),
  5: msgs("httpHeaders", coreHTTPHeader)
}

const coreTCPSocketAction: Message = {
  1: { type: "intOrString", name: "port", ...always },
  2: str("host")
}

const coreGRPCAction: Message = {
  1: int("port", always),
  2: str("service", nullable)
}

const coreProbeHandler: Message = {
  1: msg("exec", coreExecAction, ptr),
  2: msg("httpGet", coreHTTPGetAction, ptr),
  3: msg("tcpSocket", coreTCPSocketAction, ptr),
  4: msg("grpc", coreGRPCAction, ptr)
}

const coreProbe: Message = {
  1: inline(coreProbeHandler),
  2: int("initialDelaySeconds"),
  3: int("timeoutSeconds"),
  4: int("periodSeconds"),
  5: int("successThreshold"),
  6: int("failureThreshold"),
  7: int("terminationGracePeriodSeconds", ptr)
}

const coreSleepAction: Message = {
  1: int("seconds", always)
}

const coreLifecycleHandler: Message = {
  1: msg("exec", coreExecAction, ptr),
  2: msg("httpGet", coreHTTPGetAction, ptr),
  3: msg("tcpSocket", coreTCPSocketAction, ptr),
  4: msg("sleep", coreSleepAction, ptr)
}

const coreLifecycle: Message = {
  1: msg("postStart", coreLifecycleHandler, ptr),
  2: msg("preStop", coreLifecycleHandler, ptr)
}

const coreCapabilities: Message = {
  1: strs("add"),
  2: strs("drop")
}

const coreSELinuxOptions: Message = {
  1: str("user"),
  2: str("role"),
  3: str("type"),
  4: str("level")
}

const coreWindowsSecurityContextOptions: Message = {
  1: str("gmsaCredentialSpecName", ptr),
  2: str("gmsaCredentialSpec", ptr),
  3: str("runAsUserName", ptr),
  4: bool("hostProcess", ptr)
}

const coreSeccompProfile: Message = {
  1: str("type", always),
  2: str("localhostProfile", ptr)
}

const coreAppArmorProfile: Message = {
  1: str("type", always),
  2: str("localhostProfile", ptr)
}

const coreSecurityContext: Message = {
  1: msg("capabilities", coreCapabilities, ptr),
  2: bool("privileged", ptr),
  3: msg("seLinuxOptions", coreSELinuxOptions, ptr),
  4: int("runAsUser", ptr),
  5: bool("runAsNonRoot", ptr),
  6: bool("readOnlyRootFilesystem", ptr),
  7: bool("allowPrivilegeEscalation", ptr),
  8: int("runAsGroup", ptr),
  9: str("procMount", ptr),
  10: msg("windowsOptions", coreWindowsSecurityContextOptions, ptr),
  11: msg("seccompProfile", coreSeccompProfile, ptr),
  12: msg("appArmorProfile", coreAppArmorProfile, ptr)
}

const coreContainer: Message = {
  1: str("name", always),
  2: str("image"),
  3: strs("command"),
  4: strs("args"),
  5: str("workingDir"),
  6: msgs("ports", coreContainerPort),
  7: msgs("env", coreEnvVar),
  8: msg("resources", coreResourceRequirements),
  9: msgs("volumeMounts", coreVolumeMount),
  10: msg("livenessProbe", coreProbe, ptr),
  11: msg("readinessProbe", coreProbe, ptr),
  12: msg("lifecycle", coreLifecycle, ptr),
  13: str("terminationMessagePath"),
  14: str("imagePullPolicy"),
  15: msg("securityContext", coreSecurityContext, ptr),
  16: bool("stdin"),
  17: bool("stdinOnce"),
  18: bool("tty"),
  19: msgs("envFrom", coreEnvFromSource),
  20: str("terminationMessagePolicy"),
  21: msgs("volumeDevices", coreVolumeDevice),
  22: msg("startupProbe", coreProbe, ptr),
  23: msgs("resizePolicy", coreContainerResizePolicy),
  24: str("restartPolicy", ptr)
}

// Go gives an ephemeral container the same fields, numbers and tags as a container.
const coreEphemeralContainerCommon: Message = coreContainer

const coreEphemeralContainer: Message = {
  1: inline(coreEphemeralContainerCommon),
  2: str("targetContainerName")
}

const coreSysctl: Message = {
  1: str("name", always),
  2: str("value", always)
}

const corePodSecurityContext: Message = {
  1: msg("seLinuxOptions", coreSELinuxOptions, ptr),
  2: int("runAsUser", ptr),
  3: bool("runAsNonRoot", ptr),
  4: ints("supplementalGroups"),
  5: int("fsGroup", ptr),
  6: int("runAsGroup", ptr),
  7: msgs("sysctls", coreSysctl),
  8: msg("windowsOptions", coreWindowsSecurityContextOptions, ptr),
  9: str("fsGroupChangePolicy", ptr),
  10: msg("seccompProfile", coreSeccompProfile, ptr),
  11: msg("appArmorProfile", coreAppArmorProfile, ptr),
  12: str("supplementalGroupsPolicy", ptr),
  13: str("seLinuxChangePolicy", ptr)
}

const coreNodeSelectorRequirement: Message = {
  1: str("key", always),
  2: str("operator", always),
  3: strs("values")
}

const coreNodeSelectorTerm: Message = {
  1: msgs("matchExpressions", coreNodeSelectorRequirement),
  2: msgs("matchFields", coreNodeSelectorRequirement)
}

const coreNodeSelector: Message = {
  1: msgs("nodeSelectorTerms", coreNodeSelectorTerm, always)
}

const corePreferredSchedulingTerm: Message = {
  1: int("weight", always),
  2: msg("preference", coreNodeSelectorTerm, always)
}

const coreNodeAffinity: Message = {
  1: msg("requiredDuringSchedulingIgnoredDuringExecution", coreNodeSelector, ptr),
  2: msgs("preferredDuringSchedulingIgnoredDuringExecution", corePreferredSchedulingTerm)
}

const corePodAffinityTerm: Message = {
  1: msg("labelSelector", labelSelector, ptr),
  2: strs("namespaces"),
  3: str("topologyKey", always),
  4: msg("namespaceSelector", labelSelector, ptr),
  5: strs("matchLabelKeys"),
  6: strs("mismatchLabelKeys")
}

const coreWeightedPodAffinityTerm: Message = {
  1: int("weight", always),
  2: msg("podAffinityTerm", corePodAffinityTerm, always)
}

const corePodAffinity: Message = {
  1: msgs("requiredDuringSchedulingIgnoredDuringExecution", corePodAffinityTerm),
  2: msgs("preferredDuringSchedulingIgnoredDuringExecution", coreWeightedPodAffinityTerm)
}

const corePodAntiAffinity: Message = {
  1: msgs("requiredDuringSchedulingIgnoredDuringExecution", corePodAffinityTerm),
  2: msgs("preferredDuringSchedulingIgnoredDuringExecution", coreWeightedPodAffinityTerm)
}

const coreAffinity: Message = {
  1: msg("nodeAffinity", coreNodeAffinity, ptr),
  2: msg("podAffinity", corePodAffinity, ptr),
  3: msg("podAntiAffinity", corePodAntiAffinity, ptr)
}

const coreToleration: Message = {
  1: str("key"),
  2: str("operator"),
  3: str("value"),
  4: str("effect"),
  5: int("tolerationSeconds", ptr)
}

const coreHostAlias: Message = {
  1: str("ip", always),
  2: strs("hostnames")
}

const corePodDNSConfigOption: Message = {
  1: str("name"),
  2: str("value", ptr)
}

const corePodDNSConfig: Message = {
  1: strs("nameservers"),
  2: strs("searches"),
  3: msgs("options", corePodDNSConfigOption)
}

const corePodReadinessGate: Message = {
  1: str("conditionType", always)
}

const coreTopologySpreadConstraint: Message = {
  1: int("maxSkew", always),
  2: str("topologyKey", always),
  3: str("whenUnsatisfiable", always),
  4: msg("labelSelector", labelSelector, ptr),
  5: int("minDomains", ptr),
  6: str("nodeAffinityPolicy", ptr),
  7: str("nodeTaintsPolicy", ptr),
  8: strs("matchLabelKeys")
}

const corePodOS: Message = {
  1: str("name", always)
}

const corePodSchedulingGate: Message = {
  1: str("name", always)
}

const corePodResourceClaim: Message = {
  1: str("name", always),
  3: str("resourceClaimName", ptr),
  4: str("resourceClaimTemplateName", ptr)
}

/** core/v1 PodSpec. */
export const podSpec: Message = {
  1: msgs("volumes", coreVolume),
  2: msgs("containers", coreContainer, always),
  3: str("restartPolicy"),
  4: int("terminationGracePeriodSeconds", ptr),
  5: int("activeDeadlineSeconds", ptr),
  6: str("dnsPolicy"),
  7: { name: "nodeSelector", type: "map", value: "string" },
  8: str("serviceAccountName"),
  9: str("serviceAccount"),
  10: str("nodeName"),
  11: bool("hostNetwork"),
  12: bool("hostPID"),
  13: bool("hostIPC"),
  14: msg("securityContext", corePodSecurityContext, ptr),
  15: msgs("imagePullSecrets", coreLocalObjectReference),
  16: str("hostname"),
  17: str("subdomain"),
  18: msg("affinity", coreAffinity, ptr),
  19: str("schedulerName"),
  20: msgs("initContainers", coreContainer),
  21: bool("automountServiceAccountToken", ptr),
  22: msgs("tolerations", coreToleration),
  23: msgs("hostAliases", coreHostAlias),
  24: str("priorityClassName"),
  25: int("priority", ptr),
  26: msg("dnsConfig", corePodDNSConfig, ptr),
  27: bool("shareProcessNamespace", ptr),
  28: msgs("readinessGates", corePodReadinessGate),
  29: str("runtimeClassName", ptr),
  30: bool("enableServiceLinks", ptr),
  31: str("preemptionPolicy", ptr),
  32: { name: "overhead", type: "map", value: "quantity" },
  33: msgs("topologySpreadConstraints", coreTopologySpreadConstraint),
  34: msgs("ephemeralContainers", coreEphemeralContainer),
  35: bool("setHostnameAsFQDN", ptr),
  36: msg("os", corePodOS, ptr),
  37: bool("hostUsers", ptr),
  38: msgs("schedulingGates", corePodSchedulingGate),
  39: msgs("resourceClaims", corePodResourceClaim),
  40: msg("resources", coreResourceRequirements, ptr)
}
