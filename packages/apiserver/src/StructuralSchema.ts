/**
 * Checks of a CRD version's openAPIV3Schema, as apiextensions.k8s.io/v1 admission runs them: the
 * OpenAPI subset CRDs may use (no `$ref`, `patternProperties`, `uniqueItems`...), the Kubernetes
 * extensions' rules (`x-kubernetes-list-type`, `-map-type`, `-list-map-keys`, ...), structurality
 * (a type everywhere except under `x-kubernetes-preserve-unknown-fields` / `x-kubernetes-int-or-string`,
 * nothing but value validations inside `allOf`/`anyOf`/`oneOf`/`not`, metadata restricted to name
 * and generateName), that defaults are valid and pruned, and (once all that holds) that the CEL
 * rules in `x-kubernetes-validations` compile within their cost limits (`CelSchemaChecks`). Causes
 * carry Kubernetes' wording and paths such as
 * `spec.versions[0].schema.openAPIV3Schema.properties[spec].type`.
 */
import { CelSchemaChecks, FieldCauses, KubeObject, OpenApiValidation, Pruning } from "@kubefx/schema/internal"
import type { JsonSchemaProps } from "@kubefx/schema"

type Cause = FieldCauses.Cause
type Raw = KubeObject.KubeObject

const { child, forbidden, index, invalid, key, notSupported, required } = FieldCauses

const asRaw = (u: unknown): Raw | undefined => (KubeObject.isObject(u) ? u : undefined)

const text = (s: Raw, k: string): string => (typeof s[k] === "string" ? s[k] : "")

const entries = (u: unknown): ReadonlyArray<readonly [string, Raw]> =>
  KubeObject.isObject(u) ? Object.entries(u).map(([k, v]) => [k, asRaw(v) ?? {}]) : []

const list = (u: unknown): ReadonlyArray<Raw> => (Array.isArray(u) ? u.map((v) => asRaw(v) ?? {}) : [])

const strings = (u: unknown): ReadonlyArray<string> =>
  Array.isArray(u) ? u.filter((v): v is string => typeof v === "string") : []

/** A default of `null` is no default: Go decodes it into a nil pointer. */
const hasDefault = (s: Raw): boolean => s.default !== undefined && s.default !== null

const isTrue = (s: Raw, k: string): boolean => s[k] === true

const openapiV3Types = ["array", "boolean", "integer", "number", "object", "string"]

const typeMetaFields = new Set(["metadata", "kind", "apiVersion"])

// ---------------------------------------------------------------------------------------------
// ValidateCustomResourceDefinitionOpenAPISchema

interface Standard {
  readonly allowDefaults: boolean
  readonly disallowDefaultsReason: string
  readonly insideResourceMeta: boolean
}

const withoutDefaults = (ssv: Standard, reason: string): Standard => ({
  ...ssv,
  allowDefaults: false,
  disallowDefaultsReason: reason
})

/** specStandardValidatorV3: the OpenAPI keywords CRDs may not use. */
const standard = (s: Raw, path: string, ssv: Standard): ReadonlyArray<Cause> => {
  const causes: Array<Cause> = []
  if (s.type !== undefined && s.type !== "" && !openapiV3Types.includes(String(s.type))) {
    causes.push(notSupported(child(path, "type"), s.type, openapiV3Types))
  }
  if (hasDefault(s) && !ssv.allowDefaults) {
    const reason = ssv.disallowDefaultsReason === "" ? "" : ` ${ssv.disallowDefaultsReason}`
    causes.push(forbidden(child(path, "default"), `must not be set${reason}`))
  }
  if (text(s, "id") !== "") causes.push(forbidden(child(path, "id"), "id is not supported"))
  if (s.additionalItems !== undefined) {
    causes.push(forbidden(child(path, "additionalItems"), "additionalItems is not supported"))
  }
  if (entries(s.patternProperties).length > 0) {
    causes.push(forbidden(child(path, "patternProperties"), "patternProperties is not supported"))
  }
  if (entries(s.definitions).length > 0) {
    causes.push(forbidden(child(path, "definitions"), "definitions is not supported"))
  }
  if (s.dependencies !== undefined && s.dependencies !== null) {
    causes.push(forbidden(child(path, "dependencies"), "dependencies is not supported"))
  }
  if (s.$ref !== undefined) causes.push(forbidden(child(path, "$ref"), "$ref is not supported"))
  if (s.type === "null") {
    causes.push(forbidden(child(path, "type"), "type cannot be set to null, use nullable as an alternative"))
  }
  if (Array.isArray(s.items) && s.items.length > 0) {
    causes.push(forbidden(child(path, "items"), "items must be a schema object and not an array"))
  }
  if (ssv.insideResourceMeta && isTrue(s, "x-kubernetes-embedded-resource")) {
    causes.push(forbidden(child(path, "x-kubernetes-embedded-resource"), "must not be used inside of resource meta"))
  }
  return causes
}

