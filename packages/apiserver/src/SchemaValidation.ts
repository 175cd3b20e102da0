/**
 * Validation of custom resources against their openAPIV3Schema, with the causes and messages
 * kube-apiserver 1.32 gives: kube-openapi's schema validator as the apiextensions-apiserver turns
 * its results into field errors (`spec.replicas: Invalid value: 15: spec.replicas in body should be
 * less than or equal to 10`), the ObjectMeta checks every object gets, embedded resources and the
 * uniqueness of `x-kubernetes-list-type` set/map lists.
 *
 * Causes carry `message` = the field error's body (what `details.causes[].message` holds) and
 * `field` = its path; {@link invalidMessage} builds the Status message from them.
 */
import { isIP } from "node:net"
import { RE2JS } from "re2js"
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"
import * as KubeObject from "./KubeObject.ts"

// ---------------------------------------------------------------------------------------------
// Causes

/** `metav1.CauseType` of a field error. */
export type CauseReason =
  | "FieldValueInvalid"
  | "FieldValueRequired"
  | "FieldValueNotSupported"
  | "FieldValueDuplicate"
  | "FieldValueTypeInvalid"
  | "FieldValueTooLong"
  | "FieldValueTooMany"
  | "FieldValueForbidden"
  | "FieldValueNotFound"
  | "InternalError"

/** One `details.causes[]` entry of a 422 Status. */
export interface Cause {
  readonly reason: CauseReason
  readonly message: string
  readonly field: string
}

const typeText: Record<CauseReason, string> = {
  FieldValueInvalid: "Invalid value",
  FieldValueRequired: "Required value",
  FieldValueNotSupported: "Unsupported value",
  FieldValueDuplicate: "Duplicate value",
  FieldValueTypeInvalid: "Invalid value",
  FieldValueTooLong: "Too long",
  FieldValueTooMany: "Too many",
  FieldValueForbidden: "Forbidden",
  FieldValueNotFound: "Not found",
  InternalError: "Internal error"
}

const goLiteralKey: unique symbol = Symbol.for("kubefx/GoLiteral")

/** A bad value already rendered the way Go's `%#v` prints it (typed slices, structs). */
export interface GoLiteral {
  readonly [goLiteralKey]: string
}

/**
 * Wraps text that should appear verbatim as a cause's value.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.invalid("metadata.finalizers", SchemaValidation.goLiteral('[]string{"a"}'), "bad").message
 * // 'Invalid value: []string{"a"}: bad'
 */
export const goLiteral = (text: string): GoLiteral => ({ [goLiteralKey]: text })

const isGoLiteral = (u: unknown): u is GoLiteral => typeof u === "object" && u !== null && goLiteralKey in u

/**
 * Go's `strconv.Quote`, which `%q` uses for string values in messages.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.goQuote('a"b') // '"a\\"b"'
 */
export const goQuote = (s: string): string => {
  const escapes: Record<string, string> = {
    "\"": "\\\"",
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\x07": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\v": "\\v"
  }
  let out = "\""
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0
    out += escapes[ch] ?? (code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, "0")}` : ch)
  }
  return `${out}"`
}

/** Go's `%v` of a float64: shortest digits, exponent form below 1e-4 and from 1e21 on. */
const goFloat = (n: number): string => {
  if (Number.isNaN(n)) return "NaN"
  if (!Number.isFinite(n)) return n > 0 ? "+Inf" : "-Inf"
  const abs = Math.abs(n)
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
    const [mantissa = "", exponent = "+0"] = n.toExponential().split("e")
    return `${mantissa}e${exponent[0]}${exponent.slice(1).padStart(2, "0")}`
  }
  return String(n)
}

/** A JSON number as Go's JSON decoding types it: int64 when integral, float64 otherwise. */
const isGoInteger = (n: number): boolean => Number.isInteger(n) && Math.abs(n) < 2 ** 63

const goNumber = (n: number): string => (isGoInteger(n) ? String(n) : goFloat(n))

/** `%#v` of a value held in an `interface{}` (map and slice elements). */
const goSharp = (value: unknown): string => {
  if (value === null || value === undefined) return "interface {}(nil)"
  if (typeof value === "string") return goQuote(value)
  if (typeof value === "number") return goNumber(value)
  if (typeof value === "boolean") return String(value)
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSharp).join(", ")}}`
  if (KubeObject.isObject(value)) {
    const entries = Object.keys(value).sort().map((k) => `${goQuote(k)}:${goSharp(value[k])}`)
    return `map[string]interface {}{${entries.join(", ")}}`
  }
  return String(value)
}

/** How `field.Error.ErrorBody` prints a bad value. */
const goValue = (value: unknown): string => {
  if (isGoLiteral(value)) return value[goLiteralKey]
  if (value === null || value === undefined) return goQuote("null")
  if (typeof value === "string") return goQuote(value)
  if (typeof value === "number") return goNumber(value)
  if (typeof value === "boolean") return String(value)
  return goSharp(value)
}

/**
 * JSON as Go's `encoding/json` writes it: sorted keys, `<`, `>` and `&` escaped.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.goJson({ b: 1, a: "<" }) // '{"a":"\\u003c","b":1}'
 */
export const goJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(goJson).join(",")}]`
  if (KubeObject.isObject(value)) {
    return `{${Object.keys(value).sort().map((k) => `${goJson(k)}:${goJson(value[k])}`).join(",")}}`
  }
  if (value === undefined) return "null"
  return JSON.stringify(value).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)
}

const noValue: unique symbol = Symbol("noValue")

const cause = (reason: CauseReason, field: string, value: unknown, detail: string): Cause => {
  const head = value === noValue ? typeText[reason] : `${typeText[reason]}: ${goValue(value)}`
  return { reason, field, message: detail === "" ? head : `${head}: ${detail}` }
}

/**
 * `field.Required`: `spec.cronSpec: Required value`.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.required("spec.cronSpec").message // "Required value"
 */
export const required = (field: string, detail = ""): Cause => cause("FieldValueRequired", field, noValue, detail)

