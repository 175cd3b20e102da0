import { assert, layer } from "@effect/vitest"
import { Kube } from "@kubefx/kube"
import { Await, Samples, TestCluster } from "@kubefx/testing"
import { Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { Bucket, definition, ObjectStore, objectStoreLayer } from "../src/index.ts"

/** The fake object store on a random port (30 ms per call), and its client. */
const store = Layer.unwrap(Effect.gen(function*() {
  const url = HttpServer.formatAddress((yield* HttpServer.HttpServer).address)
  return objectStoreLayer(url)
})).pipe(Layer.provide(ObjectStore.server({ latency: "30 millis" })))

// The controller needs the store; the test reads it too.
const cluster = TestCluster.layer({ resources: [Bucket], controllers: [definition] }).pipe(Layer.provideMerge(store))

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("buckets", (it) => {
  it.effect("20 Buckets created and relabelled in a burst get exactly 20 external buckets; deleting them frees all", () =>
    Effect.gen(function*() {
      const ns = yield* TestCluster.namespace
      const kube = yield* Kube.Kube
      const objectStore = yield* ObjectStore.ObjectStore
      const names = Array.from({ length: 20 }, (_, i) => `b-${i}`)
      yield* Effect.forEach(names, (name) => Samples.apply(Bucket, { metadata: { name, namespace: ns }, spec: {} }), {
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
      const buckets = yield* Effect.forEach(names, (name) =>
        Await.until(Bucket, name, ns, (b) => b.status?.bucketId !== undefined, { description: "a bucket id", timeout: "20 seconds" }))
      const external = yield* objectStore.list()
      const ours = external.filter((bucket) => buckets.some((b) => b.metadata.uid === bucket.owner))
      assert.strictEqual(ours.length, 20)
      assert.strictEqual(new Set(ours.map((bucket) => bucket.owner)).size, 20)
      assert.deepStrictEqual(
        buckets.map((b) => b.status?.bucketId).sort(),
        ours.map((bucket) => bucket.id).sort()
      )

      yield* Effect.forEach(names, (name) => kube.delete(Bucket, name, ns), { discard: true })
      yield* Effect.forEach(names, (name) => Await.deleted(Bucket, name, ns, { timeout: "20 seconds" }), { discard: true })
      // A Bucket is gone only after its finalizer freed the external bucket.
      const left = (yield* objectStore.list()).filter((bucket) => buckets.some((b) => b.metadata.uid === bucket.owner))
      assert.deepStrictEqual(left, [])
    }))
})
