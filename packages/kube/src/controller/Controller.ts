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
import { type Duration, Effect, identity, Option, Pipeable, Predicate, Queue, Result, SchemaAST, Scope, Stream } from "effect"
import * as Conditions from "./Conditions.ts"
import * as Events from "./Events.ts"
import * as CacheSync from "../cache/CacheSync.ts"
import * as Informer from "../cache/Informer.ts"
import * as Kube from "../client/Kube.ts"
import type * as KubeError from "../client/KubeError.ts"
import * as ObjectMeta from "../client/ObjectMeta.ts"
import * as OverlayCache from "../cache/OverlayCache.ts"
import type * as Rbac from "../operator/Rbac.ts"
import * as Resource from "../client/Resource.ts"
import * as SharedInformers from "../cache/SharedInformers.ts"
import * as Finalizers from "./Finalizers.ts"
import * as Handover from "./Handover.ts"
import * as OwnWrites from "./OwnWrites.ts"
import * as StatusWrites from "./StatusWrites.ts"
import * as Applies from "./Applies.ts"
import * as Triggers from "./Triggers.ts"
import { FieldSelectors, LabelSelectors, NameRules } from "@kubefx/schema/objects"

/** A kind whose changes are mapped to primary keys by a function. */
/**
 * The primary kind's cache as a watch's `map` reads it, to find the primaries an object concerns:
 * `byIndex` answers from an index the controller's `watch.indexes` declares, without a scan.
 */
export type Primaries = Pick<Informer.Informer<ObjectMeta.KubeObject>, "get" | "list" | "byIndex">

/** A kind whose changes are mapped to primary keys by a function; `watch` builds one with `B` inferred. */
export interface Watch<B extends ObjectMeta.KubeObject = ObjectMeta.KubeObject> {
  readonly resource: Resource.Resource<B>
  /**
   * Keys ("namespace/name") of the primaries to reconcile when `object` changes, given the primary
   * cache to look them up in. A method, so a `Watch<ConfigMap>` is a `Watch`: the controller only
   * ever calls it with objects of `resource`.
   */
  map(object: B, primaries: Primaries): Iterable<string>
  /**
   * Only objects these labels select are cached and watched ("tier=web,!legacy"); one the API
   * server would refuse is refused when the controller is defined.
   */
  readonly labelSelector?: string | undefined
  /**
   * Only objects whose fields match are cached and watched ("spec.nodeName=node-1"); which fields a
   * kind can be selected on is the API server's to say, the syntax is checked when the controller
   * is defined.
   */
  readonly fieldSelector?: string | undefined
  /**
   * Whether an update of a watched object is worth a reconcile (controller-runtime's update
   * predicates): a status-only change of a noisy kind, say, is not. Adds and deletes always are.
   */
  predicate?(previous: B, next: B): boolean
  /**
   * What the cache keeps of each object, applied as it arrives (controller-runtime's per-kind cache
   * transforms): a watch that needs a ConfigMap's name and one key need not hold its whole `data`.
   * `map`, `predicate` and `ctx.cached` see what it keeps. managedFields are dropped before it.
   */
  transform?(object: B): B
}

/**
 * A watched kind: a change of one of its objects reconciles the primaries `map` names (for an
 * update, those it names for the new version and for the previous one). With a
 * `labelSelector` or a `fieldSelector`, only the objects they select are cached (controller-runtime's
 * per-kind cache selectors): watching the ConfigMaps of one app, or the Pods of one node, does not
 * cache every one in the namespace or the cluster.
 *
 * @example
 * import { Builtins, Controller, ObjectMeta } from "@kubefx/kube"
 * // A ConfigMap's change reconciles the primary of the same name.
 * const sameName = Controller.watch(Builtins.ConfigMap, (cm) => [ObjectMeta.key(cm)])
 * // The same, for the ConfigMaps labelled app=web only.
 * const web = Controller.watch(Builtins.ConfigMap, (cm) => [ObjectMeta.key(cm)], { labelSelector: "app=web" })
 * // The Pods of one node, each reconciling the primary named in its annotation.
 * const onNode = Controller.watch(Builtins.Pod, (pod) => [pod.metadata.annotations?.["example.com/owner"] ?? ""], {
 *   fieldSelector: "spec.nodeName=node-1"
 * })
 * // A Secret's change reconciles every primary that names it, found through the primaries' index
 * // (declared on the controller: watch: { indexes: { secret: (w) => [ObjectMeta.keyOf(w.metadata.namespace, w.spec.secretName)] } }).
 * const referrers = Controller.watch(Builtins.Secret, (secret, primaries) =>
 *   primaries.byIndex("secret", ObjectMeta.key(secret)).map(ObjectMeta.key))
 * // Only a change of a Secret's data reconciles: a new label alone does not.
 * const onData = Controller.watch(Builtins.Secret, (secret) => [ObjectMeta.key(secret)], {
 *   predicate: (previous, next) => JSON.stringify(previous.data) !== JSON.stringify(next.data)
 * })
 * // The cache keeps each ConfigMap's "version" key alone, not its whole data.
 * const versions = Controller.watch(Builtins.ConfigMap, (cm) => [ObjectMeta.key(cm)], {
 *   transform: (cm) => ({ ...cm, data: { version: cm.data?.version ?? "" } })
 * })
 */
