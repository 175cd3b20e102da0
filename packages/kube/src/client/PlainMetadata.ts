/**
 * Object metadata as the API server sends it, recognised without its Schema: decoding metadata
 * with `ObjectMeta.ObjectMeta` (a struct that keeps unknown fields) is most of the cost of decoding
 * an object, and gives back a value equal to its input whenever the input is plain JSON metadata.
 * Mirrors `ObjectMeta.ObjectMeta` field for field; `Resource.test.ts` holds the two to the same
 * answers.
 *
 * Internal to the client.
 *
 * @since 0.1.0
 */

const isString = (value: unknown) => typeof value === "string"
const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const isStringMap = (value: unknown) => isRecord(value) && Object.values(value).every(isString)
const ownerReferenceFields = new Set(["apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"])
// Exactly the fields of ObjectMeta.OwnerReference: a field it does not have would be dropped by its decoding.
const isPlainOwnerReference = (value: unknown) =>
  isRecord(value) && isString(value.apiVersion) && isString(value.kind) && isString(value.name) && isString(value.uid) &&
  (value.controller === undefined || typeof value.controller === "boolean") &&
  (value.blockOwnerDeletion === undefined || typeof value.blockOwnerDeletion === "boolean") &&
  Object.keys(value).every((key) => ownerReferenceFields.has(key) && value[key] !== undefined)

/**
 * Whether `ObjectMeta.ObjectMeta` decodes `value` to an equal value: the fields it reads with the
 * types it reads them as, anything else kept as it is. Conservative: anything unusual (an undefined
 * field, a `__proto__` key, an unknown field of an owner reference) answers false, and the Schema
 * answers for it.
 *
 * @example
 * PlainMetadata.is({ name: "web", labels: { app: "web" }, selfLink: "/api/v1/..." }) // true
 * PlainMetadata.is({ name: "web", labels: { replicas: 3 } }) // false: the Schema rejects it
 */
export const is = (value: unknown): boolean => {
  if (!isRecord(value)) return false
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    const field = value[key]
    switch (key) {
      case "name":
      case "generateName":
      case "namespace":
      case "uid":
      case "resourceVersion":
      case "creationTimestamp":
      case "deletionTimestamp":
        if (!isString(field)) return false
        break
      case "generation":
        if (!Number.isFinite(field)) return false
        break
      case "labels":
      case "annotations":
        if (!isStringMap(field)) return false
        break
      case "finalizers":
        if (!Array.isArray(field) || !field.every(isString)) return false
        break
      case "ownerReferences":
        if (!Array.isArray(field) || !field.every(isPlainOwnerReference)) return false
        break
      case "managedFields":
        if (!Array.isArray(field)) return false
        break
      case "__proto__":
        return false
      default:
        if (field === undefined) return false
    }
  }
  return true
}
