import { assert, layer } from "@effect/vitest"
import { Kube } from "@kubefx/kube"
import { Context, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { ensure, eventually, installCrd, layer as cluster, namespace } from "../../../packages/kube/test/support.ts"
import { Bucket, controller, ObjectStore, objectStoreLayer } from "../src/index.ts"

/** A store on a random port, and its client. */
const store = Effect.gen(function*() {
  const context = yield* Layer.build(ObjectStore.server({ latency: "30 millis" }))
  const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
  return yield* Effect.map(Layer.build(objectStoreLayer(url)), (client) => Context.get(client, ObjectStore.ObjectStore))
})

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("buckets", (it) => {
  it.effect("20 Buckets created and relabelled in a burst get exactly 20 external buckets; deleting them frees all", () =>
    Effect.gen(function*() {
      yield* installCrd(Bucket)
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const objectStore = yield* store
      yield* controller.pipe(Effect.provideService(ObjectStore.ObjectStore, objectStore))
      const names = Array.from({ length: 20 }, (_, i) => `b-${i}`)
      yield* Effect.forEach(names, (name) =>
        kube.create(Bucket, { apiVersion: Bucket.apiVersion, kind: Bucket.kind, metadata: { name, namespace: ns }, spec: {} }), {
        concurrency: 5,
        discard: true
      })
      for (let round = 0; round < 3; round++) {
        yield* Effect.forEach(names, (name) =>
          kube.patch(Bucket, name, ns, { metadata: { labels: { round: `${round}` } } }, { type: "merge" }), {
          concurrency: 5,
          discard: true
        })
      }
      const buckets = yield* eventually(Effect.flatMap(kube.list(Bucket, { namespace: ns }), (list) =>
        list.items.every((b) => b.status?.bucketId !== undefined) ? Effect.succeed(list.items) : Effect.fail(new Error("not all allocated"))))
      const external = yield* objectStore.list()
      const ours = external.filter((bucket) => buckets.some((b) => b.metadata.uid === bucket.owner))
      assert.strictEqual(ours.length, 20)
      assert.strictEqual(new Set(ours.map((bucket) => bucket.owner)).size, 20)
      assert.deepStrictEqual(
        buckets.map((b) => b.status?.bucketId).sort(),
        ours.map((bucket) => bucket.id).sort()
      )

      yield* Effect.forEach(names, (name) => kube.delete(Bucket, name, ns), { discard: true })
      yield* eventually(Effect.flatMap(kube.list(Bucket, { namespace: ns }), (list) => ensure(list.items.length === 0, "not deleted")))
      const left = (yield* objectStore.list()).filter((bucket) => buckets.some((b) => b.metadata.uid === bucket.owner))
      assert.deepStrictEqual(left, [])
    }))
})
