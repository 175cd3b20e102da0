/**
 * The Kubernetes *structural* schema (the OpenAPI v3 subset CustomResourceDefinitions accept) of a
 * Schema's JSON form. `x-kubernetes-*` annotations on a Schema are copied onto its node; see the
 * marker helpers in `Crd`.
 *
 * @since 0.1.0
 */
import { Schema, SchemaAST } from "effect"
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"

/** The OpenAPI v3 subset CRDs accept (apiextensions.k8s.io/v1 JSONSchemaProps), with Kubernetes extensions. */
/** The openAPIV3Schema a Schema generates: the package's `JsonSchemaProps`, one declaration for both sides. */
export type { JsonSchemaProps }

/** A CEL validation rule (`x-kubernetes-validations`). */
export interface Validation {
  readonly rule: string
  readonly message?: string
  readonly messageExpression?: string
  readonly reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate"
  readonly fieldPath?: string
  /** Runs the transition rule on creates too, `oldSelf` then an empty optional (`oldSelf.hasValue()`). */
  readonly optionalOldSelf?: boolean
}

type Props = { -readonly [K in keyof JsonSchemaProps]: JsonSchemaProps[K] }

const preserve: JsonSchemaProps = { "x-kubernetes-preserve-unknown-fields": true }

/**
 * The Kubernetes structural schema of a Schema's JSON form: a type on every node, no `$ref` or
 * `const`, literal unions as `enum`, records as `additionalProperties`, `Unknown` as preserved
 * unknown fields. Descriptions, titles, checks Kubernetes can express and `x-kubernetes-*`
 * annotations are kept. What OpenAPI cannot say (unions of unlike shapes, recursion) widens to
 * a looser schema; the Schema's decoder stays the final authority.
 *
 * @example
 * import { Schema } from "effect"
 * import { StructuralSchema } from "@kubefx/schema"
 * StructuralSchema.make(Schema.Struct({ replicas: Schema.Int, mode: Schema.optionalKey(Schema.Literals(["a", "b"])) }))
 * // { type: "object", properties: { replicas: { type: "integer", format: "int64" },
 * //   mode: { type: "string", enum: ["a", "b"] } }, required: ["replicas"] }
 */
export const make = (schema: Schema.Top): JsonSchemaProps => canonical(walk(schema.ast, []))

const walk = (ast: SchemaAST.AST, suspended: ReadonlyArray<SchemaAST.AST>): JsonSchemaProps =>
  finish(documented(ast, shape(ast, suspended)))

const shape = (ast: SchemaAST.AST, suspended: ReadonlyArray<SchemaAST.AST>): JsonSchemaProps => {
  // Objects are written in their encoded form: describe that side of a transformation.
  if (ast.encoding !== undefined) return walk(SchemaAST.toEncoded(ast), suspended)
  switch (ast._tag) {
    case "String":
      return checked({ type: "string" }, ast.checks)
    case "Number":
      return integerFormat(checked({ type: hasCheck(ast.checks, "isInt") ? "integer" : "number" }, ast.checks))
    case "Boolean":
      return { type: "boolean" }
    case "BigInt":
      return { type: "string", pattern: "^-?[0-9]+$" }
    case "TemplateLiteral":
      return { type: "string" }
    case "Literal":
      return literals([ast.literal])
    case "Enum":
      return literals(ast.enums.map(([, value]) => value))
    case "Objects":
      return objects(ast, suspended)
    case "Arrays":
      return arrays(ast, suspended)
    case "Union":
      return union(ast, suspended)
    case "Suspend":
      // OpenAPI in CRDs has no references: a recursive occurrence accepts anything.
      return suspended.includes(ast) ? preserve : walk(ast.thunk(), [...suspended, ast])
    case "Declaration":
      return declaration(ast, suspended)
    case "ObjectKeyword":
      return { type: "object", ...preserve }
    default:
      return preserve
  }
}

const literals = (values: ReadonlyArray<unknown>): JsonSchemaProps => {
  const json = values.map((v) => typeof v === "bigint" ? String(v) : v)
  const types = new Set(json.map(jsonType))
  if (types.size === 1) return { type: [...types][0]!, enum: json }
  if (types.size === 2 && types.has("integer") && types.has("number")) return { type: "number", enum: json }
  return { ...intOrStringOr(types), enum: json }
}

