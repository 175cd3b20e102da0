/**
 * The defaults 1.32 gives a pod spec wherever one appears (a Pod, and the template of every
 * workload), what its admission plugins add to a new Pod (service account, priority, the
 * not-ready and unreachable tolerations), and the status a new Pod starts with.
 */
import { KubeObject } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject

/**
 * `Always` for an image without a tag or with `:latest`, `IfNotPresent` otherwise (a digest counts as a tag).
 *
 * @example
 * import * as PodDefaults from "./PodDefaults.ts"
 * PodDefaults.imagePullPolicy("nginx") // "Always"
 * PodDefaults.imagePullPolicy("registry:5000/app:v1") // "IfNotPresent"
 */
export const imagePullPolicy = (image: unknown): string => {
  const text = String(image ?? "")
  if (text.includes("@")) return "IfNotPresent"
  const lastSegment = text.slice(text.lastIndexOf("/") + 1)
  const colon = lastSegment.lastIndexOf(":")
  return colon === -1 || lastSegment.slice(colon + 1) === "latest" ? "Always" : "IfNotPresent"
}

// Wherever an HTTPGetAction appears (probes, lifecycle hooks).
const withHttpGet = (handler: Json): Json =>
  KubeObject.isObject(handler.httpGet) ? { ...handler, httpGet: { path: "/", scheme: "HTTP", ...handler.httpGet } } : handler

const probe = (u: unknown): Json | undefined => {
  if (!KubeObject.isObject(u)) return undefined
  return withHttpGet({ timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, ...u })
}

const lifecycle = (u: unknown): Json | undefined => {
  if (!KubeObject.isObject(u)) return undefined
  const hooks = (["postStart", "preStop"] as const).flatMap((h) => (KubeObject.isObject(u[h]) ? [[h, withHttpGet(u[h])]] : []))
  return { ...u, ...Object.fromEntries(hooks) }
}

const fieldRef = (holder: Json): Json =>
  KubeObject.isObject(holder.fieldRef) ? { ...holder, fieldRef: { apiVersion: "v1", ...holder.fieldRef } } : holder

const envVar = (e: Json): Json => (KubeObject.isObject(e.valueFrom) ? { ...e, valueFrom: fieldRef(e.valueFrom) } : e)

const container = (c: Json): Json => {
  const probes = Object.fromEntries(
    (["livenessProbe", "readinessProbe", "startupProbe"] as const).flatMap((name) => {
      const defaulted = probe(c[name])
      return defaulted === undefined ? [] : [[name, defaulted]]
    })
  )
  return {
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: imagePullPolicy(c.image),
    resources: {},
    ...c,
    ...probes,
    ...(KubeObject.isObject(c.lifecycle) ? { lifecycle: lifecycle(c.lifecycle) } : {}),
    ...(Array.isArray(c.ports) ? { ports: KubeObject.records(c.ports).map((p) => ({ protocol: "TCP", ...p })) } : {}),
    ...(Array.isArray(c.env) ? { env: KubeObject.records(c.env).map(envVar) } : {})
  }
}

const withMode = (source: unknown): Json => ({ defaultMode: 420, ...KubeObject.record(source) })

const downwardAPI = (source: unknown): Json => {
  const s = KubeObject.record(source)
  return Array.isArray(s.items) ? { ...s, items: KubeObject.records(s.items).map(fieldRef) } : s
}

const projection = (p: Json): Json => {
  if (KubeObject.isObject(p.downwardAPI)) return { ...p, downwardAPI: downwardAPI(p.downwardAPI) }
  if (KubeObject.isObject(p.serviceAccountToken)) return { ...p, serviceAccountToken: { expirationSeconds: 3600, ...p.serviceAccountToken } }
  return p
}

/** The volume sources of a pod volume, in the order 1.32's validation counts them. */
export const volumeSources = ["hostPath", "emptyDir", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs", "iscsi",
  "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "quobyte", "cinder", "cephfs", "downwardAPI", "fc", "azureFile", "configMap", "flexVolume",
  "vsphereVolume", "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "projected", "storageos", "csi",
  "ephemeral", "image"]

const volume = (v: Json): Json => {
  if (KubeObject.isObject(v.configMap)) return { ...v, configMap: withMode(v.configMap) }
  if (KubeObject.isObject(v.secret)) return { ...v, secret: withMode(v.secret) }
  if (KubeObject.isObject(v.projected)) {
    const p = withMode(v.projected)
    return { ...v, projected: Array.isArray(p.sources) ? { ...p, sources: KubeObject.records(p.sources).map(projection) } : p }
  }
  if (KubeObject.isObject(v.downwardAPI)) return { ...v, downwardAPI: downwardAPI(withMode(v.downwardAPI)) }
  if (KubeObject.isObject(v.hostPath)) return { ...v, hostPath: { type: "", ...v.hostPath } }
  if (KubeObject.isObject(v.ephemeral)) {
    const template = KubeObject.record(v.ephemeral.volumeClaimTemplate)
    return { ...v, ephemeral: { ...v.ephemeral, volumeClaimTemplate: { ...template, spec: { volumeMode: "Filesystem", ...KubeObject.record(template.spec) } } } }
  }
  // A volume without a source is an emptyDir.
  return volumeSources.some((s) => KubeObject.isObject(v[s])) ? v : { ...v, emptyDir: {} }
}

// The v1 conversion mirrors serviceAccountName into the deprecated serviceAccount, and reads it back.
const serviceAccount = (podSpec: Json): Json => {
  const name = podSpec.serviceAccountName ?? podSpec.serviceAccount
  return name === undefined || name === "" ? podSpec : { ...podSpec, serviceAccountName: name, serviceAccount: name }
}

