/**
 * What objects count against a ResourceQuota, as kube 1.32's quota evaluators count them, and the
 * admission check of a creation against the quotas of its namespace:
 *
 * - every object counts 1 towards `count/<resource>[.<group>]`, and pods, services, secrets,
 *   configmaps, persistentvolumeclaims, replicationcontrollers and resourcequotas towards their
 *   own name too;
 * - a pod that has not ended (its phase not Succeeded or Failed) counts its requests (the sum of
 *   its containers' and sidecars', or an init container's when larger, plus its overhead) towards
 *   `requests.<name>` (and `cpu`, `memory`, `ephemeral-storage`), its limits towards
 *   `limits.<name>`; a pod that has ended counts nothing;
 * - a service counts towards `services.loadbalancers` (type LoadBalancer) and
 *   `services.nodeports` (its ports, for NodePort and LoadBalancer); a claim its storage request
 *   towards `requests.storage` and, with a class, `<class>.storageclass.storage.k8s.io/...`;
 * - a quota with scopes (`Terminating`, `NotTerminating`, `BestEffort`, `NotBestEffort`, and the
 *   `PriorityClass` scope selector) counts only the pods they select.
 */
import type * as Registry from "./Registry.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import { KubeObject, QuantityMath } from "@kubefx/schema/internal"

type Obj = Readonly<Record<string, unknown>>

const { record } = KubeObject

const legacyNames = new Set(["pods", "services", "secrets", "configmaps", "persistentvolumeclaims", "replicationcontrollers", "resourcequotas"])
const bareCompute = new Set(["cpu", "memory", "ephemeral-storage"])

/** The `count/...` name of a resource. */
export const countName = (resource: Registry.Resource): string =>
  resource.type.group === "" ? `count/${resource.type.plural}` : `count/${resource.type.plural}.${resource.type.group}`

const ended = (pod: KubeObject.KubeObject) => {
  const phase = record(pod.status).phase
  return phase === "Succeeded" || phase === "Failed"
}

// A container list's resources of one kind ("requests" or "limits"), each summed in the first one's format.
const summed = (containers: ReadonlyArray<Obj>, kind: "requests" | "limits"): Map<string, Array<unknown>> => {
  const out = new Map<string, Array<unknown>>()
  for (const container of containers) {
    for (const [name, quantity] of Object.entries(record(record(container.resources)[kind]))) {
      const values = out.get(name)
      if (values === undefined) out.set(name, [quantity])
      else values.push(quantity)
    }
  }
  return out
}

/**
 * kube's PodRequests/PodLimits: the containers' sum with the sidecars' (init containers that
 * restart always run beside them), or what an init container needs beside the sidecars started
 * before it when that is larger, plus the pod's overhead (which LimitRanger's simpler sum leaves
 * out: `overhead: false`).
 *
 * @example
 * import * as QuotaUsage from "./QuotaUsage.ts"
 * QuotaUsage.podResources({ containers: [{ resources: { requests: { cpu: "100m" } } }, { resources: { requests: { cpu: "1" } } }] }, "requests").get("cpu") // "1100m"
 * QuotaUsage.podResources({
 *   initContainers: [{ restartPolicy: "Always", resources: { requests: { cpu: "200m" } } }],
 *   containers: [{ resources: { requests: { cpu: "100m" } } }]
 * }, "requests").get("cpu") // "300m"
 */
export const podResources = (spec: Obj, kind: "requests" | "limits", options: { readonly overhead: boolean } = { overhead: true }): Map<string, string> => {
  const running = summed(KubeObject.records(spec.containers), kind)
  const sidecars = new Map<string, Array<unknown>>()
  const peaks = new Map<string, string>()
  for (const init of KubeObject.records(spec.initContainers)) {
    const own = record(record(init.resources)[kind])
    const sidecar = init.restartPolicy === "Always"
    for (const [name, quantity] of Object.entries(own)) {
      if (!sidecar) continue
      for (const list of [running, sidecars]) list.set(name, [...(list.get(name) ?? []), quantity])
    }
    // While it starts: itself and the sidecars started before it (a sidecar is among them).
    for (const name of new Set([...Object.keys(own), ...sidecars.keys()])) {
      const during = sidecar || own[name] === undefined ? sidecars.get(name) ?? [] : [own[name], ...sidecars.get(name) ?? []]
      if (during.length === 0) continue
      const value = during.length === 1 ? QuantityMath.goString(during[0]) : QuantityMath.sum(during)
      const peak = peaks.get(name)
      if (peak === undefined || (QuantityMath.compare(value, peak) ?? 0) > 0) peaks.set(name, value)
    }
  }
  const totals = new Map<string, string>()
  for (const [name, values] of running) totals.set(name, QuantityMath.sum(values))
  for (const [name, peak] of peaks) {
    const current = totals.get(name)
    if (current === undefined || (QuantityMath.compare(peak, current) ?? 0) > 0) totals.set(name, peak)
  }
  // The pod's overhead adds to every request, and to a limit the pod has.
  for (const [name, quantity] of Object.entries(options.overhead ? record(spec.overhead) : {})) {
    const current = totals.get(name)
    if (current !== undefined) totals.set(name, QuantityMath.sum([current, quantity]))
    else if (kind === "requests") totals.set(name, QuantityMath.goString(quantity))
  }
  return totals
}

