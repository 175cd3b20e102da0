import { describe, expect, it } from "vitest"
import type { JsonSchemaProps } from "../src/JsonSchemaProps.ts"
import * as Pruning from "../src/Pruning.ts"

const object = (properties: Record<string, JsonSchemaProps>, extra: Partial<JsonSchemaProps> = {}): JsonSchemaProps => ({
  type: "object",
  properties,
  ...extra
})

const typeMeta = { apiVersion: "stable.example.com/v1", kind: "CronTab" }

describe("Pruning.prune", () => {
  const schema = object({
    spec: object({
      replicas: { type: "integer" },
      items: { type: "array", items: object({ name: { type: "string" } }) }
    })
  })

  it("drops fields the schema does not declare and reports their paths", () => {
    const input = {
      ...typeMeta,
      metadata: { name: "x" },
      spec: { replicas: 1, foo: "bar", items: [{ name: "a", x: 1 }, { name: "b" }] },
      extra: true
    }
    const { unknownFields, value } = Pruning.prune(input, schema)
    expect(value).toEqual({ ...typeMeta, metadata: { name: "x" }, spec: { replicas: 1, items: [{ name: "a" }, { name: "b" }] } })
    expect(unknownFields).toEqual(["extra", "spec.foo", "spec.items[0].x"])
  })

  it("keeps apiVersion, kind and metadata at the root without declaring them", () => {
    const { unknownFields, value } = Pruning.prune({ ...typeMeta, metadata: { name: "x", labels: { a: "b" } } }, object({}))
    expect(value).toEqual({ ...typeMeta, metadata: { name: "x", labels: { a: "b" } } })
    expect(unknownFields).toEqual([])
  })

  it("metadata keeps ObjectMeta's fields only", () => {
    const { unknownFields, value } = Pruning.prune(
      {
        ...typeMeta,
        metadata: { name: "x", color: "red", ownerReferences: [{ apiVersion: "v1", kind: "A", name: "a", uid: "1", extra: 1 }] }
      },
      schema
    )
    expect(value.metadata).toEqual({ name: "x", ownerReferences: [{ apiVersion: "v1", kind: "A", name: "a", uid: "1" }] })
    expect(unknownFields).toEqual(["metadata.color", "metadata.ownerReferences[0].extra"])
  })

  it("keeps everything below x-kubernetes-preserve-unknown-fields at the root", () => {
    const preserving = object({ spec: object({ replicas: { type: "integer" } }) }, { "x-kubernetes-preserve-unknown-fields": true })
    const input = { ...typeMeta, metadata: { name: "x" }, spec: { replicas: 1, foo: 1 }, anything: { deep: [1] } }
    const { unknownFields, value } = Pruning.prune(input, preserving)
    // known fields are still pruned inside: spec declares its own properties and does not preserve
    expect(value).toEqual({ ...typeMeta, metadata: { name: "x" }, spec: { replicas: 1 }, anything: { deep: [1] } })
    expect(unknownFields).toEqual(["spec.foo"])
  })

  it("preserve-unknown-fields at a nested level keeps that subtree, and known fields inside are pruned", () => {
    const nested = object({
      spec: object({
        config: object({ known: object({ a: { type: "string" } }) }, { "x-kubernetes-preserve-unknown-fields": true }),
        other: object({ a: { type: "string" } })
      })
    })
    const input = {
      ...typeMeta,
      spec: {
        config: { free: { form: true }, known: { a: "x", b: "dropped" } },
        other: { a: "x", b: "dropped" }
      }
    }
    const { unknownFields, value } = Pruning.prune(input, nested)
    expect(value).toEqual({
      ...typeMeta,
      spec: { config: { free: { form: true }, known: { a: "x" } }, other: { a: "x" } }
    })
    expect(unknownFields).toEqual(["spec.config.known.b", "spec.other.b"])
  })

  it("preserve-unknown-fields on list items keeps their unknown fields", () => {
    const items = object({
      spec: object({
        steps: { type: "array", items: { type: "object", "x-kubernetes-preserve-unknown-fields": true } }
      })
    })
    const input = { ...typeMeta, spec: { steps: [{ run: "echo" }, { uses: "x", with: { a: 1 } }] } }
    expect(Pruning.prune(input, items)).toEqual({ value: input, unknownFields: [] })
  })

  it("map values are pruned against additionalProperties", () => {
    const maps = object({
      spec: object({
        byName: { type: "object", additionalProperties: object({ port: { type: "integer" } }) }
      })
    })
    const { unknownFields, value } = Pruning.prune({ ...typeMeta, spec: { byName: { a: { port: 1, host: "h" } } } }, maps)
    expect(value).toEqual({ ...typeMeta, spec: { byName: { a: { port: 1 } } } })
    expect(unknownFields).toEqual(["spec.byName.a.host"])
  })

  it("embedded resources keep apiVersion, kind and metadata, metadata limited to ObjectMeta", () => {
    const embedding = object({
      spec: object({
        template: object({ spec: object({ image: { type: "string" } }) }, { "x-kubernetes-embedded-resource": true })
      })
    })
    const input = {
      ...typeMeta,
      spec: {
        template: {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "p", bogus: 1 },
          spec: { image: "nginx", restart: "never" }
        }
      }
    }
    const { unknownFields, value } = Pruning.prune(input, embedding)
    expect(value).toEqual({
      ...typeMeta,
      spec: { template: { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { image: "nginx" } } }
    })
    expect(unknownFields).toEqual(["spec.template.spec.restart", "spec.template.metadata.bogus"])
  })

  it("no schema: only apiVersion, kind and metadata survive", () => {
    const { unknownFields, value } = Pruning.prune({ ...typeMeta, metadata: { name: "x" }, spec: { a: 1 } }, undefined)
    expect(value).toEqual({ ...typeMeta, metadata: { name: "x" } })
    expect(unknownFields).toEqual(["spec"])
  })

  it("does not mutate its input", () => {
    const input = { ...typeMeta, spec: { replicas: 1, foo: 1 } }
    Pruning.prune(input, schema)
    expect(input.spec).toEqual({ replicas: 1, foo: 1 })
  })
})

