/**
 * kube-openapi's schema validator as the apiextensions-apiserver runs it on custom resources:
 * types, compositions (allOf/anyOf/oneOf/not), strings (RE2 patterns, lengths, formats), numbers,
 * arrays, enums and objects, each failure a cause with kube-apiserver 1.32's message.
 */
import { RE2JS } from "re2js"
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"
import * as KubeObject from "./KubeObject.ts"
import * as FieldCauses from "./FieldCauses.ts"
import * as SchemaFormats from "./SchemaFormats.ts"

interface Result {
  readonly causes: Array<FieldCauses.Cause>
  /** kube-openapi's MatchCount: how many checks ran; anyOf/oneOf report the alternative that got furthest. */
  matches: number
}

const emptyResult = (): Result => ({ causes: [], matches: 0 })

const merge = (into: Result, from: Result): void => {
  into.causes.push(...from.causes)
  into.matches += from.matches
}

/**
 * Where errors are reported: `prefix` is the fldPath given to ValidateCustomResource (nil:
 * undefined); `composites` keeps the path of the node each composition error is about.
 */
interface Context {
  readonly prefix: string | undefined
  readonly composites: Map<FieldCauses.Cause, string>
}

/** The path of an error named `name` (kube-openapi's `err.Name`), as the apiextensions conversion builds it. */
const errorField = (ctx: Context, name: string): string => {
  if (name === "" || name === ".") return ctx.prefix ?? "<nil>"
  const trimmed = name.startsWith(".") ? name.slice(1) : name
  return ctx.prefix === undefined ? trimmed : `${ctx.prefix}.${trimmed}`
}

const fail = (cause: FieldCauses.Cause): Result => ({ causes: [cause], matches: 0 })

const invalidAt = (ctx: Context, name: string, value: unknown, message: string): Result =>
  fail(FieldCauses.invalid(errorField(ctx, name), value, message))

const typeFailure = (ctx: Context, name: string, typeName: string, value: string): Result =>
  fail(FieldCauses.typeInvalid(errorField(ctx, name), value, `${name} in body must be of type ${typeName}: ${FieldCauses.goQuote(value)}`))

/** Errors that kube-openapi does not attach to a field (anyOf, oneOf, allOf, not). */
const composite = (ctx: Context, path: string, message: string): FieldCauses.Cause => {
  const cause = FieldCauses.invalid(ctx.prefix ?? "<nil>", "", message)
  ctx.composites.set(cause, path)
  return cause
}

type Kind = "string" | "integer" | "number" | "boolean" | "array" | "object"

