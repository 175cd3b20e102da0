import { assert, describe, it } from "@effect/vitest"
import * as Compaction from "../src/Compaction.ts"

const configMap = (name: string) =>
  JSON.parse(JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: "default",
      labels: { app: "web" },
      creationTimestamp: "2026-11-25T21:01:19Z",
      managedFields: [{
        manager: "kubectl",
        operation: "Apply",
        apiVersion: "v1",
        time: "2026-11-25T21:01:19Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { ".": {}, "f:key": {} } }
      }]
    },
    data: { key: "value" }
  }))

describe("Compaction", () => {
  it("keeps the object equal as JSON and leaves the given one untouched", () => {
    const given = configMap("a")
    const before = JSON.stringify(given)
    const stored = Compaction.compact(given)
    assert.strictEqual(JSON.stringify(stored), before)
    assert.strictEqual(JSON.stringify(given), before)
    assert.notStrictEqual(stored.metadata, given.metadata)
  })

  it("shares repeated strings and empty field-set leaves between objects", () => {
    const a = Compaction.compact(configMap("a")) as any
    const b = Compaction.compact(configMap("b")) as any
    // string sharing is not observable from JavaScript; the empty leaves are: one frozen object
    const leafA = a.metadata.managedFields[0].fieldsV1["f:data"]["f:key"]
    const leafB = b.metadata.managedFields[0].fieldsV1["f:data"]["."]
    assert.strictEqual(leafA, leafB)
    assert.isTrue(Object.isFrozen(leafA))
    assert.deepStrictEqual(a.metadata.labels, { app: "web" })
    assert.strictEqual(b.metadata.managedFields[0].manager, "kubectl")
  })
})
