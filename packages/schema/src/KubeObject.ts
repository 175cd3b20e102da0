/**
 * Kubernetes objects as the server stores them: plain JSON objects. Helpers to read their metadata
 * without a schema, since every kind (built-in or custom) shares only `apiVersion`, `kind` and
 * `metadata`.
 */
import { randomUUID } from "node:crypto"

/** A JSON object. */
export type KubeObject = Record<string, unknown>

/** `metadata` of a Kubernetes object, with the fields the server itself reads or writes. */
export interface ObjectMeta {
  readonly name?: string
  readonly generateName?: string
  readonly namespace?: string
  readonly uid?: string
  readonly resourceVersion?: string
  readonly generation?: number
  readonly creationTimestamp?: string
  readonly deletionTimestamp?: string
  readonly deletionGracePeriodSeconds?: number
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
  readonly finalizers?: ReadonlyArray<string>
  readonly ownerReferences?: ReadonlyArray<OwnerReference>
  readonly managedFields?: ReadonlyArray<unknown>
  readonly [key: string]: unknown
}

export interface OwnerReference {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string
  readonly controller?: boolean
  readonly blockOwnerDeletion?: boolean
}

/**
 * True for a non-null, non-array object.
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.isObject({ a: 1 }) // true
 * KubeObject.isObject([1]) // false
 */
export const isObject = (u: unknown): u is KubeObject => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * True for an object with no keys (`{}`), the empty map Go's `omitempty` leaves out.
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.isEmptyObject({}) // true
 * KubeObject.isEmptyObject([]) // false
 */
export const isEmptyObject = (u: unknown): u is KubeObject => {
  if (!isObject(u)) return false
  for (const _ in u) return false
  return true
}

/**
 * A field read as an object: itself when it is one, else an empty object (absent or mistyped
 * fields read as empty, as validation and defaulting walk untrusted input).
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.record({ a: 1 }) // { a: 1 }
 * KubeObject.record("x") // {}
 */
export const record = (u: unknown): KubeObject => (isObject(u) ? u : {})

/**
 * A field read as a list of objects: an array's items (non-objects read as empty), else `[]`.
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.records([{ a: 1 }, 2]) // [{ a: 1 }, {}]
 * KubeObject.records(undefined) // []
 */
export const records = (u: unknown): ReadonlyArray<KubeObject> => (Array.isArray(u) ? u.map(record) : [])

/**
 * A field read as a string: itself when it is one, else "".
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.text("a") // "a"
 * KubeObject.text(1) // ""
 */
export const text = (u: unknown): string => (typeof u === "string" ? u : "")

/**
 * A field read as a number: itself when it is a finite one, else `otherwise` (default 0), as a
 * count or replica number is read when it may be left out.
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.number(3) // 3
 * KubeObject.number(undefined, 1) // 1
 */
export const number = (u: unknown, otherwise = 0): number => (typeof u === "number" && Number.isFinite(u) ? u : otherwise)

/**
 * The object's metadata, or an empty record when it has none.
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.meta({ metadata: { name: "x" } }).name // "x"
 */
export const meta = (object: KubeObject): ObjectMeta => (isObject(object.metadata) ? object.metadata : {}) as ObjectMeta

/**
 * A copy of the object with metadata fields replaced (an `undefined` value removes the field).
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.withMeta({ metadata: { name: "x", uid: "u" } }, { uid: undefined }) // { metadata: { name: "x" } }
 */
export const withMeta = (object: KubeObject, changes: Readonly<Record<string, unknown>>): KubeObject => {
  const metadata: Record<string, unknown> = { ...meta(object) }
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete metadata[key]
    else metadata[key] = value
  }
  return { ...object, metadata }
}

/**
 * The object's `namespace/name` key (just `name` for cluster-scoped objects).
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.key("default", "web") // "default/web"
 * KubeObject.key(undefined, "kube-system") // "kube-system"
 */
export const key = (namespace: string | undefined, name: string): string =>
  namespace === undefined || namespace === "" ? name : `${namespace}/${name}`

/**
 * The current time as Kubernetes writes `metav1.Time`: RFC 3339 with seconds, in UTC.
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.timestamp(new Date(0)) // "1970-01-01T00:00:00Z"
 */
export const timestamp = (date?: Date): string => {
  if (date !== undefined) return date.toISOString().replace(/\.\d{3}Z$/, "Z")
  // Every write stamps times: format the current second once.
  const second = Math.floor(Date.now() / 1000)
  if (second !== lastSecond) {
    lastSecond = second
    lastStamp = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")
  }
  return lastStamp
}

let lastSecond = -1
let lastStamp = ""

/**
 * A fresh object uid.
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.uid().length // 36
 */
export const uid = (): string => randomUUID()

/**
 * Deep structural equality of JSON values (key order ignored).
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.equals({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }) // true
 */
export const equals = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!equals(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !equals((a as KubeObject)[k], (b as KubeObject)[k])) return false
  }
  return true
}

/**
 * The value at a dotted path such as `.spec.replicas` (the form CRD scale paths and selectable
 * fields use), or undefined.
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.getPath({ spec: { replicas: 3 } }, ".spec.replicas") // 3
 */
export const getPath = (object: unknown, path: string): unknown => {
  let current: unknown = object
  for (const segment of splitPath(path)) {
    if (!isObject(current)) return undefined
    current = current[segment]
  }
  return current
}

/**
 * A copy of the object with the value at a dotted path set, creating intermediate objects.
 *
 * @example
 * import * as KubeObject from "./KubeObject.ts"
 * KubeObject.setPath({ spec: {} }, ".spec.replicas", 2) // { spec: { replicas: 2 } }
 */
export const setPath = (object: KubeObject, path: string, value: unknown): KubeObject => {
  const set = (node: KubeObject, segments: ReadonlyArray<string>): KubeObject => {
    const [head, ...rest] = segments
    if (head === undefined) return node
    const child = node[head]
    return { ...node, [head]: rest.length === 0 ? value : set(isObject(child) ? child : {}, rest) }
  }
  return set(object, splitPath(path))
}

const splitPath = (path: string): ReadonlyArray<string> => path.split(".").filter((s) => s.length > 0)
