/**
 * A dependent: one secondary object of a primary, as a value. It says how to compute the object
 * from the primary (`desired`), when it is ready, when it should exist (`reconcileWhen`), when it
 * takes part at all (`activeWhen`), and how it goes away. Reconciling it server-side applies the
 * desired object under the controller's field manager, owned by the primary unless `owned: false`;
 * the current object is read from the controller's informer cache, never by a GET, and an object
 * that already holds what was last applied is not written again.
 *
 * `bulk` declares a dependent of as many objects of one kind as the primary asks.
 *
 * Workflows (`Workflow.ts`) order dependents and run them; the functions here reconcile or delete
 * one dependent on its own.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type * as Builtins from "../client/Builtins.ts"
import * as Applies from "./Applies.ts"
import * as Handover from "./Handover.ts"
import type * as Controller from "./Controller.ts"
import type * as Informer from "../cache/Informer.ts"
import type * as Kube from "../client/Kube.ts"
import type * as KubeError from "../client/KubeError.ts"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import * as OwnerReferences from "./OwnerReferences.ts"
import type * as Resource from "../client/Resource.ts"
import { NameRules } from "@kubefx/schema/objects"

/** A condition that may need effects: a boolean, or an Effect of one. */
export type Check<E, R> = boolean | Effect.Effect<boolean, E, R>

/**
 * One secondary object of primaries of type `P`, of kind `S`; built by {@link make}. Its readiness,
 * deletion and cleanup checks are bound into `reconcile` and `remove`, so a dependent of any kind is
 * a `Dependent<P, ObjectMeta.KubeObject, E, R>` and a workflow holds dependents of several kinds.
 */
export interface Dependent<P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject, E = never, R = never, O = S> {
  readonly _tag: "Dependent"
  /** Names the node in a workflow, in its result and in the primary's conditions. */
  readonly name: string
  readonly resource: Resource.Resource<S>
  /** Owned objects carry the primary as controller owner (garbage-collected with it, their events reconcile it). */
  readonly owned: boolean
  readonly reconcileWhen: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<boolean, E, R>) | undefined
  readonly activeWhen: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<boolean, E, R>) | undefined
  /** What {@link reconcile} does: `O` is what it found, the object (or, for a {@link bulk} dependent, the objects). */
  readonly reconcile: (primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<Reconciled<O>, E | KubeError.KubeError | Resource.DecodeError, R>
  /** What {@link remove} does. */
  readonly remove: (primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<boolean, E | KubeError.KubeError | Resource.DecodeError, R>
}

/** The errors reconciling a dependent can fail with: its own and the API's. */
export type Error<D> = D extends Dependent<infer _P, infer _S, infer E, infer _R, infer _O> ? E | KubeError.KubeError | Resource.DecodeError : never

/** What {@link make} takes; conditions may answer a boolean or an Effect of one. */
export interface Options<P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject, E, R> {
  readonly name: string
  readonly resource: Resource.Resource<S>
  /**
   * The object to apply: only the fields this controller owns (server-side apply semantics). The
   * namespace defaults to the primary's.
   */
  readonly desired: (primary: Controller.Stored<P>, context: Controller.Context<P>) => Kube.ApplyBody | Effect.Effect<Kube.ApplyBody, E, R>
  /** Whether the applied object is ready (for example a Deployment's rollout); default: ready once applied. */
  readonly ready?: ((actual: S, primary: Controller.Stored<P>) => Check<E, R>) | undefined
  /** Precondition: when false the object must not exist, so it is deleted (its dependents first). */
  readonly reconcileWhen?: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Check<E, R>) | undefined
  /** Activation: when false the node is neither applied nor deleted; its dependents are deleted. */
  readonly activeWhen?: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Check<E, R>) | undefined
  /** Delete postcondition: deletion counts as done once this holds; default: the object is gone from the cache. */
  readonly deleteWhen?: ((actual: S | undefined, primary: Controller.Stored<P>) => Check<E, R>) | undefined
  /** Deletes the object instead of a DELETE request (non-owned or external state that needs more). */
  readonly cleanup?: ((actual: S, primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<void, E, R>) | undefined
  /**
   * Default true. Set false for objects the primary cannot own: cluster-scoped ones of a namespaced
   * primary, or ones in another namespace. Their kind must then be watched with a mapping to the
   * primary, and only a workflow cleanup deletes them.
   */
  readonly owned?: boolean | undefined
}

