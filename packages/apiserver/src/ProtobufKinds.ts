/**
 * The protobuf messages of the built-in kinds kubectl's generator commands send (`kubectl create
 * namespace|configmap|secret|serviceaccount|deployment|service|job|cronjob|role|clusterrole|
 * rolebinding|clusterrolebinding|ingress|poddisruptionbudget|priorityclass|quota` and `kubectl
 * autoscale`, the Pods of `kubectl debug`, the Jobs of `kubectl create job --from=cronjob`, and
 * the DeleteOptions and Evictions of `kubectl delete` and `drain`; pod templates with every field
 * 1.32 has), with Kubernetes' field numbers (generated.proto) and
 * the Go JSON tags that decide which zero values the JSON form keeps (`omitempty` or not, pointer or
 * not). Every field a message lists is decoded; a field it does not list makes the body refused,
 * so nothing a client sent is silently dropped.
 */
import type * as Protobuf from "./Protobuf.ts"
import * as ProtobufFields from "./ProtobufFields.ts"
import * as ProtobufPodSpec from "./ProtobufPodSpec.ts"

const { always, bool, inline, int, msg, msgs, nullable, ptr, str, strs } = ProtobufFields
const { labelSelector, objectMeta } = ProtobufFields
type Field = Protobuf.Field
type Message = Protobuf.Message

const object = (fields: Message): Message => ({ 1: msg("metadata", objectMeta), ...fields })

// core/v1: pod templates, every field 1.32 has

const podSpec = ProtobufPodSpec.podSpec
const localObjectReference: Message = { 1: str("name") }

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
