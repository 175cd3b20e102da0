/**
 * CustomResourceDefinitions at runtime: the kinds a CRD defines (one served resource per served
 * version, stored once under the storage version), the controller that establishes a CRD (status
 * conditions NamesAccepted and Established, written as a MODIFIED event once its endpoints are
 * live) and cleans up a deleted one (its custom resources first, then the CRD), and the schema
 * handling of custom resources (defaults, pruning, validation).
 */
import { Effect } from "effect"
import type * as Admission from "./Admission.ts"
import * as Conversion from "./Conversion.ts"
import * as CustomResourceDefinition from "./CustomResourceDefinition.ts"
import type * as Registry from "./Registry.ts"
import * as Rest from "./Rest.ts"
import * as SchemaValidation from "./SchemaValidation.ts"
import * as StatusConditions from "./StatusConditions.ts"
import type * as Store from "./Store.ts"
import * as WebhookClient from "./WebhookClient.ts"
import * as Worker from "./Worker.ts"
import { CelValidation, Defaulting, type FieldCauses, KubeObject, Pruning } from "@kubefx/schema/internal"

/** The CRDs' own storage key. */
export const storage = "customresourcedefinitions.apiextensions.k8s.io"

/** The finalizer that holds a deleted CRD until its custom resources are gone. */
export const cleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

/**
 * Schema handling of custom resources, from the resource's openAPIV3Schema.
 *
 * @example
 * import * as Crds from "./Crds.ts"
 * const schemas = Crds.schemas // pass as Rest.Env["schemas"]
 */
export const schemas: Admission.Schemas = {
  prune: (resource, object) => {
    const pruned = Pruning.prune(object, resource.type.schema)
    return { object: pruned.value, unknown: pruned.unknownFields }
  },
  default: (resource, object) => Defaulting.apply(object, resource.type.schema),
  validate: (resource, object, old) => {
    const causes = SchemaValidation.validateCustomResource(object, {
      group: resource.type.group,
      version: resource.type.version,
      kind: resource.type.kind,
      namespaced: resource.type.namespaced,
      schema: resource.type.schema,
      scale: resource.type.subresources.scale
    }, old)
    const schema = resource.type.schema
    return schema === undefined ? causes : [...causes, ...CelValidation.afterSchema(causes, schema, object, old)]
  }
}

/**
 * The served resources of an Established CRD, one per served version (none before it is
 * Established), all stored under its storage version; `resolve` finds the Service of a conversion
 * webhook configured by one.
 *
 * @example
 * import * as Crds from "./Crds.ts"
 * Crds.resources({
 *   metadata: { name: "crontabs.stable.example.com" },
 *   spec: { group: "stable.example.com", scope: "Namespaced", names: { plural: "crontabs", kind: "CronTab" },
 *     versions: [{ name: "v1", served: true, storage: true }] },
 *   status: { conditions: [{ type: "Established", status: "True" }], acceptedNames: { plural: "crontabs", kind: "CronTab" } }
 * })[0]?.type.kind // "CronTab"
 */
export const resources = (crd: KubeObject.KubeObject, resolve?: WebhookClient.Resolver): ReadonlyArray<Registry.Resource> => {
  const spec = KubeObject.record(crd.spec)
  const versions = Array.isArray(spec.versions) ? spec.versions.map(KubeObject.record) : []
  const storageVersion = String(versions.find((v) => v.storage === true)?.name ?? versions[0]?.name ?? "")
  const types = CustomResourceDefinition.resourceTypes(crd)
  // An object converted to another version keeps only what that version's schema knows, as
  // kube-apiserver's schema-coercing converter prunes it (whatever the strategy).
  const schemas = new Map(types.map((type) => [`${type.group}/${type.version}`, type.schema]))
  const coerced = (object: KubeObject.KubeObject): KubeObject.KubeObject => {
    const schema = schemas.get(String(object.apiVersion))
    return schema === undefined ? object : Pruning.prune(object, schema).value as KubeObject.KubeObject
  }
  const webhook = Conversion.webhook(crd, resolve)
  const converter: Conversion.Converter | undefined = webhook === undefined
    ? undefined
    : (objects, apiVersion) => Effect.map(webhook(objects, apiVersion), (converted) => converted.map(coerced))
  const fingerprint = JSON.stringify([storageVersion, spec.conversion ?? null])
  return types.map((type): Registry.Resource => {
    const served = `${type.group}/${type.version}`
    const stored = `${type.group}/${storageVersion}`
    return {
      type,
      storage: storageOf(crd),
      generation: true,
      unconditionalUpdate: false,
      crd: String(KubeObject.meta(crd).name ?? ""),
      toStorage: (object) => {
        const storable = { ...object, apiVersion: stored, kind: type.kind }
        return object.apiVersion === undefined || object.apiVersion === stored ? storable : coerced(storable)
      },
      ...(served === stored ? {} : {
        fromStorage: (object) => object.apiVersion === served ? object : coerced({ ...object, apiVersion: served })
      }),
      fingerprint,
      ...deprecation(versions.find((v) => v.name === type.version), `${type.group}/${type.version} ${type.kind} is deprecated`),
      ...(converter === undefined ? {} : { convert: { storageApiVersion: stored, converter } })
    }
  })
}

