/**
 * The generic REST storage of kube-apiserver, without HTTP: get, list, create, update (with the
 * `/status` rules), delete with finalizers and propagation, and deletecollection, on any served
 * resource. Controllers inside the server (garbage collector, namespace and CRD lifecycle) call
 * these same functions, so their writes follow the same rules as a client's.
 */
import { Duration, Effect } from "effect"
import * as Admission from "./Admission.ts"
import * as AdmissionPolicies from "./AdmissionPolicies.ts"
import * as Authentication from "./Authentication.ts"
import * as Authorization from "./Authorization.ts"
import * as ClaimResize from "./ClaimResize.ts"
import * as DefaultStorageClass from "./DefaultStorageClass.ts"
import * as GracefulDeletion from "./GracefulDeletion.ts"
import * as Lists from "./Lists.ts"
import * as LimitRanger from "./LimitRanger.ts"
import * as Metadata from "./Metadata.ts"
import * as PodSecurityAdmission from "./PodSecurityAdmission.ts"
import * as PriorityAdmission from "./PriorityAdmission.ts"
import * as QuotaUsage from "./QuotaUsage.ts"
import * as Registry from "./Registry.ts"
import * as ResourceType from "./ResourceType.ts"
import * as Scale from "./Scale.ts"
import * as Selectors from "./Selectors.ts"
import * as ServiceAccountAdmission from "./ServiceAccountAdmission.ts"
import * as Status from "./Status.ts"
import * as StorageProtection from "./StorageProtection.ts"
import type * as Store from "./Store.ts"
import * as Webhooks from "./Webhooks.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** How the server records field ownership for writes that are not server-side apply. */
export interface FieldManagement {
  readonly update: (
    resource: Registry.Resource,
    old: KubeObject.KubeObject | undefined,
    next: KubeObject.KubeObject,
    manager: string,
    subresource: string | undefined
  ) => Effect.Effect<KubeObject.KubeObject, Status.ApiError>
}

export interface Env {
  readonly store: Store.Store
  readonly registry: Registry.Registry
  readonly schemas: Admission.Schemas
  readonly fields: FieldManagement
  /** Who may do what: RBAC over the stored roles and bindings. */
  readonly authorization: Authorization.Authorization
  /** Waits until a write is durable (a no-op without a data directory). */
  readonly durable: (revision: number) => Effect.Effect<void, Status.ApiError>
}

export interface Target {
  readonly resource: Registry.Resource
  /** undefined for cluster-scoped resources. */
  readonly namespace: string | undefined
  readonly name: string
}

export interface WriteOptions {
  readonly dryRun: boolean
  readonly fieldManager: string
  readonly fieldValidation: Admission.FieldValidation
  /** Who writes: what admission webhooks see, and whose rights a role or binding may not exceed; default the administrator. */
  readonly user?: Authentication.User | undefined
}

export interface Written {
  /** The object as the client sees it. */
  readonly object: KubeObject.KubeObject
  readonly created: boolean
  readonly warnings: ReadonlyArray<string>
}

export interface ListOptions {
  readonly labelSelector: Selectors.LabelSelector
  readonly fieldSelector: Selectors.FieldSelector
  readonly limit: number | undefined
  readonly continue: string | undefined
  readonly resourceVersion: string | undefined
  readonly resourceVersionMatch: string | undefined
}

export interface Listed {
  readonly items: ReadonlyArray<KubeObject.KubeObject>
  readonly revision: number
  readonly continue: string | undefined
  readonly remaining: number | undefined
}

export type PropagationPolicy = "Background" | "Foreground" | "Orphan"

/** The subresources whose writes replace or patch part of the object: a Pod's `ephemeralcontainers`, any `status`. */
export type Subresource = "status" | "ephemeralcontainers"

export interface DeleteOptions {
  readonly propagationPolicy: PropagationPolicy | undefined
  /** The grace period a Pod's deletion asks for; undefined: the Pod's own. Other kinds ignore it. */
  readonly gracePeriodSeconds?: number | undefined
  readonly preconditions: { readonly uid?: string; readonly resourceVersion?: string } | undefined
  readonly dryRun: boolean
  /** Who deletes, as admission webhooks see it; default the administrator. */
  readonly user?: Authentication.User | undefined
}

export interface Deleted {
  /** The object still being deleted (finalizers hold it), or the Status of a completed delete. */
  readonly body: KubeObject.KubeObject
  readonly removed: boolean
}

/** What an update decides, given the current object. */
export type Decision =
  | { readonly _tag: "Write"; readonly object: KubeObject.KubeObject; readonly warnings: ReadonlyArray<string> }
  | { readonly _tag: "Unchanged"; readonly object: KubeObject.KubeObject }

export const finalizerForeground = "foregroundDeletion"
export const finalizerOrphan = "orphan"