/**
 * `field.Invalid`: `Invalid value: <value>: <detail>`.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.invalid("spec.replicas", 15, "too big").message // "Invalid value: 15: too big"
 */
export const invalid = (field: string, value: unknown, detail: string): Cause =>
  cause("FieldValueInvalid", field, value, detail)

/**
 * `field.TypeInvalid`: printed like Invalid, with reason FieldValueTypeInvalid.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.typeInvalid("spec.image", "integer", "wrong").reason // "FieldValueTypeInvalid"
 */
export const typeInvalid = (field: string, value: unknown, detail: string): Cause =>
  cause("FieldValueTypeInvalid", field, value, detail)

/**
 * `field.NotSupported`: `Unsupported value: "x": supported values: "a", "b"`.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.notSupported("spec.scope", "x", ["a", "b"]).message
 * // 'Unsupported value: "x": supported values: "a", "b"'
 */
export const notSupported = (field: string, value: unknown, supported: ReadonlyArray<string>): Cause =>
  cause(
    "FieldValueNotSupported",
    field,
    value,
    supported.length === 0 ? "" : `supported values: ${supported.map(goQuote).join(", ")}`
  )

/**
 * `field.Duplicate`: `Duplicate value: "a"`.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.duplicate("spec.tags[1]", "a").message // 'Duplicate value: "a"'
 */
export const duplicate = (field: string, value: unknown): Cause => cause("FieldValueDuplicate", field, value, "")

/**
 * `field.Forbidden`: `Forbidden: <detail>`.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.forbidden("metadata.namespace", "not allowed on this type").message
 * // "Forbidden: not allowed on this type"
 */
export const forbidden = (field: string, detail: string): Cause => cause("FieldValueForbidden", field, noValue, detail)

/**
 * `field.TooLong` (1.32 wording): `Too long: may not be more than 10 bytes`.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.tooLong("spec.name", 10).message // "Too long: may not be more than 10 bytes"
 */
export const tooLong = (field: string, max: number): Cause =>
  cause("FieldValueTooLong", field, noValue, `may not be more than ${max} bytes`)

/**
 * `field.TooMany`: `Too many: 3: must have at most 2 items`.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.tooMany("spec.ports", 3, 2).message // "Too many: 3: must have at most 2 items"
 */
export const tooMany = (field: string, actual: number, max: number): Cause =>
  cause("FieldValueTooMany", field, actual, `must have at most ${max} items`)

/**
 * A cause as `field.Error.Error()` prints it: `<field>: <message>`.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.causeText(SchemaValidation.required("spec.cronSpec")) // "spec.cronSpec: Required value"
 */
export const causeText = (c: Cause): string => `${c.field}: ${c.message}`

/**
 * The message of a 422 Invalid Status: one cause inline, several as `[a, b]` (identical ones once),
 * as `errors.NewInvalid` writes it.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.invalidMessage("CronTab.stable.example.com", "x", [SchemaValidation.required("spec.cronSpec")])
 * // 'CronTab.stable.example.com "x" is invalid: spec.cronSpec: Required value'
 */
export const invalidMessage = (qualifiedKind: string, name: string, causes: ReadonlyArray<Cause>): string => {
  const texts = [...new Set(causes.map(causeText))]
  const head = `${qualifiedKind} ${goQuote(name)} is invalid`
  if (texts.length === 0) return head
  return `${head}: ${texts.length === 1 ? texts[0] : `[${texts.join(", ")}]`}`
}

/**
 * The whole 422 `metav1.Status` body for causes, with `details.kind` the Kind and `details.group`
 * the group.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.invalidStatus({ group: "stable.example.com", kind: "CronTab" }, "x", []).code // 422
 */
export const invalidStatus = (
  target: { readonly group: string; readonly kind: string },
  name: string,
  causes: ReadonlyArray<Cause>
): Record<string, unknown> => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: invalidMessage(target.group === "" ? target.kind : `${target.kind}.${target.group}`, name, causes),
  reason: "Invalid",
  details: { name, group: target.group, kind: target.kind, causes },
  code: 422
})

// ---------------------------------------------------------------------------------------------
// Field paths (k8s.io/apimachinery field.Path)

/**
 * `path.Child(name)`.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.child("spec", "versions") // "spec.versions"
 */
export const child = (path: string, name: string): string => (path === "" ? name : `${path}.${name}`)

/**
 * `path.Index(i)`.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.index("spec.versions", 0) // "spec.versions[0]"
 */
export const index = (path: string, i: number): string => `${path}[${i}]`

/**
 * `path.Key(k)`.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.key("spec.properties", "spec") // "spec.properties[spec]"
 */
export const key = (path: string, k: string): string => `${path}[${k}]`

// ---------------------------------------------------------------------------------------------
// kube-openapi schema validation

interface Result {
  readonly causes: Array<Cause>
  /** kube-openapi's MatchCount: how many checks ran; anyOf/oneOf report the alternative that got furthest. */
  matches: number
}

const emptyResult = (): Result => ({ causes: [], matches: 0 })

const merge = (into: Result, from: Result): void => {
  into.causes.push(...from.causes)
  into.matches += from.matches
}

/** Where errors are reported: `prefix` is the fldPath given to ValidateCustomResource (nil: undefined). */
interface Context {
  readonly prefix: string | undefined
}

/** The path of an error named `name` (kube-openapi's `err.Name`), as the apiextensions conversion builds it. */
const errorField = (ctx: Context, name: string): string => {
  if (name === "" || name === ".") return ctx.prefix ?? "<nil>"
  const trimmed = name.startsWith(".") ? name.slice(1) : name
  return ctx.prefix === undefined ? trimmed : `${ctx.prefix}.${trimmed}`
}

const fail = (cause: Cause): Result => ({ causes: [cause], matches: 0 })

const invalidAt = (ctx: Context, name: string, value: unknown, message: string): Result =>
  fail(invalid(errorField(ctx, name), value, message))

const typeFailure = (ctx: Context, name: string, typeName: string, value: string): Result =>
  fail(typeInvalid(errorField(ctx, name), value, `${name} in body must be of type ${typeName}: ${goQuote(value)}`))

