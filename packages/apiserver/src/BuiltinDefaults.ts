/**
 * What kube-apiserver 1.32's defaulters set on the built-in kinds when a write is decoded, and the
 * side effects of a create (a Service's cluster IP, a Secret's `stringData` folded into `data`),
 * keyed by `group/Kind` ("" for the core group). Kinds with many defaults have their own module.
 */
import * as AdmissionDefaults from "./AdmissionDefaults.ts"
import * as ApiServiceValidation from "./ApiServiceValidation.ts"
import * as PodDefaults from "./PodDefaults.ts"
import * as ServiceDefaults from "./ServiceDefaults.ts"
import * as WorkloadDefaults from "./WorkloadDefaults.ts"
import { KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject

/** Defaults of one kind: the object as written (and the stored one on update) to the object to admit. */
export type Defaulter = (object: Json, old: Json | undefined) => Json

// `stringData` is write-only: it is folded into `data` (winning over it) and never stored.
const secret: Defaulter = (object) => {
  const { stringData, ...rest } = object
  const encoded = Object.entries(KubeObject.record(stringData)).map(([k, v]) => [k, Buffer.from(String(v), "utf8").toString("base64")])
  const data = encoded.length === 0 ? rest.data : { ...KubeObject.record(rest.data), ...Object.fromEntries(encoded) }
  return { ...rest, type: rest.type ?? "Opaque", ...(data === undefined ? {} : { data }) }
}

const namespace: Defaulter = (object) => {
  const m = KubeObject.meta(object)
  return KubeObject.withMeta(object, { labels: { ...m.labels, "kubernetes.io/metadata.name": m.name } })
}

const withSpec = (fill: (spec: Json) => Json): Defaulter => (object) => ({ ...object, spec: fill(KubeObject.record(object.spec)) })

const pendingOnCreate = (fill: (spec: Json) => Json): Defaulter => (object, old) => ({
  ...object,
  spec: fill(KubeObject.record(object.spec)),
  ...(old === undefined ? { status: { phase: "Pending", ...KubeObject.record(object.status) } } : {})
})

const claim = pendingOnCreate((spec) => ({ volumeMode: "Filesystem", ...spec }))
const volume = pendingOnCreate((spec) => ({ persistentVolumeReclaimPolicy: "Retain", volumeMode: "Filesystem", ...spec }))

const tcpPorts = (holder: Json, extra: Json = {}): Json =>
  Array.isArray(holder.ports) ? { ...holder, ports: KubeObject.records(holder.ports).map((p) => ({ ...extra, protocol: "TCP", ...p })) } : holder

// Any policy implies Ingress; one with egress rules also Egress.
const networkPolicy = withSpec((spec) => ({
  ...spec,
  policyTypes: Array.isArray(spec.policyTypes) && spec.policyTypes.length > 0
    ? spec.policyTypes
    : ["Ingress", ...(KubeObject.records(spec.egress).length > 0 ? ["Egress"] : [])],
  ...(Array.isArray(spec.ingress) ? { ingress: KubeObject.records(spec.ingress).map((r) => tcpPorts(r)) } : {}),
  ...(Array.isArray(spec.egress) ? { egress: KubeObject.records(spec.egress).map((r) => tcpPorts(r)) } : {})
}))

const endpoints: Defaulter = (object) =>
  Array.isArray(object.subsets) ? { ...object, subsets: KubeObject.records(object.subsets).map((s) => tcpPorts(s)) } : object

const endpointSlice: Defaulter = (object) => tcpPorts(object, { name: "" })

const binding: Defaulter = (object) => ({
  ...object,
  ...(KubeObject.isObject(object.roleRef) ? { roleRef: { ...object.roleRef, apiGroup: object.roleRef.apiGroup || "rbac.authorization.k8s.io" } } : {}),
  ...(Array.isArray(object.subjects)
    ? {
      subjects: KubeObject.records(object.subjects).map((s) => ({
        ...(s.kind === "User" || s.kind === "Group" ? { apiGroup: "rbac.authorization.k8s.io" } : {}),
        ...s
      }))
    }
    : {})
})

const scaleUp = { stabilizationWindowSeconds: 0, selectPolicy: "Max", policies: [{ type: "Pods", value: 4, periodSeconds: 15 }, { type: "Percent", value: 100, periodSeconds: 15 }] }
const scaleDown = { selectPolicy: "Max", policies: [{ type: "Percent", value: 100, periodSeconds: 15 }] }
const cpu80 = [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } }]

// autoscaling/v1 only defaults minReplicas; v2 also a CPU target and, given a behavior, its rules.
const autoscaler: Defaulter = (object) => {
  const spec: Json = { minReplicas: 1, ...KubeObject.record(object.spec) }
  if (object.apiVersion === "autoscaling/v1") return { ...object, spec }
  const behavior = KubeObject.isObject(spec.behavior)
    ? { behavior: { ...spec.behavior, scaleUp: { ...scaleUp, ...KubeObject.record(spec.behavior.scaleUp) }, scaleDown: { ...scaleDown, ...KubeObject.record(spec.behavior.scaleDown) } } }
    : {}
  return { ...object, spec: { ...spec, metrics: KubeObject.records(spec.metrics).length > 0 ? spec.metrics : cpu80, ...behavior } }
}