/**
 * What one object adds to each resource name a quota may track, as quantities.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as QuotaUsage from "./QuotaUsage.ts"
 * const configmaps = Builtins.make().find((r) => r.type.plural === "configmaps")!
 * QuotaUsage.usage(configmaps, { metadata: { name: "a" } }) // { "count/configmaps": "1", configmaps: "1" }
 */
export const usage = (resource: Registry.Resource, object: KubeObject.KubeObject): Readonly<Record<string, string>> => {
  const { group, plural } = resource.type
  if (group === "" && plural === "pods" && ended(object)) return {}
  const out: Record<string, string> = { [countName(resource)]: "1" }
  if (group !== "") return out
  if (legacyNames.has(plural)) out[plural] = "1"
  const spec = record(object.spec)
  if (plural === "pods") {
    for (const [name, quantity] of podResources(spec, "requests")) {
      out[`requests.${name}`] = quantity
      if (bareCompute.has(name)) out[name] = quantity
    }
    for (const [name, quantity] of podResources(spec, "limits")) out[`limits.${name}`] = quantity
  } else if (plural === "services") {
    if (spec.type === "LoadBalancer") out["services.loadbalancers"] = "1"
    if (spec.type === "NodePort" || spec.type === "LoadBalancer") out["services.nodeports"] = String(KubeObject.records(spec.ports).length)
  } else if (plural === "persistentvolumeclaims") {
    const storage = record(record(spec.resources).requests).storage
    const storageClass = typeof spec.storageClassName === "string" && spec.storageClassName !== "" ? spec.storageClassName : undefined
    if (storage !== undefined) out["requests.storage"] = QuantityMath.goString(storage)
    if (storageClass !== undefined) {
      out[`${storageClass}.storageclass.storage.k8s.io/persistentvolumeclaims`] = "1"
      if (storage !== undefined) out[`${storageClass}.storageclass.storage.k8s.io/requests.storage`] = QuantityMath.goString(storage)
    }
  }
  return out
}

const bestEffort = (spec: Obj) =>
  [...KubeObject.records(spec.containers), ...KubeObject.records(spec.initContainers)].every((c) => {
    const resources = record(c.resources)
    return Object.keys(record(resources.requests)).length === 0 && Object.keys(record(resources.limits)).length === 0
  })

const inScope = (scope: string, operator: string, values: ReadonlyArray<unknown>, pod: KubeObject.KubeObject): boolean => {
  const spec = record(pod.spec)
  switch (scope) {
    case "Terminating":
      return typeof spec.activeDeadlineSeconds === "number" && spec.activeDeadlineSeconds >= 0
    case "NotTerminating":
      return !(typeof spec.activeDeadlineSeconds === "number" && spec.activeDeadlineSeconds >= 0)
    case "BestEffort":
      return bestEffort(spec)
    case "NotBestEffort":
      return !bestEffort(spec)
    case "PriorityClass": {
      const name = typeof spec.priorityClassName === "string" ? spec.priorityClassName : ""
      if (operator === "Exists") return name !== ""
      if (operator === "DoesNotExist") return name === ""
      const listed = values.includes(name)
      return operator === "NotIn" ? !listed : listed
    }
    default:
      // CrossNamespacePodAffinity: pods with cross-namespace affinity terms are not told apart here.
      return operator === "DoesNotExist"
  }
}

/**
 * Whether a quota counts this object: any object when it has no scopes, else only pods its scopes
 * select.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as QuotaUsage from "./QuotaUsage.ts"
 * const pods = Builtins.make().find((r) => r.type.plural === "pods")!
 * QuotaUsage.counts({ spec: { scopes: ["BestEffort"] } }, pods, { spec: { containers: [{ name: "a" }] } }) // true
 */
export const counts = (quota: KubeObject.KubeObject, resource: Registry.Resource, object: KubeObject.KubeObject): boolean => {
  const spec = record(quota.spec)
  const scopes: Array<{ readonly scope: string; readonly operator: string; readonly values: ReadonlyArray<unknown> }> = [
    ...(Array.isArray(spec.scopes) ? spec.scopes.map((scope) => ({ scope: String(scope), operator: "Exists", values: [] })) : []),
    ...KubeObject.records(record(spec.scopeSelector).matchExpressions).map((e) => ({
      scope: String(e.scopeName ?? ""),
      operator: String(e.operator ?? ""),
      values: Array.isArray(e.values) ? e.values : []
    }))
  ]
  if (scopes.length === 0) return true
  if (resource.type.group !== "" || resource.type.plural !== "pods") return false
  return scopes.every(({ operator, scope, values }) => inScope(scope, operator, values, object))
}

