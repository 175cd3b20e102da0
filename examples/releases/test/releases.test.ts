import { assert, layer } from "@effect/vitest"
import { Kube } from "@kubefx/kube"
import { Effect, References } from "effect"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "../../../packages/kube/test/support.ts"
import * as Flaky from "@kubefx/example-flaky"
import { controller, Release } from "../src/index.ts"

const release = (ns: string, name: string, spec: Release["spec"]): Release => ({
  apiVersion: Release.apiVersion,
  kind: Release.kind,
  metadata: { name, namespace: ns },
  spec
})

/** Both CRDs, a fresh namespace, and the flaky and releases controllers (releases depending on flaky). */
const started = Effect.gen(function*() {
  yield* installCrd(Flaky.Flaky)
  yield* installCrd(Release)
  const ns = yield* namespace
  const kube = yield* Kube.Kube
  const flaky = yield* Flaky.controller
  const releases = yield* controller(flaky)
  return { ns, kube, flaky, releases }
})

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("releases", (it) => {
  it.effect("rolls out with requeueAfter, then releases; transient and permanent failures behave as such", () =>
    Effect.gen(function*() {
      const { ns, kube, releases } = yield* started
      yield* kube.create(Release, release(ns, "shop", { version: "1.0.0", rolloutSeconds: 1 }))
      const rolling = yield* eventually(Effect.flatMap(kube.get(Release, "shop", ns), (r) =>
        r.status?.phase === "RollingOut" ? Effect.succeed(r) : Effect.fail(new Error("not rolling out"))))
      assert.strictEqual(rolling.status?.rollingOutVersion, "1.0.0")
      const released = yield* eventually(Effect.flatMap(kube.get(Release, "shop", ns), (r) =>
        r.status?.phase === "Released" ? Effect.succeed(r) : Effect.fail(new Error("not released"))))
      assert.strictEqual(released.status?.releasedVersion, "1.0.0")
      const runs = (yield* releases.keyStatus(`${ns}/shop`)).pipe((s) => s._tag === "Some" ? s.value : undefined)
      assert.strictEqual(runs?.last?.result._tag, "Done")

      yield* kube.create(Release, release(ns, "broken", { version: "2.0.0", fail: "transient" }))
      yield* eventually(Effect.flatMap(releases.keyStatus(`${ns}/broken`), (s) =>
        ensure(s._tag === "Some" && s.value.attempt >= 2 && s.value.next?.trigger === "retry", "not retrying")))
      yield* kube.create(Release, release(ns, "invalid", { version: "3.0.0", fail: "permanent" }))
      const invalid = yield* eventually(Effect.flatMap(releases.keyStatus(`${ns}/invalid`), (s) =>
        s._tag === "Some" && s.value.last !== undefined ? Effect.succeed(s.value) : Effect.fail(new Error("no run"))))
      assert.strictEqual(invalid.last?.result._tag, "Permanent")
      assert.isUndefined(invalid.next)
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))

  it.effect("holds new reconciles while the flaky controller is degraded, and resumes when it recovers", () =>
    Effect.gen(function*() {
      const { ns, kube, flaky, releases } = yield* started
      for (let i = 0; i < 5; i++) {
        yield* kube.create(Flaky.Flaky, { apiVersion: Flaky.Flaky.apiVersion, kind: "Flaky", metadata: { name: `bad-${i}`, namespace: ns }, spec: { failTimes: 0, permanent: true } })
      }
      yield* eventually(Effect.suspend(() => ensure(flaky.isDegraded(), "flaky not degraded")))
      yield* kube.create(Release, release(ns, "waiting", { version: "1.0.0" }))
      yield* eventually(Effect.flatMap(releases.status, (status) => ensure(status === "Pending", status)))
      assert.isUndefined((yield* kube.get(Release, "waiting", ns)).status)

      yield* kube.create(Flaky.Flaky, { apiVersion: Flaky.Flaky.apiVersion, kind: "Flaky", metadata: { name: "good", namespace: ns }, spec: { failTimes: 0 } })
      yield* eventually(Effect.flatMap(kube.get(Release, "waiting", ns), (r) =>
        ensure(r.status?.phase === "Released", "not released after recovery")))
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
})
