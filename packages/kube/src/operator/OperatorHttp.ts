/**
 * An operator's HTTP endpoints, on `effect/http`: Kubernetes-style probes (`/startupz`, `/healthz`,
 * `/readyz`, each with `?verbose`), Prometheus metrics from Effect's registry (`/metrics`, the
 * engine's series under controller-runtime's names and the process's own), the controllers' state
 * as JSON (`/controllers`, `/controllers/<name>`, `/controllers/<name>/health` answering 200 or
 * 503) with a Server-Sent Events stream of run reports (`/controllers/events`), and the Control
 * Center dashboard that reads them (`/`).
 *
 * Internal to the operator: not exported from `@kubefx/kube`.
 *
 * @since 0.1.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type { Controller as Engine, Health, Trigger } from "@kubefx/core"
import { Clock, Config, Context, Effect, Layer, Schedule, Schema, type Scope, Stream } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { createServer } from "node:http"
import * as Informer from "../cache/Informer.ts"
import * as Dashboard from "./Dashboard.ts"
import * as Profiling from "./Profiling.ts"
import type * as LeaderElection from "./LeaderElection.ts"
import type * as Operator from "./Operator.ts"
import * as RequestMetrics from "../client/RequestMetrics.ts"
import * as ProcessMetrics from "./ProcessMetrics.ts"
import * as ReconcileRates from "./ReconcileRates.ts"

export class OperatorHttpError extends Schema.TaggedError<OperatorHttpError>()("OperatorHttpError", {
  message: Schema.String
}) {}

export interface Options {
  /**
   * Default `$KUBEFX_HTTP_HOST`, else 127.0.0.1. In a pod, 0.0.0.0, so the kubelet's probes and
   * Prometheus reach it (`kubefx manifests` sets the variable).
   */
  readonly host?: string | undefined
  /** Default `$KUBEFX_HTTP_PORT`, else 8080; 0 picks a free port. */
  readonly port?: number | undefined
  /**
   * Serve CPU and heap profiles of the process on demand (`/debug/profile/cpu?seconds=N`,
   * `/debug/profile/heap?seconds=N`), as controller-runtime's pprof endpoints. Default
   * `$KUBEFX_PROFILING`, else false: a profile shows the code and slows it while it is taken.
   */
  readonly profiling?: boolean | undefined
}

// What the operator's environment says when the code does not.
const hostFromEnv = Config.String("KUBEFX_HTTP_HOST").pipe(Config.withDefault("127.0.0.1"))
const portFromEnv = Config.Int("KUBEFX_HTTP_PORT").pipe(Config.withDefault(8080))
const profilingFromEnv = Config.Boolean("KUBEFX_PROFILING").pipe(Config.withDefault(false))

/** What the endpoints read from a running operator. */
export interface Source {
  readonly name: string
  readonly controllers: ReadonlyArray<Operator.ControllerHandle>
  readonly leaderElector: () => LeaderElection.LeaderElector | undefined
  /** This replica's shard membership, when sharded; `assignment` only on the replica running the sharders. */
  readonly sharding?: (() => ShardingView | undefined) | undefined
  readonly checks: Operator.Running["checks"]
  readonly reports: Stream.Stream<Engine.RunReport>
}

/** A time as JSON: RFC 3339 with milliseconds, or null. */
type Time = string | null

const time = (millis: number | undefined): Time => millis === undefined ? null : new Date(millis).toISOString()

/** One finished run as JSON (in key views and on the event stream). */
export interface RunView {
  /** Why it ran: the triggers merged into it, first of each kind. */
  readonly triggers: ReadonlyArray<Trigger.Trigger>
  readonly attempt: number
  readonly isLastAttempt: boolean
  readonly startedAt: Time
  readonly durationMillis: number
  readonly result: Engine.RunResult
}

/** An object's `Ready` condition, as its controller's cache holds it. */
export interface ReadyView {
  readonly status: string
  readonly reason: string | null
  readonly message: string | null
  readonly lastTransitionTime: string | null
}

export interface KeyView {
  readonly key: string
  /** The object's `Ready` condition; null when it has none (or is not cached). */
  readonly ready: ReadyView | null
  /** Retries so far in the current failure streak. */
  readonly attempt: number
  readonly exhausted: boolean
  /** When the pending retry fires, if one is pending. */
  readonly nextRetryAt: Time
  readonly next: { readonly at: Time; readonly trigger: "retry" | "reschedule" } | null
  readonly last: RunView | null
  /** When its run in progress started (taken from the queue); null while none is. */
  readonly runningSince: Time
  /** When it was queued for its next run; null unless it waits in the queue. */
  readonly queuedSince: Time
}

