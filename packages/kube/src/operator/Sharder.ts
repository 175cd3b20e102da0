/**
 * The sharding component of a sharded operator, run by the replica that holds the sharder Lease:
 * for one controller's primary kind, it keeps every object labelled with the live member that
 * `Shards` names for its key, moving a key from a live owner only through the drain protocol of
 * `Handover` (drain, the owner's acknowledgement, then the new label), and from a gone owner (its
 * member Lease deleted or expired) at once. Every write carries the object's resourceVersion, so a
 * decision taken on a stale view is refused and taken again.
 *
 * It caches only the objects' metadata, and is itself a kubefx engine: per-key serial, retried
 * with backoff, every key looked at again when the membership changes.
 *
 * @since 0.1.0
 */
import { Controller as Engine, Outcome, Shards, Trigger } from "@kubefx/core"
import { Effect, Schema, Scope, Stream } from "effect"
import * as Handover from "../controller/Handover.ts"
import * as Informer from "../cache/Informer.ts"
import * as Kube from "../client/Kube.ts"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"
import type * as Membership from "./Membership.ts"

export interface Options {
  /** Names the sharder's engine (`<controller>-sharder` in metrics). */
  readonly name: string
  readonly resource: Resource.Resource
  /** The one namespace whose objects it labels; with neither this nor `namespaces`, every namespace's. */
  readonly namespace?: string | undefined
  /** The namespaces whose objects it labels, each cached apart (a controller's `namespaces`). */
  readonly namespaces?: ReadonlyArray<string> | undefined
  readonly labelSelector?: string | undefined
  readonly members: Membership.Members
}

export interface Sharder {
  readonly name: string
  /** Starts moving keys (this replica holds the sharder Lease). */
  readonly resume: Effect.Effect<void>
  /** Stops moving keys; a write under way finishes. */
  readonly hold: Effect.Effect<void>
  /** Objects per owner ("" for none yet), and how many are being drained. */
  readonly assignment: () => { readonly keys: Readonly<Record<string, number>>; readonly draining: number }
  readonly awaitIdle: Effect.Effect<void>
}

const MetadataOnly = Schema.Struct({
  apiVersion: Schema.optionalKey(Schema.String),
  kind: Schema.optionalKey(Schema.String),
  metadata: ObjectMeta.ObjectMeta
})

const membershipChanged = Trigger.event("shard members changed")

/**
 * Starts a sharder in the current scope, held until `resume`.
 *
 * @example
 * import { Effect } from "effect"
 * import { Membership, Sharder } from "@kubefx/kube"
 * declare const Widget: import("@kubefx/kube").Resource.Resource
 * const program = Effect.gen(function*() {
 *   const members = yield* Membership.observe({ group: "widgets-operator", namespace: "operators" })
 *   const sharder = yield* Sharder.make({ name: "widgets-sharder", resource: Widget, members })
 *   yield* sharder.resume
 * })
 */
export const make = (options: Options): Effect.Effect<Sharder, never, Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const { members, resource } = options
    const metadata: Resource.Resource = { ...resource, schema: MetadataOnly as unknown as Resource.Resource["schema"] }
    const informer = Informer.merge(yield* Effect.forEach(options.namespaces ?? [options.namespace], (namespace) =>
      Informer.make(metadata, { namespace, labelSelector: options.labelSelector })))
    let ring = { live: members.live(), ring: Shards.ring(members.live()) }
    const currentRing = () => {
      const live = members.live()
      if (live !== ring.live) ring = { live, ring: Shards.ring(live) }
      return ring.ring
    }

    const write = (object: ObjectMeta.KubeObject, metadataPatch: Record<string, unknown>) =>
      kube.patch(resource, object.metadata.name ?? "", object.metadata.namespace, {
        metadata: { resourceVersion: object.metadata.resourceVersion, ...metadataPatch }
      }, { type: "merge", fieldManager: "kubefx-sharder" })

    const cleared = { [Handover.drainAnnotation]: null, [Handover.drainedAnnotation]: null }
    const place = (key: string) =>
      Effect.suspend(() => {
        const object = informer.get(key)
        if (object === undefined || !members.known()) return Effect.succeed(Outcome.done)
        const step = Shards.decide(key, Handover.placement(object), currentRing())
        switch (step._tag) {
          case "Keep":
            return Effect.succeed(Outcome.done)
          case "Assign":
            return Effect.as(write(object, { labels: { [Handover.shardLabel]: step.to }, annotations: cleared }), Outcome.done)
          case "Drain":
            return Effect.as(write(object, { annotations: { [Handover.drainAnnotation]: step.to, [Handover.drainedAnnotation]: null } }), Outcome.done)
          case "Cancel":
            return Effect.as(write(object, { annotations: cleared }), Outcome.done)
        }
      })

    const engine = yield* Engine.make({
      name: options.name,
      reconcile: place,
      // Label writes are small and independent: many in flight keep a large first assignment short.
      concurrency: 16,
      held: true,
      source: Stream.merge(
        informer.changes.pipe(Stream.map((change) =>
          change._tag === "Deleted" ? Engine.forget(ObjectMeta.key(change.object)) : Engine.enqueue(ObjectMeta.key(change.object))
        )),
        members.changes.pipe(
          Stream.drop(1),
          Stream.flatMap(() => Stream.fromIterable(informer.keys().map((key) => Engine.enqueue(key, membershipChanged))))
        )
      )
    })
    yield* informer.awaitSynced

    return {
      name: options.name,
      resume: Effect.andThen(
        Effect.suspend(() => Effect.forEach(informer.keys(), (key) => engine.enqueue(key, Trigger.resync), { discard: true })),
        engine.resume
      ),
      hold: engine.hold(),
      assignment: () => {
        const keys: Record<string, number> = {}
        let draining = 0
        for (const object of informer.list()) {
          const where = Handover.placement(object)
          keys[where.owner ?? ""] = (keys[where.owner ?? ""] ?? 0) + 1
          if (where.draining !== undefined) draining++
        }
        return { keys, draining }
      },
      awaitIdle: engine.awaitIdle
    } satisfies Sharder
  })
