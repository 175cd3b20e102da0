/**
 * A bulk dependent: as many objects of one kind as `desired` answers, in a workflow beside a
 * single dependent of the same kind. Reconciling applies them and deletes the ones no longer
 * desired (its own only, found by owner and label); a false precondition deletes them all; the
 * primary's deletion takes them with it.
 */
import { assert, describe, it as plain, layer } from "@effect/vitest"
import { Builtins, Conditions, Controller, Dependent, Kube, Resource, Workflow } from "@kubefx/kube"
import { Effect, Schema } from "effect"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

const Sharded = Resource.custom({
  group: "bulk.test.kubefx.dev",
  version: "v1",
  kind: "Sharded",
  plural: "shardeds",
  spec: Schema.Struct({ shards: Schema.Int, enabled: Schema.Boolean }),
  status: Schema.Struct(Conditions.statusFields)
})
type Sharded = typeof Sharded.schema.Type

const shards = Dependent.bulk({
  name: "shards",
  resource: Builtins.ConfigMap,
  reconcileWhen: (primary: Sharded) => primary.spec.enabled,
  desired: (primary: Sharded) =>
    Array.from({ length: primary.spec.shards }, (_, i) => ({ metadata: { name: `${primary.metadata.name}-shard-${i}` }, data: { shard: `${i}` } })),
  ready: (actual) => actual.every((configMap) => configMap.data?.shard !== undefined)
})

// A single dependent of the same kind: the bulk one never takes it for one of its own.
const settings = Dependent.make({
  name: "settings",
  resource: Builtins.ConfigMap,
  desired: (primary: Sharded) => ({ metadata: { name: `${primary.metadata.name}-settings` }, data: { shards: `${primary.spec.shards}` } })
})

const sharded = (ns: string, name: string, spec: Sharded["spec"]) => ({
  apiVersion: Sharded.apiVersion,
  kind: Sharded.kind,
  metadata: { name, namespace: ns },
  spec
})

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("a bulk dependent", (it) => {
  it.effect("applies as many objects as desired, deletes those no longer desired, and all of them when its precondition turns false", () =>
    Effect.gen(function*() {
      yield* installCrd(Sharded)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      yield* Controller.start(Controller.define({
        name: "sharded",
        for: Sharded,
        namespace: ns,
        ...Workflow.controller(Workflow.parallel(shards, settings))
      }))
      const names = Effect.map(kube.list(Builtins.ConfigMap, { namespace: ns }), (list) =>
        list.items.filter((cm) => cm.metadata.deletionTimestamp === undefined).map((cm) => cm.metadata.name).sort().join(" "))
      const holds = (expected: string) => eventually(Effect.flatMap(names, (now) => ensure(now === expected, now)))

      yield* kube.create(Sharded, sharded(ns, "db", { shards: 3, enabled: true }))
      yield* holds("db-settings db-shard-0 db-shard-1 db-shard-2")
      const shard = yield* kube.get(Builtins.ConfigMap, "db-shard-1", ns)
      assert.strictEqual(shard.metadata.labels?.[Dependent.bulkLabel], "shards")
      assert.strictEqual(shard.metadata.ownerReferences?.[0]?.name, "db")
      yield* eventually(Effect.flatMap(kube.get(Sharded, "db", ns), (db) =>
        ensure(db.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true, JSON.stringify(db.status))))

      yield* kube.patch(Sharded, "db", ns, { spec: { shards: 1 } }, { type: "merge" })
      yield* holds("db-settings db-shard-0")
      yield* kube.patch(Sharded, "db", ns, { spec: { shards: 2 } }, { type: "merge" })
      yield* holds("db-settings db-shard-0 db-shard-1")
      yield* kube.patch(Sharded, "db", ns, { spec: { enabled: false } }, { type: "merge" })
      yield* holds("db-settings")
      yield* kube.patch(Sharded, "db", ns, { spec: { enabled: true } }, { type: "merge" })
      yield* holds("db-settings db-shard-0 db-shard-1")
      yield* kube.delete(Sharded, "db", ns)
      yield* holds("")
    }))
})

describe("a bulk dependent's name", () => {
  plain("marks its objects' label, so one the server would refuse is refused when declared", () => {
    assert.throws(
      () => Dependent.bulk({ name: "shards of a db", resource: Builtins.ConfigMap, desired: () => [] }),
      `bulk dependent "shards of a db": its name marks its objects' label:`
    )
  })
})
