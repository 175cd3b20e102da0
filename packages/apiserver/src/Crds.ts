/**
 * CustomResourceDefinitions at runtime: the kinds a CRD defines (one served resource per served
 * version, stored once under the storage version), the controller that establishes a CRD (status
 * conditions NamesAccepted and Established, written as a MODIFIED event once its endpoints are
 * live) and cleans up a deleted one (its custom resources first, then the CRD), and the schema
 * handling of custom resources (defaults, pruning, validation).
 */
import { Effect } from "effect"
import type * as Admission from "./Admission.ts"
import * as CrdStructure from "./CrdStructure.ts"
import * as Defaulting from "./Defaulting.ts"
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"
import * as KubeObject from "./KubeObject.ts"
import * as Pruning from "./Pruning.ts"
import type * as Registry from "./Registry.ts"
import type * as ResourceType from "./ResourceType.ts"
import * as Rest from "./Rest.ts"
import * as SchemaValidation from "./SchemaValidation.ts"
import type * as Store from "./Store.ts"
import * as Worker from "./Worker.ts"

/** The CRDs' own storage key. */
export const storage = "customresourcedefinitions.apiextensions.k8s.io"

/** The finalizer that holds a deleted CRD until its custom resources are gone. */
export const cleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

const allVerbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

const record = (u: unknown): KubeObject.KubeObject => (KubeObject.isObject(u) ? u : {})
const strings = (u: unknown): ReadonlyArray<string> => (Array.isArray(u) ? u.filter((s) => typeof s === "string") : [])

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
  validate: (resource, object) =>
    SchemaValidation.validateCustomResource(object, {
      group: resource.type.group,
      version: resource.type.version,
      kind: resource.type.kind,
      namespaced: resource.type.namespaced,
      schema: resource.type.schema,
      scale: resource.type.subresources.scale
    })
}

/**
 * The served resources a CRD defines, one per served version.
 *
 * @example
 * import * as Crds from "./Crds.ts"
 * Crds.resources({
 *   metadata: { name: "crontabs.stable.example.com" },
 *   spec: { group: "stable.example.com", scope: "Namespaced", names: { plural: "crontabs", kind: "CronTab" },
 *     versions: [{ name: "v1", served: true, storage: true }] }
 * })[0]?.type.kind // "CronTab"
 */
export const resources = (crd: KubeObject.KubeObject): ReadonlyArray<Registry.Resource> => {
  const spec = record(crd.spec)
  const names = record(spec.names)
  const group = String(spec.group ?? "")
  const kind = String(names.kind ?? "")
  const plural = String(names.plural ?? "")
  const versions = Array.isArray(spec.versions) ? spec.versions.map(record) : []
  const storageVersion = String(versions.find((v) => v.storage === true)?.name ?? versions[0]?.name ?? "")
  const storageKey = `${plural}.${group}`
  return versions.filter((v) => v.served === true).map((v): Registry.Resource => {
    const schema = record(v.schema).openAPIV3Schema as JsonSchemaProps | undefined
    const sub = record(v.subresources)
    const scale = KubeObject.isObject(sub.scale) ? sub.scale : undefined
    const type: ResourceType.ResourceType = {
      group,
      version: String(v.name),
      kind,
      listKind: typeof names.listKind === "string" ? names.listKind : `${kind}List`,
      plural,
      singular: typeof names.singular === "string" && names.singular !== "" ? names.singular : kind.toLowerCase(),
      namespaced: spec.scope !== "Cluster",
      shortNames: strings(names.shortNames),
      categories: strings(names.categories),
      verbs: allVerbs,
      subresources: {
        status: KubeObject.isObject(sub.status),
        ...(scale === undefined ? {} : {
          scale: {
            specReplicasPath: String(scale.specReplicasPath ?? ".spec.replicas"),
            statusReplicasPath: String(scale.statusReplicasPath ?? ".status.replicas"),
            ...(typeof scale.labelSelectorPath === "string" ? { labelSelectorPath: scale.labelSelectorPath } : {})
          }
        })
      },
      custom: true,
      ...(schema === undefined ? {} : { schema }),
      structure: CrdStructure.fromSchema(schema),
      selectableFields: (Array.isArray(v.selectableFields) ? v.selectableFields.map(record) : [])
        .map((f) => String(f.jsonPath ?? "").replace(/^\./, "")),
      printerColumns: (Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns.map(record) : [])
        .map((c) => ({
          name: String(c.name ?? ""),
          type: String(c.type ?? "string"),
          jsonPath: String(c.jsonPath ?? ""),
          ...(typeof c.description === "string" ? { description: c.description } : {}),
          ...(typeof c.priority === "number" ? { priority: c.priority } : {}),
          ...(typeof c.format === "string" ? { format: c.format } : {})
        }))
    }
    return {
      type,
      storage: storageKey,
      generation: true,
      unconditionalUpdate: false,
      crd: String(KubeObject.meta(crd).name ?? ""),
      toStorage: (object) => ({ ...object, apiVersion: `${group}/${storageVersion}`, kind })
    }
  })
}

