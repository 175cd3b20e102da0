/**
 * The writes a controller's runs made, each kept until the watch brings it back, so that the event
 * carrying nothing but a run's own write does not run that key again: the run had the server's
 * answer already (R16; JOSDK's filtering of events of its own updates). An object is matched by its
 * kind, key and resourceVersion, and only for the key whose run wrote it: other keys the object maps
 * to are still woken, and so is the writer by anyone else's change, a later version or a deletion.
 *
 * The watch may bring a write back before its answer arrives (the server sends the event as it
 * commits; over HTTP/2, where both share one connection, it often does). A change of an object while the
 * writer's write of it is in flight is held, not sent to the writer: once the write ends, what was
 * not its version (someone else's change, or anything held by a write that failed) is sent.
 *
 * Internal to the controller.
 *
 * @since 0.1.0
 */
import type { Controller as Engine } from "@kubefx/core"
import { Array as Arr, Effect, Exit, identity } from "effect"
import type * as Informer from "../cache/Informer.ts"
import type * as Kube from "../client/Kube.ts"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"
import * as TransientMap from "../client/TransientMap.ts"

export interface OwnWrites {
  /** Keeps `answer`, the server's answer to a write of `writer`'s run, if a cache of its kind will bring it back. */
  readonly record: (resource: Resource.Resource, answer: ObjectMeta.KubeObject, writer: string) => void
  /**
   * The key whose run wrote this very version of the changed object, if one did. Every change of a
   * cached kind passes here: the write's version, a later one or a deletion ends the record. The
   * same change asked about again (by each trigger its informer feeds) gets the same answer.
   */
  readonly writerOf: (resource: Resource.Resource, change: Informer.Change<ObjectMeta.KubeObject>) => string | undefined
  /**
   * The event a trigger did not send to the writer `writerOf` named for `change`: when that write is
   * still in flight, it is sent once the write ends unless the change was that write's.
   */
  readonly hold: (change: Informer.Change<ObjectMeta.KubeObject>, event: Engine.Event) => void
  /** A write of the object `key` of `resource` by `writer`'s run begins; undefined when no cache of its kind will bring it back. */
  readonly begin: (resource: Resource.Resource, key: string, writer: string) => Pending | undefined
  /** The write ended: with the server's answer, or none (it failed, or was not sent). Its answer is recorded as `record` does. */
  readonly end: (pending: Pending, answer: ObjectMeta.KubeObject | undefined) => void
}

/** A write in flight, from `begin` to `end`. */
export interface Pending {
  readonly resource: Resource.Resource
  readonly id: string
  readonly writer: string
  readonly flight: Flight
}

// The writes of one object in flight (several when one run writes it concurrently), and the changes
// held for their writer meanwhile.
interface Flight {
  readonly writer: string
  writes: number
  /** Another key's run writes the same object meanwhile: nothing is held for either. */
  contested: boolean
  readonly answered: Set<string>
  readonly held: Array<{ readonly change: Informer.Change<ObjectMeta.KubeObject>; readonly event: Engine.Event }>
}

export interface Options {
  /** At most this many writes awaiting their echo (the oldest is dropped: its echo then runs the key, as any event does). */
  readonly capacity?: number | undefined
  /** Sends the events held while a write was in flight that were not its echo. */
  readonly redeliver?: ((events: ReadonlyArray<Engine.Event>) => void) | undefined
}

interface Written {
  readonly resourceVersion: string
  readonly writer: string
}

const kindOf = (resource: Resource.Resource) => `${resource.kind}.${resource.group}`

/**
 * Own writes of the kinds `caches` has.
 *
 * @example
 * const writes = OwnWrites.make([primary, ...secondaries], { redeliver: (events) => {} })
 * writes.record(ConfigMap, answer, "default/a")
 * writes.writerOf(ConfigMap, { _tag: "Added", object: answer }) // "default/a"
 */
