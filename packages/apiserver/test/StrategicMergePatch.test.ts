import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as BuiltinStructures from "../src/BuiltinStructures.ts"
import * as StrategicMergePatch from "../src/StrategicMergePatch.ts"
import { type Json } from "@kubefx/schema/internal"

const deployments = BuiltinStructures.lookup("apps", "Deployment")!
const pods = BuiltinStructures.lookup("", "Pod")!

const patch = (original: Json.JsonObject, body: Json.JsonObject, structure = deployments): Json.JsonObject =>
  Result.getOrThrow(StrategicMergePatch.apply(original, body, structure))

const live: Json.JsonObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", finalizers: ["a.example.com", "b.example.com"] },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: "web" } },
    strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        containers: [
          {
            name: "app",
            image: "app:1",
            env: [{ name: "A", value: "1" }, { name: "B", value: "2" }],
            ports: [{ containerPort: 80, protocol: "TCP" }]
          },
          { name: "sidecar", image: "proxy:1" }
        ],
        tolerations: [{ key: "dedicated", operator: "Equal", value: "test-team", effect: "NoSchedule" }]
      }
    }
  }
}

const spec = (object: Json.JsonObject) => object.spec as Json.JsonObject
const podSpec = (object: Json.JsonObject) => (spec(object).template as Json.JsonObject).spec as Json.JsonObject
const containers = (object: Json.JsonObject) => podSpec(object).containers as ReadonlyArray<Json.JsonObject>

describe("StrategicMergePatch: as kubectl client-side apply sends it", () => {
  it("changes one container, edits its env by name, deletes a removed field", () => {
    const result = patch(live, {
      metadata: { annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}\n" } },
      spec: {
        replicas: null,
        template: {
          spec: {
            "$setElementOrder/containers": [{ name: "app" }, { name: "sidecar" }],
            containers: [{
              "$setElementOrder/env": [{ name: "A" }, { name: "C" }],
              env: [{ name: "C", value: "3" }, { $patch: "delete", name: "B" }],
              image: "app:2",
              name: "app"
            }]
          }
        }
      }
    })
    assert.isUndefined(spec(result).replicas)
    assert.deepStrictEqual(containers(result), [
      {
        name: "app",
        image: "app:2",
        env: [{ name: "A", value: "1" }, { name: "C", value: "3" }],
        ports: [{ containerPort: 80, protocol: "TCP" }]
      },
      { name: "sidecar", image: "proxy:1" }
    ])
    assert.deepStrictEqual((result.metadata as Json.JsonObject).annotations, {
      "kubectl.kubernetes.io/last-applied-configuration": "{}\n"
    })
  })

  it("adds a container at the position $setElementOrder gives and deletes another", () => {
    const result = patch(live, {
      spec: {
        template: {
          spec: {
            "$setElementOrder/containers": [{ name: "metrics" }, { name: "app" }],
            containers: [{ image: "metrics:1", name: "metrics" }, { $patch: "delete", name: "sidecar" }]
          }
        }
      }
    })
    assert.deepStrictEqual(containers(result).map((c) => c.name), ["metrics", "app"])
  })

  it("keeps items only the server has (an injected container) in their place", () => {
    const injected = patch(live, {
      spec: { template: { spec: { containers: [{ name: "sidecar", image: "proxy:1" }, { name: "mesh", image: "mesh:1" }] } } }
    })
    const original = containers(injected).map((c) => c.name)
    // containers now: app, sidecar, mesh (mesh was added after sidecar)
    assert.deepStrictEqual(original, ["app", "sidecar", "mesh"])
    const result = patch(injected, {
      spec: {
        template: {
          spec: {
            "$setElementOrder/containers": [{ name: "app" }, { name: "sidecar" }],
            containers: [{ image: "app:9", name: "app" }]
          }
        }
      }
    })
    assert.deepStrictEqual(containers(result).map((c) => [c.name, c.image]), [["app", "app:9"], ["sidecar", "proxy:1"], [
      "mesh",
      "mesh:1"
    ]])
  })

  it("reorders with only a $setElementOrder list", () => {
    const result = patch(live, {
      spec: { template: { spec: { "$setElementOrder/containers": [{ name: "sidecar" }, { name: "app" }] } } }
    })
    assert.deepStrictEqual(containers(result).map((c) => c.name), ["sidecar", "app"])
  })

  it("clears the keys $retainKeys does not list (switching strategy to Recreate)", () => {
    const result = patch(live, { spec: { strategy: { $retainKeys: ["type"], rollingUpdate: null, type: "Recreate" } } })
    assert.deepStrictEqual(spec(result).strategy, { type: "Recreate" })
    assert.isTrue(
      Result.isFailure(StrategicMergePatch.apply(live, { spec: { strategy: { $retainKeys: ["type"], rollingUpdate: {} } } }, deployments))
    )
  })

  it("edits primitive merge lists with $deleteFromPrimitiveList and $setElementOrder", () => {
    const result = patch(live, {
      metadata: {
        "$deleteFromPrimitiveList/finalizers": ["a.example.com"],
        "$setElementOrder/finalizers": ["c.example.com", "b.example.com"],
        finalizers: ["c.example.com"]
      }
    })
    assert.deepStrictEqual((result.metadata as Json.JsonObject).finalizers, ["c.example.com", "b.example.com"])
  })
})

