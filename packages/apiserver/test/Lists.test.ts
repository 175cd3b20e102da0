import { KubeObject } from "@kubefx/schema/internal"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Lists from "../src/Lists.ts"

// Objects ordered by key as the store hands them out: namespace/name, cluster-scoped ones by name.
const objects = ["a", "b/x", "b/y", "b/y-2", "c/a", "default/w-0", "default/w-1", "default/w-10", "default/w-2", "z"]
  .map((key) => {
    const [namespace, name] = key.includes("/") ? key.split("/") : [undefined, key]
    return { metadata: { namespace, name } }
  })
const keyOf = (o: KubeObject.KubeObject) => KubeObject.key(KubeObject.meta(o).namespace, KubeObject.meta(o).name ?? "")

describe("Lists.page", () => {
  it("starts after the continue key, whether or not that key is still there, and counts what remains", () => {
    const afters = [undefined, "", "a", "a0", "b", "b/y", "b/y-1", "default/w-1", "default/w-9", "z", "zz"]
    for (const after of afters) {
      for (const limit of [undefined, 0, 1, 2, 3, 20]) {
        const page = Lists.page(objects, { limit, after, revision: 5, countRemaining: true })
        const expected = after === undefined ? objects : objects.filter((o) => keyOf(o) > after)
        const limited = limit === undefined || limit <= 0 ? expected : expected.slice(0, limit)
        expect(page.items.map(keyOf), `after ${after}, limit ${limit}`).toEqual(limited.map(keyOf))
        expect(page.remaining).toBe(limited.length < expected.length ? expected.length - limited.length : undefined)
        expect(page.continue === undefined).toBe(limited.length === expected.length)
      }
    }
  })

  it("takes a page the store cut out, with the count of what follows the continue key", () => {
    const page = Lists.page(objects.slice(3, 5), { limit: 2, after: "b/y", revision: 5, countRemaining: true, total: 7 })
    expect(page.items.map(keyOf)).toEqual(["b/y-2", "c/a"])
    expect(page.remaining).toBe(5)
    expect(page.continue).toBeDefined()
    const last = Lists.page(objects.slice(8), { limit: 2, after: "default/w-10", revision: 5, countRemaining: true, total: 2 })
    expect(last.items.map(keyOf)).toEqual(["default/w-2", "z"])
    expect(last.continue).toBeUndefined()
  })

  it("pages through everything exactly once, following the tokens", async () => {
    const seen: Array<string> = []
    let after: string | undefined
    for (;;) {
      const page = Lists.page(objects, { limit: 3, after, revision: 9, countRemaining: false })
      seen.push(...page.items.map(keyOf))
      if (page.continue === undefined) break
      after = (await Effect.runPromise(Lists.decodeToken(page.continue))).after
    }
    expect(seen).toEqual(objects.map(keyOf))
  })
})