export const watch = <B extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<B>,
  map: (object: B, primaries: Primaries) => Iterable<string>,
  options: {
    readonly labelSelector?: string | undefined
    readonly fieldSelector?: string | undefined
    readonly predicate?: ((previous: B, next: B) => boolean) | undefined
    readonly transform?: ((object: B) => B) | undefined
  } = {}
): Watch<B> => ({
  resource,
  map,
  labelSelector: options.labelSelector,
  fieldSelector: options.fieldSelector,
  ...(options.predicate === undefined ? {} : { predicate: options.predicate }),
  ...(options.transform === undefined ? {} : { transform: options.transform })
})

/**
 * An owned kind with options of its own, for `owns` (controller-runtime's `Owns` with predicates,
 * and its per-kind cache transforms); `own` builds one with `B` inferred.
 */
export interface Own<B extends ObjectMeta.KubeObject = ObjectMeta.KubeObject> {
  readonly _tag: "Own"
  readonly resource: Resource.Resource<B>
  /**
   * Whether an update of an owned object is worth reconciling its owner: a status-only change of an
   * owned Deployment, say, is not. Adds and deletes always are, and so is an update that moved the
   * object to another controller owner (both owners hear of it).
   */
  predicate?(previous: B, next: B): boolean
  /**
   * What the cache keeps of each owned object, applied as it arrives (managedFields are dropped
   * before it): `predicate`, `ctx.cached` and `ctx.owned` see what it keeps. Whatever it returns,
   * the object's name, namespace, uid, resourceVersion, labels and ownerReferences are kept: they
   * are how a change finds its owner and a run's own write is recognised. An apply of the kind is
   * skipped only when the cached object holds every field it states, so a transform that drops a
   * field the controller applies makes that apply go on every run.
   */
  transform?(object: B): B
}

/**
 * An owned kind with an update predicate or a cache transform, for `owns`.
 *
 * @example
 * import { Builtins, Controller } from "@kubefx/kube"
 * // A Deployment's status changes (every rollout step) do not reconcile its owner; spec changes do.
 * const deployments = Controller.own(Builtins.Deployment, {
 *   predicate: (previous, next) => previous.metadata.generation !== next.metadata.generation
 * })
 * // The cache keeps the owned Secrets without their data.
 * const secrets = Controller.own(Builtins.Secret, { transform: ({ data: _, ...secret }) => secret })
 */
export const own = <B extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<B>,
  options: {
    readonly predicate?: ((previous: B, next: B) => boolean) | undefined
    readonly transform?: ((object: B) => B) | undefined
  } = {}
): Own<B> => ({
  _tag: "Own",
  resource,
  ...(options.predicate === undefined ? {} : { predicate: options.predicate }),
  ...(options.transform === undefined ? {} : { transform: options.transform })
})

const ownOf = (owned: Resource.Resource | Own): Own => "_tag" in owned && owned._tag === "Own" ? owned : own(owned as Resource.Resource)

// A transform of an owned kind keeps what the controller itself reads of each object.
const ownedTransform = (owned: Own) => (object: ObjectMeta.KubeObject): ObjectMeta.KubeObject => {
  const kept = Informer.stripManagedFields(object)
  const transformed = owned.transform!(kept)
  const metadata: Record<string, unknown> = { ...transformed.metadata }
  for (const field of ownedIdentity) {
    const value = kept.metadata[field]
    if (value === undefined) delete metadata[field]
    else metadata[field] = value
  }
  return { ...transformed, metadata }
}

