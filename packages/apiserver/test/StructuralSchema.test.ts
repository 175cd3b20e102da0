import { describe, expect, it } from "vitest"
import * as StructuralSchema from "../src/StructuralSchema.ts"
import { FieldCauses } from "@kubefx/schema/internal"

// Expected violations are those of kube-apiserver's own CRD tests (apiextensions-apiserver
// test/integration and validation tests), for the same schemas.

const root = "spec.versions[0].schema.openAPIV3Schema"

const messages = (schema: unknown, statusSubresource = false): ReadonlyArray<string> =>
  StructuralSchema.validate(schema, { path: root, statusSubresource }).map(FieldCauses.causeText)

const at = (suffix: string, message: string): string => `${root}${suffix}: ${message}`

describe("StructuralSchema: types", () => {
  it("a type is required everywhere outside preserve-unknown-fields and int-or-string", () => {
    const schema = {
      properties: {
        foo: { properties: { a: {} } },
        bar: { items: { additionalProperties: { properties: { a: {} }, items: {} } } },
        abc: { additionalProperties: { properties: { a: { items: { additionalProperties: { items: null } } } } } }
      }
    }
    const required = (s: string, level: string) => at(s, `Required value: must not be empty ${level}`)
    expect([...messages(schema)].sort()).toEqual([
      required(".properties[abc].additionalProperties.properties[a].items.additionalProperties.type", "for specified object fields"),
      required(".properties[abc].additionalProperties.properties[a].items.type", "for specified array items"),
      required(".properties[abc].additionalProperties.properties[a].type", "for specified object fields"),
      required(".properties[abc].additionalProperties.type", "for specified object fields"),
      required(".properties[abc].type", "for specified object fields"),
      required(".properties[bar].items.additionalProperties.items.type", "for specified array items"),
      required(".properties[bar].items.additionalProperties.properties[a].type", "for specified object fields"),
      required(".properties[bar].items.additionalProperties.type", "for specified object fields"),
      required(".properties[bar].items.type", "for specified array items"),
      required(".properties[bar].type", "for specified object fields"),
      required(".properties[foo].properties[a].type", "for specified object fields"),
      required(".properties[foo].type", "for specified object fields"),
      required(".type", "at the root")
    ].sort())
  })

  it("the root must be an object", () => {
    expect(messages({ type: "integer" })).toEqual([at(".type", "Invalid value: \"integer\": must be object at the root")])
  })

  it("arrays need items, and items must be one schema", () => {
    expect(messages({ type: "object", properties: { slice: { type: "array" } } })).toEqual([
      at(".properties[slice].items", "Required value: must be specified")
    ])
    expect(messages({ type: "object", properties: { slice: { type: "array", items: [{ type: "string" }, { type: "integer" }] } } })).toContain(
      at(".properties[slice].items", "Forbidden: items must be a schema object and not an array")
    )
  })

  it("additionalProperties is not allowed at the root", () => {
    expect(messages({ type: "object", additionalProperties: false })).toEqual([
      at(".additionalProperties", "Forbidden: must not be used at the root")
    ])
  })
})

