/**
 * A controller for one kind (the primary): informers for it, the kinds it owns and the kinds it
 * watches feed the core engine with keys; each run reads the primary from the cache (through the
 * overlay), adds or honours the finalizer, calls the reconciler or the cleanup, and records the
 * outcome as the primary's `Ready` condition.
 *
 * @since 0.1.0
 */
import {
  Controller as Engine,
  type ErrorAction,
  Failure,
  Outcome,
  type RetryInfo,
  type RetryPolicy,
  type TokenBucket,
  Trigger
} from "@kubefx/core"
import { type Duration, Effect, Option, Pipeable, Predicate, Result, SchemaAST, Scope, Stream } from "effect"
import * as Conditions from "./Conditions.ts"
import * as Events from "./Events.ts"
import * as Informer from "../cache/Informer.ts"
import * as Kube from "../client/Kube.ts"
import type * as KubeError from "../client/KubeError.ts"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import * as OverlayCache from "../cache/OverlayCache.ts"
import type * as Rbac from "../operator/Rbac.ts"
import * as Resource from "../client/Resource.ts"
import * as SharedInformers from "../cache/SharedInformers.ts"
import * as StatusWrites from "./StatusWrites.ts"

/** A kind whose changes are mapped to primary keys by a function. */
export interface Watch<B extends ObjectMeta.KubeObject> {
  readonly resource: Resource.Resource<B>
  /** Keys ("namespace/name") of the primaries to reconcile when `object` changes. */
  readonly map: (object: B) => Iterable<string>
}

/** A status write of the object being reconciled: `metadata` names it unless given. */
export type StatusBody = { readonly metadata?: Kube.ApplyBody["metadata"] | undefined; readonly status: unknown }

/** What a reconciler gets besides the object. */
export interface Context<A extends ObjectMeta.KubeObject> {
  readonly kube: Kube.Client
  /** The controller's field manager for server-side apply. */
  readonly fieldManager: string
  /** A controller ownerReference to the object being reconciled. */
  readonly ownerReference: ObjectMeta.OwnerReference
  /**
   * Applies status with an optimistic lock and caches the result for the next run, under the field
   * manager `<fieldManager>-locked`: a later `applyStatus` that omits these fields keeps them.
   */
  readonly patchStatusAndCache: (
    fresh: StatusBody | ((latest: A) => StatusBody)
  ) => Effect.Effect<A, KubeError.KubeError | Resource.DecodeError>
  /**
   * States status fields of the object (server-side apply semantics, without a lock). In a
   * reconcile, the fields are written once when the run ends, in the same apply as `Ready` and
   * `observedGeneration`, under the controller's field manager: successive calls in a run merge
   * (later fields win, conditions merge by type), and the answer is the object as it will read. A
   * run's write states every field the controller owns: a field it stated in an earlier run and
   * omits now is removed, while fields written by `patchStatusAndCache` (their own manager) stay.
   * Nothing is sent when every field already holds its value. A run that fails still writes what it
   * staged, with `Ready=False`. With an explicit `fieldManager`, and in cleanup, the apply is sent at
   * once. Either way the next run reads the write even before the watch delivers it.
   */
  readonly applyStatus: (
    body: StatusBody,
    options?: { readonly fieldManager?: string | undefined }
  ) => Effect.Effect<A, KubeError.KubeError | Resource.DecodeError>
  /** Server-side applies a secondary object under the controller's field manager. */
  readonly apply: <B extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<B>,
    body: Kube.ApplyBody
  ) => Effect.Effect<B, KubeError.KubeError | Resource.DecodeError>
  /** Like `apply`, with this object as the controller owner, so the object is garbage-collected with it. */
  readonly applyOwned: <B extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<B>,
    body: Kube.ApplyBody
  ) => Effect.Effect<B, KubeError.KubeError | Resource.DecodeError>
  /** An owned or watched object from the controller's caches: no API request. */
  readonly cached: <B extends ObjectMeta.KubeObject>(resource: Resource.Resource<B>, key: string) => B | undefined
  /** Records a Kubernetes Event about the object (best effort, aggregated, never failing the run). */
  readonly recordEvent: (event: Events.Event) => Effect.Effect<void>
  /** The primary kind. */
  readonly resource: Resource.Resource<A>
  /** The informer of an owned or watched kind (the same `Resource` value), to tell "not cached" from "not watched". */
  readonly informer: <B extends ObjectMeta.KubeObject>(resource: Resource.Resource<B>) => Informer.Informer<B> | undefined
  /**
   * What this run writes in the `Ready` condition if it succeeds, instead of `True`/`Reconciled`:
   * for example `False`/`DependentsNotReady` while a secondary is still starting. `observedGeneration`
   * is recorded either way. Has no effect in cleanup.
   */
  readonly setReadyCondition: (condition: ReadyCondition) => Effect.Effect<void>
}

