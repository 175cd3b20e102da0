import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema, SchemaTransformation } from "effect"
import { StructuralSchema } from "@kubefx/schema"

const schemaOf = (fields: Schema.Struct.Fields) => StructuralSchema.make(Schema.Struct(fields))
const field = (schema: Schema.Top) => schemaOf({ x: schema }).properties!.x

describe("StructuralSchema.make", () => {
  it("nested structs with required and optional keys", () => {
    const schema = schemaOf({
      name: Schema.String,
      nested: Schema.Struct({
        size: Schema.optionalKey(Schema.Int),
        label: Schema.optional(Schema.String),
        maybe: Schema.UndefinedOr(Schema.Boolean)
      })
    })
    expect(schema).toEqual({
      type: "object",
      required: ["name", "nested"],
      properties: {
        name: { type: "string" },
        nested: {
          type: "object",
          properties: {
            size: { type: "integer", format: "int64" },
            label: { type: "string" },
            maybe: { type: "boolean" }
          }
        }
      }
    })
  })

  it("arrays, tuples and records", () => {
    expect(field(Schema.Array(Schema.Struct({ a: Schema.String })))).toEqual({
      type: "array",
      items: { type: "object", required: ["a"], properties: { a: { type: "string" } } }
    })
    expect(field(Schema.Tuple([Schema.String, Schema.String]))).toEqual({
      type: "array",
      minItems: 2,
      maxItems: 2,
      items: { type: "string" }
    })
    expect(field(Schema.Record(Schema.String, Schema.Int))).toEqual({
      type: "object",
      additionalProperties: { type: "integer", format: "int64" }
    })
  })

  it("literals become enums, never const", () => {
    expect(field(Schema.Literal("On"))).toEqual({ type: "string", enum: ["On"] })
    expect(field(Schema.Literals(["a", "b"]))).toEqual({ type: "string", enum: ["a", "b"] })
    expect(field(Schema.Literals([1, 2]))).toEqual({ type: "integer", enum: [1, 2] })
    expect(field(Schema.Union([Schema.Literal("a"), Schema.Literals(["b", "c"])]))).toEqual({
      type: "string",
      enum: ["a", "b", "c"]
    })
    expect(field(Schema.Enum({ Up: "up", Down: "down" }))).toEqual({ type: "string", enum: ["up", "down"] })
  })

  it("integers with int32 or int64 formats, numbers, and numeric checks", () => {
    expect(field(Schema.Int)).toEqual({ type: "integer", format: "int64" })
    expect(field(Schema.Int.check(Schema.isInt32()))).toEqual({
      type: "integer",
      format: "int32",
      minimum: -2147483648,
      maximum: 2147483647
    })
    expect(field(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10 })))).toEqual({
      type: "integer",
      format: "int32",
      minimum: 1,
      maximum: 10
    })
    // Kubernetes' exclusive bounds are booleans beside minimum/maximum (OpenAPI 3.0)
    expect(field(Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(1)))).toEqual({
      type: "number",
      minimum: 0,
      exclusiveMinimum: true,
      maximum: 1
    })
    expect(field(Schema.Number.check(Schema.isMultipleOf(5)))).toEqual({ type: "number", multipleOf: 5 })
  })

  it("string and array checks", () => {
    // effect counts UTF-16 units and Kubernetes code points: two units may be one code point, so the
    // CRD's minimum is the one that never refuses what the decoder accepts
    expect(field(Schema.String.check(Schema.isMinLength(2), Schema.isMaxLength(8)))).toEqual({
      type: "string",
      minLength: 1,
      maxLength: 8
    })
    expect(field(Schema.NonEmptyString)).toEqual({ type: "string", minLength: 1 })
    expect(field(Schema.String.check(Schema.isPattern(/^[a-z]+$/)))).toEqual({ type: "string", pattern: "^[a-z]+$" })
    // JavaScript flags become RE2 inline flags; two patterns both apply
    expect(field(Schema.String.check(Schema.isPattern(/^a/i), Schema.isPattern(/b$/)))).toEqual({
      type: "string",
      pattern: "(?i)^a",
      allOf: [{ pattern: "b$" }]
    })
    // lookahead has no RE2 equivalent: left to the decoder
    expect(field(Schema.String.check(Schema.isPattern(/^(?!x)/)))).toEqual({ type: "string" })
    expect(field(Schema.String.check(Schema.isUUID()))).toMatchObject({ type: "string", format: "uuid" })
    expect(field(Schema.Array(Schema.String).check(Schema.isMinLength(1), Schema.isMaxLength(3)))).toEqual({
      type: "array",
      minItems: 1,
      maxItems: 3,
      items: { type: "string" }
    })
    // uniqueItems is forbidden in CRDs; a set-typed list says the same thing
    expect(field(Schema.Array(Schema.String).check(Schema.isUnique()))).toEqual({
      type: "array",
      items: { type: "string" },
      "x-kubernetes-list-type": "set"
    })
  })

  it("Unknown, Json and records of Unknown preserve unknown fields", () => {
    expect(field(Schema.Unknown)).toEqual({ "x-kubernetes-preserve-unknown-fields": true })
    expect(field(Schema.Json)).toEqual({ "x-kubernetes-preserve-unknown-fields": true })
    expect(field(Schema.Record(Schema.String, Schema.Unknown))).toEqual({
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true
    })
    // properties and additionalProperties are exclusive in Kubernetes: a struct with a rest keeps the rest
    expect(field(Schema.StructWithRest(Schema.Struct({ a: Schema.String }), [Schema.Record(Schema.String, Schema.Number)])))
      .toEqual({
        type: "object",
        required: ["a"],
        properties: { a: { type: "string" } },
        "x-kubernetes-preserve-unknown-fields": true
      })
  })

  it("descriptions and titles, on values and on keys", () => {
    const schema = schemaOf({
      replicas: Schema.Int.annotate({ title: "Replicas", description: "How many copies" }),
      note: Schema.optionalKey(Schema.String).annotateKey({ description: "A free note" }),
      mode: Schema.Literals(["a", "b"]).annotate({ description: "The mode", default: "a" })
    })
    expect(schema.properties).toEqual({
      replicas: { type: "integer", format: "int64", title: "Replicas", description: "How many copies" },
      note: { type: "string", description: "A free note" },
      mode: { type: "string", description: "The mode", default: "a", enum: ["a", "b"] }
    })
  })

  it("markers: list types, map keys, map type, int-or-string, preserve, validations", () => {
    const schema = schemaOf({
      ports: Schema.Array(Schema.Struct({ name: Schema.String, port: Schema.Int })).annotate({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] }),
      tags: Schema.Array(Schema.String).annotate({ "x-kubernetes-list-type": "set" }),
      labels: Schema.Record(Schema.String, Schema.String).annotate({ "x-kubernetes-map-type": "atomic" }),
      target: Schema.Union([Schema.Int, Schema.String]).annotate({ "x-kubernetes-int-or-string": true }),
      either: Schema.Union([Schema.Int, Schema.String]),
      values: Schema.Struct({ known: Schema.String }).annotate({ "x-kubernetes-preserve-unknown-fields": true }),
      template: Schema.Record(Schema.String, Schema.Unknown).annotate({ "x-kubernetes-embedded-resource": true }),
      range: Schema.Struct({ min: Schema.Int, max: Schema.Int }).annotate({
        "x-kubernetes-validations": [{ rule: "self.min <= self.max", message: "min must not exceed max" }]
      })
    })
    const p = schema.properties!
    expect(p.ports).toMatchObject({ type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] })
    expect(p.tags).toMatchObject({ type: "array", "x-kubernetes-list-type": "set" })
    expect(p.labels).toMatchObject({ type: "object", "x-kubernetes-map-type": "atomic" })
    const intOrString = { anyOf: [{ type: "integer" }, { type: "string" }], "x-kubernetes-int-or-string": true }
    expect(p.target).toEqual(intOrString)
    expect(p.either).toEqual(intOrString)
    expect(p.values).toEqual({
      type: "object",
      required: ["known"],
      properties: { known: { type: "string" } },
      "x-kubernetes-preserve-unknown-fields": true
    })
    expect(p.template).toMatchObject({ type: "object", "x-kubernetes-embedded-resource": true })
    expect(p.range!["x-kubernetes-validations"]).toEqual([{ rule: "self.min <= self.max", message: "min must not exceed max" }])
  })

  it("nullable members, unions of structs and numbers with non-finite JSON spellings", () => {
    expect(field(Schema.NullOr(Schema.String))).toEqual({ type: "string", nullable: true })
    expect(field(Schema.Union([Schema.TaggedStruct("A", { a: Schema.String }), Schema.TaggedStruct("B", { b: Schema.Int })])))
      .toEqual({
        type: "object",
        required: ["_tag"],
        properties: {
          _tag: { type: "string", enum: ["A", "B"] },
          a: { type: "string" },
          b: { type: "integer", format: "int64" }
        }
      })
    expect(field(Schema.Union([Schema.Int, Schema.Number]))).toEqual({ type: "number" })
    // unlike shapes have no structural union: anything goes, the decoder decides
    expect(field(Schema.Union([Schema.String, Schema.Struct({ a: Schema.String })]))).toEqual({
      "x-kubernetes-preserve-unknown-fields": true
    })
  })

  it("transformations are described by their encoded (wire) side", () => {
    // a transformation's annotations describe its decoded side; the wire side is annotated where it is declared
    expect(field(Schema.NumberFromString.annotate({ description: "a number" }))).toEqual({ type: "string" })
    expect(field(Schema.String.annotate({ description: "a number as text" }).pipe(Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString))))
      .toEqual({ type: "string", description: "a number as text" })
    // declarations are their canonical JSON form, with the declaration's own description
    expect(field(Schema.Date.annotate({ description: "when" }))).toEqual({ type: "string", description: "when" })
    expect(field(Schema.BigInt)).toEqual({ type: "string", pattern: "^-?\\d+$" })
    expect(field(Schema.Option(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 9 }))))).toEqual({
      type: "object",
      required: ["_tag"],
      properties: {
        _tag: { type: "string", enum: ["Some", "None"] },
        value: { type: "integer", format: "int32", minimum: 0, maximum: 9 }
      }
    })
    expect(field(Schema.OptionFromNullOr(Schema.String))).toEqual({ type: "string", nullable: true })
    class Point extends Schema.Class<Point>("Point")({ x: Schema.Number, y: Schema.Number }) {}
    expect(field(Point)).toEqual({
      type: "object",
      required: ["x", "y"],
      properties: { x: { type: "number" }, y: { type: "number" } }
    })
    // a decoding default makes the key optional on the wire
    expect(schemaOf({ n: Schema.optionalKey(Schema.Int).pipe(Schema.withDecodingDefaultKey(Effect.succeed(1))) }).required).toBeUndefined()
  })

  it("recursive schemas stop at the recursion with preserved unknown fields", () => {
    interface Tree {
      readonly name: string
      readonly children: ReadonlyArray<Tree>
    }
    const Tree: Schema.Codec<Tree> = Schema.Struct({
      name: Schema.String,
      children: Schema.Array(Schema.suspend((): Schema.Codec<Tree> => Tree))
    })
    const children = field(Tree).properties!.children!
    expect(children.items).toEqual({ "x-kubernetes-preserve-unknown-fields": true })
  })
})

