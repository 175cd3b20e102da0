import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as BuiltinStructures from "../src/BuiltinStructures.ts"
import * as Patch from "../src/Patch.ts"
import { type Json } from "@kubefx/schema/internal"

const jsonPatch = (doc: Json.Json, ops: Json.Json) => Patch.jsonPatch(doc, ops)

const patched = (doc: Json.Json, ops: Json.Json): Json.Json => {
  const result = jsonPatch(doc, ops)
  if (Result.isFailure(result)) return assert.fail(`expected success, got ${result.failure.message}`)
  return result.success
}

const failure = <A, E>(result: Result.Result<A, E>): E => {
  if (Result.isSuccess(result)) return assert.fail("expected a failure")
  return result.failure
}

describe("Patch.jsonPatch (RFC 6902 appendix A)", () => {
  it("A.1 adds an object member", () => {
    assert.deepStrictEqual(patched({ foo: "bar" }, [{ op: "add", path: "/baz", value: "qux" }]), { foo: "bar", baz: "qux" })
  })

  it("A.2 adds an array element", () => {
    assert.deepStrictEqual(patched({ foo: ["bar", "baz"] }, [{ op: "add", path: "/foo/1", value: "qux" }]), {
      foo: ["bar", "qux", "baz"]
    })
  })

  it("A.3 removes an object member, A.4 an array element", () => {
    assert.deepStrictEqual(patched({ baz: "qux", foo: "bar" }, [{ op: "remove", path: "/baz" }]), { foo: "bar" })
    assert.deepStrictEqual(patched({ foo: ["bar", "qux", "baz"] }, [{ op: "remove", path: "/foo/1" }]), { foo: ["bar", "baz"] })
  })

  it("A.5 replaces a value", () => {
    assert.deepStrictEqual(patched({ baz: "qux", foo: "bar" }, [{ op: "replace", path: "/baz", value: "boo" }]), {
      baz: "boo",
      foo: "bar"
    })
  })

  it("A.6 moves a value, A.7 an array element", () => {
    assert.deepStrictEqual(
      patched({ foo: { bar: "baz", waldo: "fred" }, qux: { corge: "grault" } }, [
        { op: "move", from: "/foo/waldo", path: "/qux/thud" }
      ]),
      { foo: { bar: "baz" }, qux: { corge: "grault", thud: "fred" } }
    )
    assert.deepStrictEqual(patched({ foo: ["all", "grass", "cows", "eat"] }, [{ op: "move", from: "/foo/1", path: "/foo/3" }]), {
      foo: ["all", "cows", "eat", "grass"]
    })
  })

  it("A.8 tests a value (success), A.9 (failure is a 422)", () => {
    const doc = { baz: "qux", foo: ["a", 2, "c"] }
    assert.deepStrictEqual(
      patched(doc, [{ op: "test", path: "/baz", value: "qux" }, { op: "test", path: "/foo/1", value: 2 }]),
      doc
    )
    const error = failure(jsonPatch({ baz: "qux" }, [{ op: "test", path: "/baz", value: "bar" }]))
    assert.strictEqual(error._tag, "PatchFailed")
    assert.strictEqual(error.status, 422)
  })

  it("refuses a patch that is not a list as Go's JSON decoding does, and applies null as no patch", () => {
    // fieldValidation Warn (the default) and Strict read the body as kube's typed operations first.
    assert.strictEqual(
      failure(jsonPatch({}, { op: "add" })).message,
      "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"
    )
    assert.strictEqual(
      failure(Patch.jsonPatch({}, "add", "Ignore")).message,
      "json: cannot unmarshal string into Go value of type jsonpatch.Patch"
    )
    assert.deepStrictEqual(patched({ a: 1 }, null), { a: 1 })
  })

  it("A.10 adds a nested member object, A.16 an array value", () => {
    assert.deepStrictEqual(patched({ foo: "bar" }, [{ op: "add", path: "/child", value: { grandchild: {} } }]), {
      foo: "bar",
      child: { grandchild: {} }
    })
    assert.deepStrictEqual(patched({ foo: ["bar"] }, [{ op: "add", path: "/foo/-", value: ["abc", "def"] }]), {
      foo: ["bar", ["abc", "def"]]
    })
  })

  it("A.11 ignores unrecognised members of an operation", () => {
    assert.deepStrictEqual(patched({ foo: "bar" }, [{ op: "add", path: "/baz", value: "qux", xyz: 123 }]), { foo: "bar", baz: "qux" })
  })

  it("A.12 fails adding to a nonexistent target", () => {
    assert.strictEqual(failure(jsonPatch({ foo: "bar" }, [{ op: "add", path: "/baz/bat", value: "qux" }]))._tag, "PatchFailed")
  })

  it("A.13 fails an invalid operation when it comes to it (422), as kube does", () => {
    const error = failure(jsonPatch({}, [{ op: "frobnicate", path: "/x" }]))
    assert.strictEqual(error._tag, "PatchFailed")
    assert.strictEqual(error.message, "Unexpected kind: frobnicate")
  })

  it("A.14 unescapes ~0 and ~1", () => {
    assert.deepStrictEqual(patched({ "/": 9, "~1": 10 }, [{ op: "test", path: "/~01", value: 10 }]), { "/": 9, "~1": 10 })
    assert.deepStrictEqual(patched({ metadata: { labels: {} } }, [{ op: "add", path: "/metadata/labels/app.kubernetes.io~1name", value: "x" }]), {
      metadata: { labels: { "app.kubernetes.io/name": "x" } }
    })
  })

  it("A.15 compares strings and numbers strictly", () => {
    assert.strictEqual(failure(jsonPatch({ "/": 9, "~1": 10 }, [{ op: "test", path: "/~01", value: "10" }]))._tag, "PatchFailed")
  })

  it("copies values and fails on missing paths", () => {
    assert.deepStrictEqual(patched({ a: { b: 1 } }, [{ op: "copy", from: "/a", path: "/c" }]), { a: { b: 1 }, c: { b: 1 } })
    assert.strictEqual(failure(jsonPatch({ a: 1 }, [{ op: "remove", path: "/b" }]))._tag, "PatchFailed")
    assert.strictEqual(failure(jsonPatch({ a: 1 }, [{ op: "replace", path: "/b/c", value: 2 }]))._tag, "PatchFailed")
    assert.strictEqual(failure(jsonPatch({ a: [1] }, [{ op: "add", path: "/a/5", value: 2 }]))._tag, "PatchFailed")
    assert.strictEqual(failure(jsonPatch({ a: { b: 1 } }, [{ op: "move", from: "/a", path: "/a/b/c" }]))._tag, "PatchFailed")
    assert.strictEqual(failure(jsonPatch({ a: 1 }, [{ op: "test", path: "a", value: 1 }]))._tag, "PatchFailed")
  })

  it("applies operations in order and all or nothing", () => {
    const doc = { spec: { replicas: 1 } }
    assert.deepStrictEqual(
      patched(doc, [{ op: "replace", path: "/spec/replicas", value: 2 }, { op: "test", path: "/spec/replicas", value: 2 }]),
      { spec: { replicas: 2 } }
    )
    assert.isTrue(Result.isFailure(jsonPatch(doc, [{ op: "replace", path: "/spec/replicas", value: 2 }, { op: "test", path: "/spec/replicas", value: 1 }])))
    assert.deepStrictEqual(doc, { spec: { replicas: 1 } })
  })

  it("refuses more than 10,000 operations (413)", () => {
    const ops = Array.from({ length: Patch.maxOperations + 1 }, () => ({ op: "test", path: "", value: {} }))
    const error = failure(jsonPatch({}, ops))
    assert.strictEqual(error._tag, "PatchTooLarge")
    assert.strictEqual(error.status, 413)
    assert.strictEqual(error.message, "The allowed maximum operations in a JSON patch is 10000, got 10001")
    assert.isTrue(Result.isSuccess(jsonPatch({}, ops.slice(1))))
  })
})