const condition = (
  type: string,
  status: string,
  reason: string,
  message: string,
  previous: ReadonlyArray<KubeObject.KubeObject>
): KubeObject.KubeObject => {
  const before = previous.find((c) => c.type === type)
  return {
    type,
    status,
    lastTransitionTime: before !== undefined && before.status === status
      ? before.lastTransitionTime
      : KubeObject.timestamp(),
    reason,
    message
  }
}

/**
 * The status an established (or terminating) CRD has, keeping transition times that did not change.
 *
 * @example
 * import * as Crds from "./Crds.ts"
 * const crd = { spec: { group: "g", names: { plural: "ws", kind: "W" }, versions: [{ name: "v1", served: true, storage: true }] } }
 * Crds.status(crd, true, false).conditions.map((c) => c.type) // ["NamesAccepted", "Established"]
 */
export const status = (crd: KubeObject.KubeObject, namesAccepted: boolean, terminating: boolean) => {
  const spec = record(crd.spec)
  const names = record(spec.names)
  const current = record(crd.status)
  const previous = Array.isArray(current.conditions) ? current.conditions.map(record) : []
  const versions = Array.isArray(spec.versions) ? spec.versions.map(record) : []
  const storageVersion = versions.find((v) => v.storage === true)?.name
  const stored = [...new Set([...strings(current.storedVersions), ...(typeof storageVersion === "string" ? [storageVersion] : [])])]
  const kind = String(names.kind ?? "")
  const conditions = [
    namesAccepted
      ? condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", previous)
      : condition("NamesAccepted", "False", "AlreadyInUse", "the plural name is already in use by another CRD", previous),
    namesAccepted
      ? condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted", previous)
      : condition("Established", "False", "NotAccepted", "not all names are accepted", previous),
    ...(terminating
      ? [condition("Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress", previous)]
      : [])
  ]
  return {
    conditions,
    acceptedNames: namesAccepted
      ? {
        plural: names.plural,
        singular: typeof names.singular === "string" && names.singular !== "" ? names.singular : kind.toLowerCase(),
        kind,
        listKind: typeof names.listKind === "string" ? names.listKind : `${kind}List`,
        ...(Array.isArray(names.shortNames) ? { shortNames: names.shortNames } : {}),
        ...(Array.isArray(names.categories) ? { categories: names.categories } : {})
      }
      : { plural: "", kind: "" },
    storedVersions: stored
  }
}

