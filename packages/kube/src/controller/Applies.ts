/**
 * Server-side applies that are not sent when they would change nothing, as JOSDK's matchers: the
 * body carries a digest of itself in an annotation, and an apply whose every field (the digest
 * included) the cached object already holds is answered from the cache. A field someone else
 * changed, or one the body no longer states (its digest differs), is never masked: the apply goes.
 *
 * Internal to the controller: users reach it through `Controller.Context` and `Dependent`.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { hash } from "node:crypto"
import type * as Informer from "../cache/Informer.ts"
import type * as Kube from "../client/Kube.ts"
import type * as KubeError from "../client/KubeError.ts"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"
import { QuantityMath } from "@kubefx/schema/objects"

/** The annotation holding a digest of the last applied object, so removed fields are applied too. */
export const appliedDigestAnnotation = "kubefx.dev/applied-digest"

/**
 * A digest of an object: the same for equal JSON whatever the key order.
 *
 * @example
 * import { Dependent } from "@kubefx/kube"
 * Dependent.digest({ a: 1, b: [2] }) === Dependent.digest({ b: [2], a: 1 }) // true
 */
export const digest = (value: unknown): string => {
  const copy = sortedCopy(value)
  return hash("sha256", copy === unorderable ? canonical(value) : JSON.stringify(copy) ?? "null", "hex").slice(0, 16)
}

const unorderable = Symbol("unorderable")

// The value with each object's keys in sorted order, for JSON.stringify to write natively the text
// `canonical` builds piece by piece (a quarter of its allocations). A function or symbol field is
// null, as `canonical` writes it. JavaScript orders an array-index key numerically before the
// others, not where it was inserted, and `__proto__` would set the prototype: a value with a key
// starting with a digit (every array index does, and a few other keys) or `__proto__` is left to
// `canonical`.
const sortedCopy = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) {
    const items: Array<unknown> = new Array(value.length)
    for (let i = 0; i < value.length; i++) {
      const item = sortedCopy(value[i])
      if (item === unorderable) return unorderable
      items[i] = item
    }
    return items
  }
  const record = value as Record<string, unknown>
  const keys = sorted(Object.keys(record))
  const copy: Record<string, unknown> = {}
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const code = key.charCodeAt(0)
    if ((code >= 0x30 && code <= 0x39) || key === "__proto__") return unorderable
    const field = record[key]
    if (field === undefined) continue
    const item = typeof field === "function" || typeof field === "symbol" ? null : sortedCopy(field)
    if (item === unorderable) return unorderable
    copy[key] = item
  }
  return copy
}

// Keys sorted by UTF-16 code units (the default sort), undefined fields left out; built as one string.
const canonical = (value: unknown): string => {
  if (typeof value === "string") return quoted(value)
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) {
    let text = "["
    for (let i = 0; i < value.length; i++) text += (i === 0 ? "" : ",") + canonical(value[i])
    return text + "]"
  }
  const record = value as Record<string, unknown>
  const keys = sorted(Object.keys(record))
  let text = "{"
  for (let i = 0; i < keys.length; i++) {
    const field = record[keys[i]!]
    if (field === undefined) continue
    text += (text.length === 1 ? "" : ",") + quoted(keys[i]!) + ":" + canonical(field)
  }
  return text + "}"
}

// Sorted in place as the default sort orders strings (by UTF-16 code units); an object's few keys by
// insertion, which allocates nothing where the default sort copies them into a work array.
const sorted = (keys: Array<string>): Array<string> => {
  if (keys.length > 16) return keys.sort()
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!
    let j = i - 1
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!
      j--
    }
    keys[j + 1] = key
  }
  return keys
}

// JSON.stringify of a string, without the call for the names and values of Kubernetes objects:
// printable ASCII with no quote or backslash is its own JSON between quotes.
const quoted = (text: string): string => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) return JSON.stringify(text)
  }
  return `"${text}"`
}

/**
 * Whether `actual` holds every field of `desired` with the same value (arrays element by element,
 * same length). Fields only `actual` has (defaults, status, other managers' fields) do not matter.
 * A field `desired` states as an empty map, an empty list or null is held when `actual` lacks it:
 * the API server leaves such values out (Go's `omitempty`: `labels: {}`, `finalizers: []`,
 * `tolerations: []`), so an object applied with them never comes back with them. A zero scalar is
 * not: `false`, 0 and `""` are held only by the same value, since behind a pointer (`replicas: 0`,
 * `automountServiceAccountToken: false`) an absent field means something else. The API server
 * leaves out the zeros of plain `omitempty` fields (a Deployment's `paused: false`, a container's
 * `tty: false`), so a body stating them is sent on every run: leave them out of it. Quantities in
 * `requests`, `limits` and `hard` are held by their canonical form, which the server stores
 * (`cpu: 0.5` by `500m`).
 *
 * @example
 * import { Dependent } from "@kubefx/kube"
 * Dependent.contains({ data: { a: "1" }, metadata: { uid: "u" } }, { data: { a: "1" } }) // true
 * Dependent.contains({ data: { a: "2" } }, { data: { a: "1" } }) // false
 * Dependent.contains({ metadata: { name: "a" } }, { metadata: { name: "a", labels: {} } }) // true
 */
