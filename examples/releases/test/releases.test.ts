import { assert, layer } from "@effect/vitest"
import * as Flaky from "@kubefx/example-flaky"
import { Await, Samples, TestCluster } from "@kubefx/testing"
import { Effect, Option, References, Schedule } from "effect"
import { definition, Release } from "../src/index.ts"

// The flaky and releases controllers, releases depending on flaky.
const cluster = TestCluster.layer({ resources: [Flaky.Flaky, Release], controllers: [Flaky.definition, definition] })

const poll = Schedule.spaced("20 millis")

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("releases", (it) => {
  it.effect("rolls out with requeueAfter, then releases; transient and permanent failures behave as such", () =>
    Effect.gen(function*() {
      const ns = yield* TestCluster.namespace
      const releases = yield* TestCluster.controller("releases")
      yield* Samples.apply(Release, { metadata: { name: "shop", namespace: ns }, spec: { version: "1.0.0", rolloutSeconds: 1 } })
      const rolling = yield* Await.until(Release, "shop", ns, (r) => r.status?.phase === "RollingOut", { description: "phase RollingOut" })
      assert.strictEqual(rolling.status?.rollingOutVersion, "1.0.0")
      const released = yield* Await.until(Release, "shop", ns, (r) => r.status?.phase === "Released", { description: "phase Released" })
      assert.strictEqual(released.status?.releasedVersion, "1.0.0")
      const runs = Option.getOrUndefined(yield* releases.keyStatus(`${ns}/shop`))
      assert.strictEqual(runs?.last?.result._tag, "Done")

      yield* Samples.apply(Release, { metadata: { name: "broken", namespace: ns }, spec: { version: "2.0.0", fail: "transient" } })
      yield* releases.keyStatus(`${ns}/broken`).pipe(
        Effect.repeat({ until: (s) => Option.isSome(s) && s.value.attempt >= 2 && s.value.next?.trigger === "retry", schedule: poll })
      )
      yield* Samples.apply(Release, { metadata: { name: "invalid", namespace: ns }, spec: { version: "3.0.0", fail: "permanent" } })
      const invalid = yield* releases.keyStatus(`${ns}/invalid`).pipe(
        Effect.repeat({ until: (s) => Option.isSome(s) && s.value.last !== undefined, schedule: poll }),
        Effect.map(Option.getOrThrow)
      )
      assert.strictEqual(invalid.last?.result._tag, "Permanent")
      assert.isUndefined(invalid.next)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})

// Controllers of their own: the first file's transient failures leave releases degraded.
layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("releases behind a degraded flaky", (it) => {
  it.effect("holds new reconciles while the flaky controller is degraded, and resumes when it recovers", () =>
    Effect.gen(function*() {
      const ns = yield* TestCluster.namespace
      const flaky = yield* TestCluster.controller("flaky")
      const releases = yield* TestCluster.controller("releases")
      for (let i = 0; i < 5; i++) {
        yield* Samples.apply(Flaky.Flaky, { metadata: { name: `bad-${i}`, namespace: ns }, spec: { failTimes: 0, permanent: true } })
      }
      yield* Effect.sync(() => flaky.isDegraded()).pipe(Effect.repeat({ until: (degraded) => degraded, schedule: poll }))

      yield* Samples.apply(Release, { metadata: { name: "waiting", namespace: ns }, spec: { version: "1.0.0" } })
      yield* releases.status.pipe(Effect.repeat({ until: (status) => status === "Pending", schedule: poll }))
      // Not reconciled, and it says why.
      const waiting = yield* Await.condition(Release, "waiting", ns, "DependenciesReady", "False")
      const held = waiting.status?.conditions?.find((c) => c.type === "DependenciesReady")
      assert.strictEqual(held?.reason, "DependencyDegraded")
      assert.strictEqual(held?.message, "waits for controller flaky, degraded; its reconciles resume when it recovers")
      assert.isUndefined(waiting.status?.phase)

      yield* Samples.apply(Flaky.Flaky, { metadata: { name: "good", namespace: ns }, spec: { failTimes: 0 } })
      yield* Await.until(Release, "waiting", ns, (r) => r.status?.phase === "Released", { description: "phase Released after recovery" })
      const released = yield* Await.until(Release, "waiting", ns, (r) =>
        r.status?.conditions?.every((c) => c.type !== "DependenciesReady") === true, { description: "the held condition dropped" })
      assert.strictEqual(released.status?.conditions?.find((c) => c.type === "Ready")?.status, "True")
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})
