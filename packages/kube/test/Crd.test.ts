import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Yaml } from "effect/encoding"
import { Builtins, Crd, Resource, StructuralSchema } from "@kubefx/kube"
import { Widget } from "./fixtures/Widget.ts"

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
    expect(JSON.stringify(StructuralSchema.make(Widget.custom!.spec))).not.toContain("const")
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
    expect(field(Schema.String.check(Schema.isMinLength(2), Schema.isMaxLength(8)))).toEqual({
      type: "string",
      minLength: 2,
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
      ports: Schema.Array(Schema.Struct({ name: Schema.String, port: Schema.Int })).annotate(Crd.listMap("name")),
      tags: Schema.Array(Schema.String).annotate(Crd.listType("set")),
      labels: Schema.Record(Schema.String, Schema.String).annotate(Crd.mapType("atomic")),
      target: Crd.IntOrString,
      either: Schema.Union([Schema.Int, Schema.String]),
      values: Schema.Struct({ known: Schema.String }).annotate(Crd.preserveUnknownFields),
      template: Schema.Record(Schema.String, Schema.Unknown).annotate(Crd.embeddedResource),
      range: Schema.Struct({ min: Schema.Int, max: Schema.Int }).annotate(
        Crd.validations({ rule: "self.min <= self.max", message: "min must not exceed max" })
      )
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
    expect(field(Schema.NumberFromString.annotate({ description: "a number as text" }))).toEqual({
      type: "string",
      description: "a number as text"
    })
    expect(field(Schema.Date)).toEqual({ type: "string" })
    expect(field(Schema.BigInt)).toEqual({ type: "string", pattern: "^-?[0-9]+$" })
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
    expect(children.items!.properties!.children!.items).toEqual({ "x-kubernetes-preserve-unknown-fields": true })
  })
})

describe("Crd.make", () => {
  it("names, scope, one served and stored version, status subresource, printer columns", () => {
    const crd = Crd.make(Widget)
    expect(crd.apiVersion).toBe("apiextensions.k8s.io/v1")
    expect(crd.kind).toBe("CustomResourceDefinition")
    expect(crd.metadata.name).toBe("widgets.demo.kubefx.dev")
    expect(crd.spec.group).toBe("demo.kubefx.dev")
    expect(crd.spec.names).toEqual({
      kind: "Widget",
      listKind: "WidgetList",
      plural: "widgets",
      singular: "widget",
      shortNames: ["wg"],
      categories: ["all"]
    })
    expect(crd.spec.scope).toBe("Namespaced")
    expect(crd.spec.versions).toHaveLength(1)
    const [version] = crd.spec.versions
    expect(version).toMatchObject({ name: "v1", served: true, storage: true, subresources: { status: {} } })
    expect(version!.additionalPrinterColumns).toEqual([
      { name: "Replicas", type: "integer", jsonPath: ".spec.replicas" },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }
    ])
    const root = version!.schema.openAPIV3Schema
    expect(root.type).toBe("object")
    expect(Object.keys(root.properties!)).toEqual(["apiVersion", "kind", "metadata", "spec", "status"])
    expect(root.properties!.metadata).toEqual({ type: "object" })
    expect(root.properties!.apiVersion!.type).toBe("string")
    expect(root.required).toEqual(["spec"])
    expect(root.properties!.spec).toEqual(StructuralSchema.make(Widget.custom!.spec))
  })

  it("cluster scope, no status and no printer columns", () => {
    const Tenant = Resource.custom({
      group: "demo.kubefx.dev",
      version: "v1alpha1",
      kind: "Tenant",
      plural: "tenants",
      namespaced: false,
      spec: Schema.Struct({ owner: Schema.String })
    })
    const crd = Crd.make(Tenant)
    expect(crd.spec.scope).toBe("Cluster")
    expect(crd.spec.names).toEqual({ kind: "Tenant", listKind: "TenantList", plural: "tenants", singular: "tenant" })
    const [version] = crd.spec.versions
    expect(version!.subresources).toBeUndefined()
    expect(version!.additionalPrinterColumns).toBeUndefined()
    expect(version!.schema.openAPIV3Schema.properties!.status).toBeUndefined()
  })

  it("built-in kinds have no CRD", () => {
    expect(Crd.isCustom(Widget)).toBe(true)
    expect(Crd.isCustom(Builtins.ConfigMap)).toBe(false)
    expect(() => Crd.make(Builtins.ConfigMap)).toThrow(/built-in kind/)
  })

  it("YAML is a stream of the CRDs, with every key kept", () => {
    const Gadget = Resource.custom({
      group: "demo.kubefx.dev",
      version: "v1",
      kind: "Gadget",
      plural: "gadgets",
      spec: Schema.Struct({ port: Crd.IntOrString })
    })
    const crds = [Crd.make(Widget), Crd.make(Gadget)]
    const text = Crd.toYaml(crds)
    const documents = text.split(/^---$/m)
    expect(documents).toHaveLength(2)
    // parsed back, each document is the CRD object itself: x-kubernetes-* keys included
    expect(documents.map((d) => Yaml.parse(d))).toEqual(JSON.parse(JSON.stringify(crds)))
    expect(text).toContain("x-kubernetes-list-map-keys")
    expect(text).toContain("x-kubernetes-int-or-string: true")
  })
})

describe("Crd.check", () => {
  it("checks an object against the generated schema and its CEL rules, without a cluster", () => {
    const Range = Resource.custom({
      group: "demo.kubefx.dev",
      version: "v1",
      kind: "Range",
      plural: "ranges",
      spec: Schema.Struct({ min: Schema.Int, max: Schema.Int.check(Schema.isLessThanOrEqualTo(10)) }).annotate(
        Crd.validations({ rule: "self.min <= self.max", message: "min must not exceed max" })
      )
    })
    const range = (spec: Record<string, unknown>) => ({ apiVersion: "demo.kubefx.dev/v1", kind: "Range", metadata: { name: "r" }, spec })
    expect(Crd.check(Range, range({ min: 1, max: 2 })).causes).toEqual([])
    expect(Crd.check(Range, range({ min: 3, max: 2 })).causes).toEqual([
      { reason: "FieldValueInvalid", field: "spec", message: 'Invalid value: "object": min must not exceed max' }
    ])
    expect(Crd.check(Range, range({ min: 1, max: 11 })).causes.map((c) => c.field)).toEqual(["spec.max"])
  })
})
