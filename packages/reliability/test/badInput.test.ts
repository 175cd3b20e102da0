/**
 * Bad input, each on its own embedded API server: custom resources that violate their schema (422
 * with causes), a Flaky failing with a 1 MB message (status keeps 256 characters, memory does not
 * grow with the failures), malformed and oversized request bodies (400, 413, and the server keeps
 * serving), reconcilers that throw or loop forever (the defect is contained, the reconcile timeout
 * interrupts the loop and counts a failure) and a watch stream with garbage lines (skipped and
 * logged, the same stream goes on).
 */
import { assert, describe, it } from "@effect/vitest"
import { Kubeconfig } from "@kubefx/apiserver"
import { Failure, Outcome, RetryPolicy } from "@kubefx/core"
import * as Flaky from "@kubefx/example-flaky"
import * as Widgets from "@kubefx/example-widgets"
import { Builtins, Conditions, Controller, Informer, Kube } from "@kubefx/kube"
import { type Duration, Effect, Schedule } from "effect"
import { request as httpRequest, createServer } from "node:http"
import { join } from "node:path"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import * as Cluster from "../src/Cluster.ts"
import * as Report from "../src/Report.ts"

const namespace = "bad-input"

const call = (url: string, token: string, method: string, path: string, body?: string | Buffer, contentType = "application/json") =>
  Effect.promise(async () => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": contentType },
      ...(body === undefined ? {} : { body })
    })
    return { status: response.status, body: await response.json().catch(() => undefined) as any }
  })

// A full collection, then the heap as it is.
setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const heapMiB = () => {
  gc()
  return Math.round(process.memoryUsage().heapUsed / 1024 / 1024)
}

const until = <A>(check: Effect.Effect<A>, done: (a: A) => boolean, within: Duration.Input = "30 seconds") =>
  check.pipe(Effect.repeat({ schedule: Schedule.spaced("50 millis").pipe(Schedule.upTo({ duration: within })), until: done }))