// A deprecated version warns with its deprecationWarning, or kube-apiserver's default sentence.
const deprecation = (version: KubeObject.KubeObject | undefined, fallback: string) =>
  version?.deprecated === true
    ? { deprecationWarning: typeof version.deprecationWarning === "string" ? version.deprecationWarning : fallback }
    : {}

/** The storage key of a CRD's custom resources: `<plural>.<group>`. */
const storageOf = (crd: KubeObject.KubeObject): string => {
  const spec = KubeObject.record(crd.spec)
  return `${KubeObject.record(spec.names).plural}.${spec.group}`
}

const terminatingCondition = (crd: KubeObject.KubeObject, now: string): KubeObject.KubeObject => {
  const previous = (Array.isArray(KubeObject.record(crd.status).conditions) ? KubeObject.record(crd.status).conditions as Array<unknown> : [])
    .map(KubeObject.record).find((c) => c.type === "Terminating")
  return {
    type: "Terminating",
    status: "True",
    lastTransitionTime: previous?.status === "True" ? previous.lastTransitionTime : now,
    reason: "InstanceDeletionInProgress",
    message: "CustomResource deletion is in progress"
  }
}

/**
 * The status the server's CRD controllers converge to: accepted names and NamesAccepted and
 * Established conditions (CustomResourceDefinition.computeStatus), plus Terminating while the CRD
 * is being deleted.
 *
 * @example
 * import * as Crds from "./Crds.ts"
 * const crd = { metadata: { name: "ws.g" }, spec: { group: "g", names: { plural: "ws", kind: "W" } } }
 * Crds.status(crd, []).conditions.map((c) => c.type) // ["NamesAccepted", "Established"]
 */
export const status = (crd: KubeObject.KubeObject, others: ReadonlyArray<KubeObject.KubeObject>) => {
  const now = KubeObject.timestamp()
  const computed = CustomResourceDefinition.computeStatus(crd, { others, now }) as unknown as KubeObject.KubeObject
  const conditions = (Array.isArray(computed.conditions) ? computed.conditions : []).map(KubeObject.record)
    .filter((c) => c.type !== "Terminating")
  return {
    ...computed,
    conditions: KubeObject.meta(crd).deletionTimestamp === undefined
      ? conditions
      : [...conditions, terminatingCondition(crd, now)]
  }
}

const writeOptions: Rest.WriteOptions = { dryRun: false, fieldManager: "kube-apiserver", fieldValidation: "Ignore" }

export interface Options {
  /** Called for each resource a deleted CRD no longer serves (the server ends its open watches). */
  readonly unserved?: ((resource: Registry.Resource) => void) | undefined
}

/**
 * Starts the CRD controller in the current scope: registers the kinds of existing CRDs at once,
 * then follows CRD changes.
 *
 * @example
 * import { Effect } from "effect"
 * import * as Crds from "./Crds.ts"
 * import type * as Rest from "./Rest.ts"
 * declare const env: Rest.Env
 * const started = Effect.scoped(Crds.controller(env))
 */