describe("StructuralSchema.fromJsonSchema", () => {
  const convert = (schema: object, definitions: object = {}) =>
    StructuralSchema.fromJsonSchema({ dialect: "draft-2020-12", schema: schema as never, definitions: definitions as never })

  it("inlines references, merges allOf with the tighter bound, and turns const and null members into enum and nullable", () => {
    expect(convert(
      { type: "object", properties: { size: { $ref: "#/$defs/Size" }, mode: { const: "fast" } }, required: ["size"] },
      { Size: { type: "integer", minimum: 0, allOf: [{ minimum: 2, maximum: 5, description: "how many" }] } }
    )).toEqual({
      type: "object",
      required: ["size"],
      properties: {
        size: { type: "integer", format: "int32", description: "how many", minimum: 2, maximum: 5 },
        mode: { type: "string", enum: ["fast"] }
      }
    })
    expect(convert({ anyOf: [{ type: "string" }, { type: "null" }] })).toEqual({ type: "string", nullable: true })
    expect(convert({ type: ["integer", "null"] })).toEqual({ type: "integer", format: "int64", nullable: true })
  })

  it("numeric exclusive bounds become OpenAPI 3.0 booleans; a tighter inclusive bound wins", () => {
    expect(convert({ type: "number", exclusiveMinimum: 0, maximum: 1, exclusiveMaximum: 2 })).toEqual({
      type: "number",
      minimum: 0,
      exclusiveMinimum: true,
      maximum: 1
    })
  })

  it("tuples widen to one item schema, pattern properties to additionalProperties, open objects preserve", () => {
    expect(convert({ type: "array", prefixItems: [{ type: "integer" }, { type: "number" }], minItems: 2 })).toEqual({
      type: "array",
      minItems: 2,
      items: { type: "number" }
    })
    expect(convert({ type: "object", patternProperties: { "^a": { type: "string" } } })).toEqual({
      type: "object",
      additionalProperties: { type: "string" }
    })
    expect(convert({ type: "object" })).toEqual({ type: "object", "x-kubernetes-preserve-unknown-fields": true })
    expect(convert({ type: "object", properties: { a: { type: "string" } }, additionalProperties: false })).toEqual({
      type: "object",
      properties: { a: { type: "string" } }
    })
    expect(convert({})).toEqual({ "x-kubernetes-preserve-unknown-fields": true })
  })

  it("a self-referencing definition stops at its second occurrence", () => {
    const list = convert({ $ref: "#/$defs/Node" }, {
      Node: { type: "object", properties: { next: { $ref: "#/$defs/Node" }, value: { type: "string" } } }
    })
    expect(list).toEqual({
      type: "object",
      properties: { next: { "x-kubernetes-preserve-unknown-fields": true }, value: { type: "string" } }
    })
  })
})