describe("StructuralSchema: value validations", () => {
  it("allOf/anyOf/oneOf/not may hold only value validations", () => {
    const forbidden = { type: "string", additionalProperties: true, title: "hello", description: "world", nullable: true }
    const schema = {
      type: "object",
      properties: { foo: { type: "string" } },
      not: { ...forbidden },
      allOf: [{ properties: { foo: { ...forbidden } } }],
      anyOf: [{ items: { ...forbidden } }],
      oneOf: [{ properties: { foo: { ...forbidden } } }]
    }
    const nested = (prefix: string) => [
      at(`${prefix}.type`, "Forbidden: must be empty to be structural"),
      at(`${prefix}.additionalProperties`, "Forbidden: must be undefined to be structural"),
      at(`${prefix}.title`, "Forbidden: must be empty to be structural"),
      at(`${prefix}.description`, "Forbidden: must be empty to be structural"),
      at(`${prefix}.nullable`, "Forbidden: must be false to be structural")
    ]
    expect([...messages(schema)].sort()).toEqual([
      ...nested(".anyOf[0].items"),
      ...nested(".allOf[0].properties[foo]"),
      ...nested(".oneOf[0].properties[foo]"),
      ...nested(".not"),
      at(".items", "Required value: because it is defined in spec.versions[0].schema.openAPIV3Schema.anyOf[0].items")
    ].sort())
  })

  it("vendor extensions are forbidden in value validations", () => {
    const extensions = {
      properties: {
        "int-or-string": { "x-kubernetes-int-or-string": true },
        "embedded-resource": { "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true }
      }
    }
    const schema = {
      type: "object",
      properties: {
        "int-or-string": { "x-kubernetes-int-or-string": true },
        "embedded-resource": { type: "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true }
      },
      allOf: [extensions]
    }
    expect([...messages(schema)].sort()).toEqual([
      at(".allOf[0].properties[embedded-resource].x-kubernetes-embedded-resource", "Forbidden: must be false to be structural"),
      at(".allOf[0].properties[embedded-resource].x-kubernetes-preserve-unknown-fields", "Forbidden: must be false to be structural"),
      at(".allOf[0].properties[int-or-string].x-kubernetes-int-or-string", "Forbidden: must be false to be structural")
    ])
  })

  it("fields named in value validations must exist in the structural schema", () => {
    const schema = {
      type: "object",
      properties: {
        b: { type: "object", properties: { b: { type: "array", items: { type: "string" } } } },
        c: { type: "array", items: { type: "object" } },
        d: { type: "array", items: { type: "string" } }
      },
      not: {
        properties: {
          a: {},
          b: { not: { properties: { a: {}, b: { items: {} } } } },
          c: { items: { not: { items: { properties: { a: {} } } } } },
          d: { items: {} }
        }
      },
      allOf: [{ properties: { e: {} } }],
      anyOf: [{ properties: { f: {} } }],
      oneOf: [{ properties: { g: {} } }]
    }
    const defined = (s: string, v: string) => at(s, `Required value: because it is defined in ${root}${v}`)
    expect([...messages(schema)].sort()).toEqual([
      defined(".properties[a]", ".not.properties[a]"),
      defined(".properties[b].properties[a]", ".not.properties[b].not.properties[a]"),
      defined(".properties[c].items.items", ".not.properties[c].items.not.items"),
      defined(".properties[e]", ".allOf[0].properties[e]"),
      defined(".properties[f]", ".anyOf[0].properties[f]"),
      defined(".properties[g]", ".oneOf[0].properties[g]")
    ].sort())
  })

  it("int-or-string may use the anyOf integer/string pattern, nothing else typed", () => {
    const schema = {
      type: "object",
      properties: {
        a: { "x-kubernetes-int-or-string": true },
        b: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }], allOf: [{ pattern: "abc" }] },
        c: { "x-kubernetes-int-or-string": true, allOf: [{ anyOf: [{ type: "integer" }, { type: "string" }] }, { pattern: "abc" }] },
        d: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string", pattern: "abc" }] },
        g: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "string" }, { type: "integer" }] }
      }
    }
    expect([...messages(schema)].sort()).toEqual([
      at(".properties[d].anyOf[0].type", "Forbidden: must be empty to be structural"),
      at(".properties[d].anyOf[1].type", "Forbidden: must be empty to be structural"),
      at(".properties[g].anyOf[0].type", "Forbidden: must be empty to be structural"),
      at(".properties[g].anyOf[1].type", "Forbidden: must be empty to be structural")
    ])
  })

  it("patterns must compile", () => {
    const [message] = messages({ type: "object", properties: { foo: { type: "string", pattern: "+" } } })
    expect(message).toMatch(/^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[foo\]\.pattern: Invalid value: "\+": must be a valid regular expression, but isn't: error parsing regexp: /)
    expect(messages({ type: "object", properties: { foo: { type: "string", pattern: "^(?=a)" } } })).toEqual([
      at(".properties[foo].pattern", "Invalid value: \"^(?=a)\": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: `(?=`")
    ])
  })
})