export interface ControllerView {
  readonly name: string
  /** Waiting for dependencies, Syncing caches, Running, Failed to start, Stopped. */
  readonly phase: Operator.Phase
  /** Why it failed to start (phase `Failed`), else null. */
  readonly startError: string | null
  readonly kind: string
  readonly apiVersion: string
  /** Healthy / Started / Pending / Degraded; Pending until started, while held or gated. */
  readonly status: Health.Status
  readonly degraded: boolean
  /** Not reconciling because this replica does not lead (or is shutting down). */
  readonly held: boolean
  readonly health: {
    readonly total: number
    readonly failed: number
    readonly consecutiveFailures: number
    readonly lastError: string | null
    readonly lastReconcileAt: Time
    readonly degradedSince: Time
  }
  readonly queueDepth: number
  readonly workersBusy: number
  readonly concurrency: number
  readonly dependsOn: ReadonlyArray<{ readonly name: string; readonly degraded: boolean }>
  /**
   * Each cache: its kind, and, when it holds less than every object of it, what it selects and
   * whether it holds metadata alone; while its list or watch keeps failing, why (`failing`).
   */
  readonly informers: ReadonlyArray<{
    readonly kind: string
    readonly synced: boolean
    readonly objects: number
    readonly failing?: string
    readonly labelSelector?: string
    readonly fieldSelector?: string
    readonly metadataOnly?: true
  }>
  /** Runs and failed runs per time bucket over the last minutes, oldest first; null without history. */
  readonly rates: RatesView | null
  readonly keys: ReadonlyArray<KeyView>
}

export interface RatesView {
  readonly bucketMillis: number
  /** When the last (current) bucket began. */
  readonly lastBucketAt: Time
  readonly runs: ReadonlyArray<number>
  readonly errors: ReadonlyArray<number>
}

export interface ShardingView {
  readonly identity: string
  /** This replica's member Lease ("namespace/name"). */
  readonly lease: string
  /** The live members, as this replica sees them. */
  readonly members: ReadonlyArray<string>
  /** Objects per member (the key "" for not yet assigned) and how many are moving, per sharder. */
  readonly assignment: ReadonlyArray<{
    readonly sharder: string
    readonly keys: Readonly<Record<string, number>>
    readonly draining: number
  }> | null
}

export interface OperatorView {
  readonly name: string
  /** When the view was taken, by the operator's clock (for countdowns to `next.at`). */
  readonly time: Time
  readonly leader: {
    readonly identity: string
    readonly lease: string
    /** Unknown, Follower or Leader. */
    readonly state: LeaderElection.State["_tag"]
    readonly leader: string | null
  } | null
  /** With sharding: this replica's identity, the live members and, on the sharder, the assignment. */
  readonly sharding: ShardingView | null
  /** What the operator's process has cost so far. */
  readonly process: ProcessView
  readonly controllers: ReadonlyArray<ControllerView>
}

/** The operator process's CPU and memory when the view was taken. */
export interface ProcessView {
  /** User and system CPU seconds since the process started. */
  readonly cpuSeconds: number
  readonly residentMemoryBytes: number
  readonly heapUsedBytes: number
  readonly startedAt: Time
  /** The API requests its clients have sent (`rest_client_requests_total`, all codes together). */
  readonly apiRequests: number
}

const processView = Effect.map(RequestMetrics.total, (apiRequests): ProcessView => {
  const reading = ProcessMetrics.read()
  return {
    cpuSeconds: reading.cpuSeconds,
    residentMemoryBytes: reading.residentMemoryBytes,
    heapUsedBytes: reading.heapUsedBytes,
    startedAt: time(reading.startedAtMillis),
    apiRequests
  }
})

const runView = (run: Omit<Engine.RunReport, "controller" | "key" | "next" | "exhausted">): RunView => ({
  triggers: run.triggers,
  attempt: run.attempt,
  isLastAttempt: run.isLastAttempt,
  startedAt: time(run.startedAt),
  durationMillis: run.durationMillis,
  result: run.result
})

const text = (value: unknown): string | null => typeof value === "string" ? value : null

