/**
 * An informer: a local, indexed cache of one resource kept current by a `Watcher`, and a stream of
 * changes for controllers. A relist is diffed against the cache, so an object deleted or changed while
 * the watch was down still produces its event.
 *
 * @since 0.1.0
 */
import { Deferred, Effect, Latch, PubSub, Scope, Stream, SubscriptionRef } from "effect"
import type * as Kube from "../client/Kube.ts"
import type * as KubeError from "../client/KubeError.ts"
import { Interning } from "@kubefx/schema/objects"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"
import * as Watcher from "./Watcher.ts"

// Whether the cache's copy (or its absence) answers a wait for `version`: a version that cannot be
// ordered against it is another one, so it counts as newer.
const reached = (current: ObjectMeta.KubeObject | undefined, version: string | undefined, orEqual: boolean): boolean => {
  if (current === undefined) return true
  const order = ObjectMeta.compareVersions(current.metadata.resourceVersion, version) ?? 1
  return orEqual ? order >= 0 : order > 0
}

const rawVersion = (object: unknown): unknown =>
  (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion

export type Change<A> =
  /** `listed`: it came with a list (the first, a relist, or the cache's contents for a new subscriber). */
  | { readonly _tag: "Added"; readonly object: A; readonly listed?: true }
  /** `listed`: found by a relist, which may have folded several versions into this one change. */
  | { readonly _tag: "Updated"; readonly previous: A; readonly object: A; readonly listed?: true }
  | { readonly _tag: "Deleted"; readonly object: A }

/**
 * Whether an object of the resource decodes: `Invalid` when one does not (it is not in the cache,
 * and was removed from it if it was there), `Valid` once it does again or is gone.
 */
export type Validity =
  | { readonly _tag: "Invalid"; readonly key: string; readonly object: unknown; readonly error: Resource.DecodeError }
  | { readonly _tag: "Valid"; readonly key: string }

export interface Informer<A extends ObjectMeta.KubeObject> {
  readonly resource: Resource.Resource<A>
  /** The namespace it lists and watches, if only one. */
  readonly namespace?: string | undefined
  /** The informers of one namespace each that a merged informer reads (see `merge`). */
  readonly parts?: ReadonlyArray<Informer<A>> | undefined
  /** The label selector its list and watch use, if any: the cache holds only what it selects. */
  readonly labelSelector?: string | undefined
  /** The field selector its list and watch use, if any: the cache holds only what it selects. */
  readonly fieldSelector?: string | undefined
  /** The cached object under a key ("namespace/name"). */
  readonly get: (key: string) => A | undefined
  /** Cached objects, optionally of one namespace and with these labels (from the label index when indexed). */
  readonly list: (filter?: {
    readonly namespace?: string | undefined
    readonly labels?: Readonly<Record<string, string>> | undefined
  }) => ReadonlyArray<A>
  /**
   * Cached objects an index of the `indexes` option finds under `value`. An index the informer was
   * not made with is a programming error: it throws, naming the indexes there are.
   */
  readonly byIndex: (index: string, value: string) => ReadonlyArray<A>
  /**
   * Cached objects whose controller owner (the ownerReference with `controller: true`) has this
   * uid, from an index built by the first call and kept from then on.
   */
  readonly ownedBy: (uid: string) => ReadonlyArray<A>
  readonly keys: () => ReadonlyArray<string>
  readonly size: () => number
  /** Whether the first list has been loaded. */
  readonly hasSynced: () => boolean
  readonly awaitSynced: Effect.Effect<void>
  /**
   * Why its list or watch last failed (a 403 from missing RBAC, a 5xx, a refused connection), until
   * a list, an event or a bookmark gets through again: what to say when the cache does not sync,
   * or when a synced one may be going stale.
   */
  readonly failure: () => KubeError.KubeError | Resource.DecodeError | undefined
  /**
   * Whether the server serves the kind. An informer on a kind whose CRD is not installed is synced
   * and empty, and becomes served (with its objects) once the CRD appears.
   */
  readonly served: () => boolean
  /** The served state, now and at every change. */
  readonly servedChanges: Stream.Stream<boolean>
  /**
   * Every cached object as `Added`, then every change, for as long as the stream is consumed.
   * Subscribers never miss a change; they may see one twice.
   */
  readonly changes: Stream.Stream<Change<A>>
  /**
   * Every object that does not decode as `Invalid`, then every change of that, for as long as the
   * stream is consumed: what a controller reports on the object instead of reconciling it.
   */
  readonly validity: Stream.Stream<Validity>
  /**
   * Waits until the cache holds the key at a version newer than `resourceVersion` (any other version,
   * when the two cannot be ordered), or no longer holds it.
   */
  readonly awaitNewerThan: (key: string, resourceVersion: string | undefined) => Effect.Effect<void>
  /** Waits until the cache holds the key at `resourceVersion` or newer, or no longer holds it. */
  readonly awaitVersion: (key: string, resourceVersion: string | undefined) => Effect.Effect<void>
}

/** The watch's options; `transform` defaults to `stripManagedFields`. */
export interface Options<A> extends Watcher.Options<A> {
  /** Label keys to index, for `list({ labels })` without a scan. */
  readonly indexLabels?: ReadonlyArray<string> | undefined
  /**
   * Named indexes, for `byIndex(name, value)` without a scan (controller-runtime's field indexers):
   * each function gives the values an object is found under (none, one or many), and runs on every
   * version the cache takes in, so it must be cheap and must not throw.
   */
  readonly indexes?: Readonly<Record<string, (object: A) => ReadonlyArray<string>>> | undefined
}

/**
 * Why the informer's list or watch is failing, as one line (the error's tag and message), or
 * undefined while it is not.
 *
 * @example
 * import { Builtins, Informer } from "@kubefx/kube"
 * declare const configMaps: Informer.Informer<Builtins.ConfigMap>
 * Informer.failing(configMaps) // "Forbidden: configmaps is forbidden: ..." or undefined
 */
export const failing = (informer: Pick<Informer<ObjectMeta.KubeObject>, "failure">): string | undefined => {
  const failure = informer.failure()
  return failure === undefined ? undefined : `${failure._tag}: ${failure.message}`
}

/**
 * Drops `metadata.managedFields`, which controllers rarely read and which can double an object's size,
 * and shares the strings many cached objects repeat (namespace, kind, labels, condition reasons...).
 *
 * @example
 * import { Informer } from "@kubefx/kube"
 * Informer.stripManagedFields({ metadata: { name: "a", managedFields: [{}] } }).metadata.managedFields // undefined
 */
export const stripManagedFields = <A extends ObjectMeta.KubeObject>(object: A): A => {
  if (object.metadata.managedFields === undefined) return shareStrings(object)
  const { managedFields: _, ...metadata } = object.metadata
  return shareStrings({ ...object, metadata })
}

// The uid of an object's controller owner, "" when it has none.
const controllerUid = (object: ObjectMeta.KubeObject): string =>
  object.metadata.ownerReferences?.find((reference) => reference.controller === true)?.uid ?? ""

const strings = Interning.make()

type Writable = Record<string, unknown>

const shareIn = (record: unknown, keys?: ReadonlyArray<string>): void => {
  if (typeof record !== "object" || record === null) return
  const target = record as Writable
  for (const key of keys ?? Object.keys(target)) {
    const value = target[key]
    if (typeof value === "string") target[key] = strings.intern(value)
  }
}

// A cached object's strings that many objects repeat share one copy (equal values, so nothing
// observable changes); the decoded object is the cache's own, so they are replaced in place.
const shareStrings = <A extends ObjectMeta.KubeObject>(object: A): A => {
  shareIn(object, ["apiVersion", "kind"])
  const metadata = object.metadata as ObjectMeta.ObjectMeta
  shareIn(metadata, ["namespace", "creationTimestamp", "deletionTimestamp", "generateName"])
  shareIn(metadata.labels)
  shareIn(metadata.annotations)
  for (const owner of metadata.ownerReferences ?? []) shareIn(owner, ["apiVersion", "kind"])
  const conditions = (object as { readonly status?: { readonly conditions?: unknown } }).status?.conditions
  if (Array.isArray(conditions)) for (const condition of conditions) shareIn(condition, ["type", "status", "reason", "message", "lastTransitionTime"])
  return object
}

/**
 * Starts an informer in the current scope.
 *
 * @example
 * import { Effect } from "effect"
 * import { Builtins, Informer } from "@kubefx/kube"
 * const program = Effect.gen(function*() {
 *   const configMaps = yield* Informer.make(Builtins.ConfigMap, { namespace: "default" })
 *   yield* configMaps.awaitSynced
 *   return configMaps.size()
 * })
 */
// The watcher's events that stand for the whole collection: the cache is replaced, not changed.
type Whole<A> = Extract<Watcher.Event<A>, { readonly _tag: "Listed" | "NotServed" }>
type Failing = Extract<Watcher.Event<never>, { readonly _tag: "Failing" }>
type Health = Extract<Watcher.Event<never>, { readonly _tag: "Failing" | "Recovered" }>
const isWhole = <A>(event: Watcher.Event<A>): event is Whole<A> => event._tag === "Listed" || event._tag === "NotServed"

export const make = <A extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<A>,
  options: Options<A> = {}
): Effect.Effect<Informer<A>, never, Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const transform = options.transform ?? stripManagedFields
    const indexLabels = options.indexLabels ?? []
    const objects = new Map<string, A>()
    // Built by the first list of one namespace and kept from then on: an informer never asked for
    // one namespace does not pay a set entry per cached object.
    let byNamespace: Map<string, Set<string>> | undefined
    // Likewise by controller owner uid (objects with none are left out), built by the first `ownedBy`.
    let byOwner: Map<string, Set<string>> | undefined
    // Label terms ("app=web") and named index terms ("\u0000name\u0000value") in one map: a label
    // key cannot hold the NUL character, so the two never meet.
    const byTerm = new Map<string, Set<string>>()
    const indexes = Object.entries(options.indexes ?? {})
    const indexTerm = (name: string, value: string) => `\u0000${name}\u0000${value}`
    // `orEqual`: released by the version itself too (awaitVersion), not only by a newer one.
    const waiters = new Map<string, Array<{ readonly version: string | undefined; readonly orEqual: boolean; readonly done: Deferred.Deferred<void> }>>()
    const changes = yield* PubSub.unbounded<Change<A>>()
    const invalid = new Map<string, Extract<Validity, { _tag: "Invalid" }>>()
    const validity = yield* PubSub.unbounded<Validity>()
    const synced = yield* Latch.make(false)
    const served = yield* SubscriptionRef.make(true)
    let hasSynced = false
    let failure: Failing["error"] | undefined
    const markSynced = () => {
      if (!hasSynced) {
        hasSynced = true
        synced.openUnsafe()
      }
    }

    const indexAdd = (index: Map<string, Set<string>>, term: string, key: string) => {
      let keys = index.get(term)
      if (keys === undefined) index.set(term, keys = new Set())
      keys.add(key)
    }
    const indexRemove = (index: Map<string, Set<string>>, term: string, key: string) => {
      const keys = index.get(term)
      if (keys !== undefined && keys.delete(key) && keys.size === 0) index.delete(term)
    }
    const ownerAdd = (index: Map<string, Set<string>>, uid: string, key: string) => {
      if (uid !== "") indexAdd(index, uid, key)
    }
    const indexed = indexLabels.length > 0 || indexes.length > 0
    const termsOf = (object: A): Array<string> => {
      const terms: Array<string> = []
      for (const label of indexLabels) {
        const value = object.metadata.labels?.[label]
        if (value !== undefined) terms.push(`${label}=${value}`)
      }
      for (const [name, values] of indexes) for (const value of values(object)) terms.push(indexTerm(name, value))
      return terms
    }

    const release = (key: string, current: A | undefined) => {
      const pending = waiters.get(key)
      if (pending === undefined) return
      const still = pending.filter((waiter) => {
        if (reached(current, waiter.version, waiter.orEqual)) {
          Deferred.doneUnsafe(waiter.done, Effect.void)
          return false
        }
        return true
      })
      if (still.length === 0) waiters.delete(key)
      else waiters.set(key, still)
    }

    // An update replaces the entry in place. Deleting and adding the key again would churn the map:
    // V8 then keeps each replaced table, and what it held, until a full collection, so every object
    // that passed through the cache would be copied into the old generation.
    const put = (key: string, object: A): A | undefined => {
      const previous = objects.get(key)
      objects.set(key, object)
      if (previous === undefined) {
        if (byNamespace !== undefined) indexAdd(byNamespace, object.metadata.namespace ?? "", key)
        if (byOwner !== undefined) ownerAdd(byOwner, controllerUid(object), key)
        if (indexed) for (const term of termsOf(object)) indexAdd(byTerm, term, key)
      } else {
        if (byOwner !== undefined) {
          const before = controllerUid(previous)
          const after = controllerUid(object)
          if (before !== after) {
            if (before !== "") indexRemove(byOwner, before, key)
            ownerAdd(byOwner, after, key)
          }
        }
        if (indexed) {
          const before = termsOf(previous)
          const after = termsOf(object)
          for (const term of before) if (!after.includes(term)) indexRemove(byTerm, term, key)
          for (const term of after) if (!before.includes(term)) indexAdd(byTerm, term, key)
        }
      }
      release(key, object)
      return previous
    }
    const remove = (key: string, object: A) => {
      objects.delete(key)
      if (byNamespace !== undefined) indexRemove(byNamespace, object.metadata.namespace ?? "", key)
      if (byOwner !== undefined) {
        const uid = controllerUid(object)
        if (uid !== "") indexRemove(byOwner, uid, key)
      }
      if (indexed) for (const term of termsOf(object)) indexRemove(byTerm, term, key)
    }

    // Keeps the undecodable objects' record; returns what to publish of it.
    const markValid = (key: string, into: Array<Validity>) => {
      if (invalid.delete(key)) into.push({ _tag: "Valid", key })
    }
    const markInvalid = (entry: Watcher.Undecodable, into: Array<Validity>) => {
      const marked = { _tag: "Invalid", key: entry.key, object: entry.object, error: entry.error } as const
      invalid.set(entry.key, marked)
      into.push(marked)
    }
    const publishValidity = (out: ReadonlyArray<Validity>) =>
      out.length === 0 ? Effect.void : Effect.asVoid(PubSub.publishAll(validity, out))

    const publish = (out: ReadonlyArray<Change<A>>, validityOut: ReadonlyArray<Validity>) =>
      Effect.andThen(out.length === 0 ? Effect.void : Effect.asVoid(PubSub.publishAll(changes, out)), publishValidity(validityOut))

    // An object's event changes the cache at once; what it publishes goes into `out`.
    const record = (
      event: Exclude<Watcher.Event<A>, Whole<A> | Health>,
      out: Array<Change<A>>,
      validityOut: Array<Validity>
    ): void => {
      if (event._tag === "Undecodable") {
        const cached = objects.get(event.key)
        if (cached !== undefined) {
          remove(event.key, cached)
          release(event.key, undefined)
          out.push({ _tag: "Deleted", object: cached })
        }
        if (event.deleted) markValid(event.key, validityOut)
        else markInvalid(event, validityOut)
        return
      }
      const object = event.object
      const key = ObjectMeta.key(object)
      markValid(key, validityOut)
      if (event._tag === "Deleted") {
        const previous = objects.get(key)
        if (previous !== undefined) remove(key, previous)
        release(key, undefined)
        out.push({ _tag: "Deleted", object })
      } else {
        const previous = put(key, object)
        out.push(previous === undefined ? { _tag: "Added", object } : { _tag: "Updated", previous, object })
      }
    }

    // A full list (or the kind no longer served) replaces the cache and marks it synced.
    const replace = (event: Whole<A>): Effect.Effect<void> =>
      Effect.suspend(() => {
        const out: Array<Change<A>> = []
        const validityOut: Array<Validity> = []
        if (event._tag === "NotServed") {
          for (const key of [...invalid.keys()]) markValid(key, validityOut)
          for (const [key, object] of objects) {
            remove(key, object)
            release(key, undefined)
            out.push({ _tag: "Deleted", object })
          }
          // The served state is set before the informer reports itself synced.
          return SubscriptionRef.set(served, false).pipe(
            Effect.andThen(Effect.sync(markSynced)),
            Effect.andThen(publish(out, validityOut))
          )
        }
        const seen = new Set<string>()
        for (const object of event.objects) {
          const key = ObjectMeta.key(object)
          seen.add(key)
          const previous = objects.get(key)
          if (previous?.metadata.resourceVersion === object.metadata.resourceVersion) continue
          put(key, object)
          out.push(previous === undefined ? { _tag: "Added", object, listed: true } : { _tag: "Updated", previous, object, listed: true })
        }
        for (const [key, object] of objects) {
          if (seen.has(key)) continue
          remove(key, object)
          release(key, undefined)
          out.push({ _tag: "Deleted", object })
        }
        const listedInvalid = new Set(event.undecodable.map((entry) => entry.key))
        for (const key of [...invalid.keys()]) if (!listedInvalid.has(key)) markValid(key, validityOut)
        for (const entry of event.undecodable) {
          const known = invalid.get(entry.key)
          if (known === undefined || rawVersion(known.object) !== rawVersion(entry.object)) markInvalid(entry, validityOut)
        }
        return SubscriptionRef.set(served, true).pipe(
          Effect.andThen(Effect.sync(markSynced)),
          Effect.andThen(publish(out, validityOut))
        )
      })

    // The watcher's events as they came (a watch read's worth at a time): the object events up to a
    // full list change the cache together and are published as one, then the list, and so on.
    const apply = (events: ReadonlyArray<Watcher.Event<A>>, from: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        const out: Array<Change<A>> = []
        const validityOut: Array<Validity> = []
        for (let index = from; index < events.length; index++) {
          const event = events[index]!
          if (event._tag === "Failing") {
            failure = event.error
            continue
          }
          failure = undefined
          if (event._tag === "Recovered") continue
          if (isWhole(event)) {
            return Effect.andThen(publish(out, validityOut), Effect.andThen(replace(event), apply(events, index + 1)))
          }
          record(event, out, validityOut)
        }
        return publish(out, validityOut)
      })

    yield* Watcher.watch(resource, { ...options, transform }).pipe(Stream.runForEachArray((events) => apply(events, 0)), Effect.forkScoped)

    const inNamespace = (namespace: string): Iterable<string> => {
      // A namespaced informer holds that namespace alone.
      if (options.namespace !== undefined) return namespace === options.namespace ? objects.keys() : []
      if (byNamespace === undefined) {
        byNamespace = new Map()
        for (const [key, object] of objects) indexAdd(byNamespace, object.metadata.namespace ?? "", key)
      }
      return byNamespace.get(namespace) ?? []
    }

    const list = (filter?: {
      readonly namespace?: string | undefined
      readonly labels?: Readonly<Record<string, string>> | undefined
    }): ReadonlyArray<A> => {
      let candidates: Iterable<string> = objects.keys()
      if (filter?.namespace !== undefined) candidates = inNamespace(filter.namespace)
      const labels = Object.entries(filter?.labels ?? {})
      const indexedLabel = labels.find(([label]) => indexLabels.includes(label))
      if (indexedLabel !== undefined) {
        const keys = byTerm.get(`${indexedLabel[0]}=${indexedLabel[1]}`) ?? new Set<string>()
        candidates = filter?.namespace === undefined ? keys : Array.from(candidates).filter((key) => keys.has(key))
      }
      const result: Array<A> = []
      for (const key of candidates) {
        const object = objects.get(key)!
        if (labels.every(([label, value]) => object.metadata.labels?.[label] === value)) result.push(object)
      }
      return result
    }

    const ownedBy = (uid: string): ReadonlyArray<A> => {
      if (byOwner === undefined) {
        byOwner = new Map()
        for (const [key, object] of objects) ownerAdd(byOwner, controllerUid(object), key)
      }
      return uid === "" ? [] : Array.from(byOwner.get(uid) ?? [], (key) => objects.get(key)!)
    }

    const byIndex = (index: string, value: string): ReadonlyArray<A> => {
      if (options.indexes?.[index] === undefined) {
        const known = indexes.map(([name]) => name)
        throw new Error(
          `the ${resource.kind} informer has no index ${index}: ${known.length === 0 ? "it was made with none" : `its indexes are ${known.join(", ")}`}`
        )
      }
      return Array.from(byTerm.get(indexTerm(index, value)) ?? [], (key) => objects.get(key)!)
    }

    const awaitVersion = (key: string, version: string | undefined, orEqual: boolean) =>
      Effect.suspend(() => {
        if (reached(objects.get(key), version, orEqual)) return Effect.void
        const done = Deferred.makeUnsafe<void>()
        waiters.set(key, [...(waiters.get(key) ?? []), { version, orEqual, done }])
        return Deferred.await(done)
      })

    const informer: Informer<A> = {
      resource,
      namespace: options.namespace,
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      get: (key) => objects.get(key),
      list,
      byIndex,
      ownedBy,
      keys: () => Array.from(objects.keys()),
      size: () => objects.size,
      hasSynced: () => hasSynced,
      awaitSynced: synced.await,
      failure: () => failure,
      served: () => SubscriptionRef.getUnsafe(served),
      servedChanges: SubscriptionRef.changes(served),
      changes: Stream.unwrap(Effect.gen(function*() {
        const subscription = yield* PubSub.subscribe(changes)
        const snapshot = Array.from(objects.values(), (object): Change<A> => ({ _tag: "Added", object, listed: true }))
        return Stream.concat(Stream.fromArray(snapshot), Stream.fromSubscription(subscription))
      })),
      validity: Stream.unwrap(Effect.gen(function*() {
        const subscription = yield* PubSub.subscribe(validity)
        return Stream.concat(Stream.fromArray([...invalid.values()]), Stream.fromSubscription(subscription))
      })),
      awaitNewerThan: (key, version) => awaitVersion(key, version, false),
      awaitVersion: (key, version) => awaitVersion(key, version, true)
    }
    return informer
  })