/**
 * A condition that answers a boolean or an Effect, as one that always answers an Effect.
 *
 * @example
 * import { Effect } from "effect"
 * import { Dependent } from "@kubefx/kube"
 * const exposed = Dependent.check((site: { spec: { exposed: boolean } }) => site.spec.exposed)
 */
export const check = <A extends ReadonlyArray<unknown>, E, R>(
  f: ((...args: A) => Check<E, R>) | undefined
): ((...args: A) => Effect.Effect<boolean, E, R>) | undefined =>
  f === undefined
    ? undefined
    : (...args) => {
      const answer = f(...args)
      return typeof answer === "boolean" ? Effect.succeed(answer) : answer
    }

/**
 * Declares a dependent.
 *
 * @example
 * import { Builtins, Dependent } from "@kubefx/kube"
 * declare const Website: import("@kubefx/kube").Resource.Resource<{ metadata: { name?: string }; spec: { html: string } }>
 * type Website = typeof Website.schema.Type
 *
 * const page = Dependent.make({
 *   name: "content",
 *   resource: Builtins.ConfigMap,
 *   desired: (site: Website) => ({ metadata: { name: `${site.metadata.name}-content` }, data: { "index.html": site.spec.html } })
 * })
 */
export const make = <P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject, E = never, R = never>(
  options: Options<P, S, E, R>
): Dependent<P, S, E, R> => {
  const checks: Checks<P, S, E, R> = {
    name: options.name,
    resource: options.resource,
    owned: options.owned ?? true,
    desired: (primary, context) => {
      const body = options.desired(primary, context)
      return Effect.isEffect(body) ? body : Effect.succeed(body)
    },
    ready: check(options.ready),
    deleteWhen: check(options.deleteWhen),
    cleanup: options.cleanup
  }
  return {
    _tag: "Dependent",
    name: checks.name,
    resource: checks.resource,
    owned: checks.owned,
    reconcileWhen: check(options.reconcileWhen),
    activeWhen: check(options.activeWhen),
    reconcile: (primary, context) => reconcileWith(checks, primary, context),
    remove: (primary, context) => removeWith(checks, primary, context)
  }
}

