/**
 * The client against the embedded API server: throttled requests (429) are sent again after the
 * server's Retry-After, as client-go does, and fail only when the server keeps throttling.
 */
import { assert, layer } from "@effect/vitest"
import { Builtins, Kube } from "@kubefx/kube"
import { Effect } from "effect"
import { layer as cluster, namespace, TestCluster } from "./support.ts"

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Kube", (it) => {
  it.effect("a throttled request is sent again after Retry-After and succeeds once the server lets it through", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      server.faults.set({ rules: [{ resource: "configmaps", verbs: ["create"], throttleRate: 1, retryAfterSeconds: 1 }] })
      yield* Effect.forkScoped(Effect.delay(Effect.sync(() => server.faults.clear()), "1500 millis"))
      const created = yield* kube.create(Builtins.ConfigMap, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "throttled", namespace: ns }
      })
      assert.strictEqual(created.metadata.name, "throttled")
    }))

  it.effect("a request the server keeps throttling fails with TooManyRequests", () =>
    Effect.gen(function*() {
      const { server } = yield* TestCluster
      if (server === undefined) return
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      server.faults.set({ rules: [{ resource: "configmaps", verbs: ["list"], throttleRate: 1, retryAfterSeconds: 0 }] })
      const error = yield* Effect.flip(kube.list(Builtins.ConfigMap, { namespace: ns }))
      server.faults.clear()
      assert.strictEqual(error._tag, "TooManyRequests")
    }))
})