/**
 * What the namespace's objects of this resource use of each of a quota's tracked names that they
 * count towards.
 *
 * @example
 * declare const store: import("./Store.ts").Store
 * declare const resource: import("./Registry.ts").Resource
 * declare const quota: import("@kubefx/schema/internal").KubeObject.KubeObject
 * const used = QuotaUsage.used(store, resource, "default", quota, ["pods"])
 */
export const used = (
  store: Store.Store,
  resource: Registry.Resource,
  namespace: string,
  quota: KubeObject.KubeObject,
  names: ReadonlyArray<string>
): Map<string, Array<string>> => {
  const out = new Map<string, Array<string>>(names.map((name) => [name, []]))
  for (const object of store.list(resource.storage, namespace)) {
    if (!counts(quota, resource, object)) continue
    const adds = usage(resource, object)
    for (const name of names) if (adds[name] !== undefined) out.get(name)!.push(adds[name])
  }
  return out
}

const validationSet = new Set(["cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"])

// A quota on cpu or memory needs every container to state them (kube's backward compatibility).
const missing = (hard: Obj, pod: KubeObject.KubeObject): string | undefined => {
  const required = Object.keys(hard).filter((name) => validationSet.has(name))
  if (required.length === 0) return undefined
  const spec = record(pod.spec)
  const byResource = new Map<string, Set<string>>()
  for (const container of [...KubeObject.records(spec.containers), ...KubeObject.records(spec.initContainers)]) {
    const resources = record(container.resources)
    for (const name of required) {
      const [kind, resourceName] = name.startsWith("limits.") ? ["limits", name.slice(7)] : ["requests", name.replace(/^requests\./, "")]
      if (record(resources[kind])[resourceName!] === undefined) {
        const names = byResource.get(name) ?? new Set<string>()
        names.add(String(container.name ?? ""))
        byResource.set(name, names)
      }
    }
  }
  if (byResource.size === 0) return undefined
  return `must specify ${[...byResource.keys()].sort().map((name) => `${name} for: ${[...byResource.get(name)!].sort().join(",")}`).join("; ")}`
}

const pretty = (values: ReadonlyMap<string, string>) => [...values.keys()].sort().map((name) => `${name}=${values.get(name)}`).join(",")

/**
 * Checks the creation of `object` against every quota of its namespace, in name order: kube's 403
 * for the first quota it would exceed (`exceeded quota: q, requested: pods=1, used: pods=2,
 * limited: pods=2`) or whose cpu and memory it does not state (`failed quota: q: must specify
 * requests.cpu for: app`).
 *
 * @example
 * import { Effect } from "effect"
 * declare const store: import("./Store.ts").Store
 * declare const resource: import("./Registry.ts").Resource
 * const checked = QuotaUsage.admit(store, resource, "default", "web", { metadata: { name: "web" } })
 */
export const admit = (
  store: Store.Store,
  resource: Registry.Resource,
  namespace: string,
  name: string,
  object: KubeObject.KubeObject
): Status.ApiError | undefined => {
  const adds = usage(resource, object)
  const quotas = [...store.list("resourcequotas", namespace)].sort((a, b) => (KubeObject.meta(a).name ?? "").localeCompare(KubeObject.meta(b).name ?? ""))
  const target = { group: resource.type.group, plural: resource.type.plural }
  const isPod = resource.type.group === "" && resource.type.plural === "pods"
  for (const quota of quotas) {
    if (!counts(quota, resource, object)) continue
    const quotaName = KubeObject.meta(quota).name ?? ""
    const hard = record(record(quota.spec).hard)
    if (isPod && Object.keys(adds).length > 0) {
      const why = missing(hard, object)
      if (why !== undefined) return Status.forbidden(target, name, `failed quota: ${quotaName}: ${why}`)
    }
    const tracked = Object.keys(adds).filter((key) => hard[key] !== undefined)
    if (tracked.length === 0) continue
    const current = used(store, resource, namespace, quota, tracked)
    const requested = new Map<string, string>()
    const usedNow = new Map<string, string>()
    const limited = new Map<string, string>()
    for (const key of tracked) {
      const total = QuantityMath.sum([...current.get(key)!, adds[key]])
      if ((QuantityMath.compare(total, hard[key]) ?? 0) <= 0) continue
      requested.set(key, adds[key]!)
      usedNow.set(key, current.get(key)!.length === 0 ? "0" : QuantityMath.sum(current.get(key)!))
      limited.set(key, QuantityMath.goString(hard[key]))
    }
    if (requested.size > 0) {
      return Status.forbidden(target, name, `exceeded quota: ${quotaName}, requested: ${pretty(requested)}, used: ${pretty(usedNow)}, limited: ${pretty(limited)}`)
    }
  }
  return undefined
}
