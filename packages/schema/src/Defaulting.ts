/**
 * Schema defaults of custom resources, applied as kube-apiserver applies them when it decodes a
 * request body and when it reads an object from storage: a `default` fills a missing field (or a
 * `null` one that is not nullable) of an object that exists, defaults inside a default are applied
 * too, list items and map values that are non-nullable nulls take their schema's default, and
 * non-nullable nulls without a default are dropped. Given values are never overridden.
 */
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"
import * as KubeObject from "./KubeObject.ts"

const hasDefault = (schema: JsonSchemaProps | undefined): boolean =>
  schema !== undefined && schema.default !== undefined && schema.default !== null

const isNonNullableNull = (value: unknown, schema: JsonSchemaProps | undefined): boolean =>
  value === null && schema !== undefined && schema.nullable !== true

const fieldSchema = (schema: JsonSchemaProps | undefined, k: string): JsonSchemaProps | undefined => {
  if (schema === undefined) return undefined
  const property = schema.properties?.[k]
  if (property !== undefined) return property
  return typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined
}

/** `PruneNonNullableNullsWithoutDefaults`: a null the schema forbids and cannot default is dropped. */
const dropNulls = (value: unknown, schema: JsonSchemaProps | undefined): unknown => {
  if (Array.isArray(value)) return value.map((v) => dropNulls(v, schema?.items))
  if (!KubeObject.isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    const sub = fieldSchema(schema, k)
    if (isNonNullableNull(v, sub) && !hasDefault(sub)) continue
    out[k] = dropNulls(v, sub)
  }
  return out
}

const copyDefault = (schema: JsonSchemaProps | undefined): unknown =>
  hasDefault(schema) ? structuredClone(schema?.default) : null

/** `structuraldefaulting.Default`. */
const fill = (value: unknown, schema: JsonSchemaProps | undefined): unknown => {
  if (schema === undefined) return value
  if (Array.isArray(value)) {
    const items = schema.items
    return value.map((v) => fill(isNonNullableNull(v, items) ? copyDefault(items) : v, items))
  }
  if (!KubeObject.isObject(value)) return value
  const out: Record<string, unknown> = { ...value }
  for (const [k, property] of Object.entries(schema.properties ?? {})) {
    if (hasDefault(property) && (!Object.hasOwn(out, k) || isNonNullableNull(out[k], property))) {
      out[k] = copyDefault(property)
    }
  }
  const additional = typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined
  for (const k of Object.keys(out)) {
    const property = schema.properties?.[k]
    if (property !== undefined) out[k] = fill(out[k], property)
    else if (additional !== undefined) {
      out[k] = fill(isNonNullableNull(out[k], additional) ? copyDefault(additional) : out[k], additional)
    }
  }
  return out
}

/**
 * Applies the schema's defaults to an object (a custom resource, or any value below the schema),
 * returning a new value. Call it on every write before pruning and validation, and on every read.
 *
 * @example
 * import * as Defaulting from "./Defaulting.ts"
 * const schema = { type: "object" as const, properties: { spec: { type: "object" as const, properties: {
 *   replicas: { type: "integer" as const, default: 1 } } } } }
 * Defaulting.apply({ spec: {} }, schema) // { spec: { replicas: 1 } }
 * Defaulting.apply({ spec: { replicas: 3 } }, schema) // { spec: { replicas: 3 } }
 * Defaulting.apply({}, schema) // {} (spec does not exist, so nothing below it is defaulted)
 */
export const apply = <A>(value: A, schema: JsonSchemaProps | undefined): A =>
  fill(dropNulls(value, schema), schema) as A
