/**
 * Buckets: an operator for something outside the cluster. Each Bucket allocates one bucket in an
 * external object store (see ObjectStore.ts) and stores its generated id in `status.bucketId` with
 * `patchStatusAndCache`, so the next reconcile reads the id even before the watch delivers the status
 * write. If the operator died between allocating and recording, the bucket is found again by its
 * owner's uid instead of being allocated twice. A finalizer deletes the external bucket before the
 * Bucket goes away.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Outcome, RetryPolicy } from "@kubefx/core"
import { Conditions, Controller, Resource } from "@kubefx/kube"
import { Config, Effect, Layer, Schema } from "effect"
import { HttpServer } from "effect/http"
import * as ObjectStore from "./ObjectStore.ts"

export * as ObjectStore from "./ObjectStore.ts"

export const Bucket = Resource.custom({
  group: "demo.kubefx.dev",
  version: "v1",
  kind: "Bucket",
  plural: "buckets",
  shortNames: ["bkt"],
  spec: Schema.Struct({ region: Schema.optionalKey(Schema.String) }),
  status: Schema.Struct({
    ...Conditions.statusFields,
    bucketId: Schema.optionalKey(Schema.String)
  }),
  printerColumns: [
    { name: "Bucket", type: "string", jsonPath: ".status.bucketId" },
    { name: "Ready", type: "string", jsonPath: ".status.conditions[?(@.type==\"Ready\")].status" }
  ]
})
export type Bucket = typeof Bucket.schema.Type

/** Allocates the Bucket's external bucket once, and records its id. */
export const reconcile = Effect.fnUntraced(function*(bucket: Controller.Stored<Bucket>, ctx: Controller.Context<Bucket>) {
  if (bucket.status?.bucketId !== undefined) return Outcome.done
  const store = yield* ObjectStore.ObjectStore
  const owner = bucket.metadata.uid
  const [adopted] = yield* store.list(owner)
  const allocated = adopted ?? (yield* store.allocate(owner, bucket.metadata.name))
  yield* ctx.patchStatusAndCache({ status: { bucketId: allocated.id } })
  if (adopted === undefined) {
    yield* ctx.recordEvent({ type: "Normal", reason: "Allocated", message: `allocated bucket ${allocated.id}` })
  }
  return Outcome.done
})

/** Frees every external bucket the Bucket owns. */
export const cleanup = Effect.fnUntraced(function*(bucket: Controller.Stored<Bucket>) {
  const store = yield* ObjectStore.ObjectStore
  const owned = yield* store.list(bucket.metadata.uid)
  yield* Effect.forEach(owned, (external) => store.remove(external.id), { discard: true })
})

/** The buckets controller. */
export const definition = Controller.define({
  name: "buckets",
  for: Bucket,
  concurrency: 4,
  retryPolicy: RetryPolicy.exponential({ initial: "100 millis", max: "10 seconds" }),
  reconcile,
  cleanup
})

/** The object store client for a store at `url`. */
export const objectStoreLayer = (url: string): Layer.Layer<ObjectStore.ObjectStore> =>
  ObjectStore.layer(url).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** The port of the fake object store (`KUBEFX_OBJECT_STORE_PORT`, default 8090; 0 picks a free one). */
export const objectStorePort = Config.Int("KUBEFX_OBJECT_STORE_PORT").pipe(Config.withDefault(8090))

/** For `kubefx dev`: serves the fake object store on 127.0.0.1 and provides its client. */
export const layer: Layer.Layer<ObjectStore.ObjectStore, unknown> = Layer.unwrap(Effect.gen(function*() {
  const port = yield* objectStorePort
  const server = ObjectStore.server({ port })
  const client = Layer.unwrap(Effect.gen(function*() {
    const url = HttpServer.formatAddress((yield* HttpServer.HttpServer).address)
    yield* Effect.logInfo(`fake object store on ${url}/buckets`)
    return objectStoreLayer(url)
  }))
  return Layer.provide(client, server)
}))

export const resources = [Bucket]
export const samples = new URL("../samples/", import.meta.url)