/** What a successful run reports in the `Ready` condition. */
export interface ReadyCondition {
  readonly status: "True" | "False"
  readonly reason: string
  readonly message?: string | undefined
}

export interface Options<A extends ObjectMeta.KubeObject, E, R> {
  readonly name: string
  /** The primary kind. */
  readonly for: Resource.Resource<A>
  /** Watch one namespace only. */
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  /** Kinds whose objects this controller owns: a change reconciles their controller owner. */
  readonly owns?: ReadonlyArray<Resource.Resource> | undefined
  readonly watches?: ReadonlyArray<Watch<any>> | undefined
  /** Runs for each key whose object exists and is not being deleted (with a `cleanup`, once it carries the finalizer). */
  readonly reconcile: (object: Stored<A>, context: Context<A>) => Effect.Effect<Outcome.Outcome, E, R>
  /**
   * Runs when the object is being deleted; the controller's finalizer is added before the first
   * reconcile and removed when cleanup succeeds (R17). `requeueAfter` keeps the finalizer and looks again.
   */
  readonly cleanup?: ((object: Stored<A>, context: Context<A>) => Effect.Effect<Outcome.Outcome | void, E, R>) | undefined
  /** The finalizer a cleanup keeps; default `<group>/<name>` (`kubefx.dev/<name>` in the core group). */
  readonly finalizer?: string | undefined
  /**
   * Controllers this one depends on (R12): an operator starts them first (adding them if not
   * listed), and this one reconciles only while none of them is degraded; a key that waits says so
   * in a `DependenciesReady=False` condition.
   */
  readonly dependsOn?: ReadonlyArray<Any<R>> | undefined
  /** Permissions the reconciler needs beyond what the definition shows (for `Rbac` and `kubefx manifests`). */
  readonly rbac?: ReadonlyArray<Rbac.PolicyRule> | undefined
  /** Default the controller's name. */
  readonly fieldManager?: string | undefined
  /**
   * Which updates of the primary reconcile. Default (R16): changes of generation, deletionTimestamp,
   * finalizers, labels or annotations; for kinds without a generation, any change.
   */
  readonly predicate?: ((previous: A, next: A) => boolean) | undefined
  /**
   * Runs after each failed run, with what can really fail one: the reconciler's own errors and the
   * client's (`KubeError`, `DecodeError`).
   */
  readonly onError?:
    | ((object: Stored<A>, failure: Engine.RunFailure<RunError<NoInfer<E>>>, info: RetryInfo.RetryInfo) => Effect.Effect<ErrorAction.ErrorAction, never, R>)
    | undefined
  readonly concurrency?: number | undefined
  readonly retryPolicy?: RetryPolicy.RetryPolicy<Engine.RunFailure<RunError<NoInfer<E>>>> | undefined
  readonly rateLimit?: TokenBucket.Options | undefined
  readonly degradeAfter?: number | undefined
  readonly rollback?: ((failing: ReadonlyArray<{ readonly key: string; readonly lastGood: A }>) => Effect.Effect<void, never, R>) | undefined
  readonly timeout?: Duration.Input | undefined
  /** Every period, reconcile every cached object again (R14). */
  readonly resync?: Duration.Input | undefined
  /** Options of the primary's watch (inactivity timeout, backoff...). */
  readonly watch?: Informer.Options<A> | undefined
}

