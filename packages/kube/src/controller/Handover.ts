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

export interface Options {
  readonly identity: string
  readonly resource: Resource.Resource
  /** How long a running reconcile of a key asked to move may go on before it is interrupted. */
  readonly drainTimeout: Duration.Duration
}

const returned = Trigger.event("shard drain withdrawn")

/**
 * Follows the drain requests on the replica's objects for as long as the scope lasts: releases and
 * acknowledges a key asked to move, and admits it back when the request is withdrawn or the object
 * leaves the cache (so that it runs again if it ever comes back).
 *
 * @example
 * import { Duration } from "effect"
 * import { Handover } from "@kubefx/kube"
 * declare const engine: import("@kubefx/core").Controller.Controller
 * declare const informer: import("@kubefx/kube").Informer.Informer<import("@kubefx/kube").ObjectMeta.KubeObject>
 * declare const resource: import("@kubefx/kube").Resource.Resource
 * const following = Handover.follow(engine, informer, { identity: "replica-a", resource, drainTimeout: Duration.seconds(30) })
 */
export const follow = <A extends ObjectMeta.KubeObject>(
  engine: Engine.Controller,
  informer: Informer.Informer<A>,
  options: Options
): Effect.Effect<void, never, Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const releases = yield* FiberMap.make<string>()
    const acknowledge = (object: A) => {
      const { name = "", namespace } = object.metadata
      return kube.patch(options.resource, name, namespace, { metadata: { annotations: { [drainedAnnotation]: options.identity } } }, {
        type: "merge",
        fieldManager: "kubefx-shard-handover"
      }).pipe(
        // Until it lands or the object is gone: the sharder moves nothing without it.
        Effect.retry({ while: (error) => error._tag !== "NotFound", schedule: Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("5 seconds")]) }),
        Effect.catch((error) => Effect.logDebug(`no acknowledgement for ${ObjectMeta.key(object)}: ${error.message}`))
      )
    }
    const handle = (change: Informer.Change<A>): Effect.Effect<void> => {
      const key = ObjectMeta.key(change.object)
      if (change._tag === "Deleted") {
        return engine.isReleased(key) ? Effect.andThen(FiberMap.remove(releases, key), engine.admit(key)) : Effect.void
      }
      const { acknowledged, draining, owner } = placement(change.object)
      if (owner !== options.identity) return Effect.void
      if (draining !== undefined) {
        if (acknowledged === options.identity) return Effect.void
        const release = Effect.andThen(engine.release(key, { drainTimeout: options.drainTimeout }), acknowledge(change.object))
        return FiberMap.run(releases, key, release, { onlyIfMissing: true }).pipe(Effect.asVoid)
      }
      if (!engine.isReleased(key)) return Effect.void
      return Effect.andThen(
        FiberMap.remove(releases, key),
        Effect.andThen(engine.admit(key), engine.enqueue(key, returned))
      )
    }
    yield* Effect.forkScoped(Stream.runForEach(informer.changes, handle))
  })