/**
 * The stored object as `resource` serves it (version conversion, schema defaults).
 *
 * @example
 * import * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * declare const resource: import("./Registry.ts").Resource
 * Rest.present(env, resource, { metadata: { name: "a" } }).kind
 */
export const present = (env: Env, resource: Registry.Resource, stored: KubeObject.KubeObject): KubeObject.KubeObject => {
  const served = Registry.served(resource, stored)
  return resource.type.custom ? env.schemas.default(resource, served) : served
}

/**
 * Stored objects as `resource` serves them; a CRD that converts by webhook converts those stored
 * in another version first (one ConversionReview for all).
 *
 * @example
 * import * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * declare const resource: import("./Registry.ts").Resource
 * const served = Rest.presentAll(env, resource, []) // Effect<[], ApiError>
 */
export const presentAll = (
  env: Env,
  resource: Registry.Resource,
  stored: ReadonlyArray<KubeObject.KubeObject>
): Effect.Effect<ReadonlyArray<KubeObject.KubeObject>, Status.ApiError> =>
  resource.convert === undefined
    ? Effect.succeed(stored.map((o) => present(env, resource, o)))
    : Effect.map(
      resource.convert.converter(stored, ResourceType.groupVersion(resource.type)),
      (converted) => converted.map((o) => present(env, resource, o))
    )

const presentOne = (env: Env, resource: Registry.Resource, stored: KubeObject.KubeObject) =>
  Effect.map(presentAll(env, resource, [stored]), (served) => served[0]!)

// A written object as it is stored: converted to the storage version by the CRD's webhook, if any.
const storable = (resource: Registry.Resource, written: KubeObject.KubeObject): Effect.Effect<KubeObject.KubeObject, Status.ApiError> =>
  resource.convert === undefined
    ? Effect.succeed(Registry.stored(resource, written))
    : Effect.map(
      resource.convert.converter(
        [{ ...written, apiVersion: ResourceType.groupVersion(resource.type), kind: resource.type.kind }],
        resource.convert.storageApiVersion
      ),
      (converted) => Registry.stored(resource, converted[0]!)
    )

// A role or binding written by anyone but an administrator grants no more than its writer holds.
const noEscalation = (env: Env, resource: Registry.Resource, object: KubeObject.KubeObject, options: WriteOptions) => {
  const user = options.user
  if (user === undefined || resource.type.group !== "rbac.authorization.k8s.io") return Effect.void
  const refused = env.authorization.escalation(user, resource.type, object)
  return refused === undefined ? Effect.void : Effect.fail(refused)
}

const revisionOf = (object: KubeObject.KubeObject): number => Number(KubeObject.meta(object).resourceVersion ?? 0)

const namespaceOf = (target: Target): string => target.namespace ?? ""

/**
 * Reads one object, or 404.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * declare const target: Rest.Target
 * const object = Rest.get(env, target) // Effect<KubeObject, ApiError>
 */
export const get = (env: Env, target: Target): Effect.Effect<KubeObject.KubeObject, Status.ApiError> => {
  const stored = env.store.get(target.resource.storage, namespaceOf(target), target.name)
  return stored === undefined
    ? Effect.fail(Status.notFound(target.resource.type, target.name))
    : presentOne(env, target.resource, stored)
}

// As kube-apiserver's cache: a resourceVersion the store has not reached yet (one from before a
// restart without a data dir, say) is waited for up to 3 s, then answered 504 rather than with
// an older state the client would take for "not older than" its version.
const awaitRevision = (store: Store.Store, revision: number): Effect.Effect<void, Status.ApiError> =>
  Effect.callback<void>((resume) => {
    const unsubscribe = store.subscribe(() => {
      if (store.revision() >= revision) {
        unsubscribe()
        resume(Effect.void)
      }
    })
    return Effect.sync(unsubscribe)
  }).pipe(
    Effect.timeoutOrElse({
      duration: Duration.seconds(3),
      orElse: () => Effect.fail(Status.resourceVersionTooLarge(revision, store.revision()))
    })
  )

/**
 * Lists the objects of a resource (one namespace, or all when `namespace` is undefined) that match
 * the selectors, one page at a time.
 *
 * @example
 * import * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * declare const resource: import("./Registry.ts").Resource
 * const page = Rest.list(env, resource, "default", {
 *   labelSelector: [], fieldSelector: [], limit: 10, continue: undefined, resourceVersion: undefined, resourceVersionMatch: undefined
 * })
 */