/**
 * An object as the API server stores it, and so as a reconciler gets it: named, with a uid and a
 * resourceVersion.
 */
export type Stored<A extends ObjectMeta.KubeObject> = A & {
  readonly metadata: { readonly name: string; readonly uid: string; readonly resourceVersion: string }
}

const isStored = <A extends ObjectMeta.KubeObject>(object: A): object is Stored<A> =>
  object.metadata.name !== undefined && object.metadata.uid !== undefined && object.metadata.resourceVersion !== undefined

/** A running controller of any kind: what an operator, its HTTP views and the test kit read. */
export interface Running extends Engine.Controller {
  readonly resource: Resource.Resource
  readonly informer: Informer.Informer<ObjectMeta.KubeObject>
  /** Every cache the controller reads: the primary's, then those of owned and watched kinds. */
  readonly informers: ReadonlyArray<Informer.Informer<ObjectMeta.KubeObject>>
}

/** A running controller. */
export interface Controller<A extends ObjectMeta.KubeObject> extends Running {
  readonly resource: Resource.Resource<A>
  readonly informer: Informer.Informer<A>
  readonly overlay: OverlayCache.OverlayCache<A>
  readonly finalizer: string
  readonly fieldManager: string
}

/** What can fail a run: the reconciler's errors `E` and the client's. */
export type RunError<E> = E | KubeError.KubeError | Resource.DecodeError

interface WithStatus {
  readonly status?: { readonly conditions?: ReadonlyArray<Conditions.Condition>; readonly observedGeneration?: number } | undefined
}

const sameStringMap = (a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined) => {
  const left = Object.entries(a ?? {})
  return left.length === Object.keys(b ?? {}).length && left.every(([k, v]) => b?.[k] === v)
}

/**
 * R16: whether an update is worth a reconcile. Status-only writes (including the controller's own)
 * are not.
 *
 * @example
 * import { Controller } from "@kubefx/kube"
 * Controller.generationChanged(
 *   { metadata: { generation: 1, resourceVersion: "1" } },
 *   { metadata: { generation: 1, resourceVersion: "2" } }
 * ) // false
 */
export const generationChanged = (previous: ObjectMeta.KubeObject, next: ObjectMeta.KubeObject): boolean => {
  const a = previous.metadata
  const b = next.metadata
  if (a.generation === undefined && b.generation === undefined) return a.resourceVersion !== b.resourceVersion
  return a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    (a.finalizers ?? []).join("\u0000") !== (b.finalizers ?? []).join("\u0000") ||
    !sameStringMap(a.labels, b.labels) ||
    !sameStringMap(a.annotations, b.annotations)
}

/**
 * The finalizer a controller uses unless told otherwise.
 *
 * @example
 * import { Controller } from "@kubefx/kube"
 * Controller.defaultFinalizer("demo.kubefx.dev", "buckets") // "demo.kubefx.dev/buckets"
 */
export const defaultFinalizer = (group: string, name: string): string => `${group === "" ? "kubefx.dev" : group}/${name}`

/** How an operator starts a definition: the running controllers it depends on, and whether it starts held. */
interface RunWith {
  readonly dependsOn: ReadonlyArray<Engine.Controller>
  /** Caches fill and events queue, nothing reconciles until `resume` (a replica that does not lead). */
  readonly held: boolean
}

// Ready lives in `status.conditions`: a status without that field has nowhere to hold it.
const declaresConditions = (resource: Resource.Resource<ObjectMeta.KubeObject>): boolean => {
  const status = resource.custom?.status
  return status !== undefined && SchemaAST.isObjects(status.ast) &&
    status.ast.propertySignatures.some((property) => property.name === "conditions")
}