describe("Patch.apply", () => {
  const live = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", labels: { a: "1" } }, data: { k: "v" } }
  const configMaps = BuiltinStructures.lookup("", "ConfigMap")!

  it("dispatches on the Content-Type, ignoring parameters", () => {
    assert.deepStrictEqual(
      Result.getOrThrow(Patch.apply("application/merge-patch+json; charset=utf-8", live, "{\"data\":{\"k\":null,\"n\":\"1\"}}", configMaps)),
      { ...live, data: { n: "1" } }
    )
    assert.deepStrictEqual(
      Result.getOrThrow(Patch.apply("application/json-patch+json", live, "[{\"op\":\"add\",\"path\":\"/data/n\",\"value\":\"1\"}]", configMaps)),
      { ...live, data: { k: "v", n: "1" } }
    )
    assert.deepStrictEqual(
      Result.getOrThrow(Patch.apply("application/strategic-merge-patch+json", live, "{\"metadata\":{\"labels\":{\"$patch\":\"replace\",\"b\":\"2\"}}}", configMaps)),
      { ...live, metadata: { name: "x", labels: { b: "2" } } }
    )
  })

  it("maps failures to the status the server answers", () => {
    const status = (type: string, body: string) => failure(Patch.apply(type, live, body, configMaps)).status
    assert.strictEqual(status("application/merge-patch+json", "{not json"), 400)
    assert.strictEqual(status("application/merge-patch+json", "[1]"), 400)
    assert.strictEqual(status("application/json-patch+json", "{\"op\":\"add\"}"), 400)
    assert.strictEqual(status("application/json-patch+json", "[{\"op\":\"test\",\"path\":\"/kind\",\"value\":\"Secret\"}]"), 422)
    assert.strictEqual(status("application/json-patch+json", "[{\"op\":\"replace\",\"path\":\"\",\"value\":[]}]"), 422)
    assert.strictEqual(status("application/strategic-merge-patch+json", "{\"data\":{\"$patch\":\"explode\"}}"), 422)
    assert.strictEqual(status("application/xml", "<x/>"), 415)
    assert.strictEqual(status("application/apply-patch+yaml", "kind: ConfigMap"), 415)
  })

  it("words a merge or strategic merge patch that is not an object as kube does, and takes a strategic null as no change", () => {
    const message = (type: string, body: string, decoding?: "Ignore" | "Warn") =>
      failure(Patch.apply(type, live, body, configMaps, decoding)).message
    assert.strictEqual(
      message("application/merge-patch+json", "[1]"),
      "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"
    )
    assert.strictEqual(message("application/merge-patch+json", "null"), "Invalid JSON Patch")
    assert.strictEqual(message("application/merge-patch+json", "5", "Ignore"), "Invalid JSON Patch")
    assert.strictEqual(
      message("application/strategic-merge-patch+json", "true"),
      "json: cannot unmarshal bool into Go value of type map[string]interface {}"
    )
    assert.deepStrictEqual(Result.getOrThrow(Patch.apply("application/strategic-merge-patch+json", live, "null", configMaps)), live)
  })
})
