import { assert, describe, it } from "@effect/vitest"
import * as Table from "../src/Table.ts"

const object = {
  metadata: { name: "web", labels: { "app.kubernetes.io/name": "shop" } },
  spec: { replicas: 3, ports: [{ name: "http", port: 80 }, { name: "https", port: 443 }] },
  status: {
    conditions: [
      { type: "Available", status: "False", observedGeneration: 1 },
      { type: "Ready", status: "True", reason: "Reconciled", observedGeneration: 2 }
    ]
  }
}

describe("Table.evaluate (printer column JSONPath)", () => {
  it("follows fields and indexes, with or without braces", () => {
    assert.strictEqual(Table.evaluate(object, ".spec.replicas"), 3)
    assert.strictEqual(Table.evaluate(object, "{.spec.ports[1].port}"), 443)
    assert.strictEqual(Table.evaluate(object, ".spec.ports[-1].name"), "https")
    assert.strictEqual(Table.evaluate(object, ".metadata.labels['app.kubernetes.io/name']"), "shop")
    assert.isUndefined(Table.evaluate(object, ".spec.missing"))
    assert.isUndefined(Table.evaluate(object, ".spec.ports[5].port"))
  })

  it("filters lists as printer columns of conditions do, printing the first match", () => {
    assert.strictEqual(Table.evaluate(object, '.status.conditions[?(@.type=="Ready")].status'), "True")
    assert.strictEqual(Table.evaluate(object, ".status.conditions[?(@.type == 'Ready')].reason"), "Reconciled")
    assert.strictEqual(Table.evaluate(object, '.status.conditions[?(@.type!="Ready")].type'), "Available")
    assert.strictEqual(Table.evaluate(object, ".status.conditions[?(@.observedGeneration==2)].type"), "Ready")
    assert.isUndefined(Table.evaluate(object, '.status.conditions[?(@.type=="Progressing")].status'))
    assert.strictEqual(Table.evaluate(object, ".spec.ports[*].name"), "http")
  })
})
