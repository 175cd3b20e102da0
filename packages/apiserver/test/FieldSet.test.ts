import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as BuiltinStructures from "../src/BuiltinStructures.ts"
import * as FieldSet from "../src/FieldSet.ts"
import type * as Structure from "../src/Structure.ts"
import { type Json } from "@kubefx/schema/internal"

const deployment = BuiltinStructures.lookup("apps", "Deployment")!

// The Apply entry a real API server records for `kubectl apply --server-side` of an nginx Deployment.
const kubectlApplyFields: Json.JsonObject = {
  "f:metadata": { "f:labels": { "f:app": {} } },
  "f:spec": {
    "f:replicas": {},
    "f:selector": {},
    "f:template": {
      "f:metadata": { "f:labels": { "f:app": {} } },
      "f:spec": {
        "f:containers": {
          "k:{\"name\":\"nginx\"}": {
            ".": {},
            "f:image": {},
            "f:name": {},
            "f:ports": {
              "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": { ".": {}, "f:containerPort": {}, "f:protocol": {} }
            }
          }
        }
      }
    }
  }
}

const nginx: Json.JsonObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "nginx", labels: { app: "nginx" } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: "nginx" } },
    template: {
      metadata: { labels: { app: "nginx" } },
      spec: { containers: [{ name: "nginx", image: "nginx:1.25", ports: [{ containerPort: 80, protocol: "TCP" }] }] }
    }
  }
}

const decode = (fields: Json.Json) => Result.getOrThrow(FieldSet.fromFieldsV1(fields))

