/**
 * kube-apiserver's DefaultStorageClass admission plugin: a PersistentVolumeClaim created without a
 * `storageClassName` gets the default StorageClass's (the one annotated
 * `storageclass.kubernetes.io/is-default-class: "true"`; the newest, when several are). An empty
 * name asks for no class, and is left alone; with no default class, so is the claim.
 */
import type * as Registry from "./Registry.ts"
import type * as Store from "./Store.ts"
import { KubeObject } from "@kubefx/schema/internal"

/** The annotation that makes a StorageClass the default (and its beta spelling, still honoured). */
export const defaultAnnotation = "storageclass.kubernetes.io/is-default-class"
const betaAnnotation = "storageclass.beta.kubernetes.io/is-default-class"

/**
 * Whether a write goes through the plugin: a PersistentVolumeClaim's creation.
 *
 * @example
 * import * as Builtins from "./Builtins.ts"
 * import * as DefaultStorageClass from "./DefaultStorageClass.ts"
 * const claims = Builtins.make().find((r) => r.type.plural === "persistentvolumeclaims")!
 * DefaultStorageClass.applies(claims, undefined, "CREATE") // true
 */
export const applies = (resource: Registry.Resource, subresource: string | undefined, operation: "CREATE" | "UPDATE"): boolean =>
  operation === "CREATE" && subresource === undefined && resource.type.group === "" && resource.type.plural === "persistentvolumeclaims"

/**
 * Whether a StorageClass is marked the default.
 *
 * @example
 * import * as DefaultStorageClass from "./DefaultStorageClass.ts"
 * DefaultStorageClass.isDefault({ metadata: { annotations: { "storageclass.kubernetes.io/is-default-class": "true" } } }) // true
 */
export const isDefault = (storageClass: KubeObject.KubeObject): boolean => {
  const annotations = KubeObject.meta(storageClass).annotations ?? {}
  return annotations[defaultAnnotation] === "true" || annotations[betaAnnotation] === "true"
}

/**
 * The claim as the plugin admits it.
 *
 * @example
 * import * as DefaultStorageClass from "./DefaultStorageClass.ts"
 * import * as Store from "./Store.ts"
 * DefaultStorageClass.admit(Store.make(), { spec: {} }) // unchanged: no default class
 */
export const admit = (store: Store.Store, claim: KubeObject.KubeObject): KubeObject.KubeObject => {
  const spec = KubeObject.record(claim.spec)
  if (spec.storageClassName !== undefined && spec.storageClassName !== null) return claim
  // The newest default wins; equally new ones by name, as kube breaks the tie.
  const chosen = store.list("storageclasses.storage.k8s.io", undefined).filter(isDefault).sort((a, b) => {
    const at = (o: KubeObject.KubeObject) => KubeObject.meta(o).creationTimestamp ?? ""
    return at(b).localeCompare(at(a)) || (KubeObject.meta(a).name ?? "").localeCompare(KubeObject.meta(b).name ?? "")
  })[0]
  return chosen === undefined ? claim : { ...claim, spec: { ...spec, storageClassName: KubeObject.meta(chosen).name } }
}
