/**
 * Status writes that cannot clobber each other: a value a locked write allocated (an external id)
 * survives the controller's later unlocked status applies that do not mention it.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Conditions, Controller, Kube, Resource } from "@kubefx/kube"
import { Effect, References, Schema } from "effect"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

const Database = Resource.custom({
  group: "test.kubefx.dev",
  version: "v1",
  kind: "Database",
  plural: "databases",
  spec: Schema.Struct({ size: Schema.Int }),
  status: Schema.Struct({
    ...Conditions.statusFields,
    databaseId: Schema.optionalKey(Schema.String),
    phase: Schema.optionalKey(Schema.String)
  })
})

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("status writes", (it) => {
  it.effect("an id allocated with patchStatusAndCache survives later applyStatus calls that omit it", () =>
    Effect.gen(function*() {
      yield* installCrd(Database)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      let allocations = 0
      yield* Controller.make({
        name: "databases",
        for: Database,
        namespace: ns,
        reconcile: (db, ctx) =>
          Effect.gen(function*() {
            const metadata = { name: db.metadata.name ?? "", namespace: db.metadata.namespace }
            if (db.status?.databaseId === undefined) {
              allocations++
              yield* ctx.patchStatusAndCache({ metadata, status: { databaseId: `db-${allocations}` } })
            }
            yield* ctx.applyStatus({ metadata, status: { phase: `size ${db.spec.size}` } })
            return Outcome.done
          })
      })
      yield* kube.create(Database, { apiVersion: Database.apiVersion, kind: "Database", metadata: { name: "orders", namespace: ns }, spec: { size: 1 } })
      yield* eventually(Effect.flatMap(kube.get(Database, "orders", ns), (db) => ensure(db.status?.phase === "size 1", "first run")))
      // Two more runs, each applying status without the id.
      for (const size of [2, 3]) {
        yield* kube.patch(Database, "orders", ns, { spec: { size } }, { type: "merge" })
        yield* eventually(Effect.flatMap(kube.get(Database, "orders", ns), (db) => ensure(db.status?.phase === `size ${size}`, `run for size ${size}`)))
      }
      const db = yield* kube.get(Database, "orders", ns)
      assert.strictEqual(db.status?.databaseId, "db-1")
      assert.strictEqual(allocations, 1, "allocated once")
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})