export const list = Effect.fnUntraced(function*(
  env: Env,
  resource: Registry.Resource,
  namespace: string | undefined,
  options: ListOptions
) {
  const store = env.store
  let after: string | undefined
  const requested = Number(options.resourceVersion)
  const fromContinue = options.continue !== undefined && options.continue !== ""
  if (!fromContinue && Number.isSafeInteger(requested) && requested > store.revision()) {
    yield* awaitRevision(store, requested)
  }
  let revision = store.revision()
  if (fromContinue) {
    if (options.resourceVersion !== undefined && options.resourceVersion !== "" && options.resourceVersion !== "0") {
      return yield* Status.badRequest("specifying resource version is not allowed when using continue")
    }
    const token = yield* Lists.decodeToken(options.continue!)
    // A token an expired list handed back goes on at the latest revision.
    revision = token.revision === Lists.latest ? store.revision() : token.revision
    after = token.after
  } else if (options.resourceVersionMatch === "Exact") {
    const n = Number(options.resourceVersion)
    if (options.resourceVersion === undefined || options.resourceVersion === "" || !Number.isSafeInteger(n)) {
      return yield* Status.invalidOptions("ListOptions", [
        Status.fieldForbidden("resourceVersionMatch", "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"\"")
      ])
    }
    revision = Math.min(n, revision)
  } else if (options.resourceVersionMatch !== undefined && options.resourceVersionMatch !== "" && options.resourceVersionMatch !== "NotOlderThan") {
    return yield* Status.invalidOptions("ListOptions", [
      Status.fieldInvalid("resourceVersionMatch", options.resourceVersionMatch, "must be one of Exact, NotOlderThan")
    ])
  }
  const unfiltered = options.labelSelector.length === 0 && options.fieldSelector.length === 0
  const limit = options.limit !== undefined && options.limit > 0 ? options.limit : undefined
  // A page of the current objects with no selector is cut out by the store, which counts the rest:
  // a page costs its own size, however long the list.
  const cut = unfiltered && limit !== undefined && revision >= store.revision()
  const all = cut
    ? store.list(resource.storage, namespace, after, limit)
    : store.listAt(resource.storage, namespace, revision, after)
  if (all === undefined) {
    return yield* after === undefined
      ? Status.expired(`too old resource version: ${revision} (${store.compactedRevision() + 1})`)
      : Status.continueExpired(Lists.encodeToken({ revision: Lists.latest, after }))
  }
  const selectable = resource.fromStorage ?? ((o: KubeObject.KubeObject) => o)
  const filtered = unfiltered
    ? all
    : all.filter((o) =>
      Selectors.matchesLabels(options.labelSelector, KubeObject.meta(o).labels) &&
      (options.fieldSelector.length === 0 || Selectors.matchesFields(options.fieldSelector, selectable(o), resource.fieldValues))
    )
  const page = Lists.page(filtered, {
    limit: options.limit,
    revision,
    countRemaining: unfiltered,
    total: cut ? store.count(resource.storage, namespace, after) : undefined
  })
  return {
    items: yield* presentAll(env, resource, page.items),
    revision,
    continue: page.continue,
    remaining: page.remaining
  } satisfies Listed
})

const checkTypeMeta = (resource: Registry.Resource, body: KubeObject.KubeObject): Effect.Effect<void, Status.ApiError> => {
  const expected = ResourceType.groupVersion(resource.type)
  if (typeof body.apiVersion === "string" && body.apiVersion !== "" && body.apiVersion !== expected) {
    return Effect.fail(
      Status.badRequest(`the API version in the data (${body.apiVersion}) does not match the expected API version (${expected})`)
    )
  }
  if (typeof body.kind === "string" && body.kind !== "" && body.kind !== resource.type.kind) {
    return Effect.fail(
      Status.badRequest(`the kind in the data (${body.kind}) does not match the expected kind (${resource.type.kind})`)
    )
  }
  return Effect.void
}

const checkNamespace = (target: Pick<Target, "resource" | "namespace">, body: KubeObject.KubeObject) => {
  const inBody = KubeObject.meta(body).namespace
  if (target.resource.type.namespaced && inBody !== undefined && inBody !== "" && inBody !== target.namespace) {
    return Effect.fail(
      Status.badRequest("the namespace of the provided object does not match the namespace sent on the request")
    )
  }
  return Effect.void
}

// The handler's checkName: a body that names another object than the URL is a 400 before anything
// the storage would check (existence, resourceVersion).
const checkIdentity = (target: Target, body: KubeObject.KubeObject) =>
  Effect.gen(function*() {
    yield* checkTypeMeta(target.resource, body)
    yield* checkNamespace(target, body)
    const name = KubeObject.meta(body).name
    if (name !== undefined && name !== "" && name !== target.name) {
      return yield* Status.badRequest(`the name of the object (${name}) does not match the name on the URL (${target.name})`)
    }
  })

/** The other served versions of a resource, for webhooks of matchPolicy Equivalent. */
const equivalentsOf = (env: Env, resource: Registry.Resource): Webhooks.Attributes["equivalents"] => {
  const others = env.registry.byStorage(resource.storage).filter((r) => r !== resource && r.type.kind === resource.type.kind)
  if (others.length === 0) return undefined
  return {
    resources: others,
    convert: (objects, to) =>
      to.convert !== undefined
        ? to.convert.converter(objects, ResourceType.groupVersion(to.type))
        : Effect.succeed(objects.map((o) => {
          const from = [resource, ...others].find((r) => ResourceType.groupVersion(r.type) === o.apiVersion) ?? resource
          return Registry.served(to, Registry.stored(from, o))
        }))
  }
}

