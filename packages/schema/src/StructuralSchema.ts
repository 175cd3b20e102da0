/**
 * The Kubernetes *structural* schema (the OpenAPI v3 subset CustomResourceDefinitions accept) of a
 * Schema's JSON form, built on effect's own JSON Schema output. `x-kubernetes-*` annotations on a
 * Schema are copied onto its node; see the marker helpers in `Crd`.
 *
 * @since 0.1.0
 */
import { SchemaRepresentation } from "effect"
import type { JsonSchema, Schema, SchemaAST } from "effect"
import type { JsonSchemaProps } from "./JsonSchemaProps.ts"
import * as OpenApiValidation from "./OpenApiValidation.ts"

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

/**
 * The Kubernetes structural schema of a Schema's JSON form (`Schema.toJsonSchemaDocument`, with
 * `x-kubernetes-*` annotations kept and patterns spelled for RE2), through {@link fromJsonSchema}.
 *
 * The JSON form of `Schema.Number` may be a non-finite number spelled as a string, so effect keeps
 * its checks out of the JSON Schema: bound a field with `Schema.Finite` or `Schema.Int` for the
 * bounds to reach the CRD.
 *
 * @example
 * import { Schema } from "effect"
 * import { StructuralSchema } from "@kubefx/schema"
 * StructuralSchema.make(Schema.Struct({ replicas: Schema.Int, mode: Schema.optionalKey(Schema.Literals(["a", "b"])) }))
 * // { type: "object", required: ["replicas"], properties: { replicas: { type: "integer", format: "int64" },
 * //   mode: { type: "string", enum: ["a", "b"] } } }
 */
export const make = (schema: Schema.Top): JsonSchemaProps => {
  const document = SchemaRepresentation.toRepresentation(schema.ast)
  const references: Record<string, SchemaRepresentation.Representation> = {}
  const adapt = adapter(references)
  for (const [name, representation] of Object.entries(document.references)) references[name] = adapt(representation, document.references)
  return fromJsonSchema(SchemaRepresentation.toJsonSchemaDocument(
    { representation: adapt(document.representation, document.references), references },
    { includeAnnotationKey: (key) => key.startsWith("x-kubernetes-") }
  ))
}

type Representation = SchemaRepresentation.Representation

/**
 * What a CRD needs that effect's JSON Schema says otherwise: an undefined value is an absent key
 * (effect writes it as `null`; the API server prunes a null it may not store, and the decoder takes
 * no null), a pattern is RE2, and a declaration (Date, Option...) is its canonical JSON form.
 */
const adapter = (references: Record<string, Representation>) => {
  const adapt = (node: Representation, from: SchemaRepresentation.References): Representation => {
    switch (node._tag) {
      case "Objects":
        return {
          ...node,
          checks: node.checks.map(re2Check),
          propertySignatures: node.propertySignatures.map((property) => ({
            ...property,
            isOptional: property.isOptional || admitsUndefined(property.type),
            type: adapt(property.type, from)
          })),
          indexSignatures: node.indexSignatures.map((index) => ({ ...index, type: adapt(index.type, from) }))
        }
      case "Union": {
        const types = node.types.filter((member) => member._tag !== "Undefined" && member._tag !== "Void")
        return types.length === 0 ? unknown : { ...node, types: types.map((member) => adapt(member, from)), checks: node.checks.map(re2Check) }
      }
      case "Arrays":
        return {
          ...node,
          checks: node.checks.map(re2Check),
          elements: node.elements.map((element) => ({ ...element, type: adapt(element.type, from) })),
          rest: node.rest.map((member) => adapt(member, from))
        }
      case "Suspend":
        return { ...node, thunk: adapt(node.thunk, from) }
      case "Declaration":
        return declaration(node, from)
      case "Undefined":
      case "Void":
        return unknown
      case "Reference":
        return node
      default:
        return { ...node, checks: node.checks.map(re2Check) } as Representation
    }
  }
  const declaration = (node: SchemaRepresentation.Declaration, from: SchemaRepresentation.References): Representation => {
    const toCodecJson = node.annotations?.toCodecJson ?? node.annotations?.toCodec
    if (typeof toCodecJson !== "function") return unknown
    try {
      const parameters = node.typeParameters.map((tp) =>
        SchemaRepresentation.fromRepresentation({ representation: tp, references: from }, { revivers })
      )
      const link = toCodecJson(parameters) as SchemaAST.Link | undefined
      if (link === undefined) return unknown
      const json = SchemaRepresentation.toRepresentation(link.to)
      for (const [name, representation] of Object.entries(json.references)) references[name] = adapt(representation, json.references)
      const { title, description } = node.annotations ?? {}
      const adapted = adapt(json.representation, json.references)
      return adapted._tag === "Reference" ? adapted : { ...adapted, annotations: { ...adapted.annotations, title, description } } as Representation
    } catch {
      return unknown
    }
  }
  return adapt
}