const priorityClass: Defaulter = (object) => ({ preemptionPolicy: "PreemptLowerPriority", ...object })

// Fields Go always writes (no omitempty, or a struct): what a core/v1 Event that leaves them out is
// answered with.
const event: Defaulter = (object) => ({
  source: {},
  firstTimestamp: null,
  lastTimestamp: null,
  eventTime: null,
  reportingComponent: "",
  reportingInstance: "",
  ...object
})

// The same fields under the new API's names (the rest are required there).
const eventsV1Event: Defaulter = (object) => ({ deprecatedSource: {}, deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null, ...object })

const flowSchema = withSpec((spec) => ({ matchingPrecedence: 1000, ...spec }))

// A limited level shares 30 and lends none unless it says; its queues are 64 of 50, dealt 8 at a time.
const priorityLevel = withSpec((spec) => {
  if (spec.type === "Exempt") return { ...spec, exempt: { nominalConcurrencyShares: 0, lendablePercent: 0, ...KubeObject.record(spec.exempt) } }
  if (spec.type !== "Limited") return spec
  const limited = KubeObject.record(spec.limited)
  const response = KubeObject.record(limited.limitResponse)
  return {
    ...spec,
    limited: {
      nominalConcurrencyShares: 30,
      lendablePercent: 0,
      ...limited,
      limitResponse: response.type === "Queue"
        ? { ...response, queuing: { queues: 64, handSize: 8, queueLengthLimit: 50, ...KubeObject.record(response.queuing) } }
        : response
    }
  }
})

const csiDriver = withSpec((spec) => ({
  attachRequired: true,
  podInfoOnMount: false,
  storageCapacity: false,
  fsGroupPolicy: "ReadWriteOnceWithFSType",
  requiresRepublish: false,
  seLinuxMount: false,
  ...spec,
  volumeLifecycleModes: Array.isArray(spec.volumeLifecycleModes) && spec.volumeLifecycleModes.length > 0 ? spec.volumeLifecycleModes : ["Persistent"]
}))

// A container limit range item's defaults: limit from max, request from the limit, else from min.
const limitItem = (item: Json): Json => {
  if (item.type !== "Container") return item
  const fill = (into: Json, from: Json) => ({ ...from, ...into })
  const limit = fill(KubeObject.record(item.default), KubeObject.record(item.max))
  const request = fill(fill(KubeObject.record(item.defaultRequest), limit), KubeObject.record(item.min))
  const present = (m: Json) => (Object.keys(m).length === 0 ? undefined : m)
  return Object.fromEntries(Object.entries({ ...item, default: present(limit), defaultRequest: present(request) }).filter(([, v]) => v !== undefined))
}

const limitRange = withSpec((spec) => (Array.isArray(spec.limits) ? { ...spec, limits: KubeObject.records(spec.limits).map(limitItem) } : spec))

const byGroupKind: Readonly<Record<string, Defaulter>> = {
  "/Secret": secret,
  "/Namespace": namespace,
  "/Service": ServiceDefaults.service,
  "/Pod": PodDefaults.pod,
  "/PodTemplate": WorkloadDefaults.podTemplate,
  "/ReplicationController": WorkloadDefaults.replicationController,
  "/PersistentVolumeClaim": claim,
  "/PersistentVolume": volume,
  "/Endpoints": endpoints,
  "/LimitRange": limitRange,
  "/Event": event,
  "events.k8s.io/Event": eventsV1Event,
  "apps/Deployment": WorkloadDefaults.deployment,
  "apps/StatefulSet": WorkloadDefaults.statefulSet,
  "apps/DaemonSet": WorkloadDefaults.daemonSet,
  "apps/ReplicaSet": WorkloadDefaults.replicaSet,
  "batch/Job": WorkloadDefaults.job,
  "batch/CronJob": WorkloadDefaults.cronJob,
  "discovery.k8s.io/EndpointSlice": endpointSlice,
  "networking.k8s.io/NetworkPolicy": networkPolicy,
  "rbac.authorization.k8s.io/RoleBinding": binding,
  "rbac.authorization.k8s.io/ClusterRoleBinding": binding,
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration": AdmissionDefaults.webhooks(false),
  "admissionregistration.k8s.io/MutatingWebhookConfiguration": AdmissionDefaults.webhooks(true),
  "admissionregistration.k8s.io/ValidatingAdmissionPolicy": AdmissionDefaults.policy,
  "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": AdmissionDefaults.binding,
  "autoscaling/HorizontalPodAutoscaler": autoscaler,
  "scheduling.k8s.io/PriorityClass": priorityClass,
  "storage.k8s.io/CSIDriver": csiDriver,
  "flowcontrol.apiserver.k8s.io/FlowSchema": flowSchema,
  "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration": priorityLevel,
  "apiregistration.k8s.io/APIService": ApiServiceValidation.defaults
}

/**
 * The defaulter of a built-in kind, or undefined when it has none.
 *
 * @example
 * import * as BuiltinDefaults from "./BuiltinDefaults.ts"
 * BuiltinDefaults.lookup("", "ConfigMap") // undefined
 * BuiltinDefaults.lookup("", "Secret")!({ stringData: { a: "b" } }, undefined).data // { a: "Yg==" }
 */
export const lookup = (group: string, kind: string): Defaulter | undefined => byGroupKind[`${group}/${kind}`]