/**
 * The `Ready` condition of a cached object, read defensively: any kind may be reconciled, and not
 * every kind's conditions follow metav1.Condition.
 *
 * @example
 * import * as OperatorHttp from "./OperatorHttp.ts"
 * OperatorHttp.readyView({ status: { conditions: [{ type: "Ready", status: "True", reason: "Reconciled" }] } })
 * // { status: "True", reason: "Reconciled", message: null, lastTransitionTime: null }
 */
export const readyView = (object: unknown): ReadyView | null => {
  const conditions = (object as { readonly status?: { readonly conditions?: unknown } } | undefined)?.status?.conditions
  if (!Array.isArray(conditions)) return null
  const ready = conditions.find((condition) => typeof condition === "object" && condition !== null && condition.type === "Ready")
  if (ready === undefined || typeof ready.status !== "string") return null
  return {
    status: ready.status,
    reason: text(ready.reason),
    message: text(ready.message),
    lastTransitionTime: text(ready.lastTransitionTime)
  }
}

const keyView = (status: Engine.KeyStatus, object: unknown): KeyView => ({
  key: status.key,
  ready: readyView(object),
  attempt: status.attempt,
  exhausted: status.exhausted,
  nextRetryAt: status.next?.trigger === "retry" ? time(status.next.at) : null,
  next: status.next === undefined ? null : { at: time(status.next.at), trigger: status.next.trigger },
  last: status.last === undefined ? null : runView(status.last),
  runningSince: time(status.runningSince),
  queuedSince: time(status.queuedSince)
})

const ratesView = (window: ReconcileRates.Window): RatesView => ({
  bucketMillis: window.bucketMillis,
  lastBucketAt: time(window.lastBucketAt),
  runs: window.runs,
  errors: window.errors
})

/** What views are read with besides the controllers: the history of run rates, and the time now. */
export interface History {
  readonly rates: ReconcileRates.ReconcileRates
  readonly now: number
}

/**
 * A controller's state as the HTTP API shows it; with `history`, its recent run rates too.
 *
 * @example
 * import { Effect } from "effect"
 * import type { Operator } from "@kubefx/kube"
 * import * as OperatorHttp from "./OperatorHttp.ts"
 * declare const handle: Operator.ControllerHandle
 * const view = OperatorHttp.controllerView(handle)
 */
export const controllerView = (handle: Operator.ControllerHandle, history?: History): Effect.Effect<ControllerView> =>
  Effect.gen(function*() {
    const controller = handle.controller()
    const resource = handle.definition.for
    const base = {
      name: handle.name,
      phase: handle.phase(),
      startError: handle.failure() ?? null,
      kind: resource.kind,
      apiVersion: resource.apiVersion
    }
    const rates = history === undefined ? null : ratesView(history.rates.window(handle.name, history.now))
    if (controller === undefined) {
      return {
        ...base,
        status: "Pending",
        degraded: false,
        held: false,
        health: { total: 0, failed: 0, consecutiveFailures: 0, lastError: null, lastReconcileAt: null, degradedSince: null },
        queueDepth: 0,
        workersBusy: 0,
        concurrency: handle.definition.concurrency,
        dependsOn: handle.definition.dependsOn.map((dependency) => ({ name: dependency.name, degraded: false })),
        informers: [],
        rates,
        keys: []
      } satisfies ControllerView
    }
    const inspection = yield* controller.inspect
    const health = inspection.health
    return {
      ...base,
      status: inspection.status,
      degraded: health.degraded,
      held: inspection.held,
      health: {
        total: health.total,
        failed: health.failed,
        consecutiveFailures: health.consecutiveFailures,
        lastError: health.lastError ?? null,
        lastReconcileAt: time(health.lastReconcileAt),
        degradedSince: time(health.degradedSince)
      },
      queueDepth: inspection.queueDepth,
      workersBusy: inspection.workersBusy,
      concurrency: inspection.concurrency,
      dependsOn: inspection.dependsOn,
      informers: controller.informers.map((informer) => {
        const failing = Informer.failing(informer)
        return {
          kind: informer.resource.kind,
          synced: informer.hasSynced(),
          objects: informer.size(),
          ...(failing === undefined ? {} : { failing }),
          ...(informer.labelSelector === undefined ? {} : { labelSelector: informer.labelSelector }),
          ...(informer.fieldSelector === undefined ? {} : { fieldSelector: informer.fieldSelector }),
          ...(informer.resource.metadataOnly === true ? { metadataOnly: true as const } : {})
        }
      }),
      rates,
      keys: inspection.keys.map((key) => keyView(key, controller.informer.get(key.key)))
    } satisfies ControllerView
  })