const unknown: Representation = { _tag: "Unknown", checks: [] }

/** Every check and declaration effect knows how to rebuild, to revive a declaration's type parameters. */
const revivers: ReadonlyArray<SchemaRepresentation.AnyReviver> = (Object.values(SchemaRepresentation) as ReadonlyArray<unknown>).filter(
  (value): value is SchemaRepresentation.AnyReviver =>
    typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string" &&
    typeof (value as { revive?: unknown }).revive === "function"
)

const admitsUndefined = (node: Representation): boolean =>
  node._tag === "Undefined" || node._tag === "Void" || (node._tag === "Union" && node.types.some(admitsUndefined))

/**
 * Effect writes a pattern only when JavaScript and JSON Schema read it alike (the `u` flag); a CRD's
 * pattern is RE2, which reads most JavaScript patterns as written and takes `i`, `m`, `s` inline.
 */
const re2Check = (check: SchemaRepresentation.Check): SchemaRepresentation.Check => {
  if (check._tag === "FilterGroup") return { ...check, checks: check.checks.map(re2Check) as [SchemaRepresentation.Check, ...Array<SchemaRepresentation.Check>] }
  if (check.representation?.id !== "effect/schema/isPattern") return check
  const payload = check.representation.payload as { readonly source: string; readonly flags: string }
  const pattern = re2Pattern(payload.source, payload.flags)
  return { ...check, annotations: { ...check.annotations, toJsonSchema: () => pattern === undefined ? [{}, true] : { pattern } } }
}

/**
 * The RE2 spelling of a JavaScript pattern, or undefined when RE2 does not compile it (lookaround,
 * backreferences...): the same compiler the API server's validation uses decides.
 */
const re2Pattern = (source: string, flags: string): string | undefined => {
  const inline = [...flags].filter((f) => f === "i" || f === "m" || f === "s").join("")
  const anchored = flags.includes("y") ? `^(?:${source})` : source
  const pattern = inline === "" ? anchored : `(?${inline})${anchored}`
  return typeof OpenApiValidation.compilePattern(pattern) === "string" ? undefined : pattern
}

/**
 * The Kubernetes structural schema of a JSON Schema (draft 2020-12, as effect writes it): a type on
 * every node, no `$ref`, `allOf` merged, `const` and literal unions as `enum`, `null` members as
 * `nullable`, tuples and records as `items` and `additionalProperties`, open values as preserved
 * unknown fields, integer formats from their bounds, OpenAPI 3.0's boolean exclusive bounds.
 * What a structural schema cannot say (unions of unlike shapes, recursion) widens to a looser schema:
 * it never refuses what the JSON Schema accepts.
 *
 * @example
 * import { StructuralSchema } from "@kubefx/schema"
 * StructuralSchema.fromJsonSchema({
 *   dialect: "draft-2020-12",
 *   schema: { anyOf: [{ type: "integer", exclusiveMinimum: 0, maximum: 10 }, { type: "null" }] },
 *   definitions: {}
 * })
 * // { type: "integer", format: "int32", nullable: true, minimum: 0, exclusiveMinimum: true, maximum: 10 }
 */
export const fromJsonSchema = (document: JsonSchema.Document<"draft-2020-12">): JsonSchemaProps =>
  canonical(convert(document.schema, { definitions: document.definitions, seen: [] }))

interface Scope {
  readonly definitions: JsonSchema.Definitions
  readonly seen: ReadonlyArray<string>
}