const jsonType = (value: unknown): NonNullable<JsonSchemaProps["type"]> =>
  typeof value === "string" ? "string"
  : typeof value === "boolean" ? "boolean"
  : typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number")
  : "object"

const intOrStringOr = (types: ReadonlySet<JsonSchemaProps["type"]>): JsonSchemaProps =>
  [...types].every((t) => t === "integer" || t === "string") ? intOrStringSchema : preserve

const intOrStringSchema: JsonSchemaProps = {
  "x-kubernetes-int-or-string": true,
  anyOf: [{ type: "integer" }, { type: "string" }]
}

const declaration = (ast: SchemaAST.Declaration, suspended: ReadonlyArray<SchemaAST.AST>): JsonSchemaProps => {
  const id = (ast.annotations?.representation as { readonly id?: unknown } | undefined)?.id
  if (id === "effect/schema/Json" || id === "effect/schema/MutableJson") return preserve
  // Dates, Options, DateTimes...: describe their canonical JSON form.
  const json = jsonCodec(ast)
  return json === undefined || json._tag === "Declaration" ? preserve : walk(json, suspended)
}

const jsonCodec = (ast: SchemaAST.Declaration): SchemaAST.AST | undefined => {
  try {
    return SchemaAST.toEncoded(Schema.toCodecJson(Schema.make<Schema.Top>(ast)).ast)
  } catch {
    return undefined
  }
}

const objects = (ast: SchemaAST.Objects, suspended: ReadonlyArray<SchemaAST.AST>): JsonSchemaProps => {
  const properties: Record<string, JsonSchemaProps> = {}
  const required: Array<string> = []
  for (const property of ast.propertySignatures) {
    if (typeof property.name !== "string") continue
    const keyAnnotations = property.type.context?.annotations
    properties[property.name] = finish(annotations(keyAnnotations, walk(property.type, suspended)))
    if (isRequired(property.type)) required.push(property.name)
  }
  const out: Props = { type: "object" }
  if (required.length > 0) out.required = required
  const named = Object.keys(properties).length > 0
  if (named) out.properties = properties
  const values = ast.indexSignatures.map((index) => walk(index.type, suspended))
  // Kubernetes forbids properties beside additionalProperties: named keys plus a rest keep the rest unchecked.
  if (values.length > 0) {
    const value = widen(values)
    if (named || isPreserve(value)) out["x-kubernetes-preserve-unknown-fields"] = true
    else out.additionalProperties = value
  }
  return checked(out, ast.checks)
}

const isRequired = (ast: SchemaAST.AST): boolean => {
  const wire = ast.encoding === undefined ? ast : SchemaAST.toEncoded(ast)
  return !SchemaAST.isOptional(wire) && !admitsUndefined(wire)
}

const admitsUndefined = (ast: SchemaAST.AST): boolean =>
  ast._tag === "Undefined" || ast._tag === "Void" || (ast._tag === "Union" && ast.types.some(admitsUndefined))

const isPreserve = (s: JsonSchemaProps): boolean => s.type === undefined && s["x-kubernetes-preserve-unknown-fields"] === true

const arrays = (ast: SchemaAST.Arrays, suspended: ReadonlyArray<SchemaAST.AST>): JsonSchemaProps => {
  const members = [...ast.elements, ...ast.rest].map((member) => walk(member, suspended))
  const out: Props = { type: "array", items: members.length === 0 ? preserve : widen(members) }
  if (ast.elements.length > 0) {
    out.minItems = ast.elements.filter((element) => !SchemaAST.isOptional(element)).length
    if (ast.rest.length === 0) out.maxItems = ast.elements.length
  }
  return checked(out, ast.checks)
}

const nonFinite: ReadonlyArray<unknown> = ["Infinity", "-Infinity", "NaN"]

const union = (ast: SchemaAST.Union, suspended: ReadonlyArray<SchemaAST.AST>): JsonSchemaProps => {
  let members = flattenUnion(ast)
  const nullable = members.some((m) => m._tag === "Null")
  members = members.filter((m) => m._tag !== "Null" && m._tag !== "Undefined" && m._tag !== "Void")
  // A number's canonical JSON form spells non-finite values as strings; JSON numbers cannot be those.
  if (members.some((m) => m._tag === "Number")) {
    members = members.filter((m) => !(m._tag === "Literal" && nonFinite.includes(m.literal)))
  }
  if (members.length === 0) return preserve
  const allLiterals = members.every((m) => m._tag === "Literal" && m.encoding === undefined && m.checks === undefined)
  const out = allLiterals
    ? literals(members.map((m) => (m as SchemaAST.Literal).literal))
    : widen(members.map((m) => walk(m, suspended)))
  return nullable && out.type !== undefined ? { ...out, nullable: true } : out
}