/** Errors that kube-openapi does not attach to a field (anyOf, oneOf, allOf, not). */
const composite = (ctx: Context, message: string): Cause => invalid(ctx.prefix ?? "<nil>", "", message)

type Kind = "string" | "integer" | "number" | "boolean" | "array" | "object"

const kindOf = (value: unknown): Kind => {
  if (typeof value === "string") return "string"
  if (typeof value === "boolean") return "boolean"
  if (typeof value === "number") return isGoInteger(value) ? "integer" : "number"
  if (Array.isArray(value)) return "array"
  return "object"
}

/** The format go-openapi infers from a decoded JSON value. */
const dataFormat = (kind: Kind): string => (kind === "integer" ? "int64" : kind === "number" ? "float64" : "")

const typesOf = (schema: JsonSchemaProps): ReadonlyArray<string> =>
  schema["x-kubernetes-int-or-string"] === true ? ["integer", "string"] : schema.type === undefined ? [] : [schema.type]

const checkType = (
  value: unknown,
  schema: JsonSchemaProps,
  format: string,
  path: string,
  ctx: Context
): Result => {
  const types = typesOf(schema)
  const result = emptyResult()
  result.matches = 1
  if (value === null || value === undefined) {
    if (types.length > 0 && schema.nullable !== true) merge(result, typeFailure(ctx, path, types.join(","), "null"))
    return result
  }
  const kind = kindOf(value)
  const isIntFloat = kind === "integer" && types.includes("number")
  const scalarOrObject = kind !== "string" && kind !== "array"
  if (scalarOrObject && format !== "" && !(types.includes(kind) || format === dataFormat(kind) || isIntFloat)) {
    merge(result, typeFailure(ctx, path, format, dataFormat(kind)))
  } else if (!(types.includes("number") || types.includes("integer")) && format !== "" && !scalarOrObject) {
    // a known format on a string or array is left to the format validator
  } else if (!(types.includes(kind) || isIntFloat)) {
    merge(result, typeFailure(ctx, path, types.join(","), kind))
  }
  return result
}

const checkCompositions = (value: unknown, schema: JsonSchemaProps, path: string, ctx: Context): Result => {
  const result = emptyResult()
  const quoted = goQuote(path)
  if (schema.anyOf !== undefined && schema.anyOf.length > 0) {
    let best: Result | undefined
    let firstSuccess: Result | undefined
    for (const alternative of schema.anyOf) {
      const r = validateNode(value, alternative, path, ctx)
      if (r.causes.length === 0) {
        best = undefined
        firstSuccess = r
        break
      }
      if (best === undefined || r.matches > best.matches) best = r
    }
    if (firstSuccess === undefined) result.causes.push(composite(ctx, `${quoted} must validate at least one schema (anyOf)`))
    const chosen = best ?? firstSuccess
    if (chosen !== undefined) merge(result, chosen)
  }
  if (schema.oneOf !== undefined && schema.oneOf.length > 0) {
    let best: Result | undefined
    let firstSuccess: Result | undefined
    let validated = 0
    for (const alternative of schema.oneOf) {
      const r = validateNode(value, alternative, path, ctx)
      if (r.causes.length === 0) {
        validated++
        best = undefined
        firstSuccess ??= r
      } else if (validated === 0 && (best === undefined || r.matches > best.matches)) {
        best = r
      }
    }
    if (validated !== 1) {
      const found = validated === 0 ? "Found none valid" : `Found ${validated} valid alternatives`
      result.causes.push(composite(ctx, `${quoted} must validate one and only one schema (oneOf). ${found}`))
      if (best !== undefined) merge(result, best)
    } else if (firstSuccess !== undefined) {
      merge(result, firstSuccess)
    }
  }
  if (schema.allOf !== undefined && schema.allOf.length > 0) {
    let validated = 0
    for (const part of schema.allOf) {
      const r = validateNode(value, part, path, ctx)
      if (r.causes.length === 0) validated++
      merge(result, r)
    }
    if (validated !== schema.allOf.length) {
      const none = validated === 0 ? ". None validated" : ""
      result.causes.push(composite(ctx, `${quoted} must validate all the schemas (allOf)${none}`))
    }
  }
  if (schema.not !== undefined && validateNode(value, schema.not, path, ctx).causes.length === 0) {
    result.causes.push(composite(ctx, `${quoted} must not validate the schema (not)`))
  }
  result.matches++
  return result
}

/**
 * Compiles an OpenAPI `pattern` as kube-apiserver does, with Go's regexp (RE2 syntax: `(?i)` and
 * other flag groups anywhere, `\z`, `(?P<name>...)`, `\pL`; no lookaround, no backreferences): the
 * compiled expression, or Go's parse error text.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * const re = SchemaValidation.compilePattern("^v(?i)alid\\z")
 * typeof re !== "string" && re.test("vALID") // true
 * SchemaValidation.compilePattern("^(?=a)") // "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
 */