// What reconciling and removing use, with the checks that take the object of kind S.
interface Checks<P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject, E, R> {
  readonly name: string
  readonly resource: Resource.Resource<S>
  readonly owned: boolean
  readonly desired: (primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<Kube.ApplyBody, E, R>
  readonly ready: ((actual: S, primary: Controller.Stored<P>) => Effect.Effect<boolean, E, R>) | undefined
  readonly deleteWhen: ((actual: S | undefined, primary: Controller.Stored<P>) => Effect.Effect<boolean, E, R>) | undefined
  readonly cleanup: ((actual: S, primary: Controller.Stored<P>, context: Controller.Context<P>) => Effect.Effect<void, E, R>) | undefined
}

/** What reconciling a dependent found. */
export interface Reconciled<S> {
  /** The object after this run: the apply's answer, or the cached object when nothing was written. */
  readonly actual: S
  /** Whether this run wrote the object. */
  readonly applied: boolean
  readonly ready: boolean
}

/** The annotation holding a digest of the last applied object, so removed fields are applied too. */
export const appliedDigestAnnotation: string = Applies.appliedDigestAnnotation

const informerOf = <P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject>(
  self: { readonly name: string; readonly resource: Resource.Resource<S> },
  context: Controller.Context<P>
): Effect.Effect<Informer.Informer<S>> => {
  const informer = context.informer(self.resource)
  return informer === undefined
    ? Effect.die(
      new Error(
        `dependent ${self.name}: the controller has no cache of ${self.resource.kind}; add it to the controller's owns (or watches)`
      )
    )
    : Effect.succeed(informer)
}

// Namespaced objects go to the primary's namespace unless the desired object names another.
const namespaceOf = (self: { readonly resource: Resource.Resource }, primary: ObjectMeta.KubeObject, desired: Kube.ApplyBody) =>
  self.resource.namespaced ? desired.metadata.namespace ?? primary.metadata.namespace : undefined

/** The object to apply, with namespace and owner reference filled in. */
const applyBody = <P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject, E, R>(
  self: Checks<P, S, E, R>,
  primary: Controller.Stored<P>,
  context: Controller.Context<P>
): Effect.Effect<Kube.ApplyBody, E, R> => Effect.flatMap(self.desired(primary, context), (desired) => prepare(self, primary, context, desired))

// A desired object with its namespace and, when owned, the owner reference and owned labels.
const prepare = <P extends ObjectMeta.KubeObject>(
  self: Pick<Checks<P, ObjectMeta.KubeObject, never, never>, "name" | "resource" | "owned">,
  primary: Controller.Stored<P>,
  context: Controller.Context<P>,
  desired: Kube.ApplyBody
): Effect.Effect<Kube.ApplyBody> => {
  const namespace = namespaceOf(self, primary, desired)
  if (self.owned && context.resource.namespaced && namespace !== primary.metadata.namespace) {
    return Effect.die(
      new Error(
        `dependent ${self.name}: ${self.resource.kind} ${desired.metadata.name} cannot be owned by a ${context.resource.kind} in another namespace; declare it with owned: false`
      )
    )
  }
  const { namespace: _, ...metadata } = desired.metadata
  const body: Kube.ApplyBody = {
    ...desired,
    metadata: {
      ...metadata,
      ...(namespace === undefined ? {} : { namespace }),
      ...(self.owned ? { ...Handover.withOwnedLabels(metadata.labels, context.ownedLabels), ownerReferences: [context.ownerReference] } : {})
    }
  }
  return Effect.succeed(body)
}

export { contains, digest } from "./Applies.ts"

/**
 * Applies the dependent unless the cached object already holds what it would apply, then asks
 * whether it is ready. Preconditions are the workflow's business: this always applies.
 *
 * @example
 * import { Effect } from "effect"
 * import { Builtins, Controller, Dependent, ObjectMeta } from "@kubefx/kube"
 * declare const page: Dependent.Dependent<ObjectMeta.KubeObject, Builtins.ConfigMap>
 * declare const site: ObjectMeta.KubeObject
 * declare const ctx: Controller.Context<ObjectMeta.KubeObject>
 * const run = Dependent.reconcile(page, site, ctx) // Effect<{ actual, applied, ready }>
 */
export const reconcile = <P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject, E, R, O>(
  self: Dependent<P, S, E, R, O>,
  primary: Controller.Stored<P>,
  context: Controller.Context<P>
): Effect.Effect<Reconciled<O>, E | KubeError.KubeError | Resource.DecodeError, R> => self.reconcile(primary, context)

// Generator functions made once, not per run (see the package README's performance notes).
const reconcileWith = Effect.fnUntraced(function*<P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject, E, R>(
  self: Checks<P, S, E, R>,
  primary: Controller.Stored<P>,
  context: Controller.Context<P>
) {
  const informer = yield* informerOf(self, context)
  const body = yield* applyBody(self, primary, context)
  const { applied, object: actual } = yield* Applies.apply(
    context.kube,
    self.resource,
    body,
    { fieldManager: context.fieldManager, force: true },
    informer
  )
  const ready = self.ready === undefined ? true : yield* self.ready(actual, primary)
  return { actual, applied, ready }
})

/**
 * Deletes the dependent's object if it exists (and, when owned, is controlled by this primary):
 * with `cleanup` if given, otherwise a DELETE guarded by the object's uid. Answers whether the
 * deletion is complete: `deleteWhen` if given, otherwise whether the object is gone from the cache.
 *
 * @example
 * import { Builtins, Controller, Dependent, ObjectMeta } from "@kubefx/kube"
 * declare const page: Dependent.Dependent<ObjectMeta.KubeObject, Builtins.ConfigMap>
 * declare const site: ObjectMeta.KubeObject
 * declare const ctx: Controller.Context<ObjectMeta.KubeObject>
 * const gone = Dependent.remove(page, site, ctx) // Effect<boolean>
 */
export const remove = <P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject, E, R, O>(
  self: Dependent<P, S, E, R, O>,
  primary: Controller.Stored<P>,
  context: Controller.Context<P>
): Effect.Effect<boolean, E | KubeError.KubeError | Resource.DecodeError, R> => self.remove(primary, context)

const removeWith = Effect.fnUntraced(function*<P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject, E, R>(
  self: Checks<P, S, E, R>,
  primary: Controller.Stored<P>,
  context: Controller.Context<P>
) {
  const informer = yield* informerOf(self, context)
  const body = yield* self.desired(primary, context)
  const namespace = namespaceOf(self, primary, body)
  const key = ObjectMeta.keyOf(namespace, body.metadata.name)
  // An object someone else controls is not this dependent's, whatever its name.
  const ours = (object: S | undefined): object is S =>
    object !== undefined && (!self.owned || OwnerReferences.isControlledBy(object, primary))
  const actual = informer.get(key)
  if (ours(actual) && !ObjectMeta.isDeleting(actual)) {
    if (self.cleanup !== undefined) yield* self.cleanup(actual, primary, context)
    else yield* deleteGuarded(context.kube, self.resource, actual)
  }
  const after = informer.get(key)
  return self.deleteWhen === undefined ? !ours(after) : yield* self.deleteWhen(ours(after) ? after : undefined, primary)
})

// Deletes the very object read (its uid as precondition), in the background; one already gone is deleted.
const deleteGuarded = <S extends ObjectMeta.KubeObject>(kube: Kube.Client, resource: Resource.Resource<S>, object: S) =>
  kube.delete(resource, object.metadata.name ?? "", object.metadata.namespace, {
    propagationPolicy: "Background",
    preconditions: { uid: object.metadata.uid ?? "" }
  }).pipe(Effect.catchTag("NotFound", () => Effect.void))

const labelsOf = (body: Kube.ApplyBody): Readonly<Record<string, string>> =>
  (body.metadata.labels ?? {}) as Readonly<Record<string, string>>

/** The label a {@link bulk} dependent marks its objects with: its name, so it deletes only its own. */
export const bulkLabel = "kubefx.dev/dependent"

/** What {@link bulk} takes. */
export interface BulkOptions<P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject, E, R> {
  /** Names the node, and marks its objects (`kubefx.dev/dependent`): a label value. */
  readonly name: string
  readonly resource: Resource.Resource<S>
  /**
   * The objects there should be, each named (only the fields this controller owns); their
   * namespace is the primary's. One of this dependent's objects that is no longer among them is
   * deleted.
   */
  readonly desired: (
    primary: Controller.Stored<P>,
    context: Controller.Context<P>
  ) => ReadonlyArray<Kube.ApplyBody> | Effect.Effect<ReadonlyArray<Kube.ApplyBody>, E, R>
  /** Whether the objects are ready; default: ready once applied. */
  readonly ready?: ((actual: ReadonlyArray<S>, primary: Controller.Stored<P>) => Check<E, R>) | undefined
  /** Precondition: when false none of the objects may exist, so they are deleted. */
  readonly reconcileWhen?: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Check<E, R>) | undefined
  /** Activation: when false the node is neither applied nor deleted; its dependents are deleted. */
  readonly activeWhen?: ((primary: Controller.Stored<P>, context: Controller.Context<P>) => Check<E, R>) | undefined
}

