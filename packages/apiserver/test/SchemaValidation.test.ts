import { describe, expect, it } from "vitest"
import * as SchemaValidation from "../src/SchemaValidation.ts"
import * as ObjectMetaValidation from "../src/ObjectMetaValidation.ts"
import { FieldCauses, OpenApiValidation } from "@kubefx/schema/internal"
import type { JsonSchemaProps } from "@kubefx/schema"

// Expected strings are Kubernetes' own (apiextensions-apiserver validation tests, and messages real
// 1.32 clusters answer), not this implementation's output.

const texts = (value: unknown, schema: JsonSchemaProps): ReadonlyArray<string> =>
  OpenApiValidation.validate(value, schema).map(FieldCauses.causeText)

const objectWith = (properties: Record<string, JsonSchemaProps>, required?: ReadonlyArray<string>): JsonSchemaProps => ({
  type: "object",
  properties,
  ...(required === undefined ? {} : { required })
})

const spec = (properties: Record<string, JsonSchemaProps>, required?: ReadonlyArray<string>): JsonSchemaProps =>
  objectWith({ spec: objectWith(properties, required) })

describe("OpenApiValidation.validate", () => {
  it("maximum: the value and the bound as Go prints them", () => {
    const causes = OpenApiValidation.validate({ spec: { replicas: 15 } }, spec({ replicas: { type: "integer", maximum: 10 } }))
    expect(causes).toEqual([{
      reason: "FieldValueInvalid",
      field: "spec.replicas",
      message: "Invalid value: 15: spec.replicas in body should be less than or equal to 10"
    }])
  })

  it("exclusive maximum and minimum", () => {
    const schema = spec({
      below: { type: "integer", maximum: 10, exclusiveMaximum: true },
      above: { type: "integer", minimum: 1, exclusiveMinimum: true },
      timeout: { type: "integer", minimum: 1 }
    })
    expect(texts({ spec: { below: 10, above: 1, timeout: 0 } }, schema)).toEqual([
      "spec.below: Invalid value: 10: spec.below in body should be less than 10",
      "spec.above: Invalid value: 1: spec.above in body should be greater than 1",
      "spec.timeout: Invalid value: 0: spec.timeout in body should be greater than or equal to 1"
    ])
  })

  it("bounds of numbers keep their fractions", () => {
    expect(texts({ spec: { ratio: 0.5 } }, spec({ ratio: { type: "number", minimum: 0.75 } }))).toEqual([
      "spec.ratio: Invalid value: 0.5: spec.ratio in body should be greater than or equal to 0.75"
    ])
  })

  it("required fields, at the root and nested", () => {
    const schema = objectWith({ field: objectWith({ nested: {} }, ["nested"]) }, ["field"])
    expect(texts({ test: "a" }, schema)).toEqual(["field: Required value"])
    expect(texts({ field: {} }, schema)).toEqual(["field.nested: Required value"])
    const [cause] = OpenApiValidation.validate({ spec: {} }, spec({ cronSpec: { type: "string" } }, ["cronSpec"]))
    expect(cause).toEqual({ reason: "FieldValueRequired", field: "spec.cronSpec", message: "Required value" })
  })

  it("type errors name the JSON type found", () => {
    const [cause] = OpenApiValidation.validate({ spec: { image: 42 } }, spec({ image: { type: "string" } }))
    expect(cause).toEqual({
      reason: "FieldValueTypeInvalid",
      field: "spec.image",
      message: "Invalid value: \"integer\": spec.image in body must be of type string: \"integer\""
    })
    const schema = objectWith({ field: { type: "object" } })
    expect(texts({ field: "foo" }, schema)).toEqual([
      "field: Invalid value: \"string\": field in body must be of type object: \"string\""
    ])
    expect(texts({ field: true }, schema)).toEqual([
      "field: Invalid value: \"boolean\": field in body must be of type object: \"boolean\""
    ])
    expect(texts({ field: 1.2 }, schema)).toEqual([
      "field: Invalid value: \"number\": field in body must be of type object: \"number\""
    ])
    expect(texts({ field: [] }, schema)).toEqual([
      "field: Invalid value: \"array\": field in body must be of type object: \"array\""
    ])
  })

  it("integers are numbers, but fractions are not integers", () => {
    expect(texts({ spec: { n: 3 } }, spec({ n: { type: "number" } }))).toEqual([])
    expect(texts({ spec: { n: 1.5 } }, spec({ n: { type: "integer" } }))).toEqual([
      "spec.n: Invalid value: \"number\": spec.n in body must be of type integer: \"number\""
    ])
  })

  it("null is rejected unless nullable", () => {
    expect(texts({ field: null }, objectWith({ field: { type: "object" } }))).toEqual([
      "field: Invalid value: \"null\": field in body must be of type object: \"null\""
    ])
    expect(texts({ field: null }, objectWith({ field: { type: "object", nullable: true } }))).toEqual([])
    expect(texts({ field: null }, objectWith({ field: { nullable: true } }))).toEqual([])
  })

  it("enum: Unsupported value with the supported values quoted, numbers as JSON", () => {
    const schema = objectWith({
      field: objectWith({
        nestedint: { type: "integer", enum: [1, 2] },
        nestedstring: { type: "string", enum: ["a", "b"] }
      }, ["nestedint", "nestedstring"])
    })
    expect(texts({ field: {} }, schema)).toEqual(["field.nestedint: Required value", "field.nestedstring: Required value"])
    expect(texts({ field: { nestedint: "x", nestedstring: true } }, schema)).toEqual([
      "field.nestedint: Invalid value: \"string\": field.nestedint in body must be of type integer: \"string\"",
      "field.nestedint: Unsupported value: \"x\": supported values: \"1\", \"2\"",
      "field.nestedstring: Invalid value: \"boolean\": field.nestedstring in body must be of type string: \"boolean\"",
      "field.nestedstring: Unsupported value: true: supported values: \"a\", \"b\""
    ])
    const [cause] = OpenApiValidation.validate({ spec: { type: "x" } }, spec({ type: { type: "string", enum: ["a", "b"] } }))
    expect(cause?.reason).toBe("FieldValueNotSupported")
  })

  it("string lengths: maxLength is Too long without the value, minLength is Invalid", () => {
    const [tooLong] = OpenApiValidation.validate({ fieldX: "abc" }, objectWith({ fieldX: { type: "string", maxLength: 2 } }))
    expect(tooLong).toEqual({ reason: "FieldValueTooLong", field: "fieldX", message: "Too long: may not be more than 2 bytes" })
    expect(texts({ spec: { issuer: "" } }, spec({ issuer: { type: "string", minLength: 1 } }))).toEqual([
      "spec.issuer: Invalid value: \"\": spec.issuer in body should be at least 1 chars long"
    ])
    // lengths count characters (runes), not UTF-16 units
    expect(texts({ fieldX: "éé" }, objectWith({ fieldX: { type: "string", maxLength: 2 } }))).toEqual([])
  })

  it("pattern, with item indexes in the path", () => {
    const schema = spec({
      constants: { type: "array", items: objectWith({ name: { type: "string", pattern: "^[a-zA-Z][_a-zA-Z0-9]*$" } }) }
    })
    expect(texts({ spec: { constants: [{ name: "ok" }, { name: "cannot have spaces" }] } }, schema)).toEqual([
      "spec.constants[1].name: Invalid value: \"cannot have spaces\": spec.constants[1].name in body should match '^[a-zA-Z][_a-zA-Z0-9]*$'"
    ])
  })

  it("an invalid pattern reports the regexp error", () => {
    const [message] = texts({ field: "foo" }, objectWith({ field: { type: "string", pattern: "+" } }))
    expect(message).toMatch(/^field: Invalid value: "foo": field in body should match '\+, but pattern is invalid: error parsing regexp: .+'$/)
  })

  it("items counts: maxItems is Too many, minItems is Invalid with the count", () => {
    const [tooMany] = OpenApiValidation.validate({ fieldX: ["a", "b", "c"] }, objectWith({ fieldX: { type: "array", maxItems: 2 } }))
    expect(tooMany).toEqual({ reason: "FieldValueTooMany", field: "fieldX", message: "Too many: 3: must have at most 2 items" })
    expect(texts({ spec: { items: [] } }, spec({ items: { type: "array", minItems: 1 } }))).toEqual([
      "spec.items: Invalid value: 0: spec.items in body should have at least 1 items"
    ])
  })

  it("property counts", () => {
    const schema = objectWith({ fieldX: { type: "object", maxProperties: 2, minProperties: 1 } })
    expect(texts({ fieldX: { a: true, b: true, c: true } }, schema)).toEqual(["fieldX: Too many: 3: must have at most 2 items"])
    expect(texts({ fieldX: {} }, schema)).toEqual(["fieldX: Invalid value: 0: fieldX in body should have at least 1 properties"])
  })

  it("uniqueItems and multipleOf", () => {
    expect(texts({ spec: { x: [1, 2, 1] } }, spec({ x: { type: "array", uniqueItems: true } }))).toEqual([
      "spec.x: Invalid value: \"\": spec.x in body shouldn't contain duplicates"
    ])
    expect(texts({ spec: { n: 7 } }, spec({ n: { type: "integer", multipleOf: 5 } }))).toEqual([
      "spec.n: Invalid value: 7: spec.n in body should be a multiple of 5"
    ])
    expect(texts({ spec: { n: 0.3 } }, spec({ n: { type: "number", multipleOf: 0.1 } }))).toEqual([])
    expect(texts({ spec: { n: 0.25 } }, spec({ n: { type: "number", multipleOf: 0.5 } }))).toEqual([
      "spec.n: Invalid value: 0.25: spec.n in body should be a multiple of 0.5"
    ])
  })

  it("additionalProperties: map values are validated under the key", () => {
    const schema = spec({ labels: { type: "object", additionalProperties: { type: "string" } } })
    expect(texts({ spec: { labels: { a: "x", b: 2 } } }, schema)).toEqual([
      "spec.labels.b: Invalid value: \"integer\": spec.labels.b in body must be of type string: \"integer\""
    ])
  })

  it("x-kubernetes-int-or-string accepts integers and strings only", () => {
    const schema = objectWith({ field: { "x-kubernetes-int-or-string": true } })
    expect(texts({ field: 42 }, schema)).toEqual([])
    expect(texts({ field: "foo" }, schema)).toEqual([])
    expect(texts({ field: null }, schema)).toEqual([
      "field: Invalid value: \"null\": field in body must be of type integer,string: \"null\""
    ])
    expect(texts({ field: 1.2 }, schema)).toEqual([
      "field: Invalid value: \"number\": field in body must be of type integer,string: \"number\""
    ])
    expect(texts({ field: {} }, schema)).toEqual([
      "field: Invalid value: \"object\": field in body must be of type integer,string: \"object\""
    ])
  })

  it("anyOf reports <nil> and the closest alternative's errors", () => {
    const schema = objectWith({
      field: { nullable: true, "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string" }] }
    })
    expect(texts({ field: null }, schema)).toEqual([])
    expect([...texts({ field: true }, schema)].sort()).toEqual([
      "<nil>: Invalid value: \"\": \"field\" must validate at least one schema (anyOf)",
      "field: Invalid value: \"boolean\": field in body must be of type integer,string: \"boolean\"",
      "field: Invalid value: \"boolean\": field in body must be of type integer: \"boolean\""
    ])
  })

  it("allOf reports each failing part and that none validated", () => {
    const schema = objectWith({
      field: { nullable: true, "x-kubernetes-int-or-string": true, allOf: [{ anyOf: [{ type: "integer" }, { type: "string" }] }] }
    })
    expect([...texts({ field: [] }, schema)].sort()).toEqual([
      "<nil>: Invalid value: \"\": \"field\" must validate all the schemas (allOf). None validated",
      "<nil>: Invalid value: \"\": \"field\" must validate at least one schema (anyOf)",
      "field: Invalid value: \"array\": field in body must be of type integer,string: \"array\"",
      "field: Invalid value: \"array\": field in body must be of type integer: \"array\""
    ])
  })

  it("oneOf and not", () => {
    const source = {
      type: "object" as const,
      properties: { persistentVolumeClaimName: { type: "string" as const }, volumeSnapshotContentName: { type: "string" as const } },
      oneOf: [{ required: ["persistentVolumeClaimName"] }, { required: ["volumeSnapshotContentName"] }]
    }
    const schema = spec({ source })
    expect(texts({ spec: { source: { persistentVolumeClaimName: "pvc", volumeSnapshotContentName: "vsc" } } }, schema)).toEqual([
      "<nil>: Invalid value: \"\": \"spec.source\" must validate one and only one schema (oneOf). Found 2 valid alternatives"
    ])
    expect(texts({ spec: { source: {} } }, schema)).toEqual([
      "<nil>: Invalid value: \"\": \"spec.source\" must validate one and only one schema (oneOf). Found none valid",
      "spec.source.persistentVolumeClaimName: Required value"
    ])
    const not = spec({ mode: { type: "string", not: { enum: ["forbidden"] } } })
    expect(texts({ spec: { mode: "forbidden" } }, not)).toEqual([
      "<nil>: Invalid value: \"\": \"spec.mode\" must not validate the schema (not)"
    ])
  })

  it("formats the apiserver knows are checked; int32 and others are not", () => {
    const schema = spec({
      at: { type: "string", format: "date-time" },
      day: { type: "string", format: "date" },
      id: { type: "string", format: "uuid" },
      count: { type: "integer", format: "int32" }
    })
    const [cause] = OpenApiValidation.validate({ spec: { at: "yesterday" } }, schema)
    expect(cause).toEqual({
      reason: "FieldValueTypeInvalid",
      field: "spec.at",
      message: "Invalid value: \"yesterday\": spec.at in body must be of type date-time: \"yesterday\""
    })
    const ok = { at: "2024-05-01T10:00:00Z", day: "2024-02-29", id: "123e4567-e89b-12d3-a456-426614174000", count: 2 ** 40 }
    expect(texts({ spec: ok }, schema)).toEqual([])
    expect(texts({ spec: { day: "2023-02-29" } }, schema)).toEqual([
      "spec.day: Invalid value: \"2023-02-29\": spec.day in body must be of type date: \"2023-02-29\""
    ])
  })

  it("reports several causes at once, in kube-openapi's order", () => {
    const schema = spec({
      replicas: { type: "integer", maximum: 10 },
      image: { type: "string" },
      cronSpec: { type: "string" }
    }, ["cronSpec"])
    expect(texts({ spec: { replicas: 15, image: 1 } }, schema)).toEqual([
      "spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10",
      "spec.image: Invalid value: \"integer\": spec.image in body must be of type string: \"integer\"",
      "spec.cronSpec: Required value"
    ])
  })

  it("errors of a nested value hang below a given field", () => {
    expect(OpenApiValidation.validate("x", { type: "integer" }, { field: "spec.versions[0].default" }).map(FieldCauses.causeText)).toEqual([
      "spec.versions[0].default: Invalid value: \"string\":  in body must be of type integer: \"string\""
    ])
  })
})

