/**
 * kube-apiserver's PersistentVolumeClaimResize admission plugin: a claim's storage request may
 * grow only once the claim is bound, and only when its StorageClass says `allowVolumeExpansion`
 * (kind's `standard` does not: there, as on kind, a resize is refused).
 */
import { Effect } from "effect"
import type * as Registry from "./Registry.ts"
import * as Status from "./Status.ts"
import type * as Store from "./Store.ts"
import { KubeObject, QuantityMath } from "@kubefx/schema/internal"

const record = KubeObject.record

/**
 * The storage a claim asks for.
 *
 * @example
 * import * as ClaimResize from "./ClaimResize.ts"
 * ClaimResize.requested({ spec: { resources: { requests: { storage: "5Gi" } } } }) // "5Gi"
 */
export const requested = (claim: KubeObject.KubeObject): unknown => record(record(record(claim.spec).resources).requests).storage

/**
 * Whether a write goes through the plugin: a claim's update (not its status).
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as ClaimResize from "./ClaimResize.ts"
 * const claims = Builtins.make().find((r) => r.type.plural === "persistentvolumeclaims")!
 * ClaimResize.applies(claims, undefined, "UPDATE") // true
 */
export const applies = (resource: Registry.Resource, subresource: string | undefined, operation: "CREATE" | "UPDATE"): boolean =>
  operation === "UPDATE" && subresource === undefined && resource.type.group === "" && resource.type.plural === "persistentvolumeclaims"

/**
 * Refuses a grown request of a claim not bound, or of a class that does not allow expansion.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as ClaimResize from "./ClaimResize.ts"
 * import * as Store from "./Store.ts"
 * const claims = Builtins.make().find((r) => r.type.plural === "persistentvolumeclaims")!
 * const spec = (storage: string) => ({ metadata: { name: "data" }, spec: { resources: { requests: { storage } } }, status: { phase: "Pending" } })
 * ClaimResize.admit(Store.make(), claims, spec("2Gi"), spec("1Gi")) // fails: only bound claims can be expanded
 */
export const admit = (
  store: Store.Store,
  resource: Registry.Resource,
  claim: KubeObject.KubeObject,
  old: KubeObject.KubeObject | undefined
): Effect.Effect<void, Status.ApiError> => {
  if (old === undefined || (QuantityMath.compare(requested(claim) ?? "0", requested(old) ?? "0") ?? 0) <= 0) return Effect.void
  const name = KubeObject.meta(claim).name ?? ""
  if (record(old.status).phase !== "Bound") {
    return Effect.fail(Status.forbidden(resource.type, name, "Only bound persistent volume claims can be expanded"))
  }
  const className = record(old.spec).storageClassName
  const storageClass = typeof className === "string" && className !== "" ? store.get("storageclasses.storage.k8s.io", "", className) : undefined
  return storageClass?.allowVolumeExpansion === true
    ? Effect.void
    : Effect.fail(Status.forbidden(
      resource.type,
      name,
      "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"
    ))
}
