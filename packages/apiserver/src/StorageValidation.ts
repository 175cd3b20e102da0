/**
 * 1.32's validation of PersistentVolumeClaims and PersistentVolumes: access modes, requested and
 * offered storage, volume modes, a PV's single volume source and reclaim policy, and a claim's
 * spec frozen after creation (a bound claim may only grow its storage request).
 */
import * as FieldErrors from "./FieldErrors.ts"
import type * as Status from "./Status.ts"
import { KubeObject, QuantityMath } from "@kubefx/schema/internal"

type Json = KubeObject.KubeObject
type Causes = ReadonlyArray<Status.StatusCause>

const accessModes = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
const volumeModes = ["Block", "Filesystem"]

const modes = (spec: Json, detail: string): Causes => {
  const given = Array.isArray(spec.accessModes) ? spec.accessModes : []
  if (given.length === 0) return [FieldErrors.required("spec.accessModes", detail)]
  const causes: Array<Status.StatusCause> = given.flatMap((m) => (accessModes.includes(String(m)) ? [] : [FieldErrors.notSupported("spec.accessModes", m, accessModes)]))
  if (given.includes("ReadWriteOncePod") && given.length > 1) {
    causes.push(FieldErrors.forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
  }
  return causes
}

const volumeMode = (spec: Json): Causes =>
  spec.volumeMode === undefined || volumeModes.includes(String(spec.volumeMode)) ? [] : [FieldErrors.notSupported("spec.volumeMode", spec.volumeMode, volumeModes)]

const claimUpdate = (object: Json, old: Json): Causes => {
  const spec = KubeObject.record(object.spec)
  const oldSpec = KubeObject.record(old.spec)
  const bound = KubeObject.record(object.status).phase === "Bound"
  const storage = (s: Json) => KubeObject.record(KubeObject.record(s.resources).requests).storage
  const comparable = (s: Json, keepStorage: boolean) => {
    const resources = KubeObject.record(s.resources)
    const requests = { ...KubeObject.record(resources.requests), ...(keepStorage ? { storage: storage(oldSpec) } : {}) }
    return {
      ...s,
      resources: { ...resources, requests },
      // The binder fills volumeName once, and a class where none was set (the default one, retroactively).
      volumeName: oldSpec.volumeName === undefined ? undefined : s.volumeName,
      storageClassName: oldSpec.storageClassName === undefined && typeof s.storageClassName === "string" && s.storageClassName !== ""
        ? undefined
        : s.storageClassName,
      ...(bound ? { volumeAttributesClassName: oldSpec.volumeAttributesClassName } : {})
    }
  }
  const causes: Array<Status.StatusCause> = []
  if (!KubeObject.equals(comparable(spec, bound), comparable(oldSpec, bound))) {
    causes.push(FieldErrors.forbidden("spec", "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"))
  }
  if ((QuantityMath.compare(storage(spec), storage(oldSpec)) ?? 0) < 0) {
    causes.push(FieldErrors.forbidden("spec.resources.requests.storage", "field can not be less than previous value"))
  }
  return causes
}

/**
 * A PersistentVolumeClaim.
 *
 * @example
 * import * as StorageValidation from "./StorageValidation.ts"
 * StorageValidation.claim({ spec: {} }, undefined).map((c) => c.field) // ["spec.accessModes", "spec.resources[storage]"]
 */
export const claim = (object: Json, old: Json | undefined): Causes => {
  const spec = KubeObject.record(object.spec)
  const storage = KubeObject.record(KubeObject.record(spec.resources).requests).storage
  return [
    ...modes(spec, "at least 1 access mode is required"),
    ...(storage === undefined
      ? [FieldErrors.required("spec.resources[storage]")]
      : (QuantityMath.sign(storage) ?? 1) <= 0
      ? [FieldErrors.invalid("spec.resources[storage]", FieldErrors.quote(QuantityMath.format(storage)), "must be greater than zero")]
      : []),
    ...volumeMode(spec),
    ...(old === undefined ? [] : claimUpdate(object, old))
  ]
}

const sources = ["gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "quobyte", "cephfs",
  "iscsi", "cinder", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume", "azureDisk", "photonPersistentDisk",
  "portworxVolume", "scaleIO", "local", "storageos", "csi"]

const capacity = (spec: Json): Causes => {
  const given = KubeObject.record(spec.capacity)
  const keys = Object.keys(given)
  const causes: Array<Status.StatusCause> = []
  if (keys.length === 0) causes.push(FieldErrors.required("spec.capacity"))
  if (given.storage === undefined || keys.length > 1) {
    const printed = KubeObject.isObject(spec.capacity) ? `core.ResourceList{${keys.map((k) => `${FieldErrors.quote(k)}:resource.Quantity{...}`).join(", ")}}` : "core.ResourceList(nil)"
    causes.push({ reason: "FieldValueNotSupported", message: `Unsupported value: ${printed}: supported values: "storage"`, field: "spec.capacity" })
  }
  for (const [k, q] of Object.entries(given)) {
    if ((QuantityMath.sign(q) ?? 1) <= 0) causes.push(FieldErrors.invalid(`spec.capacity[${k}]`, FieldErrors.quote(QuantityMath.format(q)), "must be greater than zero"))
  }
  return causes
}

/**
 * A PersistentVolume.
 *
 * @example
 * import * as StorageValidation from "./StorageValidation.ts"
 * StorageValidation.volume({ spec: { capacity: { storage: "1Gi" }, accessModes: ["ReadWriteOnce"] } }, undefined)[0].message
 * // "Required value: must specify a volume type"
 */
export const volume = (object: Json): Causes => {
  const spec = KubeObject.record(object.spec)
  const given = sources.filter((s) => KubeObject.isObject(spec[s]))
  const policy = spec.persistentVolumeReclaimPolicy
  return [
    ...modes(spec, ""),
    ...capacity(spec),
    ...(policy === undefined || ["Delete", "Recycle", "Retain"].includes(String(policy)) ? [] : [FieldErrors.notSupported("spec.persistentVolumeReclaimPolicy", policy, ["Delete", "Recycle", "Retain"])]),
    ...(given.length === 0 ? [FieldErrors.required("spec", "must specify a volume type")] : []),
    ...given.slice(1).map((s) => FieldErrors.forbidden(`spec.${s}`, "may not specify more than 1 volume type")),
    ...volumeMode(spec)
  ]
}
