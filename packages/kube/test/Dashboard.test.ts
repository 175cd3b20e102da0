/**
 * The Control Center page and what it reads beyond the original controller JSON: each object's
 * Ready condition, each controller's runs and errors per time bucket, and the time of the view.
 * The page itself is driven in a browser by the cli package's ControlCenter test.
 */
import { assert, describe, it as test, layer } from "@effect/vitest"
import { Outcome, ReconcileError, RetryPolicy } from "@kubefx/core"
import { Builtins, Conditions, Controller, Kube, Operator, Resource } from "@kubefx/kube"
import * as OperatorHttp from "../src/operator/OperatorHttp.ts"
import { Deferred, Effect, Metric, References, Schema } from "effect"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "./support.ts"

const Lamp = Resource.custom({
  group: "dashboard.test.kubefx.dev",
  version: "v1",
  kind: "Lamp",
  plural: "lamps",
  spec: Schema.Struct({ broken: Schema.optionalKey(Schema.String) }),
  status: Schema.Struct(Conditions.statusFields)
})

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, headers: response.headers, text: await response.text() }
  })

const getJson = <A>(url: string) => Effect.map(get(url), (response) => JSON.parse(response.text) as A)

const quiet = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provideService(References.MinimumLogLevel, "None"),
    Effect.provideService(Metric.MetricRegistry, new Map())
  )