const writeOptions: Rest.WriteOptions = { dryRun: false, fieldManager: "kube-apiserver", fieldValidation: "Ignore" }

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
export const controller = Effect.fnUntraced(function*(env: Rest.Env) {
  const { registry, store } = env
  const crdResource = () => registry.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")!
  const target = (name: string): Rest.Target => ({ resource: crdResource(), namespace: undefined, name })

  const namesFree = (crd: KubeObject.KubeObject) => {
    const name = KubeObject.meta(crd).name
    const spec = record(crd.spec)
    const key = `${record(spec.names).plural}.${spec.group}`
    return !store.list(storage, undefined).some((other) => {
      const o = record(other.spec)
      return KubeObject.meta(other).name !== name && `${record(o.names).plural}.${o.group}` === key &&
        KubeObject.meta(other).creationTimestamp! < KubeObject.meta(crd).creationTimestamp!
    })
  }

  const writeStatus = (name: string, desired: KubeObject.KubeObject) =>
    Rest.update(env, target(name), "status", writeOptions, (current) => Effect.succeed({ ...current, status: desired }))
      .pipe(Effect.catchIf((e) => e.code === 404, () => Effect.void))

  const reconcile = Effect.fnUntraced(function*(name: string) {
    const crd = store.get(storage, "", name)
    if (crd === undefined) {
      registry.unregisterCrd(name)
      return
    }
    const m = KubeObject.meta(crd)
    const accepted = namesFree(crd)
    if (m.deletionTimestamp === undefined) {
      if (accepted) registry.registerCrd(name, resources(crd))
      const desired = status(crd, accepted, false)
      if (!KubeObject.equals(desired, crd.status)) yield* writeStatus(name, desired)
      return
    }
    const desired = status(crd, accepted, true)
    if (!KubeObject.equals(desired, crd.status)) yield* writeStatus(name, desired)
    const served = resources(crd)[0]
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
      const crdStorage = `${record(record(event.object.spec).names).plural}.${record(event.object.spec).group}`
      owners.set(crdStorage, name)
      if (event.type === "DELETED") {
        registry.unregisterCrd(name)
        owners.delete(crdStorage)
      } else {
        worker.enqueue(name)
      }
    } else if (event.type === "DELETED") {
      const crd = owners.get(event.storage)
      if (crd !== undefined) worker.enqueue(crd)
    }
  }
  for (const crd of store.list(storage, undefined)) {
    const name = String(KubeObject.meta(crd).name)
    const spec = record(crd.spec)
    owners.set(`${record(spec.names).plural}.${spec.group}`, name)
    if (KubeObject.meta(crd).deletionTimestamp === undefined && namesFree(crd)) registry.registerCrd(name, resources(crd))
    worker.enqueue(name)
  }
  const unsubscribe = store.subscribe(onEvent)
  yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
  return { idle: worker.idle }
})

/**
 * Adds the cleanup finalizer to a new CRD.
 *
 * @example
 * import * as Crds from "./Crds.ts"
 * Crds.prepareCreate({ metadata: { name: "a.b" } }).metadata // { name: "a.b", finalizers: ["customresourcecleanup.apiextensions.k8s.io"] }
 */
export const prepareCreate = (crd: KubeObject.KubeObject): KubeObject.KubeObject =>
  KubeObject.withMeta(crd, {
    finalizers: [...(KubeObject.meta(crd).finalizers ?? []).filter((f) => f !== cleanupFinalizer), cleanupFinalizer]
  })

/**
 * The OpenAPI v3 documents: the index (path undefined) or one group/version document.
 *
 * @example
 * import * as Crds from "./Crds.ts"
 * import * as Registry from "./Registry.ts"
 * import * as Builtins from "./Builtins.ts"
 * Crds.openapi(Registry.make(Builtins.make()), undefined)
 */
export const openapi = (registry: Registry.Registry, path: string | undefined): unknown => {
  const groupVersions = new Map<string, ReadonlyArray<Registry.Resource>>()
  for (const r of registry.all()) {
    const key = r.type.group === "" ? `api/${r.type.version}` : `apis/${r.type.group}/${r.type.version}`
    groupVersions.set(key, [...(groupVersions.get(key) ?? []), r])
  }
  if (path === undefined) {
    return {
      paths: Object.fromEntries(
        [...groupVersions.keys()].map((k) => [k, { serverRelativeURL: `/openapi/v3/${k}?hash=${registry.generation()}` }])
      )
    }
  }
  const served = groupVersions.get(path)
  if (served === undefined) return undefined
  const paths: Record<string, unknown> = {}
  for (const r of served) {
    const t = r.type
    const prefix = t.group === "" ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`
    paths[`${prefix}${t.namespaced ? "/namespaces/{namespace}" : ""}/${t.plural}/{name}`] = {
      patch: {
        "x-kubernetes-group-version-kind": { group: t.group, version: t.version, kind: t.kind },
        parameters: [{ name: "fieldValidation", in: "query", schema: { type: "string" } }],
        requestBody: {
          content: {
            "application/merge-patch+json": {},
            "application/json-patch+json": {},
            "application/apply-patch+yaml": {},
            ...(t.custom ? {} : { "application/strategic-merge-patch+json": {} })
          }
        },
        responses: { "200": { description: "OK" } }
      }
    }
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1.32.0" },
    paths,
    components: { schemas: {} }
  }
}