type Json = JsonSchema.JsonSchema
type Props = { -readonly [K in keyof JsonSchemaProps]: JsonSchemaProps[K] }

const preserve: JsonSchemaProps = { "x-kubernetes-preserve-unknown-fields": true }

const convert = (input: unknown, scope: Scope): JsonSchemaProps => {
  const flat = flatten(input, scope)
  return flat === undefined ? preserve : finish(node(flat.schema, flat.scope))
}

// ---------------------------------------------------------------------------------------------
// $ref and allOf: one schema object whose keywords all apply
// ---------------------------------------------------------------------------------------------

/** Inlines references and merges `allOf`; undefined for a recursive occurrence (OpenAPI in CRDs has no references). */
const flatten = (input: unknown, scope: Scope): { readonly schema: Json; readonly scope: Scope } | undefined => {
  if (input === true || input === undefined) return { schema: {}, scope }
  if (input === false || input === null || typeof input !== "object") return { schema: {}, scope }
  const { $ref, allOf, ...own } = input as Json
  // A reference's siblings refine its definition; later allOf members (checks, annotations) refine both.
  const members: Array<unknown> = []
  let inner = scope
  if (typeof $ref === "string") {
    const name = decodeURIComponent($ref.replace(/^#\/\$defs\//, "")).replace(/~1/g, "/").replace(/~0/g, "~")
    if (scope.seen.includes(name)) return undefined
    inner = { ...inner, seen: [...inner.seen, name] }
    members.push(scope.definitions[name])
  }
  members.push(own)
  if (Array.isArray(allOf)) members.push(...allOf)
  let schema: Json = {}
  for (const member of members) {
    const flat = member === own ? { schema: own, scope: inner } : flatten(member, inner)
    if (flat === undefined) return undefined
    inner = { ...inner, seen: [...new Set([...inner.seen, ...flat.scope.seen])] }
    schema = intersect(schema, flat.schema)
  }
  return { schema, scope: inner }
}

const lowerBounds: ReadonlySet<string> = new Set(["minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"])
const upperBounds: ReadonlySet<string> = new Set(["maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"])

/** Both schemas' keywords on one object: bounds tighten, patterns accumulate, `b`'s annotations win. */
const intersect = (a: Json, b: Json): Json => {
  const out: Json = { ...a }
  for (const [key, value] of Object.entries(b)) {
    const current = a[key]
    if (current === undefined) out[key] = value
    else if (lowerBounds.has(key)) out[key] = Math.max(current as number, value as number)
    else if (upperBounds.has(key)) out[key] = Math.min(current as number, value as number)
    else if (key === "type") out[key] = current === "integer" || value === "integer" ? "integer" : value
    else if (key === "pattern") out.patterns = [...patternsOf(out), value]
    else if (key === "required") out[key] = [...new Set([...current as Array<string>, ...value as Array<string>])]
    else if (key === "properties") out[key] = { ...current as object, ...mergeProperties(current as Json, value as Json) }
    else out[key] = value
  }
  return out
}

const patternsOf = (s: Json): ReadonlyArray<unknown> => (s.patterns as Array<unknown> | undefined) ?? []

const mergeProperties = (a: Json, b: Json): Json =>
  Object.fromEntries(Object.entries(b).map(([name, schema]) => [name, a[name] === undefined ? schema : { allOf: [a[name], schema] }]))

// ---------------------------------------------------------------------------------------------
// One node
// ---------------------------------------------------------------------------------------------

const node = (s: Json, scope: Scope): JsonSchemaProps => {
  const choices = s.anyOf ?? s.oneOf
  // Keywords beside a choice refine its scalar members (a number's bounds) or annotate it.
  if (Array.isArray(choices)) return keywords(choice(choices, scope), s, scope, false)
  const values = Array.isArray(s.enum) ? s.enum : "const" in s ? [s.const] : undefined
  const types = Array.isArray(s.type) ? s.type : typeof s.type === "string" ? [s.type] : []
  const nullable = types.includes("null") || values?.includes(null) === true
  const named = types.filter((t) => t !== "null")
  let out: JsonSchemaProps
  if (values !== undefined) out = literals(values.filter((v) => v !== null))
  else if (named.length > 1) out = widen(named.map((type) => node({ ...s, type }, scope)))
  else if (named.length === 1) out = { type: named[0] as NonNullable<JsonSchemaProps["type"]> }
  else if (s.properties !== undefined) out = { type: "object" }
  else return annotations(preserve, s)
  out = keywords(out, s, scope)
  return nullable && out.type !== undefined ? { ...out, nullable: true } : out
}

/** anyOf / oneOf: `null` makes the rest nullable, a number's non-finite spellings go, the rest widen. */
const choice = (members: ReadonlyArray<unknown>, scope: Scope): JsonSchemaProps => {
  const flat = members.map((member) => flatten(member, scope))
  if (flat.some((m) => m === undefined)) return preserve
  const schemas = flat.map((m) => m!)
  const nullable = schemas.some(({ schema }) => schema.type === "null")
  let rest = schemas.filter(({ schema }) => schema.type !== "null")
  if (rest.some(({ schema }) => schema.type === "number" || schema.type === "integer")) {
    rest = rest.filter(({ schema }) => !isNonFinite(schema))
  }
  if (rest.length === 0) return preserve
  const out = widen(rest.map(({ schema, scope }) => finish(node(schema, scope))))
  return nullable && out.type !== undefined ? { ...out, nullable: true } : out
}

const isNonFinite = (s: Json): boolean =>
  s.type === "string" && Array.isArray(s.enum) && s.enum.every((v) => v === "NaN" || v === "Infinity" || v === "-Infinity")

/** The keywords of `s` a structural schema keeps, on a node whose shape is `base`. */
const keywords = (base: JsonSchemaProps, s: Json, scope: Scope, shape = true): JsonSchemaProps => {
  let out: Props = { ...base }
  if (out.type === "object" && shape) out = object(out, s, scope)
  else if (out.type === "array" && shape) out = array(out, s, scope)
  else if (out.type === "string") out = string(out, s)
  else if (out.type === "integer" || out.type === "number") out = number(out, s)
  return annotations(out, s)
}

const object = (out: Props, s: Json, scope: Scope): Props => {
  const properties = s.properties as Record<string, unknown> | undefined
  const named = properties !== undefined && Object.keys(properties).length > 0
  if (named) out.properties = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, convert(v, scope)]))
  if (Array.isArray(s.required) && s.required.length > 0) out.required = s.required as Array<string>
  // Records: a value schema under additionalProperties or per key pattern; an open object keeps what it is given.
  const rest = [
    ...(s.additionalProperties === undefined || s.additionalProperties === false ? [] : [s.additionalProperties]),
    ...Object.values(s.patternProperties as object ?? {})
  ]
  const open = rest.length === 0 ? !named && s.additionalProperties !== false : true
  if (open) {
    const value = rest.length === 0 ? preserve : widen(rest.map((v) => convert(v, scope)))
    // Kubernetes forbids properties beside additionalProperties: named keys plus a rest keep the rest unchecked.
    if (named) {
      if (s.additionalProperties !== true || s.patternProperties !== undefined) out["x-kubernetes-preserve-unknown-fields"] = true
    } else if (isPreserve(value)) out["x-kubernetes-preserve-unknown-fields"] = true
    else out.additionalProperties = value
  }
  if (typeof s.minProperties === "number") out.minProperties = s.minProperties
  if (typeof s.maxProperties === "number") out.maxProperties = s.maxProperties
  return out
}

