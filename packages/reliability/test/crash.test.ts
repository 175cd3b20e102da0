/**
 * Crash: `kubefx dev --kubeconfig` runs the buckets and widgets controllers against a separately
 * started `kubefx apiserver --data-dir`, with the object store in the test process. During a run of
 * 1,000 objects (create, change, delete a quarter of the Buckets) the operator is SIGKILLed three
 * times at seeded random points of its progress (twice while it allocates external buckets, once
 * while it frees them) and started again. Everything converges, no Bucket has two external
 * buckets, and no external bucket outlives its deleted Bucket.
 */
import { assert, describe, it } from "@effect/vitest"
import { Faults } from "@kubefx/apiserver"
import * as Buckets from "@kubefx/example-buckets"
import * as Widgets from "@kubefx/example-widgets"
import { Kube } from "@kubefx/kube"
import { Effect, Fiber, Schedule } from "effect"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Cluster from "../src/Cluster.ts"
import * as Fleet from "../src/Fleet.ts"
import * as Processes from "../src/Processes.ts"
import * as Report from "../src/Report.ts"

const widgets = 500
const buckets = 500
const deletes = 125
const namespace = "crash"
const seed = 3
const module = fileURLToPath(new URL("./fixtures/buckets-and-widgets.ts", import.meta.url))

describe("crash", () => {
  it.live("the operator SIGKILLed three times during a 1,000-object run converges without duplicates or orphans", (ctx) =>
    Effect.gen(function*() {
      const entry = Report.start(ctx, "crash", widgets + buckets)
      const started = Date.now()
      const dir = yield* Cluster.tempDir("kubefx-crash-")
      const kubeconfig = join(dir, "kubeconfig")
      yield* Processes.apiserver({ port: 0, kubeconfig, dataDir: join(dir, "data"), token: "reliability" })
      const kube = yield* Cluster.client(kubeconfig)
      const { url, store } = yield* Cluster.objectStore("10 millis")
      yield* Cluster.prepare(namespace, [Buckets.Bucket, Widgets.Widget]).pipe(Effect.provideService(Kube.Kube, kube))
      const start = Processes.dev({ kubeconfig, dir: join(dir, "dev"), storePort: Number(new URL(url).port), modules: [module] })

      let operator = yield* start
      const random = Faults.random(seed)
      const desired = Fleet.tracked()
      const kills: Array<{
        readonly during: string
        readonly atMillis: number
        readonly pid: number
        readonly externalBuckets: number
        readonly restartMillis: number
      }> = []
      const external = Effect.map(Effect.orDie(store.list()), (list) => list.length)
      // Kills at seeded random points of the operator's own progress: while it allocates external
      // buckets (twice), and while it frees those of deleted Buckets.
      const killWhen = (during: string, reached: (externalBuckets: number) => boolean) =>
        Effect.gen(function*() {
          const externalBuckets = yield* external.pipe(
            Effect.repeat({ schedule: Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "90 seconds" })), until: reached })
          )
          const killedAt = Date.now()
          const pid = operator.pid
          yield* operator.kill("SIGKILL")
          operator = yield* start
          kills.push({ during, atMillis: killedAt - started, pid, externalBuckets, restartMillis: Date.now() - killedAt })
        })
      const first = Math.round(buckets * (0.1 + random() * 0.3))
      const second = Math.round(buckets * (0.5 + random() * 0.4))
      const freed = Math.round(deletes * (0.2 + random() * 0.6))

      const writes = yield* Effect.forkScoped(Fleet.create(namespace, { widgets, buckets }, desired).pipe(Effect.provideService(Kube.Kube, kube)))
      yield* killWhen("allocation", (n) => n >= first)
      yield* killWhen("allocation", (n) => n >= second)
      yield* Fiber.join(writes)
      yield* Fleet.change(namespace, "second", desired).pipe(Effect.provideService(Kube.Kube, kube))
      // The deletes start once every Bucket has its external bucket, so the count can only fall.
      yield* external.pipe(Effect.repeat({ schedule: Schedule.spaced("50 millis").pipe(Schedule.upTo({ duration: "90 seconds" })), until: (n) => n >= buckets }))
      const deleting = yield* Effect.forkScoped(Fleet.remove(namespace, deletes, desired).pipe(Effect.provideService(Kube.Kube, kube)))
      yield* killWhen("cleanup", (n) => n <= buckets - freed)
      yield* Fiber.join(deleting)

      const verdict = yield* Fleet.verdict(namespace, desired, store).pipe(
        Effect.provideService(Kube.Kube, kube),
        Effect.repeat({
          schedule: Schedule.spaced("500 millis").pipe(Schedule.upTo({ duration: "120 seconds" })),
          until: (v) => Fleet.isDone(v, widgets + buckets)
        })
      )
      entry.durationMs = Date.now() - started
      entry.converged = verdict.converged
      entry.duplicates = verdict.duplicates
      entry.lostUpdates = verdict.lostUpdates
      Report.count(entry, "operator SIGKILLs", kills.length)
      entry.details = {
        deletedBuckets: deletes,
        orphans: verdict.orphans,
        leftover: verdict.leftover,
        pending: verdict.pending,
        kills
      }
      assert.strictEqual(kills.length, 3)
      assert.deepStrictEqual(verdict.pending, [])
      assert.strictEqual(verdict.converged, widgets + buckets)
      assert.strictEqual(verdict.duplicates, 0)
      assert.strictEqual(verdict.orphans, 0)
      assert.strictEqual(verdict.leftover, 0)
      assert.strictEqual(verdict.lostUpdates, 0)
    }), 240_000)
})