const flattenUnion = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> =>
  ast._tag === "Union" && ast.encoding === undefined && ast.checks === undefined
    ? ast.types.flatMap(flattenUnion)
    : [ast]

/** The narrowest schema Kubernetes can express that accepts every member. */
const widen = (members: ReadonlyArray<JsonSchemaProps>): JsonSchemaProps => {
  if (members.length === 1) return members[0]!
  if (members.some((m) => m.type === undefined)) {
    return members.every((m) => m["x-kubernetes-int-or-string"] === true || m.type === "integer" || m.type === "string")
      ? intOrStringSchema
      : preserve
  }
  const types = new Set(members.map((m) => m.type))
  if (types.size > 1) {
    if (types.size === 2 && types.has("integer") && types.has("number")) {
      return widen(members.map(({ format: _, ...m }): JsonSchemaProps => ({ ...m, type: "number" })))
    }
    return intOrStringOr(types)
  }
  const type = members[0]!.type!
  if (type === "object") return widenObjects(members)
  if (type === "array") return { type, items: widen(members.map((m) => m.items ?? preserve)) }
  const out: Props = { type }
  const format = members[0]!.format
  if (format !== undefined && members.every((m) => m.format === format)) out.format = format
  if (members.every((m) => m.enum !== undefined)) out.enum = [...new Set(members.flatMap((m) => m.enum!))]
  return out
}