/**
 * The whole operator as the HTTP API shows it; with `rates`, each controller's recent run rates too.
 *
 * @example
 * import * as OperatorHttp from "./OperatorHttp.ts"
 * declare const source: OperatorHttp.Source
 * const view = OperatorHttp.operatorView(source)
 */
export const operatorView = (source: Source, rates?: ReconcileRates.ReconcileRates): Effect.Effect<OperatorView> =>
  Effect.gen(function*() {
    const elector = source.leaderElector()
    const state = elector?.state()
    const now = yield* Clock.currentTimeMillis
    const history = rates === undefined ? undefined : { rates, now }
    return {
      name: source.name,
      time: time(now),
      leader: elector === undefined || state === undefined ? null : {
        identity: elector.identity,
        lease: `${elector.namespace}/${elector.leaseName}`,
        state: state._tag,
        leader: state._tag === "Leader" ? elector.identity : state._tag === "Follower" ? state.leader ?? null : null
      },
      sharding: source.sharding?.() ?? null,
      process: yield* processView,
      controllers: yield* Effect.forEach(source.controllers, (handle) => controllerView(handle, history))
    }
  })

/**
 * A run report as one Server-Sent Event (`event: report`, JSON data).
 *
 * @example
 * import * as OperatorHttp from "./OperatorHttp.ts"
 * OperatorHttp.reportEvent({
 *   controller: "widgets", key: "default/a", triggers: [{ _tag: "Event" }], attempt: 0, isLastAttempt: false,
 *   startedAt: 0, durationMillis: 3, result: { _tag: "Done" }, next: undefined, exhausted: false
 * }) // "event: report\ndata: {...}\n\n"
 */
export const reportEvent = (report: Engine.RunReport): string =>
  `event: report\ndata: ${
    JSON.stringify({
      controller: report.controller,
      key: report.key,
      ...runView(report),
      next: report.next === undefined ? null : { at: time(report.next.at), trigger: report.next.trigger },
      exhausted: report.exhausted
    })
  }\n\n`

/**
 * A probe's answer, as kube-apiserver words it: "ok", or the checks with `[+]`/`[-]` and a last line
 * saying the probe failed (always listed on failure, and with `verbose`).
 *
 * @example
 * import * as OperatorHttp from "./OperatorHttp.ts"
 * OperatorHttp.probeText("readyz", [{ name: "informers", ok: false, message: "not synced: widgets (Syncing)" }], false)
 * // { ok: false, text: "[-]informers failed: not synced: widgets (Syncing)\nreadyz check failed\n" }
 */
export const probeText = (
  probe: string,
  checks: ReadonlyArray<Operator.Check>,
  verbose: boolean
): { readonly ok: boolean; readonly text: string } => {
  const ok = checks.every((check) => check.ok)
  if (ok && !verbose) return { ok, text: "ok" }
  const lines = checks.map((check) =>
    check.ok ? `[+]${check.name} ok` : `[-]${check.name} failed: ${check.message ?? "failed"}`
  )
  return { ok, text: `${lines.join("\n")}\n${probe} ${ok ? "check passed" : "check failed"}\n` }
}

const encoder = new TextEncoder()
// Proxies drop event streams that stay silent; a comment line every 15 s keeps them open.
const keepAlive = Stream.fromSchedule(Schedule.spaced("15 seconds")).pipe(Stream.map(() => ": keep-alive\n\n"))

/**
 * The endpoints as an `HttpRouter` layer.
 *
 * @example
 * import { HttpRouter } from "effect/http"
 * import * as OperatorHttp from "./OperatorHttp.ts"
 * declare const source: OperatorHttp.Source
 * const app = HttpRouter.serve(OperatorHttp.routes(source))
 */