/**
 * The admission plugins a write reaches: LimitRanger's defaults and the ServiceAccount plugin on a
 * pod's creation, then the mutating webhooks; past the object's own validation, LimitRanger's
 * bounds for pods and claims, PodSecurity for pods, workloads and namespaces, the bound
 * ValidatingAdmissionPolicies, the validating webhooks, and last the namespace's ResourceQuotas on
 * a creation. Webhooks run when any webhook configuration exists. A creation by `generateName`
 * (`generated`) is mutated before kube names it: mutating plugins and webhooks see no name (a
 * refusal names the prefix), validating ones the generated name.
 */
const admissionHooks = (
  env: Env,
  target: Target,
  subresource: string | undefined,
  operation: "CREATE" | "UPDATE",
  oldObject: KubeObject.KubeObject | undefined,
  options: WriteOptions,
  generated?: string
): Admission.Hooks | undefined => {
  const webhooks = Webhooks.configured(env.store)
  const policies = AdmissionPolicies.configured(env.store)
  const podSecurity = PodSecurityAdmission.applies(target.resource, subresource)
  const serviceAccount = ServiceAccountAdmission.applies(target.resource, subresource, operation)
  const storageClass = DefaultStorageClass.applies(target.resource, subresource, operation)
  const storageProtection = StorageProtection.applies(target.resource, subresource, operation)
  const claimResize = ClaimResize.applies(target.resource, subresource, operation)
  const priority = PriorityAdmission.applies(target.resource, subresource)
  const namespace = target.resource.type.namespaced ? target.namespace : undefined
  const quota = operation === "CREATE" && subresource === undefined && namespace !== undefined && env.store.count("resourcequotas", namespace) > 0
  const limits = namespace !== undefined && LimitRanger.applies(target.resource, subresource, operation) && env.store.count("limitranges", namespace) > 0
  if (!webhooks && !policies && !podSecurity && !serviceAccount && !storageClass && !storageProtection && !claimResize && !priority && !quota && !limits) {
    return undefined
  }
  const scale = subresource === "scale"
  // A scale write reaches webhooks and policies as kube sends it: the scale subresource, on the
  // autoscaling/v1 Scale view of the object.
  const attributes = (object: KubeObject.KubeObject, name = target.name): Webhooks.Attributes => ({
    operation,
    resource: target.resource,
    subresource,
    name,
    namespace,
    object: scale ? Scale.toScale(target.resource, object) : object,
    oldObject: scale && oldObject !== undefined ? Scale.toScale(target.resource, oldObject) : oldObject,
    dryRun: options.dryRun,
    user: options.user ?? Authentication.admin,
    ...(scale ? { kind: { group: "autoscaling", version: "v1", kind: "Scale" } } : { equivalents: equivalentsOf(env, target.resource) })
  })
  const podSecurityWarnings = (object: KubeObject.KubeObject) =>
    podSecurity
      ? PodSecurityAdmission.admit(env.store, { operation, resource: target.resource, subresource, namespace, name: target.name, object, oldObject })
      : Effect.succeed([])
  // kube's mutating plugins in its order: LimitRanger, ServiceAccount, Priority,
  // DefaultStorageClass, StorageObjectInUseProtection.
  const plugins = (given: KubeObject.KubeObject) => {
    if (storageProtection) {
      const classed = storageClass ? DefaultStorageClass.admit(env.store, given) : given
      return Effect.succeed(StorageProtection.admit(target.resource, classed))
    }
    const object = limits && target.resource.type.plural === "pods" ? LimitRanger.withNamespaceDefaults(env.store, namespace!, given) : given
    const accounted = serviceAccount ? ServiceAccountAdmission.admit(env.store, target.namespace ?? "", generated ?? target.name, object) : Effect.succeed(object)
    return priority ? Effect.flatMap(accounted, (o) => PriorityAdmission.admit(env.store, target.resource, generated ?? target.name, o, oldObject)) : accounted
  }
  const unnamed = (object: KubeObject.KubeObject): KubeObject.KubeObject => {
    const { name: _, ...metadata } = KubeObject.record(object.metadata)
    return { ...object, metadata }
  }
  return {
    mutate: (named) => {
      const given = generated === undefined ? named : unnamed(named)
      return Effect.flatMap(plugins(given), (object) =>
        webhooks
          ? Effect.map(Webhooks.mutate(env.store, attributes(object, generated === undefined ? target.name : "")), (mutated) => ({
            // A webhook's patch of a Scale changes the object's replicas.
            object: mutated.object === undefined ? object : scale ? Scale.fromScale(target.resource, object, mutated.object) : mutated.object,
            warnings: mutated.warnings
          }))
          : Effect.succeed({ object, warnings: [] })).pipe(
          // Then kube names it (what no mutation changed stays the object it was given).
          Effect.map((mutated) =>
            generated === undefined ? mutated : {
              ...mutated,
              object: mutated.object === given ? named : KubeObject.withMeta(mutated.object, { name: target.name })
            }
          )
        )
    },
    validate: (object) => {
      // What the plugins warned of goes with a later plugin's refusal too.
      const warnings: Array<string> = []
      return Effect.gen(function*() {
        if (limits) yield* LimitRanger.admit(env.store, target.resource, namespace!, target.name, object)
        if (claimResize) yield* ClaimResize.admit(env.store, target.resource, object, oldObject)
        warnings.push(...yield* podSecurityWarnings(object))
        if (policies) warnings.push(...yield* AdmissionPolicies.validate(env.store, env.registry, attributes(object)))
        if (webhooks) warnings.push(...yield* Webhooks.validate(env.store, attributes(object)))
        const exceeded = quota ? QuotaUsage.admit(env.store, target.resource, namespace!, target.name, object) : undefined
        if (exceeded !== undefined) return yield* exceeded
        return warnings
      }).pipe(Effect.mapError((error) => Status.warned(error, warnings)))
    }
  }
}

