import { describe, expect, it } from "vitest"
import * as Defaulting from "../src/Defaulting.ts"
import type { JsonSchemaProps } from "../src/JsonSchemaProps.ts"

const object = (properties: Record<string, JsonSchemaProps>, extra: Partial<JsonSchemaProps> = {}): JsonSchemaProps => ({
  type: "object",
  properties,
  ...extra
})

describe("Defaulting.apply", () => {
  const schema = object({
    spec: object({
      replicas: { type: "integer", default: 1 },
      image: { type: "string", default: "nginx" },
      strategy: object({ type: { type: "string", default: "Rolling" }, maxSurge: { type: "integer", default: 1 } }),
      resources: object({ cpu: { type: "string", default: "100m" } }, { default: {} })
    })
  })

  it("fills missing fields of objects that exist", () => {
    expect(Defaulting.apply({ spec: {} }, schema)).toEqual({
      spec: { replicas: 1, image: "nginx", resources: { cpu: "100m" } }
    })
  })

  it("never overrides given values, falsy ones included", () => {
    expect(Defaulting.apply({ spec: { replicas: 0, image: "", resources: { cpu: "2" } } }, schema)).toEqual({
      spec: { replicas: 0, image: "", resources: { cpu: "2" } }
    })
  })

  it("does not create objects that are absent, unless they have a default themselves", () => {
    // strategy has no default: its fields are only defaulted when strategy is given
    expect(Defaulting.apply({ spec: { strategy: {} } }, schema)).toEqual({
      spec: { replicas: 1, image: "nginx", strategy: { type: "Rolling", maxSurge: 1 }, resources: { cpu: "100m" } }
    })
    expect(Defaulting.apply({}, schema)).toEqual({})
  })

  it("defaults list items and their fields", () => {
    const lists = object({
      spec: object({
        ports: { type: "array", items: object({ name: { type: "string" }, protocol: { type: "string", default: "TCP" } }) },
        names: { type: "array", items: { type: "string", default: "unnamed" } }
      })
    })
    expect(Defaulting.apply({ spec: { ports: [{ name: "a" }, { name: "b", protocol: "UDP" }], names: ["x", null] } }, lists)).toEqual({
      spec: { ports: [{ name: "a", protocol: "TCP" }, { name: "b", protocol: "UDP" }], names: ["x", "unnamed"] }
    })
  })

  it("defaults map values", () => {
    const maps = object({
      spec: object({ limits: { type: "object", additionalProperties: object({ max: { type: "integer", default: 10 } }) } })
    })
    expect(Defaulting.apply({ spec: { limits: { a: {}, b: { max: 3 } } } }, maps)).toEqual({
      spec: { limits: { a: { max: 10 }, b: { max: 3 } } }
    })
  })

  it("a null that is not nullable takes the default, or is dropped without one", () => {
    const nulls = object({
      spec: object({
        replicas: { type: "integer", default: 1 },
        paused: { type: "boolean" },
        note: { type: "string", nullable: true, default: "n" }
      })
    })
    expect(Defaulting.apply({ spec: { replicas: null, paused: null, note: null } }, nulls)).toEqual({
      spec: { replicas: 1, note: null }
    })
  })

  it("defaults are copied, never shared between objects", () => {
    const shared = object({ spec: object({ tags: { type: "array", items: { type: "string" }, default: ["a"] } }) })
    const first = Defaulting.apply({ spec: {} }, shared) as { spec: { tags: Array<string> } }
    first.spec.tags.push("b")
    expect(Defaulting.apply({ spec: {} }, shared)).toEqual({ spec: { tags: ["a"] } })
  })

  it("fields below preserve-unknown-fields without a schema are left alone", () => {
    const free = object({ spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true } })
    expect(Defaulting.apply({ spec: { a: null, b: 1 } }, free)).toEqual({ spec: { a: null, b: 1 } })
  })

  it("copies nothing that needs no default: the value, or the parts a default did not touch, stay the same objects", () => {
    const defaulted = { metadata: { name: "a", managedFields: [{ manager: "m" }] }, spec: { replicas: 2, image: "x", resources: {} } }
    const again = Defaulting.apply(defaulted, schema)
    expect(again).toEqual({ ...defaulted, spec: { ...defaulted.spec, resources: { cpu: "100m" } } })
    expect(again.metadata).toBe(defaulted.metadata)
    const whole = { metadata: defaulted.metadata, spec: { replicas: 2, image: "x", resources: { cpu: "1" } }, items: [1] }
    expect(Defaulting.apply(whole, schema)).toBe(whole)
    // A null dropped from a list item copies the list, not the items beside it.
    const list = object({ items: { type: "array", items: object({ a: { type: "string" } }) } })
    const kept = { a: "x" }
    const fixed = Defaulting.apply({ items: [kept, { a: null }] }, list) as { items: Array<object> }
    expect(fixed).toEqual({ items: [{ a: "x" }, {}] })
    expect(fixed.items[0]).toBe(kept)
  })
})
