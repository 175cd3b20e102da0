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

interface KeptText {
  readonly text: string
  readonly entry: Entry
}

const versionMarker = `"resourceVersion":"`

// A text's key: its length and its first resourceVersion, which in an object's JSON is its own (the
// API server writes metadata before spec and status). A watch line of a version this client did not
// write then misses after one search of its text, and two texts under one key are told apart by
// comparing them: a key found is only where to look.
const textKey = (text: string): string | undefined => {
  const at = text.indexOf(versionMarker)
  if (at < 0) return undefined
  const start = at + versionMarker.length
  const end = text.indexOf(`"`, start)
  return end < 0 ? undefined : `${text.length}:${text.slice(start, end)}`
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
  // Texts by a short key of their own (see `textKey`): a text as a map key would be hashed whole,
  // once when kept and once more for every watch line looked up.
  const texts = TransientMap.make<string, KeptText>()
  let characters = 0
  const dropText = (key: string) => {
    const kept = texts.get(key)
    if (kept === undefined) return
    texts.delete(key)
    characters -= kept.text.length
  }
  const keepText = (text: string, entry: Entry) => {
    const key = textKey(text)
    if (key === undefined || text.length > textCharacters) return
    // Another text under the key (one write's answer kept twice, or a rare look-alike) gives way.
    dropText(key)
    texts.set(key, { text, entry })
    characters += text.length
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
      const key = textKey(text)
      if (key === undefined) return undefined
      const kept = texts.get(key)
      if (kept === undefined || kept.entry.resource !== resource || kept.text !== text) return undefined
      const entry = kept.entry
      dropText(key)
      // Kept until thousands of writes later, every answer would outlive two young collections and
      // be copied into the old generation: 14% of what a 10,000-Widget fleet's operator promoted.
      if (entries.get(entry.key) === entry) entries.delete(entry.key)
      return entry.object as A
    }
  }
}
