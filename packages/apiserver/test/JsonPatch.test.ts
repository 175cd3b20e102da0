import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as JsonPatch from "../src/JsonPatch.ts"
import { type Json } from "@kubefx/schema/internal"

const run = (doc: Json.Json, body: Json.Json, decoding: JsonPatch.Decoding = "Warn") =>
  Result.flatMap(JsonPatch.decodeBody(body, decoding), (operations) => JsonPatch.applyOperations(doc, operations))

const patched = (doc: Json.Json, body: Json.Json): Json.Json => {
  const result = run(doc, body)
  if (Result.isFailure(result)) return assert.fail(`expected success, got ${result.failure.message}`)
  return result.success
}

const failed = (doc: Json.Json, body: Json.Json, decoding?: JsonPatch.Decoding): JsonPatch.Failure => {
  const result = run(doc, body, decoding)
  if (Result.isSuccess(result)) return assert.fail(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("JsonPatch: what kube-apiserver's JSON patch library lets through", () => {
  it("replaces an absent member by adding it, and a null one", () => {
    const doc = { metadata: { name: "x", annotations: { a: null } } }
    assert.deepStrictEqual(
      patched(doc, [
        { op: "replace", path: "/metadata/annotations/b", value: "2" },
        { op: "replace", path: "/metadata/annotations/a", value: "1" }
      ]),
      { metadata: { name: "x", annotations: { a: "1", b: "2" } } }
    )
    assert.deepStrictEqual(doc, { metadata: { name: "x", annotations: { a: null } } })
  })

  it("counts negative array indices from the end", () => {
    assert.deepStrictEqual(patched({ a: [1, 2, 3] }, [{ op: "remove", path: "/a/-1" }]), { a: [1, 2] })
    assert.deepStrictEqual(patched({ a: [1, 2] }, [{ op: "add", path: "/a/-1", value: 9 }]), { a: [1, 2, 9] })
    assert.deepStrictEqual(patched({ a: [1, 2] }, [{ op: "replace", path: "/a/-2", value: 0 }]), { a: [0, 2] })
    assert.deepStrictEqual(patched({ a: [1, 2] }, [{ op: "test", path: "/a/-1", value: 2 }]), { a: [1, 2] })
  })

  it("takes a null member as absent: a test for null passes, a path through it is missing", () => {
    assert.deepStrictEqual(patched({ a: null }, [{ op: "test", path: "/a", value: null }, { op: "test", path: "/b", value: null }]), {
      a: null
    })
    assert.strictEqual(
      failed({ a: null }, [{ op: "add", path: "/a/b", value: 1 }]).message,
      "add operation does not apply: doc is missing path: \"/a/b\": missing value"
    )
  })

  it("copies an absent member as null, and cannot add at the root", () => {
    assert.deepStrictEqual(patched({ a: 1 }, [{ op: "copy", from: "/b", path: "/c" }]), { a: 1, c: null })
    assert.strictEqual(failed({ a: 1 }, [{ op: "add", path: "", value: {} }]).message, "add operation does not apply: doc is missing path: \"\": missing value")
    assert.deepStrictEqual(patched({ a: 1 }, [{ op: "replace", path: "", value: { b: 2 } }]), { b: 2 })
    assert.deepStrictEqual(patched({ a: 1 }, [{ op: "replace", path: "", value: 3 }]), { a: 1 })
  })

  it("applies a missing value as null", () => {
    assert.deepStrictEqual(patched({ a: 1 }, [{ op: "add", path: "/b" }]), { a: 1, b: null })
  })
})

describe("JsonPatch: kube-apiserver's words for a failed operation", () => {
  const cases: ReadonlyArray<readonly [Json.Json, Json.Json, string]> = [
    [{ spec: { replicas: 1 } }, { op: "test", path: "/spec/replicas", value: 2 }, "testing value /spec/replicas failed: test failed"],
    [{ a: 1 }, { op: "remove", path: "/b" }, "error in remove for path: '/b': Unable to remove nonexistent key: b: missing value"],
    [{ a: [1] }, { op: "remove", path: "/a/3" }, "error in remove for path: '/a/3': Unable to access invalid index: 3: invalid index referenced"],
    [{ a: [1] }, { op: "remove", path: "/a/x" }, "error in remove for path: '/a/x': strconv.Atoi: parsing \"x\": invalid syntax"],
    [{ a: [1] }, { op: "add", path: "/a/5", value: 2 }, "error in add for path: '/a/5': Unable to access invalid index: 5: invalid index referenced"],
    [{ a: [1] }, { op: "add", path: "/a/x", value: 2 }, "error in add for path: '/a/x': value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax"],
    [{ a: 1 }, { op: "replace", path: "/b/c", value: 2 }, "replace operation does not apply: doc is missing path: /b/c: missing value"],
    [{ a: [1] }, { op: "replace", path: "/a/1", value: 2 }, "replace operation does not apply: doc is missing key: /a/1: missing value"],
    [{ a: 1 }, { op: "move", from: "/b", path: "/c" }, "error in move for path: 'b': Unable to remove nonexistent key: b: missing value"],
    [{ a: { b: 1 } }, { op: "move", from: "/a", path: "/a/b/c" }, "move operation does not apply: doc is missing destination path: /a/b/c: missing value"],
    [{ a: 1 }, { op: "copy", from: "/x/y", path: "/c" }, "copy operation does not apply: doc is missing from path: /x/y: missing value"],
    [{ a: 1 }, { op: "test", path: "/x/y", value: 1 }, "test operation does not apply: is missing path: /x/y: missing value"],
    [{ a: 1 }, { op: "add", value: 1 }, "add operation failed to decode path: missing value"],
    [{ a: 1 }, { op: "replace", value: 1 }, "replace operation failed to decode path: operation missing path field: missing value"],
    [{ a: 1 }, { op: "move", path: "/b" }, "move operation failed to decode from: operation, missing from field: missing value"],
    [{ a: 1 }, { path: "/a" }, "Unexpected kind: unknown"]
  ]
  for (const [doc, operation, message] of cases) {
    it(`${JSON.stringify(operation)}: ${message}`, () => {
      const failure = failed(doc, [operation])
      assert.strictEqual(failure.kind, "failed")
      assert.strictEqual(failure.message, message)
    })
  }
})

describe("JsonPatch.decodeBody", () => {
  it("reads kube's typed operations first under Warn and Strict, jsonpatch's alone under Ignore", () => {
    for (const decoding of ["Warn", "Strict"] as const) {
      assert.deepStrictEqual(failed({}, ["add"], decoding), {
        kind: "undecodable",
        message: "error decoding patch: json: cannot unmarshal string into Go value of type handlers.jsonPatchOp"
      })
      assert.deepStrictEqual(failed({}, [{ op: "add", path: 5 }], decoding), {
        kind: "undecodable",
        message: "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string"
      })
    }
    assert.deepStrictEqual(failed({}, ["add"], "Ignore"), {
      kind: "undecodable",
      message: "json: cannot unmarshal string into Go value of type jsonpatch.Operation"
    })
    assert.deepStrictEqual(failed({}, [{ op: "replace", path: 5 }], "Ignore"), {
      kind: "failed",
      message: "replace operation failed to decode path: json: cannot unmarshal number into Go value of type string"
    })
  })
})
