import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as Selectors from "../src/Selectors.ts"

const labels = (selector: string) => Result.getOrThrow(Selectors.parseLabelSelector(selector))

describe("label selectors", () => {
  it.each([
    ["app=web", { app: "web" }, true],
    ["app==web", { app: "db" }, false],
    ["app!=web", {}, true],
    ["app!=web", { app: "web" }, false],
    ["tier in (a, b)", { tier: "b" }, true],
    ["tier in (a,b)", {}, false],
    ["tier notin (a,b)", {}, true],
    ["tier notin (a,b)", { tier: "a" }, false],
    ["app", { app: "" }, true],
    ["!app", { app: "x" }, false],
    ["app=web,!legacy,env in (prod)", { app: "web", env: "prod" }, true],
    ["example.com/owner=team-a", { "example.com/owner": "team-a" }, true],
    ["count>2", { count: "3" }, true],
    ["count<2", { count: "3" }, false],
    ["", { anything: "x" }, true]
  ] as const)("%s on %j is %s", (selector, set, expected) => {
    expect(Selectors.matchesLabels(labels(selector), set)).toBe(expected)
  })

  it.each(["app in (a", "=x", "app notin a", "a b", "bad key=1", "app=x y", "-a=b", "app=x,,", "app=no spaces!"])(
    "%j is a 400",
    (selector) => {
      const parsed = Selectors.parseLabelSelector(selector)
      expect(Result.isFailure(parsed) && parsed.failure.code).toBe(400)
    }
  )

  it("accepts an empty value", () => {
    expect(Selectors.matchesLabels(labels("app="), { app: "" })).toBe(true)
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
