/**
 * The protobuf messages of the built-in kinds kubectl's generator commands send (`kubectl create
 * namespace|configmap|secret|serviceaccount|deployment|service|job|cronjob|role|clusterrole|
 * rolebinding|clusterrolebinding|ingress|poddisruptionbudget|priorityclass|quota` and `kubectl
 * autoscale`, the Pods of `kubectl debug node/<name>`, and the DeleteOptions and Evictions of
 * `kubectl delete` and `drain`), with Kubernetes' field numbers (generated.proto) and
 * the Go JSON tags that decide which zero values the JSON form keeps (`omitempty` or not, pointer or
 * not). Every field a message lists is decoded; a field it does not list makes the body refused,
 * so nothing a client sent is silently dropped.
 */
import type * as Protobuf from "./Protobuf.ts"

type Field = Protobuf.Field
type Message = Protobuf.Message
type Flags = Protobuf.Flags

/** A Go pointer: a zero value that was sent is kept. */
const ptr: Flags = { pointer: true }
/** No `omitempty`: zero values are kept, and an absent list, map or pointer is null. */
const always: Flags = { always: true }
/** A pointer without `omitempty`: null when not sent. */
const nullable: Flags = { pointer: true, always: true }

const str = (name: string, flags: Flags = {}): Field => ({ name, type: "string", ...flags })
const int = (name: string, flags: Flags = {}): Field => ({ name, type: "int64", ...flags })
const bool = (name: string, flags: Flags = {}): Field => ({ name, type: "bool", ...flags })
const strs = (name: string, flags: Flags = {}): Field => ({ name, type: "strings", ...flags })
const msg = (name: string, message: Message, flags: Flags = {}): Field => ({ name, type: "message", message, ...flags })
const msgs = (name: string, message: Message, flags: Flags = {}): Field => ({ name, type: "messages", message, ...flags })
const inline = (message: Message): Field => ({ name: "", type: "message", message, inline: true })

// meta/v1

const ownerReference: Message = {
  1: str("kind", always),
  3: str("name", always),
  4: str("uid", always),
  5: str("apiVersion", always),
  6: bool("controller", ptr),
  7: bool("blockOwnerDeletion", ptr)
}

/** metav1.ObjectMeta as clients send it (managedFields is the server's). */
export const objectMeta: Message = {
  1: str("name"),
  2: str("generateName"),
  3: str("namespace"),
  4: str("selfLink"),
  5: str("uid"),
  6: str("resourceVersion"),
  7: int("generation"),
  8: { name: "creationTimestamp", type: "time" },
  9: { name: "deletionTimestamp", type: "time", pointer: true },
  10: int("deletionGracePeriodSeconds", ptr),
  11: { name: "labels", type: "map", value: "string" },
  12: { name: "annotations", type: "map", value: "string" },
  13: msgs("ownerReferences", ownerReference),
  14: strs("finalizers")
}

const labelSelector: Message = {
  1: { name: "matchLabels", type: "map", value: "string" },
  2: msgs("matchExpressions", { 1: str("key", always), 2: str("operator", always), 3: strs("values") })
}

const object = (fields: Message): Message => ({ 1: msg("metadata", objectMeta), ...fields })

// core/v1: pod templates

const localObjectReference: Message = { 1: str("name") }
const keySelector: Message = { 1: inline(localObjectReference), 2: str("key", always), 3: bool("optional", ptr) }

const envVar: Message = {
  1: str("name", always),
  2: str("value"),
  3: msg("valueFrom", {
    1: msg("fieldRef", { 1: str("apiVersion"), 2: str("fieldPath", always) }, ptr),
    2: msg("resourceFieldRef", { 1: str("containerName"), 2: str("resource", always), 3: { name: "divisor", type: "quantity" } }, ptr),
    3: msg("configMapKeyRef", keySelector, ptr),
    4: msg("secretKeyRef", keySelector, ptr)
  }, ptr)
}

const resourceRequirements: Message = {
  1: { name: "limits", type: "map", value: "quantity" },
  2: { name: "requests", type: "map", value: "quantity" }
}

const seccompProfile: Message = { 1: str("type", always), 2: str("localhostProfile", ptr) }

const securityContext: Message = {
  1: msg("capabilities", { 1: strs("add"), 2: strs("drop") }, ptr),
  2: bool("privileged", ptr),
  4: int("runAsUser", ptr),
  5: bool("runAsNonRoot", ptr),
  6: bool("readOnlyRootFilesystem", ptr),
  7: bool("allowPrivilegeEscalation", ptr),
  8: int("runAsGroup", ptr),
  11: msg("seccompProfile", seccompProfile, ptr)
}