// A non-apply writer's managedFields. When mutating admission added to the object, they are
// reckoned from the object as the writer sent it (with the server-set generation and the request's
// managedFields), as kube records them before mutating admission.
const recordOwnership = (
  env: Env,
  resource: Registry.Resource,
  admitted: Admission.Admitted,
  live: KubeObject.KubeObject | undefined,
  next: KubeObject.KubeObject,
  manager: string,
  subresource: string | undefined
): Effect.Effect<KubeObject.KubeObject, Status.ApiError> => {
  if (admitted.owned === undefined) return env.fields.update(resource, live, next, manager, subresource)
  const { generation, managedFields } = KubeObject.meta(next)
  const sent = Admission.withZeroStatus(resource, KubeObject.withMeta(admitted.owned, { generation, managedFields }))
  return Effect.map(
    env.fields.update(resource, live, sent, manager, subresource),
    (fields) => KubeObject.withMeta(next, { managedFields: KubeObject.meta(fields).managedFields })
  )
}

const namespaces: Status.Target = { group: "", plural: "namespaces", kind: "Namespace" }

/** 404 when the namespace is missing, 403 when it is being deleted. */
const namespaceOpen = (env: Env, resource: Registry.Resource, namespace: string | undefined, name: string) => {
  if (!resource.type.namespaced) return Effect.void
  const ns = env.store.get("namespaces", "", namespace ?? "")
  if (ns === undefined) return Effect.fail(Status.notFound(namespaces, namespace ?? ""))
  if (KubeObject.meta(ns).deletionTimestamp !== undefined) {
    return Effect.fail(
      Status.forbidden(
        resource.type,
        name,
        `unable to create new content in namespace ${namespace} because it is being terminated`
      )
    )
  }
  return Effect.void
}

/**
 * Creates an object from a client's body: checks its type, namespace and name (or generates one),
 * sets server-owned metadata, admits it and stores it. 409 AlreadyExists when the name is taken.
 *
 * @example
 * import * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * declare const resource: import("./Registry.ts").Resource
 * const created = Rest.create(env, resource, "default", { metadata: { generateName: "web-" } }, {
 *   dryRun: false, fieldManager: "test", fieldValidation: "Strict"
 * })
 */
