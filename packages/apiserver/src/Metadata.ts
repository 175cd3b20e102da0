/**
 * The object-metadata rules of kube-apiserver's generic registry, as pure functions: what the
 * server sets on create, what an update may not change, when `generation` moves, and what may
 * happen to finalizers of an object being deleted.
 */
import type * as Registry from "./Registry.ts"
import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
import * as Status from "./Status.ts"
import { KubeObject } from "@kubefx/schema/internal"

const generateAlphabet = "bcdfghjklmnpqrstvwxz2456789"

/**
 * A name from `generateName`: the prefix (cut to 58 characters) and 5 random characters.
 *
 * @example
 * import * as Metadata from "./Metadata.ts"
 * Metadata.generateName("web-").length // 9
 */
export const generateName = (prefix: string, random: () => number = Math.random): string => {
  let suffix = ""
  for (let i = 0; i < 5; i++) suffix += generateAlphabet[Math.floor(random() * generateAlphabet.length)]
  return prefix.slice(0, 58) + suffix
}

/**
 * 422 causes for an invalid object name, by its kind's rule (a DNS-1123 subdomain for most kinds,
 * a label for namespaces, a path segment for RBAC's kinds and persistent volumes).
 *
 * @example
 * import * as Metadata from "./Metadata.ts"
 * Metadata.validateName("Bad_Name", { group: "", plural: "configmaps" }).length // 1
 * Metadata.validateName("system:viewer", { group: "rbac.authorization.k8s.io", plural: "clusterroles" }).length // 0
 */
export const validateName = (name: string, type: { readonly group: string; readonly plural: string }): ReadonlyArray<Status.StatusCause> =>
  ObjectMetaValidation.nameRule(type.group, type.plural)(name, false).map((message) => Status.fieldInvalid("metadata.name", name, message))

/**
 * 422 causes for labels, annotations, finalizers or owner references of the wrong shape.
 *
 * @example
 * import * as Metadata from "./Metadata.ts"
 * Metadata.validateMeta({ metadata: { labels: { app: 5 } } }).length // 1
 */
export const validateMeta = (object: KubeObject.KubeObject): ReadonlyArray<Status.StatusCause> => {
  const m = KubeObject.meta(object)
  const causes: Array<Status.StatusCause> = []
  for (const field of ["labels", "annotations"] as const) {
    const value = m[field]
    if (value === undefined || value === null) continue
    if (!KubeObject.isObject(value)) {
      causes.push(Status.fieldInvalid(`metadata.${field}`, value, "must be a map of strings"))
      continue
    }
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== "string") causes.push(Status.fieldInvalid(`metadata.${field}.${k}`, v, "must be a string"))
    }
  }
  if (m.finalizers !== undefined && m.finalizers !== null) {
    if (!Array.isArray(m.finalizers) || m.finalizers.some((f) => typeof f !== "string")) {
      causes.push(Status.fieldInvalid("metadata.finalizers", m.finalizers, "must be a list of strings"))
    }
  }
  // What each owner reference must name is ObjectMetaValidation's, with kube's causes.
  if (m.ownerReferences !== undefined && m.ownerReferences !== null && !Array.isArray(m.ownerReferences)) {
    causes.push(Status.fieldInvalid("metadata.ownerReferences", m.ownerReferences, "must be a list"))
  }
  return causes
}

/**
 * Fields a client may not set or change: identity and lifecycle fields the server owns.
 */
const serverOwned = ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "selfLink"] as const

/**
 * The object as a create stores it: server-owned metadata replaced (uid, creation time,
 * generation 1 for kinds that keep it), resourceVersion left for the store to set.
 *
 * @example
 * import * as Metadata from "./Metadata.ts"
 * const created = Metadata.prepareCreate({ generation: true }, { metadata: { name: "a", generation: 9 } }, "2024-01-01T00:00:00Z")
 * created.metadata // { name: "a", uid: "...", creationTimestamp: "2024-01-01T00:00:00Z", generation: 1 }
 */
export const prepareCreate = (
  resource: Pick<Registry.Resource, "generation">,
  object: KubeObject.KubeObject,
  now: string
): KubeObject.KubeObject => {
  const changes: Record<string, unknown> = {}
  for (const f of serverOwned) changes[f] = undefined
  changes.resourceVersion = undefined
  changes.uid = KubeObject.uid()
  changes.creationTimestamp = now
  if (resource.generation) changes.generation = 1
  return KubeObject.withMeta(object, changes)
}