/**
 * A dependent of several objects of one kind, as many as `desired` answers (JOSDK's bulk
 * dependent): a node per replica set, shard or tenant of a primary. Reconciling applies each one
 * the cache does not already hold and deletes this dependent's objects no longer desired; removing
 * deletes them all. They are owned by the primary (its kind goes in the controller's `owns`, as
 * `Workflow.controller` puts it) and found through the owned cache's index by owner and the
 * dependent's label, with no request and no scan.
 *
 * @example
 * import { Builtins, Dependent } from "@kubefx/kube"
 * declare const Cluster: import("@kubefx/kube").Resource.Resource<{ metadata: { name?: string }; spec: { shards: number } }>
 * type Cluster = typeof Cluster.schema.Type
 *
 * const shards = Dependent.bulk({
 *   name: "shards",
 *   resource: Builtins.ConfigMap,
 *   desired: (cluster: Cluster) =>
 *     Array.from({ length: cluster.spec.shards }, (_, i) => ({ metadata: { name: `${cluster.metadata.name}-shard-${i}` }, data: { shard: `${i}` } }))
 * })
 */
export const bulk = <P extends ObjectMeta.KubeObject, S extends ObjectMeta.KubeObject, E = never, R = never>(
  options: BulkOptions<P, S, E, R>
): Dependent<P, S, E, R, ReadonlyArray<S>> => {
  const problems = NameRules.labelValue(options.name)
  if (problems.length > 0) throw new Error(`bulk dependent ${JSON.stringify(options.name)}: its name marks its objects' label: ${problems.join("; ")}`)
  const self = { name: options.name, resource: options.resource, owned: true }
  const desired = (primary: Controller.Stored<P>, context: Controller.Context<P>) => {
    const bodies = options.desired(primary, context)
    return Effect.isEffect(bodies) ? bodies : Effect.succeed(bodies)
  }
  const ready = check(options.ready)
  // This dependent's objects of the primary: its children of the kind that carry its label.
  const ours = (context: Controller.Context<P>): ReadonlyArray<S> =>
    context.owned(options.resource).filter((object) => object.metadata.labels?.[bulkLabel] === options.name)
  const deleteAll = (objects: ReadonlyArray<S>, context: Controller.Context<P>) =>
    Effect.forEach(objects, (object) => ObjectMeta.isDeleting(object) ? Effect.void : deleteGuarded(context.kube, options.resource, object), {
      discard: true
    })
  return {
    _tag: "Dependent",
    name: options.name,
    resource: options.resource,
    owned: true,
    reconcileWhen: check(options.reconcileWhen),
    activeWhen: check(options.activeWhen),
    reconcile: Effect.fnUntraced(function*(primary, context) {
      const informer = yield* informerOf(self, context)
      const wanted = yield* Effect.forEach(yield* desired(primary, context), (body) =>
        prepare(self, primary, context, { ...body, metadata: { ...body.metadata, labels: { ...labelsOf(body), [bulkLabel]: options.name } } }))
      const written = yield* Effect.forEach(wanted, (body) =>
        Applies.apply(context.kube, options.resource, body, { fieldManager: context.fieldManager, force: true }, informer))
      const keep = new Set(wanted.map((body) => ObjectMeta.keyOf(body.metadata.namespace, body.metadata.name)))
      const stale = ours(context).filter((object) => !keep.has(ObjectMeta.key(object)))
      yield* deleteAll(stale, context)
      const actual = written.map((answer) => answer.object)
      return {
        actual,
        applied: written.some((answer) => answer.applied) || stale.some((object) => !ObjectMeta.isDeleting(object)),
        ready: stale.length === 0 && (ready === undefined ? true : yield* ready(actual, primary))
      }
    }),
    remove: Effect.fnUntraced(function*(_primary, context) {
      yield* deleteAll(ours(context), context)
      return ours(context).length === 0
    })
  }
}