const ownedIdentity = ["name", "namespace", "uid", "resourceVersion", "labels", "ownerReferences"] as const

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
   * Labels every object the controller owns carries (`applyOwned` and owned dependents add them):
   * the definition's `ownedLabels` and, in a sharded operator, the replica's shard label, so that
   * each replica caches only the owned objects of its own share. An owned object written another way
   * needs them to be seen by the controller.
   */
  readonly ownedLabels: Readonly<Record<string, string>>
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
  /**
   * Server-side applies a secondary object under the controller's field manager. For a kind the
   * controller caches (owns or watches), the body is signed with a digest of itself
   * (`kubefx.dev/applied-digest`) and not sent when the cached object already holds all of it: a
   * resync of converged objects costs no request, while a field someone else changed, or one this
   * body no longer states, is applied again.
   */
  readonly apply: <B extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<B>,
    body: Kube.ApplyBody
  ) => Effect.Effect<B, KubeError.KubeError | Resource.DecodeError>
  /** Like `apply`, with this object as the controller owner, so the object is garbage-collected with it. */
  readonly applyOwned: <B extends ObjectMeta.KubeObject>(
    resource: Resource.Resource<B>,
    body: Kube.ApplyBody
  ) => Effect.Effect<B, KubeError.KubeError | Resource.DecodeError>
  /**
   * An owned or watched object from the controller's caches: no API request. A kind both owned and
   * watched, with different labels selecting each cache (`ownedLabels`, a watch's `labelSelector`,
   * a shard), is read from whichever holds the key, the owned one first.
   */
  readonly cached: <B extends ObjectMeta.KubeObject>(resource: Resource.Resource<B>, key: string) => B | undefined
  /**
   * This object's children of an owned kind (one of `owns`): the cached objects whose controller
   * owner it is, from an index by owner, with no request and no scan (JOSDK's secondary resources;
   * controller-runtime lists them through an owner field index). A kind the controller does not
   * own is a programming error: it throws.
   */
  readonly owned: <B extends ObjectMeta.KubeObject>(resource: Resource.Resource<B>) => ReadonlyArray<B>
  /** Records a Kubernetes Event about the object (best effort, aggregated, never failing the run). */
  readonly recordEvent: (event: Events.Event) => Effect.Effect<void>
  /** The primary kind. */
  readonly resource: Resource.Resource<A>
  /**
   * The informer of an owned or watched kind (the same `Resource` value), to tell "not cached" from
   * "not watched"; of a kind both owned and watched through different selectors, the owned one.
   */
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
  /**
   * Watch these namespaces only (controller-runtime's `DefaultNamespaces`, JOSDK's `namespaces`):
   * each kind is cached per namespace, and the caches read as one. Not with `namespace`. In a
   * sharded operator, its sharder labels the primaries of these namespaces only.
   */
  readonly namespaces?: ReadonlyArray<string> | undefined
  /**
   * Reconcile only the primaries these labels select ("tier=web,!legacy"); checked as a
   * Kubernetes label selector when the controller is defined, as a watch's `labelSelector` is.
   */
  readonly labelSelector?: string | undefined
  /**
   * Kinds whose objects this controller owns: a change reconciles their controller owner
   * (`Resource.metadataOnly` caches one as metadata alone; `own` gives one an update predicate or a
   * cache transform).
   */
  readonly owns?: ReadonlyArray<Resource.Resource | Own<any>> | undefined
  /**
   * Labels every object this controller owns carries, and what its caches of owned kinds select by
   * (controller-runtime's per-kind cache selector): `applyOwned` and owned dependents add them, so
   * owning ConfigMaps or Secrets caches the controller's own, not every one in the namespace or the
   * cluster. An owned object written another way needs them to be seen; one that loses them leaves
   * the cache, which reconciles its owner (and its next `applyOwned` puts them back). Checked as
   * Kubernetes labels when the controller is defined.
   */
  readonly ownedLabels?: Readonly<Record<string, string>> | undefined
  /** Kinds whose changes reconcile the primaries they name (see `watch`). */
  readonly watches?: ReadonlyArray<Watch> | undefined
  /**
   * Keys ("namespace/name") to reconcile from outside the cluster: a message queue, a webhook
   * receiver, a poll of an external API (controller-runtime's `source.Channel`, JOSDK's external
   * event sources). Each key runs as a related event, merged with the key's other events; a key
   * whose object does not exist runs nothing. Read for as long as the controller runs.
   */
  readonly sources?: ReadonlyArray<Stream.Stream<string, never, R>> | undefined
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
  /**
   * In an operator with `leaderElection`, whether only the leader runs it; default true. False runs
   * it on every replica, leading or not (controller-runtime's `NeedLeaderElection`): for work each
   * replica does for itself, or reads only. Not in a sharded operator, whose replicas split the keys.
   */
  readonly needLeaderElection?: boolean | undefined
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
  /**
   * How long the controller waits for its caches (its kind's, and those of what it owns and
   * watches) to fill before it fails to start with `CacheSync.Timeout`, naming each unsynced cache
   * and why its list failed. Default 2 minutes, as controller-runtime.
   */
  readonly cacheSyncTimeout?: Duration.Input | undefined
  /**
   * Options of the primary's watch and cache (inactivity timeout, backoff, `indexes` a watch's
   * `map` looks primaries up by...). A cache with indexes or tuning of its own is not shared with
   * other controllers of the kind.
   */
  readonly watch?: Informer.Options<A> | undefined
  /**
   * Whether the watch event that brings back a run's own write runs that key again. Default false
   * (R16, as JOSDK): the run had the server's answer already. A run that wants another pass after
   * its writes returns `Outcome.requeueAfter(Duration.zero)`.
   */
  readonly reconcileOwnWrites?: boolean | undefined
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
  /**
   * A sharded replica: only objects labelled with `identity` are cached and reconciled here (the
   * operator follows their drain requests with `Handover.follow`).
   */
  readonly shard?: { readonly identity: string } | undefined
}

