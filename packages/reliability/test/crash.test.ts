/**
 * Crash: `kubefx dev --kubeconfig` runs the buckets and widgets controllers against a separately
 * started `kubefx apiserver --data-dir`, with the object store in the test process. During a run of
 * 1,000 objects (create, change, delete a quarter of the Buckets) the operator is SIGKILLed three
 * times, once in each phase at a seeded random moment, and started again. Everything converges, no
 * Bucket has two external buckets, and no external bucket outlives its deleted Bucket.
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
        readonly phase: string
        readonly afterMillis: number
        readonly pid: number
        readonly externalBucketsAtKill: number
        readonly restartMillis: number
      }> = []
      const phases = [
        { name: "create", writes: Fleet.create(namespace, { widgets, buckets }, desired) },
        { name: "change", writes: Fleet.change(namespace, "second", desired) },
        { name: "delete", writes: Fleet.remove(namespace, deletes, desired) }
      ]
      for (const phase of phases) {
        const phaseStart = Date.now()
        const writes = yield* Effect.forkScoped(phase.writes.pipe(Effect.provideService(Kube.Kube, kube)))
        yield* Effect.sleep(Math.round(300 + random() * 2500))
        const killedAt = Date.now()
        const pid = operator.pid
        yield* operator.kill("SIGKILL")
        const externalBucketsAtKill = (yield* Effect.orDie(store.list())).length
        operator = yield* start
        kills.push({ phase: phase.name, afterMillis: killedAt - phaseStart, pid, externalBucketsAtKill, restartMillis: Date.now() - killedAt })
        yield* Fiber.join(writes)
      }

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