export const compilePattern = (pattern: string): RE2JS | string => {
  try {
    return RE2JS.compile(pattern)
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
}

// Each schema's pattern is compiled once, on the first value it checks.
const compiledPatterns = new WeakMap<JsonSchemaProps, RE2JS | string>()

const schemaPattern = (schema: JsonSchemaProps, pattern: string): RE2JS | string => {
  const cached = compiledPatterns.get(schema)
  if (cached !== undefined) return cached
  const compiled = compilePattern(pattern)
  compiledPatterns.set(schema, compiled)
  return compiled
}

const runeLength = (s: string): number => [...s].length

const checkString = (value: string, schema: JsonSchemaProps, path: string, ctx: Context): Result | undefined => {
  if (schema.maxLength !== undefined && runeLength(value) > schema.maxLength) {
    return fail(tooLong(errorField(ctx, path), schema.maxLength))
  }
  if (schema.minLength !== undefined && runeLength(value) < schema.minLength) {
    return invalidAt(ctx, path, value, `${path} in body should be at least ${schema.minLength} chars long`)
  }
  if (schema.pattern !== undefined && schema.pattern !== "") {
    const re = schemaPattern(schema, schema.pattern)
    if (typeof re === "string") {
      return invalidAt(ctx, path, value, `${path} in body should match '${schema.pattern}, but pattern is invalid: ${re}'`)
    }
    if (!re.test(value)) return invalidAt(ctx, path, value, `${path} in body should match '${schema.pattern}'`)
  }
  return undefined
}

/** swag.IsFloat64AJSONInteger: integral within float64's exact range, or within a relative 1e-9 of one. */
const isJsonInteger = (f: number): boolean => {
  if (!Number.isFinite(f) || Math.abs(f) > 2 ** 53) return false
  if (Number.isInteger(f)) return true
  const g = Math.trunc(f)
  return Math.abs(f - g) / (Math.abs(f) + Math.abs(g)) < 1e-9
}

const checkNumber = (value: number, schema: JsonSchemaProps, path: string, ctx: Context): Result => {
  const result = emptyResult()
  const integer = isGoInteger(value)
  if (schema.multipleOf !== undefined) {
    const factor = schema.multipleOf
    const intFactor = Math.trunc(factor)
    if (integer && intFactor !== 0) {
      if (intFactor < 0) {
        merge(result, invalidAt(ctx, path, intFactor, `factor MultipleOf declared for ${path} must be positive: ${intFactor}`))
      } else if (value % intFactor !== 0) {
        merge(result, invalidAt(ctx, path, value, `${path} in body should be a multiple of ${intFactor}`))
      }
    } else if (factor < 0) {
      merge(result, invalidAt(ctx, path, factor, `factor MultipleOf declared for ${path} must be positive: ${goFloat(factor)}`))
    } else if (!isJsonInteger(factor < 1 ? (1 / factor) * value : value / factor)) {
      merge(result, invalidAt(ctx, path, value, `${path} in body should be a multiple of ${goFloat(factor)}`))
    }
  }
  if (schema.minimum !== undefined) {
    const bound = integer ? Math.trunc(schema.minimum) : schema.minimum
    const exclusive = schema.exclusiveMinimum === true
    if (exclusive ? value <= bound : value < bound) {
      const text = integer ? String(bound) : goFloat(bound)
      const relation = exclusive ? "greater than" : "greater than or equal to"
      merge(result, invalidAt(ctx, path, value, `${path} in body should be ${relation} ${text}`))
    }
  }
  if (schema.maximum !== undefined) {
    const bound = integer ? Math.trunc(schema.maximum) : schema.maximum
    const exclusive = schema.exclusiveMaximum === true
    if (exclusive ? value >= bound : value > bound) {
      const text = integer ? String(bound) : goFloat(bound)
      const relation = exclusive ? "less than" : "less than or equal to"
      merge(result, invalidAt(ctx, path, value, `${path} in body should be ${relation} ${text}`))
    }
  }
  result.matches++
  return result
}

/**
 * Deep equality of decoded JSON values.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.jsonEquals({ a: [1] }, { a: [1] }) // true
 */
export const jsonEquals = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEquals(x, b[i]))
  if (KubeObject.isObject(a) && KubeObject.isObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEquals(a[k], b[k]))
  }
  return false
}

const checkArray = (
  value: ReadonlyArray<unknown>,
  schema: JsonSchemaProps,
  path: string,
  ctx: Context
): Result => {
  const result = emptyResult()
  if (schema.items !== undefined) {
    const items = schema.items
    value.forEach((item, i) => merge(result, validateNode(item, items, index(path, i), ctx)))
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    merge(result, invalidAt(ctx, path, value.length, `${path} in body should have at least ${schema.minItems} items`))
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    merge(result, fail(tooMany(errorField(ctx, path), value.length, schema.maxItems)))
  }
  if (schema.uniqueItems === true && value.some((x, i) => value.slice(0, i).some((y) => jsonEquals(x, y)))) {
    merge(result, invalidAt(ctx, path, "", `${path} in body shouldn't contain duplicates`))
  }
  result.matches++
  return result
}

const checkEnum = (value: unknown, schema: JsonSchemaProps, path: string, ctx: Context): Result | undefined => {
  const values = schema.enum
  if (values === undefined || values.length === 0) return undefined
  // kube-openapi never matches a null value, even against a null enum entry
  if (value !== null && value !== undefined && values.some((e) => jsonEquals(e, value))) return undefined
  const supported = values.map((e) => (typeof e === "string" ? e : goJson(e)))
  return fail(notSupported(errorField(ctx, path), value, supported))
}

const checkObject = (value: KubeObject.KubeObject, schema: JsonSchemaProps, path: string, ctx: Context): Result => {
  const keys = Object.keys(value)
  if (schema.minProperties !== undefined && keys.length < schema.minProperties) {
    return invalidAt(ctx, path, keys.length, `${path} in body should have at least ${schema.minProperties} properties`)
  }
  if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) {
    return fail(tooMany(errorField(ctx, path), keys.length, schema.maxProperties))
  }
  const result = emptyResult()
  const properties = schema.properties ?? {}
  const additional = schema.additionalProperties
  for (const k of keys) {
    if (Object.hasOwn(properties, k)) continue
    if (additional === false) merge(result, invalidAt(ctx, path, k, `${path}.${k} in body is a forbidden property`))
    else if (typeof additional === "object") merge(result, validateNode(value[k], additional, `${path}.${k}`, ctx))
  }
  for (const [name, sub] of Object.entries(properties)) {
    if (Object.hasOwn(value, name)) merge(result, validateNode(value[name], sub, child(path, name), ctx))
  }
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name)) result.causes.push(required(errorField(ctx, `${path}.${name}`)))
  }
  return result
}

