import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as LabelSelectors from "../src/LabelSelectors.ts"

const labels = (selector: string) => Result.getOrThrow(LabelSelectors.parse(selector))

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
    expect(LabelSelectors.matches(labels(selector), set)).toBe(expected)
  })

  it.each(["app in (a", "=x", "app notin a", "a b", "bad key=1", "app=x y", "-a=b", "app=x,,", "app=no spaces!"])(
    "%j is refused",
    (selector) => {
      const parsed = LabelSelectors.parse(selector)
      expect(Result.isFailure(parsed) && parsed.failure).toMatch(/^unable to parse requirement: /)
    }
  )

  it("says what is wrong, as kube-apiserver does", () => {
    expect([LabelSelectors.parse("app in (a"), LabelSelectors.parse("a b")]).toEqual([
      Result.fail("unable to parse requirement: found '', expected: ')'"),
      Result.fail("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt")
    ])
  })

  it("accepts an empty value", () => {
    expect(LabelSelectors.matches(labels("app="), { app: "" })).toBe(true)
  })
})