const run = <A extends ObjectMeta.KubeObject, E, R>(
  definition: Definition<A, E, R>,
  runWith: RunWith
): Effect.Effect<Controller<A>, never, R | Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const { options } = definition
    const cleanup = options.cleanup
    const resource = options.for
    const fieldManager = options.fieldManager ?? options.name
    const finalizer = options.finalizer ?? defaultFinalizer(resource.group, options.name)
    const predicate = options.predicate ?? generationChanged
    const writeReady = declaresConditions(resource)

    const informers = yield* SharedInformers.SharedInformers
    const primary = yield* informers.get(resource, {
      ...options.watch,
      namespace: options.namespace,
      labelSelector: options.labelSelector
    })
    // Locked writes under a field manager of their own: the controller's unlocked status applies,
    // which state only their own fields, never remove a value a locked write allocated.
    const overlay = yield* OverlayCache.make(primary, { fieldManager: `${fieldManager}-locked` })
    const owned = yield* Effect.forEach(options.owns ?? [], (kind) => informers.get(kind, { namespace: options.namespace }))
    const watched = yield* Effect.forEach(options.watches ?? [], (watch) =>
      Effect.map(informers.get(watch.resource, { namespace: options.namespace }), (informer) => ({ watch, informer })))
    const events = yield* Events.make({ component: options.name })
    // Keyed by the very Resource value, so each entry's informer is of that resource's type.
    const caches = new Map<Resource.Resource, Informer.Informer<any>>()
    for (const informer of owned) caches.set(informer.resource, informer)
    for (const { informer } of watched) caches.set(informer.resource, informer)

    // Workers start once every cache is complete, so a reconcile never acts on a partial view.
    yield* Effect.all([primary, ...owned, ...watched.map((w) => w.informer)].map((i) => i.awaitSynced), {
      concurrency: "unbounded",
      discard: true
    })

    const status = StatusWrites.make({ kube, resource, overlay, fieldManager, writeReady })

    const primaryEvents = primary.changes.pipe(
      Stream.filterMap((change): Result.Result<Engine.Event, void> => {
        const key = ObjectMeta.key(change.object)
        if (change._tag === "Deleted") {
          status.forget(key)
          return Result.succeed(Engine.forget(key))
        }
        if (change._tag === "Added") return Result.succeed(Engine.enqueue(key, { _tag: "Event", detail: "added" }))
        return predicate(change.previous, change.object)
          ? Result.succeed(Engine.enqueue(key, { _tag: "Event", detail: "updated" }))
          : Result.failVoid
      })
    )
    // Objects that do not decode with the resource's Schema are reported, not skipped in silence:
    // their run fails with the decode error (counted, shown in /controllers), writes Ready=False
    // with reason DecodeError and records a Warning Event; a fix or a deletion ends it.
    const undecodable = new Map<string, { readonly object: unknown; readonly error: Resource.DecodeError }>()
    const validityEvents = primary.validity.pipe(
      Stream.map((validity): Engine.Event => {
        if (validity._tag === "Valid") {
          undecodable.delete(validity.key)
          return primary.get(validity.key) === undefined ? Engine.forget(validity.key) : Engine.enqueue(validity.key, { _tag: "Event", detail: "decodes again" })
        }
        undecodable.set(validity.key, validity)
        return Engine.enqueue(validity.key, { _tag: "Event", detail: "does not decode" })
      })
    )
    const ownedEvents = owned.map((informer) =>
      informer.changes.pipe(
        Stream.filterMap((change): Result.Result<Engine.Event, void> => {
          const references: ReadonlyArray<ObjectMeta.OwnerReference> = change.object.metadata.ownerReferences ?? []
          const owner = references.find((reference) =>
            reference.controller === true && reference.kind === resource.kind &&
            reference.apiVersion.split("/")[0] === resource.apiVersion.split("/")[0]
          )
          if (owner === undefined) return Result.failVoid
          const key = ObjectMeta.keyOf(resource.namespaced ? change.object.metadata.namespace : undefined, owner.name)
          return Result.succeed(Engine.enqueue(key, { _tag: "Related", source: `${informer.resource.kind} ${ObjectMeta.key(change.object)}` }))
        })
      )
    )
    const watchedEvents = watched.map(({ informer, watch }) =>
      informer.changes.pipe(
        Stream.flatMap((change) =>
          Stream.fromIterable(Array.from(watch.map(change.object), (key) =>
            Engine.enqueue(key, { _tag: "Related", source: `${informer.resource.kind} ${ObjectMeta.key(change.object)}` })))
        )
      )
    )

    // A secondary kind that becomes served (its CRD installed after the controller started) can
    // activate nodes of every primary: reconcile them all.
    const servedEvents = [...owned, ...watched.map((w) => w.informer)].map((informer) =>
      informer.servedChanges.pipe(
        Stream.changes,
        Stream.drop(1),
        Stream.filter((served) => served),
        Stream.flatMap(() =>
          Stream.fromIterable(primary.keys().map((key) =>
            Engine.enqueue(key, { _tag: "Related", source: `${informer.resource.kind} now served` })))
        )
      )
    )

    const ownerReferenceOf = (object: Stored<A>): ObjectMeta.OwnerReference => ({
      apiVersion: resource.apiVersion,
      kind: resource.kind,
      name: object.metadata.name,
      uid: object.metadata.uid,
      controller: true,
      blockOwnerDeletion: true
    })

    // A reconcile stages its status for the run's one write; cleanup and explicit managers apply at once.
    // The object's own name and namespace unless the body names another.
    const named = (object: Stored<A>, body: StatusBody): Kube.ApplyBody => ({
      ...body,
      metadata: {
        ...body.metadata,
        name: body.metadata?.name ?? object.metadata.name,
        namespace: body.metadata?.namespace ?? object.metadata.namespace
      }
    })

    const contextFor = (object: Stored<A>, report?: (condition: ReadyCondition) => void): Context<A> => ({
      kube,
      fieldManager,
      ownerReference: ownerReferenceOf(object),
      patchStatusAndCache: (fresh) =>
        overlay.patchStatusAndCache(object, typeof fresh === "function" ? (latest) => named(object, fresh(latest)) : named(object, fresh)),
      applyStatus: (body, applyOptions) => {
        const write = named(object, body)
        const self = write.metadata.name === object.metadata.name && write.metadata.namespace === object.metadata.namespace
        return report !== undefined && applyOptions?.fieldManager === undefined && self
          ? status.stage(ObjectMeta.key(object), object, (body.status ?? {}) as StatusWrites.Status)
          : status.applyNow(write, applyOptions?.fieldManager ?? fieldManager)
      },
      apply: (kind, body) => kube.apply(kind, body, { fieldManager, force: true }),
      applyOwned: (kind, body) =>
        kube.apply(kind, {
          ...body,
          metadata: {
            ...body.metadata,
            namespace: body.metadata.namespace ?? object.metadata.namespace,
            ownerReferences: [ownerReferenceOf(object)]
          }
        }, { fieldManager, force: true }),
      cached: (kind, key) => caches.get(kind)?.get(key),
      recordEvent: (event) => events.record(object, event),
      resource,
      informer: (kind) => caches.get(kind),
      setReadyCondition: (condition) => Effect.sync(() => report?.(condition))
    })

    const hasFinalizer = (object: A) => object.metadata.finalizers?.includes(finalizer) === true

    // JSON patches guarded by what they change (the finalizer list, or the uid when there is none),
    // so concurrent label or spec writes do not make them fail, and nobody else's finalizer is lost.
    const addFinalizer = (object: Stored<A>) =>
      kube.patch(resource, object.metadata.name, object.metadata.namespace, object.metadata.finalizers === undefined
        ? [
          { op: "test", path: "/metadata/uid", value: object.metadata.uid },
          { op: "add", path: "/metadata/finalizers", value: [finalizer] }
        ]
        : [
          { op: "test", path: "/metadata/finalizers", value: object.metadata.finalizers },
          { op: "add", path: "/metadata/finalizers/-", value: finalizer }
        ], { type: "json" })

    const removeFinalizer = (object: Stored<A>) => {
      const index = object.metadata.finalizers?.indexOf(finalizer) ?? -1
      return index < 0 ? Effect.void : kube.patch(resource, object.metadata.name, object.metadata.namespace, [
        { op: "test", path: `/metadata/finalizers/${index}`, value: finalizer },
        { op: "remove", path: `/metadata/finalizers/${index}` }
      ], { type: "json" }).pipe(
        Effect.asVoid,
        // Removing the last finalizer of a deleted object deletes it.
        Effect.catchTag("NotFound", () => Effect.void)
      )
    }

    // R10 for an object known only as JSON: Ready=False, reason DecodeError, and a Warning Event.
    const reportUndecodable = (entry: { readonly object: unknown; readonly error: Resource.DecodeError }) =>
      Effect.gen(function*() {
        const raw = entry.object as { readonly metadata?: ObjectMeta.ObjectMeta } | null
        const metadata = raw?.metadata ?? {}
        const message = Failure.truncate(entry.error.message, Conditions.readyMessageLength)
        const identity = { apiVersion: resource.apiVersion, kind: resource.kind, metadata } as unknown as A
        if (writeReady) {
          const conditions = yield* Conditions.setNow([], Conditions.notReady(message, { reason: "DecodeError" }))
          yield* kube.request({
            method: "PATCH",
            path: Resource.objectPath(resource, metadata.namespace, metadata.name ?? "", "status"),
            query: { fieldManager: `${fieldManager}-ready`, force: "true" },
            contentType: "application/apply-patch+yaml",
            body: {
              apiVersion: resource.apiVersion,
              kind: resource.kind,
              metadata: { name: metadata.name, ...(metadata.namespace === undefined ? {} : { namespace: metadata.namespace }) },
              status: { conditions }
            }
          }).pipe(Effect.catchCause((cause) => Effect.logWarning(`could not record that ${metadata.name} does not decode`, cause)))
        }
        yield* events.record(identity, { type: "Warning", reason: "DecodeError", message })
      })

    // A key held by a degraded dependency says so in a condition of its own field manager (so the
    // Ready condition's applies never remove it), dropped by the next successful run.
    const heldManager = `${fieldManager}-held`
    const heldCondition = "DependenciesReady"
    const applyHeld = (key: string, fields: StatusWrites.Status) =>
      Effect.gen(function*() {
        const current = yield* overlay.get(key)
        if (current === undefined || !writeReady) return
        yield* status.applyNow({ metadata: { name: current.metadata.name ?? "", namespace: current.metadata.namespace }, status: fields }, heldManager)
      })
    const markHeld = (key: string, waitingFor: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const names = waitingFor.join(", ")
        const message = `waits for controller ${names}, degraded; its reconciles resume when ${waitingFor.length === 1 ? "it recovers" : "they recover"}`
        const conditions = yield* Conditions.setNow([], { type: heldCondition, status: "False", reason: "DependencyDegraded", message })
        yield* applyHeld(key, { conditions })
      }).pipe(Effect.catchCause((cause) => Effect.logWarning(`could not record that ${key} waits for ${waitingFor.join(", ")}`, cause)))
    const clearHeld = (key: string, object: A) =>
      ((object as A & WithStatus).status?.conditions ?? []).some((c) => c.type === heldCondition)
        ? applyHeld(key, {})
        : Effect.void

    const reconcileKey = (key: string): Effect.Effect<Outcome.Outcome, E | KubeError.KubeError | Resource.DecodeError, R> =>
      Effect.gen(function*() {
        const broken = undecodable.get(key)
        if (broken !== undefined) return yield* Effect.fail(broken.error)
        const cached = yield* overlay.get(key)
        if (cached === undefined || !isStored(cached)) return Outcome.done
        let object = cached
        status.begin(key, object)
        if (ObjectMeta.isDeleting(object)) {
          if (!hasFinalizer(object)) return Outcome.done
          if (cleanup !== undefined) {
            const outcome = yield* cleanup(object, contextFor(object))
            if (outcome !== undefined && outcome._tag === "RequeueAfter") return outcome
          }
          yield* removeFinalizer(object)
          return Outcome.done
        }
        if (cleanup !== undefined && !hasFinalizer(object)) {
          const finalized = yield* addFinalizer(object)
          yield* overlay.remember(finalized)
          if (isStored(finalized)) object = finalized
        }
        let reported: ReadyCondition | undefined
        const outcome = yield* options.reconcile(object, contextFor(object, (condition) => {
          reported = condition
        }))
        const ready = reported === undefined
          ? Conditions.ready()
          : reported.status === "True"
          ? Conditions.ready({ reason: reported.reason, message: reported.message ?? "" })
          : Conditions.notReady(reported.message ?? "", { reason: reported.reason })
        yield* status.finish(key, ready, true)
        yield* clearHeld(key, object)
        return outcome
      })

    const engine = yield* Engine.make({
      name: options.name,
      reconcile: reconcileKey,
      source: Stream.mergeAll([primaryEvents, validityEvents, ...ownedEvents, ...watchedEvents, ...servedEvents], {
        concurrency: "unbounded"
      }),
      concurrency: options.concurrency,
      retryPolicy: options.retryPolicy,
      rateLimit: options.rateLimit,
      degradeAfter: options.degradeAfter,
      dependsOn: runWith.dependsOn,
      onHeld: markHeld,
      timeout: options.timeout,
      held: runWith.held,
      resync: options.resync,
      keys: Effect.sync(primary.keys),
      snapshot: (key) => Effect.map(overlay.get(key), Option.fromUndefinedOr),
      rollback: options.rollback,
      onError: (key, failure, info) =>
        Effect.gen(function*() {
          const broken = undecodable.get(key)
          if (broken !== undefined) {
            // Nothing to retry until the object changes: its next version is a new event.
            yield* reportUndecodable(broken)
            return { retry: false }
          }
          const message = Failure.truncate(Failure.message(failure), Conditions.readyMessageLength)
          // What the run staged goes with Ready=False; if that write fails, Ready=False alone.
          yield* status.finish(key, Conditions.notReady(message), false).pipe(
            Effect.catchCause(() => status.finish(key, Conditions.notReady(message), false)),
            Effect.catchCause((cause) => Effect.logWarning(`could not record the failure of ${key} in its status`, cause))
          )
          const object = yield* overlay.get(key)
          if (object !== undefined) yield* events.record(object, { type: "Warning", reason: "ReconcileError", message })
          if (options.onError === undefined) return { retry: true }
          return object === undefined || !isStored(object)
            ? { retry: true }
            : yield* options.onError(object, failure, info)
        })
    })

    // Whatever changed while held (another replica may have led) is looked at again on resume.
    const resume = Effect.andThen(
      Effect.suspend(() => Effect.forEach(primary.keys(), (key) => engine.enqueue(key, Trigger.resync), { discard: true })),
      engine.resume
    )
    return {
      ...engine,
      resume: Effect.suspend(() => engine.isHeld() ? resume : Effect.void),
      resource,
      informer: primary,
      overlay,
      finalizer,
      fieldManager,
      informers: [primary, ...owned, ...watched.map((w) => w.informer)]
    }
  })