const kindOf = (value: unknown): Kind => {
  if (typeof value === "string") return "string"
  if (typeof value === "boolean") return "boolean"
  if (typeof value === "number") return FieldCauses.isGoInteger(value) ? "integer" : "number"
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

const hasCompositions = (schema: JsonSchemaProps): boolean =>
  (schema.anyOf !== undefined && schema.anyOf.length > 0) || (schema.oneOf !== undefined && schema.oneOf.length > 0) ||
  (schema.allOf !== undefined && schema.allOf.length > 0) || schema.not !== undefined

const checkCompositions = (value: unknown, schema: JsonSchemaProps, path: string, ctx: Context): Result => {
  // Most nodes have no composition: one check ran, nothing to quote.
  if (!hasCompositions(schema)) return { causes: [], matches: 1 }
  const result = emptyResult()
  const quoted = FieldCauses.goQuote(path)
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
    if (firstSuccess === undefined) result.causes.push(composite(ctx, path, `${quoted} must validate at least one schema (anyOf)`))
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
      result.causes.push(composite(ctx, path, `${quoted} must validate one and only one schema (oneOf). ${found}`))
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
      result.causes.push(composite(ctx, path, `${quoted} must validate all the schemas (allOf)${none}`))
    }
  }
  if (schema.not !== undefined && validateNode(value, schema.not, path, ctx).causes.length === 0) {
    result.causes.push(composite(ctx, path, `${quoted} must not validate the schema (not)`))
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
 * import * as OpenApiValidation from "./OpenApiValidation.ts"
 * const re = OpenApiValidation.compilePattern("^v(?i)alid\\z")
 * typeof re !== "string" && re.test("vALID") // true
 * OpenApiValidation.compilePattern("^(?=a)") // "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
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
    return fail(FieldCauses.tooLong(errorField(ctx, path), schema.maxLength))
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
  const integer = FieldCauses.isGoInteger(value)
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
      merge(result, invalidAt(ctx, path, factor, `factor MultipleOf declared for ${path} must be positive: ${FieldCauses.goFloat(factor)}`))
    } else if (!isJsonInteger(factor < 1 ? (1 / factor) * value : value / factor)) {
      merge(result, invalidAt(ctx, path, value, `${path} in body should be a multiple of ${FieldCauses.goFloat(factor)}`))
    }
  }
  if (schema.minimum !== undefined) {
    const bound = integer ? Math.trunc(schema.minimum) : schema.minimum
    const exclusive = schema.exclusiveMinimum === true
    if (exclusive ? value <= bound : value < bound) {
      const text = integer ? String(bound) : FieldCauses.goFloat(bound)
      const relation = exclusive ? "greater than" : "greater than or equal to"
      merge(result, invalidAt(ctx, path, value, `${path} in body should be ${relation} ${text}`))
    }
  }
  if (schema.maximum !== undefined) {
    const bound = integer ? Math.trunc(schema.maximum) : schema.maximum
    const exclusive = schema.exclusiveMaximum === true
    if (exclusive ? value >= bound : value > bound) {
      const text = integer ? String(bound) : FieldCauses.goFloat(bound)
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
 * import * as OpenApiValidation from "./OpenApiValidation.ts"
 * OpenApiValidation.jsonEquals({ a: [1] }, { a: [1] }) // true
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
    value.forEach((item, i) => merge(result, validateNode(item, items, FieldCauses.index(path, i), ctx)))
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    merge(result, invalidAt(ctx, path, value.length, `${path} in body should have at least ${schema.minItems} items`))
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    merge(result, fail(FieldCauses.tooMany(errorField(ctx, path), value.length, schema.maxItems)))
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
  const supported = values.map((e) => (typeof e === "string" ? e : FieldCauses.goJson(e)))
  return fail(FieldCauses.notSupported(errorField(ctx, path), value, supported))
}

const checkObject = (value: KubeObject.KubeObject, schema: JsonSchemaProps, path: string, ctx: Context): Result => {
  const keys = Object.keys(value)
  if (schema.minProperties !== undefined && keys.length < schema.minProperties) {
    return invalidAt(ctx, path, keys.length, `${path} in body should have at least ${schema.minProperties} properties`)
  }
  if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) {
    return fail(FieldCauses.tooMany(errorField(ctx, path), keys.length, schema.maxProperties))
  }
  const result = emptyResult()
  const properties = schema.properties ?? {}
  const additional = schema.additionalProperties
  for (const k of keys) {
    if (Object.hasOwn(properties, k)) continue
    if (additional === false) merge(result, invalidAt(ctx, path, k, `${path}.${k} in body is a forbidden property`))
    else if (typeof additional === "object") merge(result, validateNode(value[k], additional, `${path}.${k}`, ctx))
  }
  // A schema's properties are a plain JSON object: `for in` walks them without an entries array per node.
  for (const name in properties) {
    if (Object.hasOwn(value, name)) merge(result, validateNode(value[name], properties[name]!, FieldCauses.child(path, name), ctx))
  }
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name)) result.causes.push(FieldCauses.required(errorField(ctx, `${path}.${name}`)))
  }
  return result
}

/** kube-openapi's SchemaValidator.Validate: type, compositions, string, format, number, array, enum, object. */
const validateNode = (value: unknown, schema: JsonSchemaProps, path: string, ctx: Context): Result => {
  const result = emptyResult()
  const format = SchemaFormats.knownFormat(schema.format) ? (schema.format ?? "") : ""
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
 * import * as OpenApiValidation from "./OpenApiValidation.ts"
 * const schema = { type: "object" as const, properties: { spec: { type: "object" as const, properties: {
 *   replicas: { type: "integer" as const, maximum: 10 } } } } }
 * OpenApiValidation.validate({ spec: { replicas: 15 } }, schema).map(OpenApiValidation.causeText)
 * // ["spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10"]
 */
export const validate = (
  value: unknown,
  schema: JsonSchemaProps,
  options: { readonly field?: string } = {}
): ReadonlyArray<FieldCauses.Cause> => validateNode(value, schema, "", { prefix: options.field, composites: new Map() }).causes

/**
 * {@link validate}'s causes, each with the path of the value it is about (`at`): its field, or for
 * an anyOf, oneOf, allOf or not failure (reported at `<nil>`) the value that failed it; what
 * ratcheting correlates with the old object.
 *
 * @example
 * import * as OpenApiValidation from "./OpenApiValidation.ts"
 * const schema = { type: "object" as const, properties: { qty: { anyOf: [{ type: "integer" as const }, { type: "string" as const }] } } }
 * OpenApiValidation.validateAt({ qty: 1.5 }, schema).map(({ at }) => at) // ["qty", "qty", "qty"]
 */
export const validateAt = (
  value: unknown,
  schema: JsonSchemaProps
): ReadonlyArray<{ readonly cause: FieldCauses.Cause; readonly at: string }> => {
  const composites = new Map<FieldCauses.Cause, string>()
  return validateNode(value, schema, "", { prefix: undefined, composites }).causes.map((cause) => ({ cause, at: composites.get(cause) ?? cause.field }))
}

const checkFormat = (value: string, format: string, path: string, ctx: Context): Result | undefined =>
  SchemaFormats.matches(format, value) === false
    ? fail(FieldCauses.typeInvalid(errorField(ctx, path), value, `${path} in body must be of type ${format}: ${FieldCauses.goQuote(value)}`))
    : undefined