/** kube-openapi's SchemaValidator.Validate: type, compositions, string, format, number, array, enum, object. */
const validateNode = (value: unknown, schema: JsonSchemaProps, path: string, ctx: Context): Result => {
  const result = emptyResult()
  const format = knownFormat(schema.format) ? (schema.format ?? "") : ""
  const applies = typesOf(schema).length > 0 || format !== ""
  const apply = (r: Result | undefined): void => {
    if (r !== undefined) merge(result, r)
    result.matches++
  }
  if (value === null || value === undefined) {
    if (applies) merge(result, checkType(value, schema, format, path, ctx))
    const e = checkEnum(value, schema, path, ctx)
    if (e !== undefined) merge(result, e)
    return result
  }
  if (applies) apply(checkType(value, schema, format, path, ctx))
  apply(checkCompositions(value, schema, path, ctx))
  if (typeof value === "string") {
    apply(checkString(value, schema, path, ctx))
    if (format !== "") apply(checkFormat(value, format, path, ctx))
  }
  if (typeof value === "number") apply(checkNumber(value, schema, path, ctx))
  if (Array.isArray(value)) apply(checkArray(value, schema, path, ctx))
  apply(checkEnum(value, schema, path, ctx))
  if (KubeObject.isObject(value)) apply(checkObject(value, schema, path, ctx))
  result.matches++
  return result
}

/**
 * Validates a value against a CRD schema the way kube-apiserver validates custom resources
 * (`ValidateCustomResource`): one cause per failed check, with kube-openapi's messages.
 * `field` is the path the errors hang below (none for custom resources: errors on the root, and
 * anyOf/oneOf/allOf/not failures, then report the field `<nil>`).
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * const schema = { type: "object" as const, properties: { spec: { type: "object" as const, properties: {
 *   replicas: { type: "integer" as const, maximum: 10 } } } } }
 * SchemaValidation.validate({ spec: { replicas: 15 } }, schema).map(SchemaValidation.causeText)
 * // ["spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10"]
 */
export const validate = (
  value: unknown,
  schema: JsonSchemaProps,
  options: { readonly field?: string } = {}
): ReadonlyArray<Cause> => validateNode(value, schema, "", { prefix: options.field }).causes

// ---------------------------------------------------------------------------------------------
// Formats kube-apiserver validates (others, int32/int64/float/double included, are ignored)

const hostnamePattern =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$/u

const isHostname = (s: string): boolean =>
  hostnamePattern.test(s) && s.length <= 255 && s.split(".").every((p) => p.length <= 63)

const digitsOf = (s: string): ReadonlyArray<number> => [...s].map((c) => (c === "X" ? 10 : Number(c)))

const isIsbn10 = (s: string): boolean => {
  const clean = s.replace(/[\s-]/g, "")
  if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(clean)) return false
  return digitsOf(clean).reduce((sum, d, i) => sum + (i + 1) * d, 0) % 11 === 0
}

const isIsbn13 = (s: string): boolean => {
  const clean = s.replace(/[\s-]/g, "")
  if (!/^[0-9]{13}$/.test(clean)) return false
  const d = digitsOf(clean)
  const sum = d.slice(0, 12).reduce((acc, x, i) => acc + (i % 2 === 0 ? x : 3 * x), 0)
  return d[12] === (10 - (sum % 10)) % 10
}

const cardPattern =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/

const isCreditCard = (s: string): boolean => {
  const clean = s.replace(/[^0-9]+/g, "")
  if (!cardPattern.test(clean)) return false
  const sum = [...clean].reverse().reduce((acc, c, i) => {
    const d = Number(c) * (i % 2 === 1 ? 2 : 1)
    return acc + (d > 9 ? d - 9 : d)
  }, 0)
  return sum % 10 === 0
}

const octet = "(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])"
const rgbPattern = new RegExp(`^rgb\\(\\s*${octet}\\s*,\\s*${octet}\\s*,\\s*${octet}\\s*\\)$`)

const isCidr = (s: string): boolean => {
  const [ip = "", bits, ...rest] = s.split("/")
  const family = isIP(ip)
  if (family === 0 || bits === undefined || rest.length > 0 || !/^\d+$/.test(bits)) return false
  return Number(bits) <= (family === 4 ? 32 : 128)
}

const macPattern =
  /^(?:[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2}){5}|[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2}){7}|[0-9a-fA-F]{2}(?:([:-])[0-9a-fA-F]{2}){19}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){2}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){3}|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){9})$/

const isMac = (s: string): boolean => {
  if (!macPattern.test(s)) return false
  const separators = new Set(s.replace(/[0-9a-fA-F]/g, ""))
  return separators.size <= 1
}

const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

const isDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month)
}

const isDateTime = (s: string): boolean => {
  if (s === "") return true
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))?$/.exec(s)
  if (m === null || !isDate(m[1] ?? "")) return false
  const hour = Number(m[2])
  const minute = Number(m[3])
  const second = Number(m[4])
  const zoneOk = m[7] === undefined || (Number(m[7]) < 24 && Number(m[8]) < 60)
  return hour < 24 && minute < 60 && second < 60 && zoneOk
}

const goDuration = /^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/
const durationUnits: ReadonlyArray<ReadonlyArray<string>> = [
  ["ns", "nano"],
  ["us", "µs", "micro"],
  ["ms", "milli"],
  ["s", "sec"],
  ["m", "min"],
  ["h", "hr", "hour"],
  ["d", "day"],
  ["w", "wk", "week"]
]

const isDuration = (s: string): boolean => {
  if (s === "0" || goDuration.test(s)) return true
  return [...s.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)].some(([, , rawUnit = ""]) => {
    const unit = rawUnit.toLowerCase()
    return durationUnits.some((variants) =>
      variants.some((v, i) => v === unit || (i === variants.length - 1 && unit.startsWith(v)))
    )
  })
}

const formatChecks: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: (s) => !/[\x00-\x1f\x7f]/.test(s) && (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) || s.startsWith("/")),
  email: (s) => /^(?:[^<>@\s]+@[^<>@\s]+|[^<>]*<[^<>@\s]+@[^<>@\s]+>)$/.test(s),
  hostname: isHostname,
  ipv4: (s) => isIP(s) !== 0 && s.includes("."),
  ipv6: (s) => isIP(s) === 6,
  cidr: isCidr,
  mac: isMac,
  uuid: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid3: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  uuid4: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  uuid5: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s),
  isbn: (s) => isIsbn10(s) || isIsbn13(s),
  isbn10: isIsbn10,
  isbn13: isIsbn13,
  creditcard: isCreditCard,
  ssn: (s) => s.length === 11 && /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) => rgbPattern.test(s),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime
}