const sum = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0)

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Dashboard", (it) => {
  it.effect("/ serves the Control Center, its script and its stylesheet, confined to the operator's origin", () =>
    Effect.gen(function*() {
      const running = yield* Operator.start(Operator.make<never>({ name: "paged", http: { port: 0 }, controllers: [] }))
      const page = yield* get(`${running.url}/`)
      assert.strictEqual(page.status, 200)
      assert.strictEqual(page.headers.get("content-type"), "text/html; charset=utf-8")
      const policy = page.headers.get("content-security-policy") ?? ""
      assert.include(policy, "default-src 'none'")
      assert.include(policy, "script-src 'self'")
      assert.include(policy, "connect-src 'self'")
      assert.include(page.text, `<script type="module" src="/dashboard/app.js"></script>`)
      assert.include(page.text, `<link rel="stylesheet" href="/dashboard/app.css">`)
      // Nothing is loaded from elsewhere.
      assert.notMatch(page.text, /(src|href)="(https?:)?\/\//)
      const script = yield* get(`${running.url}/dashboard/app.js`)
      assert.strictEqual(script.status, 200)
      assert.strictEqual(script.headers.get("content-type"), "text/javascript; charset=utf-8")
      assert.include(script.text, `new EventSource("/controllers/events")`)
      assert.notMatch(script.text, /\bimport\b.*\bfrom\b|https?:\/\//)
      const style = yield* get(`${running.url}/dashboard/app.css`)
      assert.strictEqual(style.status, 200)
      assert.strictEqual(style.headers.get("content-type"), "text/css; charset=utf-8")
      assert.strictEqual((yield* get(`${running.url}/dashboard/nope.js`)).status, 404)
      yield* running.shutdown
    }).pipe(quiet))

  it.effect("/controllers shows each object's Ready condition, and runs and errors per time bucket that add up to the health counts", () =>
    Effect.gen(function*() {
      yield* installCrd(Lamp)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const before = Date.now()
      const running = yield* Operator.start(Operator.make({
        name: "lit",
        http: { port: 0 },
        controllers: [Controller.define({
          name: "lamps",
          for: Lamp,
          namespace: ns,
          retryPolicy: RetryPolicy.exponential({ initial: "20 millis", maxAttempts: 2 }),
          reconcile: (lamp) =>
            lamp.spec.broken === undefined
              ? Effect.succeed(Outcome.done)
              : Effect.fail(new ReconcileError.Transient({ message: lamp.spec.broken }))
        })]
      }))
      for (const [name, spec] of [["on", {}], ["off", { broken: "bulb blown" }]] as const) {
        yield* kube.create(Lamp, { apiVersion: Lamp.apiVersion, kind: Lamp.kind, metadata: { name, namespace: ns }, spec })
      }
      const view = yield* eventually(Effect.flatMap(getJson<OperatorHttp.OperatorView>(`${running.url}/controllers`), (view) => {
        const { keys, rates, health } = view.controllers[0]!
        const off = keys.find((k) => k.key === `${ns}/off`)
        // The rates follow the stream of run reports, a moment after the engine's own counts.
        return ensure(
          keys.find((k) => k.key === `${ns}/on`)?.ready?.status === "True" && off?.exhausted === true &&
            off.ready?.status === "False" && sum(rates?.runs ?? []) === health.total,
          JSON.stringify(view.controllers[0])
        ).pipe(Effect.as(view))
      }))
      const lamps = view.controllers[0]!
      const off = lamps.keys.find((k) => k.key === `${ns}/off`)!
      assert.strictEqual(off.ready?.reason, "ReconcileError")
      assert.strictEqual(off.ready?.message, "bulb blown")
      assert.match(off.ready?.lastTransitionTime ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      assert.strictEqual(lamps.keys.find((k) => k.key === `${ns}/on`)?.ready?.reason, "Reconciled")

      const taken = Date.parse(view.time!)
      assert.isAtLeast(taken, before)
      const rates = lamps.rates!
      assert.strictEqual(rates.bucketMillis, 10_000)
      assert.strictEqual(rates.runs.length, 60)
      const lastBucketAt = Date.parse(rates.lastBucketAt!)
      assert.isTrue(lastBucketAt <= taken && taken < lastBucketAt + rates.bucketMillis, `${rates.lastBucketAt} ${view.time}`)
      // "on" once; "off" on its first run and two retries, all failed.
      assert.deepStrictEqual([sum(rates.runs), sum(rates.errors)], [4, 3])
      assert.deepStrictEqual([lamps.health.total, lamps.health.failed], [4, 3])

      const one = yield* getJson<OperatorHttp.ControllerView>(`${running.url}/controllers/lamps`)
      assert.deepStrictEqual([sum(one.rates!.runs), sum(one.rates!.errors)], [4, 3])
      assert.strictEqual(one.keys.find((k) => k.key === `${ns}/off`)?.ready?.message, "bulb blown")
      yield* running.shutdown
    }).pipe(quiet))

  /** An operator over the namespace's ConfigMaps whose run of "slow" lasts until `release`; the others end at once. */
  const holdingSlow = (
    ns: string,
    release: Deferred.Deferred<void>,
    names: { readonly operator: string; readonly controller: string; readonly concurrency?: number }
  ) =>
    Operator.start(Operator.make({
      name: names.operator,
      http: { port: 0 },
      controllers: [Controller.define({
        name: names.controller,
        for: Builtins.ConfigMap,
        namespace: ns,
        concurrency: names.concurrency,
        reconcile: (object) => object.metadata.name === "slow" ? Effect.as(Deferred.await(release), Outcome.done) : Effect.succeed(Outcome.done)
      })]
    }))

  it.effect("/controllers lists a key whose first run is still going, with when it started, and not once it ends", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const release = yield* Deferred.make<void>()
      const running = yield* holdingSlow(ns, release, { operator: "stalled", controller: "stuck" })
      const before = Date.now()
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "slow", namespace: ns }, data: {} })
      const stuck = yield* eventually(Effect.flatMap(getJson<OperatorHttp.ControllerView>(`${running.url}/controllers/stuck`), (view) => {
        const key = view.keys.find((k) => k.key === `${ns}/slow`)
        return ensure(key !== undefined, JSON.stringify(view.keys)).pipe(Effect.as(key!))
      }))
      assert.isNull(stuck.last)
      assert.isAtLeast(Date.parse(stuck.runningSince ?? ""), before - 1000)
      yield* Deferred.succeed(release, undefined)
      const done = yield* eventually(Effect.flatMap(getJson<OperatorHttp.ControllerView>(`${running.url}/controllers/stuck`), (view) => {
        const key = view.keys.find((k) => k.key === `${ns}/slow`)
        return ensure(key?.last !== null && key?.last !== undefined, JSON.stringify(view.keys)).pipe(Effect.as(key!))
      }))
      assert.isNull(done.runningSince)
      assert.strictEqual(done.last?.result._tag, "Done")
      yield* running.shutdown
    }).pipe(quiet))

  it.effect("/controllers says since when a key waits in the queue, behind a run that holds the only worker", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const release = yield* Deferred.make<void>()
      const running = yield* holdingSlow(ns, release, { operator: "one-worker", controller: "single", concurrency: 1 })
      const keyIn = (name: string, ready: (key: OperatorHttp.KeyView) => boolean) =>
        eventually(Effect.flatMap(getJson<OperatorHttp.ControllerView>(`${running.url}/controllers/single`), (view) => {
          const key = view.keys.find((k) => k.key === `${ns}/${name}`)
          return ensure(key !== undefined && ready(key), JSON.stringify(view.keys)).pipe(Effect.as(key!))
        }))
      const configMap = (name: string): Builtins.ConfigMap => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns } })
      yield* kube.create(Builtins.ConfigMap, configMap("quick"))
      const ran = yield* keyIn("quick", (key) => key.last !== null)
      assert.isNull(ran.queuedSince)
      yield* kube.create(Builtins.ConfigMap, configMap("slow"))
      yield* keyIn("slow", (key) => key.runningSince !== null)
      const before = Date.now()
      yield* kube.patch(Builtins.ConfigMap, "quick", ns, { data: { changed: "yes" } }, { type: "merge" })
      const waiting = yield* keyIn("quick", (key) => key.queuedSince !== null)
      assert.isAtLeast(Date.parse(waiting.queuedSince ?? ""), before - 1000)
      assert.isNull(waiting.runningSince)
      yield* Deferred.succeed(release, undefined)
      const after = yield* keyIn("quick", (key) => key.queuedSince === null && key.runningSince === null && Date.parse(key.last?.startedAt ?? "") >= before - 1000)
      assert.strictEqual(after.last?.result._tag, "Done")
      yield* running.shutdown
    }).pipe(quiet))
})

describe("OperatorHttp.readyView", () => {
  test("reads the Ready condition of any kind, and null where there is none or it is malformed", () => {
    assert.deepStrictEqual(
      OperatorHttp.readyView({ status: { conditions: [{ type: "Available", status: "True" }, { type: "Ready", status: "False", reason: "Down", message: "no pods" }] } }),
      { status: "False", reason: "Down", message: "no pods", lastTransitionTime: null }
    )
    assert.isNull(OperatorHttp.readyView(undefined))
    assert.isNull(OperatorHttp.readyView({ data: {} }))
    assert.isNull(OperatorHttp.readyView({ status: { conditions: "Ready" } }))
    assert.isNull(OperatorHttp.readyView({ status: { conditions: [null, { type: "Available", status: "True" }] } }))
    assert.isNull(OperatorHttp.readyView({ status: { conditions: [{ type: "Ready" }] } }))
  })
})