const typeMust = (s: Raw, path: string, detail: string): Cause =>
  text(s, "type") === "" ? required(child(path, "type"), detail) : invalid(child(path, "type"), s.type, detail)

/** Rules of the Kubernetes list and map extensions on one node. */
const listAndMapRules = (s: Raw, path: string): ReadonlyArray<Cause> => {
  const causes: Array<Cause> = []
  const type = text(s, "type")
  const mapType = s["x-kubernetes-map-type"]
  const listType = s["x-kubernetes-list-type"]
  const mapKeys = strings(s["x-kubernetes-list-map-keys"])
  const items = asRaw(s.items)
  if (mapType !== undefined && type !== "object") {
    causes.push(typeMust(s, path, "must be object if x-kubernetes-map-type is specified"))
  }
  if (mapType !== undefined && mapType !== "atomic" && mapType !== "granular") {
    causes.push(notSupported(child(path, "x-kubernetes-map-type"), mapType, ["atomic", "granular"]))
  }
  if (listType !== undefined && type !== "array") {
    causes.push(typeMust(s, path, "must be array if x-kubernetes-list-type is specified"))
  } else if (listType === "set" && items !== undefined) {
    const atomic = "must be atomic as item of a list with x-kubernetes-list-type=set"
    const itemListType = items["x-kubernetes-list-type"]
    if (items.type === "array" && itemListType !== undefined && itemListType !== "atomic") {
      causes.push(invalid(child(child(path, "items"), "x-kubernetes-list-type"), itemListType, atomic))
    }
    if (items.type === "object" && items["x-kubernetes-map-type"] !== "atomic") {
      // kube-apiserver reports the items' list type here, not their map type
      causes.push(invalid(child(child(path, "items"), "x-kubernetes-map-type"), itemListType ?? null, atomic))
    }
  }
  if (listType !== undefined && listType !== "atomic" && listType !== "set" && listType !== "map") {
    causes.push(notSupported(child(path, "x-kubernetes-list-type"), listType, ["atomic", "set", "map"]))
  }
  if (mapKeys.length > 0) {
    const detail = "must be map if x-kubernetes-list-map-keys is non-empty"
    if (listType === undefined) causes.push(required(child(path, "x-kubernetes-list-type"), detail))
    else if (listType !== "map") causes.push(invalid(child(path, "x-kubernetes-list-type"), listType, detail))
  }
  if (listType === "map") causes.push(...listMapRules(s, path, mapKeys))
  return causes
}

