/**
 * Writing a test's objects as a user applies them: server-side apply under the test's field
 * manager, with `apiVersion` and `kind` filled in from the resource.
 *
 * @since 0.1.0
 */
import { Kube, type KubeError, type ObjectMeta, type Resource } from "@kubefx/kube"
import { Effect } from "effect"

/** The field manager of what tests apply. */
export const fieldManager = "kubefx-test"

/**
 * Server-side applies `object` (its `apiVersion` and `kind` default to the resource's) and returns
 * the object the server stored.
 *
 * @example
 * import { Samples } from "@kubefx/testing"
 * import { Builtins } from "@kubefx/kube"
 * const applied = Samples.apply(Builtins.ConfigMap, { metadata: { name: "a", namespace: "default" }, data: { k: "v" } })
 */
export const apply: <A extends ObjectMeta.KubeObject>(
  resource: Resource.Resource<A>,
  object: Kube.ApplyBody
) => Effect.Effect<A, KubeError.KubeError | Resource.DecodeError, Kube.Kube> = Effect.fn("Samples.apply")(function*<
  A extends ObjectMeta.KubeObject
>(
  resource: Resource.Resource<A>,
  object: Kube.ApplyBody
) {
  const kube = yield* Kube.Kube
  return yield* kube.apply(resource, { apiVersion: resource.apiVersion, kind: resource.kind, ...object }, { fieldManager, force: true })
})
