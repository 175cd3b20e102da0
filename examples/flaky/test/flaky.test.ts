import { assert, layer } from "@effect/vitest"
import { Kube } from "@kubefx/kube"
import { Effect, Option, References } from "effect"
import { eventually, installCrd, layer as cluster, namespace } from "../../../packages/kube/test/support.ts"
import { controller, Flaky } from "../src/index.ts"

const flaky = (ns: string, name: string, spec: Flaky["spec"]): Flaky => ({
  apiVersion: Flaky.apiVersion,
  kind: Flaky.kind,
  metadata: { name, namespace: ns },
  spec
})
const readyOf = (object: Flaky) => object.status?.conditions?.find((c) => c.type === "Ready")

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("flaky", (it) => {
  it.effect("fails three times with Ready=False/ReconcileError (message cut to 256), then becomes Ready", () =>
    Effect.gen(function*() {
      yield* installCrd(Flaky)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const running = yield* controller
      const long = `boom ${"!".repeat(600)}`
      yield* kube.create(Flaky, flaky(ns, "three", { failTimes: 3, message: long }))
      const failed = yield* eventually(Effect.flatMap(kube.get(Flaky, "three", ns), (object) => {
        const ready = readyOf(object)
        return ready?.status === "False" ? Effect.succeed(ready) : Effect.fail(new Error("not failed"))
      }))
      assert.strictEqual(failed.reason, "ReconcileError")
      assert.strictEqual(failed.message.length, 256)
      yield* eventually(Effect.flatMap(kube.get(Flaky, "three", ns), (object) =>
        readyOf(object)?.status === "True" ? Effect.void : Effect.fail(new Error("not ready"))))
      const health = yield* running.health
      assert.strictEqual(health.failed, 3)
      assert.strictEqual(health.consecutiveFailures, 0)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("a permanent failure stays Ready=False with no further attempts", () =>
    Effect.gen(function*() {
      yield* installCrd(Flaky)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const running = yield* controller
      yield* kube.create(Flaky, flaky(ns, "never", { failTimes: 0, permanent: true, message: "spec cannot work" }))
      yield* eventually(Effect.flatMap(kube.get(Flaky, "never", ns), (object) =>
        readyOf(object)?.status === "False" ? Effect.void : Effect.fail(new Error("not failed"))))
      const status = yield* eventually(Effect.flatMap(running.keyStatus(`${ns}/never`), (s) =>
        Option.isSome(s) && s.value.last !== undefined ? Effect.succeed(s.value) : Effect.fail(new Error("no run yet"))))
      assert.strictEqual(status.last?.result._tag, "Permanent")
      assert.isUndefined(status.next)
      assert.strictEqual((yield* running.health).failed, 1)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})
