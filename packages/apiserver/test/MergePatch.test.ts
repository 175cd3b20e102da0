import { assert, describe, it } from "@effect/vitest"
import * as MergePatch from "../src/MergePatch.ts"
import { type Json } from "@kubefx/schema/internal"

// RFC 7386, Appendix A: original, patch, result.
const appendixA: ReadonlyArray<readonly [Json.Json, Json.Json, Json.Json]> = [
  [{ a: "b" }, { a: "c" }, { a: "c" }],
  [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
  [{ a: "b" }, { a: null }, {}],
  [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
  [{ a: ["b"] }, { a: "c" }, { a: "c" }],
  [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
  [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
  [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
  [["a", "b"], ["c", "d"], ["c", "d"]],
  [{ a: "b" }, ["c"], ["c"]],
  [{ a: "foo" }, null, null],
  [{ a: "foo" }, "bar", "bar"],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: "b", c: null }, { a: "b" }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }]
]

describe("MergePatch.apply", () => {
  it.each(appendixA.map(([original, patch, result], i) => ({ i, original, patch, result })))(
    "RFC 7386 appendix A example $i",
    ({ original, patch, result }) => {
      assert.deepStrictEqual(MergePatch.apply(original, patch), result)
    }
  )

  it("RFC 7386 section 3 example", () => {
    const target = {
      title: "Goodbye!",
      author: { givenName: "John", familyName: "Doe" },
      tags: ["example", "sample"],
      content: "This will be unchanged"
    }
    const patch = { title: "Hello!", phoneNumber: "+01-123-456-7890", author: { familyName: null }, tags: ["example"] }
    assert.deepStrictEqual(MergePatch.apply(target, patch), {
      title: "Hello!",
      author: { givenName: "John" },
      tags: ["example"],
      content: "This will be unchanged",
      phoneNumber: "+01-123-456-7890"
    })
  })

  it("patches a missing document as an empty one and leaves the input untouched", () => {
    assert.deepStrictEqual(MergePatch.apply(undefined, { a: { b: null, c: 1 } }), { a: { c: 1 } })
    const original = { metadata: { labels: { a: "1" } } }
    MergePatch.apply(original, { metadata: { labels: { a: null } } })
    assert.deepStrictEqual(original, { metadata: { labels: { a: "1" } } })
  })

  it("keeps a \"__proto__\" key as data", () => {
    const patch = JSON.parse("{\"__proto__\":{\"polluted\":true}}") as Json.JsonObject
    const patched = MergePatch.apply({}, patch) as Json.JsonObject
    assert.deepStrictEqual(Object.keys(patched), ["__proto__"])
    assert.isUndefined(({} as Record<string, unknown>).polluted)
  })
})
