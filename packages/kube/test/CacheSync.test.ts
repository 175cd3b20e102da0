/**
 * Caches that cannot sync: an operator deployed with a ClusterRole older than its controllers may
 * not list what a new controller reads. The controller fails to start after `cacheSyncTimeout`
 * (two minutes by default, as controller-runtime), naming the cache and the 403, instead of
 * waiting for ever; in an operator the others run on, and the startup probe, `/controllers` and
 * the Control Center say why.
 */
import { assert, layer } from "@effect/vitest"
import { Outcome } from "@kubefx/core"
import { Builtins, CacheSync, Controller, Informer, Operator, Rbac } from "@kubefx/kube"
import { Cause, Clock, Effect, Exit, Fiber, References } from "effect"
import { TestClock } from "effect/testing"
import * as SharedInformers from "../src/cache/SharedInformers.ts"
import * as OperatorHttp from "../src/operator/OperatorHttp.ts"
import { clientWithToken, ensure, eventually, layer as support, namespace, TestCluster } from "./support.ts"

const done = () => Effect.succeed(Outcome.done)

// A client as a ServiceAccount whose ClusterRole lets it read ConfigMaps and nothing else.
const configMapsOnly = Effect.gen(function*() {
  const { server } = yield* TestCluster
  const reader = Operator.make({
    name: "config-reader",
    http: false,
    controllers: [Controller.define({ name: "config-reader", for: Builtins.ConfigMap, reconcile: done })]
  })
  const { token } = yield* Rbac.serviceAccount(reader, { name: "config-reader", namespace: "config-reader-system" })
  return yield* clientWithToken(server!, token)
})

// The list's 403 as the client reports it: the server's message and the rule the role lacks.
const forbiddenList = (ns: string) =>
  `Forbidden: secrets is forbidden: User "system:serviceaccount:config-reader-system:config-reader" cannot list resource ` +
  `"secrets" in API group "" in the namespace "${ns}" (rbac: {"apiGroups":[""],"resources":["secrets"],"verbs":["list"]})`

const quiet = Effect.provideService(References.MinimumLogLevel, "None")

