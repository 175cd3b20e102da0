/**
 * Validation of a custom resource as kube-apiserver 1.32 runs it: its openAPIV3Schema
 * (`OpenApiValidation`), the ObjectMeta checks (`ObjectMetaValidation`), embedded resources, the
 * uniqueness of `x-kubernetes-list-type` set/map lists and the scale subresource's paths.
 */
import * as ObjectMetaValidation from "./ObjectMetaValidation.ts"
import { FieldCauses, KubeObject, NameRules, Ratcheting } from "@kubefx/schema/internal"
import type { JsonSchemaProps } from "@kubefx/schema"

const embeddedCauses = (path: string, object: KubeObject.KubeObject): ReadonlyArray<FieldCauses.Cause> => {
  const causes: Array<FieldCauses.Cause> = []
  if (!Object.hasOwn(object, "apiVersion")) causes.push(FieldCauses.required(FieldCauses.child(path, "apiVersion")))
  if (!Object.hasOwn(object, "kind")) causes.push(FieldCauses.required(FieldCauses.child(path, "kind")))
  for (const [k, v] of Object.entries(object)) {
    if (k === "apiVersion") {
      if (typeof v !== "string") causes.push(FieldCauses.invalid(FieldCauses.child(path, k), v, "must be a string"))
      else if (v === "") causes.push(FieldCauses.required(FieldCauses.child(path, k)))
      else if (v.split("/").length > 2) {
        causes.push(FieldCauses.invalid(FieldCauses.child(path, k), v, `unexpected GroupVersion string: ${v}`))
      }
    } else if (k === "kind") {
      if (typeof v !== "string") causes.push(FieldCauses.invalid(FieldCauses.child(path, k), v, "must be a string"))
      else if (v === "") causes.push(FieldCauses.required(FieldCauses.child(path, k)))
      else {
        const errs = NameRules.dns1035Label(v.toLowerCase())
        if (errs.length > 0) {
          causes.push(FieldCauses.invalid(FieldCauses.child(path, k), v, `may have mixed case, but should otherwise match: ${errs.join(",")}`))
        }
      }
    } else if (k === "metadata" && KubeObject.isObject(v)) {
      const withName = typeof v.name === "string" && v.name !== "" ? v : { ...v, name: "fakename" }
      const namespaced = typeof v.namespace === "string" && v.namespace !== ""
      causes.push(
        ...ObjectMetaValidation.validateObjectMeta(withName, { namespaced, name: ObjectMetaValidation.nameIsPathSegment, field: FieldCauses.child(path, "metadata") })
      )
    }
  }
  return causes
}

// Whether a schema or one below it (its properties, additional properties and items, where the
// walks below go) says what `says` looks for. Most CRD schemas declare no embedded resource and no
// set or map list: their objects are not walked at all on every write.
const anywhereBelow = (says: (schema: JsonSchemaProps) => boolean) => {
  const known = new WeakMap<JsonSchemaProps, boolean>()
  const check = (schema: JsonSchemaProps | undefined): boolean => {
    if (schema === undefined) return false
    const cached = known.get(schema)
    if (cached !== undefined) return cached
    const additional = schema.additionalProperties
    const found = says(schema) || check(schema.items) || (typeof additional === "object" && check(additional)) ||
      Object.values(schema.properties ?? {}).some(check)
    known.set(schema, found)
    return found
  }
  return check
}

const declaresEmbedded = anywhereBelow((schema) => schema["x-kubernetes-embedded-resource"] === true)

const declaresSetOrMap = anywhereBelow((schema) =>
  schema["x-kubernetes-list-type"] === "set" || schema["x-kubernetes-list-type"] === "map"
)

/** `objectmeta.Validate`: apiVersion, kind and metadata of every `x-kubernetes-embedded-resource` object. */
const embeddedResources = (path: string, value: unknown, schema: JsonSchemaProps | undefined): ReadonlyArray<FieldCauses.Cause> => {
  if (schema === undefined || !declaresEmbedded(schema)) return []
  if (Array.isArray(value)) return value.flatMap((v, i) => embeddedResources(FieldCauses.index(path, i), v, schema.items))
  if (!KubeObject.isObject(value)) return []
  const own = schema["x-kubernetes-embedded-resource"] === true ? embeddedCauses(path, value) : []
  const nested = Object.entries(value).flatMap(([k, v]) => {
    const property = schema.properties?.[k]
    if (property !== undefined) return embeddedResources(FieldCauses.child(path, k), v, property)
    const additional = schema.additionalProperties
    return typeof additional === "object" ? embeddedResources(FieldCauses.key(path, k), v, additional) : []
  })
  return [...own, ...nested]
}

/** Items of a list-type set/map that repeat an earlier one: the index of each value's second appearance. */
const repeated = (keys: ReadonlyArray<unknown>): ReadonlyArray<number> => {
  const seen = new Map<string, number>()
  const out: Array<number> = []
  keys.forEach((k, i) => {
    const id = k === undefined ? "\u0000unspecified" : FieldCauses.goJson(k)
    const times = seen.get(id) ?? 0
    if (times === 1) out.push(i)
    seen.set(id, times + 1)
  })
  return out
}

