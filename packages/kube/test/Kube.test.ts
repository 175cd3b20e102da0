/**
 * The client against the embedded API server: throttled requests (429) are sent again after the
 * server's Retry-After, as client-go does, and fail only when the server keeps throttling; objects
 * whose Schema decodes through an effect are read the long way, as objects that decode at once are
 * read the short one.
 */
import { assert, layer } from "@effect/vitest"
import { Builtins, Kube, ObjectMeta, Resource } from "@kubefx/kube"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { ApiServer } from "@kubefx/apiserver"
import { Effect, Fiber, Layer, Schema, SchemaTransformation, Stream, Tracer } from "effect"
import { HttpClient } from "effect/http"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { layer as cluster, namespace, TestCluster } from "./support.ts"

layer(cluster, { excludeTestServices: true, timeout: "60 seconds" })("Kube", (it) => {
  it.effect("each request is a span of an installed tracer, a child of the caller's span", () =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      const spans: Array<Tracer.Span> = []
      const recording = Tracer.make({
        span: (options) => {
          const span = new Tracer.NativeSpan(options)
          spans.push(span)
          return span
        }
      })
      yield* kube.list(Builtins.ConfigMap, { namespace: "default" }).pipe(Effect.withSpan("caller"), Effect.withTracer(recording))
      const caller = spans.find((span) => span.name === "caller")!
      const requests = spans.filter((span) => span !== caller)
      assert.isAtLeast(requests.length, 1)
      assert.isTrue(requests.every((span) => span.parent._tag === "Some" && span.parent.value.spanId === caller.spanId))
    }))

  it.effect("objects whose Schema decodes with an effect are listed, watched and written back the long way", () =>
    Effect.gen(function*() {
      const ns = yield* namespace
      const kube = yield* Kube.Kube
      const configMap = (name: string, message: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns }, data: { message } })
      for (const name of ["a", "b", "c"]) yield* kube.create(Builtins.ConfigMap, configMap(name, `hello ${name}`))
      // a Schema whose decoding is an effect: no object of it decodes at once
      assert.isUndefined(Resource.decodeNow(Shouting, configMap("a", "hello")))
      const listed = yield* kube.listAll(Shouting, { namespace: ns, limit: 2 })
      assert.deepStrictEqual(listed.items.map((item) => item.data?.message), ["HELLO A", "HELLO B", "HELLO C"])
      const events = yield* kube.watch(Shouting, { namespace: ns, resourceVersion: listed.resourceVersion }).pipe(
        Stream.take(1),
        Stream.runCollect,
        Effect.forkChild
      )
      const applied = yield* kube.apply(Shouting, { metadata: { name: "d", namespace: ns }, data: { message: "hello d" } }, { fieldManager: "kubefx-test" })
      assert.strictEqual(applied.data?.message, "HELLO D")
      const [event] = yield* Fiber.join(events)
      assert.isTrue(event?.type === "ADDED" && event.object.data?.message === "HELLO D")
    }))

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

// ConfigMaps whose data values decode upper-cased through an effect, not at once.
const Shouting = Resource.builtin({
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  schema: Schema.Struct({
    metadata: ObjectMeta.ObjectMeta,
    data: Schema.optionalKey(Schema.Record(
      Schema.String,
      Schema.String.pipe(Schema.decodeTo(Schema.String, SchemaTransformation.transformEffect({
        decode: (text: string) => Effect.sync(() => text.toUpperCase()),
        encode: (text: string) => Effect.succeed(text.toLowerCase())
      })))
    ))
  })
})

// An operator that calls its own services over HTTP builds NodeHttpClient.layerUndici in the same
// layer graph as the API client: the client still talks TLS with the cluster's CA, not the app's.
const withAppHttpClient = Layer.unwrap(Effect.gen(function*() {
  const dir = mkdtempSync(join(tmpdir(), "kubefx-kube-http-test-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
  yield* ApiServer.make({ kubeconfigPath: join(dir, "kubeconfig") })
  return Kube.layer({ _tag: "File", path: join(dir, "kubeconfig") }).pipe(Layer.provideMerge(NodeHttpClient.layerUndici))
}))

layer(withAppHttpClient, { excludeTestServices: true, timeout: "60 seconds" })("Kube beside the application's HTTP client", (it) => {
  it.effect("reaches the TLS server with its own CA", () =>
    Effect.gen(function*() {
      const kube = yield* Kube.Kube
      const ns = yield* kube.get(Builtins.Namespace, "default")
      assert.strictEqual(ns.metadata.name, "default")
      assert.isDefined(yield* HttpClient.HttpClient)
    }))
})