const podSecurityContext: Message = {
  2: int("runAsUser", ptr),
  3: bool("runAsNonRoot", ptr),
  5: int("fsGroup", ptr),
  6: int("runAsGroup", ptr),
  9: str("fsGroupChangePolicy", ptr),
  10: msg("seccompProfile", seccompProfile, ptr)
}

const container: Message = {
  1: str("name", always),
  2: str("image"),
  3: strs("command"),
  4: strs("args"),
  5: str("workingDir"),
  6: msgs("ports", { 1: str("name"), 2: int("hostPort"), 3: int("containerPort", always), 4: str("protocol"), 5: str("hostIP") }),
  7: msgs("env", envVar),
  8: msg("resources", resourceRequirements),
  9: msgs("volumeMounts", {
    1: str("name", always),
    2: bool("readOnly"),
    3: str("mountPath", always),
    4: str("subPath"),
    5: str("mountPropagation", ptr),
    6: str("subPathExpr"),
    7: str("recursiveReadOnly", ptr)
  }),
  13: str("terminationMessagePath"),
  14: str("imagePullPolicy"),
  15: msg("securityContext", securityContext, ptr),
  16: bool("stdin"),
  17: bool("stdinOnce"),
  18: bool("tty"),
  20: str("terminationMessagePolicy")
}

const keyToPath: Message = { 1: str("key", always), 2: str("path", always), 3: int("mode", ptr) }

const volume: Message = {
  1: str("name", always),
  2: inline({
    1: msg("hostPath", { 1: str("path", always), 2: str("type", ptr) }, ptr),
    2: msg("emptyDir", { 1: str("medium"), 2: { name: "sizeLimit", type: "quantity", pointer: true } }, ptr),
    6: msg("secret", { 1: str("secretName"), 2: msgs("items", keyToPath), 3: int("defaultMode", ptr), 4: bool("optional", ptr) }, ptr),
    10: msg("persistentVolumeClaim", { 1: str("claimName", always), 2: bool("readOnly") }, ptr),
    19: msg("configMap", { 1: inline(localObjectReference), 2: msgs("items", keyToPath), 3: int("defaultMode", ptr), 4: bool("optional", ptr) }, ptr)
  })
}

const podSpec: Message = {
  1: msgs("volumes", volume),
  2: msgs("containers", container, always),
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
  14: msg("securityContext", podSecurityContext, ptr),
  15: msgs("imagePullSecrets", localObjectReference),
  16: str("hostname"),
  17: str("subdomain"),
  19: str("schedulerName"),
  20: msgs("initContainers", container),
  21: bool("automountServiceAccountToken", ptr),
  22: msgs("tolerations", { 1: str("key"), 2: str("operator"), 3: str("value"), 4: str("effect"), 5: int("tolerationSeconds", ptr) }),
  24: str("priorityClassName"),
  25: int("priority", ptr),
  30: bool("enableServiceLinks", ptr),
  31: str("preemptionPolicy", ptr)
}

const podTemplateSpec: Message = object({ 2: msg("spec", podSpec) })

// core/v1: services and quotas

const service: Message = object({
  2: msg("spec", {
    1: msgs("ports", {
      1: str("name"),
      2: str("protocol"),
      3: int("port", always),
      4: { name: "targetPort", type: "intOrString" },
      5: int("nodePort"),
      6: str("appProtocol", ptr)
    }),
    2: { name: "selector", type: "map", value: "string" },
    3: str("clusterIP"),
    4: str("type"),
    5: strs("externalIPs"),
    7: str("sessionAffinity"),
    8: str("loadBalancerIP"),
    9: strs("loadBalancerSourceRanges"),
    10: str("externalName"),
    11: str("externalTrafficPolicy"),
    12: int("healthCheckNodePort"),
    13: bool("publishNotReadyAddresses"),
    17: str("ipFamilyPolicy", ptr),
    18: strs("clusterIPs"),
    19: strs("ipFamilies"),
    20: bool("allocateLoadBalancerNodePorts", ptr),
    21: str("loadBalancerClass", ptr),
    22: str("internalTrafficPolicy", ptr),
    23: str("trafficDistribution", ptr)
  }),
  3: msg("status", { 1: msg("loadBalancer", { 1: msgs("ingress", { 1: str("ip"), 2: str("hostname"), 3: str("ipMode", ptr) }) }) })
})

const resourceList = (name: string): Field => ({ name, type: "map", value: "quantity" })

const resourceQuota: Message = object({
  2: msg("spec", {
    1: resourceList("hard"),
    2: strs("scopes"),
    3: msg("scopeSelector", { 1: msgs("matchExpressions", { 1: str("scopeName", always), 2: str("operator", always), 3: strs("values") }) }, ptr)
  }),
  3: msg("status", { 1: resourceList("hard"), 2: resourceList("used") })
})

// apps/v1

