/**
 * kube-apiserver 1.32's LimitRanger admission plugin: the namespace's LimitRanges give a created
 * Pod's containers the requests and limits they leave out (`defaultRequest`, `default`), noted in
 * the Pod's `kubernetes.io/limit-ranger` annotation, and refuse a Pod or PersistentVolumeClaim
 * outside their `min`, `max` or `maxLimitRequestRatio` with kube's 403.
 */
import { Effect } from "effect"
import * as QuotaUsage from "./QuotaUsage.ts"
import type * as Registry from "./Registry.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import { KubeObject, QuantityMath } from "@kubefx/schema/internal"

type Obj = Readonly<Record<string, unknown>>
type Resources = Readonly<Record<string, unknown>>

const record = KubeObject.record
const annotation = "kubernetes.io/limit-ranger"

/**
 * Whether the plugin looks at the write: a Pod's creation (its containers never change after), a
 * PersistentVolumeClaim's creation or update; never a subresource.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as LimitRanger from "./LimitRanger.ts"
 * const pods = Builtins.make().find((r) => r.type.plural === "pods")!
 * LimitRanger.applies(pods, undefined, "UPDATE") // false
 */
export const applies = (resource: Registry.Resource, subresource: string | undefined, operation: "CREATE" | "UPDATE"): boolean =>
  subresource === undefined && resource.type.group === "" &&
  ((resource.type.plural === "pods" && operation === "CREATE") || resource.type.plural === "persistentvolumeclaims")

const limitRanges = (store: Store.Store, namespace: string): ReadonlyArray<KubeObject.KubeObject> => store.list("limitranges", namespace)

const items = (range: KubeObject.KubeObject, type: string): ReadonlyArray<Obj> =>
  KubeObject.records(record(range.spec).limits).filter((item) => item.type === type)

const sortedKeys = (resources: Resources): Resources =>
  Object.fromEntries(Object.keys(resources).sort().map((key) => [key, resources[key]]))

// One LimitRange's defaults for containers, and what they set, as kube notes it.
const withDefaults = (range: KubeObject.KubeObject, pod: KubeObject.KubeObject): KubeObject.KubeObject => {
  const containerItems = items(range, "Container")
  const requests = Object.assign({}, ...containerItems.map((item) => record(item.defaultRequest))) as Resources
  const limits = Object.assign({}, ...containerItems.map((item) => record(item.default))) as Resources
  if (Object.keys(requests).length === 0 && Object.keys(limits).length === 0) return pod
  const notes: Array<string> = []
  const fill = (containers: unknown, what: string) =>
    Array.isArray(containers)
      ? KubeObject.records(containers).map((container) => {
        const resources = record(container.resources)
        const given = { requests: record(resources.requests), limits: record(resources.limits) }
        const setRequests = Object.keys(requests).filter((name) => !(name in given.requests)).sort()
        const setLimits = Object.keys(limits).filter((name) => !(name in given.limits)).sort()
        if (setRequests.length > 0) notes.push(`${setRequests.join(", ")} request for ${what} ${String(container.name ?? "")}`)
        if (setLimits.length > 0) notes.push(`${setLimits.join(", ")} limit for ${what} ${String(container.name ?? "")}`)
        if (setRequests.length === 0 && setLimits.length === 0) return container
        return {
          ...container,
          resources: {
            ...resources,
            limits: sortedKeys({ ...given.limits, ...Object.fromEntries(setLimits.map((name) => [name, limits[name]])) }),
            requests: sortedKeys({ ...given.requests, ...Object.fromEntries(setRequests.map((name) => [name, requests[name]])) })
          }
        }
      })
      : containers
  const spec = record(pod.spec)
  const containers = fill(spec.containers, "container")
  const initContainers = fill(spec.initContainers, "init container")
  if (notes.length === 0) return pod
  const defaulted = {
    ...pod,
    spec: { ...spec, containers, ...(initContainers === undefined ? {} : { initContainers }) }
  }
  return KubeObject.withMeta(defaulted, {
    annotations: { ...KubeObject.meta(pod).annotations, [annotation]: `LimitRanger plugin set: ${notes.join("; ")}` }
  })
}

/**
 * A created Pod with the defaults of its namespace's LimitRanges: each container (then init
 * container) gets each request and limit it leaves out, and the Pod the annotation that says so.
 *
 * @example
 * import * as LimitRanger from "./LimitRanger.ts"
 * declare const store: import("./Store.ts").Store
 * const pod = LimitRanger.withNamespaceDefaults(store, "team-a", { spec: { containers: [{ name: "web", image: "nginx" }] } })
 */
export const withNamespaceDefaults = (store: Store.Store, namespace: string, pod: KubeObject.KubeObject): KubeObject.KubeObject =>
  limitRanges(store, namespace).reduce((current, range) => withDefaults(range, current), pod)

const text = (quantity: unknown) => QuantityMath.goString(quantity)
const less = (a: unknown, b: unknown) => (QuantityMath.compare(a, b) ?? 0) < 0

