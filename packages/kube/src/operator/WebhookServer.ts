/**
 * The operator's HTTPS server for admission webhooks: each webhook at its path, answering the
 * AdmissionReview the API server POSTs. Its certificate and key come from the options, or from
 * `tls.crt` and `tls.key` in `$KUBEFX_WEBHOOK_CERT_DIR` (default
 * `/tmp/k8s-webhook-server/serving-certs`, where controller-runtime looks too), the Secret
 * `kubefx manifests` mounts there. Read from files, the certificate is read again every 10 seconds
 * and a changed one served to new connections, as controller-runtime's certificate watcher does: a
 * Secret replaced in the cluster reaches a running operator once the kubelet updates its files,
 * without a restart. Every replica serves webhooks, leading or not. Each webhook's requests, those
 * in flight and their latency are in the operator's metrics under controller-runtime's names.
 *
 * Internal to the operator: not exported from `@kubefx/kube`.
 *
 * @since 0.1.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { EngineMetrics } from "@kubefx/core"
import { Clock, Config, Context, Duration, Effect, Exit, Layer, Metric, type Scope } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:https"
import { join } from "node:path"
import { OperatorHttpError } from "./OperatorHttp.ts"
import type * as Webhook from "./Webhook.ts"

export interface Options<R> {
  readonly handlers: ReadonlyArray<Webhook.Webhook<R> | Webhook.Conversion>
  /** Default `$KUBEFX_WEBHOOK_HOST`, else 127.0.0.1 (in a pod, 0.0.0.0: `kubefx manifests` sets it). */
  readonly host?: string | undefined
  /** Default `$KUBEFX_WEBHOOK_PORT`, else 9443; 0 picks a free port. */
  readonly port?: number | undefined
  /** PEM certificate (with its chain) and key; default read from `certDir`. */
  readonly tls?: { readonly cert: string; readonly key: string } | undefined
  /** Where `tls.crt` and `tls.key` are read; default `$KUBEFX_WEBHOOK_CERT_DIR`. */
  readonly certDir?: string | undefined
  /** How often the files in `certDir` are read again for a changed certificate; default 10 seconds. */
  readonly certCheckInterval?: Duration.Input | undefined
}

const fromEnv = Config.all({
  host: Config.String("KUBEFX_WEBHOOK_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.Int("KUBEFX_WEBHOOK_PORT").pipe(Config.withDefault(9443)),
  certDir: Config.String("KUBEFX_WEBHOOK_CERT_DIR").pipe(Config.withDefault("/tmp/k8s-webhook-server/serving-certs"))
})

const readTls = (dir: string) =>
  Effect.try({
    try: () => ({ cert: readFileSync(join(dir, "tls.crt"), "utf8"), key: readFileSync(join(dir, "tls.key"), "utf8") }),
    catch: (error) => new OperatorHttpError({ message: `webhook certificate: ${(error as Error).message}` })
  })

// Serves the certificate in `dir` to new connections whenever its files change. A pair that cannot
// be read or does not match is logged once and the one served stays.
const reloading = (server: Server, dir: string, initial: { readonly cert: string; readonly key: string }, every: Duration.Input) => {
  let seen: { readonly cert: string; readonly key: string } | string = initial
  const keep = (why: string) => Effect.logWarning(`${why}; still serving the certificate read before`)
  const check = Effect.flatMap(Effect.result(readTls(dir)), (read) => {
    if (read._tag === "Failure") {
      if (seen === read.failure.message) return Effect.void
      seen = read.failure.message
      return keep(read.failure.message)
    }
    const next = read.success
    if (typeof seen !== "string" && next.cert === seen.cert && next.key === seen.key) return Effect.void
    seen = next
    return Effect.try({
      try: () => server.setSecureContext({ cert: next.cert, key: next.key }),
      catch: (error) => new OperatorHttpError({ message: `webhook certificate in ${dir}: ${(error as Error).message}` })
    }).pipe(
      Effect.andThen(Effect.logInfo(`webhook certificate in ${dir} changed: serving it to new connections`)),
      Effect.catch((error) => keep(error.message))
    )
  })
  return Effect.forever(Effect.delay(check, every))
}

/** `controller_runtime_webhook_latency_seconds{webhook}`, as controller-runtime names it. */
export const latency = Metric.histogram("controller_runtime_webhook_latency_seconds", {
  description: "Histogram of the latency of processing admission requests",
  boundaries: []
})

/** `controller_runtime_webhook_requests_total{webhook,code}`: by the answer's HTTP status code. */
export const requests = Metric.counter("controller_runtime_webhook_requests_total", {
  description: "Total number of admission requests by HTTP status code.",
  incremental: true
})

/** `controller_runtime_webhook_requests_in_flight{webhook}`. */
export const inFlight = Metric.gauge("controller_runtime_webhook_requests_in_flight", {
  description: "Current number of admission requests being served."
})

// Prometheus' default buckets, which controller-runtime's webhook latency uses.
const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

// Each handler comes with what it needs already provided, so the router requires nothing.
type Served = { readonly path: `/${string}`; readonly review: (review: unknown) => Effect.Effect<unknown> }

// A webhook's series, as controller-runtime's instrumented handler keeps them: its requests by
// status code (200 and 500 there from the start), those being served, and how long each took.
const instrumented = Effect.fnUntraced(function*(path: string) {
  const clock = yield* Clock.Clock
  const webhook = { webhook: path }
  const answered = { ok: 0, failed: 0 }
  let serving = 0
  yield* EngineMetrics.observeCounter(requests, { ...webhook, code: "200" }, () => answered.ok)
  yield* EngineMetrics.observeCounter(requests, { ...webhook, code: "500" }, () => answered.failed)
  yield* EngineMetrics.observeGauge(inFlight, webhook, () => serving)
  const time = yield* EngineMetrics.observeHistogram(latency, latencyBuckets, webhook)
  return <A, E, R>(answer: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      serving++
      const start = clock.currentTimeNanosUnsafe()
      return Effect.onExit(answer, (exit) =>
        Effect.sync(() => {
          serving--
          if (Exit.isSuccess(exit)) answered.ok++
          else answered.failed++
          time.record(Number(clock.currentTimeNanosUnsafe() - start) / 1e9)
        }))
    })
})

