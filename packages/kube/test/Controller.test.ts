import { assert, layer } from "@effect/vitest"
import { Outcome, ReconcileError, RetryPolicy } from "@kubefx/core"
import { Builtins, Conditions, Controller, Kube, ObjectMeta, Resource } from "@kubefx/kube"
import { Clock, Effect, Ref, References, Schema } from "effect"
import { TestClock } from "effect/testing"
import { ensure, eventually, installCrd, layer as cluster, namespace, TestCluster } from "./support.ts"

const Gadget = Resource.custom({
  group: "test.kubefx.dev",
  version: "v1",
  kind: "Gadget",
  plural: "gadgets",
  spec: Schema.Struct({ message: Schema.String, failWith: Schema.optionalKey(Schema.String) }),
  status: Schema.Struct({
    ...Conditions.statusFields,
    configMapName: Schema.optionalKey(Schema.String)
  })
})
type Gadget = typeof Gadget.schema.Type

const gadget = (ns: string, name: string, message: string, failWith?: string): Gadget => ({
  apiVersion: Gadget.apiVersion,
  kind: Gadget.kind,
  metadata: { name, namespace: ns },
  spec: failWith === undefined ? { message } : { message, failWith }
})

const readyOf = (object: Gadget | undefined) => object?.status?.conditions?.find((c) => c.type === "Ready")

