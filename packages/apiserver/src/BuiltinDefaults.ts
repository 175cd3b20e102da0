/**
 * What kube-apiserver 1.32's defaulters set on the built-in kinds when a write is decoded, and the
 * side effects of a create (a Service's cluster IP, a Secret's `stringData` folded into `data`),
 * keyed by `group/Kind` ("" for the core group).
 */
import { createHash } from "node:crypto"
import * as KubeObject from "./KubeObject.ts"
import * as PodDefaults from "./PodDefaults.ts"

type Json = KubeObject.KubeObject

/** Defaults of one kind: the object as written (and the stored one on update) to the object to admit. */
export type Defaulter = (object: Json, old: Json | undefined) => Json

const record = (u: unknown): Json => (KubeObject.isObject(u) ? u : {})
const list = (u: unknown): ReadonlyArray<Json> => (Array.isArray(u) ? u.map(record) : [])

// `stringData` is write-only: it is folded into `data` (winning over it) and never stored.
const secret: Defaulter = (object) => {
  const { stringData, ...rest } = object
  const encoded = Object.entries(record(stringData)).map(([k, v]) => [k, Buffer.from(String(v), "utf8").toString("base64")])
  const data = encoded.length === 0 ? rest.data : { ...record(rest.data), ...Object.fromEntries(encoded) }
  return { ...rest, type: rest.type ?? "Opaque", ...(data === undefined ? {} : { data }) }
}

const namespace: Defaulter = (object) => {
  const m = KubeObject.meta(object)
  return KubeObject.withMeta(object, { labels: { ...m.labels, "kubernetes.io/metadata.name": m.name } })
}

/** A stable pick in [0, size) from the object's identity, so a name keeps its address across restarts. */
const pick = (seed: string, size: number, attempt: number): number =>
  createHash("sha256").update(`${seed}#${attempt}`).digest().readUInt32BE(0) % size

// 10.96.0.0/12 without its network address and 10.96.0.1 (the `kubernetes` Service's address).
const clusterIP = (seed: string): string => {
  const offset = 2 + pick(seed, (1 << 20) - 3, 0)
  return `10.${96 + (offset >> 16)}.${(offset >> 8) & 255}.${offset & 255}`
}

const nodePort = (seed: string, index: number): number => 30000 + pick(seed, 2768, index)

const servicePorts = (spec: Json, oldSpec: Json, seed: string, withNodePorts: boolean) =>
  list(spec.ports).map((p, i) => {
    const kept = list(oldSpec.ports).find((o) => o.port === p.port && (o.protocol ?? "TCP") === (p.protocol ?? "TCP"))
    return {
      protocol: "TCP",
      targetPort: p.port,
      ...p,
      ...(withNodePorts && p.nodePort === undefined ? { nodePort: kept?.nodePort ?? nodePort(seed, i) } : {})
    }
  })

const service: Defaulter = (object, old) => {
  const spec = record(object.spec)
  const oldSpec = record(old?.spec)
  const type = String(spec.type ?? "ClusterIP")
  const m = KubeObject.meta(object)
  const seed = `${m.namespace}/${m.name}`
  const withNodePorts = type === "NodePort" || (type === "LoadBalancer" && spec.allocateLoadBalancerNodePorts !== false)
  const ports = Array.isArray(spec.ports) ? { ports: servicePorts(spec, oldSpec, seed, withNodePorts) } : {}
  const base = { ...spec, type, sessionAffinity: spec.sessionAffinity ?? "None", ...ports }
  if (type === "ExternalName") return { ...object, spec: base }
  const ip = spec.clusterIP ?? (Array.isArray(spec.clusterIPs) ? spec.clusterIPs[0] : undefined) ?? oldSpec.clusterIP ?? clusterIP(seed)
  const external = type === "NodePort" || type === "LoadBalancer"
  return {
    ...object,
    spec: {
      ...base,
      clusterIP: ip,
      clusterIPs: spec.clusterIPs ?? oldSpec.clusterIPs ?? [ip],
      ipFamilies: spec.ipFamilies ?? ["IPv4"],
      ipFamilyPolicy: spec.ipFamilyPolicy ?? "SingleStack",
      internalTrafficPolicy: spec.internalTrafficPolicy ?? "Cluster",
      ...(external ? { externalTrafficPolicy: spec.externalTrafficPolicy ?? "Cluster" } : {}),
      ...(type === "LoadBalancer" ? { allocateLoadBalancerNodePorts: spec.allocateLoadBalancerNodePorts ?? true } : {})
    },
    ...(old === undefined && object.status === undefined ? { status: { loadBalancer: {} } } : {})
  }
}