/**
 * A controller of any kind and error, declared: what an operator, `Rbac` and the test kit take.
 * Made by {@link define}; it starts with `start`, in `Operator.make`, or in `TestCluster.layer`.
 */
export interface Any<R = never> extends Pipeable.Pipeable {
  readonly _tag: "ControllerDefinition"
  readonly name: string
  /** The primary kind. */
  readonly for: Resource.Resource
  readonly owns: ReadonlyArray<Resource.Resource>
  readonly watches: ReadonlyArray<Resource.Resource>
  readonly concurrency: number
  /** The finalizer it keeps on every primary, when it has a cleanup. */
  readonly finalizer: string | undefined
  /** Controllers started first, and healthy for this one to reconcile (R12). */
  readonly dependsOn: ReadonlyArray<Any<R>>
  /** Permissions the reconciler needs beyond what the definition shows (for `Rbac`). */
  readonly rules: ReadonlyArray<Rbac.PolicyRule>
  /** Starts it in the current scope: what operators call. */
  readonly run: (runWith: RunWith) => Effect.Effect<Running, never, R | Kube.Kube | Scope.Scope>
}

/** A controller for objects `A` whose runs fail with `E` and need services `R`, declared. */
export interface Definition<A extends ObjectMeta.KubeObject, E = never, R = never> extends Any<R> {
  readonly options: Options<A, E, R>
}