/** A controller whose runs fail (transiently, without retry) with a Gadget's `spec.failWith`, when set. */
const failingOnRequest = (name: string, ns: string) =>
  Controller.start(Controller.define({
    name,
    for: Gadget,
    namespace: ns,
    retryPolicy: RetryPolicy.none,
    reconcile: (object) =>
      object.spec.failWith === undefined
        ? Effect.succeed(Outcome.done)
        : Effect.fail(new ReconcileError.Transient({ message: object.spec.failWith }))
  })).pipe(Effect.provideService(References.MinimumLogLevel, "None"))

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Controller on the API server", (it) => {
  it.effect("create and spec updates reconcile; status-only writes, the controller's own included, do not", () =>
    Effect.gen(function*() {
      yield* installCrd(Gadget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const runs = yield* Ref.make<Array<string>>([])
      const controller = yield* Controller.start(Controller.define({
        name: "gadgets-r16",
        for: Gadget,
        namespace: ns,
        reconcile: (object) =>
          Ref.update(runs, (xs) => [...xs, `${object.metadata.name}@${object.metadata.generation}`]).pipe(Effect.as(Outcome.done))
      }))
      yield* kube.create(Gadget, gadget(ns, "a", "hello"))
      yield* eventually(Effect.flatMap(kube.get(Gadget, "a", ns), (object) =>
        ensure(readyOf(object)?.status === "True" && object.status?.observedGeneration === 1, "not Ready yet")))

      // A status write by someone else: no reconcile.
      const written = yield* kube.patch(Gadget, "a", ns, { status: { configMapName: "elsewhere" } }, { type: "merge", subresource: "status" })
      yield* controller.informer.awaitVersion(ObjectMeta.key(written), written.metadata.resourceVersion)
      yield* kube.patch(Gadget, "a", ns, { spec: { message: "changed" } }, { type: "merge" })
      yield* eventually(Effect.flatMap(kube.get(Gadget, "a", ns), (object) =>
        ensure(object.status?.observedGeneration === 2, "generation 2 not observed")))
      yield* controller.awaitIdle
      assert.deepStrictEqual(yield* Ref.get(runs), ["a@1", "a@2"])
      assert.strictEqual(readyOf(yield* kube.get(Gadget, "a", ns))?.reason, "Reconciled")

      // A label change reconciles (R16 counts labels), deletion forgets the key.
      yield* kube.patch(Gadget, "a", ns, { metadata: { labels: { tier: "gold" } } }, { type: "merge" })
      yield* eventually(Effect.flatMap(Ref.get(runs), (xs) => ensure(xs.length === 3, "label change not reconciled")))
      yield* kube.delete(Gadget, "a", ns)
      yield* eventually(Effect.sync(() => controller.informer.get(`${ns}/a`)).pipe(
        Effect.flatMap((object) => ensure(object === undefined, "still cached"))
      ))
    }))

  it.effect("an owned ConfigMap edited by hand is restored; deleting the primary runs cleanup and collects it", () =>
    Effect.gen(function*() {
      yield* installCrd(Gadget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const cleaned = yield* Ref.make<Array<string>>([])
      const controller = yield* Controller.start(Controller.define({
        name: "gadgets-owner",
        for: Gadget,
        namespace: ns,
        owns: [Builtins.ConfigMap],
        reconcile: (object, ctx) =>
          ctx.applyOwned(Builtins.ConfigMap, {
            metadata: { name: `${object.metadata.name}-config` },
            data: { message: object.spec.message }
          }).pipe(Effect.as(Outcome.done)),
        cleanup: (object) => Ref.update(cleaned, (xs) => [...xs, object.metadata.name])
      }))
      yield* kube.create(Gadget, gadget(ns, "b", "hello"))
      const configMap = yield* eventually(kube.get(Builtins.ConfigMap, "b-config", ns))
      assert.deepStrictEqual(configMap.data, { message: "hello" })
      assert.strictEqual(configMap.metadata.ownerReferences?.[0]?.kind, "Gadget")
      assert.include((yield* kube.get(Gadget, "b", ns)).metadata.finalizers ?? [], controller.finalizer)

      yield* kube.patch(Builtins.ConfigMap, "b-config", ns, { data: { message: "tampered" } }, { type: "merge", fieldManager: "kubectl-edit" })
      yield* eventually(Effect.flatMap(kube.get(Builtins.ConfigMap, "b-config", ns), (cm) =>
        ensure(cm.data?.message === "hello", `still ${cm.data?.message}`)))

      yield* kube.delete(Gadget, "b", ns)
      yield* eventually(Effect.flatMap(Effect.flip(kube.get(Gadget, "b", ns)), (error) => ensure(error._tag === "NotFound", error._tag)))
      assert.deepStrictEqual(yield* Ref.get(cleaned), ["b"])
      yield* eventually(Effect.flatMap(Effect.flip(kube.get(Builtins.ConfigMap, "b-config", ns)), (error) =>
        ensure(error._tag === "NotFound", error._tag)))
    }))

  it.effect("a failure is recorded as Ready=False with reason ReconcileError and a message cut to 256 characters", () =>
    Effect.gen(function*() {
      yield* installCrd(Gadget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      yield* failingOnRequest("gadgets-failing", ns)
      yield* kube.create(Gadget, gadget(ns, "c", "x", "E".repeat(5000)))
      const failed = yield* eventually(Effect.flatMap(kube.get(Gadget, "c", ns), (object) => {
        const ready = readyOf(object)
        return ready?.status === "False" ? Effect.succeed(ready) : Effect.fail(new Error("not failed yet"))
      }))
      assert.strictEqual(failed.reason, "ReconcileError")
      assert.strictEqual(failed.message.length, 256)
      assert.isTrue(failed.message.startsWith("EEEE"))

      yield* kube.patch(Gadget, "c", ns, [{ op: "remove", path: "/spec/failWith" }], { type: "json" })
      const recovered = yield* eventually(Effect.flatMap(kube.get(Gadget, "c", ns), (object) =>
        readyOf(object)?.status === "True" ? Effect.succeed(object) : Effect.fail(new Error("not recovered"))))
      assert.strictEqual(recovered.status?.observedGeneration, 2)
    }))

  it.effect("records Kubernetes Events about the object, counting repeats", () =>
    Effect.gen(function*() {
      yield* installCrd(Gadget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      yield* Controller.start(Controller.define({
        name: "gadgets-events",
        for: Gadget,
        namespace: ns,
        reconcile: (object, ctx) =>
          ctx.recordEvent({ type: "Normal", reason: "Greeted", message: `said ${object.spec.message}` }).pipe(Effect.as(Outcome.done))
      }))
      const greeted = (count: number) =>
        eventually(Effect.flatMap(kube.list(Builtins.Event, { namespace: ns }), (list) => {
          const found = list.items.find((e) => e.reason === "Greeted" && e.involvedObject?.name === "d")
          return found !== undefined && found.count === count ? Effect.succeed(found) : Effect.fail(new Error(`no event counted ${count} times`))
        }))
      yield* kube.create(Gadget, gadget(ns, "d", "hi"))
      // The second change comes after the first run: two changes that arrive together are one run.
      yield* greeted(1)
      yield* kube.patch(Gadget, "d", ns, { metadata: { labels: { again: "1" } } }, { type: "merge" })
      const event = yield* greeted(2)
      assert.strictEqual(event.message, "said hi")
      assert.strictEqual(event.type, "Normal")
      assert.strictEqual(event.involvedObject?.kind, "Gadget")
    }))

  it.effect("a failure after a success keeps observedGeneration, and the condition names the generation the run saw", () =>
    Effect.gen(function*() {
      yield* installCrd(Gadget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      yield* failingOnRequest("gadgets-generations", ns)
      yield* kube.create(Gadget, gadget(ns, "e", "fine"))
      yield* eventually(Effect.flatMap(kube.get(Gadget, "e", ns), (object) =>
        ensure(readyOf(object)?.status === "True" && object.status?.observedGeneration === 1, "not Ready at 1")))
      yield* kube.patch(Gadget, "e", ns, { spec: { failWith: "broken at 2" } }, { type: "merge" })
      const failed = yield* eventually(Effect.flatMap(kube.get(Gadget, "e", ns), (object) =>
        readyOf(object)?.status === "False" ? Effect.succeed(object) : Effect.fail(new Error("not failed yet"))))
      assert.strictEqual(failed.status?.observedGeneration, 1) // still the last generation that converged
      assert.strictEqual(readyOf(failed)?.observedGeneration, 2) // the generation the failing run saw
      assert.strictEqual(readyOf(failed)?.message, "broken at 2")
    }))

  it.effect("a retry that succeeds before the watch shows the failure's Ready=False still writes Ready=True (controller on TestClock)", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      yield* installCrd(Gadget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const clock = yield* TestClock.make()
      const failNext = yield* Ref.make(false)
      const runs = yield* Ref.make(0)
      const controller = yield* Controller.start(Controller.define({
        name: "gadgets-lagging",
        for: Gadget,
        namespace: ns,
        retryPolicy: RetryPolicy.exponential({ initial: "10 millis", factor: 2, max: "100 millis" }),
        // A related ConfigMap of the same name reconciles the Gadget: events the lagging watch does not hold back.
        watches: [Controller.watch(Builtins.ConfigMap, (cm) => [ObjectMeta.key(cm)])],
        reconcile: () =>
          Effect.andThen(
            Ref.update(runs, (n) => n + 1),
            Effect.flatMap(Ref.getAndSet(failNext, false), (fail) =>
              fail ? Effect.fail(new ReconcileError.Transient({ message: "once" })) : Effect.succeed(Outcome.done))
          )
      })).pipe(Effect.provideService(Clock.Clock, clock), Effect.provideService(References.MinimumLogLevel, "None"))
      yield* kube.create(Gadget, gadget(ns, "f", "fine"))
      yield* eventually(Effect.flatMap(kube.get(Gadget, "f", ns), (object) =>
        ensure(readyOf(object)?.status === "True", "not Ready")))
      yield* eventually(Effect.sync(() => controller.informer.get(`${ns}/f`)).pipe(
        Effect.flatMap((object) => ensure(readyOf(object)?.status === "True", "the cache does not show Ready yet"))
      ))
      yield* controller.awaitIdle
      const before = yield* Ref.get(runs)

      // From here the Gadgets' watch delivers nothing: the cache keeps showing Ready=True.
      server.faults.pauseWatches({ resource: "gadgets.test.kubefx.dev", namespace: ns })
      yield* Ref.set(failNext, true)
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "f", namespace: ns } })
      // The failing run wrote Ready=False and left its retry 10 ms (virtual) ahead; the cache still shows True.
      yield* eventually(Effect.flatMap(controller.keyStatus(`${ns}/f`), (status) =>
        ensure(status._tag === "Some" && status.value.next?.trigger === "retry", "no retry pending yet")))
      assert.strictEqual(readyOf(yield* kube.get(Gadget, "f", ns))?.status, "False")
      assert.strictEqual(readyOf(controller.informer.get(`${ns}/f`))?.status, "True")
      yield* clock.adjust("10 millis")
      yield* eventually(Effect.flatMap(Ref.get(runs), (n) => ensure(n === before + 2, "no retry yet")))
      yield* controller.awaitIdle
      const ready = readyOf(yield* kube.get(Gadget, "f", ns))
      server.faults.resumeWatches()
      assert.strictEqual(ready?.status, "True")
      assert.strictEqual(ready?.reason, "Reconciled")
    }))

  // The controller runs on a TestClock of its own (the API server and this test keep real time), so
  // its timers fire at exact virtual instants while everything else is the real machinery.
  it.effect("on the controller's TestClock: requeueAfter runs again at exactly 60 s, a failure's retry at exactly +10 s, Ready=False meanwhile", () =>
    Effect.gen(function*() {
      yield* installCrd(Gadget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const clock = yield* TestClock.make()
      const runs = yield* Ref.make<Array<number>>([])
      const controller = yield* Controller.start(Controller.define({
        name: "gadgets-timed",
        for: Gadget,
        namespace: ns,
        retryPolicy: RetryPolicy.exponential({ initial: "10 seconds", factor: 2 }),
        reconcile: () =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const done = yield* Ref.updateAndGet(runs, (xs) => [...xs, now])
            // The first run looks again in a minute; the second fails once; the third is done.
            if (done.length === 1) return Outcome.requeueAfter("1 minute")
            if (done.length === 2) return yield* new ReconcileError.Transient({ message: "quota not there yet" })
            return Outcome.done
          })
      })).pipe(Effect.provideService(Clock.Clock, clock), Effect.provideService(References.MinimumLogLevel, "None"))
      const ready = Effect.map(kube.get(Gadget, "t", ns), readyOf)
      // The run has settled and left its timer: only then is moving the clock meaningful.
      const timerAt = (at: number) =>
        eventually(Effect.flatMap(controller.keyStatus(`${ns}/t`), (status) =>
          ensure(status._tag === "Some" && status.value.next?.at === at, `no timer at ${at} yet`)))
      yield* kube.create(Gadget, gadget(ns, "t", "timed"))
      yield* eventually(Effect.flatMap(ready, (condition) => ensure(condition?.status === "True", "first run not recorded")))
      yield* timerAt(60_000)

      yield* clock.adjust("59999 millis")
      assert.deepStrictEqual(yield* Ref.get(runs), [0])
      yield* clock.adjust("1 millis")
      yield* eventually(Effect.flatMap(ready, (condition) => ensure(condition?.status === "False", "the failure is not recorded")))
      assert.strictEqual((yield* ready)?.message, "quota not there yet")
      yield* timerAt(70_000)

      yield* clock.adjust("9999 millis")
      assert.deepStrictEqual(yield* Ref.get(runs), [0, 60_000])
      yield* clock.adjust("1 millis")
      yield* eventually(Effect.flatMap(ready, (condition) => ensure(condition?.status === "True", "the retry did not recover")))
      assert.deepStrictEqual(yield* Ref.get(runs), [0, 60_000, 70_000])
    }))

  it.effect("applyStatus: the next run reads the answer while the watch still lags", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      yield* installCrd(Gadget)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const seen = yield* Ref.make<Array<string | undefined>>([])
      const controller = yield* Controller.start(Controller.define({
        name: "gadgets-apply-status",
        for: Gadget,
        namespace: ns,
        watches: [Controller.watch(Builtins.ConfigMap, (cm) => [ObjectMeta.key(cm)])],
        reconcile: (object, ctx) =>
          Effect.gen(function*() {
            const runs = yield* Ref.updateAndGet(seen, (xs) => [...xs, object.status?.configMapName])
            yield* ctx.applyStatus({ status: { configMapName: `run-${runs.length}` } })
            return Outcome.done
          })
      }))
      yield* kube.create(Gadget, gadget(ns, "g", "fine"))
      yield* eventually(Effect.sync(() => controller.informer.get(`${ns}/g`)).pipe(
        Effect.flatMap((object) => ensure(object?.status?.configMapName === "run-1", "the cache does not show run-1"))
      ))
      yield* controller.awaitIdle

      server.faults.pauseWatches({ resource: "gadgets.test.kubefx.dev", namespace: ns })
      yield* kube.create(Builtins.ConfigMap, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "g", namespace: ns } })
      yield* eventually(Effect.flatMap(Ref.get(seen), (xs) => ensure(xs.length === 2, "no second run")))
      yield* controller.awaitIdle
      yield* kube.patch(Builtins.ConfigMap, "g", ns, { metadata: { labels: { again: "yes" } } }, { type: "merge" })
      yield* eventually(Effect.flatMap(Ref.get(seen), (xs) => ensure(xs.length === 3, "no third run")))
      yield* controller.awaitIdle
      server.faults.resumeWatches()
      assert.deepStrictEqual(yield* Ref.get(seen), [undefined, "run-1", "run-2"])
      assert.strictEqual((yield* kube.get(Gadget, "g", ns)).status?.configMapName, "run-3")
    }))
})