export const make = (caches: Iterable<Informer.Informer<any>>, options: Options = {}): OwnWrites => {
  const capacity = options.capacity ?? 4096
  const redeliver = options.redeliver ?? (() => {})
  // A kind may have several caches (owned and watched through different selectors): the echo is in
  // whichever of them selects the object.
  const byKind: Readonly<Record<string, ReadonlyArray<Informer.Informer<any>>>> = Arr.groupBy(caches, (informer) => kindOf(informer.resource))
  // Each write's record lives until its echo: a transient map, so V8 does not keep what went through.
  const written = TransientMap.make<string, Written>()
  // A kind both owned and watched, or a primary kind also watched, reaches two triggers through one
  // informer, which hands each the same change: the record ends with the first, the answer stays.
  const answered = new WeakMap<Informer.Change<ObjectMeta.KubeObject>, string>()

  const record = (resource: Resource.Resource, answer: ObjectMeta.KubeObject, writer: string) => {
    const informers = byKind[kindOf(resource)]
    const resourceVersion = answer.metadata.resourceVersion
    if (informers === undefined || resourceVersion === undefined) return
    const key = ObjectMeta.key(answer)
    // The echo came before the answer: nothing is left to wait for.
    for (const informer of informers) {
      const cached = informer.get(key) as ObjectMeta.KubeObject | undefined
      if (cached !== undefined && (ObjectMeta.compareVersions(cached.metadata.resourceVersion, resourceVersion) ?? -1) >= 0) return
    }
    remember(`${kindOf(resource)} ${key}`, resourceVersion, writer)
  }

  const remember = (id: string, resourceVersion: string, writer: string) => {
    written.delete(id)
    written.set(id, { resourceVersion, writer })
    if (written.size() > capacity) written.delete(written.oldest()!)
  }

  const inFlight = new Map<string, Flight>()
  // The changes `writerOf` named a writer for because its write was in flight, until held.
  const tentative = new WeakMap<Informer.Change<ObjectMeta.KubeObject>, Flight>()

  const writerOf = (resource: Resource.Resource, change: Informer.Change<ObjectMeta.KubeObject>) => {
    const known = answered.get(change)
    if (known !== undefined || (written.size() === 0 && inFlight.size === 0)) return known
    const kind = kindOf(resource)
    const id = `${kind} ${ObjectMeta.key(change.object)}`
    const echoed = echoOf(kind, id, change)
    if (echoed !== undefined) return echoed
    const flight = inFlight.get(id)
    if (flight === undefined || flight.contested || change._tag === "Deleted") return undefined
    tentative.set(change, flight)
    return flight.writer
  }

  const hold = (change: Informer.Change<ObjectMeta.KubeObject>, event: Engine.Event) => {
    tentative.get(change)?.held.push({ change, event })
  }

  const begin = (resource: Resource.Resource, key: string, writer: string): Pending | undefined => {
    const kind = kindOf(resource)
    if (byKind[kind] === undefined) return undefined
    const id = `${kind} ${key}`
    let flight = inFlight.get(id)
    if (flight === undefined) {
      flight = { writer, writes: 0, contested: false, answered: new Set(), held: [] }
      inFlight.set(id, flight)
    } else if (flight.writer !== writer) {
      flight.contested = true
    }
    flight.writes++
    return { resource, id, writer, flight }
  }

  const end = ({ flight, id, resource, writer }: Pending, answer: ObjectMeta.KubeObject | undefined) => {
    const version = answer?.metadata.resourceVersion
    if (version !== undefined) flight.answered.add(version)
    let echoed = false
    if (--flight.writes === 0) {
      inFlight.delete(id)
      const events: Array<Engine.Event> = []
      for (const { change, event } of flight.held) {
        const echo = change._tag !== "Deleted" && change.listed !== true &&
          flight.answered.has(change.object.metadata.resourceVersion ?? "")
        if (echo) answered.set(change, flight.writer)
        else events.push(event)
        echoed ||= echo
      }
      if (events.length > 0) redeliver(events)
    }
    // The echo one cache brought is still to come from the kind's other caches.
    if (version !== undefined && echoed && (byKind[kindOf(resource)]?.length ?? 0) > 1) remember(id, version, writer)
    else if (answer !== undefined) record(resource, answer, writer)
  }

  // The writer whose recorded write this change brings back, if it does.
  const echoOf = (kind: string, id: string, change: Informer.Change<ObjectMeta.KubeObject>) => {
    const entry = written.get(id)
    if (entry === undefined) return undefined
    const order = ObjectMeta.compareVersions(change.object.metadata.resourceVersion, entry.resourceVersion)
    // An older version may still be followed by the write's; anything else ends the wait, except
    // the write's own version in a kind with several caches, which each bring it back as a change of
    // their own: the record stays for them, until a later change or a deletion ends it. A relist's
    // change to the write's version may carry others' changes before it: it is not the write's.
    if (change._tag !== "Deleted" && order !== undefined && order < 0) return undefined
    const folded = change._tag === "Updated" && change.listed === true
    if (change._tag === "Deleted" || order !== 0 || folded || (byKind[kind]?.length ?? 0) < 2) written.delete(id)
    if (change._tag === "Deleted" || order !== 0 || folded) return undefined
    answered.set(change, entry.writer)
    return entry.writer
  }

  return { record, writerOf, hold, begin, end }
}