describe("FieldCauses.invalidMessage", () => {
  const replicas = FieldCauses.invalid("spec.replicas", 15, "spec.replicas in body should be less than or equal to 10")
  const cron = FieldCauses.required("spec.cronSpec")

  it("one cause inline", () => {
    expect(FieldCauses.invalidMessage("CronTab.stable.example.com", "my-new-cron-object", [replicas])).toBe(
      "CronTab.stable.example.com \"my-new-cron-object\" is invalid: spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10"
    )
  })

  it("several causes as a bracketed list, duplicates once", () => {
    expect(FieldCauses.invalidMessage("CronTab.stable.example.com", "x", [cron, replicas, cron])).toBe(
      "CronTab.stable.example.com \"x\" is invalid: [spec.cronSpec: Required value, spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10]"
    )
  })

  it("the Status body is a 422 Invalid with details", () => {
    expect(FieldCauses.invalidStatus({ group: "stable.example.com", kind: "CronTab" }, "x", [cron])).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "CronTab.stable.example.com \"x\" is invalid: spec.cronSpec: Required value",
      reason: "Invalid",
      details: { name: "x", group: "stable.example.com", kind: "CronTab", causes: [cron] },
      code: 422
    })
  })
})

describe("ObjectMetaValidation.validateObjectMeta", () => {
  it("name must be a DNS subdomain", () => {
    expect(ObjectMetaValidation.validateObjectMeta({ name: "Bad_Name", namespace: "default" }, { namespaced: true }).map(FieldCauses.causeText)).toEqual([
      "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ])
  })

  it("a name or generateName is required; generateName may end with a dash", () => {
    expect(ObjectMetaValidation.validateObjectMeta({ namespace: "default" }, { namespaced: true }).map(FieldCauses.causeText)).toEqual([
      "metadata.name: Required value: name or generateName is required"
    ])
    expect(ObjectMetaValidation.validateObjectMeta({ name: "web-x1", generateName: "web-", namespace: "default" }, { namespaced: true })).toEqual([])
  })

  it("namespace by scope", () => {
    expect(ObjectMetaValidation.validateObjectMeta({ name: "a" }, { namespaced: true }).map(FieldCauses.causeText)).toEqual([
      "metadata.namespace: Required value"
    ])
    expect(ObjectMetaValidation.validateObjectMeta({ name: "a", namespace: "default" }, { namespaced: false }).map(FieldCauses.causeText)).toEqual([
      "metadata.namespace: Forbidden: not allowed on this type"
    ])
  })

  it("label keys and values", () => {
    const causes = ObjectMetaValidation.validateObjectMeta({ name: "a", labels: { "bad key": "ok", color: "$COLOR_TEST" } }, { namespaced: false })
    expect(causes.map(FieldCauses.causeText)).toEqual([
      "metadata.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      "metadata.labels: Invalid value: \"$COLOR_TEST\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ])
    const long = ObjectMetaValidation.validateObjectMeta({ name: "a", labels: { app: "x".repeat(64) } }, { namespaced: false })
    expect(long.map(FieldCauses.causeText)).toEqual([`metadata.labels: Invalid value: "${"x".repeat(64)}": must be no more than 63 characters`])
  })

  it("annotation keys and total size", () => {
    const bad = ObjectMetaValidation.validateObjectMeta({ name: "a", annotations: { "a/b/c": "x" } }, { namespaced: false })
    expect(bad[0]?.field).toBe("metadata.annotations")
    expect(bad[0]?.message).toMatch(/^Invalid value: "a\/b\/c": a qualified name must consist of/)
    const huge = ObjectMetaValidation.validateObjectMeta({ name: "a", annotations: { big: "x".repeat(262145) } }, { namespaced: false })
    expect(huge.map(FieldCauses.causeText)).toEqual(["metadata.annotations: Too long: may not be more than 262144 bytes"])
  })
})

describe("SchemaValidation.validateCustomResource", () => {
  const rules = {
    group: "stable.example.com",
    version: "v1",
    kind: "CronTab",
    namespaced: true,
    schema: spec({
      replicas: { type: "integer", maximum: 10 },
      tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
      ports: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        items: objectWith({ name: { type: "string" }, port: { type: "integer" } }, ["name"])
      },
      routes: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["host", "port"],
        items: objectWith({ host: { type: "string" }, port: { type: "integer" } }, ["host", "port"])
      },
      template: { type: "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true }
    })
  } as const
  const base = { apiVersion: "stable.example.com/v1", kind: "CronTab", metadata: { name: "x", namespace: "default" } }

  it("a valid object has no causes", () => {
    expect(SchemaValidation.validateCustomResource({ ...base, spec: { replicas: 1 } }, rules)).toEqual([])
  })

  it("kind and apiVersion must match the resource, alone", () => {
    const causes = SchemaValidation.validateCustomResource({ ...base, kind: "Other", apiVersion: "stable.example.com/v2", spec: { replicas: 99 } }, rules)
    expect(causes.map(FieldCauses.causeText)).toEqual([
      "kind: Invalid value: \"Other\": must be CronTab",
      "apiVersion: Invalid value: \"stable.example.com/v2\": must be stable.example.com/v1"
    ])
  })

  it("list-type set: the repeated item is a Duplicate value", () => {
    const [cause] = SchemaValidation.validateCustomResource({ ...base, spec: { tags: ["a", "b", "a", "a"] } }, rules)
    expect(cause).toEqual({ reason: "FieldValueDuplicate", field: "spec.tags[2]", message: "Duplicate value: \"a\"" })
  })

  it("list-type map: duplicated keys, printed as Go maps", () => {
    const one = SchemaValidation.validateCustomResource(
      { ...base, spec: { ports: [{ name: "notUnique", port: 1 }, { name: "notUnique", port: 2 }] } },
      rules
    )
    expect(one.map(FieldCauses.causeText)).toEqual([
      "spec.ports[1]: Duplicate value: map[string]interface {}{\"name\":\"notUnique\"}"
    ])
    const two = SchemaValidation.validateCustomResource(
      { ...base, spec: { routes: [{ host: "a", port: 80 }, { host: "a", port: 443 }, { port: 80, host: "a" }] } },
      rules
    )
    expect(two.map(FieldCauses.causeText)).toEqual([
      "spec.routes[2]: Duplicate value: map[string]interface {}{\"host\":\"a\", \"port\":80}"
    ])
  })

  it("embedded resources need apiVersion and kind, and valid metadata", () => {
    const causes = SchemaValidation.validateCustomResource({ ...base, spec: { template: { metadata: { name: "a/b" } } } }, rules)
    expect(causes.map(FieldCauses.causeText)).toEqual([
      "spec.template.apiVersion: Required value",
      "spec.template.kind: Required value",
      "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'"
    ])
  })

  it("embedded resources and set or map lists are found below list items and map values too", () => {
    const nested = {
      ...rules,
      schema: spec({
        jobs: {
          type: "array",
          items: objectWith({ template: { type: "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true } })
        },
        groups: {
          type: "object",
          additionalProperties: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } }
        }
      })
    } as const
    const causes = SchemaValidation.validateCustomResource(
      { ...base, spec: { jobs: [{ template: { apiVersion: "v1", kind: "Pod" } }, { template: { kind: "Pod" } }], groups: { a: ["x", "x"] } } },
      nested
    )
    expect(causes.map(FieldCauses.causeText)).toEqual([
      "spec.jobs[1].template.apiVersion: Required value",
      "spec.groups[a][1]: Duplicate value: \"x\""
    ])
  })

  it("metadata and schema causes together", () => {
    const causes = SchemaValidation.validateCustomResource(
      { ...base, metadata: { name: "X", namespace: "default" }, spec: { replicas: 11 } },
      rules
    )
    expect(causes.map((c) => c.field)).toEqual(["metadata.name", "spec.replicas"])
  })

  it("scale replicas must be a non-negative integer", () => {
    const withScale = { ...rules, scale: { specReplicasPath: ".spec.replicas", statusReplicasPath: ".status.replicas" } }
    expect(SchemaValidation.validateCustomResource({ ...base, spec: { replicas: -1 } }, withScale).map(FieldCauses.causeText)).toEqual([
      ".spec.replicas: Invalid value: -1: should be a non-negative integer"
    ])
  })
})