describe("StructuralSchema: metadata", () => {
  it("may restrict name and generateName only", () => {
    expect(messages({ type: "object", properties: { metadata: { type: "object", properties: { name: { type: "string", pattern: "^[a-z]+$" } } } } })).toEqual([])
    // metadata without a type is also not an object
    const notObject = at(".properties[metadata].type", "Invalid value: \"\": must be object")
    expect([...messages({ type: "object", properties: { metadata: { minimum: 42 } } })].sort()).toEqual([
      at(".properties[metadata]", "Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"),
      notObject,
      at(".properties[metadata].type", "Required value: must not be empty for specified object fields")
    ].sort())
    const others = { type: "object", properties: { metadata: { properties: { name: { pattern: "^[a-z]+$" }, labels: { type: "object", maxLength: 4 } } } } }
    expect([...messages(others)].sort()).toEqual([
      at(".properties[metadata]", "Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"),
      at(".properties[metadata].properties[name].type", "Required value: must not be empty for specified object fields"),
      notObject,
      at(".properties[metadata].type", "Required value: must not be empty for specified object fields")
    ].sort())
  })

  it("may not appear in value validations", () => {
    const schema = {
      type: "object",
      properties: { metadata: { type: "object", properties: { name: { type: "string" } } } },
      allOf: [{ properties: { metadata: {} } }],
      not: { properties: { metadata: {} } }
    }
    expect([...messages(schema)].sort()).toEqual([
      at(".allOf[0].properties[metadata]", "Forbidden: must not be specified in a nested context"),
      at(".not.properties[metadata]", "Forbidden: must not be specified in a nested context")
    ])
  })

  it("may not have defaults", () => {
    expect(messages({ type: "object", properties: { metadata: { type: "object", default: { name: "x" } } } })).toContain(
      at(".properties[metadata].default", "Forbidden: must not be set in top-level metadata")
    )
  })
})

