/**
 * Status writes: one request per run (the reconciler's status, Ready and observedGeneration in one
 * apply), none when nothing changes, and none that clobber each other: a value a locked write
 * allocated (an external id) survives the controller's later unlocked status applies that omit it.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome, RetryPolicy } from "@kubefx/core"
import { Conditions, Controller, type Crd, Kube, type ObjectMeta, Resource } from "@kubefx/kube"
import { Cause, Data, Effect, Exit, Ref, References, Schema } from "effect"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

// Test kinds that differ only in their status.
const kind = <S extends Schema.Struct.Fields>(kind: string, plural: string, status: S) =>
  Resource.custom({
    group: "test.kubefx.dev",
    version: "v1",
    kind,
    plural,
    spec: Schema.Struct({ size: Schema.Int }),
    status: Schema.Struct(status)
  })

const Database = kind("Database", "databases", {
  ...Conditions.statusFields,
  databaseId: Schema.optionalKey(Schema.String),
  phase: Schema.optionalKey(Schema.String)
})

type Database = typeof Database.schema.Type

// The same kind of status with no `conditions`: nowhere to hold Ready.
const Ledger = kind("Ledger", "ledgers", { phase: Schema.optionalKey(Schema.String) })

// A status with nested values: what a run states is compared deeply with what the object holds.
const Cluster = kind("Cluster", "clusters", {
  ...Conditions.statusFields,
  shards: Schema.optionalKey(Schema.Array(Schema.Struct({ id: Schema.Int, zone: Schema.String })))
})

const database = (namespace: string, name: string, size: number) =>
  ({ apiVersion: Database.apiVersion, kind: "Database", metadata: { name, namespace }, spec: { size } }) as const

// The controller's client, counting the status requests it sends (what the API server and the
// watch pay for each run).
const countingStatusWrites = Effect.gen(function*() {
  const kube = yield* Kube.Kube
  const writes = yield* Ref.make(0)
  const client: Kube.Client = {
    ...kube,
    apply: (resource, body, options) =>
      Effect.andThen(options.subresource === "status" ? Ref.update(writes, (n) => n + 1) : Effect.void, kube.apply(resource, body, options))
  }
  return { client, writes }
})

// A controller of one of the kinds above on a fresh namespace, whose client counts its status requests.
const counted = <A extends ObjectMeta.KubeObject, E>(
  resource: Resource.Resource<A> & Crd.CustomResource,
  options: Omit<Controller.Options<A, E, never>, "for" | "namespace">
) =>
  Effect.gen(function*() {
    yield* installCrd(resource)
    const ns = yield* namespace
    const kube = yield* Kube.Kube
    const { client, writes } = yield* countingStatusWrites
    const controller = yield* Controller.start(Controller.define({ ...options, for: resource, namespace: ns })).pipe(
      Effect.provideService(Kube.Kube, client)
    )
    return { controller, kube, ns, writes }
  })

// A Database controller, counted, and a Database "orders" for it.
const ordersWith = <E>(options: Omit<Controller.Options<Database, E, never>, "for" | "namespace">) =>
  Effect.gen(function*() {
    const { controller, kube, ns, writes } = yield* counted(Database, options)
    yield* kube.create(Database, database(ns, "orders", 1))
    const orders = kube.get(Database, "orders", ns)
    const until = (check: (db: Database) => boolean, what: string) => eventually(Effect.flatMap(orders, (db) => ensure(check(db), what)))
    return { controller, kube, ns, orders, until, writes }
  })

const readyOf = (db: Database) => Conditions.get(db.status?.conditions ?? [], "Ready")

class Unreachable extends Data.TaggedError("Unreachable")<{ readonly message: string }> {}

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("status writes", (it) => {
  it.effect("a run's status, Ready and observedGeneration go in one request; successive applyStatus calls merge", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const { controller, kube, ns, orders, until, writes } = yield* ordersWith({
        name: "databases-one-write",
        reconcile: (db, ctx) =>
          Effect.gen(function*() {
            yield* Ref.update(runs, (n) => n + 1)
            const staged = yield* ctx.applyStatus({ status: { phase: `size ${db.spec.size}` } })
            assert.strictEqual(staged.status?.phase, `size ${db.spec.size}`, "the answer reads as the write will")
            yield* ctx.applyStatus({ status: { databaseId: `db-${db.metadata.name}` } })
            return Outcome.done
          })
      })
      yield* until((db) => readyOf(db)?.status === "True", "not Ready")
      yield* controller.awaitIdle
      const first = yield* orders
      assert.deepStrictEqual([first.status?.phase, first.status?.databaseId, first.status?.observedGeneration], ["size 1", "db-orders", 1])
      assert.deepStrictEqual([yield* Ref.get(runs), yield* Ref.get(writes)], [1, 1])

      yield* kube.patch(Database, "orders", ns, { spec: { size: 2 } }, { type: "merge" })
      yield* until((db) => db.status?.observedGeneration === 2, "second run")
      yield* controller.awaitIdle
      const second = yield* orders
      assert.deepStrictEqual([second.status?.phase, readyOf(second)?.observedGeneration], ["size 2", 2])
      assert.deepStrictEqual([yield* Ref.get(runs), yield* Ref.get(writes)], [2, 2])
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("a status that declares no conditions gets the reconciler's fields and no Ready", () =>
    Effect.gen(function*() {
      const { controller, kube, ns, writes } = yield* counted(Ledger, {
        name: "ledgers",
        reconcile: (_, ctx) => Effect.as(ctx.applyStatus({ status: { phase: "open" } }), Outcome.done)
      })
      yield* kube.create(Ledger, { apiVersion: Ledger.apiVersion, kind: "Ledger", metadata: { name: "main", namespace: ns }, spec: { size: 1 } })
      yield* eventually(Effect.flatMap(kube.get(Ledger, "main", ns), (ledger) => ensure(ledger.status?.phase === "open", "no status")))
      yield* controller.awaitIdle
      assert.deepStrictEqual((yield* kube.get(Ledger, "main", ns)).status, { phase: "open" })
      assert.strictEqual(yield* Ref.get(writes), 1)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("a controller with dependsOn started alone dies naming them: an operator starts it", () =>
    Effect.gen(function*() {
      const base = Controller.define({ name: "base", for: Database, reconcile: () => Effect.succeed(Outcome.done) })
      const dependent = Controller.define({ name: "dependent", for: Database, dependsOn: [base], reconcile: () => Effect.succeed(Outcome.done) })
      const exit = yield* Effect.exit(Controller.start(dependent))
      assert.isTrue(Exit.isFailure(exit) && Cause.pretty(exit.cause).includes("controller dependent depends on base: start it with Operator.make"))
    }))

  it.effect("a run whose status and Ready already hold sends no status request", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const { controller, kube, ns, until, writes } = yield* ordersWith({
        name: "databases-converged",
        reconcile: (_, ctx) =>
          Ref.update(runs, (n) => n + 1).pipe(
            Effect.andThen(ctx.applyStatus({ status: { phase: "ready" } })),
            Effect.as(Outcome.done)
          )
      })
      yield* until((db) => readyOf(db)?.status === "True", "not Ready")
      yield* controller.awaitIdle
      // A label change runs the reconciler again (R16) on an object that already holds its status.
      yield* kube.patch(Database, "orders", ns, { metadata: { labels: { touched: "yes" } } }, { type: "merge" })
      yield* eventually(Effect.flatMap(Ref.get(runs), (n) => ensure(n === 2, "no second run")))
      yield* controller.awaitIdle
      assert.strictEqual(yield* Ref.get(writes), 1)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("nested status values compare deeply: the same shards send nothing, a value changed inside one is written", () =>
    Effect.gen(function*() {
      const runs = yield* Ref.make(0)
      const { controller, kube, ns, writes } = yield* counted(Cluster, {
        name: "clusters",
        reconcile: (cluster, ctx) =>
          Ref.update(runs, (n) => n + 1).pipe(
            Effect.andThen(ctx.applyStatus({
              status: { shards: [{ id: 0, zone: `zone-${cluster.metadata.labels?.zone ?? "a"}` }] }
            })),
            Effect.as(Outcome.done)
          )
      })
      yield* kube.create(Cluster, { apiVersion: Cluster.apiVersion, kind: "Cluster", metadata: { name: "c", namespace: ns }, spec: { size: 1 } })
      const shardsOf = Effect.map(kube.get(Cluster, "c", ns), (c) => JSON.stringify(c.status?.shards))
      yield* eventually(Effect.flatMap(shardsOf, (shards) => ensure(shards === '[{"id":0,"zone":"zone-a"}]', `shards ${shards}`)))
      yield* controller.awaitIdle
      yield* kube.patch(Cluster, "c", ns, { metadata: { labels: { touched: "yes" } } }, { type: "merge" })
      yield* eventually(Effect.flatMap(Ref.get(runs), (n) => ensure(n === 2, "no second run")))
      yield* controller.awaitIdle
      assert.strictEqual(yield* Ref.get(writes), 1)
      // A label moves no generation, so only the shard's own change can make this run write.
      yield* kube.patch(Cluster, "c", ns, { metadata: { labels: { zone: "b" } } }, { type: "merge" })
      yield* eventually(Effect.flatMap(shardsOf, (shards) =>
        ensure(shards === '[{"id":0,"zone":"zone-b"}]', `shards ${shards}`)))
      yield* controller.awaitIdle
      assert.strictEqual(yield* Ref.get(writes), 2)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("a failed run writes what it staged with Ready=False in one request", () =>
    Effect.gen(function*() {
      const { controller, orders, until, writes } = yield* ordersWith({
        name: "databases-failing",
        retryPolicy: RetryPolicy.none,
        reconcile: (_, ctx) =>
          ctx.applyStatus({ status: { phase: "provisioning" } }).pipe(
            Effect.andThen(Effect.fail(new Unreachable({ message: "the database host does not answer" })))
          )
      })
      yield* until((db) => readyOf(db)?.status === "False", "no Ready=False")
      yield* controller.awaitIdle
      const db = yield* orders
      assert.strictEqual(db.status?.phase, "provisioning")
      assert.include(readyOf(db)?.message, "the database host does not answer")
      assert.strictEqual(yield* Ref.get(writes), 1)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("a status the Schema rejects fails the run with a DecodeError and is never sent", () =>
    Effect.gen(function*() {
      const { controller, orders, until } = yield* ordersWith({
        name: "databases-undecodable-status",
        retryPolicy: RetryPolicy.none,
        reconcile: (_, ctx) =>
          ctx.applyStatus({ status: { phase: "fine" } }).pipe(
            Effect.andThen(ctx.applyStatus({ status: { databaseId: 42 } })),
            Effect.as(Outcome.done)
          )
      })
      yield* until((db) => readyOf(db)?.status === "False", "no Ready=False")
      yield* controller.awaitIdle
      const db = yield* orders
      assert.include(readyOf(db)?.message, "databaseId")
      // What decoded was staged and goes with Ready=False; the field that did not is not sent.
      assert.strictEqual(db.status?.phase, "fine")
      assert.isUndefined(db.status?.databaseId)
      assert.strictEqual((yield* controller.health).consecutiveFailures, 1)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("an id allocated with patchStatusAndCache survives later applyStatus calls that omit it", () =>
    Effect.gen(function*() {
      let allocations = 0
      const { kube, ns, orders, until } = yield* ordersWith({
        name: "databases",
        reconcile: (db, ctx) =>
          Effect.gen(function*() {
            if (db.status?.databaseId === undefined) {
              allocations++
              yield* ctx.patchStatusAndCache({ status: { databaseId: `db-${allocations}` } })
            }
            yield* ctx.applyStatus({ status: { phase: `size ${db.spec.size}` } })
            return Outcome.done
          })
      })
      yield* until((db) => db.status?.phase === "size 1", "first run")
      // Two more runs, each applying status without the id.
      for (const size of [2, 3]) {
        yield* kube.patch(Database, "orders", ns, { spec: { size } }, { type: "merge" })
        yield* until((db) => db.status?.phase === `size ${size}`, `run for size ${size}`)
      }
      const db = yield* orders
      assert.strictEqual(db.status?.databaseId, "db-1")
      assert.strictEqual(allocations, 1, "allocated once")
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})
