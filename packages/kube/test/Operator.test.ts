/**
 * An operator on the embedded API server: isolation between controllers, degraded state with the
 * rollback hook, a dependent held while its dependency is degraded, dependsOn start order, shared
 * informers, and graceful shutdown.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, Conditions, Controller, Kube, Operator, Resource } from "@kubefx/kube"
import { Clock, Deferred, type Duration, Effect, Exit, Fiber, References, Ref, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { ensure, eventually, installCrd, layer as cluster, namespace, TestCluster } from "./support.ts"

const Flaky = Resource.custom({
  group: "test.kubefx.dev",
  version: "v1",
  kind: "Flaky",
  plural: "flakies",
  spec: Schema.Struct({ value: Schema.String, broken: Schema.optionalKey(Schema.Boolean) }),
  status: Schema.Struct({ conditions: Schema.optionalKey(Conditions.Conditions), observedGeneration: Schema.optionalKey(Schema.Int) })
})
type Flaky = typeof Flaky.schema.Type

const flaky = (ns: string, name: string, value: string): Flaky => ({
  apiVersion: Flaky.apiVersion,
  kind: Flaky.kind,
  metadata: { name, namespace: ns },
  spec: { value }
})

const configMap = (ns: string, name: string, app: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns, labels: { app } },
  data: { name }
})

const quiet = Effect.provideService(References.MinimumLogLevel, "None")

const fixture = fileURLToPath(new URL("./fixtures/slow-operator.ts", import.meta.url))

interface LogLine {
  readonly message: unknown
  readonly controller?: string
  readonly key?: string
  readonly attempt?: number
  readonly traceId?: string
}

/**
 * Runs the slow operator fixture in a child process with an IPC channel, once a reconcile started
 * sends it SIGTERM or closes the channel (as the parent's death would), and answers its exit code
 * and JSON log lines.
 */
const terminateDuringReconcile = (kubeconfig: string, ns: string, reconcileMillis: number, shutdownMillis: number, how: "SIGTERM" | "disconnect") =>
  Effect.callback<{ readonly code: number | null; readonly lines: ReadonlyArray<LogLine> }>((resume) => {
    const child = spawn(
      process.execPath,
      ["--conditions=@kubefx/source", fixture, kubeconfig, ns, String(reconcileMillis), String(shutdownMillis)],
      { stdio: ["ignore", "pipe", "inherit", "ipc"] }
    )
    const lines: Array<LogLine> = []
    let buffered = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk
      const complete = buffered.split("\n")
      buffered = complete.pop()!
      for (const text of complete) {
        try {
          const line = JSON.parse(text) as LogLine
          lines.push(line)
          if (line.message === "reconcile started") {
            if (how === "SIGTERM") child.kill("SIGTERM")
            else child.disconnect()
          }
        } catch {
          // not a log line
        }
      }
    })
    child.on("exit", (code) => resume(Effect.succeed({ code, lines })))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/**
 * The fixture on the test's API server, terminated during its reconcile of one ConfigMap: it must
 * exit 0 having released its Lease. Undefined on an external cluster (no kubeconfig file to share).
 */