export const create = Effect.fnUntraced(function*(
  env: Env,
  resource: Registry.Resource,
  namespace: string | undefined,
  body: KubeObject.KubeObject,
  options: WriteOptions,
  managed?: (object: KubeObject.KubeObject) => Effect.Effect<KubeObject.KubeObject, Status.ApiError>
) {
  // Reviews and the like are answered by their handler (Registry.Resource.createOnly), never stored.
  if (resource.createOnly !== undefined) return yield* Status.methodNotAllowed("POST")
  yield* checkTypeMeta(resource, body)
  yield* checkNamespace({ resource, namespace }, body)
  const m = KubeObject.meta(body)
  if (m.resourceVersion !== undefined && m.resourceVersion !== "") {
    return yield* Status.internal("resourceVersion should not be set on objects to be created")
  }
  let name = typeof m.name === "string" ? m.name : ""
  if (name === "") {
    if (typeof m.generateName !== "string" || m.generateName === "") {
      return yield* Status.invalid(resource.type, "", [
        Status.fieldRequired("metadata.name", "name or generateName is required")
      ])
    }
    name = Metadata.generateName(m.generateName)
  }
  const nameCauses = Metadata.validateName(name, resource.type)
  if (nameCauses.length > 0) return yield* Status.invalid(resource.type, name, nameCauses)
  yield* namespaceOpen(env, resource, namespace, name)

  let object = Metadata.prepareCreate(
    resource,
    KubeObject.withMeta(
      { ...body, apiVersion: ResourceType.groupVersion(resource.type), kind: resource.type.kind },
      { name, namespace: resource.type.namespaced ? namespace : undefined }
    ),
    KubeObject.timestamp()
  )
  // A Node is registered with its status, as kubelets register; any other kind's create drops it.
  if (resource.type.subresources.status && resource.storage !== "nodes") delete object.status
  if (resource.prepareCreate !== undefined) object = resource.prepareCreate(object)
  const generated = name === m.name ? undefined : String(m.generateName)
  const hooks = admissionHooks(env, { resource, namespace, name }, undefined, "CREATE", undefined, options, generated)
  const admitted = yield* Admission.admit(env.schemas, resource, object, undefined, options.fieldValidation, hooks)
  yield* noEscalation(env, resource, admitted.object, options)
  const created = Admission.withZeroStatus(resource, admitted.object)
  const owned = managed === undefined
    ? yield* recordOwnership(env, resource, admitted, undefined, created, options.fieldManager, undefined)
    : yield* managed(created)
  if (options.dryRun) {
    return { object: owned, created: true, warnings: admitted.warnings } satisfies Written
  }
  if (env.store.get(resource.storage, namespace ?? "", name) !== undefined) {
    return yield* Status.alreadyExists(resource.type, name)
  }
  const result = env.store.put(resource.storage, yield* storable(resource, owned), 0)
  if (result._tag === "Conflict") return yield* Status.alreadyExists(resource.type, name)
  yield* env.durable(result.event.revision)
  return { object: yield* presentOne(env, resource, result.object), created: true, warnings: admitted.warnings } satisfies Written
})

/**
 * The shared tail of update, patch and apply: given how to compute the client's intended object
 * from the current one, applies the status-subresource rules, keeps server-owned metadata,
 * admits the result, moves generation, records field ownership, and stores it (nothing when it
 * is unchanged; removal when it drops the last finalizer of an object being deleted). Retries
 * when another write lands in between.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * declare const target: Rest.Target
 * const relabel = Rest.update(env, target, undefined, { dryRun: false, fieldManager: "me", fieldValidation: "Warn" },
 *   (current) => Effect.succeed({ ...current, metadata: { ...(current.metadata as object), labels: { a: "b" } } }))
 */