const array = (out: Props, s: Json, scope: Scope): Props => {
  const members = [...(Array.isArray(s.prefixItems) ? s.prefixItems : []), ...(s.items === undefined || s.items === false ? [] : [s.items])]
  out.items = members.length === 0 ? preserve : widen(members.map((m) => convert(m, scope)))
  if (typeof s.minItems === "number") out.minItems = s.minItems
  if (typeof s.maxItems === "number") out.maxItems = s.maxItems
  // uniqueItems is forbidden in CRDs; a set-typed list of scalars says the same thing.
  const scalar = out.items.type !== undefined && out.items.type !== "object" && out.items.type !== "array"
  if (s.uniqueItems === true && scalar) out["x-kubernetes-list-type"] = "set"
  return out
}

/** Kubernetes' known string formats. */
const formats: ReadonlySet<string> = new Set([
  "uuid", "uuid3", "uuid4", "uuid5", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uri", "byte",
  "date", "date-time", "datetime", "duration", "password", "int32", "int64", "float", "double"
])

const string = (out: Props, s: Json): Props => {
  if (typeof s.minLength === "number") out.minLength = s.minLength
  if (typeof s.maxLength === "number") out.maxLength = s.maxLength
  const patterns = [...(typeof s.pattern === "string" ? [s.pattern] : []), ...patternsOf(s)] as Array<string>
  if (patterns.length > 0) out.pattern = patterns[0]
  if (patterns.length > 1) out.allOf = patterns.slice(1).map((pattern) => ({ pattern }))
  return out
}

