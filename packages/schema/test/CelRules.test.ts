import { describe, expect, it } from "vitest"
import * as CelRules from "../src/CelRules.ts"
import type { JsonSchemaProps } from "../src/JsonSchemaProps.ts"

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

describe("CelRules costs, in cel-go's units as kube-apiserver 1.32 estimates them", () => {
  const cost = (rule: string, schema: JsonSchemaProps) => {
    const compiled = CelRules.compile({ rule }, schema)
    if ("detail" in compiled) throw new Error(compiled.detail)
    return compiled.cost
  }
  const match = {
    type: "object",
    properties: { mode: { type: "string", enum: ["ANY", "EDGE", "SPECIAL"] }, special: { type: "object" } }
  } as const
  const onlyInSpecialMode = "has(self.mode) ? ((self.mode == 'SPECIAL') ? has(self.special) : !has(self.special)) : !has(self.special)"

  it("charges a presence test its operand, a conditional its condition and the dearer branch, a negation one, a comparison a tenth of the shorter side", () => {
    // A field allowed in one mode alone, as service meshes' CRDs check it: has() 1 (kube-apiserver
    // charges the test nothing), the comparison 2 + 1, a negated has() 2; 1 + (3 + 2) in all.
    expect(cost(onlyInSpecialMode, match)).toBe(6)
    expect(cost("!has(self.special)", match)).toBe(2)
    // Two negated tests and a size compared: 2 + 2 + (2 + 1 + 1).
    const rewrites = { type: "object", properties: { key: { type: "string" }, rewrite: { type: "array", items: { type: "object" } } } } as const
    expect(cost("!has(self.key) || !has(self.rewrite) || size(self.rewrite) == 0", rewrites)).toBe(8)
    // A string bounded at 100 bytes compared with another: ten for the traversal, two for the reads.
    const names = { type: "object", properties: { a: { type: "string", maxLength: 25 }, b: { type: "string", maxLength: 25 } } } as const
    expect(cost("self.a == self.b", names)).toBe(4 + 10)
    expect(cost("self.a == ''", names)).toBe(2)
  })

  it("keeps such a rule under every item of an unbounded list within the per-rule budget", () => {
    // Under a list with no maxItems the rule runs once per item that fits into a request.
    expect(cost(onlyInSpecialMode, match) *
      CelRules.unboundedCardinality(match)).toBeLessThanOrEqual(CelRules.ruleCostLimit)
  })
})