const makeDefinition = <A extends ObjectMeta.KubeObject, E, R>(options: Options<A, E, R>): Definition<A, E, R> => {
  const self: Definition<A, E, R> = {
    ...Pipeable.Prototype,
    _tag: "ControllerDefinition",
    name: options.name,
    for: options.for,
    owns: options.owns ?? [],
    watches: (options.watches ?? []).map((watch) => watch.resource),
    concurrency: options.concurrency ?? 1,
    finalizer: options.cleanup === undefined ? undefined : options.finalizer ?? defaultFinalizer(options.for.group, options.name),
    dependsOn: options.dependsOn ?? [],
    rules: options.rbac ?? [],
    options,
    run: (runWith) => run(self, runWith)
  }
  return self
}

/**
 * Declares a controller: the one value that runs alone (`start`), in an operator
 * (`Operator.make`) and in the test kit (`TestCluster.layer`); pipeable, for a team's own
 * combinators over it. The `Ready` condition and
 * `observedGeneration` are written after each run (R10) when the status declares `conditions`
 * (spread `Conditions.statusFields` into it).
 *
 * @example
 * import { Effect, Schema } from "effect"
 * import { Outcome } from "@kubefx/core"
 * import { Builtins, Conditions, Controller, Resource } from "@kubefx/kube"
 *
 * const Widget = Resource.custom({
 *   group: "demo.kubefx.dev", version: "v1", kind: "Widget", plural: "widgets",
 *   spec: Schema.Struct({ message: Schema.String }),
 *   status: Schema.Struct({ ...Conditions.statusFields })
 * })
 *
 * export const widgets = Controller.define({
 *   name: "widgets",
 *   for: Widget,
 *   owns: [Builtins.ConfigMap],
 *   reconcile: (widget, ctx) =>
 *     ctx.applyOwned(Builtins.ConfigMap, {
 *       metadata: { name: `${widget.metadata.name}-config` },
 *       data: { message: widget.spec.message }
 *     }).pipe(Effect.as(Outcome.done))
 * })
 */