describe("StructuralSchema: extensions", () => {
  it("embedded resources must be objects with properties or preserving unknown fields", () => {
    expect(messages({ type: "object", properties: { r: { type: "object", "x-kubernetes-embedded-resource": true } } })).toEqual([
      at(".properties[r].properties", "Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields")
    ])
    expect(messages({ type: "object", properties: { r: { type: "array", items: { type: "string" }, "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true } } })).toEqual([
      at(".properties[r].type", "Invalid value: \"array\": must be object if x-kubernetes-embedded-resource is true")
    ])
  })

  it("int-or-string excludes preserve-unknown-fields and embedded-resource", () => {
    expect(messages({ type: "object", properties: { v: { "x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true } } })).toEqual([
      at(".properties[v].x-kubernetes-preserve-unknown-fields", "Invalid value: true: must be false if x-kubernetes-int-or-string is true")
    ])
  })

  it("preserve-unknown-fields may only be true", () => {
    expect(messages({ type: "object", properties: { s: { type: "object", "x-kubernetes-preserve-unknown-fields": false } } })).toEqual([
      at(".properties[s].x-kubernetes-preserve-unknown-fields", "Invalid value: false: must be true or undefined")
    ])
  })

  it("list types: arrays only, known values, map keys that are required scalar properties", () => {
    expect(messages({ type: "object", properties: { s: { type: "string", "x-kubernetes-list-type": "set" } } })).toEqual([
      at(".properties[s].type", "Invalid value: \"string\": must be array if x-kubernetes-list-type is specified")
    ])
    expect(messages({ type: "object", properties: { l: { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "bag" } } })).toEqual([
      at(".properties[l].x-kubernetes-list-type", "Unsupported value: \"bag\": supported values: \"atomic\", \"set\", \"map\"")
    ])
    expect(messages({ type: "object", properties: { l: { type: "array", items: { type: "object", properties: { n: { type: "string" } }, required: ["n"] }, "x-kubernetes-list-type": "map" } } })).toEqual([
      at(".properties[l].x-kubernetes-list-map-keys", "Required value: must not be empty if x-kubernetes-list-type is map")
    ])
    const noSuchKey = { type: "object", properties: { l: { type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], items: { type: "object", properties: { n: { type: "string" } } } } } }
    expect(messages(noSuchKey)).toEqual([
      at(".properties[l].x-kubernetes-list-map-keys", "Invalid value: []string{\"name\"}: entries must all be names of item properties")
    ])
    const optionalKey = { type: "object", properties: { l: { type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], items: { type: "object", properties: { name: { type: "string" } } } } } }
    expect(messages(optionalKey)).toEqual([
      at(".properties[l].items.properties[name].default", "Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property")
    ])
    const setOfObjects = { type: "object", properties: { l: { type: "array", "x-kubernetes-list-type": "set", items: { type: "object", properties: { a: { type: "string" } } } } } }
    expect(messages(setOfObjects)).toEqual([
      at(".properties[l].items.x-kubernetes-map-type", "Invalid value: \"null\": must be atomic as item of a list with x-kubernetes-list-type=set")
    ])
  })

  it("map types: objects only", () => {
    expect(messages({ type: "object", properties: { m: { type: "array", items: { type: "string" }, "x-kubernetes-map-type": "atomic" } } })).toEqual([
      at(".properties[m].type", "Invalid value: \"array\": must be object if x-kubernetes-map-type is specified")
    ])
  })
})

describe("StructuralSchema: the OpenAPI subset", () => {
  it("rejects what CRDs cannot use", () => {
    const schema = {
      type: "object",
      properties: {
        a: { type: "array", items: { type: "string" }, uniqueItems: true },
        b: { $ref: "#/definitions/x", type: "string" },
        c: { type: "null" },
        d: { type: "object", properties: { x: { type: "string" } }, additionalProperties: { type: "string" } }
      }
    }
    expect(messages(schema)).toEqual([
      at(".properties[a].uniqueItems", "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"),
      at(".properties[b].$ref", "Forbidden: $ref is not supported"),
      at(".properties[c].type", "Unsupported value: \"null\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""),
      at(".properties[c].type", "Forbidden: type cannot be set to null, use nullable as an alternative"),
      at(".properties[d].additionalProperties", "Forbidden: additionalProperties and properties are mutual exclusive")
    ])
  })

  it("the root cannot be nullable; with /status only some keywords may sit at the root", () => {
    expect(messages({ type: "object", nullable: true })).toEqual([at(".nullable", "Forbidden: nullable cannot be true at the root")])
    const [status] = messages({ type: "object", properties: { spec: { type: "object" } }, anyOf: [{ required: ["spec"] }] }, true)
    expect(status).toMatch(/^spec\.versions\[0\]\.schema\.openAPIV3Schema: Invalid value: .*: only \[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations\] fields are allowed at the root of the schema if the status subresource is enabled$/)
  })
})

describe("StructuralSchema: defaults", () => {
  it("must validate against their schema", () => {
    const schema = { type: "object", properties: { spec: { type: "object", properties: { replicas: { type: "integer", default: "one" } } } } }
    expect(messages(schema)).toEqual([
      at(".properties[spec].properties[replicas].default", "Invalid value: \"string\":  in body must be of type integer: \"string\"")
    ])
  })

  it("must not carry unknown fields", () => {
    const schema = { type: "object", properties: { spec: { type: "object", properties: { a: { type: "string" } }, default: { a: "x", b: "y" } } } }
    expect(messages(schema)).toEqual([
      at(".properties[spec].default", "Invalid value: map[string]interface {}{\"a\":\"x\", \"b\":\"y\"}: must not have unknown fields")
    ])
  })

  it("valid defaults pass", () => {
    const schema = { type: "object", properties: { spec: { type: "object", default: {}, properties: { replicas: { type: "integer", default: 1, minimum: 0 } } } } }
    expect(messages(schema)).toEqual([])
  })
})

describe("StructuralSchema.isStructural", () => {
  it("tells structural schemas from others", () => {
    expect(StructuralSchema.isStructural({ type: "object", properties: { spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } })).toBe(true)
    expect(StructuralSchema.isStructural({ type: "object", properties: { spec: { properties: { a: { type: "string" } } } } })).toBe(false)
  })
})
