/**
 * An operator's HTTP endpoints, served on a random loopback port against the embedded API server:
 * probes, Prometheus metrics that count what the reconcilers saw, controller state as JSON, and the
 * Server-Sent Events stream of run reports.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome, ReconcileError, RetryPolicy } from "@kubefx/core"
import { Builtins, Controller, Kube, Operator } from "@kubefx/kube"
import type * as OperatorHttp from "../src/operator/OperatorHttp.ts"
import { ConfigProvider, Effect, Exit, Metric, References, Ref, Scope } from "effect"
import { ensure, eventually, layer as cluster, namespace, TestCluster } from "./support.ts"

const configMap = (ns: string, name: string, app: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns, labels: { app } },
  data: { name }
})

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, text: await response.text() }
  })

const getJson = <A>(url: string) => Effect.map(get(url), (response) => ({ status: response.status, body: JSON.parse(response.text) as A }))

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/**
 * A strict reader of the Prometheus text format (0.0.4): every line is a HELP or TYPE comment or a
 * sample, every sample's family has a TYPE before it; throws on anything else.
 */
const parsePrometheus = (text: string): ReadonlyArray<Sample> => {
  const name = "[a-zA-Z_:][a-zA-Z0-9_:]*"
  const help = new RegExp(`^# HELP (${name}) .*$`)
  const type = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`)
  const sample = new RegExp(`^(${name})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`)
  const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy
  const typed = new Map<string, string>()
  const samples: Array<Sample> = []
  for (const line of text.split("\n")) {
    if (line === "" || help.test(line)) continue
    const declared = type.exec(line)
    if (declared !== null) {
      typed.set(declared[1]!, declared[2]!)
      continue
    }
    const parsed = sample.exec(line)
    if (parsed === null) throw new Error(`not a Prometheus line: ${line}`)
    const family = parsed[1]!.replace(/_(bucket|sum|count)$/, "")
    if (!typed.has(parsed[1]!) && typed.get(family) !== "histogram") throw new Error(`sample before its TYPE: ${line}`)
    const labels: Record<string, string> = {}
    label.lastIndex = 0
    for (const body = parsed[2] ?? ""; label.lastIndex < body.length;) {
      const match = label.exec(body)
      if (match === null) throw new Error(`bad labels: ${line}`)
      labels[match[1]!] = match[2]!
    }
    const value = parsed[3] === "+Inf" ? Infinity : parsed[3] === "-Inf" ? -Infinity : Number(parsed[3])
    if (Number.isNaN(value) && parsed[3] !== "NaN") throw new Error(`bad value: ${line}`)
    samples.push({ name: parsed[1]!, labels, value })
  }
  return samples
}

const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Readonly<Record<string, string>>) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value

const quiet = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provideService(References.MinimumLogLevel, "None"),
    Effect.provideService(Metric.MetricRegistry, new Map())
  )

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("OperatorHttp", (it) => {
  it.effect("/readyz and /startupz answer 503 until the caches synced and the leader is known; /healthz is live throughout", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const faults = (yield* TestCluster).server?.faults
      faults?.set({ rules: [{ resource: "configmaps", verbs: ["list"], namespace: ns, latencyMs: 800 }] })
      const running = yield* Operator.start(Operator.make({
        name: "probed",
        http: { port: 0 },
        leaderElection: { namespace: ns, leaseDuration: "1 second", renewDeadline: "600 millis", retryPeriod: "150 millis" },
        controllers: [Controller.define({ name: "slow-sync", for: Builtins.ConfigMap, namespace: ns, reconcile: () => Effect.succeed(Outcome.done) })]
      }))
      const url = running.url!
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
      if (faults !== undefined) {
        const early = yield* get(`${url}/readyz`)
        assert.strictEqual(early.status, 503)
        assert.include(early.text, "[-]informers failed: not synced: slow-sync (Syncing)")
        assert.include(early.text, "readyz check failed")
        assert.strictEqual((yield* get(`${url}/startupz`)).status, 503)
        assert.deepStrictEqual(yield* get(`${url}/healthz`), { status: 200, text: "ok" })
      }
      yield* eventually(Effect.flatMap(get(`${url}/readyz`), (r) => ensure(r.status === 200 && r.text === "ok", r.text)))
      faults?.clear()
      assert.strictEqual((yield* get(`${url}/startupz`)).status, 200)
      const verbose = yield* get(`${url}/readyz?verbose`)
      assert.strictEqual(verbose.text, "[+]informers ok\n[+]leaderElection ok\n[+]shutdown ok\nreadyz check passed\n")
      assert.include((yield* get(`${url}/healthz?verbose`)).text, "[+]leaderElection ok")
      const controllers = yield* getJson<OperatorHttp.OperatorView>(`${url}/controllers`)
      assert.strictEqual(controllers.body.leader?.state, "Leader")
      assert.strictEqual(controllers.body.leader?.lease, `${ns}/probed-leader`)
      yield* running.shutdown
    }).pipe(quiet))

  it.effect("/metrics parses as Prometheus text, and its counters match the reconciles the reconcilers saw", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const seen = yield* Ref.make({ success: 0, error: 0 })
      const running = yield* Operator.start(Operator.make({
        name: "metered",
        http: { port: 0 },
        controllers: [Controller.define({
          name: "counted",
          for: Builtins.ConfigMap,
          namespace: ns,
          retryPolicy: RetryPolicy.none,
          reconcile: (object) =>
            object.metadata.name?.startsWith("bad") === true
              ? Ref.update(seen, (s) => ({ ...s, error: s.error + 1 })).pipe(
                Effect.andThen(Effect.fail(new ReconcileError.Transient({ message: "bad name" })))
              )
              : Ref.update(seen, (s) => ({ ...s, success: s.success + 1 })).pipe(Effect.as(Outcome.done))
        })]
      }))
      for (const name of ["a", "b", "c", "bad-1", "d", "bad-2", "e"]) yield* kube.create(Builtins.ConfigMap, configMap(ns, name, "x"))
      yield* eventually(Effect.flatMap(Ref.get(seen), (s) => ensure(s.success === 5 && s.error === 2, JSON.stringify(s))))
      const controller = running.controllers[0]!.controller()!
      yield* controller.awaitIdle
      const observed = yield* Ref.get(seen)
      const scrape = yield* get(`${running.url}/metrics`)
      assert.strictEqual(scrape.status, 200)
      const samples = parsePrometheus(scrape.text)
      const labels = { controller: "counted" }
      assert.strictEqual(valueOf(samples, "controller_runtime_reconcile_total", { ...labels, result: "success" }), observed.success)
      assert.strictEqual(valueOf(samples, "controller_runtime_reconcile_total", { ...labels, result: "error" }), observed.error)
      assert.strictEqual(valueOf(samples, "controller_runtime_reconcile_errors_total", labels), observed.error)
      assert.strictEqual(valueOf(samples, "controller_runtime_reconcile_time_seconds_count", labels), observed.success + observed.error)
      assert.strictEqual(valueOf(samples, "controller_runtime_reconcile_time_seconds_bucket", { ...labels, le: "+Inf" }), 7)
      assert.strictEqual(valueOf(samples, "kubefx_controller_degraded", labels), 0)
      assert.strictEqual(valueOf(samples, "workqueue_depth", { name: "counted" }), 0)
      assert.strictEqual(valueOf(samples, "controller_runtime_max_concurrent_reconciles", labels), 1)
      yield* running.shutdown
    }).pipe(quiet))

  it.effect("serves CPU and heap profiles on demand when asked to, one at a time, and none otherwise", () =>
    Effect.gen(function*() {
      const running = yield* Operator.start(Operator.make<never>({ name: "profiled", http: { port: 0, profiling: true }, controllers: [] }))
      const fetched = (path: string) =>
        Effect.promise(async () => {
          const response = await fetch(`${running.url}${path}`)
          return { status: response.status, disposition: response.headers.get("content-disposition"), body: await response.json() as any }
        })
      // Two at once: the second is refused while the first is taken.
      const [cpu, refused] = yield* Effect.all([
        fetched("/debug/profile/cpu?seconds=1"),
        Effect.andThen(Effect.sleep("200 millis"), fetched("/debug/profile/heap?seconds=1"))
      ], { concurrency: "unbounded" })
      assert.strictEqual(cpu.status, 200)
      assert.match(cpu.disposition ?? "", /^attachment; filename="kubefx-cpu-.*\.cpuprofile"$/)
      // A V8 CPU profile: its call tree, samples and their times, over about the second asked for.
      assert.isAbove(cpu.body.nodes.length, 1)
      assert.isArray(cpu.body.samples)
      assert.isAtLeast(cpu.body.endTime - cpu.body.startTime, 900_000)
      assert.deepStrictEqual([refused.status, refused.body.message], [409, "a profile is being taken: ask again once it is done"])
      const heap = yield* fetched("/debug/profile/heap?seconds=1")
      assert.strictEqual(heap.status, 200)
      assert.match(heap.disposition ?? "", /\.heapprofile"$/)
      assert.strictEqual(heap.body.head.callFrame.functionName, "(root)")
      const bad = yield* fetched("/debug/profile/cpu?seconds=0")
      assert.deepStrictEqual([bad.status, bad.body.message], [400, `seconds must be a whole number from 1 to 300, not "0"`])
      yield* running.shutdown
      const plain = yield* Operator.start(Operator.make<never>({ name: "unprofiled", http: { port: 0 }, controllers: [] }))
      assert.strictEqual((yield* get(`${plain.url}/debug/profile/cpu?seconds=1`)).status, 404)
      yield* plain.shutdown
      // In a pod, the environment turns them on.
      const fromEnv = yield* Operator.start(Operator.make<never>({ name: "env-profiled", http: { port: 0 }, controllers: [] })).pipe(
        Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ KUBEFX_PROFILING: "true" })))
      )
      assert.strictEqual((yield* get(`${fromEnv.url}/debug/profile/cpu?seconds=1`)).status, 200)
      yield* fromEnv.shutdown
    }).pipe(quiet))

  it.effect("/metrics carries the process's own cost under the names Prometheus clients give it", () =>
    Effect.gen(function*() {
      const running = yield* Operator.start(Operator.make<never>({ name: "costed", http: { port: 0 }, controllers: [] }))
      const scrape = () => Effect.map(get(`${running.url}/metrics`), (r) => parsePrometheus(r.text))
      const first = yield* scrape()
      const read = (samples: ReadonlyArray<Sample>, name: string, labels: Readonly<Record<string, string>> = {}) => {
        const value = valueOf(samples, name, labels)
        assert.isDefined(value, name)
        return value!
      }
      const user = read(first, "process_cpu_user_seconds_total")
      const system = read(first, "process_cpu_system_seconds_total")
      const cpu = read(first, "process_cpu_seconds_total")
      assert.isAbove(cpu, 0)
      assert.closeTo(cpu, user + system, 0.05)
      assert.closeTo(read(first, "process_start_time_seconds"), performance.timeOrigin / 1000, 0.001)
      const rss = read(first, "process_resident_memory_bytes")
      assert.isAbove(rss, 16 * 2 ** 20)
      assert.isBelow(rss, 2 * process.memoryUsage.rss())
      assert.isAbove(read(first, "nodejs_heap_size_used_bytes"), 0)
      assert.isAtMost(read(first, "nodejs_heap_size_used_bytes"), read(first, "nodejs_heap_size_total_bytes"))
      assert.isAtLeast(read(first, "nodejs_external_memory_bytes"), 0)
      if (process.platform === "linux") {
        assert.isAbove(read(first, "process_open_fds"), 2)
        assert.isAtMost(read(first, "process_open_fds"), read(first, "process_max_fds"))
      }
      // Work that burns CPU and leaves short-lived garbage: the CPU counters rise, minor collections are counted.
      const minorBefore = read(first, "nodejs_gc_duration_seconds_count", { kind: "minor" })
      // The objects escape into a ring, so the compiler cannot elide them: 2,000,000 of them are more
      // than any young generation holds.
      const cpuBefore = process.cpuUsage()
      const ring: Array<unknown> = new Array(1024)
      let made = 0
      while (made < 2_000_000 || process.cpuUsage(cpuBefore).user < 100_000) {
        for (let i = 0; i < 1024; i++) ring[i] = { made: made++, name: `object-${made}` }
      }
      assert.strictEqual(ring.length, 1024)
      yield* Effect.sleep("100 millis")
      const second = yield* scrape()
      assert.isAtLeast(read(second, "process_cpu_seconds_total"), cpu + 0.1)
      assert.isAbove(read(second, "nodejs_gc_duration_seconds_count", { kind: "minor" }), minorBefore)
      assert.isAbove(read(second, "nodejs_gc_duration_seconds_sum", { kind: "minor" }), 0)
      assert.strictEqual(read(second, "nodejs_gc_duration_seconds_bucket", { kind: "minor", le: "+Inf" }), read(second, "nodejs_gc_duration_seconds_count", { kind: "minor" }))
      // The same process, in the Control Center's view.
      const view = yield* getJson<OperatorHttp.OperatorView>(`${running.url}/controllers`)
      assert.isAtLeast(view.body.process.cpuSeconds, read(second, "process_cpu_seconds_total"))
      assert.isAbove(view.body.process.residentMemoryBytes, view.body.process.heapUsedBytes)
      assert.strictEqual(view.body.process.startedAt, new Date(performance.timeOrigin).toISOString())
      yield* running.shutdown
    }).pipe(quiet))

  it.effect("two operators in one process share its metrics: the first to stop leaves them to the other", () =>
    Effect.gen(function*() {
      const scrape = (url: string) => Effect.map(get(`${url}/metrics`), (r) => parsePrometheus(r.text))
      const startIn = (scope: Scope.Scope, name: string) =>
        Scope.provide(Operator.start(Operator.make<never>({ name, http: { port: 0 }, controllers: [] })), scope)
      const firstScope = yield* Scope.make()
      const secondScope = yield* Scope.make()
      const first = yield* startIn(firstScope, "first")
      const second = yield* startIn(secondScope, "second")
      assert.isDefined(valueOf(yield* scrape(second.url!), "process_cpu_seconds_total", {}))
      yield* Scope.close(secondScope, Exit.void)
      const left = yield* scrape(first.url!)
      assert.isDefined(valueOf(left, "process_cpu_seconds_total", {}))
      assert.isDefined(valueOf(left, "nodejs_gc_duration_seconds_count", { kind: "minor" }))
      yield* Scope.close(firstScope, Exit.void)
      const registry = yield* Metric.MetricRegistry
      assert.isFalse([...registry.keys()].some((key) => key.includes("process_cpu_seconds_total")))
    }).pipe(quiet))

  it.effect("/controllers shows health, queue, dependencies and per-key retry state; /controllers/<name>/health is 200 or 503", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const fragile = Controller.define({
        name: "fragile",
        for: Builtins.ConfigMap,
        namespace: ns,
        labelSelector: "app=fragile",
        degradeAfter: 1,
        retryPolicy: RetryPolicy.gradual,
        reconcile: () => Effect.fail(new ReconcileError.Transient({ message: "always broken" }))
      })
      const fine = Controller.define({
        name: "fine",
        for: Builtins.ConfigMap,
        namespace: ns,
        labelSelector: "app=fine",
        reconcile: () => Effect.succeed(Outcome.done)
      })
      const gated = Controller.define({
        name: "gated",
        for: Builtins.Secret,
        namespace: ns,
        dependsOn: [fragile],
        reconcile: () => Effect.succeed(Outcome.done)
      })
      const running = yield* Operator.start(Operator.make({ name: "inspected", http: { port: 0 }, controllers: [fragile, fine, gated] }))
      const url = running.url!
      yield* kube.create(Builtins.ConfigMap, configMap(ns, "f", "fine"))
      yield* kube.create(Builtins.ConfigMap, configMap(ns, "x", "fragile"))
      const view = yield* eventually(Effect.flatMap(getJson<OperatorHttp.ControllerView>(`${url}/controllers/fragile`), ({ body }) =>
        body.degraded ? Effect.succeed(body) : Effect.fail(new Error("not degraded yet"))))
      assert.strictEqual(view.status, "Degraded")
      assert.strictEqual(view.phase, "Running")
      assert.strictEqual(view.kind, "ConfigMap")
      assert.strictEqual(view.health.consecutiveFailures, 1)
      assert.strictEqual(view.health.lastError, "always broken")
      assert.isNotNull(view.health.degradedSince)
      assert.deepStrictEqual(view.informers, [{ kind: "ConfigMap", synced: true, objects: 1, labelSelector: "app=fragile" }])
      const key = view.keys.find((k) => k.key === `${ns}/x`)!
      assert.strictEqual(key.attempt, 0)
      assert.isFalse(key.exhausted)
      assert.isNotNull(key.nextRetryAt)
      assert.strictEqual(key.next?.trigger, "retry")
      // gradual's first delay, counted from when the failure was handled
      const armed = Date.parse(key.nextRetryAt!) - 2000 - Date.parse(key.last!.startedAt!)
      assert.isAtLeast(armed, key.last!.durationMillis)
      assert.deepStrictEqual(key.last!.result, { _tag: "Transient", message: "always broken" })
      assert.strictEqual(key.last!.triggers[0]!._tag, "Event")

      const health = yield* getJson<{ status: string; consecutiveFailures: number }>(`${url}/controllers/fragile/health`)
      assert.strictEqual(health.status, 503)
      assert.deepStrictEqual([health.body.status, health.body.consecutiveFailures], ["Degraded", 1])
      yield* eventually(Effect.flatMap(get(`${url}/controllers/fine/health`), (r) => ensure(r.status === 200, r.text)))
      // The dependent is gated once it has something to do.
      yield* kube.create(Builtins.Secret, { apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: ns } })
      yield* eventually(Effect.flatMap(getJson<OperatorHttp.ControllerView>(`${url}/controllers/gated`), ({ body }) =>
        ensure(body.status === "Pending" && body.workersBusy === 1, JSON.stringify(body))))
      assert.strictEqual((yield* get(`${url}/controllers/gated/health`)).status, 503)

      const all = yield* getJson<OperatorHttp.OperatorView>(`${url}/controllers`)
      assert.deepStrictEqual(all.body.controllers.map((c) => [c.name, c.status]), [["fragile", "Degraded"], ["fine", "Healthy"], ["gated", "Pending"]])
      assert.deepStrictEqual(all.body.controllers[2]!.dependsOn, [{ name: "fragile", degraded: true }])
      assert.isNull(all.body.leader)
      assert.strictEqual((yield* get(`${url}/controllers/nope`)).status, 404)
      yield* running.shutdown
    }).pipe(quiet))

  it.effect("/controllers/events streams run reports as Server-Sent Events", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const running = yield* Operator.start(Operator.make({
        name: "streamed",
        http: { port: 0 },
        controllers: [
          Controller.define({ name: "streamed", for: Builtins.ConfigMap, namespace: ns, reconcile: () => Effect.succeed(Outcome.requeueAfter("1 hour")) }),
          Controller.define({ name: "other", for: Builtins.Secret, namespace: ns, reconcile: () => Effect.succeed(Outcome.done) })
        ]
      }))
      const controller = new AbortController()
      const response = yield* Effect.promise(() => fetch(`${running.url}/controllers/events?controller=streamed`, { signal: controller.signal }))
      assert.strictEqual(response.headers.get("content-type"), "text/event-stream")
      const reader = response.body!.getReader()
      yield* kube.create(Builtins.Secret, { apiVersion: "v1", kind: "Secret", metadata: { name: "ignored", namespace: ns } })
      yield* kube.create(Builtins.ConfigMap, configMap(ns, "watched", "x"))
      let text = ""
      while (!text.includes("event: report")) {
        const chunk = yield* Effect.promise(() => reader.read())
        text += new TextDecoder().decode(chunk.value)
      }
      controller.abort()
      const event = text.split("\n\n").find((block) => block.startsWith("event: report"))!
      const data = JSON.parse(event.split("\n")[1]!.replace(/^data: /, ""))
      assert.strictEqual(data.controller, "streamed")
      assert.strictEqual(data.key, `${ns}/watched`)
      assert.deepStrictEqual(data.result, { _tag: "RequeueAfter", afterMillis: 3_600_000 })
      assert.strictEqual(data.next.trigger, "reschedule")
      assert.strictEqual(Date.parse(data.next.at) - Date.parse(data.startedAt), 3_600_000 + data.durationMillis)
      yield* running.shutdown
    }).pipe(quiet))

  it.effect("binds where KUBEFX_HTTP_HOST and KUBEFX_HTTP_PORT say when the code does not, as a pod needs", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const operator = Operator.make({
        name: "env-bound",
        controllers: [Controller.define({ name: "env-bound", for: Builtins.ConfigMap, namespace: ns, reconcile: () => Effect.succeed(Outcome.done) })],
        http: {}
      })
      const env = (vars: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromUnknown(vars))
      const running = yield* Operator.start(operator).pipe(
        Effect.provide(env({ KUBEFX_HTTP_HOST: "0.0.0.0", KUBEFX_HTTP_PORT: "0" }))
      )
      assert.match(running.url ?? "", /^http:\/\/0\.0\.0\.0:\d+$/)
      const port = new URL(running.url!).port
      assert.strictEqual((yield* get(`http://127.0.0.1:${port}/healthz`)).status, 200)
      yield* running.shutdown
      const refused = yield* Effect.flip(Operator.start(operator).pipe(Effect.provide(env({ KUBEFX_HTTP_PORT: "eighty" }))))
      assert.include(refused.message, "KUBEFX_HTTP_PORT")
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})
