/**
 * Objects as their metadata alone: what kube-apiserver answers a client that accepts
 * `application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1` (one object, or each object of a
 * watch) or `as=PartialObjectMetadataList` (a list). client-go's metadata client asks for them, so
 * metadata-only informers (controller-runtime's `OnlyMetadata`) and the garbage collector do.
 */
import { Effect } from "effect"
import * as Status from "./Status.ts"
import type { KubeObject } from "@kubefx/schema/internal"

/** The representation a client asked for, in `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`. */
export interface Target {
  readonly as: "PartialObjectMetadata" | "PartialObjectMetadataList"
  readonly groupVersion: string
}

/**
 * An object as `PartialObjectMetadata`: its metadata, whole (managedFields included).
 *
 * @example
 * import * as PartialMetadata from "./PartialMetadata.ts"
 * PartialMetadata.ofObject({ kind: "ConfigMap", metadata: { name: "a" }, data: { k: "v" } }, "meta.k8s.io/v1")
 * // { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: { name: "a" } }
 */
export const ofObject = (object: KubeObject.KubeObject, groupVersion: string): KubeObject.KubeObject => ({
  apiVersion: groupVersion,
  kind: "PartialObjectMetadata",
  metadata: object.metadata ?? {}
})

const itemsOf = (body: Record<string, unknown>): ReadonlyArray<KubeObject.KubeObject> | undefined =>
  Array.isArray(body.items) ? body.items as ReadonlyArray<KubeObject.KubeObject> : undefined

/**
 * A response body in the representation asked for: a `Status` as it is; an object as
 * `PartialObjectMetadata`, a list as `PartialObjectMetadataList` (its list metadata kept); and a
 * 406, as kube-apiserver's, when the one asked for does not fit (a list asked for as one object,
 * or one object as a list).
 *
 * @example
 * import { Effect } from "effect"
 * import * as PartialMetadata from "./PartialMetadata.ts"
 * const target = { as: "PartialObjectMetadataList", groupVersion: "meta.k8s.io/v1" } as const
 * Effect.runSync(PartialMetadata.answer(target, { kind: "ConfigMapList", metadata: { resourceVersion: "7" }, items: [] }))
 * // { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadataList", metadata: { resourceVersion: "7" }, items: [] }
 * Effect.runSyncExit(PartialMetadata.answer(target, { kind: "ConfigMap", metadata: { name: "a" } })) // a 406
 */
export const answer = (target: Target, body: KubeObject.KubeObject): Effect.Effect<KubeObject.KubeObject, Status.ApiError> => {
  if (body.kind === "Status") return Effect.succeed(body)
  const items = itemsOf(body)
  const kind = typeof body.kind === "string" ? body.kind : "object"
  if (target.as === "PartialObjectMetadata") {
    return items === undefined
      ? Effect.succeed(ofObject(body, target.groupVersion))
      : Effect.fail(Status.unrepresentable(`you requested PartialObjectMetadata, but the requested object is a list (${kind})`))
  }
  if (items === undefined) {
    return Effect.fail(Status.unrepresentable(`you requested PartialObjectMetadataList, but the requested object is not a list (${kind})`))
  }
  return Effect.succeed({
    apiVersion: target.groupVersion,
    kind: "PartialObjectMetadataList",
    metadata: body.metadata ?? {},
    items: items.map((item) => ofObject(item, target.groupVersion))
  })
}