const minimum = (type: string, name: string, enforced: unknown, requests: Resources, limits: Resources): string | undefined => {
  if (!(name in requests)) return `minimum ${name} usage per ${type} is ${text(enforced)}.  No request is specified`
  if (less(requests[name], enforced)) return `minimum ${name} usage per ${type} is ${text(enforced)}, but request is ${text(requests[name])}`
  if (name in limits && less(limits[name], enforced)) return `minimum ${name} usage per ${type} is ${text(enforced)}, but limit is ${text(limits[name])}`
  return undefined
}

const maximum = (type: string, name: string, enforced: unknown, requests: Resources, limits: Resources): string | undefined => {
  if (!(name in limits)) return `maximum ${name} usage per ${type} is ${text(enforced)}.  No limit is specified`
  if (less(enforced, limits[name])) return `maximum ${name} usage per ${type} is ${text(enforced)}, but limit is ${text(limits[name])}`
  if (name in requests && less(enforced, requests[name])) return `maximum ${name} usage per ${type} is ${text(enforced)}, but request is ${text(requests[name])}`
  return undefined
}

// A claim's limit is its request alone.
const maximumRequest = (type: string, name: string, enforced: unknown, requests: Resources): string | undefined => {
  if (!(name in requests)) return `maximum ${name} usage per ${type} is ${text(enforced)}.  No request is specified`
  if (less(enforced, requests[name])) return `maximum ${name} usage per ${type} is ${text(enforced)}, but request is ${text(requests[name])}`
  return undefined
}

const ratio = (type: string, name: string, enforced: unknown, requests: Resources, limits: Resources): string | undefined => {
  const request = name in requests ? QuantityMath.toNumber(requests[name]) : 0
  const limit = name in limits ? QuantityMath.toNumber(limits[name]) : 0
  if (request === 0) return `${name} max limit to request ratio per ${type} is ${text(enforced)}, but no request is specified or request is 0`
  if (limit === 0) return `${name} max limit to request ratio per ${type} is ${text(enforced)}, but no limit is specified or limit is 0`
  const observed = limit / request
  return observed > QuantityMath.toNumber(enforced)
    ? `${name} max limit to request ratio per ${type} is ${text(enforced)}, but provided ratio is ${observed.toFixed(6)}`
    : undefined
}

// Go ranges over a map in no order; the checks of one item run here by resource name.
const each = (values: unknown, check: (name: string, enforced: unknown) => string | undefined): ReadonlyArray<string> =>
  Object.keys(record(values)).sort().flatMap((name) => {
    const problem = check(name, record(values)[name])
    return problem === undefined ? [] : [problem]
  })

const bounds = (item: Obj, type: string, requests: Resources, limits: Resources): ReadonlyArray<string> => [
  ...each(item.min, (name, enforced) => minimum(type, name, enforced, requests, limits)),
  ...each(item.max, (name, enforced) => maximum(type, name, enforced, requests, limits)),
  ...each(item.maxLimitRequestRatio, (name, enforced) => ratio(type, name, enforced, requests, limits))
]

const problems = (range: KubeObject.KubeObject, plural: string, object: KubeObject.KubeObject): ReadonlyArray<string> => {
  const spec = record(object.spec)
  if (plural === "persistentvolumeclaims") {
    const requests = record(record(spec.resources).requests)
    return items(range, "PersistentVolumeClaim").flatMap((item) => [
      ...each(item.min, (name, enforced) => minimum("PersistentVolumeClaim", name, enforced, requests, {})),
      ...each(item.max, (name, enforced) => maximumRequest("PersistentVolumeClaim", name, enforced, requests))
    ])
  }
  return KubeObject.records(record(range.spec).limits).flatMap((item) => {
    if (item.type === "Container") {
      return [...KubeObject.records(spec.containers), ...KubeObject.records(spec.initContainers)].flatMap((container) => {
        const resources = record(container.resources)
        return bounds(item, "Container", record(resources.requests), record(resources.limits))
      })
    }
    if (item.type === "Pod") {
      const total = (kind: "requests" | "limits") => Object.fromEntries(QuotaUsage.podResources(spec, kind, { overhead: false }))
      return bounds(item, "Pod", total("requests"), total("limits"))
    }
    return []
  })
}

/**
 * Refuses, as kube does, a Pod or claim outside its namespace's LimitRanges: 403, every problem
 * named (`pods "web" is forbidden: maximum cpu usage per Container is 1, but limit is 2`).
 *
 * @example
 * import * as LimitRanger from "./LimitRanger.ts"
 * declare const store: import("./Store.ts").Store
 * declare const pods: import("./Registry.ts").Resource
 * const checked = LimitRanger.admit(store, pods, "team-a", "web", { spec: { containers: [] } }) // Effect<void, ApiError>
 */
export const admit = (
  store: Store.Store,
  resource: Registry.Resource,
  namespace: string,
  name: string,
  object: KubeObject.KubeObject
): Effect.Effect<void, Status.ApiError> => {
  const all = [...new Set(limitRanges(store, namespace).flatMap((range) => problems(range, resource.type.plural, object)))]
  if (all.length === 0) return Effect.void
  return Effect.fail(Status.forbidden(resource.type, name, all.length === 1 ? all[0]! : `[${all.join(", ")}]`))
}