const listMapRules = (s: Raw, path: string, mapKeys: ReadonlyArray<string>): ReadonlyArray<Cause> => {
  const causes: Array<Cause> = []
  const keysPath = child(path, "x-kubernetes-list-map-keys")
  if (mapKeys.length === 0) causes.push(required(keysPath, "must not be empty if x-kubernetes-list-type is map"))
  if (s.items === undefined) causes.push(required(child(path, "items"), "must have a schema if x-kubernetes-list-type is map"))
  if (Array.isArray(s.items)) {
    const value = FieldCauses.goStruct("apiextensions.JSONSchemaPropsOrArray", [["JSONSchemas", s.items]])
    causes.push(invalid(child(path, "items"), value, "must only have a single schema if x-kubernetes-list-type is map"))
  }
  const items = asRaw(s.items)
  if (items === undefined) return causes
  if (items.type !== "object") {
    const detail = "must be object if parent array's x-kubernetes-list-type is map"
    causes.push(invalid(child(child(path, "items"), "type"), items.type ?? "", detail))
    return causes
  }
  const properties = asRaw(items.properties) ?? {}
  const seen = new Set<string>()
  for (const k of mapKeys) {
    const property = asRaw(properties[k])
    if (property === undefined) {
      causes.push(invalid(keysPath, FieldCauses.goStrings(mapKeys), "entries must all be names of item properties"))
    } else if (property.type === "array" || property.type === "object") {
      const detail = "must be a scalar type if parent array's x-kubernetes-list-type is map"
      causes.push(invalid(child(key(child(child(path, "items"), "properties"), k), "type"), items.type, detail))
    }
    if (seen.has(k)) causes.push(invalid(keysPath, FieldCauses.goStrings(mapKeys), "must not contain duplicate entries"))
    seen.add(k)
  }
  return causes
}

const supportedReasons = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]

/** Whether a rule's fieldPath names a field of the schema (`.a.b`, `['a.b']`; no list indexes). */
const fieldPathValid = (s: Raw, fieldPath: string): boolean => {
  let at: Raw | undefined = s
  const segment = /^(?:\.([a-zA-Z_][a-zA-Z0-9_-]*)|\['((?:[^'\\]|\\.)*)'\])/
  let rest = fieldPath.trim()
  while (rest !== "") {
    const m = segment.exec(rest)
    if (m === null || at === undefined) return false
    const name = m[1] ?? (m[2] ?? "").replace(/\\(.)/g, "$1")
    const property: Raw | undefined = asRaw(asRaw(at.properties)?.[name])
    at = property ?? (KubeObject.isObject(at.additionalProperties) ? at.additionalProperties : undefined)
    if (at === undefined) return false
    rest = rest.slice(m[0].length)
  }
  return true
}

const validationRules = (s: Raw, path: string): ReadonlyArray<Cause> =>
  list(s["x-kubernetes-validations"]).flatMap((rule, i) => {
    const at = index(child(path, "x-kubernetes-validations"), i)
    const ruleText = text(rule, "rule").trim()
    const message = text(rule, "message")
    const causes: Array<Cause> = []
    if (ruleText === "") causes.push(required(child(at, "rule"), "rule is not specified"))
    else if (message !== "" && message.trim() === "") {
      causes.push(invalid(child(at, "message"), message, "message must be non-empty if specified"))
    } else if (/[\n\r]/.test(message.trim())) causes.push(invalid(child(at, "message"), message, "message must not contain line breaks"))
    else if (/[\n\r]/.test(ruleText) && message.trim() === "") {
      causes.push(required(child(at, "message"), "message must be specified if rule contains line breaks"))
    }
    const messageExpression = text(rule, "messageExpression")
    if (messageExpression !== "" && messageExpression.trim() === "") {
      causes.push(required(child(at, "messageExpression"), "messageExpression must be non-empty if specified"))
    }
    if (rule.reason !== undefined && !supportedReasons.includes(text(rule, "reason"))) {
      causes.push(notSupported(child(at, "reason"), rule.reason, supportedReasons))
    }
    const fieldPath = text(rule, "fieldPath")
    if (fieldPath !== "" && fieldPath.trim() === "") causes.push(invalid(child(at, "fieldPath"), fieldPath, "fieldPath must be non-empty if specified"))
    if (/[\n\r]/.test(fieldPath)) causes.push(invalid(child(at, "fieldPath"), fieldPath, "fieldPath must not contain line breaks"))
    if (fieldPath.trim() !== "" && !fieldPathValid(s, fieldPath)) causes.push(invalid(child(at, "fieldPath"), fieldPath, "fieldPath must be a valid path"))
    return causes
  })

