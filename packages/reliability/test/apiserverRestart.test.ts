/**
 * API server restart: writers change Widgets and add ConfigMaps through a separately started
 * `kubefx apiserver --data-dir`, keeping a client-side log of every write the server acknowledged,
 * while the widgets operator reconciles. The server is SIGKILLed mid-run and started again on the
 * same port and data dir. Every acknowledged write is in the store afterwards, and the operator,
 * whose watches expired with the restart, relists and converges every Widget on its latest spec.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Widgets from "@kubefx/example-widgets"
import { Builtins, Kube, Operator } from "@kubefx/kube"
import { Effect, Fiber, Schedule } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Cluster from "../src/Cluster.ts"
import * as Fleet from "../src/Fleet.ts"
import * as Processes from "../src/Processes.ts"
import * as Report from "../src/Report.ts"

const writers = 8
const widgetsPerWriter = 10
const namespace = "restart"

/** The last revision a data dir holds: its snapshot's, or the last complete log record's. */
const durableRevision = (dataDir: string): number => {
  const snapshot = join(dataDir, "snapshot.json")
  let revision = existsSync(snapshot) ? (JSON.parse(readFileSync(snapshot, "utf8")) as { revision: number }).revision : 0
  const log = join(dataDir, "log.ndjson")
  const lines = existsSync(log) ? readFileSync(log, "utf8").split("\n").slice(0, -1) : []
  for (const line of lines) revision = Math.max(revision, (JSON.parse(line) as { r: number }).r)
  return revision
}

describe("api server restart", () => {
  it.live("SIGKILL and restart on the same data dir: no acknowledged write lost, the operator relists and converges", (ctx) =>
    Effect.gen(function*() {
      const entry = Report.start(ctx, "api server restart", writers * widgetsPerWriter)
      const started = Date.now()
      const dir = yield* Cluster.tempDir("kubefx-restart-")
      const kubeconfig = join(dir, "kubeconfig")
      const serverOptions = { kubeconfig, dataDir: join(dir, "data"), token: "reliability" }
      const first = yield* Processes.apiserver({ ...serverOptions, port: 0 })
      const kube = yield* Cluster.client(kubeconfig)
      yield* Cluster.prepare(namespace, [Widgets.Widget]).pipe(Effect.provideService(Kube.Kube, kube))

      const logs = Cluster.countingLogger({ relists: /relisting/, watchFailures: /watch failed/ })
      const operator = yield* Operator.start(Operator.make({ name: "reliability-restart", controllers: [Widgets.definition], http: false, shutdownTimeout: "1 second" })).pipe(
        Effect.provideService(Kube.Kube, kube),
        Effect.provide(logs.layer)
      )

      // The client-side log: the last acknowledged message of each Widget, and each acknowledged ConfigMap.
      const acknowledged = new Map<string, string>()
      const entries = new Set<string>()
      let writes = 0
      let running = true
      const writer = (w: number) =>
        Effect.gen(function*() {
          for (let seq = 0; running; seq++) {
            const widget = `w-${w}-${seq % widgetsPerWriter}`
            const message = `m-${seq}`
            yield* Fleet.applyWidget(namespace, widget, message)
            acknowledged.set(widget, message)
            writes++
            if (seq % 5 === 0) {
              const name = `entry-${w}-${seq}`
              yield* Fleet.persistently(kube.apply(Builtins.ConfigMap, { metadata: { name, namespace }, data: { seq: `${seq}` } }, {
                fieldManager: Fleet.userManager,
                force: true
              }))
              entries.add(name)
              writes++
            }
          }
        }).pipe(Effect.provideService(Kube.Kube, kube))
      const fibers = yield* Effect.forEach(Array.from({ length: writers }, (_, w) => w), (w) => Effect.forkScoped(writer(w)))

      yield* Effect.sleep("2 seconds")
      const writesBeforeKill = writes
      const killed = yield* first.child.kill("SIGKILL")
      // The highest revision the operator's caches hold, against the last one the data dir kept:
      // a client must never have seen a write the crash lost.
      const seenByOperator = Math.max(0, ...(operator.controllers[0]?.controller()?.informers ?? []).flatMap((informer) =>
        informer.list().map((object) => Number(object.metadata.resourceVersion))))
      const kept = durableRevision(serverOptions.dataDir)
      const second = yield* Processes.apiserver({ ...serverOptions, port: first.port })
      const downMillis = Date.now() - killed.at
      yield* Effect.sleep("2 seconds")
      running = false
      yield* Fiber.joinAll(fibers)

      // Compare the log with the store, read back through the restarted server.
      const stored = new Map((yield* Fleet.persistently(kube.listAll(Widgets.Widget, { namespace }))).items.map((w) => [w.metadata.name ?? "", w.spec.message]))
      const storedEntries = new Set((yield* Fleet.persistently(kube.listAll(Builtins.ConfigMap, { namespace }))).items.map((c) => c.metadata.name ?? ""))
      const lostWidgets = [...acknowledged].filter(([name, message]) => stored.get(name) !== message).map(([name]) => name)
      const lostEntries = [...entries].filter((name) => !storedEntries.has(name))

      const verdict = yield* Fleet.verdict(namespace, { widgets: acknowledged, buckets: new Set() }).pipe(
        Effect.provideService(Kube.Kube, kube),
        Effect.repeat({
          schedule: Schedule.spaced("500 millis").pipe(Schedule.upTo({ duration: "60 seconds" })),
          until: (v) => Fleet.isDone(v, acknowledged.size)
        })
      )
      entry.durationMs = Date.now() - started
      // Objects: the Widgets (converged: reconciled on their last acknowledged spec) and the ConfigMaps
      // the writers added (converged: present).
      entry.objects = acknowledged.size + entries.size
      entry.converged = verdict.converged + entries.size - lostEntries.length
      entry.lostUpdates = lostWidgets.length + lostEntries.length
      Report.count(entry, "API server SIGKILLs", 1)
      entry.details = {
        acknowledgedWrites: writes,
        acknowledgedBeforeKill: writesBeforeKill,
        configMapsAcknowledged: entries.size,
        downMillis,
        restartedOnPort: second.port,
        highestRevisionSeenByOperator: seenByOperator,
        lastRevisionKeptByTheDataDir: kept,
        lost: [...lostWidgets, ...lostEntries].slice(0, 5),
        operatorRelists: logs.counts.matched.relists ?? 0,
        operatorWatchFailures: logs.counts.matched.watchFailures ?? 0,
        operatorLastErrors: logs.counts.lastErrors,
        pending: verdict.pending
      }
      assert.strictEqual(second.port, first.port)
      assert.isAbove(writes, writesBeforeKill)
      assert.isAtMost(seenByOperator, kept, "the operator saw a write the crash lost")
      assert.deepStrictEqual(lostWidgets, [])
      assert.deepStrictEqual(lostEntries, [])
      assert.deepStrictEqual(verdict.pending, [])
      assert.strictEqual(verdict.converged, acknowledged.size)
      // The restart emptied the server's event history: informers behind its revision relisted.
      assert.isAbove(logs.counts.matched.relists ?? 0, 0)
    }), 180_000)
})
