/**
 * A fake external object store, standing in for the cloud API an operator allocates resources in.
 * `POST /buckets` allocates a bucket with a generated id after a configurable latency; `GET /buckets`
 * lists every bucket with its owner's uid (`?owner=` filters); `DELETE /buckets/:id` frees one.
 * Allocation is deliberately not idempotent: calling it twice makes two buckets, which is what the
 * overlay cache and the owner lookup protect against.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Duration, Effect, Layer, Ref, Schema } from "effect"
import { HttpClient, HttpClientRequest, HttpClientResponse, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"

export const Bucket = Schema.Struct({
  id: Schema.String,
  owner: Schema.String,
  name: Schema.String,
  createdAt: Schema.String
})
export type Bucket = typeof Bucket.Type

const AllocateRequest = Schema.Struct({ owner: Schema.String, name: Schema.String })

export interface ServerOptions {
  readonly port?: number | undefined
  readonly host?: string | undefined
  /** How long an allocation takes; default 50 ms. */
  readonly latency?: Duration.Input | undefined
}

/**
 * Serves the store until the scope closes.
 *
 * @example
 * import { Effect, Layer } from "effect"
 * import * as ObjectStore from "./ObjectStore.ts"
 * const running = Layer.launch(ObjectStore.server({ port: 8090 }))
 */
export const server = (options: ServerOptions = {}) =>
  Layer.unwrap(Effect.gen(function*() {
    const buckets = yield* Ref.make(new Map<string, Bucket>())
    const latency = Duration.fromInputUnsafe(options.latency ?? "50 millis")
    const routes = HttpRouter.use(Effect.fn(function*(router) {
      yield* router.add("GET", "/healthz", HttpServerResponse.text("ok"))
      yield* router.add("GET", "/buckets", Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const owner = new URL(request.url, "http://store").searchParams.get("owner")
        const all = Array.from((yield* Ref.get(buckets)).values())
        return yield* HttpServerResponse.json(owner === null ? all : all.filter((bucket) => bucket.owner === owner))
      }))
      yield* router.add("POST", "/buckets", Effect.gen(function*() {
        const body = yield* HttpServerRequest.schemaBodyJson(AllocateRequest)
        yield* Effect.sleep(latency)
        const bucket: Bucket = {
          id: `bkt-${randomBytes(6).toString("hex")}`,
          owner: body.owner,
          name: body.name,
          createdAt: new Date().toISOString()
        }
        yield* Ref.update(buckets, (map) => new Map(map).set(bucket.id, bucket))
        return yield* HttpServerResponse.json(bucket, { status: 201 })
      }).pipe(Effect.catchTag("SchemaError", (error) => HttpServerResponse.json({ error: error.message }, { status: 400 }))))
      yield* router.add("DELETE", "/buckets/:id", Effect.gen(function*() {
        const { id } = yield* HttpRouter.params
        const existed = yield* Ref.modify(buckets, (map) => {
          const next = new Map(map)
          return [next.delete(id ?? ""), next]
        })
        return HttpServerResponse.empty({ status: existed ? 204 : 404 })
      }))
    }))
    return HttpRouter.serve(routes, { disableLogger: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port ?? 0, host: options.host ?? "127.0.0.1" }))
    )
  }))

/** A request to the store failed; the reconcile retries. */
export class ObjectStoreError extends Schema.TaggedError<ObjectStoreError>()("ObjectStoreError", {
  message: Schema.String
}) {}

export class ObjectStore extends Context.Service<ObjectStore, {
  readonly list: (owner?: string) => Effect.Effect<ReadonlyArray<Bucket>, ObjectStoreError>
  readonly allocate: (owner: string, name: string) => Effect.Effect<Bucket, ObjectStoreError>
  readonly remove: (id: string) => Effect.Effect<void, ObjectStoreError>
}>()("@kubefx/example-buckets/ObjectStore") {}

/**
 * A client of the store at `url`.
 *
 * @example
 * import { Effect } from "effect"
 * import * as ObjectStore from "./ObjectStore.ts"
 * const count = ObjectStore.ObjectStore.use((store) => store.list()).pipe(
 *   Effect.provide(ObjectStore.layer("http://127.0.0.1:8090"))
 * )
 */
export const layer = (url: string): Layer.Layer<ObjectStore, never, HttpClient.HttpClient> =>
  Layer.effect(ObjectStore, Effect.gen(function*() {
    const http = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest(HttpClientRequest.prependUrl(url)),
      HttpClient.filterStatusOk
    )
    const fail = (what: string) => (error: { readonly message: string }) =>
      new ObjectStoreError({ message: `object store ${what} failed: ${error.message}` })
    return {
      list: (owner) =>
        http.get("/buckets", { urlParams: owner === undefined ? {} : { owner } }).pipe(
          Effect.flatMap(HttpClientResponse.schemaBodyJson(Schema.Array(Bucket))),
          Effect.mapError(fail("list"))
        ),
      allocate: (owner, name) =>
        HttpClientRequest.post("/buckets").pipe(
          HttpClientRequest.bodyJsonUnsafe({ owner, name }),
          http.execute,
          Effect.flatMap(HttpClientResponse.schemaBodyJson(Bucket)),
          Effect.mapError(fail("allocate"))
        ),
      remove: (id) =>
        http.del(`/buckets/${encodeURIComponent(id)}`).pipe(
          Effect.asVoid,
          Effect.catchIf(
            (error) => error._tag === "HttpClientError" && error.response?.status === 404,
            () => Effect.void
          ),
          Effect.mapError(fail("delete"))
        )
    }
  }))
