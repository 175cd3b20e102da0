/**
 * The in-memory MVCC store: one global revision (every create, update and delete adds 1, as
 * etcd's mod_revision does), objects keyed by storage key (one per resource, shared by all its
 * served versions) and `namespace/name`, and a bounded ring of recent events from which watches
 * resume and paginated lists are served at the revision of their first page.
 *
 * Everything here is synchronous: JavaScript runs one callback at a time, so a read-check-write
 * in one call is atomic. Listeners are called synchronously, in revision order, and must not write
 * to the store from inside the call (they queue work instead).
 */
import { KubeObject } from "@kubefx/schema/internal"
import * as Compaction from "./Compaction.ts"

export type EventType = "ADDED" | "MODIFIED" | "DELETED"

/** One committed write. */
export interface Event {
  readonly type: EventType
  readonly storage: string
  /** `namespace/name`, or `name` for cluster-scoped objects. */
  readonly key: string
  /** "" for cluster-scoped objects. */
  readonly namespace: string
  readonly revision: number
  /** The new state; for DELETED the last state, with resourceVersion set to the deletion revision. */
  readonly object: KubeObject.KubeObject
  /** The state before the write; undefined for ADDED. */
  readonly prev: KubeObject.KubeObject | undefined
}

/** What a write requires of the stored object: absent (0), at a given revision, or anything (undefined). */
export type Expected = number | undefined

export type WriteResult =
  | { readonly _tag: "Written"; readonly object: KubeObject.KubeObject; readonly event: Event }
  | { readonly _tag: "Conflict"; readonly current: KubeObject.KubeObject | undefined }

/** The whole state at one revision, for persistence. */
export interface Snapshot {
  readonly revision: number
  readonly objects: ReadonlyArray<{ readonly storage: string; readonly object: KubeObject.KubeObject }>
}

export interface Options {
  /** How many recent events are kept for watches and paginated lists (default 10,000). */
  readonly historySize?: number
  /** State to start from (recovered from a data directory); history starts empty after it. */
  readonly initial?: Snapshot | undefined
}

export interface Store {
  /** The current revision (the revision of the last write). */
  readonly revision: () => number
  /** Revisions at or below this one are no longer in the history: watches and continues from them expire. */
  readonly compactedRevision: () => number
  readonly get: (storage: string, namespace: string, name: string) => KubeObject.KubeObject | undefined
  /**
   * Current objects ordered by key (`namespace/name`); all namespaces when `namespace` is undefined;
   * only those whose key sorts after `after` when given (a list's continue key); the first `limit`.
   */
  readonly list: (
    storage: string,
    namespace: string | undefined,
    after?: string,
    limit?: number
  ) => ReadonlyArray<KubeObject.KubeObject>
  /** How many objects `list` would give without a limit. */
  readonly count: (storage: string, namespace: string | undefined, after?: string) => number
  /** Objects as they were at `revision`, or undefined when that revision is no longer in the history. */
  readonly listAt: (
    storage: string,
    namespace: string | undefined,
    revision: number,
    after?: string
  ) => ReadonlyArray<KubeObject.KubeObject> | undefined
  /** Creates or replaces an object (its namespace and name come from its metadata). */
  readonly put: (storage: string, object: KubeObject.KubeObject, expected: Expected) => WriteResult
  /** Removes an object; the DELETED event carries `last` (default: the stored object). */
  readonly remove: (
    storage: string,
    namespace: string,
    name: string,
    expected: Expected,
    last?: KubeObject.KubeObject
  ) => WriteResult
  /**
   * Calls `listener` with every event of `storage` (and `namespace` when given) after
   * `fromRevision`: first those still in the history, then live ones. "Expired" when events after
   * `fromRevision` were already dropped.
   */
  readonly watch: (
    storage: string,
    namespace: string | undefined,
    fromRevision: number,
    listener: (event: Event) => void
  ) => { readonly cancel: () => void } | "Expired"
  /** Calls `listener` with every event of every storage; returns the unsubscribe function. */
  readonly subscribe: (listener: (event: Event) => void) => () => void
  /** All storage keys that hold objects. */
  readonly storages: () => ReadonlyArray<string>
  readonly snapshot: () => Snapshot
  /** Number of stored objects (in one storage, or all). */
  readonly size: (storage?: string) => number
}

