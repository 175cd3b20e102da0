/**
 * A controller's writes of its primary's status, so that a run pays one status request: what the
 * reconciler states with `ctx.applyStatus` is staged and written once at the end of the run,
 * together with the `Ready` condition and `observedGeneration` (R10), under the controller's field
 * manager; a run that staged nothing writes `Ready` alone, and only when it changes, under a field
 * manager of its own, so the reconciler's fields stay owned by the last run that stated them.
 *
 * Internal to the controller: users reach it through `Controller.Context`.
 *
 * @since 0.1.0
 */
import { KubeObject } from "@kubefx/schema/objects"
import { Effect, Schema, SchemaAST } from "effect"
import type * as OverlayCache from "../cache/OverlayCache.ts"
import type * as Kube from "../client/Kube.ts"
import type * as KubeError from "../client/KubeError.ts"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import * as Resource from "../client/Resource.ts"
import * as Conditions from "./Conditions.ts"

/** Status as the API server reads it (encoded JSON). */
export type Status = Readonly<Record<string, unknown>>

type Written = KubeError.KubeError | Resource.DecodeError

export interface StatusWrites<A extends ObjectMeta.KubeObject> {
  /** A run of `key` starts on `object`: what it stages starts empty; its Ready speaks for this generation. */
  readonly begin: (key: string, object: A) => void
  /** The object is gone: forget what its runs saw. */
  readonly forget: (key: string) => void
  /** Adds status to what the run writes at its end (later fields win; conditions merge by type); answers the object as it will read. */
  readonly stage: (key: string, object: A, status: Status) => Effect.Effect<A, Resource.DecodeError>
  /** Applies status now under `manager` and keeps the answer in the overlay. */
  readonly applyNow: (body: Kube.ApplyBody, manager: string) => Effect.Effect<A, Written>
  /**
   * The run's one status write: what it staged with `ready` (the current Ready kept when
   * undefined), or `ready` alone under the Ready manager. Nothing is sent when nothing would change.
   * A failed run (`succeeded` false) keeps the recorded observedGeneration.
   */
  readonly finish: (key: string, ready: Conditions.Update | undefined, succeeded: boolean) => Effect.Effect<void, Written>
  /**
   * A key held by degraded dependencies says so in a `DependenciesReady=False` condition of its own
   * field manager (so the run's writes never remove it); best effort.
   */
  readonly held: (key: string, waitingFor: ReadonlyArray<string>) => Effect.Effect<void>
  /** Drops the `DependenciesReady` condition from an object that has it (a run went through). */
  readonly released: (key: string, object: A) => Effect.Effect<void, Written>
  /** R10 for an object known only as JSON: `Ready=False`, reason `DecodeError`; best effort. */
  readonly undecodable: (object: unknown, message: string) => Effect.Effect<void>
}

interface WithStatus {
  readonly status?: Status | undefined
}

const conditionsOf = (status: Status | undefined): ReadonlyArray<Conditions.Condition> =>
  (status?.conditions as ReadonlyArray<Conditions.Condition> | undefined) ?? []

const byType = (base: ReadonlyArray<Conditions.Condition>, updates: ReadonlyArray<Conditions.Condition>) =>
  updates.length === 0 ? base : [...base.filter((c) => !updates.some((u) => u.type === c.type)), ...updates]

/**
 * Later status over earlier, field by field; conditions merge by type.
 *
 * @example
 * mergeStatus({ phase: "a", conditions: [x] }, { url: "u", conditions: [y] }) // { phase: "a", url: "u", conditions: [x, y] }
 */
export const mergeStatus = (earlier: Status | undefined, later: Status): Status =>
  earlier === undefined ? later : {
    ...earlier,
    ...later,
    ...(later.conditions === undefined ? {} : { conditions: byType(conditionsOf(earlier), conditionsOf(later)) })
  }

// Whether applying `status` would change nothing the server holds (a condition compares by type).
// What the object holds is JSON (its encoded status, or the decoded one when the Schema transforms
// nothing), and what a run states is sent as JSON: compared as JSON, deeply, key order aside.
// Equal's structural hashing and memo tables took 3.5 us a condition against 0.15 us, in a loop.
const unchanged = (status: Status, current: Status | undefined): boolean =>
  Object.entries(status).every(([field, value]) =>
    field === "conditions"
      ? conditionsOf(status).every((c) => KubeObject.equals(c, Conditions.get(conditionsOf(current), c.type)))
      : KubeObject.equals(value, current?.[field])
  )

