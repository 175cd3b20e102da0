/**
 * client-go's `rest_client_requests_total{code,method,host}`, the series controller-runtime puts in
 * every operator's `/metrics`: each request a client sends (watches and the retries of throttled
 * requests included) by the answer's status code (`<error>` when no answer came), its HTTP method
 * and the API server's host. What an operator asks of the API server, in production.
 *
 * Internal to the client.
 *
 * @since 0.1.0
 */
import { EngineMetrics } from "@kubefx/core"
import { Context, Effect, Metric, type Scope } from "effect"

/** `rest_client_requests_total`, as client-go names and describes it. */
export const requests = Metric.counter("rest_client_requests_total", {
  description: "Number of HTTP requests, partitioned by status code, method, and host.",
  incremental: true
})

/** Counts one client's requests. */
export interface Recorder {
  /** The counter of one HTTP method's requests, told each answer's status code (kept per method). */
  readonly observer: (method: string) => (code: string) => void
}

// Clients that share a metric registry share its series, as client-go's share the process's: a
// series is registered once, counts every client's requests, and goes with the last of them.
interface Series {
  count: number
  users: number
  readonly remove: () => void
}
const registries = new WeakMap<Metric.MetricRegistry, Map<string, Series>>()

const seriesOf = (context: Context.Context<never>): Map<string, Series> => {
  const registry = Context.get(context, Metric.MetricRegistry)
  let series = registries.get(registry)
  if (series === undefined) {
    series = new Map()
    registries.set(registry, series)
  }
  return series
}

const acquire = (context: Context.Context<never>, all: Map<string, Series>, key: string, attributes: Readonly<Record<string, string>>) => {
  const existing = all.get(key)
  if (existing !== undefined) {
    existing.users++
    return existing
  }
  const series: Series = {
    count: 0,
    users: 1,
    remove: EngineMetrics.observeCounterUnsafe(context, requests, attributes, () => series.count).remove
  }
  all.set(key, series)
  return series
}

const release = (all: Map<string, Series>, key: string) => {
  const series = all.get(key)
  if (series === undefined || --series.users > 0) return
  all.delete(key)
  series.remove()
}

/**
 * A recorder of requests to `host`, its series in `/metrics` for as long as the scope is open. A
 * request finds its series by its code in its method's map: nothing is built per request.
 *
 * @example
 * import { Effect } from "effect"
 * import * as RequestMetrics from "./RequestMetrics.ts"
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const recorder = yield* RequestMetrics.recorder("127.0.0.1:6443")
 *   recorder.observer("GET")("200")
 * }))
 */
export const recorder = (host: string): Effect.Effect<Recorder, never, Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<never>()
    const all = seriesOf(context)
    const mine: Array<string> = []
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const key of mine) release(all, key)
      })
    )
    const observers = new Map<string, (code: string) => void>()
    const observerOf = (method: string) => {
      const byCode = new Map<string, Series>()
      return (code: string) => {
        let series = byCode.get(code)
        if (series === undefined) {
          const key = `${code} ${method} ${host}`
          series = acquire(context, all, key, { code, method, host })
          byCode.set(code, series)
          mine.push(key)
        }
        series.count++
      }
    }
    return {
      observer: (method) => {
        let observer = observers.get(method)
        if (observer === undefined) {
          observer = observerOf(method)
          observers.set(method, observer)
        }
        return observer
      }
    }
  })

/**
 * The requests counted so far by the clients open in the current metric registry, all hosts and
 * codes together (what the Control Center shows beside the process's CPU and memory).
 *
 * @example
 * import { Effect } from "effect"
 * import * as RequestMetrics from "./RequestMetrics.ts"
 * const total = Effect.runSync(RequestMetrics.total) // 0 before any client sent a request
 */
export const total: Effect.Effect<number> = Effect.contextWith((context: Context.Context<never>) => {
  let sum = 0
  for (const series of registries.get(Context.get(context, Metric.MetricRegistry))?.values() ?? []) sum += series.count
  return Effect.succeed(sum)
})