const listMapCauses = (path: string, schema: JsonSchemaProps, items: ReadonlyArray<unknown>): ReadonlyArray<FieldCauses.Cause> => {
  const bad = items.findIndex((x) => x !== null && !KubeObject.isObject(x))
  if (bad >= 0) return [FieldCauses.invalid(FieldCauses.index(path, bad), items[bad], "must be an object for an array of list-type map")]
  if (items.length <= 1) return []
  const mapKeys = schema["x-kubernetes-list-map-keys"] ?? []
  const keysOf = (x: unknown): KubeObject.KubeObject => {
    const o = KubeObject.isObject(x) ? x : {}
    return Object.fromEntries(mapKeys.filter((k) => Object.hasOwn(o, k)).map((k) => [k, o[k]]))
  }
  if (mapKeys.length === 1) {
    const field = mapKeys[0] ?? ""
    const keys = items.map((x) => (KubeObject.isObject(x) && Object.hasOwn(x, field) ? x[field] : undefined))
    return repeated(keys).map((i) => FieldCauses.duplicate(FieldCauses.index(path, i), keys[i] === undefined ? {} : { [field]: keys[i] }))
  }
  const keys = items.map(keysOf)
  return repeated(keys).map((i) => FieldCauses.duplicate(FieldCauses.index(path, i), keys[i]))
}

/** `listtype.ValidateListSetsAndMaps`: uniqueness of set items and of map keys. */
const listTypes = (path: string, value: unknown, schema: JsonSchemaProps | undefined): ReadonlyArray<FieldCauses.Cause> => {
  if (schema === undefined || !declaresSetOrMap(schema)) return []
  if (Array.isArray(value)) {
    const listType = schema["x-kubernetes-list-type"]
    const own =
      listType === "set"
        ? repeated(value).map((i) => FieldCauses.duplicate(FieldCauses.index(path, i), value[i]))
        : listType === "map"
        ? listMapCauses(path, schema, value)
        : []
    return [...own, ...value.flatMap((v, i) => listTypes(FieldCauses.index(path, i), v, schema.items))]
  }
  if (!KubeObject.isObject(value)) return []
  return Object.entries(value).flatMap(([k, v]) => {
    const additional = schema.additionalProperties
    const byKey = typeof additional === "object" ? listTypes(FieldCauses.key(path, k), v, additional) : []
    const property = schema.properties?.[k]
    return [...byKey, ...(property === undefined ? [] : listTypes(FieldCauses.child(path, k), v, property))]
  })
}

/** What a custom resource is checked against. */
export interface CustomResourceRules {
  readonly group: string
  readonly version: string
  readonly kind: string
  readonly namespaced: boolean
  readonly schema?: JsonSchemaProps | undefined
  readonly scale?: { readonly specReplicasPath: string; readonly statusReplicasPath: string } | undefined
}

const scaleCauses = (object: KubeObject.KubeObject, jsonPath: string): ReadonlyArray<FieldCauses.Cause> => {
  let value: unknown = object
  for (const segment of jsonPath.replace(/^\./, "").split(".")) {
    if (!KubeObject.isObject(value)) return []
    value = value[segment]
  }
  if (value === undefined) return []
  if (typeof value !== "number" || !FieldCauses.isGoInteger(value)) {
    const goType = typeof value === "string" ? "string" : typeof value === "number" ? "float64" : typeof value
    const printed = typeof value === "string" ? value : typeof value === "number" ? FieldCauses.goFloat(value) : FieldCauses.goSharp(value)
    return [FieldCauses.invalid(jsonPath, 0, `${jsonPath} accessor error: ${printed} is of the type ${goType}, expected int64`)]
  }
  if (value < 0) return [FieldCauses.invalid(jsonPath, value, "should be a non-negative integer")]
  if (value > 2147483647) return [FieldCauses.invalid(jsonPath, value, "should be less than or equal to 2147483647")]
  return []
}

/**
 * Everything kube-apiserver checks on a custom resource write, in its order: apiVersion and kind
 * (alone when wrong), ObjectMeta, the schema, scale replicas, embedded resources, list-type
 * uniqueness. Run it after {@link Defaulting} and {@link Pruning}.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.validateCustomResource(
 *   { apiVersion: "stable.example.com/v1", kind: "CronTab", metadata: { name: "x", namespace: "default" } },
 *   { group: "stable.example.com", version: "v1", kind: "CronTab", namespaced: true }
 * ) // []
 */
export const validateCustomResource = (object: unknown, rules: CustomResourceRules, old?: unknown): ReadonlyArray<FieldCauses.Cause> => {
  const o = KubeObject.isObject(object) ? object : {}
  const apiVersion = `${rules.group}/${rules.version}`
  const typeMeta = [
    ...(o.kind === rules.kind ? [] : [FieldCauses.invalid("kind", o.kind ?? "", `must be ${rules.kind}`)]),
    ...(o.apiVersion === apiVersion ? [] : [FieldCauses.invalid("apiVersion", o.apiVersion ?? "", `must be ${apiVersion}`)])
  ]
  if (typeMeta.length > 0) return typeMeta
  return [
    ...ObjectMetaValidation.validateObjectMeta(o.metadata, { namespaced: rules.namespaced }),
    // On updates, errors at values left as they were are ratcheted away (1.32's default).
    ...(rules.schema === undefined ? [] : Ratcheting.validate(o, rules.schema, old)),
    ...(rules.scale === undefined ? [] : [
      ...scaleCauses(o, rules.scale.specReplicasPath),
      ...scaleCauses(o, rules.scale.statusReplicasPath)
    ]),
    ...embeddedResources("", o, rules.schema),
    ...listTypes("", o, rules.schema)
  ]
}
