import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as Selectors from "../src/Selectors.ts"

describe("label selectors", () => {
  it("a selector kube-apiserver refuses is a 400 with the parser's message", () => {
    const parsed = Selectors.parseLabelSelector("app in (a")
    expect(Result.isFailure(parsed) && [parsed.failure.code, parsed.failure.message]).toEqual([
      400,
      "unable to parse requirement: found '', expected: ')'"
    ])
  })

  it("matches what it parses", () => {
    const parsed = Result.getOrThrow(Selectors.parseLabelSelector("app=web,!legacy"))
    expect([Selectors.matchesLabels(parsed, { app: "web" }), Selectors.matchesLabels(parsed, { app: "web", legacy: "" })])
      .toEqual([true, false])
  })
})

describe("field selectors", () => {
  const supported = [...Selectors.commonFields, "status.phase"]

  it("matches = and != on supported fields, absent fields reading as empty", () => {
    const selector = Result.getOrThrow(Selectors.parseFieldSelector("metadata.name=web,status.phase!=Running", supported))
    expect(Selectors.matchesFields(selector, { metadata: { name: "web" }, status: { phase: "Pending" } })).toBe(true)
    expect(Selectors.matchesFields(selector, { metadata: { name: "web" }, status: { phase: "Running" } })).toBe(false)
    expect(Selectors.matchesFields(selector, { metadata: { name: "web" } })).toBe(true)
  })

  it("unescapes values", () => {
    const selector = Result.getOrThrow(Selectors.parseFieldSelector("metadata.name=a\\,b", supported))
    expect(Selectors.matchesFields(selector, { metadata: { name: "a,b" } })).toBe(true)
  })

  it("rejects unsupported fields with kube's message", () => {
    const parsed = Selectors.parseFieldSelector("spec.foo=1", supported)
    expect(Result.isFailure(parsed) && parsed.failure.message).toBe("field label not supported: spec.foo")
  })
})