export const controller = Effect.fnUntraced(function*(env: Rest.Env, options: Options = {}) {
  const { registry, store } = env
  const resolve = WebhookClient.resolver(store)
  const unregister = (name: string) => {
    for (const resource of registry.unregisterCrd(name)) options.unserved?.(resource)
  }
  const crdResource = () => registry.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")!
  const target = (name: string): Rest.Target => ({ resource: crdResource(), namespace: undefined, name })

  const writeStatus = (name: string, desired: KubeObject.KubeObject) =>
    Rest.update(env, target(name), "status", writeOptions, (current) => Effect.succeed({ ...current, status: desired }))
      .pipe(Effect.catchIf((e) => e.code === 404, () => Effect.void))

  const reconcile = Effect.fnUntraced(function*(name: string) {
    const crd = store.get(storage, "", name)
    if (crd === undefined) {
      unregister(name)
      return
    }
    const m = KubeObject.meta(crd)
    const others = store.list(storage, undefined).filter((o) => KubeObject.meta(o).name !== name)
    const desired = status(crd, others)
    const established = { ...crd, status: desired }
    // Serve the endpoints before clients can see Established.
    if (m.deletionTimestamp === undefined) registry.registerCrd(name, resources(established, resolve))
    if (!KubeObject.equals(desired, crd.status)) yield* writeStatus(name, desired)
    if (m.deletionTimestamp === undefined) return
    const served = resources(established, resolve)[0] ?? registry.byStorage(storageOf(crd))[0]
    if (served !== undefined) {
      for (const object of store.list(served.storage, undefined)) {
        const om = KubeObject.meta(object)
        if (om.deletionTimestamp !== undefined) continue
        yield* Rest.remove(env, { resource: served, namespace: served.type.namespaced ? om.namespace : undefined, name: om.name ?? "" }, {
          propagationPolicy: "Background",
          preconditions: undefined,
          dryRun: false
        }).pipe(Effect.catchIf((e) => e.code === 404, () => Effect.void))
      }
      if (store.size(served.storage) > 0) return
    }
    if ((m.finalizers ?? []).includes(cleanupFinalizer)) {
      yield* Rest.update(env, target(name), undefined, writeOptions, (current) =>
        Effect.succeed(KubeObject.withMeta(current, {
          finalizers: (KubeObject.meta(current).finalizers ?? []).filter((f) => f !== cleanupFinalizer)
        }))).pipe(Effect.catchIf((e) => e.code === 404, () => Effect.void))
    }
  })

  const worker = yield* Worker.make("crds", reconcile, (name: string) => name)
  const owners = new Map<string, string>()
  const onEvent = (event: Store.Event) => {
    if (event.storage === storage) {
      const name = String(KubeObject.meta(event.object).name)
      const crdStorage = storageOf(event.object)
      owners.set(crdStorage, name)
      if (event.type === "DELETED") {
        unregister(name)
        owners.delete(crdStorage)
      } else {
        // An update of an established CRD (a new version, a conversion webhook) serves as soon as
        // it is written, so the next request sees it; establishing a new one is the worker's.
        const served = event.type === "MODIFIED" && KubeObject.meta(event.object).deletionTimestamp === undefined ? resources(event.object, resolve) : []
        if (served.length > 0) registry.registerCrd(name, served)
        worker.enqueue(name)
      }
    } else if (event.type === "DELETED") {
      const crd = owners.get(event.storage)
      if (crd !== undefined) worker.enqueue(crd)
    }
  }
  for (const crd of store.list(storage, undefined)) {
    const name = String(KubeObject.meta(crd).name)
    owners.set(storageOf(crd), name)
    if (KubeObject.meta(crd).deletionTimestamp === undefined) registry.registerCrd(name, resources(crd, resolve))
    worker.enqueue(name)
  }
  const unsubscribe = store.subscribe(onEvent)
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  return { idle: worker.idle, pending: worker.pending }
})

/**
 * A new CRD as stored: v1 defaults. The cleanup finalizer is added only when the CRD is deleted
 * (see `deleteFinalizers`), as 1.32 does, so an apply that omits it cannot strip it beforehand.
 *
 * @example
 * import * as Crds from "./Crds.ts"
 * Crds.prepareCreate({ metadata: { name: "a.b" } }).metadata // { name: "a.b" }
 */
export const prepareCreate = (crd: KubeObject.KubeObject): KubeObject.KubeObject =>
  CustomResourceDefinition.prepare(CustomResourceDefinition.withDefaults(crd))

/** The finalizers a CRD's deletion adds: its custom resources go first. */
export const deleteFinalizers: ReadonlyArray<string> = [cleanupFinalizer]

/**
 * A CRD as its first deletion writes it: `Terminating` until its custom resources are gone, so the
 * answer to the DELETE already says so.
 *
 * @example
 * import * as Crds from "./Crds.ts"
 * Crds.markDeleted({ metadata: { name: "ws.g" }, status: { conditions: [] } }).status
 * // { conditions: [{ type: "Terminating", status: "True", reason: "InstanceDeletionPending", ... }] }
 */
export const markDeleted = (crd: KubeObject.KubeObject): KubeObject.KubeObject => {
  const status = KubeObject.record(crd.status)
  const terminating: StatusConditions.Condition = {
    type: "Terminating",
    status: "True",
    reason: "InstanceDeletionPending",
    message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
  }
  return { ...crd, status: { ...status, conditions: StatusConditions.set(status.conditions, [terminating], { keep: () => true }) } }
}

/**
 * A CRD update as stored: v1 defaults, and the storage version added to storedVersions.
 *
 * @example
 * import * as Crds from "./Crds.ts"
 * Crds.prepareUpdate({ spec: { names: { kind: "W" } } }, {}).spec // { names: { kind: "W", singular: "w", listKind: "WList" }, conversion: { strategy: "None" } }
 */
export const prepareUpdate = (crd: KubeObject.KubeObject, old: KubeObject.KubeObject): KubeObject.KubeObject =>
  CustomResourceDefinition.prepare(CustomResourceDefinition.withDefaults(crd), old)

/**
 * 422 causes for a CRD create or update (name, spec, structural schemas, names, versions).
 *
 * @example
 * import * as Crds from "./Crds.ts"
 * Crds.validate({ metadata: { name: "wrong" }, spec: {} }, undefined).length > 0 // true
 */
export const validate = (crd: KubeObject.KubeObject, old: KubeObject.KubeObject | undefined): ReadonlyArray<FieldCauses.Cause> =>
  CustomResourceDefinition.validate(crd, old)
