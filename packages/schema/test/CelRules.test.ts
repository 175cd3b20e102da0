import { describe, expect, it } from "vitest"
import * as CelRules from "../src/CelRules.ts"

const request = 3 * 1024 * 1024

describe("CelRules sizes, as kube-apiserver 1.32 estimates them for rule costs", () => {
  it("bounds a string by maxLength in bytes (four per code point), by its longest enum value, or by its format", () => {
    expect(CelRules.maxElements({ type: "string", maxLength: 63 })).toBe(252)
    expect(CelRules.maxElements({ type: "string", format: "byte", maxLength: 63 })).toBe(63)
    expect(CelRules.maxElements({ type: "string", enum: ["Always", "IfNotPresent", "Never"] })).toBe(12)
    expect(CelRules.maxElements({ type: "string", format: "date-time", maxLength: 5 })).toBe(32)
    expect(CelRules.maxElements({ type: "string", format: "date" })).toBe(12)
    expect(CelRules.maxElements({ type: "string" })).toBe(request - 2)
  })

  it("fits as many list items or map entries into a request as their smallest JSON allows", () => {
    expect(CelRules.maxElements({ type: "array", items: { type: "integer" } })).toBe(Math.floor((request - 2) / 2))
    expect(CelRules.maxElements({ type: "array", maxItems: 7, items: { type: "integer" } })).toBe(7)
    // An item's required properties without defaults are in its smallest form: {"name":""}.
    const named = { type: "object", required: ["name", "port"], properties: { name: { type: "string" }, port: { type: "integer", default: 80 } } } as const
    expect(CelRules.maxElements({ type: "array", items: named })).toBe(Math.floor((request - 2) / (2 + 4 + 2 + 4 + 1)))
    // A map entry takes its key's quotes, a colon and a comma: 6 bytes and its value.
    expect(CelRules.maxElements({ type: "object", additionalProperties: { type: "boolean" } })).toBe(Math.floor((request - 2) / 10))
  })

  it("counts a value under an unbounded list as often as its smallest form fits into a request", () => {
    expect(CelRules.unboundedCardinality({ type: "object" })).toBe(Math.floor(request / 3))
    expect(CelRules.unboundedCardinality({ type: "string", format: "date-time" })).toBe(Math.floor(request / 22))
    expect(CelRules.unboundedCardinality({ "x-kubernetes-int-or-string": true })).toBe(Math.floor(request / 2))
  })
})