/** validateMapListKeysMapSet: set/map items are not nullable, map keys are required or defaulted. */
const mapListKeysRules = (s: Raw, path: string): ReadonlyArray<Cause> => {
  const items = asRaw(s.items)
  const listType = s["x-kubernetes-list-type"]
  if (items === undefined || (listType !== "set" && listType !== "map")) return []
  const causes: Array<Cause> = []
  const itemsPath = child(path, "items")
  if (isTrue(items, "nullable")) {
    causes.push(forbidden(child(itemsPath, "nullable"), `cannot be nullable when x-kubernetes-list-type is ${listType}`))
  }
  if (listType === "map") {
    const requiredKeys = new Set(strings(items.required))
    for (const k of strings(s["x-kubernetes-list-map-keys"])) {
      const property = asRaw(asRaw(items.properties)?.[k])
      if (property === undefined) continue
      const at = key(child(itemsPath, "properties"), k)
      if (!requiredKeys.has(k) && !hasDefault(property)) {
        const detail = "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
        causes.push(required(child(at, "default"), detail))
      }
      if (isTrue(property, "nullable")) {
        causes.push(forbidden(child(at, "nullable"), "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
      }
    }
  }
  return causes
}

const openapi = (s: Raw | undefined, path: string, ssv: Standard, isRoot: boolean): ReadonlyArray<Cause> => {
  if (s === undefined) return []
  const causes: Array<Cause> = [...standard(s, path, ssv)]
  if (isTrue(s, "uniqueItems")) {
    causes.push(forbidden(child(path, "uniqueItems"), "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
  }
  const properties = entries(s.properties)
  if (s.additionalProperties !== undefined) {
    if (properties.length > 0 && (s.additionalProperties === false || KubeObject.isObject(s.additionalProperties))) {
      causes.push(forbidden(child(path, "additionalProperties"), "additionalProperties and properties are mutual exclusive"))
    }
    const sub = ssv.insideResourceMeta ? withoutDefaults(ssv, "inside additionalProperties applying to object metadata") : ssv
    causes.push(...openapi(asRaw(s.additionalProperties), child(path, "additionalProperties"), sub, false))
  }
  for (const [name, property] of properties) {
    let sub = ssv
    if ((isRoot || isTrue(s, "x-kubernetes-embedded-resource")) && typeMetaFields.has(name)) {
      sub = { ...ssv, insideResourceMeta: true }
      if (isRoot) sub = withoutDefaults(sub, `in top-level ${name}`)
    }
    causes.push(...openapi(property, key(child(path, "properties"), name), sub, false))
  }
  causes.push(...openapi(asRaw(s.not), child(path, "not"), ssv, false))
  for (const junctor of ["allOf", "oneOf", "anyOf"]) {
    list(s[junctor]).forEach((part, i) => causes.push(...openapi(part, index(child(path, junctor), i), ssv, false)))
  }
  if (Array.isArray(s.items)) {
    list(s.items).forEach((item, i) => causes.push(...openapi(item, index(child(path, "items"), i), ssv, false)))
  } else {
    causes.push(...openapi(asRaw(s.items), child(path, "items"), ssv, false))
  }
  if (s["x-kubernetes-preserve-unknown-fields"] === false) {
    causes.push(invalid(child(path, "x-kubernetes-preserve-unknown-fields"), false, "must be true or undefined"))
  }
  causes.push(...listAndMapRules(s, path), ...validationRules(s, path), ...mapListKeysRules(s, path))
  return causes
}

// ---------------------------------------------------------------------------------------------
// ValidateStructural: invariants and completeness

type Level = "root" | "item" | "field"

const typeRequired: Record<Level, string> = {
  root: "must not be empty at the root",
  item: "must not be empty for specified array items",
  field: "must not be empty for specified object fields"
}

const isIntOrStringAnyOf = (anyOf: unknown): boolean => {
  const parts = list(anyOf)
  const only = (part: Raw | undefined, type: string) =>
    part !== undefined && Object.keys(part).length === 1 && part.type === type
  return parts.length === 2 && only(parts[0], "integer") && only(parts[1], "string")
}

/** Keywords that may only appear in the structural part of a schema, with their messages when nested. */
const nestedForbidden: ReadonlyArray<readonly [string, (v: unknown) => boolean, string]> = [
  ["type", (v) => typeof v === "string" && v !== "", "must be empty to be structural"],
  ["default", (v) => v !== undefined && v !== null, "must be undefined to be structural"],
  ["title", (v) => typeof v === "string" && v !== "", "must be empty to be structural"],
  ["description", (v) => typeof v === "string" && v !== "", "must be empty to be structural"],
  ["nullable", (v) => v === true, "must be false to be structural"],
  ["externalDocs", (v) => v !== undefined && v !== null, "must be undefined to be structural"],
  ["x-kubernetes-preserve-unknown-fields", (v) => v === true, "must be false to be structural"],
  ["x-kubernetes-embedded-resource", (v) => v === true, "must be false to be structural"],
  ["x-kubernetes-int-or-string", (v) => v === true, "must be false to be structural"],
  ["x-kubernetes-list-map-keys", (v) => Array.isArray(v) && v.length > 0, "must be empty to be structural"],
  ["x-kubernetes-list-type", (v) => v !== undefined && v !== null, "must be undefined to be structural"],
  ["x-kubernetes-map-type", (v) => v !== undefined && v !== null, "must be undefined to be structural"],
  ["x-kubernetes-validations", (v) => Array.isArray(v) && v.length > 0, "must be empty to be structural"]
]

const valueValidation = (s: Raw, path: string, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean): ReadonlyArray<Cause> => {
  const causes: Array<Cause> = []
  if (!skipAnyOf) {
    list(s.anyOf).forEach((part, i) => causes.push(...nestedValidation(part, index(child(path, "anyOf"), i), false)))
  }
  list(s.allOf).forEach((part, i) =>
    causes.push(...nestedValidation(part, index(child(path, "allOf"), i), skipFirstAllOfAnyOf && i === 0))
  )
  list(s.oneOf).forEach((part, i) => causes.push(...nestedValidation(part, index(child(path, "oneOf"), i), false)))
  const not = asRaw(s.not)
  if (not !== undefined) causes.push(...nestedValidation(not, child(path, "not"), false))
  const pattern = text(s, "pattern")
  if (pattern !== "") {
    const compiled = OpenApiValidation.compilePattern(pattern)
    if (typeof compiled === "string") {
      causes.push(invalid(child(path, "pattern"), pattern, `must be a valid regular expression, but isn't: ${compiled}`))
    }
  }
  return causes
}

/** A schema inside allOf/anyOf/oneOf/not: only value validations are allowed. */
const nestedValidation = (s: Raw, path: string, skipAnyOf: boolean): ReadonlyArray<Cause> => {
  const causes: Array<Cause> = [...valueValidation(s, path, skipAnyOf, false)]
  const items = asRaw(s.items)
  if (items !== undefined) causes.push(...nestedValidation(items, child(path, "items"), false))
  for (const [name, property] of entries(s.properties)) {
    causes.push(...nestedValidation(property, key(child(path, "properties"), name), false))
  }
  for (const [keyword, present, detail] of nestedForbidden) {
    if (present(s[keyword])) causes.push(forbidden(child(path, keyword), detail))
  }
  // nested additionalProperties are not followed: they are forbidden outright
  if (s.additionalProperties !== undefined) {
    causes.push(forbidden(child(path, "additionalProperties"), "must be undefined to be structural"))
  }
  if (entries(s.properties).some(([name]) => name === "metadata")) {
    causes.push(forbidden(key(child(path, "properties"), "metadata"), "must not be specified in a nested context"))
  }
  return causes
}

const isZero = (v: unknown): boolean =>
  v === undefined || v === null || v === false || v === "" || (Array.isArray(v) && v.length === 0) ||
  (KubeObject.isObject(v) && Object.keys(v).length === 0)

const metadataInvariants = (s: Raw, checkMetadata: boolean, level: Level, path: string): ReadonlyArray<Cause> => {
  const causes: Array<Cause> = []
  if (checkMetadata && s.type !== "object") causes.push(invalid(child(path, "type"), s.type ?? "", "must be object"))
  if (level === "root") {
    const names = entries(s.properties).map(([name]) => name)
    const onlyNames = names.length > 0 && names.every((n) => n === "name" || n === "generateName")
    const rest = Object.entries(s).filter(([k, v]) => {
      if (k === "type" || k === "default") return false
      if (k === "properties" && onlyNames) return false
      return !isZero(v)
    })
    if (rest.length > 0) {
      causes.push(forbidden(path, "must not specify anything other than name and generateName, but metadata is implicitly specified"))
    }
  }
  return causes
}

const invariants = (s: Raw | undefined, level: Level, path: string): ReadonlyArray<Cause> => {
  if (s === undefined) return []
  const causes: Array<Cause> = []
  const type = text(s, "type")
  const embedded = isTrue(s, "x-kubernetes-embedded-resource")
  const intOrString = isTrue(s, "x-kubernetes-int-or-string")
  const preserve = isTrue(s, "x-kubernetes-preserve-unknown-fields")
  if (type === "array" && s.items === undefined) causes.push(required(child(path, "items"), "must be specified"))
  causes.push(...invariants(asRaw(s.items), "item", child(path, "items")))
  for (const [name, property] of entries(s.properties)) {
    causes.push(...invariants(property, "field", key(child(path, "properties"), name)))
  }
  if (s.additionalProperties !== undefined) {
    if (level === "root") causes.push(forbidden(child(path, "additionalProperties"), "must not be used at the root"))
    causes.push(...invariants(asRaw(s.additionalProperties), "field", child(path, "additionalProperties")))
  }
  if (intOrString && preserve) {
    causes.push(invalid(child(path, "x-kubernetes-preserve-unknown-fields"), true, "must be false if x-kubernetes-int-or-string is true"))
  }
  if (intOrString && embedded) {
    causes.push(invalid(child(path, "x-kubernetes-embedded-resource"), true, "must be false if x-kubernetes-int-or-string is true"))
  }
  const firstAllOf = list(s.allOf)[0]
  causes.push(...valueValidation(s, path, isIntOrStringAnyOf(s.anyOf), firstAllOf !== undefined && isIntOrStringAnyOf(firstAllOf.anyOf)))
  if (embedded && type !== "object") {
    causes.push(typeMust(s, path, "must be object if x-kubernetes-embedded-resource is true"))
  } else if (type === "" && !intOrString && !preserve) {
    causes.push(required(child(path, "type"), typeRequired[level]))
  }
  if (embedded && s.additionalProperties !== undefined) {
    causes.push(forbidden(child(path, "additionalProperties"), "must not be used if x-kubernetes-embedded-resource is set"))
  }
  if (level === "root" && type !== "" && type !== "object") causes.push(invalid(child(path, "type"), type, "must be object at the root"))
  const checkMetadata = level === "root" || embedded
  const properties = asRaw(s.properties) ?? {}
  for (const typeField of ["kind", "apiVersion"]) {
    const property = asRaw(properties[typeField])
    if (checkMetadata && property !== undefined && property.type !== "string") {
      causes.push(invalid(child(key(child(path, "properties"), typeField), "type"), property.type ?? "", "must be string"))
    }
  }
  const metadata = asRaw(properties.metadata)
  if (metadata !== undefined) {
    causes.push(...metadataInvariants(metadata, checkMetadata, level, key(child(path, "properties"), "metadata")))
  }
  if (embedded && !preserve && entries(s.properties).length === 0) {
    causes.push(required(child(path, "properties"), "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"))
  }
  return causes
}

/** Every field or array a value validation mentions must exist in the structural part. */
const completeness = (v: Raw, s: Raw | undefined, sPath: string, vPath: string): ReadonlyArray<Cause> => {
  const causes: Array<Cause> = []
  const nested = (part: Raw, at: string) => causes.push(...nestedCompleteness(part, s, sPath, at))
  const not = asRaw(v.not)
  if (not !== undefined) nested(not, child(vPath, "not"))
  for (const junctor of ["allOf", "anyOf", "oneOf"]) list(v[junctor]).forEach((part, i) => nested(part, index(child(vPath, junctor), i)))
  return causes
}

const nestedCompleteness = (v: Raw, s: Raw | undefined, sPath: string, vPath: string): ReadonlyArray<Cause> => {
  if (s === undefined) return [required(sPath, `because it is defined in ${vPath}`)]
  const causes: Array<Cause> = [...completeness(v, s, sPath, vPath)]
  const items = asRaw(v.items)
  if (items !== undefined) causes.push(...nestedCompleteness(items, asRaw(s.items), child(sPath, "items"), child(vPath, "items")))
  const structural = asRaw(s.properties) ?? {}
  for (const [name, property] of entries(v.properties)) {
    const here = key(child(sPath, "properties"), name)
    const there = key(child(vPath, "properties"), name)
    const target = asRaw(structural[name])
    if (target === undefined) causes.push(required(here, `because it is defined in ${there}`))
    else causes.push(...nestedCompleteness(property, target, here, there))
  }
  return causes
}

/**
 * Structurality alone (`ValidateStructural`), sorted as Kubernetes sorts them.
 *
 * @example
 * import * as StructuralSchema from "./StructuralSchema.ts"
 * StructuralSchema.validateStructural({ type: "object", properties: { a: {} } }, "s").map((c) => `${c.field}: ${c.message}`)
 * // ["s.properties[a].type: Required value: must not be empty for specified object fields"]
 */
export const validateStructural = (schema: unknown, path: string): ReadonlyArray<Cause> => {
  const s = asRaw(schema) ?? {}
  const causes = [...invariants(s, "root", path), ...completeness(s, s, path, path)]
  return causes.sort((a, b) => {
    const [x, y] = [FieldCauses.causeText(a), FieldCauses.causeText(b)]
    return x < y ? -1 : x > y ? 1 : 0
  })
}

/**
 * True when the schema is structural.
 *
 * @example
 * import * as StructuralSchema from "./StructuralSchema.ts"
 * StructuralSchema.isStructural({ type: "object", properties: { spec: { type: "object" } } }) // true
 * StructuralSchema.isStructural({ type: "object", properties: { spec: {} } }) // false
 */
export const isStructural = (schema: unknown): boolean => validateStructural(schema, "").length === 0

// ---------------------------------------------------------------------------------------------
// ValidateDefaults

const defaults = (s: Raw, path: string, insideMeta: boolean): ReadonlyArray<Cause> => {
  const embedded = isTrue(s, "x-kubernetes-embedded-resource")
  const meta = embedded ? false : insideMeta
  const schema = s as JsonSchemaProps
  const causes: Array<Cause> = []
  if (hasDefault(s)) {
    const at = child(path, "default")
    if (!meta) {
      const pruned = Pruning.pruneValue(s.default, schema, { root: embedded }).value
      if (!OpenApiValidation.jsonEquals(pruned, s.default)) causes.push(invalid(at, s.default, "must not have unknown fields"))
    }
    causes.push(...OpenApiValidation.validate(s.default, schema, { field: at }))
  }
  const items = asRaw(s.items)
  if (items !== undefined) causes.push(...defaults(items, child(path, "items"), meta))
  for (const [name, property] of entries(s.properties)) {
    const sub = meta || (embedded && typeMetaFields.has(name))
    causes.push(...defaults(property, key(child(path, "properties"), name), sub))
  }
  return causes
}

/** Options of {@link validate}. */
export interface Options {
  /** The field path of the schema: `spec.versions[0].schema.openAPIV3Schema`. */
  readonly path: string
  /** The status subresource is on: the root may only use a few keywords. */
  readonly statusSubresource?: boolean
}

/** JSONSchemaProps' fields in Go's order, with the keywords the root allows when /status is on. */
const rootKeywords: ReadonlyArray<readonly [string, string, boolean]> = [
  ["id", "ID", false], ["$schema", "Schema", false], ["$ref", "Ref", false], ["description", "Description", true],
  ["type", "Type", true], ["format", "Format", true], ["title", "Title", true], ["default", "Default", false],
  ["maximum", "Maximum", true], ["exclusiveMaximum", "ExclusiveMaximum", true], ["minimum", "Minimum", true],
  ["exclusiveMinimum", "ExclusiveMinimum", true], ["maxLength", "MaxLength", true], ["minLength", "MinLength", true],
  ["pattern", "Pattern", true], ["maxItems", "MaxItems", true], ["minItems", "MinItems", true],
  ["uniqueItems", "UniqueItems", true], ["multipleOf", "MultipleOf", true], ["enum", "Enum", false],
  ["maxProperties", "MaxProperties", false], ["minProperties", "MinProperties", false], ["required", "Required", true],
  ["items", "Items", true], ["allOf", "AllOf", false], ["oneOf", "OneOf", false], ["anyOf", "AnyOf", false],
  ["not", "Not", false], ["properties", "Properties", true], ["additionalProperties", "AdditionalProperties", false],
  ["patternProperties", "PatternProperties", false], ["dependencies", "Dependencies", false],
  ["additionalItems", "AdditionalItems", false], ["definitions", "Definitions", false],
  ["externalDocs", "ExternalDocs", true], ["example", "Example", true], ["nullable", "Nullable", false],
  ["x-kubernetes-preserve-unknown-fields", "XPreserveUnknownFields", true],
  ["x-kubernetes-embedded-resource", "XEmbeddedResource", false], ["x-kubernetes-int-or-string", "XIntOrString", false],
  ["x-kubernetes-list-map-keys", "XListMapKeys", false], ["x-kubernetes-list-type", "XListType", false],
  ["x-kubernetes-map-type", "XMapType", false], ["x-kubernetes-validations", "XValidations", true]
]

const allowedAtRoot = rootKeywords.filter(([, , allowed]) => allowed).map(([, goName]) => goName)

const statusRootRule = (s: Raw, path: string): ReadonlyArray<Cause> => {
  for (const [jsonName, , allowed] of rootKeywords) {
    if (isZero(s[jsonName])) continue
    if (jsonName === "type") {
      if (s.type !== "object") {
        return [invalid(`${path}.type`, s.type, `only "object" is allowed as the type at the root of the schema if the status subresource is enabled`)]
      }
      continue
    }
    if (!allowed) {
      const value = FieldCauses.goStruct(
        "apiextensions.JSONSchemaProps",
        rootKeywords.filter(([k]) => !isZero(s[k])).map(([k, goName]) => [goName, s[k]])
      )
      return [invalid(path, value, `only [${allowedAtRoot.join(" ")}] fields are allowed at the root of the schema if the status subresource is enabled`)]
    }
  }
  return []
}

/**
 * All checks kube-apiserver runs on one version's openAPIV3Schema when a CRD is created or
 * updated, in its order: the status-subresource root rule, root nullability, the OpenAPI subset and
 * extension rules, then structurality (sorted), then (only when structural) defaults.
 *
 * @example
 * import * as StructuralSchema from "./StructuralSchema.ts"
 * StructuralSchema.validate({ type: "object", properties: { spec: { type: "object", uniqueItems: true } } }, {
 *   path: "spec.versions[0].schema.openAPIV3Schema"
 * }).map((c) => c.field)
 * // ["spec.versions[0].schema.openAPIV3Schema.properties[spec].uniqueItems"]
 */
export const validate = (schema: unknown, options: Options): ReadonlyArray<Cause> => {
  const s = asRaw(schema) ?? {}
  const { path } = options
  const causes: Array<Cause> = []
  if (options.statusSubresource === true) causes.push(...statusRootRule(s, path))
  if (isTrue(s, "nullable")) causes.push(forbidden(`${path}.nullable`, "nullable cannot be true at the root"))
  causes.push(...openapi(s, path, { allowDefaults: true, disallowDefaultsReason: "", insideResourceMeta: false }, true))
  const structural = validateStructural(s, path)
  causes.push(...structural)
  if (structural.length === 0) causes.push(...defaults({ ...s, "x-kubernetes-embedded-resource": true }, path, false))
  // Rules are compiled only against a schema that is itself valid, as kube-apiserver does.
  if (causes.length === 0) causes.push(...CelSchemaChecks.validate(s as JsonSchemaProps, path))
  return causes
}
