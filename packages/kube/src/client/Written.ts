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
  // Keyed by the Resource value itself: two declarations of one kind may decode differently.
  const byResource = new WeakMap<Resource.Resource<any>, Map<string, ObjectMeta.KubeObject>>()
  let size = 0
  const order: Array<readonly [Map<string, ObjectMeta.KubeObject>, string]> = []
  return {
    remember: (resource, object) => {
      const key = versionKey(object.metadata)
      if (key === undefined) return
      let entries = byResource.get(resource)
      if (entries === undefined) byResource.set(resource, entries = new Map())
      if (entries.has(key)) return
      entries.set(key, object)
      order.push([entries, key])
      size++
      if (size > capacity) {
        const [oldest, oldestKey] = order.shift()!
        oldest.delete(oldestKey)
        size--
      }
    },
    lookup: <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, raw: unknown) => {
      const key = versionKey((raw as { readonly metadata?: { readonly uid?: unknown; readonly resourceVersion?: unknown } } | null)?.metadata)
      return key === undefined ? undefined : byResource.get(resource)?.get(key) as A | undefined
    }
  }
}