interface Bucket {
  readonly objects: Map<string, KubeObject.KubeObject>
  sorted: Array<string> | undefined
}

/**
 * Creates an empty store (or one holding `options.initial`).
 *
 * @example
 * import * as Store from "./Store.ts"
 * const store = Store.make()
 * store.put("configmaps", { metadata: { namespace: "default", name: "a" } }, 0)
 * store.get("configmaps", "default", "a")?.metadata // { namespace: "default", name: "a", resourceVersion: "1" }
 */
export const make = (options: Options = {}): Store => {
  const capacity = Math.max(1, options.historySize ?? 10_000)
  const ring: Array<Event | undefined> = new Array(capacity)
  const buckets = new Map<string, Bucket>()
  const watchers = new Map<string, Set<(event: Event) => void>>()
  const subscribers = new Set<(event: Event) => void>()
  let revision = options.initial?.revision ?? 0
  const startRevision = revision

  const bucket = (storage: string): Bucket => {
    let b = buckets.get(storage)
    if (b === undefined) {
      b = { objects: new Map(), sorted: undefined }
      buckets.set(storage, b)
    }
    return b
  }
  for (const { object, storage } of options.initial?.objects ?? []) {
    const m = KubeObject.meta(object)
    bucket(storage).objects.set(KubeObject.key(m.namespace, m.name ?? ""), Compaction.compact(object))
  }

  const compactedRevision = () => Math.max(startRevision, revision - capacity)

  const revisionOf = (object: KubeObject.KubeObject | undefined): number =>
    object === undefined ? 0 : Number(KubeObject.meta(object).resourceVersion ?? 0)

  const matchesExpected = (current: KubeObject.KubeObject | undefined, expected: Expected) =>
    expected === undefined || revisionOf(current) === expected

  const publish = (event: Event) => {
    ring[event.revision % capacity] = event
    for (const s of subscribers) s(event)
    const ws = watchers.get(event.storage)
    if (ws !== undefined) for (const w of ws) w(event)
  }

  const inNamespace = (namespace: string | undefined) => {
    if (namespace === undefined) return () => true
    const prefix = `${namespace}/`
    return (key: string) => key.startsWith(prefix)
  }

  const sortedKeys = (b: Bucket): Array<string> => (b.sorted ??= [...b.objects.keys()].sort(compareKeys))

  // The keys of one namespace are one run of the sorted keys, and a continue key starts a suffix of
  // them: both are found by bisection, so listing a namespace, or a page far into a long list, does
  // not walk every stored key.
  const range = (keys: ReadonlyArray<string>, namespace: string | undefined, after: string | undefined) => {
    // "/" is followed by "0": every key of the namespace sorts before `${namespace}0`.
    const start = namespace === undefined ? 0 : firstFrom(keys, `${namespace}/`, false)
    const end = namespace === undefined ? keys.length : firstFrom(keys, `${namespace}0`, false)
    return { start: after === undefined ? start : Math.max(start, firstFrom(keys, after, true)), end }
  }

  const list: Store["list"] = (storage, namespace, after, limit) => {
    const b = buckets.get(storage)
    if (b === undefined) return []
    const keys = sortedKeys(b)
    const { start, end } = range(keys, namespace, after)
    const stop = limit === undefined ? end : Math.min(end, start + limit)
    const out: Array<KubeObject.KubeObject> = []
    for (let i = start; i < stop; i++) out.push(b.objects.get(keys[i]!)!)
    return out
  }

  const count: Store["count"] = (storage, namespace, after) => {
    const b = buckets.get(storage)
    if (b === undefined) return 0
    const { start, end } = range(sortedKeys(b), namespace, after)
    return Math.max(0, end - start)
  }

  const listAt: Store["listAt"] = (storage, namespace, at, after) => {
    if (at >= revision) return list(storage, namespace, after)
    if (at < compactedRevision()) return undefined
    const inside = inNamespace(namespace)
    const keep = after === undefined ? inside : (key: string) => key > after && inside(key)
    const state = new Map<string, KubeObject.KubeObject>()
    for (const [k, o] of buckets.get(storage)?.objects ?? []) if (keep(k)) state.set(k, o)
    for (let r = revision; r > at; r--) {
      const e = ring[r % capacity]!
      if (e.storage !== storage || !keep(e.key)) continue
      if (e.prev === undefined) state.delete(e.key)
      else state.set(e.key, e.prev)
    }
    return [...state.keys()].sort(compareKeys).map((k) => state.get(k)!)
  }

  const put: Store["put"] = (storage, object, expected) => {
    const m = KubeObject.meta(object)
    const key = KubeObject.key(m.namespace, m.name ?? "")
    const b = bucket(storage)
    const prev = b.objects.get(key)
    if (!matchesExpected(prev, expected)) return { _tag: "Conflict", current: prev }
    revision++
    const stored = Compaction.compact(KubeObject.withMeta(object, { resourceVersion: String(revision) }))
    if (prev === undefined) b.sorted = undefined
    b.objects.set(key, stored)
    const event: Event = {
      type: prev === undefined ? "ADDED" : "MODIFIED",
      storage,
      key,
      namespace: m.namespace ?? "",
      revision,
      object: stored,
      prev
    }
    publish(event)
    return { _tag: "Written", object: stored, event }
  }

  const remove: Store["remove"] = (storage, namespace, name, expected, last) => {
    const key = KubeObject.key(namespace, name)
    const b = buckets.get(storage)
    const prev = b?.objects.get(key)
    if (b === undefined || prev === undefined || !matchesExpected(prev, expected)) {
      return { _tag: "Conflict", current: prev }
    }
    revision++
    b.objects.delete(key)
    b.sorted = undefined
    const object = KubeObject.withMeta(last ?? prev, { resourceVersion: String(revision) })
    const event: Event = { type: "DELETED", storage, key, namespace, revision, object, prev }
    publish(event)
    return { _tag: "Written", object, event }
  }

  const watch: Store["watch"] = (storage, namespace, fromRevision, listener) => {
    if (fromRevision < compactedRevision()) return "Expired"
    const keep = inNamespace(namespace)
    const filtered = (e: Event) => {
      if (keep(e.key)) listener(e)
    }
    for (let r = Math.max(fromRevision, compactedRevision()) + 1; r <= revision; r++) {
      const e = ring[r % capacity]!
      if (e.storage === storage) filtered(e)
    }
    let set = watchers.get(storage)
    if (set === undefined) {
      set = new Set()
      watchers.set(storage, set)
    }
    const ws = set
    ws.add(filtered)
    return { cancel: () => ws.delete(filtered) }
  }

  return {
    revision: () => revision,
    compactedRevision,
    get: (storage, namespace, name) => buckets.get(storage)?.objects.get(KubeObject.key(namespace, name)),
    list,
    listAt,
    count,
    put,
    remove,
    watch,
    subscribe: (listener) => {
      subscribers.add(listener)
      return () => subscribers.delete(listener)
    },
    storages: () => [...buckets.keys()].filter((s) => buckets.get(s)!.objects.size > 0),
    snapshot: () => ({
      revision,
      objects: [...buckets].flatMap(([storage, b]) => [...b.objects.values()].map((object) => ({ storage, object })))
    }),
    size: (storage) =>
      storage === undefined
        ? [...buckets.values()].reduce((n, b) => n + b.objects.size, 0)
        : buckets.get(storage)?.objects.size ?? 0
  }
}

/** Keys are `namespace/name`, and "/" sorts below every character a namespace may hold: namespace first, then name. */
const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

// The first index of the sorted keys at or past `from` (`strictly`: past it).
const firstFrom = (keys: ReadonlyArray<string>, from: string, strictly: boolean): number => {
  let low = 0
  let high = keys.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (strictly ? keys[mid]! > from : keys[mid]! >= from) high = mid
    else low = mid + 1
  }
  return low
}