const int32 = { min: -2147483648, max: 2147483647 }

const number = (out: Props, s: Json): Props => {
  const safe = out.type === "integer" ? Number.MAX_SAFE_INTEGER : Infinity
  const bound = (inclusive: unknown, exclusive: unknown, side: "minimum" | "maximum") => {
    const flag = side === "minimum" ? "exclusiveMinimum" : "exclusiveMaximum"
    const tighter = side === "minimum" ? Math.max : Math.min
    const inc = typeof inclusive === "number" ? inclusive : undefined
    const exc = typeof exclusive === "number" ? exclusive : undefined
    if (exc !== undefined && (inc === undefined || tighter(inc, exc) === exc)) {
      out[side] = exc
      out[flag] = true
    } else if (inc !== undefined && Math.abs(inc) !== safe) out[side] = inc
  }
  bound(s.minimum, s.exclusiveMinimum, "minimum")
  bound(s.maximum, s.exclusiveMaximum, "maximum")
  if (typeof s.multipleOf === "number") out.multipleOf = s.multipleOf
  if (out.type === "integer" && out.format === undefined && out.enum === undefined) {
    const within = out.minimum !== undefined && out.maximum !== undefined && out.minimum >= int32.min && out.maximum <= int32.max
    out.format = within ? "int32" : "int64"
  }
  return out
}

const annotations = (base: JsonSchemaProps, s: Json): JsonSchemaProps => {
  const out: Record<string, unknown> = { ...base }
  if (typeof s.title === "string") out.title = s.title
  if (typeof s.description === "string") out.description = s.description
  if (typeof s.format === "string" && formats.has(s.format) && base.type !== undefined) out.format = s.format
  if (s.default !== undefined) out.default = s.default
  for (const [key, value] of Object.entries(s)) {
    if (key.startsWith("x-kubernetes-")) out[key] = value
  }
  return out as JsonSchemaProps
}

// ---------------------------------------------------------------------------------------------
// Widening: the narrowest structural schema that accepts every member
// ---------------------------------------------------------------------------------------------

const literals = (values: ReadonlyArray<unknown>): JsonSchemaProps => {
  const types = new Set(values.map(jsonType))
  if (types.size === 1) return { type: [...types][0]!, enum: values }
  if (types.size === 2 && types.has("integer") && types.has("number")) return { type: "number", enum: values }
  return { ...intOrStringOr(types), enum: values }
}

const jsonType = (value: unknown): NonNullable<JsonSchemaProps["type"]> =>
  typeof value === "string" ? "string"
  : typeof value === "boolean" ? "boolean"
  : typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number")
  : Array.isArray(value) ? "array"
  : "object"

const intOrStringOr = (types: ReadonlySet<JsonSchemaProps["type"]>): JsonSchemaProps =>
  [...types].every((t) => t === "integer" || t === "string") ? intOrStringSchema : preserve

const intOrStringSchema: JsonSchemaProps = {
  "x-kubernetes-int-or-string": true,
  anyOf: [{ type: "integer" }, { type: "string" }]
}

const isPreserve = (s: JsonSchemaProps): boolean => s.type === undefined && s["x-kubernetes-preserve-unknown-fields"] === true

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
// Normal form
// ---------------------------------------------------------------------------------------------

/** Applies the rules markers imply: int-or-string has no type. */
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