/**
 * Informers of one kind in several namespaces (each made with its `namespace`) as one: a key is
 * looked up, and waited for, in its namespace's informer; lists, indexes and changes cover them all;
 * synced once each one is. What a controller given `namespaces` caches its kinds in.
 *
 * @example
 * import { Effect } from "effect"
 * import { Builtins, Informer } from "@kubefx/kube"
 * const configMaps = Effect.map(
 *   Effect.forEach(["team-a", "team-b"], (namespace) => Informer.make(Builtins.ConfigMap, { namespace })),
 *   Informer.merge
 * )
 */
export const merge = <A extends ObjectMeta.KubeObject>(informers: ReadonlyArray<Informer<A>>): Informer<A> => {
  const [first] = informers
  if (first === undefined) throw new Error("Informer.merge needs at least one informer")
  if (informers.length === 1) return first
  const byNamespace = new Map(informers.map((informer) => [informer.namespace ?? "", informer]))
  const of = (key: string) => byNamespace.get(key.slice(0, Math.max(0, key.indexOf("/"))))
  const all = <B>(f: (informer: Informer<A>) => ReadonlyArray<B>): ReadonlyArray<B> => informers.flatMap(f)
  return {
    resource: first.resource,
    parts: informers,
    labelSelector: first.labelSelector,
    fieldSelector: first.fieldSelector,
    get: (key) => of(key)?.get(key),
    list: (filter) =>
      filter?.namespace === undefined ? all((informer) => informer.list(filter)) : byNamespace.get(filter.namespace)?.list(filter) ?? [],
    byIndex: (index, value) => all((informer) => informer.byIndex(index, value)),
    ownedBy: (uid) => all((informer) => informer.ownedBy(uid)),
    keys: () => all((informer) => informer.keys()),
    size: () => informers.reduce((total, informer) => total + informer.size(), 0),
    hasSynced: () => informers.every((informer) => informer.hasSynced()),
    awaitSynced: Effect.all(informers.map((informer) => informer.awaitSynced), { concurrency: "unbounded", discard: true }),
    failure: () => informers.map((informer) => informer.failure()).find((failure) => failure !== undefined),
    // One kind: its CRD is served, or not, in every namespace alike.
    served: first.served,
    servedChanges: first.servedChanges,
    changes: Stream.mergeAll(informers.map((informer) => informer.changes), { concurrency: "unbounded" }),
    validity: Stream.mergeAll(informers.map((informer) => informer.validity), { concurrency: "unbounded" }),
    awaitNewerThan: (key, version) => of(key)?.awaitNewerThan(key, version) ?? Effect.void,
    awaitVersion: (key, version) => of(key)?.awaitVersion(key, version) ?? Effect.void
  }
}