const withSpec = (fill: (spec: Json, object: Json) => Json): Defaulter => (object) => ({
  ...object,
  spec: fill(record(object.spec), object)
})

const deployment = withSpec((spec) => ({
  replicas: 1,
  revisionHistoryLimit: 10,
  progressDeadlineSeconds: 600,
  ...spec,
  strategy: spec.strategy === undefined || record(spec.strategy).type === undefined || record(spec.strategy).type === "RollingUpdate"
    ? { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%", ...record(record(spec.strategy).rollingUpdate) } }
    : spec.strategy,
  template: PodDefaults.template(spec.template)
}))

const statefulSet = withSpec((spec) => ({
  replicas: 1,
  podManagementPolicy: "OrderedReady",
  revisionHistoryLimit: 10,
  persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
  ...spec,
  updateStrategy: record(spec.updateStrategy).type === "OnDelete"
    ? spec.updateStrategy
    : { type: "RollingUpdate", rollingUpdate: { partition: 0, ...record(record(spec.updateStrategy).rollingUpdate) } },
  template: PodDefaults.template(spec.template)
}))

const daemonSet = withSpec((spec) => ({
  revisionHistoryLimit: 10,
  ...spec,
  updateStrategy: record(spec.updateStrategy).type === "OnDelete"
    ? spec.updateStrategy
    : { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: 0, ...record(record(spec.updateStrategy).rollingUpdate) } },
  template: PodDefaults.template(spec.template)
}))

const replicated = withSpec((spec) => ({ replicas: 1, ...spec, template: PodDefaults.template(spec.template) }))

// A Job selects its pods by its own uid unless the user opts into manualSelector.
const jobSpec = (spec: Json, uid: string | undefined, name: string | undefined): Json => {
  const manual = spec.manualSelector === true
  const template = PodDefaults.template(spec.template)
  const labels = manual || uid === undefined ? {} : {
    "batch.kubernetes.io/controller-uid": uid,
    "batch.kubernetes.io/job-name": name,
    "controller-uid": uid,
    "job-name": name
  }
  const parallelismSet = spec.parallelism !== undefined
  return {
    parallelism: 1,
    ...(spec.completions === undefined && !parallelismSet ? { completions: 1 } : {}),
    backoffLimit: 6,
    completionMode: "NonIndexed",
    suspend: false,
    podReplacementPolicy: "TerminatingOrFailed",
    ...spec,
    ...(manual || uid === undefined ? {} : { selector: spec.selector ?? { matchLabels: { "batch.kubernetes.io/controller-uid": uid } } }),
    template: KubeObject.withMeta(template, { labels: { ...KubeObject.meta(template).labels, ...labels } })
  }
}

const job = withSpec((spec, object) => jobSpec(spec, KubeObject.meta(object).uid, KubeObject.meta(object).name))

const cronJob = withSpec((spec) => {
  const jobTemplate = record(spec.jobTemplate)
  const jobTemplateSpec = record(jobTemplate.spec)
  return {
    concurrencyPolicy: "Allow",
    suspend: false,
    successfulJobsHistoryLimit: 3,
    failedJobsHistoryLimit: 1,
    ...spec,
    jobTemplate: {
      ...jobTemplate,
      spec: {
        backoffLimit: 6,
        completionMode: "NonIndexed",
        suspend: false,
        podReplacementPolicy: "TerminatingOrFailed",
        ...jobTemplateSpec,
        template: PodDefaults.template(jobTemplateSpec.template)
      }
    }
  }
})

const podTemplate: Defaulter = (object) => ({ ...object, template: PodDefaults.template(object.template) })

