/**
 * JSON values as the patch and apply modules see them: structurally the same type as effect's
 * `Schema.Json`, with the few helpers every merge needs (deep equality, a canonical encoding for
 * keys, parsing that does not throw).
 */
import { Result } from "effect"

/** Any JSON value (the same shape as effect's `Schema.Json`). */
export type Json = null | boolean | number | string | JsonArray | JsonObject

/** A JSON array. */
export interface JsonArray extends ReadonlyArray<Json> {}

/** A JSON object. */
export interface JsonObject {
  readonly [key: string]: Json
}

/**
 * True for a JSON object (not null, not an array).
 *
 * @example
 * import * as Json from "./Json.ts"
 * Json.isObject({ a: 1 }) // true
 * Json.isObject([1]) // false
 */
export const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * True for a JSON array.
 *
 * @example
 * import * as Json from "./Json.ts"
 * Json.isArray([1]) // true
 */
export const isArray = (value: Json | undefined): value is JsonArray => Array.isArray(value)

/**
 * Deep equality of JSON values; object key order does not matter, array order does.
 *
 * @example
 * import * as Json from "./Json.ts"
 * Json.equals({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }) // true
 * Json.equals([1, 2], [2, 1]) // false
 */
export const equals = (a: Json | undefined, b: Json | undefined): boolean => {
  if (a === b) return true
  if (a === undefined || b === undefined || a === null || b === null) return false
  if (isArray(a)) return isArray(b) && a.length === b.length && a.every((item, i) => equals(item, b[i]))
  if (isObject(a)) {
    if (!isObject(b)) return false
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && equals(a[k], b[k]))
  }
  return false
}

/**
 * JSON text with object keys sorted, so equal values always encode the same way (used for the
 * `k:` and `v:` path elements of managedFields).
 *
 * @example
 * import * as Json from "./Json.ts"
 * Json.canonical({ protocol: "TCP", containerPort: 80 }) // '{"containerPort":80,"protocol":"TCP"}'
 */
export const canonical = (value: Json): string => {
  if (isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (isObject(value)) {
    const keys = Object.keys(value).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k]!)}`).join(",")}}`
  }
  return JSON.stringify(value)
}

/**
 * Parses JSON text; the failure is the parser's message.
 *
 * @example
 * import * as Json from "./Json.ts"
 * import { Result } from "effect"
 * Result.isSuccess(Json.parse('{"a":1}')) // true
 * Result.isFailure(Json.parse("{")) // true
 */
export const parse = (text: string): Result.Result<Json, string> => {
  try {
    return Result.succeed(JSON.parse(text) as Json)
  } catch (e) {
    return Result.fail(e instanceof Error ? e.message : String(e))
  }
}