export const update = Effect.fnUntraced(function*(
  env: Env,
  target: Target,
  subresource: Subresource | "scale" | undefined,
  options: WriteOptions,
  intend: (current: KubeObject.KubeObject) => Effect.Effect<KubeObject.KubeObject, Status.ApiError>,
  managed?: (
    current: KubeObject.KubeObject,
    next: KubeObject.KubeObject
  ) => Effect.Effect<KubeObject.KubeObject, Status.ApiError>
) {
  const { resource } = target
  for (let attempt = 0;; attempt++) {
    const stored = env.store.get(resource.storage, namespaceOf(target), target.name)
    if (stored === undefined) return yield* Status.notFound(resource.type, target.name)
    const current = yield* presentOne(env, resource, stored)
    const intended = yield* intend(current)
    yield* checkIdentity(target, intended)
    const rv = KubeObject.meta(intended).resourceVersion
    if (rv !== undefined && rv !== "" && rv !== KubeObject.meta(current).resourceVersion) {
      return yield* Status.conflict(resource.type, target.name, Status.modified)
    }
    const uid = KubeObject.meta(intended).uid
    if (uid !== undefined && uid !== "" && uid !== KubeObject.meta(current).uid) {
      return yield* Status.conflict(
        resource.type,
        target.name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${KubeObject.meta(current).uid}`
      )
    }
    let next: KubeObject.KubeObject = {
      ...intended,
      apiVersion: ResourceType.groupVersion(resource.type),
      kind: resource.type.kind
    }
    next = KubeObject.withMeta(next, { name: target.name, namespace: target.namespace })
    if (subresource === "status") {
      // Only .status comes from the client; spec, labels and finalizers stay as stored.
      next = KubeObject.withMeta({ ...current }, { managedFields: KubeObject.meta(intended).managedFields })
      if (intended.status === undefined) delete next.status
      else next.status = intended.status
    } else if (subresource === "ephemeralcontainers") {
      // Only the pod's ephemeral containers come from the client.
      const spec = { ...KubeObject.record(current.spec) }
      const ephemeral = KubeObject.record(intended.spec).ephemeralContainers
      if (ephemeral === undefined) delete spec.ephemeralContainers
      else spec.ephemeralContainers = ephemeral
      next = KubeObject.withMeta({ ...current, spec }, { managedFields: KubeObject.meta(intended).managedFields })
    } else if (resource.type.subresources.status) {
      if (current.status === undefined) delete next.status
      else next.status = current.status
    }
    next = Metadata.preserveOnUpdate(current, next)
    next = KubeObject.withMeta(next, { resourceVersion: KubeObject.meta(current).resourceVersion })
    if (resource.prepareUpdate !== undefined && subresource !== "status") next = resource.prepareUpdate(next, current)
    const hooks = admissionHooks(env, target, subresource, "UPDATE", current, options)
    const admitted = yield* Admission.admit(env.schemas, resource, next, current, options.fieldValidation, hooks, subresource)
    yield* noEscalation(env, resource, admitted.object, options)
    next = Metadata.nextGeneration(resource, current, admitted.object)
    next = managed === undefined
      ? yield* recordOwnership(env, resource, admitted, current, next, options.fieldManager, subresource)
      : yield* managed(current, next)
    if (Metadata.sameWrite(current, next)) {
      return { object: current, created: false, warnings: admitted.warnings } satisfies Written
    }
    if (options.dryRun) return { object: next, created: false, warnings: admitted.warnings } satisfies Written
    const toStore = yield* storable(resource, next)
    const result = Metadata.readyToRemove(next)
      ? env.store.remove(resource.storage, namespaceOf(target), target.name, revisionOf(stored), toStore)
      : env.store.put(resource.storage, toStore, revisionOf(stored))
    if (result._tag === "Written") {
      yield* env.durable(result.event.revision)
      return { object: yield* presentOne(env, resource, result.object), created: false, warnings: admitted.warnings } satisfies Written
    }
    if (attempt >= 10) return yield* Status.conflict(resource.type, target.name, Status.modified)
  }
})

/**
 * Replaces an object with a client's body (PUT), following the resourceVersion rules: a stale
 * one is a 409; none is a 422 for custom resources and "last write wins" for built-ins.
 *
 * @example
 * import * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * declare const target: Rest.Target
 * const replaced = Rest.replace(env, target, undefined, { metadata: { name: "a", resourceVersion: "5" } }, {
 *   dryRun: false, fieldManager: "me", fieldValidation: "Strict"
 * })
 */
export const replace = (
  env: Env,
  target: Target,
  subresource: Subresource | undefined,
  body: KubeObject.KubeObject,
  options: WriteOptions
): Effect.Effect<Written, Status.ApiError> =>
  Effect.gen(function*() {
    yield* checkIdentity(target, body)
    const rv = KubeObject.meta(body).resourceVersion
    if ((rv === undefined || rv === "") && !target.resource.unconditionalUpdate) {
      return yield* Status.invalid(target.resource.type, target.name, [
        {
          reason: "FieldValueInvalid",
          message: "Invalid value: 0x0: must be specified for an update",
          field: "metadata.resourceVersion"
        }
      ])
    }
    return yield* update(env, target, subresource, options, () => Effect.succeed(body))
  })

/**
 * Deletes an object. Without finalizers it is removed at once (200 with a Status); otherwise
 * (including the finalizers Foreground and Orphan propagation add) it is marked with a
 * deletionTimestamp and stays until its finalizers are removed (200 with the object).
 *
 * @example
 * import * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * declare const target: Rest.Target
 * const deleted = Rest.remove(env, target, { propagationPolicy: "Foreground", preconditions: undefined, dryRun: false })
 */
export const remove = Effect.fnUntraced(function*(env: Env, target: Target, options: DeleteOptions) {
  const { resource } = target
  for (let attempt = 0;; attempt++) {
    const stored = env.store.get(resource.storage, namespaceOf(target), target.name)
    if (stored === undefined) return yield* Status.notFound(resource.type, target.name)
    const m = KubeObject.meta(stored)
    const pre = options.preconditions
    if (pre?.uid !== undefined && pre.uid !== m.uid) {
      return yield* Status.conflict(
        resource.type,
        target.name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${m.uid}`
      )
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== m.resourceVersion) {
      return yield* Status.conflict(
        resource.type,
        target.name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${m.resourceVersion}`
      )
    }
    if (attempt === 0 && (Webhooks.configured(env.store) || AdmissionPolicies.configured(env.store))) {
      const attributes: Webhooks.Attributes = {
        operation: "DELETE",
        resource,
        subresource: undefined,
        name: target.name,
        namespace: resource.type.namespaced ? target.namespace : undefined,
        object: undefined,
        oldObject: yield* presentOne(env, resource, stored),
        dryRun: options.dryRun,
        user: options.user ?? Authentication.admin,
        equivalents: equivalentsOf(env, resource)
      }
      yield* Webhooks.mutate(env.store, attributes)
      yield* AdmissionPolicies.validate(env.store, env.registry, attributes)
      yield* Webhooks.validate(env.store, attributes)
    }
    // A Pod is deleted gracefully: marked first, even when it then goes at once (watchers see
    // its deletion time before it is gone), and answered with itself, as kube answers.
    const graceful = resource.storage === "pods" ? GracefulDeletion.plan(stored, options.gracePeriodSeconds, Date.now()) : undefined
    const added = (resource.deleteFinalizers ?? []).filter((f) => !(m.finalizers ?? []).includes(f))
    const finalizers = withPropagation([...(m.finalizers ?? []), ...added], options.propagationPolicy)
    // Being deleted already, it stays until its finalizers or grace period end; a Pod with neither
    // left goes now.
    const goesNow = graceful?._tag === "Immediate" && finalizers.length === 0
    if (m.deletionTimestamp !== undefined && graceful?._tag !== "Graceful" && !goesNow) {
      return { body: yield* presentOne(env, resource, stored), removed: false } satisfies Deleted
    }
    if (graceful?._tag === "Graceful") {
      const marked = KubeObject.withMeta(stored, {
        deletionTimestamp: graceful.deletionTimestamp,
        deletionGracePeriodSeconds: graceful.gracePeriodSeconds,
        finalizers
      })
      const now = graceful.gracePeriodSeconds === 0 && finalizers.length === 0
      if (options.dryRun) return { body: yield* presentOne(env, resource, marked), removed: now } satisfies Deleted
      const written = env.store.put(resource.storage, marked, revisionOf(stored))
      if (written._tag !== "Written") {
        if (attempt >= 10) return yield* Status.conflict(resource.type, target.name, Status.modified)
        continue
      }
      yield* env.durable(written.event.revision)
      const body = yield* presentOne(env, resource, written.object)
      if (!now) return { body, removed: false } satisfies Deleted
      const removed = env.store.remove(resource.storage, namespaceOf(target), target.name, revisionOf(written.object))
      if (removed._tag === "Written") yield* env.durable(removed.event.revision)
      // Changed meanwhile, it is deleted again from what it is now.
      else continue
      return { body, removed: true } satisfies Deleted
    }
    let result: Store.WriteResult
    if (finalizers.length === 0) {
      if (options.dryRun) return { body: Status.success(resource.type, target.name, m.uid), removed: true } satisfies Deleted
      result = env.store.remove(resource.storage, namespaceOf(target), target.name, revisionOf(stored))
    } else {
      const deleting = KubeObject.withMeta(stored, {
        deletionTimestamp: KubeObject.timestamp(),
        deletionGracePeriodSeconds: 0,
        finalizers,
        ...(resource.generation ? { generation: (m.generation ?? 1) + 1 } : {})
      })
      const marked = resource.markDeleted === undefined ? deleting : resource.markDeleted(deleting)
      if (options.dryRun) return { body: yield* presentOne(env, resource, marked), removed: false } satisfies Deleted
      result = env.store.put(resource.storage, marked, revisionOf(stored))
    }
    if (result._tag === "Written") {
      yield* env.durable(result.event.revision)
      return result.event.type === "DELETED"
        ? { body: resource.storage === "pods" ? yield* presentOne(env, resource, stored) : Status.success(resource.type, target.name, m.uid), removed: true } satisfies Deleted
        : { body: yield* presentOne(env, resource, result.object), removed: false } satisfies Deleted
    }
    if (attempt >= 10) return yield* Status.conflict(resource.type, target.name, Status.modified)
  }
})

const withPropagation = (
  finalizers: ReadonlyArray<string>,
  policy: PropagationPolicy | undefined
): ReadonlyArray<string> => {
  const rest = finalizers.filter((f) => f !== finalizerForeground && f !== finalizerOrphan)
  if (policy === "Foreground") return [...rest, finalizerForeground]
  if (policy === "Orphan") return [...rest, finalizerOrphan]
  return finalizers
}

/**
 * Deletes every object of a resource in a namespace (or all) that matches the selectors.
 *
 * @example
 * import * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * declare const resource: import("./Registry.ts").Resource
 * const gone = Rest.removeCollection(env, resource, "default", [], [], { propagationPolicy: undefined, preconditions: undefined, dryRun: false })
 */
export const removeCollection = Effect.fnUntraced(function*(
  env: Env,
  resource: Registry.Resource,
  namespace: string | undefined,
  labelSelector: Selectors.LabelSelector,
  fieldSelector: Selectors.FieldSelector,
  options: DeleteOptions
) {
  const listed = yield* list(env, resource, namespace, {
    labelSelector,
    fieldSelector,
    limit: undefined,
    continue: undefined,
    resourceVersion: undefined,
    resourceVersionMatch: undefined
  })
  const deleted: Array<KubeObject.KubeObject> = []
  for (const item of listed.items) {
    const m = KubeObject.meta(item)
    const outcome = yield* remove(env, { resource, namespace: m.namespace, name: m.name ?? "" }, options).pipe(
      Effect.catchIf((e) => e.code === 404, () => Effect.succeed(undefined))
    )
    if (outcome !== undefined) deleted.push(item)
  }
  return deleted
})