const sigtermDuringReconcile = (reconcileMillis: number, shutdownMillis: number, how: "SIGTERM" | "disconnect" = "SIGTERM") =>
  Effect.gen(function*() {
    const ns = yield* namespace
    const kube = yield* Kube.Kube
    const kubeconfig = (yield* TestCluster).server?.kubeconfigPath
    if (kubeconfig === undefined) return undefined
    yield* kube.create(Builtins.ConfigMap, configMap(ns, "slow", "x"))
    const { code, lines } = yield* terminateDuringReconcile(kubeconfig, ns, reconcileMillis, shutdownMillis, how)
    assert.strictEqual(code, 0)
    const lease = yield* kube.get(Builtins.Lease, "slow-operator-leader", ns)
    assert.strictEqual(lease.spec?.holderIdentity, "")
    return { ns, lines, messages: lines.map((line) => line.message) }
  })

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Operator on the API server", (it) => {
  it.effect("a controller failing forever is degraded after 5 (retries at exactly 5, 15, 35 and 75 ms on the operator's TestClock), rolls back with the last good spec, never slows another, and holds its dependent until it recovers", () =>
    Effect.gen(function*() {
      yield* installCrd(Flaky)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const clock = yield* TestClock.make()
      const steadyRuns = yield* Ref.make(new Set<string>())
      const dependentRuns = yield* Ref.make<Array<string>>([])
      const rolledBack = yield* Deferred.make<ReadonlyArray<{ readonly key: string; readonly lastGood: Flaky }>>()

      const flakies = Controller.define({
        name: "flakies",
        for: Flaky,
        namespace: ns,
        // A defect, not a typed error: it must be contained all the same.
        reconcile: (object) => object.spec.broken === true ? Effect.die(new Error(`cannot use ${object.spec.value}`)) : Effect.succeed(Outcome.done),
        rollback: (failing) => Deferred.succeed(rolledBack, failing).pipe(Effect.asVoid)
      })
      const steady = Controller.define({
        name: "steady",
        for: Builtins.ConfigMap,
        namespace: ns,
        labelSelector: "app=steady",
        concurrency: 4,
        reconcile: (object) => Ref.update(steadyRuns, (s) => new Set(s).add(object.metadata.name)).pipe(Effect.as(Outcome.done))
      })
      const dependent = Controller.define({
        name: "dependent",
        for: Builtins.ConfigMap,
        namespace: ns,
        labelSelector: "app=dependent",
        dependsOn: [flakies],
        reconcile: (object) => Ref.update(dependentRuns, (xs) => [...xs, object.metadata.name]).pipe(Effect.as(Outcome.done))
      })
      const running = yield* Operator.start(Operator.make({ name: "isolation", controllers: [steady, dependent], http: false })).pipe(
        Effect.provideService(Clock.Clock, clock)
      )
      const handle = (name: string) => running.controllers.find((c) => c.name === name)!.controller
      yield* eventually(Effect.suspend(() => ensure(running.controllers.every((c) => c.phase() === "Running"), "not started")))

      yield* kube.create(Flaky, flaky(ns, "one", "good-1"))
      yield* kube.create(Builtins.ConfigMap, configMap(ns, "before", "dependent"))
      yield* eventually(Effect.flatMap(Ref.get(dependentRuns), (xs) => ensure(xs.includes("before"), "dependent idle")))
      yield* eventually(Effect.flatMap(handle("flakies")()!.health, (h) => ensure(h.total >= 1, "flaky not reconciled")))

      // The spec goes bad: five failures in a row degrade the controller. The first fails at once
      // (virtual 0); the default policy retries 5, 10, 20 and 40 ms after each failure.
      yield* kube.patch(Flaky, "one", ns, { spec: { value: "bad", broken: true } }, { type: "merge" })
      for (const at of [5, 15, 35, 75]) {
        yield* eventually(Effect.flatMap(handle("flakies")()!.keyStatus(`${ns}/one`), (status) =>
          ensure(status._tag === "Some" && status.value.next?.at === at, `no retry at ${at} ms yet`)))
        assert.isFalse(handle("flakies")()!.isDegraded())
        yield* clock.adjust(`${at - clock.currentTimeMillisUnsafe()} millis`)
      }
      const failing = yield* Deferred.await(rolledBack)
      assert.strictEqual(clock.currentTimeMillisUnsafe(), 75)
      assert.deepStrictEqual(failing.map((f) => [f.key, f.lastGood.spec]), [[`${ns}/one`, { value: "good-1" }]])
      const degraded = yield* handle("flakies")()!.health
      assert.isTrue(degraded.degraded)
      assert.strictEqual(degraded.consecutiveFailures, 5)
      assert.strictEqual(degraded.lastError, "cannot use bad")

      // Meanwhile the steady controller keeps reconciling everything it is given.
      for (let i = 0; i < 40; i++) yield* kube.create(Builtins.ConfigMap, configMap(ns, `steady-${i}`, "steady"))
      yield* eventually(Effect.flatMap(Ref.get(steadyRuns), (s) => ensure(s.size === 40, `steady reconciled ${s.size}/40`)))
      assert.isTrue(handle("flakies")()!.isDegraded())
      assert.strictEqual(yield* handle("steady")()!.status, "Healthy")

      // The dependent holds new reconciles while its dependency is degraded.
      yield* kube.create(Builtins.ConfigMap, configMap(ns, "during", "dependent"))
      yield* eventually(Effect.flatMap(handle("dependent")()!.status, (status) => ensure(status === "Pending", status)))
      assert.notInclude(yield* Ref.get(dependentRuns), "during")
      assert.deepStrictEqual((yield* handle("dependent")()!.inspect).dependsOn, [{ name: "flakies", degraded: true }])

      // Rolling back to the last good spec ends the failures: the dependency recovers, the dependent resumes.
      yield* kube.patch(Flaky, "one", ns, { spec: { value: failing[0]!.lastGood.spec.value, broken: false } }, { type: "merge" })
      yield* eventually(Effect.flatMap(Ref.get(dependentRuns), (xs) => ensure(xs.includes("during"), "dependent still held")))
      assert.isFalse(handle("flakies")()!.isDegraded())
      assert.strictEqual(yield* handle("dependent")()!.status, "Healthy")
      yield* running.shutdown
    }).pipe(quiet))

  it.effect("starts controllers in dependsOn order, adds unlisted dependencies, and shares informers of the same kind", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const faults = (yield* TestCluster).server?.faults
      const reconcile = () => Effect.succeed(Outcome.done)
      const base = Controller.define({ name: "base", for: Builtins.ConfigMap, namespace: ns, reconcile })
      const middle = Controller.define({ name: "middle", for: Builtins.ConfigMap, namespace: ns, dependsOn: [base], reconcile })
      const top = Controller.define({ name: "top", for: Builtins.Secret, namespace: ns, dependsOn: [middle, base], reconcile })
      const operator = Operator.make({ name: "ordered", controllers: [top], http: false })
      assert.deepStrictEqual(operator.controllers.map((c) => c.name), ["base", "middle", "top"])
      // A slow first list keeps the base syncing: its dependents wait for it.
      faults?.set({ rules: [{ resource: "configmaps", verbs: ["list"], namespace: ns, latencyMs: 800 }] })
      const running = yield* Operator.start(operator)
      const phases = () => running.controllers.map((c) => `${c.name}:${c.phase()}`).join(" ")
      if (faults !== undefined) {
        yield* eventually(Effect.suspend(() => ensure(phases() === "base:Syncing middle:Waiting top:Waiting", phases())))
      }
      yield* eventually(Effect.suspend(() => ensure(phases() === "base:Running middle:Running top:Running", phases())))
      faults?.clear()
      const [baseController, middleController, topController] = running.controllers.map((c) => c.controller()!)
      // Same kind, namespace and selector: one informer, one watch.
      assert.strictEqual(baseController!.informer, middleController!.informer)
      assert.notStrictEqual<unknown>(topController!.informer, baseController!.informer)
      yield* running.shutdown
      assert.strictEqual(phases(), "base:Stopped middle:Stopped top:Stopped")
    }).pipe(quiet))

  it.effect("rejects duplicate names, a cycle in dependsOn, and a controller named events", () =>
    Effect.gen(function*() {
      const reconcile = () => Effect.succeed(Outcome.done)
      const a = Controller.define({ name: "a", for: Builtins.ConfigMap, reconcile })
      const events = Controller.define({ name: "events", for: Builtins.ConfigMap, reconcile })
      const cyclic: { dependsOn: Array<Controller.Any<unknown>> } & Controller.Any = {
        ...Controller.define({ name: "b", for: Builtins.ConfigMap, reconcile }),
        dependsOn: []
      }
      const c = Controller.define({ name: "c", for: Builtins.ConfigMap, reconcile, dependsOn: [cyclic] })
      cyclic.dependsOn.push(c)
      const failure = (controllers: ReadonlyArray<Controller.Any>) =>
        Effect.flip(Operator.start(Operator.make({ name: "invalid", controllers, http: false }))).pipe(Effect.map((e) => e.message))
      assert.strictEqual(yield* failure([a, Controller.define({ name: "a", for: Builtins.Secret, reconcile })]), "two controllers are named a")
      assert.strictEqual(yield* failure([c]), "dependsOn has a cycle: b -> c -> b")
      assert.include(yield* failure([events]), "cannot be named events")
    }))

  // The operator runs on a TestClock of its own (the API server and this test keep real time):
  // its reconciles sleep and its shutdown waits in virtual time, so each instant is exact.
  const draining = (options: { readonly reconcileFor: Duration.Input; readonly shutdownTimeout: Duration.Input }) =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const clock = yield* TestClock.make()
      const entered = yield* Deferred.make<void>()
      const finished = yield* Ref.make<Array<string>>([])
      const interrupted = yield* Ref.make<Array<string>>([])
      const slow = Controller.define({
        name: "slow",
        for: Builtins.ConfigMap,
        namespace: ns,
        reconcile: (object) =>
          Deferred.succeed(entered, undefined).pipe(
            Effect.andThen(Effect.sleep(options.reconcileFor)),
            Effect.andThen(Ref.update(finished, (xs) => [...xs, object.metadata.name])),
            Effect.onInterrupt(() => Ref.update(interrupted, (xs) => [...xs, object.metadata.name])),
            Effect.as(Outcome.done)
          )
      })
      const running = yield* Operator.start(Operator.make({ name: "draining", controllers: [slow], http: false, shutdownTimeout: options.shutdownTimeout })).pipe(
        Effect.provideService(Clock.Clock, clock)
      )
      yield* kube.create(Builtins.ConfigMap, configMap(ns, "first", "x"))
      yield* Deferred.await(entered)
      yield* kube.create(Builtins.ConfigMap, configMap(ns, "second", "x"))
      // "second" is queued behind "first" (one worker) before the shutdown begins.
      const controller = running.controllers[0]!.controller()!
      yield* eventually(Effect.flatMap(controller.inspect, (view) => ensure(view.queueDepth === 1, `queue depth ${view.queueDepth}`)))
      const shutdown = yield* Effect.forkChild(running.shutdown.pipe(Effect.provideService(Clock.Clock, clock)), { startImmediately: true })
      return { clock, finished, interrupted, running, shutdown }
    })

  it.effect("shutdown on TestClock: the running reconcile finishes at 300 ms within the timeout, the queued key never starts", () =>
    Effect.gen(function*() {
      const { clock, finished, running, shutdown } = yield* draining({ reconcileFor: "300 millis", shutdownTimeout: "10 seconds" })
      const reports = yield* running.reports.pipe(Stream.take(1), Stream.runCollect, Effect.forkChild({ startImmediately: true }))
      yield* clock.adjust("299 millis")
      assert.deepStrictEqual([shutdown.pollUnsafe(), yield* Ref.get(finished)], [undefined, []])
      yield* clock.adjust("1 millis")
      yield* Fiber.join(shutdown)
      assert.deepStrictEqual(yield* Ref.get(finished), ["first"])
      assert.strictEqual(running.phase(), "Stopped")
      assert.strictEqual((yield* Fiber.join(reports))[0]!.result._tag, "Done")
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(running.done)))
    }).pipe(quiet))

  it.effect("shutdown on TestClock: a reconcile longer than the timeout is interrupted at exactly the timeout", () =>
    Effect.gen(function*() {
      const { clock, finished, interrupted, running, shutdown } = yield* draining({ reconcileFor: "1 minute", shutdownTimeout: "10 seconds" })
      yield* clock.adjust("9999 millis")
      assert.deepStrictEqual([shutdown.pollUnsafe(), yield* Ref.get(interrupted)], [undefined, []])
      yield* clock.adjust("1 millis")
      yield* Fiber.join(shutdown)
      assert.deepStrictEqual([yield* Ref.get(interrupted), yield* Ref.get(finished)], [["first"], []])
      assert.strictEqual(running.phase(), "Stopped")
    }).pipe(quiet))

  it.effect("SIGTERM during a slow reconcile: it finishes within the timeout, the Lease is released, exit code 0", () =>
    Effect.gen(function*() {
      const run = yield* sigtermDuringReconcile(1000, 10_000)
      if (run === undefined) return
      assert.includeMembers(run.messages, ["reconcile started", "reconcile finished"])
      assert.notInclude(run.messages, "reconcile interrupted")
      // The reconcile's lines carry its controller, key, attempt and trace.
      const started = run.lines.find((line) => line.message === "reconcile started")!
      assert.deepStrictEqual([started.controller, started.key, started.attempt], ["slow", `${run.ns}/slow`, 0])
      assert.match(started.traceId ?? "", /^[0-9a-f]{32}$/)
    }))

  it.effect("its parent gone (the IPC channel it was started with closes) during a reconcile: the same graceful shutdown as SIGTERM", () =>
    Effect.gen(function*() {
      const run = yield* sigtermDuringReconcile(1000, 10_000, "disconnect")
      if (run === undefined) return
      assert.includeMembers(run.messages, ["reconcile started", "reconcile finished"])
      assert.notInclude(run.messages, "reconcile interrupted")
    }))

  it.effect("SIGTERM during a reconcile longer than the timeout: it is interrupted, the Lease is released, exit code 0", () =>
    Effect.gen(function*() {
      const run = yield* sigtermDuringReconcile(60_000, 300)
      if (run === undefined) return
      assert.includeMembers(run.messages, ["reconcile started", "reconcile interrupted"])
      assert.notInclude(run.messages, "reconcile finished")
    }))
})