/**
 * True when kube-apiserver validates this `format` (go-openapi's name normalisation drops `-`).
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.knownFormat("date-time") // true
 * SchemaValidation.knownFormat("int32") // false
 */
export const knownFormat = (format: string | undefined): boolean =>
  format !== undefined && format !== "" && Object.hasOwn(formatChecks, format.replaceAll("-", ""))

const checkFormat = (value: string, format: string, path: string, ctx: Context): Result | undefined => {
  const check = formatChecks[format.replaceAll("-", "")]
  if (check === undefined || check(value)) return undefined
  return fail(typeInvalid(errorField(ctx, path), value, `${path} in body must be of type ${format}: ${goQuote(value)}`))
}

// ---------------------------------------------------------------------------------------------
// Names (k8s.io/apimachinery/pkg/util/validation)

const regexError = (message: string, format: string, ...examples: ReadonlyArray<string>): string => {
  if (examples.length === 0) return `${message} (regex used for validation is '${format}')`
  const listed = examples.map((e, i) => `${i > 0 ? " or " : ""}'${e}', `).join("")
  return `${message} (e.g. ${listed}regex used for validation is '${format}')`
}

const maxLenError = (n: number): string => `must be no more than ${n} characters`

const dns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`
const dns1035LabelFmt = "[a-z]([-a-z0-9]*[a-z0-9])?"
const qualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
const labelValueFmt = `(${qualifiedNameFmt})?`
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

const qualifiedNamePattern = new RegExp(`^${qualifiedNameFmt}$`)

/** A name rule: a maximum length and a regular expression, reported with Kubernetes' messages. */
const nameRule =
  (maxLength: number, format: string, message: string, ...examples: ReadonlyArray<string>) => {
    const re = new RegExp(`^${format}$`)
    return (value: string): ReadonlyArray<string> => [
      ...(value.length > maxLength ? [maxLenError(maxLength)] : []),
      ...(re.test(value) ? [] : [regexError(message, format, ...examples)])
    ]
  }

/**
 * Messages of `IsDNS1123Subdomain` (empty when valid).
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.isDns1123Subdomain("example.com") // []
 */
export const isDns1123Subdomain = nameRule(
  253,
  dns1123SubdomainFmt,
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  "example.com"
)

/**
 * Messages of `IsDNS1123Label` (empty when valid).
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.isDns1123Label("default") // []
 */
export const isDns1123Label = nameRule(
  63,
  dns1123LabelFmt,
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
  "my-name",
  "123-abc"
)

/**
 * Messages of `IsDNS1035Label` (empty when valid).
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.isDns1035Label("crontabs") // []
 */
export const isDns1035Label = nameRule(
  63,
  dns1035LabelFmt,
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
  "my-name",
  "abc-123"
)

/**
 * Messages of `IsQualifiedName` (label keys, annotation keys, finalizers).
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.isQualifiedName("example.com/name") // []
 */
export const isQualifiedName = (value: string): ReadonlyArray<string> => {
  const parts = value.split("/")
  const errs: Array<string> = []
  if (parts.length > 2) {
    return [
      `a qualified name ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`
    ]
  }
  const name = parts.length === 2 ? (parts[1] ?? "") : value
  if (parts.length === 2) {
    const prefix = parts[0] ?? ""
    if (prefix === "") errs.push("prefix part must be non-empty")
    else errs.push(...isDns1123Subdomain(prefix).map((m) => `prefix part ${m}`))
  }
  if (name === "") errs.push("name part must be non-empty")
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`)
  if (!qualifiedNamePattern.test(name)) {
    errs.push(`name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")}`)
  }
  return errs
}

const isLabelValue = nameRule(
  63,
  labelValueFmt,
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  "MyValue",
  "my_value",
  "12345"
)

/** Validates `metadata.name` (or `generateName` when `prefix`), returning messages. */
export type NameValidator = (name: string, prefix: boolean) => ReadonlyArray<string>

/**
 * `NameIsDNSSubdomain`: names of custom resources and most kinds.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.nameIsDnsSubdomain("web-", true) // []
 */
export const nameIsDnsSubdomain: NameValidator = (name, prefix) =>
  isDns1123Subdomain(prefix && name.endsWith("-") ? `${name.slice(0, -1)}a` : name)

/**
 * `ValidatePathSegmentName`: names of embedded resources.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.nameIsPathSegment("..", false) // ["may not be '..'"]
 */