describe("bad input", () => {
  it.live("custom resources violating their schema get 422 with a cause per field", (ctx) =>
    Effect.gen(function*() {
      const entry = Report.start(ctx, "bad input: invalid custom resources", 3)
      const started = Date.now()
      const { server, kube } = yield* Cluster.embedded()
      yield* Cluster.prepare(namespace, [Widgets.Widget]).pipe(Effect.provideService(Kube.Kube, kube))
      const path = `/apis/demo.kubefx.dev/v1/namespaces/${namespace}/widgets`
      const widget = (spec: unknown) => JSON.stringify({ apiVersion: "demo.kubefx.dev/v1", kind: "Widget", metadata: { name: "bad" }, spec })
      const answers = [
        yield* call(server.url, server.token, "POST", path, widget({ replicas: -1, message: "x" })),
        yield* call(server.url, server.token, "POST", path, widget({ replicas: 1 })),
        yield* call(server.url, server.token, "POST", path, widget({ replicas: "two", message: 3 }))
      ]
      const fields = answers.map((a) => (a.body?.details?.causes ?? []).map((c: { field: string }) => c.field).sort())
      const stored = server.store.size("widgets.demo.kubefx.dev")
      entry.durationMs = Date.now() - started
      entry.converged = answers.filter((a) => a.status === 422).length
      entry.lostUpdates = stored
      Report.count(entry, "invalid custom resources", answers.length)
      entry.details = { statuses: answers.map((a) => a.status), causes: fields, storedAfterwards: stored }
      assert.deepStrictEqual(answers.map((a) => [a.status, a.body?.reason]), [[422, "Invalid"], [422, "Invalid"], [422, "Invalid"]])
      assert.deepStrictEqual(fields, [["spec.replicas"], ["spec.message"], ["spec.message", "spec.replicas"]])
      assert.strictEqual(stored, 0)
    }))

  it.live("a Flaky failing with a 1 MB message keeps 256 characters in status, and memory does not grow with failures", (ctx) =>
    Effect.gen(function*() {
      const flakies = 10
      const entry = Report.start(ctx, "bad input: 1 MB error message", flakies)
      const started = Date.now()
      const { kube } = yield* Cluster.embedded()
      yield* Cluster.prepare(namespace, [Flaky.Flaky]).pipe(Effect.provideService(Kube.Kube, kube))
      const logs = Cluster.countingLogger()
      // Retries every few milliseconds, for ever: a failure every run.
      const controller = yield* Controller.start(Controller.define({ ...Flaky.definition.options, retryPolicy: RetryPolicy.exponential({ initial: "2 millis", max: "10 millis" }) })).pipe(
        Effect.provideService(Kube.Kube, kube),
        Effect.provide(logs.layer)
      )
      const message = (i: number) => `${i}:`.padEnd(1024 * 1024, "x")
      yield* Effect.forEach(Array.from({ length: flakies }, (_, i) => i), (i) =>
        kube.create(Flaky.Flaky, {
          apiVersion: Flaky.Flaky.apiVersion,
          kind: Flaky.Flaky.kind,
          metadata: { name: `big-${i}`, namespace },
          spec: { failTimes: 1_000_000, message: message(i) }
        }), { discard: true })
      const failures = Effect.map(controller.health, (h) => h.failed)
      yield* until(failures, (n) => n >= 200)
      const heapAt200 = heapMiB()
      yield* until(failures, (n) => n >= 1200, "60 seconds")
      const heapAt1200 = heapMiB()
      const failed = yield* failures
      const listed = yield* kube.listAll(Flaky.Flaky, { namespace })
      const conditions = listed.items.map((f) => Conditions.get(f.status?.conditions ?? [], "Ready"))
      // Each status holds the message cut to 256 characters (the full one went to the log).
      const cut = listed.items.filter((f, i) =>
        conditions[i]?.status === "False" && conditions[i].reason === "ReconcileError" &&
        conditions[i].message === Failure.truncate(message(Number(f.metadata.name?.slice(4))), 256))
      entry.durationMs = Date.now() - started
      entry.converged = cut.length
      Report.count(entry, "failures with a 1 MB message", failed)
      entry.details = {
        statusMessageLengths: conditions.map((c) => c?.message.length),
        heapMiBAfter200Failures: heapAt200,
        heapMiBAfter1200Failures: heapAt1200,
        rssMiB: Math.round(process.memoryUsage().rss / 1024 / 1024),
        errorLogLines: logs.counts.byLevel.Error ?? 0
      }
      assert.strictEqual(cut.length, flakies)
      assert.isAtMost(heapAt1200 - heapAt200, 64, "heap grew with the failures")
    }), 120_000)

  it.live("malformed JSON and oversized bodies get 400 and 413, and the server keeps serving", (ctx) =>
    Effect.gen(function*() {
      const entry = Report.start(ctx, "bad input: malformed and oversized bodies", 0)
      const started = Date.now()
      const { server, kube } = yield* Cluster.embedded()
      yield* Cluster.prepare(namespace, []).pipe(Effect.provideService(Kube.Kube, kube))
      const path = `/api/v1/namespaces/${namespace}/configmaps`
      const statuses: Array<number> = []
      const served: Array<number> = []
      for (let i = 0; i < 20; i++) {
        statuses.push((yield* call(server.url, server.token, "POST", path, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m-${i}"`)).status)
        statuses.push((yield* call(server.url, server.token, "POST", path, Buffer.alloc(4 * 1024 * 1024, "a"))).status)
        const valid = JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `ok-${i}` } })
        served.push((yield* call(server.url, server.token, "POST", path, valid)).status)
      }
      entry.durationMs = Date.now() - started
      entry.objects = served.length
      entry.converged = served.filter((s) => s === 201).length
      Report.count(entry, "malformed JSON bodies", 20)
      Report.count(entry, "4 MiB bodies", 20)
      entry.details = { rejected: { 400: statuses.filter((s) => s === 400).length, 413: statuses.filter((s) => s === 413).length } }
      assert.deepStrictEqual(statuses, Array.from({ length: 20 }, () => [400, 413]).flat())
      assert.deepStrictEqual(served, Array.from({ length: 20 }, () => 201))
    }))

  it.live("a reconciler that throws or loops forever is contained; the reconcile timeout interrupts the loop and counts a failure", (ctx) =>
    Effect.gen(function*() {
      const entry = Report.start(ctx, "bad input: throwing and looping reconcilers", 22)
      const started = Date.now()
      const { kube } = yield* Cluster.embedded()
      yield* Cluster.prepare(namespace, []).pipe(Effect.provideService(Kube.Kube, kube))
      const logs = Cluster.countingLogger()
      const reconciled = new Set<string>()
      let interrupted = 0
      const controller = yield* Controller.start(Controller.define({
        name: "hazards",
        for: Builtins.ConfigMap,
        namespace,
        concurrency: 2,
        timeout: "300 millis",
        retryPolicy: RetryPolicy.exponential({ initial: "50 millis", max: "200 millis" }),
        reconcile: (cm) => {
          const name = cm.metadata.name ?? ""
          if (name === "throws") throw new Error("reconciler bug")
          if (name === "loops") {
            return Effect.forever(Effect.sync(() => name.length)).pipe(
              Effect.onInterrupt(() => Effect.sync(() => interrupted++)),
              Effect.as(Outcome.done)
            )
          }
          reconciled.add(name)
          return Effect.succeed(Outcome.done)
        }
      })).pipe(Effect.provideService(Kube.Kube, kube), Effect.provide(logs.layer))
      for (const name of ["throws", "loops", ...Array.from({ length: 20 }, (_, i) => `ok-${i}`)]) {
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace } })
      }
      const status = (key: string) => Effect.map(controller.keyStatus(`${namespace}/${key}`), (s) => s._tag === "Some" ? s.value : undefined)
      yield* until(Effect.sync(() => reconciled.size), (n) => n === 20)
      const threw = yield* until(status("throws"), (s) => (s?.attempt ?? 0) >= 2)
      const looped = yield* until(status("loops"), (s) => (s?.attempt ?? 0) >= 2)
      const health = yield* controller.health
      entry.durationMs = Date.now() - started
      entry.converged = reconciled.size
      Report.count(entry, "throwing reconciles", (threw?.attempt ?? 0) + 1)
      Report.count(entry, "endless reconciles interrupted", interrupted)
      entry.details = {
        throws: threw?.last?.result,
        loops: looped?.last?.result,
        failedReconciles: health.failed,
        errorLogLines: logs.counts.byLevel.Error ?? 0
      }
      assert.strictEqual(reconciled.size, 20)
      assert.strictEqual(threw?.last?.result._tag, "Defect")
      assert.include(threw?.last?.result._tag === "Defect" ? threw.last.result.message : "", "reconciler bug")
      assert.deepStrictEqual(looped?.last?.result, { _tag: "Transient", message: "reconcile timed out after 300ms" })
      assert.isAtLeast(interrupted, 2)
      assert.isAtLeast(health.failed, 4)
    }))

  it.live("garbage lines in a watch stream are skipped and logged, and the same stream goes on", (ctx) =>
    Effect.gen(function*() {
      const objects = 50
      const entry = Report.start(ctx, "bad input: garbage watch lines", objects)
      const started = Date.now()
      const { server, kube } = yield* Cluster.embedded()
      yield* Cluster.prepare(namespace, []).pipe(Effect.provideService(Kube.Kube, kube))

      // A proxy that adds a garbage line after every line of a watch stream.
      const garbage = ["{not json", "null", "[1,2]", `{"type":"ADDED"}`, `{"type":"NOPE","object":{}}`]
      const requests = { list: 0, watch: 0, garbage: 0 }
      const upstream = new URL(server.url)
      const proxy = yield* Effect.acquireRelease(
        Effect.callback<ReturnType<typeof createServer>>((resume) => {
          const proxyServer = createServer((req, res) => {
            const watching = (req.url ?? "").includes("watch=true")
            if (watching) requests.watch++
            else if (req.method === "GET" && (req.url ?? "").includes("/configmaps")) requests.list++
            const forwarded = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
              res.writeHead(answer.statusCode ?? 502, answer.headers)
              if (!watching) return void answer.pipe(res)
              answer.on("data", (chunk: Buffer) => {
                for (const line of chunk.toString().split("\n")) {
                  if (line.length === 0) continue
                  res.write(`${line}\n${garbage[requests.garbage++ % garbage.length]}\n`)
                }
              })
              answer.on("end", () => res.end())
            })
            req.pipe(forwarded)
          })
          proxyServer.listen(0, "127.0.0.1", () => resume(Effect.succeed(proxyServer)))
        }),
        (proxyServer) => Effect.callback<void>((resume) => {
          proxyServer.closeAllConnections()
          proxyServer.close(() => resume(Effect.void))
        })
      )
      const address = proxy.address()
      const dir = yield* Cluster.tempDir("kubefx-garbage-")
      const kubeconfig = join(dir, "kubeconfig")
      yield* Kubeconfig.write(kubeconfig, { server: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`, token: server.token })
      const proxied = yield* Cluster.client(kubeconfig)

      const logs = Cluster.countingLogger({ skipped: /skipping/ })
      const informer = yield* Informer.make(Builtins.ConfigMap, { namespace }).pipe(
        Effect.provideService(Kube.Kube, proxied),
        Effect.provide(logs.layer)
      )
      yield* informer.awaitSynced
      for (let i = 0; i < objects; i++) {
        yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `c-${i}`, namespace } })
      }
      yield* until(Effect.sync(() => informer.size()), (n) => n === objects)
      entry.durationMs = Date.now() - started
      entry.converged = informer.size()
      Report.count(entry, "garbage lines", requests.garbage)
      entry.details = { listRequests: requests.list, watchRequests: requests.watch, skippedAndLogged: logs.counts.matched.skipped ?? 0 }
      assert.strictEqual(informer.size(), objects)
      assert.isAtLeast(requests.garbage, objects)
      assert.isAtLeast(logs.counts.matched.skipped ?? 0, objects)
      // One list and one watch: the stream was never restarted.
      assert.deepStrictEqual([requests.list, requests.watch], [1, 1])
    }))
})
