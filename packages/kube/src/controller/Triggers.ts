/**
 * What makes a controller reconcile a key, as streams of engine events: changes of the primary
 * (filtered by the generation predicate), objects that stop or start decoding, changes of owned
 * objects (to their controller owner), of watched objects (through the user's map), and a
 * secondary kind becoming served. A change that only brings back a run's own write does not
 * reconcile the key whose run wrote it (`OwnWrites`).
 *
 * Internal to the controller.
 *
 * @since 0.1.0
 */
import { Controller as Engine, Trigger } from "@kubefx/core"
import { Result, Stream } from "effect"
import type * as Informer from "../cache/Informer.ts"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"
import type * as OwnWrites from "./OwnWrites.ts"

const added: Trigger.Trigger = { _tag: "Event", detail: "added" }

// A related object that came with a list is one of many: it waits behind fresh changes.
const related = <A extends ObjectMeta.KubeObject>(kind: string, change: Informer.Change<A>): Trigger.Trigger => ({
  _tag: "Related",
  source: `${kind} ${ObjectMeta.key(change.object)}`,
  ...(change._tag === "Added" && change.listed ? { bulk: true } : {})
})

/**
 * Adds and worthwhile updates enqueue the key; a deletion forgets it (after `onDeleted`).
 *
 * @example
 * const events = Triggers.primary(informer, Controller.generationChanged, (key) => {}, writes)
 */
export const primary = <A extends ObjectMeta.KubeObject>(
  informer: Informer.Informer<A>,
  predicate: (previous: A, next: A) => boolean,
  onDeleted: (key: string) => void,
  writes: OwnWrites.OwnWrites
): Stream.Stream<Engine.Event> =>
  informer.changes.pipe(
    Stream.filterMap((change): Result.Result<Engine.Event, void> => {
      const key = ObjectMeta.key(change.object)
      const writer = writes.writerOf(informer.resource, change)
      if (change._tag === "Deleted") {
        onDeleted(key)
        return Result.succeed(Engine.forget(key))
      }
      // Listed objects come many at once: they wait behind fresh changes (Trigger.listed is low priority).
      const event = change._tag === "Added"
        ? Engine.enqueue(key, change.listed ? Trigger.listed : added)
        : predicate(change.previous, change.object)
        ? Engine.enqueue(key, updated)
        : undefined
      if (event === undefined) return Result.failVoid
      return sendUnlessWriter(writes, change, event, writer) ? Result.succeed(event) : Result.failVoid
    })
  )

const updated: Trigger.Trigger = { _tag: "Event", detail: "updated" }

// An event for the key whose run wrote the change is not sent (held, while that write is in flight).
const sendUnlessWriter = (
  writes: OwnWrites.OwnWrites,
  change: Informer.Change<ObjectMeta.KubeObject>,
  event: Engine.Event,
  writer: string | undefined
): boolean => {
  if (event.key !== writer) return true
  writes.hold(change, event)
  return false
}

/** An object the API server holds but the resource's Schema does not decode. */
export interface Undecodable {
  readonly object: unknown
  readonly error: Resource.DecodeError
}

/**
 * An object that stops decoding is reconciled (its run fails with the decode error, see
 * `undecodable`); one that decodes again is reconciled, or forgotten if it is gone.
 *
 * @example
 * const undecodable = new Map<string, Triggers.Undecodable>()
 * const events = Triggers.validity(informer, undecodable)
 */
export const validity = <A extends ObjectMeta.KubeObject>(
  informer: Informer.Informer<A>,
  undecodable: Map<string, Undecodable>
): Stream.Stream<Engine.Event> =>
  informer.validity.pipe(
    Stream.map((validity): Engine.Event => {
      if (validity._tag === "Valid") {
        undecodable.delete(validity.key)
        return informer.get(validity.key) === undefined
          ? Engine.forget(validity.key)
          : Engine.enqueue(validity.key, { _tag: "Event", detail: "decodes again" })
      }
      undecodable.set(validity.key, validity)
      return Engine.enqueue(validity.key, { _tag: "Event", detail: "does not decode" })
    })
  )

/**
 * A change of an owned object reconciles its controller owner of the primary kind; an update that
 * moved it to another owner (or orphaned it) reconciles the one it had too, as controller-runtime's
 * owner handler. An update `predicate` refuses reconciles nothing, unless it moved the object to
 * another owner.
 *
 * @example
 * const events = Triggers.owned(configMaps, Widget, writes)
 */