const pendingOnCreate = (fill: (spec: Json) => Json): Defaulter => (object, old) => ({
  ...object,
  spec: fill(record(object.spec)),
  ...(old === undefined ? { status: { phase: "Pending", ...record(object.status) } } : {})
})

const claim = pendingOnCreate((spec) => ({ volumeMode: "Filesystem", ...spec }))
const volume = pendingOnCreate((spec) => ({ persistentVolumeReclaimPolicy: "Retain", volumeMode: "Filesystem", ...spec }))

const networkPolicy = withSpec((spec) => ({
  ...spec,
  policyTypes: spec.policyTypes ?? ["Ingress", ...(spec.egress === undefined ? [] : ["Egress"])],
  ...(Array.isArray(spec.ingress)
    ? { ingress: list(spec.ingress).map((r) => ({ ...r, ...(Array.isArray(r.ports) ? { ports: list(r.ports).map((p) => ({ protocol: "TCP", ...p })) } : {}) })) }
    : {}),
  ...(Array.isArray(spec.egress)
    ? { egress: list(spec.egress).map((r) => ({ ...r, ...(Array.isArray(r.ports) ? { ports: list(r.ports).map((p) => ({ protocol: "TCP", ...p })) } : {}) })) }
    : {})
}))

const bindingSubjects: Defaulter = (object) => ({
  ...object,
  ...(Array.isArray(object.subjects)
    ? {
      subjects: list(object.subjects).map((s) => ({
        ...(s.kind === "User" || s.kind === "Group" ? { apiGroup: "rbac.authorization.k8s.io" } : {}),
        ...s
      }))
    }
    : {})
})

const webhooks = (mutating: boolean): Defaulter => (object) => ({
  ...object,
  ...(Array.isArray(object.webhooks)
    ? {
      webhooks: list(object.webhooks).map((w) => {
        const clientConfig = record(w.clientConfig)
        return {
          failurePolicy: "Fail",
          matchPolicy: "Equivalent",
          namespaceSelector: {},
          objectSelector: {},
          timeoutSeconds: 10,
          ...(mutating ? { reinvocationPolicy: "Never" } : {}),
          ...w,
          clientConfig: KubeObject.isObject(clientConfig.service)
            ? { ...clientConfig, service: { port: 443, ...clientConfig.service } }
            : clientConfig,
          ...(Array.isArray(w.rules) ? { rules: list(w.rules).map((r) => ({ scope: "*", ...r })) } : {})
        }
      })
    }
    : {})
})

const admissionPolicy = withSpec((spec) => ({
  failurePolicy: "Fail",
  ...spec,
  ...(KubeObject.isObject(spec.matchConstraints)
    ? { matchConstraints: { matchPolicy: "Equivalent", namespaceSelector: {}, objectSelector: {}, ...spec.matchConstraints } }
    : {})
}))

const autoscaler = withSpec((spec) => ({ minReplicas: 1, ...spec }))

const priorityClass: Defaulter = (object) => ({ preemptionPolicy: "PreemptLowerPriority", ...object })

const byGroupKind: Readonly<Record<string, Defaulter>> = {
  "/Secret": secret,
  "/Namespace": namespace,
  "/Service": service,
  "/Pod": PodDefaults.pod,
  "/PodTemplate": podTemplate,
  "/ReplicationController": replicated,
  "/PersistentVolumeClaim": claim,
  "/PersistentVolume": volume,
  "apps/Deployment": deployment,
  "apps/StatefulSet": statefulSet,
  "apps/DaemonSet": daemonSet,
  "apps/ReplicaSet": replicated,
  "batch/Job": job,
  "batch/CronJob": cronJob,
  "networking.k8s.io/NetworkPolicy": networkPolicy,
  "rbac.authorization.k8s.io/RoleBinding": bindingSubjects,
  "rbac.authorization.k8s.io/ClusterRoleBinding": bindingSubjects,
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration": webhooks(false),
  "admissionregistration.k8s.io/MutatingWebhookConfiguration": webhooks(true),
  "admissionregistration.k8s.io/ValidatingAdmissionPolicy": admissionPolicy,
  "autoscaling/HorizontalPodAutoscaler": autoscaler,
  "scheduling.k8s.io/PriorityClass": priorityClass
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
