import { KubeObject } from "@kubefx/schema/internal"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Lists from "../src/Lists.ts"
import * as Store from "../src/Store.ts"

// Keys in the store's order: namespace/name, cluster-scoped ones by name.
const keys = ["a", "b/x", "b/y", "b/y-2", "c/a", "default/w-0", "default/w-1", "default/w-10", "default/w-2", "z"]
const store = Store.make()
for (const key of keys) {
  const [namespace, name] = key.includes("/") ? key.split("/") : [undefined, key]
  store.put("objects", { metadata: { namespace, name } }, 0)
}
const keyOf = (o: KubeObject.KubeObject) => KubeObject.key(KubeObject.meta(o).namespace, KubeObject.meta(o).name ?? "")

// A page as a list answers it: the store applies the continue key; with a limit it may also cut
// the page out itself and count the rest.
const pages = (after: string | undefined, limit: number | undefined) => {
  const options = { limit, revision: 5, countRemaining: true }
  const whole = Lists.page(store.list("objects", undefined, after), options)
  if (limit === undefined || limit <= 0) return [whole]
  const cut = Lists.page(store.list("objects", undefined, after, limit), { ...options, total: store.count("objects", undefined, after) })
  return [whole, cut]
}

describe("Lists.page", () => {
  it("starts after the continue key, whether or not that key is still there, and counts what remains", () => {
    const afters = [undefined, "", "a", "a0", "b", "b/y", "b/y-1", "default/w-1", "default/w-9", "z", "zz"]
    for (const after of afters) {
      for (const limit of [undefined, 0, 1, 2, 3, 20]) {
        const expected = after === undefined ? keys : keys.filter((key) => key > after)
        const limited = limit === undefined || limit <= 0 ? expected : expected.slice(0, limit)
        for (const page of pages(after, limit)) {
          expect(page.items.map(keyOf), `after ${after}, limit ${limit}`).toEqual(limited)
          expect(page.remaining).toBe(limited.length < expected.length ? expected.length - limited.length : undefined)
          expect(page.continue === undefined).toBe(limited.length === expected.length)
        }
      }
    }
  })

  it("pages through everything exactly once, following the tokens", async () => {
    for (const cut of [false, true]) {
      const seen: Array<string> = []
      let after: string | undefined
      for (;;) {
        const page = pages(after, 3)[cut ? 1 : 0]!
        seen.push(...page.items.map(keyOf))
        if (page.continue === undefined) break
        after = (await Effect.runPromise(Lists.decodeToken(page.continue))).after
      }
      expect(seen).toEqual(keys)
    }
  })
})
