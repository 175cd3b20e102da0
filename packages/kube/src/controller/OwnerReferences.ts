/**
 * Owner references: the controller reference an operator puts on the objects it creates (so the
 * garbage collector deletes them with their owner and the operator maps their events back to the
 * owner), and the questions asked about them.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import type * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"

export type OwnerReference = ObjectMeta.OwnerReference

/** The object already has a controller other than the one being set. */
export class AlreadyOwnedError extends Schema.TaggedError<AlreadyOwnedError>()("AlreadyOwnedError", {
  object: Schema.String,
  owner: Schema.String,
  message: Schema.String
}) {}

/**
 * The controller reference to an owner: apiVersion and kind from its resource, its name and uid,
 * `controller: true` and `blockOwnerDeletion: true`. The owner must have been read from the API
 * (it needs a uid); an unsaved owner is a programming error and throws.
 *
 * @example
 * import { OwnerReferences } from "@kubefx/kube"
 * const ref = OwnerReferences.controllerReference(widget, Widget)
 * // { apiVersion: "demo.kubefx.dev/v1", kind: "Widget", name: "a", uid: "...", controller: true, blockOwnerDeletion: true }
 */
export const controllerReference = (owner: ObjectMeta.KubeObject, resource: Resource.Resource): OwnerReference => {
  const { name, uid } = owner.metadata
  if (name === undefined || uid === undefined) {
    throw new Error(`${resource.kind} ${name ?? "(unnamed)"} has no uid: owners must be objects read from the API`)
  }
  return { apiVersion: resource.apiVersion, kind: resource.kind, name, uid, controller: true, blockOwnerDeletion: true }
}

/**
 * The object's controller reference (the one with `controller: true`), if any.
 *
 * @example
 * import { OwnerReferences } from "@kubefx/kube"
 * OwnerReferences.controllerOf(configMap)?.name // "a"
 */
export const controllerOf = (object: ObjectMeta.KubeObject): OwnerReference | undefined =>
  object.metadata.ownerReferences?.find((ref) => ref.controller === true)

/**
 * Whether the owner is the object's controller (compared by uid).
 *
 * @example
 * import { OwnerReferences } from "@kubefx/kube"
 * OwnerReferences.isControlledBy(configMap, widget) // true
 */
export const isControlledBy = (object: ObjectMeta.KubeObject, owner: ObjectMeta.KubeObject): boolean =>
  owner.metadata.uid !== undefined && controllerOf(object)?.uid === owner.metadata.uid

/**
 * Whether any of the object's owner references points at the owner (compared by uid).
 *
 * @example
 * import { OwnerReferences } from "@kubefx/kube"
 * OwnerReferences.isOwnedBy(configMap, widget) // true
 */
export const isOwnedBy = (object: ObjectMeta.KubeObject, owner: ObjectMeta.KubeObject): boolean =>
  owner.metadata.uid !== undefined && (object.metadata.ownerReferences ?? []).some((ref) => ref.uid === owner.metadata.uid)

/** Same group, kind and name: the API's notion of one owner (the version may differ). */
const sameOwner = (a: OwnerReference, b: OwnerReference): boolean =>
  groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name

const groupOf = (apiVersion: string): string => {
  const slash = apiVersion.indexOf("/")
  return slash < 0 ? "" : apiVersion.slice(0, slash)
}

/**
 * Adds owner references to an object, replacing any reference to the same owner (same group,
 * kind and name). Other references are kept in order.
 *
 * @example
 * import { OwnerReferences } from "@kubefx/kube"
 * const desired = OwnerReferences.merge(configMap, [{ apiVersion: "v1", kind: "Namespace", name: "a", uid: "u1" }])
 */
export const merge = <A extends ObjectMeta.KubeObject>(object: A, references: ReadonlyArray<OwnerReference>): A => {
  let result = object.metadata.ownerReferences ?? []
  for (const reference of references) {
    result = result.some((ref) => sameOwner(ref, reference))
      ? result.map((ref) => (sameOwner(ref, reference) ? reference : ref))
      : [...result, reference]
  }
  return { ...object, metadata: { ...object.metadata, ownerReferences: result } }
}

/**
 * Makes the owner the object's controller. Fails with `AlreadyOwnedError` if another object
 * already controls it; setting the same controller again is a no-op change.
 *
 * @example
 * import { Effect } from "effect"
 * import { OwnerReferences } from "@kubefx/kube"
 * const program = Effect.gen(function*() {
 *   const desired = yield* OwnerReferences.setController(configMap, widget, Widget)
 * })
 */
export const setController = <A extends ObjectMeta.KubeObject>(
  object: A,
  owner: ObjectMeta.KubeObject,
  resource: Resource.Resource
): Effect.Effect<A, AlreadyOwnedError> =>
  Effect.suspend(() => {
    const reference = controllerReference(owner, resource)
    const current = controllerOf(object)
    if (current !== undefined && !sameOwner(current, reference)) {
      const name = object.metadata.name ?? ""
      return Effect.fail(
        new AlreadyOwnedError({
          object: name,
          owner: `${current.kind}/${current.name}`,
          message: `${name} is already controlled by ${current.kind} ${current.name}`
        })
      )
    }
    return Effect.succeed(merge(object, [reference]))
  })