export const routes = (source: Source, options: { readonly profiling?: boolean | undefined } = {}): Layer.Layer<never, never, HttpRouter.HttpRouter> =>
  HttpRouter.use(Effect.fn(function*(router) {
    // Metrics are read from the registry the operator runs with, whichever fiber serves the scrape,
    // the process's own among them.
    yield* ProcessMetrics.observe
    const context = yield* Effect.context<never>()
    // Run rates are counted from the moment the server starts, for as long as it serves.
    const rates = ReconcileRates.make()
    yield* Stream.runForEach(source.reports, (report) => Effect.sync(() => rates.record(report))).pipe(Effect.forkScoped)
    const probe = (path: "/startupz" | "/healthz" | "/readyz", checks: () => ReadonlyArray<Operator.Check>) =>
      router.add("GET", path, (request) => {
        const verbose = new URL(request.url, "http://localhost").searchParams.has("verbose")
        const answer = probeText(path.slice(1), checks(), verbose)
        return Effect.succeed(HttpServerResponse.text(answer.text, { status: answer.ok ? 200 : 503 }))
      })
    yield* probe("/startupz", source.checks.startup)
    yield* probe("/healthz", source.checks.liveness)
    yield* probe("/readyz", source.checks.readiness)
    yield* router.add("GET", "/metrics", Effect.sync(() =>
      HttpServerResponse.text(PrometheusMetrics.formatUnsafe(context), { contentType: "text/plain; version=0.0.4; charset=utf-8" })
    ))
    yield* router.add("GET", "/controllers", Effect.map(operatorView(source, rates), (view) => HttpServerResponse.jsonUnsafe(view)))
    yield* router.add("GET", "/controllers/events", (request) => {
      const only = new URL(request.url, "http://localhost").searchParams.get("controller")
      const events = source.reports.pipe(
        Stream.filter((report) => only === null || report.controller === only),
        Stream.map(reportEvent)
      )
      return Effect.succeed(HttpServerResponse.stream(
        Stream.make(": connected\n\n").pipe(
          Stream.concat(Stream.merge(events, keepAlive)),
          Stream.map((text) => encoder.encode(text))
        ),
        { contentType: "text/event-stream", headers: { "cache-control": "no-cache" } }
      ))
    })
    const find = Effect.map(HttpRouter.params, (params) => source.controllers.find((handle) => handle.name === params.name))
    const notFound = (name: string | undefined) =>
      HttpServerResponse.jsonUnsafe({ message: `no controller named ${name ?? ""}` }, { status: 404 })
    yield* router.add("GET", "/controllers/:name", Effect.gen(function*() {
      const handle = yield* find
      if (handle === undefined) return notFound((yield* HttpRouter.params).name)
      return HttpServerResponse.jsonUnsafe(yield* controllerView(handle, { rates, now: yield* Clock.currentTimeMillis }))
    }))
    yield* router.add("GET", "/controllers/:name/health", Effect.gen(function*() {
      const handle = yield* find
      if (handle === undefined) return notFound((yield* HttpRouter.params).name)
      const view = yield* controllerView(handle)
      const ok = view.status === "Healthy" || view.status === "Started"
      return HttpServerResponse.jsonUnsafe({
        name: view.name,
        status: view.status,
        degraded: view.degraded,
        consecutiveFailures: view.health.consecutiveFailures,
        lastError: view.health.lastError
      }, { status: ok ? 200 : 503 })
    }))
    if (options.profiling === true) yield* Profiling.mount(router)
    yield* Dashboard.mount(router)
  }))

/**
 * Serves the endpoints in the current scope.
 *
 * @example
 * import { Effect } from "effect"
 * import * as OperatorHttp from "./OperatorHttp.ts"
 * declare const source: OperatorHttp.Source
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const server = yield* OperatorHttp.serve(source, { port: 0 })
 *   yield* Effect.log(`probes on ${server.url}/readyz`)
 * }))
 */
export const serve = (
  source: Source,
  options: Options
): Effect.Effect<{ readonly url: string }, OperatorHttpError, Scope.Scope> =>
  Effect.gen(function*() {
    const fromEnv = Effect.mapError(
      Effect.all({ host: hostFromEnv, port: portFromEnv }),
      (error) => new OperatorHttpError({ message: `KUBEFX_HTTP_HOST / KUBEFX_HTTP_PORT: ${error.message}` })
    )
    const env = options.host !== undefined && options.port !== undefined ? undefined : yield* fromEnv
    const host = options.host ?? env?.host ?? "127.0.0.1"
    const port = options.port ?? env?.port ?? 8080
    const profiling = options.profiling ?? (yield* Effect.mapError(
      profilingFromEnv,
      (error) => new OperatorHttpError({ message: `KUBEFX_PROFILING: ${error.message}` })
    ))
    const server = HttpRouter.serve(routes(source, { profiling }), { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { host, port, gracefulShutdownTimeout: "1 second" }))
    )
    const context = yield* Layer.build(server).pipe(
      Effect.mapError((error) => new OperatorHttpError({ message: `cannot serve on ${host}:${port}: ${String(error)}` }))
    )
    return { url: HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address) }
  })