const deployment: Message = object({
  2: msg("spec", {
    1: int("replicas", ptr),
    2: msg("selector", labelSelector, nullable),
    3: msg("template", podTemplateSpec),
    4: msg("strategy", {
      1: str("type"),
      2: msg("rollingUpdate", {
        1: { name: "maxUnavailable", type: "intOrString", pointer: true },
        2: { name: "maxSurge", type: "intOrString", pointer: true }
      }, ptr)
    }),
    5: int("minReadySeconds"),
    6: int("revisionHistoryLimit", ptr),
    7: bool("paused"),
    9: int("progressDeadlineSeconds", ptr)
  }),
  3: msg("status", {
    1: int("observedGeneration"),
    2: int("replicas"),
    3: int("updatedReplicas"),
    4: int("availableReplicas"),
    5: int("unavailableReplicas"),
    7: int("readyReplicas"),
    8: int("collisionCount", ptr)
  })
})

// batch/v1

const jobSpec: Message = {
  1: int("parallelism", ptr),
  2: int("completions", ptr),
  3: int("activeDeadlineSeconds", ptr),
  4: msg("selector", labelSelector, ptr),
  5: bool("manualSelector", ptr),
  6: msg("template", podTemplateSpec),
  7: int("backoffLimit", ptr),
  8: int("ttlSecondsAfterFinished", ptr),
  9: str("completionMode", ptr),
  10: bool("suspend", ptr),
  12: int("backoffLimitPerIndex", ptr),
  13: int("maxFailedIndexes", ptr),
  14: str("podReplacementPolicy", ptr),
  15: str("managedBy", ptr)
}

const objectReference: Message = Object.fromEntries(
  ["kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"].map((name, i) => [i + 1, str(name)])
)

const job: Message = object({
  2: msg("spec", jobSpec),
  3: msg("status", {
    2: { name: "startTime", type: "time", pointer: true },
    3: { name: "completionTime", type: "time", pointer: true },
    4: int("active"),
    5: int("succeeded"),
    6: int("failed"),
    7: str("completedIndexes"),
    9: int("ready", ptr),
    10: str("failedIndexes", ptr),
    11: int("terminating", ptr)
  })
})

const cronJob: Message = object({
  2: msg("spec", {
    1: str("schedule", always),
    2: int("startingDeadlineSeconds", ptr),
    3: str("concurrencyPolicy"),
    4: bool("suspend", ptr),
    5: msg("jobTemplate", object({ 2: msg("spec", jobSpec) })),
    6: int("successfulJobsHistoryLimit", ptr),
    7: int("failedJobsHistoryLimit", ptr),
    8: str("timeZone", ptr)
  }),
  3: msg("status", {
    1: msgs("active", objectReference),
    4: { name: "lastScheduleTime", type: "time", pointer: true },
    5: { name: "lastSuccessfulTime", type: "time", pointer: true }
  })
})

// rbac.authorization.k8s.io/v1

const policyRule: Message = {
  1: strs("verbs", always),
  2: strs("apiGroups"),
  3: strs("resources"),
  4: strs("resourceNames"),
  5: strs("nonResourceURLs")
}

const binding: Message = object({
  2: msgs("subjects", { 1: str("kind", always), 2: str("apiGroup"), 3: str("name", always), 4: str("namespace") }),
  3: msg("roleRef", { 1: str("apiGroup", always), 2: str("kind", always), 3: str("name", always) })
})

// networking.k8s.io/v1

const ingressBackend: Message = {
  3: msg("resource", { 1: str("apiGroup", nullable), 2: str("kind", always), 3: str("name", always) }, ptr),
  4: msg("service", { 1: str("name", always), 2: msg("port", { 1: str("name"), 2: int("number") }) }, ptr)
}

const ingress: Message = object({
  2: msg("spec", {
    1: msg("defaultBackend", ingressBackend, ptr),
    2: msgs("tls", { 1: strs("hosts"), 2: str("secretName") }),
    3: msgs("rules", {
      1: str("host"),
      2: inline({
        1: msg("http", {
          1: msgs("paths", { 1: str("path"), 2: msg("backend", ingressBackend), 3: str("pathType", nullable) }, always)
        }, ptr)
      })
    }),
    4: str("ingressClassName", ptr)
  }),
  3: msg("status", {
    1: msg("loadBalancer", {
      1: msgs("ingress", {
        1: str("ip"),
        2: str("hostname"),
        4: msgs("ports", { 1: int("port", always), 2: str("protocol", always), 3: str("error", ptr) })
      })
    })
  })
})

// autoscaling/v1, which `kubectl autoscale` sends