/**
 * The status writer of one controller.
 *
 * @example
 * const writes = StatusWrites.make({ kube, resource, overlay, fieldManager: "widgets", writeReady: true })
 */
export const make = <A extends ObjectMeta.KubeObject>(options: {
  readonly kube: Kube.Client
  readonly resource: Resource.Resource<A>
  readonly overlay: OverlayCache.OverlayCache<A>
  readonly fieldManager: string
  /** Whether runs write Ready and observedGeneration (R10). */
  readonly writeReady: boolean
}): StatusWrites<A> => {
  const { fieldManager, kube, overlay, resource, writeReady } = options
  const readyManager = `${fieldManager}-ready`
  // What each key's run has staged; a run's end clears its entry rather than deleting it, since a
  // map whose keys are deleted and added again run after run keeps what went through it alive in V8
  // until a full collection. `forget` deletes the key for good.
  const staged = new Map<string, Status | undefined>()
  const unstage = (key: string) => {
    if (staged.get(key) !== undefined) staged.set(key, undefined)
  }
  // The generation each key's latest run saw: what its Ready condition and observedGeneration
  // speak for, even if a newer one arrived while it ran (the follow-up run will speak for that).
  const seenGeneration = new Map<string, number | undefined>()

  // A resource whose Schema transforms nothing reads the same decoded as encoded: no encode per run.
  const identity = SchemaAST.toEncoded(resource.schema.ast) === resource.schema.ast
  const encodedStatus = (object: A): Effect.Effect<Status | undefined, Resource.DecodeError> =>
    identity
      ? Effect.succeed((object as A & WithStatus).status)
      : Effect.map(Resource.encode(resource, object), (encoded) => encoded.status as Status | undefined)

  // The next run compares what it wants with what it reads: it must read this write, not a
  // lagging cache (a retry that succeeds before the watch delivers its failure's Ready=False
  // would otherwise find nothing to change and leave the failure in place).
  const applyNow = (body: Kube.ApplyBody, manager: string) =>
    kube.apply(resource, body, { fieldManager: manager, subresource: "status", force: true }).pipe(Effect.tap(overlay.remember))

  const apply = (current: A, status: Status, manager: string) =>
    applyNow({ metadata: { name: current.metadata.name ?? "", namespace: current.metadata.namespace }, status }, manager)

  // Ready and observedGeneration as this run leaves them; the current ones when it has nothing to say.
  const readyFields = Effect.fnUntraced(function*(key: string, current: A, ready: Conditions.Update | undefined, succeeded: boolean) {
    const status = (current as A & WithStatus).status
    const recorded = status?.observedGeneration as number | undefined
    const generation = seenGeneration.has(key) ? seenGeneration.get(key) : current.metadata.generation
    const keep = ready === undefined || (succeeded && ObjectMeta.isDeleting(current))
    const conditions = keep
      ? conditionsOf(status)
      : yield* Conditions.setNow(conditionsOf(status), { ...ready, observedGeneration: generation })
    const condition = Conditions.get(conditions, Conditions.ReadyType)
    // A failure does not move observedGeneration, but the apply keeps what was recorded, or
    // server-side apply would remove it as a field the manager no longer sets.
    const observedGeneration = succeeded && !keep ? generation : recorded
    return {
      ...(condition === undefined ? {} : { conditions: [condition] }),
      ...(observedGeneration === undefined ? {} : { observedGeneration })
    } as Status
  })

  const finish = Effect.fnUntraced(function*(key: string, ready: Conditions.Update | undefined, succeeded: boolean) {
    const stated = staged.get(key)
    unstage(key)
    if (stated === undefined && (!writeReady || ready === undefined)) return
    const current = yield* overlay.get(key)
    if (current === undefined) return
    const fields = writeReady ? yield* readyFields(key, current, ready, succeeded) : {}
    const status = stated === undefined ? fields : mergeStatus(stated, fields)
    // Ready and observedGeneration read the same decoded as encoded; only the reconciler's own
    // fields need the object encoded to compare, so a Ready-only run encodes nothing.
    const held = stated === undefined ? (current as A & WithStatus).status : yield* encodedStatus(current)
    if (unchanged(status, held)) return
    yield* apply(current, status, stated === undefined ? readyManager : fieldManager)
  })

  // With a Schema that transforms nothing, the object is its own encoding: only the status the run
  // states is decoded (checking it), not the whole object sent round through encode and decode.
  const statusSchema = identity ? resource.custom?.status : undefined
  // Part of the resource's Schema, which decodes without services (see Resource.custom).
  const decodeStatus = statusSchema === undefined ? undefined : Schema.decodeUnknownEffect(statusSchema as Schema.Codec<unknown>)

  const stage = (key: string, object: A, status: Status): Effect.Effect<A, Resource.DecodeError> => {
    const next = mergeStatus(staged.get(key), status)
    const held = (object as A & WithStatus).status
    // A run stating what the object already holds (a converged object's resync) is not decoded
    // again: every field it states is one of the decoded object's own values.
    if (decodeStatus !== undefined && held !== undefined && unchanged(next, held)) {
      staged.set(key, next)
      return Effect.succeed({ ...object, status: mergeStatus(held, next) })
    }
    return decodeStaged(key, object, held, next)
  }

  // Staged only once it decodes: a status the Schema rejects fails the run and is never sent.
  const decodeStaged = Effect.fnUntraced(function*(key: string, object: A, held: Status | undefined, next: Status) {
    const answer = decodeStatus !== undefined
      ? yield* Effect.mapEager(
        Effect.mapErrorEager(decodeStatus(mergeStatus(held, next)), (error) =>
          new Resource.DecodeError({ kind: resource.kind, name: object.metadata.name ?? "", message: `status: ${error.message}` })),
        (merged): A => ({ ...object, status: merged })
      )
      : yield* Effect.flatMap(Resource.encode(resource, object), (encoded) =>
        Resource.decode(resource, { ...encoded, status: mergeStatus(encoded.status as Status | undefined, next) }))
    staged.set(key, next)
    return answer
  })

  // Its own field manager, so the run's status writes never remove it.
  const heldManager = `${fieldManager}-held`
  const heldCondition = "DependenciesReady"
  const applyHeld = Effect.fnUntraced(function*(key: string, fields: Status) {
    const current = yield* overlay.get(key)
    if (current === undefined || !writeReady) return
    yield* apply(current, fields, heldManager)
  })

  const held = (key: string, waitingFor: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const message = `waits for controller ${waitingFor.join(", ")}, degraded; its reconciles resume when ${
        waitingFor.length === 1 ? "it recovers" : "they recover"
      }`
      const conditions = yield* Conditions.setNow([], { type: heldCondition, status: "False", reason: "DependencyDegraded", message })
      yield* applyHeld(key, { conditions })
    }).pipe(Effect.catchCause((cause) => Effect.logWarning(`could not record that ${key} waits for ${waitingFor.join(", ")}`, cause)))

  const released = (key: string, object: A) =>
    conditionsOf((object as A & WithStatus).status).some((c) => c.type === heldCondition) ? applyHeld(key, {}) : Effect.void

  const undecodable = (object: unknown, message: string) =>
    Effect.gen(function*() {
      if (!writeReady) return
      const metadata = (object as { readonly metadata?: ObjectMeta.ObjectMeta } | null)?.metadata ?? {}
      const conditions = yield* Conditions.setNow([], Conditions.notReady(message, { reason: "DecodeError" }))
      // Raw: the object does not decode, so the typed apply could not read the answer either.
      yield* kube.request({
        method: "PATCH",
        path: Resource.objectPath(resource, metadata.namespace, metadata.name ?? "", "status"),
        query: { fieldManager: readyManager, force: "true" },
        contentType: "application/apply-patch+yaml",
        body: {
          apiVersion: resource.apiVersion,
          kind: resource.kind,
          metadata: { name: metadata.name, ...(metadata.namespace === undefined ? {} : { namespace: metadata.namespace }) },
          status: { conditions }
        }
      }).pipe(Effect.catchCause((cause) => Effect.logWarning(`could not record that ${metadata.name} does not decode`, cause)))
    })

  return {
    held,
    released,
    undecodable,
    begin: (key, object) => {
      unstage(key)
      seenGeneration.set(key, object.metadata.generation)
    },
    forget: (key) => {
      staged.delete(key)
      seenGeneration.delete(key)
    },
    stage,
    applyNow,
    finish
  }
}