/**
 * The object as an update stores it: identity and lifecycle fields come from the stored object,
 * whatever the client sent.
 *
 * @example
 * import * as Metadata from "./Metadata.ts"
 * const old = { metadata: { name: "a", uid: "u1", creationTimestamp: "t" } }
 * Metadata.preserveOnUpdate(old, { metadata: { name: "a", uid: "other" } }).metadata // { name: "a", uid: "u1", creationTimestamp: "t" }
 */
export const preserveOnUpdate = (old: KubeObject.KubeObject, next: KubeObject.KubeObject): KubeObject.KubeObject => {
  const m = KubeObject.meta(old)
  const changes: Record<string, unknown> = {}
  for (const f of serverOwned) changes[f] = m[f]
  return KubeObject.withMeta(next, changes)
}

const withoutMetadata = (object: KubeObject.KubeObject, ignoreStatus: boolean): KubeObject.KubeObject => {
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = object
  if (ignoreStatus) delete rest.status
  return rest
}

/**
 * The object with `metadata.generation` advanced when anything outside metadata changed (only
 * the spec side when the status subresource is enabled), for kinds that keep a generation.
 *
 * @example
 * import * as Metadata from "./Metadata.ts"
 * const old = { metadata: { generation: 1 }, spec: { a: 1 } }
 * Metadata.nextGeneration({ generation: true, type: { subresources: { status: true } } }, old, { metadata: { generation: 1 }, spec: { a: 2 } }).metadata
 * // { generation: 2 }
 */
export const nextGeneration = (
  resource: Pick<Registry.Resource, "generation"> & { readonly type: { readonly subresources: { readonly status: boolean } } },
  old: KubeObject.KubeObject,
  next: KubeObject.KubeObject
): KubeObject.KubeObject => {
  if (!resource.generation) return next
  const status = resource.type.subresources.status
  const current = KubeObject.meta(old).generation ?? 1
  const changed = !KubeObject.equals(withoutMetadata(old, status), withoutMetadata(next, status))
  return KubeObject.withMeta(next, { generation: changed ? current + 1 : current })
}

/**
 * 422 causes for finalizer changes on an object being deleted: none may be added.
 *
 * @example
 * import * as Metadata from "./Metadata.ts"
 * const old = { metadata: { deletionTimestamp: "t", finalizers: ["a"] } }
 * Metadata.validateFinalizers(old, { metadata: { finalizers: ["a", "b"] } }).length // 1
 */
export const validateFinalizers = (
  old: KubeObject.KubeObject,
  next: KubeObject.KubeObject
): ReadonlyArray<Status.StatusCause> => {
  const before = KubeObject.meta(old)
  if (before.deletionTimestamp === undefined) return []
  const existing = new Set(before.finalizers ?? [])
  const added = (KubeObject.meta(next).finalizers ?? []).some((f) => !existing.has(f))
  return added
    ? [Status.fieldForbidden("metadata.finalizers", "no new finalizers can be added if the object is being deleted")]
    : []
}

/**
 * True when the object is being deleted, no finalizer holds it any more, and no grace period is
 * left (a Pod's kubelet ends its grace period, deleting it with none).
 *
 * @example
 * import * as Metadata from "./Metadata.ts"
 * Metadata.readyToRemove({ metadata: { deletionTimestamp: "t", finalizers: [] } }) // true
 */
export const readyToRemove = (object: KubeObject.KubeObject): boolean => {
  const m = KubeObject.meta(object)
  return m.deletionTimestamp !== undefined && (m.finalizers ?? []).length === 0 && !((m.deletionGracePeriodSeconds ?? 0) > 0)
}

/**
 * Whether two states of an object are the same write: equal apart from resourceVersion and the
 * timestamps in managedFields (which kube does not count as a change).
 *
 * @example
 * import * as Metadata from "./Metadata.ts"
 * Metadata.sameWrite({ metadata: { resourceVersion: "1" }, a: 1 }, { metadata: { resourceVersion: "2" }, a: 1 }) // true
 */
export const sameWrite = (a: KubeObject.KubeObject, b: KubeObject.KubeObject): boolean =>
  KubeObject.equals(comparable(a), comparable(b))

const comparable = (object: KubeObject.KubeObject): KubeObject.KubeObject => {
  const m = KubeObject.meta(object)
  const managed = Array.isArray(m.managedFields)
    ? m.managedFields.map((e) => (KubeObject.isObject(e) ? { ...e, time: undefined } : e))
    : undefined
  return KubeObject.withMeta(object, { resourceVersion: undefined, managedFields: managed })
}