const routes = (handlers: ReadonlyArray<Served>): Layer.Layer<never, never, HttpRouter.HttpRouter | Scope.Scope> =>
  HttpRouter.use(Effect.fn(function*(router) {
    for (const hook of handlers) {
      const measured = yield* instrumented(hook.path)
      yield* router.add("POST", hook.path, measured(Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const body = yield* Effect.orElseSucceed(request.json, () => undefined)
        return HttpServerResponse.jsonUnsafe(yield* hook.review(body))
      })))
    }
  }))

/**
 * Serves the webhooks over HTTPS in the current scope; answers its URL (scheme, host, port).
 *
 * @example
 * import { Effect } from "effect"
 * import * as WebhookServer from "./WebhookServer.ts"
 * declare const hooks: ReadonlyArray<import("./Webhook.ts").Webhook>
 * declare const tls: { cert: string; key: string }
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const server = yield* WebhookServer.serve({ handlers: hooks, port: 0, tls })
 *   yield* Effect.log(`webhooks on ${server.url}`)
 * }))
 */
export const serve = <R>(options: Options<R>): Effect.Effect<{ readonly url: string }, OperatorHttpError, R | Scope.Scope> =>
  Effect.gen(function*() {
    const env = yield* Effect.mapError(fromEnv, (error) => new OperatorHttpError({ message: `KUBEFX_WEBHOOK_*: ${error.message}` }))
    const host = options.host ?? env.host
    const port = options.port ?? env.port
    const certDir = options.certDir ?? env.certDir
    const tls = options.tls ?? (yield* readTls(certDir))
    const context = yield* Effect.context<R>()
    const served = options.handlers.map((hook): Served => ({ path: hook.path, review: (body) => Effect.provideContext(hook.review(body), context) }))
    let https: Server | undefined
    const server = HttpRouter.serve(routes(served), { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(() => (https = createServer({ cert: tls.cert, key: tls.key })), { host, port, gracefulShutdownTimeout: "1 second" }))
    )
    const built = yield* Layer.build(server).pipe(
      Effect.mapError((error) => new OperatorHttpError({ message: `cannot serve webhooks on ${host}:${port}: ${String(error)}` }))
    )
    if (options.tls === undefined && https !== undefined) {
      yield* Effect.forkScoped(reloading(https, certDir, tls, options.certCheckInterval ?? "10 seconds"))
    }
    const address = HttpServer.formatAddress(Context.get(built, HttpServer.HttpServer).address)
    return { url: address.replace(/^http:/, "https:") }
  })