const horizontalPodAutoscaler: Message = object({
  2: msg("spec", {
    1: msg("scaleTargetRef", { 1: str("kind", always), 2: str("name", always), 3: str("apiVersion") }, always),
    2: int("minReplicas", ptr),
    3: int("maxReplicas", always),
    4: int("targetCPUUtilizationPercentage", ptr)
  }),
  3: msg("status", {
    1: int("observedGeneration", ptr),
    2: { name: "lastScaleTime", type: "time", pointer: true },
    3: int("currentReplicas", always),
    4: int("desiredReplicas", always),
    5: int("currentCPUUtilizationPercentage", ptr)
  })
})

// policy/v1 and scheduling.k8s.io/v1

const podDisruptionBudget: Message = object({
  2: msg("spec", {
    1: { name: "minAvailable", type: "intOrString", pointer: true },
    2: msg("selector", labelSelector, ptr),
    3: { name: "maxUnavailable", type: "intOrString", pointer: true },
    4: str("unhealthyPodEvictionPolicy", ptr)
  }),
  3: msg("status", {
    1: int("observedGeneration"),
    2: { name: "disruptedPods", type: "map", value: "time" },
    3: int("disruptionsAllowed", always),
    4: int("currentHealthy", always),
    5: int("desiredHealthy", always),
    6: int("expectedPods", always)
  })
})

const priorityClass: Message = object({
  2: int("value", always),
  3: bool("globalDefault"),
  4: str("description"),
  5: str("preemptionPolicy", ptr)
})

/**
 * meta/v1 DeleteOptions, which client-go sends in the group version of what it deletes (and inside
 * an Eviction): any `<apiVersion>/DeleteOptions` body is decoded with it.
 *
 * @example
 * import * as ProtobufKinds from "./ProtobufKinds.ts"
 * ProtobufKinds.deleteOptions[1]?.name // "gracePeriodSeconds"
 */
export const deleteOptions: Message = {
  1: int("gracePeriodSeconds", ptr),
  2: msg("preconditions", { 1: str("uid", ptr), 2: str("resourceVersion", ptr) }, ptr),
  3: bool("orphanDependents", ptr),
  4: str("propagationPolicy", ptr),
  5: strs("dryRun"),
  6: bool("ignoreStoreReadErrorWithClusterBreakingPotential", ptr)
}

/**
 * The messages by `<apiVersion>/<kind>`; a field number a message does not list is refused.
 *
 * @example
 * import * as ProtobufKinds from "./ProtobufKinds.ts"
 * Object.keys(ProtobufKinds.kinds).includes("apps/v1/Deployment") // true
 */
export const kinds: Readonly<Record<string, Message>> = {
  // kubectl debug node/<name> and --copy-to.
  // (Go writes a new Pod's empty status too; the server drops it on create.)
  "v1/Pod": object({
    2: msg("spec", podSpec),
    3: msg("status", {
      1: str("phase"),
      3: str("message"),
      4: str("reason"),
      5: str("hostIP"),
      6: str("podIP"),
      7: { name: "startTime", type: "time", pointer: true },
      9: str("qosClass"),
      11: str("nominatedNodeName"),
      14: str("resize")
    })
  }),
  "v1/Namespace": object({ 2: msg("spec", { 1: strs("finalizers") }), 3: msg("status", { 1: str("phase") }) }),
  "v1/ConfigMap": object({
    2: { name: "data", type: "map", value: "string" },
    3: { name: "binaryData", type: "map", value: "bytes" },
    4: bool("immutable", ptr)
  }),
  "v1/Secret": object({
    2: { name: "data", type: "map", value: "bytes" },
    3: str("type"),
    4: { name: "stringData", type: "map", value: "string" },
    5: bool("immutable", ptr)
  }),
  "v1/ServiceAccount": object({
    2: msgs("secrets", objectReference),
    3: msgs("imagePullSecrets", localObjectReference),
    4: bool("automountServiceAccountToken", ptr)
  }),
  "v1/Service": service,
  "v1/ResourceQuota": resourceQuota,
  "apps/v1/Deployment": deployment,
  "batch/v1/Job": job,
  "batch/v1/CronJob": cronJob,
  "rbac.authorization.k8s.io/v1/Role": object({ 2: msgs("rules", policyRule, always) }),
  "rbac.authorization.k8s.io/v1/ClusterRole": object({
    2: msgs("rules", policyRule, always),
    3: msg("aggregationRule", { 1: msgs("clusterRoleSelectors", labelSelector) }, ptr)
  }),
  "rbac.authorization.k8s.io/v1/RoleBinding": binding,
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": binding,
  "networking.k8s.io/v1/Ingress": ingress,
  "autoscaling/v1/HorizontalPodAutoscaler": horizontalPodAutoscaler,
  "policy/v1/PodDisruptionBudget": podDisruptionBudget,
  "policy/v1/Eviction": object({ 2: msg("deleteOptions", deleteOptions, ptr) }),
  "scheduling.k8s.io/v1/PriorityClass": priorityClass
}