// Ready lives in `status.conditions`: a status without that field has nowhere to hold it.
const declaresConditions = (resource: Resource.Resource<ObjectMeta.KubeObject>): boolean => {
  const status = resource.custom?.status
  return status !== undefined && SchemaAST.isObjects(status.ast) &&
    status.ast.propertySignatures.some((property) => property.name === "conditions")
}

// What a running controller's runs share.
interface Parts<A extends ObjectMeta.KubeObject, E, R> {
  readonly kube: Kube.Client
  readonly options: Options<A, E, R>
  readonly resource: Resource.Resource<A>
  readonly fieldManager: string
  readonly finalizer: string
  readonly overlay: OverlayCache.OverlayCache<A>
  readonly status: StatusWrites.StatusWrites<A>
  readonly events: Events.Recorder
  /** Keyed by the very Resource value, so each entry's informer is of that resource's type. */
  readonly caches: ReadonlyMap<Resource.Resource, Cache>
  /** The cache of each owned kind, for `owned`. */
  readonly ownedCaches: ReadonlyMap<Resource.Resource, Informer.Informer<any>>
  /**
   * Objects that do not decode with the resource's Schema are reported, not skipped in silence:
   * their run fails with the decode error (counted, shown in /controllers), writes Ready=False
   * with reason DecodeError and records a Warning Event; a fix or a deletion ends it.
   */
  readonly undecodable: Map<string, Triggers.Undecodable>
  /** Sharded: an object asked to move is not reconciled here any more (its key is being released). */
  readonly sharded: boolean
  readonly ownedLabels: Readonly<Record<string, string>>
  /** What runs wrote, so that the watch bringing it back does not run the writer again. */
  readonly writes: OwnWrites.OwnWrites
}

const ownerReferenceOf = <A extends ObjectMeta.KubeObject>(resource: Resource.Resource<A>, object: Stored<A>): ObjectMeta.OwnerReference => ({
  apiVersion: resource.apiVersion,
  kind: resource.kind,
  name: object.metadata.name,
  uid: object.metadata.uid,
  controller: true,
  blockOwnerDeletion: true
})

// The object's own name and namespace unless the body names another.
const named = <A extends ObjectMeta.KubeObject>(object: Stored<A>, body: StatusBody): Kube.ApplyBody => ({
  ...body,
  metadata: {
    ...body.metadata,
    name: body.metadata?.name ?? object.metadata.name,
    namespace: body.metadata?.namespace ?? object.metadata.namespace
  }
})

// An apply under the controller's manager, not sent when the controller's cache of the kind holds
// it; a sent one is recorded as `writer`'s, so that its echo does not run the writer again.
const applyCached = <A extends ObjectMeta.KubeObject, B extends ObjectMeta.KubeObject, E, R>(
  parts: Parts<A, E, R>,
  writer: string,
  kind: Resource.Resource<B>,
  body: Kube.ApplyBody
): Effect.Effect<B, KubeError.KubeError | Resource.DecodeError> =>
  Effect.map(
    OwnWrites.around(
      parts.writes,
      kind,
      ObjectMeta.keyOf(kind.namespaced ? body.metadata.namespace : undefined, body.metadata.name),
      writer,
      Applies.apply(parts.kube, kind, body, { fieldManager: parts.fieldManager, force: true }, parts.caches.get(kind)),
      (applied) => applied.applied ? applied.object : undefined
    ),
    (applied) => applied.object
  )

// What a key from one of the definition's `sources` runs as.
const external = Trigger.related("external source")

