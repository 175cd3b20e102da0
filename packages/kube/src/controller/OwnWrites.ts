/**
 * The writes a controller's runs made, each kept until the watch brings it back, so that the event
 * carrying nothing but a run's own write does not run that key again: the run had the server's
 * answer already (R16; JOSDK's filtering of events of its own updates). An object is matched by its
 * kind, key and resourceVersion, and only for the key whose run wrote it: other keys the object maps
 * to are still woken, and so is the writer by anyone else's change, a later version or a deletion.
 *
 * Internal to the controller.
 *
 * @since 0.1.0
 */
import { Array as Arr, Effect } from "effect"
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
}

interface Written {
  readonly resourceVersion: string
  readonly writer: string
}

const kindOf = (resource: Resource.Resource) => `${resource.kind}.${resource.group}`

/**
 * Own writes of the kinds `caches` has, at most `capacity` awaiting their echo (the oldest is
 * dropped: its echo then runs the key, as any event does).
 *
 * @example
 * const writes = OwnWrites.make([primary, ...secondaries])
 * writes.record(ConfigMap, answer, "default/a")
 * writes.writerOf(ConfigMap, { _tag: "Added", object: answer }) // "default/a"
 */
export const make = (caches: Iterable<Informer.Informer<any>>, capacity = 4096): OwnWrites => {
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
    const id = `${kindOf(resource)} ${key}`
    written.delete(id)
    written.set(id, { resourceVersion, writer })
    if (written.size() > capacity) written.delete(written.oldest()!)
  }

  const writerOf = (resource: Resource.Resource, change: Informer.Change<ObjectMeta.KubeObject>) => {
    const known = answered.get(change)
    if (known !== undefined || written.size() === 0) return known
    const kind = kindOf(resource)
    const id = `${kind} ${ObjectMeta.key(change.object)}`
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

  return { record, writerOf }
}

/**
 * `kube` with the answers of its writes (create, replace, apply, patch) recorded as `writer`'s.
 *
 * @example
 * const kube = OwnWrites.recording(writes, client, "default/a")
 */
export const recording = (self: OwnWrites, kube: Kube.Client, writer: string): Kube.Client => {
  const kept = <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>) => (answer: A) => {
    self.record(resource, answer, writer)
    return answer
  }
  return {
    ...kube,
    create: (resource, object, options) => Effect.map(kube.create(resource, object, options), kept(resource)),
    replace: (resource, object, options) => Effect.map(kube.replace(resource, object, options), kept(resource)),
    apply: (resource, body, options) => Effect.map(kube.apply(resource, body, options), kept(resource)),
    patch: (resource, name, namespace, patch, options) => Effect.map(kube.patch(resource, name, namespace, patch, options), kept(resource))
  }
}