export const contains = (actual: unknown, desired: unknown): boolean => {
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual) || actual.length !== desired.length) return false
    for (let i = 0; i < desired.length; i++) if (!contains(actual[i], desired[i])) return false
    return true
  }
  if (typeof desired === "object" && desired !== null) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) return false
    return holdsFields(actual as Record<string, unknown>, desired, true)
  }
  return actual === desired
}

// `contains` for each defined field of `desired`; apiVersion and kind left out unless `typeFields`.
const holdsFields = (actual: Readonly<Record<string, unknown>>, desired: object, typeFields: boolean): boolean => {
  for (const key in desired) {
    if (!Object.hasOwn(desired, key) || (!typeFields && (key === "apiVersion" || key === "kind"))) continue
    const value = (desired as Record<string, unknown>)[key]
    if (value === undefined) continue
    const held = actual[key]
    if (held === undefined ? !isEmpty(value) : resourceLists.has(key) ? !holdsQuantities(held, value) : !contains(held, value)) return false
  }
  return true
}

// The maps of quantities (a container's requests and limits, a ResourceQuota's hard), whose values
// the API server stores in canonical form: `cpu: 0.5` comes back as `500m`, `memory: 1024Mi` as
// `1Gi`. A stated value is held by its canonical form, and by nothing else.
const resourceLists = new Set(["requests", "limits", "hard"])

const holdsQuantities = (actual: unknown, desired: unknown): boolean => {
  if (typeof desired !== "object" || desired === null || Array.isArray(desired)) return contains(actual, desired)
  if (typeof actual !== "object" || actual === null || Array.isArray(actual)) return false
  const held = actual as Readonly<Record<string, unknown>>
  for (const key in desired) {
    const value = (desired as Record<string, unknown>)[key]
    if (value === undefined) continue
    const stored = held[key]
    const same = stored === value ||
      ((typeof value === "string" || typeof value === "number") && stored === QuantityMath.goString(value))
    if (!same && !contains(stored, value)) return false
  }
  return true
}

// What a Go API server leaves out of the object it stores and answers.
const isEmpty = (value: unknown): boolean => {
  if (value === null) return true
  if (Array.isArray(value)) return value.length === 0
  if (typeof value !== "object") return false
  for (const _ in value) return false
  return true
}

// The body with the digest annotation of itself.
const signed = (body: Kube.ApplyBody, bodyDigest: string): Kube.ApplyBody => {
  const annotations = { ...(body.metadata.annotations as Record<string, string> | undefined), [appliedDigestAnnotation]: bodyDigest }
  return { ...body, metadata: { ...body.metadata, annotations } }
}

// Whether `actual` holds the signed body's fields (apiVersion and kind aside: they are not always on
// listed objects, and the resource fixes them anyway), compared without building the signed body:
// the digest annotation is part of it, so a changed body (a removed field too) never matches.
const upToDate = (actual: ObjectMeta.KubeObject, body: Kube.ApplyBody, bodyDigest: string): boolean => {
  if (actual.metadata.annotations?.[appliedDigestAnnotation] !== bodyDigest) return false
  // A body stating the digest annotation itself is compared as it is sent, the digest in its place.
  const stated = body.metadata.annotations as Readonly<Record<string, string>> | undefined
  const compared = stated?.[appliedDigestAnnotation] === undefined ? body : signed(body, bodyDigest)
  return holdsFields(actual as unknown as Readonly<Record<string, unknown>>, compared, false)
}

/** An apply's answer: the object, and whether a request was sent. */
export interface Applied<A> {
  readonly object: A
  readonly applied: boolean
}

/**
 * Signs the body and applies it, unless `cache` already holds all of it (then answers the cached
 * object, `applied` false); without a cache, it applies the body as given.
 *
 * @example
 * const { object, applied } = yield* Applies.apply(kube, ConfigMap, body, { fieldManager: "web", force: true }, informer)
 */
export const apply = <A extends ObjectMeta.KubeObject>(
  kube: Kube.Client,
  resource: Resource.Resource<A>,
  body: Kube.ApplyBody,
  options: Kube.ApplyOptions,
  cache: Pick<Informer.Informer<A>, "get"> | undefined
): Effect.Effect<Applied<A>, KubeError.KubeError | Resource.DecodeError> => {
  if (cache === undefined) return Effect.map(kube.apply(resource, body, options), (object) => ({ object, applied: true }))
  const bodyDigest = digest(body)
  const cached = cache.get(ObjectMeta.keyOf(body.metadata.namespace, body.metadata.name))
  return cached !== undefined && upToDate(cached, body, bodyDigest)
    ? Effect.succeed({ object: cached, applied: false })
    : Effect.map(kube.apply(resource, signed(body, bodyDigest), options), (object) => ({ object, applied: true }))
}