// A reconcile (one that can `report`) stages its status for the run's one write; cleanup and
// explicit managers apply at once.
const contextFor = <A extends ObjectMeta.KubeObject, E, R>(
  parts: Parts<A, E, R>,
  object: Stored<A>,
  report?: (condition: ReadyCondition) => void
): Context<A> => {
  const { caches, events, fieldManager, overlay, resource, status } = parts
  const writer = ObjectMeta.key(object)
  const ownerReference = ownerReferenceOf(resource, object)
  return {
    kube: OwnWrites.recording(parts.writes, parts.kube, writer),
    fieldManager,
    ownerReference,
    ownedLabels: parts.ownedLabels,
    patchStatusAndCache: (fresh) =>
      overlay.patchStatusAndCache(object, typeof fresh === "function" ? (latest) => named(object, fresh(latest)) : named(object, fresh)),
    applyStatus: (body, applyOptions) => {
      const write = named(object, body)
      const self = write.metadata.name === object.metadata.name && write.metadata.namespace === object.metadata.namespace
      return report !== undefined && applyOptions?.fieldManager === undefined && self
        ? status.stage(writer, object, (body.status ?? {}) as StatusWrites.Status)
        : status.applyNow(write, applyOptions?.fieldManager ?? fieldManager)
    },
    apply: (kind, body) => applyCached(parts, writer, kind, body),
    applyOwned: (kind, body) =>
      applyCached(parts, writer, kind, {
        ...body,
        metadata: {
          ...body.metadata,
          namespace: body.metadata.namespace ?? object.metadata.namespace,
          ...Handover.withOwnedLabels(body.metadata.labels, parts.ownedLabels),
          ownerReferences: [ownerReference]
        }
      }),
    cached: (kind, key) => caches.get(kind)?.get(key),
    owned: (kind) => {
      const informer = parts.ownedCaches.get(kind)
      if (informer === undefined) {
        throw new Error(`controller ${parts.options.name} does not own ${kind.kind}: add it to owns to read its children from the cache`)
      }
      return informer.ownedBy(object.metadata.uid)
    },
    recordEvent: (event) => events.record(object, event),
    resource,
    informer: (kind) => caches.get(kind)?.informer,
    setReadyCondition: (condition) => Effect.sync(() => report?.(condition))
  }
}

// R17: a deleting object runs the cleanup and loses the finalizer; otherwise it gets the finalizer first.
const finalize = Effect.fnUntraced(function*<A extends ObjectMeta.KubeObject, E, R>(parts: Parts<A, E, R>, object: Stored<A>) {
  const { finalizer, kube, options, resource } = parts
  if (!Finalizers.has(object, finalizer)) return Outcome.done
  if (options.cleanup !== undefined) {
    const outcome = yield* options.cleanup(object, contextFor(parts, object))
    if (outcome !== undefined && outcome._tag === "RequeueAfter") return outcome
  }
  yield* Finalizers.remove(kube, resource, object, finalizer)
  return Outcome.done
})

const readyOf = (reported: ReadyCondition | undefined): Conditions.Update =>
  reported === undefined
    ? Conditions.ready()
    : reported.status === "True"
    ? Conditions.ready({ reason: reported.reason, message: reported.message ?? "" })
    : Conditions.notReady(reported.message ?? "", { reason: reported.reason })

// Made once per controller: a generator function made per run would cost V8 a hidden class per run,
// made in the old generation, which keeps everything the run's generator reached alive until a full
// collection (see the package README's performance notes).
const reconcileKey = <A extends ObjectMeta.KubeObject, E, R>(
  parts: Parts<A, E, R>
): (key: string) => Effect.Effect<Outcome.Outcome, E | KubeError.KubeError | Resource.DecodeError, R> =>
  Effect.fnUntraced(function*(key: string) {
    const { finalizer, kube, options, overlay, resource, status } = parts
    const broken = parts.undecodable.get(key)
    if (broken !== undefined) return yield* Effect.fail(broken.error)
    const cached = yield* overlay.get(key)
    if (cached === undefined || !isStored(cached)) return Outcome.done
    if (parts.sharded && Handover.placement(cached).draining !== undefined) return Outcome.done
    let object = cached
    status.begin(key, object)
    if (ObjectMeta.isDeleting(object)) return yield* finalize(parts, object)
    if (options.cleanup !== undefined && !Finalizers.has(object, finalizer)) {
      const finalized = yield* OwnWrites.around(parts.writes, resource, key, key, Finalizers.add(kube, resource, object, finalizer), identity)
      yield* overlay.remember(finalized)
      if (isStored(finalized)) object = finalized
    }
    let reported: ReadyCondition | undefined
    const outcome = yield* options.reconcile(object, contextFor(parts, object, (condition) => {
      reported = condition
    }))
    yield* status.finish(key, readyOf(reported), true)
    yield* status.released(key, object)
    return outcome
  })

// R9/R10: the failure goes to status (with what the run staged) and to an Event, then to the user's onError.
const onError = <A extends ObjectMeta.KubeObject, E, R>(parts: Parts<A, E, R>) =>
  Effect.fnUntraced(function*(key: string, failure: Engine.RunFailure<RunError<E>>, info: RetryInfo.RetryInfo) {
    const { events, options, overlay, resource, status } = parts
    const broken = parts.undecodable.get(key)
    if (broken !== undefined) {
      // Nothing to retry until the object changes: its next version is a new event.
      const message = Failure.truncate(broken.error.message, Conditions.readyMessageLength)
      yield* status.undecodable(broken.object, message)
      const metadata = (broken.object as { readonly metadata?: ObjectMeta.ObjectMeta } | null)?.metadata ?? {}
      yield* events.record({ apiVersion: resource.apiVersion, kind: resource.kind, metadata }, { type: "Warning", reason: "DecodeError", message })
      return { retry: false }
    }
    const message = Conditions.cut(Failure.message(failure))
    // What the run staged goes with Ready=False; if that write fails, Ready=False alone.
    yield* status.finish(key, Conditions.notReady(message), false).pipe(
      Effect.catchCause(() => status.finish(key, Conditions.notReady(message), false)),
      Effect.catchCause((cause) => Effect.logWarning(`could not record the failure of ${key} in its status`, cause))
    )
    const object = yield* overlay.get(key)
    if (object !== undefined) yield* events.record(object, { type: "Warning", reason: "ReconcileError", message })
    if (options.onError === undefined || object === undefined || !isStored(object)) return { retry: true }
    return yield* options.onError(object, failure, info)
  })

