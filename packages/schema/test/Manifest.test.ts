/**
 * Checking a manifest without a cluster: the same defaults, pruning, OpenAPI checks and CEL rules
 * the embedded API server applies (whose HTTP tests hold them to kube-apiserver 1.32's answers).
 */
import { describe, expect, it } from "vitest"
import { Manifest } from "../src/index.ts"

const schema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      required: ["min", "max"],
      properties: {
        min: { type: "integer", minimum: 0 },
        max: { type: "integer" },
        mode: { type: "string", default: "fast", enum: ["fast", "safe"] }
      },
      "x-kubernetes-validations": [
        { rule: "self.min <= self.max", message: "min must not exceed max" },
        { rule: "self.mode == oldSelf.mode", message: "mode is immutable" }
      ]
    }
  }
} as const

describe("Manifest.check", () => {
  it("accepts a valid manifest, as stored: defaulted, with unknown fields pruned and named", () => {
    const checked = Manifest.check(schema, { spec: { min: 1, max: 2, extra: true } })
    expect(checked.causes).toEqual([])
    expect(checked.object).toEqual({ spec: { min: 1, max: 2, mode: "fast" } })
    expect(checked.unknownFields).toEqual(["spec.extra"])
  })

  it("names what the schema refuses, and what the CEL rules refuse once the shape is right", () => {
    expect(Manifest.check(schema, { spec: { min: -1, max: 2 } }).causes).toEqual([
      { reason: "FieldValueInvalid", field: "spec.min", message: "Invalid value: -1: spec.min in body should be greater than or equal to 0" }
    ])
    expect(Manifest.check(schema, { spec: { min: 3, max: 2 } }).causes).toEqual([
      { reason: "FieldValueInvalid", field: "spec", message: 'Invalid value: "object": min must not exceed max' }
    ])
    // A missing field blocks the rules, which could not read it; the API server says so, and so does check.
    expect(Manifest.check(schema, { spec: { min: 3 } }).causes.map((c) => c.field)).toEqual(["spec.max", "<nil>"])
  })

  it("runs transition rules against the object it replaces", () => {
    const old = { spec: { min: 1, max: 2, mode: "safe" } }
    expect(Manifest.check(schema, { spec: { min: 1, max: 2, mode: "safe" } }, old).causes).toEqual([])
    expect(Manifest.check(schema, { spec: { min: 1, max: 2, mode: "fast" } }, old).causes).toEqual([
      { reason: "FieldValueInvalid", field: "spec", message: 'Invalid value: "object": mode is immutable' }
    ])
  })

  it("ratchets: an update leaving a value that the schema now refuses as it was is accepted; changing it is not", () => {
    const old = { spec: { min: -1, max: 2, mode: "safe" } }
    expect(Manifest.check(schema, { spec: { min: -1, max: 5, mode: "safe" } }, old).causes).toEqual([])
    expect(Manifest.check(schema, { spec: { min: -2, max: 5, mode: "safe" } }, old).causes.map((c) => c.field)).toEqual(["spec.min"])
  })

  it("words an overload a rule meets only when it runs as kube-apiserver does (an int-or-string compared to an int)", () => {
    const procs = {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: {
            procs: { "x-kubernetes-int-or-string": true, "x-kubernetes-validations": [{ rule: "self > 0 || self in ['auto']", message: "must be positive or auto" }] }
          }
        }
      }
    } as const
    expect(Manifest.check(procs, { spec: { procs: "auto" } }).causes).toEqual([])
    expect(Manifest.check(procs, { spec: { procs: "foo" } }).causes.map((c) => `${c.field}: ${c.message}`)).toEqual([
      `spec.procs: Invalid value: "": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: must be positive or auto`
    ])
  })

  it("ratchets a failed anyOf with the value that failed it, though kube reports it at <nil>", () => {
    const quantity = {
      type: "object",
      properties: { spec: { type: "object", properties: { qty: { anyOf: [{ type: "integer" }, { type: "string" }] } } } }
    } as const
    const messages = (old: unknown) => Manifest.check(quantity, { spec: { qty: 1.5 } }, old).causes.map((c) => `${c.field}: ${c.message}`)
    expect(messages({ spec: { qty: 1 } })).toEqual(messages(undefined))
    expect(messages(undefined)).toContain('<nil>: Invalid value: "": "spec.qty" must validate at least one schema (anyOf)')
    expect(messages({ spec: { qty: 1.5 } })).toEqual([])
  })
})
