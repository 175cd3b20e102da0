/**
 * The objects a client's own writes answered with, decoded, by resource, uid and resourceVersion:
 * the watch that brings the same version back reuses the decoded object instead of decoding it a
 * second time. Bounded: the oldest entries go first.
 *
 * Internal to the client.
 *
 * @since 0.1.0
 */
import type * as ObjectMeta from "./ObjectMeta.ts"
import type * as Resource from "./Resource.ts"

export interface Written {
  /** Keeps a decoded write answer. */
  readonly remember: (resource: Resource.Resource<any>, object: ObjectMeta.KubeObject) => void
  /** The decoded object for a raw one at the same uid and resourceVersion, if this client wrote it. */
  readonly lookup: <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, raw: unknown) => A | undefined
}

const versionKey = (metadata: { readonly uid?: unknown; readonly resourceVersion?: unknown } | undefined): string | undefined =>
  typeof metadata?.uid === "string" && typeof metadata.resourceVersion === "string"
    ? `${metadata.uid}@${metadata.resourceVersion}`
    : undefined

/**
 * An empty memo holding at most `capacity` objects (default 4,096).
 *
 * @example
 * const written = Written.make()
 * written.remember(Widget, decoded)
 * written.lookup(Widget, rawFromWatch) // decoded, when uid and resourceVersion match
 */
export const make = (capacity = 4096): Written => {
  // A uid names one object whatever its kind; the Resource is kept to answer only the declaration
  // that decoded it (two declarations of one kind may decode differently). A Map keeps insertion
  // order, so its first key is the oldest.
  const entries = new Map<string, { readonly resource: Resource.Resource<any>; readonly object: ObjectMeta.KubeObject }>()
  return {
    remember: (resource, object) => {
      const key = versionKey(object.metadata)
      if (key === undefined) return
      entries.set(key, { resource, object })
      if (entries.size > capacity) entries.delete(entries.keys().next().value!)
    },
    lookup: <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, raw: unknown) => {
      const key = versionKey((raw as { readonly metadata?: { readonly uid?: unknown; readonly resourceVersion?: unknown } } | null)?.metadata)
      const entry = key === undefined ? undefined : entries.get(key)
      return entry?.resource === resource ? entry.object as A : undefined
    }
  }
}