describe("Pruning.pruneValue", () => {
  it("prunes a nested value; metadata is an ordinary field there", () => {
    expect(Pruning.pruneValue({ a: 1, metadata: { x: 1 } }, object({ a: { type: "integer" } }))).toEqual({
      value: { a: 1 },
      unknownFields: ["metadata"]
    })
  })
})

describe("fieldValidation messages", () => {
  it("Warn: one warning per unknown field", () => {
    expect(Pruning.unknownFieldWarning("spec.foo")).toBe("unknown field \"spec.foo\"")
  })

  it("Strict: one BadRequest message listing them all", () => {
    expect(Pruning.strictDecodingError(["spec.foo"])).toBe("strict decoding error: unknown field \"spec.foo\"")
    expect(Pruning.strictDecodingError(["metadata.bar", "spec.foo"])).toBe(
      "strict decoding error: unknown field \"metadata.bar\", unknown field \"spec.foo\""
    )
  })
})

describe("Pruning.omitEmptyMeta", () => {
  it("leaves out the metadata values Go's ObjectMeta omits when empty, and keeps the rest", () => {
    const metadata = {
      name: "x", generateName: "", namespace: "", uid: null, generation: 0, deletionGracePeriodSeconds: 0,
      labels: {}, annotations: {}, finalizers: [], ownerReferences: [], managedFields: [], deletionTimestamp: null
    }
    expect(Pruning.omitEmptyMeta({ ...typeMeta, metadata })).toEqual({ ...typeMeta, metadata: { name: "x", deletionGracePeriodSeconds: 0 } })
  })

  it("answers the same object when nothing is empty", () => {
    const object = { ...typeMeta, metadata: { name: "x", labels: { a: "b" }, finalizers: ["f"] }, spec: { tags: [], extra: {} } }
    expect(Pruning.omitEmptyMeta(object)).toBe(object)
  })

  it("applies on write to a custom resource's metadata and an embedded resource's", () => {
    const schema = object({ spec: object({ template: { type: "object", "x-kubernetes-embedded-resource": true, properties: {} } }) })
    const { value } = Pruning.prune({
      ...typeMeta,
      metadata: { name: "x", labels: {}, finalizers: [] },
      spec: { template: { apiVersion: "v1", kind: "Pod", metadata: { name: "p", annotations: {} } } }
    }, schema)
    expect(value).toEqual({ ...typeMeta, metadata: { name: "x" }, spec: { template: { apiVersion: "v1", kind: "Pod", metadata: { name: "p" } } } })
  })
})
