/**
 * Faults: 500 Buckets and 500 Widgets on the embedded API server while it answers 10% of requests
 * with 5xx, 5% of writes with 409, adds 0-50 ms to every request, throttles in bursts (429 with
 * Retry-After), closes every watch every 2 s and expires them all once (410). Everything converges:
 * each Widget's ConfigMap holds its latest message, each Bucket has exactly one external bucket.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Buckets from "@kubefx/example-buckets"
import * as Widgets from "@kubefx/example-widgets"
import { Kube, Operator } from "@kubefx/kube"
import { Duration, Effect, Fiber, Schedule } from "effect"
import * as Cluster from "../src/Cluster.ts"
import * as Fleet from "../src/Fleet.ts"
import * as Observed from "../src/Observed.ts"
import * as Report from "../src/Report.ts"

const buckets = 500
const widgets = 500
const namespace = "faults"
const seed = 8

const writes = ["create", "update", "patch", "delete", "deletecollection"] as const
const latencyMs = { min: 0, max: 50 }
// The server draws 409 only for requests not already failed with 5xx: 0.05 / 0.9 makes it 5% of writes.
const rules = (throttleRate: number) => [
  { verbs: [...writes], errorRate: 0.1, errorCode: 503, conflictRate: 0.05 / 0.9, latencyMs, throttleRate, retryAfterSeconds: 1 },
  { errorRate: 0.1, errorCode: 500, latencyMs, throttleRate, retryAfterSeconds: 1 }
]

describe("faults", () => {
  it.live("500 Buckets and 500 Widgets converge under 5xx, 409, 429 bursts, latency, closed and expired watches", (ctx) =>
    Effect.gen(function*() {
      const entry = Report.start(ctx, "faults", buckets + widgets)
      const started = Date.now()
      const { server, kube } = yield* Cluster.embedded()
      const { store } = yield* Cluster.objectStore("10 millis")
      const seen: Observed.Counts = {}
      const injected = Cluster.countInjected(server.faults)
      const logs = Cluster.countingLogger()
      yield* Cluster.prepare(namespace, [Buckets.Bucket, Widgets.Widget]).pipe(Effect.provideService(Kube.Kube, kube))

      yield* Operator.start(Operator.make({
        name: "reliability-faults",
        controllers: [Buckets.definition, Widgets.definition],
        http: false,
        shutdownTimeout: "1 second"
      })).pipe(
        Effect.provideService(Kube.Kube, Observed.client(kube, seen)),
        Effect.provideService(Buckets.ObjectStore.ObjectStore, store),
        Effect.provide(logs.layer)
      )

      // The fault schedule: base faults all along, a 429 burst of 1 s every 4 s, every watch closed
      // every 2 s, every watch expired once at 5 s. Each phase reseeds, so a run is reproducible.
      let phase = 0
      const injector = yield* Effect.forkScoped(Effect.gen(function*() {
        for (let tick = 0;; tick++) {
          const burst = tick % 8 === 6 || tick % 8 === 7
          if (tick % 8 === 6) Report.count(entry, "429 bursts")
          server.faults.set({ seed: seed + phase++, rules: rules(burst ? 0.5 : 0) })
          if (tick % 4 === 3) Report.count(entry, "watches closed", server.faults.closeWatches())
          if (tick === 10) Report.count(entry, "watches expired (410)", server.faults.expireWatches())
          yield* Effect.sleep("500 millis")
        }
      }))

      const desired = Fleet.tracked()
      yield* Effect.andThen(Fleet.create(namespace, { widgets, buckets }, desired), Fleet.change(namespace, "second", desired)).pipe(
        Effect.provideService(Kube.Kube, Observed.client(kube, seen))
      )

      const check = Fleet.verdict(namespace, desired, store).pipe(Effect.provideService(Kube.Kube, kube))
      const verdict = yield* check.pipe(
        Effect.repeat({
          schedule: Schedule.spaced("1 second").pipe(Schedule.upTo({ duration: "150 seconds" })),
          until: (v) => Fleet.isDone(v, buckets + widgets)
        })
      )
      yield* Fiber.interrupt(injector)
      server.faults.clear()

      entry.durationMs = Date.now() - started
      entry.converged = verdict.converged
      entry.duplicates = verdict.duplicates
      entry.lostUpdates = verdict.lostUpdates
      const { requests, ...faults } = injected
      for (const [kind, n] of Object.entries(faults)) Report.count(entry, kind === "delayed" ? "delayed requests" : `HTTP ${kind}`, n)
      entry.details = {
        requests,
        failuresSeenByClients: seen,
        orphans: verdict.orphans,
        pending: verdict.pending,
        faultPhases: phase,
        operatorLogLines: logs.counts.byLevel,
        convergedAfter: Duration.format(Duration.millis(entry.durationMs))
      }
      assert.deepStrictEqual(verdict.pending, [])
      assert.strictEqual(verdict.converged, buckets + widgets)
      assert.strictEqual(verdict.duplicates, 0)
      assert.strictEqual(verdict.orphans, 0)
      assert.strictEqual(verdict.lostUpdates, 0)
      assert.isAbove(injected["500"] ?? 0, 0)
      assert.isAbove(injected["503"] ?? 0, 0)
      assert.isAbove(injected["409"] ?? 0, 0)
      assert.isAbove(injected["429"] ?? 0, 0)
      assert.isAbove(entry.faultsInjected["watches expired (410)"] ?? 0, 0)
    }), 240_000)
})
