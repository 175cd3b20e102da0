/**
 * A sharded controller's side of moving a key to another replica. The objects a replica owns carry
 * its identity in the `kubefx.dev/shard` label, and its primary informer watches only that label,
 * so its cache holds only its share. When the sharder wants a key elsewhere, it writes the
 * `kubefx.dev/shard-drain` annotation (naming the new owner) on the object; the owner releases
 * the key (its running reconcile ends, or is cut off after the drain timeout; its timers and retry
 * state are dropped), then acknowledges with `kubefx.dev/shard-drained: <identity>`. Only then does
 * the sharder write the new label, which takes the object out of the old owner's cache and into
 * the new one's, where it is reconciled afresh. A drain withdrawn before the move gives the key back.
 *
 * @since 0.1.0
 */
import { Controller as Engine, Shards, Trigger } from "@kubefx/core"
import { Duration, Effect, FiberMap, Schedule, Scope, Stream } from "effect"
import type * as Informer from "../cache/Informer.ts"
import * as Kube from "../client/Kube.ts"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"

/** The label naming the replica that owns an object. */
export const shardLabel = "kubefx.dev/shard"
/** Set by the sharder on an object to move: the replica it goes to. */
export const drainAnnotation = "kubefx.dev/shard-drain"
/** Set by the owner once it stopped running the object's key: its identity. */
export const drainedAnnotation = "kubefx.dev/shard-drained"

/**
 * Where an object stands, from its label and annotations.
 *
 * @example
 * import { Handover } from "@kubefx/kube"
 * Handover.placement({ metadata: { labels: { "kubefx.dev/shard": "replica-a" } } })
 * // { owner: "replica-a", draining: undefined, acknowledged: undefined }
 */
export const placement = (object: ObjectMeta.KubeObject): Shards.Placement => ({
  owner: object.metadata.labels?.[shardLabel],
  draining: object.metadata.annotations?.[drainAnnotation],
  acknowledged: object.metadata.annotations?.[drainedAnnotation]
})

/**
 * The label selector of a replica's share, within the controller's own selector.
 *
 * @example
 * import { Handover } from "@kubefx/kube"
 * Handover.selector("replica-a", "tier=web") // "tier=web,kubefx.dev/shard=replica-a"
 */
export const selector = (identity: string, labelSelector?: string | undefined): string =>
  labelSelector === undefined || labelSelector === "" ? `${shardLabel}=${identity}` : `${labelSelector},${shardLabel}=${identity}`

/**
 * A body's labels with the owned labels added (none added: the body's own, untouched).
 *
 * @example
 * import { Handover } from "@kubefx/kube"
 * Handover.withOwnedLabels({ app: "web" }, { "kubefx.dev/shard": "replica-a" })
 * // { labels: { app: "web", "kubefx.dev/shard": "replica-a" } }
 */
export const withOwnedLabels = (
  labels: unknown,
  owned: Readonly<Record<string, string>>
): { readonly labels?: Record<string, unknown> } => {
  if (Object.keys(owned).length === 0) return labels === undefined ? {} : { labels: labels as Record<string, unknown> }
  return { labels: { ...(labels as Record<string, unknown> | undefined), ...owned } }
}

export interface Options {
  readonly identity: string
  readonly resource: Resource.Resource
  /** How long a running reconcile of a key asked to move may go on before it is interrupted. */
  readonly drainTimeout: Duration.Duration
}

/** One controller of the primary kind on this replica: its engine and its cache of the kind. */
export interface Follower {
  readonly engine: Engine.Controller
  readonly informer: Informer.Informer<ObjectMeta.KubeObject>
}

const returned = Trigger.event("shard drain withdrawn")

/**
 * Follows the drain requests on the replica's objects of one kind for as long as the scope lasts,
 * for every controller of that kind on the replica: each releases a key asked to move, and the
 * replica acknowledges once every controller that caches the object has released it (each one's
 * runs of a key must end before the key runs elsewhere). A key is admitted back when the request is
 * withdrawn, or when the object leaves a controller's cache (so that it runs if it comes back).
 *
 * @example
 * import { Duration } from "effect"
 * import { Handover } from "@kubefx/kube"
 * declare const widgets: Handover.Follower
 * declare const resource: import("@kubefx/kube").Resource.Resource
 * const following = Handover.follow([widgets], { identity: "replica-a", resource, drainTimeout: Duration.seconds(30) })
 */
export const follow = (
  followers: ReadonlyArray<Follower>,
  options: Options
): Effect.Effect<void, never, Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const releases = yield* FiberMap.make<string>()
    // Per follower, the keys whose release completed: nothing of theirs runs there any more.
    const drained = followers.map(() => new Set<string>())
    const acknowledged = new Set<string>()
    const acknowledge = (key: string) =>
      Effect.suspend(() => {
        const cached = followers.map(({ informer }) => informer.get(key))
        const object = cached.find((o) => o !== undefined)
        const pending = cached.some((o, i) => o !== undefined && !drained[i]!.has(key))
        if (object === undefined || pending || acknowledged.has(key)) return Effect.void
        acknowledged.add(key)
        const { name = "", namespace } = object.metadata
        return kube.patch(options.resource, name, namespace, { metadata: { annotations: { [drainedAnnotation]: options.identity } } }, {
          type: "merge",
          fieldManager: "kubefx-shard-handover"
        }).pipe(
          // Until it lands or the object is gone: the sharder moves nothing without it.
          Effect.retry({ while: (error) => error._tag !== "NotFound", schedule: Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("5 seconds")]) }),
          Effect.catch((error) => Effect.logDebug(`no acknowledgement for ${key}: ${error.message}`))
        )
      })
    // The release still going is stopped first, so that it cannot mark the key drained after this.
    const admit = (index: number, key: string) =>
      Effect.andThen(
        FiberMap.remove(releases, `${index}/${key}`),
        Effect.suspend(() => {
          drained[index]!.delete(key)
          acknowledged.delete(key)
          return followers[index]!.engine.admit(key)
        })
      )
    const handle = (index: number, change: Informer.Change<ObjectMeta.KubeObject>): Effect.Effect<void> => {
      const { engine } = followers[index]!
      const key = ObjectMeta.key(change.object)
      if (change._tag === "Deleted") {
        // The object left this cache: what the others still hold may be all that was waited for.
        return engine.isReleased(key) ? Effect.andThen(admit(index, key), acknowledge(key)) : Effect.void
      }
      const { acknowledged: by, draining, owner } = placement(change.object)
      if (owner !== options.identity) return Effect.void
      if (draining !== undefined) {
        if (by === options.identity) return Effect.void
        // The object does not carry this replica's acknowledgement (a new request, or one whose
        // cancel and renewal reached a relisting cache as a single change): acknowledge it once
        // released, even if an earlier request of the key was acknowledged.
        acknowledged.delete(key)
        const release = Effect.andThen(
          engine.release(key, { drainTimeout: options.drainTimeout }),
          Effect.andThen(Effect.sync(() => drained[index]!.add(key)), acknowledge(key))
        )
        return FiberMap.run(releases, `${index}/${key}`, release, { onlyIfMissing: true }).pipe(Effect.asVoid)
      }
      return engine.isReleased(key) ? Effect.andThen(admit(index, key), engine.enqueue(key, returned)) : Effect.void
    }
    yield* Effect.forEach(followers, ({ informer }, index) =>
      Effect.forkScoped(Stream.runForEach(informer.changes, (change) => handle(index, change))), { discard: true })
  })
