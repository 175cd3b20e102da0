/**
 * The defaults 1.32 gives a pod spec wherever one appears (a Pod, and the template of every
 * workload), what its admission plugins add to a new Pod (service account, priority, the
 * not-ready and unreachable tolerations), and the status a new Pod starts with.
 */
import * as KubeObject from "./KubeObject.ts"

type Json = KubeObject.KubeObject

const record = (u: unknown): Json => (KubeObject.isObject(u) ? u : {})
const list = (u: unknown): ReadonlyArray<Json> => (Array.isArray(u) ? u.map(record) : [])

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

const probe = (u: unknown): Json | undefined => {
  if (!KubeObject.isObject(u)) return undefined
  const httpGet = KubeObject.isObject(u.httpGet) ? { httpGet: { scheme: "HTTP", ...u.httpGet } } : {}
  return { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, ...u, ...httpGet }
}

const envVar = (e: Json): Json => {
  const valueFrom = record(e.valueFrom)
  return KubeObject.isObject(valueFrom.fieldRef)
    ? { ...e, valueFrom: { ...valueFrom, fieldRef: { apiVersion: "v1", ...valueFrom.fieldRef } } }
    : e
}

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
    ...(Array.isArray(c.ports) ? { ports: list(c.ports).map((p) => ({ protocol: "TCP", ...p })) } : {}),
    ...(Array.isArray(c.env) ? { env: list(c.env).map(envVar) } : {})
  }
}

const withMode = (source: unknown): Json => ({ defaultMode: 420, ...record(source) })

const volume = (v: Json): Json => {
  if (KubeObject.isObject(v.configMap)) return { ...v, configMap: withMode(v.configMap) }
  if (KubeObject.isObject(v.secret)) return { ...v, secret: withMode(v.secret) }
  if (KubeObject.isObject(v.projected)) return { ...v, projected: withMode(v.projected) }
  if (KubeObject.isObject(v.downwardAPI)) return { ...v, downwardAPI: withMode(v.downwardAPI) }
  return v
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
  ...podSpec,
  ...(Array.isArray(podSpec.containers) ? { containers: list(podSpec.containers).map(container) } : {}),
  ...(Array.isArray(podSpec.initContainers) ? { initContainers: list(podSpec.initContainers).map(container) } : {}),
  ...(Array.isArray(podSpec.volumes) ? { volumes: list(podSpec.volumes).map(volume) } : {})
})

/**
 * A pod template (`{ metadata, spec }`) with its spec defaulted.
 *
 * @example
 * import * as PodDefaults from "./PodDefaults.ts"
 * PodDefaults.template({ spec: { containers: [] } }).spec // { restartPolicy: "Always", ... }
 */
export const template = (podTemplate: unknown): Json => {
  const t = record(podTemplate)
  return { ...t, spec: spec(record(t.spec)) }
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
  const all = [...list(podSpec.containers), ...list(podSpec.initContainers)].map((c) => record(c.resources))
  const any = all.some((r) => Object.values(record(r.requests)).some(quantity) || Object.values(record(r.limits)).some(quantity))
  if (!any) return "BestEffort"
  const guaranteed = all.every((r) => {
    const limits = record(r.limits)
    const requests = { ...limits, ...record(r.requests) }
    return ["cpu", "memory"].every((name) => quantity(limits[name]) && String(requests[name]) === String(limits[name]))
  })
  return guaranteed ? "Guaranteed" : "Burstable"
}

/**
 * A Pod as 1.32 admits it: spec defaults, service account, priority and tolerations from the
 * admission plugins, `enableServiceLinks`, and on create `status: { phase: Pending, qosClass }`.
 *
 * @example
 * import * as PodDefaults from "./PodDefaults.ts"
 * const pod = PodDefaults.pod({ spec: { containers: [{ name: "a", image: "nginx" }] } }, undefined)
 * pod.status // { phase: "Pending", qosClass: "BestEffort" }
 */
export const pod = (object: Json, old: Json | undefined): Json => {
  const given = record(object.spec)
  const tolerations = list(given.tolerations)
  const missing = notReadyTolerations.filter((t) => !tolerations.some((g) => g.key === t.key))
  const serviceAccount = String(given.serviceAccountName ?? given.serviceAccount ?? "default")
  const defaulted = spec({
    enableServiceLinks: true,
    priority: 0,
    preemptionPolicy: "PreemptLowerPriority",
    ...given,
    serviceAccountName: serviceAccount,
    serviceAccount,
    tolerations: [...tolerations, ...missing]
  })
  const status = old === undefined
    ? { phase: "Pending", qosClass: qosClass(defaulted), ...record(object.status) }
    : object.status
  return { ...object, spec: defaulted, ...(status === undefined ? {} : { status }) }
}