/**
 * Readiness of a Deployment the way `kubectl rollout status` sees it: the current generation is
 * observed, every replica runs the current template and is available, and no old replica is left.
 *
 * @example
 * import { Builtins, Dependent } from "@kubefx/kube"
 * const deployment = Dependent.make({
 *   name: "deployment", resource: Builtins.Deployment, ready: Dependent.deploymentReady,
 *   desired: (site: { metadata: { name?: string } }) => ({ metadata: { name: site.metadata.name ?? "" }, spec: {} })
 * })
 */
export const deploymentReady = (deployment: Builtins.Deployment): boolean => {
  const status = deployment.status
  const replicas = deployment.spec?.replicas ?? 1
  const updated = status?.updatedReplicas ?? 0
  return (status?.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 0) &&
    updated >= replicas &&
    (status?.replicas ?? 0) <= updated &&
    (status?.availableReplicas ?? 0) >= updated
}

/**
 * Readiness of a StatefulSet, as `kubectl rollout status` judges it: the current generation is
 * observed, every replica is ready, and every replica at or above the rolling update's partition
 * (all of them, without one) runs the updated revision.
 *
 * @example
 * import { Builtins, Dependent } from "@kubefx/kube"
 * Dependent.statefulSetReady({ metadata: { generation: 1 }, spec: { replicas: 0, selector: {}, template: {} }, status: { observedGeneration: 1 } }) // true
 */
export const statefulSetReady = (statefulSet: Builtins.StatefulSet): boolean => {
  const status = statefulSet.status
  const replicas = statefulSet.spec?.replicas ?? 1
  const strategy = statefulSet.spec?.updateStrategy
  const partition = strategy?.type === "OnDelete" ? 0 : strategy?.rollingUpdate?.partition ?? 0
  return (status?.observedGeneration ?? 0) >= (statefulSet.metadata.generation ?? 0) &&
    (status?.readyReplicas ?? 0) >= replicas &&
    (status?.updatedReplicas ?? 0) >= replicas - partition
}

/**
 * An activation condition: the node takes part only while the server serves `resource` (its CRD is
 * installed). The controller must own or watch the kind; its informer tolerates a missing CRD and the
 * controller reconciles every primary again when the kind appears.
 *
 * @example
 * import { Dependent } from "@kubefx/kube"
 * declare const ServiceMonitor: import("@kubefx/kube").Resource.Resource<any>
 * const monitor = Dependent.make({
 *   name: "monitor",
 *   resource: ServiceMonitor,
 *   activeWhen: Dependent.whenServed(ServiceMonitor),
 *   desired: (site) => ({ metadata: { name: site.metadata.name! }, spec: { endpoints: [{ port: "http" }] } })
 * })
 */
export const whenServed = <B extends ObjectMeta.KubeObject>(resource: Resource.Resource<B>) =>
<P extends ObjectMeta.KubeObject>(_primary: Controller.Stored<P>, context: Controller.Context<P>): boolean =>
  context.informer(resource)?.served() ?? false
