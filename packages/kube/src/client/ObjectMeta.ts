/**
 * Kubernetes object metadata (metav1.ObjectMeta) and owner references, as Schemas. Fields kubefx
 * does not model are kept as they are, so an object decoded and written back loses nothing.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

export const OwnerReference = Schema.Struct({
  apiVersion: Schema.String,
  kind: Schema.String,
  name: Schema.String,
  uid: Schema.String,
  controller: Schema.optionalKey(Schema.Boolean),
  blockOwnerDeletion: Schema.optionalKey(Schema.Boolean)
})
export type OwnerReference = typeof OwnerReference.Type

const StringMap = Schema.Record(Schema.String, Schema.String)

/** The metadata fields kubefx reads; any other field is preserved untouched. */
export const ObjectMeta = Schema.StructWithRest(
  Schema.Struct({
    name: Schema.optionalKey(Schema.String),
    generateName: Schema.optionalKey(Schema.String),
    namespace: Schema.optionalKey(Schema.String),
    uid: Schema.optionalKey(Schema.String),
    resourceVersion: Schema.optionalKey(Schema.String),
    generation: Schema.optionalKey(Schema.Number),
    creationTimestamp: Schema.optionalKey(Schema.String),
    deletionTimestamp: Schema.optionalKey(Schema.String),
    labels: Schema.optionalKey(StringMap),
    annotations: Schema.optionalKey(StringMap),
    finalizers: Schema.optionalKey(Schema.Array(Schema.String)),
    ownerReferences: Schema.optionalKey(Schema.Array(OwnerReference)),
    managedFields: Schema.optionalKey(Schema.Array(Schema.Unknown))
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)
export type ObjectMeta = typeof ObjectMeta.Type

/** Any Kubernetes object: what every resource's type has in common. */
export interface KubeObject {
  readonly apiVersion?: string | undefined
  readonly kind?: string | undefined
  readonly metadata: ObjectMeta
}

/**
 * The object's cache and queue key: "namespace/name", or "name" for cluster-scoped objects.
 *
 * @example
 * import { ObjectMeta } from "@kubefx/kube"
 * ObjectMeta.key({ metadata: { name: "web", namespace: "default" } }) // "default/web"
 */
export const key = (object: KubeObject): string => keyOf(object.metadata.namespace, object.metadata.name ?? "")

/**
 * A key from a namespace (or none) and a name.
 *
 * @example
 * import { ObjectMeta } from "@kubefx/kube"
 * ObjectMeta.keyOf(undefined, "cluster-wide") // "cluster-wide"
 */
export const keyOf = (namespace: string | undefined, name: string): string =>
  namespace === undefined || namespace === "" ? name : `${namespace}/${name}`

/**
 * Splits a key back into namespace and name.
 *
 * @example
 * import { ObjectMeta } from "@kubefx/kube"
 * ObjectMeta.parseKey("default/web") // { namespace: "default", name: "web" }
 */
export const parseKey = (key: string): { readonly namespace: string | undefined; readonly name: string } => {
  const slash = key.indexOf("/")
  return slash < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) }
}

/**
 * Whether the object is being deleted (has a deletionTimestamp).
 *
 * @example
 * import { ObjectMeta } from "@kubefx/kube"
 * ObjectMeta.isDeleting({ metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } }) // true
 */
export const isDeleting = (object: KubeObject): boolean => object.metadata.deletionTimestamp !== undefined

const decimal = /^(0|[1-9][0-9]*)$/

/**
 * How two resourceVersions of one object order: negative when `a` is older, 0 when they are the
 * same, positive when `a` is newer, and `undefined` when they differ but cannot be ordered. The API
 * promises only equality (versions are opaque); decimal versions, which etcd-backed servers and
 * kubefx's own server give, are ordered as the integers they are (without a lossy conversion).
 * Callers treat `undefined` as "unknown": trust the informer's copy, drop their own.
 *
 * @example
 * import { ObjectMeta } from "@kubefx/kube"
 * ObjectMeta.compareVersions("42", "9") // positive
 * ObjectMeta.compareVersions("42", "42") // 0
 * ObjectMeta.compareVersions("a1", "b2") // undefined
 */
export const compareVersions = (a: string | undefined, b: string | undefined): number | undefined => {
  if (a === b) return 0
  if (a === undefined || b === undefined || !decimal.test(a) || !decimal.test(b)) return undefined
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : 1
}