export const nameIsPathSegment: NameValidator = (name, prefix) => {
  if (!prefix && (name === "." || name === "..")) return [`may not be '${name}'`]
  return ["/", "%"].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`)
}

const stringRecord = (u: unknown): ReadonlyArray<readonly [string, string]> =>
  KubeObject.isObject(u) ? Object.entries(u).map(([k, v]) => [k, typeof v === "string" ? v : String(v)]) : []

const utf8Length = (s: string): number => Buffer.byteLength(s, "utf8")

/**
 * A `[]string` as `%#v` prints it.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.invalid("f", SchemaValidation.goStrings(["a", "b"]), "x").message // 'Invalid value: []string{"a", "b"}: x'
 */
export const goStrings = (values: ReadonlyArray<string>): GoLiteral =>
  goLiteral(`[]string{${values.map(goQuote).join(", ")}}`)

/**
 * A Go struct value as `%#v` prints it, approximately: the scalar fields given, in order, and
 * `{...}` for nested values (Go would print pointers as addresses, which nobody can match).
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.invalid("spec.versions", SchemaValidation.goStruct("v1.Version", [["Name", "v1"], ["Served", true]]), "x").message
 * // 'Invalid value: v1.Version{Name:"v1", Served:true}: x'
 */
export const goStruct = (typeName: string, fields: ReadonlyArray<readonly [string, unknown]>): GoLiteral => {
  const shown = fields
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}:${typeof v === "object" && v !== null ? "{...}" : goSharp(v)}`)
  return goLiteral(`${typeName}{${shown.join(", ")}}`)
}

const ownerReferenceCauses = (refs: unknown, path: string): ReadonlyArray<Cause> => {
  if (!Array.isArray(refs)) return []
  const causes: Array<Cause> = []
  const controllers: Array<string> = []
  for (const ref of refs) {
    const r = KubeObject.isObject(ref) ? ref : {}
    const text = (k: string) => (typeof r[k] === "string" ? r[k] : "")
    const apiVersion = text("apiVersion")
    if (apiVersion.split("/").at(-1) === "") causes.push(invalid(child(path, "apiVersion"), apiVersion, "version must not be empty"))
    if (text("kind") === "") causes.push(invalid(child(path, "kind"), "", "kind must not be empty"))
    if (text("name") === "") causes.push(invalid(child(path, "name"), "", "name must not be empty"))
    if (text("uid") === "") causes.push(invalid(child(path, "uid"), "", "uid must not be empty"))
    if (r.controller === true) controllers.push(`${text("kind")}/${text("name")}`)
  }
  if (controllers.length > 1) {
    causes.push(
      invalid(
        path,
        goLiteral("[]v1.OwnerReference{...}"),
        `Only one reference can have Controller set to true. Found "true" in references for ${controllers.join(" and ")}`
      )
    )
  }
  return causes
}

/**
 * `ValidateObjectMetaAccessor`: name (or generateName), namespace by scope, generation, labels,
 * annotations (keys and the 256 KiB total), ownerReferences and finalizers.
 *
 * @example
 * import * as SchemaValidation from "./SchemaValidation.ts"
 * SchemaValidation.validateObjectMeta({ name: "Bad_Name", namespace: "default" }, { namespaced: true })[0]?.field
 * // "metadata.name"
 */
export const validateObjectMeta = (
  metadata: unknown,
  options: { readonly namespaced: boolean; readonly name?: NameValidator; readonly field?: string }
): ReadonlyArray<Cause> => {
  const m = KubeObject.isObject(metadata) ? metadata : {}
  const path = options.field ?? "metadata"
  const nameFn = options.name ?? nameIsDnsSubdomain
  const text = (k: string) => (typeof m[k] === "string" ? m[k] : "")
  const causes: Array<Cause> = []
  const generateName = text("generateName")
  if (generateName !== "") {
    for (const msg of nameFn(generateName, true)) causes.push(invalid(child(path, "generateName"), generateName, msg))
  }
  const name = text("name")
  if (name === "") causes.push(required(child(path, "name"), "name or generateName is required"))
  else for (const msg of nameFn(name, false)) causes.push(invalid(child(path, "name"), name, msg))
  const namespace = text("namespace")
  if (options.namespaced) {
    if (namespace === "") causes.push(required(child(path, "namespace")))
    else for (const msg of isDns1123Label(namespace)) causes.push(invalid(child(path, "namespace"), namespace, msg))
  } else if (namespace !== "") {
    causes.push(forbidden(child(path, "namespace"), "not allowed on this type"))
  }
  if (typeof m.generation === "number" && m.generation < 0) {
    causes.push(invalid(child(path, "generation"), m.generation, "must be greater than or equal to 0"))
  }
  const labels = child(path, "labels")
  for (const [k, v] of stringRecord(m.labels)) {
    for (const msg of isQualifiedName(k)) causes.push(invalid(labels, k, msg))
    for (const msg of isLabelValue(v)) causes.push(invalid(labels, v, msg))
  }
  const annotations = child(path, "annotations")
  const annotationEntries = stringRecord(m.annotations)
  for (const [k] of annotationEntries) {
    for (const msg of isQualifiedName(k.toLowerCase())) causes.push(invalid(annotations, k, msg))
  }
  if (annotationEntries.reduce((n, [k, v]) => n + utf8Length(k) + utf8Length(v), 0) > 256 * 1024) {
    causes.push(tooLong(annotations, 256 * 1024))
  }
  causes.push(...ownerReferenceCauses(m.ownerReferences, child(path, "ownerReferences")))
  const finalizers = Array.isArray(m.finalizers) ? m.finalizers.filter((f): f is string => typeof f === "string") : []
  for (const f of finalizers) {
    for (const msg of isQualifiedName(f)) causes.push(invalid(child(path, "finalizers"), f, msg))
  }
  if (finalizers.includes("orphan") && finalizers.includes("foregroundDeletion")) {
    causes.push(
      invalid(child(path, "finalizers"), goStrings(finalizers), "finalizer orphan and foregroundDeletion cannot be both set")
    )
  }
  return causes
}

// ---------------------------------------------------------------------------------------------
// Embedded resources and list types

const embeddedCauses = (path: string, object: KubeObject.KubeObject): ReadonlyArray<Cause> => {
  const causes: Array<Cause> = []
  if (!Object.hasOwn(object, "apiVersion")) causes.push(required(child(path, "apiVersion")))
  if (!Object.hasOwn(object, "kind")) causes.push(required(child(path, "kind")))
  for (const [k, v] of Object.entries(object)) {
    if (k === "apiVersion") {
      if (typeof v !== "string") causes.push(invalid(child(path, k), v, "must be a string"))
      else if (v === "") causes.push(required(child(path, k)))
      else if (v.split("/").length > 2) {
        causes.push(invalid(child(path, k), v, `unexpected GroupVersion string: ${v}`))
      }
    } else if (k === "kind") {
      if (typeof v !== "string") causes.push(invalid(child(path, k), v, "must be a string"))
      else if (v === "") causes.push(required(child(path, k)))
      else {
        const errs = isDns1035Label(v.toLowerCase())
        if (errs.length > 0) {
          causes.push(invalid(child(path, k), v, `may have mixed case, but should otherwise match: ${errs.join(",")}`))
        }
      }
    } else if (k === "metadata" && KubeObject.isObject(v)) {
      const withName = typeof v.name === "string" && v.name !== "" ? v : { ...v, name: "fakename" }
      const namespaced = typeof v.namespace === "string" && v.namespace !== ""
      causes.push(
        ...validateObjectMeta(withName, { namespaced, name: nameIsPathSegment, field: child(path, "metadata") })
      )
    }
  }
  return causes
}

/** `objectmeta.Validate`: apiVersion, kind and metadata of every `x-kubernetes-embedded-resource` object. */
const embeddedResources = (path: string, value: unknown, schema: JsonSchemaProps | undefined): ReadonlyArray<Cause> => {
  if (schema === undefined) return []
  if (Array.isArray(value)) return value.flatMap((v, i) => embeddedResources(index(path, i), v, schema.items))
  if (!KubeObject.isObject(value)) return []
  const own = schema["x-kubernetes-embedded-resource"] === true ? embeddedCauses(path, value) : []
  const nested = Object.entries(value).flatMap(([k, v]) => {
    const property = schema.properties?.[k]
    if (property !== undefined) return embeddedResources(child(path, k), v, property)
    const additional = schema.additionalProperties
    return typeof additional === "object" ? embeddedResources(key(path, k), v, additional) : []
  })
  return [...own, ...nested]
}

/** Items of a list-type set/map that repeat an earlier one: the index of each value's second appearance. */
const repeated = (keys: ReadonlyArray<unknown>): ReadonlyArray<number> => {
  const seen = new Map<string, number>()
  const out: Array<number> = []
  keys.forEach((k, i) => {
    const id = k === undefined ? "\u0000unspecified" : goJson(k)
    const times = seen.get(id) ?? 0
    if (times === 1) out.push(i)
    seen.set(id, times + 1)
  })
  return out
}

const listMapCauses = (path: string, schema: JsonSchemaProps, items: ReadonlyArray<unknown>): ReadonlyArray<Cause> => {
  const bad = items.findIndex((x) => x !== null && !KubeObject.isObject(x))
  if (bad >= 0) return [invalid(index(path, bad), items[bad], "must be an object for an array of list-type map")]
  if (items.length <= 1) return []
  const mapKeys = schema["x-kubernetes-list-map-keys"] ?? []
  const keysOf = (x: unknown): KubeObject.KubeObject => {
    const o = KubeObject.isObject(x) ? x : {}
    return Object.fromEntries(mapKeys.filter((k) => Object.hasOwn(o, k)).map((k) => [k, o[k]]))
  }
  if (mapKeys.length === 1) {
    const field = mapKeys[0] ?? ""
    const keys = items.map((x) => (KubeObject.isObject(x) && Object.hasOwn(x, field) ? x[field] : undefined))
    return repeated(keys).map((i) => duplicate(index(path, i), keys[i] === undefined ? {} : { [field]: keys[i] }))
  }
  const keys = items.map(keysOf)
  return repeated(keys).map((i) => duplicate(index(path, i), keys[i]))
}

/** `listtype.ValidateListSetsAndMaps`: uniqueness of set items and of map keys. */
const listTypes = (path: string, value: unknown, schema: JsonSchemaProps | undefined): ReadonlyArray<Cause> => {
  if (schema === undefined) return []
  if (Array.isArray(value)) {
    const listType = schema["x-kubernetes-list-type"]
    const own =
      listType === "set"
        ? repeated(value).map((i) => duplicate(index(path, i), value[i]))
        : listType === "map"
        ? listMapCauses(path, schema, value)
        : []
    return [...own, ...value.flatMap((v, i) => listTypes(index(path, i), v, schema.items))]
  }
  if (!KubeObject.isObject(value)) return []
  return Object.entries(value).flatMap(([k, v]) => {
    const additional = schema.additionalProperties
    const byKey = typeof additional === "object" ? listTypes(key(path, k), v, additional) : []
    const property = schema.properties?.[k]
    return [...byKey, ...(property === undefined ? [] : listTypes(child(path, k), v, property))]
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

const scaleCauses = (object: KubeObject.KubeObject, jsonPath: string): ReadonlyArray<Cause> => {
  let value: unknown = object
  for (const segment of jsonPath.replace(/^\./, "").split(".")) {
    if (!KubeObject.isObject(value)) return []
    value = value[segment]
  }
  if (value === undefined) return []
  if (typeof value !== "number" || !isGoInteger(value)) {
    const goType = typeof value === "string" ? "string" : typeof value === "number" ? "float64" : typeof value
    const printed = typeof value === "string" ? value : typeof value === "number" ? goFloat(value) : goSharp(value)
    return [invalid(jsonPath, 0, `${jsonPath} accessor error: ${printed} is of the type ${goType}, expected int64`)]
  }
  if (value < 0) return [invalid(jsonPath, value, "should be a non-negative integer")]
  if (value > 2147483647) return [invalid(jsonPath, value, "should be less than or equal to 2147483647")]
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
export const validateCustomResource = (object: unknown, rules: CustomResourceRules): ReadonlyArray<Cause> => {
  const o = KubeObject.isObject(object) ? object : {}
  const apiVersion = `${rules.group}/${rules.version}`
  const typeMeta = [
    ...(o.kind === rules.kind ? [] : [invalid("kind", o.kind ?? "", `must be ${rules.kind}`)]),
    ...(o.apiVersion === apiVersion ? [] : [invalid("apiVersion", o.apiVersion ?? "", `must be ${apiVersion}`)])
  ]
  if (typeMeta.length > 0) return typeMeta
  return [
    ...validateObjectMeta(o.metadata, { namespaced: rules.namespaced }),
    ...(rules.schema === undefined ? [] : validate(o, rules.schema)),
    ...(rules.scale === undefined ? [] : [
      ...scaleCauses(o, rules.scale.specReplicasPath),
      ...scaleCauses(o, rules.scale.statusReplicasPath)
    ]),
    ...embeddedResources("", o, rules.schema),
    ...listTypes("", o, rules.schema)
  ]
}
