/**
 * The objects a client's own writes answered with, decoded, by resource, uid and resourceVersion:
 * the watch that brings the same version back reuses the decoded object instead of decoding it a
 * second time. A watch line whose object is the answer's very text is not even parsed, and takes
 * the object out of the memo. Bounded: the oldest entries go first.
 *
 * Internal to the client.
 *
 * @since 0.1.0
 */
import type * as ObjectMeta from "./ObjectMeta.ts"
import type * as Resource from "./Resource.ts"
import * as TransientMap from "./TransientMap.ts"

export interface Written {
  /** Keeps a decoded write answer, and the JSON text it was read from when given. */
  readonly remember: (resource: Resource.Resource<any>, object: ObjectMeta.KubeObject, text?: string) => void
  /** The decoded object for a raw one at the same uid and resourceVersion, if this client wrote it. */
  readonly lookup: <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, raw: unknown) => A | undefined
  /**
   * The decoded object of a write answer whose JSON was exactly `text`, taken out of the memo, text
   * and object (a watch brings a version back once). The same text parses to the same value, so a
   * watch line found here needs no `JSON.parse`.
   */
  readonly takeText: <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, text: string) => A | undefined
}

interface Entry {
  readonly resource: Resource.Resource<any>
  readonly object: ObjectMeta.KubeObject
  /** The object's uid and resourceVersion, its key in the memo. */
  readonly key: string
}

const versionKey = (metadata: { readonly uid?: unknown; readonly resourceVersion?: unknown } | undefined): string | undefined =>
  typeof metadata?.uid === "string" && typeof metadata.resourceVersion === "string"
    ? `${metadata.uid}@${metadata.resourceVersion}`
    : undefined

/**
 * An empty memo holding at most `capacity` objects (default 4,096) and the texts of the
 * `textCapacity` latest (default 512; each is dropped once a watch brings it back), at most
 * `textCharacters` characters of them together (default 4 Mi: an operator writing large objects
 * keeps fewer texts, not more memory).
 *
 * @example
 * const written = Written.make()
 * written.remember(Widget, decoded, answerText)
 * written.lookup(Widget, rawFromWatch) // decoded, when uid and resourceVersion match
 * written.takeText(Widget, answerText) // decoded, once
 */
export const make = (capacity = 4096, textCapacity = 512, textCharacters = 4 * 1024 * 1024): Written => {
  // A uid names one object whatever its kind; the Resource is kept to answer only the declaration
  // that decoded it (two declarations of one kind may decode differently). Every write adds an entry
  // and its echo takes it out: transient maps, so what passes through them is not kept by V8.
  const entries = TransientMap.make<string, Entry>()
  const texts = TransientMap.make<string, Entry>()
  // How many kept texts have each length: a watch line of someone else's write usually has a length
  // no kept text has, and is then not hashed for the look-up at all.
  const lengths = TransientMap.make<number, number>()
  let characters = 0
  const dropText = (text: string) => {
    texts.delete(text)
    characters -= text.length
    const left = lengths.get(text.length)! - 1
    if (left === 0) lengths.delete(text.length)
    else lengths.set(text.length, left)
  }
  const keepText = (text: string, entry: Entry) => {
    if (text.length > textCharacters || texts.has(text)) return
    texts.set(text, entry)
    characters += text.length
    lengths.set(text.length, (lengths.get(text.length) ?? 0) + 1)
    while (texts.size() > textCapacity || characters > textCharacters) dropText(texts.oldest()!)
  }
  return {
    remember: (resource, object, text) => {
      const key = versionKey(object.metadata)
      if (key === undefined) return
      const entry = { resource, object, key }
      entries.set(key, entry)
      if (entries.size() > capacity) entries.delete(entries.oldest()!)
      if (text !== undefined) keepText(text, entry)
    },
    lookup: <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, raw: unknown) => {
      const key = versionKey((raw as { readonly metadata?: { readonly uid?: unknown; readonly resourceVersion?: unknown } } | null)?.metadata)
      const entry = key === undefined ? undefined : entries.get(key)
      return entry?.resource === resource ? entry.object as A : undefined
    },
    takeText: <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, text: string) => {
      if (!lengths.has(text.length)) return undefined
      const entry = texts.get(text)
      if (entry?.resource !== resource) return undefined
      dropText(text)
      // Kept until thousands of writes later, every answer would outlive two young collections and
      // be copied into the old generation: 14% of what a 10,000-Widget fleet's operator promoted.
      if (entries.get(entry.key) === entry) entries.delete(entry.key)
      return entry.object as A
    }
  }
}