/**
 * `write` of the object `key` of `resource`, as `writer`'s run: `begin` before it is sent and `end`
 * with its answer (`answerOf` its result; undefined when nothing was sent) or with none.
 *
 * @example
 * const applied = OwnWrites.around(writes, ConfigMap, "default/a-config", "default/a", kube.apply(ConfigMap, body), (answer) => answer)
 */
export const around = <A, E, R>(
  self: OwnWrites,
  resource: Resource.Resource,
  key: string,
  writer: string,
  write: Effect.Effect<A, E, R>,
  answerOf: (result: A) => ObjectMeta.KubeObject | undefined
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const pending = self.begin(resource, key, writer)
    return pending === undefined
      ? Effect.map(write, (result) => {
        const answer = answerOf(result)
        if (answer !== undefined) self.record(resource, answer, writer)
        return result
      })
      : Effect.onExit(write, (exit) => Effect.sync(() => self.end(pending, Exit.isSuccess(exit) ? answerOf(exit.value) : undefined)))
  })

// The key of the object a write names (a namespaced one without its namespace matches no echo).
const keyIn = (resource: Resource.Resource, metadata: { readonly name?: string | undefined; readonly namespace?: string | undefined }) =>
  ObjectMeta.keyOf(resource.namespaced ? metadata.namespace : undefined, metadata.name ?? "")

/**
 * `kube` with the answers of its writes (create, replace, apply, patch) recorded as `writer`'s.
 *
 * @example
 * const kube = OwnWrites.recording(writes, client, "default/a")
 */
export const recording = (self: OwnWrites, kube: Kube.Client, writer: string): Kube.Client => {
  const kept = <A extends ObjectMeta.KubeObject, E>(resource: Resource.Resource<A>, key: string, write: Effect.Effect<A, E>) =>
    around(self, resource, key, writer, write, identity)
  return {
    ...kube,
    create: (resource, object, options) => kept(resource, keyIn(resource, object.metadata), kube.create(resource, object, options)),
    replace: (resource, object, options) => kept(resource, keyIn(resource, object.metadata), kube.replace(resource, object, options)),
    apply: (resource, body, options) => kept(resource, keyIn(resource, body.metadata), kube.apply(resource, body, options)),
    patch: (resource, name, namespace, patch, options) =>
      kept(resource, keyIn(resource, { name, namespace }), kube.patch(resource, name, namespace, patch, options))
  }
}