const widenObjects = (members: ReadonlyArray<JsonSchemaProps>): JsonSchemaProps => {
  const named = members.filter((m) => m.properties !== undefined)
  const maps = members.filter((m) => m.additionalProperties !== undefined)
  if (members.some((m) => m["x-kubernetes-preserve-unknown-fields"] === true) || (named.length > 0 && maps.length > 0)) {
    return { type: "object", ...preserve }
  }
  // Generated maps always have a schema for their values (never `additionalProperties: true`).
  const values = maps.flatMap((m) => typeof m.additionalProperties === "object" ? [m.additionalProperties] : [])
  if (maps.length > 0) return { type: "object", additionalProperties: widen(values) }
  const names = [...new Set(named.flatMap((m) => Object.keys(m.properties!)))]
  const properties: Record<string, JsonSchemaProps> = {}
  for (const name of names) {
    properties[name] = widen(named.flatMap((m) => m.properties![name] === undefined ? [] : [m.properties![name]]))
  }
  // A key is required only if every member requires it (and an empty member requires nothing).
  const required = names.filter((name) => members.every((m) => m.required?.includes(name) === true))
  return {
    type: "object",
    ...(names.length > 0 ? { properties } : {}),
    ...(required.length > 0 ? { required } : {})
  }
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

type Filter = SchemaAST.Filter<any>

const filtersOf = (checks: SchemaAST.Checks | undefined): ReadonlyArray<Filter> =>
  (checks ?? []).flatMap((check): ReadonlyArray<Filter> =>
    check._tag === "Filter" ? [check] : filtersOf(check.checks)
  )

const representation = (filter: Filter): { readonly id: string; readonly payload: any } | undefined => {
  const value = filter.annotations?.representation as { readonly id?: unknown; readonly payload?: unknown } | undefined
  return typeof value?.id === "string" ? { id: value.id.replace(/^effect\/schema\//, ""), payload: value.payload } : undefined
}

const hasCheck = (checks: SchemaAST.Checks | undefined, id: string): boolean =>
  filtersOf(checks).some((filter) => representation(filter)?.id === id)

/** Kubernetes' known string formats that a check may declare. */
const formats: ReadonlySet<string> = new Set([
  "uuid", "uuid3", "uuid4", "uuid5", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uri", "byte",
  "date", "date-time", "datetime", "duration", "password", "int32", "int64", "float", "double"
])

const checked = (base: JsonSchemaProps, checks: SchemaAST.Checks | undefined): JsonSchemaProps => {
  let out: Props = { ...base }
  for (const filter of filtersOf(checks)) out = constrain(out, filter)
  return out
}

const constrain = (s: Props, filter: Filter): Props => {
  const known = representation(filter)
  const p = known?.payload
  const lengthOf = (bound: "min" | "max", value: number): Props =>
    s.type === "array" ? tighten(s, bound === "min" ? "minItems" : "maxItems", value)
    : s.type === "string" ? tighten(s, bound === "min" ? "minLength" : "maxLength", value)
    : s
  switch (known?.id) {
    case "isGreaterThan":
      return lower(s, p.exclusiveMinimum, true)
    case "isGreaterThanOrEqualTo":
      return lower(s, p.minimum, false)
    case "isLessThan":
      return upper(s, p.exclusiveMaximum, true)
    case "isLessThanOrEqualTo":
      return upper(s, p.maximum, false)
    case "isBetween":
      return upper(lower(s, p.minimum, p.exclusiveMinimum === true), p.maximum, p.exclusiveMaximum === true)
    case "isMultipleOf":
      return { ...s, multipleOf: p.divisor }
    case "isMinLength":
      return lengthOf("min", p.minLength)
    case "isMinCodePoints":
      return lengthOf("min", p.minCodePoints)
    case "isMaxLength":
      return lengthOf("max", p.maxLength)
    case "isMaxCodePoints":
      return lengthOf("max", p.maxCodePoints)
    case "isBetweenLength":
    case "isBetweenCodePoints":
      return tightenBoth(s, p.minimum, p.maximum)
    case "isMinProperties":
      return s.type === "object" ? tighten(s, "minProperties", p.minProperties) : s
    case "isMaxProperties":
      return s.type === "object" ? tighten(s, "maxProperties", p.maxProperties) : s
    case "isBetweenProperties":
      return s.type === "object" ? tighten(tighten(s, "minProperties", p.minimum), "maxProperties", p.maximum) : s
    case "isPattern":
      return withPattern(s, re2Pattern(p.source, p.flags))
    case "isUnique":
      return s.type === "array" && s.items?.type !== "object" && s.items?.type !== "array" && s.items?.type !== undefined
        ? { ...s, "x-kubernetes-list-type": "set" }
        : s
    case "isInt":
    case "isFinite":
      return s
    default:
      return fromJsonSchemaAnnotation(s, filter)
  }
}

const tightenBoth = (s: Props, min: number, max: number): Props =>
  s.type === "array" ? tighten(tighten(s, "minItems", min), "maxItems", max)
  : s.type === "string" ? tighten(tighten(s, "minLength", min), "maxLength", max)
  : s

type Bound = "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties"

const tighten = (s: Props, key: Bound, value: number): Props => {
  const current = s[key]
  const stricter = key.startsWith("min") ? Math.max(current ?? value, value) : Math.min(current ?? value, value)
  return { ...s, [key]: stricter }
}

const lower = (s: Props, value: number, exclusive: boolean): Props => {
  if (s.minimum !== undefined && (s.minimum > value || (s.minimum === value && s.exclusiveMinimum === true))) return s
  const { exclusiveMinimum: _, ...rest } = s
  return { ...rest, minimum: value, ...(exclusive ? { exclusiveMinimum: true } : {}) }
}

const upper = (s: Props, value: number, exclusive: boolean): Props => {
  if (s.maximum !== undefined && (s.maximum < value || (s.maximum === value && s.exclusiveMaximum === true))) return s
  const { exclusiveMaximum: _, ...rest } = s
  return { ...rest, maximum: value, ...(exclusive ? { exclusiveMaximum: true } : {}) }
}

const withPattern = (s: Props, pattern: string | undefined): Props =>
  pattern === undefined ? s
  : s.pattern === undefined ? { ...s, pattern }
  : { ...s, allOf: [...(s.allOf ?? []), { pattern }] }

/**
 * The RE2 (Go) spelling of a JavaScript pattern, or undefined when it has no RE2 equivalent
 * (lookaround, backreferences) and must be left to the decoder.
 */
const re2Pattern = (source: string, flags: string): string | undefined => {
  if (/\(\?<?[=!]|\\[1-9]|\\k</.test(source)) return undefined
  const inline = [...flags].filter((f) => f === "i" || f === "m" || f === "s").join("")
  return inline === "" ? source : `(?${inline})${source}`
}

/** Other checks: take a pattern or a known format from the check's own JSON Schema, if any. */
const fromJsonSchemaAnnotation = (s: Props, filter: Filter): Props => {
  const toJsonSchema = filter.annotations?.toJsonSchema
  if (typeof toJsonSchema !== "function" || s.type !== "string") return s
  const output = (toJsonSchema as (input: { type: string; schemas: ReadonlyArray<unknown> }) => unknown)({ type: "string", schemas: [] })
  const fragment = (Array.isArray(output) ? output[0] : output) as { pattern?: unknown; format?: unknown } | undefined
  let out = s
  if (typeof fragment?.pattern === "string") out = withPattern(out, re2Pattern(fragment.pattern, ""))
  if (typeof fragment?.format === "string" && formats.has(fragment.format) && out.format === undefined) {
    out = { ...out, format: fragment.format }
  }
  return out
}

const int32 = { min: -2147483648, max: 2147483647 }

const integerFormat = (s: Props): Props =>
  s.type !== "integer" ? s
  : { ...s, format: s.minimum !== undefined && s.maximum !== undefined && s.minimum >= int32.min && s.maximum <= int32.max ? "int32" : "int64" }

// ---------------------------------------------------------------------------------------------
// Annotations and normal form
// ---------------------------------------------------------------------------------------------

/** A node's annotations, and its checks': `.annotate` on a checked schema annotates its last check. */
const documented = (ast: SchemaAST.AST, s: JsonSchemaProps): JsonSchemaProps =>
  [ast.annotations, ...checkAnnotations(ast.checks)].reduce(
    (out: JsonSchemaProps, source) => annotations(source, out, ast.encoding === undefined),
    s
  )

const checkAnnotations = (checks: SchemaAST.Checks | undefined): ReadonlyArray<SchemaAST.Filter<any>["annotations"]> =>
  (checks ?? []).flatMap((check) =>
    check._tag === "Filter" ? [check.annotations] : [...checkAnnotations(check.checks), check.annotations]
  )

const annotations = (
  source: { readonly [key: string]: unknown } | undefined,
  s: JsonSchemaProps,
  withDefault = false
): JsonSchemaProps => {
  if (source === undefined) return s
  const out: Record<string, unknown> = { ...s }
  if (typeof source.title === "string") out.title = source.title
  if (typeof source.description === "string") out.description = source.description
  if (typeof source.format === "string" && formats.has(source.format)) out.format = source.format
  // A default must be JSON as written; a transformed value's encoded form is not known here.
  if (withDefault && source.default !== undefined && isJson(source.default)) out.default = source.default
  for (const [key, value] of Object.entries(source)) {
    if (key.startsWith("x-kubernetes-")) out[key] = value
  }
  return out as JsonSchemaProps
}

const isJson = (value: unknown): boolean =>
  value === null || typeof value === "string" || typeof value === "boolean" ||
  (typeof value === "number" && Number.isFinite(value)) ||
  (Array.isArray(value) && value.every(isJson)) ||
  (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype && Object.values(value as object).every(isJson))

/** Applies the rules markers imply: int-or-string has no type, preserved unknown objects stay objects. */
const finish = (s: JsonSchemaProps): JsonSchemaProps => {
  if (s["x-kubernetes-int-or-string"] !== true) return s
  const { type: _type, format: _format, "x-kubernetes-preserve-unknown-fields": _preserve, ...rest } = s
  return { ...rest, anyOf: rest.anyOf ?? intOrStringSchema.anyOf! }
}

const keyOrder: ReadonlyArray<keyof JsonSchemaProps> = [
  "type", "format", "title", "description", "default", "nullable", "enum", "minimum", "exclusiveMinimum", "maximum",
  "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern", "minItems", "maxItems", "minProperties",
  "maxProperties", "required", "properties", "additionalProperties", "items", "allOf", "anyOf",
  "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
  "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-validations"
]

/** Drops undefined keys and orders keys the same way everywhere, so output is stable and readable. */
const canonical = (s: JsonSchemaProps): JsonSchemaProps => {
  const out: Record<string, unknown> = {}
  for (const key of keyOrder) {
    const value = s[key]
    if (value === undefined) continue
    if (key === "properties") {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, JsonSchemaProps>).map(([k, v]) => [k, canonical(v)]))
    } else if (key === "items" || key === "additionalProperties") {
      out[key] = canonical(value as JsonSchemaProps)
    } else if (key === "allOf" || key === "anyOf") {
      out[key] = (value as ReadonlyArray<JsonSchemaProps>).map(canonical)
    } else {
      out[key] = value
    }
  }
  return out as JsonSchemaProps
}