describe("FieldSet", () => {
  it("round-trips FieldsV1 written by a real API server", () => {
    const set = decode(kubectlApplyFields)
    assert.deepStrictEqual(FieldSet.toFieldsV1(set), kubectlApplyFields)
    assert.isTrue(FieldSet.has(set, ["f:spec", "f:replicas"]))
    assert.isTrue(FieldSet.has(set, ["f:spec", "f:template", "f:spec", "f:containers", "k:{\"name\":\"nginx\"}"]))
    // f:spec only leads to members; it is not a member itself
    assert.isFalse(FieldSet.has(set, ["f:spec"]))
  })

  it("round-trips members with children (\".\"), set items and indices", () => {
    const fields: Json.JsonObject = {
      "f:metadata": {
        "f:finalizers": { ".": {}, "v:\"a.example.com/x\"": {}, "v:\"b.example.com/y\"": {} },
        "f:labels": { ".": {}, "f:app": {} }
      },
      "f:spec": { "f:items": { "i:2": {}, "i:10": {} } }
    }
    const set = decode(fields)
    assert.deepStrictEqual(FieldSet.toFieldsV1(set), fields)
    assert.isTrue(FieldSet.has(set, ["f:metadata", "f:finalizers"]))
    assert.isTrue(FieldSet.has(set, ["f:metadata", "f:finalizers", FieldSet.value("a.example.com/x")]))
    // indices sort numerically, not as text
    assert.deepStrictEqual(Object.keys((FieldSet.toFieldsV1(set)["f:spec"] as Json.JsonObject)["f:items"] as object), [
      "i:2",
      "i:10"
    ])
  })

  it("writes \".\" first, then fields, keys, values and indices", () => {
    const set = FieldSet.make([
      ["f:list"],
      ["f:list", "i:0"],
      ["f:list", "v:1"],
      ["f:list", "k:{\"a\":1}"],
      ["f:list", "f:z"],
      ["f:list", "f:a"]
    ])
    const list = FieldSet.toFieldsV1(set)["f:list"] as Json.JsonObject
    assert.deepStrictEqual(Object.keys(list), [".", "f:a", "f:z", "k:{\"a\":1}", "v:1", "i:0"])
  })

  it("canonicalises key elements so they match keys computed from objects", () => {
    const set = decode({ "f:ports": { "k:{\"protocol\":\"TCP\",\"containerPort\":80}": {} } })
    assert.isTrue(FieldSet.has(set, ["f:ports", FieldSet.key({ containerPort: 80, protocol: "TCP" })]))
  })

  it("rejects what is not FieldsV1", () => {
    assert.isTrue(Result.isFailure(FieldSet.fromFieldsV1({ "x:foo": {} })))
    assert.isTrue(Result.isFailure(FieldSet.fromFieldsV1({ "f:a": 1 })))
    assert.isTrue(Result.isFailure(FieldSet.fromFieldsV1({ "k:notjson": {} })))
    assert.isTrue(Result.isFailure(FieldSet.fromFieldsV1({ "i:-1": {} })))
    assert.isTrue(Result.isFailure(FieldSet.fromFieldsV1([])))
  })

  it("names where FieldsV1 went wrong, and a sibling decoded before it changes nothing", () => {
    const failure = (fields: Json.Json) => Result.isFailure(FieldSet.fromFieldsV1(fields)) ? Result.merge(FieldSet.fromFieldsV1(fields)) : "decoded"
    assert.strictEqual(failure([]), ": expected an object")
    assert.strictEqual(failure({ "f:spec": { "f:a": {}, "f:b": { "f:c": 1 } } }), "f:spec/f:b/f:c/: expected an object")
    assert.strictEqual(failure({ "f:spec": { "f:a": { ".": {} }, "x:b": {} } }), "f:spec/: invalid path element \"x:b\"")
  })

  it("decodes an empty object below a path as the path itself, and '.' as the node's own membership", () => {
    const set = decode({ "f:spec": { ".": {}, "f:a": {}, "f:b": { "f:c": {} } } })
    assert.deepStrictEqual(FieldSet.paths(set), [["f:spec"], ["f:spec", "f:a"], ["f:spec", "f:b", "f:c"]])
  })

  it("formats paths the way conflicts print them", () => {
    assert.strictEqual(FieldSet.formatPath(["f:spec", "f:replicas"]), ".spec.replicas")
    assert.strictEqual(
      FieldSet.formatPath(["f:spec", "f:containers", "k:{\"name\":\"app\"}", "f:image"]),
      ".spec.containers[name=\"app\"].image"
    )
    assert.strictEqual(
      FieldSet.formatPath(["f:ports", FieldSet.key({ protocol: "TCP", containerPort: 80 })]),
      ".ports[containerPort=80,protocol=\"TCP\"]"
    )
    assert.strictEqual(FieldSet.formatPath(["f:finalizers", FieldSet.value("x")]), ".finalizers[=\"x\"]")
    assert.strictEqual(FieldSet.formatPath(["f:args", "i:3"]), ".args[3]")
  })

  describe("set operations", () => {
    const a = FieldSet.make([["f:a"], ["f:b", "f:c"], ["f:b", "f:d"]])
    const b = FieldSet.make([["f:b", "f:c"], ["f:e"]])

    it("union, intersection, difference", () => {
      assert.deepStrictEqual(FieldSet.paths(FieldSet.union(a, b)), [["f:a"], ["f:b", "f:c"], ["f:b", "f:d"], ["f:e"]])
      assert.deepStrictEqual(FieldSet.paths(FieldSet.intersection(a, b)), [["f:b", "f:c"]])
      assert.deepStrictEqual(FieldSet.paths(FieldSet.difference(a, b)), [["f:a"], ["f:b", "f:d"]])
      assert.isTrue(FieldSet.isEmpty(FieldSet.difference(b, FieldSet.union(a, b))))
    })

    it("difference is path by path: removing a node keeps the paths below it", () => {
      const withNode = FieldSet.make([["f:labels"], ["f:labels", "f:app"]])
      assert.deepStrictEqual(FieldSet.paths(FieldSet.difference(withNode, FieldSet.make([["f:labels"]]))), [[
        "f:labels",
        "f:app"
      ]])
    })

    it("under keeps the paths at or below the prefixes", () => {
      assert.deepStrictEqual(FieldSet.paths(FieldSet.under(a, FieldSet.make([["f:b"]]))), [["f:b", "f:c"], ["f:b", "f:d"]])
      assert.isTrue(FieldSet.isEmpty(FieldSet.under(a, FieldSet.make([["f:x"]]))))
    })

    it("equals ignores insertion order", () => {
      assert.isTrue(FieldSet.equals(FieldSet.make([["f:b", "f:d"], ["f:a"], ["f:b", "f:c"]]), a))
      assert.isFalse(FieldSet.equals(a, b))
      assert.isTrue(FieldSet.isEmpty(FieldSet.make([])))
    })
  })

  describe("fromObject (the fields an apply configuration sets)", () => {
    it("gives what a real API server records for a Deployment applied with kubectl", () => {
      const set = FieldSet.fromObject(nginx, deployment)
      const { "f:apiVersion": _a, "f:kind": _k, ...rest } = FieldSet.toFieldsV1(set)
      const metadata = rest["f:metadata"] as Json.JsonObject
      // identity fields are dropped by the apply logic, not here
      assert.deepStrictEqual(metadata["f:name"], {})
      assert.deepStrictEqual(
        { ...rest, "f:metadata": { "f:labels": metadata["f:labels"]! } },
        kubectlApplyFields
      )
    })

    it("owns set items by value, empty objects and nulls as leaves, atomic lists whole", () => {
      const structure: Structure.Structure = {
        fields: { finalizers: { listType: { _tag: "Set" } }, labels: { additional: {} } }
      }
      const set = FieldSet.fromObject(
        { finalizers: ["a", "b"], labels: {}, args: ["x", "y"], gone: null, nested: { empty: {} } },
        structure
      )
      assert.deepStrictEqual(FieldSet.toFieldsV1(set), {
        "f:args": {},
        "f:finalizers": { "v:\"a\"": {}, "v:\"b\"": {} },
        "f:gone": {},
        "f:labels": {},
        "f:nested": { "f:empty": {} }
      })
    })

    it("owns entries of maps with arbitrary keys, even when they are objects", () => {
      const structure: Structure.Structure = { fields: { byZone: { additional: {} } } }
      const set = FieldSet.fromObject({ byZone: { a: { weight: 1 } } }, structure)
      assert.deepStrictEqual(FieldSet.toFieldsV1(set), { "f:byZone": { "f:a": { ".": {}, "f:weight": {} } } })
    })
  })

  describe("compare", () => {
    it("adds a new subtree with its node, like the Update entries of a real server", () => {
      const c = FieldSet.compare({ metadata: { name: "x" } }, { metadata: { name: "x", labels: { app: "a" } } }, {})
      assert.deepStrictEqual(FieldSet.toFieldsV1(c.added), { "f:metadata": { "f:labels": { ".": {}, "f:app": {} } } })
      assert.isTrue(FieldSet.isEmpty(c.modified))
      assert.isTrue(FieldSet.isEmpty(c.removed))
    })

    it("reports changed leaves as modified and removed subtrees whole", () => {
      const c = FieldSet.compare(
        { spec: { replicas: 1, strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } } },
        { spec: { replicas: 3, strategy: { type: "Recreate" } } },
        {}
      )
      assert.deepStrictEqual(FieldSet.paths(c.modified), [["f:spec", "f:replicas"], ["f:spec", "f:strategy", "f:type"]])
      assert.deepStrictEqual(FieldSet.paths(c.removed), [
        ["f:spec", "f:strategy", "f:rollingUpdate"],
        ["f:spec", "f:strategy", "f:rollingUpdate", "f:maxSurge"]
      ])
    })

    it("compares map-list items by key, whatever their position", () => {
      const structure: Structure.Structure = { fields: { c: { listType: { _tag: "Map", keys: ["name"] } } } }
      const c = FieldSet.compare(
        { c: [{ name: "a", image: "1" }, { name: "b", image: "1" }] },
        { c: [{ name: "b", image: "2" }, { name: "a", image: "1" }] },
        structure
      )
      assert.deepStrictEqual(FieldSet.paths(c.modified), [["f:c", "k:{\"name\":\"b\"}", "f:image"]])
      assert.isTrue(FieldSet.isEmpty(c.added))
    })

    it("treats an atomic list or map as one leaf", () => {
      const structure: Structure.Structure = { fields: { selector: { mapType: "atomic" } } }
      const c = FieldSet.compare(
        { args: ["a"], selector: { matchLabels: { app: "x" } } },
        { args: ["a", "b"], selector: { matchLabels: { app: "y" } } },
        structure
      )
      assert.deepStrictEqual(FieldSet.paths(c.modified), [["f:args"], ["f:selector"]])
    })

    it("a node turning from object to leaf is modified, what was below it removed; the reverse adds it", () => {
      const c = FieldSet.compare({ a: { b: { c: 1 } }, d: "x" }, { a: "flat", d: { e: 2 } }, {})
      assert.deepStrictEqual(FieldSet.paths(c.modified), [["f:a"], ["f:d"]])
      assert.deepStrictEqual(FieldSet.paths(c.removed), [["f:a", "f:b"], ["f:a", "f:b", "f:c"]])
      assert.deepStrictEqual(FieldSet.paths(c.added), [["f:d", "f:e"]])
    })

    it("finds nothing between equal objects, empty containers included", () => {
      const c = FieldSet.compare({ a: {}, b: [], c: { d: 1 } }, { a: {}, b: [], c: { d: 1 } }, {})
      assert.isTrue(FieldSet.isEmpty(FieldSet.union(FieldSet.union(c.added, c.modified), c.removed)))
    })
  })

  it("lists children only of granular nodes", () => {
    assert.isUndefined(FieldSet.children(["a"], {}))
    assert.isUndefined(FieldSet.children({ a: 1 }, { mapType: "atomic" }))
    assert.isUndefined(FieldSet.children("x", {}))
    assert.deepStrictEqual(
      FieldSet.children([{ name: "a", image: "x" }, "odd"], { listType: { _tag: "Map", keys: ["name"] } })?.map((c) =>
        c.element
      ),
      ["k:{\"name\":\"a\"}", "i:1"]
    )
  })
})
