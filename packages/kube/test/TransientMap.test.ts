import { assert, describe, it } from "@effect/vitest"
import * as TransientMap from "../src/client/TransientMap.ts"

describe("TransientMap", () => {
  it("answers as a Map through many rounds of adds and deletes, oldest first", () => {
    const map = TransientMap.make<string, number>()
    assert.isUndefined(map.oldest())
    // A window of 10 live keys sliding over 1,000: far past the deletes after which it starts afresh.
    for (let i = 0; i < 1000; i++) {
      map.set(`k${i}`, i)
      if (i >= 10) assert.isTrue(map.delete(`k${i - 10}`))
      assert.strictEqual(map.size(), Math.min(i + 1, 10))
      assert.strictEqual(map.oldest(), `k${Math.max(0, i - 9)}`)
    }
    for (let i = 990; i < 1000; i++) assert.strictEqual(map.get(`k${i}`), i)
    assert.isFalse(map.has("k989"))
    assert.isFalse(map.delete("k989"))
  })

  it("keeps a key's place when it is set again, and drops it for good when deleted", () => {
    const map = TransientMap.make<string, string>()
    for (const key of ["a", "b", "c"]) map.set(key, key)
    map.set("a", "again")
    assert.strictEqual(map.oldest(), "a")
    assert.strictEqual(map.get("a"), "again")
    for (let i = 0; i < 100; i++) {
      map.set(`x${i}`, "x")
      map.delete(`x${i}`)
    }
    assert.strictEqual(map.oldest(), "a")
    assert.isTrue(map.delete("a"))
    assert.strictEqual(map.oldest(), "b")
    assert.strictEqual(map.size(), 2)
  })
})