layer(support, { excludeTestServices: true, timeout: "60 seconds" })("caches that cannot sync", (it) => {
  // The controller's wait runs on a TestClock of its own; its informer, the server and this test
  // keep real time, so the 403 is in before the clock moves.
  it.effect("fail the controller's start at exactly 2 minutes by default, naming the cache and its 403 (controller on TestClock)", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const ns = yield* namespace
      const asReader = yield* configMapsOnly
      const shared = yield* Effect.provide(SharedInformers.make, asReader)
      // The very informer the controller waits for: shared, same kind, namespace and selectors.
      const secrets = yield* Effect.provide(shared.get(Builtins.Secret, { namespace: ns }), asReader)
      const clock = yield* TestClock.make()
      const starting = yield* Controller.start(Controller.define({ name: "secret-reader", for: Builtins.Secret, namespace: ns, reconcile: done })).pipe(
        Effect.provideService(SharedInformers.SharedInformers, shared),
        Effect.provide(asReader),
        Effect.provideService(Clock.Clock, clock),
        Effect.forkScoped
      )
      yield* eventually(Effect.suspend(() => ensure(secrets.failure()?._tag === "Forbidden", `no 403 yet: ${secrets.failure()?._tag}`)))
      assert.isFalse(secrets.hasSynced())

      yield* clock.adjust("119999 millis")
      assert.isUndefined(starting.pollUnsafe())
      yield* clock.adjust("1 millis")
      const exit = yield* Fiber.await(starting)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      assert.instanceOf(error, CacheSync.Timeout)
      const timeout = error as CacheSync.Timeout
      assert.strictEqual(timeout.controller, "secret-reader")
      assert.deepStrictEqual(timeout.unsynced.map((cache) => [cache.kind, cache.namespace]), [["Secret", ns]])
      assert.strictEqual(timeout.message, `controller secret-reader: caches not synced after 2m: Secret in ${ns} (${forbiddenList(ns)})`)
    }).pipe(quiet))

  it.effect("leave an operator's other controllers running, and say why in the startup probe and /controllers", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const ns = yield* namespace
      const asReader = yield* configMapsOnly
      const operator = Operator.make({
        name: "half-granted",
        http: false,
        controllers: [
          Controller.define({ name: "configs", for: Builtins.ConfigMap, namespace: ns, reconcile: done }),
          Controller.define({ name: "secrets", for: Builtins.Secret, namespace: ns, cacheSyncTimeout: "300 millis", reconcile: done })
        ]
      })
      const running = yield* Effect.provide(Operator.start(operator), asReader)
      const phases = () => running.controllers.map((c) => `${c.name}:${c.phase()}`).join(" ")
      yield* eventually(Effect.suspend(() => ensure(phases() === "configs:Running secrets:Failed", phases())))

      const why = `controller secrets: caches not synced after 300ms: Secret in ${ns} (${forbiddenList(ns)})`
      assert.deepStrictEqual(running.checks.startup(), [{ name: "controllers", ok: false, message: `failed to start: secrets (${why})` }])
      const views = yield* Effect.forEach(running.controllers, (handle) => OperatorHttp.controllerView(handle))
      assert.deepStrictEqual(views.map((view) => [view.name, view.phase, view.startError]), [
        ["configs", "Running", null],
        ["secrets", "Failed", why]
      ])
      yield* running.shutdown
    }).pipe(quiet))

  it.effect("a running controller's cache whose watch fails shows it failing in /controllers and its gauge until a watch gets through", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const ns = yield* namespace
      const running = yield* Operator.start(Operator.make({
        name: "relisting",
        http: { port: 0 },
        controllers: [Controller.define({
          name: "relisted-configs",
          for: Builtins.ConfigMap,
          namespace: ns,
          watch: { backoff: { initial: "50 millis", max: "100 millis" } },
          reconcile: done
        })]
      }))
      const informerView = Effect.map(OperatorHttp.controllerView(running.controllers[0]!), (view) => view.informers[0]!)
      yield* eventually(Effect.suspend(() => ensure(running.controllers[0]!.phase() === "Running", "not running yet")))
      assert.isUndefined((yield* informerView).failing)

      // The watch ends and its successors are refused; the watcher resumes from the version it had
      // (no relist), so in a namespace where nothing changes only a bookmark says it got through.
      server.faults.set({ rules: [{ resource: "configmaps", verbs: ["watch"], namespace: ns, errorRate: 1, errorCode: 503 }] })
      assert.isAbove(server.faults.closeWatches({ resource: "configmaps", namespace: ns }), 0)
      // What an alert reads: kubefx_informer_failing{controller,kind}.
      const gauge = Effect.promise(async () => {
        const text = await (await fetch(`${running.url}/metrics`)).text()
        return /^kubefx_informer_failing\{controller="relisted-configs",kind="ConfigMap"\} (\d+)$/m.exec(text)?.[1]
      })
      assert.strictEqual(yield* gauge, "0")
      yield* eventually(Effect.flatMap(informerView, (view) => ensure(view.failing?.startsWith("ServerError: ") === true, `not failing: ${JSON.stringify(view)}`)))
      // Still synced: it holds what it had, and says its view may be stale.
      assert.isTrue((yield* informerView).synced)
      assert.strictEqual(yield* gauge, "1")
      server.faults.clear()
      yield* eventually(Effect.flatMap(informerView, (view) => ensure(view.failing === undefined, `still failing: ${view.failing}`)))
      assert.strictEqual(yield* gauge, "0")
      yield* running.shutdown
    }).pipe(quiet))

  it.effect("an informer's failure is there while its list fails and gone once the list gets through", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const ns = yield* namespace
      server.faults.set({ rules: [{ resource: "configmaps", verbs: ["list"], namespace: ns, errorRate: 1, errorCode: 503 }] })
      const informer = yield* Informer.make(Builtins.ConfigMap, { namespace: ns, backoff: { initial: "50 millis", max: "100 millis" } })
      yield* eventually(Effect.suspend(() => ensure(informer.failure()?._tag === "ServerError", `no 503 yet: ${informer.failure()?._tag}`)))
      assert.isFalse(informer.hasSynced())
      server.faults.clear()
      yield* informer.awaitSynced
      assert.isUndefined(informer.failure())
    }).pipe(quiet))
})