export const owned = <B extends ObjectMeta.KubeObject>(
  informer: Informer.Informer<B>,
  owner: Resource.Resource,
  writes: OwnWrites.OwnWrites,
  predicate?: ((previous: B, next: B) => boolean) | undefined
): Stream.Stream<Engine.Event> => {
  const ownerGroup = owner.apiVersion.split("/")[0]
  // The key of the object's controller owner of the primary kind, if it has one.
  const ownerKey = (object: B): string | undefined => {
    const references: ReadonlyArray<ObjectMeta.OwnerReference> = object.metadata.ownerReferences ?? []
    const reference = references.find((candidate) =>
      candidate.controller === true && candidate.kind === owner.kind && candidate.apiVersion.split("/")[0] === ownerGroup
    )
    return reference === undefined ? undefined : ObjectMeta.keyOf(owner.namespaced ? object.metadata.namespace : undefined, reference.name)
  }
  return perChunk(informer, (change, events) => {
    const writer = writes.writerOf(informer.resource, change)
    const now = ownerKey(change.object)
    const before = change._tag === "Updated" ? ownerKey(change.previous) : undefined
    // The writer is asked first: a refused change may be a run's echo, whose record it ends.
    if (change._tag === "Updated" && before === now && predicate !== undefined && !predicate(change.previous, change.object)) return
    if (now !== undefined) sendRelated(events, writes, informer, change, now, writer)
    if (before !== undefined && before !== now) sendRelated(events, writes, informer, change, before, writer)
  })
}

// A related change's event for `key`, unless `key` wrote the change.
const sendRelated = <B extends ObjectMeta.KubeObject>(
  events: Array<Engine.Event>,
  writes: OwnWrites.OwnWrites,
  informer: Informer.Informer<B>,
  change: Informer.Change<B>,
  key: string,
  writer: string | undefined
): void => {
  const event = Engine.enqueue(key, related(informer.resource.kind, change))
  if (sendUnlessWriter(writes, change, event, writer)) events.push(event)
}

// A chunk of changes (what the informer published together) becomes one chunk of events, or none;
// `mapAccumArray` is the stream's chunk-to-any-number map (no state to carry here).
const perChunk = <B extends ObjectMeta.KubeObject>(
  informer: Informer.Informer<B>,
  each: (change: Informer.Change<B>, events: Array<Engine.Event>) => void
): Stream.Stream<Engine.Event> =>
  informer.changes.pipe(Stream.mapAccumArray(() => undefined, (state, changes) => {
    const events: Array<Engine.Event> = []
    for (const change of changes) each(change, events)
    return [state, events]
  }))

/**
 * A change of a watched object reconciles the keys `map` names for it, and for an update also the
 * keys it named for the previous version (a primary the object no longer concerns hears that it
 * left, as controller-runtime's map handlers); an update `predicate` refuses reconciles nothing.
 *
 * @example
 * const events = Triggers.watched(configMaps, (cm) => [ObjectMeta.key(cm)], writes)
 */
export const watched = <B extends ObjectMeta.KubeObject>(
  informer: Informer.Informer<B>,
  map: (object: B) => Iterable<string>,
  writes: OwnWrites.OwnWrites,
  predicate?: ((previous: B, next: B) => boolean) | undefined
): Stream.Stream<Engine.Event> => {
  return perChunk(informer, (change, events) => {
    // The writer is asked first, as the owned trigger asks: a refused change may be a run's echo, whose record it ends.
    const writer = writes.writerOf(informer.resource, change)
    if (change._tag === "Updated" && predicate !== undefined && !predicate(change.previous, change.object)) return
    // Only an update has two versions to map, and so keys to merge.
    const keys = change._tag === "Updated" ? new Set([...map(change.object), ...map(change.previous)]) : map(change.object)
    for (const key of keys) sendRelated(events, writes, informer, change, key, writer)
  })
}

/**
 * A secondary kind that becomes served (its CRD installed after the controller started) can
 * activate nodes of every primary: reconcile them all.
 *
 * @example
 * const events = Triggers.served(configMaps, () => widgets.keys())
 */
export const served = (
  informer: Informer.Informer<ObjectMeta.KubeObject>,
  keys: () => ReadonlyArray<string>
): Stream.Stream<Engine.Event> =>
  informer.servedChanges.pipe(
    Stream.changes,
    Stream.drop(1),
    Stream.filter((isServed) => isServed),
    Stream.flatMap(() =>
      Stream.fromIterable(keys().map((key) => Engine.enqueue(key, { _tag: "Related", source: `${informer.resource.kind} now served`, bulk: true })))
    )
  )