export const define = <A extends ObjectMeta.KubeObject, E = never, R = never>(options: Options<A, E, R>): Definition<A, E, R> =>
  makeDefinition(options)

export interface StartOptions {
  /** Start held: caches fill and events queue, nothing reconciles until `resume`. */
  readonly held?: boolean | undefined
}

/**
 * Starts a controller alone in the current scope, once its caches have synced. One with
 * `dependsOn` runs in an operator, which starts its dependencies.
 *
 * @example
 * import { Effect } from "effect"
 * import { Controller } from "@kubefx/kube"
 * declare const widgets: Controller.Definition<import("@kubefx/kube").ObjectMeta.KubeObject>
 * const program = Effect.scoped(Effect.andThen(Controller.start(widgets), Effect.never))
 */
export const start = <A extends ObjectMeta.KubeObject, E, R>(
  definition: Definition<A, E, R>,
  options: StartOptions = {}
): Effect.Effect<Controller<A>, never, R | Kube.Kube | Scope.Scope> =>
  definition.dependsOn.length > 0
    ? Effect.die(new Error(`controller ${definition.name} depends on ${definition.dependsOn.map((d) => d.name).join(", ")}: start it with Operator.make`))
    : run(definition, { dependsOn: [], held: options.held === true })

/**
 * Whether a value (a module's export, say) is a controller declared with `define`.
 *
 * @example
 * import { Controller } from "@kubefx/kube"
 * const controllers = Object.values(await import("./operator.ts")).filter(Controller.isDefinition)
 */
export const isDefinition = (value: unknown): value is Any<unknown> =>
  Predicate.hasProperty(value, "_tag") && value._tag === "ControllerDefinition" && Predicate.hasProperty(value, "run")