/**
 * A pod spec with 1.32's defaults: restartPolicy, DNS and scheduler, grace period, security
 * context, and per container the pull policy, termination message, ports' protocol and probes.
 *
 * @example
 * import * as PodDefaults from "./PodDefaults.ts"
 * PodDefaults.spec({ containers: [{ name: "app", image: "nginx:1.27" }] }).restartPolicy // "Always"
 */
export const spec = (podSpec: Json): Json => ({
  restartPolicy: "Always",
  dnsPolicy: "ClusterFirst",
  schedulerName: "default-scheduler",
  terminationGracePeriodSeconds: 30,
  securityContext: {},
  ...serviceAccount(podSpec),
  ...(Array.isArray(podSpec.containers) ? { containers: KubeObject.records(podSpec.containers).map(container) } : {}),
  ...(Array.isArray(podSpec.initContainers) ? { initContainers: KubeObject.records(podSpec.initContainers).map(container) } : {}),
  ...(Array.isArray(podSpec.ephemeralContainers) ? { ephemeralContainers: KubeObject.records(podSpec.ephemeralContainers).map(container) } : {}),
  ...(Array.isArray(podSpec.volumes) ? { volumes: KubeObject.records(podSpec.volumes).map(volume) } : {})
})

/**
 * A pod template (`{ metadata, spec }`) with its spec defaulted.
 *
 * @example
 * import * as PodDefaults from "./PodDefaults.ts"
 * PodDefaults.template({ spec: { containers: [] } }).spec // { restartPolicy: "Always", ... }
 */
export const template = (podTemplate: unknown): Json => {
  const t = KubeObject.record(podTemplate)
  return { ...t, spec: spec(KubeObject.record(t.spec)) }
}

const notReadyTolerations: ReadonlyArray<Json> = ["not-ready", "unreachable"].map((condition) => ({
  key: `node.kubernetes.io/${condition}`,
  operator: "Exists",
  effect: "NoExecute",
  tolerationSeconds: 300
}))

const quantity = (u: unknown): boolean => u !== undefined && u !== null && String(u) !== ""

/**
 * The QoS class 1.32 computes for a pod spec: Guaranteed when every container's cpu and memory
 * limits are set and requests equal them, BestEffort with no requests or limits, else Burstable.
 *
 * @example
 * import * as PodDefaults from "./PodDefaults.ts"
 * PodDefaults.qosClass({ containers: [{ name: "a" }] }) // "BestEffort"
 */
export const qosClass = (podSpec: Json): string => {
  const all = [...KubeObject.records(podSpec.containers), ...KubeObject.records(podSpec.initContainers)].map((c) => KubeObject.record(c.resources))
  const any = all.some((r) => Object.values(KubeObject.record(r.requests)).some(quantity) || Object.values(KubeObject.record(r.limits)).some(quantity))
  if (!any) return "BestEffort"
  const guaranteed = all.every((r) => {
    const limits = KubeObject.record(r.limits)
    const requests = { ...limits, ...KubeObject.record(r.requests) }
    return ["cpu", "memory"].every((name) => quantity(limits[name]) && String(requests[name]) === String(limits[name]))
  })
  return guaranteed ? "Guaranteed" : "Burstable"
}

/**
 * A Pod as 1.32 admits it: spec defaults, service account and tolerations from the admission
 * plugins, `enableServiceLinks`, and on create `status: { phase: Pending, qosClass }` (its priority
 * is PriorityAdmission's, which reads the PriorityClasses).
 *
 * @example
 * import * as PodDefaults from "./PodDefaults.ts"
 * const pod = PodDefaults.pod({ spec: { containers: [{ name: "a", image: "nginx" }] } }, undefined)
 * pod.status // { phase: "Pending", qosClass: "BestEffort" }
 */
export const pod = (object: Json, old: Json | undefined): Json => {
  const given = KubeObject.record(object.spec)
  const tolerations = KubeObject.records(given.tolerations)
  const serviceAccount = String(given.serviceAccountName ?? given.serviceAccount ?? "default")
  const defaulted = spec({
    enableServiceLinks: true,
    ...given,
    serviceAccountName: serviceAccount,
    serviceAccount,
    tolerations: [...tolerations, ...notReadyTolerations.filter((t) => !tolerates(tolerations, t.key))],
    ...(Array.isArray(given.containers) ? { containers: KubeObject.records(given.containers).map((c) => podContainer(c, given.hostNetwork === true)) } : {}),
    ...(Array.isArray(given.initContainers) ? { initContainers: KubeObject.records(given.initContainers).map((c) => podContainer(c, given.hostNetwork === true)) } : {})
  })
  const status = old === undefined
    ? { phase: "Pending", qosClass: qosClass(defaulted), ...KubeObject.record(object.status) }
    : object.status
  return { ...object, spec: defaulted, ...(status === undefined ? {} : { status }) }
}

// DefaultTolerationSeconds adds a toleration unless one with that key (or no key) already
// tolerates NoExecute taints.
const tolerates = (tolerations: ReadonlyArray<Json>, key: unknown): boolean =>
  tolerations.some((t) => (t.key === key || t.key === undefined || t.key === "") && (t.effect === "NoExecute" || t.effect === undefined || t.effect === ""))

// Only Pods (not templates): requests default to limits, and host-network pods publish their
// container ports on the host.
const podContainer = (c: Json, hostNetwork: boolean): Json => {
  const resources = KubeObject.record(c.resources)
  const withRequests = KubeObject.isObject(resources.limits)
    ? { ...c, resources: { ...resources, requests: { ...resources.limits, ...KubeObject.record(resources.requests) } } }
    : c
  return hostNetwork && Array.isArray(c.ports)
    ? { ...withRequests, ports: KubeObject.records(c.ports).map((p) => ({ hostPort: p.containerPort, ...p })) }
    : withRequests
}
