/**
 * A controller's finalizer on its primary objects (R17), written with JSON patches guarded by what
 * they change (the finalizer list, or the uid when there is none), so concurrent label or spec
 * writes do not make them fail and nobody else's finalizer is lost.
 *
 * Internal to the controller.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type * as Kube from "../client/Kube.ts"
import type * as KubeError from "../client/KubeError.ts"
import type * as ObjectMeta from "../client/ObjectMeta.ts"
import type * as Resource from "../client/Resource.ts"

type Named = ObjectMeta.KubeObject & { readonly metadata: { readonly name: string } }

/**
 * Whether the object carries the finalizer.
 *
 * @example
 * Finalizers.has({ metadata: { finalizers: ["demo.kubefx.dev/buckets"] } }, "demo.kubefx.dev/buckets") // true
 */
export const has = (object: ObjectMeta.KubeObject, finalizer: string): boolean => object.metadata.finalizers?.includes(finalizer) === true

/**
 * Adds the finalizer; the answer is the object as stored.
 *
 * @example
 * const added = Finalizers.add(kube, Bucket, bucket, "demo.kubefx.dev/buckets")
 */
export const add = <A extends ObjectMeta.KubeObject>(
  kube: Kube.Client,
  resource: Resource.Resource<A>,
  object: A & Named,
  finalizer: string
): Effect.Effect<A, KubeError.KubeError | Resource.DecodeError> =>
  kube.patch(resource, object.metadata.name, object.metadata.namespace, object.metadata.finalizers === undefined
    ? [
      { op: "test", path: "/metadata/uid", value: object.metadata.uid },
      { op: "add", path: "/metadata/finalizers", value: [finalizer] }
    ]
    : [
      { op: "test", path: "/metadata/finalizers", value: object.metadata.finalizers },
      { op: "add", path: "/metadata/finalizers/-", value: finalizer }
    ], { type: "json" })

/**
 * Removes the finalizer, if present; removing the last one of a deleted object deletes it.
 *
 * @example
 * const removed = Finalizers.remove(kube, Bucket, bucket, "demo.kubefx.dev/buckets")
 */
export const remove = <A extends ObjectMeta.KubeObject>(
  kube: Kube.Client,
  resource: Resource.Resource<A>,
  object: A & Named,
  finalizer: string
): Effect.Effect<void, KubeError.KubeError | Resource.DecodeError> => {
  const index = object.metadata.finalizers?.indexOf(finalizer) ?? -1
  return index < 0 ? Effect.void : kube.patch(resource, object.metadata.name, object.metadata.namespace, [
    { op: "test", path: `/metadata/finalizers/${index}`, value: finalizer },
    { op: "remove", path: `/metadata/finalizers/${index}` }
  ], { type: "json" }).pipe(
    Effect.asVoid,
    Effect.catchTag("NotFound", () => Effect.void)
  )
}