describe("StrategicMergePatch: as kubectl patch --type strategic sends it", () => {
  it("merges a container by name, leaving the others", () => {
    const result = patch(live, { spec: { template: { spec: { containers: [{ name: "sidecar", image: "proxy:2" }] } } } })
    assert.deepStrictEqual(containers(result).map((c) => [c.name, c.image]), [["app", "app:1"], ["sidecar", "proxy:2"]])
    assert.strictEqual(spec(result).replicas, 2)
  })

  it("puts a new container first (Kubernetes docs: kubectl patch, patch-file-containers)", () => {
    const pod = { spec: { containers: [{ name: "patch-demo-ctr", image: "nginx" }] } }
    const result = patch(pod, { spec: { containers: [{ name: "patch-demo-ctr-2", image: "redis" }] } }, pods)
    assert.deepStrictEqual(result, {
      spec: { containers: [{ name: "patch-demo-ctr-2", image: "redis" }, { name: "patch-demo-ctr", image: "nginx" }] }
    })
  })

  it("replaces lists without a merge strategy (tolerations, args)", () => {
    const result = patch(live, {
      spec: {
        template: {
          spec: {
            tolerations: [{ effect: "NoSchedule", key: "disktype", value: "ssd" }],
            containers: [{ name: "app", args: ["--x"] }]
          }
        }
      }
    })
    assert.deepStrictEqual(podSpec(result).tolerations, [{ effect: "NoSchedule", key: "disktype", value: "ssd" }])
    const again = patch(result, { spec: { template: { spec: { containers: [{ name: "app", args: ["--y"] }] } } } })
    assert.deepStrictEqual(containers(again)[0]?.args, ["--y"])
  })

  it("merges ports by containerPort alone (the patch merge key)", () => {
    const result = patch(live, {
      spec: { template: { spec: { containers: [{ name: "app", ports: [{ containerPort: 80, name: "http" }] }] } } }
    })
    assert.deepStrictEqual(containers(result)[0]?.ports, [{ containerPort: 80, protocol: "TCP", name: "http" }])
  })

  it("sets and deletes scalars and map keys", () => {
    const result = patch(live, { spec: { replicas: 5, selector: { matchLabels: { tier: "fe" } } }, metadata: { labels: { x: "y" } } })
    assert.strictEqual(spec(result).replicas, 5)
    // strategic merge has no atomic maps: matchLabels merges
    assert.deepStrictEqual(spec(result).selector, { matchLabels: { app: "web", tier: "fe" } })
    assert.deepStrictEqual((result.metadata as Json.JsonObject).labels, { x: "y" })
  })

  it("honours $patch replace and delete on maps and lists", () => {
    assert.deepStrictEqual(
      spec(patch(live, { spec: { selector: { $patch: "replace", matchLabels: { only: "this" } } } })).selector,
      { matchLabels: { only: "this" } }
    )
    assert.deepStrictEqual(spec(patch(live, { spec: { strategy: { $patch: "delete" } } })).strategy, {})
    assert.deepStrictEqual(
      containers(patch(live, { spec: { template: { spec: { containers: [{ name: "solo", image: "s:1" }, { $patch: "replace" }] } } } })),
      [{ name: "solo", image: "s:1" }]
    )
  })

  it("leaves no directives behind in new subtrees", () => {
    const result = patch({ spec: {} }, {
      spec: { template: { spec: { containers: [{ name: "x", env: [{ name: "A", value: "1" }, { $patch: "delete", name: "B" }] }] } } }
    })
    assert.deepStrictEqual(containers(result), [{ name: "x", env: [{ name: "A", value: "1" }] }])
  })

  it("fails on malformed directives", () => {
    const fails = (body: Json.JsonObject) => Result.isFailure(StrategicMergePatch.apply(live, body, deployments))
    assert.isTrue(fails({ spec: { $patch: "explode" } }))
    assert.isTrue(fails({ spec: { template: { spec: { containers: [{ $patch: "merge", name: "app" }] } } } }))
    assert.isTrue(fails({ spec: { template: { spec: { containers: [{ image: "no-name" }] } } } }))
    assert.isTrue(fails({ spec: { template: { spec: { "$setElementOrder/containers": "app" } } } }))
  })

  it("words a list item without its merge key as Go prints it, a failure kube answers with a plain 500", () => {
    const failed = StrategicMergePatch.apply(live, { spec: { template: { spec: { containers: [{ image: "x", ports: [{ containerPort: 80 }] }] } } } }, deployments)
    assert.deepStrictEqual(Result.isFailure(failed) ? failed.failure : undefined, {
      message: "map: map[image:x ports:[map[containerPort:80]]] does not contain declared merge key: name",
      plain: true
    })
    const directive = StrategicMergePatch.apply(live, { spec: { $patch: "explode" } }, deployments)
    assert.strictEqual(Result.isFailure(directive) ? directive.failure.plain : undefined, false)
  })

  it("does not change its input", () => {
    const before = JSON.stringify(live)
    patch(live, { spec: { replicas: null, template: { spec: { containers: [{ name: "app", image: "x" }] } } } })
    assert.strictEqual(JSON.stringify(live), before)
  })
})
