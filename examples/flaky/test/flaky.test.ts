import { assert, layer } from "@effect/vitest"
import { Await, Samples, TestCluster } from "@kubefx/testing"
import { Effect, Option, References, Schedule } from "effect"
import { definition, Flaky } from "../src/index.ts"

const cluster = TestCluster.layer({ resources: [Flaky], controllers: [definition] })

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("flaky", (it) => {
  it.effect("fails three times with Ready=False/ReconcileError (message cut to 256), then becomes Ready", () =>
    Effect.gen(function*() {
      const ns = yield* TestCluster.namespace
      const flaky = yield* TestCluster.controller("flaky")
      const before = yield* flaky.health
      yield* Samples.apply(Flaky, { metadata: { name: "three", namespace: ns }, spec: { failTimes: 3, message: `boom ${"!".repeat(600)}` } })
      const failed = yield* Await.condition(Flaky, "three", ns, "Ready", "False")
      const ready = failed.status?.conditions?.find((c) => c.type === "Ready")
      assert.strictEqual(ready?.reason, "ReconcileError")
      assert.strictEqual(ready?.message.length, 256)
      yield* Await.condition(Flaky, "three", ns, "Ready")
      const health = yield* flaky.health
      assert.strictEqual(health.failed - before.failed, 3)
      assert.strictEqual(health.consecutiveFailures, 0)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("a permanent failure stays Ready=False with no further attempts", () =>
    Effect.gen(function*() {
      const ns = yield* TestCluster.namespace
      const flaky = yield* TestCluster.controller("flaky")
      const before = yield* flaky.health
      yield* Samples.apply(Flaky, { metadata: { name: "never", namespace: ns }, spec: { failTimes: 0, permanent: true, message: "spec cannot work" } })
      yield* Await.condition(Flaky, "never", ns, "Ready", "False")
      const status = yield* flaky.keyStatus(`${ns}/never`).pipe(
        Effect.repeat({ until: (s) => Option.isSome(s) && s.value.last !== undefined, schedule: Schedule.spaced("20 millis") }),
        Effect.map(Option.getOrThrow)
      )
      assert.strictEqual(status.last?.result._tag, "Permanent")
      assert.isUndefined(status.next)
      assert.strictEqual((yield* flaky.health).failed - before.failed, 1)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})