const transformAfterStrip = (watch: Watch) => (object: ObjectMeta.KubeObject) => watch.transform!(Informer.stripManagedFields(object))

const run = <A extends ObjectMeta.KubeObject, E, R>(
  definition: Definition<A, E, R>,
  runWith: RunWith
): Effect.Effect<Controller<A>, CacheSync.Timeout, R | Kube.Kube | Scope.Scope> =>
  Effect.gen(function*() {
    const kube = yield* Kube.Kube
    const { options } = definition
    const resource = options.for
    const fieldManager = options.fieldManager ?? options.name
    const informers = yield* SharedInformers.SharedInformers
    const labelSelector = runWith.shard === undefined ? options.labelSelector : Handover.selector(runWith.shard.identity, options.labelSelector)
    // One cache per namespace watched (or one for the namespace or the cluster), read as one; a
    // kind no namespace holds has one cache of the cluster's.
    const scopes: ReadonlyArray<string | undefined> = options.namespaces ?? [options.namespace]
    const cacheOf = <B extends ObjectMeta.KubeObject>(kind: Resource.Resource<B>, informerOptions: Informer.Options<B>) =>
      Effect.map(
        Effect.forEach(kind.namespaced ? scopes : [undefined], (namespace) => informers.get(kind, { ...informerOptions, namespace })),
        Informer.merge
      )
    const primary = yield* cacheOf(resource, { ...options.watch, labelSelector })
    // Locked writes under a field manager of their own: the controller's unlocked status applies,
    // which state only their own fields, never remove a value a locked write allocated.
    const overlay = yield* OverlayCache.make(primary, { fieldManager: `${fieldManager}-locked` })
    // Owned objects carry the definition's labels and their owner's shard label: the owned caches
    // select by them, so a replica caches only its share of them too.
    const ownedLabels: Record<string, string> = {
      ...options.ownedLabels,
      ...(runWith.shard === undefined ? {} : { [Handover.shardLabel]: runWith.shard.identity })
    }
    const owns = (options.owns ?? []).map(ownOf)
    const owned = yield* Effect.forEach(owns, (kind) =>
      cacheOf(kind.resource, {
        labelSelector: selectorOf(ownedLabels),
        // As a watch's: a transform of its own makes the cache this controller's alone.
        ...(kind.transform === undefined ? {} : { transform: ownedTransform(kind) })
      }))
    const watched = yield* Effect.forEach(options.watches ?? [], (watch) =>
      Effect.map(
        cacheOf(watch.resource, {
          labelSelector: watch.labelSelector,
          fieldSelector: watch.fieldSelector,
          // A transform of its own makes the cache this watch's alone (an informer shares none).
          ...(watch.transform === undefined ? {} : { transform: transformAfterStrip(watch) })
        }),
        (informer) => ({ watch, informer })
      ))
    const secondaries = [...owned, ...watched.map((w) => w.informer)]
    // Workers start once every cache is complete, so a reconcile never acts on a partial view.
    yield* CacheSync.wait([primary, ...secondaries], { controller: options.name, timeout: options.cacheSyncTimeout })

    // Changes held while their writer's write was in flight, that were not its echo.
    const redelivered = yield* Queue.unbounded<Engine.Event>()
    const parts: Parts<A, E, R> = {
      kube,
      options,
      resource,
      fieldManager,
      finalizer: options.finalizer ?? defaultFinalizer(resource.group, options.name),
      overlay,
      status: StatusWrites.make({ kube, resource, overlay, fieldManager, writeReady: declaresConditions(resource) }),
      events: yield* Events.make({ component: options.name }),
      caches: cachesOf(secondaries),
      ownedCaches: new Map(owned.map((informer) => [informer.resource, informer])),
      undecodable: new Map(),
      sharded: runWith.shard !== undefined,
      ownedLabels,
      writes: OwnWrites.make(options.reconcileOwnWrites === true ? [] : [primary, ...secondaries], {
        redeliver: (events) => Queue.offerAllUnsafe(redelivered, events)
      })
    }
    const engine = yield* Engine.make({
      name: options.name,
      reconcile: reconcileKey(parts),
      source: [
        Triggers.primary(primary, options.predicate ?? generationChanged, parts.status.forget, parts.writes),
        Triggers.validity(primary, parts.undecodable),
        Stream.fromQueue(redelivered),
        ...[
          ...owned.map((informer, i) => Triggers.owned(informer, resource, parts.writes, owns[i]!.predicate?.bind(owns[i]))),
          ...watched.map(({ informer, watch }) => Triggers.watched(informer, (object) => watch.map(object, primary), parts.writes, watch.predicate?.bind(watch))),
          ...secondaries.map((informer) => Triggers.served(informer, primary.keys)),
          ...(options.sources ?? []).map((source) => Stream.map(source, (key) => Engine.enqueue(key, external)))
          // A sharded replica runs only its own keys: another replica's object is that replica's to reconcile.
        ].map((related) => runWith.shard === undefined ? related : Stream.filter(related, (event) => primary.get(event.key) !== undefined))
      ],
      concurrency: options.concurrency,
      retryPolicy: options.retryPolicy,
      rateLimit: options.rateLimit,
      degradeAfter: options.degradeAfter,
      dependsOn: runWith.dependsOn,
      onHeld: parts.status.held,
      timeout: options.timeout,
      held: runWith.held,
      resync: options.resync,
      keys: Effect.sync(primary.keys),
      snapshot: (key) => Effect.map(overlay.get(key), Option.fromUndefinedOr),
      rollback: options.rollback,
      onError: onError(parts)
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
      finalizer: parts.finalizer,
      fieldManager,
      informers: [primary, ...secondaries]
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
  /** The one namespace it watches, if it watches one. */
  readonly namespace: string | undefined
  /** The namespaces it watches, when given several. */
  readonly namespaces: ReadonlyArray<string> | undefined
  readonly labelSelector: string | undefined
  readonly owns: ReadonlyArray<Resource.Resource>
  readonly watches: ReadonlyArray<Resource.Resource>
  readonly concurrency: number
  /** The finalizer it keeps on every primary, when it has a cleanup. */
  readonly finalizer: string | undefined
  /** Controllers started first, and healthy for this one to reconcile (R12). */
  readonly dependsOn: ReadonlyArray<Any<R>>
  /** Permissions the reconciler needs beyond what the definition shows (for `Rbac`). */
  readonly rules: ReadonlyArray<Rbac.PolicyRule>
  /** Whether only the leader runs it, in an operator with leader election. */
  readonly needLeaderElection: boolean
  /** Starts it in the current scope: what operators call. */
  readonly run: (runWith: RunWith) => Effect.Effect<Running, CacheSync.Timeout, R | Kube.Kube | Scope.Scope>
}

/** A controller for objects `A` whose runs fail with `E` and need services `R`, declared. */
export interface Definition<A extends ObjectMeta.KubeObject, E = never, R = never> extends Any<R> {
  readonly options: Options<A, E, R>
}

/** A kind's caches as a run reads them: its first informer, and a look-up across all of them. */
interface Cache {
  readonly informer: Informer.Informer<any>
  readonly get: (key: string) => any
}

// A kind cached more than once (owned and watched through different selectors) is read from
// whichever cache holds the key, in the order given (owned kinds first), and its informer is the
// first: an apply of an owned object finds what it wrote, so an unchanged one is not sent again.
const cachesOf = (informers: ReadonlyArray<Informer.Informer<any>>): Map<Resource.Resource, Cache> => {
  const byResource = new Map<Resource.Resource, Array<Informer.Informer<any>>>()
  for (const informer of informers) {
    const same = byResource.get(informer.resource)
    if (same === undefined) byResource.set(informer.resource, [informer])
    else same.push(informer)
  }
  return new Map([...byResource].map(([resource, same]) => [resource, {
    informer: same[0]!,
    get: same.length === 1 ? same[0]!.get : (key: string) => {
      for (const informer of same) {
        const object = informer.get(key)
        if (object !== undefined) return object
      }
      return undefined
    }
  }]))
}

// "k=v,k2=v2", or no selector for no labels.
const selectorOf = (labels: Readonly<Record<string, string>>): string | undefined => {
  const pairs = Object.entries(labels).map(([key, value]) => `${key}=${value}`)
  return pairs.length === 0 ? undefined : pairs.join(",")
}

// A label the server would refuse makes every list of an owned cache fail and the controller never
// start: it is refused here, when the controller is declared.
const checkOwnedLabels = (name: string, labels: Readonly<Record<string, string>>): void => {
  for (const [key, value] of Object.entries(labels)) {
    const problems = key === Handover.shardLabel
      ? [`it is the sharder's label`]
      : [...NameRules.qualifiedName(key), ...NameRules.labelValue(value)]
    if (problems.length > 0) throw new Error(`controller ${name}: ownedLabels ${key}=${value}: ${problems.join("; ")}`)
  }
}

// Likewise a selector the server would refuse: the primary's, or a watched kind's.
const checkSelectors = (name: string, options: Options<any, any, any>): void => {
  const check = (what: string, selector: string | undefined, parse: (selector: string) => Result.Result<unknown, string>) => {
    const parsed = selector === undefined ? undefined : parse(selector)
    if (parsed !== undefined && Result.isFailure(parsed)) {
      throw new Error(`controller ${name}: ${what} ${JSON.stringify(selector)}: ${parsed.failure}`)
    }
  }
  check("labelSelector", options.labelSelector, LabelSelectors.parse)
  check("watch.fieldSelector", options.watch?.fieldSelector, FieldSelectors.parse)
  for (const watch of options.watches ?? []) {
    check(`watches ${watch.resource.kind} labelSelector`, watch.labelSelector, LabelSelectors.parse)
    check(`watches ${watch.resource.kind} fieldSelector`, watch.fieldSelector, FieldSelectors.parse)
  }
}

// And a finalizer it would refuse, which would fail every first reconcile: not a qualified name, or,
// on a built-in kind, a name without a path that is not one of kube's own.
const checkFinalizer = (name: string, resource: Resource.Resource<any>, finalizer: string | undefined): void => {
  if (finalizer === undefined) return
  const problems = [...NameRules.qualifiedName(finalizer)]
  if (resource.custom === undefined && !NameRules.isKubeFinalizerName(finalizer)) {
    problems.push(`a finalizer on the built-in kind ${resource.kind} needs a domain and a path (as example.com/${finalizer})`)
  }
  if (problems.length > 0) throw new Error(`controller ${name}: finalizer ${JSON.stringify(finalizer)}: ${problems.join("; ")}`)
}

// Namespaces the API server would refuse, none, one twice, or both `namespace` and `namespaces`.
const checkNamespaces = (name: string, namespace: string | undefined, namespaces: ReadonlyArray<string> | undefined): void => {
  if (namespaces === undefined) return
  const problem = namespace !== undefined
    ? "give namespace or namespaces, not both"
    : namespaces.length === 0
    ? "namespaces is empty: leave it out to watch every namespace"
    : new Set(namespaces).size < namespaces.length
    ? "namespaces names one twice"
    : namespaces.flatMap((ns) => NameRules.dns1123Label(ns).map((p) => `namespace ${JSON.stringify(ns)}: ${p}`)).join("; ")
  if (problem !== "") throw new Error(`controller ${name}: ${problem}`)
}

// A kind owned twice (as it is, metadata-only, or through `own`) would have two caches and two
// triggers for each of its objects, and no one predicate or transform.
const checkOwns = (name: string, owns: ReadonlyArray<Own>): void => {
  const seen = new Set<string>()
  for (const { resource } of owns) {
    const kind = `${resource.kind}.${resource.group}`
    if (seen.has(kind)) throw new Error(`controller ${name}: owns ${resource.kind} twice: list each kind once (Controller.own gives one its options)`)
    seen.add(kind)
  }
}

const makeDefinition = <A extends ObjectMeta.KubeObject, E, R>(options: Options<A, E, R>): Definition<A, E, R> => {
  checkNamespaces(options.name, options.namespace, options.namespaces)
  const owns = (options.owns ?? []).map(ownOf)
  checkOwns(options.name, owns)
  checkOwnedLabels(options.name, options.ownedLabels ?? {})
  checkSelectors(options.name, options)
  checkFinalizer(options.name, options.for, options.cleanup === undefined ? undefined : options.finalizer ?? defaultFinalizer(options.for.group, options.name))
  const self: Definition<A, E, R> = {
    ...Pipeable.Prototype,
    _tag: "ControllerDefinition",
    name: options.name,
    for: options.for,
    namespace: options.namespace,
    namespaces: options.namespaces,
    labelSelector: options.labelSelector,
    owns: owns.map((owned) => owned.resource),
    watches: (options.watches ?? []).map((watch) => watch.resource),
    concurrency: options.concurrency ?? 1,
    finalizer: options.cleanup === undefined ? undefined : options.finalizer ?? defaultFinalizer(options.for.group, options.name),
    dependsOn: options.dependsOn ?? [],
    rules: options.rbac ?? [],
    needLeaderElection: options.needLeaderElection ?? true,
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
 * Starts a controller alone in the current scope, once its caches have synced (or fails with
 * `CacheSync.Timeout` when they have not within `cacheSyncTimeout`). One with `dependsOn` runs in
 * an operator, which starts its dependencies.
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
): Effect.Effect<Controller<A>, CacheSync.Timeout, R | Kube.Kube | Scope.Scope> =>
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
