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

// Both passes return the value itself where they change nothing (stored objects are never
// mutated), so a read or write of an already defaulted object copies nothing.

/** `PruneNonNullableNullsWithoutDefaults`: a null the schema forbids and cannot default is dropped. */
const dropNulls = (value: unknown, schema: JsonSchemaProps | undefined): unknown => {
  // Only a schema forbids a null: below a field it does not describe there is nothing to drop.
  if (schema === undefined) return value
  if (Array.isArray(value)) return mapShared(value, (v) => dropNulls(v, schema.items))
  if (!KubeObject.isObject(value)) return value
  const keys = Object.keys(value)
  let out: Record<string, unknown> | undefined
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!
    const v = value[k]
    const sub = fieldSchema(schema, k)
    const dropped = isNonNullableNull(v, sub) && !hasDefault(sub)
    const next = dropped ? undefined : dropNulls(v, sub)
    if (out === undefined && (dropped || next !== v)) {
      out = {}
      for (let j = 0; j < i; j++) out[keys[j]!] = value[keys[j]!]
    }
    if (out !== undefined && !dropped) out[k] = next
  }
  return out ?? value
}

const mapShared = (values: ReadonlyArray<unknown>, f: (value: unknown) => unknown): ReadonlyArray<unknown> => {
  let out: Array<unknown> | undefined
  for (let i = 0; i < values.length; i++) {
    const next = f(values[i])
    if (out === undefined && next !== values[i]) out = values.slice(0, i)
    if (out !== undefined) out.push(next)
  }
  return out ?? values
}

const copyDefault = (schema: JsonSchemaProps | undefined): unknown =>
  hasDefault(schema) ? structuredClone(schema?.default) : null

/** `structuraldefaulting.Default`. */
const fill = (value: unknown, schema: JsonSchemaProps | undefined): unknown => {
  if (schema === undefined) return value
  if (Array.isArray(value)) {
    const items = schema.items
    return mapShared(value, (v) => fill(isNonNullableNull(v, items) ? copyDefault(items) : v, items))
  }
  if (!KubeObject.isObject(value)) return value
  let out: Record<string, unknown> | undefined
  const properties = schema.properties
  for (const k in properties) {
    const property = properties[k]
    if (hasDefault(property) && (!Object.hasOwn(value, k) || isNonNullableNull(value[k], property))) {
      out ??= { ...value }
      out[k] = copyDefault(property)
    }
  }
  const additional = typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined
  const current = out ?? value
  for (const k of Object.keys(current)) {
    const property = properties?.[k]
    const v = current[k]
    const next = property !== undefined
      ? fill(v, property)
      : additional !== undefined
      ? fill(isNonNullableNull(v, additional) ? copyDefault(additional) : v, additional)
      : v
    if (next === v) continue
    out ??= { ...value }
    out[k] = next
  }
  return out ?? value
}

/**
 * Applies the schema's defaults to an object (a custom resource, or any value below the schema),
 * returning the defaulted value: the value itself, unchanged, when it needs no default. Call it on
 * every write before pruning and validation, and on every read.
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
